//! Velocity projection against rigid obstacles (Zhuang & Canny §6, eq. 10–12), applied to
//! the end state of any integrator step.
//!
//! **The paper's rule.** In the frame of the moving rigid body a node `p` with relative
//! velocity `v̂` that collides with the surface (outward normal `n̂`) gets
//! `v̂ₙ₊₁ = v̂ₙ − (v̂ₙ·n̂) n̂` (eq. 10; the printed `+` is a sign slip: the text says the normal
//! component "drops to zero"). With the paper's Newmark-type update the acceleration is
//! then corrected by eq. 11 and the position constraint holds two steps later (eq. 12).
//! Bouncing, sliding and sticking are all this one rule: no impulse bookkeeping.
//!
//! **Here** the rule runs after the integrator, on its end state, so it works with every
//! integrator, and the position is projected at once instead of two steps later:
//!
//! 1. *Detection*, in the obstacle's frame: `a = P(t₀)⁻¹ x⁰`, `b = P(t₁)⁻¹ x¹`. If the
//!    straight relative path `a → b` enters the shape ([`super::obstacle::Shape::segment_entry`]) the
//!    contact plane is the tangent plane at the entry point, otherwise the one at the
//!    closest point of `b`. Using the path in the obstacle's frame catches a thin or fast
//!    obstacle that swept past a node as well as a node that jumped through an obstacle.
//!    The node is in contact when `b` is closer to that plane than `skin`.
//! 2. *Position*: `b` moves along the plane normal only, onto the plane plus `skin`. Every
//!    shape is convex, so the plane supports it and the result is outside.
//! 3. *Velocity* (eq. 10 with the obstacle's point velocity `u`): `v_rel = v − u`; if
//!    `v_rel·n < 0` its normal part is removed, which is the normal impulse per unit mass
//!    `|Δvₙ|`. A node resting under gravity gets `|Δvₙ| = g cos θ dt` every step.
//! 4. *Coulomb friction*: the tangential relative velocity `v_t` is reduced by `μ |Δvₙ|`
//!    and set to zero if it is smaller (sticking): `v_t ← f v_t` with
//!    `f = max(0, 1 − μ|Δvₙ|/|v_t|)`. The resting node above sticks exactly when
//!    `g sin θ dt ≤ μ g cos θ dt`, i.e. `tan θ ≤ μ`, and otherwise slides with
//!    acceleration `g (sin θ − μ cos θ)`.
//! 5. *Friction on the position*: projecting along the normal leaves the step's tangential
//!    displacement, so a sticking node would creep down a slope by `g sin θ dt²` per step.
//!    The tangential displacement (relative to the obstacle, from the point where the
//!    path reached the contact plane plus skin) is therefore scaled by the same `f`. For
//!    symplectic Euler (`x¹ = x⁰ + v¹ dt`) this is exactly `x¹ = x⁰ + v¹' dt` with the
//!    corrected velocity: a sticking node stays on its material point of the obstacle, a
//!    sliding one moves with its reduced velocity.
//!
//! A node touching several obstacles (a corner between a box and the ground) is handled by
//! up to [`PASSES`] passes over the obstacles, stopping when a pass moves nothing.
//!
//! Per-step function: no allocation (poses of the first [`POSE_CACHE`] obstacles are kept
//! in a stack array, others are recomputed per node).

use super::obstacle::Obstacle;
use nalgebra::{Isometry3, Point3, Vector3};

/// Passes over the obstacles when there are several.
pub const PASSES: usize = 4;
/// Obstacles whose start and end poses are cached on the stack.
pub const POSE_CACHE: usize = 16;
/// Repeat passes ignore overlaps below this (m): rounding in the pose round trip.
const REPASS_SLACK: f64 = 1e-12;

/// What the obstacle projection did in one step.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ObstacleStats {
    /// Listed vertices that touched at least one obstacle (and were projected).
    pub contacts: usize,
    /// deepest penetration (m, ≥ 0) of the step's end positions before projection
    pub max_penetration: f64,
}

