//! `supple bench`: time the steps of a scene and print JSON. This is Supple's benchmark;
//! no unit test measures time.

mod direct;
mod models;
mod triad;

pub use models::BenchModel;

use anyhow::Result;
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::time::Instant;
use supple::linalg::BlockCsr;
use supple::nalgebra::Vector3;
use supple::time::WarmStart;
use supple_run::cli::PreconditionerArg;
use supple_run::record::median;

#[derive(Args)]
pub struct BenchArgs {
    /// The scene file (TOML).
    pub scene: PathBuf,
    /// Replace a scene key, as `supple run --set KEY=VALUE` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<supple_io::Override>,
    /// Timed steps.
    #[arg(long, default_value_t = 50)]
    pub steps: usize,
    /// Untimed steps first (let the bar start moving, warm caches).
    #[arg(long, default_value_t = 5)]
    pub warmup: usize,
    /// Override every body's material model (same parameters).
    #[arg(long)]
    pub model: Option<BenchModel>,
    /// Override the solver's preconditioner.
    #[arg(long)]
    pub preconditioner: Option<PreconditionerArg>,
    /// Override the solver's first guess.
    #[arg(long)]
    pub warm_start: Option<BenchWarmStart>,
    /// Override the contact broad phase (scenes with `[contact]`).
    #[arg(long)]
    pub broad_phase: Option<BenchBroadPhase>,
    #[command(flatten)]
    pub direct: direct::DirectArgs,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum BenchBroadPhase {
    Sap,
    Bvh,
    BruteForce,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum BenchWarmStart {
    Zero,
    Velocity,
    Extrapolate,
    Adaptive,
}

/// The smallest current/rest tet volume ratio a timed body may reach for the timing to
/// count (see `bench`).
const MIN_VALID_VOLUME_RATIO: f64 = 0.5;

#[derive(Serialize)]
struct Report {
    /// False when a body's smallest volume ratio during the timed steps fell below
    /// [`MIN_VALID_VOLUME_RATIO`]: the times are of a collapsing body (the run then exits
    /// with `EXIT_INVALID`).
    valid: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    invalid_reason: Option<String>,
    scene: String,
    threads: usize,
    /// The widest vector instructions this binary was compiled for: `sse2` for the default
    /// build (the x86-64 baseline, runs on any x86-64 CPU), `avx2+fma` and so on for a build
    /// with `RUSTFLAGS="-C target-cpu=..."` (README, *A build for one machine*).
    simd: &'static str,
    bodies: Vec<BodyInfo>,
    warmup_steps: usize,
    steps: usize,
    setup_ms: f64,
    wall_ms_per_step: Stat,
    /// Per-phase medians over steps, summed over bodies and over every solve of a step (the
    /// bodies are solved side by side, so with several bodies and threads the sum can exceed
    /// the wall time).
    phases_ms_median: Phases,
    solver_iterations: IterStat,
    /// One `y = K x` on each body's matrix pattern (median of 50), the bandwidth it implies,
    /// and STREAM's triad at the same footprint on the same threads.
    spmv: Vec<Spmv>,
    /// STREAM's triad beyond the last-level cache (main memory), on the same threads (median
    /// of 10).
    triad_main_memory: triad::Triad,
    /// The contact phase (scenes with contact): medians over the timed steps.
    #[serde(skip_serializing_if = "Option::is_none")]
    contact: Option<ContactBench>,
    /// The coupled IPC step, when the contact response is IPC.
    #[serde(skip_serializing_if = "Option::is_none")]
    ipc: Option<crate::bench_ipc::IpcBench>,
    /// Embedded surfaces (bodies with `surface`): one placement per timed step, timed apart
    /// from the step.
    #[serde(skip_serializing_if = "Option::is_none")]
    surface: Option<supple_run::skin::SurfaceBench>,
    /// Process CPU time (user + system, all threads) per timed step: the process CPU clock
    /// over the timed steps, less the inversion check, over their number.
    #[serde(skip_serializing_if = "Option::is_none")]
    cpu_ms_per_step_mean: Option<f64>,
    /// What `preconditioner = "auto"` chose for each body and why (bodies whose solves ran
    /// PCG with `auto`).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    preconditioner: std::collections::BTreeMap<String, supple_run::PreconditionerSummary>,
    /// The multigrid preconditioner (`--preconditioner amg` or a scene's): hierarchy builds
    /// during the timed steps, and one standalone build on the first body's system matrix.
    #[serde(skip_serializing_if = "Option::is_none")]
    amg: Option<AmgBench>,
}

#[derive(Serialize)]
struct AmgBench {
    /// Hierarchy builds during the warm-up and timed steps, summed over bodies.
    builds_warmup: f64,
    builds_timed: f64,
    /// One build on `M + dt² K` of the first body at its current state (median of 3).
    setup_ms_median: f64,
    /// `(rows, nonzeros)` per level, finest first.
    levels: Vec<(usize, usize)>,
    operator_complexity: f64,
    memory_mb: f64,
}

/// User + system CPU time of this process (all threads) in ms, from the POSIX process CPU
/// clock (ns on Linux; `/proc/self/stat`'s 10 ms ticks made every 450-tet workload read
/// 0.0983 ms per step), None where the clock is missing.
#[cfg(unix)]
fn process_cpu_ms() -> Option<f64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the call only writes it.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    (rc == 0).then_some(ts.tv_sec as f64 * 1e3 + ts.tv_nsec as f64 * 1e-6)
}

#[cfg(not(unix))]
fn process_cpu_ms() -> Option<f64> {
    None
}

fn amg_builds(world: &supple::world::World) -> f64 {
    world
        .integrator_counters()
        .iter()
        .flat_map(|(_, c)| c.iter())
        .filter(|(k, _)| k == "amg_builds")
        .map(|(_, v)| v)
        .sum()
}

/// One standalone multigrid build on the first body's `M + dt² K`, timed.
fn amg_setup(world: &supple::world::World, dt: f64) -> Option<(f64, supple::linalg::AmgInfo)> {
    let b = world.bodies.first()?;
    let mut a = BlockCsr::zeros(b.elems.pattern.clone());
    b.model.add_tangent(&b.elems, &b.x, dt * dt, &mut a);
    b.mass.add_to(&mut a, 1.0);
    let mut amg = supple::linalg::Amg::new(
        supple::linalg::AmgSettings::default(),
        &a.pattern,
        Some(&b.mesh.positions),
    );
    let times: Vec<f64> = (0..3)
        .map(|_| {
            let t = Instant::now();
            amg.build(&a, &b.fixed);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    Some((median(&times), amg.info()))
}

#[derive(Serialize)]
struct ContactBench {
    broad_phase: String,
    /// Surface vertices + edges + triangles in the broad phase.
    surface_primitives: usize,
    ms_median: ContactPhases,
    /// Median of (contact time / step time).
    fraction_of_step_median: f64,
    broad_pairs_median: f64,
    pairs_tested_median: f64,
    contacts_median: f64,
}

#[derive(Serialize)]
struct ContactPhases {
    broad: f64,
    narrow: f64,
    response: f64,
    total: f64,
    /// The surface hold's second solves (holds, solves, momentum restore), a part of the
    /// step outside `total` (its solves are also in `phases_ms_median`).
    second_solves: f64,
}

#[derive(Serialize)]
struct BodyInfo {
    name: String,
    model: String,
    vertices: usize,
    tets: usize,
    matrix_blocks: usize,
    /// The smallest current/rest tet volume ratio after any timed step: negative when a tet
    /// was inverted, i.e. the times include steps of a collapsed or inside-out body (checked
    /// after each step, outside its timing and the CPU time; null without timed steps).
    min_volume_ratio_timed: f64,
    /// Tets inverted after the last timed step.
    inverted_tets_end: usize,
}

#[derive(Serialize)]
struct Stat {
    median: f64,
    min: f64,
    mean: f64,
}

#[derive(Serialize)]
struct Phases {
    forces: f64,
    assembly: f64,
    solve: f64,
}

#[derive(Serialize)]
struct IterStat {
    mean: f64,
    max: usize,
    /// Linear solves per body and step (mean): more than 1 when contact holds take a step
    /// again.
    solves_mean: f64,
}

#[derive(Serialize)]
struct Spmv {
    body: String,
    ms_median: f64,
    bytes: usize,
    gb_per_s: f64,
    /// STREAM's triad over the same number of bytes (median of 50), with the SpMV's threads.
    triad_gb_per_s: f64,
    /// `gb_per_s / triad_gb_per_s`.
    of_triad: f64,
}

/// Returns the exit status: 0, or `EXIT_INVALID` for a timing of a collapsing body.
pub fn bench(args: BenchArgs) -> Result<i32> {
    let mut scene = supple_run::load(&args.scene, None, &args.set)?;
    if scene.adaptive.is_some() {
        return crate::bench_adaptive::bench(&args, &scene).map(|()| 0);
    }
    if let Some(m) = args.model {
        for b in &mut scene.bodies {
            b.model = m.kind();
        }
    }
    if let Some(pc) = args.preconditioner {
        let solver = match &mut scene.integrator {
            supple::time::IntegratorKind::BackwardEulerLinearized { solver, .. } => solver,
            supple::time::IntegratorKind::BackwardEuler { newton }
            | supple::time::IntegratorKind::Bdf { newton, .. }
            | supple::time::IntegratorKind::Static { newton, .. } => &mut newton.solver,
            _ => anyhow::bail!(
                "--preconditioner: the scene's integrator solves no linear system with PCG"
            ),
        };
        if let supple::time::LinearSolverKind::Pcg(pcg) = solver {
            pcg.preconditioner = pc.into();
        }
    }
    if let Some(ws) = args.warm_start {
        let supple::time::IntegratorKind::BackwardEulerLinearized { warm_start, .. } =
            &mut scene.integrator
        else {
            anyhow::bail!(
                "--warm-start: only the backward_euler_linearized integrator has a warm start"
            );
        };
        *warm_start = match ws {
            BenchWarmStart::Zero => WarmStart::Zero,
            BenchWarmStart::Velocity => WarmStart::Velocity,
            BenchWarmStart::Extrapolate => WarmStart::Extrapolate,
            BenchWarmStart::Adaptive => WarmStart::Adaptive,
        };
    }
    if let Some(bp) = args.broad_phase {
        let Some(c) = &mut scene.contact else {
            anyhow::bail!("--broad-phase: the scene has no [contact]");
        };
        c.broad_phase = match bp {
            BenchBroadPhase::Sap => supple::contact::BroadPhaseKind::SweepAndPrune,
            BenchBroadPhase::Bvh => supple::contact::BroadPhaseKind::Bvh,
            BenchBroadPhase::BruteForce => supple::contact::BroadPhaseKind::BruteForce,
        };
    }
    let t = Instant::now();
    let mut world = scene.build_world()?;
    let setup_ms = t.elapsed().as_secs_f64() * 1e3;
    if args.direct.direct_vs_pcg {
        let Some(body) = world.bodies.first() else {
            anyhow::bail!("the scene has no body");
        };
        let report = direct::direct_vs_pcg(&args.direct, &scene.name, scene.dt, body)?;
        let json = serde_json::to_string_pretty(&report)?;
        writeln!(std::io::stdout().lock(), "{json}")?;
        return Ok(0);
    }
    let mut skins = supple_run::skin::Skins::new(&scene, None, std::path::Path::new(""))?;
    skins.time_binding(&scene)?;
    for _ in 0..args.warmup {
        world.step()?;
    }
    let builds_warmup = amg_builds(&world);
    let cpu_start = process_cpu_ms();
    let (mut wall, mut forces, mut assembly, mut solve) = (vec![], vec![], vec![], vec![]);
    let mut iterations = Vec::new();
    let mut solves = Vec::new();
    let mut contact: [Vec<f64>; 9] = Default::default();
    let mut ipc = crate::bench_ipc::IpcSamples::with_capacity(args.steps);
    let mut min_ratio = vec![f64::INFINITY; world.bodies.len()];
    // The inversion check's own time, taken out of the CPU time (it runs on one thread).
    let mut check_ms = 0.0;
    for _ in 0..args.steps {
        let t = Instant::now();
        world.step()?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        wall.push(ms);
        let t = Instant::now();
        for (m, b) in min_ratio.iter_mut().zip(&world.bodies) {
            *m = m.min(b.min_volume_ratio());
        }
        check_ms += t.elapsed().as_secs_f64() * 1e3;
        if !skins.is_empty() {
            skins.update(|i| &world.bodies[i].x)?;
        }
        if let Some(c) = world.contact_stats() {
            let total = (c.broad_s + c.narrow_s + c.response_s) * 1e3;
            for (v, x) in contact.iter_mut().zip([
                c.broad_s * 1e3,
                c.narrow_s * 1e3,
                c.response_s * 1e3,
                total,
                total / ms,
                c.broad_pairs as f64,
                c.pairs_tested as f64,
                c.contacts as f64,
                c.resolve_s * 1e3,
            ]) {
                v.push(x);
            }
        }
        if let Some(step) = world.ipc() {
            ipc.push(step.last);
        }
        let s = world.last_stats();
        forces.push(s.iter().map(|s| s.forces_s).sum::<f64>() * 1e3);
        assembly.push(s.iter().map(|s| s.assembly_s).sum::<f64>() * 1e3);
        solve.push(s.iter().map(|s| s.solve_s).sum::<f64>() * 1e3);
        iterations.extend(s.iter().map(|s| s.solver_iterations));
        solves.extend(s.iter().map(|s| s.substeps));
    }
    let cpu_ms_per_step_mean = process_cpu_ms()
        .zip(cpu_start)
        .map(|(end, start)| (end - start - check_ms).max(0.0) / args.steps.max(1) as f64);
    for (b, &m) in world
        .bodies
        .iter()
        .zip(&min_ratio)
        .filter(|(_, &m)| m <= 0.0)
    {
        eprintln!(
            "bench: body `{}` had inverted tets during the timed steps (smallest volume ratio \
             {m:.3e}): these times include steps of a collapsed body",
            b.name
        );
    }
    // A timing of a collapsing body is no benchmark (issue 43: the soft bars crushed their
    // clamped end within the bench window): below half its rest volume anywhere, the run is
    // marked invalid in the JSON, said so here, and exits with `EXIT_INVALID`.
    let collapsed: Vec<String> = world
        .bodies
        .iter()
        .zip(&min_ratio)
        .filter(|(_, &m)| m < MIN_VALID_VOLUME_RATIO)
        .map(|(b, m)| format!("body `{}` smallest volume ratio {m:.3e}", b.name))
        .collect();
    let invalid = (!collapsed.is_empty()).then(|| {
        format!(
            "{} during the timed steps (below {MIN_VALID_VOLUME_RATIO}): the times are of a collapsing body",
            collapsed.join(", ")
        )
    });
    if let Some(why) = &invalid {
        eprintln!("bench: INVALID timing: {why}");
    }
    let builds_timed = amg_builds(&world) - builds_warmup;
    // The multigrid block when the first body's solves ran it (`amg_setup` builds on that
    // body): `amg` itself, or `auto` having tried it.
    let choices = world.preconditioner_choices();
    let first = world.bodies.first().map(|b| b.name.as_str());
    let auto_tried_amg = choices.iter().any(|(b, c)| {
        Some(*b) == first
            && c.candidates
                .iter()
                .any(|k| k.preconditioner == supple::linalg::Preconditioner::Amg && !k.skipped)
    });
    let uses_amg = auto_tried_amg || (amg_builds(&world) > 0.0);
    let amg = if uses_amg {
        amg_setup(&world, scene.dt).map(|(ms, info)| AmgBench {
            builds_warmup,
            builds_timed,
            setup_ms_median: ms,
            levels: info.levels.clone(),
            operator_complexity: info.operator_complexity,
            memory_mb: info.memory_bytes as f64 / 1e6,
        })
    } else {
        None
    };
    let spmv = world
        .bodies
        .iter()
        .map(|b| {
            let mut k = BlockCsr::zeros(b.elems.pattern.clone());
            b.model.add_tangent(&b.elems, &b.x, 1.0, &mut k);
            let x = vec![Vector3::new(1.0, 0.5, 0.25); b.n_vertices()];
            let mut y = vec![Vector3::zeros(); b.n_vertices()];
            let times: Vec<f64> = (0..50)
                .map(|_| {
                    let t = Instant::now();
                    k.mul_vec(&x, &mut y);
                    t.elapsed().as_secs_f64() * 1e3
                })
                .collect();
            let ms = median(&times);
            // Blocks (72 B) + column indices (4 B) + row pointers + x read + y written.
            let bytes = k.values.len() * 76 + (b.n_vertices() + 1) * 4 + 2 * b.n_vertices() * 24;
            let gb_per_s = bytes as f64 / (ms * 1e-3) / 1e9;
            // Threads as `mul_vec` uses them: one below `PAR_MIN` rows.
            let parallel = b.n_vertices() >= supple::linalg::par::PAR_MIN;
            let triad = triad::triad(bytes, 50, parallel);
            Spmv {
                body: b.name.clone(),
                ms_median: ms,
                bytes,
                gb_per_s,
                triad_gb_per_s: triad.gb_per_s,
                of_triad: gb_per_s / triad.gb_per_s,
            }
        })
        .collect();
    let triad_main_memory = triad::triad(
        triad::MAIN_MEMORY_BYTES,
        10,
        rayon::current_num_threads() > 1,
    );
    let report = Report {
        valid: invalid.is_none(),
        invalid_reason: invalid,
        scene: scene.name.clone(),
        threads: rayon::current_num_threads(),
        simd: compiled_simd(),
        bodies: world
            .bodies
            .iter()
            .zip(&min_ratio)
            .map(|(b, &m)| BodyInfo {
                name: b.name.clone(),
                model: b.model.name().into(),
                vertices: b.n_vertices(),
                tets: b.elems.len(),
                matrix_blocks: b.elems.pattern.n_blocks(),
                min_volume_ratio_timed: m,
                inverted_tets_end: b.volume_ratios().iter().filter(|&&r| r <= 0.0).count(),
            })
            .collect(),
        warmup_steps: args.warmup,
        steps: args.steps,
        setup_ms,
        wall_ms_per_step: Stat {
            median: median(&wall),
            min: wall.iter().copied().reduce(f64::min).unwrap_or(0.0),
            mean: wall.iter().sum::<f64>() / wall.len().max(1) as f64,
        },
        phases_ms_median: Phases {
            forces: median(&forces),
            assembly: median(&assembly),
            solve: median(&solve),
        },
        solver_iterations: IterStat {
            mean: iterations.iter().sum::<usize>() as f64 / iterations.len().max(1) as f64,
            max: iterations.iter().copied().max().unwrap_or(0),
            solves_mean: solves.iter().sum::<usize>() as f64 / solves.len().max(1) as f64,
        },
        spmv,
        triad_main_memory,
        contact: world.contact().map(|c| ContactBench {
            broad_phase: format!("{:?}", c.settings().broad_phase),
            surface_primitives: c
                .surfaces()
                .iter()
                .map(|s| s.vertices.len() + s.edges.len() + s.triangles.len())
                .sum(),
            ms_median: ContactPhases {
                broad: median(&contact[0]),
                narrow: median(&contact[1]),
                response: median(&contact[2]),
                total: median(&contact[3]),
                second_solves: median(&contact[8]),
            },
            fraction_of_step_median: median(&contact[4]),
            broad_pairs_median: median(&contact[5]),
            pairs_tested_median: median(&contact[6]),
            contacts_median: median(&contact[7]),
        }),
        ipc: ipc.report(),
        surface: skins.bench(median(&wall)),
        cpu_ms_per_step_mean,
        preconditioner: (choices.iter())
            .map(|(b, c)| (b.to_string(), c.into()))
            .collect(),
        amg,
    };
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    Ok(if report.valid { 0 } else { crate::EXIT_INVALID })
}

/// The widest vector instruction set the binary was compiled for (see [`Report::simd`]).
fn compiled_simd() -> &'static str {
    if cfg!(target_feature = "avx512f") {
        "avx512f"
    } else if cfg!(all(target_feature = "avx2", target_feature = "fma")) {
        "avx2+fma"
    } else if cfg!(target_feature = "avx2") {
        "avx2"
    } else if cfg!(target_feature = "avx") {
        "avx"
    } else if cfg!(target_feature = "sse4.2") {
        "sse4.2"
    } else if cfg!(target_feature = "sse2") {
        "sse2"
    } else if cfg!(target_feature = "simd128") {
        "wasm simd128"
    } else {
        "none"
    }
}

#[cfg(test)]
mod tests {
    use super::process_cpu_ms;
    use std::time::{Duration, Instant};

    /// Issue 45 item 10: over 20 ms of spinning, readings advance in many steps below 1 ms
    /// (`/proc/self/stat`'s 10 ms ticks would give at most 3 jumps).
    #[test]
    fn the_cpu_clock_resolves_below_a_millisecond() {
        let start = Instant::now();
        let mut last = process_cpu_ms().expect("a process CPU clock");
        let (mut changes, mut smallest) = (0usize, f64::INFINITY);
        while start.elapsed() < Duration::from_millis(20) {
            let now = process_cpu_ms().unwrap();
            assert!(now >= last, "the clock went back: {last} -> {now}");
            if now > last {
                changes += 1;
                smallest = smallest.min(now - last);
            }
            last = now;
        }
        assert!(changes > 10, "{changes} changes in 20 ms");
        assert!(smallest < 1.0, "smallest step {smallest} ms");
    }
}
