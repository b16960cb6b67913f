//! `supple render DIR`: re-render the pictures and plots of a finished run from its
//! `scene.pvd`, `frames/*.vtu`, `metrics.csv`, `summary.json`, when the scene had rigid
//! obstacles `obstacles.json`, and when bodies had embedded surfaces `surface.pvd` and
//! `frames/*.vtp` (drawn instead of those bodies' tet boundaries, as `supple run` does).

use anyhow::{bail, Context, Result};
use clap::Args;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use supple::mesh::{Embedding, TetMesh};
use supple::nalgebra::Vector3;
use supple_io::vtp::{read_vtp, VtpData};
use supple_io::vtu_read::{read_pvd, read_vtu, VtuData};
use supple_io::ColorBy;
use supple_run::pictures::{BodyState, BodySurface, PictureOptions, Recording};

#[derive(Args)]
pub struct RenderArgs {
    /// A folder written by `supple run` (needs scene.pvd and frames/, i.e. `vtu = true`).
    pub dir: PathBuf,
    /// Image size of final.png and the PNG series, WIDTHxHEIGHT.
    #[arg(long, value_parser = parse_size, default_value = "640x480")]
    pub size: [u32; 2],
    /// Colouring: body, displacement or von_mises.
    #[arg(long, value_parser = str::parse::<ColorBy>, default_value = "body")]
    pub color: ColorBy,
    /// Draw triangle edges.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub edges: bool,
    /// Camera azimuth in degrees around +y (0: from +z).
    #[arg(long, default_value_t = supple_run::pictures::DEFAULT_AZIMUTH, allow_hyphen_values = true)]
    pub azimuth: f64,
    /// Camera elevation in degrees above the horizontal.
    #[arg(long, default_value_t = supple_run::pictures::DEFAULT_ELEVATION, allow_hyphen_values = true)]
    pub elevation: f64,
    /// Zoom factor (> 1: closer than the framing of the whole run).
    #[arg(long, default_value_t = 1.0)]
    pub zoom: f64,
    /// Write images/frame_NNNNN.png every this many frames (0: only final.png).
    #[arg(long, default_value_t = 0)]
    pub png_every: usize,
    /// Write animation.gif (default: when the run has fewer than 500 frames).
    #[arg(long, action = clap::ArgAction::Set)]
    pub gif: Option<bool>,
    /// GIF frames per second of simulated time.
    #[arg(long, default_value_t = 25.0)]
    pub gif_fps: f64,
    /// GIF size, WIDTHxHEIGHT.
    #[arg(long, value_parser = parse_size, default_value = "320x240")]
    pub gif_size: [u32; 2],
    /// Do not redo plots/*.png.
    #[arg(long)]
    pub no_plots: bool,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
}

fn parse_size(s: &str) -> Result<[u32; 2], String> {
    let bad = || format!("`{s}`: expected WIDTHxHEIGHT, e.g. 640x480, each 16 to 8192");
    let (w, h) = s.split_once(['x', 'X']).ok_or_else(bad)?;
    let size = [
        w.trim().parse().map_err(|_| bad())?,
        h.trim().parse().map_err(|_| bad())?,
    ];
    if size.iter().all(|v| (16..=8192).contains(v)) {
        Ok(size)
    } else {
        Err(bad())
    }
}

/// A body's drawn positions at one frame and their rest positions.
type Placed<'a> = (&'a [Vector3<f64>], Vec<Vector3<f64>>);

/// The `displacement` point field of a surface frame.
fn skin_displacement(v: &VtpData) -> Option<&[Vector3<f64>]> {
    (v.point_vectors.iter())
        .find(|(name, _)| name == "displacement")
        .map(|(_, u)| u.as_slice())
}

