//! `supple run` for a scene with `[adaptive]` (Debunne et al. 2000): one frame of `dt` per
//! step, writing into the output folder
//! - `frames/frame_NNNNN.vtu` and `scene.pvd`: the active mesh (each level's tets with an
//!   active node; cell data `level` and `active_nodes`, point data `displacement`, `level`,
//!   `active`), every `output.frame_every` frames;
//! - `metrics.csv`: per frame, active nodes per level, node updates, splits, merges, refused
//!   splits, the reactive budget's warning, active mass and momentum, energy, the force of
//!   the body on the tool, wall time, and the body's deformed volume (`supple::adaptive::VolumeProbe`);
//! - `summary.json`, and the level-coloured pictures (Fig. 8): `final.png`, `images/`,
//!   `animation.gif` (see [`crate::adaptive_pictures`]).

use crate::adaptive_pictures::LevelPictures;
use anyhow::{Context, Result};
use serde_json::json;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Instant;
use supple::adaptive::{AdaptiveBody, AdaptiveError, FrameStats};
use supple_io::pvd::{PvdEntry, PvdWriter};
use supple_io::vtu::{write_vtu_with, VtuEncoding, VtuFrame};
use supple_io::Scene;
use supple_run::record::median;

/// Runs the adaptive scene; returns the exit status (0, [`crate::EXIT_DIVERGED`],
/// [`crate::EXIT_INTERRUPTED`]).
pub fn run(scene: &Scene, out: Option<PathBuf>, quiet: bool) -> Result<i32> {
    let out = out.unwrap_or_else(|| Path::new("out").join(&scene.name));
    let frames_dir = out.join("frames");
    std::fs::create_dir_all(&frames_dir)
        .with_context(|| format!("cannot create {}", frames_dir.display()))?;
    for entry in std::fs::read_dir(&frames_dir)?.flatten() {
        if entry.path().extension().is_some_and(|e| e == "vtu") {
            std::fs::remove_file(entry.path())?;
        }
    }
    let setup = Instant::now();
    let mut body = scene.build_adaptive()?;
    let setup_ms = setup.elapsed().as_secs_f64() * 1e3;
    let a = scene.adaptive.as_ref().context("no [adaptive]")?;
    let frames = scene.steps();
    let levels = body.levels.len();
    let every = scene.output.frame_every.max(1);
    let encoding = if scene.output.compress {
        VtuEncoding::Zlib
    } else {
        VtuEncoding::Raw
    };
    let mut pvd = if scene.output.vtu {
        Some(PvdWriter::create(&out.join("scene.pvd"))?)
    } else {
        None
    };
    let mut csv = header(levels);
    let mut volume = supple::adaptive::VolumeProbe::new(&body)?;
    let (mut volume_min, mut volume_max) = (volume.rest_volume(), volume.rest_volume());
    let mut pictures =
        LevelPictures::new(&body, a.tool.as_ref(), &scene.output, frames / every + 1);
    let mut record = |body: &AdaptiveBody, frame: usize, pvd: &mut Option<PvdWriter>| {
        let t = frame as f64 * scene.dt;
        let mesh = body.active_mesh();
        if let Some(pvd) = pvd {
            let file = format!("frames/frame_{frame:05}.vtu");
            let mut vtu = VtuFrame::new(&mesh.positions, &mesh.tets);
            vtu.point_vectors = vec![("displacement", &mesh.displacement)];
            vtu.point_scalars = vec![("level", &mesh.node_level), ("active", &mesh.node_active)];
            vtu.cell_scalars = vec![
                ("level", &mesh.tet_level),
                ("active_nodes", &mesh.tet_active),
            ];
            write_vtu_with(&out.join(&file), &vtu, encoding)?;
            pvd.push(&PvdEntry {
                time: t,
                part: 0,
                name: Some("adaptive".into()),
                file,
            })?;
        }
        pictures.push(t, &mesh, a.tool.as_ref().and_then(|p| p.at(t)));
        anyhow::Ok(())
    };
    record(&body, 0, &mut pvd)?;
    let interrupt = crate::interrupt::watch();
    let (mut walls, mut diverged, mut interrupted) = (Vec::new(), None, false);
    let mut totals = FrameStats::default();
    let (mut overruns, mut max_updates) = (0usize, 0u64);
    let mut max_active = vec![0usize; levels];
    let started = Instant::now();
    for f in 0..frames {
        if interrupt.requested() {
            interrupted = true;
            break;
        }
        // The tool is read once per frame, at the frame's start (§5).
        let tool = a.tool.as_ref().and_then(|p| p.at(f as f64 * scene.dt));
        let s = match body.step_frame(tool.as_ref()) {
            Ok(s) => s,
            Err(e @ AdaptiveError::Diverged { .. }) => {
                diverged = Some(e.to_string());
                break;
            }
            Err(e) => return Err(e.into()),
        };
        walls.push(s.wall_seconds * 1e3);
        totals.splits += s.splits;
        totals.merges += s.merges;
        totals.splits_refused += s.splits_refused;
        overruns += usize::from(s.overrun_warning);
        max_updates = max_updates.max(s.node_updates);
        for (m, &n) in max_active.iter_mut().zip(&s.active_per_level) {
            *m = (*m).max(n);
        }
        let v = volume.volume(&body);
        (volume_min, volume_max) = (volume_min.min(v), volume_max.max(v));
        row(&mut csv, &body, f + 1, scene.dt, &s, v);
        if (f + 1) % every == 0 || f + 1 == frames {
            record(&body, f + 1, &mut pvd)?;
        }
    }
    let run_seconds = started.elapsed().as_secs_f64();
    std::fs::write(out.join("metrics.csv"), &csv)
        .with_context(|| format!("cannot write {}", out.join("metrics.csv").display()))?;
    let pictures_written = pictures.write(&out)?;
    let done = walls.len();
    let summary = json!({
        "scene": scene.name,
        "adaptive": true,
        "frames": done,
        "sim_time": done as f64 * scene.dt,
        "frame_period_s": scene.dt,
        "diverged": diverged.is_some(),
        "interrupted": interrupted,
        "setup_ms": setup_ms,
        "wall_seconds": run_seconds,
        "wall_ms_per_frame_median": median(&walls),
        "wall_ms_per_frame_max": walls.iter().copied().fold(0.0, f64::max),
        "level_nodes": body.hierarchy.levels.iter().map(|l| l.n_nodes()).collect::<Vec<_>>(),
        "level_steps_per_frame": (0..levels).map(|n| body.hierarchy.steps_per_frame(n)).collect::<Vec<_>>(),
        "max_active_per_level": max_active,
        "max_node_updates_per_frame": max_updates,
        "splits": totals.splits,
        "merges": totals.merges,
        "splits_refused": totals.splits_refused,
        "overrun_warnings": overruns,
        "images": pictures_written,
        // The finest level's tets at the displacements the simulation represents
        // (`supple::adaptive::VolumeProbe`): rest, end, and the largest change.
        "volume_rest": volume.rest_volume(),
        "volume_final": volume.volume(&body),
        "volume_max_rel_change": (volume_max - volume.rest_volume())
            .abs()
            .max((volume_min - volume.rest_volume()).abs())
            / volume.rest_volume(),
    });
    std::fs::write(
        out.join("summary.json"),
        serde_json::to_string_pretty(&summary)?,
    )?;
    if !quiet {
        for n in &scene.notes {
            eprintln!("note: {n}");
        }
        if overruns > 0 {
            eprintln!(
                "warning: {overruns} frame(s) took more than 95 % of the frame period; splitting was forbidden after each (Debunne §4.3)"
            );
        }
    }
    if let Some(e) = diverged {
        eprintln!("error: {e}; files written up to the last good frame");
        return Ok(crate::EXIT_DIVERGED);
    }
    if interrupted {
        eprintln!("interrupted after {done} frames; files are complete up to there");
        return Ok(crate::EXIT_INTERRUPTED);
    }
    if !quiet {
        eprintln!(
            "{}: {done} frames in {run_seconds:.2} s ({:.2} ms/frame median); {} splits, {} merges; wrote {}",
            scene.name,
            median(&walls),
            totals.splits,
            totals.merges,
            out.display()
        );
    }
    Ok(0)
}

