//! Preconditioned conjugate gradients with a 3×3 block-Jacobi preconditioner, filtered for
//! fixed vertices (their rows and columns are removed from the system, as in Baraff & Witkin's
//! modified PCG), with all vectors held in a reusable workspace.

use super::{par, BlockCsr};
use nalgebra::{Matrix3, Vector3};

/// Stopping rule: `‖r‖ ≤ tolerance · ‖b‖` on the free dofs, or `max_iterations`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PcgSettings {
    pub tolerance: f64,
    pub max_iterations: usize,
}

impl Default for PcgSettings {
    fn default() -> Self {
        Self {
            tolerance: 1e-6,
            max_iterations: 1000,
        }
    }
}

/// What one solve did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PcgStats {
    pub iterations: usize,
    /// Final `‖r‖ / ‖b‖` (0 when `b = 0`).
    pub relative_residual: f64,
    pub converged: bool,
}

/// PCG workspace for systems with `n` block rows. Solving allocates nothing.
#[derive(Debug, Clone)]
pub struct Pcg {
    r: Vec<Vector3<f64>>,
    z: Vec<Vector3<f64>>,
    p: Vec<Vector3<f64>>,
    q: Vec<Vector3<f64>>,
    inv_diag: Vec<Matrix3<f64>>,
    partials: Vec<f64>,
}

impl Pcg {
    pub fn new(n: usize) -> Self {
        let zero = vec![Vector3::zeros(); n];
        Self {
            r: zero.clone(),
            z: zero.clone(),
            p: zero.clone(),
            q: zero,
            inv_diag: vec![Matrix3::zeros(); n],
            partials: vec![0.0; par::n_chunks(n)],
        }
    }

    /// Solves `A x = b` for the free vertices; `x` holds the initial guess on entry (its fixed
    /// entries are prescribed values and are left untouched). `A` must be symmetric positive
    /// definite on the free dofs.
    pub fn solve(
        &mut self,
        a: &BlockCsr,
        b: &[Vector3<f64>],
        fixed: &[bool],
        x: &mut [Vector3<f64>],
        settings: &PcgSettings,
    ) -> PcgStats {
        let n = a.n_rows();
        let Self {
            r,
            z,
            p,
            q,
            inv_diag,
            partials,
        } = self;
        let diag = &a.pattern.diag;
        par::for_each_mut(inv_diag, |i, m| {
            *m = if fixed[i] {
                Matrix3::zeros()
            } else {
                let d = a.values[diag[i] as usize];
                d.try_inverse().unwrap_or_else(|| {
                    Matrix3::from_diagonal(
                        &d.diagonal().map(|v| if v != 0.0 { 1.0 / v } else { 0.0 }),
                    )
                })
            };
        });
        let free_dot = |u: &[Vector3<f64>], w: &[Vector3<f64>], partials: &mut [f64]| {
            par::sum(
                n,
                partials,
                |i| if fixed[i] { 0.0 } else { u[i].dot(&w[i]) },
            )
        };
        let b_norm = free_dot(b, b, partials).sqrt();
        if b_norm == 0.0 {
            for (xi, &f) in x.iter_mut().zip(fixed) {
                if !f {
                    *xi = Vector3::zeros();
                }
            }
            return PcgStats {
                iterations: 0,
                relative_residual: 0.0,
                converged: true,
            };
        }
        // r = b − A x on free rows, 0 on fixed rows.
        a.mul_vec(x, q);
        par::for_each_mut(r, |i, ri| {
            *ri = if fixed[i] {
                Vector3::zeros()
            } else {
                b[i] - q[i]
            }
        });
        let mut r_norm = free_dot(r, r, partials).sqrt();
        let target = settings.tolerance * b_norm;
        let mut stats = PcgStats {
            iterations: 0,
            relative_residual: r_norm / b_norm,
            converged: r_norm <= target,
        };
        if stats.converged {
            return stats;
        }
        par::for_each_mut(z, |i, zi| *zi = inv_diag[i] * r[i]);
        p.copy_from_slice(z);
        let mut rz = free_dot(r, z, partials);
        while stats.iterations < settings.max_iterations {
            a.mul_vec(p, q);
            let pq = free_dot(p, q, partials);
            if pq.is_nan() || pq <= 0.0 || !rz.is_finite() {
                break; // not positive definite (or breakdown): report non-convergence
            }
            let alpha = rz / pq;
            let (pr, qr) = (&*p, &*q);
            par::for_each_mut(x, |i, xi| {
                if !fixed[i] {
                    *xi += alpha * pr[i];
                }
            });
            par::for_each_mut(r, |i, ri| {
                if !fixed[i] {
                    *ri -= alpha * qr[i];
                }
            });
            stats.iterations += 1;
            r_norm = free_dot(r, r, partials).sqrt();
            stats.relative_residual = r_norm / b_norm;
            if r_norm <= target {
                stats.converged = true;
                break;
            }
            par::for_each_mut(z, |i, zi| *zi = inv_diag[i] * r[i]);
            let rz_new = free_dot(r, z, partials);
            let beta = rz_new / rz;
            rz = rz_new;
            let zr = &*z;
            par::for_each_mut(p, |i, pi| *pi = zr[i] + beta * *pi);
        }
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::BlockPattern;
    use std::sync::Arc;

    /// An SPD block matrix on a small tet strip: A = L + shift·I with L a graph Laplacian ⊗ S.
    fn spd_matrix() -> BlockCsr {
        let tets = [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5]];
        let (p, scatter) = BlockPattern::from_tets(6, &tets);
        let mut a = BlockCsr::zeros(Arc::new(p));
        let s = Matrix3::new(2.0, 0.3, 0.0, 0.3, 1.5, 0.2, 0.0, 0.2, 1.0);
        for map in &scatter {
            for (k, &slot) in map.iter().enumerate() {
                a.values[slot as usize] += if k / 4 == k % 4 { 3.0 * s } else { -s };
            }
        }
        for i in 0..6 {
            let d = a.pattern.diag[i] as usize;
            a.values[d] += Matrix3::identity() * 0.5;
        }
        a
    }

