//! The collision mesh of an island: every body's boundary surface (vertices, edges, triangles)
//! in one global vertex numbering (IPC Toolkit's `CollisionMesh`: the contact code sees
//! surface primitives, never bodies), with the pairs it must never test.

use crate::body::Body;
use crate::contact::surface::ContactSurface;
use nalgebra::Vector3;

/// Boundary primitives of all bodies, in global vertex indices (`offsets[b] + local`).
#[derive(Debug, Clone)]
pub struct CollisionMesh {
    /// First global vertex of each body; `offsets[n_bodies]` is the total vertex count.
    pub offsets: Vec<usize>,
    /// Body of each global vertex.
    pub owner: Vec<u32>,
    /// Surface vertices (global), ascending.
    pub vertices: Vec<u32>,
    /// Surface edges (global, `a < b`).
    pub edges: Vec<[u32; 2]>,
    /// Surface triangles (global, outward).
    pub triangles: Vec<[u32; 3]>,
    /// Rest positions (global), for the mollifier thresholds of edge–edge pairs.
    pub rest: Vec<Vector3<f64>>,
    /// Mean rest edge length of the surfaces (m).
    pub mean_edge: f64,
}

impl CollisionMesh {
    /// The surfaces of `bodies` (each body's [`ContactSurface`]).
    pub fn new(bodies: &[Body]) -> Self {
        let mut offsets = Vec::with_capacity(bodies.len() + 1);
        let (mut owner, mut vertices, mut edges, mut triangles, mut rest) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let (mut edge_sum, mut edge_count) = (0.0, 0usize);
        let mut offset = 0usize;
        for (b, body) in bodies.iter().enumerate() {
            offsets.push(offset);
            let s = ContactSurface::new(&body.mesh.positions, &body.mesh.tets);
            let o = offset as u32;
            vertices.extend(s.vertices.iter().map(|&v| v + o));
            edges.extend(s.edges.iter().map(|e| e.map(|v| v + o)));
            triangles.extend(s.triangles.iter().map(|t| t.map(|v| v + o)));
            owner.extend(std::iter::repeat_n(b as u32, body.n_vertices()));
            rest.extend_from_slice(&body.mesh.positions);
            edge_sum += s.mean_edge * s.edges.len() as f64;
            edge_count += s.edges.len();
            offset += body.n_vertices();
        }
        offsets.push(offset);
        Self {
            offsets,
            owner,
            vertices,
            edges,
            triangles,
            rest,
            mean_edge: if edge_count > 0 {
                edge_sum / edge_count as f64
            } else {
                0.0
            },
        }
    }

    /// Total number of vertices (all bodies).
    pub fn n_vertices(&self) -> usize {
        *self.offsets.last().unwrap_or(&0)
    }

    /// Copies every body's positions into the global array `x`.
    pub fn gather(&self, bodies: &[Body], x: &mut [Vector3<f64>]) {
        for (b, body) in bodies.iter().enumerate() {
            x[self.offsets[b]..self.offsets[b + 1]].copy_from_slice(&body.x);
        }
    }

    /// The diagonal of the axis-aligned box around the vertices `x` (m).
    pub fn bbox_diagonal(x: &[Vector3<f64>]) -> f64 {
        let mut lo = Vector3::repeat(f64::INFINITY);
        let mut hi = Vector3::repeat(f64::NEG_INFINITY);
        for p in x {
            lo = lo.inf(p);
            hi = hi.sup(p);
        }
        if x.is_empty() {
            0.0
        } else {
            (hi - lo).norm()
        }
    }
}

/// True when the point–triangle pair shares a vertex (never a contact).
#[inline]
pub fn pt_adjacent(p: u32, t: &[u32; 3]) -> bool {
    t.contains(&p)
}

/// True when the two edges share a vertex (never a contact).
#[inline]
pub fn ee_adjacent(a: &[u32; 2], b: &[u32; 2]) -> bool {
    a[0] == b[0] || a[0] == b[1] || a[1] == b[0] || a[1] == b[1]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::BodyDesc;
    use crate::fem::material::ModelKind;
    use crate::mesh::{box_grid, BoxGrid, TetSplit};

    fn cube(name: &str, z: f64) -> Body {
        let mesh = box_grid(&BoxGrid {
            cells: [1, 1, 1],
            cell_size: Vector3::new(1.0, 1.0, 1.0),
            origin: Vector3::new(0.0, 0.0, z),
            split: TetSplit::Five,
        });
        Body::new(BodyDesc::new(
            name,
            mesh,
            ModelKind::Linear,
            1e5,
            0.3,
            1000.0,
        ))
        .unwrap()
    }

    #[test]
    fn two_cubes_are_numbered_one_after_the_other() {
        let bodies = [cube("a", 0.0), cube("b", 2.0)];
        let m = CollisionMesh::new(&bodies);
        assert_eq!(m.offsets, vec![0, 8, 16]);
        assert_eq!(m.vertices.len(), 16);
        assert_eq!(m.triangles.len(), 24);
        assert_eq!(m.edges.len(), 36);
        assert!(m.triangles[12..].iter().all(|t| t.iter().all(|&v| v >= 8)));
        assert_eq!(m.owner[9], 1);
        let mut x = vec![Vector3::zeros(); 16];
        m.gather(&bodies, &mut x);
        assert_eq!(x[8], bodies[1].x[0]);
        assert!((CollisionMesh::bbox_diagonal(&x) - 11f64.sqrt()).abs() < 1e-12);
    }
}
