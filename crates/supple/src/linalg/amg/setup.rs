//! Setup of the smoothed-aggregation hierarchy (Vaněk, Mandel & Brezina, *Algebraic
//! multigrid by smoothed aggregation for second and fourth order elliptic problems*,
//! Computing 56, 1996): strength graph, aggregation, tentative prolongator from the
//! near-null space, prolongator smoothing and Galerkin coarse operators.
//!
//! For elasticity the near-null space is the six rigid-body modes (three translations, three
//! infinitesimal rotations about the centroid), evaluated at every vertex (Vaněk, Brezina &
//! Mandel, *Convergence of algebraic multigrid based on smoothed aggregation*, Numer. Math.
//! 88, 2001, §3). Each aggregate gives six coarse dofs: the local modes are orthonormalized
//! (`B_agg = Q R`, Q becomes the aggregate's columns of the tentative prolongator `T`, R the
//! coarse near-null space), so coarse levels carry 6×6 blocks. A mode that is linearly
//! dependent on an aggregate (e.g. the rotation about the line through a two-vertex
//! aggregate) gives a zero column of `T`, hence a decoupled zero dof on the coarse level,
//! which the smoothers skip and the coarsest solve pins to zero.

use super::block::Bsr;
use super::product;
use nalgebra::{DMatrix, Vector3};

/// Columns of the near-null space (rigid-body modes).
pub const MODES: usize = 6;

/// Rows `3i..3i + 3` hold the six rigid-body modes at vertex `i`, row-major (`3n × 6`):
/// translations `e_x, e_y, e_z` and rotations `e_k × (x_i − c)` about the centroid `c`.
/// Without positions only the translations are set (the rotations are zero columns).
pub fn rigid_body_modes(n: usize, positions: Option<&[Vector3<f64>]>) -> Vec<f64> {
    let mut b = vec![0.0; 3 * n * MODES];
    let c = positions.map_or_else(Vector3::zeros, |p| {
        p.iter().sum::<Vector3<f64>>() / p.len().max(1) as f64
    });
    for i in 0..n {
        for r in 0..3 {
            b[(3 * i + r) * MODES + r] = 1.0;
        }
        if let Some(p) = positions {
            let d = p[i] - c;
            for k in 0..3 {
                let u = Vector3::ith(k, 1.0).cross(&d);
                for r in 0..3 {
                    b[(3 * i + r) * MODES + 3 + k] = u[r];
                }
            }
        }
    }
    b
}

/// How the aggregates of a level are merged into larger ones before the prolongator is
/// made (a sparser coarse level, more CG iterations; see EXPERIMENTS.md, *The V-cycle made
/// cheaper*).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Merge {
    /// Vaněk et al.'s aggregates as they are.
    None,
    /// Each aggregate with one neighbouring aggregate (greedy matching): about half as many.
    Pairs,
    /// Aggregates of aggregates: the same three-pass aggregation on the aggregate graph.
    Neighbourhoods,
}

/// One coarsening step from a level of `B`-dof nodes: its prolongator `P` (`B × 6` blocks,
/// node × aggregate) and restriction `R = Pᵀ`.
#[derive(Debug, Clone)]
pub struct Transfer<const B: usize> {
    pub p: Bsr<B, MODES, f64>,
    pub r: Bsr<MODES, B, f64>,
}

/// The strong neighbours of each node of `a` (a block row), and which nodes are isolated
/// (zero diagonal block: fixed vertices, or dropped coarse dofs). Norms are Frobenius norms
/// of the blocks.
fn strength_graph<const B: usize>(
    a: &Bsr<B, B, f64>,
    theta: f64,
) -> (Vec<usize>, Vec<u32>, Vec<bool>) {
    let nodes = a.n_brows;
    let norm = |m: &[[f64; B]; B]| m.iter().flatten().map(|v| v * v).sum::<f64>().sqrt();
    let row = |i: usize| a.ptr[i]..a.ptr[i + 1];
    let diag: Vec<f64> = (0..nodes)
        .map(|i| {
            row(i)
                .find(|&k| a.idx[k] as usize == i)
                .map_or(0.0, |k| norm(&a.val[k]))
        })
        .collect();
    let isolated: Vec<bool> = diag.iter().map(|&d| d == 0.0).collect();
    let mut ptr = Vec::with_capacity(nodes + 1);
    ptr.push(0);
    let mut idx = Vec::with_capacity(a.n_blocks());
    for i in 0..nodes {
        if !isolated[i] {
            for k in row(i) {
                let j = a.idx[k] as usize;
                if j == i || isolated[j] {
                    continue;
                }
                let n = norm(&a.val[k]);
                if n * n >= theta * theta * diag[i] * diag[j] {
                    idx.push(j as u32);
                }
            }
        }
        ptr.push(idx.len());
    }
    (ptr, idx, isolated)
}

