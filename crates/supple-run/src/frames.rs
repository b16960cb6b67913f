//! The frame files of a run: `frames/frame_NNNNN.vtu` (`frames/<body>_frame_NNNNN.vtu` with
//! several bodies) listed in `scene.pvd`, and the embedded surfaces' `frames/surface_NNNNN.vtp`
//! in `surface.pvd` ([`crate::skin`]).
//!
//! Why a type of its own: [`crate::run_scene`] writes a frame every `frame_every` steps, and a
//! script that steps a world itself (`supple.World.write_frame` in Python) writes the same
//! files, field for field, whenever it wants one; both go through [`FrameWriter::write`], so
//! there is one VTU layout.

use crate::skin::Skins;
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use supple::world::World;
use supple_io::pvd::{PvdEntry, PvdWriter};
use supple_io::vtu::{write_vtu_with, VtuEncoding, VtuFrame};
use supple_io::Scene;

/// Creates `out/frames` and removes the frames (`*.vtu`, `*.vtp`) of an earlier run there,
/// which would otherwise mix with this one's; returns the folder.
pub fn clear_frames(out: &Path) -> Result<PathBuf> {
    let frames_dir = out.join("frames");
    std::fs::create_dir_all(&frames_dir)
        .with_context(|| format!("cannot create {}", frames_dir.display()))?;
    for entry in std::fs::read_dir(&frames_dir)?.flatten() {
        if entry.path().extension().is_some_and(|e| e == "vtu") {
            std::fs::remove_file(entry.path())?;
        }
    }
    crate::skin::remove_stale_frames(&frames_dir)?;
    Ok(frames_dir)
}

/// Writes a world's frames into an output folder (see the module doc): the frames of a
/// scene's world, stepped by your own loop, with the fields and file names of `supple run`.
/// (A world set up in code, without a scene, writes its frames with `supple_io::vtu` and
/// `supple_io::pvd`: `crates/supple-io/examples/paraview_frames.rs`.)
///
/// ```
/// use supple_run::frames::{clear_frames, FrameWriter};
/// let scene = supple_io::parse_scene(r#"
/// [[body]]
/// mesh = { kind = "box", cells = [2, 1, 1], cell_size = 0.1 }
/// material = { model = "corotational" }
/// fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }]
/// "#, std::path::Path::new("bar.toml"))?;
/// let out = std::env::temp_dir().join(format!("supple-doc-frames-{}", std::process::id()));
/// clear_frames(&out)?;
/// let mut frames = FrameWriter::new(&scene, &out)?;
/// let mut world = scene.build_world()?;
/// for _ in 0..3 {
///     frames.write(&mut world)?;
///     world.step()?;
/// }
/// assert_eq!(frames.written(), 3);
/// let listed = supple_io::vtu_read::read_pvd(&out.join("scene.pvd"))?;
/// assert_eq!(listed.last().map(|(_, file)| file.as_str()), Some("frames/frame_00002.vtu"));
/// std::fs::remove_dir_all(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct FrameWriter {
    frames_dir: PathBuf,
    /// `scene.pvd`, when the scene writes VTU frames (`[output] vtu`). Created with the
    /// writer and kept valid after every frame: a run stopped at any point leaves a
    /// collection ParaView reads.
    pvd: Option<PvdWriter>,
    encoding: VtuEncoding,
    written: usize,
    skins: Skins,
}

impl FrameWriter {
    /// A writer into `out` for the worlds of `scene` (its output settings and embedded
    /// surfaces); `out/frames` must exist ([`clear_frames`]).
    pub fn new(scene: &Scene, out: &Path) -> Result<Self> {
        let frames_dir = out.join("frames");
        let pvd = match scene.output.vtu {
            true => Some(PvdWriter::create(&out.join("scene.pvd"))?),
            false => None,
        };
        let encoding = match scene.output.compress {
            true => VtuEncoding::Zlib,
            false => VtuEncoding::Raw,
        };
        let skins = Skins::new(scene, scene.output.vtu.then_some(out), &frames_dir)?;
        Ok(Self {
            frames_dir,
            pvd,
            encoding,
            written: 0,
            skins,
        })
    }

    /// The embedded surfaces, as placed at the last frame.
    pub fn skins(&self) -> &Skins {
        &self.skins
    }

    /// Frames written so far.
    pub fn written(&self) -> usize {
        self.written
    }

    /// Writes the world's current state as the next frame: the embedded surfaces placed and
    /// written, and per body a VTU with `displacement`, `velocity`, `fixed`, `volume_ratio`
    /// and (where the model defines a stress) `von_mises`, listed in `scene.pvd` at the
    /// world's time. Returns each body's von Mises stress (the pictures colour by it).
    pub fn write(&mut self, world: &mut World) -> Result<Vec<Option<Vec<f64>>>> {
        let stresses: Vec<Option<Vec<f64>>> = world
            .bodies
            .iter_mut()
            .map(|b| b.von_mises_stress())
            .collect();
        self.skins.update(|i| &world.bodies[i].x)?;
        self.skins.write_frame(world.time)?;
        let Some(pvd) = &mut self.pvd else {
            return Ok(stresses);
        };
        let several = world.bodies.len() > 1;
        let written = self.written;
        for (part, (body, vm)) in world.bodies.iter().zip(&stresses).enumerate() {
            // Body names are restricted to [A-Za-z0-9_-] (supple_io::scene::names): the file
            // stays in frames/.
            let name = if several {
                format!("{}_frame_{written:05}.vtu", body.name)
            } else {
                format!("frame_{written:05}.vtu")
            };
            let displacement: Vec<_> = (body.x.iter().zip(&body.mesh.positions))
                .map(|(x, x0)| x - x0)
                .collect();
            let ratios = body.volume_ratios();
            let fixed: Vec<f64> = body.fixed.iter().map(|&f| f64::from(u8::from(f))).collect();
            let mut cell_scalars = vec![("volume_ratio", ratios.as_slice())];
            if let Some(vm) = vm {
                cell_scalars.push(("von_mises", vm.as_slice()));
            }
            let frame = VtuFrame {
                point_vectors: vec![("displacement", &displacement), ("velocity", &body.v)],
                point_scalars: vec![("fixed", &fixed)],
                cell_scalars,
                ..VtuFrame::new(&body.x, &body.elems.tets)
            };
            write_vtu_with(&self.frames_dir.join(&name), &frame, self.encoding)?;
            pvd.push(&PvdEntry {
                time: world.time,
                part,
                name: several.then(|| body.name.clone()),
                file: format!("frames/{name}"),
            })?;
        }
        self.written += 1;
        Ok(stresses)
    }
}
