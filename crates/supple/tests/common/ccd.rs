//! Shared cases of the narrow-phase tests (`tests/ccd.rs`, `tests/ccd_robustness.rs`):
//! a small RNG, linear motions, pairs built to touch at a known time, brute-force sampling.

use supple::contact::ccd::Hit;
use supple::nalgebra::Vector3;

pub type V3 = Vector3<f64>;

/// A small LCG, uniform in [0, 1).
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next()
    }
    pub fn vec3(&mut self) -> V3 {
        V3::new(
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
            self.range(-1.0, 1.0),
        )
    }
    pub fn unit(&mut self) -> V3 {
        loop {
            let v = self.vec3();
            let n = v.norm();
            if n > 0.2 && n <= 1.0 {
                return v / n;
            }
        }
    }
}

pub fn lerp<const N: usize>(x0: &[V3; N], x1: &[V3; N], s: f64) -> [V3; N] {
    std::array::from_fn(|k| x0[k] + s * (x1[k] - x0[k]))
}

/// Constant velocities of the linear motion `x0 → x1` over `dt`: the Hermite curve with these
/// end velocities is the straight line.
pub fn linear_velocity<const N: usize>(x0: &[V3; N], x1: &[V3; N], dt: f64) -> [V3; N] {
    std::array::from_fn(|k| (x1[k] - x0[k]) / dt)
}

/// `det(p1 − p0, p2 − p0, p3 − p0)`, computed here independently of the library.
pub fn det4(p: &[V3]) -> f64 {
    (p[1] - p[0]).dot(&(p[2] - p[0]).cross(&(p[3] - p[0])))
}

/// Sign changes of the coplanarity determinant of points 0..4 along the linear motion,
/// sampled at `n + 1` times.
pub fn sampled_sign_changes<const N: usize>(x0: &[V3; N], x1: &[V3; N], n: usize) -> usize {
    let mut count = 0;
    let mut last = det4(&lerp(x0, x1, 0.0)[..4]);
    for i in 1..=n {
        let g = det4(&lerp(x0, x1, i as f64 / n as f64)[..4]);
        if g * last < 0.0 {
            count += 1;
        }
        if g != 0.0 {
            last = g;
        }
    }
    count
}

/// A pair built to touch at `t_star`: positions at the start and end of a linear motion, and
/// the contact's features at `t_star`.
pub struct Case<const N: usize> {
    pub x0: [V3; N],
    pub x1: [V3; N],
    pub t_star: f64,
    /// Unit normal at `t_star`, pointing to the side the first feature starts on.
    pub normal: V3,
    /// Expected weights at `t_star`.
    pub w: [f64; 4],
}

/// A vertex crossing the interior of a well-shaped triangle at `t_star` (`p0` vertex);
/// `from_above`: it starts on the side of `(u1 − u0) × (u2 − u0)`.
pub fn vertex_face_case(rng: &mut Rng, from_above: bool) -> Case<4> {
    let t_star = rng.range(0.05, 0.95);
    let u = loop {
        let u0 = rng.vec3();
        let u = [
            u0,
            u0 + rng.range(0.5, 1.5) * rng.unit(),
            u0 + rng.range(0.5, 1.5) * rng.unit(),
        ];
        let area2 = (u[1] - u[0]).cross(&(u[2] - u[0])).norm();
        let longest = (u[1] - u[0])
            .norm()
            .max((u[2] - u[0]).norm())
            .max((u[2] - u[1]).norm());
        if area2 > 0.4 * longest * longest {
            break u;
        }
    };
    let b = loop {
        let (b0, b1) = (rng.range(0.15, 0.7), rng.range(0.15, 0.7));
        if 1.0 - b0 - b1 >= 0.15 {
            break [b0, b1, 1.0 - b0 - b1];
        }
    };
    let c = b[0] * u[0] + b[1] * u[1] + b[2] * u[2];
    let n = (u[1] - u[0]).cross(&(u[2] - u[0])).normalize();
    let side = if from_above { 1.0 } else { -1.0 };
    let v_tri = rng.vec3();
    let tangential = {
        let t = 0.3 * rng.vec3();
        t - n * n.dot(&t)
    };
    let v_vertex = v_tri - side * rng.range(0.5, 1.5) * n + tangential;
    let vel = [
        v_vertex,
        v_tri + 0.05 * rng.vec3(),
        v_tri + 0.05 * rng.vec3(),
        v_tri + 0.05 * rng.vec3(),
    ];
    let at_star = [c, u[0], u[1], u[2]];
    Case {
        x0: std::array::from_fn(|k| at_star[k] - t_star * vel[k]),
        x1: std::array::from_fn(|k| at_star[k] + (1.0 - t_star) * vel[k]),
        t_star,
        normal: side * n,
        w: [1.0, -b[0], -b[1], -b[2]],
    }
}

