//! Tests of `friction.rs`: the smoothing functions against finite differences, the
//! friction Hessian built from them, tangent bases, closest points and Γ.

use super::super::distance::{
    line_line_distance2, point_line_distance2, point_plane_distance2, Vec12, Vec6, Vec9,
};
use super::*;
use nalgebra::Matrix2;

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
}

fn f1(y: f64, eps: f64) -> f64 {
    if y < eps {
        -y * y / (eps * eps) + 2.0 * y / eps
    } else {
        1.0
    }
}

fn central(f: impl Fn(f64) -> f64, x: f64, h: f64) -> f64 {
    (f(x + h) - f(x - h)) / (2.0 * h)
}

const EPS: [f64; 3] = [1e-5, 1e-3, 0.5];

#[test]
fn f0_derivative_is_f1() {
    for eps in EPS {
        assert!((f0_sf(eps, eps) - eps).abs() < 1e-15 * eps.max(1.0));
        assert!((f0_sf(0.0, eps) - eps / 3.0).abs() < 1e-15);
        for k in 1..60 {
            let y = eps * k as f64 / 20.0;
            if k == 20 {
                continue; // the kink of f1 at ε
            }
            let d = central(|x| f0_sf(x, eps), y, 1e-6 * eps);
            let expected = f1(y, eps);
            assert!(
                (d - expected).abs() < 1e-7,
                "f0'({y}) = {d}, f1 = {expected}"
            );
            assert!((y * f1_sf_over_x(y, eps) - expected).abs() < 1e-14);
        }
        // f0 is C¹ at ε: one-sided slopes both 1.
        let h = 1e-7 * eps;
        let left = (f0_sf(eps, eps) - f0_sf(eps - h, eps)) / h;
        let right = (f0_sf(eps + h, eps) - f0_sf(eps, eps)) / h;
        assert!((left - 1.0).abs() < 1e-5 && (right - 1.0).abs() < 1e-5);
    }
}

#[test]
fn f1_over_x_and_x3_term() {
    for eps in EPS {
        assert!((f1_sf_over_x(0.0, eps) - 2.0 / eps).abs() < 1e-12 / eps);
        assert_eq!(df1_x_minus_f1_over_x3(0.0, eps), 0.0);
        assert!(df1_x_minus_f1_over_x3(1e-300, eps).is_finite());
        for k in 1..60 {
            if k == 20 {
                continue;
            }
            let y = eps * k as f64 / 20.0;
            let h = 1e-6 * y;
            let c = df1_x_minus_f1_over_x3(y, eps);
            // (f1/y)' = (f1' y − f1)/y², so the term is (f1/y)'/y.
            let fd = central(|x| f1_sf_over_x(x, eps), y, h) / y;
            assert!((c - fd).abs() < 1e-6 * c.abs(), "y = {y}: {c} vs {fd}");
            // And from f1' directly.
            let df1 = central(|x| f1(x, eps), y, h);
            let direct = (df1 * y - f1(y, eps)) / (y * y * y);
            assert!(
                (c - direct).abs() < 1e-6 * c.abs().max(1e-300),
                "{c} vs {direct}"
            );
        }
    }
}

