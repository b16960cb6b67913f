//! Rigid obstacles and velocity-projection contact (Zhuang & Canny §6, eq. 10–12):
//! exact signed distances against brute force and finite differences, prescribed paths
//! against finite differences of the pose, and single particles stepped by a hand-written
//! symplectic Euler update followed by `project_obstacles`.

mod common;

use common::Lcg;
use std::f64::consts::PI;
use supple::contact::obstacle::{Obstacle, ObstacleError, RigidPath, Shape};
use supple::contact::projection::project_obstacles;
use supple::nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

const G: f64 = 9.81;

fn obstacle(shape: Shape, path: RigidPath, friction: f64) -> Obstacle {
    let o = Obstacle {
        name: "o".into(),
        shape,
        path,
        friction,
    };
    o.validate().expect("valid obstacle");
    o
}

fn tilted_pose() -> Isometry3<f64> {
    Isometry3::from_parts(
        Translation3::new(0.3, -0.2, 0.5),
        UnitQuaternion::from_scaled_axis(Vector3::new(0.4, -0.7, 1.1)),
    )
}

fn shapes() -> [Shape; 4] {
    [
        Shape::HalfSpace,
        Shape::Sphere { radius: 0.6 },
        Shape::Box {
            half_extents: Vector3::new(0.5, 0.3, 0.2),
        },
        Shape::Capsule {
            radius: 0.25,
            half_length: 0.4,
        },
    ]
}

/// Points on the surface of a shape (local frame), at most `spacing` apart, and an
/// independent inside test.
fn surface_samples(shape: &Shape, spacing: f64) -> Vec<Vector3<f64>> {
    let mut out = Vec::new();
    // A Fibonacci sphere of radius r about c; keep the points with z·side ≥ 0 (side 0: all).
    let ball = |c: Vector3<f64>, r: f64, side: f64, out: &mut Vec<Vector3<f64>>| {
        let n = (4.0 * PI * r * r / (spacing * spacing)).ceil() as usize * 2;
        let golden = PI * (3.0 - 5f64.sqrt());
        for i in 0..n {
            let z = 1.0 - 2.0 * (i as f64 + 0.5) / n as f64;
            let rho = (1.0 - z * z).sqrt();
            let p = Vector3::new(
                rho * (golden * i as f64).cos(),
                rho * (golden * i as f64).sin(),
                z,
            );
            if p.z * side >= 0.0 {
                out.push(c + p * r);
            }
        }
    };
    match *shape {
        Shape::HalfSpace => unreachable!("no finite surface"),
        Shape::Sphere { radius } => ball(Vector3::zeros(), radius, 0.0, &mut out),
        Shape::Capsule {
            radius,
            half_length,
        } => {
            ball(Vector3::new(0.0, 0.0, half_length), radius, 1.0, &mut out);
            ball(Vector3::new(0.0, 0.0, -half_length), radius, -1.0, &mut out);
            let nu = (2.0 * PI * radius / spacing).ceil() as usize;
            let nz = (2.0 * half_length / spacing).ceil() as usize;
            for i in 0..nu {
                let phi = 2.0 * PI * i as f64 / nu as f64;
                for j in 0..=nz {
                    let z = -half_length + 2.0 * half_length * j as f64 / nz as f64;
                    out.push(Vector3::new(radius * phi.cos(), radius * phi.sin(), z));
                }
            }
        }
        Shape::Box { half_extents: h } => {
            for k in 0..3 {
                let (i, j) = ((k + 1) % 3, (k + 2) % 3);
                let (ni, nj) = (
                    (2.0 * h[i] / spacing).ceil() as usize,
                    (2.0 * h[j] / spacing).ceil() as usize,
                );
                for side in [-1.0, 1.0] {
                    for a in 0..=ni {
                        for b in 0..=nj {
                            let mut p = Vector3::zeros();
                            p[k] = side * h[k];
                            p[i] = -h[i] + 2.0 * h[i] * a as f64 / ni as f64;
                            p[j] = -h[j] + 2.0 * h[j] * b as f64 / nj as f64;
                            out.push(p);
                        }
                    }
                }
            }
        }
    }
    out
}

