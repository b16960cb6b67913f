//! Tests of `distance.rs`: derivatives against central finite differences, case selection
//! on constructed configurations, distances against brute-force sampling, degenerate input.

use super::*;
use nalgebra::{Quaternion, UnitQuaternion};

/// xorshift64* — deterministic, dependency-free.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let r = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D);
        (r >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.uniform()
    }
    fn v3(&mut self) -> V3 {
        V3::new(
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
        )
    }
    /// A random rigid motion with a random scale, applied to every point.
    fn transform(&mut self, pts: &[V3]) -> Vec<V3> {
        let q = UnitQuaternion::from_quaternion(Quaternion::new(
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
        ));
        let scale = self.range(0.5, 2.0);
        let shift = self.v3() * 3.0;
        pts.iter().map(|p| q * p * scale + shift).collect()
    }
    /// Every point moved by up to `r` in each coordinate.
    fn jitter(&mut self, pts: &[V3], r: f64) -> Vec<V3> {
        pts.iter().map(|p| p + self.v3() * r).collect()
    }
}

fn stack<const N: usize>(v: &[V3]) -> SVector<f64, N> {
    SVector::<f64, N>::from_iterator(v.iter().flat_map(|p| [p.x, p.y, p.z]))
}

fn unstack<const N: usize>(x: &SVector<f64, N>) -> Vec<V3> {
    (0..N / 3)
        .map(|i| V3::new(x[3 * i], x[3 * i + 1], x[3 * i + 2]))
        .collect()
}

fn rel_err<const R: usize, const C: usize>(a: &SMatrix<f64, R, C>, b: &SMatrix<f64, R, C>) -> f64 {
    (a - b).norm() / a.norm().max(b.norm()).max(1e-8)
}

type F<'a> = &'a dyn Fn(&[V3]) -> f64;
type G<'a, const N: usize> = &'a dyn Fn(&[V3]) -> SVector<f64, N>;
type H<'a, const N: usize> = &'a dyn Fn(&[V3]) -> SMatrix<f64, N, N>;

/// Gradient vs central differences of the value, Hessian vs central differences of the
/// gradient, Hessian symmetry, everything finite.
fn check_derivatives<const N: usize>(name: &str, pts: &[V3], f: F, g: G<N>, h: H<N>) {
    let x = stack::<N>(pts);
    let step = 1e-6 * (1.0 + x.amax());
    let grad = g(pts);
    let hess = h(pts);
    assert!(f(pts).is_finite(), "{name}: value not finite");
    assert!(
        grad.iter().all(|v| v.is_finite()),
        "{name}: gradient not finite"
    );
    assert!(
        hess.iter().all(|v| v.is_finite()),
        "{name}: Hessian not finite"
    );
    let mut fd_g = SVector::<f64, N>::zeros();
    let mut fd_h = SMatrix::<f64, N, N>::zeros();
    for i in 0..N {
        let (mut xp, mut xm) = (x, x);
        xp[i] += step;
        xm[i] -= step;
        let (pp, pm) = (unstack(&xp), unstack(&xm));
        fd_g[i] = (f(&pp) - f(&pm)) / (2.0 * step);
        fd_h.set_column(i, &((g(&pp) - g(&pm)) / (2.0 * step)));
    }
    let eg = rel_err(&grad, &fd_g);
    let eh = rel_err(&hess, &fd_h);
    assert!(
        eg < 1e-6,
        "{name}: gradient rel. error {eg:e}\n{grad}\n{fd_g}"
    );
    assert!(
        eh < 1e-6,
        "{name}: Hessian rel. error {eh:e}\n{hess}\n{fd_h}"
    );
    assert!(
        rel_err(&hess, &hess.transpose()) < 1e-12,
        "{name}: Hessian not symmetric"
    );
}

