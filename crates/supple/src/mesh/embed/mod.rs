//! Embedded surfaces: arbitrary points (the vertices of a high-resolution render surface)
//! bound to a tetrahedral mesh by barycentric coordinates, and moved with it.
//!
//! Müller et al. 2002, "Stable real-time deformations", §4.4: the visible surface of a body is
//! not the tet mesh's boundary but a finer triangle mesh whose vertices are "interpolated from
//! the tetrahedral mesh": each surface vertex `p` is given, once, in barycentric coordinates
//! `λ` of one rest tet `[a, b, c, d]`, `p = Σ λᵢ xᵢ` with `Σ λᵢ = 1`, and every frame it is
//! placed at the same combination of that tet's current positions. For a point inside the tet
//! (`λᵢ ∈ [0, 1]`) this is the linear FE interpolation of the deformation; a vertex slightly
//! outside the coarse mesh (its surface is coarser than the render surface) is bound to the
//! nearest tet, whose `λ` are then slightly negative — the same affine map extended a little
//! beyond the tet.
//!
//! Finding the tet uses a uniform grid over the tets' rest boxes (`grid.rs`): the containing
//! tet from the point's cell, otherwise the nearest tet by a ring search that stops once no
//! farther cell can hold a closer tet. Updating is a gather of four positions per point, in
//! parallel over fixed chunks, so the result does not depend on the thread count.

mod grid;
#[cfg(test)]
mod tests;

use super::{closest_on_triangle, MeshError, TetMesh};
use grid::TetGrid;
use nalgebra::{Matrix3, Vector3};
use rayon::prelude::*;
use thiserror::Error;

/// Smallest barycentric coordinate still counted as inside a tet (points on a face or edge
/// round to a few ulps either side of 0).
pub const INSIDE_TOLERANCE: f64 = 1e-12;

/// Points per parallel task in [`Embedding::positions`] (a gather is cheap: below a few
/// thousand points a single thread is faster than splitting).
const CHUNK: usize = 4096;

/// Why points could not be embedded or placed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum EmbedError {
    /// The mesh is empty or invalid (see [`TetMesh::validate`]).
    #[error("cannot embed into this mesh: {0}")]
    Mesh(#[from] MeshError),
    /// A point to embed has a NaN or infinite coordinate.
    #[error("point {point} has a non-finite coordinate")]
    NonFinitePoint { point: usize },
    /// [`Embedding::positions`] got slices of the wrong lengths.
    #[error(
        "positions: {got_vertices} mesh positions and {got_out} output slots given, expected {vertices} and {points}"
    )]
    Length {
        vertices: usize,
        points: usize,
        got_vertices: usize,
        got_out: usize,
    },
}

/// Points bound to the tets of a mesh by barycentric coordinates (Müller et al. 2002 §4.4).
#[derive(Debug, Clone, PartialEq)]
pub struct Embedding {
    /// The tet each point is bound to.
    tet: Vec<u32>,
    /// That tet's four vertices (copied: the update reads no mesh).
    vertices: Vec<[u32; 4]>,
    /// Barycentric coordinates, summing to 1.
    weights: Vec<[f64; 4]>,
    /// Rest distance to the tet (0 for points inside it).
    distance: Vec<f64>,
    n_mesh_vertices: usize,
}

/// Where one point lies relative to a tet.
#[derive(Debug, Clone, Copy)]
struct Binding {
    tet: u32,
    weights: [f64; 4],
    distance: f64,
}