fn inside(shape: &Shape, p: &Vector3<f64>) -> bool {
    match *shape {
        Shape::HalfSpace => p.z < 0.0,
        Shape::Sphere { radius } => p.norm() < radius,
        Shape::Box { half_extents: h } => (0..3).all(|k| p[k].abs() < h[k]),
        Shape::Capsule {
            radius,
            half_length,
        } => (0..=2000).any(|i| {
            let z = -half_length + 2.0 * half_length * i as f64 / 2000.0;
            (p - Vector3::new(0.0, 0.0, z)).norm() < radius
        }),
    }
}

/// Signed distance of every shape under a rotated pose against the minimum distance to a
/// dense sample of its surface (signed by an independent inside test). The samples lie on
/// the surface, so the exact |distance| may not exceed the sampled one, and the sample is
/// dense enough that it exceeds it by at most the spacing.
#[test]
fn signed_distance_matches_brute_force() {
    let spacing = 0.004;
    let pose = tilted_pose();
    let mut rng = Lcg(11);
    for shape in shapes().into_iter().skip(1) {
        let o = obstacle(shape, RigidPath::Static(pose), 0.0);
        let samples: Vec<_> = surface_samples(&shape, spacing)
            .iter()
            .map(|p| pose.transform_point(&Point3::from(*p)).coords)
            .collect();
        let (mut n_in, mut worst) = (0, 0.0f64);
        for _ in 0..300 {
            let p = pose.translation.vector + rng.vec3() * 0.7;
            let q = o.proximity(0.0, &p);
            let local = pose.inverse_transform_point(&Point3::from(p)).coords;
            let brute = samples
                .iter()
                .map(|s| (p - s).norm())
                .fold(f64::INFINITY, f64::min);
            let sign = if inside(&shape, &local) { -1.0 } else { 1.0 };
            n_in += usize::from(sign < 0.0);
            assert_eq!(q.distance < 0.0, sign < 0.0, "{shape:?} at {p:?}: {q:?}");
            assert!(
                q.distance.abs() <= brute + 1e-12,
                "{shape:?}: {q:?} vs {brute}"
            );
            worst = worst.max(brute - q.distance.abs());
            // The closest point is on the surface, at the signed distance along the normal.
            assert!((q.normal.norm() - 1.0).abs() < 1e-12);
            assert!(
                (p - q.point - q.normal * q.distance).norm() < 1e-12,
                "{shape:?}"
            );
            assert!(o.proximity(0.0, &q.point).distance.abs() < 1e-12);
        }
        assert!(worst < spacing, "{shape:?}: brute force off by {worst}");
        assert!(n_in > 10 && n_in < 290, "{shape:?}: {n_in} of 300 inside");
    }
}

/// The normal is the gradient of the signed distance (central differences, h = 1e-6), inside
/// and outside, away from the points where the distance is not differentiable.
#[test]
fn normal_is_distance_gradient() {
    let pose = tilted_pose();
    let mut rng = Lcg(5);
    for shape in shapes() {
        let o = obstacle(shape, RigidPath::Static(pose), 0.0);
        let (mut checked, mut checked_inside) = (0, 0);
        for _ in 0..400 {
            let p = pose.translation.vector + rng.vec3() * 0.7;
            let local = pose.inverse_transform_point(&Point3::from(p)).coords;
            // Skip the medial set: box points nearly equidistant from two faces, points near
            // a capsule's axis or a sphere's centre.
            let smooth = match shape {
                Shape::Box { half_extents: h } => {
                    let mut q: Vec<f64> = (0..3).map(|k| local[k].abs() - h[k]).collect();
                    q.sort_by(f64::total_cmp);
                    q[2] > 0.0 || q[2] - q[1] > 1e-3
                }
                Shape::Capsule { .. } => local.xy().norm() > 1e-2,
                Shape::Sphere { .. } => local.norm() > 1e-2,
                Shape::HalfSpace => true,
            };
            if !smooth {
                continue;
            }
            let q = o.proximity(0.0, &p);
            let h = 1e-6;
            let grad = Vector3::from_fn(|k, _| {
                let e = Vector3::ith(k, h);
                (o.proximity(0.0, &(p + e)).distance - o.proximity(0.0, &(p - e)).distance)
                    / (2.0 * h)
            });
            assert!(
                (grad - q.normal).norm() < 1e-6,
                "{shape:?} at {local:?}: {grad:?} vs {:?}",
                q.normal
            );
            checked += 1;
            checked_inside += usize::from(q.distance < 0.0);
        }
        assert!(
            checked > 300 && checked_inside > 20,
            "{shape:?}: {checked}/{checked_inside}"
        );
    }
}

