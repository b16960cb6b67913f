//! Additive continuous collision detection (ACCD) of Li, Kaufman & Jiang 2021,
//! *Codimensional Incremental Potential Contact* (ACM TOG 40(4)), §"Additive CCD",
//! Algorithm 1: the step filter of an IPC line search.
//!
//! Given the start positions `x_i` of a contact pair (point–triangle, edge–edge, point–edge,
//! point–point, or a point against a static signed-distance field) and a linear displacement
//! `Δx_i` of each vertex, every function here returns the largest step fraction
//! `t ∈ [0, t_max]` it can certify: along `x_i + τ Δx_i`, `τ ∈ [0, t]`, the pair's distance
//! stays strictly above the minimum separation `ξ` (hence above 0).
//!
//! # The algorithm (Algorithm 1)
//!
//! 1. *Relative motion*: the mean `p̄` of the pair's vertex displacements is subtracted from
//!    each, `p_i = Δx_i − p̄`. Distances are invariant under a common translation, so this
//!    changes nothing along the path, but it shrinks the bound below; a pair that translates
//!    rigidly gets `l_p = 0` and returns `t_max` at once.
//! 2. *Rate bound*: `l_p = max_{i∈A} ‖p_i‖ + max_{j∈B} ‖p_j‖` over the pair's two primitives A
//!    and B (point–triangle: `‖p_p‖ + max_i ‖p_{t_i}‖`; edge–edge:
//!    `max_i ‖p_{a_i}‖ + max_j ‖p_{b_j}‖`). Every point of a primitive moves with a convex
//!    combination of its vertices' velocities, so each candidate distance
//!    `‖Σ_A w_i x_i(τ) − Σ_B w_j x_j(τ)‖` is `l_p`-Lipschitz in τ, and so is their minimum, the
//!    pair distance `d(τ)`.
//! 3. *Additive advancement*: with the current distance `d`, the step
//!    `t_l = (1 − s)(d − ξ)/l_p` cannot bring the pair closer than `ξ + s (d − ξ) > ξ`
//!    (rate bound), so `t ← t + t_l` is certified; repeat from the new distance.
//! 4. *Stop*: with the gap `g = s (d₀ − ξ)` fixed from the start distance `d₀`, the loop ends
//!    (reporting the last certified `t`) as soon as an advancement (other than the first)
//!    lands at a distance with `d − ξ < g`, and reports "no impact" once an advancement
//!    reaches `t_max` with the gap intact.
//!
//! The paper writes `d − ξ` as `(d² − ξ²)/(d + ξ)` because its distance kernels return squared
//! distances; the kernels of [`crate::contact::ccd`] return unsquared distances, so `d − ξ` is
//! used directly (the same quantity). `s` is the paper's `s` (C-IPC uses `s = 0.1`, i.e.
//! advancements of `0.9 (d − ξ)/l_p`); `1 − s` is the "conservative rescaling" of later
//! implementations. Every advancement, the first included, uses the factor `1 − s`.
//!
//! # Return convention and guarantees
//!
//! A plain `f64` `t ∈ [0, t_max]`, never `None`:
//!
//! - `t == t_max`: no impact in `[0, t_max]` (the whole step is allowed);
//! - `0 < t < t_max`: the motion over `[0, t]` keeps `d > ξ`, and at `t` itself
//!   `d(t) − ξ ≥ s (d₀ − ξ)`: a step to `t` leaves at least the fraction `s` of the initial gap;
//!   the pair does come within `ξ + s (d₀ − ξ)` somewhere in `(t, t_max]` (unless the iteration
//!   cap cut the search short, see below);
//! - `t == 0`: the pair starts at `d₀ ≤ ξ` (already in contact, or overlapping; up to a
//!   rounding floor, see below), the input is not finite, or `t_max` is not positive and
//!   finite.
//!
//! Head-on, `t` is close to `(1 − s)` times the exact time at which `d` reaches `ξ` (exactly
//! that fraction when `l_p` equals the actual closing speed). The guarantees hold in exact
//! arithmetic; in floating point they hold up to the rounding of the distance kernels, which
//! the gap `s (d − ξ)` left after each advancement dominates by far unless `d − ξ` is itself
//! at the level of rounding.
//!
//! # Differences from the paper's listing (all on the conservative side)
//!
//! - The last advancement is clamped to `t_max`: the gap test is done at `t_max` itself, so a
//!   distance evaluated *beyond* `t_max` never reports a spurious impact, and `t_max` is only
//!   returned when `d(t_max) − ξ ≥ s (d₀ − ξ)` (the paper returns "no impact" as soon as the
//!   running sum passes `t_c`, whatever the distance at `t_c`).
//! - Positions are evaluated as `x_i + τ p_i` from the start positions, not accumulated step
//!   by step (no drift).
//! - A start distance `d₀ ≤ ξ` returns 0 (the paper assumes `d₀ > ξ`), and so does
//!   `d₀ − ξ ≤ 10⁻¹² · scale`, `scale = max_i ‖x_i‖ + t_max max_i ‖p_i‖` (the size of the
//!   coordinates along the motion): a gap at the level of rounding could let the pair cross
//!   unseen (the gap test cannot see below the kernels' noise). The same floor ends the search
//!   when an advancement lands within it.
//! - At most [`AccdSettings::max_iterations`] advancements; when the cap is reached, the last
//!   certified `t` is returned (conservative). Without a cap the loop ends after at most
//!   `1 + t_max l_p / ((1 − s) s (d₀ − ξ))` advancements, since each one is at least
//!   `(1 − s) g / l_p` long; head-on it ends after two.
//!
//! # Use in a line search (C-IPC)
//!
//! Take the minimum of the returned `t` over all candidate pairs found by a broad phase over
//! the swept boxes of the whole step (inflated by `ξ`), with `t_max = 1` (or the line search's
//! current upper bound), and start the backtracking line search from that `t`; the `s` gap
//! already provides the slack, no extra scaling is needed. C-IPC uses `s = 0.1` and `ξ` = the
//! codimensional thickness (the barrier being a function of `d − ξ`); `ξ = 0` for plain IPC.
//! A pair reported at `t = 0` means the current iterate is already infeasible.

