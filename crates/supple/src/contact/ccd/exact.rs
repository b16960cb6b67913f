//! Exact continuous collision detection for linear trajectories.
//!
//! With `p_k(s) = x0[k] + s (x1[k] − x0[k])`, the four points of a vertex–face or edge–edge
//! pair are coplanar where the cubic `f(s) = det(p1 − p0, p2 − p0, p3 − p0)` vanishes
//! (Provot 1997; Bridson, Fedkiw & Anderson 2002). Its Bernstein coefficients on `[0, 1]` are
//! taken directly from the blossom of the determinant (each a determinant of actual edge
//! vectors at s = 0 and s = 1), which is stable and translation invariant. The roots are
//! isolated between the roots of `f'` (a quadratic), where `f` is monotone, and each
//! sign-changing bracket is bisected to the resolution of `f64`; the critical points and the
//! ends where `|f|` is at rounding level are candidates too (grazing double roots, starting or
//! ending in the plane). The candidates are visited in increasing time and the first one at
//! which the feature distance is within `eta` is the contact.
//!
//! What counts as rounding noise is decided per Bernstein coefficient, from the sizes of the
//! vectors in that coefficient's own triple products ([`coplanarity_noise`]). (A single
//! tolerance `64 ε l³` from the longest edge vector `l` over the step made every coefficient
//! "noise" as soon as one point moved far — an exploded body, or a body 10⁹ times larger than
//! the other — so the pair went to the coplanar-throughout search with a Lipschitz constant of
//! that far motion, whose resolution `10⁻¹⁰ size / lip` asked for ~10⁹ distance evaluations:
//! issue 12's hang.) That search is also capped at [`MAX_EVALS`] evaluations; at the cap the
//! pair is reported conservatively (see [`super::Outcome`]).

use super::{
    all_finite, bernstein3, make_hit, narrow3, triple, Bracket, Hit, Outcome, Pair, BISECT_STEPS,
    V3,
};

/// A coefficient below `F_REL_TOL` times the magnitude of its triple products is rounding
/// noise (see [`coplanarity_noise`]).
const F_REL_TOL: f64 = 64.0 * f64::EPSILON;
/// Distances are compared with `eta + D_REL_TOL · size` (`size` the extent of the motion).
const D_REL_TOL: f64 = 1e-10;
/// Deepest bisection of the distance search when the points stay coplanar throughout.
const MAX_DEPTH: usize = 60;
/// Most distance evaluations of that search per pair. A search that needs more is one where
/// the distance stays within `lip · width` of the threshold over a long stretch at a width
/// near its resolution — relative motion far larger than the distance, for which the answer
/// "they may meet from here on" is the only one worth the work.
const MAX_EVALS: usize = 1024;

/// Points: p0 the vertex, (p1,p2,p3) the triangle. Linear trajectories
/// `p_k(s) = x0[k] + s (x1[k] − x0[k])`.
///
/// `eta` (≥ 0; negative or NaN counts as 0) is the safe tolerance: a contact is reported at
/// the earliest coplanarity time at which the vertex is within `eta` of the triangle (the
/// triangle grown by `eta`, plus a rounding allowance of 10⁻¹⁰ of the configuration's size).
/// Closeness at s = 0 or s = 1 without coplanarity is not a contact; a start in the plane is
/// (see the [module docs](super)). When the four points stay coplanar throughout the step
/// (to rounding), the earliest time within `eta` is found by a bisection search on the
/// distance that uses its Lipschitz bound (the largest relative speed of the two features'
/// points), so even a brief visit is not missed (to 10⁻¹⁰ of the size).
/// `None`: no contact, or non-finite input.
///
/// The work is bounded: a coplanar-throughout search that reaches its bound (1024 distance
/// evaluations) returns a conservative contact at the earliest time it could not clear.
pub fn vertex_face_exact(x0: &[V3; 4], x1: &[V3; 4], eta: f64) -> Option<Hit> {
    earliest(Pair::VertexFace, x0, x1, eta).hit
}

