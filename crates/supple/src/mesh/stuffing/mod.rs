//! Isosurface stuffing: a tetrahedral mesh of the inside of a surface with bounded dihedral
//! angles (F. Labelle and J. R. Shewchuk, "Isosurface Stuffing: Fast Tetrahedral Meshes with
//! Good Dihedral Angles", SIGGRAPH 2007).
//!
//! The domain is given by a function `f` that is negative inside, positive outside and zero
//! on the surface ([`ImplicitDomain`]: the analytic [`Sphere`] and [`Torus`], or a closed
//! triangle surface, [`TriangleSurface`]). The algorithm (§3):
//! 1. lay a body-centred cubic lattice of spacing `h` over the domain's box (§2) and evaluate
//!    the sign of `f` at every lattice vertex;
//! 2. on every lattice edge whose ends have opposite signs, find the **cut point** where
//!    `f = 0` (Illinois regula falsi on `f` along the edge);
//! 3. **warp**: a vertex with a cut point closer than `α·L` on one of its edges (`L` the edge's
//!    length, `α_long` for long and `α_short` for short edges) moves to the closest such cut
//!    point and becomes a surface vertex; cut points on its edges disappear (§3, "warping");
//! 4. **fill** every BCC tet from a small set of stencils (§3, Figure 3; see the `stencil`
//!    module for the cases and the quadrilateral diagonal rules).
//!
//! With the paper's parameters `α_long = 0.24999`, `α_short = 0.41189` ([`StuffingParams::new`])
//! the paper proves every dihedral angle in **[10.7°, 164.8°]** (§4, computer-assisted). What
//! we measure (tests in `stuffing/tests.rs`): spheres and tori whose radii are a few spacings
//! or more, analytic or triangulated, stay within [10.7°, 164.9°] (typically 15°–150°); random
//! placements of thin tori (tube radius 1.3–5 spacings) reach **9.99°** at worst, in a whole
//! BCC tet with three vertices warped apart. So this implementation does not reproduce the
//! paper's guarantee in every case; the likely difference is in details of warping or of the
//! quadrilateral diagonal rule (the stencil module says which rule we use) that we could not
//! check against the paper's text. Every output tet is positively oriented and the boundary is
//! a closed 2-manifold in every test. How well the mesh follows the surface depends on the
//! spacing: features smaller than about `h` are lost.
//!
//! Deterministic: the output depends only on the domain and the parameters, not on the number
//! of threads (per-vertex results are computed in parallel and gathered in index order).
//!
//! ```
//! use supple::mesh::stuffing::{stuff, Sphere, StuffingParams};
//! use supple::nalgebra::Vector3;
//!
//! let sphere = Sphere { center: Vector3::zeros(), radius: 1.0 };
//! let out = stuff(&sphere, &StuffingParams::new(0.25)).unwrap();
//! out.mesh.validate().unwrap();
//! assert!(out.stats.min_dihedral_deg >= 10.7 && out.stats.max_dihedral_deg <= 164.9);
//! let exact = 4.0 / 3.0 * std::f64::consts::PI;
//! assert!((out.mesh.volume() - exact).abs() / exact < 0.02);
//! ```

mod lattice;
mod stencil;
mod surface;
#[cfg(test)]
mod tests;

pub use surface::{SurfaceError, TriangleSurface};

use super::{MeshError, TetMesh};
use lattice::{edge_key, is_long, Lattice, POSITIVE_DIRS};
use nalgebra::Vector3;
use rayon::prelude::*;
use std::collections::HashMap;
use stencil::{Pt, TetView};
use thiserror::Error;

/// A solid given by a function negative inside, positive outside, zero on its surface.
pub trait ImplicitDomain: Sync {
    /// A box `(min, max)` containing the solid.
    fn bounds(&self) -> (Vector3<f64>, Vector3<f64>);
    /// `f(p)`. It must be exact (a continuous function vanishing on the surface) where
    /// `|f(p)| < limit`; elsewhere any value of the right sign with `|f| ≥ limit` will do, so
    /// that far points are cheap.
    fn eval(&self, p: &Vector3<f64>, limit: f64) -> f64;
}

/// A ball (the signed distance `|p − c| − r`).
#[derive(Debug, Clone, Copy)]
pub struct Sphere {
    pub center: Vector3<f64>,
    pub radius: f64,
}

