//! Collision detection by Hermite interpolation of indicator functions, after Liesenfeld &
//! Stolfi §6.2–6.3.
//!
//! Each indicator `g(t)` is replaced over the step by its cubic Hermite interpolant: the
//! cubic with the values and time derivatives of `g` at both ends (eq. 27,
//! `g' = ∂g/∂q · q'`, from positions and velocities). In the Bernstein–Bézier basis of the
//! step (eq. 28) its coefficients are `P1 = g(ta)`, `P2 = g(ta) + dt/3 g'(ta)`,
//! `P3 = g(tb) − dt/3 g'(tb)`, `P4 = g(tb)` (eq. 29), and the cubic is a convex combination of
//! them, so a span whose coefficients share one sign holds no root. Mixed spans are halved by
//! De Casteljau's algorithm, depth first and left first, so the first root found is the
//! earliest. A span whose coefficient signs change exactly once holds exactly one root
//! (Descartes' rule of signs for the Bernstein basis), which is then bisected to the
//! resolution of `f64`.
//!
//! Only the coplanarity indicator (eq. 30 `g3`, eq. 31 `g4`) is root-found this way. The other
//! indicators, which decide whether the features actually meet, are evaluated at the root
//! time on the Hermite-interpolated *positions* (the cubic Hermite curve of each point from
//! `x0`, `dt v0`, `x1`, `dt v1`), not on their own Hermite cubics: for linear motion the
//! positions are exact, while `g0..g2` of eq. 30 are quartic in time and their cubic
//! interpolants are not. The contact ([`Hit::w`], [`Hit::normal`]) is computed from the same
//! interpolated positions.
//!
//! Rounding noise is judged per Bernstein coefficient: each gets `G_REL_TOL` times the
//! magnitude of the products it is made of ([`super::orientation_rate_magnitude`], combined as
//! eq. 29 combines the values and rates), and De Casteljau halving carries those bounds along
//! with the coefficients. (A single `G_REL_TOL l³` from the largest relative position or
//! tangent `l` let one far point turn every coefficient into "noise".) The subdivision visits
//! at most [`MAX_SPANS`] spans; at that bound the pair is reported conservatively at the start
//! of the span it is on (see [`super::Outcome`]).

use super::{
    all_finite, bernstein3, bisect3, make_hit, orientation_rate, orientation_rate_magnitude, Hit,
    Outcome, Pair, V3,
};

/// A coefficient within `G_REL_TOL` times the magnitude of its products is rounding noise of
/// the coplanarity indicators (which have units of length³).
const G_REL_TOL: f64 = 1e-13;
/// The inside tests accept signed distances down to `−INSIDE_REL_TOL · size`.
const INSIDE_REL_TOL: f64 = 1e-10;
/// Deepest De Casteljau subdivision (span width 2⁻⁴⁸ of the step).
const MAX_DEPTH: usize = 48;
/// Bound on the spans visited per test (a cubic needs a few hundred at most).
const MAX_SPANS: usize = 4096;
/// Samples of the inside test on a span where the indicator is zero to rounding.
const NOISE_SAMPLES: usize = 16;

/// Liesenfeld–Stolfi: cubic Hermite interpolation in time of the indicator functions (eq.
/// 27–29, values and time derivatives g' = ∂g/∂q · q' at both ends from positions x and
/// velocities v; `dt` the step length), Bernstein–Bézier sign test with De Casteljau
/// bisection, earliest contact time. Vertex–face indicators eq. 30.
///
/// Points: p0 the vertex `v`, (p1, p2, p3) the triangle `(u0, u1, u2)`. The contact is the
/// earliest sign change of `g3 = n · (v − u0)`, `n = (u1 − u0) × (u2 − u0)`, in either
/// direction (a vertex can hit a face from both sides), at which `g_i = (v − u_i) · r_i ≥ 0`,
/// `r_i = n × (u_{i+1} − u_i)` (i = 0, 1, 2: the vertex's projection lies in the triangle, to
/// 10⁻¹⁰ of the configuration's size). A start in the plane counts as in the exact tests
/// (see the [module docs](super)); when `g3` is zero to rounding over a span, the inside test
/// is sampled at 17 times there. `None`: no contact, non-finite input or `dt < 0`. At the
/// work bound (4096 spans) a conservative contact at the start of the span reached.
pub fn vertex_face_hermite(
    x0: &[V3; 4],
    v0: &[V3; 4],
    x1: &[V3; 4],
    v1: &[V3; 4],
    dt: f64,
) -> Option<Hit> {
    vertex_face_hermite_outcome(x0, v0, x1, v1, dt).hit
}