/// Vaněk et al.'s three-pass aggregation in node order: (1) a node whose strong neighbours
/// are all free starts an aggregate with them; (2) every other node joins the aggregate of
/// its first aggregated strong neighbour; (3) what is left forms aggregates with its free
/// strong neighbours. Isolated nodes get no aggregate (`u32::MAX`).
fn aggregate(ptr: &[usize], idx: &[u32], isolated: &[bool]) -> (Vec<u32>, usize) {
    let n = isolated.len();
    const FREE: u32 = u32::MAX;
    let mut agg = vec![FREE; n];
    let mut n_agg = 0u32;
    let nb = |i: usize| idx[ptr[i]..ptr[i + 1]].iter().map(|&j| j as usize);
    for i in 0..n {
        if isolated[i] || agg[i] != FREE || nb(i).any(|j| agg[j] != FREE) {
            continue;
        }
        agg[i] = n_agg;
        nb(i).for_each(|j| agg[j] = n_agg);
        n_agg += 1;
    }
    let first_pass = agg.clone();
    for i in 0..n {
        if !isolated[i] && agg[i] == FREE {
            if let Some(j) = nb(i).find(|&j| first_pass[j] != FREE) {
                agg[i] = first_pass[j];
            }
        }
    }
    for i in 0..n {
        if isolated[i] || agg[i] != FREE {
            continue;
        }
        agg[i] = n_agg;
        for j in nb(i) {
            if agg[j] == FREE {
                agg[j] = n_agg;
            }
        }
        n_agg += 1;
    }
    (agg, n_agg as usize)
}

/// Aggregates of aggregates: the graph whose nodes are the aggregates `agg` of the strength
/// graph (`ptr`, `idx`), two aggregates adjacent when a strong connection joins their
/// members, aggregated again by [`aggregate`] (or matched in pairs by [`pair_up`]);
/// returns the composed map and count. Larger aggregates give a sparser coarse level and
/// cheaper transfers at the price of a weaker coarse space (this crate's variant, measured
/// in EXPERIMENTS.md, not a construction of the papers cited above).
fn aggregate_again(
    ptr: &[usize],
    idx: &[u32],
    agg: &[u32],
    n_agg: usize,
    pairs: bool,
) -> (Vec<u32>, usize) {
    let mut adj: Vec<Vec<u32>> = vec![Vec::new(); n_agg];
    for (i, &a) in agg.iter().enumerate() {
        if a == u32::MAX {
            continue;
        }
        for &j in &idx[ptr[i]..ptr[i + 1]] {
            let b = agg[j as usize];
            if b != u32::MAX && b != a {
                adj[a as usize].push(b);
            }
        }
    }
    let mut cptr = vec![0usize];
    let mut cidx = Vec::new();
    for row in &mut adj {
        row.sort_unstable();
        row.dedup();
        cidx.extend_from_slice(row);
        cptr.push(cidx.len());
    }
    let (agg2, n2) = if pairs {
        pair_up(&cptr, &cidx)
    } else {
        aggregate(&cptr, &cidx, &vec![false; n_agg])
    };
    let composed = agg
        .iter()
        .map(|&a| if a == u32::MAX { a } else { agg2[a as usize] })
        .collect();
    (composed, n2)
}

/// Greedy matching in node order: each unmatched node is merged with its first unmatched
/// neighbour (or stays alone); about half as many groups as nodes.
fn pair_up(ptr: &[usize], idx: &[u32]) -> (Vec<u32>, usize) {
    let n = ptr.len() - 1;
    let mut group = vec![u32::MAX; n];
    let mut count = 0u32;
    for i in 0..n {
        if group[i] != u32::MAX {
            continue;
        }
        group[i] = count;
        if let Some(&j) = idx[ptr[i]..ptr[i + 1]]
            .iter()
            .find(|&&j| group[j as usize] == u32::MAX)
        {
            group[j as usize] = count;
        }
        count += 1;
    }
    (group, count as usize)
}

