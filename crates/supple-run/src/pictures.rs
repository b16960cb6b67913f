//! Pictures of a run: `final.png`, `images/frame_NNNNN.png` every k frames and
//! `animation.gif`, from the bodies' boundary surfaces (or their embedded surfaces, see
//! skin.rs) recorded at every output frame.
//!
//! Everything is rendered after the run, so the default camera can frame the bounding box of
//! the whole run. Only boundary vertices are kept (as `f32`), with the one field the colouring
//! needs. Rigid obstacles are drawn too, in grey (see `pictures/obstacles.rs`).

mod obstacles;

use anyhow::{Context, Result};
use obstacles::ObstacleTrack;
use rayon::prelude::*;
use std::path::Path;
use std::time::Instant;
use supple::contact::Obstacle;
use supple::mesh::boundary_faces_with_tets;
use supple::nalgebra::Vector3;
use supple_io::ColorBy;
use supple_render::{
    body_color, gif_schedule, render, Camera, ColorBar, GifWriter, Image, Paint, Surface, View,
};

/// A body's boundary surface: which mesh vertices it uses and its triangles.
pub struct BodySurface {
    pub name: String,
    /// Mesh vertex of each surface vertex.
    vertices: Vec<u32>,
    /// Triangles over surface vertices.
    faces: Vec<[u32; 3]>,
    /// Tet of each triangle.
    face_tet: Vec<u32>,
}

impl BodySurface {
    pub fn new(name: &str, tets: &[[u32; 4]], n_vertices: usize) -> Self {
        let with_tets = boundary_faces_with_tets(tets);
        let mut compact = vec![u32::MAX; n_vertices];
        let mut vertices = Vec::new();
        let mut faces = Vec::with_capacity(with_tets.len());
        for (f, _) in &with_tets {
            faces.push(f.map(|i| {
                let slot = &mut compact[i as usize];
                if *slot == u32::MAX {
                    *slot = vertices.len() as u32;
                    vertices.push(i);
                }
                *slot
            }));
        }
        Self {
            name: name.to_string(),
            vertices,
            faces,
            face_tet: with_tets.iter().map(|(_, t)| *t).collect(),
        }
    }

    /// An embedded surface (Müller et al. 2002 §4.4) drawn instead of the tet boundary: its
    /// `n_points` vertices are the positions handed to [`Recording::push`] (the surface's, not
    /// the mesh's), `face_tet` the tet each triangle takes its per-tet colour from.
    pub fn embedded(name: &str, n_points: usize, faces: Vec<[u32; 3]>, face_tet: Vec<u32>) -> Self {
        Self {
            name: name.to_string(),
            vertices: (0..n_points as u32).collect(),
            faces,
            face_tet,
        }
    }
}

/// One body at one output frame.
pub struct BodySnapshot {
    positions: Vec<[f32; 3]>,
    /// Per surface vertex (displacement), per triangle (von Mises), or empty (no field).
    field: Vec<f32>,
}

/// The surfaces of every body at every output frame.
pub struct Recording {
    pub color: ColorBy,
    pub surfaces: Vec<BodySurface>,
    pub times: Vec<f64>,
    frames: Vec<Vec<BodySnapshot>>,
    /// The rigid obstacles, drawn in every frame.
    obstacles: Vec<ObstacleTrack>,
}

/// One body's state handed to [`Recording::push`].
pub struct BodyState<'a> {
    pub x: &'a [Vector3<f64>],
    pub rest: &'a [Vector3<f64>],
    /// Per-tet von Mises stress, when the model defines it (needed for `ColorBy::VonMises`).
    pub von_mises: Option<&'a [f64]>,
}

impl Recording {
    pub fn new(color: ColorBy, surfaces: Vec<BodySurface>) -> Self {
        Self {
            color,
            surfaces,
            times: Vec::new(),
            frames: Vec::new(),
            obstacles: Vec::new(),
        }
    }

    /// Draws the scene's `obstacles` too, with their poses at the times of the frames pushed
    /// from now on.
    pub fn with_obstacles(mut self, obstacles: &[Obstacle]) -> Self {
        self.obstacles = obstacles.iter().map(ObstacleTrack::live).collect();
        self
    }

    /// Writes the obstacles' shapes and recorded poses to `dir/obstacles.json` (removing a
    /// stale file when there are none), then takes them back from that file, so that the
    /// pictures of the run are the ones `supple render` draws from it, bit for bit.
    pub fn write_obstacles(&mut self, dir: &Path) -> Result<()> {
        obstacles::write(&self.obstacles, dir)?;
        self.obstacles = obstacles::read(dir)?;
        Ok(())
    }

