//! Narrow-phase continuous collision detection (CCD) of vertex–face and edge–edge pairs over
//! one time step. Pure geometry: four (or six) moving points in, the earliest contact out.
//!
//! Two families, both reporting the time as a fraction `t ∈ [0, 1]` of the step:
//!
//! - **Exact** ([`vertex_face_exact`], [`edge_edge_exact`]): linear trajectories
//!   `p_k(s) = x0[k] + s (x1[k] − x0[k])`. The four points are coplanar at the real roots of
//!   the cubic `det(p1 − p0, p2 − p0, p3 − p0)(s)`; at each root, in increasing order, the
//!   actual feature distance (point–triangle or segment–segment, [`point_triangle`],
//!   [`segment_segment`]) is compared with the safe tolerance `eta`.
//! - **Hermite** ([`vertex_face_hermite`], [`edge_edge_hermite`]): Liesenfeld & Stolfi §6.2–6.3:
//!   each indicator function is replaced by its cubic Hermite interpolant in time (eq. 27–29,
//!   from positions and velocities at both ends of the step), the sign change of the
//!   coplanarity indicator (eq. 30 `g3`, eq. 31 `g4`) is isolated by Bernstein–Bézier sign tests
//!   with De Casteljau bisection, and the remaining indicators decide whether the features
//!   actually meet.
//!
//! # When a contact is reported (both families)
//!
//! Contacts are reported only at *coplanarity times*: sign changes of the coplanarity cubic,
//! plus times where it vanishes to rounding noise (a grazing double root, a start or end
//! exactly in the plane). Being closer than `eta` at s = 0 or s = 1 without becoming coplanar
//! is **not** a contact: the pipeline assumes pairs start separated, and a pair that ends
//! close but uncrossed is handled by the next step. A pair that starts coplanar (within
//! rounding) and within `eta` *is* reported at `t = 0`, with its normal oriented against the
//! relative motion (the conservative choice: nothing that starts touching can tunnel, at the
//! price of holding a touching pair that moves apart; a pipeline that leaves a tiny positive
//! gap after its response never sees this case). A pair that stays coplanar throughout the
//! step (e.g. parallel edges) is handled by a search of the feature distance that uses its
//! Lipschitz bound (exact family) or by sampling the inside test (Hermite family); see the
//! functions' docs.
//!
//! All tolerances are relative to the size of the configuration, so a scene gives the same
//! times at 1 m and at 1 cm, and computations are done relative to one of the points, so the
//! answer does not depend on where the pair is. Non-finite input gives `None`. Nothing here
//! allocates.
//!
//! # Bounded work
//!
//! Every search here has a fixed bound on its work (bisection steps, De Casteljau spans,
//! distance evaluations), whatever the input: a pair whose points move far relative to their
//! distances (an exploded body, a body a billion times larger than the other) cannot stall a
//! step. A search that reaches its bound has not ruled contact out after the last time it
//! cleared, so it reports the pair conservatively as meeting there, and the pipeline counts
//! it in [`ContactStats::bounded_out`](crate::contact::ContactStats::bounded_out); its
//! response then pushes the pair apart or, failing that, returns its vertices to their
//! start-of-step positions (`contact::pipeline`'s fail-safe).

mod distance;
mod exact;
mod hermite;

pub use distance::{point_segment, point_triangle, segment_segment};
pub use exact::{edge_edge_exact, vertex_face_exact};
pub(crate) use exact::{edge_edge_exact_outcome, vertex_face_exact_outcome};
pub use hermite::{edge_edge_hermite, vertex_face_hermite};
pub(crate) use hermite::{edge_edge_hermite_outcome, vertex_face_hermite_outcome};

use nalgebra::Vector3;

/// Short name of the 3-vector type of this module's signatures.
pub type V3 = Vector3<f64>;

