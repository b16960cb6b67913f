//! Preconditioned conjugate gradients with a 3×3 block-Jacobi preconditioner, filtered for
//! fixed vertices (their rows and columns are removed from the system, as in Baraff & Witkin's
//! modified PCG), with all vectors held in a reusable workspace.

use super::par::{self, SharedMut};
use super::BlockCsr;
use nalgebra::{Matrix3, Vector3};

/// The preconditioner of [`Pcg`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Preconditioner {
    /// Inverse 3×3 diagonal blocks (parallel, cheap).
    #[default]
    BlockJacobi,
    /// Symmetric block Gauss–Seidel, `M = (D + L) D⁻¹ (D + Lᵀ)`, applied with Eisenstat's
    /// trick (sequential sweeps; fewer iterations). See `linalg::ssor`.
    BlockSsor,
}

/// Stopping rule: `‖r‖ ≤ tolerance · ‖b‖` on the free dofs, or `max_iterations`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PcgSettings {
    pub tolerance: f64,
    pub max_iterations: usize,
    pub preconditioner: Preconditioner,
}

impl Default for PcgSettings {
    fn default() -> Self {
        Self {
            tolerance: 1e-6,
            max_iterations: 1000,
            preconditioner: Preconditioner::BlockJacobi,
        }
    }
}

/// What one solve did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PcgStats {
    pub iterations: usize,
    /// Final `‖r‖ / ‖b‖` (0 when `b = 0`). NaN when `b`, `‖b‖`, an iterate's residual or a
    /// CG scalar was not finite (a NaN or infinite input, or an overflow): the solve then
    /// stopped there and `converged` is false.
    pub relative_residual: f64,
    /// `‖r‖ ≤ tolerance · ‖b‖` was reached with every quantity finite; never true when
    /// `relative_residual` is not finite.
    pub converged: bool,
}

impl PcgStats {
    /// The report of a solve that met a non-finite `‖b‖`, residual or CG scalar after
    /// `iterations` iterations. An IEEE comparison with NaN or ∞ can pass a tolerance test
    /// (`∞ ≤ tol · ∞`), so non-finite values are caught before any such test.
    pub(super) fn non_finite(iterations: usize) -> Self {
        Self {
            iterations,
            relative_residual: f64::NAN,
            converged: false,
        }
    }
}

