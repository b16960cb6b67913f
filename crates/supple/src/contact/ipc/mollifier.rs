//! The edge–edge mollifier of IPC (Li et al. 2020, "Incremental Potential Contact",
//! eq. 23): the edge–edge barrier `b(d)` is multiplied by `m(x)` with
//! `x = ‖(ea1 − ea0) × (eb1 − eb0)‖²`, which vanishes as the edges become parallel, so the
//! barrier stays C¹ where the closest-point case of nearly parallel edges switches
//! (edge–edge ↔ point–edge).
//!
//! The derivatives of `x` were derived by hand: with `u = ea1 − ea0`, `v = eb1 − eb0`,
//! `n = u × v`: `∇_u x = 2 v × n`, `∇_v x = 2 n × u`, and in `(u, v)`
//! `∇²x = 2 JᵀJ + 2 [[0, −[n]×], [[n]×, 0]]` with `J = [−[v]×, [u]×]`; the vertex
//! derivatives follow from `∂/∂ea0 = −∂/∂u`, `∂/∂ea1 = ∂/∂u`, `∂/∂eb0 = −∂/∂v`,
//! `∂/∂eb1 = ∂/∂v`.

use super::distance::{Mat12, Vec12, V3};
use nalgebra::{Matrix3, SMatrix};

/// IPC's mollifier threshold from the rest positions: `ε× = 10⁻³ ‖ea‖² ‖eb‖²`.
pub fn edge_edge_mollifier_threshold(
    ea0_rest: &V3,
    ea1_rest: &V3,
    eb0_rest: &V3,
    eb1_rest: &V3,
) -> f64 {
    1e-3 * (ea1_rest - ea0_rest).norm_squared() * (eb1_rest - eb0_rest).norm_squared()
}

/// `x = ‖(ea1 − ea0) × (eb1 − eb0)‖²` (`‖ea‖²‖eb‖² sin²θ`).
pub fn edge_edge_cross_squarednorm(ea0: &V3, ea1: &V3, eb0: &V3, eb1: &V3) -> f64 {
    (ea1 - ea0).cross(&(eb1 - eb0)).norm_squared()
}

/// Sign of each vertex in `u = ea1 − ea0`, `v = eb1 − eb0`, and which of `u` (0) or `v` (1)
/// it enters.
const SIGN: [f64; 4] = [-1.0, 1.0, -1.0, 1.0];
const WHICH: [usize; 4] = [0, 0, 1, 1];

/// Gradient of [`edge_edge_cross_squarednorm`].
pub fn edge_edge_cross_squarednorm_gradient(ea0: &V3, ea1: &V3, eb0: &V3, eb1: &V3) -> Vec12 {
    let (u, v) = (ea1 - ea0, eb1 - eb0);
    let n = u.cross(&v);
    let reduced = [v.cross(&n) * 2.0, n.cross(&u) * 2.0];
    let mut g = Vec12::zeros();
    for k in 0..4 {
        g.fixed_rows_mut::<3>(3 * k)
            .copy_from(&(reduced[WHICH[k]] * SIGN[k]));
    }
    g
}

/// Hessian of [`edge_edge_cross_squarednorm`].
pub fn edge_edge_cross_squarednorm_hessian(ea0: &V3, ea1: &V3, eb0: &V3, eb1: &V3) -> Mat12 {
    let (u, v) = (ea1 - ea0, eb1 - eb0);
    let n = u.cross(&v);
    let mut j = SMatrix::<f64, 3, 6>::zeros();
    j.fixed_view_mut::<3, 3>(0, 0).copy_from(&-v.cross_matrix());
    j.fixed_view_mut::<3, 3>(0, 3).copy_from(&u.cross_matrix());
    let mut reduced = j.transpose() * j * 2.0;
    let nx = n.cross_matrix() * 2.0;
    let uv = reduced.fixed_view::<3, 3>(0, 3).into_owned() - nx;
    let vu = reduced.fixed_view::<3, 3>(3, 0).into_owned() + nx;
    reduced.fixed_view_mut::<3, 3>(0, 3).copy_from(&uv);
    reduced.fixed_view_mut::<3, 3>(3, 0).copy_from(&vu);
    let mut h = Mat12::zeros();
    for a in 0..4 {
        for b in 0..4 {
            let block: Matrix3<f64> = reduced
                .fixed_view::<3, 3>(3 * WHICH[a], 3 * WHICH[b])
                .into_owned()
                * (SIGN[a] * SIGN[b]);
            h.fixed_view_mut::<3, 3>(3 * a, 3 * b).copy_from(&block);
        }
    }
    h
}