fn pp_f(v: &[V3]) -> f64 {
    point_point_distance2(&v[0], &v[1])
}
fn pp_g(v: &[V3]) -> Vec6 {
    point_point_distance2_gradient(&v[0], &v[1])
}
fn pp_h(v: &[V3]) -> Mat6 {
    point_point_distance2_hessian(&v[0], &v[1])
}
fn pl_f(v: &[V3]) -> f64 {
    point_line_distance2(&v[0], &v[1], &v[2])
}
fn pl_g(v: &[V3]) -> Vec9 {
    point_line_distance2_gradient(&v[0], &v[1], &v[2])
}
fn pl_h(v: &[V3]) -> Mat9 {
    point_line_distance2_hessian(&v[0], &v[1], &v[2])
}
fn pe_f(v: &[V3]) -> f64 {
    point_edge_distance2(&v[0], &v[1], &v[2])
}
fn pe_g(v: &[V3]) -> Vec9 {
    point_edge_distance2_gradient(&v[0], &v[1], &v[2])
}
fn pe_h(v: &[V3]) -> Mat9 {
    point_edge_distance2_hessian(&v[0], &v[1], &v[2])
}
fn ppl_f(v: &[V3]) -> f64 {
    point_plane_distance2(&v[0], &v[1], &v[2], &v[3])
}
fn ppl_g(v: &[V3]) -> Vec12 {
    point_plane_distance2_gradient(&v[0], &v[1], &v[2], &v[3])
}
fn ppl_h(v: &[V3]) -> Mat12 {
    point_plane_distance2_hessian(&v[0], &v[1], &v[2], &v[3])
}
fn ll_f(v: &[V3]) -> f64 {
    line_line_distance2(&v[0], &v[1], &v[2], &v[3])
}
fn ll_g(v: &[V3]) -> Vec12 {
    line_line_distance2_gradient(&v[0], &v[1], &v[2], &v[3])
}
fn ll_h(v: &[V3]) -> Mat12 {
    line_line_distance2_hessian(&v[0], &v[1], &v[2], &v[3])
}
fn pt_f(v: &[V3]) -> f64 {
    point_triangle_distance2(&v[0], &v[1], &v[2], &v[3])
}
fn pt_g(v: &[V3]) -> Vec12 {
    point_triangle_distance2_gradient(&v[0], &v[1], &v[2], &v[3])
}
fn pt_h(v: &[V3]) -> Mat12 {
    point_triangle_distance2_hessian(&v[0], &v[1], &v[2], &v[3])
}
fn ee_f(v: &[V3]) -> f64 {
    edge_edge_distance2(&v[0], &v[1], &v[2], &v[3])
}
fn ee_g(v: &[V3]) -> Vec12 {
    edge_edge_distance2_gradient(&v[0], &v[1], &v[2], &v[3])
}
fn ee_h(v: &[V3]) -> Mat12 {
    edge_edge_distance2_hessian(&v[0], &v[1], &v[2], &v[3])
}

fn random_points(rng: &mut Rng, n: usize) -> Vec<V3> {
    (0..n).map(|_| rng.v3()).collect()
}

#[test]
fn primitive_derivatives_random() {
    let mut rng = Rng::new(1);
    for _ in 0..50 {
        check_derivatives::<6>(
            "point-point",
            &random_points(&mut rng, 2),
            &pp_f,
            &pp_g,
            &pp_h,
        );
        check_derivatives::<9>(
            "point-line",
            &random_points(&mut rng, 3),
            &pl_f,
            &pl_g,
            &pl_h,
        );
        let v = random_points(&mut rng, 4);
        check_derivatives::<12>("point-plane", &v, &ppl_f, &ppl_g, &ppl_h);
        let v = random_points(&mut rng, 4);
        check_derivatives::<12>("line-line", &v, &ll_f, &ll_g, &ll_h);
    }
}