use crate::contact::ccd::{point_segment, point_triangle, segment_segment};
use nalgebra::Vector3;

type V3 = Vector3<f64>;

/// `s` used when [`AccdSettings::s`] is NaN.
const DEFAULT_S: f64 = 0.1;
/// `s` is clamped into `[S_MIN, 1 − S_MIN]`.
const S_MIN: f64 = 1e-6;
/// Distances within `ROUNDING_FLOOR × scale` of `ξ` count as contact, `scale` being the size
/// of the coordinates along the motion (`max ‖x_i‖ + t_max max ‖p_i‖`): below it the
/// rounding of positions and distance kernels could hide a crossing.
const ROUNDING_FLOOR: f64 = 1e-12;

/// Settings of ACCD (Li et al. 2021, Algorithm 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AccdSettings {
    /// `s ∈ (0, 1)`: each advancement closes at most the fraction `1 − s` of the current gap
    /// `d − ξ`, and the search stops once the gap falls below `s (d₀ − ξ)`. Smaller `s` gives
    /// a tighter `t` (≈ `(1 − s)` of the exact impact time head-on) but leaves less room
    /// after the step and takes more advancements. Clamped into `[10⁻⁶, 1 − 10⁻⁶]`; NaN
    /// means 0.1.
    pub s: f64,
    /// Minimum separation `ξ ≥ 0` (a distance, unsquared; C-IPC's thickness). Negative or NaN
    /// is taken as 0.
    pub min_separation: f64,
    /// Cap on the number of advancements (distance evaluations after the first). On reaching
    /// it the last certified `t` is returned, which is conservative but may be far below the
    /// impact time for long grazing motions.
    pub max_iterations: u32,
    /// Upper end of the time interval, usually 1 (the full step). A `t_max` that is not
    /// positive and finite gives 0.
    pub t_max: f64,
}

impl Default for AccdSettings {
    /// `s = 0.1` (C-IPC), `min_separation = 0`, `max_iterations = 10 000`, `t_max = 1`.
    ///
    /// Head-on approaches need two advancements and motions that stay clear a few per
    /// `(d − ξ)/l_p` of travel, so 10 000 is only reached by pairs that slide a very long way
    /// at a tiny distance; for those the returned `t` is still safe.
    fn default() -> Self {
        Self {
            s: DEFAULT_S,
            min_separation: 0.0,
            max_iterations: 10_000,
            t_max: 1.0,
        }
    }
}