impl ImplicitDomain for Sphere {
    fn bounds(&self) -> (Vector3<f64>, Vector3<f64>) {
        let r = Vector3::repeat(self.radius);
        (self.center - r, self.center + r)
    }
    fn eval(&self, p: &Vector3<f64>, _limit: f64) -> f64 {
        (p - self.center).norm() - self.radius
    }
}

/// A solid torus around the z axis through `center` (signed distance
/// `√((√(x² + y²) − R)² + z²) − r`).
#[derive(Debug, Clone, Copy)]
pub struct Torus {
    pub center: Vector3<f64>,
    /// Distance from the axis to the tube's centre line, `R`.
    pub major: f64,
    /// Tube radius, `r`.
    pub minor: f64,
}

impl ImplicitDomain for Torus {
    fn bounds(&self) -> (Vector3<f64>, Vector3<f64>) {
        let e = Vector3::new(self.major + self.minor, self.major + self.minor, self.minor);
        (self.center - e, self.center + e)
    }
    fn eval(&self, p: &Vector3<f64>, _limit: f64) -> f64 {
        let d = p - self.center;
        let ring = (d.x * d.x + d.y * d.y).sqrt() - self.major;
        (ring * ring + d.z * d.z).sqrt() - self.minor
    }
}

/// Settings of [`stuff`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StuffingParams {
    /// Lattice spacing `h` (side of the lattice cubes; long edges have length `h`, short edges
    /// `√3 h/2`). The output's edges are about this long.
    pub spacing: f64,
    /// Warping threshold on long edges, relative to the edge length.
    pub alpha_long: f64,
    /// Warping threshold on short edges, relative to the edge length.
    pub alpha_short: f64,
    /// Lattices with more vertices are refused ([`StuffingError::TooLarge`]).
    pub max_lattice_vertices: usize,
    /// Bytes the stuffing may use ([`StuffingError::TooMuchMemory`]; infinite by default),
    /// judged once the signs are known, before the tets are made: the output grows with the
    /// lattice vertices inside the domain, which only the signs tell (a flat pair of
    /// triangles at spacing 10⁻³ made 12·10⁶ tets from a 5·10⁶-vertex lattice and needed
    /// 2.85 GB; under `ulimit -v 2097152` it aborted). With the default `f64::INFINITY` the
    /// check is off.
    pub max_memory: f64,
}

/// Peak memory of the stuffing per lattice vertex (signed values, labels, cut bookkeeping).
/// Measured: 1.58 GB for the 1.0·10⁸-vertex lattice around a stretched bunny, small output.
pub const BYTES_PER_LATTICE_VERTEX: f64 = 16.0;
/// Peak memory per lattice vertex inside or on the domain (the output's vertices and about
/// five tets per such vertex, and the fill's bookkeeping). Measured: 2.85 GB for the
/// 2.46·10⁶ inside of a 5.0·10⁶-vertex lattice (4.0·10⁶ output vertices, 12·10⁶ tets).
pub const BYTES_PER_INSIDE_VERTEX: f64 = 1200.0;

impl StuffingParams {
    /// The paper's parameters for dihedral angles in [10.7°, 164.8°] (Labelle & Shewchuk
    /// 2007 §4: `α_long = 0.24999`, `α_short = 0.41189`), and at most 2·10⁸ lattice vertices
    /// (about 3 GB of working memory: 1.6 GB were measured for 10⁸ around a small surface).
    pub fn new(spacing: f64) -> Self {
        Self {
            spacing,
            alpha_long: 0.24999,
            alpha_short: 0.41189,
            max_lattice_vertices: 200_000_000,
            max_memory: f64::INFINITY,
        }
    }
}

/// What [`stuff`] measured.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StuffingStats {
    /// Vertices of the BCC lattice.
    pub lattice_vertices: usize,
    /// Lattice vertices moved onto the surface by warping.
    pub warped_vertices: usize,
    /// Cut points in the output (after warping).
    pub cut_points: usize,
    pub min_dihedral_deg: f64,
    pub max_dihedral_deg: f64,
}

/// A stuffed mesh and its statistics.
#[derive(Debug, Clone)]
pub struct Stuffed {
    pub mesh: TetMesh,
    pub stats: StuffingStats,
}