    /// Draws the obstacles of `dir/obstacles.json`, when the run folder has one.
    pub fn read_obstacles(&mut self, dir: &Path) -> Result<()> {
        self.obstacles = obstacles::read(dir)?;
        Ok(())
    }

    /// Records one output frame (`bodies` in the order of the surfaces).
    pub fn push(&mut self, time: f64, bodies: &[BodyState]) {
        let snaps = self
            .surfaces
            .iter()
            .zip(bodies)
            .map(|(s, b)| {
                let at = |i: u32| b.x.get(i as usize).copied().unwrap_or_else(Vector3::zeros);
                let positions = s
                    .vertices
                    .iter()
                    .map(|&i| at(i).map(|c| c as f32).into())
                    .collect();
                let field = match (self.color, b.von_mises) {
                    (ColorBy::Displacement, _) => s
                        .vertices
                        .iter()
                        .map(|&i| {
                            let x0 = b
                                .rest
                                .get(i as usize)
                                .copied()
                                .unwrap_or_else(Vector3::zeros);
                            (at(i) - x0).norm() as f32
                        })
                        .collect(),
                    (ColorBy::VonMises, Some(vm)) => s
                        .face_tet
                        .iter()
                        .map(|&t| vm.get(t as usize).copied().unwrap_or(0.0) as f32)
                        .collect(),
                    _ => Vec::new(),
                };
                BodySnapshot { positions, field }
            })
            .collect();
        self.times.push(time);
        self.frames.push(snaps);
        for o in &mut self.obstacles {
            o.record(time);
        }
    }

    /// Bounding box of every recorded body position.
    fn bounds(&self) -> (Vector3<f64>, Vector3<f64>) {
        let mut lo = Vector3::repeat(f64::INFINITY);
        let mut hi = Vector3::repeat(f64::NEG_INFINITY);
        for p in self.frames.iter().flatten().flat_map(|b| &b.positions) {
            let p = Vector3::new(p[0].into(), p[1].into(), p[2].into());
            if p.iter().all(|c: &f64| c.is_finite()) {
                lo = lo.inf(&p);
                hi = hi.sup(&p);
            }
        }
        if lo.x > hi.x {
            (Vector3::zeros(), Vector3::repeat(1.0))
        } else {
            (lo, hi)
        }
    }

    /// The colour bar over the whole run, for field colourings.
    fn color_bar(&self) -> Option<ColorBar> {
        let label = match self.color {
            ColorBy::Body => return None,
            ColorBy::Displacement => "|u| (m)",
            ColorBy::VonMises => "von Mises (Pa)",
        };
        let max = self
            .frames
            .iter()
            .flatten()
            .flat_map(|b| &b.field)
            .copied()
            .filter(|v| v.is_finite())
            .fold(0.0f32, f32::max);
        Some(ColorBar {
            min: 0.0,
            max,
            label: label.into(),
        })
    }
}

/// What to draw and where the camera is.
#[derive(Debug, Clone)]
pub struct PictureOptions {
    pub image_size: [u32; 2],
    pub png_every: usize,
    pub gif: bool,
    pub gif_fps: f64,
    pub gif_size: [u32; 2],
    pub edges: bool,
    pub azimuth: f64,
    pub elevation: f64,
    pub zoom: f64,
}

impl PictureOptions {
    /// The scene's `[output]` settings for a run of `frames` output frames, default camera.
    pub fn from_output(o: &supple_io::OutputSettings, frames: usize) -> Self {
        Self {
            image_size: o.image_size,
            png_every: o.png_every,
            gif: o
                .gif
                .unwrap_or(frames < supple_io::scene::GIF_AUTO_MAX_FRAMES),
            gif_fps: o.gif_fps,
            gif_size: o.gif_size,
            edges: o.edges,
            azimuth: DEFAULT_AZIMUTH,
            elevation: DEFAULT_ELEVATION,
            zoom: 1.0,
        }
    }
}

/// Default camera direction: from the front (+z), a little to the right and above.
pub const DEFAULT_AZIMUTH: f64 = 30.0;
pub const DEFAULT_ELEVATION: f64 = 25.0;

/// Images written and the time taken.
pub struct PictureReport {
    pub images: usize,
    pub seconds: f64,
}

/// A view of the run, with the bounds it frames (obstacle planes are sized from them).
pub struct Stage {
    pub view: View,
    bounds: (Vector3<f64>, Vector3<f64>),
}