/// [`vertex_face_hermite`], telling whether the subdivision reached its bound.
pub(crate) fn vertex_face_hermite_outcome(
    x0: &[V3; 4],
    v0: &[V3; 4],
    x1: &[V3; 4],
    v1: &[V3; 4],
    dt: f64,
) -> Outcome {
    let Some(m) = Motion::new(x0, v0, x1, v1, dt) else {
        return Outcome::exact(None);
    };
    // eq. 30: g3 = n · (v − u0) = det(u1 − u0, u2 − u0, v − u0).
    let g3 = m.indicator(|p, r| {
        orientation_rate([&p[1], &p[2], &p[3], &p[0]], [&r[1], &r[2], &r[3], &r[0]])
    });
    let noise = m.indicator_noise(|p, r| {
        orientation_rate_magnitude([&p[1], &p[2], &p[3], &p[0]], [&r[1], &r[2], &r[3], &r[0]])
    });
    let inside_tol = INSIDE_REL_TOL * m.size;
    earliest_sign_change(
        &g3,
        &noise,
        |s| {
            let p = m.at(s);
            vertex_in_prism(&p, inside_tol).then(|| m.hit(Pair::VertexFace, s, &p))
        },
        |s| m.hit(Pair::VertexFace, s, &m.at(s)),
    )
}

/// Edge–edge indicators eq. 31. Points 0,1 edge a, 2,3 edge b, 4 = p (midpoint of the edge
/// opposite to a in a tet containing a), 5 = q (same for b); the caller passes p, q
/// positions/velocities (midpoints of the tet vertices).
///
/// With `a = u0 u1`, `b = v0 v1`, `r = (u0 − p) × (u1 − p)`, `s = (v0 − q) × (v1 − q)`:
/// `g0 = (v0 − p)·r`, `g1 = (p − v1)·r`, `g2 = (u0 − q)·s`, `g3 = (q − u1)·s`,
/// `g4 = det(u0, u1, v0, v1)` (here `det(u1 − u0, v0 − u0, v1 − u0)`, the same up to a fixed
/// sign). The contact is the earliest sign change of `g4` (either direction) at which
/// `g0..g3` are all ≥ 0 or all ≤ 0 (to 10⁻¹⁰ of the size, after dividing by `|r|`, `|s|`):
/// each edge crosses the plane through the other edge and its tet's `p` or `q`. As in the
/// paper, equal signs also encode that the two tets lie on opposite sides of the contact,
/// i.e. the edges approach from outside each other's body; a crossing with `p` and `q` on
/// the same side is not a contact here (the exact test reports it). `None`: no contact,
/// non-finite input or `dt < 0`. At the work bound (4096 spans) a conservative contact at the
/// start of the span reached.
pub fn edge_edge_hermite(
    x0: &[V3; 6],
    v0: &[V3; 6],
    x1: &[V3; 6],
    v1: &[V3; 6],
    dt: f64,
) -> Option<Hit> {
    edge_edge_hermite_outcome(x0, v0, x1, v1, dt).hit
}