/// Why stuffing failed.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum StuffingError {
    #[error("spacing {0}: must be a finite number > 0")]
    BadSpacing(f64),
    #[error("alpha_long {long} and alpha_short {short}: each must be in [0, 0.5)")]
    BadAlpha { long: f64, short: f64 },
    #[error("the domain's bounding box is empty or not finite")]
    BadBounds,
    #[error("the lattice would have {vertices} vertices (at most {max}): use a larger spacing")]
    TooLarge { vertices: usize, max: usize },
    #[error(
        "the lattice reaches coordinates of magnitude {extent:e} (the domain's box grown by two spacings): \
         at most {max:e}, since the distances and ray crossings multiply up to three \
         coordinates; scale the surface or use a smaller spacing"
    )]
    OutOfRange { extent: f64, max: f64 },
    #[error("the domain's function is {value} (not finite) at ({:e}, {:e}, {:e})", .point[0], .point[1], .point[2])]
    NonFinite { point: [f64; 3], value: f64 },
    #[error(
        "the stuffing would need about {:.2} GB ({lattice} lattice vertices, {inside} inside the surface), more than the {:.2} GB it may use: use a larger spacing",
        .bytes / 1e9,
        .max / 1e9
    )]
    TooMuchMemory {
        bytes: f64,
        max: f64,
        lattice: usize,
        inside: usize,
    },
    #[error("no tetrahedron: the domain is empty or thinner than the spacing")]
    Empty,
    #[error("the stuffed mesh is invalid: {0}")]
    Mesh(#[from] MeshError),
}

const CUT: u64 = 1 << 63;

/// The largest coordinate magnitude of a lattice ([`StuffingError::OutOfRange`]). The signed
/// distance squares differences of coordinates and the ray-parity test multiplies a triangle
/// normal (a product of two) by an offset (a third), so every intermediate stays below
/// `1e300`, well inside `f64` (max about `1.8e308`). Past it, squared distances overflow to
/// infinity and regula falsi divides `∞` by `∞` (a cube of side 1e155 once panicked there).
pub const MAX_COORDINATE: f64 = 1e100;

/// How many lattice vertices [`stuff`] would use for `domain` at `spacing`, without building
/// the lattice (`usize::MAX` when the count does not fit or the spacing is not usable), so
/// that a caller can estimate the memory first: the stuffing's arrays grow with the lattice,
/// and a `supple mesh` whose lattice was within the vertex limit but not within `ulimit -v`
/// aborted in an allocation after two minutes (issue 45's fuzz run).
pub fn lattice_vertices(domain: &dyn ImplicitDomain, spacing: f64) -> usize {
    if !(spacing.is_finite() && spacing > 0.0) {
        return usize::MAX;
    }
    let (lo, hi) = domain.bounds();
    match Lattice::covering(&lo, &hi, spacing, usize::MAX) {
        Ok(lattice) => lattice.len(),
        Err(n) => n,
    }
}