impl Embedding {
    /// Binds each point to the rest tet of `mesh` that contains it (barycentric coordinates
    /// all ≥ −[`INSIDE_TOLERANCE`]; of several, the one it lies deepest in), otherwise to the
    /// nearest tet (Euclidean distance to the solid tet; ties to the lower index).
    ///
    /// Deterministic, parallel over points. Fails on an invalid mesh or a non-finite point.
    pub fn new(mesh: &TetMesh, points: &[Vector3<f64>]) -> Result<Self, EmbedError> {
        mesh.validate()?;
        if let Some(point) = points.iter().position(|p| !p.iter().all(|c| c.is_finite())) {
            return Err(EmbedError::NonFinitePoint { point });
        }
        let rest: Vec<RestTet> = (0..mesh.n_tets())
            .into_par_iter()
            .map(|t| RestTet::new(&mesh.tet_positions(t)))
            .collect();
        let boxes: Vec<_> = rest.iter().map(RestTet::bounds).collect();
        let grid = TetGrid::new(&boxes);
        let bindings: Vec<Binding> = points
            .par_iter()
            .map(|p| bind(&grid, &rest, &boxes, p))
            .collect();
        Ok(Self {
            tet: bindings.iter().map(|b| b.tet).collect(),
            vertices: bindings.iter().map(|b| mesh.tets[b.tet as usize]).collect(),
            weights: bindings.iter().map(|b| b.weights).collect(),
            distance: bindings.iter().map(|b| b.distance).collect(),
            n_mesh_vertices: mesh.n_vertices(),
        })
    }

    /// Number of embedded points.
    pub fn len(&self) -> usize {
        self.tet.len()
    }

    /// Whether no point is embedded.
    pub fn is_empty(&self) -> bool {
        self.tet.is_empty()
    }

    /// The tet point `k` is bound to.
    pub fn tet(&self, k: usize) -> usize {
        self.tet[k] as usize
    }

    /// Point `k`'s barycentric coordinates in its tet (summing to 1; all in `[0, 1]` up to
    /// [`INSIDE_TOLERANCE`] for a point inside the mesh).
    pub fn weights(&self, k: usize) -> [f64; 4] {
        self.weights[k]
    }

    /// Point `k`'s rest distance to its tet: 0 inside the mesh, else to the nearest tet.
    pub fn distance(&self, k: usize) -> f64 {
        self.distance[k]
    }

    /// How many points lie outside every tet, and the largest rest distance among them.
    pub fn outside(&self) -> (usize, f64) {
        self.distance
            .iter()
            .filter(|&&d| d > 0.0)
            .fold((0, 0.0), |(n, m), &d| (n + 1, f64::max(m, d)))
    }

    /// Places every point from the mesh's current positions `x`: `out[k] = Σᵢ λᵢ x[tᵢ]`.
    ///
    /// Allocates nothing; parallel over chunks of points, the same bits for any thread count.
    pub fn positions(
        &self,
        x: &[Vector3<f64>],
        out: &mut [Vector3<f64>],
    ) -> Result<(), EmbedError> {
        if x.len() != self.n_mesh_vertices || out.len() != self.len() {
            return Err(EmbedError::Length {
                vertices: self.n_mesh_vertices,
                points: self.len(),
                got_vertices: x.len(),
                got_out: out.len(),
            });
        }
        if self.len() <= CHUNK {
            place(x, out, &self.vertices, &self.weights);
        } else {
            out.par_chunks_mut(CHUNK)
                .zip(self.vertices.par_chunks(CHUNK))
                .zip(self.weights.par_chunks(CHUNK))
                .for_each(|((out, v), w)| place(x, out, v, w));
        }
        Ok(())
    }
}

/// `out[k] = Σᵢ w[k][i] x[v[k][i]]`: one chunk of [`Embedding::positions`].
fn place(x: &[Vector3<f64>], out: &mut [Vector3<f64>], v: &[[u32; 4]], w: &[[f64; 4]]) {
    for (o, (v, w)) in out.iter_mut().zip(v.iter().zip(w)) {
        *o = x[v[0] as usize] * w[0]
            + x[v[1] as usize] * w[1]
            + x[v[2] as usize] * w[2]
            + x[v[3] as usize] * w[3];
    }
}