#[test]
fn primitive_values_independent() {
    let mut rng = Rng::new(2);
    for _ in 0..50 {
        let v = random_points(&mut rng, 4);
        // Point-line: the distance to the orthogonal projection.
        let e = v[2] - v[1];
        let q = v[1] + e * ((v[0] - v[1]).dot(&e) / e.norm_squared());
        assert!((pl_f(&v) - (v[0] - q).norm_squared()).abs() < 1e-12);
        // Point-plane: solve the 2×2 Gram system for the projection.
        let (b, c, r) = (v[2] - v[1], v[3] - v[1], v[0] - v[1]);
        let gram = nalgebra::Matrix2::new(b.dot(&b), b.dot(&c), b.dot(&c), c.dot(&c));
        let beta = gram
            .lu()
            .solve(&nalgebra::Vector2::new(b.dot(&r), c.dot(&r)));
        let q = v[1] + b * beta.unwrap()[0] + c * beta.unwrap()[1];
        assert!((ppl_f(&v) - (v[0] - q).norm_squared()).abs() < 1e-10);
        // Line-line: solve the normal equations for the two line parameters.
        let (u, w, z) = (v[1] - v[0], v[3] - v[2], v[0] - v[2]);
        let m = nalgebra::Matrix2::new(u.dot(&u), -u.dot(&w), u.dot(&w), -w.dot(&w));
        let st = m
            .lu()
            .solve(&nalgebra::Vector2::new(-u.dot(&z), -w.dot(&z)))
            .unwrap();
        let diff = v[0] + u * st[0] - (v[2] + w * st[1]);
        assert!((ll_f(&v) - diff.norm_squared()).abs() < 1e-10);
    }
}

/// Brute force over a grid of the two parameters of `param`, which maps `(i, j)` of
/// `0..=n` to a pair of points (or `None` outside the domain); returns the smallest
/// squared distance and a bound on how far the exact minimum can lie below it.
fn brute_force(n: usize, reach: f64, param: &dyn Fn(f64, f64) -> Option<(V3, V3)>) -> (f64, f64) {
    let mut best = f64::INFINITY;
    for i in 0..=n {
        for j in 0..=n {
            if let Some((a, b)) = param(i as f64 / n as f64, j as f64 / n as f64) {
                best = best.min((a - b).norm_squared());
            }
        }
    }
    let delta = reach / n as f64;
    (best, 2.0 * best.sqrt() * delta + delta * delta)
}

fn assert_brute_force(name: &str, exact: f64, (best, slack): (f64, f64)) {
    assert!(exact <= best + 1e-12, "{name}: {exact} above sample {best}");
    assert!(
        exact >= best - slack - 1e-12,
        "{name}: {exact} far below sample {best}"
    );
}

#[test]
fn distances_against_brute_force() {
    let mut rng = Rng::new(3);
    for _ in 0..40 {
        let v = random_points(&mut rng, 4);
        // Point-segment.
        let reach = (v[2] - v[1]).norm();
        let seg = |s: f64, _: f64| Some((v[0], v[1] + (v[2] - v[1]) * s));
        assert_brute_force("point-edge", pe_f(&v), brute_force(2000, reach, &seg));
        // Point-triangle.
        let (b, c) = (v[2] - v[1], v[3] - v[1]);
        let tri = |s: f64, t: f64| (s + t <= 1.0).then(|| (v[0], v[1] + b * s + c * t));
        let reach = b.norm() + c.norm();
        assert_brute_force("point-triangle", pt_f(&v), brute_force(300, reach, &tri));
        // Segment-segment.
        let (u, w) = (v[1] - v[0], v[3] - v[2]);
        let segs = |s: f64, t: f64| Some((v[0] + u * s, v[2] + w * t));
        let reach = u.norm() + w.norm();
        assert_brute_force("edge-edge", ee_f(&v), brute_force(300, reach, &segs));
    }
}

#[test]
fn random_dispatch_derivatives() {
    let mut rng = Rng::new(4);
    for _ in 0..100 {
        let v = random_points(&mut rng, 4);
        check_derivatives::<9>("point-edge", &v[..3], &pe_f, &pe_g, &pe_h);
        check_derivatives::<12>("point-triangle", &v, &pt_f, &pt_g, &pt_h);
        check_derivatives::<12>("edge-edge", &v, &ee_f, &ee_g, &ee_h);
    }
}

