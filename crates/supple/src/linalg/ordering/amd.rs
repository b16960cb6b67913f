//! Approximate minimum degree (Amestoy, Davis & Duff, *An approximate minimum degree ordering
//! algorithm*, SIAM J. Matrix Anal. Appl. 17(4), 1996), as ported to Rust by `faer`
//! (`faer::sparse::linalg::amd`, default controls: dense rows at `10 √n`, aggressive
//! absorption). Run on the vertex graph, so each 3×3 block is one AMD node.

use super::{Graph, OrderingError};
use faer::dyn_stack::{MemBuffer, MemStack};
use faer::sparse::linalg::amd;
use faer::sparse::SymbolicSparseColMatRef;

/// AMD of the whole graph: `perm[new] = old`.
pub(crate) fn amd(graph: &Graph) -> Result<Vec<u32>, OrderingError> {
    // faer reads the pattern of A + Aᵀ from one triangle: column k holds rows j < k.
    let n = graph.n();
    let mut ptr = Vec::with_capacity(n + 1);
    let mut rows = Vec::with_capacity(graph.n_edges());
    ptr.push(0u32);
    for k in 0..n {
        let nb = graph.neighbours(k);
        rows.extend_from_slice(&nb[..nb.partition_point(|&j| (j as usize) < k)]);
        ptr.push(rows.len() as u32);
    }
    amd_upper(n, &ptr, &rows)
}

/// AMD of the subgraph induced by `verts` (in `graph`); `local[v]` must be `u32::MAX` for
/// every vertex on entry and is restored on exit. Returns the vertices of `verts` in
/// elimination order. Used for the leaves of nested dissection.
pub(crate) fn amd_induced(
    graph: &Graph,
    verts: &[u32],
    local: &mut [u32],
) -> Result<Vec<u32>, OrderingError> {
    for (i, &v) in verts.iter().enumerate() {
        local[v as usize] = i as u32;
    }
    let mut ptr = Vec::with_capacity(verts.len() + 1);
    let mut rows = Vec::new();
    ptr.push(0u32);
    for (k, &v) in verts.iter().enumerate() {
        let start = rows.len();
        rows.extend(
            graph
                .neighbours(v as usize)
                .iter()
                .map(|&u| local[u as usize])
                .filter(|&j| (j as usize) < k),
        );
        rows[start..].sort_unstable();
        ptr.push(rows.len() as u32);
    }
    for &v in verts {
        local[v as usize] = u32::MAX;
    }
    let order = amd_upper(verts.len(), &ptr, &rows)?;
    Ok(order.into_iter().map(|i| verts[i as usize]).collect())
}

/// faer's AMD on an upper-triangle CSC pattern (sorted rows, no diagonal needed).
fn amd_upper(n: usize, ptr: &[u32], rows: &[u32]) -> Result<Vec<u32>, OrderingError> {
    if n == 0 {
        return Ok(Vec::new());
    }
    let a = SymbolicSparseColMatRef::new_checked(n, n, ptr, None, rows);
    let mut perm = vec![0u32; n];
    let mut perm_inv = vec![0u32; n];
    let mut mem = MemBuffer::try_new(amd::order_scratch::<u32>(n, rows.len()))
        .map_err(|_| OrderingError::Amd("out of memory".into()))?;
    amd::order(
        &mut perm,
        &mut perm_inv,
        a,
        amd::Control::default(),
        MemStack::new(&mut mem),
    )
    .map_err(|e| OrderingError::Amd(format!("{e:?}")))?;
    Ok(perm)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn star_centre_is_eliminated_last() {
        // Centre 0 joined to 1..=5: eliminating it first fills the whole graph.
        let cells: Vec<Vec<u32>> = (1..=5).map(|i| vec![0, i]).collect();
        let g = Graph::from_cells(6, &cells);
        let p = amd(&g).unwrap();
        assert_eq!(p[5], 0, "perm[new] = old: the centre comes last, got {p:?}");
        let mut local = vec![u32::MAX; 6];
        let q = amd_induced(&g, &[3, 0, 4], &mut local).unwrap();
        assert_eq!(q[2], 0);
        assert!(local.iter().all(|&l| l == u32::MAX));
    }
}
