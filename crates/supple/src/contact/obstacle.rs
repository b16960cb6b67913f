//! Rigid obstacles: infinitely massive, prescribed ([`RigidPath`]) shapes that the bodies
//! collide with (Zhuang & Canny §6: "collision between a rigid body and a single node").
//!
//! The contact response in [`super::projection`] needs, per node, the exact signed distance
//! to the obstacle with the outward normal and closest point ([`Obstacle::proximity`]), and
//! for large steps the first point where a straight path enters the shape
//! ([`Shape::segment_entry`]) so that thin obstacles cannot be tunnelled through. All four
//! shapes are convex, which the response relies on: the tangent plane at any surface point
//! supports the shape.

use nalgebra::{Isometry3, Point3, UnitQuaternion, Vector3};
use thiserror::Error;

pub use super::path::RigidPath;

/// Shapes in the obstacle's local frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// Solid below the plane z = 0 (outward normal +z).
    HalfSpace,
    Sphere {
        radius: f64,
    },
    /// Centred box.
    Box {
        half_extents: Vector3<f64>,
    },
    /// Segment from (0,0,−half_length) to (0,0,half_length) swept by a ball.
    Capsule {
        radius: f64,
        half_length: f64,
    },
}

/// Where a point is relative to a shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Proximity {
    /// signed distance, negative inside
    pub distance: f64,
    /// outward unit normal (world) at the closest surface point
    pub normal: Vector3<f64>,
    /// closest surface point (world)
    pub point: Vector3<f64>,
}

/// First entry of a straight path into a shape ([`Shape::segment_entry`]), local frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Entry {
    /// Path parameter in [0, 1]: the path is `a + s (b − a)`.
    pub s: f64,
    /// The entry point on the surface.
    pub point: Vector3<f64>,
    /// Outward unit normal of the surface there.
    pub normal: Vector3<f64>,
}

/// Invalid obstacle description; each variant names the obstacle and the field.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum ObstacleError {
    #[error("obstacle `{obstacle}`: {field} = {value}: must be a finite number > 0")]
    Dimension {
        obstacle: String,
        field: &'static str,
        value: f64,
    },
    #[error("obstacle `{obstacle}`: {field} = {value}: must be a finite number ≥ 0")]
    NonNegative {
        obstacle: String,
        field: &'static str,
        value: f64,
    },
    #[error("obstacle `{obstacle}`: {field} must be finite (and its rotation a unit quaternion)")]
    Pose {
        obstacle: String,
        field: &'static str,
    },
    #[error("obstacle `{obstacle}`: the plane normal must be finite and non-zero")]
    Normal { obstacle: String },
    #[error("obstacle `{obstacle}`: a keyframed path needs at least one keyframe")]
    NoKeyframes { obstacle: String },
    #[error(
        "obstacle `{obstacle}`: keyframe {index} has time {time}: \
         times must be finite and strictly increasing"
    )]
    KeyframeTime {
        obstacle: String,
        index: usize,
        time: f64,
    },
}

/// A rigid obstacle: a [`Shape`] on a prescribed [`RigidPath`] with a friction coefficient.
/// [`Obstacle::plane`] and [`Obstacle::at`] make the static ones; a moving one names its
/// path (keyframes, a constant velocity) in the fields. A world meets its obstacles through
/// contact ([`WorldBuilder::obstacle`](crate::world::WorldBuilder::obstacle)):
///
/// ```
/// use supple::prelude::*;
/// let mesh = box_grid(&BoxGrid { cells: [1, 1, 1], cell_size: Vector3::repeat(0.1),
///     origin: Vector3::new(-0.05, 0.01, -0.05), split: TetSplit::Five });
/// let mut world = World::builder()
///     .body(BodyDesc::of(mesh).velocity(Vector3::new(0.0, -1.0, 0.0)))
///     .obstacle(Obstacle::plane("floor", Vector3::zeros(), Vector3::y(), 0.5)?)
///     .build()?;
/// for _ in 0..5 {
///     world.step()?;
/// }
/// let (lowest, _) = world.bodies[0].bounding_box();
/// assert!(lowest.y > -1e-3, "the floor holds the cube: {}", lowest.y);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Obstacle {
    pub name: String,
    pub shape: Shape,
    pub path: RigidPath,
    /// Coulomb friction coefficient μ ≥ 0
    pub friction: f64,
}

