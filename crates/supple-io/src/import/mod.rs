//! Tetrahedral meshes from other tools: Gmsh `.msh` (2.2 and 4.1, ASCII and binary), VTK unstructured
//! grids (`.vtu` XML and legacy ASCII `.vtk`), Medit `.mesh`, and TetGen `.node/.ele`.
//!
//! Every reader keeps the tetrahedra only: points, lines, triangles and other cells are
//! counted in [`ImportedMesh::skipped_cells`], and vertices no tet uses are dropped (a vertex
//! without a tet has no mass). Vertices keep their file order. Gmsh physical groups become
//! [`ImportedMesh::regions`]: named sets of vertices (of the group's tets, triangles, lines
//! or points) that scenes can select (`fixed = [{ region = "clamp" }]`).
//!
//! Orientation: Supple needs `det[b−a, c−a, d−a] > 0`. With [`Orient::Check`] (the default)
//! a mesh with negatively oriented tets is refused, counting them and naming the first; with
//! [`Orient::Fix`] they are made positive by swapping their 2nd and 3rd vertices (counted in
//! [`ImportedMesh::flipped`]). Degenerate tets are refused in either case with their index
//! and volume.

mod gmsh;
mod gmsh_binary;
mod medit;
pub mod surface;
mod vtk_legacy;
mod vtk_legacy_binary;

use crate::error::IoError;
use crate::files::Files;
use nalgebra::Vector3;
use std::path::Path;
use supple::mesh::{signed_volume, TetMesh, DEGENERATE_REL};

/// What to do with negatively oriented tets.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    Default,
    serde::Deserialize,
    serde::Serialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Orient {
    /// Refuse them (counted, the first named).
    #[default]
    Check,
    /// Swap two of their vertices.
    Fix,
}

/// Mesh file formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MeshFormat {
    Tetgen,
    Gmsh,
    Vtu,
    VtkLegacy,
    Medit,
}

impl MeshFormat {
    /// The format of a path by its extension: `.node`/`.ele` (TetGen), `.msh` (Gmsh), `.vtu`,
    /// `.vtk` (legacy VTK), `.mesh` (Medit).
    pub fn from_path(path: &Path) -> Option<Self> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "node" | "ele" => Some(Self::Tetgen),
            "msh" => Some(Self::Gmsh),
            "vtu" => Some(Self::Vtu),
            "vtk" => Some(Self::VtkLegacy),
            "mesh" => Some(Self::Medit),
            _ => None,
        }
    }
}

/// A mesh read from a file, with what was left out or changed.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedMesh {
    pub mesh: TetMesh,
    /// Named vertex sets (Gmsh physical groups), vertex indices into `mesh`.
    pub regions: Vec<(String, Vec<u32>)>,
    /// Cells that are not 4-node tetrahedra (10-node tets keep their corners and count as
    /// tets), left out.
    pub skipped_cells: usize,
    /// Vertices that no tet uses, dropped.
    pub dropped_vertices: usize,
    /// Tets whose orientation was swapped ([`Orient::Fix`]).
    pub flipped: usize,
}

impl ImportedMesh {
    /// The vertices of region `name`.
    pub fn region(&self, name: &str) -> Option<&[u32]> {
        self.regions
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }
}

/// A mesh as parsed, before cleaning: tets and regions index `positions`.
#[derive(Debug, Default)]
pub(crate) struct RawMesh {
    pub positions: Vec<Vector3<f64>>,
    pub tets: Vec<[u32; 4]>,
    pub regions: Vec<(String, Vec<u32>)>,
    pub skipped_cells: usize,
}

/// Reads a mesh file in `format` (`None`: by extension): the way to put a Gmsh, TetGen,
/// VTU, legacy VTK or Medit mesh into a body. A Gmsh mesh with a physical group `clamp`,
/// clamped there:
///
/// ```
/// use supple::prelude::*;
/// use supple_io::import::{read_mesh, Orient};
/// let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes/meshes/cube.msh");
/// let imported = read_mesh(&path, None, Orient::Check)?;
/// let clamp = imported.region("clamp").ok_or("a clamp group")?.to_vec();
/// let body = BodyDesc::of(imported.mesh).name("cube").fix(clamp.iter().copied()).build()?;
/// assert!(!clamp.is_empty() && body.fixed.iter().filter(|&&f| f).count() == clamp.len());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn read_mesh(
    path: &Path,
    format: Option<MeshFormat>,
    orient: Orient,
) -> Result<ImportedMesh, IoError> {
    read_mesh_from(Files::Disk, path, format, orient)
}

