//! Surface triangles against the rounded obstacles (spheres, capsules): a post or a ball
//! thinner than the mesh's triangles can poke through a face while every vertex stays
//! outside, which the vertex projection ([`super::projection`]) cannot see.
//!
//! For each boundary triangle near a sphere or capsule, the closest point `q` of the
//! triangle to the obstacle's core (its centre, or its axis segment) is found; when it is
//! closer than the radius, Zhuang & Canny's rule (eq. 10) is applied at `q` and spread over
//! the triangle's vertices by their barycentric weights `w` with the least-norm split
//! `Δx_k = w_k d n / Σ w_j²` (so that `Σ w_k Δx_k = d n`): the point moves out along the
//! normal by its depth `d`, and its normal velocity relative to the obstacle, if it
//! approaches, is removed the same way. Fixed vertices do not move (their weight drops out).

use super::ccd::{point_segment, point_triangle};
use super::obstacle::{Obstacle, Shape};
use nalgebra::{Point3, Vector3};

/// Pushes the triangles at positions `x` (velocities `v`) out of the spheres and capsules at
/// time `t`, `passes` times over; returns (triangles pushed in the first pass, deepest
/// penetration found). Half-spaces and boxes are left to the vertex projection.
#[allow(clippy::too_many_arguments)]
pub fn push_triangles_out(
    obstacles: &[Obstacle],
    t: f64,
    triangles: &[[u32; 3]],
    fixed: &[bool],
    x: &mut [Vector3<f64>],
    v: &mut [Vector3<f64>],
    skin: f64,
    passes: usize,
) -> (usize, f64) {
    let (mut pushed, mut deepest) = (0, 0.0f64);
    for pass in 0..passes {
        let mut moved = false;
        for o in obstacles {
            let (radius, core) = match o.shape {
                Shape::Sphere { radius } => (radius, 0.0),
                Shape::Capsule {
                    radius,
                    half_length,
                } => (radius, half_length),
                _ => continue,
            };
            let pose = o.path.pose(t);
            let a = pose.transform_point(&Point3::new(0.0, 0.0, -core)).coords;
            let b = pose.transform_point(&Point3::new(0.0, 0.0, core)).coords;
            let reach = radius + skin;
            for tri in triangles {
                let [p0, p1, p2] = tri.map(|i| x[i as usize]);
                // Cheap reject: the triangle's box against the core's box grown by the reach.
                let lo = p0.inf(&p1).inf(&p2);
                let hi = p0.sup(&p1).sup(&p2);
                let (clo, chi) = (a.inf(&b).add_scalar(-reach), a.sup(&b).add_scalar(reach));
                if (0..3).any(|k| hi[k] < clo[k] || lo[k] > chi[k]) {
                    continue;
                }
                // Closest points of the core segment and the triangle, by alternating
                // projections (both sets are convex; a few rounds suffice at this scale).
                let mut c = 0.5 * (a + b);
                let (mut dist, mut w) = point_triangle(&c, &p0, &p1, &p2);
                for _ in 0..4 {
                    let q = w[0] * p0 + w[1] * p1 + w[2] * p2;
                    let (_, u) = point_segment(&q, &a, &b);
                    c = a + u * (b - a);
                    (dist, w) = point_triangle(&c, &p0, &p1, &p2);
                }
                let depth = reach - dist;
                if depth <= 0.0 {
                    continue;
                }
                let q = w[0] * p0 + w[1] * p1 + w[2] * p2;
                let n = if dist > 1e-12 * reach {
                    (q - c) / dist
                } else {
                    // The core touches the face: push along the face's outward normal.
                    (p1 - p0).cross(&(p2 - p0)).normalize()
                };
                let free = |k: usize| !fixed.get(tri[k] as usize).copied().unwrap_or(false);
                let norm2: f64 = (0..3).filter(|&k| free(k)).map(|k| w[k] * w[k]).sum();
                if norm2 <= 0.0 || !n.iter().all(|c| c.is_finite()) {
                    continue;
                }
                if pass == 0 {
                    pushed += 1;
                    deepest = deepest.max(depth - skin);
                }
                let vq: Vector3<f64> = (0..3).map(|k| w[k] * v[tri[k] as usize]).sum();
                let vn = (vq - o.path.point_velocity(t, &q)).dot(&n);
                for k in (0..3).filter(|&k| free(k)) {
                    let i = tri[k] as usize;
                    x[i] += (w[k] * depth / norm2) * n;
                    if vn < 0.0 {
                        v[i] -= (w[k] * vn / norm2) * n;
                    }
                }
                moved = true;
            }
        }
        if !moved {
            break;
        }
    }
    (pushed, deepest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::RigidPath;
    use nalgebra::{Isometry3, Translation3, UnitQuaternion};

    fn ball(c: Vector3<f64>, r: f64) -> Obstacle {
        Obstacle {
            name: "ball".into(),
            shape: Shape::Sphere { radius: r },
            path: RigidPath::Static(Isometry3::from_parts(
                Translation3::from(c),
                UnitQuaternion::identity(),
            )),
            friction: 0.0,
        }
    }

    #[test]
    fn a_ball_poking_through_a_large_triangle_pushes_it_out() {
        // A big triangle in z = 0 whose vertices are all far outside a ball of radius 0.1
        // centred 0.05 below the face's middle: only the face is inside.
        let mut x = vec![
            Vector3::new(-1.0, -1.0, 0.0),
            Vector3::new(2.0, -1.0, 0.0),
            Vector3::new(-1.0, 2.0, 0.0),
        ];
        let mut v = vec![Vector3::new(0.0, 0.0, -1.0); 3];
        let o = ball(Vector3::new(0.0, 0.0, -0.05), 0.1);
        let (pushed, deepest) = push_triangles_out(
            std::slice::from_ref(&o),
            0.0,
            &[[0, 1, 2]],
            &[false; 3],
            &mut x,
            &mut v,
            0.0,
            3,
        );
        assert_eq!(pushed, 1);
        assert!((deepest - 0.05).abs() < 1e-9, "{deepest}");
        // The face's closest point to the centre is now on the sphere.
        let (d, _) = point_triangle(&Vector3::new(0.0, 0.0, -0.05), &x[0], &x[1], &x[2]);
        assert!((d - 0.1).abs() < 1e-9, "{d}");
        // It no longer approaches.
        let (_, w) = point_triangle(&Vector3::new(0.0, 0.0, -0.05), &x[0], &x[1], &x[2]);
        let vq: Vector3<f64> = (0..3).map(|k| w[k] * v[k]).sum();
        assert!(vq.z >= -1e-12, "{vq:?}");
        // A triangle clear of the ball is left alone.
        let far = x.clone();
        let (pushed, _) =
            push_triangles_out(&[o], 0.0, &[[0, 1, 2]], &[false; 3], &mut x, &mut v, 0.0, 1);
        assert_eq!(pushed, 0);
        assert_eq!(far, x);
    }

    #[test]
    fn a_capsule_axis_across_a_face_and_fixed_vertices() {
        let capsule = Obstacle {
            name: "rod".into(),
            shape: Shape::Capsule {
                radius: 0.02,
                half_length: 1.0,
            },
            // Axis along x (local z turned onto x), 0.01 below the face z = 0.
            path: RigidPath::Static(Isometry3::from_parts(
                Translation3::new(0.3, 0.3, -0.01),
                UnitQuaternion::from_axis_angle(&Vector3::y_axis(), std::f64::consts::FRAC_PI_2),
            )),
            friction: 0.0,
        };
        let mut x = vec![
            Vector3::new(0.0, 0.0, 0.0),
            Vector3::new(1.0, 0.0, 0.0),
            Vector3::new(0.0, 1.0, 0.0),
        ];
        let mut v = vec![Vector3::zeros(); 3];
        let fixed = [true, false, false];
        push_triangles_out(
            &[capsule],
            0.0,
            &[[0, 1, 2]],
            &fixed,
            &mut x,
            &mut v,
            0.0,
            4,
        );
        assert_eq!(x[0], Vector3::zeros(), "a fixed vertex moved");
        let p = Vector3::new(0.3, 0.3, -0.01);
        let (d, _) = point_triangle(&p, &x[0], &x[1], &x[2]);
        assert!(d > 0.02 - 1e-6, "the face is still {d} from the axis");
    }
}