/// IPC eq. 23: `m(x) = −x²/ε² + 2x/ε` for `x < ε`, else `1`, with `x` the cross squared
/// norm ([`edge_edge_cross_squarednorm`]) and `ε = eps_x` ([`edge_edge_mollifier_threshold`]
/// of the rest positions). `m` is C¹ at `x = ε`, zero for parallel edges. `eps_x ≤ 0`
/// gives `m = 1`.
pub fn edge_edge_mollifier(ea0: &V3, ea1: &V3, eb0: &V3, eb1: &V3, eps_x: f64) -> f64 {
    let x = edge_edge_cross_squarednorm(ea0, ea1, eb0, eb1);
    if x < eps_x {
        let r = x / eps_x;
        r * (2.0 - r)
    } else {
        1.0
    }
}

/// Gradient of [`edge_edge_mollifier`]: `m'(x) ∇x`, `m'(x) = (2/ε)(1 − x/ε)` for `x < ε`,
/// zero otherwise.
pub fn edge_edge_mollifier_gradient(ea0: &V3, ea1: &V3, eb0: &V3, eb1: &V3, eps_x: f64) -> Vec12 {
    let x = edge_edge_cross_squarednorm(ea0, ea1, eb0, eb1);
    if x < eps_x {
        edge_edge_cross_squarednorm_gradient(ea0, ea1, eb0, eb1) * (2.0 / eps_x * (1.0 - x / eps_x))
    } else {
        Vec12::zeros()
    }
}

