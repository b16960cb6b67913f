//! Closest points between the primitives of a contact pair: point–triangle and
//! segment–segment (Ericson, *Real-Time Collision Detection*, §5.1.5 and §5.1.9), made robust
//! for degenerate triangles and (nearly) parallel segments.

use super::V3;

/// `sin²` of the angle between two segments below which they are treated as parallel
/// (angle ≲ 3·10⁻⁸ rad, where `a e − b²` is mostly rounding error).
const PARALLEL_SIN2: f64 = 1e-15;
/// Squared relative area below which a triangle is treated as degenerate.
const DEGENERATE_AREA2: f64 = 1e-24;

/// Closest point on the segment `(a, b)` to `p`: `(distance, u)` with the point
/// `a + u (b − a)`, `u ∈ [0, 1]` (`u = 0` for a zero-length segment).
pub fn point_segment(p: &V3, a: &V3, b: &V3) -> (f64, f64) {
    let ab = b - a;
    let len2 = ab.norm_squared();
    let u = if len2 > 0.0 {
        ((p - a).dot(&ab) / len2).clamp(0.0, 1.0)
    } else {
        0.0
    };
    ((a + u * ab - p).norm(), u)
}

/// Closest point on triangle (a,b,c) to p: (distance, barycentric `[b0, b1, b2]`), the point
/// being `b0 a + b1 b + b2 c` with `b_i ≥ 0`, `Σ b_i = 1`.
///
/// Ericson's Voronoi-region walk (§5.1.5); a degenerate (zero-area) triangle falls back to
/// the closest of its three edges.
pub fn point_triangle(p: &V3, a: &V3, b: &V3, c: &V3) -> (f64, [f64; 3]) {
    let ab = b - a;
    let ac = c - a;
    let area2 = ab.cross(&ac).norm_squared();
    let bound = DEGENERATE_AREA2 * ab.norm_squared() * ac.norm_squared();
    if area2 <= bound || area2.is_nan() {
        return degenerate_triangle(p, a, b, c);
    }
    let at = |v: f64, w: f64| -> (f64, [f64; 3]) {
        let q = a + v * ab + w * ac;
        ((p - q).norm(), [1.0 - v - w, v, w])
    };
    let ap = p - a;
    let (d1, d2) = (ab.dot(&ap), ac.dot(&ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return at(0.0, 0.0); // vertex region a
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(&bp), ac.dot(&bp));
    if d3 >= 0.0 && d4 <= d3 {
        return at(1.0, 0.0); // vertex region b
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return at(d1 / (d1 - d3), 0.0); // edge region ab
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(&cp), ac.dot(&cp));
    if d6 >= 0.0 && d5 <= d6 {
        return at(0.0, 1.0); // vertex region c
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return at(0.0, d2 / (d2 - d6)); // edge region ac
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && d4 - d3 >= 0.0 && d5 - d6 >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6)); // edge region bc
        return at(1.0 - w, w);
    }
    let denom = va + vb + vc; // = |ab × ac|² > 0
    let (v, w) = (vb / denom, vc / denom);
    at(v, w)
}

/// Closest point on a zero-area triangle: the best of its three edges.
fn degenerate_triangle(p: &V3, a: &V3, b: &V3, c: &V3) -> (f64, [f64; 3]) {
    let (dab, u) = point_segment(p, a, b);
    let mut best = (dab, [1.0 - u, u, 0.0]);
    let (dbc, u) = point_segment(p, b, c);
    if dbc < best.0 {
        best = (dbc, [0.0, 1.0 - u, u]);
    }
    let (dca, u) = point_segment(p, c, a);
    if dca < best.0 {
        best = (dca, [u, 0.0, 1.0 - u]);
    }
    best
}

/// Closest points of segments (p0,p1),(q0,q1): (distance, s, u) with parameters in `[0, 1]`;
/// robust for parallel segments.
///
/// The points are `p0 + s (p1 − p0)` and `q0 + u (q1 − q0)`. Ericson §5.1.9 (solve the 2×2
/// system, clamp, re-project). For (nearly) parallel segments, where that system is singular,
/// the candidates are the four endpoint projections and the midpoint of the overlap of the
/// two segments; the overlap midpoint is preferred when it is as close as the best to 10⁻¹²
/// (so that parallel overlapping edges get a symmetric contact point). Zero-length segments are points.
pub fn segment_segment(p0: &V3, p1: &V3, q0: &V3, q1: &V3) -> (f64, f64, f64) {
    let d1 = p1 - p0;
    let d2 = q1 - q0;
    let r = p0 - q0;
    let a = d1.norm_squared();
    let e = d2.norm_squared();
    let f = d2.dot(&r);
    let dist = |s: f64, u: f64| ((p0 + s * d1) - (q0 + u * d2)).norm();
    if a <= 0.0 && e <= 0.0 {
        return (r.norm(), 0.0, 0.0);
    }
    if a <= 0.0 {
        let u = (f / e).clamp(0.0, 1.0);
        return (dist(0.0, u), 0.0, u);
    }
    let c = d1.dot(&r);
    if e <= 0.0 {
        let s = (-c / a).clamp(0.0, 1.0);
        return (dist(s, 0.0), s, 0.0);
    }
    let b = d1.dot(&d2);
    let denom = a * e - b * b;
    if denom <= PARALLEL_SIN2 * a * e || denom.is_nan() {
        return parallel(p0, p1, q0, q1, a, b, c, e, f);
    }
    let mut s = ((b * f - c * e) / denom).clamp(0.0, 1.0);
    let mut u = (b * s + f) / e;
    if u < 0.0 {
        u = 0.0;
        s = (-c / a).clamp(0.0, 1.0);
    } else if u > 1.0 {
        u = 1.0;
        s = ((b - c) / a).clamp(0.0, 1.0);
    }
    (dist(s, u), s, u)
}