/// Zhuang & Canny §6 eq. 10–12 against rigid obstacles, applied after an integrator step
/// from t0 to t0 + dt: for each listed (surface) vertex that is not fixed and whose end
/// position `x[i]` is inside an obstacle, or whose straight path `x0[i] → x[i]` crossed it (the
/// path is checked in the obstacle's frame, so thin or moving obstacles cannot be tunnelled
/// through at large dt), move it onto the surface plus `skin` (≥ 0) along the normal, remove
/// the normal component of its velocity relative to the obstacle when it approaches
/// (v_rel·n < 0), and apply Coulomb friction: the tangential relative velocity is reduced by
/// μ·|Δv_n| (μ of that obstacle), and set to zero when it is smaller (sticking); the
/// tangential displacement of the step is scaled alike (module docs, step 5). Bouncing,
/// sticking and sliding by the one rule. Returns the statistics.
///
/// Vertices within `skin` of an obstacle count as touching it. The penetration is measured
/// against the contact plane (for a node that jumped through a thin obstacle: how far past
/// the face it entered), before that obstacle's projection. A negative or non-finite `skin`
/// is taken as 0; indices beyond the arrays are skipped, and `fixed` shorter than `x` means
/// the remaining vertices are free.
#[allow(clippy::too_many_arguments)]
pub fn project_obstacles(
    obstacles: &[Obstacle],
    t0: f64,
    dt: f64,
    vertices: &[u32],
    fixed: &[bool],
    x0: &[Vector3<f64>],
    x: &mut [Vector3<f64>],
    v: &mut [Vector3<f64>],
    skin: f64,
) -> ObstacleStats {
    let t1 = t0 + dt;
    let skin = if skin.is_finite() && skin > 0.0 {
        skin
    } else {
        0.0
    };
    let passes = if obstacles.len() > 1 { PASSES } else { 1 };
    let mut cache = [(Isometry3::identity(), Isometry3::identity()); POSE_CACHE];
    for (c, o) in cache.iter_mut().zip(obstacles) {
        *c = (o.path.pose(t0), o.path.pose(t1));
    }
    let mut stats = ObstacleStats::default();
    let n = x.len().min(x0.len()).min(v.len());
    for &i in vertices {
        let i = i as usize;
        if i >= n || fixed.get(i).copied().unwrap_or(false) {
            continue;
        }
        let mut touched = false;
        for pass in 0..passes {
            let slack = if pass == 0 { 0.0 } else { REPASS_SLACK };
            let mut moved = false;
            for (k, o) in obstacles.iter().enumerate() {
                let (p0, p1) = match cache.get(k) {
                    Some(c) => *c,
                    None => (o.path.pose(t0), o.path.pose(t1)),
                };
                let node = Node {
                    x0: &x0[i],
                    x: &mut x[i],
                    v: &mut v[i],
                };
                if let Some(depth) = project_node(o, &p0, &p1, t1, node, skin, slack) {
                    moved = true;
                    if pass == 0 {
                        stats.max_penetration = stats.max_penetration.max(depth);
                    }
                }
            }
            touched |= moved;
            if !moved {
                break;
            }
        }
        stats.contacts += usize::from(touched);
    }
    stats
}

/// One node's start position and end state.
struct Node<'a> {
    x0: &'a Vector3<f64>,
    x: &'a mut Vector3<f64>,
    v: &'a mut Vector3<f64>,
}

/// Steps 1–5 of the module docs for one node and one obstacle with poses `p0` at t₀ and
/// `p1` at t₁. Returns the penetration depth (≥ 0) if the node was in contact.
fn project_node(
    o: &Obstacle,
    p0: &Isometry3<f64>,
    p1: &Isometry3<f64>,
    t1: f64,
    node: Node,
    skin: f64,
    slack: f64,
) -> Option<f64> {
    let a = p0.inverse_transform_point(&Point3::from(*node.x0)).coords;
    let b = p1.inverse_transform_point(&Point3::from(*node.x)).coords;
    let reach = o.shape.bounding_radius() + skin;
    if reach.is_finite() && segment_origin_distance(&a, &b) > reach {
        return None;
    }
    // 1. Contact plane through c with outward normal n (local frame).
    let (c, n) = match o.shape.segment_entry(&a, &b) {
        Some(e) => (e.point, e.normal),
        None => {
            let q = o.shape.local_proximity(&b);
            (q.point, q.normal)
        }
    };
    let db = (b - c).dot(&n);
    if db.is_nan() || db >= skin - slack {
        return None;
    }
    // 2. Along the normal onto the plane + skin.
    let b1 = b + n * (skin - db);
    let x1 = p1.transform_point(&Point3::from(b1)).coords;
    // 3. Eq. 10 on the velocity relative to the obstacle's material point.
    let nw = p1.rotation * n;
    let u = o.path.point_velocity(t1, &x1);
    let mut rel = *node.v - u;
    let vn = rel.dot(&nw);
    let dvn = if vn < 0.0 {
        rel -= nw * vn;
        -vn
    } else {
        0.0
    };
    // 4. Coulomb friction: |v_t| reduced by μ|Δvₙ|, zero when smaller.
    let tangential = rel - nw * rel.dot(&nw);
    let f = friction_factor(o.friction * dvn, tangential.norm());
    rel -= tangential * (1.0 - f);
    *node.v = u + rel;
    // 5. The tangential displacement since the path reached the plane + skin, scaled alike.
    let da = (a - c).dot(&n);
    let reached = if da > skin {
        (da - skin) / (da - db)
    } else {
        0.0
    };
    let anchor = a + (b - a) * reached;
    let shift = b1 - anchor;
    let b2 = b1 - (shift - n * shift.dot(&n)) * (1.0 - f);
    *node.x = p1.transform_point(&Point3::from(b2)).coords;
    Some((-db).max(0.0))
}

