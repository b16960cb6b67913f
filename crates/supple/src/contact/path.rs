//! Prescribed rigid motion of an obstacle ([`RigidPath`]).
//!
//! Obstacles are infinitely massive and their motion is given, not simulated. The contact
//! response of Zhuang & Canny §6 (eq. 10) works with the velocity of a deformable node
//! *relative to the rigid body*, so besides the pose at a time a path must give the
//! velocity of the obstacle's material point under a world position
//! ([`RigidPath::point_velocity`]): `u(p) = ċ + ω × (p − c)` for the moving origin `c`.

use nalgebra::{Isometry3, Translation3, UnitQuaternion, Vector3};

/// Prescribed rigid motion. Poses map local to world coordinates.
#[derive(Debug, Clone, PartialEq)]
pub enum RigidPath {
    Static(Isometry3<f64>),
    /// Pose at t = 0, then constant linear velocity (of the local origin) and constant angular
    /// velocity (world frame, about the moving origin).
    Constant {
        start: Isometry3<f64>,
        linear: Vector3<f64>,
        angular: Vector3<f64>,
    },
    /// Piecewise-linear translation and slerped rotation between keyframes (strictly
    /// increasing times), held constant before the first and after the last.
    Keyframes(Vec<(f64, Isometry3<f64>)>),
}

/// One keyframe segment evaluated at a time: the pose, and the world velocity of the local
/// origin and the world angular velocity (both constant over the segment).
struct Motion {
    pose: Isometry3<f64>,
    linear: Vector3<f64>,
    angular: Vector3<f64>,
}

impl RigidPath {
    /// Pose (local → world) at time `t`.
    ///
    /// * `Constant`: origin `c(t) = c₀ + v t`, rotation `R(t) = exp([ω] t) R₀` (ω in the world
    ///   frame, so the increment multiplies from the left).
    /// * `Keyframes`: on `[tᵢ, tᵢ₊₁)` with `s = (t − tᵢ)/(tᵢ₊₁ − tᵢ)`, origin
    ///   `(1 − s) cᵢ + s cᵢ₊₁` and rotation `qᵢ exp(s a)` where `a` is the scaled axis of the
    ///   shortest relative rotation `qᵢ⁻¹ qᵢ₊₁` (slerp; well defined even for a half turn).
    ///   Before the first and from the last keyframe on the pose is held. An empty list (which
    ///   [`super::obstacle::Obstacle::validate`] rejects) gives the identity.
    pub fn pose(&self, t: f64) -> Isometry3<f64> {
        match self {
            RigidPath::Static(p) => *p,
            RigidPath::Constant {
                start,
                linear,
                angular,
            } => Isometry3::from_parts(
                Translation3::from(start.translation.vector + linear * t),
                UnitQuaternion::from_scaled_axis(angular * t) * start.rotation,
            ),
            RigidPath::Keyframes(keys) => keyframe_motion(keys, t).pose,
        }
    }

    /// Velocity at time t of the obstacle's material point that is at world position p:
    /// `u = ċ(t) + ω(t) × (p − c(t))`.
    ///
    /// For keyframes, `ċ = (cᵢ₊₁ − cᵢ)/(tᵢ₊₁ − tᵢ)` and `ω = Rᵢ a /(tᵢ₊₁ − tᵢ)` on segment `i`
    /// (from `R(s) = Rᵢ exp(s[a])`: `Ṙ Rᵀ = [Rᵢ a]/Δt`); the velocity is right-continuous at the
    /// keyframe times and zero before the first and from the last keyframe on.
    pub fn point_velocity(&self, t: f64, p: &Vector3<f64>) -> Vector3<f64> {
        let m = match self {
            RigidPath::Static(_) => return Vector3::zeros(),
            RigidPath::Constant {
                start,
                linear,
                angular,
            } => Motion {
                pose: Isometry3::from_parts(
                    Translation3::from(start.translation.vector + linear * t),
                    start.rotation,
                ),
                linear: *linear,
                angular: *angular,
            },
            RigidPath::Keyframes(keys) => keyframe_motion(keys, t),
        };
        m.linear + m.angular.cross(&(p - m.pose.translation.vector))
    }
}

/// Pose and velocities of a keyframed path at `t` (no allocation: a binary search).
fn keyframe_motion(keys: &[(f64, Isometry3<f64>)], t: f64) -> Motion {
    let held = |pose: Isometry3<f64>| Motion {
        pose,
        linear: Vector3::zeros(),
        angular: Vector3::zeros(),
    };
    let (Some(first), Some(last)) = (keys.first(), keys.last()) else {
        return held(Isometry3::identity());
    };
    // Index of the first keyframe with time > t; NaN compares false and lands on 0.
    let i = keys.partition_point(|k| k.0 <= t);
    if i == 0 {
        return held(first.1);
    }
    if i >= keys.len() {
        return held(last.1);
    }
    let (t0, p0) = keys[i - 1];
    let (t1, p1) = keys[i];
    let span = t1 - t0;
    let s = (t - t0) / span;
    let rel = (p0.rotation.inverse() * p1.rotation).scaled_axis();
    let c0 = p0.translation.vector;
    let c1 = p1.translation.vector;
    Motion {
        pose: Isometry3::from_parts(
            Translation3::from(c0 + (c1 - c0) * s),
            p0.rotation * UnitQuaternion::from_scaled_axis(rel * s),
        ),
        linear: (c1 - c0) / span,
        angular: p0.rotation * rel / span,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    #[test]
    fn half_turn_keyframes_interpolate_without_panic() {
        let a = Isometry3::identity();
        let b = Isometry3::from_parts(
            Translation3::new(2.0, 0.0, 0.0),
            UnitQuaternion::from_axis_angle(&Vector3::z_axis(), PI),
        );
        let path = RigidPath::Keyframes(vec![(0.0, a), (2.0, b)]);
        let mid = path.pose(1.0);
        assert!((mid.rotation.angle() - PI / 2.0).abs() < 1e-12);
        assert!((mid.translation.vector - Vector3::new(1.0, 0.0, 0.0)).norm() < 1e-12);
        // Angular speed π/2 rad/s about ±z: a point at (2,0,0) relative to the origin (1,0,0)
        // moves at 1 m/s (linear) plus π/2 m/s along ±y.
        let u = path.point_velocity(1.0, &Vector3::new(2.0, 0.0, 0.0));
        assert!((u.x - 1.0).abs() < 1e-12);
        assert!((u.y.abs() - PI / 2.0).abs() < 1e-12);
    }

    #[test]
    fn keyframes_hold_outside_their_span() {
        let a = Isometry3::translation(0.0, 0.0, 1.0);
        let b = Isometry3::translation(0.0, 0.0, 3.0);
        let path = RigidPath::Keyframes(vec![(1.0, a), (2.0, b)]);
        assert_eq!(path.pose(0.0), a);
        assert_eq!(path.pose(5.0), b);
        assert_eq!(
            path.point_velocity(0.5, &Vector3::zeros()),
            Vector3::zeros()
        );
        assert_eq!(
            path.point_velocity(2.5, &Vector3::zeros()),
            Vector3::zeros()
        );
        assert_eq!(
            path.point_velocity(1.5, &Vector3::zeros()),
            Vector3::new(0.0, 0.0, 2.0)
        );
        assert_eq!(
            RigidPath::Keyframes(vec![]).pose(0.0),
            Isometry3::identity()
        );
    }
}