/// A contact found over one step, time as a fraction `t ∈ [0, 1]` of the step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub t: f64,
    /// Unit contact normal at time t. Orientation rule (both pair kinds): the gap
    /// `d(s) = normal · Σ_k w[k] p_k(s)` is ≥ 0 at s = 0 (the side the pair started on) and
    /// ≈ 0 at s = t. For vertex–face it is the triangle's normal, for edge–edge the normal of
    /// the two edges' directions; when those degenerate (collapsed triangle, parallel edges)
    /// it is the direction between the closest points.
    pub normal: Vector3<f64>,
    /// Weights of the four points so that `Σ w[k] p_k(t) ≈ 0` at contact:
    /// vertex–face [1, −b0, −b1, −b2] (b = barycentric coords of the contact point on the
    /// triangle), edge–edge [1−s, s, −(1−u), −u] (s on edge (p0,p1), u on edge (p2,p3)).
    /// Σ w = 0, so the gap does not depend on the origin.
    pub w: [f64; 4],
}

/// A continuous test's answer, and whether its search reached its work bound (see the
/// module docs, *Bounded work*). When `bounded_out`, `hit` is the conservative contact at
/// the earliest time the search could not clear (all earlier times were shown contact-free),
/// with the weights and normal of the closest points there.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Outcome {
    pub hit: Option<Hit>,
    pub bounded_out: bool,
}

impl Outcome {
    pub(crate) fn exact(hit: Option<Hit>) -> Self {
        Self {
            hit,
            bounded_out: false,
        }
    }
}

/// The two kinds of primitive pairs; both use the point order of [`Hit::w`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Pair {
    /// p0 the vertex, (p1, p2, p3) the triangle.
    VertexFace,
    /// Edges (p0, p1) and (p2, p3).
    EdgeEdge,
}

impl Pair {
    /// The largest relative speed `|rate_i − rate_j|` of a point `i` of one feature and a
    /// point `j` of the other: a Lipschitz constant in `s` of the features' distance along
    /// linear trajectories with these rates (every point of a feature is a convex combination
    /// of its points, so the distance between two of them changes at most that fast).
    pub(crate) fn lipschitz(self, rate: &[V3; 4]) -> f64 {
        let (first, second) = match self {
            Pair::VertexFace => (0..1, 1..4),
            Pair::EdgeEdge => (0..2, 2..4),
        };
        let mut lip = 0.0f64;
        for i in first {
            for j in second.clone() {
                lip = lip.max((rate[i] - rate[j]).norm());
            }
        }
        lip
    }

    /// True when point `k` (of the four) belongs to the first feature (the vertex, or the
    /// first edge).
    #[cfg(test)]
    pub(crate) fn first_feature(self, k: usize) -> bool {
        match self {
            Pair::VertexFace => k == 0,
            Pair::EdgeEdge => k < 2,
        }
    }

    /// Distance between the two features and the contact weights [`Hit::w`].
    pub(crate) fn closest(self, p: &[V3; 4]) -> (f64, [f64; 4]) {
        match self {
            Pair::VertexFace => {
                let (d, b) = point_triangle(&p[0], &p[1], &p[2], &p[3]);
                (d, [1.0, -b[0], -b[1], -b[2]])
            }
            Pair::EdgeEdge => {
                let (d, s, u) = segment_segment(&p[0], &p[1], &p[2], &p[3]);
                (d, [1.0 - s, s, -(1.0 - u), -u])
            }
        }
    }

    /// The geometric normal direction, not normalized: the triangle's `(p2 − p1) × (p3 − p1)`
    /// or the edges' `(p1 − p0) × (p3 − p2)`.
    fn normal_dir(self, p: &[V3; 4]) -> V3 {
        match self {
            Pair::VertexFace => (p[2] - p[1]).cross(&(p[3] - p[1])),
            Pair::EdgeEdge => (p[1] - p[0]).cross(&(p[3] - p[2])),
        }
    }

    /// A direction the fallback normal must be orthogonal to (an edge).
    fn axis(self, p: &[V3; 4]) -> V3 {
        match self {
            Pair::VertexFace => p[2] - p[1],
            Pair::EdgeEdge => p[1] - p[0],
        }
    }
}

/// Relative size below which a normal direction counts as degenerate.
const NORMAL_REL_TOL: f64 = 1e-12;