/// The world AABB contains the posed surface and every one of its faces is touched.
#[test]
fn aabb_is_tight() {
    let spacing = 0.005;
    for shape in shapes() {
        let o = obstacle(
            shape,
            RigidPath::Constant {
                start: tilted_pose(),
                linear: Vector3::new(0.1, 0.2, 0.3),
                angular: Vector3::new(0.5, -0.4, 0.3),
            },
            0.0,
        );
        let t = 0.7;
        let Some((lo, hi)) = o.aabb(t) else {
            assert_eq!(shape, Shape::HalfSpace);
            continue;
        };
        let pose = o.path.pose(t);
        let (mut min, mut max) = (
            Vector3::repeat(f64::INFINITY),
            Vector3::repeat(-f64::INFINITY),
        );
        for s in surface_samples(&shape, spacing) {
            let w = pose.transform_point(&Point3::from(s)).coords;
            min = min.inf(&w);
            max = max.sup(&w);
        }
        for k in 0..3 {
            assert!(
                lo[k] <= min[k] + 1e-12 && max[k] <= hi[k] + 1e-12,
                "{shape:?}"
            );
            assert!(
                min[k] - lo[k] < spacing && hi[k] - max[k] < spacing,
                "{shape:?}"
            );
        }
    }
}

/// The point velocity equals the central difference of the material point's motion,
/// `(P(t+h) P(t)⁻¹ p − P(t−h) P(t)⁻¹ p)/2h`.
fn check_point_velocity(path: &RigidPath, times: &[f64]) {
    let mut rng = Lcg(3);
    for &t in times {
        let p = rng.vec3() * 2.0;
        let local = path.pose(t).inverse_transform_point(&Point3::from(p));
        let h = 1e-6;
        let fd = (path.pose(t + h).transform_point(&local)
            - path.pose(t - h).transform_point(&local))
            / (2.0 * h);
        let u = path.point_velocity(t, &p);
        assert!(
            (u - fd).norm() < 1e-7 * (1.0 + u.norm()),
            "t = {t}: {u:?} vs {fd:?}"
        );
    }
}

#[test]
fn constant_path_pose_and_velocity() {
    let start = tilted_pose();
    let (linear, angular) = (Vector3::new(1.0, -0.5, 0.25), Vector3::new(0.3, 0.9, -1.2));
    let path = RigidPath::Constant {
        start,
        linear,
        angular,
    };
    assert_eq!(path.pose(0.0), start);
    // The origin moves linearly; the rotation advances by ω t about the world axis ω.
    let t = 1.7;
    let pose = path.pose(t);
    assert!((pose.translation.vector - start.translation.vector - linear * t).norm() < 1e-12);
    let increment = pose.rotation * start.rotation.inverse();
    assert!((increment.scaled_axis() - angular * t).norm() < 1e-12);
    check_point_velocity(&path, &[-1.0, 0.0, 0.4, 1.7, 6.0]);
}