/// Per body (in the order of `names`, the bodies of `scene.pvd`), its embedded surface's
/// frames from `surface.pvd`, if the run wrote any: `frames/<body>_surface_NNNNN.vtp`, or
/// `frames/surface_NNNNN.vtp` for a single body. Each must have one frame per tet frame.
fn read_skins(
    dir: &std::path::Path,
    names: &[Option<&str>],
    n_frames: usize,
) -> Result<Vec<Option<Vec<VtpData>>>> {
    let mut skins: Vec<Option<Vec<VtpData>>> = vec![None; names.len()];
    let pvd_path = dir.join("surface.pvd");
    if !pvd_path.exists() {
        return Ok(skins);
    }
    let entries = read_pvd(&pvd_path)?;
    for (b, name) in names.iter().enumerate() {
        let files: Vec<&String> = (entries.iter())
            .filter(|(_, file)| {
                let base = file.rsplit('/').next().unwrap_or(file);
                match (name, base.rfind("_surface_")) {
                    (Some(n), Some(i)) => &base[..i] == *n,
                    (None, None) => base.starts_with("surface_"),
                    _ => false,
                }
            })
            .map(|(_, file)| file)
            .collect();
        if files.is_empty() {
            continue;
        }
        if files.len() != n_frames {
            bail!(
                "{}: {} surface frames for body `{}`, {} tet frames",
                pvd_path.display(),
                files.len(),
                name.unwrap_or("body"),
                n_frames
            );
        }
        let frames = files
            .par_iter()
            .map(|file| read_vtp(&dir.join(file)).map_err(anyhow::Error::from))
            .collect::<Result<Vec<_>>>()?;
        skins[b] = Some(frames);
    }
    Ok(skins)
}

/// Body name of a frame file: `frames/<body>_frame_NNNNN.vtu`, or `None` for the
/// single-body `frames/frame_NNNNN.vtu`.
fn body_of(file: &str) -> Option<&str> {
    let base = file.rsplit('/').next().unwrap_or(file);
    base.rfind("_frame_").map(|i| &base[..i])
}

/// Every frame of a body must have its first frame's mesh (same vertex count, same tets):
/// the pictures bind the first frame's surface and colour by its tets, so a frame written
/// from another mesh would be drawn as garbage or index out of its arrays.
fn same_meshes(entries: &[(f64, String)], frames: &[Vec<VtuData>], dir: &Path) -> Result<()> {
    let n = frames.first().map_or(0, Vec::len);
    for (k, bodies) in frames.iter().enumerate().skip(1) {
        for (b, v) in bodies.iter().enumerate() {
            let first = &frames[0][b];
            if v.positions.len() != first.positions.len() || v.tets != first.tets {
                bail!(
                    "{}: frame {k} has another mesh than frame 0 ({}): {} vertices and {} tets against {} and {}{}; a run's frames share one mesh",
                    dir.join(&entries[k * n + b].1).display(),
                    entries[b].1,
                    v.positions.len(),
                    v.tets.len(),
                    first.positions.len(),
                    first.tets.len(),
                    if v.tets.len() == first.tets.len() && v.positions.len() == first.positions.len() {
                        " (the tets differ)"
                    } else {
                        ""
                    }
                );
            }
        }
    }
    Ok(())
}

