//! Conjugate gradients preconditioned by symmetric block Gauss–Seidel (SSOR with ω = 1),
//! applied with Eisenstat's trick.
//!
//! Write `A = D + L + Lᵀ` (3×3 diagonal blocks `D`, strict lower blocks `L`) and `E = D + L`.
//! The preconditioner is `M = E D⁻¹ Eᵀ`. CG runs on the equivalent symmetric system
//! `Â x̂ = E⁻¹ r₀` with `Â = E⁻¹ A E⁻ᵀ` and preconditioner `D` (`x = x₀ + E⁻ᵀ x̂`). Because
//! `A = E + Eᵀ − D`, `Â p = t + E⁻¹(p − D t)` with `t = E⁻ᵀ p` (Eisenstat 1981): one backward
//! and one forward sweep per iteration and no product with `A`. Only `L` and `D` are kept,
//! in a compact copy, so each iteration reads the matrix's lower half twice.
//!
//! The sweeps are sequential (every row needs the rows before it), hence deterministic. The
//! stopping rule is the same as block-Jacobi PCG's, `‖b − A x‖ ≤ tol ‖b‖`: it is estimated
//! from `x̂`'s preconditioned residual and confirmed with the true residual `E r̂`.

use super::pcg::{zero_solution, Pcg, PcgSettings, PcgStats};
use super::BlockCsr;
use nalgebra::{Matrix3, Vector3};

/// The lower triangle `L` and the diagonal blocks `D` of `A` on the free vertices.
#[derive(Debug, Clone)]
struct Lower {
    /// Strict lower blocks by row: row `i` is `ptr[i]..ptr[i + 1]`.
    ptr: Vec<u32>,
    cols: Vec<u32>,
    vals: Vec<Matrix3<f64>>,
    /// Slot in `A` of each strict lower block.
    src: Vec<u32>,
    d: Vec<Matrix3<f64>>,
    d_inv: Vec<Matrix3<f64>>,
}

/// Lower-triangle copy and vectors of the SSOR solve (sized on first use).
#[derive(Debug, Clone)]
pub struct SsorWorkspace {
    lower: Lower,
    r: Vec<Vector3<f64>>,
    z: Vec<Vector3<f64>>,
    p: Vec<Vector3<f64>>,
    q: Vec<Vector3<f64>>,
    acc: Vec<Vector3<f64>>,
    dx: Vec<Vector3<f64>>,
}

impl SsorWorkspace {
    fn new(a: &BlockCsr) -> Self {
        let p = &*a.pattern;
        let n = p.n_rows();
        let mut ptr = Vec::with_capacity(n + 1);
        let mut cols = Vec::new();
        let mut src = Vec::new();
        ptr.push(0);
        for i in 0..n {
            for k in p.row_ptr[i] as usize..p.diag[i] as usize {
                cols.push(p.cols[k]);
                src.push(k as u32);
            }
            ptr.push(cols.len() as u32);
        }
        let zero = vec![Vector3::zeros(); n];
        Self {
            lower: Lower {
                ptr,
                vals: vec![Matrix3::zeros(); cols.len()],
                cols,
                src,
                d: vec![Matrix3::zeros(); n],
                d_inv: vec![Matrix3::zeros(); n],
            },
            r: zero.clone(),
            z: zero.clone(),
            p: zero.clone(),
            q: zero.clone(),
            acc: zero.clone(),
            dx: zero,
        }
    }
}

impl Lower {
    /// Copies `L` and `D` of `A` restricted to the free vertices (fixed rows and columns zero).
    fn refresh(&mut self, a: &BlockCsr, fixed: &[bool]) {
        let p = &*a.pattern;
        for i in 0..p.n_rows() {
            for k in self.ptr[i] as usize..self.ptr[i + 1] as usize {
                let free = !fixed[i] && !fixed[self.cols[k] as usize];
                self.vals[k] = if free {
                    a.values[self.src[k] as usize]
                } else {
                    Matrix3::zeros()
                };
            }
            if fixed[i] {
                self.d[i] = Matrix3::zeros();
                self.d_inv[i] = Matrix3::zeros();
            } else {
                let d = a.values[p.diag[i] as usize];
                self.d[i] = d;
                self.d_inv[i] = d.try_inverse().unwrap_or_else(|| {
                    Matrix3::from_diagonal(
                        &d.diagonal().map(|v| if v != 0.0 { 1.0 / v } else { 0.0 }),
                    )
                });
            }
        }
    }

    fn row(&self, i: usize) -> std::ops::Range<usize> {
        self.ptr[i] as usize..self.ptr[i + 1] as usize
    }

    /// Solves `(D + L) y = y` in place (forward sweep).
    fn forward(&self, y: &mut [Vector3<f64>]) {
        for i in 0..y.len() {
            let mut s = y[i];
            for k in self.row(i) {
                s -= self.vals[k] * y[self.cols[k] as usize];
            }
            y[i] = self.d_inv[i] * s;
        }
    }