fn header(levels: usize) -> String {
    let mut h = String::from("frame,time");
    for n in 0..levels {
        let _ = write!(h, ",active_{n}");
    }
    h.push_str(",node_updates,splits,merges,splits_refused,overrun_warning,active_mass,momentum_x,momentum_y,momentum_z,energy,tool_contacts,tool_fx,tool_fy,tool_fz,wall_ms,refine_ms,volume\n");
    h
}

/// One metrics row after frame `frame` (the active counts are those the frame ran with).
fn row(csv: &mut String, body: &AdaptiveBody, frame: usize, dt: f64, s: &FrameStats, volume: f64) {
    let (m, p) = body.active_mass_momentum();
    let _ = write!(csv, "{frame},{:.6}", frame as f64 * dt);
    for n in &s.active_per_level {
        let _ = write!(csv, ",{n}");
    }
    let _ = writeln!(
        csv,
        ",{},{},{},{},{},{m:.6e},{:.6e},{:.6e},{:.6e},{:.6e},{},{:.6e},{:.6e},{:.6e},{:.4},{:.4},{volume:.9e}",
        s.node_updates,
        s.splits,
        s.merges,
        s.splits_refused,
        u8::from(s.overrun_warning),
        p.x,
        p.y,
        p.z,
        body.energy(),
        s.tool_contacts,
        s.tool_force.x,
        s.tool_force.y,
        s.tool_force.z,
        s.wall_seconds * 1e3,
        s.refine_seconds * 1e3
    );
}
