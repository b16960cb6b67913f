//! Tetrahedral meshes: rest positions, tets, validation, boundary surface, generators,
//! embedded surfaces ([`embed`]), meshes of a surface's inside by isosurface stuffing
//! ([`stuffing`]), and dihedral-angle statistics and improvement ([`quality`]).
//!
//! Orientation convention (used everywhere in Supple): a tet `[a, b, c, d]` is positively
//! oriented when `det[b − a, c − a, d − a] > 0`. Negative or zero-volume rest tets are
//! **refused** (never silently flipped), with the element index in the error.

mod boundary;
mod closest;
pub mod embed;
mod generate;
pub mod octasection;
pub mod quality;
pub mod stuffing;

pub use boundary::{boundary_faces, boundary_faces_with_tets};
pub use closest::closest_on_triangle;
pub use embed::{EmbedError, Embedding};
pub use generate::{box_grid, BoxGrid, TetSplit};
pub use octasection::{octasect, Hierarchy, Octasection};

use nalgebra::{Matrix3, Vector3};
use thiserror::Error;

/// A problem with a mesh, naming the element or vertex at fault.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum MeshError {
    #[error("mesh has no vertices")]
    NoVertices,
    #[error("mesh has no tetrahedra")]
    NoTets,
    #[error("vertex {vertex} has a non-finite coordinate")]
    NonFiniteVertex { vertex: usize },
    #[error(
        "tet {tet}: vertex index {index} is out of range (the mesh has {n_vertices} vertices)"
    )]
    IndexOutOfRange {
        tet: usize,
        index: u32,
        n_vertices: usize,
    },
    #[error("tet {tet}: vertex {vertex} appears more than once")]
    RepeatedVertex { tet: usize, vertex: u32 },
    #[error(
        "tet {tet}: rest volume {volume:e} is zero or too small for its size (degenerate tet)"
    )]
    Degenerate { tet: usize, volume: f64 },
    #[error(
        "tet {tet}: rest volume {volume:e} is negative (inverted); Supple needs det[b-a, c-a, d-a] > 0: swap two vertices of the tet"
    )]
    Inverted { tet: usize, volume: f64 },
}

/// Relative bound under which a tet counts as degenerate: `|6V| <= DEGENERATE_REL * L^3`,
/// with `L` the tet's longest edge. Slivers of real meshes (1e-4 and above) pass.
pub const DEGENERATE_REL: f64 = 1e-10;

/// A tetrahedral mesh: rest positions and 4-vertex elements (0-based indices).
#[derive(Debug, Clone, PartialEq)]
pub struct TetMesh {
    pub positions: Vec<Vector3<f64>>,
    pub tets: Vec<[u32; 4]>,
}

impl TetMesh {
    /// Builds a mesh and validates it (see [`TetMesh::validate`]).
    pub fn new(positions: Vec<Vector3<f64>>, tets: Vec<[u32; 4]>) -> Result<Self, MeshError> {
        let mesh = Self { positions, tets };
        mesh.validate()?;
        Ok(mesh)
    }

    pub fn n_vertices(&self) -> usize {
        self.positions.len()
    }

    pub fn n_tets(&self) -> usize {
        self.tets.len()
    }

    /// Checks indices, repeated vertices, finiteness, and that every tet has a positive,
    /// non-degenerate rest volume. The first problem found is returned.
    pub fn validate(&self) -> Result<(), MeshError> {
        if self.positions.is_empty() {
            return Err(MeshError::NoVertices);
        }
        if self.tets.is_empty() {
            return Err(MeshError::NoTets);
        }
        if let Some(vertex) = self
            .positions
            .iter()
            .position(|p| !p.iter().all(|c| c.is_finite()))
        {
            return Err(MeshError::NonFiniteVertex { vertex });
        }
        let n = self.positions.len();
        for (t, tet) in self.tets.iter().enumerate() {
            for (k, &i) in tet.iter().enumerate() {
                if i as usize >= n {
                    return Err(MeshError::IndexOutOfRange {
                        tet: t,
                        index: i,
                        n_vertices: n,
                    });
                }
                if tet[..k].contains(&i) {
                    return Err(MeshError::RepeatedVertex { tet: t, vertex: i });
                }
            }
            let p = self.tet_positions(t);
            let volume = signed_volume(&p);
            let longest = (0..4)
                .flat_map(|a| (a + 1..4).map(move |b| (a, b)))
                .map(|(a, b)| (p[a] - p[b]).norm())
                .fold(0.0, f64::max);
            if (6.0 * volume).abs() <= DEGENERATE_REL * longest.powi(3) || longest == 0.0 {
                return Err(MeshError::Degenerate { tet: t, volume });
            }
            if volume < 0.0 {
                return Err(MeshError::Inverted { tet: t, volume });
            }
        }
        Ok(())
    }