/// [`vertex_face_exact`], telling whether the search reached its bound.
pub(crate) fn vertex_face_exact_outcome(x0: &[V3; 4], x1: &[V3; 4], eta: f64) -> Outcome {
    earliest(Pair::VertexFace, x0, x1, eta)
}

/// Edges (p0,p1) and (p2,p3), linear trajectories.
///
/// As [`vertex_face_exact`], with the segment–segment distance at the coplanarity times.
/// Edges that stay parallel (hence coplanar) throughout are handled by the distance search.
pub fn edge_edge_exact(x0: &[V3; 4], x1: &[V3; 4], eta: f64) -> Option<Hit> {
    earliest(Pair::EdgeEdge, x0, x1, eta).hit
}

/// [`edge_edge_exact`], telling whether the search reached its bound.
pub(crate) fn edge_edge_exact_outcome(x0: &[V3; 4], x1: &[V3; 4], eta: f64) -> Outcome {
    earliest(Pair::EdgeEdge, x0, x1, eta)
}

/// Bernstein coefficients on `[0, 1]` of `f(s) = det(d1(s), d2(s), d3(s))` with
/// `dk(s) = (1 − s) a[k] + s b[k]`: the blossom of the determinant at `i` ones and `3 − i`
/// zeros, `B_i = mean of det(·,·,·)` over the `C(3, i)` ways to take `i` arguments from `b`.
fn coplanarity_bernstein(a: &[V3; 3], b: &[V3; 3]) -> [f64; 4] {
    [
        triple(&a[0], &a[1], &a[2]),
        (triple(&b[0], &a[1], &a[2]) + triple(&a[0], &b[1], &a[2]) + triple(&a[0], &a[1], &b[2]))
            / 3.0,
        (triple(&a[0], &b[1], &b[2]) + triple(&b[0], &a[1], &b[2]) + triple(&b[0], &b[1], &a[2]))
            / 3.0,
        triple(&b[0], &b[1], &b[2]),
    ]
}

/// A bound on the rounding error of each coefficient of [`coplanarity_bernstein`]: the same
/// blossom with every triple product `det(u, v, w)` replaced by `F_REL_TOL |u| |v| |w|` (a
/// computed triple product is exact to a small multiple of `ε |u| |v| |w|`; Higham, *Accuracy
/// and Stability of Numerical Algorithms*, 2nd ed., §3.1, with a wide margin). Non-negative
/// Bernstein coefficients, so `bernstein3(noise, s)` bounds the noise of `f(s)` (each `f(s)` is
/// a convex combination of the coefficients).
fn coplanarity_noise(a: &[V3; 3], b: &[V3; 3]) -> [f64; 4] {
    let na = a.map(|v| v.norm());
    let nb = b.map(|v| v.norm());
    [
        na[0] * na[1] * na[2],
        (nb[0] * na[1] * na[2] + na[0] * nb[1] * na[2] + na[0] * na[1] * nb[2]) / 3.0,
        (na[0] * nb[1] * nb[2] + nb[0] * na[1] * nb[2] + nb[0] * nb[1] * na[2]) / 3.0,
        nb[0] * nb[1] * nb[2],
    ]
    .map(|t| F_REL_TOL * t)
}