/// Fills `domain` with tetrahedra (Labelle & Shewchuk 2007 §3). Every output tet is positively
/// oriented; see the module docs for the angle bound.
pub fn stuff(
    domain: &dyn ImplicitDomain,
    params: &StuffingParams,
) -> Result<Stuffed, StuffingError> {
    let h = params.spacing;
    if !(h.is_finite() && h > 0.0) {
        return Err(StuffingError::BadSpacing(h));
    }
    let (al, as_) = (params.alpha_long, params.alpha_short);
    if !((0.0..0.5).contains(&al) && (0.0..0.5).contains(&as_)) {
        return Err(StuffingError::BadAlpha {
            long: al,
            short: as_,
        });
    }
    let (lo, hi) = domain.bounds();
    if !(lo.iter().chain(hi.iter()).all(|v| v.is_finite()) && (0..3).all(|k| lo[k] <= hi[k])) {
        return Err(StuffingError::BadBounds);
    }
    let extent = lo.iter().chain(hi.iter()).fold(h, |m, v| m.max(v.abs())) + 2.0 * h;
    if extent.is_nan() || extent > MAX_COORDINATE {
        return Err(StuffingError::OutOfRange {
            extent,
            max: MAX_COORDINATE,
        });
    }
    let lat = Lattice::covering(&lo, &hi, h, params.max_lattice_vertices).map_err(|vertices| {
        StuffingError::TooLarge {
            vertices,
            max: params.max_lattice_vertices,
        }
    })?;

    // 1. Signs at the lattice vertices. Values closer than h to zero are exact; a NaN (a
    //    domain evaluated out of its range) would read as "on the surface" and is refused.
    let values: Vec<f64> = (0..lat.len() as u32)
        .into_par_iter()
        .with_min_len(4096)
        .map(|id| domain.eval(&lat.position(lat.coords(id)), h))
        .collect();
    if let Some(id) = values.iter().position(|f| f.is_nan()) {
        let p = lat.position(lat.coords(id as u32));
        return Err(StuffingError::NonFinite {
            point: [p.x, p.y, p.z],
            value: values[id],
        });
    }
    let mut labels: Vec<i8> = values.into_iter().map(sign).collect();
    let inside = labels.iter().filter(|&&l| l <= 0).count();
    let bytes =
        BYTES_PER_LATTICE_VERTEX * lat.len() as f64 + BYTES_PER_INSIDE_VERTEX * inside as f64;
    if bytes > params.max_memory {
        return Err(StuffingError::TooMuchMemory {
            bytes,
            max: params.max_memory,
            lattice: lat.len(),
            inside,
        });
    }

    // 2. Cut points on the edges with a sign change, keyed by edge, in key order.
    let cut_edges: Vec<(u64, u32, u32)> = (0..lat.len() as u32)
        .into_par_iter()
        .with_min_len(4096)
        .flat_map_iter(|id| {
            let c = lat.coords(id);
            let labels = &labels;
            let lat = &lat;
            POSITIVE_DIRS
                .iter()
                .enumerate()
                .filter_map(move |(dir, d)| {
                    let w = lat.id([c[0] + d[0], c[1] + d[1], c[2] + d[2]])?;
                    (labels[id as usize] as i32 * labels[w as usize] as i32 == -1).then_some((
                        id as u64 * 8 + dir as u64,
                        id,
                        w,
                    ))
                })
        })
        .collect();
    let cuts: Vec<(u64, Result<Vector3<f64>, StuffingError>)> = cut_edges
        .par_iter()
        .map(|&(key, a, b)| {
            let (pa, pb) = (lat.position(lat.coords(a)), lat.position(lat.coords(b)));
            (key, cut_point(domain, &pa, &pb))
        })
        .collect();
    // The first failure in key order, so that the error does not depend on the threads.
    let cuts: Vec<(u64, Vector3<f64>)> = cuts
        .into_iter()
        .map(|(key, c)| c.map(|c| (key, c)))
        .collect::<Result<_, _>>()?;
    let cut_at = |key: u64| -> Option<Vector3<f64>> {
        cuts.binary_search_by_key(&key, |&(k, _)| k)
            .ok()
            .map(|i| cuts[i].1)
    };

    // 3. Warping, vertex by vertex in id order (only ends of cut edges can be violated).
    let mut candidates: Vec<u32> = cut_edges.iter().flat_map(|&(_, a, b)| [a, b]).collect();
    candidates.sort_unstable();
    candidates.dedup();
    let mut warped: HashMap<u32, Vector3<f64>> = HashMap::new();
    for &v in &candidates {
        if labels[v as usize] == 0 {
            continue;
        }
        let cv = lat.coords(v);
        let pv = lat.position(cv);
        let mut best: Option<(f64, Vector3<f64>)> = None;
        for d in POSITIVE_DIRS.iter().flat_map(|d| [*d, d.map(|x| -x)]) {
            let cw = [cv[0] + d[0], cv[1] + d[1], cv[2] + d[2]];
            let Some(w) = lat.id(cw) else { continue };
            if labels[v as usize] as i32 * labels[w as usize] as i32 != -1 {
                continue;
            }
            let c = cut_at(edge_key(cv, v, cw, w)).expect("a sign change has a cut point");
            let len = (lat.position(cw) - pv).norm();
            let alpha = if is_long(cv, cw) { al } else { as_ };
            let dist = (c - pv).norm();
            if dist < alpha * len && best.is_none_or(|(bd, _)| dist < bd) {
                best = Some((dist, c));
            }
        }
        if let Some((_, c)) = best {
            warped.insert(v, c);
            labels[v as usize] = 0;
        }
    }

    // 4. Fill every BCC tet: four per pair of neighbouring red vertices (the two cube centres
    //    and each side of the square face between the cubes).
    let reds = lat.n_black() as u32..lat.len() as u32;
    let pieces: Vec<Vec<[Pt; 4]>> = reds
        .into_par_iter()
        .with_min_len(1024)
        .map(|r| {
            let mut out = Vec::new();
            let cr = lat.coords(r);
            for axis in 0..3 {
                let mut cr2 = cr;
                cr2[axis] += 2;
                if lat.id(cr2).is_none() {
                    continue;
                }
                let (b, c) = ((axis + 1) % 3, (axis + 2) % 3);
                let corner = |s1: i64, s2: i64| {
                    let mut k = cr;
                    k[axis] += 1;
                    k[b] += s1;
                    k[c] += s2;
                    k
                };
                let ring = [corner(1, 1), corner(-1, 1), corner(-1, -1), corner(1, -1)];
                for e in 0..4 {
                    let coords = [cr, cr2, ring[e], ring[(e + 1) % 4]];
                    let ids = coords.map(|k| lat.id(k).expect("interior red vertex"));
                    let tl = ids.map(|i| labels[i as usize]);
                    if tl.iter().all(|&l| l > 0) {
                        continue;
                    }
                    let pts = std::array::from_fn(|k| Pt {
                        key: ids[k] as u64,
                        pos: warped
                            .get(&ids[k])
                            .copied()
                            .unwrap_or_else(|| lat.position(coords[k])),
                    });
                    let view = TetView {
                        coords,
                        labels: tl,
                        pts,
                    };
                    let mut cut = |i: usize, j: usize| {
                        let key = edge_key(coords[i], ids[i], coords[j], ids[j]);
                        Pt {
                            key: CUT | key,
                            pos: cut_at(key).expect("a sign change has a cut point"),
                        }
                    };
                    stencil::fill(&view, &mut cut, &mut out);
                }
            }
            out
        })
        .collect();

    // 5. Number the points in order of first use.
    let mut index: HashMap<u64, u32> = HashMap::new();
    let mut positions = Vec::new();
    let mut tets = Vec::new();
    let mut cut_points = 0;
    for t in pieces.iter().flatten() {
        tets.push(t.map(|p| {
            *index.entry(p.key).or_insert_with(|| {
                positions.push(p.pos);
                cut_points += usize::from(p.key & CUT != 0);
                (positions.len() - 1) as u32
            })
        }));
    }
    if tets.is_empty() {
        return Err(StuffingError::Empty);
    }
    let mesh = TetMesh::new(positions, tets)?;
    let (min_dihedral_deg, max_dihedral_deg) = super::octasection::dihedral_range_deg(&mesh);
    Ok(Stuffed {
        stats: StuffingStats {
            lattice_vertices: lat.len(),
            warped_vertices: warped.len(),
            cut_points,
            min_dihedral_deg,
            max_dihedral_deg,
        },
        mesh,
    })
}