/// Builds the [`Hit`] at time `t` from the positions `p_t` there, the weights `w`, the
/// start positions `x0` and the rate of the positions at the start `rate0` (per unit of
/// `s`), orienting the normal by the rule of [`Hit::normal`]: flip so that the gap at s = 0
/// is ≥ 0; when that gap is zero to rounding, so that the gap closes (`d'(0) ≤ 0`).
/// `size` is the configuration's length scale.
pub(crate) fn make_hit(
    pair: Pair,
    t: f64,
    p_t: &[V3; 4],
    w: [f64; 4],
    x0: &[V3; 4],
    rate0: &[V3; 4],
    size: f64,
) -> Hit {
    let combine = |p: &[V3; 4]| w[0] * p[0] + w[1] * p[1] + w[2] * p[2] + w[3] * p[3];
    let tiny = NORMAL_REL_TOL * size;
    let primary = pair.normal_dir(p_t);
    let sep_t = combine(p_t);
    let sep_0 = combine(x0);
    let n = if primary.norm() > tiny * size {
        primary
    } else if sep_t.norm() > tiny {
        sep_t
    } else {
        let axis = pair.axis(p_t);
        let a = if axis.norm() > tiny {
            axis.normalize()
        } else {
            V3::zeros()
        };
        let off_axis = sep_0 - a * a.dot(&sep_0);
        if off_axis.norm() > tiny {
            off_axis
        } else {
            any_perpendicular(&a)
        }
    };
    let mut n = n.normalize();
    let d0 = n.dot(&sep_0);
    let flip = if d0.abs() > tiny {
        d0 < 0.0
    } else {
        n.dot(&combine(rate0)) > 0.0
    };
    if flip {
        n = -n;
    }
    Hit { t, normal: n, w }
}

/// A unit vector orthogonal to `a` (or the x axis when `a` is zero).
fn any_perpendicular(a: &V3) -> V3 {
    if a.norm_squared() == 0.0 {
        return V3::x();
    }
    let (x, y, z) = (a.x.abs(), a.y.abs(), a.z.abs());
    let e = if x <= y && x <= z {
        V3::x()
    } else if y <= z {
        V3::y()
    } else {
        V3::z()
    };
    a.cross(&e).normalize()
}

/// Whether every coordinate of every point is finite.
pub(crate) fn all_finite(points: &[V3]) -> bool {
    points.iter().all(|p| p.iter().all(|c| c.is_finite()))
}

/// The scalar triple product `a · (b × c) = det(a, b, c)`.
#[inline]
pub(crate) fn triple(a: &V3, b: &V3, c: &V3) -> f64 {
    a.dot(&b.cross(c))
}

/// `det(p1 − p0, p2 − p0, p3 − p0)` (six times the signed volume of the tetrahedron
/// `p0 p1 p2 p3`) and its rate for point rates `r`, by the product rule.
pub(crate) fn orientation_rate(p: [&V3; 4], r: [&V3; 4]) -> (f64, f64) {
    let (e1, e2, e3) = (p[1] - p[0], p[2] - p[0], p[3] - p[0]);
    let (d1, d2, d3) = (r[1] - r[0], r[2] - r[0], r[3] - r[0]);
    let value = triple(&e1, &e2, &e3);
    let rate = triple(&d1, &e2, &e3) + triple(&e1, &d2, &e3) + triple(&e1, &e2, &d3);
    (value, rate)
}

/// Bounds on the magnitudes that enter [`orientation_rate`]'s value and rate, for rounding
/// tolerances: `|e1| |e2| |e3|` and `|d1| |e2| |e3| + |e1| |d2| |e3| + |e1| |e2| |d3|`
/// (`|a · (b × c)| ≤ |a| |b| |c|`, and the rounding error of a computed triple product is a
/// small multiple of ε times that product; Higham, *Accuracy and Stability of Numerical
/// Algorithms*, 2nd ed., §3.1). Each term is the size of what is actually multiplied, so one
/// point far from the others does not inflate the tolerance of products that do not use it.
pub(crate) fn orientation_rate_magnitude(p: [&V3; 4], r: [&V3; 4]) -> (f64, f64) {
    let e = [
        (p[1] - p[0]).norm(),
        (p[2] - p[0]).norm(),
        (p[3] - p[0]).norm(),
    ];
    let d = [
        (r[1] - r[0]).norm(),
        (r[2] - r[0]).norm(),
        (r[3] - r[0]).norm(),
    ];
    let value = e[0] * e[1] * e[2];
    let rate = d[0] * e[1] * e[2] + e[0] * d[1] * e[2] + e[0] * e[1] * d[2];
    (value, rate)
}