/// [`edge_edge_hermite`], telling whether the subdivision reached its bound.
pub(crate) fn edge_edge_hermite_outcome(
    x0: &[V3; 6],
    v0: &[V3; 6],
    x1: &[V3; 6],
    v1: &[V3; 6],
    dt: f64,
) -> Outcome {
    let Some(m) = Motion::new(x0, v0, x1, v1, dt) else {
        return Outcome::exact(None);
    };
    let g4 = m.indicator(|p, r| {
        orientation_rate([&p[0], &p[1], &p[2], &p[3]], [&r[0], &r[1], &r[2], &r[3]])
    });
    let noise = m.indicator_noise(|p, r| {
        orientation_rate_magnitude([&p[0], &p[1], &p[2], &p[3]], [&r[0], &r[1], &r[2], &r[3]])
    });
    let inside_tol = INSIDE_REL_TOL * m.size;
    earliest_sign_change(
        &g4,
        &noise,
        |s| {
            let p = m.at(s);
            edges_straddle(&p, inside_tol).then(|| m.hit(Pair::EdgeEdge, s, &p))
        },
        |s| m.hit(Pair::EdgeEdge, s, &m.at(s)),
    )
}

/// Eq. 30 `g0..g2 ≥ −tol` (as signed distances) for `p = [v, u0, u1, u2]`.
fn vertex_in_prism(p: &[V3; 4], tol: f64) -> bool {
    let u = [p[1], p[2], p[3]];
    let n = (u[1] - u[0]).cross(&(u[2] - u[0]));
    (0..3).all(|i| {
        let r = n.cross(&(u[(i + 1) % 3] - u[i]));
        let len = r.norm();
        len > 0.0 && (p[0] - u[i]).dot(&r) >= -tol * len
    })
}

/// Eq. 31 `g0..g3` all ≥ −tol or all ≤ tol (as signed distances) for
/// `p = [u0, u1, v0, v1, p, q]`.
fn edges_straddle(p: &[V3; 6], tol: f64) -> bool {
    let [u0, u1, w0, w1, pa, qb] = *p;
    let r = (u0 - pa).cross(&(u1 - pa));
    let s = (w0 - qb).cross(&(w1 - qb));
    let (rl, sl) = (r.norm(), s.norm());
    if !(rl > 0.0 && sl > 0.0) {
        return false;
    }
    let g = [
        (w0 - pa).dot(&r) / rl,
        (pa - w1).dot(&r) / rl,
        (u0 - qb).dot(&s) / sl,
        (qb - u1).dot(&s) / sl,
    ];
    g.iter().all(|&gi| gi >= -tol) || g.iter().all(|&gi| gi <= tol)
}

/// Cubic Hermite trajectories of `N` points over one step, relative to point 0 at the start.
struct Motion<const N: usize> {
    x0: [V3; N],
    x1: [V3; N],
    /// Tangents per unit step, `dt v0` and `dt v1`.
    t0: [V3; N],
    t1: [V3; N],
    /// Largest norm of the relative positions and tangents (the rounding scale of positions).
    size: f64,
}

impl<const N: usize> Motion<N> {
    fn new(x0: &[V3; N], v0: &[V3; N], x1: &[V3; N], v1: &[V3; N], dt: f64) -> Option<Self> {
        if !dt.is_finite() || dt < 0.0 || !all_finite(x0) || !all_finite(x1) {
            return None;
        }
        if !all_finite(v0) || !all_finite(v1) {
            return None;
        }
        let o = x0[0];
        let m = Motion {
            x0: std::array::from_fn(|k| x0[k] - o),
            x1: std::array::from_fn(|k| x1[k] - o),
            t0: std::array::from_fn(|k| dt * v0[k]),
            t1: std::array::from_fn(|k| dt * v1[k]),
            size: 0.0,
        };
        let mut size = 0.0f64;
        for set in [&m.x0, &m.x1, &m.t0, &m.t1] {
            for v in set.iter() {
                size = size.max(v.norm());
            }
        }
        if !size.is_finite() {
            return None;
        }
        Some(Motion { size, ..m })
    }

