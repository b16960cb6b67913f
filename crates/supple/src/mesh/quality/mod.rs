//! Mesh quality: dihedral-angle statistics ([`DihedralStats`]) and an optional improvement
//! pass ([`improve`]) that raises the smallest dihedral angle without changing the boundary.
//!
//! Why: Debunne et al. 2000 ("Adaptive simulation of soft bodies in real-time", §2.2.2) write
//! the Laplacian of a piecewise linear field as a sum over edges of cotangents of the angles
//! opposite each edge: first-order accurate in general, second-order where the opposite angles
//! are equal — hence their §4.1: meshes "optimized using a relaxation technique \[so that\]
//! length of edges and dihedral angles between two adjacent tetrahedra \[are\] as equal as
//! possible … only applied to the internal nodes of each mesh, thus preserving the surface
//! appearance". Small dihedral angles also make large cotangents, stiff elements and small
//! stable time steps for every explicit integrator.
//!
//! What [`improve`] does, a few passes of:
//! 1. interior-vertex smoothing (`smooth.rs`: smart Laplacian, then an ascent of the star's
//!    worst angle; a move is kept only when the star's smallest angle rises);
//! 2. a sweep of 3-2 and 2-3 flips on interior edges and faces (`topology.rs`; a flip is kept
//!    only when the smallest angle of the tets it makes is above that of those it removes).
//!
//! Guarantees, checked before the mesh is returned (a failure is an error, never a panic):
//! boundary vertices are not moved (bit for bit), the boundary triangles are the same set,
//! every vertex keeps its index (scenes name fixed vertices by index; the tet count may
//! change by flips), every tet passes [`TetMesh::validate`], so the total volume — bounded by
//! the unchanged boundary — is unchanged up to round-off. Everything runs in a fixed order on
//! one thread: the same input gives the same bits.
//!
//! ```
//! use supple::mesh::quality::{improve, DihedralStats, ImproveParams};
//! use supple::mesh::{box_grid, BoxGrid, TetSplit};
//! let mut mesh = box_grid(&BoxGrid {
//!     cells: [3, 3, 3],
//!     cell_size: nalgebra::Vector3::repeat(1.0),
//!     origin: nalgebra::Vector3::zeros(),
//!     split: TetSplit::Five,
//! });
//! mesh.positions[21].x += 0.3; // an interior vertex, pushed off its place
//! let (better, report) = improve(&mesh, &ImproveParams::default())?;
//! assert!(report.after.min_deg > report.before.min_deg);
//! assert_eq!(better.n_vertices(), mesh.n_vertices());
//! # Ok::<(), supple::mesh::quality::QualityError>(())
//! ```

mod measure;
mod smooth;
mod stats;
mod topology;

pub use stats::{DihedralStats, BINS, BIN_DEG};

use super::{MeshError, TetMesh};
use thiserror::Error;
use topology::Work;

/// Most passes [`improve`] accepts.
pub const MAX_PASSES: usize = 100;

/// Settings of [`improve`].
#[derive(Debug, Clone, PartialEq)]
pub struct ImproveParams {
    /// Passes of smoothing and flipping; the improvement stops early after a pass that changes
    /// nothing.
    pub passes: usize,
    /// Move interior vertices.
    pub smooth: bool,
    /// Make 2-3 and 3-2 flips.
    pub flip: bool,
}

impl Default for ImproveParams {
    fn default() -> Self {
        Self {
            passes: 6,
            smooth: true,
            flip: true,
        }
    }
}

/// What [`improve`] did.
#[derive(Debug, Clone, PartialEq)]
pub struct ImproveReport {
    pub before: DihedralStats,
    pub after: DihedralStats,
    /// Passes run (at most [`ImproveParams::passes`]).
    pub passes: usize,
    /// Vertex moves kept, over all passes.
    pub moves: usize,
    pub flips_23: usize,
    pub flips_32: usize,
}

/// Why a mesh could not be improved.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum QualityError {
    #[error(transparent)]
    Mesh(#[from] MeshError),
    #[error("face ({}, {}, {}) is shared by {count} tets (at most two share a face)", .face[0], .face[1], .face[2])]
    NonManifold { face: [u32; 3], count: usize },
    #[error("passes = {passes}: at most {MAX_PASSES}")]
    TooManyPasses { passes: usize },
    /// A guarantee of [`improve`] failed: a bug, reported instead of a broken mesh.
    #[error("mesh improvement broke its guarantee ({0}); the mesh is left as it was")]
    Broken(String),
}