    #[test]
    fn solves_an_spd_system_with_fixed_vertices() {
        let a = spd_matrix();
        let fixed = [true, false, false, false, false, true];
        let mut x_true: Vec<_> = (0..6)
            .map(|i| Vector3::new(1.0 + i as f64, -(i as f64), 0.5))
            .collect();
        x_true[0] = Vector3::new(0.1, 0.2, 0.3);
        x_true[5] = Vector3::zeros();
        let mut b = vec![Vector3::zeros(); 6];
        a.mul_vec(&x_true, &mut b);
        // Start from the prescribed values on fixed vertices, zero elsewhere.
        let mut x = vec![Vector3::zeros(); 6];
        x[0] = x_true[0];
        let mut pcg = Pcg::new(6);
        let stats = pcg.solve(
            &a,
            &b,
            &fixed,
            &mut x,
            &PcgSettings {
                tolerance: 1e-12,
                max_iterations: 100,
            },
        );
        assert!(stats.converged, "{stats:?}");
        assert!(stats.iterations <= 12, "{stats:?}");
        for i in 0..6 {
            assert!(
                (x[i] - x_true[i]).norm() < 1e-9,
                "{i}: {} vs {}",
                x[i],
                x_true[i]
            );
        }
        // A converged warm start takes no iteration.
        let again = pcg.solve(
            &a,
            &b,
            &fixed,
            &mut x,
            &PcgSettings {
                tolerance: 1e-6,
                max_iterations: 100,
            },
        );
        assert_eq!(again.iterations, 0);
    }

    #[test]
    fn reports_non_convergence_at_the_cap() {
        let a = spd_matrix();
        let b = vec![Vector3::new(1.0, 2.0, 3.0); 6];
        let mut x = vec![Vector3::zeros(); 6];
        let stats = Pcg::new(6).solve(
            &a,
            &b,
            &[false; 6],
            &mut x,
            &PcgSettings {
                tolerance: 1e-14,
                max_iterations: 2,
            },
        );
        assert_eq!(stats.iterations, 2);
        assert!(!stats.converged);
        assert!(stats.relative_residual > 1e-14);
    }
}