/// The roots in the open interval (0, 1) of the derivative of the cubic with Bernstein
/// coefficients `c`, sorted; the second value is how many there are.
fn critical_points(c: &[f64; 4]) -> ([f64; 2], usize) {
    // f'(s)/3 = d0 (1−s)² + 2 d1 s(1−s) + d2 s², d_i = c_{i+1} − c_i; in power form A s² + B s + C.
    let (d0, d1, d2) = (c[1] - c[0], c[2] - c[1], c[3] - c[2]);
    let (qa, qb, qc) = (d0 - 2.0 * d1 + d2, 2.0 * (d1 - d0), d0);
    let scale = qa.abs() + qb.abs() + qc.abs();
    if scale <= 0.0 || scale.is_nan() {
        return ([0.0; 2], 0);
    }
    let mut roots = [0.0; 2];
    let mut n = 0;
    let mut push = |r: f64| {
        if r > 0.0 && r < 1.0 && (n == 0 || r != roots[0]) {
            roots[n] = r;
            n += 1;
        }
    };
    if qa.abs() <= 1e-14 * scale {
        if qb != 0.0 {
            push(-qc / qb);
        }
    } else {
        let disc = qb * qb - 4.0 * qa * qc;
        if disc >= 0.0 {
            // Numerically stable pair of roots.
            let q = -0.5 * (qb + disc.sqrt().copysign(qb));
            push(q / qa);
            if q != 0.0 {
                push(qc / q);
            }
        } else if disc > -1e-12 * (qb * qb + (4.0 * qa * qc).abs()) {
            push(-qb / (2.0 * qa)); // a double root lost to rounding
        }
    }
    if n == 2 && roots[1] < roots[0] {
        roots.swap(0, 1);
    }
    (roots, n)
}

/// Positions at `s` of the linear trajectories from `a` to `b`.
fn lerp(a: &[V3; 4], b: &[V3; 4], s: f64) -> [V3; 4] {
    std::array::from_fn(|k| a[k] + s * (b[k] - a[k]))
}

/// The shared driver of [`vertex_face_exact`] and [`edge_edge_exact`].
fn earliest(pair: Pair, x0: &[V3; 4], x1: &[V3; 4], eta: f64) -> Outcome {
    earliest_looking(pair, x0, x1, eta, &LOOK_AFTER)
}

/// [`earliest`], looking at the distance after `looks` bisection steps of each root's
/// bracket (see [`coplanar_root`]; none: every root bisected to the end).
fn earliest_looking(pair: Pair, x0: &[V3; 4], x1: &[V3; 4], eta: f64, looks: &[usize]) -> Outcome {
    if !all_finite(x0) || !all_finite(x1) {
        return Outcome::exact(None);
    }
    let eta = if eta > 0.0 { eta } else { 0.0 };
    // Everything relative to p0 at s = 0: translation invariance.
    let origin = x0[0];
    let a: [V3; 4] = std::array::from_fn(|k| x0[k] - origin);
    let b: [V3; 4] = std::array::from_fn(|k| x1[k] - origin);
    let rate: [V3; 4] = std::array::from_fn(|k| b[k] - a[k]);
    let size = a
        .iter()
        .chain(b.iter())
        .fold(0.0f64, |m, p| m.max(p.norm()));
    let threshold = eta + D_REL_TOL * size;

    let ea: [V3; 3] = std::array::from_fn(|k| a[k + 1] - a[0]);
    let eb: [V3; 3] = std::array::from_fn(|k| b[k + 1] - b[0]);
    let c = coplanarity_bernstein(&ea, &eb);
    let noise = coplanarity_noise(&ea, &eb);

    let hit_within = |s: f64, threshold: f64| -> Option<Hit> {
        let p = lerp(&a, &b, s);
        let (d, w) = pair.closest(&p);
        (d <= threshold).then(|| make_hit(pair, s, &p, w, &a, &rate, size))
    };
    let hit_at = |s: f64| hit_within(s, threshold);

    if c.iter().zip(&noise).all(|(ci, ni)| ci.abs() <= *ni) {
        // Coplanar throughout: search the distance, Lipschitz with the largest relative speed
        // of a point of one feature and a point of the other.
        let lip = pair.lipschitz(&rate);
        let slack = D_REL_TOL * size;
        let dist = |s: f64| pair.closest(&lerp(&a, &b, s)).0;
        return match earliest_within(dist, lip, threshold, slack) {
            Search::Clear => Outcome::exact(None),
            Search::Found(s) => Outcome::exact(hit_within(s, threshold + slack)),
            Search::BoundedOut(s) => Outcome {
                hit: hit_within(s, f64::INFINITY),
                bounded_out: true,
            },
        };
    }

    // A bracket of a root is dropped early when the features are too far apart anywhere in
    // it for the distance at the root to be within `threshold` (see `coplanar_root`): the
    // distance is Lipschitz in `s` with the largest relative speed of a point of one feature
    // and a point of the other; `D_REL_TOL · size` covers the rounding of the distances.
    let lip = std::cell::OnceCell::new();
    let far_from = |lo: f64, hi: f64| -> bool {
        let lip = *lip.get_or_init(|| pair.lipschitz(&rate));
        let (d, _) = pair.closest(&lerp(&a, &b, 0.5 * (lo + hi)));
        d - lip * (hi - lo) > threshold + D_REL_TOL * size
    };

    // Breakpoints 0, critical points, 1: f is monotone between consecutive ones.
    let (crit, n_crit) = critical_points(&c);
    let mut bp = [0.0, 1.0, 1.0, 1.0];
    bp[1..=n_crit].copy_from_slice(&crit[..n_crit]);
    let n_bp = n_crit + 2;
    let mut fv = [0.0; 4];
    for (f, s) in fv.iter_mut().zip(bp.iter()).take(n_bp) {
        *f = bernstein3(&c, *s);
    }
    for j in 0..n_bp {
        if fv[j].abs() <= bernstein3(&noise, bp[j]) {
            if let Some(hit) = hit_at(bp[j]) {
                return Outcome::exact(Some(hit));
            }
        }
        if j + 1 < n_bp && fv[j] * fv[j + 1] < 0.0 {
            let Some(root) = coplanar_root(&c, bp[j], bp[j + 1], fv[j], looks, &far_from) else {
                continue;
            };
            if let Some(hit) = hit_at(root) {
                return Outcome::exact(Some(hit));
            }
        }
    }
    Outcome::exact(None)
}