#[test]
fn keyframe_path_interpolates_and_holds() {
    let k0 = tilted_pose();
    let k1 = Isometry3::from_parts(
        Translation3::new(1.0, 2.0, -1.0),
        UnitQuaternion::from_scaled_axis(Vector3::new(-1.0, 0.5, 2.0)),
    );
    let k2 = Isometry3::from_parts(
        Translation3::new(1.5, 2.0, 0.0),
        UnitQuaternion::from_scaled_axis(Vector3::new(0.2, 0.1, 0.0)),
    );
    let path = RigidPath::Keyframes(vec![(0.5, k0), (1.5, k1), (4.0, k2)]);
    for (t, k) in [(0.5, k0), (1.5, k1), (4.0, k2), (-3.0, k0), (9.0, k2)] {
        let p = path.pose(t);
        assert!(
            (p.translation.vector - k.translation.vector).norm() < 1e-12,
            "t = {t}"
        );
        assert!(p.rotation.angle_to(&k.rotation) < 1e-9, "t = {t}");
    }
    // Midway: the mean translation and half the relative rotation (slerp), equally far
    // (in angle) from both keyframes.
    let mid = path.pose(1.0);
    let mean = (k0.translation.vector + k1.translation.vector) / 2.0;
    assert!((mid.translation.vector - mean).norm() < 1e-12);
    let (a0, a1) = (
        mid.rotation.angle_to(&k0.rotation),
        mid.rotation.angle_to(&k1.rotation),
    );
    assert!(
        (a0 - a1).abs() < 1e-12 && (2.0 * a0 - k0.rotation.angle_to(&k1.rotation)).abs() < 1e-12
    );
    check_point_velocity(&path, &[0.6, 1.0, 1.4, 1.6, 3.0, 3.9]);
    // Held: no motion outside the span.
    assert_eq!(
        path.point_velocity(0.2, &Vector3::new(1.0, 1.0, 1.0)),
        Vector3::zeros()
    );
    assert_eq!(
        path.point_velocity(4.5, &Vector3::new(1.0, 1.0, 1.0)),
        Vector3::zeros()
    );
}

/// One particle stepped by symplectic Euler (`v += g dt; x += v dt`) and then projected.
struct Particle {
    x: [Vector3<f64>; 1],
    v: [Vector3<f64>; 1],
    t: f64,
}

impl Particle {
    fn new(x: Vector3<f64>, v: Vector3<f64>) -> Self {
        Particle {
            x: [x],
            v: [v],
            t: 0.0,
        }
    }
    /// Returns the raw end position (before projection) and the projection's statistics.
    fn step(
        &mut self,
        obstacles: &[Obstacle],
        gravity: Vector3<f64>,
        dt: f64,
        skin: f64,
    ) -> (Vector3<f64>, supple::contact::projection::ObstacleStats) {
        let x0 = self.x;
        self.v[0] += gravity * dt;
        self.x[0] += self.v[0] * dt;
        let raw = self.x[0];
        let s = project_obstacles(
            obstacles,
            self.t,
            dt,
            &[0],
            &[false],
            &x0,
            &mut self.x,
            &mut self.v,
            skin,
        );
        self.t += dt;
        (raw, s)
    }
}

#[test]
fn dropped_vertex_never_ends_below_ground() {
    let g = Vector3::new(0.0, 0.0, -G);
    for skin in [0.0, 1e-3] {
        let ground = [Obstacle::plane("ground", Vector3::zeros(), Vector3::z(), 0.4).unwrap()];
        let mut p = Particle::new(Vector3::new(0.0, 0.0, 0.5), Vector3::new(0.5, 0.0, -10.0));
        let mut deepest = 0.0f64;
        for _ in 0..200 {
            let (raw, s) = p.step(&ground, g, 0.1, skin);
            deepest = deepest.max(-raw.z);
            assert!((s.max_penetration - (-raw.z).max(0.0)).abs() < 1e-12);
            assert!(p.x[0].z >= skin - 1e-15, "ended at z = {}", p.x[0].z);
        }
        assert!(
            deepest > 0.5,
            "the raw steps must penetrate deeply: {deepest}"
        );
        // At rest on the ground (no bounce: eq. 10 removes the approach velocity).
        assert!(
            (p.x[0].z - skin).abs() < 1e-12 && p.v[0].norm() < 1e-12,
            "{:?}",
            p.v[0]
        );
    }
}

