//! `supple experiment tube-drop`: Müller et al. 2002 §4.2, the largest stable time step of
//! the dropped tube per Young's modulus, stiffness warping against a nonlinear model.
//!
//! The scene (`scenes/tube_drop.toml`) is run for every Young's modulus, model and time step
//! of the sweep with the same integrator (the scene's, linearized implicit Euler); a run is
//! **stable** when all of these hold over the whole run (1.5 s: the fall, the impact at
//! about 0.3 s, and 1.2 s after it):
//! 1. the world never reports divergence (every position and velocity finite, no vertex
//!    farther than 100 rest diagonals from the centre of mass);
//! 2. no energy is created: kinetic + gravitational energy never exceeds its initial value
//!    by more than 5 % of the potential energy the fall releases (`m g Δh`; elastic energy is
//!    ≥ 0 and contact only removes energy, so a stable run stays below).
//!
//! This is Müller's notion (the simulation "got instable"). Whether a tet is left inverted
//! at the end is reported beside it (`inverted_at_end`; the table's second number is the
//! largest stable step that leaves none): a
//! St.Venant–Kirchhoff tet crushed at the impact can flip to its mirror image, which that
//! model counts as a rest state, so such a run is stable but wrong.
//!
//! The table reports, per (model, E), the largest step of the sweep that is stable and the
//! largest that is stable and leaves no tet inverted; summary.json also has the largest step
//! at and below which every step of the sweep is stable (they differ when a model is stable
//! only in a window of steps).

use anyhow::{Context, Result};
use clap::Args;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;
use supple::fem::material::{CorotationalTangent, ModelKind, RotationField};

#[derive(Args)]
pub struct TubeDropArgs {
    /// The scene (default: scenes/tube_drop.toml).
    #[arg(long, default_value = "scenes/tube_drop.toml")]
    pub scene: PathBuf,
    /// Output folder (default: out/tube_drop).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Young's moduli (Pa).
    #[arg(long, value_delimiter = ',', default_values_t = [2.0e6, 1.0e6, 0.5e6, 0.2e6, 0.1e6])]
    pub youngs: Vec<f64>,
    /// Time steps tried (ms), any order.
    #[arg(long, value_delimiter = ',', default_values_t = [50.0, 30.0, 20.0, 10.0, 5.0, 2.0, 1.0])]
    pub dt_ms: Vec<f64>,
    /// Simulated time per run (s).
    #[arg(long, default_value_t = 1.5)]
    pub duration: f64,
    /// Print nothing.
    #[arg(long, short)]
    pub quiet: bool,
}

#[derive(Serialize)]
struct RunRow {
    youngs: f64,
    model: String,
    dt_ms: f64,
    stable: bool,
    /// Why a run is unstable (empty when stable).
    reason: String,
    /// max (kinetic + gravitational − initial) / (m g Δh).
    energy_gain_max: f64,
    min_volume_ratio_final: f64,
    inverted_at_end: bool,
    wall_ms_per_step: f64,
}

#[derive(Serialize)]
struct Largest {
    youngs: f64,
    model: String,
    largest_stable_dt_ms: Option<f64>,
    /// Largest step such that it and every smaller step of the sweep are stable.
    stable_at_and_below_dt_ms: Option<f64>,
    /// Largest step that is stable and leaves no tet inverted.
    largest_clean_dt_ms: Option<f64>,
}

fn models() -> Vec<(&'static str, ModelKind)> {
    vec![
        (
            "warped",
            ModelKind::Warped {
                field: RotationField::LeastSquares,
                ghost_correction: true,
                tangent: supple::fem::material::WarpedTangent::Rotated,
            },
        ),
        (
            "corotational",
            ModelKind::corotational(CorotationalTangent::Rotated),
        ),
        ("stvk", ModelKind::Stvk),
    ]
}

fn run_one(
    base: &supple_io::Scene,
    model: ModelKind,
    youngs: f64,
    dt: f64,
    duration: f64,
) -> Result<RunRow> {
    let mut scene = base.clone();
    scene.dt = dt;
    scene.duration = duration;
    for b in &mut scene.bodies {
        b.model = model;
        b.youngs = youngs;
    }
    let mut world = scene.build_world()?;
    let gravity = world.gravity;
    let body = &world.bodies[0];
    let lowest_drop = body
        .x
        .iter()
        .map(|p| -p.dot(&gravity.normalize()))
        .fold(f64::INFINITY, f64::min);
    // Potential energy released by the fall of the lowest point to the ground (height 0).
    let released = body.mass.total() * gravity.norm() * lowest_drop.max(1e-9);
    let energy = |w: &supple::world::World| {
        w.bodies[0].kinetic_energy() + w.bodies[0].potential_energy(&gravity)
    };
    let e0 = energy(&world);
    let mut gain: f64 = 0.0;
    let mut reason = String::new();
    let steps = scene.steps();
    let t = Instant::now();
    for _ in 0..steps {
        if let Err(d) = world.step() {
            reason = format!("diverged at t = {:.3} s: {}", d.time, d.reason);
            break;
        }
        gain = gain.max((energy(&world) - e0) / released);
        if gain > 0.05 {
            reason = format!(
                "energy grew by {:.0} % of m g Δh at t = {:.3} s",
                100.0 * gain,
                world.time
            );
            break;
        }
    }
    let wall = t.elapsed().as_secs_f64() * 1e3 / world.steps.max(1) as f64;
    let min_ratio = world.bodies[0].min_volume_ratio();
    Ok(RunRow {
        youngs,
        model: String::new(),
        dt_ms: dt * 1e3,
        stable: reason.is_empty(),
        reason,
        energy_gain_max: gain,
        min_volume_ratio_final: min_ratio,
        inverted_at_end: min_ratio <= 0.0 || min_ratio.is_nan(),
        wall_ms_per_step: wall,
    })
}