impl Recording {
    fn view(&self, opts: &PictureOptions, [w, h]: [u32; 2], supersample: u32) -> Stage {
        let (lo, hi) = obstacles::framing_bounds(&self.obstacles, self.bounds());
        let mut view = View::new(Camera::framing(lo, hi, 1.0, 0.0, 0.0, 1.0), w, h);
        view.edges = opts.edges;
        view.supersample = supersample;
        view.color_bar = self.color_bar();
        if self.color == ColorBy::Body {
            view.legend = (self.surfaces.iter().enumerate())
                .map(|(i, s)| (s.name.clone(), body_color(i)))
                .collect();
        }
        view.camera = Camera::framing(
            lo,
            hi,
            view.scene_aspect(),
            opts.azimuth,
            opts.elevation,
            opts.zoom,
        );
        Stage {
            view,
            bounds: (lo, hi),
        }
    }

    /// Renders frame `k` on `stage`: the bodies, then the obstacles.
    pub fn render_frame(&self, k: usize, stage: &Stage) -> Image {
        let mut view = stage.view.clone();
        let obstacles = obstacles::frame(
            &self.obstacles,
            self.times[k],
            &view.camera.eye,
            &view.camera.up,
            stage.bounds,
        );
        view.ground = obstacles.ground;
        let mut surfaces: Vec<Surface> = (self.surfaces.iter().zip(&self.frames[k]).enumerate())
            .map(|(i, (s, b))| Surface {
                positions: &b.positions,
                triangles: &s.faces,
                paint: match self.color {
                    _ if b.field.is_empty() => Paint::Solid(body_color(i)),
                    ColorBy::VonMises => Paint::FaceField(&b.field),
                    _ => Paint::VertexField(&b.field),
                },
            })
            .collect();
        surfaces.extend(obstacles.surfaces());
        view.caption = Some(format!("t = {:.2} s", self.times[k]));
        render(&surfaces, &view)
    }

    /// Writes `final.png`, the PNG series (`images/`) and the GIF into `dir`.
    pub fn write_pictures(&self, dir: &Path, opts: &PictureOptions) -> Result<PictureReport> {
        let started = Instant::now();
        let Some(last) = self.frames.len().checked_sub(1) else {
            return Ok(PictureReport {
                images: 0,
                seconds: 0.0,
            });
        };
        let still = self.view(opts, opts.image_size, 2);
        self.render_frame(last, &still)
            .write_png(&dir.join("final.png"))?;
        let mut images = 1;
        let images_dir = dir.join("images");
        if images_dir.is_dir() {
            for entry in std::fs::read_dir(&images_dir)?.flatten() {
                if entry.path().extension().is_some_and(|e| e == "png") {
                    std::fs::remove_file(entry.path())?;
                }
            }
        }
        if opts.png_every > 0 {
            std::fs::create_dir_all(&images_dir)
                .with_context(|| format!("cannot create {}", images_dir.display()))?;
            let series = self.view(opts, opts.image_size, 1);
            let picked: Vec<usize> = (0..=last).step_by(opts.png_every).collect();
            picked.par_iter().try_for_each(|&k| {
                self.render_frame(k, &series)
                    .write_png(&images_dir.join(format!("frame_{k:05}.png")))
            })?;
            images += picked.len();
        }
        let gif_path = dir.join("animation.gif");
        if opts.gif {
            let view = self.view(opts, opts.gif_size, 2);
            let schedule = gif_schedule(&self.times, opts.gif_fps);
            let mut gif = GifWriter::create(&gif_path, opts.gif_size[0], opts.gif_size[1])?;
            // Render and quantize in batches: bounded memory, parallel work, ordered output.
            for batch in schedule.chunks(64) {
                let frames: Vec<(Image, u16)> = batch
                    .par_iter()
                    .map(|&(k, delay)| (self.render_frame(k, &view), delay))
                    .collect();
                gif.add_frames(&frames)?;
            }
            gif.finish()?;
            images += schedule.len();
        } else if gif_path.exists() {
            std::fs::remove_file(&gif_path)
                .with_context(|| format!("cannot remove the stale {}", gif_path.display()))?;
        }
        Ok(PictureReport {
            images,
            seconds: started.elapsed().as_secs_f64(),
        })
    }
}

/// Pictures and, with `plots`, the charts of the run in `dir`.
pub fn write_all(
    dir: &Path,
    recording: &Recording,
    opts: &PictureOptions,
    plots: bool,
) -> Result<PictureReport> {
    let started = Instant::now();
    let mut report = recording.write_pictures(dir, opts)?;
    if plots {
        report.images += crate::plots::write_plots(dir)?;
    }
    report.seconds = started.elapsed().as_secs_f64();
    Ok(report)
}