    /// The four rest positions of tet `t`.
    pub fn tet_positions(&self, t: usize) -> [Vector3<f64>; 4] {
        self.tets[t].map(|i| self.positions[i as usize])
    }

    /// Total rest volume.
    pub fn volume(&self) -> f64 {
        volume_of(&self.positions, &self.tets)
    }

    /// Axis-aligned bounding box `(min, max)` of the positions.
    pub fn bounding_box(&self) -> (Vector3<f64>, Vector3<f64>) {
        bounding_box(&self.positions)
    }

    /// Applies `p ↦ rotation · (scale · p) + translation` to every vertex.
    /// A proper rotation and a positive scale keep every tet's orientation.
    pub fn transform(&mut self, scale: f64, rotation: &Matrix3<f64>, translation: &Vector3<f64>) {
        for p in &mut self.positions {
            *p = rotation * (*p * scale) + translation;
        }
    }
}

/// Signed volume of a tet: `det[b − a, c − a, d − a] / 6`.
pub fn signed_volume(p: &[Vector3<f64>; 4]) -> f64 {
    (p[1] - p[0]).cross(&(p[2] - p[0])).dot(&(p[3] - p[0])) / 6.0
}

/// Sum of signed tet volumes for the given positions (the current volume of a deformed body).
pub fn volume_of(positions: &[Vector3<f64>], tets: &[[u32; 4]]) -> f64 {
    tets.iter()
        .map(|t| signed_volume(&t.map(|i| positions[i as usize])))
        .sum()
}

/// Axis-aligned bounding box `(min, max)` of a point set.
pub fn bounding_box(points: &[Vector3<f64>]) -> (Vector3<f64>, Vector3<f64>) {
    let mut lo = Vector3::repeat(f64::INFINITY);
    let mut hi = Vector3::repeat(f64::NEG_INFINITY);
    for p in points {
        lo = lo.inf(p);
        hi = hi.sup(p);
    }
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit_tet() -> TetMesh {
        TetMesh {
            positions: vec![Vector3::zeros(), Vector3::x(), Vector3::y(), Vector3::z()],
            tets: vec![[0, 1, 2, 3]],
        }
    }

    #[test]
    fn unit_tet_is_valid_with_volume_one_sixth() {
        let m = unit_tet();
        m.validate().unwrap();
        assert!((m.volume() - 1.0 / 6.0).abs() < 1e-15);
    }

    #[test]
    fn errors_name_the_element() {
        let mut m = unit_tet();
        m.tets.push([0, 1, 2, 7]);
        let e = m.validate().unwrap_err();
        assert_eq!(
            e.to_string(),
            "tet 1: vertex index 7 is out of range (the mesh has 4 vertices)"
        );

        let mut m = unit_tet();
        m.tets[0] = [0, 1, 1, 3];
        assert_eq!(
            m.validate().unwrap_err().to_string(),
            "tet 0: vertex 1 appears more than once"
        );

        let mut m = unit_tet();
        m.tets[0] = [0, 2, 1, 3];
        let e = m.validate().unwrap_err();
        assert!(matches!(e, MeshError::Inverted { tet: 0, .. }), "{e}");
        assert!(e.to_string().starts_with("tet 0: rest volume"));

        let mut m = unit_tet();
        m.positions[3] = Vector3::new(0.3, 0.3, 0.0);
        let e = m.validate().unwrap_err();
        assert!(matches!(e, MeshError::Degenerate { tet: 0, .. }), "{e}");
        assert!(e.to_string().contains("degenerate"));

        let mut m = unit_tet();
        m.positions[2].y = f64::NAN;
        assert_eq!(
            m.validate().unwrap_err(),
            MeshError::NonFiniteVertex { vertex: 2 }
        );
    }

    #[test]
    fn transform_keeps_orientation_and_scales_volume() {
        let mut m = unit_tet();
        let r = nalgebra::Rotation3::from_euler_angles(0.3, -1.1, 2.0).into_inner();
        m.transform(2.0, &r, &Vector3::new(1.0, 2.0, 3.0));
        m.validate().unwrap();
        assert!((m.volume() - 8.0 / 6.0).abs() < 1e-12);
    }
}
