//! Rigid obstacles: exact signed distances of every shape against brute force and finite
//! differences, bounding boxes, and prescribed paths against finite differences of the pose.
//! (The projection of vertices is `tests/obstacles.rs`.)

mod common;

use common::Lcg;
use std::f64::consts::PI;
use supple::contact::obstacle::{Obstacle, RigidPath, Shape};
use supple::nalgebra::{Isometry3, Point3, Translation3, UnitQuaternion, Vector3};

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
