//! Embedded surfaces in a run (Müller et al. 2002 §4.4): bodies with `surface = "x.obj"`
//! carry a high-resolution triangle surface bound to their tets (`supple_io::SceneSurface`).
//! At every output frame it is placed from the body's positions, written as
//! `frames/surface_NNNNN.vtp` (`frames/<body>_surface_NNNNN.vtp` with several bodies) and
//! listed in `surface.pvd`, and drawn in the pictures instead of the tet boundary.
//!
//! Why a VTP series in its own collection: ParaView opens `surface.pvd` as a time series of
//! PolyData that it can show, colour (by `displacement`) and hide independently of the tet
//! frames; an OBJ sequence has no time values and no fields, and mixing PolyData blocks into
//! `scene.pvd` would make that collection a heterogeneous multiblock, which `supple render`
//! and scripts that read the tet frames do not expect.

use crate::pictures::BodySurface;
use anyhow::Result;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::time::Instant;
use supple::mesh::Embedding;
use supple::nalgebra::Vector3;
use supple_io::pvd::{PvdEntry, PvdWriter};
use supple_io::scene::SceneSurface;
use supple_io::vtp::{write_vtp, VtpFrame};
use supple_io::vtu::VtuEncoding;
use supple_io::Scene;

/// A surface's current and rest positions.
pub type CurrentAndRest<'a> = (&'a [Vector3<f64>], &'a [Vector3<f64>]);

/// One body's embedded surface and its current positions.
struct Skin {
    body: usize,
    name: String,
    surface: SceneSurface,
    x: Vec<Vector3<f64>>,
    displacement: Vec<Vector3<f64>>,
}

/// The embedded surfaces of a run's bodies, their frames and timings.
pub struct Skins {
    skins: Vec<Skin>,
    several_bodies: bool,
    /// `surface.pvd` and the frames folder, when frames are written.
    pvd: Option<(PvdWriter, PathBuf)>,
    encoding: VtuEncoding,
    frames: usize,
    /// Wall time of each [`Skins::update`] (all bodies), ms.
    pub update_ms: Vec<f64>,
    /// Wall time of binding every surface to its rest tets again ([`Skins::time_binding`]).
    bind_ms: Option<f64>,
}

impl Skins {
    /// The scene's surfaces (none: an empty set that writes nothing). With `frames_dir`, the
    /// surface frames go there and `surface.pvd` beside it; a stale `surface.pvd` of an
    /// earlier run in `out` is removed when the scene has no surface.
    pub fn new(scene: &Scene, out: Option<&Path>, frames_dir: &Path) -> Result<Self> {
        let skins: Vec<Skin> = (scene.surfaces.iter().enumerate())
            .filter_map(|(body, s)| {
                let s = s.as_ref()?;
                Some(Skin {
                    body,
                    name: scene.bodies[body].name.clone(),
                    x: s.surface.positions.clone(),
                    displacement: vec![Vector3::zeros(); s.surface.positions.len()],
                    surface: s.clone(),
                })
            })
            .collect();
        let pvd = match out {
            Some(out) if !skins.is_empty() => Some((
                PvdWriter::create(&out.join("surface.pvd"))?,
                frames_dir.to_path_buf(),
            )),
            Some(out) => {
                let stale = out.join("surface.pvd");
                if stale.exists() {
                    std::fs::remove_file(&stale)?;
                }
                None
            }
            None => None,
        };
        Ok(Self {
            skins,
            several_bodies: scene.bodies.len() > 1,
            pvd,
            encoding: match scene.output.compress {
                true => VtuEncoding::Zlib,
                false => VtuEncoding::Raw,
            },
            frames: 0,
            update_ms: Vec::new(),
            bind_ms: None,
        })
    }

    /// Binds every surface to its body's rest tets again and keeps the time it took (the
    /// scene did it once on loading; `supple bench` reports the cost).
    pub fn time_binding(&mut self, scene: &Scene) -> Result<()> {
        let t = Instant::now();
        for s in &self.skins {
            let again = Embedding::new(&scene.bodies[s.body].mesh, &s.surface.surface.positions)?;
            anyhow::ensure!(again == s.surface.embedding, "binding is not deterministic");
        }
        self.bind_ms = Some(t.elapsed().as_secs_f64() * 1e3);
        Ok(())
    }