/// The friction Hessian `(f1/y) I + c u uᵀ` against finite differences of the gradient
/// `(f1/y) u`, including tiny and zero `u`; it is PSD.
#[test]
fn friction_hessian_from_the_scalars() {
    let mut rng = Rng(0x2468_ace0_1357_9bdf);
    let grad = |u: &Vector2<f64>, eps: f64| u * f1_sf_over_x(u.norm(), eps);
    let hess = |u: &Vector2<f64>, eps: f64| {
        let y = u.norm();
        Matrix2::identity() * f1_sf_over_x(y, eps)
            + u * u.transpose() * df1_x_minus_f1_over_x3(y, eps)
    };
    for eps in EPS {
        for k in 0..40 {
            let dir = Vector2::new(rng.uniform() - 0.5, rng.uniform() - 0.5).normalize();
            let y = match k {
                0 => 0.0,
                1 => 1e-12 * eps,
                2 => 1e-200,
                _ => 3.0 * eps * rng.uniform(),
            };
            let u = dir * y;
            let hu = hess(&u, eps);
            assert!(hu.iter().all(|x| x.is_finite()), "y = {y}");
            assert!(hu.symmetric_eigenvalues().min() >= -1e-12 / eps);
            if (y - eps).abs() < 1e-4 * eps {
                continue;
            }
            let h = 1e-6 * eps;
            let mut fd = Matrix2::zeros();
            for i in 0..2 {
                let mut e = Vector2::zeros();
                e[i] = h;
                fd.set_column(
                    i,
                    &((grad(&(u + e), eps) - grad(&(u - e), eps)) / (2.0 * h)),
                );
            }
            let err = (hu - fd).norm() / hu.norm();
            // Near u = 0 the FD stencil straddles the |u|³ term's kink: looser there.
            let tol = if y < 1e-3 * eps { 1e-5 } else { 1e-6 };
            assert!(err < tol, "eps {eps}, y {y}: {hu} vs {fd}");
        }
    }
    let eps = 1e-3;
    let h0 = hess(&Vector2::zeros(), eps);
    assert!((h0 - Matrix2::identity() * (2.0 / eps)).norm() < 1e-9);
}

fn assert_basis(name: &str, t: &Matrix3x2<f64>, normal: Option<&V3>) {
    assert!(t.iter().all(|x| x.is_finite()), "{name}: not finite");
    let gram = t.transpose() * t;
    assert!(
        (gram - Matrix2::identity()).norm() < 1e-12,
        "{name}: not orthonormal\n{gram}"
    );
    if let Some(n) = normal {
        let off = (t.transpose() * n).norm() / n.norm();
        assert!(
            off < 1e-10,
            "{name}: not orthogonal to the normal ({off:e})"
        );
    }
}

#[test]
fn bases_and_relative_displacements_random() {
    let mut rng = Rng(0x0bad_cafe_dead_beef);
    for _ in 0..100 {
        let v: Vec<V3> = (0..4).map(|_| rng.v3()).collect();
        let x12 = Vec12::from_iterator(v.iter().flat_map(|p| [p.x, p.y, p.z]));

        // Point–triangle: Γx is the plane distance vector, orthogonal to the triangle.
        let beta = point_triangle_closest_point(&v[0], &v[1], &v[2], &v[3]);
        let gx = point_triangle_relative_velocity_matrix(&beta) * x12;
        let closest = v[1] + (v[2] - v[1]) * beta[0] + (v[3] - v[1]) * beta[1];
        assert!((gx - (v[0] - closest)).norm() < 1e-13);
        let d2 = point_plane_distance2(&v[0], &v[1], &v[2], &v[3]);
        assert!((gx.norm_squared() - d2).abs() < 1e-10);
        assert!(gx.dot(&(v[2] - v[1])).abs() < 1e-10 && gx.dot(&(v[3] - v[1])).abs() < 1e-10);
        let n = (v[2] - v[1]).cross(&(v[3] - v[1]));
        let t = point_triangle_tangent_basis(&v[0], &v[1], &v[2], &v[3]);
        assert_basis("point-triangle", &t, Some(&n));
        assert!((t.column(0).dot(&(v[2] - v[1]).normalize()) - 1.0).abs() < 1e-12);
        assert!((t.transpose() * gx).norm() < 1e-10);

        // Edge–edge.
        let ab = edge_edge_closest_point(&v[0], &v[1], &v[2], &v[3]);
        let gx = edge_edge_relative_velocity_matrix(&ab) * x12;
        let pa = v[0] + (v[1] - v[0]) * ab[0];
        let pb = v[2] + (v[3] - v[2]) * ab[1];
        assert!((gx - (pa - pb)).norm() < 1e-13);
        let d2 = line_line_distance2(&v[0], &v[1], &v[2], &v[3]);
        assert!((gx.norm_squared() - d2).abs() < 1e-10);
        let n = (v[1] - v[0]).cross(&(v[3] - v[2]));
        let t = edge_edge_tangent_basis(&v[0], &v[1], &v[2], &v[3]);
        assert_basis("edge-edge", &t, Some(&n));
        assert!((t.column(0).dot(&(v[1] - v[0]).normalize()) - 1.0).abs() < 1e-12);
        assert!((t.transpose() * gx).norm() < 1e-10);

        // Point–edge.
        let x9 = Vec9::from_iterator(v[..3].iter().flat_map(|p| [p.x, p.y, p.z]));
        let alpha = point_edge_closest_point(&v[0], &v[1], &v[2]);
        let gx = point_edge_relative_velocity_matrix(alpha) * x9;
        assert!((gx - (v[0] - (v[1] + (v[2] - v[1]) * alpha))).norm() < 1e-13);
        assert!((gx.norm_squared() - point_line_distance2(&v[0], &v[1], &v[2])).abs() < 1e-10);
        let t = point_edge_tangent_basis(&v[0], &v[1], &v[2]);
        assert_basis("point-edge", &t, Some(&gx));
        assert!((t.transpose() * (v[2] - v[1])).norm() > 0.99 * (v[2] - v[1]).norm());

        // Point–point.
        let x6 = Vec6::from_iterator(v[..2].iter().flat_map(|p| [p.x, p.y, p.z]));
        let gx = point_point_relative_velocity_matrix() * x6;
        assert!((gx - (v[0] - v[1])).norm() < 1e-15);
        assert_basis(
            "point-point",
            &point_point_tangent_basis(&v[0], &v[1]),
            Some(&gx),
        );
    }
}