/// The tentative prolongator `T` (one `B × 6` block per aggregated node, in its aggregate's
/// column) and the coarse near-null space (6·aggregates × 6), by a modified Gram–Schmidt QR
/// of each aggregate's modes.
#[allow(clippy::needless_range_loop)] // the QR indexes Q's columns and R's rows together
fn tentative<const B: usize>(
    agg: &[u32],
    n_agg: usize,
    b: &[f64],
) -> (Bsr<B, MODES, f64>, Vec<f64>) {
    let mut members: Vec<Vec<usize>> = vec![Vec::new(); n_agg];
    for (i, &g) in agg.iter().enumerate() {
        if g != u32::MAX {
            members[g as usize].push(i);
        }
    }
    let mut blocks = vec![[[0.0; MODES]; B]; agg.len()];
    let mut b_coarse = vec![0.0; n_agg * MODES * MODES];
    for (g, nodes) in members.iter().enumerate() {
        let dof = |r: usize| B * nodes[r / B] + r % B;
        let mut q = DMatrix::<f64>::from_fn(B * nodes.len(), MODES, |r, c| b[dof(r) * MODES + c]);
        let mut rm = [[0.0; MODES]; MODES];
        for c in 0..MODES {
            let norm0 = q.column(c).norm();
            for k in 0..c {
                let qk = q.column(k).clone_owned();
                let rkc = qk.dot(&q.column(c));
                rm[k][c] = rkc;
                q.column_mut(c).axpy(-rkc, &qk, 1.0);
            }
            let norm = q.column(c).norm();
            if norm0 == 0.0 || norm <= 1e-10 * norm0 {
                q.column_mut(c).fill(0.0);
                rm[c].fill(0.0); // a dependent mode: a zero coarse dof
            } else {
                q.column_mut(c).scale_mut(1.0 / norm);
                rm[c][c] = norm;
            }
        }
        for (n, &i) in nodes.iter().enumerate() {
            for r in 0..B {
                for c in 0..MODES {
                    blocks[i][r][c] = q[(B * n + r, c)];
                }
            }
        }
        for (k, row) in rm.iter().enumerate() {
            for (c, &v) in row.iter().enumerate() {
                b_coarse[(g * MODES + k) * MODES + c] = v;
            }
        }
    }
    let mut t = Bsr::with_capacity(agg.len(), n_agg, agg.len());
    for (i, &g) in agg.iter().enumerate() {
        if g != u32::MAX {
            t.idx.push(g);
            t.val.push(blocks[i]);
        }
        t.push_row();
    }
    (t, b_coarse)
}

/// The inverse of each diagonal block of `a`. Zero dofs (a diagonal entry ≤ 0: fixed, or a
/// dropped mode) get zero rows and columns; a block that is not positive definite falls back
/// to its inverted diagonal.
pub fn block_diagonal_inverse<const B: usize>(a: &Bsr<B, B, f64>) -> Vec<[[f64; B]; B]> {
    (0..a.n_brows)
        .map(|i| {
            let k = (a.ptr[i]..a.ptr[i + 1]).find(|&k| a.idx[k] as usize == i);
            let mut d = DMatrix::<f64>::from_fn(B, B, |r, c| k.map_or(0.0, |k| a.val[k][r][c]));
            let zero: Vec<bool> = (0..B).map(|r| d[(r, r)] <= 0.0).collect();
            for r in (0..B).filter(|&r| zero[r]) {
                d.row_mut(r).fill(0.0);
                d.column_mut(r).fill(0.0);
                d[(r, r)] = 1.0;
            }
            let inv = d
                .clone()
                .cholesky()
                .map(|c| c.inverse())
                .unwrap_or_else(|| {
                    DMatrix::from_diagonal(
                        &d.diagonal().map(|v| if v > 0.0 { 1.0 / v } else { 0.0 }),
                    )
                });
            std::array::from_fn(|r| {
                std::array::from_fn(|c| if zero[r] || zero[c] { 0.0 } else { inv[(r, c)] })
            })
        })
        .collect()
}

/// An upper estimate of the spectral radius of `D⁻¹ A` by 20 power iterations from a fixed
/// start vector (deterministic), times 1.1.
fn spectral_radius<const B: usize>(a: &Bsr<B, B, f64>, d_inv: &[[[f64; B]; B]]) -> f64 {
    let n = B * a.n_brows;
    let mut x: Vec<f64> = (0..n)
        .map(|i| 1.0 + 0.37 * ((i * 7919) % 101) as f64 / 101.0)
        .collect();
    let (mut ax, mut y) = (vec![0.0; n], vec![0.0; n]);
    let mut lambda = 0.0;
    for _ in 0..20 {
        let xn = x.iter().map(|v| v * v).sum::<f64>().sqrt();
        if xn == 0.0 {
            break;
        }
        a.mul_vec(&x, &mut ax);
        for ((yi, ai), m) in y.chunks_exact_mut(B).zip(ax.chunks_exact(B)).zip(d_inv) {
            for r in 0..B {
                yi[r] = (0..B).map(|c| m[r][c] * ai[c]).sum();
            }
        }
        let yn = y.iter().map(|v| v * v).sum::<f64>().sqrt();
        lambda = yn / xn;
        x.iter_mut()
            .zip(&y)
            .for_each(|(xi, yi)| *xi = yi / yn.max(f64::MIN_POSITIVE));
    }
    1.1 * lambda
}