/// A rest tet: its first vertex and the inverse of its edge matrix, for barycentrics.
#[derive(Debug, Clone, Copy)]
struct RestTet {
    p: [Vector3<f64>; 4],
    inv: Matrix3<f64>,
}

impl RestTet {
    fn new(p: &[Vector3<f64>; 4]) -> Self {
        let dm = Matrix3::from_columns(&[p[1] - p[0], p[2] - p[0], p[3] - p[0]]);
        // Validated meshes have no degenerate tet, so the inverse exists.
        let inv = dm.try_inverse().unwrap_or_else(Matrix3::zeros);
        Self { p: *p, inv }
    }

    fn bounds(&self) -> (Vector3<f64>, Vector3<f64>) {
        let lo = self.p.iter().fold(self.p[0], |a, b| a.inf(b));
        let hi = self.p.iter().fold(self.p[0], |a, b| a.sup(b));
        (lo, hi)
    }

    /// Barycentric coordinates of `q` (summing to 1 up to rounding).
    fn barycentric(&self, q: &Vector3<f64>) -> [f64; 4] {
        let l = self.inv * (q - self.p[0]);
        [1.0 - l.x - l.y - l.z, l.x, l.y, l.z]
    }

    /// Distance from `q` to the solid tet.
    fn distance(&self, q: &Vector3<f64>) -> f64 {
        if self.barycentric(q).iter().all(|&l| l >= 0.0) {
            return 0.0;
        }
        const FACES: [[usize; 3]; 4] = [[1, 2, 3], [0, 2, 3], [0, 1, 3], [0, 1, 2]];
        FACES
            .iter()
            .map(|f| {
                (closest_on_triangle(q, &self.p[f[0]], &self.p[f[1]], &self.p[f[2]]).0 - q).norm()
            })
            .fold(f64::INFINITY, f64::min)
    }
}

/// The containing or nearest tet of `q`.
fn bind(
    grid: &TetGrid,
    rest: &[RestTet],
    boxes: &[(Vector3<f64>, Vector3<f64>)],
    q: &Vector3<f64>,
) -> Binding {
    // A point outside the grid's box (even by rounding) is tested against its clamped cell.
    let cell = grid.clamped(q);
    let mut best: Option<(f64, u32, [f64; 4])> = None;
    for &t in grid.cell_tets(cell) {
        let l = rest[t as usize].barycentric(q);
        let depth = l.iter().copied().fold(f64::INFINITY, f64::min);
        if depth >= -INSIDE_TOLERANCE && best.is_none_or(|(d, _, _)| depth > d) {
            best = Some((depth, t, l));
        }
    }
    if let Some((_, tet, weights)) = best {
        return Binding {
            tet,
            weights,
            distance: 0.0,
        };
    }
    // Ring search: cells r rings out are at least (r − 1)·h away, so stop once that exceeds
    // the best distance found.
    let (mut best_d, mut best_t) = (f64::INFINITY, u32::MAX);
    let max_ring = grid.dims().into_iter().max().unwrap_or(1);
    let h = grid.min_cell();
    for r in 0..=max_ring {
        if best_t != u32::MAX && (r as f64 - 1.0) * h > best_d {
            break;
        }
        grid.ring(cell, r, |c| {
            // Cells farther than the best tet cannot hold a closer one.
            if grid.cell_gap(c, q) > best_d {
                return;
            }
            for &t in grid.cell_tets(c) {
                let (lo, hi) = &boxes[t as usize];
                // The box distance bounds the tet distance from below.
                let gap = (lo - q).sup(&(q - hi)).sup(&Vector3::zeros()).norm();
                if gap > best_d {
                    continue;
                }
                let d = rest[t as usize].distance(q);
                if d < best_d || (d == best_d && t < best_t) {
                    (best_d, best_t) = (d, t);
                }
            }
        });
    }
    Binding {
        tet: best_t,
        weights: rest[best_t as usize].barycentric(q),
        distance: best_d,
    }
}