#[test]
fn degenerate_bases_and_closest_points() {
    let v = V3::new;
    let (o, x, y) = (v(0., 0., 0.), v(1., 0., 0.), v(0., 1., 0.));
    let p = v(0.3, 0.4, 0.5);
    // Parallel edges: the normal is the offset between the lines.
    let (b0, b1) = (v(0.2, 0.3, 0.4), v(1.7, 0.3, 0.4));
    let ab = edge_edge_closest_point(&o, &x, &b0, &b1);
    let x12 = Vec12::from_iterator([o, x, b0, b1].iter().flat_map(|p| [p.x, p.y, p.z]));
    let gx = edge_edge_relative_velocity_matrix(&ab) * x12;
    assert!((gx - v(0., -0.3, -0.4)).norm() < 1e-15);
    assert_basis(
        "parallel",
        &edge_edge_tangent_basis(&o, &x, &b0, &b1),
        Some(&gx),
    );
    // Collinear, zero-length and fully degenerate edge pairs.
    for (a0, a1, c0, c1) in [
        (o, x, x * 2.0, x * 3.0),
        (o, o, b0, b1),
        (o, x, p, p),
        (p, p, p, p),
    ] {
        let ab = edge_edge_closest_point(&a0, &a1, &c0, &c1);
        assert!(ab.iter().all(|c| c.is_finite()));
        assert_basis(
            "degenerate edges",
            &edge_edge_tangent_basis(&a0, &a1, &c0, &c1),
            None,
        );
    }
    // Degenerate triangles.
    for (t0, t1, t2) in [(o, x, x * 2.0), (o, o, y), (o, y, y), (o, o, o)] {
        let beta = point_triangle_closest_point(&p, &t0, &t1, &t2);
        assert!(beta.iter().all(|c| c.is_finite()));
        let t = point_triangle_tangent_basis(&p, &t0, &t1, &t2);
        let closest = t0 + (t1 - t0) * beta[0] + (t2 - t0) * beta[1];
        assert_basis("degenerate triangle", &t, Some(&(p - closest)));
    }
    // Point on the edge's line, zero-length edge, coincident points.
    assert_basis(
        "point on line",
        &point_edge_tangent_basis(&(x * 0.5), &o, &x),
        None,
    );
    assert_basis("zero edge", &point_edge_tangent_basis(&p, &o, &o), Some(&p));
    assert_eq!(point_edge_closest_point(&p, &o, &o), 0.0);
    assert_basis("coincident", &point_point_tangent_basis(&p, &p), None);
    for axis in [x, y, v(0., 0., 1.), v(1., 1., 1.)] {
        assert_basis("axis", &point_point_tangent_basis(&axis, &o), Some(&axis));
    }
}
