//! Mesh files named in a scene (`mesh = { kind = "gmsh" | "vtu" | "vtk" | "medit" |
//! "tetgen" | "file", path = ..., orient = "check" | "fix", improve = false | true }`): read,
//! with what the reader left out or changed as notes, and the file's named regions for
//! `fixed` selectors. `improve = true` raises the smallest dihedral angles
//! (`supple::mesh::quality`, Debunne et al. 2000 §4.1) keeping the boundary and every vertex
//! index, so `fixed` selectors and regions mean the same vertices.

use super::file::MeshSection;
use super::BodyIssue;
use crate::files::Files;
use crate::import::{read_mesh_from, MeshFormat, Orient};
use std::path::Path;
use supple::mesh::TetMesh;

pub(super) struct MeshRead {
    pub mesh: TetMesh,
    pub regions: Vec<(String, Vec<u32>)>,
    pub notes: Vec<String>,
}

/// Reads the mesh file of `section` (any kind but `box`); `key` is `body[i]`, paths are
/// relative to `dir`.
pub(super) fn read(
    section: MeshSection,
    key: &str,
    dir: &Path,
    files: Files<'_>,
) -> Result<MeshRead, BodyIssue> {
    use MeshSection as S;
    let (path, orient, improve, format) = match section {
        S::Tetgen {
            path,
            orient,
            improve,
        } => (path, orient, improve, Some(MeshFormat::Tetgen)),
        S::Gmsh {
            path,
            orient,
            improve,
        } => (path, orient, improve, Some(MeshFormat::Gmsh)),
        S::Vtu {
            path,
            orient,
            improve,
        } => (path, orient, improve, Some(MeshFormat::Vtu)),
        S::Vtk {
            path,
            orient,
            improve,
        } => (path, orient, improve, Some(MeshFormat::VtkLegacy)),
        S::Medit {
            path,
            orient,
            improve,
        } => (path, orient, improve, Some(MeshFormat::Medit)),
        S::File {
            path,
            orient,
            improve,
        } => (path, orient, improve, None),
        S::Surface {
            path,
            spacing,
            improve,
        } => {
            let mut m = stuffed(&path, spacing, key, dir, files)?;
            if improve {
                m.mesh = improved(m.mesh, &path, key, &mut m.notes)?;
            }
            return Ok(m);
        }
        MeshSection::Box { .. } | MeshSection::Given { .. } => {
            return Err(BodyIssue::Invalid(format!(
                "{key}.mesh: a box or given mesh is not read from a file"
            )))
        }
    };
    let full = dir.join(&path);
    let m = read_mesh_from(files, &full, format, orient)
        .map_err(|e| BodyIssue::Mesh(format!("{key}.mesh.path"), e))?;
    let mut notes = Vec::new();
    let file = path.display();
    if m.skipped_cells > 0 {
        notes.push(format!(
            "{key}.mesh: {file}: {} cell(s) that are not tetrahedra skipped",
            m.skipped_cells
        ));
    }
    if m.dropped_vertices > 0 {
        notes.push(format!(
            "{key}.mesh: {file}: {} vertex(es) used by no tet dropped",
            m.dropped_vertices
        ));
    }
    if m.flipped > 0 {
        debug_assert_eq!(orient, Orient::Fix);
        notes.push(format!(
            "{key}.mesh: {file}: {} negatively oriented tet(s) of {} swapped (orient = \"fix\")",
            m.flipped,
            m.mesh.n_tets()
        ));
    }
    let mesh = if improve {
        improved(m.mesh, &path, key, &mut notes)?
    } else {
        m.mesh
    };
    Ok(MeshRead {
        mesh,
        regions: m.regions,
        notes,
    })
}

/// `improve = true`: the mesh with its smallest dihedral angles raised, and a note with the
/// angles before and after.
fn improved(
    mesh: TetMesh,
    path: &Path,
    key: &str,
    notes: &mut Vec<String>,
) -> Result<TetMesh, BodyIssue> {
    use supple::mesh::quality::{improve, ImproveParams};
    let file = path.display();
    let (better, r) = improve(&mesh, &ImproveParams::default())
        .map_err(|e| BodyIssue::Invalid(format!("{key}.mesh.improve: {file}: {e}")))?;
    notes.push(format!(
        "{key}.mesh: {file} improved: smallest dihedral angle {:.1}° → {:.1}°, largest {:.1}° → {:.1}°, tets below 20° {} → {} ({} vertex moves, {} 2-3 and {} 3-2 flips, {} → {} tets)",
        r.before.min_deg,
        r.after.min_deg,
        r.before.max_deg,
        r.after.max_deg,
        r.before.tets_below(20.0),
        r.after.tets_below(20.0),
        r.moves,
        r.flips_23,
        r.flips_32,
        r.before.n_tets(),
        r.after.n_tets()
    ));
    Ok(better)
}

/// `mesh = { kind = "surface", path, spacing }`: the surface's inside, stuffed (Labelle &
/// Shewchuk 2007), with its quality as a note.
fn stuffed(
    path: &Path,
    spacing: f64,
    key: &str,
    dir: &Path,
    files: Files<'_>,
) -> Result<MeshRead, BodyIssue> {
    use supple::mesh::stuffing::{stuff, StuffingParams};
    if !(spacing.is_finite() && spacing > 0.0) {
        return Err(BodyIssue::Invalid(format!(
            "{key}.mesh.spacing = {spacing}: must be a finite number > 0"
        )));
    }
    let full = dir.join(path);
    let surface = crate::import::surface::load_surface_from(files, &full)
        .map_err(|e| BodyIssue::Mesh(format!("{key}.mesh.path"), e))?;
    // The same bound as generated meshes: about 20 M lattice vertices (a few hundred MB).
    let mut params = StuffingParams::new(spacing);
    params.max_lattice_vertices = 20_000_000;
    let out = stuff(&surface, &params)
        .map_err(|e| BodyIssue::Invalid(format!("{key}.mesh (spacing = {spacing}): {e}")))?;
    let file = path.display();
    let mut notes = vec![format!(
        "{key}.mesh: {file} stuffed at spacing {spacing}: {} tets, dihedral angles {:.1}°–{:.1}°, volume {:+.2}% against the surface",
        out.mesh.n_tets(),
        out.stats.min_dihedral_deg,
        out.stats.max_dihedral_deg,
        100.0 * (out.mesh.volume() - surface.volume()) / surface.volume()
    )];
    if surface.open_edges() > 0 {
        notes.push(format!(
            "{key}.mesh: {file}: the surface is not closed ({} edge(s) not shared by two triangles); inside is decided by ray parity",
            surface.open_edges()
        ));
    }
    Ok(MeshRead {
        mesh: out.mesh,
        regions: Vec::new(),
        notes,
    })
}

/// The vertices of the mesh file's region `name`, or an error naming `key` and the regions
/// the file has.
pub(super) fn region<'a>(
    regions: &'a [(String, Vec<u32>)],
    name: &str,
    key: &str,
) -> Result<&'a [u32], String> {
    match regions.iter().find(|(n, _)| n == name) {
        Some((_, v)) => Ok(v),
        None if regions.is_empty() => Err(format!(
            "{key} = {name:?}: the mesh has no named regions (Gmsh physical groups)"
        )),
        None => Err(format!(
            "{key} = {name:?}: the mesh has no such region (it has {})",
            regions
                .iter()
                .map(|(n, _)| format!("{n:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}
