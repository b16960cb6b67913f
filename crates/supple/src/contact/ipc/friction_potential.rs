//! Lazily updated, smoothed Coulomb friction (Li et al. 2020, IPC §5, eq. 14–19) as a
//! potential of the step's positions:
//! `D(x) = Σ_k μ_k λ_k f₀(‖u_k‖)`, `u_k = T_kᵀ Γ_k (x − xⁿ)`,
//! with, lagged from a state `x_lag` (the step's start, then each converged solve):
//! - `λ_k` the pair's normal force magnitude there, `κ |b'(d²)| 2d` (eq. 17),
//! - `Γ_k` the relative displacement of the pair's closest points (`p − Σ wᵢ tᵢ` for a point
//!   and a triangle, `(1−u) a₀ + u a₁ − (1−w) b₀ − w b₁` for two edges, `p` for a point and an
//!   obstacle), with the closest points' weights fixed,
//! - `T_k` an orthonormal basis of the plane orthogonal to the pair's normal.
//!
//! `f₀` is IPC's C¹ smoothing of `‖u‖` (eq. 18, `f₁ = f₀'` rises from 0 to 1 over
//! `‖u‖ ∈ [0, ε_v h]`), so below `ε_v` the pair behaves as a stiff spring (static friction)
//! and above it the force is `μ λ` against the slip (dynamic friction).
//!
//! Newton's matrix: the exact Hessian is `μλ Γᵀ T (f₁/y I + (f₁' y − f₁)/y³ u uᵀ) Tᵀ Γ`
//! (eigenvalues `f₁/y` across the slip and `f₁'` along it). Newton gets `μλ Γᵀ T (f₁/y) Tᵀ Γ`
//! instead, the same curvature in both tangent directions: since `f₁' ≤ f₁/y` (`f₁` is
//! concave on `[0, ε_v h]` and constant above), it bounds the exact Hessian from above, and
//! the gradient, so the answer Newton converges to, is unchanged. With the exact Hessian the
//! slip direction has no curvature once sliding (`f₁' = 0`) and a curvature of order
//! `1/(ε_v h)` (about 10⁶ /m) when sticking, so Newton steps jumped across the narrow stick
//! zone and the line search halved them: 1,847 halvings and 707 Newton iterations over the
//! first 100 steps of `scenes/bunny_drop.toml`, against none and 612 with the bound
//! (EXPERIMENTS.md, *The default response on the bundled scenes*).

use super::barrier::barrier_first_derivative;
use super::distance::{Mat12, Vec12};
#[cfg(test)]
use super::friction::df1_x_minus_f1_over_x3;
use super::friction::{f0_sf, f1_sf_over_x};
use super::potential::{Obstacles, Pair, PairKind, Stencil};
use crate::contact::ccd::{point_triangle, segment_segment};
use nalgebra::{Matrix3x2, SMatrix, Vector2, Vector3};

/// One lagged friction pair.
#[derive(Debug, Clone, Copy)]
struct Lagged {
    v: [u32; 4],
    n: usize,
    /// Weights of the relative displacement `Σ wᵢ Δx_{vᵢ}`.
    w: [f64; 4],
    basis: Matrix3x2<f64>,
    /// `μ λ` (N).
    mu_lambda: f64,
}

/// The friction pairs lagged from one state.
#[derive(Debug, Default)]
pub struct FrictionSet {
    pairs: Vec<Lagged>,
    pub stencils: Vec<Stencil>,
}

/// An orthonormal basis of the plane orthogonal to the unit `n`.
fn tangent_basis(n: &Vector3<f64>) -> Matrix3x2<f64> {
    let a = if n.x.abs() < 0.9 {
        Vector3::x()
    } else {
        Vector3::y()
    };
    let t1 = n.cross(&a).normalize();
    let t2 = n.cross(&t1);
    Matrix3x2::from_columns(&[t1, t2])
}

impl FrictionSet {
    /// Lags the friction of the active `pairs` at `x_lag` (their distances as in `pairs`), with
    /// barrier stiffness `kappa` (force units: the contact force is `κ ∇B`), coefficient
    /// `mu_bodies` between surfaces and each obstacle's own.
    pub fn lag(
        &mut self,
        pairs: &[Pair],
        x_lag: &[Vector3<f64>],
        dhat: f64,
        kappa: f64,
        mu_bodies: f64,
        obstacles: &Obstacles,
    ) {
        self.pairs.clear();
        let dhat2 = dhat * dhat;
        for pair in pairs {
            // Obstacle cores carry no friction (`potential/obstacle_core.rs`): the
            // vertex–obstacle pairs do.
            if matches!(pair.kind, PairKind::CoreTriangle | PairKind::CoreEdge) {
                continue;
            }
            let mu = match pair.kind {
                PairKind::PointObstacle => obstacles.list[pair.obstacle as usize].friction,
                _ => mu_bodies,
            };
            if mu <= 0.0 || pair.d2 <= 0.0 {
                continue;
            }
            let d = pair.d2.sqrt();
            let lambda = kappa * barrier_first_derivative(pair.d2, dhat2).abs() * 2.0 * d;
            let p = pair.v.map(|k| x_lag[k as usize]);
            let (w, n, normal) = match pair.kind {
                PairKind::PointObstacle => {
                    let prox =
                        obstacles.list[pair.obstacle as usize].proximity(obstacles.time, &p[0]);
                    ([1.0, 0.0, 0.0, 0.0], 1, prox.normal)
                }
                PairKind::PointTriangle => {
                    let (_, b) = point_triangle(&p[0], &p[1], &p[2], &p[3]);
                    let q = b[0] * p[1] + b[1] * p[2] + b[2] * p[3];
                    ([1.0, -b[0], -b[1], -b[2]], 4, p[0] - q)
                }
                PairKind::CoreTriangle | PairKind::CoreEdge => continue,
                PairKind::EdgeEdge => {
                    let (_, u, s) = segment_segment(&p[0], &p[1], &p[2], &p[3]);
                    let (a, b) = (p[0] + u * (p[1] - p[0]), p[2] + s * (p[3] - p[2]));
                    ([1.0 - u, u, -(1.0 - s), -s], 4, a - b)
                }
            };
            let len = normal.norm();
            if len.is_nan() || len <= 0.0 {
                continue;
            }
            self.pairs.push(Lagged {
                v: pair.v,
                n,
                w,
                basis: tangent_basis(&(normal / len)),
                mu_lambda: mu * lambda,
            });
        }
    }