#[test]
fn no_tunnelling_through_thin_box() {
    let g = Vector3::new(0.0, 0.0, -G);
    let h = Vector3::new(1.0, 1.0, 0.001); // 2 mm thick
    let skin = 1e-4;
    let slab = [obstacle(
        Shape::Box { half_extents: h },
        RigidPath::Static(Isometry3::identity()),
        0.0,
    )];
    let mut p = Particle::new(Vector3::new(0.1, 0.0, 0.5), Vector3::new(0.0, 0.0, -10.0));
    let (raw, s) = p.step(&slab, g, 0.1, skin);
    assert!(
        raw.z < -h.z,
        "the raw first step jumps through the slab: {raw:?}"
    );
    assert_eq!(s.contacts, 1);
    for _ in 0..50 {
        p.step(&slab, g, 0.1, skin);
        assert!((p.x[0].z - (h.z + skin)).abs() < 1e-12, "{:?}", p.x[0]);
    }
    // A thin box moving up at 10 m/s sweeps through a vertex at rest (no gravity): checked in
    // the box's frame, the vertex is caught and carried along.
    let lift = [obstacle(
        Shape::Box { half_extents: h },
        RigidPath::Constant {
            start: Isometry3::identity(),
            linear: Vector3::new(0.0, 0.0, 10.0),
            angular: Vector3::zeros(),
        },
        0.0,
    )];
    let mut p = Particle::new(Vector3::new(0.2, -0.3, 0.5), Vector3::zeros());
    for k in 1..=5 {
        let (raw, s) = p.step(&lift, Vector3::zeros(), 0.1, skin);
        let top = 10.0 * 0.1 * k as f64 + h.z;
        // Later steps ride at exactly the skin, where touching is decided by rounding.
        if k == 1 {
            assert!(
                raw.z < 1.0 - h.z && s.contacts == 1,
                "raw {raw:?} is below the box"
            );
        }
        assert!(
            (p.x[0].z - (top + skin)).abs() < 1e-12
                && (p.v[0] - Vector3::new(0.0, 0.0, 10.0)).norm() < 1e-12
        );
    }
}

#[test]
fn rising_box_lifts_resting_vertex() {
    let h = Vector3::new(0.5, 0.5, 0.25);
    let lift = [obstacle(
        Shape::Box { half_extents: h },
        RigidPath::Constant {
            start: Isometry3::translation(0.0, 0.0, -0.25),
            linear: Vector3::new(0.0, 0.0, 1.0),
            angular: Vector3::zeros(),
        },
        0.3,
    )];
    let skin = 1e-3;
    let mut p = Particle::new(Vector3::new(0.1, 0.2, skin), Vector3::zeros());
    let dt = 0.01;
    for _ in 0..100 {
        let (_, s) = p.step(&lift, Vector3::new(0.0, 0.0, -G), dt, skin);
        assert_eq!(s.contacts, 1);
        assert!(
            (p.x[0].z - (p.t + skin)).abs() < 1e-12,
            "t = {}: z = {}",
            p.t,
            p.x[0].z
        );
        assert!(
            (p.v[0] - Vector3::new(0.0, 0.0, 1.0)).norm() < 1e-12,
            "{:?}",
            p.v[0]
        );
        assert!((p.x[0].xy() - Vector3::new(0.1, 0.2, 0.0).xy()).norm() < 1e-12);
    }
}

/// A box sliding at 1 m/s under a vertex at rest: friction accelerates the vertex at μg
/// (the relative velocity is what friction acts on) until it sticks and rides along.
#[test]
fn friction_drags_vertex_along_moving_box() {
    let mu = 0.5;
    let belt = [obstacle(
        Shape::Box {
            half_extents: Vector3::new(5.0, 1.0, 0.5),
        },
        RigidPath::Constant {
            start: Isometry3::translation(0.0, 0.0, -0.5),
            linear: Vector3::new(1.0, 0.0, 0.0),
            angular: Vector3::zeros(),
        },
        mu,
    )];
    let mut p = Particle::new(Vector3::zeros(), Vector3::zeros());
    let dt = 0.01;
    for _ in 0..10 {
        p.step(&belt, Vector3::new(0.0, 0.0, -G), dt, 0.0);
    }
    let slipping = mu * G * p.t;
    assert!(
        (p.v[0].x - slipping).abs() < 1e-9,
        "{} vs {slipping}",
        p.v[0].x
    );
    for _ in 0..40 {
        p.step(&belt, Vector3::new(0.0, 0.0, -G), dt, 0.0);
    }
    let stuck_at = p.x[0].x - p.t;
    for _ in 0..50 {
        p.step(&belt, Vector3::new(0.0, 0.0, -G), dt, 0.0);
        assert!(
            (p.v[0] - Vector3::new(1.0, 0.0, 0.0)).norm() < 1e-12,
            "{:?}",
            p.v[0]
        );
        assert!((p.x[0].x - p.t - stuck_at).abs() < 1e-9 && p.x[0].z.abs() < 1e-12);
    }
}