/// Two edges crossing at interior points at `t_star`, with the tet points `p` (behind edge a)
/// and `q` (behind edge b) of eq. 31 on opposite sides of the contact. `from_above`: edge a
/// starts on the side of `da × db`.
pub fn edge_edge_case(rng: &mut Rng, from_above: bool) -> Case<6> {
    let t_star = rng.range(0.05, 0.95);
    let c = rng.vec3();
    let da = rng.unit();
    let db = loop {
        let d = rng.unit();
        if da.dot(&d).abs() < 0.85 {
            break d;
        }
    };
    let (la, lb) = (rng.range(0.5, 1.5), rng.range(0.5, 1.5));
    let (sa, sb) = (rng.range(0.2, 0.8), rng.range(0.2, 0.8));
    let n = da.cross(&db).normalize();
    let side = if from_above { 1.0 } else { -1.0 };
    let tangent = |rng: &mut Rng| {
        let t = 0.2 * rng.vec3();
        t - n * n.dot(&t)
    };
    let (u0, u1) = (c - sa * la * da, c + (1.0 - sa) * la * da);
    let (w0, w1) = (c - sb * lb * db, c + (1.0 - sb) * lb * db);
    let p = 0.5 * (u0 + u1) + side * 0.6 * n + tangent(rng);
    let q = 0.5 * (w0 + w1) - side * 0.6 * n + tangent(rng);
    let va = rng.vec3();
    let vb = va + side * rng.range(0.5, 1.5) * n + tangent(rng);
    let mut jitter = || 0.05 * rng.vec3();
    let vel = [
        va + jitter(),
        va + jitter(),
        vb + jitter(),
        vb + jitter(),
        va + jitter(),
        vb + jitter(),
    ];
    let at_star = [u0, u1, w0, w1, p, q];
    Case {
        x0: std::array::from_fn(|k| at_star[k] - t_star * vel[k]),
        x1: std::array::from_fn(|k| at_star[k] + (1.0 - t_star) * vel[k]),
        t_star,
        normal: side * n,
        w: [1.0 - sa, sa, -(1.0 - sb), -sb],
    }
}

/// Checks a hit against the case it was built from; returns `(|Δt|, |Δw|, |Δnormal|)`.
pub fn compare<const N: usize>(hit: &Hit, case: &Case<N>) -> (f64, f64, f64) {
    let dt = (hit.t - case.t_star).abs();
    let dw = (0..4)
        .map(|k| (hit.w[k] - case.w[k]).abs())
        .fold(0.0, f64::max);
    let dn = (hit.normal - case.normal).norm();
    // The gap rule: d(0) ≥ 0 and d(t) ≈ 0.
    let four = |x: &[V3; N]| -> [V3; 4] { std::array::from_fn(|k| x[k]) };
    let gap = |p: &[V3; 4]| hit.normal.dot(&(0..4).map(|k| hit.w[k] * p[k]).sum::<V3>());
    assert!(gap(&four(&case.x0)) >= 0.0);
    assert!(gap(&lerp(&four(&case.x0), &four(&case.x1), hit.t)).abs() < 1e-9);
    assert!((hit.normal.norm() - 1.0).abs() < 1e-12);
    (dt, dw, dn)
}

/// The unit right triangle in z = 0 (p1, p2, p3) and a vertex moving from `a` to `b`.
pub fn drop(a: V3, b: V3) -> ([V3; 4], [V3; 4]) {
    let tri = [V3::zeros(), V3::x(), V3::y()];
    ([a, tri[0], tri[1], tri[2]], [b, tri[0], tri[1], tri[2]])
}

/// Barycentric coordinates of the projection of `p` onto the plane of `(a, b, c)`.
pub fn projected_barycentric(p: &V3, a: &V3, b: &V3, c: &V3) -> [f64; 3] {
    let n = (b - a).cross(&(c - a));
    let n2 = n.norm_squared();
    [
        (b - p).cross(&(c - p)).dot(&n) / n2,
        (c - p).cross(&(a - p)).dot(&n) / n2,
        (a - p).cross(&(b - p)).dot(&n) / n2,
    ]
}

/// Parameters of the closest points of the infinite lines through the two edges.
pub fn line_parameters(p: &[V3; 4]) -> Option<(f64, f64)> {
    let (d1, d2, r) = (p[1] - p[0], p[3] - p[2], p[0] - p[2]);
    let (a, b, e) = (d1.dot(&d1), d1.dot(&d2), d2.dot(&d2));
    let (c, f) = (d1.dot(&r), d2.dot(&r));
    let denom = a * e - b * b;
    (denom > 1e-6 * a * e).then(|| ((b * f - c * e) / denom, (a * f - b * c) / denom))
}
