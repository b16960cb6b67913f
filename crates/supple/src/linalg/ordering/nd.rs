//! Nested dissection of an unstructured mesh's vertex graph with refined node separators.
//!
//! The recursion is George's (1973): a part is split by a node separator into two sides, the
//! separator is numbered after both, and the sides are dissected in turn. The separators are
//! found the way graph partitioners find them (multilevel, thinned, FM-refined: see
//! [`separator`](super::separator)), with geometric median planes among the initial
//! candidates when positions are given. Disconnected parts are split into their components
//! first (no separator needed). Parts of at most [`LEAF`] vertices, like METIS's, are ordered
//! by approximate minimum degree on their induced subgraph; a separator's vertices keep the
//! order they had in their part (its block of `L` is nearly dense, so it matters little).
//!
//! **Polish** (after the recursion, bottom-up over the dissection tree): each part below the
//! root keeps its dissected order or takes AMD's (of the part, or of the part with its halo,
//! restricted to the part), whichever puts fewer nonzeros in the part's columns of `L`,
//! counted exactly by [`analyze`](crate::linalg::symbolic::analyze). This is the subtree
//! version of CHOLMOD's "try AMD and METIS, keep the better"; thin limbs of a mesh, where
//! minimum degree beats dissection, get AMD. The root itself stays dissected.
//!
//! **The better of ND and AMD** (`OrderingKind::Nd`; `NdPure` skips it): at the end the whole
//! graph's AMD ordering (exactly `OrderingKind::Amd`'s) is computed too, and the one with the
//! fewer nonzeros in `L` is kept (ties: the dissection). nnz(L) is the criterion because it is
//! what a pre-factored solver pays per step (its forward and back substitutions read every
//! entry of `L` once each) and what it stores; the factorization's flops need not rank the two
//! the same way. This is CHOLMOD's rule (`cholmod_analyze`: try AMD and METIS, keep the
//! better) at the root, and the polish's rule one level up. Its cost is one AMD and two symbolic
//! analyses, `O(nnz(A) α)` without forming `L` — small next to the dissection itself. So `Nd`
//! never fills more than `Amd` and never more than `NdPure`. It matters where minimum degree
//! beats dissection at the root: long thin bars (a 2×2×40-cell tet bar: AMD fill 16 k, the
//! dissection 30 k), the small tubes and the sliver-rich scanned meshes (bunny_5k, dragon_5k,
//! dragon_50k: 3–8 % less fill with AMD; `EXPERIMENTS.md`, issue 5).

use super::separator::WGraph;
use super::{amd, Graph, OrderingError};
use nalgebra::Vector3;

/// Parts this small are ordered by AMD instead of being dissected further.
const LEAF: usize = 120;

/// A part of the graph and the first of its new indices.
struct Task {
    verts: Vec<u32>,
    first: usize,
    connected: bool,
}

/// Graph nested dissection; `perm[new] = old`. `positions`, when given, has one per vertex.
/// With `amd_fallback`, the whole graph's AMD order is returned instead when it has fewer
/// nonzeros in `L`.
pub(crate) fn nd(
    graph: &Graph,
    positions: Option<&[Vector3<f64>]>,
    amd_fallback: bool,
) -> Result<Vec<u32>, OrderingError> {
    let n = graph.n();
    let mut perm = vec![0u32; n];
    let mut local = vec![u32::MAX; n]; // global → local index of the current part
    let mut stack = vec![Task {
        verts: (0..n as u32).collect(),
        first: 0,
        connected: false,
    }];
    let mut parts_done: Vec<(usize, usize)> = Vec::new(); // connected parts, parents first
    while let Some(task) = stack.pop() {
        let (m, first) = (task.verts.len(), task.first);
        if m == 0 {
            continue;
        }
        if task.connected {
            parts_done.push((first, m));
        }
        if task.connected && m <= LEAF {
            let order = amd::amd_induced(graph, &task.verts, &mut local)?;
            perm[first..first + m].copy_from_slice(&order);
            continue;
        }
        for (i, &v) in task.verts.iter().enumerate() {
            local[v as usize] = i as u32;
        }
        let sub = WGraph::induced(graph, &task.verts, &local, positions);
        for &v in &task.verts {
            local[v as usize] = u32::MAX;
        }
        if !task.connected {
            let mut start = first;
            for comp in sub.components() {
                let verts: Vec<u32> = comp.iter().map(|&i| task.verts[i as usize]).collect();
                start += verts.len();
                stack.push(Task {
                    first: start - verts.len(),
                    verts,
                    connected: true,
                });
            }
            continue;
        }
        let side = sub.separator();
        let mut parts: [Vec<u32>; 3] = Default::default();
        for (&s, &v) in side.iter().zip(&task.verts) {
            parts[s as usize].push(v);
        }
        let [pa, pb, ps] = parts;
        if pa.len() == m || pb.len() == m || ps.len() == m {
            // Nothing splits it (a near-clique): order it as a leaf.
            let order = amd::amd_induced(graph, &task.verts, &mut local)?;
            perm[first..first + m].copy_from_slice(&order);
            continue;
        }
        let (la, lb) = (pa.len(), pb.len());
        perm[first + la + lb..first + m].copy_from_slice(&ps);
        stack.push(Task {
            verts: pa,
            first,
            connected: false,
        });
        stack.push(Task {
            verts: pb,
            first: first + la,
            connected: false,
        });
    }
    polish(graph, &mut perm, &parts_done, &mut local)?;
    if amd_fallback {
        let amd = amd::amd(graph)?;
        if nnz_l_blocks(graph, &amd)? < nnz_l_blocks(graph, &perm)? {
            return Ok(amd);
        }
    }
    Ok(perm)
}

