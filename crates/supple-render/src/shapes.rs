//! Triangulations of simple solids (sphere, capsule, box) in their own frame, for drawing
//! rigid obstacles with [`crate::Paint::Plain`].
//!
//! Every mesh is wound counter-clockwise seen from outside (outward normals by the right-hand
//! rule), which the smooth shading of [`crate::Paint::Plain`] relies on: vertex normals are
//! the sums of the adjacent triangles' normals. Spheres and capsules share vertices between
//! triangles (smooth); a box gives each face its own four vertices (hard edges).

/// A triangle mesh in double precision, in the solid's own frame.
#[derive(Debug, Clone, PartialEq)]
pub struct TriMesh {
    /// Vertex positions.
    pub positions: Vec<[f64; 3]>,
    /// Triangles as indices into `positions`, outward counter-clockwise.
    pub triangles: Vec<[u32; 3]>,
}

/// Fewest segments around a sphere or capsule.
const MIN_SEGMENTS: usize = 8;
/// Most segments around a sphere or capsule (bounds the work of a bad argument).
const MAX_SEGMENTS: usize = 512;

/// A UV sphere of `radius` about the origin with `segments` slices around the z axis and
/// `segments / 2` stacks from pole to pole (`segments` is clamped to 8..=512 and rounded up
/// to a multiple of 4).
pub fn sphere(radius: f64, segments: usize) -> TriMesh {
    capsule(radius, 0.0, segments)
}

/// A capsule: the segment from (0, 0, −half_length) to (0, 0, half_length) swept by a ball
/// of `radius`; two UV hemispheres joined by a cylinder, `segments` slices around the z axis
/// (clamped to 8..=512 and rounded up to a multiple of 4, so that a ring lies on each
/// hemisphere's equator). A `half_length` of 0 gives [`sphere`].
pub fn capsule(radius: f64, half_length: f64, segments: usize) -> TriMesh {
    let n = segments
        .clamp(MIN_SEGMENTS, MAX_SEGMENTS)
        .next_multiple_of(4);
    let stacks = n / 2;
    let h = half_length.max(0.0);
    // Profile (z, distance from the axis) from the top pole to the bottom pole.
    let mut profile = Vec::with_capacity(stacks + 2);
    for i in 0..=stacks {
        let theta = std::f64::consts::PI * i as f64 / stacks as f64;
        let (z, rho) = (radius * theta.cos(), radius * theta.sin());
        if 2 * i <= stacks {
            profile.push((h + z, rho));
        }
        if 2 * i >= stacks && (h > 0.0 || 2 * i > stacks) {
            profile.push((z - h, rho));
        }
    }
    lathe(&profile, n)
}

/// A surface of revolution about z: `profile` runs from the top pole (distance 0) to the
/// bottom pole (distance 0) through rings of `n` vertices each.
fn lathe(profile: &[(f64, f64)], n: usize) -> TriMesh {
    let rings = profile.len().saturating_sub(2);
    let mut positions = Vec::with_capacity(rings * n + 2);
    let (Some(top), Some(bottom)) = (profile.first(), profile.last()) else {
        return TriMesh {
            positions,
            triangles: Vec::new(),
        };
    };
    positions.push([0.0, 0.0, top.0]);
    for &(z, rho) in &profile[1..profile.len() - 1] {
        for j in 0..n {
            let phi = std::f64::consts::TAU * j as f64 / n as f64;
            positions.push([rho * phi.cos(), rho * phi.sin(), z]);
        }
    }
    let bottom_pole = positions.len() as u32;
    positions.push([0.0, 0.0, bottom.0]);
    let ring = |r: usize, j: usize| (1 + r * n + j % n) as u32;
    let mut triangles = Vec::with_capacity(2 * n * rings.max(1));
    for j in 0..n {
        if rings == 0 {
            break;
        }
        triangles.push([0, ring(0, j), ring(0, j + 1)]);
        for r in 0..rings - 1 {
            let (a0, a1, b0, b1) = (
                ring(r, j),
                ring(r, j + 1),
                ring(r + 1, j),
                ring(r + 1, j + 1),
            );
            triangles.push([a0, b0, b1]);
            triangles.push([a0, b1, a1]);
        }
        triangles.push([ring(rings - 1, j), bottom_pole, ring(rings - 1, j + 1)]);
    }
    TriMesh {
        positions,
        triangles,
    }
}

