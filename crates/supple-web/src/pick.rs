//! Ray picking on the bodies' boundary surfaces: the nearest triangle a ray from the camera
//! hits, with the barycentric coordinates of the hit (Möller & Trumbore 1997, "Fast, minimum
//! storage ray/triangle intersection").

use nalgebra::Vector3;

/// Where a ray hits a surface.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    /// Index of the body.
    pub body: usize,
    /// Index of the triangle in the body's surface list.
    pub triangle: usize,
    /// Barycentric coordinates of the hit on the triangle's vertices `[a, b, c]` (sum 1).
    pub barycentric: [f64; 3],
    /// Ray parameter: the hit is at `origin + t · direction`.
    pub t: f64,
    /// The hit point.
    pub point: Vector3<f64>,
}

/// The ray parameter `t ≥ 0` and the barycentrics `(u, v)` of b and c where the ray
/// `o + t d` crosses triangle `(a, b, c)`, from either side; `None` when it misses it or is
/// parallel to it.
pub fn ray_triangle(
    o: &Vector3<f64>,
    d: &Vector3<f64>,
    a: &Vector3<f64>,
    b: &Vector3<f64>,
    c: &Vector3<f64>,
) -> Option<(f64, f64, f64)> {
    let (e1, e2) = (b - a, c - a);
    let p = d.cross(&e2);
    let det = e1.dot(&p);
    // Relative to the edge and ray lengths: a ray in the triangle's plane misses it.
    if det.abs() <= 1e-14 * e1.norm() * e2.norm() * d.norm() {
        return None;
    }
    let inv = 1.0 / det;
    let s = o - a;
    let u = s.dot(&p) * inv;
    if !(0.0..=1.0).contains(&u) {
        return None;
    }
    let q = s.cross(&e1);
    let v = d.dot(&q) * inv;
    if v < 0.0 || u + v > 1.0 {
        return None;
    }
    let t = e2.dot(&q) * inv;
    (t >= 0.0).then_some((t, u, v))
}

/// The nearest hit of the ray `origin + t · direction` over every body's surface
/// (`surfaces[b]` are body `b`'s triangles into `positions[b]`). Ties go to the lower body,
/// then the lower triangle, so the result does not depend on anything but the input.
pub fn pick(
    origin: &Vector3<f64>,
    direction: &Vector3<f64>,
    positions: &[&[Vector3<f64>]],
    surfaces: &[Vec<[u32; 3]>],
) -> Option<Hit> {
    let mut best: Option<Hit> = None;
    for (body, (x, tris)) in positions.iter().zip(surfaces).enumerate() {
        for (triangle, tri) in tris.iter().enumerate() {
            let [a, b, c] = tri.map(|i| x[i as usize]);
            let Some((t, u, v)) = ray_triangle(origin, direction, &a, &b, &c) else {
                continue;
            };
            if best.is_none_or(|h| t < h.t) {
                best = Some(Hit {
                    body,
                    triangle,
                    barycentric: [1.0 - u - v, u, v],
                    t,
                    point: origin + direction * t,
                });
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;
    use supple::mesh::{boundary_faces, box_grid, BoxGrid, TetSplit};

    #[test]
    fn a_ray_through_a_triangle_gives_its_barycentrics() {
        let (a, b, c) = (
            Vector3::new(0.0, 0.0, 0.0),
            Vector3::new(1.0, 0.0, 0.0),
            Vector3::new(0.0, 1.0, 0.0),
        );
        let o = Vector3::new(0.25, 0.5, 2.0);
        let (t, u, v) = ray_triangle(&o, &Vector3::new(0.0, 0.0, -1.0), &a, &b, &c).unwrap();
        assert!((t - 2.0).abs() < 1e-15 && (u - 0.25).abs() < 1e-15 && (v - 0.5).abs() < 1e-15);
        // Pointing away, outside, or in the plane: no hit.
        assert!(ray_triangle(&o, &Vector3::new(0.0, 0.0, 1.0), &a, &b, &c).is_none());
        let outside = Vector3::new(0.9, 0.9, 2.0);
        assert!(ray_triangle(&outside, &Vector3::new(0.0, 0.0, -1.0), &a, &b, &c).is_none());
        let flat = Vector3::new(-1.0, 0.2, 0.0);
        assert!(ray_triangle(&flat, &Vector3::new(1.0, 0.0, 0.0), &a, &b, &c).is_none());
    }

    #[test]
    fn picking_a_box_hits_its_near_face_and_the_nearer_body() {
        let make = |x0: f64| {
            box_grid(&BoxGrid {
                cells: [2, 2, 2],
                cell_size: Vector3::new(0.5, 0.5, 0.5),
                origin: Vector3::new(x0, 0.0, 0.0),
                split: TetSplit::Five,
            })
        };
        let (near, far) = (make(0.0), make(3.0));
        let surfaces = vec![boundary_faces(&far.tets), boundary_faces(&near.tets)];
        let positions = [far.positions.as_slice(), near.positions.as_slice()];
        // Along −x from x = 10 through y = z = 0.5: the far box (body 0, x ∈ [3, 4]) first.
        let hit = pick(
            &Vector3::new(10.0, 0.5, 0.4),
            &Vector3::new(-1.0, 0.0, 0.0),
            &positions,
            &surfaces,
        )
        .unwrap();
        assert_eq!(hit.body, 0);
        assert!((hit.point.x - 4.0).abs() < 1e-12 && (hit.t - 6.0).abs() < 1e-12);
        let tri = surfaces[0][hit.triangle];
        let from_bary: Vector3<f64> = (0..3)
            .map(|k| positions[0][tri[k] as usize] * hit.barycentric[k])
            .sum();
        assert!((from_bary - hit.point).norm() < 1e-12);
        // Along +x from x = −5: the near box (body 1) at x = 0.
        let hit = pick(
            &Vector3::new(-5.0, 0.5, 0.4),
            &Vector3::new(1.0, 0.0, 0.0),
            &positions,
            &surfaces,
        )
        .unwrap();
        assert_eq!(hit.body, 1);
        assert!(hit.point.x.abs() < 1e-12);
        // Above everything: a miss.
        let miss = pick(
            &Vector3::new(0.0, 5.0, 0.0),
            &Vector3::new(1.0, 0.0, 0.0),
            &positions,
            &surfaces,
        );
        assert!(miss.is_none());
    }
}
