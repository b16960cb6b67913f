//! `supple experiment hauth-hierarchy`: Hauth & Straßer 2004 §7.3, Example 3 — the
//! hierarchical corotational bar against full St.Venant–Kirchhoff on the fine mesh.
//!
//! The bar is 0.1 × 0.1 × 0.3 m (μ = 1e3 Pa, ν = 0.3, ρ = 1000 kg/m³, no gravity), 70 coarse
//! tets (a 2 × 1 × 7 box grid, five tets per cell, two cells across the shear) octasected
//! twice to 4480, clamped at `z = 0`. A shear traction on the top face rises linearly to
//! 80 N/m² (along x) over the first `ramp` seconds and is then held; the clamped base turns
//! about the bar's long axis once per 10 s (ω = 0.63 s⁻¹, the rotation of the paper's
//! Example 1; the paper says only "we rotate the bar as shown in the video"). dt = 30 ms,
//! frames refreshed every 150 ms.
//!
//! Runs: full StVK on the fine mesh (the reference; Newton with PCG and with sparse Cholesky),
//! plain corotational on the fine mesh (per-element polar frames, the same update rate, one
//! PCG solve per step), the hierarchical body in readings (a) and (b) (reading (b) with the
//! two-level preconditioner unless `--no-coarse-correction`), and StVK on the coarse mesh
//! alone. `--repeats N` runs every configuration N times in turn and reports the median wall
//! time. The corner error is measured on the top corner `(0.1, 0.1, 0.3)` in the
//! frame of the turning base: `d(t) = x(t) − R(t) X`, against the reference's `d_ref(t)`,
//! both at the end (where `R = I`) and as `max_t ‖d − d_ref‖ / max_t ‖d_ref‖`.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Instant;
use supple::body::{Body, BodyDesc};
use supple::constraint::{Components, ConstraintDesc, Motion};
use supple::fem::material::{CorotationalSettings, CorotationalTangent, ModelKind};
use supple::hierarchical::{HierarchicalBody, HierarchySettings, Reading, Scheme};
use supple::linalg::{OrderingKind, PcgSettings};
use supple::load::{LoadDesc, LoadKind, TimeFunction};
use supple::mesh::{boundary_faces, box_grid, BoxGrid, Hierarchy, TetMesh, TetSplit};
use supple::nalgebra::{Rotation3, Unit, Vector3};
use supple::time::{
    BackwardEuler, Integrator, LinearSolverKind, LinearizedBackwardEuler, NewtonSettings, WarmStart,
};
use supple_run::cli::PreconditionerArg;

#[derive(Args)]
pub struct HauthHierarchyArgs {
    /// Output folder (default: out/hauth_hierarchy).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Simulated seconds.
    #[arg(long, default_value_t = 10.0)]
    pub duration: f64,
    /// Time step (s).
    #[arg(long, default_value_t = 0.03)]
    pub dt: f64,
    /// Frame update interval (s), rounded to whole steps.
    #[arg(long, default_value_t = 0.15)]
    pub update: f64,
    /// Final top shear traction (N/m²).
    #[arg(long, default_value_t = 80.0)]
    pub traction: f64,
    /// Seconds over which the traction rises from 0.
    #[arg(long, default_value_t = 5.0)]
    pub ramp: f64,
    /// Seconds per turn of the clamped base about the long axis (0: no rotation); the
    /// rotation rate does not depend on `--duration`.
    #[arg(long, default_value_t = 10.0)]
    pub turn_period: f64,
    /// PCG tolerance of every fine-level and reference solve.
    #[arg(long, default_value_t = 1e-6)]
    pub pcg_tolerance: f64,
    /// Preconditioner of every nodal PCG (reference, corotational, reading (b)); reading (a)
    /// always uses block Jacobi on its hierarchical matrix.
    #[arg(long, value_enum, default_value = "block-jacobi")]
    pub preconditioner: PreconditionerArg,
    /// Newton tolerance (relative residual) of the StVK runs, coarse level included.
    #[arg(long, default_value_t = 1e-6)]
    pub newton_tolerance: f64,
    /// Reading (b): precondition with `--preconditioner` instead of block Jacobi plus the
    /// exact coarse-space solve.
    #[arg(long)]
    pub no_coarse_correction: bool,
    /// Runs of every configuration (in turn); the table reports the median wall time.
    #[arg(long, default_value_t = 1)]
    pub repeats: usize,
    /// Skip the StVK reference solved with sparse Cholesky (keep the PCG one).
    #[arg(long)]
    pub no_cholesky_reference: bool,
}