#[test]
fn point_edge_every_case() {
    let mut rng = Rng::new(5);
    let e = [V3::zeros(), V3::new(1.0, 0.0, 0.0)];
    let cases = [
        (V3::new(-0.4, 0.3, 0.1), PointEdgeCase::Vertex(0)),
        (V3::new(1.5, -0.2, 0.3), PointEdgeCase::Vertex(1)),
        (V3::new(0.4, 0.3, -0.2), PointEdgeCase::Edge),
    ];
    for (p, expected) in cases {
        for _ in 0..10 {
            let j = rng.jitter(&[p, e[0], e[1]], 0.03);
            let v = rng.transform(&j);
            assert_eq!(point_edge_case(&v[0], &v[1], &v[2]), expected);
            check_derivatives::<9>("point-edge case", &v, &pe_f, &pe_g, &pe_h);
        }
    }
}

#[test]
fn point_triangle_every_case() {
    let mut rng = Rng::new(6);
    let tri = [V3::zeros(), V3::new(1.0, 0.0, 0.0), V3::new(0.0, 1.0, 0.0)];
    let cases = [
        ((0.25, 0.25), PointTriangleCase::Face),
        ((-0.4, -0.3), PointTriangleCase::Vertex(0)),
        ((1.4, -0.2), PointTriangleCase::Vertex(1)),
        ((-0.2, 1.4), PointTriangleCase::Vertex(2)),
        ((0.5, -0.4), PointTriangleCase::Edge(0)),
        ((0.7, 0.7), PointTriangleCase::Edge(1)),
        ((-0.4, 0.5), PointTriangleCase::Edge(2)),
    ];
    for ((x, y), expected) in cases {
        for k in 0..10 {
            let h = if k % 2 == 0 { 0.3 } else { -0.2 };
            let base = [V3::new(x, y, h), tri[0], tri[1], tri[2]];
            let j = rng.jitter(&base, 0.03);
            let v = rng.transform(&j);
            assert_eq!(point_triangle_case(&v[0], &v[1], &v[2], &v[3]), expected);
            check_derivatives::<12>("point-triangle case", &v, &pt_f, &pt_g, &pt_h);
            let (b, c) = (v[2] - v[1], v[3] - v[1]);
            let param = |s: f64, t: f64| (s + t <= 1.0).then(|| (v[0], v[1] + b * s + c * t));
            let bf = brute_force(200, b.norm() + c.norm(), &param);
            assert_brute_force("point-triangle case", pt_f(&v), bf);
        }
    }
}

/// Base configurations `(ea0, ea1, eb0, eb1)` landing in every edge–edge case.
fn edge_edge_configurations() -> Vec<([V3; 4], EdgeEdgeCase)> {
    let v = V3::new;
    let (a0, a1) = (v(0.0, 0.0, 0.0), v(1.0, 0.0, 0.0));
    let mut out = vec![(
        [a0, a1, v(0.5, -0.5, 0.3), v(0.4, 0.5, 0.35)],
        EdgeEdgeCase::EdgeEdge,
    )];
    // eb0 closest to the interior of edge a.
    let (b0, b1) = (v(0.5, 0.1, 0.3), v(0.6, 1.0, 1.2));
    out.push(([a0, a1, b0, b1], EdgeEdgeCase::PointEdgeA(0)));
    out.push(([a0, a1, b1, b0], EdgeEdgeCase::PointEdgeA(1)));
    out.push(([b0, b1, a0, a1], EdgeEdgeCase::PointEdgeB(0)));
    out.push(([b1, b0, a0, a1], EdgeEdgeCase::PointEdgeB(1)));
    // ea0 and eb0 closest.
    let (b0, b1) = (v(-0.3, -0.2, 0.2), v(-1.0, -1.0, 1.0));
    out.push(([a0, a1, b0, b1], EdgeEdgeCase::PointPoint(0, 0)));
    out.push(([a1, a0, b0, b1], EdgeEdgeCase::PointPoint(1, 0)));
    out.push(([a0, a1, b1, b0], EdgeEdgeCase::PointPoint(0, 1)));
    out.push(([a1, a0, b1, b0], EdgeEdgeCase::PointPoint(1, 1)));
    out
}