/// Bisection steps before each early look at the distance in [`coplanar_root`].
const LOOK_AFTER: [usize; 2] = [6, 10];

/// The root [`super::bisect3`] finds in `[lo, hi]`, or `None` when `far_from(lo′, hi′)`
/// tells, at a bracket `[lo′, hi′]` of it after each of the `looks` (by default 6 and then
/// 10 more steps), that no time in that bracket can be within the contact distance. Most
/// sign changes of a resting or sliding contact are a vertex crossing the plane of a face it
/// is nowhere near; bisecting those to the resolution of `f64` was most of the narrow phase's
/// time on `contact_10k` (issue 18). A root that is not dropped is bitwise the one of the
/// whole bisection.
fn coplanar_root(
    c: &[f64; 4],
    lo: f64,
    hi: f64,
    f_lo: f64,
    looks: &[usize],
    far_from: &impl Fn(f64, f64) -> bool,
) -> Option<f64> {
    let mut bracket = Bracket { lo, hi };
    let mut done = 0;
    for &look in looks {
        bracket = narrow3(c, bracket.lo, bracket.hi, f_lo, look);
        done += look;
        if bracket.lo == bracket.hi {
            return Some(bracket.lo);
        }
        if far_from(bracket.lo, bracket.hi) {
            return None;
        }
    }
    Some(
        narrow3(
            c,
            bracket.lo,
            bracket.hi,
            f_lo,
            BISECT_STEPS.saturating_sub(done),
        )
        .lo,
    )
}

/// What [`earliest_within`] found.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Search {
    /// No time within the threshold.
    Clear,
    /// The earliest time within `threshold + slack`.
    Found(f64),
    /// The work bound was reached; every time before this one was cleared.
    BoundedOut(f64),
}