const MU: f64 = 1e3;
const NU: f64 = 0.3;
const RHO: f64 = 1000.0;
const SIZE: [f64; 3] = [0.1, 0.1, 0.3];

/// What one run measured.
struct Run {
    name: String,
    tets: usize,
    wall_s: f64,
    newton: usize,
    pcg: usize,
    coarse_pcg: usize,
    max_step_s: f64,
    median_step_s: f64,
    /// Wall time of each repeat (`wall_s` is their median).
    walls: Vec<f64>,
    /// Corner displacement in the base frame, per step.
    corner: Vec<Vector3<f64>>,
}

/// The coarse bar: 2 × 1 × 7 cells of five tets (70 tets), two cells across the direction
/// of the shear (x).
fn coarse_mesh() -> TetMesh {
    box_grid(&BoxGrid {
        cells: [2, 1, 7],
        cell_size: Vector3::new(SIZE[0] / 2.0, SIZE[1], SIZE[2] / 7.0),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    })
}

struct Scene {
    traction: f64,
    ramp: f64,
    turn_period: f64,
    duration: f64,
}

impl Scene {
    fn angle(&self, t: f64) -> f64 {
        if self.turn_period == 0.0 {
            0.0
        } else {
            2.0 * std::f64::consts::PI * t.min(self.duration) / self.turn_period
        }
    }

    fn center(&self) -> Vector3<f64> {
        Vector3::new(SIZE[0] / 2.0, SIZE[1] / 2.0, 0.0)
    }

    /// The bar on `mesh` with `model`: base held (turning), top traction.
    fn body(&self, mesh: TetMesh, model: ModelKind) -> Result<BodyDesc> {
        let youngs = 2.0 * MU * (1.0 + NU);
        let base: Vec<u32> = (0..mesh.n_vertices() as u32)
            .filter(|&v| mesh.positions[v as usize].z < 1e-9)
            .collect();
        let top: Vec<[u32; 3]> = boundary_faces(&mesh.tets)
            .into_iter()
            .filter(|f| {
                f.iter()
                    .all(|&v| mesh.positions[v as usize].z > SIZE[2] - 1e-9)
            })
            .collect();
        if base.is_empty() || top.is_empty() {
            bail!("the bar mesh has no base or no top face");
        }
        let mut desc = BodyDesc::new("bar", mesh, model, youngs, NU, RHO);
        let mut hold = ConstraintDesc::fixed("base", base);
        if self.turn_period != 0.0 {
            hold.components = Components::All;
            hold.motion = Motion::Rotation {
                center: self.center(),
                axis: Vector3::z(),
                angle: self.angle(self.duration),
            };
            hold.time = TimeFunction::Ramp {
                t0: 0.0,
                t1: self.duration,
            };
        }
        desc.constraints.push(hold);
        desc.loads.push(LoadDesc {
            name: "top shear".into(),
            kind: LoadKind::Traction {
                faces: top,
                traction: Vector3::new(self.traction, 0.0, 0.0),
            },
            time: TimeFunction::Ramp {
                t0: 0.0,
                t1: self.ramp,
            },
        });
        Ok(desc)
    }