pub fn tube_drop(args: TubeDropArgs) -> Result<()> {
    let base = supple_run::load(&args.scene, None, &[])?;
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out/tube_drop"));
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut dts = args.dt_ms.clone();
    dts.sort_by(|a, b| b.total_cmp(a));
    anyhow::ensure!(
        dts.iter().all(|d| *d > 0.0 && d.is_finite()),
        "--dt-ms: every step must be a finite number above 0"
    );
    let mut rows = Vec::new();
    let mut largest = Vec::new();
    for &e in &args.youngs {
        anyhow::ensure!(e > 0.0 && e.is_finite(), "--youngs {e}: must be above 0");
        for (name, model) in models() {
            let mut best = None;
            let mut clean = None;
            let mut from_below = None;
            for &dt_ms in &dts {
                let mut row = run_one(&base, model, e, dt_ms * 1e-3, args.duration)?;
                row.model = name.to_string();
                if !args.quiet {
                    eprintln!(
                        "E = {e:.1e} Pa, {name}, dt = {dt_ms} ms: {}",
                        if row.stable {
                            "stable".to_string()
                        } else {
                            row.reason.clone()
                        }
                    );
                }
                if row.stable && best.is_none() {
                    best = Some(dt_ms);
                }
                if row.stable && !row.inverted_at_end && clean.is_none() {
                    clean = Some(dt_ms);
                }
                // Steps run from the largest down: an unstable one resets the run of
                // stable steps below it.
                from_below = if row.stable {
                    from_below.or(Some(dt_ms))
                } else {
                    None
                };
                rows.push(row);
            }
            largest.push(Largest {
                youngs: e,
                model: name.to_string(),
                largest_stable_dt_ms: best,
                stable_at_and_below_dt_ms: from_below,
                largest_clean_dt_ms: clean,
            });
        }
    }
    let mut csv = std::fs::File::create(out.join("runs.csv"))?;
    writeln!(
        csv,
        "youngs,model,dt_ms,stable,energy_gain_max,min_volume_ratio_final,inverted_at_end,wall_ms_per_step,reason"
    )?;
    for r in &rows {
        writeln!(
            csv,
            "{},{},{},{},{:.4},{:.4},{},{:.3},\"{}\"",
            r.youngs,
            r.model,
            r.dt_ms,
            r.stable,
            r.energy_gain_max,
            r.min_volume_ratio_final,
            r.inverted_at_end,
            r.wall_ms_per_step,
            r.reason.replace('"', "'")
        )?;
    }
    // The table as Müller prints it: one row per model, one column per E; each cell is
    // "largest stable step / largest stable step that leaves no tet inverted".
    let mut table = String::from("| model |");
    for e in &args.youngs {
        table += &format!(" E = {:.1}e6 |", e / 1e6);
    }
    table += "\n|---|";
    table += &"---|".repeat(args.youngs.len());
    for (name, _) in models() {
        table += &format!("\n| {name} |");
        for e in &args.youngs {
            let l = largest.iter().find(|l| l.model == name && l.youngs == *e);
            let show = |d: Option<f64>| d.map_or_else(|| "none".to_string(), |d| format!("{d} ms"));
            // "largest stable / largest stable without an inverted tet".
            table += &match l {
                Some(l) => format!(
                    " {} / {} |",
                    show(l.largest_stable_dt_ms),
                    show(l.largest_clean_dt_ms)
                ),
                None => " – |".into(),
            };
        }
    }
    table += "\n";
    std::fs::write(out.join("table.md"), &table)?;
    let json = serde_json::json!({ "largest_stable": largest, "runs": rows });
    std::fs::write(
        out.join("summary.json"),
        serde_json::to_string_pretty(&json)?,
    )?;
    if !args.quiet {
        println!("{table}");
        eprintln!("wrote {}", out.display());
    }
    Ok(())
}