/// The box `[-h, h]` (per axis): 6 faces of 4 vertices each, 12 triangles.
pub fn cuboid(half_extents: [f64; 3]) -> TriMesh {
    let mut positions = Vec::with_capacity(24);
    let mut triangles = Vec::with_capacity(12);
    for k in 0..3 {
        for s in [-1.0, 1.0] {
            // (u, v, k) right-handed, swapped on the negative side: u × v is outward.
            let (mut u, mut v) = ((k + 1) % 3, (k + 2) % 3);
            if s < 0.0 {
                std::mem::swap(&mut u, &mut v);
            }
            let base = positions.len() as u32;
            for (a, b) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                let mut p = [0.0; 3];
                p[k] = s * half_extents[k];
                p[u] = a * half_extents[u];
                p[v] = b * half_extents[v];
                positions.push(p);
            }
            triangles.push([base, base + 1, base + 2]);
            triangles.push([base, base + 2, base + 3]);
        }
    }
    TriMesh {
        positions,
        triangles,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;
    use std::f64::consts::PI;

    /// Signed volume by the divergence theorem: positive for outward winding.
    fn volume(m: &TriMesh) -> f64 {
        let p = |i: u32| nalgebra::Vector3::from(m.positions[i as usize]);
        m.triangles
            .iter()
            .map(|t| p(t[0]).dot(&p(t[1]).cross(&p(t[2]))) / 6.0)
            .sum()
    }

    /// Every directed edge appears once and its reverse once: closed and consistently wound.
    fn assert_closed(m: &TriMesh) {
        let mut edges: HashMap<(u32, u32), usize> = HashMap::new();
        for t in &m.triangles {
            for (a, b) in [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])] {
                assert_ne!(a, b, "degenerate triangle {t:?}");
                *edges.entry((a, b)).or_default() += 1;
            }
        }
        for (&(a, b), &k) in &edges {
            assert_eq!(k, 1, "edge {a}→{b} used {k} times");
            assert_eq!(edges.get(&(b, a)), Some(&1), "edge {a}→{b} has no twin");
        }
    }

    #[test]
    fn sphere_is_closed_outward_and_close_to_the_ball() {
        let m = sphere(2.0, 24);
        assert_closed(&m);
        assert_eq!(m.positions.len(), 11 * 24 + 2);
        assert_eq!(m.triangles.len(), 2 * 24 * 11);
        let exact = 4.0 / 3.0 * PI * 8.0;
        let v = volume(&m);
        assert!(v > 0.95 * exact && v < exact, "{v} vs {exact}");
        for p in &m.positions {
            let r = nalgebra::Vector3::from(*p).norm();
            assert!((r - 2.0).abs() < 1e-12, "{r}");
        }
    }

    #[test]
    fn capsule_is_closed_outward_and_close_to_its_volume() {
        let (r, h) = (0.5, 1.5);
        let m = capsule(r, h, 24);
        assert_closed(&m);
        let exact = PI * r * r * 2.0 * h + 4.0 / 3.0 * PI * r * r * r;
        let v = volume(&m);
        assert!(v > 0.95 * exact && v < exact, "{v} vs {exact}");
        let zmax = m.positions.iter().map(|p| p[2]).fold(f64::MIN, f64::max);
        let zmin = m.positions.iter().map(|p| p[2]).fold(f64::MAX, f64::min);
        assert_eq!((zmax, zmin), (h + r, -h - r));
        // Odd and absurd segment counts are clamped, not a panic.
        assert_closed(&capsule(r, h, 7));
        assert_closed(&capsule(r, h, 0));
        assert_eq!(capsule(r, h, usize::MAX).positions.len(), 2 + 512 * 256);
    }

    #[test]
    fn box_has_twelve_outward_triangles_and_its_volume() {
        let m = cuboid([1.0, 2.0, 3.0]);
        assert_eq!((m.positions.len(), m.triangles.len()), (24, 12));
        assert!((volume(&m) - 48.0).abs() < 1e-12, "{}", volume(&m));
        // Each face's normal points away from the centre.
        for t in &m.triangles {
            let p = t.map(|i| nalgebra::Vector3::from(m.positions[i as usize]));
            let n = (p[1] - p[0]).cross(&(p[2] - p[0]));
            assert!(n.dot(&(p[0] + p[1] + p[2])) > 0.0, "{t:?}");
        }
    }
}
