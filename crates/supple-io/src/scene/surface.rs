//! `surface = "skin.obj"` on a body: a high-resolution triangle surface bound to the body's
//! tets by barycentric coordinates (Müller et al. 2002 §4.4), moved with it and drawn and
//! written instead of the tet boundary. The path is relative to the scene file; the body's
//! `transform` applies to the surface too, so both are given in the same (file) coordinates.

use super::BodyIssue;
use crate::obj::{parse_obj, TriSurface};
use std::path::{Path, PathBuf};
use supple::mesh::{Embedding, TetMesh};

/// A body's embedded surface: the OBJ as read (in the body's scene coordinates) and its
/// binding to the body's rest tets.
#[derive(Debug, Clone)]
pub struct SceneSurface {
    /// The path as written in the scene (relative to the scene's folder).
    pub path: PathBuf,
    /// Rest positions (after the body's transform) and triangles.
    pub surface: TriSurface,
    /// Each surface vertex in barycentric coordinates of a rest tet.
    pub embedding: Embedding,
}

impl SceneSurface {
    /// The surface's positions for the body's current vertex positions `x`, into `out`
    /// (one slot per surface vertex; allocates nothing).
    pub fn place(
        &self,
        x: &[nalgebra::Vector3<f64>],
        out: &mut [nalgebra::Vector3<f64>],
    ) -> Result<(), supple::mesh::EmbedError> {
        self.embedding.positions(x, out)
    }
}

/// Reads `path` (relative to `dir`) for body `key` (`body[i]`), applies the body's transform
/// and embeds the vertices in `mesh` (already transformed). Points outside the tets are bound
/// to the nearest tet; a note says how many and how far.
pub(super) fn read(
    path: PathBuf,
    key: &str,
    dir: &Path,
    files: crate::files::Files<'_>,
    mesh: &TetMesh,
    transform: impl Fn(&mut TriSurface),
    notes: &mut Vec<String>,
) -> Result<SceneSurface, BodyIssue> {
    let full = dir.join(&path);
    let mut surface = files
        .read_to_string(&full)
        .and_then(|text| parse_obj(&text, &full))
        .map_err(|e| BodyIssue::Mesh(format!("{key}.surface"), e))?;
    transform(&mut surface);
    let embedding = Embedding::new(mesh, &surface.positions)
        .map_err(|e| format!("{key}.surface = {:?}: {e}", path.display().to_string()))?;
    let (outside, farthest) = embedding.outside();
    let (lo, hi) = mesh.bounding_box();
    // Far outside the body, the extended barycentric map amplifies every deformation: refuse
    // surfaces that are not the body's (a wrong file, a forgotten transform).
    let limit = 0.25 * (hi - lo).norm();
    if farthest > limit {
        return Err(format!(
            "{key}.surface = {:?}: a vertex lies {farthest:.3e} from the nearest tet, more than a quarter of the mesh's diagonal ({limit:.3e}); the surface must wrap the body (same file coordinates as the mesh)",
            path.display().to_string()
        )
        .into());
    }
    if outside > 0 {
        notes.push(format!(
            "{key}.surface: {}: {outside} of {} vertices lie outside the tets (at most {farthest:.3e} away), bound to the nearest tet",
            path.display(),
            embedding.len()
        ));
    }
    Ok(SceneSurface {
        path,
        surface,
        embedding,
    })
}
