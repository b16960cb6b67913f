//! `supple experiment stress`: issue 12, "survive impacts and crushing". A fixed matrix of
//! models × cases × time steps, run with the scene's integrator (linearized backward Euler,
//! PCG) and the world's step control; every run is recorded in `runs.csv` and summarized in
//! `table.md` (one table per case, then the issue's targets, PASS or FAIL from the runs).
//!
//! Cases (durations are the full matrix; `--quick` shortens them, see [`cases`]):
//! 1. `tube_1g`: exactly `scenes/tube_drop.toml` (the 1k-tet tube dropped on the ground), 1.5 s;
//! 2. `tube_10g`: the same with gravity × 10;
//! 3. `throw_10`: a 0.2 m box of 6×6×6 cells × 5 tets (1080 tets; E = 1 MPa, ν = 0.33,
//!    ρ = 1000 kg/m³) starting 0.05 m above a ground plane (friction 0.3) at (1, −10, 0) m/s,
//!    gravity 9.81 m/s², 0.5 s;
//! 4. `throw_30`: the same at (1, −30, 0) m/s;
//! 5. `crush`: the same box resting on the ground, crushed to 10 % of its height by a rigid
//!    box (0.4 × 0.1 × 0.4 m) whose bottom goes from the body's top to 0.02 m above the ground
//!    at constant speed over 0.5 s and then holds, 0.7 s;
//! 6. `bar_200g`: `scenes/bar.toml` (the clamped 450-tet bar) with gravity × 200, 1.0 s.
//!
//! Only the body's model, the gravity, the step and the duration are replaced; everything
//! else (material, solver, contact, step control) is the scene's.

mod report;

use anyhow::{Context, Result};
use clap::Args;
use std::path::{Path, PathBuf};
use std::time::Instant;
use supple::contact::{ipc::IpcSettings, Response};
use supple::fem::material::{
    CorotationalSettings, CorotationalTangent, ModelKind, RotationField, RotationMethod,
};
use supple::world::World;

#[derive(Args)]
pub struct StressArgs {
    /// Output folder (default: out/stress).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Folder holding tube_drop.toml and bar.toml.
    #[arg(long, default_value = "scenes")]
    pub scenes: PathBuf,
    /// Reduced matrix: dt = 10 ms only, cases tube_1g, throw_10 and bar_200g, short runs.
    #[arg(long)]
    pub quick: bool,
    /// Print no progress lines and no table.
    #[arg(long, short)]
    pub quiet: bool,
    /// Contact response of every case with contact: `auto` (the scenes' own: the coupled
    /// IPC step with backward Euler), `ipc` or `projection` (the response the matrix was
    /// first measured with, before IPC became the default).
    #[arg(long, value_enum, default_value_t = ResponseArg::Auto)]
    pub response: ResponseArg,
    /// Run only these cases (comma-separated names: tube_1g, tube_10g, throw_10, throw_30,
    /// crush, bar_200g; default: all of the matrix, or of `--quick`'s).
    #[arg(long, value_delimiter = ',')]
    pub cases: Vec<String>,
}

/// The contact response a stress run forces (see [`StressArgs::response`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ResponseArg {
    Auto,
    Ipc,
    Projection,
}

impl ResponseArg {
    /// The response set on every case scene that has contact (`None`: keep the scene's).
    fn response(self) -> Option<Response> {
        match self {
            Self::Auto => None,
            Self::Ipc => Some(Response::Ipc(IpcSettings::default())),
            Self::Projection => Some(Response::Projection),
        }
    }
}