/// [`segment_segment`] for parallel segments (`a`, `b`, `c`, `e`, `f` as there).
#[allow(clippy::too_many_arguments)]
fn parallel(
    p0: &V3,
    p1: &V3,
    q0: &V3,
    q1: &V3,
    a: f64,
    b: f64,
    c: f64,
    e: f64,
    f: f64,
) -> (f64, f64, f64) {
    let d1 = p1 - p0;
    let d2 = q1 - q0;
    let dist = |s: f64, u: f64| ((p0 + s * d1) - (q0 + u * d2)).norm();
    let on_q = |s: f64| ((b * s + f) / e).clamp(0.0, 1.0);
    let on_p = |u: f64| ((b * u - c) / a).clamp(0.0, 1.0);
    let mut best = (f64::INFINITY, 0.0, 0.0);
    let mut consider = |s: f64, u: f64| {
        let d = dist(s, u);
        if d < best.0 {
            best = (d, s, u);
        }
    };
    consider(0.0, on_q(0.0));
    consider(1.0, on_q(1.0));
    consider(on_p(0.0), 0.0);
    consider(on_p(1.0), 1.0);
    // Overlap of q's projection onto p's line, in p's parameter.
    let (sq0, sq1) = (-c / a, (b - c) / a);
    let lo = sq0.min(sq1).max(0.0);
    let hi = sq0.max(sq1).min(1.0);
    if lo <= hi {
        let s = 0.5 * (lo + hi);
        let u = on_q(s);
        let d = dist(s, u);
        let scale = a.sqrt() + e.sqrt();
        if d <= best.0 * (1.0 + 1e-12) + 1e-15 * scale {
            best = (d, s, u);
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn point_triangle_regions() {
        let (a, b, c) = (V3::zeros(), V3::new(2.0, 0.0, 0.0), V3::new(0.0, 2.0, 0.0));
        // interior, above the plane
        let (d, w) = point_triangle(&V3::new(0.5, 0.5, 3.0), &a, &b, &c);
        assert!((d - 3.0).abs() < 1e-15);
        assert!((w[0] - 0.5).abs() < 1e-15 && (w[1] - 0.25).abs() < 1e-15);
        // beyond vertex b
        let (d, w) = point_triangle(&V3::new(3.0, -1.0, 0.0), &a, &b, &c);
        assert!((d - 2f64.sqrt()).abs() < 1e-15 && w == [0.0, 1.0, 0.0]);
        // beyond edge bc
        let (d, w) = point_triangle(&V3::new(2.0, 2.0, 0.0), &a, &b, &c);
        assert!((d - 2f64.sqrt()).abs() < 1e-15);
        assert!((w[1] - 0.5).abs() < 1e-15 && (w[2] - 0.5).abs() < 1e-15);
    }

    #[test]
    fn degenerate_triangle_is_a_segment() {
        let (a, b, c) = (V3::zeros(), V3::new(1.0, 0.0, 0.0), V3::new(2.0, 0.0, 0.0));
        let (d, w) = point_triangle(&V3::new(1.5, 1.0, 0.0), &a, &b, &c);
        assert!((d - 1.0).abs() < 1e-15, "{d}");
        let q = w[0] * a + w[1] * b + w[2] * c;
        assert!((q - V3::new(1.5, 0.0, 0.0)).norm() < 1e-15);
        let (d, w) = point_triangle(&V3::new(1.0, 1.0, 1.0), &a, &a, &a);
        assert!((d - 3f64.sqrt()).abs() < 1e-15 && (w.iter().sum::<f64>() - 1.0).abs() < 1e-15);
    }

    #[test]
    fn segments_crossing_parallel_and_degenerate() {
        let o = V3::zeros();
        let (d, s, u) = segment_segment(
            &V3::new(-1.0, 0.0, 0.0),
            &V3::new(1.0, 0.0, 0.0),
            &V3::new(0.0, -1.0, 1.0),
            &V3::new(0.0, 3.0, 1.0),
        );
        assert!((d - 1.0).abs() < 1e-15 && (s - 0.5).abs() < 1e-15 && (u - 0.25).abs() < 1e-15);
        // parallel, overlapping on x ∈ [1, 2]: the overlap midpoint
        let (d, s, u) = segment_segment(
            &o,
            &V3::new(2.0, 0.0, 0.0),
            &V3::new(1.0, 1.0, 0.0),
            &V3::new(4.0, 1.0, 0.0),
        );
        assert!((d - 1.0).abs() < 1e-15, "{d}");
        assert!(
            (s - 0.75).abs() < 1e-15 && (u - 1.0 / 6.0).abs() < 1e-15,
            "{s} {u}"
        );
        // anti-parallel, disjoint: endpoint to endpoint
        let (d, s, u) = segment_segment(
            &o,
            &V3::new(1.0, 0.0, 0.0),
            &V3::new(5.0, 1.0, 0.0),
            &V3::new(3.0, 1.0, 0.0),
        );
        assert!((d - 5f64.sqrt()).abs() < 1e-15 && s == 1.0 && u == 1.0);
        // a point against a segment
        let (d, s, u) = segment_segment(
            &V3::new(0.5, 1.0, 0.0),
            &V3::new(0.5, 1.0, 0.0),
            &o,
            &V3::x(),
        );
        assert!((d - 1.0).abs() < 1e-15 && s == 0.0 && (u - 0.5).abs() < 1e-15);
    }
}