    /// Positions at `s ∈ [0, 1]`: Bézier form of the Hermite curve, control points
    /// `x0, x0 + t0/3, x1 − t1/3, x1`.
    fn at(&self, s: f64) -> [V3; N] {
        std::array::from_fn(|k| {
            let c = [
                self.x0[k],
                self.x0[k] + self.t0[k] / 3.0,
                self.x1[k] - self.t1[k] / 3.0,
                self.x1[k],
            ];
            bernstein3(&c, s)
        })
    }

    /// Bernstein coefficients of the Hermite interpolant of the indicator `g` over the step
    /// (eq. 27–29); `g(p, r)` returns the value at positions `p` and its rate for point rates
    /// `r` (here the tangents `dt v`, so the rate is already `dt g'`).
    fn indicator(&self, g: impl Fn(&[V3; N], &[V3; N]) -> (f64, f64)) -> [f64; 4] {
        let (ga, dga) = g(&self.x0, &self.t0);
        let (gb, dgb) = g(&self.x1, &self.t1);
        [ga, ga + dga / 3.0, gb - dgb / 3.0, gb]
    }

    /// Rounding bounds of the coefficients of [`Self::indicator`], from `g_mag(p, r)`: bounds
    /// on the magnitudes of the products making up `g` and its rate (eq. 29's combination, with
    /// the rate's term added in absolute value), times `G_REL_TOL`.
    fn indicator_noise(&self, g_mag: impl Fn(&[V3; N], &[V3; N]) -> (f64, f64)) -> [f64; 4] {
        let (ga, dga) = g_mag(&self.x0, &self.t0);
        let (gb, dgb) = g_mag(&self.x1, &self.t1);
        [ga, ga + dga / 3.0, gb + dgb / 3.0, gb].map(|t| G_REL_TOL * t)
    }

    /// The contact at time `s` from the positions `p` there (points 0..4 form the pair).
    fn hit(&self, pair: Pair, s: f64, p: &[V3; N]) -> Hit {
        let first4 = |x: &[V3; N]| -> [V3; 4] { std::array::from_fn(|k| x[k]) };
        let p4 = first4(p);
        let (_, w) = pair.closest(&p4);
        make_hit(
            pair,
            s,
            &p4,
            w,
            &first4(&self.x0),
            &first4(&self.t0),
            self.size,
        )
    }
}

/// One span of the subdivision: `[lo, hi]`, the Bernstein coefficients there and their
/// rounding bounds (halved alongside: the coefficients of a half are convex combinations of
/// the whole's, so the same combinations of the bounds bound their errors).
#[derive(Clone, Copy)]
struct Span {
    lo: f64,
    hi: f64,
    c: [f64; 4],
    noise: [f64; 4],
    depth: usize,
}

/// Sign changes in the sequence of non-zero coefficients.
fn sign_variations(c: &[f64; 4]) -> usize {
    let mut count = 0;
    let mut last = 0.0f64;
    for &ci in c {
        if ci != 0.0 {
            if last != 0.0 && (ci > 0.0) != (last > 0.0) {
                count += 1;
            }
            last = ci;
        }
    }
    count
}

/// De Casteljau halving: the coefficients on the left and right halves.
fn halve(c: &[f64; 4]) -> ([f64; 4], [f64; 4]) {
    let (a01, a12, a23) = (
        0.5 * (c[0] + c[1]),
        0.5 * (c[1] + c[2]),
        0.5 * (c[2] + c[3]),
    );
    let (b0, b1) = (0.5 * (a01 + a12), 0.5 * (a12 + a23));
    let m = 0.5 * (b0 + b1);
    ([c[0], a01, b0, m], [m, b1, a23, c[3]])
}

