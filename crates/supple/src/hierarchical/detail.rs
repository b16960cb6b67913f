//! PCG on the hierarchical detail: reading (a) of Hauth & Straßer's hierarchical method
//! (2004, §5.2: "it is possible to carry out all computations using the wavelet approximation
//! of `u` with minimal changes to the code").
//!
//! In the hierarchical basis a nodal field is `u = T c` ([`Hierarchy::to_nodal`]; `c` holds the
//! coarse values and, per midpoint, its difference from the mean of its two parents). The
//! nodal system `A u = b` becomes `Tᵀ A T c = Tᵀ b`. With the coarse coefficients `c_C` given
//! (the nonlinear coarse solution), the details solve
//! `(Tᵀ A T)_DD c_D = (Tᵀ (b − A T [c_C; 0]))_D`,
//! a symmetric positive definite system that CG solves with three O(N) passes per iteration
//! besides the product with `A`: `w = T p`, `q = A w`, `Tᵀ q` ([`Hierarchy::to_nodal_transpose`]).
//! Held vertices stay out: a held midpoint has held parents (the sets are carried down that
//! way, [`Hierarchy::refine_vertex_set`]), so every free detail's basis function `T e_j` is zero
//! on held vertices, and held rows of `A w` are dropped before `Tᵀ`.
//!
//! The preconditioner is block Jacobi on `Tᵀ A T` itself: the 3×3 diagonal block of detail `j`
//! is `Σ_{a,b} w_a w_b A_ab` over its basis function `T e_j = Σ_a w_a e_a` (a single vertex for
//! the finest midpoints; the hat of a coarser level otherwise), computed at each assembly.
//! A nodal diagonal would underrate the coarser hats, whose support is wider (Yserentant 1992:
//! the hierarchical basis is what keeps the levels' condition numbers apart).
//!
//! Every sum is taken per fixed chunk ([`par::sum`]): the iterates do not depend on the number
//! of threads. Nothing allocates after construction.

use crate::linalg::{par, BlockCsr, CgError, CgInfo, PcgSettings};
use crate::mesh::Hierarchy;
use crate::time::system::zero_fixed;
use nalgebra::{Matrix3, Vector3};
use std::collections::BTreeMap;

/// Workspaces and preconditioner of the detail solve.
#[derive(Debug)]
pub struct DetailCg {
    /// Vertices of the coarsest level (the coarse coefficients, not unknowns here).
    nc: usize,
    /// Basis function `T e_j` of detail `j` as `(vertex, weight)`: entries
    /// `hat[hat_start[j − nc] .. hat_start[j − nc + 1]]`.
    hat_start: Vec<u32>,
    hat: Vec<(u32, f64)>,
    /// Inverse diagonal blocks of `Tᵀ A T` (zero on the coarse coefficients).
    inv_diag: Vec<Matrix3<f64>>,
    d: Vec<Vector3<f64>>,
    r: Vec<Vector3<f64>>,
    z: Vec<Vector3<f64>>,
    p: Vec<Vector3<f64>>,
    q: Vec<Vector3<f64>>,
    w: Vec<Vector3<f64>>,
    partials: Vec<f64>,
}

impl DetailCg {
    /// Workspaces for the finest level of `hierarchy`, with every detail's basis function.
    pub fn new(hierarchy: &Hierarchy) -> Self {
        let n = hierarchy.finest().n_vertices();
        let nc = hierarchy.coarse_vertices();
        let mut children: Vec<Vec<u32>> = vec![Vec::new(); n];
        for (m, [p, q]) in hierarchy.midpoints() {
            children[p as usize].push(m as u32);
            children[q as usize].push(m as u32);
        }
        let mut hat_start = Vec::with_capacity(n - nc + 1);
        let mut hat = Vec::new();
        for j in nc..n {
            hat_start.push(hat.len() as u32);
            // Children have larger indices than both parents (each level appends its
            // midpoints), so visiting in index order completes a weight before it spreads.
            let mut weights = BTreeMap::from([(j as u32, 1.0)]);
            let mut next = Some(j as u32);
            while let Some(v) = next {
                let wv = weights[&v];
                for &c in &children[v as usize] {
                    *weights.entry(c).or_insert(0.0) += 0.5 * wv;
                }
                next = weights.range(v + 1..).next().map(|(&k, _)| k);
            }
            hat.extend(weights);
        }
        hat_start.push(hat.len() as u32);
        let zero = vec![Vector3::zeros(); n];
        Self {
            nc,
            hat_start,
            hat,
            inv_diag: vec![Matrix3::zeros(); n],
            d: zero.clone(),
            r: zero.clone(),
            z: zero.clone(),
            p: zero.clone(),
            q: zero.clone(),
            w: zero,
            partials: vec![0.0; par::n_chunks(n)],
        }
    }

    /// The basis function `T e_j` of detail vertex `j` as `(vertex, weight)` pairs (`None`
    /// for a coarse vertex or an index past the finest level).
    pub fn basis_function(&self, j: usize) -> Option<&[(u32, f64)]> {
        let k = j.checked_sub(self.nc)?;
        let (s, e) = (*self.hat_start.get(k)?, *self.hat_start.get(k + 1)?);
        Some(&self.hat[s as usize..e as usize])
    }