fn sign(f: f64) -> i8 {
    if f < 0.0 {
        -1
    } else if f > 0.0 {
        1
    } else {
        0
    }
}

/// The zero of `f` on the segment `a`–`b` (`f(a)`, `f(b)` of opposite signs): Illinois
/// regula falsi, which keeps the root bracketed and converges superlinearly. A non-finite
/// value of `f` is refused (it would make the interpolated `t` NaN).
fn cut_point(
    domain: &dyn ImplicitDomain,
    a: &Vector3<f64>,
    b: &Vector3<f64>,
) -> Result<Vector3<f64>, StuffingError> {
    let len = (b - a).norm();
    let at = |t: f64| a + (b - a) * t;
    let eval = |p: &Vector3<f64>| {
        let value = domain.eval(p, len);
        if value.is_finite() {
            Ok(value)
        } else {
            Err(StuffingError::NonFinite {
                point: [p.x, p.y, p.z],
                value,
            })
        }
    };
    let (mut t0, mut t1) = (0.0f64, 1.0f64);
    let (mut f0, mut f1) = (eval(a)?, eval(b)?);
    let mut side = 0;
    for _ in 0..100 {
        let t = ((t0 * f1 - t1 * f0) / (f1 - f0)).clamp(t0, t1);
        let f = eval(&at(t))?;
        if f == 0.0 || (t1 - t0) < 1e-12 || f.abs() < 1e-13 * len {
            return Ok(at(t));
        }
        if (f < 0.0) == (f0 < 0.0) {
            t0 = t;
            f0 = f;
            if side == -1 {
                f1 *= 0.5;
            }
            side = -1;
        } else {
            t1 = t;
            f1 = f;
            if side == 1 {
                f0 *= 0.5;
            }
            side = 1;
        }
    }
    Ok(at(0.5 * (t0 + t1)))
}