impl Shape {
    /// Exact signed distance, outward unit normal and closest surface point, all in the
    /// local frame. Where the normal is not unique (the centre of a sphere, the axis of a
    /// capsule, equidistant box faces) a fixed choice is made.
    pub fn local_proximity(&self, p: &Vector3<f64>) -> Proximity {
        match *self {
            Shape::HalfSpace => Proximity {
                distance: p.z,
                normal: Vector3::z(),
                point: Vector3::new(p.x, p.y, 0.0),
            },
            Shape::Sphere { radius } => ball(&Vector3::zeros(), radius, p, Vector3::z()),
            Shape::Capsule {
                radius,
                half_length,
            } => {
                let c = Vector3::new(0.0, 0.0, p.z.clamp(-half_length, half_length));
                ball(&c, radius, p, Vector3::x())
            }
            Shape::Box { half_extents: h } => {
                let q = p.abs() - h;
                if q.max() > 0.0 {
                    // Outside: the closest point is the clamp (exact Euclidean distance to
                    // a face, edge or corner).
                    let c = Vector3::new(
                        p.x.clamp(-h.x, h.x),
                        p.y.clamp(-h.y, h.y),
                        p.z.clamp(-h.z, h.z),
                    );
                    let d = p - c;
                    let dist = d.norm();
                    Proximity {
                        distance: dist,
                        normal: d / dist,
                        point: c,
                    }
                } else {
                    // Inside: the nearest face is the one with the largest (least negative)
                    // |pᵢ| − hᵢ.
                    let k = q.imax();
                    let sign = if p[k] < 0.0 { -1.0 } else { 1.0 };
                    let mut normal = Vector3::zeros();
                    normal[k] = sign;
                    let mut point = *p;
                    point[k] = sign * h[k];
                    Proximity {
                        distance: q[k],
                        normal,
                        point,
                    }
                }
            }
        }
    }

    /// The first point where the straight path `a → b` (local frame) enters the shape, or
    /// `None` if it does not, or if `a` is already strictly inside. Exact for all shapes:
    /// a linear root for the half-space, the smaller quadratic root for the sphere (written
    /// as `2C/(−B + √D)` to avoid cancellation), the slab method for the box, and the
    /// earliest of the infinite-cylinder side (where |z| ≤ half_length) and the two end
    /// balls for the capsule (a convex union: entering it means entering one of the parts).
    pub fn segment_entry(&self, a: &Vector3<f64>, b: &Vector3<f64>) -> Option<Entry> {
        let d = b - a;
        match *self {
            Shape::HalfSpace => (a.z >= 0.0 && b.z < 0.0).then(|| {
                let s = a.z / (a.z - b.z);
                let mut point = a + d * s;
                point.z = 0.0;
                Entry {
                    s,
                    point,
                    normal: Vector3::z(),
                }
            }),
            Shape::Sphere { radius } => ball_entry(&Vector3::zeros(), radius, a, &d),
            Shape::Capsule {
                radius,
                half_length,
            } => {
                if self.local_proximity(a).distance < 0.0 {
                    return None;
                }
                let top = Vector3::new(0.0, 0.0, half_length);
                let side = cylinder_entry(radius, half_length, a, &d);
                [
                    side,
                    ball_entry(&top, radius, a, &d),
                    ball_entry(&-top, radius, a, &d),
                ]
                .into_iter()
                .flatten()
                .min_by(|x, y| x.s.total_cmp(&y.s))
            }
            Shape::Box { half_extents: h } => box_entry(&h, a, &d),
        }
    }

    /// Radius of a ball about the local origin that contains the shape (∞ for the half-space).
    pub fn bounding_radius(&self) -> f64 {
        match *self {
            Shape::HalfSpace => f64::INFINITY,
            Shape::Sphere { radius } => radius,
            Shape::Box { half_extents } => half_extents.norm(),
            Shape::Capsule {
                radius,
                half_length,
            } => radius + half_length,
        }
    }
}

/// Signed distance to the ball of radius `r` about `c`; `fallback` is the normal at the centre.
fn ball(c: &Vector3<f64>, r: f64, p: &Vector3<f64>, fallback: Vector3<f64>) -> Proximity {
    let d = p - c;
    let len = d.norm();
    let normal = if len > 0.0 { d / len } else { fallback };
    Proximity {
        distance: len - r,
        normal,
        point: c + normal * r,
    }
}