/// The models of the matrix, by the name the tables use.
pub(crate) fn models() -> Vec<(&'static str, ModelKind)> {
    vec![
        (
            // The scene loader's defaults for `model = "warped"`.
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
        (
            "corotational_invertible",
            ModelKind::Corotational(CorotationalSettings {
                tangent: CorotationalTangent::Exact,
                rotation: RotationMethod::SvdInvertible,
                update_every: 1,
            }),
        ),
        ("stvk", ModelKind::Stvk),
        ("hybrid", ModelKind::Hybrid),
        ("liesenfeld_stolfi", ModelKind::LiesenfeldStolfi),
        ("fixed_corotated", ModelKind::FixedCorotated),
    ]
}

/// One case of the matrix: a scene (model and step replaced per run).
pub(crate) struct Case {
    pub name: &'static str,
    pub title: String,
    pub scene: supple_io::Scene,
    /// An obstacle does work on the body (the crush): the energy target does not apply.
    pub driven: bool,
}

/// The 0.2 m box of the throw and crush cases, as scene text. `y0` is the height of its
/// bottom, `velocity` its initial velocity; `obstacles` are extra `[[obstacle]]` tables.
fn box_scene(name: &str, duration: f64, y0: f64, velocity: [f64; 3], obstacles: &str) -> String {
    format!(
        r#"name = "{name}"
dt = 0.01
duration = {duration}
gravity = [0.0, -9.81, 0.0]

[integrator]
kind = "backward_euler_linearized"

[solver]
kind = "pcg"
tolerance = 1e-6
max_iterations = 1000
preconditioner = "block_jacobi"

[[body]]
name = "box"
mesh = {{ kind = "box", cells = [6, 6, 6], cell_size = {cell:?}, origin = [-0.1, {y0:?}, -0.1], split = 5 }}
material = {{ model = "corotational", youngs = 1e6, poisson = 0.33, density = 1000.0 }}
velocity = [{vx:?}, {vy:?}, {vz:?}]

[[obstacle]]
name = "ground"
shape = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 1.0, 0.0]
friction = 0.3
{obstacles}"#,
        cell = BOX_EDGE / 6.0,
        vx = velocity[0],
        vy = velocity[1],
        vz = velocity[2],
    )
}

/// Edge of the thrown and crushed box (m).
const BOX_EDGE: f64 = 0.2;

fn parse(text: &str, name: &str) -> Result<supple_io::Scene> {
    supple_io::parse_scene(text, Path::new(&format!("<stress {name}>")))
        .with_context(|| format!("the {name} scene"))
}

/// The cases of the matrix (`quick`: three of them, shortened).
pub(crate) fn cases(scenes: &Path, quick: bool) -> Result<Vec<Case>> {
    let tube = supple_run::load(&scenes.join("tube_drop.toml"), None, &[])?;
    let bar = supple_run::load(&scenes.join("bar.toml"), None, &[])?;
    let with = |mut s: supple_io::Scene, gravity_factor: f64, duration: f64| {
        s.gravity *= gravity_factor;
        s.duration = duration;
        s
    };
    let (tube_t, throw_t, bar_t) = if quick {
        (0.4, 0.1, 0.2)
    } else {
        (1.5, 0.5, 1.0)
    };
    let crush_t = 0.7;
    let throw = |speed: f64| -> Result<supple_io::Scene> {
        let name = format!("throw_{speed}");
        parse(
            &box_scene(&name, throw_t, 0.05, [1.0, -speed, 0.0], ""),
            &name,
        )
    };
    // The plate's bottom goes from the box's top to 10 % of its height over 0.5 s, then holds.
    let half = [0.2, 0.05, 0.2];
    let plate = format!(
        r#"
[[obstacle]]
name = "plate"
shape = "box"
half_extents = [{:?}, {:?}, {:?}]
friction = 0.3
keyframe = [
  {{ t = 0.0, position = [0.0, {:?}, 0.0] }},
  {{ t = 0.5, position = [0.0, {:?}, 0.0] }},
]
"#,
        half[0],
        half[1],
        half[2],
        BOX_EDGE + half[1],
        0.1 * BOX_EDGE + half[1],
    );
    let crush = parse(&box_scene("crush", crush_t, 0.0, [0.0; 3], &plate), "crush")?;
    let mut all = vec![
        Case {
            name: "tube_1g",
            title: "tube drop (scenes/tube_drop.toml), 1 g".into(),
            scene: with(tube.clone(), 1.0, tube_t),
            driven: false,
        },
        Case {
            name: "tube_10g",
            title: "tube drop (scenes/tube_drop.toml), 10 g".into(),
            scene: with(tube, 10.0, tube_t),
            driven: false,
        },
        Case {
            name: "throw_10",
            title: "1080-tet box (0.2 m, E = 1 MPa) thrown at the ground at 10 m/s (+1 m/s sideways)".into(),
            scene: throw(10.0)?,
            driven: false,
        },
        Case {
            name: "throw_30",
            title: "1080-tet box (0.2 m, E = 1 MPa) thrown at the ground at 30 m/s (+1 m/s sideways)".into(),
            scene: throw(30.0)?,
            driven: false,
        },
        Case {
            name: "crush",
            title: "1080-tet box crushed to 10 % of its height by a descending rigid plate (0.5 s), then held".into(),
            scene: crush,
            driven: true,
        },
        Case {
            name: "bar_200g",
            title: "clamped bar (scenes/bar.toml) at 200 g".into(),
            scene: with(bar, 200.0, bar_t),
            driven: false,
        },
    ];
    for c in &mut all {
        c.title = format!("{} — {:.2} s", c.title, c.scene.duration);
    }
    if quick {
        all.retain(|c| matches!(c.name, "tube_1g" | "throw_10" | "bar_200g"));
    }
    Ok(all)
}