/// The value at `s ∈ [0, 1]` of the cubic with Bernstein coefficients `c`
/// (`Σ c_i C(3,i) s^i (1−s)^(3−i)`), by De Casteljau's algorithm; scalar or vector
/// coefficients (the Hermite paths of points use it too).
#[inline]
pub(crate) fn bernstein3<T>(c: &[T; 4], s: f64) -> T
where
    T: Copy + std::ops::Add<Output = T> + std::ops::Mul<f64, Output = T>,
{
    let r = 1.0 - s;
    let (a, b, d) = (
        c[0] * r + c[1] * s,
        c[1] * r + c[2] * s,
        c[2] * r + c[3] * s,
    );
    let (e, f) = (a * r + b * s, b * r + d * s);
    e * r + f * s
}

/// A root of the cubic with Bernstein coefficients `c` in `[lo, hi] ⊂ [0, 1]`, where
/// `bernstein3(c, lo)` has the sign of `f_lo` and `bernstein3(c, hi)` the opposite sign, by
/// bisection to the resolution of `f64`. Returns the last point found on the `lo` side
/// (rounded *down*, as Liesenfeld & Stolfi §6.1 advise, so the pair is not yet crossed there),
/// or the exact zero if one is hit.
pub(crate) fn bisect3(c: &[f64; 4], lo: f64, hi: f64, f_lo: f64) -> f64 {
    narrow3(c, lo, hi, f_lo, BISECT_STEPS).lo
}

/// Most bisection steps of [`bisect3`] (far more than the ~60 that reach the resolution of
/// `f64` on `[0, 1]`).
pub(crate) const BISECT_STEPS: usize = 200;

/// A bracket of [`narrow3`]: `lo == hi` once the root is found (the resolution of `f64`
/// reached, or an exact zero).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Bracket {
    pub lo: f64,
    pub hi: f64,
}