    /// `x − R(t) X` at vertex `v`.
    fn local(&self, x: &Vector3<f64>, rest: &Vector3<f64>, t: f64) -> Vector3<f64> {
        let r = Rotation3::from_axis_angle(&Unit::new_normalize(Vector3::z()), self.angle(t));
        let c = self.center();
        x - (c + r * (rest - c))
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

/// A plain body stepped as the world does (loads and motions set, frames counted, step).
fn run_plain(
    name: &str,
    scene: &Scene,
    mut body: Body,
    mut integrator: Box<dyn Integrator>,
    steps: usize,
    dt: f64,
    corner: usize,
) -> Result<Run> {
    let g = Vector3::zeros();
    let mut run = Run {
        name: name.into(),
        tets: body.elems.len(),
        wall_s: 0.0,
        newton: 0,
        pcg: 0,
        coarse_pcg: 0,
        max_step_s: 0.0,
        median_step_s: 0.0,
        corner: Vec::with_capacity(steps),
        walls: Vec::new(),
    };
    let mut times = Vec::with_capacity(steps);
    for k in 0..steps {
        let t1 = (k + 1) as f64 * dt;
        let t0 = Instant::now();
        body.set_time(t1);
        body.model.begin_step();
        let s = integrator
            .step(&mut body, dt, &g)
            .with_context(|| format!("{name}: step {k}"))?;
        let el = t0.elapsed().as_secs_f64();
        if let Some(why) = body.check_state() {
            bail!("{name}: step {k}: {why}");
        }
        times.push(el);
        run.newton += s.newton_iterations;
        run.pcg += s.solver_iterations;
        run.corner
            .push(scene.local(&body.x[corner], &body.mesh.positions[corner], t1));
    }
    finish(&mut run, &mut times);
    Ok(run)
}

fn finish(run: &mut Run, times: &mut [f64]) {
    run.wall_s = times.iter().sum();
    run.max_step_s = times.iter().copied().fold(0.0, f64::max);
    run.median_step_s = median(times);
}

fn run_hierarchical(
    name: &str,
    scene: &Scene,
    mut body: HierarchicalBody,
    steps: usize,
    dt: f64,
    corner: usize,
) -> Result<Run> {
    let g = Vector3::zeros();
    let mut run = Run {
        name: name.into(),
        tets: body.fine.elems.len(),
        wall_s: 0.0,
        newton: 0,
        pcg: 0,
        coarse_pcg: 0,
        max_step_s: 0.0,
        median_step_s: 0.0,
        corner: Vec::with_capacity(steps),
        walls: Vec::new(),
    };
    let mut times = Vec::with_capacity(steps);
    let mut unconverged = 0;
    for k in 0..steps {
        let t0 = Instant::now();
        let s = body
            .step(dt, &g)
            .with_context(|| format!("{name}: step {k}"))?;
        times.push(t0.elapsed().as_secs_f64());
        unconverged += usize::from(!s.fine_converged);
        run.newton += s.coarse.newton_iterations;
        run.coarse_pcg += s.coarse.solver_iterations;
        run.pcg += s.fine_iterations;
        let t1 = body.time();
        run.corner
            .push(scene.local(&body.fine.x[corner], &body.fine.mesh.positions[corner], t1));
    }
    if unconverged > 0 {
        eprintln!("{name}: the fine PCG missed its tolerance in {unconverged} steps");
    }
    finish(&mut run, &mut times);
    Ok(run)
}

pub fn hauth_hierarchy(args: HauthHierarchyArgs) -> Result<()> {
    if !(args.dt > 0.0
        && args.duration >= args.dt
        && args.update > 0.0
        && args.ramp > 0.0
        && args.turn_period >= 0.0
        && args.turn_period.is_finite())
    {
        bail!("need dt > 0, duration ≥ dt, update > 0, ramp > 0 and a finite turn period ≥ 0");
    }
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out/hauth_hierarchy"));
    std::fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;
    let scene = Scene {
        traction: args.traction,
        ramp: args.ramp,
        turn_period: args.turn_period,
        duration: args.duration,
    };
    let steps = (args.duration / args.dt).round() as usize;
    let update_every = ((args.update / args.dt).round() as u32).max(1);
    let coarse = coarse_mesh();
    let hierarchy = Hierarchy::new(coarse.clone(), 2)?;
    let fine = hierarchy.finest().clone();
    let corner = (0..coarse.n_vertices())
        .min_by(|&a, &b| {
            let d = |i: usize| (coarse.positions[i] - Vector3::from(SIZE)).norm();
            d(a).total_cmp(&d(b))
        })
        .context("empty mesh")?;
    let pcg = PcgSettings {
        tolerance: args.pcg_tolerance,
        preconditioner: args.preconditioner.into(),
        ..PcgSettings::default()
    };
    let newton_pcg = NewtonSettings {
        tolerance: args.newton_tolerance,
        solver: LinearSolverKind::Pcg(pcg),
        ..NewtonSettings::default()
    };
    let newton_chol = NewtonSettings {
        solver: LinearSolverKind::Cholesky {
            ordering: OrderingKind::Amd,
        },
        ..newton_pcg
    };
    eprintln!(
        "bar: {} → {} tets, {} → {} vertices; {steps} steps of {} s, frames every {update_every} steps",
        coarse.n_tets(),
        fine.n_tets(),
        coarse.n_vertices(),
        fine.n_vertices(),
        args.dt
    );

    let setup = Setup {
        scene: &scene,
        coarse: &coarse,
        fine: &fine,
        corner,
        steps,
        update_every,
        pcg,
        newton_pcg,
        newton_chol,
    };
    // Each repeat runs every configuration once, in turn; the table gives the median wall time
    // per configuration (the machine is shared: one run alone swings by ±20 %).
    let mut runs = all_runs(&args, &setup)?;
    let mut walls: Vec<Vec<f64>> = runs.iter().map(|r| vec![r.wall_s]).collect();
    for _ in 1..args.repeats.max(1) {
        for (w, r) in walls.iter_mut().zip(all_runs(&args, &setup)?) {
            w.push(r.wall_s);
        }
    }
    for (r, w) in runs.iter_mut().zip(&mut walls) {
        r.wall_s = median(w);
        r.walls = w.clone();
    }
    report(&args, &out, &runs, steps, update_every)
}

/// What every run shares.
struct Setup<'a> {
    scene: &'a Scene,
    coarse: &'a TetMesh,
    fine: &'a TetMesh,
    corner: usize,
    steps: usize,
    update_every: u32,
    pcg: PcgSettings,
    newton_pcg: NewtonSettings,
    newton_chol: NewtonSettings,
}

/// Every configuration once, in the table's order.
fn all_runs(args: &HauthHierarchyArgs, setup: &Setup) -> Result<Vec<Run>> {
    let mut runs = Vec::new();
    let mut references = vec![("StVK fine, Newton + PCG (reference)", setup.newton_pcg)];
    if !args.no_cholesky_reference {
        references.push(("StVK fine, Newton + Cholesky", setup.newton_chol));
    }
    for (name, newton) in references {
        let body = Body::new(setup.scene.body(setup.fine.clone(), ModelKind::Stvk)?)?;
        let integ = Box::new(BackwardEuler::new(&body, newton)?);
        runs.push(run_plain(
            name,
            setup.scene,
            body,
            integ,
            setup.steps,
            args.dt,
            setup.corner,
        )?);
        eprintln!("{name}: {:.2} s", runs.last().map_or(0.0, |r| r.wall_s));
    }
    let corot = ModelKind::Corotational(CorotationalSettings {
        tangent: CorotationalTangent::Rotated,
        update_every: setup.update_every,
        ..CorotationalSettings::default()
    });
    let body = Body::new(setup.scene.body(setup.fine.clone(), corot)?)?;
    let integ = Box::new(LinearizedBackwardEuler::new(
        &body,
        LinearSolverKind::Pcg(setup.pcg),
        WarmStart::Extrapolate,
    )?);
    let name = "corotational fine (per-element frames)";
    runs.push(run_plain(
        name,
        setup.scene,
        body,
        integ,
        setup.steps,
        args.dt,
        setup.corner,
    )?);
    eprintln!("{name}: {:.2} s", runs.last().map_or(0.0, |r| r.wall_s));
    for (name, reading) in [
        ("hierarchical (a): detail", Reading::Detail),
        ("hierarchical (b): full", Reading::Full),
    ] {
        let settings = HierarchySettings {
            levels: 2,
            reading,
            update_every: setup.update_every,
            scheme: Scheme::BackwardEuler,
            newton: setup.newton_chol,
            pcg: setup.pcg,
            coarse_correction: !args.no_coarse_correction,
        };
        let body = HierarchicalBody::new(
            setup.scene.body(setup.coarse.clone(), ModelKind::Stvk)?,
            settings,
        )?;
        runs.push(run_hierarchical(
            name,
            setup.scene,
            body,
            setup.steps,
            args.dt,
            setup.corner,
        )?);
        eprintln!("{name}: {:.2} s", runs.last().map_or(0.0, |r| r.wall_s));
    }
    let body = Body::new(setup.scene.body(setup.coarse.clone(), ModelKind::Stvk)?)?;
    let integ = Box::new(BackwardEuler::new(&body, setup.newton_chol)?);
    let name = "StVK coarse only";
    runs.push(run_plain(
        name,
        setup.scene,
        body,
        integ,
        setup.steps,
        args.dt,
        setup.corner,
    )?);

    Ok(runs)
}

fn report(
    args: &HauthHierarchyArgs,
    out: &std::path::Path,
    runs: &[Run],
    steps: usize,
    update_every: u32,
) -> Result<()> {
    let reference = &runs[0];
    let fastest_ref = runs
        .iter()
        .filter(|r| r.name.starts_with("StVK fine"))
        .map(|r| r.wall_s)
        .fold(f64::INFINITY, f64::min);
    let max_ref = reference
        .corner
        .iter()
        .map(|d| d.norm())
        .fold(0.0, f64::max);
    let end_ref = reference.corner.last().copied().unwrap_or_default();
    let mut table = format!(
        "Example 3 bar, {} → {} tets, {steps} steps of {} s ({} s), frames every {update_every} steps, \
         traction {} N/m² (ramp {} s), base turns once per {} s, PCG tolerance {:e}, Newton tolerance {:e}. Reference: {}. \
         Corner |d_ref| at the end {:.4} m, max {:.4} m.\n\n\
         | run | tets | wall (s), median | speed-up vs fastest StVK | Newton its | fine PCG its | coarse PCG its | max / median step (ms) | corner error at end | max-over-time corner error | wall of each repeat (s) |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
        runs.last().map_or(0, |r| r.tets),
        reference.tets,
        args.dt,
        steps as f64 * args.dt,
        args.traction,
        args.ramp,
        args.turn_period,
        args.pcg_tolerance,
        args.newton_tolerance,
        reference.name,
        end_ref.norm(),
        max_ref,
    );
    let mut csv = String::from(
        "run,tets,wall_s,speedup,newton_iterations,pcg_iterations,coarse_pcg_iterations,max_step_s,median_step_s,corner_error_end,corner_error_max\n",
    );
    for r in runs {
        let end = r.corner.last().copied().unwrap_or_default();
        let err_end = (end - end_ref).norm() / end_ref.norm();
        let err_max = r
            .corner
            .iter()
            .zip(&reference.corner)
            .map(|(a, b)| (a - b).norm())
            .fold(0.0, f64::max)
            / max_ref;
        let speedup = fastest_ref / r.wall_s;
        let _ = writeln!(
            table,
            "| {} | {} | {:.2} | {:.1}× | {} | {} | {} | {:.1} / {:.1} | {:.1} % | {:.1} % | {} |",
            r.name,
            r.tets,
            r.wall_s,
            speedup,
            r.newton,
            r.pcg,
            r.coarse_pcg,
            1e3 * r.max_step_s,
            1e3 * r.median_step_s,
            100.0 * err_end,
            100.0 * err_max,
            r.walls
                .iter()
                .map(|w| format!("{w:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let _ = writeln!(
            csv,
            "\"{}\",{},{},{},{},{},{},{},{},{},{}",
            r.name,
            r.tets,
            r.wall_s,
            speedup,
            r.newton,
            r.pcg,
            r.coarse_pcg,
            r.max_step_s,
            r.median_step_s,
            err_end,
            err_max
        );
    }
    table.push_str(
        "\nPaper (Hauth & Straßer 2004 §7.3): hierarchical 11.2 s for 10 s (6693 PCG iterations), \
         full nonlinear 71.7 s, corner error 16 %.\n",
    );
    let mut series = String::from("t");
    for r in runs {
        let _ = write!(series, ",\"{0} dx\",\"{0} dy\",\"{0} dz\"", r.name);
    }
    series.push('\n');
    for k in 0..steps {
        let _ = write!(series, "{}", (k + 1) as f64 * args.dt);
        for r in runs {
            let d = r.corner[k];
            let _ = write!(series, ",{},{},{}", d.x, d.y, d.z);
        }
        series.push('\n');
    }
    std::fs::write(out.join("table.md"), &table)?;
    std::fs::write(out.join("runs.csv"), &csv)?;
    std::fs::write(out.join("corner.csv"), &series)?;
    print!("{table}");
    Ok(())
}