/// Entry of `a + s d` into the ball |x − c| ≤ r: `A s² + B s + C = 0` with `A = d·d`,
/// `B = 2 (a − c)·d`, `C = |a − c|² − r²`; from outside (C ≥ 0) and approaching (B < 0) the
/// entry is the smaller root `2C/(−B + √(B² − 4AC))`.
fn ball_entry(c: &Vector3<f64>, r: f64, a: &Vector3<f64>, d: &Vector3<f64>) -> Option<Entry> {
    let ac = a - c;
    let (qa, qb, qc) = (d.norm_squared(), 2.0 * ac.dot(d), ac.norm_squared() - r * r);
    let disc = qb * qb - 4.0 * qa * qc;
    if qc < 0.0 || qb >= 0.0 || disc < 0.0 {
        return None;
    }
    let s = 2.0 * qc / (-qb + disc.sqrt());
    (s <= 1.0).then(|| {
        let normal = (ac + d * s).normalize();
        Entry {
            s,
            point: c + normal * r,
            normal,
        }
    })
}

/// Entry of `a + s d` through the side of the capsule's cylinder x² + y² ≤ r², |z| ≤ L
/// (the same quadratic as [`ball_entry`] in the xy-plane).
fn cylinder_entry(r: f64, half_length: f64, a: &Vector3<f64>, d: &Vector3<f64>) -> Option<Entry> {
    let (qa, qb) = (d.x * d.x + d.y * d.y, 2.0 * (a.x * d.x + a.y * d.y));
    let qc = a.x * a.x + a.y * a.y - r * r;
    let disc = qb * qb - 4.0 * qa * qc;
    if qc < 0.0 || qb >= 0.0 || disc < 0.0 {
        return None;
    }
    let s = 2.0 * qc / (-qb + disc.sqrt());
    let p = a + d * s;
    if s > 1.0 || p.z.abs() > half_length {
        return None;
    }
    let normal = Vector3::new(p.x, p.y, 0.0).normalize();
    Some(Entry {
        s,
        point: Vector3::new(normal.x * r, normal.y * r, p.z),
        normal,
    })
}

/// Slab method: on axis k the path is inside |x_k| ≤ h_k for s between
/// `(∓h_k − a_k)/d_k`; the entry is the largest lower bound, provided it is ≤ every upper
/// bound, lies in [0, 1] and is reached from outside. The entry face is the one whose slab
/// was entered last, with normal `−sign(d_k) e_k`.
fn box_entry(h: &Vector3<f64>, a: &Vector3<f64>, d: &Vector3<f64>) -> Option<Entry> {
    let (mut s_in, mut s_out, mut axis) = (f64::NEG_INFINITY, f64::INFINITY, None);
    for k in 0..3 {
        if d[k] == 0.0 {
            if a[k].abs() > h[k] {
                return None;
            }
            continue;
        }
        let (lo, hi) = ((-h[k] - a[k]) / d[k], (h[k] - a[k]) / d[k]);
        let (near, far) = if lo < hi { (lo, hi) } else { (hi, lo) };
        if near > s_in {
            s_in = near;
            axis = Some(k);
        }
        s_out = s_out.min(far);
    }
    let k = axis?;
    if !(0.0..=1.0).contains(&s_in) || s_in > s_out {
        return None;
    }
    let sign = if d[k] > 0.0 { -1.0 } else { 1.0 };
    let mut normal = Vector3::zeros();
    normal[k] = sign;
    let mut point = a + d * s_in;
    point[k] = sign * h[k];
    for j in 0..3 {
        point[j] = point[j].clamp(-h[j], h[j]);
    }
    Some(Entry {
        s: s_in,
        point,
        normal,
    })
}

fn finite_pose(p: &Isometry3<f64>) -> bool {
    let q = p.rotation.coords;
    p.translation.vector.iter().all(|c| c.is_finite())
        && q.iter().all(|c| c.is_finite())
        && (q.norm() - 1.0).abs() < 1e-6
}