/// PCG workspace for systems with `n` block rows. Solving allocates nothing.
///
/// Each iteration makes three passes over the vectors: `q = A p` fused with `p·q`; the
/// update of `x` and `r` fused with `z = P⁻¹ r`, `r·r` and `r·z`; and `p = z + β p`.
/// Sums are taken per fixed chunk and added in chunk order (thread-count independent).
#[derive(Debug, Clone)]
pub struct Pcg {
    r: Vec<Vector3<f64>>,
    z: Vec<Vector3<f64>>,
    p: Vec<Vector3<f64>>,
    q: Vec<Vector3<f64>>,
    inv_diag: Vec<Matrix3<f64>>,
    partials: Vec<f64>,
    partials2: Vec<(f64, f64)>,
    /// Workspace of the SSOR path, made on its first use.
    pub(super) ssor: Option<super::ssor::SsorWorkspace>,
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
            partials2: vec![(0.0, 0.0); par::n_chunks(n)],
            ssor: None,
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
        if settings.preconditioner == Preconditioner::BlockSsor {
            return self.solve_ssor(a, b, fixed, x, settings);
        }
        let n = a.n_rows();
        let par_min = par::VEC_PAR_MIN;
        let Self {
            r,
            z,
            p,
            q,
            inv_diag,
            partials,
            partials2,
            ..
        } = self;
        let pattern = &*a.pattern;
        par::for_each_mut(inv_diag, |i, m| {
            *m = if fixed[i] {
                Matrix3::zeros()
            } else {
                let d = a.values[pattern.diag[i] as usize];
                d.try_inverse().unwrap_or_else(|| {
                    Matrix3::from_diagonal(
                        &d.diagonal().map(|v| if v != 0.0 { 1.0 / v } else { 0.0 }),
                    )
                })
            };
        });
        let b_norm = par::sum(n, partials, |i| {
            if fixed[i] {
                0.0
            } else {
                b[i].norm_squared()
            }
        })
        .sqrt();
        if !b_norm.is_finite() {
            return PcgStats::non_finite(0);
        }
        if b_norm == 0.0 {
            return zero_solution(x, fixed);
        }
        // r = b − A x and z = P⁻¹ r on free rows (0 on fixed rows); p = z.
        a.mul_vec(x, q);
        {
            let (rp, zp) = (SharedMut(r.as_mut_ptr()), SharedMut(z.as_mut_ptr()));
            let (qr, inv) = (&*q, &*inv_diag);
            par::chunked(n, par_min, partials2, |range| {
                let (mut rr, mut rz) = (0.0, 0.0);
                for i in range {
                    let ri = if fixed[i] {
                        Vector3::zeros()
                    } else {
                        b[i] - qr[i]
                    };
                    let zi = inv[i] * ri;
                    // SAFETY: chunks are disjoint and `i < n` = the length of r and z.
                    unsafe {
                        *rp.ptr().add(i) = ri;
                        *zp.ptr().add(i) = zi;
                    }
                    rr += ri.norm_squared();
                    rz += ri.dot(&zi);
                }
                (rr, rz)
            });
        }
        let (rr, mut rz) = sum2(partials2, n);
        if !(rr.is_finite() && rz.is_finite()) {
            return PcgStats::non_finite(0);
        }
        p.copy_from_slice(z);
        let target = settings.tolerance * b_norm;
        let mut stats = PcgStats {
            iterations: 0,
            relative_residual: rr.sqrt() / b_norm,
            converged: rr.sqrt() <= target,
        };
        if stats.converged {
            return stats;
        }
        while stats.iterations < settings.max_iterations {
            // q = A p and p·q over free rows (p is zero on fixed rows).
            let pr = &*p;
            let qp = SharedMut(q.as_mut_ptr());
            par::chunked(n, par_min, partials, |range| {
                let mut pq = 0.0;
                for i in range {
                    let (s, e) = (pattern.row_ptr[i] as usize, pattern.row_ptr[i + 1] as usize);
                    let mut acc = Vector3::zeros();
                    for k in s..e {
                        acc += a.values[k] * pr[pattern.cols[k] as usize];
                    }
                    // SAFETY: disjoint chunks; `i < n`.
                    unsafe { *qp.ptr().add(i) = acc };
                    if !fixed[i] {
                        pq += pr[i].dot(&acc);
                    }
                }
                pq
            });
            let pq: f64 = partials[..par::n_chunks(n)].iter().sum();
            if !pq.is_finite() {
                return PcgStats::non_finite(stats.iterations);
            }
            if pq <= 0.0 {
                break; // not positive definite (or breakdown): report non-convergence
            }
            let alpha = rz / pq;
            // x += α p, r −= α q, z = D⁻¹ r (block Jacobi), with r·r and r·z.
            {
                let (qr, inv) = (&*q, &*inv_diag);
                let (xp, rp, zp) = (
                    SharedMut(x.as_mut_ptr()),
                    SharedMut(r.as_mut_ptr()),
                    SharedMut(z.as_mut_ptr()),
                );
                par::chunked(n, par_min, partials2, |range| {
                    let (mut rr, mut rz) = (0.0, 0.0);
                    for i in range {
                        if fixed[i] {
                            continue;
                        }
                        // SAFETY: disjoint chunks; `i < n`; p and q are only read here.
                        unsafe {
                            *xp.ptr().add(i) += alpha * pr[i];
                            let ri = &mut *rp.ptr().add(i);
                            *ri -= alpha * qr[i];
                            let zi = inv[i] * *ri;
                            *zp.ptr().add(i) = zi;
                            rr += ri.norm_squared();
                            rz += ri.dot(&zi);
                        }
                    }
                    (rr, rz)
                });
            }
            let (rr, rz_new) = sum2(partials2, n);
            stats.iterations += 1;
            if !(rr.is_finite() && rz_new.is_finite()) {
                return PcgStats::non_finite(stats.iterations);
            }
            stats.relative_residual = rr.sqrt() / b_norm;
            if rr.sqrt() <= target {
                stats.converged = true;
                break;
            }
            let beta = rz_new / rz;
            rz = rz_new;
            let (zr, pp) = (&*z, SharedMut(p.as_mut_ptr()));
            par::chunked(n, par_min, partials, |range| {
                for i in range {
                    // SAFETY: disjoint chunks; `i < n`.
                    unsafe {
                        let pi = &mut *pp.ptr().add(i);
                        *pi = zr[i] + beta * *pi;
                    }
                }
                0.0
            });
        }
        stats
    }
}

/// The solution of `A x = 0` on the free vertices (fixed ones keep their values).
pub(super) fn zero_solution(x: &mut [Vector3<f64>], fixed: &[bool]) -> PcgStats {
    for (xi, &f) in x.iter_mut().zip(fixed) {
        if !f {
            *xi = Vector3::zeros();
        }
    }
    PcgStats {
        iterations: 0,
        relative_residual: 0.0,
        converged: true,
    }
}