/// Hessian of [`edge_edge_mollifier`]: `m''(x) ∇x ∇xᵀ + m'(x) ∇²x`, `m'' = −2/ε²` for
/// `x < ε`, zero otherwise (not PSD in general).
pub fn edge_edge_mollifier_hessian(ea0: &V3, ea1: &V3, eb0: &V3, eb1: &V3, eps_x: f64) -> Mat12 {
    let x = edge_edge_cross_squarednorm(ea0, ea1, eb0, eb1);
    if x < eps_x {
        let g = edge_edge_cross_squarednorm_gradient(ea0, ea1, eb0, eb1);
        let h = edge_edge_cross_squarednorm_hessian(ea0, ea1, eb0, eb1);
        let d1 = 2.0 / eps_x * (1.0 - x / eps_x);
        let d2 = -2.0 / (eps_x * eps_x);
        g * g.transpose() * d2 + h * d1
    } else {
        Mat12::zeros()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Rng(u64);
    impl Rng {
        fn uniform(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
        }
        fn v3(&mut self) -> V3 {
            V3::new(self.uniform(), self.uniform(), self.uniform()) * 2.0 - V3::repeat(1.0)
        }
        fn edges(&mut self) -> [V3; 4] {
            [self.v3(), self.v3(), self.v3(), self.v3()]
        }
    }

    fn at(x: &Vec12) -> [V3; 4] {
        [0, 1, 2, 3].map(|i| V3::new(x[3 * i], x[3 * i + 1], x[3 * i + 2]))
    }

    fn stack(v: &[V3; 4]) -> Vec12 {
        Vec12::from_iterator(v.iter().flat_map(|p| [p.x, p.y, p.z]))
    }

    fn rel(a: &[f64], b: &[f64]) -> f64 {
        let (mut num, mut den) = (0.0f64, 1e-8f64);
        for (x, y) in a.iter().zip(b) {
            num += (x - y) * (x - y);
            den = den.max(x.abs()).max(y.abs());
        }
        num.sqrt() / den
    }

    /// Gradient and Hessian against central differences.
    fn check(
        v: &[V3; 4],
        f: &dyn Fn(&[V3; 4]) -> f64,
        g: &dyn Fn(&[V3; 4]) -> Vec12,
        h: &dyn Fn(&[V3; 4]) -> Mat12,
    ) {
        let x = stack(v);
        let step = 1e-6;
        let (mut fd_g, mut fd_h) = (Vec12::zeros(), Mat12::zeros());
        for i in 0..12 {
            let (mut xp, mut xm) = (x, x);
            xp[i] += step;
            xm[i] -= step;
            fd_g[i] = (f(&at(&xp)) - f(&at(&xm))) / (2.0 * step);
            fd_h.set_column(i, &((g(&at(&xp)) - g(&at(&xm))) / (2.0 * step)));
        }
        let (gv, hv) = (g(v), h(v));
        assert!(
            rel(gv.as_slice(), fd_g.as_slice()) < 1e-6,
            "gradient\n{gv}\n{fd_g}"
        );
        assert!(
            rel(hv.as_slice(), fd_h.as_slice()) < 1e-6,
            "Hessian\n{hv}\n{fd_h}"
        );
        assert!(rel(hv.as_slice(), hv.transpose().as_slice()) < 1e-14);
    }

    fn cross_f(v: &[V3; 4]) -> f64 {
        edge_edge_cross_squarednorm(&v[0], &v[1], &v[2], &v[3])
    }
    fn cross_g(v: &[V3; 4]) -> Vec12 {
        edge_edge_cross_squarednorm_gradient(&v[0], &v[1], &v[2], &v[3])
    }
    fn cross_h(v: &[V3; 4]) -> Mat12 {
        edge_edge_cross_squarednorm_hessian(&v[0], &v[1], &v[2], &v[3])
    }

    #[test]
    fn cross_squarednorm_derivatives() {
        let mut rng = Rng(0x1234_5678_9abc_def1);
        for _ in 0..50 {
            let v = rng.edges();
            let (u, w) = (v[1] - v[0], v[3] - v[2]);
            let lagrange = u.norm_squared() * w.norm_squared() - u.dot(&w).powi(2);
            assert!((cross_f(&v) - lagrange).abs() < 1e-12);
            check(&v, &cross_f, &cross_g, &cross_h);
        }
    }

    #[test]
    fn mollifier_derivatives_both_sides() {
        let mut rng = Rng(0x0fed_cba9_8765_4321);
        for k in 0..60 {
            let v = rng.edges();
            let x = cross_f(&v);
            // Active (x < ε) for even k, inactive for odd k.
            let eps = if k % 2 == 0 {
                x * (1.2 + 4.0 * rng.uniform())
            } else {
                0.5 * x
            };
            let f = |v: &[V3; 4]| edge_edge_mollifier(&v[0], &v[1], &v[2], &v[3], eps);
            let g = |v: &[V3; 4]| edge_edge_mollifier_gradient(&v[0], &v[1], &v[2], &v[3], eps);
            let h = |v: &[V3; 4]| edge_edge_mollifier_hessian(&v[0], &v[1], &v[2], &v[3], eps);
            check(&v, &f, &g, &h);
            if k % 2 == 1 {
                assert_eq!(f(&v), 1.0);
                assert_eq!(g(&v), Vec12::zeros());
                assert_eq!(h(&v), Mat12::zeros());
            } else {
                let r = x / eps;
                assert!((f(&v) - (2.0 * r - r * r)).abs() < 1e-15);
                assert!(f(&v) > 0.0 && f(&v) < 1.0);
            }
        }
    }

    #[test]
    fn continuous_at_threshold() {
        let mut rng = Rng(0x5555_aaaa_3333_cccc);
        for _ in 0..20 {
            let v = rng.edges();
            let x = cross_f(&v);
            let gx = cross_g(&v).norm();
            for eps in [x * (1.0 + 1e-9), x, x * (1.0 - 1e-9)] {
                let m = edge_edge_mollifier(&v[0], &v[1], &v[2], &v[3], eps);
                let g = edge_edge_mollifier_gradient(&v[0], &v[1], &v[2], &v[3], eps);
                assert!((m - 1.0).abs() < 1e-15, "value {m}");
                // m'(ε) = 0: the gradient fades out continuously.
                assert!(g.norm() <= 1e-8 * gx / eps, "gradient {}", g.norm());
            }
        }
    }

    #[test]
    fn zero_for_parallel_edges() {
        let v = [
            V3::new(0.0, 0.0, 0.0),
            V3::new(1.0, 0.0, 0.0),
            V3::new(0.3, 0.2, 0.1),
            V3::new(-1.7, 0.2, 0.1),
        ];
        let eps = edge_edge_mollifier_threshold(&v[0], &v[1], &v[2], &v[3]);
        assert!((eps - 1e-3 * 4.0).abs() < 1e-18);
        assert_eq!(edge_edge_mollifier(&v[0], &v[1], &v[2], &v[3], eps), 0.0);
        assert_eq!(
            edge_edge_mollifier_gradient(&v[0], &v[1], &v[2], &v[3], eps),
            Vec12::zeros()
        );
        let h = edge_edge_mollifier_hessian(&v[0], &v[1], &v[2], &v[3], eps);
        assert!(h.iter().all(|x| x.is_finite()));
        // Perpendicular edges of the same lengths are far above the threshold.
        let w = [v[0], v[1], v[2], v[2] + V3::new(0.0, 0.0, 2.0)];
        assert_eq!(edge_edge_mollifier(&w[0], &w[1], &w[2], &w[3], eps), 1.0);
        // Zero-length edges: m = 0, finite derivatives.
        let z = [v[0], v[0], v[2], v[3]];
        assert_eq!(edge_edge_mollifier(&z[0], &z[1], &z[2], &z[3], eps), 0.0);
        assert!(edge_edge_mollifier_hessian(&z[0], &z[1], &z[2], &z[3], eps)
            .iter()
            .all(|x| x.is_finite()));
    }
}