/// Block nonzeros of `L` (diagonal included) under `perm`: the scalar nnz(L) for `d` dofs per
/// vertex is `d² · blocks − d(d − 1)/2 · n`, so comparing blocks compares nnz(L) for every `d`.
fn nnz_l_blocks(graph: &Graph, perm: &[u32]) -> Result<u64, OrderingError> {
    let p = super::Permutation::new(perm.to_vec())?;
    let s = super::super::symbolic::analyze(graph, &p, 1);
    Ok(s.nnz_l)
}

/// Bottom-up, replaces a part's order by AMD's where that gives fewer nonzeros in the part's
/// own columns of `L`. Those columns depend only on the part's internal order and on its
/// halo (neighbours outside it, all numbered later: ancestor separators), and no other
/// column depends on the part's internal order, so every replacement lowers `nnz(L)`.
fn polish(
    graph: &Graph,
    perm: &mut [u32],
    parts: &[(usize, usize)],
    local: &mut [u32],
) -> Result<(), OrderingError> {
    for &(first, m) in parts.iter().rev() {
        if m == graph.n() {
            continue; // the whole graph: compared with AMD at the end of `nd` (if at all)
        }
        let part = &perm[first..first + m];
        // Local graph: the part in its current order, then its halo.
        let mut verts = part.to_vec();
        for (i, &v) in part.iter().enumerate() {
            local[v as usize] = i as u32;
        }
        for &v in part {
            for &u in graph.neighbours(v as usize) {
                if local[u as usize] == u32::MAX {
                    local[u as usize] = verts.len() as u32;
                    verts.push(u);
                }
            }
        }
        let sub = halo_graph(graph, &verts, m, local);
        for &v in &verts {
            local[v as usize] = u32::MAX;
        }
        let cost = |order: &[u32]| -> Result<u64, OrderingError> {
            let mut p = order.to_vec();
            p.extend(m as u32..verts.len() as u32);
            let s = super::super::symbolic::analyze(&sub, &super::Permutation::new(p)?, 1);
            Ok(s.col_counts[..m].iter().map(|&c| c as u64).sum())
        };
        let current: Vec<u32> = (0..m as u32).collect();
        let mut best = (cost(&current)?, current);
        let ids: Vec<u32> = (0..verts.len() as u32).collect();
        let mut loc2 = vec![u32::MAX; verts.len()];
        let plain = amd::amd_induced(&sub, &ids[..m], &mut loc2)?;
        let halo: Vec<u32> = amd::amd_induced(&sub, &ids, &mut loc2)?
            .into_iter()
            .filter(|&i| (i as usize) < m)
            .collect();
        for cand in [plain, halo] {
            let c = cost(&cand)?;
            if c < best.0 {
                best = (c, cand);
            }
        }
        let order: Vec<u32> = best.1.iter().map(|&i| verts[i as usize]).collect();
        perm[first..first + m].copy_from_slice(&order);
    }
    Ok(())
}

/// The graph of a part (`verts[..m]`, local indices `0..m`) and its halo (`verts[m..]`):
/// part–part and part–halo edges (halo–halo edges change no column of the part).
fn halo_graph(graph: &Graph, verts: &[u32], m: usize, local: &[u32]) -> Graph {
    let mut lists: Vec<Vec<u32>> = vec![Vec::new(); verts.len()];
    for (i, &v) in verts[..m].iter().enumerate() {
        for &u in graph.neighbours(v as usize) {
            let j = local[u as usize] as usize;
            lists[i].push(j as u32);
            if j >= m {
                lists[j].push(i as u32);
            }
        }
    }
    let mut ptr = vec![0u32];
    let mut adj = Vec::new();
    for mut l in lists {
        l.sort_unstable();
        adj.extend_from_slice(&l);
        ptr.push(adj.len() as u32);
    }
    Graph { ptr, adj }
}