    /// Inverts the diagonal blocks of `Tᵀ A T` on the free details (module notes).
    pub fn refresh(&mut self, a: &BlockCsr, fixed: &[bool]) {
        let (nc, hat_start, hat) = (self.nc, &self.hat_start, &self.hat);
        par::for_each_mut(&mut self.inv_diag, |j, inv| {
            *inv = Matrix3::zeros();
            if j < nc || fixed[j] {
                return;
            }
            let k = j - nc;
            let support = &hat[hat_start[k] as usize..hat_start[k + 1] as usize];
            let mut block = Matrix3::zeros();
            for &(a_v, wa) in support {
                for &(b_v, wb) in support {
                    if let Some(s) = a.pattern.slot(a_v as usize, b_v as usize) {
                        block += (wa * wb) * a.values[s];
                    }
                }
            }
            *inv = block.try_inverse().unwrap_or_else(|| {
                Matrix3::from_diagonal(
                    &block
                        .diagonal()
                        .map(|v| if v != 0.0 { 1.0 / v } else { 0.0 }),
                )
            });
        });
    }

    /// Solves for the details: on entry `u` is a nodal first guess whose coarse coefficients
    /// are the given coarse solution (zero on held vertices); on exit `u` has the same coarse
    /// coefficients and the details of `(Tᵀ A T)_DD c_D = (Tᵀ (b − A T [c_C; 0]))_D` to the
    /// tolerance `‖r_D‖ ≤ tol · ‖(Tᵀ (b − A T [c_C; 0]))_D‖`. [`refresh`](Self::refresh) must
    /// have seen `a`.
    pub fn solve(
        &mut self,
        hierarchy: &Hierarchy,
        a: &BlockCsr,
        b: &[Vector3<f64>],
        fixed: &[bool],
        u: &mut [Vector3<f64>],
        settings: &PcgSettings,
    ) -> Result<CgInfo, CgError> {
        let n = u.len();
        let nc = self.nc;
        let Self {
            inv_diag,
            d,
            r,
            z,
            p,
            q,
            w,
            partials,
            ..
        } = self;
        let mask = |v: &mut [Vector3<f64>]| {
            v[..nc].fill(Vector3::zeros());
            zero_fixed(fixed, v);
        };
        // Scale: the detail right-hand side, (Tᵀ (b − A T [c_C; 0]))_D.
        w.copy_from_slice(u);
        hierarchy.to_hierarchical(w);
        w[nc..].fill(Vector3::zeros());
        hierarchy.to_nodal(w);
        restricted_residual(hierarchy, a, b, fixed, w, q, &mask);
        let b_norm = norm(q, partials);
        // Start: r = (Tᵀ (b − A u))_D.
        restricted_residual(hierarchy, a, b, fixed, u, r, &mask);
        if !b_norm.is_finite() {
            return Err(CgError::NonFinite { iterations: 0 });
        }
        d.fill(Vector3::zeros());
        let target = settings.tolerance * b_norm;
        let mut rr = norm(r, partials);
        let mut iterations = 0;
        if rr > target {
            apply(inv_diag, r, z);
            p.copy_from_slice(z);
            let mut rz = dot(r, z, partials);
            loop {
                // q = (Tᵀ A T p)_D.
                w.copy_from_slice(p);
                hierarchy.to_nodal(w);
                a.mul_vec(w, q);
                zero_fixed(fixed, q);
                hierarchy.to_nodal_transpose(q);
                mask(q);
                let pq = dot(p, q, partials);
                iterations += 1;
                if !(pq.is_finite() && rz.is_finite()) {
                    return Err(CgError::NonFinite { iterations });
                }
                if pq <= 0.0 {
                    break;
                }
                let alpha = rz / pq;
                let (pp, qq) = (&*p, &*q);
                par::for_each_mut(d, |i, di| *di += alpha * pp[i]);
                par::for_each_mut(r, |i, ri| *ri -= alpha * qq[i]);
                rr = norm(r, partials);
                if rr <= target || iterations >= settings.max_iterations {
                    break;
                }
                apply(inv_diag, r, z);
                let rz_new = dot(r, z, partials);
                let beta = rz_new / rz;
                rz = rz_new;
                let zz = &*z;
                par::for_each_mut(p, |i, pi| *pi = zz[i] + beta * *pi);
            }
        }
        // u += T d.
        hierarchy.to_nodal(d);
        let dd = &*d;
        par::for_each_mut(&mut u[..n], |i, ui| *ui += dd[i]);
        let info = CgInfo {
            iterations,
            relative_residual: if b_norm > 0.0 { rr / b_norm } else { 0.0 },
        };
        if !rr.is_finite() {
            Err(CgError::NonFinite { iterations })
        } else if rr <= target {
            Ok(info)
        } else {
            Err(CgError::NoConvergence(info))
        }
    }
}

/// `out = (Tᵀ (b − A u))_D` with held rows dropped before `Tᵀ`.
fn restricted_residual(
    hierarchy: &Hierarchy,
    a: &BlockCsr,
    b: &[Vector3<f64>],
    fixed: &[bool],
    u: &[Vector3<f64>],
    out: &mut [Vector3<f64>],
    mask: &impl Fn(&mut [Vector3<f64>]),
) {
    a.mul_vec(u, out);
    par::for_each_mut(out, |i, o| *o = b[i] - *o);
    zero_fixed(fixed, out);
    hierarchy.to_nodal_transpose(out);
    mask(out);
}

fn apply(inv: &[Matrix3<f64>], r: &[Vector3<f64>], z: &mut [Vector3<f64>]) {
    par::for_each_mut(z, |i, zi| *zi = inv[i] * r[i]);
}

fn dot(a: &[Vector3<f64>], b: &[Vector3<f64>], partials: &mut [f64]) -> f64 {
    par::sum(a.len(), partials, |i| a[i].dot(&b[i]))
}

fn norm(a: &[Vector3<f64>], partials: &mut [f64]) -> f64 {
    par::sum(a.len(), partials, |i| a[i].norm_squared()).sqrt()
}