impl Obstacle {
    /// A static ground plane through `point` with outward `normal` (any length > 0).
    pub fn plane(
        name: &str,
        point: Vector3<f64>,
        normal: Vector3<f64>,
        friction: f64,
    ) -> Result<Self, ObstacleError> {
        let len = normal.norm();
        if !(len.is_finite() && len > 0.0) {
            return Err(ObstacleError::Normal {
                obstacle: name.to_string(),
            });
        }
        // rotation_between is undefined for the exactly opposite direction: a half turn.
        let rotation = UnitQuaternion::rotation_between(&Vector3::z(), &(normal / len))
            .unwrap_or_else(|| {
                UnitQuaternion::from_axis_angle(&Vector3::x_axis(), std::f64::consts::PI)
            });
        let o = Obstacle {
            name: name.to_string(),
            shape: Shape::HalfSpace,
            path: RigidPath::Static(Isometry3::from_parts(point.into(), rotation)),
            friction,
        };
        o.validate()?;
        Ok(o)
    }

    /// A static obstacle of `shape` centred at `center` (the shape's local frame translated,
    /// not rotated), checked:
    ///
    /// ```
    /// use supple::prelude::*;
    /// let ball = Obstacle::at("ball", Shape::Sphere { radius: 0.5 }, Vector3::new(0.0, 1.0, 0.0), 0.2)?;
    /// // Signed distance (negative inside), outward normal and closest point, at time 0.
    /// let near = ball.proximity(0.0, &Vector3::new(0.0, 2.0, 0.0));
    /// assert!((near.distance - 0.5).abs() < 1e-12);
    /// assert!((near.normal - Vector3::y()).norm() < 1e-12);
    /// let err = Obstacle::at("ball", Shape::Sphere { radius: -1.0 }, Vector3::zeros(), 0.0);
    /// assert_eq!(err.unwrap_err().to_string(),
    ///     "obstacle `ball`: radius = -1: must be a finite number > 0");
    /// # Ok::<(), supple::contact::obstacle::ObstacleError>(())
    /// ```
    pub fn at(
        name: &str,
        shape: Shape,
        center: Vector3<f64>,
        friction: f64,
    ) -> Result<Self, ObstacleError> {
        let o = Obstacle {
            name: name.to_string(),
            shape,
            path: RigidPath::Static(Isometry3::translation(center.x, center.y, center.z)),
            friction,
        };
        o.validate()?;
        Ok(o)
    }

    /// Checks radii/half-extents > 0 and finite, keyframe times strictly increasing and
    /// finite, μ ≥ 0 finite, poses finite. A capsule's half_length may be 0 (a sphere).
    pub fn validate(&self) -> Result<(), ObstacleError> {
        let name = || self.name.clone();
        let positive = |field, value: f64| {
            if value.is_finite() && value > 0.0 {
                Ok(())
            } else {
                Err(ObstacleError::Dimension {
                    obstacle: name(),
                    field,
                    value,
                })
            }
        };
        let non_negative = |field, value: f64| {
            if value.is_finite() && value >= 0.0 {
                Ok(())
            } else {
                Err(ObstacleError::NonNegative {
                    obstacle: name(),
                    field,
                    value,
                })
            }
        };
        match self.shape {
            Shape::HalfSpace => {}
            Shape::Sphere { radius } => positive("radius", radius)?,
            Shape::Box { half_extents: h } => {
                positive("half_extents.x", h.x)?;
                positive("half_extents.y", h.y)?;
                positive("half_extents.z", h.z)?;
            }
            Shape::Capsule {
                radius,
                half_length,
            } => {
                positive("radius", radius)?;
                non_negative("half_length", half_length)?;
            }
        }
        non_negative("friction", self.friction)?;
        let pose_err = |field| ObstacleError::Pose {
            obstacle: name(),
            field,
        };
        match &self.path {
            RigidPath::Static(p) if !finite_pose(p) => return Err(pose_err("pose")),
            RigidPath::Static(_) => {}
            RigidPath::Constant {
                start,
                linear,
                angular,
            } => {
                if !finite_pose(start) {
                    return Err(pose_err("start"));
                }
                if !linear.iter().all(|c| c.is_finite()) {
                    return Err(pose_err("linear"));
                }
                if !angular.iter().all(|c| c.is_finite()) {
                    return Err(pose_err("angular"));
                }
            }
            RigidPath::Keyframes(keys) => {
                if keys.is_empty() {
                    return Err(ObstacleError::NoKeyframes { obstacle: name() });
                }
                let mut previous = f64::NEG_INFINITY;
                for (index, &(time, pose)) in keys.iter().enumerate() {
                    if !time.is_finite() || time <= previous {
                        return Err(ObstacleError::KeyframeTime {
                            obstacle: name(),
                            index,
                            time,
                        });
                    }
                    if !finite_pose(&pose) {
                        return Err(pose_err("keyframes"));
                    }
                    previous = time;
                }
            }
        }
        Ok(())
    }