/// One coarsening step of `a` (nodes of `B` dofs, near-null space `b`, `rows × 6`): the
/// transfer, the coarse operator `Pᵀ A P` (every diagonal block stored) and the coarse
/// near-null space, or None when nothing coarsens (no strong connection left, or the coarse
/// level would not be smaller).
pub fn coarsen<const B: usize>(
    a: &Bsr<B, B, f64>,
    b: &[f64],
    theta: f64,
    smoothed: bool,
    merge: Merge,
) -> Option<(Transfer<B>, Bsr<MODES, MODES, f64>, Vec<f64>)> {
    let (ptr, idx, isolated) = strength_graph(a, theta);
    let (mut agg, mut n_agg) = aggregate(&ptr, &idx, &isolated);
    match merge {
        Merge::None => {}
        Merge::Pairs => (agg, n_agg) = aggregate_again(&ptr, &idx, &agg, n_agg, true),
        Merge::Neighbourhoods => (agg, n_agg) = aggregate_again(&ptr, &idx, &agg, n_agg, false),
    }
    if n_agg == 0 || n_agg * MODES >= B * a.n_brows {
        return None;
    }
    let (t, b_coarse) = tentative::<B>(&agg, n_agg, b);
    // P = (I − ω D⁻¹ A) T with ω = 4 / (3 ρ(D⁻¹A)) (Vaněk et al. 1996, eq. 3.6).
    let p = if smoothed {
        let d_inv = block_diagonal_inverse(a);
        let omega = 4.0 / (3.0 * spectral_radius(a, &d_inv).max(f64::MIN_POSITIVE));
        product::smoothed_prolongator(a, &t, &d_inv, omega)
    } else {
        t
    };
    let r = p.transpose();
    let coarse = product::mul(&r, &product::mul(a, &p)).with_diagonal();
    Some((Transfer { p, r }, coarse, b_coarse))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tentative prolongator reproduces the near-null space exactly: `T B_c = B`.
    #[test]
    fn the_tentative_prolongator_interpolates_the_rigid_modes() {
        let positions: Vec<_> = (0..12)
            .map(|i| Vector3::new(i as f64 * 0.1, (i % 3) as f64 * 0.2, (i % 2) as f64 * 0.3))
            .collect();
        let b = rigid_body_modes(12, Some(&positions));
        let agg: Vec<u32> = (0..12)
            .map(|i| [0, 0, 0, 0, 1, 1, 1, 1, 1, 2, 2, 2][i])
            .collect();
        let (t, bc) = tentative::<3>(&agg, 3, &b);
        let bc = DMatrix::from_row_slice(18, MODES, &bc);
        let tb = t.to_dense() * bc;
        let b = DMatrix::from_row_slice(36, MODES, &b);
        assert!((tb - b).norm() < 1e-12);
        // Orthonormal columns.
        let tt = t.to_dense().transpose() * t.to_dense();
        let nonzero = tt.diagonal().iter().filter(|&&v| v > 0.5).count();
        assert!((tt.clone() - DMatrix::from_diagonal(&tt.diagonal())).norm() < 1e-12);
        assert!(nonzero >= 17, "{nonzero}");
    }

    /// The coarse operator is the Galerkin product `Pᵀ A P` of the fine one, `R = Pᵀ`, and
    /// the fixed vertices' rows of `P` are empty.
    #[test]
    fn the_coarse_operator_is_the_galerkin_product() {
        use crate::linalg::test_support::{bar_mesh, bar_system};
        let cells = [8, 3, 3];
        let (a, _) = bar_system(cells);
        let mesh = bar_mesh(cells);
        let fixed: Vec<bool> = mesh.positions.iter().map(|p| p.x == 0.0).collect();
        let fine = Bsr::from_block_csr(&a, &fixed);
        let modes = rigid_body_modes(fixed.len(), Some(&mesh.positions));
        let (tr, coarse, _) = coarsen::<3>(&fine, &modes, 0.0, true, Merge::None).expect("coarse");
        let (p, ad) = (tr.p.to_dense(), fine.to_dense());
        assert_eq!(tr.r.to_dense(), p.transpose());
        let want = p.transpose() * &ad * &p;
        assert!((coarse.to_dense() - &want).norm() <= 1e-12 * want.norm());
        assert!(coarse.n_brows < fine.n_brows / 4, "{}", coarse.n_brows);
        for (i, &f) in fixed.iter().enumerate() {
            assert!(!f || tr.p.ptr[i] == tr.p.ptr[i + 1], "vertex {i}");
        }
    }
}
