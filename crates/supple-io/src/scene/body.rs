//! One `[[body]]` of a scene: its mesh (generated, given or read), transform, embedded
//! surface, fixed regions and material, validated into a [`BodyDesc`].

use super::file::*;
use super::{budget, finite3, material, mesh_file, names, positive, surface};
use super::{GivenMesh, SceneSurface};
use crate::error::IoError;
use crate::files::Files;
use nalgebra::{Rotation3, Vector3};
use std::path::Path;
use supple::body::{BodyDesc, Rayleigh};
use supple::fem::MassKind;
use supple::mesh::{box_grid, BoxGrid, TetMesh, TetSplit};

pub(super) enum BodyIssue {
    /// The mesh file at the key could not be read.
    Mesh(String, IoError),
    Invalid(String),
}

impl From<String> for BodyIssue {
    fn from(s: String) -> Self {
        BodyIssue::Invalid(s)
    }
}

pub(super) fn body_desc(
    b: BodySection,
    i: usize,
    dir: &Path,
    files: Files<'_>,
    given: &[GivenMesh],
    notes: &mut Vec<String>,
) -> Result<(BodyDesc, Option<SceneSurface>), BodyIssue> {
    let key = format!("body[{i}]");
    if let Some(name) = &b.name {
        names::check_name(&format!("{key}.name"), name)?;
    }
    let GivenMesh { mut mesh, regions } = read_mesh(b.mesh, &key, dir, files, given, notes)?;
    let t = &b.transform;
    positive(&format!("{key}.transform.scale"), t.scale)?;
    let angles =
        finite3(&format!("{key}.transform.rotate_deg"), t.rotate_deg)?.map(f64::to_radians);
    let rotation = Rotation3::from_euler_angles(angles.x, angles.y, angles.z).into_inner();
    let translation = finite3(&format!("{key}.transform.translate"), t.translate)?;
    mesh.transform(t.scale, &rotation, &translation);
    let surface = match b.surface {
        Some(file) => Some(surface::read(
            file,
            &key,
            dir,
            files,
            &mesh,
            |s| s.transform(t.scale, &rotation, &translation),
            notes,
        )?),
        None => None,
    };
    let mut fixed = Vec::new();
    for (k, region) in b.fixed.iter().enumerate() {
        let before = fixed.len();
        let fixed_key = format!("{key}.fixed[{k}]");
        select_fixed(&mesh, &regions, region, &fixed_key, &mut fixed)?;
        if fixed.len() == before {
            return Err(format!("{key}.fixed[{k}]: selects no vertex").into());
        }
    }
    fixed.sort_unstable();
    fixed.dedup();
    let material = material::material(&b.material, &format!("{key}.material"))?;
    notes.extend(material.note.clone());
    let viscosity = material::viscosity(b.viscosity.as_ref(), &key)?;
    for (k, v) in [("alpha", b.damping.alpha), ("beta", b.damping.beta)] {
        if !(v >= 0.0 && v.is_finite()) {
            return Err(format!("{key}.damping.{k} = {v}: must be a finite number ≥ 0").into());
        }
    }
    let body = BodyDesc {
        name: b.name.unwrap_or_else(|| format!("body{i}")),
        velocity: finite3(&format!("{key}.velocity"), b.velocity)?,
        mesh,
        model: material.model,
        youngs: material.youngs,
        poisson: material.poisson,
        density: b.material.density,
        mass: match b.mass {
            MassName::Lumped => MassKind::Lumped,
            MassName::Consistent => MassKind::Consistent,
        },
        damping: Rayleigh {
            alpha: b.damping.alpha,
            beta: b.damping.beta,
        },
        viscosity,
        fixed,
        loads: Vec::new(),
        constraints: Vec::new(),
    };
    Ok((body, surface))
}

