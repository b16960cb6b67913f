//! When in a step an obstacle contact began, for splitting the step there.
//!
//! The contact hold ([`super::Contact::hold_obstacle_contacts`]) keeps a touching vertex on
//! its projected velocity for the whole step: a vertex that began the step a gap `g` above an
//! obstacle stops there instead of reaching it (placing it on the obstacle puts energy into
//! the impact). At a large step and a high speed the gap is visible: a box thrown at 30 m/s
//! from 5 cm above the ground at dt = 10 ms stops 5 cm above it. The world can instead take
//! the step in two parts, free until the contact began and held after it (Mirtich's
//! time-of-impact stepping, with one split per level): this module estimates that time.
//!
//! Per held vertex `i`, with `d⁰ = φ(t₀, x⁰ᵢ) − skin` and `d¹ = φ(t₁, x¹ᵢ) − skin` (`φ` the
//! smallest signed distance to any obstacle at that time, `x¹` the end of the free solve), the
//! path is taken as straight in distance, so contact began at the fraction
//! `τᵢ = d⁰ / (d⁰ − d¹)` of the step. Only vertices that began further than `min_gap` away and
//! ended inside count; the split is at the earliest of them. No allocation.

use super::obstacle::Obstacle;
use nalgebra::Vector3;

/// A held vertex whose start gap exceeds this share of its body's mean surface edge asks
/// for a split (a smaller gap is within what the next steps close unseen).
pub const SPLIT_GAP: f64 = 0.25;

/// A split is not made closer than this to either end of the step (a fraction of it).
pub const MIN_FRACTION: f64 = 0.05;

/// Smallest signed distance from `p` to any obstacle at time `t`, less `skin`.
fn gap(obstacles: &[Obstacle], t: f64, p: &Vector3<f64>, skin: f64) -> f64 {
    obstacles
        .iter()
        .map(|o| o.proximity(t, p).distance)
        .fold(f64::INFINITY, f64::min)
        - skin
}

/// The fraction of the step `[t0, t0 + dt]` at which the earliest of `held` vertices that
/// began more than `min_gap` from the obstacles reached them (module notes), clamped to
/// `[MIN_FRACTION, 1 − MIN_FRACTION]`; `None` when no held vertex began that far away.
#[allow(clippy::too_many_arguments)]
pub fn impact_fraction(
    obstacles: &[Obstacle],
    t0: f64,
    dt: f64,
    skin: f64,
    held: &[u32],
    x0: &[Vector3<f64>],
    x_free: &[Vector3<f64>],
    min_gap: f64,
) -> Option<f64> {
    let mut earliest: Option<f64> = None;
    for &i in held {
        let i = i as usize;
        let d0 = gap(obstacles, t0, &x0[i], skin);
        // (NaN distances count as no gap.)
        if d0.is_nan() || d0 <= min_gap {
            continue;
        }
        let d1 = gap(obstacles, t0 + dt, &x_free[i], skin);
        if d1.is_nan() || d1 >= 0.0 {
            // Passed through a thin obstacle and out of it: the path test caught it, the
            // distances say nothing of when.
            continue;
        }
        let tau = d0 / (d0 - d1);
        earliest = Some(earliest.map_or(tau, |e: f64| e.min(tau)));
    }
    earliest.map(|t| t.clamp(MIN_FRACTION, 1.0 - MIN_FRACTION))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_vertex_falling_onto_the_ground_met_it_where_the_distance_crossed_zero() {
        let ground = Obstacle::plane("ground", Vector3::zeros(), Vector3::y(), 0.0).unwrap();
        let obstacles = [ground];
        // Vertex 0: from 0.05 m above to 0.25 m below (30 m/s for 10 ms): τ = 1/6.
        // Vertex 1: started touching (gap below min_gap): does not count.
        // Vertex 2: from 0.2 m above to 0.1 m below: τ = 2/3, later than vertex 0.
        let x0 = [
            Vector3::new(0.0, 0.05, 0.0),
            Vector3::new(1.0, 1e-4, 0.0),
            Vector3::new(2.0, 0.2, 0.0),
        ];
        let x1 = [
            Vector3::new(0.0, -0.25, 0.0),
            Vector3::new(1.0, -0.3, 0.0),
            Vector3::new(2.0, -0.1, 0.0),
        ];
        let tau = impact_fraction(&obstacles, 0.0, 0.01, 0.0, &[0, 1, 2], &x0, &x1, 1e-3);
        assert!((tau.unwrap() - 1.0 / 6.0).abs() < 1e-12, "{tau:?}");
        let tau = impact_fraction(&obstacles, 0.0, 0.01, 0.0, &[1, 2], &x0, &x1, 1e-3);
        assert!((tau.unwrap() - 2.0 / 3.0).abs() < 1e-12, "{tau:?}");
        assert_eq!(
            impact_fraction(&obstacles, 0.0, 0.01, 0.0, &[1], &x0, &x1, 1e-3),
            None
        );
        // A vertex that barely starts above and goes deep: clamped to MIN_FRACTION.
        let x0 = [Vector3::new(0.0, 2e-3, 0.0)];
        let x1 = [Vector3::new(0.0, -10.0, 0.0)];
        let tau = impact_fraction(&obstacles, 0.0, 0.01, 0.0, &[0], &x0, &x1, 1e-3);
        assert_eq!(tau, Some(MIN_FRACTION));
    }
}