/// `f` with `v_t ← f v_t`: `1 − j/|v_t|` when sliding, 0 when sticking (`|v_t| ≤ j`), 1
/// without a normal impulse `j = μ|Δvₙ|`.
pub(super) fn friction_factor(j: f64, vt: f64) -> f64 {
    if j <= 0.0 {
        1.0
    } else if vt <= j {
        0.0
    } else {
        1.0 - j / vt
    }
}

/// Distance from the origin to the segment `a → b`.
fn segment_origin_distance(a: &Vector3<f64>, b: &Vector3<f64>) -> f64 {
    let d = b - a;
    let len2 = d.norm_squared();
    let s = if len2 > 0.0 {
        (-a.dot(&d) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    (a + d * s).norm()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::obstacle::{RigidPath, Shape};

    #[test]
    fn friction_factor_cases() {
        assert_eq!(friction_factor(0.0, 1.0), 1.0);
        assert_eq!(friction_factor(0.5, 0.4), 0.0);
        assert!((friction_factor(0.25, 1.0) - 0.75).abs() < 1e-15);
        assert_eq!(friction_factor(0.1, 0.0), 0.0);
    }

    #[test]
    fn segment_distance_to_origin() {
        let a = Vector3::new(-1.0, 2.0, 0.0);
        let b = Vector3::new(1.0, 2.0, 0.0);
        assert!((segment_origin_distance(&a, &b) - 2.0).abs() < 1e-15);
        assert!((segment_origin_distance(&b, &(b * 2.0)) - b.norm()).abs() < 1e-15);
    }

    /// A vertex far from a box is skipped and left bit-identical; one in a corner between
    /// two obstacles ends outside both.
    #[test]
    fn corner_between_two_obstacles() {
        let ground = Obstacle::plane("ground", Vector3::zeros(), Vector3::z(), 0.0).unwrap();
        let wall = Obstacle {
            name: "wall".into(),
            shape: Shape::Box {
                half_extents: Vector3::new(0.5, 1.0, 1.0),
            },
            path: RigidPath::Static(Isometry3::translation(0.5, 0.0, 0.0)),
            friction: 0.0,
        };
        let obstacles = [ground, wall];
        let x0 = [Vector3::new(-0.1, 0.0, 0.1), Vector3::new(-5.0, 0.0, 3.0)];
        let mut x = [Vector3::new(0.2, 0.1, -0.3), Vector3::new(-5.1, 0.0, 3.0)];
        let mut v = [Vector3::new(3.0, 1.0, -4.0), Vector3::new(-1.0, 0.0, 0.0)];
        let far = (x[1], v[1]);
        let s = project_obstacles(
            &obstacles,
            0.0,
            0.1,
            &[0, 1],
            &[],
            &x0,
            &mut x,
            &mut v,
            1e-3,
        );
        assert_eq!(s.contacts, 1);
        assert_eq!((x[1], v[1]), far);
        for o in &obstacles {
            let d = o.proximity(0.1, &x[0]).distance;
            assert!(d > 1e-3 - 1e-12, "{}: {d}", o.name);
        }
        assert!(v[0].x <= 0.0 && v[0].z >= 0.0, "{:?}", v[0]);
        assert!((v[0].y - 1.0).abs() < 1e-12);
    }
}