/// The mesh with its smallest dihedral angles raised (see the module documentation for what
/// is kept), and a report with the angle statistics before and after.
pub fn improve(
    mesh: &TetMesh,
    params: &ImproveParams,
) -> Result<(TetMesh, ImproveReport), QualityError> {
    if params.passes > MAX_PASSES {
        return Err(QualityError::TooManyPasses {
            passes: params.passes,
        });
    }
    mesh.validate()?;
    let faces = check_faces(&mesh.tets)?;
    let mut on_boundary = vec![false; mesh.n_vertices()];
    for f in &faces {
        for &v in f {
            on_boundary[v as usize] = true;
        }
    }
    let before = DihedralStats::of(mesh);
    let mut work = Work::new(mesh.positions.clone(), &mesh.tets);
    let mut report = ImproveReport {
        before: before.clone(),
        after: before,
        passes: 0,
        moves: 0,
        flips_23: 0,
        flips_32: 0,
    };
    for _ in 0..params.passes {
        report.passes += 1;
        let mut changed = 0;
        if params.smooth {
            for (v, &fixed) in on_boundary.iter().enumerate() {
                if !fixed && work.smooth_vertex(v as u32) {
                    changed += 1;
                }
            }
            report.moves += changed;
        }
        if params.flip {
            let (f23, f32) = work.flip_sweep();
            report.flips_23 += f23;
            report.flips_32 += f32;
            changed += f23 + f32;
        }
        if changed == 0 {
            break;
        }
    }
    let (positions, tets) = work.into_tets();
    let out = TetMesh { positions, tets };
    check_kept(mesh, &out, &on_boundary, &faces)?;
    report.after = DihedralStats::of(&out);
    Ok((out, report))
}

/// The boundary triangles of `tets`, sorted (each as its sorted vertex triple), after checking
/// that no face has more than two tets.
fn check_faces(tets: &[[u32; 4]]) -> Result<Vec<[u32; 3]>, QualityError> {
    let mut all: Vec<[u32; 3]> = Vec::with_capacity(4 * tets.len());
    for t in tets {
        for f in super::boundary::TET_FACES {
            let mut k = f.map(|i| t[i]);
            k.sort_unstable();
            all.push(k);
        }
    }
    all.sort_unstable();
    let mut boundary = Vec::new();
    let mut i = 0;
    while i < all.len() {
        let j = i + all[i..].iter().take_while(|f| **f == all[i]).count();
        match j - i {
            1 => boundary.push(all[i]),
            2 => {}
            count => {
                return Err(QualityError::NonManifold {
                    face: all[i],
                    count,
                })
            }
        }
        i = j;
    }
    Ok(boundary)
}

/// The guarantees of [`improve`], checked on its result.
fn check_kept(
    before: &TetMesh,
    after: &TetMesh,
    on_boundary: &[bool],
    faces: &[[u32; 3]],
) -> Result<(), QualityError> {
    let broken = |m: String| Err(QualityError::Broken(m));
    if after.n_vertices() != before.n_vertices() {
        return broken("vertex count".into());
    }
    for (v, (a, b)) in before.positions.iter().zip(&after.positions).enumerate() {
        if on_boundary[v] && a.map(f64::to_bits) != b.map(f64::to_bits) {
            return broken(format!("boundary vertex {v} moved"));
        }
    }
    if let Err(e) = after.validate() {
        return broken(e.to_string());
    }
    match check_faces(&after.tets) {
        Ok(f) if f == faces => {}
        Ok(_) => return broken("boundary triangles".into()),
        Err(e) => return broken(e.to_string()),
    }
    // The same boundary and every tet positive: the tets tile the same polyhedron, whose
    // volume only round-off can change.
    let (v0, v1) = (before.volume(), after.volume());
    if (v1 - v0).abs() > 1e-9 * v0.abs() {
        return broken(format!("volume {v0:e} became {v1:e}"));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
