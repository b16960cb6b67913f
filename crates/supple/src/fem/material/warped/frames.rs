//! The per-vertex rotation field of stiffness warping (Müller et al. 2002 §3.1): its rest data,
//! built once, and its refresh at the current positions.
//!
//! - `EdgeFrame`: eq. 16, `R_i = N′_i N_iᵀ` with `N = [n₁ n₂ n₃]`, `n₁ = a/|a|`,
//!   `n₂ = a×b/|a×b|`, `n₃ = n₁×n₂` from two edges `a = x_{j₁} − x_i`, `b = x_{j₂} − x_i` fixed
//!   at construction: the pair of neighbours whose rest edges are closest to perpendicular
//!   (largest sine; the first such pair in neighbour order). Müller averages three edges for
//!   `n₁`; two edges suffice for a frame and make the choice a plain rule.
//! - `LeastSquares`: eq. 14–15, the rotation minimizing `Σ_j w_ij |R e⁰_ij − e_ij|²` over the
//!   vertex's edges, i.e. the polar rotation of `A_i = Σ_j w_ij e_ij e⁰_ijᵀ`
//!   (`e = x_j − x_i`, `e⁰ = x⁰_j − x⁰_i`; Müller's `F` is `A_iᵀ` and his `R = VUᵀ` is this
//!   rotation), with the reflection sign fix of [`polar::svd_rotation`]. Weights
//!   `w_ij = 1/|e⁰_ij|²`: every edge direction counts alike, whatever its length, so the
//!   estimate does not lean to the long edges of a graded mesh. Computed by the warm-started
//!   polar iteration of [`polar::rotation_near`], which returns the SVD's rotation (and falls
//!   back to the SVD itself for inverted or degenerate `A_i`).
//!
//! In both cases a rigid motion `x = Q x⁰ + t` gives `R_i = Q` for every vertex. The neighbour
//! lists are the rows of the body's block pattern (the vertex graph in CSR form).

use super::super::RotationField;
use crate::fem::polar;
use crate::linalg::par;
use crate::linalg::BlockPattern;
use nalgebra::{Matrix3, Vector3};

/// Rest data of the rotation field.
#[derive(Debug)]
pub(super) struct RotationFieldData {
    pub(super) field: RotationField,
    /// `EdgeFrame`: the two neighbours of each vertex (`u32::MAX` when it has none) and the
    /// rest frame `N_i`.
    frame_edges: Vec<[u32; 2]>,
    rest_frames: Vec<Matrix3<f64>>,
    /// `LeastSquares`: the weighted rest edge `w e⁰ = e⁰/|e⁰|²` of every block slot (0 on
    /// the diagonal).
    rest_edges: Vec<Vector3<f64>>,
}

/// Orthonormal frame `[n₁ n₂ n₃]` of two edges (eq. 16), `None` when they are parallel.
fn edge_frame(a: &Vector3<f64>, b: &Vector3<f64>) -> Option<Matrix3<f64>> {
    let (na, c) = (a.norm(), a.cross(b));
    let nc = c.norm();
    if nc <= 1e-12 * na * b.norm() || !nc.is_finite() {
        return None;
    }
    let n1 = a / na;
    let n2 = c / nc;
    Some(Matrix3::from_columns(&[n1, n2, n1.cross(&n2)]))
}

impl RotationFieldData {
    /// The rest data of `field` for rest positions `x0` on the vertex graph `p`.
    pub(super) fn new(field: RotationField, x0: &[Vector3<f64>], p: &BlockPattern) -> Self {
        let n = x0.len();
        let neighbours = |i: usize| {
            p.cols[p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize]
                .iter()
                .map(|&j| j as usize)
                .filter(move |&j| j != i)
        };
        let (mut frame_edges, mut rest_frames) = (Vec::new(), Vec::new());
        if field == RotationField::EdgeFrame {
            for i in 0..n {
                let mut best = (0.0, [u32::MAX; 2]);
                for j1 in neighbours(i) {
                    let a = x0[j1] - x0[i];
                    for j2 in neighbours(i).filter(|&j2| j2 > j1) {
                        let b = x0[j2] - x0[i];
                        let sine = a.cross(&b).norm() / (a.norm() * b.norm());
                        if sine > best.0 {
                            best = (sine, [j1 as u32, j2 as u32]);
                        }
                    }
                }
                let [j1, j2] = best.1.map(|j| j as usize);
                let frame = (j1 != u32::MAX as usize)
                    .then(|| edge_frame(&(x0[j1] - x0[i]), &(x0[j2] - x0[i])))
                    .flatten();
                frame_edges.push(if frame.is_some() {
                    best.1
                } else {
                    [u32::MAX; 2]
                });
                rest_frames.push(frame.unwrap_or_else(Matrix3::identity));
            }
        }
        let mut rest_edges = Vec::new();
        if field == RotationField::LeastSquares {
            rest_edges = vec![Vector3::zeros(); p.n_blocks()];
            for i in 0..n {
                for s in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
                    let e0 = x0[p.cols[s] as usize] - x0[i];
                    let l2 = e0.norm_squared();
                    if l2 > 0.0 {
                        rest_edges[s] = e0 / l2;
                    }
                }
            }
        }
        Self {
            field,
            frame_edges,
            rest_frames,
            rest_edges,
        }
    }

    /// Refreshes `rotations` at `x`. Vertices whose current edges give no frame (`EdgeFrame`
    /// with the two edges collapsed onto a line) keep their last rotation; `LeastSquares`
    /// warm-starts each polar iteration from the last rotation.
    pub(super) fn update(
        &self,
        p: &BlockPattern,
        x: &[Vector3<f64>],
        rotations: &mut [Matrix3<f64>],
    ) {
        match self.field {
            RotationField::EdgeFrame => {
                let (edges, rest) = (&self.frame_edges, &self.rest_frames);
                par::for_each_mut(rotations, |i, r| {
                    let [j1, j2] = edges[i];
                    if j1 == u32::MAX {
                        return;
                    }
                    let (a, b) = (x[j1 as usize] - x[i], x[j2 as usize] - x[i]);
                    if let Some(n) = edge_frame(&a, &b) {
                        *r = n * rest[i].transpose();
                    }
                });
            }
            RotationField::LeastSquares => {
                let rest_edges = &self.rest_edges;
                // Several vertices at a time (the corotational elements' batched iteration).
                polar::update_rotations_near(rotations, |i| {
                    let row = p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize;
                    let xi = x[i];
                    let mut a = Matrix3::zeros();
                    for (&j, e0) in p.cols[row.clone()].iter().zip(&rest_edges[row]) {
                        a += (x[j as usize] - xi) * e0.transpose();
                    }
                    a
                });
            }
        }
    }
}