/// A spinning box pushes a vertex: after each step the vertex is outside by the skin and its
/// normal velocity equals that of the box's material point under it.
#[test]
fn rotating_box_pushes_vertex() {
    let h = Vector3::new(0.5, 0.5, 0.5);
    let omega = 2.0;
    let spinner = [obstacle(
        Shape::Box { half_extents: h },
        RigidPath::Constant {
            start: Isometry3::identity(),
            linear: Vector3::zeros(),
            angular: Vector3::new(0.0, 0.0, omega),
        },
        0.0,
    )];
    let skin = 1e-3;
    let mut p = Particle::new(Vector3::new(0.5 + skin, -0.3, 0.0), Vector3::zeros());
    let dt = 0.01;
    let mut pushed = 0;
    for _ in 0..20 {
        let (_, s) = p.step(&spinner, Vector3::zeros(), dt, skin);
        let q = spinner[0].proximity(p.t, &p.x[0]);
        assert!(q.distance > skin - 1e-12, "t = {}: {q:?}", p.t);
        if s.contacts == 1 {
            pushed += 1;
            let u = spinner[0].path.point_velocity(p.t, &p.x[0]);
            assert!(((p.v[0] - u).dot(&q.normal)).abs() < 1e-12);
            assert!((q.distance - skin).abs() < 1e-12);
        }
    }
    assert!(pushed >= 10, "pushed in {pushed} steps");
    assert!(
        p.v[0].norm() > 0.5,
        "the box set the vertex moving: {:?}",
        p.v[0]
    );
}

/// A particle resting on a slope through the origin with normal n (angle θ to vertical).
fn slope_run(theta: f64, mu: f64, steps: usize, dt: f64) -> (f64, f64) {
    let n = Vector3::new(-theta.sin(), 0.0, theta.cos());
    let slope = [Obstacle::plane("slope", Vector3::zeros(), n, mu).unwrap()];
    let skin = 1e-4;
    let start = n * skin;
    let mut p = Particle::new(start, Vector3::zeros());
    for _ in 0..steps {
        p.step(&slope, Vector3::new(0.0, 0.0, -G), dt, skin);
        assert!((p.x[0].dot(&n) - skin).abs() < 1e-12);
    }
    let down = Vector3::new(-theta.cos(), 0.0, -theta.sin());
    ((p.x[0] - start).dot(&down), p.v[0].dot(&down))
}

#[test]
fn slope_friction_sticks_and_slides() {
    let theta = 20f64.to_radians();
    let (dt, steps) = (0.01, 100);
    let t = dt * steps as f64;
    // μ = 0.5 > tan 20° = 0.364: held exactly, no creep through the position projection.
    let (s, v) = slope_run(theta, 0.5, steps, dt);
    assert!(s.abs() < 1e-12 && v.abs() < 1e-12, "crept {s} m at {v} m/s");
    // μ = 0.1: slides with a = g (sin θ − μ cos θ).
    for mu in [0.1, 0.0] {
        let a = G * (theta.sin() - mu * theta.cos());
        let (s, v) = slope_run(theta, mu, steps, dt);
        let (a_v, a_s) = (v / t, 2.0 * s / (t * t));
        eprintln!("slope 20°, μ = {mu}: a = {a:.5}, from v: {a_v:.5}, from s: {a_s:.5} m/s²");
        assert!(
            (a_v / a - 1.0).abs() < 0.01,
            "μ = {mu}: a from v = {a_v}, expected {a}"
        );
        assert!(
            (a_s / a - 1.0).abs() < 0.03,
            "μ = {mu}: a from s = {a_s}, expected {a}"
        );
    }
    // The threshold is tan θ = μ exactly.
    let (s, _) = slope_run(theta, theta.tan() * (1.0 + 1e-6), steps, dt);
    assert!(s.abs() < 1e-12);
    let (s, _) = slope_run(theta, theta.tan() * (1.0 - 1e-3), steps, dt);
    assert!(s > 1e-5, "just below the threshold it slides: {s}");
}