/// One run of the matrix.
#[derive(Debug, Clone)]
pub(crate) struct Row {
    pub case: &'static str,
    /// The case is driven by an obstacle (see [`Case::driven`]).
    pub driven: bool,
    pub model: &'static str,
    pub dt_ms: f64,
    pub steps_planned: usize,
    /// Steps that the world accepted.
    pub steps: usize,
    /// Diverged, or failed the world's verdict (too many unconverged steps).
    pub failed: bool,
    pub diverged: bool,
    /// Why the run failed (empty when it did not).
    pub reason: String,
    /// The step that diverged (1-based) and the time it would have ended at, if one did.
    pub diverged_step: Option<usize>,
    pub diverged_time: Option<f64>,
    pub retried_steps: usize,
    pub retries: usize,
    /// The shortest step taken (ms).
    pub dt_min_ms: f64,
    pub unconverged_steps: usize,
    /// Smallest tet current/rest volume ratio after any accepted step (and at the start).
    pub min_ratio_run: f64,
    /// Smallest ratio and number of tets with ratio ≤ 0 in the final state (the failed
    /// state where the run diverged).
    pub min_ratio_end: f64,
    pub inverted_end: usize,
    /// max over accepted steps of (E(t) − E(0)) / released; `None` when the model has no
    /// elastic energy.
    pub energy_gain: Option<f64>,
    /// The normalizer of `energy_gain` (J).
    pub released: f64,
    /// Median wall time of a step (ms).
    pub wall_ms: f64,
    /// In the final state: the lowest vertex height and the body's extent along gravity (m),
    /// which tell a crushed body from one that escaped or fell through.
    pub end_lowest: f64,
    pub end_extent: f64,
}

/// Total energy: kinetic + elastic + gravitational (relative to the rest positions), summed
/// over the bodies; `None` when a body's model has no elastic energy.
fn energy(world: &mut World) -> Option<f64> {
    let g = world.gravity;
    let mut e = 0.0;
    for b in &mut world.bodies {
        e += b.kinetic_energy() + b.potential_energy(&g) + b.elastic_energy()?;
    }
    Some(e)
}

fn potential(world: &World) -> f64 {
    let g = world.gravity;
    world.bodies.iter().map(|b| b.potential_energy(&g)).sum()
}

/// A volume ratio ≤ 0 (or NaN): an inverted or degenerate tet.
pub(crate) fn not_positive(ratio: f64) -> bool {
    ratio.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater)
}

fn min_ratio(world: &World) -> f64 {
    world
        .bodies
        .iter()
        .map(|b| b.min_volume_ratio())
        .fold(f64::INFINITY, f64::min)
}