    /// Whether any body has an embedded surface.
    pub fn is_empty(&self) -> bool {
        self.skins.is_empty()
    }

    /// Places every surface from its body's current positions (`x[body]`).
    pub fn update<'a>(&mut self, x: impl Fn(usize) -> &'a [Vector3<f64>]) -> Result<()> {
        let t = Instant::now();
        for s in &mut self.skins {
            s.surface.place(x(s.body), &mut s.x)?;
        }
        self.update_ms.push(t.elapsed().as_secs_f64() * 1e3);
        Ok(())
    }

    /// The current and rest positions of body `body`'s surface, if it has one.
    pub fn positions(&self, body: usize) -> Option<CurrentAndRest<'_>> {
        let s = self.skins.iter().find(|s| s.body == body)?;
        Some((&s.x, &s.surface.surface.positions))
    }

    /// The picture surface of body `body` (its embedded surface), if it has one.
    pub fn picture_surface(&self, body: usize) -> Option<BodySurface> {
        let s = self.skins.iter().find(|s| s.body == body)?;
        let e = &s.surface.embedding;
        let face_tet = (s.surface.surface.triangles.iter())
            .map(|t| e.tet(t[0] as usize) as u32)
            .collect();
        Some(BodySurface::embedded(
            &s.name,
            s.x.len(),
            s.surface.surface.triangles.clone(),
            face_tet,
        ))
    }

    /// Writes the surfaces as placed by the last [`Skins::update`] at simulated `time`.
    pub fn write_frame(&mut self, time: f64) -> Result<()> {
        let Some((pvd, dir)) = &mut self.pvd else {
            return Ok(());
        };
        for s in &mut self.skins {
            let name = match self.several_bodies {
                true => format!("{}_surface_{:05}.vtp", s.name, self.frames),
                false => format!("surface_{:05}.vtp", self.frames),
            };
            for ((d, x), x0) in s
                .displacement
                .iter_mut()
                .zip(&s.x)
                .zip(&s.surface.surface.positions)
            {
                *d = x - x0;
            }
            let frame = VtpFrame {
                positions: &s.x,
                triangles: &s.surface.surface.triangles,
                point_vectors: vec![("displacement", &s.displacement)],
            };
            write_vtp(&dir.join(&name), &frame, self.encoding)?;
            let folder = dir
                .file_name()
                .map_or_else(String::new, |f| f.to_string_lossy().into_owned());
            pvd.push(&PvdEntry {
                time,
                part: s.body,
                name: self.several_bodies.then(|| s.name.clone()),
                file: format!("{folder}/{name}"),
            })?;
        }
        self.frames += 1;
        Ok(())
    }

    /// The bench report's line for the surfaces: sizes and the update's cost against the step.
    pub fn bench(&self, step_ms_median: f64) -> Option<SurfaceBench> {
        if self.skins.is_empty() {
            return None;
        }
        let update = crate::record::median(&self.update_ms);
        Some(SurfaceBench {
            points: self.skins.iter().map(|s| s.x.len()).sum(),
            triangles: (self.skins.iter())
                .map(|s| s.surface.surface.triangles.len())
                .sum(),
            outside_points: (self.skins.iter())
                .map(|s| s.surface.embedding.outside().0)
                .sum(),
            bind_ms: self.bind_ms,
            update_ms_median: update,
            fraction_of_step: update / step_ms_median,
        })
    }
}

/// What `supple bench` reports for embedded surfaces.
#[derive(Serialize)]
pub struct SurfaceBench {
    points: usize,
    triangles: usize,
    /// Points bound to the nearest tet (outside every tet at rest).
    outside_points: usize,
    /// Binding the points to their tets (grid, containing or nearest tet), once per run.
    #[serde(skip_serializing_if = "Option::is_none")]
    bind_ms: Option<f64>,
    /// One placement of every surface from the bodies' positions (median over steps).
    update_ms_median: f64,
    /// `update_ms_median / wall_ms_per_step.median`.
    fraction_of_step: f64,
}

/// Removes `*.vtp` files of an earlier run from `frames_dir`.
pub fn remove_stale_frames(frames_dir: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(frames_dir)?.flatten() {
        if entry.path().extension().is_some_and(|e| e == "vtp") {
            std::fs::remove_file(entry.path())?;
        }
    }
    Ok(())
}
