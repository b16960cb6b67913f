//! Sliding contact holds: a vertex held against one obstacle by its normal velocity only.
//!
//! The contact hold ([`super::Contact::hold_obstacle_contacts`]) re-solves a step with the
//! vertices that ran into an obstacle held. Held in all three directions, such a vertex moves
//! tangentially with the velocity of the first (free) solve, which knows nothing of the
//! contact: a body in lasting contact — a box pressed by a plate — springs back in the free
//! solve, and its held vertices are then dragged sideways by that spring-back while their
//! neighbours are not (the crush of `supple-lab stress` flattened its corner tets this
//! way and diverged). For an integrator that takes sliding holds
//! ([`crate::time::sliding`]) a vertex touching exactly one obstacle is therefore held along
//! that obstacle's normal only, at the obstacle's normal velocity (no approach, Zhuang & Canny
//! eq. 10), and the solve finds its tangential velocity with the rest of the body. Coulomb
//! friction then acts after the solve, as in the projection (Zhuang & Canny §6,
//! [`super::projection`]): the tangential velocity relative to the obstacle is reduced by
//! `μ |Δvₙ|`, `|Δvₙ|` the normal approach the hold removed from the free solve, and the
//! position follows the velocity change (`Δx = h Δv`).
//!
//! A vertex that touches two obstacles at once (a corner) keeps the full hold: sliding along
//! one would push it into the other.

use super::obstacle::Obstacle;
use super::projection::friction_factor;
use nalgebra::Vector3;

/// How one held vertex slides (see the module notes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Slide {
    /// The obstacle it slides on.
    pub obstacle: usize,
    /// Outward unit normal of the obstacle at the vertex (world).
    pub normal: Vector3<f64>,
    /// The normal approach speed the hold removed, `|Δvₙ|` (m/s), for friction when the
    /// solve measured no impulse.
    pub approach: f64,
    /// Held by static friction: the vertex moves with the obstacle (all three directions
    /// held) instead of sliding on it.
    pub stick: bool,
}

/// The slide of a vertex whose free-solve end is `x` with velocity `v` (time `t1`): the one
/// obstacle it is within `skin` of, if exactly one.
pub fn classify(
    obstacles: &[Obstacle],
    t1: f64,
    skin: f64,
    x: &Vector3<f64>,
    v: &Vector3<f64>,
) -> Option<Slide> {
    let mut found = None;
    for (k, o) in obstacles.iter().enumerate() {
        let q = o.proximity(t1, x);
        if q.distance.is_nan() || q.distance >= skin {
            continue;
        }
        if found.is_some() {
            return None;
        }
        let u = o.path.point_velocity(t1, x);
        found = Some(Slide {
            obstacle: k,
            normal: q.normal,
            approach: (-(v - u).dot(&q.normal)).max(0.0),
            stick: false,
        });
    }
    found.filter(|s| s.normal.iter().all(|c| c.is_finite()))
}

/// Kinetic Coulomb friction on a vertex that slid on `s.obstacle` in a step ending at `t1`
/// with a normal impulse per unit mass `dvn` (m/s): its velocity `v` relative to the obstacle
/// loses up to `μ dvn` of its tangential part (the position is the solve's: moving it after
/// the solve would strain its neighbours, which the solve did not see). Returns true when
/// friction stopped it (relative to the obstacle).
pub fn apply_friction(
    obstacles: &[Obstacle],
    s: &Slide,
    t1: f64,
    dvn: f64,
    x: &Vector3<f64>,
    v: &mut Vector3<f64>,
) -> bool {
    let Some(o) = obstacles.get(s.obstacle) else {
        return false;
    };
    let u = o.path.point_velocity(t1, x);
    let rel = *v - u;
    let n = s.normal;
    let tangential = rel - n * rel.dot(&n);
    let f = friction_factor(o.friction * dvn.max(0.0), tangential.norm());
    *v -= tangential * (1.0 - f);
    f == 0.0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ground(friction: f64) -> Obstacle {
        Obstacle::plane(
            "ground",
            Vector3::zeros(),
            Vector3::new(0.0, 1.0, 0.0),
            friction,
        )
        .unwrap()
    }

    #[test]
    fn a_vertex_on_one_obstacle_slides_on_its_normal_and_friction_slows_it() {
        let obstacles = [ground(0.5)];
        let x = Vector3::new(0.3, -0.01, 0.0);
        let v = Vector3::new(2.0, -1.0, 0.0);
        let s = classify(&obstacles, 0.0, 1e-6, &x, &v).unwrap();
        assert_eq!(s.obstacle, 0);
        assert!((s.normal - Vector3::new(0.0, 1.0, 0.0)).norm() < 1e-15);
        assert!((s.approach - 1.0).abs() < 1e-15);
        assert!(!s.stick);
        // Kinetic friction takes μ dvn = 0.5 m/s off a 2 m/s slide; the position stays.
        let x1 = Vector3::new(0.3, 0.0, 0.0);
        let mut v1 = Vector3::new(2.0, 0.0, 0.0);
        assert!(!apply_friction(&obstacles, &s, 0.0, 1.0, &x1, &mut v1));
        assert!((v1 - Vector3::new(1.5, 0.0, 0.0)).norm() < 1e-12);
        // A slow slide stops; without a normal impulse nothing slows it.
        let mut v2 = Vector3::new(0.2, 0.0, 0.1);
        assert!(apply_friction(&obstacles, &s, 0.0, 1.0, &x1, &mut v2));
        assert!(v2.norm() < 1e-15);
        let mut v3 = Vector3::new(0.2, 0.0, 0.1);
        assert!(!apply_friction(&obstacles, &s, 0.0, 0.0, &x1, &mut v3));
        assert_eq!(v3, Vector3::new(0.2, 0.0, 0.1));
    }

    #[test]
    fn a_vertex_between_two_obstacles_or_away_from_all_does_not_slide() {
        let ceiling = Obstacle::plane(
            "ceiling",
            Vector3::new(0.0, 0.02, 0.0),
            Vector3::new(0.0, -1.0, 0.0),
            0.0,
        )
        .unwrap();
        let obstacles = [ground(0.0), ceiling];
        let v = Vector3::zeros();
        let squeezed = Vector3::new(0.0, 0.01, 0.0);
        assert_eq!(classify(&obstacles, 0.0, 0.02, &squeezed, &v), None);
        let free = Vector3::new(0.0, 0.01, 0.0);
        assert_eq!(classify(&obstacles[..1], 0.0, 1e-3, &free, &v), None);
    }
}