    /// True when no pair has friction.
    pub fn is_empty(&self) -> bool {
        self.pairs.is_empty()
    }

    /// The tangential slip of pair `k` between `x0` and `x`.
    fn slip(l: &Lagged, x0: &[Vector3<f64>], x: &[Vector3<f64>]) -> Vector2<f64> {
        let mut rel = Vector3::zeros();
        for a in 0..l.n {
            let i = l.v[a] as usize;
            rel += l.w[a] * (x[i] - x0[i]);
        }
        l.basis.transpose() * rel
    }

    /// `D(x)` with slips measured from `x0` (the step's start), smoothing `eps = ε_v h`.
    pub fn energy(&self, x0: &[Vector3<f64>], x: &[Vector3<f64>], eps: f64) -> f64 {
        self.pairs
            .iter()
            .map(|l| l.mu_lambda * f0_sf(Self::slip(l, x0, x).norm(), eps))
            .sum()
    }

    /// Each pair's gradient and Hessian of `D` at `x` into [`stencils`](Self::stencils).
    pub fn compute_stencils(&mut self, x0: &[Vector3<f64>], x: &[Vector3<f64>], eps: f64) {
        self.stencils.clear();
        for l in &self.pairs {
            let u = Self::slip(l, x0, x);
            let y = u.norm();
            // Tᵀ Γ as a 2×12 matrix (Γ = [w₀ I, w₁ I, …]).
            let mut tg = SMatrix::<f64, 2, 12>::zeros();
            for a in 0..l.n {
                tg.fixed_view_mut::<2, 3>(0, 3 * a)
                    .copy_from(&(l.w[a] * l.basis.transpose()));
            }
            let f1y = f1_sf_over_x(y, eps);
            let grad: Vec12 = l.mu_lambda * f1y * tg.transpose() * u;
            // The isotropic bound of the module notes (the exact Hessian adds
            // `(f₁' y − f₁)/y³ u uᵀ ≤ 0`: `exact_inner`).
            let hess: Mat12 = l.mu_lambda * f1y * tg.transpose() * tg;
            self.stencils.push(Stencil {
                v: l.v,
                n: l.n,
                grad,
                hess,
            });
        }
    }

    /// `out[v] += scale · ∇D` over the stencils.
    pub fn add_gradient(&self, scale: f64, out: &mut [Vector3<f64>]) {
        for s in &self.stencils {
            for a in 0..s.n {
                out[s.v[a] as usize] += scale * s.grad.fixed_rows::<3>(3 * a);
            }
        }
    }
}

/// The exact Hessian's 2×2 inner matrix at slip `u` (for the tests of the bound).
#[cfg(test)]
fn exact_inner(u: &Vector2<f64>, eps: f64) -> nalgebra::Matrix2<f64> {
    let y = u.norm();
    f1_sf_over_x(y, eps) * nalgebra::Matrix2::identity()
        + if y > 0.0 {
            df1_x_minus_f1_over_x3(y, eps) * u * u.transpose()
        } else {
            nalgebra::Matrix2::zeros()
        }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Newton's friction matrix `f₁/y I` bounds the exact inner Hessian from above at every
    /// slip, in the stick zone and sliding: `f₁/y I − exact` is PSD (its eigenvalues are 0
    /// across the slip and `f₁/y − f₁' ≥ 0` along it).
    #[test]
    fn the_isotropic_friction_matrix_bounds_the_exact_hessian() {
        let eps = 1e-3;
        for y in [0.0, 1e-6, 1e-4, 5e-4, 9.99e-4, 1e-3, 2e-3, 1.0] {
            for angle in [0.0, 0.7, 2.0] {
                let u = y * Vector2::new(f64::cos(angle), f64::sin(angle));
                let bound = f1_sf_over_x(y, eps) * nalgebra::Matrix2::identity();
                let gap = bound - exact_inner(&u, eps);
                let e = gap.symmetric_eigenvalues();
                let scale = bound.norm().max(1.0);
                assert!(e.min() >= -1e-12 * scale, "y = {y}: eigenvalues {e}");
            }
        }
    }

    #[test]
    fn tangent_bases_are_orthonormal_and_orthogonal_to_the_normal() {
        for n in [
            Vector3::z(),
            Vector3::x(),
            Vector3::new(0.3, -0.4, 0.5).normalize(),
        ] {
            let t = tangent_basis(&n);
            assert!((t.transpose() * t - nalgebra::Matrix2::identity()).norm() < 1e-14);
            assert!((t.transpose() * n).norm() < 1e-14);
        }
    }
}
