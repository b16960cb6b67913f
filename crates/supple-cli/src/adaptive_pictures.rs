//! The level-coloured pictures of an adaptive run (Debunne et al. 2000, Fig. 8): the body's
//! boundary as each active level sees it, one colour per level, with the tool sphere.
//! `final.png`, `images/frame_NNNNN.png` every `output.png_every` recorded frames, and
//! `animation.gif` (as `output.gif` says; by default when there are fewer than
//! [`GIF_AUTO_MAX_FRAMES`] recorded frames), drawn with `supple-render`.

use anyhow::{Context, Result};
use nalgebra::Vector3;
use rayon::prelude::*;
use std::path::Path;
use supple::adaptive::{ActiveMesh, AdaptiveBody, SphereTool, ToolPath};
use supple_io::scene::GIF_AUTO_MAX_FRAMES;
use supple_io::OutputSettings;
use supple_render::shapes::sphere;
use supple_render::{
    body_color, gif_schedule, render, Camera, GifWriter, Image, Paint, Surface, View,
};

const TOOL_COLOR: [u8; 3] = [150, 150, 160];
const AZIMUTH: f64 = 30.0;
const ELEVATION: f64 = 25.0;
/// How far each finer level's surface is drawn outside the coarser one, per level, as a
/// share of the framed box's diagonal.
const LIFT: f64 = 2e-3;

/// A level's drawn surface: vertices and triangles.
type LevelSurface = (Vec<[f32; 3]>, Vec<[u32; 3]>);

/// One recorded frame: per level, the surface's vertices and triangles.
struct Frame {
    time: f64,
    levels: Vec<LevelSurface>,
    active: Vec<usize>,
    tool: Option<SphereTool>,
}

/// The recorded frames of a run and how to draw them.
pub struct LevelPictures {
    settings: OutputSettings,
    gif: bool,
    lo: Vector3<f64>,
    hi: Vector3<f64>,
    n_levels: usize,
    frames: Vec<Frame>,
}

impl LevelPictures {
    /// Pictures of `body`'s run, framed on its rest shape and the tool's path; `expected` is
    /// the number of frames that will be recorded (it decides the automatic GIF).
    pub fn new(
        body: &AdaptiveBody,
        tool: Option<&ToolPath>,
        settings: &OutputSettings,
        expected: usize,
    ) -> Self {
        let (mut lo, mut hi) = body.hierarchy.levels[0].mesh.bounding_box();
        if let Some(t) = tool {
            for (_, c) in &t.keys {
                // Only the part of the tool near the body matters for the framing.
                let near = c
                    .sup(&(lo - Vector3::repeat(t.radius)))
                    .inf(&(hi + Vector3::repeat(t.radius)));
                lo = lo.inf(&(near - Vector3::repeat(t.radius)));
                hi = hi.sup(&(near + Vector3::repeat(t.radius)));
            }
        }
        Self {
            settings: settings.clone(),
            gif: settings.gif.unwrap_or(expected < GIF_AUTO_MAX_FRAMES),
            lo,
            hi,
            n_levels: body.levels.len(),
            frames: Vec::new(),
        }
    }

    /// Records the active mesh at time `t`, with the tool where it is then.
    pub fn push(&mut self, time: f64, mesh: &ActiveMesh, tool: Option<SphereTool>) {
        let mut levels = vec![(Vec::new(), Vec::new()); self.n_levels];
        let mut index = vec![u32::MAX; mesh.positions.len()];
        for (tri, &n) in mesh.surface.iter().zip(&mesh.surface_level) {
            let (pos, tris) = &mut levels[n];
            let t = tri.map(|i| {
                let i = i as usize;
                if index[i] == u32::MAX {
                    index[i] = pos.len() as u32;
                    pos.push(mesh.positions[i].map(|c| c as f32).into());
                }
                index[i]
            });
            tris.push(t);
        }
        // Where a coarse and a finer level both reach the surface (the interface band,
        // §3.2) their faces overlap; each level is lifted off the surface by a hair per level
        // along its vertex normals, so the finer one is the one seen. Pictures only: the
        // VTU frames hold the simulated positions.
        let lift = LIFT * (self.hi - self.lo).norm();
        for (n, (pos, tris)) in levels.iter_mut().enumerate().skip(1) {
            let mut normal = vec![Vector3::<f32>::zeros(); pos.len()];
            for t in tris.iter() {
                let p = t.map(|i| Vector3::from(pos[i as usize]));
                let a = (p[1] - p[0]).cross(&(p[2] - p[0]));
                for &i in t {
                    normal[i as usize] += a;
                }
            }
            for (p, nrm) in pos.iter_mut().zip(&normal) {
                let d = nrm.try_normalize(0.0).unwrap_or_default() * (lift * n as f64) as f32;
                *p = (Vector3::from(*p) + d).into();
            }
        }
        let mut active = vec![0; self.n_levels];
        for (&l, &a) in mesh.node_level.iter().zip(&mesh.node_active) {
            if a > 0.0 {
                active[l as usize] += 1;
            }
        }
        self.frames.push(Frame {
            time,
            levels,
            active,
            tool,
        });
    }