/// Runs `case` with `model` at step `dt`.
pub(crate) fn run_one(case: &Case, name: &'static str, model: ModelKind, dt: f64) -> Result<Row> {
    let mut scene = case.scene.clone();
    scene.dt = dt;
    for b in &mut scene.bodies {
        b.model = model;
    }
    let mut world = scene
        .build_world()
        .with_context(|| format!("{} with {name}", case.name))?;
    let steps_planned = scene.steps();
    let kinetic0: f64 = world.bodies.iter().map(|b| b.kinetic_energy()).sum();
    let pot0 = potential(&world);
    let e0 = energy(&mut world);
    let mut max_gain_j: Option<f64> = e0.map(|_| 0.0);
    let mut max_pot_change: f64 = 0.0;
    let mut min_run = min_ratio(&world);
    let mut walls = Vec::with_capacity(steps_planned);
    let mut diverged = None;
    for _ in 0..steps_planned {
        let t = Instant::now();
        let result = world.step();
        walls.push(t.elapsed().as_secs_f64() * 1e3);
        if let Err(d) = result {
            diverged = Some(d);
            break;
        }
        min_run = min_run.min(min_ratio(&world));
        max_pot_change = max_pot_change.max((potential(&world) - pot0).abs());
        if let (Some(e0), Some(gain)) = (e0, max_gain_j.as_mut()) {
            // The model has an energy at the start, so it has one now.
            let e = energy(&mut world).unwrap_or(f64::NAN);
            *gain = gain.max(e - e0);
        }
    }
    let totals = *world.totals();
    let verdict = world.verdict();
    let released = (kinetic0 + max_pot_change).max(1e-12);
    let (min_end, inverted_end) = world.bodies.iter().fold((f64::INFINITY, 0), |(m, n), b| {
        let r = b.volume_ratios();
        (
            r.iter().copied().fold(m, f64::min),
            n + r.iter().filter(|v| not_positive(**v)).count(),
        )
    });
    walls.sort_by(f64::total_cmp);
    let reason = match (&diverged, &verdict) {
        (Some(d), _) => format!("body `{}`: {}", d.body, d.reason),
        (None, Some(v)) => v.clone(),
        (None, None) => String::new(),
    };
    // Heights along −g (along y when there is no gravity).
    let up = -world
        .gravity
        .try_normalize(0.0)
        .unwrap_or(-nalgebra::Vector3::y());
    let heights = world
        .bodies
        .iter()
        .flat_map(|b| b.x.iter().map(|p| p.dot(&up)));
    let (lo, hi) = heights.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), h| {
        (lo.min(h), hi.max(h))
    });
    Ok(Row {
        case: case.name,
        driven: case.driven,
        model: name,
        dt_ms: dt * 1e3,
        steps_planned,
        steps: world.steps - usize::from(diverged.is_some()),
        failed: diverged.is_some() || verdict.is_some(),
        diverged: diverged.is_some(),
        reason,
        diverged_step: diverged.as_ref().map(|d| d.step),
        diverged_time: diverged.as_ref().map(|d| d.time),
        retried_steps: totals.retried_steps,
        retries: totals.retries,
        dt_min_ms: if totals.min_dt.is_finite() {
            totals.min_dt * 1e3
        } else {
            dt * 1e3
        },
        unconverged_steps: totals.unconverged_steps,
        min_ratio_run: min_run,
        min_ratio_end: min_end,
        inverted_end,
        energy_gain: max_gain_j.map(|g| g / released),
        released,
        wall_ms: walls.get(walls.len() / 2).copied().unwrap_or(0.0),
        end_lowest: lo,
        end_extent: hi - lo,
    })
}

pub fn stress(args: StressArgs) -> Result<()> {
    let start = Instant::now();
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out/stress"));
    std::fs::create_dir_all(&out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut cases = cases(&args.scenes, args.quick)?;
    if !args.cases.is_empty() {
        if let Some(unknown) = (args.cases.iter()).find(|n| !cases.iter().any(|c| c.name == **n)) {
            let names: Vec<&str> = cases.iter().map(|c| c.name).collect();
            anyhow::bail!(
                "--cases: no case `{unknown}` in this matrix (its cases: {})",
                names.join(", ")
            );
        }
        cases.retain(|c| args.cases.iter().any(|n| n == c.name));
    }
    if let Some(response) = args.response.response() {
        for case in &mut cases {
            if let Some(c) = case.scene.contact.as_mut() {
                c.response = response;
            }
        }
    }
    let dts_ms: &[f64] = if args.quick { &[10.0] } else { &[10.0, 2.0] };
    let models = models();
    let total = cases.len() * models.len() * dts_ms.len();
    let mut rows = Vec::with_capacity(total);
    for case in &cases {
        for &(name, model) in &models {
            for &dt_ms in dts_ms {
                let t = Instant::now();
                let row = run_one(case, name, model, dt_ms * 1e-3)?;
                if !args.quiet {
                    eprintln!(
                        "[{}/{total}] {} {name} dt = {dt_ms} ms: {} ({:.1} s)",
                        rows.len() + 1,
                        case.name,
                        report::cell(&row),
                        t.elapsed().as_secs_f64()
                    );
                }
                rows.push(row);
            }
        }
    }
    let wall_s = start.elapsed().as_secs_f64();
    std::fs::write(out.join("runs.csv"), report::csv(&rows))?;
    let response = format!("{:?}", args.response).to_lowercase();
    let mut flags = String::new();
    if args.quick {
        flags.push_str(" --quick");
    }
    if !args.cases.is_empty() {
        flags.push_str(&format!(" --cases {}", args.cases.join(",")));
    }
    let table = report::table(&cases, &models, dts_ms, &rows, &flags, &response, wall_s);
    std::fs::write(out.join("table.md"), &table)?;
    if !args.quiet {
        println!("{table}");
        eprintln!("wrote {} ({wall_s:.0} s)", out.display());
    }
    Ok(())
}