    /// Solves `(D + Lᵀ) y = y` in place (backward sweep). `L` is read by rows and its
    /// transpose scattered into `acc`, which must be zero on entry and is zero on exit.
    fn backward(&self, y: &mut [Vector3<f64>], acc: &mut [Vector3<f64>]) {
        for i in (0..y.len()).rev() {
            let yi = self.d_inv[i] * (y[i] - acc[i]);
            acc[i] = Vector3::zeros();
            y[i] = yi;
            for k in self.row(i) {
                acc[self.cols[k] as usize] += self.vals[k].tr_mul(&yi);
            }
        }
    }

    /// `q = Â p = t + E⁻¹(p − D t)` with `t = E⁻ᵀ p` (Eisenstat's trick). `q` receives `t`
    /// first; `acc` is a zeroed scratch vector.
    fn apply_transformed(
        &self,
        p: &[Vector3<f64>],
        q: &mut [Vector3<f64>],
        w: &mut [Vector3<f64>],
        acc: &mut [Vector3<f64>],
    ) {
        q.copy_from_slice(p);
        self.backward(q, acc); // q = t
        for i in 0..p.len() {
            w[i] = p[i] - self.d[i] * q[i];
        }
        self.forward(w); // w = E⁻¹ (p − D t)
        for (qi, wi) in q.iter_mut().zip(w.iter()) {
            *qi += wi;
        }
    }

    /// `‖E r̂‖`: the true residual norm of the current iterate.
    fn true_residual_norm(&self, r_hat: &[Vector3<f64>]) -> f64 {
        let mut sum = 0.0;
        for i in 0..r_hat.len() {
            let mut ri = self.d[i] * r_hat[i];
            for k in self.row(i) {
                ri += self.vals[k] * r_hat[self.cols[k] as usize];
            }
            sum += ri.norm_squared();
        }
        sum.sqrt()
    }
}

fn dot(u: &[Vector3<f64>], w: &[Vector3<f64>]) -> f64 {
    u.iter().zip(w).map(|(a, b)| a.dot(b)).sum()
}