/// The earliest `s ∈ [0, 1]` with `dist(s) ≤ threshold + slack`, for a `dist` that is
/// Lipschitz in `s` with constant `lip`. Depth-first, left-first bisection of `[0, 1]`; a span
/// `[a, b]` is discarded when the bound `min dist ≥ (d(a) + d(b) − lip (b − a)) / 2` exceeds
/// `threshold`, and the first span kept at width `slack / lip` is the answer (its start `a`
/// has `d(a) ≤ threshold + slack`). So no time with `dist ≤ threshold` is missed, and at most
/// `log₂(lip / slack)` levels are visited.
///
/// The number of spans visited is not bounded by the depth alone: where `dist` stays within
/// `lip · w / 2` of the threshold, every span of width `w` survives, so a long stretch close
/// to the threshold costs up to `lip / slack` evaluations. After [`MAX_EVALS`] evaluations (or
/// at [`MAX_DEPTH`]) the search stops with [`Search::BoundedOut`] at the start of the span it
/// is on: the spans to its left were all cleared, so that is the earliest possible contact.
fn earliest_within(dist: impl Fn(f64) -> f64, lip: f64, threshold: f64, slack: f64) -> Search {
    let d0 = dist(0.0);
    if d0 <= threshold + slack {
        return Search::Found(0.0);
    }
    let min_width = if lip > 0.0 { slack / lip } else { 1.0 };
    // (a, b, d(a), d(b), depth)
    let mut stack = [(0.0, 1.0, d0, dist(1.0), 0usize); MAX_DEPTH + 2];
    let mut top = 1;
    let mut evals = 2;
    while top > 0 {
        top -= 1;
        let (a, b, da, db, depth) = stack[top];
        if 0.5 * (da + db - lip * (b - a)) > threshold {
            continue;
        }
        if b - a <= min_width {
            return Search::Found(a);
        }
        if evals >= MAX_EVALS || depth >= MAX_DEPTH || top + 2 > stack.len() {
            return Search::BoundedOut(a);
        }
        let m = 0.5 * (a + b);
        let dm = dist(m);
        evals += 1;
        stack[top] = (m, b, dm, db, depth + 1);
        stack[top + 1] = (a, m, da, dm, depth + 1);
        top += 2;
    }
    Search::Clear
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cubic(r: [f64; 3], k: f64) -> [f64; 4] {
        // Bernstein coefficients of k (s − r0)(s − r1)(s − r2) via the blossom.
        let bl = |u: [f64; 3]| k * (u[0] - r[0]) * (u[1] - r[1]) * (u[2] - r[2]);
        [
            bl([0.0; 3]),
            (bl([1.0, 0.0, 0.0]) + bl([0.0, 1.0, 0.0]) + bl([0.0, 0.0, 1.0])) / 3.0,
            (bl([0.0, 1.0, 1.0]) + bl([1.0, 0.0, 1.0]) + bl([1.0, 1.0, 0.0])) / 3.0,
            bl([1.0; 3]),
        ]
    }

    #[test]
    fn critical_points_of_known_cubics() {
        // f = (s − 0.2)(s − 0.5)(s − 0.8): f' = 3s² − 3s + 0.66, roots 0.5 ± √(0.03)
        let (r, n) = critical_points(&cubic([0.2, 0.5, 0.8], 1.0));
        assert_eq!(n, 2);
        let h = 0.03f64.sqrt();
        assert!((r[0] - (0.5 - h)).abs() < 1e-14 && (r[1] - (0.5 + h)).abs() < 1e-14);
        // triple root: f' has a double root at 0.4
        let (r, n) = critical_points(&cubic([0.4, 0.4, 0.4], -2.0));
        assert!(n >= 1 && (r[0] - 0.4).abs() < 1e-6, "{r:?} {n}");
        // linear function: no critical point
        let (_, n) = critical_points(&[1.0, 0.0, -1.0, -2.0]);
        assert_eq!(n, 0);
    }

    #[test]
    fn coplanarity_bernstein_matches_determinant() {
        let a = [
            V3::new(1.0, 0.2, 0.0),
            V3::new(0.1, 1.0, 0.3),
            V3::new(0.0, 0.4, 1.0),
        ];
        let b = [
            V3::new(0.5, -0.2, 0.7),
            V3::new(-0.3, 0.8, 0.1),
            V3::new(0.9, 0.4, -1.0),
        ];
        let c = coplanarity_bernstein(&a, &b);
        for i in 0..=10 {
            let s = i as f64 / 10.0;
            let d: [V3; 3] = std::array::from_fn(|k| a[k] + s * (b[k] - a[k]));
            let direct = triple(&d[0], &d[1], &d[2]);
            assert!((bernstein3(&c, s) - direct).abs() < 1e-14, "{s}");
        }
    }

    /// Issue 12's hang: with one point of a pair at ~8.7e5 m, the old single tolerance
    /// `64 ε l³` (l the longest edge vector) exceeded every coefficient of the coplanarity
    /// cubic, so the pair went to the coplanar-throughout search with a Lipschitz constant of
    /// ~8.7e5 and a resolution of 10⁻¹⁰, ~10⁹ distance evaluations. Per coefficient, the
    /// cubic is far above its rounding noise; the root is found exactly.
    #[test]
    fn a_far_point_does_not_make_a_pair_coplanar_throughout() {
        let (x0, x1, eta) = super::super::far_vertex_case();
        let a: [V3; 4] = std::array::from_fn(|k| x0[k] - x0[0]);
        let b: [V3; 4] = std::array::from_fn(|k| x1[k] - x0[0]);
        let ea: [V3; 3] = std::array::from_fn(|k| a[k + 1] - a[0]);
        let eb: [V3; 3] = std::array::from_fn(|k| b[k + 1] - b[0]);
        let c = coplanarity_bernstein(&ea, &eb);
        let noise = coplanarity_noise(&ea, &eb);
        let l = ea.iter().chain(&eb).fold(0.0f64, |m, e| m.max(e.norm()));
        assert!(
            c.iter().all(|ci| ci.abs() <= F_REL_TOL * l * l * l),
            "the old rule"
        );
        for (ci, ni) in c.iter().zip(&noise) {
            assert!(ci.abs() > 1e3 * ni, "{c:?} {noise:?}");
        }
        let o = earliest(Pair::VertexFace, &x0, &x1, eta);
        assert!(!o.bounded_out);
        let t = o.hit.expect("the vertex crosses the face").t;
        let (lo, hi) = super::super::FAR_VERTEX_ROOT;
        assert!(lo <= t && t <= hi, "{t}");
    }

    /// A pair that stays coplanar while one point flies off, with the vertex a hair outside
    /// the threshold for the whole step: the Lipschitz search cannot prune before its
    /// resolution (~10⁹ spans). It stops at its bound and reports the pair at the earliest
    /// time it could not clear, just after s = 0 (it cleared only the first few spans).
    #[test]
    fn a_coplanar_search_that_cannot_prune_stops_at_its_bound() {
        let eta = 1e-3;
        let far = 1e9;
        // The size is 1e9, so threshold = eta + 0.1 and slack = 0.1.
        let gap = eta + 0.1 + 0.2;
        let x0 = [
            V3::new(0.5, -gap, 0.0),
            V3::new(0.0, 0.0, 0.0),
            V3::new(1.0, 0.0, 0.0),
            V3::new(0.0, 1.0, 0.0),
        ];
        let mut x1 = x0;
        x1[3] = V3::new(0.0, far, 0.0);
        let calls = std::cell::Cell::new(0usize);
        let dist = |s: f64| {
            calls.set(calls.get() + 1);
            Pair::VertexFace.closest(&lerp(&x0, &x1, s)).0
        };
        let lip = far;
        let slack = D_REL_TOL * far;
        let Search::BoundedOut(a) = earliest_within(dist, lip, eta + slack, slack) else {
            panic!("the search did not stop at its bound");
        };
        assert!((0.0..1e-6).contains(&a), "{a}");
        assert!(calls.get() <= MAX_EVALS, "{}", calls.get());
        let o = earliest(Pair::VertexFace, &x0, &x1, eta);
        assert!(o.bounded_out);
        let hit = o.hit.expect("a conservative contact");
        assert!((0.0..1e-6).contains(&hit.t), "{hit:?}");
        // Its normal points from the triangle towards where the vertex started (−y).
        assert!(
            (hit.normal - V3::new(0.0, -1.0, 0.0)).norm() < 1e-9,
            "{hit:?}"
        );
    }

    #[test]
    fn earliest_within_finds_a_short_dip() {
        // |s − 0.5031| ≤ 0.001 first at s = 0.5021; Lipschitz constant 1.
        let dist = |s: f64| (s - 0.5031).abs();
        let Search::Found(t) = earliest_within(dist, 1.0, 0.001, 1e-12) else {
            panic!("not found");
        };
        assert!(t <= 0.5021 && t > 0.5021 - 2e-12, "{t}");
        // a dip to 0.0005 above the threshold is not a contact
        let dip = |s: f64| 0.0015 + (s - 0.7).abs();
        assert_eq!(earliest_within(dip, 1.0, 0.001, 1e-12), Search::Clear);
        // far apart and barely moving: two evaluations decide
        let calls = std::cell::Cell::new(0);
        let far = |s: f64| {
            calls.set(calls.get() + 1);
            1.0 + 0.01 * s
        };
        assert_eq!(earliest_within(far, 0.01, 0.001, 1e-12), Search::Clear);
        assert_eq!(calls.get(), 2);
    }

    /// Dropping a root's bracket early (`coplanar_root`) changes no outcome: on 4000 random
    /// vertex–face and edge–edge pairs crossing each other's planes near and far from the
    /// features, bitwise the hits of bisecting every root to the end.
    #[test]
    fn looking_early_at_the_distance_keeps_every_outcome() {
        use crate::fem::material::test_support::Lcg;
        let mut rng = Lcg(2026);
        let (mut hits, mut crossings_without_hit) = (0, 0);
        for case in 0..4000 {
            let pair = if case % 2 == 0 {
                Pair::VertexFace
            } else {
                Pair::EdgeEdge
            };
            // Points spread over a few units in x and z, crossing y = 0 by up to `depth`.
            let depth = 10f64.powf(-2.0 - 3.0 * rng.uniform().abs());
            let mut x0 = [V3::zeros(); 4];
            let mut x1 = [V3::zeros(); 4];
            for k in 0..4 {
                let side = if pair.first_feature(k) { 1.0 } else { -0.2 };
                let p = V3::new(
                    2.0 * rng.uniform(),
                    side * depth * rng.uniform().abs(),
                    2.0 * rng.uniform(),
                );
                x0[k] = p;
                x1[k] = p + V3::new(
                    0.01 * rng.uniform(),
                    -side * 2.0 * depth * rng.uniform().abs(),
                    0.01 * rng.uniform(),
                );
            }
            let eta = 0.05 * rng.uniform().abs();
            let early = earliest_looking(pair, &x0, &x1, eta, &LOOK_AFTER);
            let full = earliest_looking(pair, &x0, &x1, eta, &[]);
            assert_eq!(early, full, "case {case}: {pair:?} {x0:?} {x1:?} {eta}");
            if full.hit.is_some() {
                hits += 1;
            } else {
                let ea: [V3; 3] = std::array::from_fn(|k| x0[k + 1] - x0[0]);
                let eb: [V3; 3] = std::array::from_fn(|k| x1[k + 1] - x1[0]);
                let c = coplanarity_bernstein(&ea, &eb);
                if c[0] * c[3] < 0.0 {
                    crossings_without_hit += 1;
                }
            }
        }
        println!("{hits} hits, {crossings_without_hit} crossings far from the features");
        assert!(hits > 200, "{hits}");
        assert!(crossings_without_hit > 200, "{crossings_without_hit}");
    }
}
