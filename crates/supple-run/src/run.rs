//! The run behind `supple run`: simulate a scene and write what a person can open.
//!
//! Output folder layout: `frames/frame_NNNNN.vtu` + `scene.pvd` (ParaView animation),
//! embedded surfaces as `frames/surface_NNNNN.vtp` + `surface.pvd` (skin.rs),
//! `metrics.csv` (one row per output frame), `summary.json`, and the pictures: `final.png`,
//! `images/`, `animation.gif`, `plots/` (see pictures.rs and plots.rs).

use crate::frames::FrameWriter;
use crate::pictures::{BodyState, BodySurface, PictureOptions, Recording};
use crate::record::{Recorder, Summary};
use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::time::Instant;
use supple::world::verdict::Invalid;
use supple::world::{Diverged, World};
use supple_io::Scene;

/// How to run a scene (the options of `supple run` beside the scene itself).
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Output folder (default: `out/<scene name>`).
    pub out: Option<PathBuf>,
    /// Print nothing but errors (no notes, no closing line).
    pub quiet: bool,
    /// Run even when the output is estimated above the size limit
    /// ([`crate::budget::OUTPUT_LIMIT`]).
    pub force: bool,
}

/// What a caller sees of a run while it goes: a progress display and a stop request
/// (Ctrl-C in `supple run`). The defaults show nothing and never stop. A progress that
/// counts the steps and stops the run after three:
///
/// ```
/// use supple_run::{run_scene, Progress, RunOptions, RunOutcome};
/// /// Steps taken so far (the run asks once after each step).
/// struct StopAfter(usize);
/// impl Progress for StopAfter {
///     fn stop_requested(&mut self) -> bool {
///         self.0 += 1;
///         self.0 >= 3
///     }
/// }
/// let scene = supple_io::parse_scene(r#"
/// duration = 10.0
/// output = { gif = false, plots = false }
/// [[body]]
/// mesh = { kind = "box", cells = [1, 1, 1], cell_size = 0.1 }
/// material = { model = "linear" }
/// "#, std::path::Path::new("long.toml"))?;
/// let out = std::env::temp_dir().join(format!("supple-doc-progress-{}", std::process::id()));
/// let opts = RunOptions { out: Some(out.clone()), quiet: true, force: false };
/// let report = run_scene(&scene, &opts, &mut StopAfter(0))?;
/// assert_eq!((report.outcome, report.summary.steps), (RunOutcome::Interrupted, 3));
/// std::fs::remove_dir_all(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub trait Progress {
    /// Called once after the first frame is written, before the first step.
    fn start(&mut self, _steps: usize) {}
    /// Asked after each step: stop the run after this step (its files are finished).
    fn stop_requested(&mut self) -> bool {
        false
    }
    /// Called after each step that did not diverge.
    fn step_done(&mut self) {}
    /// Called once after the last step, before the closing messages.
    fn finish(&mut self) {}
    /// Called once `summary.json` (at `summary`) is written, before the pictures are drawn:
    /// from here on the steps and their files are complete and a stop can only cut the
    /// pictures short.
    fn pictures(&mut self, _summary: &Path) {}
}

/// A [`Progress`] that shows nothing and never stops.
pub struct Silent;

impl Progress for Silent {}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub enum RunOutcome {
    /// Every step was taken.
    Finished,
    /// A step diverged, too many steps kept unconverged solves, or a static run's final
    /// equilibrium did not converge; the files hold the frames up to the failure.
    Diverged(Diverged),
    /// [`Progress::stop_requested`] said stop; the files are complete up to the last step.
    Interrupted,
    /// Every step was taken, but the end state fails the verdict
    /// ([`supple::world::verdict`]: a vertex inside another body, a surface through itself,
    /// inverted tets, volume out of range, or energy created); every file is written and
    /// `summary.json` says why (`invalid_reason`).
    Invalid(Vec<Invalid>),
}

/// A finished run: how it ended, where its files are, and what `summary.json` holds.
pub struct RunReport {
    pub outcome: RunOutcome,
    /// The output folder.
    pub out: PathBuf,
    pub summary: Summary,
}