/// Fixed and unlisted vertices are left alone; the projection allocates nothing.
#[test]
fn skips_fixed_and_unlisted_without_allocating() {
    let mut obstacles =
        vec![Obstacle::plane("ground", Vector3::zeros(), Vector3::z(), 0.5).unwrap()];
    for k in 0..20 {
        obstacles.push(obstacle(
            Shape::Capsule {
                radius: 0.1,
                half_length: 0.2,
            },
            RigidPath::Keyframes(vec![
                (0.0, Isometry3::translation(3.0 + k as f64, 0.0, 0.0)),
                (1.0, Isometry3::translation(3.0 + k as f64, 0.0, 1.0)),
            ]),
            0.2,
        ));
    }
    let x0 = vec![Vector3::new(0.0, 0.0, 0.1); 3];
    let mut x = vec![Vector3::new(0.0, 0.0, -0.3); 3];
    let mut v = vec![Vector3::new(0.0, 0.0, -4.0); 3];
    let before = common::allocations();
    let s = project_obstacles(
        &obstacles,
        0.0,
        0.1,
        &[0, 1, 7],
        &[false, true, false],
        &x0,
        &mut x,
        &mut v,
        0.0,
    );
    assert_eq!(common::allocations(), before, "project_obstacles allocated");
    assert_eq!(s.contacts, 1);
    assert!((s.max_penetration - 0.3).abs() < 1e-12);
    assert!(x[0].z.abs() < 1e-12 && v[0].z.abs() < 1e-12);
    assert_eq!(
        (x[1], x[2]),
        (Vector3::new(0.0, 0.0, -0.3), Vector3::new(0.0, 0.0, -0.3))
    );
}

#[test]
fn validation_names_obstacle_and_field() {
    let id = RigidPath::Static(Isometry3::identity());
    let keys =
        |t: &[f64]| RigidPath::Keyframes(t.iter().map(|&t| (t, Isometry3::identity())).collect());
    let nan_spin = RigidPath::Constant {
        start: Isometry3::identity(),
        linear: Vector3::zeros(),
        angular: Vector3::new(0.0, f64::NAN, 0.0),
    };
    let capsule = |radius, half_length| Shape::Capsule {
        radius,
        half_length,
    };
    let flat = Shape::Box {
        half_extents: Vector3::new(1.0, 0.0, 1.0),
    };
    let nan_pose = RigidPath::Static(Isometry3::translation(f64::NAN, 0.0, 0.0));
    // (shape, path, μ, the field the message must name)
    let cases = [
        (
            Shape::Sphere { radius: -1.0 },
            id.clone(),
            0.0,
            "radius = -1",
        ),
        (capsule(f64::NAN, 1.0), id.clone(), 0.0, "radius = NaN"),
        (capsule(0.1, -1.0), id.clone(), 0.0, "half_length = -1"),
        (flat, id.clone(), 0.0, "half_extents.y = 0"),
        (Shape::HalfSpace, id.clone(), -0.1, "friction = -0.1"),
        (
            Shape::HalfSpace,
            keys(&[0.0, 1.0, 1.0]),
            0.0,
            "keyframe 2 has time 1",
        ),
        (
            Shape::HalfSpace,
            keys(&[0.0, f64::INFINITY]),
            0.0,
            "keyframe 1 has time inf",
        ),
        (Shape::HalfSpace, keys(&[]), 0.0, "at least one keyframe"),
        (Shape::HalfSpace, nan_pose, 0.0, "pose must be finite"),
        (Shape::HalfSpace, nan_spin, 0.0, "angular must be finite"),
    ];
    for (shape, path, friction, field) in cases {
        let o = Obstacle {
            name: "crate".into(),
            shape,
            path,
            friction,
        };
        let msg = o.validate().expect_err(field).to_string();
        assert!(
            msg.starts_with("obstacle `crate`") && msg.contains(field),
            "{msg}"
        );
    }
    let err = Obstacle::plane("p", Vector3::zeros(), Vector3::new(0.0, f64::NAN, 1.0), 0.0);
    assert!(matches!(err, Err(ObstacleError::Normal { .. })), "{err:?}");
    // A capsule of zero length (a ball) is valid.
    let ball = Obstacle {
        name: "b".into(),
        shape: capsule(0.1, 0.0),
        path: id,
        friction: 0.0,
    };
    assert!(ball.validate().is_ok());
}
