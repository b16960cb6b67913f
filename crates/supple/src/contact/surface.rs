//! The contact surface of a body: its boundary vertices, edges and triangles, with what the
//! collision tests need besides (the opposite edge of each boundary edge in one of its tets,
//! for Liesenfeld & Stolfi's edge–edge indicators eq. 31), and a point-in-mesh test.

use crate::mesh::boundary_faces_with_tets;
use nalgebra::Vector3;
use std::collections::HashMap;

/// Boundary primitives of one tet mesh, all in a deterministic order.
#[derive(Debug, Clone)]
pub struct ContactSurface {
    /// Boundary vertices, ascending.
    pub vertices: Vec<u32>,
    /// Boundary edges `[a, b]` with `a < b`, ascending.
    pub edges: Vec<[u32; 2]>,
    /// For each edge, the two vertices of a tet containing it that are not on it (the edge
    /// "opposite" to it in that tet; its midpoint is eq. 31's `p`).
    pub opposite: Vec<[u32; 2]>,
    /// For each edge, the (up to two) boundary triangles that contain it (`u32::MAX` where a
    /// non-manifold surface has only one).
    pub edge_faces: Vec<[u32; 2]>,
    /// Boundary triangles, outward (see [`crate::mesh::boundary_faces`]).
    pub triangles: Vec<[u32; 3]>,
    /// Mean boundary edge length at rest (m).
    pub mean_edge: f64,
}

impl ContactSurface {
    pub fn new(positions: &[Vector3<f64>], tets: &[[u32; 4]]) -> Self {
        let faces = boundary_faces_with_tets(tets);
        let mut edge_tet: HashMap<[u32; 2], u32> = HashMap::new();
        for (f, t) in &faces {
            for k in 0..3 {
                let (a, b) = (f[k], f[(k + 1) % 3]);
                edge_tet.entry([a.min(b), a.max(b)]).or_insert(*t);
            }
        }
        let mut edges: Vec<[u32; 2]> = edge_tet.keys().copied().collect();
        edges.sort_unstable();
        let opposite = edges
            .iter()
            .map(|e| {
                let tet = tets[edge_tet[e] as usize];
                let mut rest = tet.iter().copied().filter(|v| !e.contains(v));
                [rest.next().unwrap_or(e[0]), rest.next().unwrap_or(e[1])]
            })
            .collect();
        let mut edge_faces = vec![[u32::MAX; 2]; edges.len()];
        for (t, (f, _)) in faces.iter().enumerate() {
            for k in 0..3 {
                let (a, b) = (f[k], f[(k + 1) % 3]);
                if let Ok(e) = edges.binary_search(&[a.min(b), a.max(b)]) {
                    let slot = &mut edge_faces[e];
                    if slot[0] == u32::MAX {
                        slot[0] = t as u32;
                    } else {
                        slot[1] = t as u32;
                    }
                }
            }
        }
        let mut vertices: Vec<u32> = faces.iter().flat_map(|(f, _)| *f).collect();
        vertices.sort_unstable();
        vertices.dedup();
        let mean_edge = if edges.is_empty() {
            0.0
        } else {
            edges
                .iter()
                .map(|[a, b]| (positions[*a as usize] - positions[*b as usize]).norm())
                .sum::<f64>()
                / edges.len() as f64
        };
        Self {
            vertices,
            edges,
            opposite,
            edge_faces,
            triangles: faces.into_iter().map(|(f, _)| f).collect(),
            mean_edge,
        }
    }

    /// Area-weighted outward normal of triangle `t` at positions `x` (not normalized).
    pub fn triangle_normal(&self, x: &[Vector3<f64>], t: usize) -> Vector3<f64> {
        let [a, b, c] = self.triangles[t].map(|i| x[i as usize]);
        (b - a).cross(&(c - a))
    }

    /// Outward normal of edge `e` (sum of its triangles' normals; not normalized).
    pub fn edge_normal(&self, x: &[Vector3<f64>], e: usize) -> Vector3<f64> {
        self.edge_faces[e]
            .iter()
            .filter(|&&t| t != u32::MAX)
            .map(|&t| self.triangle_normal(x, t as usize))
            .sum()
    }

    /// Generalized winding number of the closed surface around `p` (≈ 1 inside, ≈ 0
    /// outside; van Oosterom & Strackee's solid angle of each triangle). Used to check that no
    /// vertex ended inside another body.
    pub fn winding_number(&self, x: &[Vector3<f64>], p: &Vector3<f64>) -> f64 {
        let mut omega = 0.0;
        for t in &self.triangles {
            let [a, b, c] = t.map(|i| x[i as usize] - p);
            let (la, lb, lc) = (a.norm(), b.norm(), c.norm());
            let num = a.dot(&b.cross(&c));
            let den = la * lb * lc + a.dot(&b) * lc + b.dot(&c) * la + c.dot(&a) * lb;
            omega += 2.0 * num.atan2(den);
        }
        omega / (4.0 * std::f64::consts::PI)
    }

    /// True when `p` lies inside the closed surface at positions `x`.
    pub fn contains(&self, x: &[Vector3<f64>], p: &Vector3<f64>) -> bool {
        self.winding_number(x, p) > 0.5
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{box_grid, BoxGrid, TetSplit};

    #[test]
    fn box_surface_counts_and_winding() {
        let m = box_grid(&BoxGrid {
            cells: [3, 2, 2],
            cell_size: Vector3::new(1.0, 1.0, 1.0),
            origin: Vector3::zeros(),
            split: TetSplit::Five,
        });
        let s = ContactSurface::new(&m.positions, &m.tets);
        // Closed genus-0 surface: V − E + F = 2, and 3F = 2E.
        let (v, e, f) = (s.vertices.len(), s.edges.len(), s.triangles.len());
        assert_eq!(v as i64 - e as i64 + f as i64, 2);
        assert_eq!(3 * f, 2 * e);
        // Grid points on the boundary of a 4×3×3 lattice.
        assert_eq!(v, 4 * 3 * 3 - 2);
        for (e, (edge, opp)) in s.edges.iter().zip(&s.opposite).enumerate() {
            assert!(!edge.contains(&opp[0]) && !edge.contains(&opp[1]) && opp[0] != opp[1]);
            for t in s.edge_faces[e] {
                let tri = s.triangles[t as usize];
                assert!(tri.contains(&edge[0]) && tri.contains(&edge[1]));
            }
        }
        // Outward normals point away from the centre.
        let centre = Vector3::new(1.5, 1.0, 1.0);
        for t in 0..f {
            let p = m.positions[s.triangles[t][0] as usize];
            assert!(s.triangle_normal(&m.positions, t).dot(&(p - centre)) > 0.0);
        }
        let inside = Vector3::new(1.5, 1.0, 1.0);
        let outside = Vector3::new(3.2, 1.0, 1.0);
        assert!((s.winding_number(&m.positions, &inside) - 1.0).abs() < 1e-9);
        assert!(s.winding_number(&m.positions, &outside).abs() < 1e-9);
        assert!(s.contains(&m.positions, &inside) && !s.contains(&m.positions, &outside));
    }
}