#[test]
fn edge_edge_every_case() {
    let mut rng = Rng::new(7);
    for (base, expected) in edge_edge_configurations() {
        for _ in 0..10 {
            let j = rng.jitter(&base, 0.02);
            let v = rng.transform(&j);
            assert_eq!(edge_edge_case(&v[0], &v[1], &v[2], &v[3]), expected);
            check_derivatives::<12>("edge-edge case", &v, &ee_f, &ee_g, &ee_h);
            let (u, w) = (v[1] - v[0], v[3] - v[2]);
            let param = |s: f64, t: f64| Some((v[0] + u * s, v[2] + w * t));
            let bf = brute_force(200, u.norm() + w.norm(), &param);
            assert_brute_force("edge-edge case", ee_f(&v), bf);
        }
    }
}

fn assert_finite_12(name: &str, v: &[V3], f: F, g: G<12>, h: H<12>) {
    assert!(f(v).is_finite(), "{name}: value {}", f(v));
    assert!(g(v).iter().all(|x| x.is_finite()), "{name}: gradient");
    assert!(h(v).iter().all(|x| x.is_finite()), "{name}: Hessian");
}

#[test]
fn parallel_edges() {
    let mut rng = Rng::new(8);
    let v = V3::new;
    let configs = [
        // Overlapping parallel, anti-parallel, collinear overlapping, parallel disjoint.
        (
            [
                v(0., 0., 0.),
                v(1., 0., 0.),
                v(0.2, 0.3, 0.1),
                v(1.4, 0.3, 0.1),
            ],
            0.1,
        ),
        (
            [
                v(0., 0., 0.),
                v(1., 0., 0.),
                v(1.4, 0.3, 0.1),
                v(0.2, 0.3, 0.1),
            ],
            0.1,
        ),
        (
            [v(0., 0., 0.), v(1., 0., 0.), v(0.5, 0., 0.), v(2.0, 0., 0.)],
            0.0,
        ),
        (
            [
                v(0., 0., 0.),
                v(1., 0., 0.),
                v(1.5, 0., 0.4),
                v(3.0, 0., 0.4),
            ],
            0.25 + 0.16,
        ),
    ];
    for (k, (base, d2)) in configs.iter().enumerate() {
        for trial in 0..5 {
            // Exactly parallel in the base frame, parallel up to rounding after a motion.
            let pts = if trial == 0 {
                base.to_vec()
            } else {
                rng.transform(base)
            };
            let scale2 = (pts[1] - pts[0]).norm_squared();
            let case = edge_edge_case(&pts[0], &pts[1], &pts[2], &pts[3]);
            assert_ne!(case, EdgeEdgeCase::EdgeEdge, "config {k}");
            assert!(
                (ee_f(&pts) - d2 * scale2).abs() < 1e-12,
                "config {k}: {}",
                ee_f(&pts)
            );
            assert_finite_12("parallel edges", &pts, &ee_f, &ee_g, &ee_h);
            assert_finite_12("parallel lines", &pts, &ll_f, &ll_g, &ll_h);
            let dl = ll_f(&pts);
            if k < 3 && trial == 0 {
                assert!((dl - d2 * scale2).abs() < 1e-10, "line-line {dl}");
            }
        }
    }
}