fn sum2(partials: &[(f64, f64)], n: usize) -> (f64, f64) {
    partials[..par::n_chunks(n)]
        .iter()
        .fold((0.0, 0.0), |acc, p| (acc.0 + p.0, acc.1 + p.1))
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
                ..Default::default()
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
                ..Default::default()
            },
        );
        assert_eq!(again.iterations, 0);
    }

    #[test]
    fn ssor_solves_the_same_system_in_fewer_iterations() {
        let a = spd_matrix();
        let fixed = [true, false, false, false, false, false];
        let b: Vec<_> = (0..6)
            .map(|i| Vector3::new(1.0, -(i as f64), 0.3 * i as f64))
            .collect();
        let solve = |preconditioner| {
            let mut x = vec![Vector3::zeros(); 6];
            let s = Pcg::new(6).solve(
                &a,
                &b,
                &fixed,
                &mut x,
                &PcgSettings {
                    tolerance: 1e-12,
                    max_iterations: 100,
                    preconditioner,
                },
            );
            assert!(s.converged, "{preconditioner:?}: {s:?}");
            (x, s.iterations)
        };
        let (xj, nj) = solve(Preconditioner::BlockJacobi);
        let (xs, ns) = solve(Preconditioner::BlockSsor);
        assert!(ns <= nj, "SSOR {ns} vs Jacobi {nj}");
        for i in 0..6 {
            assert!((xj[i] - xs[i]).norm() < 1e-9);
        }
        assert_eq!(xs[0], Vector3::zeros());
    }

    /// Issue 12: `∞ ≤ tol · ∞` is true in IEEE arithmetic, so an overflowing `‖b‖` (gravity
    /// `−1e160`) was reported as converged with a NaN residual. Every non-finite case must
    /// report `converged = false` with a NaN residual, under both preconditioners.
    #[test]
    fn a_non_finite_right_hand_side_or_iterate_is_never_converged() {
        let a = spd_matrix();
        let fixed = [true, false, false, false, false, false];
        let finite: Vec<_> = (0..6)
            .map(|i| Vector3::new(1.0, -(i as f64), 0.5))
            .collect();
        let mut nan_b = finite.clone();
        nan_b[3].y = f64::NAN;
        let mut inf_b = finite.clone();
        inf_b[2].x = f64::NEG_INFINITY;
        // Finite entries whose squares overflow: ‖b‖ = ∞.
        let huge_b: Vec<_> = finite.iter().map(|v| v * 1e160).collect();
        let mut nan_a = spd_matrix();
        // Block (2, 1): both vertices free.
        let row = nan_a.pattern.row_ptr[2] as usize..nan_a.pattern.row_ptr[3] as usize;
        let off = row.clone().find(|&k| nan_a.pattern.cols[k] == 1).unwrap();
        nan_a.values[off][(0, 1)] = f64::NAN;
        let mut nan_x0 = vec![Vector3::zeros(); 6];
        nan_x0[4].z = f64::NAN;
        let zero = vec![Vector3::zeros(); 6];
        // (what, A, b, first guess)
        type Case<'a> = (
            &'a str,
            &'a BlockCsr,
            &'a [Vector3<f64>],
            &'a [Vector3<f64>],
        );
        let cases: [Case; 5] = [
            ("NaN in b", &a, &nan_b, &zero),
            ("∞ in b", &a, &inf_b, &zero),
            ("‖b‖ overflows", &a, &huge_b, &zero),
            ("NaN in A", &nan_a, &finite, &zero),
            ("NaN in the first guess", &a, &finite, &nan_x0),
        ];
        for preconditioner in [Preconditioner::BlockJacobi, Preconditioner::BlockSsor] {
            for (what, a, b, x0) in cases {
                let mut x = x0.to_vec();
                let stats = Pcg::new(6).solve(
                    a,
                    b,
                    &fixed,
                    &mut x,
                    &PcgSettings {
                        preconditioner,
                        ..Default::default()
                    },
                );
                assert!(
                    !stats.converged && stats.relative_residual.is_nan(),
                    "{preconditioner:?}, {what}: {stats:?}"
                );
                // It stops at the first non-finite value instead of running to the cap.
                assert!(
                    stats.iterations <= 1,
                    "{preconditioner:?}, {what}: {stats:?}"
                );
            }
            // The same solve with finite data converges (the cases above differ only there).
            let mut x = zero.clone();
            let settings = PcgSettings {
                preconditioner,
                ..Default::default()
            };
            let stats = Pcg::new(6).solve(&a, &finite, &fixed, &mut x, &settings);
            assert!(stats.converged && stats.relative_residual.is_finite());
        }
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
                ..Default::default()
            },
        );
        assert_eq!(stats.iterations, 2);
        assert!(!stats.converged);
        assert!(stats.relative_residual > 1e-14);
    }
}