/// ACCD of a point `p + τ dp` against a triangle `(t0 + τ dt0, t1 + τ dt1, t2 + τ dt2)`,
/// `τ ∈ [0, t_max]` (Li et al. 2021, Algorithm 1; `l_p = ‖p_p‖ + max_i ‖p_{t_i}‖`).
///
/// Returns the largest certified step fraction `t ∈ [0, t_max]`, `t_max` when no impact;
/// see the [module docs](self) for the exact guarantees.
#[allow(clippy::too_many_arguments)]
pub fn point_triangle_accd(
    p: &V3,
    t0: &V3,
    t1: &V3,
    t2: &V3,
    dp: &V3,
    dt0: &V3,
    dt1: &V3,
    dt2: &V3,
    settings: &AccdSettings,
) -> f64 {
    pair_accd(
        [*p, *t0, *t1, *t2],
        [*dp, *dt0, *dt1, *dt2],
        1,
        |x| point_triangle(&x[0], &x[1], &x[2], &x[3]).0,
        settings,
    )
}

/// ACCD of an edge `(ea0 + τ dea0, ea1 + τ dea1)` against an edge `(eb0 + τ deb0,
/// eb1 + τ deb1)`, `τ ∈ [0, t_max]` (Li et al. 2021, Algorithm 1;
/// `l_p = max_i ‖p_{a_i}‖ + max_j ‖p_{b_j}‖`). Segment–segment distance, so parallel edges
/// are handled like any other pair.
///
/// Returns the largest certified step fraction `t ∈ [0, t_max]`, `t_max` when no impact;
/// see the [module docs](self) for the exact guarantees.
#[allow(clippy::too_many_arguments)]
pub fn edge_edge_accd(
    ea0: &V3,
    ea1: &V3,
    eb0: &V3,
    eb1: &V3,
    dea0: &V3,
    dea1: &V3,
    deb0: &V3,
    deb1: &V3,
    settings: &AccdSettings,
) -> f64 {
    pair_accd(
        [*ea0, *ea1, *eb0, *eb1],
        [*dea0, *dea1, *deb0, *deb1],
        2,
        |x| segment_segment(&x[0], &x[1], &x[2], &x[3]).0,
        settings,
    )
}

/// ACCD of a point `p + τ dp` against an edge `(e0 + τ de0, e1 + τ de1)`, `τ ∈ [0, t_max]`
/// (Li et al. 2021, Algorithm 1, with the mean of the 3 displacements removed and
/// `l_p = ‖p_p‖ + max_i ‖p_{e_i}‖`).
///
/// Returns the largest certified step fraction `t ∈ [0, t_max]`, `t_max` when no impact;
/// see the [module docs](self) for the exact guarantees.
pub fn point_edge_accd(
    p: &V3,
    e0: &V3,
    e1: &V3,
    dp: &V3,
    de0: &V3,
    de1: &V3,
    settings: &AccdSettings,
) -> f64 {
    pair_accd(
        [*p, *e0, *e1],
        [*dp, *de0, *de1],
        1,
        |x| point_segment(&x[0], &x[1], &x[2]).0,
        settings,
    )
}

/// ACCD of a point `p + τ dp` against a point `q + τ dq`, `τ ∈ [0, t_max]` (Li et al. 2021,
/// Algorithm 1; after the mean removal `l_p = ‖dp − dq‖`, the exact closing-speed bound).
///
/// Returns the largest certified step fraction `t ∈ [0, t_max]`, `t_max` when no impact;
/// see the [module docs](self) for the exact guarantees.
pub fn point_point_accd(p: &V3, q: &V3, dp: &V3, dq: &V3, settings: &AccdSettings) -> f64 {
    pair_accd([*p, *q], [*dp, *dq], 1, |x| (x[0] - x[1]).norm(), settings)
}