/// Visits the roots of the cubic with Bernstein coefficients `c` on `[0, 1]` in increasing
/// order (eq. 28–29 sign test with De Casteljau subdivision) and returns the first contact
/// `accept` makes of one. Candidates: `s = 0` when `|c0| ≤ tol`; each isolated root, rounded
/// down; exact zeros at span ends (at the end of the earlier span only, so each is visited
/// once); the midpoints of spans still mixed at [`MAX_DEPTH`]
/// (grazing within rounding); [`NOISE_SAMPLES`]` + 1` times across spans where every
/// coefficient is within its rounding bound `noise`; and `s = 1` when `|c3| ≤ noise3`. After
/// [`MAX_SPANS`] spans, the conservative contact `bounded(lo)` at the start `lo` of the span
/// reached (every earlier span was settled: the search is left first).
fn earliest_sign_change(
    c: &[f64; 4],
    noise: &[f64; 4],
    mut accept: impl FnMut(f64) -> Option<Hit>,
    bounded: impl Fn(f64) -> Hit,
) -> Outcome {
    let found = |hit| Outcome::exact(Some(hit));
    if c[0].abs() <= noise[0] {
        if let Some(hit) = accept(0.0) {
            return found(hit);
        }
    }
    let root = Span {
        lo: 0.0,
        hi: 1.0,
        c: *c,
        noise: *noise,
        depth: 0,
    };
    let mut stack = [root; MAX_DEPTH + 2];
    let mut top = 1;
    let mut visited = 0;
    while top > 0 {
        top -= 1;
        let sp = stack[top];
        visited += 1;
        if visited > MAX_SPANS {
            return Outcome {
                hit: Some(bounded(sp.lo)),
                bounded_out: true,
            };
        }
        let width = sp.hi - sp.lo;
        if sp.c.iter().zip(&sp.noise).all(|(ci, ni)| ci.abs() <= *ni) {
            for i in 0..=NOISE_SAMPLES {
                let s = sp.lo + width * (i as f64 / NOISE_SAMPLES as f64);
                if let Some(hit) = accept(s) {
                    return found(hit);
                }
            }
            continue;
        }
        let v = sign_variations(&sp.c);
        let leaf = v <= 1 || sp.depth >= MAX_DEPTH || top + 2 > stack.len();
        if !leaf {
            let (left, right) = halve(&sp.c);
            let (noise_left, noise_right) = halve(&sp.noise);
            let mid = sp.lo + 0.5 * width;
            let depth = sp.depth + 1;
            stack[top] = Span {
                lo: mid,
                hi: sp.hi,
                c: right,
                noise: noise_right,
                depth,
            };
            stack[top + 1] = Span {
                lo: sp.lo,
                hi: mid,
                c: left,
                noise: noise_left,
                depth,
            };
            top += 2;
            continue;
        }
        let candidate = if v == 1 {
            // Exactly one root inside; bisect from the first non-zero coefficient's sign.
            let first = sp.c.iter().copied().find(|&ci| ci != 0.0).unwrap_or(0.0);
            Some(sp.lo + width * bisect3(&sp.c, 0.0, 1.0, first))
        } else if v >= 2 {
            Some(sp.lo + 0.5 * width)
        } else {
            None
        };
        if let Some(hit) = candidate.and_then(&mut accept) {
            return found(hit);
        }
        if sp.c[3] == 0.0 && sp.hi < 1.0 {
            if let Some(hit) = accept(sp.hi) {
                return found(hit);
            }
        }
    }
    if c[3].abs() <= noise[3] {
        return Outcome::exact(accept(1.0));
    }
    Outcome::exact(None)
}

#[cfg(test)]
mod tests {
    use super::super::bernstein3;
    use super::*;

