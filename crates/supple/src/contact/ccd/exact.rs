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

use super::{all_finite, bernstein3, bisect3, make_hit, triple, Hit, Pair, V3};

/// `|f|` below `F_REL_TOL · l³` (`l` the largest edge vector) is rounding noise.
const F_REL_TOL: f64 = 64.0 * f64::EPSILON;
/// Distances are compared with `eta + D_REL_TOL · size` (`size` the extent of the motion).
const D_REL_TOL: f64 = 1e-10;
/// Deepest bisection of the distance search when the points stay coplanar throughout.
const MAX_DEPTH: usize = 60;

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
pub fn vertex_face_exact(x0: &[V3; 4], x1: &[V3; 4], eta: f64) -> Option<Hit> {
    earliest(Pair::VertexFace, x0, x1, eta)
}

/// Edges (p0,p1) and (p2,p3), linear trajectories.
///
/// As [`vertex_face_exact`], with the segment–segment distance at the coplanarity times.
/// Edges that stay parallel (hence coplanar) throughout are handled by the distance search.
pub fn edge_edge_exact(x0: &[V3; 4], x1: &[V3; 4], eta: f64) -> Option<Hit> {
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
fn earliest(pair: Pair, x0: &[V3; 4], x1: &[V3; 4], eta: f64) -> Option<Hit> {
    if !all_finite(x0) || !all_finite(x1) {
        return None;
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
    let l = ea
        .iter()
        .chain(eb.iter())
        .fold(0.0f64, |m, e| m.max(e.norm()));
    let tol_f = F_REL_TOL * l * l * l;
    let c = coplanarity_bernstein(&ea, &eb);

    let hit_within = |s: f64, threshold: f64| -> Option<Hit> {
        let p = lerp(&a, &b, s);
        let (d, w) = pair.closest(&p);
        (d <= threshold).then(|| make_hit(pair, s, &p, w, &a, &rate, size))
    };
    let hit_at = |s: f64| hit_within(s, threshold);

    if c.iter().all(|ci| ci.abs() <= tol_f) {
        // Coplanar throughout: search the distance, Lipschitz with the largest relative speed
        // of a point of one feature and a point of the other.
        let (first, second) = match pair {
            Pair::VertexFace => (0..1, 1..4),
            Pair::EdgeEdge => (0..2, 2..4),
        };
        let mut lip = 0.0f64;
        for i in first {
            for j in second.clone() {
                lip = lip.max((rate[i] - rate[j]).norm());
            }
        }
        let slack = D_REL_TOL * size;
        let dist = |s: f64| pair.closest(&lerp(&a, &b, s)).0;
        return earliest_within(dist, lip, threshold, slack)
            .and_then(|s| hit_within(s, threshold + slack));
    }

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
        if fv[j].abs() <= tol_f {
            if let Some(hit) = hit_at(bp[j]) {
                return Some(hit);
            }
        }
        if j + 1 < n_bp && fv[j] * fv[j + 1] < 0.0 {
            let root = bisect3(&c, bp[j], bp[j + 1], fv[j]);
            if let Some(hit) = hit_at(root) {
                return Some(hit);
            }
        }
    }
    None
}

/// The earliest `s ∈ [0, 1]` with `dist(s) ≤ threshold + slack`, for a `dist` that is
/// Lipschitz in `s` with constant `lip`. Depth-first, left-first bisection of `[0, 1]`; a span
/// `[a, b]` is discarded when the bound `min dist ≥ (d(a) + d(b) − lip (b − a)) / 2` exceeds
/// `threshold`, and the first span kept at width `slack / lip` is the answer (its start `a`
/// has `d(a) ≤ threshold + slack`). So no time with `dist ≤ threshold` is missed, and at most
/// `log₂(lip / slack)` levels are visited.
fn earliest_within(dist: impl Fn(f64) -> f64, lip: f64, threshold: f64, slack: f64) -> Option<f64> {
    let d0 = dist(0.0);
    if d0 <= threshold + slack {
        return Some(0.0);
    }
    let min_width = if lip > 0.0 { slack / lip } else { 1.0 };
    // (a, b, d(a), d(b), depth)
    let mut stack = [(0.0, 1.0, d0, dist(1.0), 0usize); MAX_DEPTH + 2];
    let mut top = 1;
    while top > 0 {
        top -= 1;
        let (a, b, da, db, depth) = stack[top];
        if 0.5 * (da + db - lip * (b - a)) > threshold {
            continue;
        }
        if b - a <= min_width || depth >= MAX_DEPTH || top + 2 > stack.len() {
            return Some(a);
        }
        let m = 0.5 * (a + b);
        let dm = dist(m);
        stack[top] = (m, b, dm, db, depth + 1);
        stack[top + 1] = (a, m, da, dm, depth + 1);
        top += 2;
    }
    None
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

    #[test]
    fn earliest_within_finds_a_short_dip() {
        // |s − 0.5031| ≤ 0.001 first at s = 0.5021; Lipschitz constant 1.
        let dist = |s: f64| (s - 0.5031).abs();
        let t = earliest_within(dist, 1.0, 0.001, 1e-12).unwrap();
        assert!(t <= 0.5021 && t > 0.5021 - 2e-12, "{t}");
        // a dip to 0.0005 above the threshold is not a contact
        let dip = |s: f64| 0.0015 + (s - 0.7).abs();
        assert!(earliest_within(dip, 1.0, 0.001, 1e-12).is_none());
        // far apart and barely moving: two evaluations decide
        let calls = std::cell::Cell::new(0);
        let far = |s: f64| {
            calls.set(calls.get() + 1);
            1.0 + 0.01 * s
        };
        assert!(earliest_within(far, 0.01, 0.001, 1e-12).is_none());
        assert_eq!(calls.get(), 2);
    }
}