/// [`read_mesh`] from the file system or from bytes in memory ([`Files`]).
pub fn read_mesh_from(
    files: Files<'_>,
    path: &Path,
    format: Option<MeshFormat>,
    orient: Orient,
) -> Result<ImportedMesh, IoError> {
    let format = match format.or_else(|| MeshFormat::from_path(path)) {
        Some(f) => f,
        None => {
            return Err(IoError::parse(
                path,
                1,
                "unknown mesh format: use .msh (Gmsh), .vtu, .vtk, .mesh (Medit) or .node/.ele (TetGen), or give `kind`",
            ))
        }
    };
    let text = |p: &Path| files.read_to_string(p);
    let raw = match format {
        MeshFormat::Tetgen => {
            let (node_path, ele_path) = crate::tetgen::tetgen_paths(path);
            let nodes = crate::tetgen::parse_node(&text(&node_path)?, &node_path)?;
            let tets = crate::tetgen::parse_ele(
                &text(&ele_path)?,
                &ele_path,
                nodes.first_index,
                nodes.positions.len(),
            )?;
            return finish(
                RawMesh {
                    positions: nodes.positions,
                    tets,
                    ..RawMesh::default()
                },
                &ele_path,
                orient,
            );
        }
        MeshFormat::Gmsh => {
            let bytes = files.read(path)?;
            gmsh::parse(&bytes, path)?
        }
        MeshFormat::Vtu => {
            let d = crate::vtu_read::parse_vtu(&text(path)?, path)?;
            RawMesh {
                positions: d.positions,
                tets: d.tets,
                regions: Vec::new(),
                skipped_cells: d.skipped_cells,
            }
        }
        MeshFormat::VtkLegacy => {
            let bytes = files.read(path)?;
            vtk_legacy::parse(&bytes, path)?
        }
        MeshFormat::Medit => medit::parse(&text(path)?, path)?,
    };
    finish(raw, path, orient)
}

/// Drops unused vertices, orients (or refuses) tets, validates.
pub(crate) fn finish(raw: RawMesh, path: &Path, orient: Orient) -> Result<ImportedMesh, IoError> {
    let n = raw.positions.len();
    let invalid = |m: String| IoError::parse(path, 1, m);
    for (t, tet) in raw.tets.iter().enumerate() {
        if let Some(&i) = tet.iter().find(|&&i| i as usize >= n) {
            return Err(invalid(format!(
                "tet {t}: vertex index {i} is out of range ({n} vertices)"
            )));
        }
    }
    check_tets(&raw, path)?;
    let mut new_index = vec![u32::MAX; n];
    for &i in raw.tets.iter().flatten() {
        new_index[i as usize] = 0;
    }
    let mut positions = Vec::with_capacity(n);
    for (i, p) in raw.positions.iter().enumerate() {
        if new_index[i] == 0 {
            new_index[i] = positions.len() as u32;
            positions.push(*p);
        }
    }
    let dropped_vertices = n - positions.len();
    let mut tets: Vec<[u32; 4]> = (raw.tets.iter())
        .map(|t| t.map(|i| new_index[i as usize]))
        .collect();
    let mut negative = Vec::new();
    for (t, tet) in tets.iter().enumerate() {
        let p = tet.map(|i| positions[i as usize]);
        let volume = signed_volume(&p);
        let longest = (0..4)
            .flat_map(|a| (a + 1..4).map(move |b| (a, b)))
            .map(|(a, b)| (p[a] - p[b]).norm())
            .fold(0.0, f64::max);
        // The engine's own bound (TetMesh::validate), checked here so that a degenerate tet
        // is named whatever its sign.
        let bound = DEGENERATE_REL * longest.powi(3);
        if (6.0 * volume).abs() <= bound || volume.is_nan() || longest == 0.0 {
            return Err(invalid(format!(
                "tet {t}: volume {volume:e} is zero or too small for its size (degenerate); remove it or fix the mesh"
            )));
        }
        if volume < 0.0 {
            negative.push((t, volume));
        }
    }
    let flipped = match (orient, negative.first()) {
        (_, None) => 0,
        (Orient::Fix, Some(_)) => {
            for &(t, _) in &negative {
                tets[t].swap(1, 2);
            }
            negative.len()
        }
        (Orient::Check, Some(&(t, volume))) => {
            return Err(invalid(format!(
                "{} of {} tets are negatively oriented (first: tet {t}, volume {volume:e}); set orient = \"fix\" in the mesh table to swap their vertices",
                negative.len(),
                tets.len()
            )))
        }
    };
    let regions = (raw.regions.into_iter())
        .map(|(name, vertices)| {
            let mut v: Vec<u32> = (vertices.iter())
                .map(|&i| new_index.get(i as usize).copied().unwrap_or(u32::MAX))
                .filter(|&i| i != u32::MAX)
                .collect();
            v.sort_unstable();
            v.dedup();
            (name, v)
        })
        .collect();
    let mesh = TetMesh::new(positions, tets).map_err(|e| IoError::mesh(path, e))?;
    Ok(ImportedMesh {
        mesh,
        regions,
        skipped_cells: raw.skipped_cells,
        dropped_vertices,
        flipped,
    })
}