/// Runs the scene as `supple run` does, writing frames, `metrics.csv`, `summary.json` and the
/// pictures into the output folder, and printing the same notes and closing line to stderr
/// (none with `quiet`). A run that diverges or is interrupted still returns `Ok` (with its
/// outcome); errors are scenes refused before the first step and files that cannot be
/// written.
///
/// ```
/// use supple_run::{run_scene, RunOptions, RunOutcome, Silent};
/// let scene = supple_io::parse_scene(r#"
/// dt = 0.01
/// duration = 0.05
/// output = { gif = false, plots = false }
/// [[body]]
/// name = "bar"
/// mesh = { kind = "box", cells = [2, 1, 1], cell_size = 0.1 }
/// material = { model = "corotational" }
/// fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }]
/// "#, std::path::Path::new("bar.toml"))?;
/// let out = std::env::temp_dir().join(format!("supple-doc-run-{}", std::process::id()));
/// let opts = RunOptions { out: Some(out.clone()), quiet: true, force: false };
/// let report = run_scene(&scene, &opts, &mut Silent)?;
/// assert_eq!((report.outcome, report.summary.steps), (RunOutcome::Finished, 5));
/// assert!(out.join("scene.pvd").is_file() && out.join("metrics.csv").is_file());
/// std::fs::remove_dir_all(&out)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run_scene(
    scene: &Scene,
    opts: &RunOptions,
    progress: &mut dyn Progress,
) -> Result<RunReport> {
    // Refused before any file is written or any step taken.
    crate::budget::check(scene, opts.force)?;
    let out = opts
        .out
        .clone()
        .unwrap_or_else(|| Path::new("out").join(&scene.name));
    crate::frames::clear_frames(&out)?;
    let (mut world, grabs, exact) = scene.build_world_with_ids()?;
    if !opts.quiet {
        for n in &scene.notes {
            eprintln!("note: {n}");
        }
        for (body, notes) in world.integrator_notes() {
            for n in notes {
                eprintln!("{}: {body}: {n}", world.integrator_name());
            }
        }
        if let Some(c) = world.contact() {
            let s = c.settings();
            eprintln!(
                "contact: {} obstacle(s), self-collision {}, body collision {}, {:?} broad phase, {:?} narrow phase, {} response, thickness {:.3e} m",
                s.obstacles.len(),
                if s.self_collision { "on" } else { "off" },
                if s.body_collision { "on" } else { "off" },
                s.broad_phase,
                s.narrow_phase,
                s.response.name(),
                c.thickness()
            );
        }
    }
    let steps = scene.steps();
    let csv_path = out.join("metrics.csv");
    let csv = std::fs::File::create(&csv_path)
        .with_context(|| format!("cannot create {}", csv_path.display()))?;
    // The scene's springs went into the world in order: pair their names with the ids.
    let springs: Vec<_> = (scene.springs.iter().map(|s| s.name.clone()))
        .zip(world.springs().map(|(id, _)| id))
        .collect();
    let mut rec = Recorder::new(&mut world, &scene.probes, &grabs, &springs, &exact, csv)?;
    let mut frames = FrameWriter::new(scene, &out)?;
    let every = scene.output.frame_every;
    let mut last_frame_time = None;
    let surfaces = (world.bodies.iter().enumerate())
        .map(|(i, b)| {
            (frames.skins().picture_surface(i))
                .unwrap_or_else(|| BodySurface::new(&b.name, &b.elems.tets, b.n_vertices()))
        })
        .collect();
    let obstacles = world.contact().map(|c| c.settings().obstacles.as_slice());
    let mut recording =
        Recording::new(scene.output.color, surfaces).with_obstacles(obstacles.unwrap_or(&[]));

    let mut write_frame = |world: &mut World, rec: &mut Recorder| -> Result<()> {
        rec.write_row(world)?;
        last_frame_time = Some(world.time);
        let stresses = frames.write(world)?;
        let skins = frames.skins();
        let states: Vec<BodyState> = (world.bodies.iter().zip(&stresses).enumerate())
            .map(|(i, (b, vm))| {
                let (x, rest) = skins.positions(i).unwrap_or((&b.x, &b.mesh.positions));
                BodyState {
                    x,
                    rest,
                    von_mises: vm.as_deref(),
                }
            })
            .collect();
        recording.push(world.time, &states);
        Ok(())
    };

    write_frame(&mut world, &mut rec)?;
    progress.start(steps);
    let started = Instant::now();
    let mut diverged = None;
    let mut interrupted = false;
    for _ in 0..steps {
        let t = Instant::now();
        let result = world.step();
        rec.after_step(&mut world, t.elapsed().as_secs_f64() * 1e3);
        if let Err(d) = result {
            diverged = Some(d);
            break;
        }
        let stop = progress.stop_requested();
        if world.steps % every == 0 || world.steps == steps || stop {
            write_frame(&mut world, &mut rec)?;
        }
        progress.step_done();
        if stop {
            interrupted = true;
            break;
        }
    }
    progress.finish();
    // A run whose steps all finished can still have failed: too many unconverged solves.
    if diverged.is_none() {
        if let Some(reason) = world.verdict() {
            diverged = Some(Diverged {
                body: match world.bodies.as_slice() {
                    [one] => one.name.clone(),
                    _ => "(all bodies)".to_string(),
                },
                step: world.steps,
                time: world.time,
                reason,
            });
        }
    }
    // A static run succeeds only when its final equilibrium converged.
    if let (None, Some(residual)) = (&diverged, rec.static_unconverged(&world)) {
        diverged = Some(Diverged {
            body: "(static)".to_string(),
            step: world.steps,
            time: world.time,
            reason: format!(
                "the final static equilibrium did not converge: a Newton solve of the last step (a load step) ended above newton_tolerance (the last load step ended at {residual:.3e} relative)"
            ),
        });
    }
    let verdict = rec.verdict(&world);
    let mut summary = rec.summary(
        &world,
        &scene.name,
        diverged.as_ref(),
        interrupted,
        &verdict,
    )?;
    summary.mesh_notes = scene.notes.clone();
    let summary_path = out.join("summary.json");
    std::fs::write(
        &summary_path,
        serde_json::to_string_pretty(&summary)? + "\n",
    )
    .with_context(|| format!("cannot write {}", summary_path.display()))?;
    let sim_seconds = started.elapsed().as_secs_f64();
    progress.pictures(&summary_path);
    recording.write_obstacles(&out)?;
    let pictures = crate::pictures::write_all(
        &out,
        &recording,
        &PictureOptions::from_output(&scene.output, recording.times.len()),
        scene.output.plots,
    )?;
    for b in summary.bodies.iter().filter(|_| diverged.is_none()) {
        if b.inverted_tets_final > 0 {
            eprintln!(
                "warning: body `{}` ends with {} inverted tet(s) (smallest volume ratio {:.3e})",
                b.name, b.inverted_tets_final, b.min_tet_volume_ratio_final
            );
        }
    }
    if summary.retried_steps > 0 && !opts.quiet {
        eprintln!(
            "step control: {} step(s) retried with shorter steps ({} failed tries), shortest step {:.3e} s",
            summary.retried_steps, summary.retries, summary.dt_min
        );
    }
    let outcome = match (diverged, interrupted) {
        (None, false) if !verdict.invalid.is_empty() => {
            for reason in &verdict.invalid {
                eprintln!("invalid: {reason}");
            }
            eprintln!(
                "{}: the run took its {} steps but its end state is invalid; frames, metrics.csv and summary.json (\"invalid\": true) are in {}",
                scene.name,
                world.steps,
                out.display()
            );
            RunOutcome::Invalid(verdict.invalid)
        }
        (Some(d), _) => {
            eprintln!(
                "diverged: {d}; frames up to t = {:?} s are in {}",
                last_frame_time.unwrap_or(0.0),
                out.display()
            );
            RunOutcome::Diverged(d)
        }
        (None, true) => {
            eprintln!(
                "interrupted after step {} (t = {:?} s); frames, metrics.csv and summary.json (\"interrupted\": true) are in {}",
                world.steps,
                world.time,
                out.display()
            );
            RunOutcome::Interrupted
        }
        (None, false) => {
            if !opts.quiet && !frames.skins().is_empty() {
                eprintln!(
                    "embedded surface: {:.3} ms per placement (median of {})",
                    crate::record::median(&frames.skins().update_ms),
                    frames.skins().update_ms.len()
                );
            }
            if !opts.quiet {
                eprintln!(
                    "{}: {} steps ({:.3} s simulated) in {:.2} s ({:.3} ms/step median); {} pictures in {:.2} s; wrote {}",
                    scene.name,
                    world.steps,
                    world.time,
                    sim_seconds,
                    summary.wall_ms_per_step_median,
                    pictures.images,
                    pictures.seconds,
                    out.display()
                );
            }
            RunOutcome::Finished
        }
    };
    Ok(RunReport {
        outcome,
        out,
        summary,
    })
}