    /// Exact signed distance from world point `p` at time `t`, with the world outward normal
    /// and closest surface point ([`Shape::local_proximity`] in the pose's frame).
    pub fn proximity(&self, t: f64, p: &Vector3<f64>) -> Proximity {
        let pose = self.path.pose(t);
        let local = pose.inverse_transform_point(&Point3::from(*p)).coords;
        let q = self.shape.local_proximity(&local);
        Proximity {
            distance: q.distance,
            normal: pose.rotation * q.normal,
            point: pose.transform_point(&Point3::from(q.point)).coords,
        }
    }

    /// World bounding box at time t (None for the half-space). Tight for the sphere, box and
    /// capsule: the box's world half-widths are `|R| h` (entrywise absolute rotation).
    pub fn aabb(&self, t: f64) -> Option<(Vector3<f64>, Vector3<f64>)> {
        let pose = self.path.pose(t);
        let c = pose.translation.vector;
        let half = match self.shape {
            Shape::HalfSpace => return None,
            Shape::Sphere { radius } => Vector3::repeat(radius),
            Shape::Box { half_extents } => {
                pose.rotation.to_rotation_matrix().matrix().abs() * half_extents
            }
            Shape::Capsule {
                radius,
                half_length,
            } => {
                (pose.rotation * Vector3::new(0.0, 0.0, half_length)).abs()
                    + Vector3::repeat(radius)
            }
        };
        Some((c - half, c + half))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The entry point of every shape agrees with a dense march along the path.
    #[test]
    fn segment_entry_matches_marching() {
        let shapes = [
            Shape::HalfSpace,
            Shape::Sphere { radius: 0.7 },
            Shape::Box {
                half_extents: Vector3::new(0.5, 0.3, 0.01),
            },
            Shape::Capsule {
                radius: 0.2,
                half_length: 0.6,
            },
        ];
        let mut seed = 7u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
        };
        let mut hits = 0;
        for shape in shapes {
            for _ in 0..300 {
                let a = Vector3::new(rnd(), rnd(), rnd()) * 1.5;
                let b = Vector3::new(rnd(), rnd(), rnd()) * 1.5;
                let n = 20_000;
                let inside = |s: f64| shape.local_proximity(&(a + (b - a) * s)).distance < 0.0;
                let marched = (0..=n).map(|i| i as f64 / n as f64).find(|&s| inside(s));
                let entry = shape.segment_entry(&a, &b);
                if inside(0.0) {
                    assert!(entry.is_none());
                    continue;
                }
                match (entry, marched) {
                    (Some(e), Some(s)) => {
                        hits += 1;
                        assert!(e.s <= s + 1e-12 && e.s > s - 2.0 / n as f64, "{shape:?}");
                        let q = shape.local_proximity(&e.point);
                        assert!(q.distance.abs() < 1e-12, "{shape:?} {q:?}");
                        assert!((a + (b - a) * e.s - e.point).norm() < 1e-12);
                        assert!(e.normal.dot(&(b - a)) <= 0.0);
                    }
                    (None, None) => {}
                    // A graze shorter than the march step may be missed by the march only.
                    (Some(e), None) => {
                        let mid = a + (b - a) * e.s;
                        assert!(shape.local_proximity(&mid).distance.abs() < 1e-12);
                    }
                    (None, Some(s)) => panic!("{shape:?}: missed entry at s = {s}"),
                }
            }
        }
        assert!(hits > 200, "only {hits} entries exercised");
    }

    #[test]
    fn plane_facing_down_is_a_half_turn() {
        let o =
            Obstacle::plane("ceiling", Vector3::new(0.0, 0.0, 2.0), -Vector3::z(), 0.3).unwrap();
        let q = o.proximity(0.0, &Vector3::new(1.0, 1.0, 1.5));
        assert!((q.distance - 0.5).abs() < 1e-12);
        assert!((q.normal + Vector3::z()).norm() < 1e-12);
        assert!(Obstacle::plane("p", Vector3::zeros(), Vector3::zeros(), 0.0).is_err());
    }
}