/// Up to `steps` steps of [`bisect3`]'s bisection of `[lo, hi]`: continuing from the bracket
/// returned, with the same `f_lo`, takes the steps the whole bisection would have taken. At
/// the resolution of `f64` the bracket closes on `lo`, at an exact zero on it.
pub(crate) fn narrow3(c: &[f64; 4], mut lo: f64, mut hi: f64, f_lo: f64, steps: usize) -> Bracket {
    for _ in 0..steps {
        let mid = 0.5 * (lo + hi);
        if mid <= lo || mid >= hi {
            return Bracket { lo, hi: lo };
        }
        let f = bernstein3(c, mid);
        if f == 0.0 {
            return Bracket { lo: mid, hi: mid };
        }
        if (f > 0.0) == (f_lo > 0.0) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Bracket { lo, hi }
}

/// Issue 12's self-fold with a 1 m rod: a vertex–face pair of the exploded bar, captured from
/// the hung run (step 2, `dt` = 2 ms, `eta` = 2.845e-5 m). The triangle's first vertex flies to
/// ~8.7e5 m; the others stay within 0.1 m. `(x0, x1, eta)`, points in [`Hit::w`] order.
#[cfg(test)]
pub(crate) fn far_vertex_case() -> ([V3; 4], [V3; 4], f64) {
    let v = V3::new;
    let far = v(-158394.14692703102, 224776.72364206993, -829637.251849688);
    let x0 = [
        v(-0.8770642084092999, 0.48037316894254123, -0.005),
        v(-0.8570708359907139, 0.5151985854769882, -0.005),
        v(-0.8521608181663338, 0.5232800399407506, 0.005),
        v(-0.9268399488847062, 0.37545669599804093, -0.005),
    ];
    let x1 = [
        v(
            -0.8986394143439693,
            0.4489243271008123,
            0.0004934311529640376,
        ),
        far,
        v(
            -0.7753285095133421,
            0.6712488833025677,
            -0.023449268768369693,
        ),
        v(-0.8870413798551298, 0.4939109876639331, 0.01592607395364552),
    ];
    (x0, x1, 2.845177968644235e-5)
}

/// The coplanarity sign change of [`far_vertex_case`], from the determinant on the linear
/// paths sampled at 2·10⁶ steps (the only one in [0, 1]; the distance there is 3.7e-9 m):
/// between these two sample times.
#[cfg(test)]
pub(crate) const FAR_VERTEX_ROOT: (f64, f64) = (0.334325, 0.3343255);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bernstein_matches_power_form_and_bisection_finds_root() {
        // (s − 0.3)(s − 0.5)(s − 0.9) in Bernstein form, coefficients from the blossom.
        let r = [0.3, 0.5, 0.9];
        let blossom = |u: [f64; 3]| (u[0] - r[0]) * (u[1] - r[1]) * (u[2] - r[2]);
        let sym = |k: usize| -> f64 {
            // average of the blossom over the choices of k ones among 3 arguments
            let mut sum = 0.0;
            let mut count = 0.0;
            for mask in 0..8u32 {
                if mask.count_ones() as usize == k {
                    let u = [
                        (mask & 1) as f64,
                        ((mask >> 1) & 1) as f64,
                        ((mask >> 2) & 1) as f64,
                    ];
                    sum += blossom(u);
                    count += 1.0;
                }
            }
            sum / count
        };
        let c = [sym(0), sym(1), sym(2), sym(3)];
        for i in 0..=20 {
            let s = i as f64 / 20.0;
            let exact = (s - r[0]) * (s - r[1]) * (s - r[2]);
            assert!((bernstein3(&c, s) - exact).abs() < 1e-15);
        }
        let root = bisect3(&c, 0.0, 0.4, bernstein3(&c, 0.0));
        assert!((root - 0.3).abs() < 1e-15, "{root}");
        assert!(
            bernstein3(&c, root) < 0.0,
            "rounded down: still on the start side"
        );
    }

    #[test]
    fn normal_orientation_follows_start_side_and_motion() {
        // Vertex above a horizontal triangle at s = 0, on it at s = t.
        let x0 = [
            V3::new(0.2, 0.2, 1.0),
            V3::new(0.0, 0.0, 0.0),
            V3::new(1.0, 0.0, 0.0),
            V3::new(0.0, 1.0, 0.0),
        ];
        let p_t = [V3::new(0.2, 0.2, 0.0), x0[1], x0[2], x0[3]];
        let rate = [
            V3::new(0.0, 0.0, -2.0),
            V3::zeros(),
            V3::zeros(),
            V3::zeros(),
        ];
        let w = [1.0, -0.6, -0.2, -0.2];
        let hit = make_hit(Pair::VertexFace, 0.5, &p_t, w, &x0, &rate, 1.0);
        assert!((hit.normal - V3::z()).norm() < 1e-15);
        // Same, triangle listed clockwise: the normal still points to the start side.
        let x0f = [x0[0], x0[1], x0[3], x0[2]];
        let ptf = [p_t[0], p_t[1], p_t[3], p_t[2]];
        let hit = make_hit(Pair::VertexFace, 0.5, &ptf, w, &x0f, &rate, 1.0);
        assert!((hit.normal - V3::z()).norm() < 1e-15);
        // Starting in the plane: oriented against the motion, so the gap closes.
        let hit = make_hit(Pair::VertexFace, 0.0, &p_t, w, &p_t, &rate, 1.0);
        assert!((hit.normal - V3::z()).norm() < 1e-15);
        // Degenerate input never panics and gives a unit normal.
        let z = [V3::zeros(); 4];
        let hit = make_hit(Pair::EdgeEdge, 0.0, &z, [1.0, 0.0, -1.0, 0.0], &z, &z, 0.0);
        assert!((hit.normal.norm() - 1.0).abs() < 1e-15);
    }
}