    fn view(&self, [w, h]: [u32; 2], supersample: u32) -> View {
        let mut view = View::new(
            Camera::framing(self.lo, self.hi, 1.0, AZIMUTH, ELEVATION, 1.0),
            w,
            h,
        );
        view.edges = self.settings.edges;
        view.supersample = supersample;
        view.legend = (0..self.n_levels)
            .map(|n| (format!("level {n}"), body_color(n)))
            .collect();
        view.camera = Camera::framing(
            self.lo,
            self.hi,
            view.scene_aspect(),
            AZIMUTH,
            ELEVATION,
            1.0,
        );
        view
    }

    fn render_frame(&self, k: usize, view: &View) -> Image {
        let f = &self.frames[k];
        let mut surfaces: Vec<Surface> = f
            .levels
            .iter()
            .enumerate()
            .filter(|(_, (_, t))| !t.is_empty())
            .map(|(n, (p, t))| Surface {
                positions: p,
                triangles: t,
                paint: Paint::Solid(body_color(n)),
            })
            .collect();
        let ball = f.tool.map(|t| {
            let s = sphere(t.radius, 32);
            let p: Vec<[f32; 3]> = s
                .positions
                .iter()
                .map(|q| std::array::from_fn(|a| (q[a] + t.center[a]) as f32))
                .collect();
            (p, s.triangles)
        });
        if let Some((p, t)) = &ball {
            surfaces.push(Surface {
                positions: p,
                triangles: t,
                paint: Paint::Plain(TOOL_COLOR),
            });
        }
        let mut view = view.clone();
        let active: Vec<String> = f.active.iter().map(usize::to_string).collect();
        view.caption = Some(format!(
            "t = {:.2} s, active nodes per level {}",
            f.time,
            active.join(" / ")
        ));
        render(&surfaces, &view)
    }

    /// Writes `final.png`, `images/` and `animation.gif` into `dir`; returns the number of
    /// pictures written.
    pub fn write(&self, dir: &Path) -> Result<usize> {
        let Some(last) = self.frames.len().checked_sub(1) else {
            return Ok(0);
        };
        let s = &self.settings;
        self.render_frame(last, &self.view(s.image_size, 2))
            .write_png(&dir.join("final.png"))?;
        let mut written = 1;
        let images = dir.join("images");
        if images.is_dir() {
            for entry in std::fs::read_dir(&images)?.flatten() {
                if entry.path().extension().is_some_and(|e| e == "png") {
                    std::fs::remove_file(entry.path())?;
                }
            }
        }
        if s.png_every > 0 {
            std::fs::create_dir_all(&images)
                .with_context(|| format!("cannot create {}", images.display()))?;
            let view = self.view(s.image_size, 1);
            let picked: Vec<usize> = (0..=last).step_by(s.png_every).collect();
            picked.par_iter().try_for_each(|&k| {
                self.render_frame(k, &view)
                    .write_png(&images.join(format!("frame_{k:05}.png")))
            })?;
            written += picked.len();
        }
        let gif_path = dir.join("animation.gif");
        if self.gif {
            let view = self.view(s.gif_size, 2);
            let times: Vec<f64> = self.frames.iter().map(|f| f.time).collect();
            let schedule = gif_schedule(&times, s.gif_fps);
            let mut gif = GifWriter::create(&gif_path, s.gif_size[0], s.gif_size[1])?;
            for batch in schedule.chunks(64) {
                let frames: Vec<(Image, u16)> = batch
                    .par_iter()
                    .map(|&(k, delay)| (self.render_frame(k, &view), delay))
                    .collect();
                gif.add_frames(&frames)?;
            }
            gif.finish()?;
            written += schedule.len();
        } else if gif_path.exists() {
            std::fs::remove_file(&gif_path)
                .with_context(|| format!("cannot remove the stale {}", gif_path.display()))?;
        }
        Ok(written)
    }
}