pub fn render(args: RenderArgs) -> Result<i32> {
    anyhow::ensure!(
        args.gif_fps > 0.0 && args.gif_fps <= 100.0,
        "--gif-fps {}: must be above 0 and at most 100",
        args.gif_fps
    );
    anyhow::ensure!(
        args.zoom > 0.0 && args.zoom.is_finite(),
        "--zoom {}: must be a finite number above 0",
        args.zoom
    );
    let dir = &args.dir;
    let pvd_path = dir.join("scene.pvd");
    if !pvd_path.exists() {
        bail!(
            "{}: not found; `supple render` needs the VTU frames of a run (scene `[output] vtu = true`)",
            pvd_path.display()
        );
    }
    let entries = read_pvd(&pvd_path)?;
    let mut names: Vec<Option<&str>> = Vec::new();
    for (_, file) in &entries {
        if !names.contains(&body_of(file)) {
            names.push(body_of(file));
        }
    }
    if entries.is_empty() || entries.len() % names.len() != 0 {
        bail!(
            "{}: {} datasets for {} bodies",
            pvd_path.display(),
            entries.len(),
            names.len()
        );
    }
    let frames: Vec<Vec<VtuData>> = entries
        .par_chunks(names.len())
        .map(|chunk| {
            chunk
                .iter()
                .map(|(_, file)| read_vtu(&dir.join(file)).map_err(anyhow::Error::from))
                .collect::<Result<Vec<_>>>()
        })
        .collect::<Result<_>>()?;
    same_meshes(&entries, &frames, dir)?;
    // A single body's frames do not carry its name: summary.json does.
    let summary_name = std::fs::read_to_string(dir.join("summary.json"))
        .ok()
        .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
        .and_then(|s| s["bodies"][0]["name"].as_str().map(str::to_string))
        .unwrap_or_else(|| "body".into());
    let skins = read_skins(dir, &names, frames.len())?;
    let rest_of = |x: &[Vector3<f64>], u: Option<&[Vector3<f64>]>| -> Vec<Vector3<f64>> {
        match u {
            Some(u) => x.iter().zip(u).map(|(x, u)| x - u).collect(),
            None => x.to_vec(),
        }
    };
    let mut surfaces = Vec::with_capacity(names.len());
    for (b, (name, v)) in names.iter().zip(&frames[0]).enumerate() {
        let name = name.unwrap_or(&summary_name);
        surfaces.push(match &skins[b] {
            // The run's picture surface: the skin, each triangle coloured by the tet that
            // holds its first vertex at rest (bound again, as the run bound it).
            Some(skin) => {
                let first = &skin[0];
                let mesh = TetMesh::new(
                    rest_of(&v.positions, v.point_vector("displacement")),
                    v.tets.clone(),
                )
                .with_context(|| format!("body `{name}`: its rest mesh"))?;
                let embedding =
                    Embedding::new(&mesh, &rest_of(&first.positions, skin_displacement(first)))
                        .with_context(|| format!("body `{name}`: binding its surface"))?;
                let face_tet = (first.triangles.iter())
                    .map(|t| embedding.tet(t[0] as usize) as u32)
                    .collect();
                BodySurface::embedded(
                    name,
                    first.positions.len(),
                    first.triangles.clone(),
                    face_tet,
                )
            }
            None => BodySurface::new(name, &v.tets, v.positions.len()),
        });
    }
    let mut recording = Recording::new(args.color, surfaces);
    recording.read_obstacles(dir)?;
    for (k, (chunk, bodies)) in entries.chunks(names.len()).zip(&frames).enumerate() {
        let placed: Vec<Placed> = (bodies.iter().enumerate())
            .map(|(b, v)| match &skins[b] {
                Some(skin) => (
                    skin[k].positions.as_slice(),
                    rest_of(&skin[k].positions, skin_displacement(&skin[k])),
                ),
                None => (
                    v.positions.as_slice(),
                    rest_of(&v.positions, v.point_vector("displacement")),
                ),
            })
            .collect();
        let states: Vec<BodyState> = (bodies.iter().zip(&placed))
            .map(|(v, (x, rest))| BodyState {
                x,
                rest,
                von_mises: v.cell_scalar("von_mises"),
            })
            .collect();
        recording.push(chunk[0].0, &states);
    }
    let opts = PictureOptions {
        image_size: args.size,
        png_every: args.png_every,
        gif: args
            .gif
            .unwrap_or(frames.len() < supple_io::scene::GIF_AUTO_MAX_FRAMES),
        gif_fps: args.gif_fps,
        gif_size: args.gif_size,
        edges: args.edges,
        azimuth: args.azimuth,
        elevation: args.elevation,
        zoom: args.zoom,
    };
    let report = supple_run::pictures::write_all(dir, &recording, &opts, !args.no_plots)
        .with_context(|| format!("rendering {}", dir.display()))?;
    if !args.quiet {
        eprintln!(
            "{}: {} frames; {} pictures in {:.2} s",
            dir.display(),
            frames.len(),
            report.images,
            report.seconds
        );
    }
    Ok(0)
}