/// What every reader refuses alike, before any geometry: a used vertex with a non-finite
/// coordinate (named, rather than reported later as a degenerate tet), and a tet repeated
/// with the same four vertices in any order (its mass and stiffness would count twice).
/// Vertex and tet numbers are 0-based, in file order.
fn check_tets(raw: &RawMesh, path: &Path) -> Result<(), IoError> {
    let invalid = |m: String| IoError::parse(path, 1, m);
    for (t, tet) in raw.tets.iter().enumerate() {
        for &i in tet {
            let p = raw.positions[i as usize];
            if !p.iter().all(|c| c.is_finite()) {
                return Err(invalid(format!(
                    "vertex {i} (of tet {t}) has a non-finite coordinate ({}, {}, {})",
                    p.x, p.y, p.z
                )));
            }
        }
    }
    let mut sorted: Vec<([u32; 4], usize)> = (raw.tets.iter().enumerate())
        .map(|(t, tet)| {
            let mut k = *tet;
            k.sort_unstable();
            (k, t)
        })
        .collect();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0].0 == w[1].0) {
        let repeats = sorted.iter().filter(|(k, _)| *k == w[0].0).count();
        return Err(invalid(format!(
            "tets {} and {} have the same four vertices {:?} ({repeats} tets in all): remove the duplicates",
            w[0].1, w[1].1, w[0].0
        )));
    }
    Ok(())
}

/// Whitespace-separated tokens with their 1-based line numbers.
pub(crate) struct Tokens<'a> {
    lines: std::iter::Peekable<std::iter::Enumerate<std::str::Lines<'a>>>,
    current: Option<(usize, std::str::SplitAsciiWhitespace<'a>)>,
    comment: Option<char>,
}

impl<'a> Tokens<'a> {
    /// Tokens of `text`; `comment` starts a comment to the end of the line.
    pub fn new(text: &'a str, comment: Option<char>) -> Self {
        Self {
            lines: text.lines().enumerate().peekable(),
            current: None,
            comment,
        }
    }

    /// The next token and its line.
    pub fn next(&mut self) -> Option<(usize, &'a str)> {
        loop {
            if let Some((line, words)) = &mut self.current {
                if let Some(w) = words.next() {
                    return Some((*line, w));
                }
            }
            let (i, l) = self.lines.next()?;
            let l = match self.comment {
                Some(c) => l.split(c).next().unwrap_or(""),
                None => l,
            };
            self.current = Some((i + 1, l.split_ascii_whitespace()));
        }
    }

    /// The line of the last token (or 0).
    pub fn line(&self) -> usize {
        self.current.as_ref().map_or(0, |(l, _)| *l)
    }
}