/// Conservative advancement of a point moving `p + τ dp` against a static shape whose signed
/// distance is `sdf` (negative inside; 1-Lipschitz): the largest `t ∈ [0, t_max]` before the
/// distance reaches `min_separation`, same settings and guarantees as the pair functions
/// (Li et al. 2021, Algorithm 1 with `l_p = ‖dp‖`: nothing to subtract, the shape is static).
///
/// `sdf` need not be exact: any 1-Lipschitz function that is a lower bound of the distance
/// outside the shape keeps the result conservative (with respect to the true distance),
/// while an exact one gives the tightest `t`. A start with `sdf(p) ≤ min_separation`
/// returns 0.
pub fn point_sdf_accd(p: &V3, dp: &V3, sdf: impl Fn(&V3) -> f64, settings: &AccdSettings) -> f64 {
    if !all_finite(&[*p, *dp]) {
        return 0.0;
    }
    let scale = p.norm() + settings.t_max * dp.norm();
    advance(dp.norm(), scale, settings, |t| sdf(&(p + t * dp)))
}

/// Algorithm 1 for a pair of primitives whose vertices are `x[..split]` (primitive A) and
/// `x[split..]` (primitive B), with displacements `dx` and distance `dist`.
fn pair_accd<const N: usize>(
    x: [V3; N],
    dx: [V3; N],
    split: usize,
    dist: impl Fn(&[V3; N]) -> f64,
    settings: &AccdSettings,
) -> f64 {
    if !all_finite(&x) || !all_finite(&dx) {
        return 0.0;
    }
    // Step 1: relative motion.
    let mean = dx.iter().sum::<V3>() / N as f64;
    let rel = dx.map(|d| d - mean);
    // Step 2: bound on the rate of change of the distance.
    let max_norm = |v: &[V3]| v.iter().map(|v| v.norm()).fold(0.0, f64::max);
    let l_p = max_norm(&rel[..split]) + max_norm(&rel[split..]);
    let scale = max_norm(&x) + settings.t_max * max_norm(&rel);
    advance(l_p, scale, settings, |t| {
        let mut at = x;
        for (a, r) in at.iter_mut().zip(&rel) {
            *a += t * r;
        }
        dist(&at)
    })
}

fn all_finite(v: &[V3]) -> bool {
    v.iter().all(|v| v.iter().all(|c| c.is_finite()))
}

/// The loop of Algorithm 1 (steps 3–4 of the module docs): additive advancement of the `l_p`-Lipschitz distance
/// `dist(τ)` from `τ = 0`, with the last step clamped to `t_max` (see the module docs);
/// `scale` is the size of the coordinates along the motion (see [`ROUNDING_FLOOR`]).
fn advance(l_p: f64, scale: f64, settings: &AccdSettings, dist: impl Fn(f64) -> f64) -> f64 {
    let t_max = settings.t_max;
    if !(t_max > 0.0 && t_max.is_finite()) {
        return 0.0;
    }
    let s = if settings.s.is_nan() {
        DEFAULT_S
    } else {
        settings.s.clamp(S_MIN, 1.0 - S_MIN)
    };
    let xi = settings.min_separation.max(0.0); // NaN → 0
    let floor = ROUNDING_FLOOR * scale;
    // false for NaN
    let clear_of_xi = |d: f64| d - xi > floor;
    let d0 = dist(0.0);
    if !clear_of_xi(d0) {
        return 0.0; // already within ξ (or NaN)
    }
    if l_p == 0.0 {
        return t_max; // no relative motion
    }
    if !l_p.is_finite() {
        return 0.0;
    }
    let gap = s * (d0 - xi); // g
    let mut t = 0.0;
    let mut d = d0;
    for _ in 0..settings.max_iterations {
        // The certified advancement from the current distance.
        let t_l = (1.0 - s) * (d - xi) / l_p;
        let last = t + t_l >= t_max;
        let t_next = if last { t_max } else { t + t_l };
        let d_next = dist(t_next);
        // The gap test (skipped on the first advancement, which cannot fail it in
        // exact arithmetic); `d_next − ξ ≤ floor` and NaN can only come from rounding or a
        // bad sdf.
        if !clear_of_xi(d_next) || (t > 0.0 && d_next - xi < gap) {
            break;
        }
        t = t_next;
        if last {
            return t_max; // no impact in [0, t_max]
        }
        d = d_next;
    }
    t
}

#[cfg(test)]
#[path = "accd_tests.rs"]
mod tests;