impl Pcg {
    /// The [`super::Preconditioner::BlockSsor`] solve (same contract as [`Pcg::solve`]).
    pub(super) fn solve_ssor(
        &mut self,
        a: &BlockCsr,
        b: &[Vector3<f64>],
        fixed: &[bool],
        x: &mut [Vector3<f64>],
        settings: &PcgSettings,
    ) -> PcgStats {
        let SsorWorkspace {
            lower,
            r,
            z,
            p,
            q,
            acc,
            dx,
        } = self.ssor.get_or_insert_with(|| SsorWorkspace::new(a));
        lower.refresh(a, fixed);
        let n = a.n_rows();
        let b_norm = (0..n)
            .filter(|&i| !fixed[i])
            .map(|i| b[i].norm_squared())
            .sum::<f64>()
            .sqrt();
        if !b_norm.is_finite() {
            return PcgStats::non_finite(0);
        }
        if b_norm == 0.0 {
            return zero_solution(x, fixed);
        }
        let mut stats = PcgStats {
            iterations: 0,
            relative_residual: 0.0,
            converged: true,
        };
        let target = settings.tolerance * b_norm;
        // r₀ = b − A x₀ on free rows.
        a.mul_vec(x, q);
        for i in 0..n {
            r[i] = if fixed[i] {
                Vector3::zeros()
            } else {
                b[i] - q[i]
            };
        }
        let r0 = dot(r, r).sqrt();
        if !r0.is_finite() {
            return PcgStats::non_finite(0);
        }
        stats.relative_residual = r0 / b_norm;
        if r0 <= target {
            return stats;
        }
        stats.converged = false;
        // r̂ = E⁻¹ r₀, z = D r̂, p = z, x̂ = 0.
        lower.forward(r);
        for i in 0..n {
            z[i] = lower.d[i] * r[i];
        }
        p.copy_from_slice(z);
        dx.fill(Vector3::zeros());
        let mut rz = dot(r, z);
        if !rz.is_finite() {
            return PcgStats::non_finite(0);
        }
        // ‖r‖ ≈ ratio · √(r̂ᵀ D r̂); the ratio is corrected whenever the true residual is taken.
        let mut ratio = r0 / rz.sqrt();
        while stats.iterations < settings.max_iterations {
            lower.apply_transformed(p, q, z, acc);
            let pq = dot(p, q);
            if !pq.is_finite() {
                return PcgStats::non_finite(stats.iterations);
            }
            if pq <= 0.0 {
                break; // not positive definite (or breakdown): report non-convergence
            }
            let alpha = rz / pq;
            for i in 0..n {
                dx[i] += alpha * p[i];
                r[i] -= alpha * q[i];
                z[i] = lower.d[i] * r[i];
            }
            let rz_new = dot(r, z);
            stats.iterations += 1;
            if !rz_new.is_finite() {
                return PcgStats::non_finite(stats.iterations);
            }
            let estimate = ratio * rz_new.max(0.0).sqrt();
            stats.relative_residual = estimate / b_norm;
            if estimate <= target {
                let true_norm = lower.true_residual_norm(r);
                stats.relative_residual = true_norm / b_norm;
                if true_norm <= target {
                    stats.converged = true;
                    break;
                }
                ratio = true_norm / rz_new.sqrt();
            }
            let beta = rz_new / rz;
            rz = rz_new;
            for i in 0..n {
                p[i] = z[i] + beta * p[i];
            }
        }
        if !stats.converged {
            stats.relative_residual = lower.true_residual_norm(r) / b_norm;
            if !stats.relative_residual.is_finite() {
                stats.relative_residual = f64::NAN;
            }
        }
        // x = x₀ + E⁻ᵀ x̂.
        lower.backward(dx, acc);
        for i in 0..n {
            if !fixed[i] {
                x[i] += dx[i];
            }
        }
        stats
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fem::material::{build_model, CorotationalTangent, ModelKind};
    use crate::fem::{ElementSet, Lame, Mass, MassKind};
    use crate::linalg::{Pcg, PcgSettings, Preconditioner};
    use crate::mesh::{box_grid, BoxGrid, TetSplit};

    /// A backward-Euler system matrix `M + h² K` of a bar, and its element set.
    fn bar_system() -> (BlockCsr, usize) {
        let mesh = box_grid(&BoxGrid {
            cells: [12, 3, 3],
            cell_size: Vector3::repeat(0.05),
            origin: Vector3::zeros(),
            split: TetSplit::Five,
        });
        let es = ElementSet::new(&mesh);
        let mut model = build_model(
            ModelKind::corotational(CorotationalTangent::Rotated),
            Lame::from_youngs_poisson(1e5, 0.33).unwrap(),
            &mesh,
            &es,
        );
        let x: Vec<_> = mesh
            .positions
            .iter()
            .map(|p| p + Vector3::new(0.0, -0.3 * p.x * p.x, 0.0))
            .collect();
        model.update_frames(&es, &x);
        let mut a = BlockCsr::zeros(es.pattern.clone());
        model.add_tangent(&es, &x, 1e-4, &mut a);
        Mass::new(&es, mesh.n_vertices(), 1000.0, MassKind::Consistent).add_to(&mut a, 1.0);
        (a, mesh.n_vertices())
    }

    #[test]
    fn ssor_and_jacobi_agree_on_a_bar_system_with_prescribed_vertices() {
        let (a, n) = bar_system();
        let fixed: Vec<bool> = (0..n).map(|i| i % 13 == 0).collect();
        let b: Vec<_> = (0..n)
            .map(|i| Vector3::new((i as f64).sin(), 1.0, (0.3 * i as f64).cos()))
            .collect();
        let x0: Vec<_> = (0..n)
            .map(|i| {
                if fixed[i] {
                    Vector3::new(0.1, -0.2, 0.05 * i as f64)
                } else {
                    Vector3::zeros()
                }
            })
            .collect();
        let solve = |preconditioner| {
            let mut x = x0.clone();
            let settings = PcgSettings {
                tolerance: 1e-10,
                max_iterations: 2000,
                preconditioner,
            };
            let stats = Pcg::new(n).solve(&a, &b, &fixed, &mut x, &settings);
            (x, stats)
        };
        let (xj, sj) = solve(Preconditioner::BlockJacobi);
        let (xs, ss) = solve(Preconditioner::BlockSsor);
        assert!(sj.converged && ss.converged, "{sj:?} {ss:?}");
        assert!(
            ss.iterations * 2 < sj.iterations,
            "SSOR {} vs Jacobi {}",
            ss.iterations,
            sj.iterations
        );
        // The reported residual is the true one.
        let mut ax = vec![Vector3::zeros(); n];
        a.mul_vec(&xs, &mut ax);
        let (mut rr, mut bb) = (0.0, 0.0);
        for i in (0..n).filter(|&i| !fixed[i]) {
            rr += (b[i] - ax[i]).norm_squared();
            bb += b[i].norm_squared();
        }
        let rel = (rr / bb).sqrt();
        assert!(
            rel <= 1e-10 && (rel - ss.relative_residual).abs() <= 1e-3 * rel,
            "{rel:e} vs {:e}",
            ss.relative_residual
        );
        let scale = xj.iter().map(|v| v.norm()).fold(0.0, f64::max);
        for i in 0..n {
            assert!((xj[i] - xs[i]).norm() <= 1e-7 * scale, "vertex {i}");
            if fixed[i] {
                assert_eq!(xs[i], x0[i]);
            }
        }
    }
}