    /// Issue 12's exploded-bar pair ([`super::super::far_vertex_case`]) on linear motion
    /// (velocities `(x1 − x0) / dt` at both ends, so the Hermite paths are the linear ones).
    /// The old single tolerance `G_REL_TOL l³` (l ≈ 8.7e5 m) exceeded every coefficient, so
    /// the whole step counted as "zero to rounding" and only 17 samples of the inside test
    /// were looked at. Per coefficient, the sign change is isolated and the contact is the
    /// exact test's, to the rounding of this badly conditioned indicator (based at the far
    /// vertex, its products reach 10¹⁷ m³ around a value of 10³ m³).
    #[test]
    fn a_far_point_does_not_hide_the_sign_change() {
        let (x0, x1, _) = super::super::far_vertex_case();
        let dt = 0.002;
        let v: [V3; 4] = std::array::from_fn(|k| (x1[k] - x0[k]) / dt);
        let o = vertex_face_hermite_outcome(&x0, &v, &x1, &v, dt);
        assert!(!o.bounded_out);
        let t = o.hit.expect("the vertex crosses the face").t;
        let (lo, hi) = super::super::FAR_VERTEX_ROOT;
        assert!(lo - 1e-3 <= t && t <= hi + 1e-3, "{t}");
    }

    #[test]
    fn visits_roots_in_order_and_finds_each() {
        // (s − 0.25)(s − 0.5)(s − 0.75) as Bernstein coefficients (blossom values).
        let bl = |u: [f64; 3]| (u[0] - 0.25) * (u[1] - 0.5) * (u[2] - 0.75);
        let sym1 = (bl([1.0, 0.0, 0.0]) + bl([0.0, 1.0, 0.0]) + bl([0.0, 0.0, 1.0])) / 3.0;
        let sym2 = (bl([0.0, 1.0, 1.0]) + bl([1.0, 0.0, 1.0]) + bl([1.0, 1.0, 0.0])) / 3.0;
        let c = [bl([0.0; 3]), sym1, sym2, bl([1.0; 3])];
        let mut seen = [0.0; 3];
        let mut n = 0;
        let none = earliest_sign_change(
            &c,
            &[1e-15; 4],
            |s| {
                seen[n] = s;
                n += 1;
                None
            },
            |_| unreachable!("a cubic needs few spans"),
        );
        assert_eq!(none, Outcome::exact(None));
        assert_eq!(n, 3);
        for (s, r) in seen.iter().zip([0.25, 0.5, 0.75]) {
            assert!((s - r).abs() < 1e-14, "{seen:?}");
        }
    }

    #[test]
    fn no_sign_change_no_candidate_and_double_root_is_a_candidate() {
        // A positive cubic whose control polygon dips below zero: subdivision proves it
        // positive and offers no candidate.
        let c = [1.0, -0.1, 0.3, 0.5];
        assert!((0..=1000).all(|i| bernstein3(&c, i as f64 / 1000.0) > 0.0));
        let mut calls = 0;
        earliest_sign_change(
            &c,
            &[1e-15; 4],
            |_| {
                calls += 1;
                None
            },
            |_| unreachable!("a cubic needs few spans"),
        );
        assert_eq!(calls, 0);
        // (s − a)², a tangency at a: the quadratic's coefficients [a², −a(1−a), (1−a)²],
        // degree-elevated to three.
        let a = 0.3;
        let q = [a * a, -a * (1.0 - a), (1.0 - a) * (1.0 - a)];
        let sq = [
            q[0],
            (q[0] + 2.0 * q[1]) / 3.0,
            (2.0 * q[1] + q[2]) / 3.0,
            q[2],
        ];
        for i in 0..=10 {
            let s = i as f64 / 10.0;
            assert!((bernstein3(&sq, s) - (s - a) * (s - a)).abs() < 1e-15);
        }
        let mut first = None;
        earliest_sign_change(
            &sq,
            &[1e-15; 4],
            |s| {
                first.get_or_insert(s);
                None
            },
            |_| unreachable!("a cubic needs few spans"),
        );
        assert!((first.unwrap() - a).abs() < 1e-6, "{first:?}");
    }
}