#[test]
fn zero_length_edges() {
    let v = V3::new;
    let (a, b0, b1) = (v(0.3, 0.5, 0.2), v(0., 0., 0.), v(1., 0., 0.));
    let expected = point_edge_distance2(&a, &b0, &b1);
    for pts in [[a, a, b0, b1], [b0, b1, a, a]] {
        assert!((ee_f(&pts) - expected).abs() < 1e-15);
        assert_finite_12("zero-length edge", &pts, &ee_f, &ee_g, &ee_h);
        assert_finite_12("zero-length line", &pts, &ll_f, &ll_g, &ll_h);
        assert!((ll_f(&pts) - pl_f(&[a, b0, b1])).abs() < 1e-15);
    }
    let pts = [a, a, b1, b1];
    assert_eq!(
        edge_edge_case(&a, &a, &b1, &b1),
        EdgeEdgeCase::PointPoint(0, 0)
    );
    assert!((ee_f(&pts) - (a - b1).norm_squared()).abs() < 1e-15);
    assert_finite_12("two points", &pts, &ee_f, &ee_g, &ee_h);
    // Point to a zero-length segment / line.
    let pts = [a, b0, b0];
    assert_eq!(point_edge_case(&a, &b0, &b0), PointEdgeCase::Vertex(0));
    assert!((pe_f(&pts) - a.norm_squared()).abs() < 1e-15);
    assert!((pl_f(&pts) - a.norm_squared()).abs() < 1e-15);
    assert!(pl_g(&pts)
        .iter()
        .chain(pl_h(&pts).iter())
        .all(|x| x.is_finite()));
}

#[test]
fn degenerate_triangles() {
    let mut rng = Rng::new(9);
    let v = V3::new;
    let (t0, t1) = (v(0., 0., 0.), v(1., 0., 0.));
    let tris = [
        [t0, t1, v(0.5, 0., 0.)],
        [t0, t1, v(2.0, 0., 0.)],
        [t0, t0, t1],
        [t0, t1, t1],
        [t1, t1, t1],
    ];
    for tri in tris {
        for _ in 0..10 {
            let p = rng.v3();
            let pts = [p, tri[0], tri[1], tri[2]];
            let case = point_triangle_case(&p, &tri[0], &tri[1], &tri[2]);
            assert_ne!(case, PointTriangleCase::Face);
            let segs = (0..3)
                .map(|i| point_edge_distance2(&p, &tri[i], &tri[(i + 1) % 3]))
                .fold(f64::INFINITY, f64::min);
            assert!((pt_f(&pts) - segs).abs() < 1e-14);
            assert_finite_12("degenerate triangle", &pts, &pt_f, &pt_g, &pt_h);
            assert_finite_12("degenerate plane", &pts, &ppl_f, &ppl_g, &ppl_h);
        }
    }
}

#[test]
fn touching_configurations_are_finite() {
    let v = V3::new;
    let tri = [v(0., 0., 0.), v(1., 0., 0.), v(0., 1., 0.)];
    let on_edge = tri[0] * 0.3 + tri[1] * 0.7;
    let in_face = v(0.2, 0.3, 0.0);
    for (p, case) in [
        (on_edge, PointTriangleCase::Edge(0)),
        (tri[1], PointTriangleCase::Vertex(1)),
        (in_face, PointTriangleCase::Face),
    ] {
        let pts = [p, tri[0], tri[1], tri[2]];
        assert_eq!(point_triangle_case(&p, &tri[0], &tri[1], &tri[2]), case);
        assert!(pt_f(&pts) < 1e-30);
        assert_finite_12("touching point-triangle", &pts, &pt_f, &pt_g, &pt_h);
        assert!(pt_g(&pts).norm() < 1e-14);
    }
    // Point on a segment, at an endpoint.
    for p in [on_edge, tri[0]] {
        let pts = [p, tri[0], tri[1]];
        assert!(pe_f(&pts) < 1e-30);
        assert!(pe_g(&pts)
            .iter()
            .chain(pe_h(&pts).iter())
            .all(|x| x.is_finite()));
    }
    // Crossing edges, edges sharing an endpoint.
    for (pts, case) in [
        (
            [tri[0], tri[1], v(0.5, -0.5, 0.), v(0.5, 0.5, 0.)],
            EdgeEdgeCase::EdgeEdge,
        ),
        (
            [tri[0], tri[1], tri[1], tri[2]],
            EdgeEdgeCase::PointPoint(1, 0),
        ),
    ] {
        assert_eq!(edge_edge_case(&pts[0], &pts[1], &pts[2], &pts[3]), case);
        assert!(ee_f(&pts) < 1e-30);
        assert_finite_12("touching edges", &pts, &ee_f, &ee_g, &ee_h);
    }
}