/// The mesh of `mesh = { ... }` at `key` (`body[0]`) and its named regions: generated,
/// given, or read from a file relative to `dir`.
pub(super) fn read_mesh(
    section: MeshSection,
    key: &str,
    dir: &Path,
    files: Files<'_>,
    given: &[GivenMesh],
    notes: &mut Vec<String>,
) -> Result<GivenMesh, BodyIssue> {
    let mut regions = Vec::new();
    let mesh = match section {
        MeshSection::Box {
            cells,
            cell_size,
            origin,
            split,
        } => {
            if cells.contains(&0) {
                return Err(format!(
                    "{key}.mesh.cells = {cells:?}: every count must be at least 1"
                )
                .into());
            }
            let size = match cell_size {
                CellSize::Uniform(h) => [h; 3],
                CellSize::PerAxis(h) => h,
            };
            if !size.iter().all(|h| *h > 0.0 && h.is_finite()) {
                return Err(
                    format!("{key}.mesh.cell_size = {size:?}: must be finite and above 0").into(),
                );
            }
            let split = match split {
                5 => TetSplit::Five,
                6 => TetSplit::Six,
                s => return Err(format!("{key}.mesh.split = {s}: must be 5 or 6").into()),
            };
            // Before allocating: counts that overflow or cannot be held are refused here.
            let cells_key = format!("{key}.mesh.cells = {cells:?}");
            let (vertices, tets) = budget::box_counts(cells, u64::from(split_count(split)))
                .ok_or_else(|| format!("{cells_key}: the vertex or tet count overflows"))?;
            budget::check_mesh_size(&cells_key, vertices, tets, "tets")?;
            box_grid(&BoxGrid {
                cells,
                cell_size: Vector3::from(size),
                origin: finite3(&format!("{key}.mesh.origin"), origin)?,
                split,
            })
        }
        MeshSection::Given { index } => {
            let g = given.get(index).ok_or_else(|| match given.len() {
                0 => format!(
                    "{key}.mesh: kind \"given\" is a mesh handed over by a program (the Python module); a scene file names a mesh file or a box"
                ),
                n => format!("{key}.mesh.index = {index}: out of range ({n} mesh(es) given)"),
            })?;
            regions.clone_from(&g.regions);
            g.mesh.clone()
        }
        file => {
            let m = mesh_file::read(file, key, dir, files)?;
            notes.extend(m.notes);
            regions = m.regions;
            m.mesh
        }
    };
    Ok(GivenMesh { mesh, regions })
}

pub(super) fn split_count(split: TetSplit) -> u8 {
    match split {
        TetSplit::Five => 5,
        TetSplit::Six => 6,
    }
}

pub(super) fn select_fixed(
    mesh: &TetMesh,
    regions: &[(String, Vec<u32>)],
    region: &FixedSection,
    key: &str,
    out: &mut Vec<u32>,
) -> Result<(), String> {
    let (lo, hi) = mesh.bounding_box();
    let eps = 1e-9 * (hi - lo).norm();
    match region {
        FixedSection::Box { min, max } => {
            let (min, max) = (
                finite3(&format!("{key}.box.min"), *min)?,
                finite3(&format!("{key}.box.max"), *max)?,
            );
            for (i, p) in mesh.positions.iter().enumerate() {
                if (0..3).all(|c| p[c] >= min[c] - eps && p[c] <= max[c] + eps) {
                    out.push(i as u32);
                }
            }
        }
        FixedSection::Plane { point, normal } => {
            let point = finite3(&format!("{key}.plane.point"), *point)?;
            let normal = finite3(&format!("{key}.plane.normal"), *normal)?;
            let n = normal.try_normalize(0.0).ok_or_else(|| {
                format!(
                    "{key}.plane.normal = {:?}: must not be zero",
                    normal.as_slice()
                )
            })?;
            for (i, p) in mesh.positions.iter().enumerate() {
                if (p - point).dot(&n) >= -eps {
                    out.push(i as u32);
                }
            }
        }
        FixedSection::Region(name) => {
            out.extend_from_slice(mesh_file::region(regions, name, &format!("{key}.region"))?);
        }
        FixedSection::Vertices(list) => {
            for &v in list {
                if v as usize >= mesh.n_vertices() {
                    return Err(format!(
                        "{key}.vertices: vertex {v} is out of range (the mesh has {} vertices)",
                        mesh.n_vertices()
                    ));
                }
                out.push(v);
            }
        }
    }
    Ok(())
}
