//! The closest point of a triangle to a point, with its barycentric coordinates (used by
//! grabs, embedded surfaces and the stuffing's distance field).

use nalgebra::Vector3;

/// The point of triangle `abc` closest to `p` and its barycentric coordinates (Ericson,
/// Real-Time Collision Detection §5.1.5: Voronoi regions of the vertices, edges and face).
pub fn closest_on_triangle(
    p: &Vector3<f64>,
    a: &Vector3<f64>,
    b: &Vector3<f64>,
    c: &Vector3<f64>,
) -> (Vector3<f64>, [f64; 3]) {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    let (d1, d2) = (ab.dot(&ap), ac.dot(&ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return (*a, [1.0, 0.0, 0.0]);
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(&bp), ac.dot(&bp));
    if d3 >= 0.0 && d4 <= d3 {
        return (*b, [0.0, 1.0, 0.0]);
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        let v = d1 / (d1 - d3);
        return (a + v * ab, [1.0 - v, v, 0.0]);
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(&cp), ac.dot(&cp));
    if d6 >= 0.0 && d5 <= d6 {
        return (*c, [0.0, 0.0, 1.0]);
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        let w = d2 / (d2 - d6);
        return (a + w * ac, [1.0 - w, 0.0, w]);
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        let w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        return (b + w * (c - b), [0.0, 1.0 - w, w]);
    }
    let denom = 1.0 / (va + vb + vc);
    let (v, w) = (vb * denom, vc * denom);
    (a + v * ab + w * ac, [1.0 - v - w, v, w])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closest_point_regions() {
        let (a, b, c) = (Vector3::zeros(), Vector3::x(), Vector3::y());
        let (q, l) = closest_on_triangle(&Vector3::new(0.2, 0.3, 1.0), &a, &b, &c);
        assert!((q - Vector3::new(0.2, 0.3, 0.0)).norm() < 1e-15);
        assert!((l[0] - 0.5).abs() < 1e-15 && (l[1] - 0.2).abs() < 1e-15);
        let (q, l) = closest_on_triangle(&Vector3::new(-1.0, -1.0, 0.0), &a, &b, &c);
        assert_eq!((q, l), (a, [1.0, 0.0, 0.0]));
        let (q, _) = closest_on_triangle(&Vector3::new(1.0, 1.0, 0.0), &a, &b, &c);
        assert!((q - Vector3::new(0.5, 0.5, 0.0)).norm() < 1e-15);
        let (q, l) = closest_on_triangle(&Vector3::new(0.5, -2.0, 0.3), &a, &b, &c);
        assert!((q - Vector3::new(0.5, 0.0, 0.0)).norm() < 1e-15);
        assert!((l[0] - 0.5).abs() < 1e-15 && (l[1] - 0.5).abs() < 1e-15 && l[2] == 0.0);
    }
}
