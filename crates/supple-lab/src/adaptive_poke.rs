//! `supple experiment adaptive-poke`: Debunne et al. 2000 §4–5 — the 1 m cube (bottom face
//! clamped, λ = 4e4 Pa, μ = 1e5 Pa, ρ = 1000 kg/m³) on a 3-level non-nested hierarchy
//! (125 / 729 / 4913 nodes), a sphere of radius 0.15 m pressed 0.1 m into the top face over
//! 0.5 s, held 0.5 s, withdrawn over 0.5 s, then released. The adaptive run is compared with a
//! finest-only run of the same hierarchy (same operator, steps and tool rule): node updates
//! per simulated second, the displacement of the top face under the tool, splits/merges and
//! flicker, the level of every node at the end, wall time per frame (one thread when run with
//! `--threads 1`), and the displacement field on a 6×6×6 grid of interior points at the end of
//! the hold, away from and near the tool. Undamped adaptive runs of `--undamped-seconds`, with
//! the variational and the paper ghost coupling, report the energy drift.
//!
//! **Time-averaged comparison over the press.** A snapshot compares two ringing bodies at
//! whatever phase they happen to be in, and the point under the tool is held by it in both
//! runs (it measures the press depth). So the displacement under the tool is also compared
//! over the whole press (every frame while the tool touches, t ∈ (0, 1.5] s) on the top face
//! around the tool (points within [`FOOTPRINT`] of its axis, the contact disk and the free
//! rim around it): per frame the relative L2 difference `‖u_a − u_f‖ / ‖u_f‖` over those
//! points, averaged over the frames, and the same difference of the two time-averaged fields
//! (ringing averaged out; the measure the 10 % is read on); likewise on the contact
//! disk, the rim and the interior grid. Diagnostics: the level the disk's samples are read
//! from (per frame in the CSV, shares over the hold in the table), both time-averaged fields
//! (`press_mean.csv`), and `--prescribe R` (a static fine patch instead of adaptation).
//! `--tool-refine`, `--tool-reach` and `--share-overlap` set the rules beyond the paper
//! (`AdaptiveSettings`); `--finest-cache FILE` reuses the finest-only run. `--seeds N` repeats
//! the comparison over the levels' jitter seeds (each against its own finest-only run) and
//! reports the mean and spread: single refinement histories differ by more than the rules.

mod cache;
mod measure;
mod seeds;

use anyhow::Result;
use cache::{read_finest, write_finest};
use clap::Args;
use measure::{
    field_difference, field_points, on_rim, press_frames_csv, press_mean_csv, press_report,
    top_points, Regions, FIELD_FRAME, NEAR, PRESS_END,
};
use nalgebra::Vector3;
use std::fmt::Write as _;
use std::path::PathBuf;
use supple::adaptive::generate::box_levels;
use supple::adaptive::{
    debunne_levels, AdaptiveBody, AdaptiveSettings, Budget, Coupling, Criterion, DebunneParams,
    Hierarchy, NodeState, SphereTool, ToolOrder, ToolSide, ToolTiming,
};

#[derive(Args)]
pub struct AdaptivePokeArgs {
    /// Cells per axis of each level.
    #[arg(long, value_delimiter = ',', default_values_t = [4, 8, 16])]
    pub cells: Vec<usize>,
    /// Simulated seconds of the damped runs.
    #[arg(long, default_value_t = 4.0)]
    pub seconds: f64,
    /// Damping of eq. 7 (Pa·s): φ, ψ.
    #[arg(long, default_value_t = 20.0)]
    pub phi: f64,
    #[arg(long, default_value_t = 50.0)]
    pub psi: f64,
    /// Split / merge thresholds on δ/ĥ.
    #[arg(long, default_value_t = 0.15)]
    pub split: f64,
    #[arg(long, default_value_t = 0.04)]
    pub merge: f64,
    /// `interior` or `paper` (eq. 9 as printed).
    #[arg(long, default_value = "interior")]
    pub criterion: String,
    /// Ghost coupling: `variational` (ghost forces returned to their sources) or `paper`
    /// (§3.2, ghost forces dropped). The undamped run is made with both.
    #[arg(long, default_value = "variational")]
    pub coupling: String,
    /// Node updates per frame (predictive budget; 0: none).
    #[arg(long, default_value_t = 0)]
    pub budget: u64,
    /// Tool-driven refinement (`AdaptiveSettings::tool_refine`): split where the tool reaches.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub tool_refine: bool,
    /// Tool refinement's reach in tool radii (`AdaptiveSettings::tool_reach`).
    #[arg(long, default_value_t = 2.0)]
    pub tool_reach: f64,
    /// Tool refinement's order under a budget (`AdaptiveSettings::tool_order`): `criterion`
    /// (eq. 9, depth first), `distance` (nearest dual cell first) or `graded` (smallest gap
    /// to the sphere in the node's own spacing first).
    #[arg(long, default_value = "graded")]
    pub tool_order: String,
    /// Tool contact kept while it presses (`AdaptiveSettings::tool_persistent`; also used by
    /// the finest-only run).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub tool_persistent: bool,
    /// Which tool holds need the tool outside the body at the node
    /// (`AdaptiveSettings::tool_side`; also used by the finest-only run): `outside` (every
    /// hold), `persistent` (the persistent ones) or `any` (none: the rule before).
    #[arg(long, default_value = "outside")]
    pub tool_side: String,
    /// When the tool's contact is evaluated (`AdaptiveSettings::tool_timing`; also used by the
    /// finest-only run): `frame` (once per frame, §5) or `step` (at every level step, the tool
    /// moved over the frame).
    #[arg(long, default_value = "step")]
    pub tool_timing: String,
    /// Weight each tet by its share of active nodes (`AdaptiveSettings::share_overlap`).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    pub share_overlap: bool,
    /// Diagnostic: instead of adapting, split every node within this distance (m, rest
    /// positions) of the tool's contact point (0.5, 0.5, 1) down to the finest level before
    /// the run and keep that resolution (0: adapt as usual).
    #[arg(long, default_value_t = 0.0)]
    pub prescribe: f64,
    /// Read the finest-only run from this file if it was written for the same cells, damping
    /// and seconds (else run it and write it there): saves its minutes when only the
    /// adaptive settings change.
    #[arg(long)]
    pub finest_cache: Option<PathBuf>,
    /// Seconds of the undamped adaptive run (0: skip).
    #[arg(long, default_value_t = 10.0)]
    pub undamped_seconds: f64,
    /// Jitter seed of the levels' meshes (each level takes `seed + n`).
    #[arg(long, default_value_t = 3)]
    pub seed: u64,
    /// Runs the comparison for the seeds `seed, seed + 1, …` (each against its own
    /// finest-only run, cached in `FILE.seed<S>` with `--finest-cache FILE`), each into
    /// `OUT/seed<S>/`, and writes their mean and spread to `OUT/seeds.md`.
    #[arg(long, default_value_t = 1)]
    pub seeds: u64,
    /// Output folder (default: out/adaptive_poke).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

const DT_FRAME: f64 = 0.02;
const RADIUS: f64 = 0.15;

fn tool(frame: usize) -> SphereTool {
    let t = frame as f64 * DT_FRAME;
    let depth = 0.1
        * if t < 0.5 {
            t / 0.5
        } else if t < 1.0 {
            1.0
        } else if t < 1.5 {
            (1.5 - t) / 0.5
        } else {
            -1.0
        };
    SphereTool {
        center: Vector3::new(0.5, 0.5, 1.0 + RADIUS - depth),
        radius: RADIUS,
    }
}

struct RunResult {
    updates_per_second: f64,
    press_displacement: f64,
    splits: usize,
    merges: usize,
    flicker: usize,
    all_at_level0: bool,
    wall_mean_ms: f64,
    wall_max_ms: f64,
    max_active: Vec<usize>,
    /// Over the hold (t ∈ [0.6, 1.0) s): the share of the contact disk's top-face samples read
    /// from each level.
    disk_levels: Vec<f64>,
    energy_ratio: f64,
    /// The most node updates of one frame (the budget's bound when there is one).
    max_frame_updates: u64,
    /// Displacements at [`field_points`] at the end of frame [`FIELD_FRAME`].
    field: Vec<Vector3<f64>>,
    /// Per frame of the press: displacements at [`top_points`] and [`field_points`].
    press_top: Vec<Vec<Vector3<f64>>>,
    press_field: Vec<Vec<Vector3<f64>>>,
    csv: String,
}

fn run(
    args: &AdaptivePokeArgs,
    settings: AdaptiveSettings,
    damped: bool,
    seconds: f64,
    seed: u64,
) -> Result<RunResult> {
    let meshes = box_levels(&args.cells, Vector3::zeros(), 1.0, 0.12, seed)?;
    let mut p = DebunneParams::new(4.0e4, 1.0e5);
    if damped {
        p.phi = args.phi;
        p.psi = args.psi;
    }
    let h = Hierarchy::new(meshes, 1000.0, DT_FRAME, |x| x.z < 1e-9, debunne_levels(p))?;
    let mut body = AdaptiveBody::new(h, settings)?;
    if args.prescribe > 0.0 && settings.start_level == 0 {
        let c = Vector3::new(0.5, 0.5, 1.0);
        for n in 0..args.cells.len() - 1 {
            let near: Vec<usize> = (0..body.levels[n].status.len())
                .filter(|&i| {
                    body.levels[n].status[i] == NodeState::Active
                        && (body.hierarchy.levels[n].mesh.positions[i] - c).norm() < args.prescribe
                        && !body.hierarchy.children_of(n, i).is_empty()
                })
                .collect();
            for i in near {
                body.force_split(n, i)?;
            }
        }
    }
    let frames = (seconds / DT_FRAME).round() as usize;
    let under_point = body.rest_points(&[Vector3::new(0.5, 0.5, 1.0)])?;
    let top = body.rest_points(&top_points())?;
    let disk = body.rest_points(
        &top_points()
            .into_iter()
            .filter(|p| !on_rim(p))
            .collect::<Vec<_>>(),
    )?;
    let (mut disk_level, mut disk_levels) = (Vec::new(), vec![0.0; args.cells.len()]);
    let grid = body.rest_points(&field_points())?;
    let (mut press_top, mut press_field) = (Vec::new(), Vec::new());
    let mut sample = Vec::new();
    let mut csv = String::from("time,active_0,active_1,active_2,node_updates,splits,merges,active_mass,momentum_z,energy,tool_fz,disp_under_tool_z,wall_ms,disk_level_0,disk_level_1,disk_level_2\n");
    let (mut updates, mut splits, mut merges) = (0u64, 0, 0);
    let mut max_frame_updates = 0u64;
    let (mut press, mut press_n) = (0.0, 0);
    let mut walls = Vec::new();
    let mut last_change: Vec<Vec<Option<usize>>> = body
        .levels
        .iter()
        .map(|l| vec![None; l.status.len()])
        .collect();
    let mut prev: Vec<Vec<NodeState>> = body.levels.iter().map(|l| l.status.clone()).collect();
    let (mut flicker, mut max_active) = (0, vec![0; args.cells.len()]);
    let mut e_release = f64::NAN;
    let mut e_max_after = 0.0_f64;
    let mut field = Vec::new();
    for f in 0..frames {
        let s = body.step_frame(Some(&tool(f)))?;
        updates += s.node_updates;
        max_frame_updates = max_frame_updates.max(s.node_updates);
        splits += s.splits;
        merges += s.merges;
        walls.push(s.wall_seconds * 1e3);
        body.sample_displacements(&under_point, &mut sample);
        let under = sample[0];
        if f == FIELD_FRAME {
            body.sample_displacements(&grid, &mut field);
        }
        let t = (f + 1) as f64 * DT_FRAME;
        if t <= PRESS_END + 1e-9 {
            body.sample_displacements(&top, &mut sample);
            press_top.push(sample.clone());
            body.sample_displacements(&grid, &mut sample);
            press_field.push(sample.clone());
        }
        body.sample_levels(&disk, &mut disk_level);
        if (0.6..1.0).contains(&t) {
            press += under.z;
            press_n += 1;
            for &n in &disk_level {
                disk_levels[n] += 1.0 / disk.len() as f64;
            }
        }
        let e = body.energy();
        if t >= 1.6 && e_release.is_nan() {
            e_release = e;
        }
        if t >= 1.6 {
            e_max_after = e_max_after.max(e);
        }
        for (n, l) in body.levels.iter().enumerate() {
            max_active[n] = max_active[n].max(l.active.len());
            for i in 0..l.status.len() {
                if l.status[i] != prev[n][i] {
                    if let Some(g) = last_change[n][i] {
                        if f - g < 10 {
                            flicker += 1;
                        }
                    }
                    last_change[n][i] = Some(f);
                }
            }
            prev[n].clone_from(&l.status);
        }
        let (m, mom) = body.active_mass_momentum();
        let a = &s.active_per_level;
        let _ = writeln!(
            csv,
            "{t:.3},{},{},{},{},{},{},{m:.4},{:.6e},{e:.6e},{:.3},{:.6e},{:.3},{},{},{}",
            a.first().unwrap_or(&0),
            a.get(1).unwrap_or(&0),
            a.get(2).unwrap_or(&0),
            s.node_updates,
            s.splits,
            s.merges,
            mom.z,
            s.tool_force.z,
            under.z,
            s.wall_seconds * 1e3,
            disk_level.iter().filter(|&&n| n == 0).count(),
            disk_level.iter().filter(|&&n| n == 1).count(),
            disk_level.iter().filter(|&&n| n == 2).count()
        );
    }
    let n0 = body.levels[0].status.len();
    Ok(RunResult {
        updates_per_second: updates as f64 / seconds,
        press_displacement: press / press_n.max(1) as f64,
        splits,
        merges,
        flicker,
        all_at_level0: body.levels[0].active.len() == n0,
        wall_mean_ms: walls.iter().sum::<f64>() / walls.len().max(1) as f64,
        wall_max_ms: walls.iter().copied().fold(0.0, f64::max),
        max_active,
        disk_levels: disk_levels
            .iter()
            .map(|x| x / press_n.max(1) as f64)
            .collect(),
        energy_ratio: e_max_after / e_release,
        max_frame_updates,
        field,
        press_top,
        press_field,
        csv,
    })
}

/// One seed's adaptive run against its finest-only run: what the seeds' summary reads.
struct Compared {
    seed: u64,
    ratio: f64,
    regions: Regions,
    splits: usize,
    flicker: usize,
    all_at_level0: bool,
    max_frame_updates: u64,
    energy_ratio: f64,
}

pub fn adaptive_poke(args: AdaptivePokeArgs) -> Result<()> {
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("out/adaptive_poke"));
    std::fs::create_dir_all(&out)?;
    let criterion = match args.criterion.as_str() {
        "paper" => Criterion::Paper,
        "interior" => Criterion::Interior,
        other => anyhow::bail!("criterion = {other}: expected interior or paper"),
    };
    let coupling = match args.coupling.as_str() {
        "paper" => Coupling::Paper,
        "variational" => Coupling::Variational,
        other => anyhow::bail!("coupling = {other}: expected variational or paper"),
    };
    let tool_order = match args.tool_order.as_str() {
        "criterion" => ToolOrder::Criterion,
        "distance" => ToolOrder::Distance,
        "graded" => ToolOrder::Graded,
        other => anyhow::bail!("tool_order = {other}: expected criterion, distance or graded"),
    };
    let tool_side = match args.tool_side.as_str() {
        "any" => ToolSide::Any,
        "persistent" => ToolSide::Persistent,
        "outside" => ToolSide::Outside,
        other => anyhow::bail!("tool_side = {other}: expected outside, persistent or any"),
    };
    let tool_timing = match args.tool_timing.as_str() {
        "frame" => ToolTiming::Frame,
        "step" => ToolTiming::Step,
        other => anyhow::bail!("tool_timing = {other}: expected frame or step"),
    };
    let adaptive = AdaptiveSettings {
        coupling,
        tool_side,
        tool_timing,
        tool_order,
        criterion,
        split_threshold: args.split,
        merge_threshold: args.merge,
        tool_refine: args.tool_refine,
        tool_reach: args.tool_reach,
        share_overlap: args.share_overlap,
        tool_persistent: args.tool_persistent,
        adapt: args.prescribe <= 0.0,
        budget: if args.budget > 0 {
            Budget::Predictive {
                node_updates_per_frame: args.budget,
            }
        } else {
            Budget::None
        },
        ..AdaptiveSettings::default()
    };
    if args.seeds <= 1 {
        compare(&args, adaptive, args.seed, &out)?;
        return Ok(());
    }
    let mut all = Vec::new();
    for k in 0..args.seeds {
        let seed = args.seed + k;
        let dir = out.join(format!("seed{seed}"));
        std::fs::create_dir_all(&dir)?;
        all.push(compare(&args, adaptive, seed, &dir)?);
    }
    let summary = seeds::summary(&all);
    std::fs::write(out.join("seeds.md"), &summary)?;
    print!("\n{summary}");
    Ok(())
}

/// The finest-only run's cache key: everything that changes it, the levels' jitter seed
/// included (each seed has its own meshes, so its own finest-only run).
fn finest_key(args: &AdaptivePokeArgs, seed: u64) -> String {
    format!(
        "cells {:?} phi {} psi {} seconds {} seed {seed} tool_persistent {}{}{}",
        args.cells,
        args.phi,
        args.psi,
        args.seconds,
        args.tool_persistent,
        // The rule before the side test keeps the key (and the caches) it had.
        match args.tool_side.as_str() {
            "any" => String::new(),
            side => format!(" tool_side {side}"),
        },
        match args.tool_timing.as_str() {
            "frame" => String::new(),
            timing => format!(" tool_timing {timing}"),
        }
    )
}

/// The cache file of `seed`: `--finest-cache FILE` as given for one seed, `FILE.seed<S>` for
/// several.
fn cache_path(args: &AdaptivePokeArgs, seed: u64) -> Option<PathBuf> {
    let p = args.finest_cache.as_ref()?;
    Some(if args.seeds <= 1 {
        p.clone()
    } else {
        let mut s = p.clone().into_os_string();
        s.push(format!(".seed{seed}"));
        PathBuf::from(s)
    })
}

fn compare(
    args: &AdaptivePokeArgs,
    adaptive: AdaptiveSettings,
    seed: u64,
    out: &std::path::Path,
) -> Result<Compared> {
    let finest = AdaptiveSettings {
        adapt: false,
        start_level: args.cells.len() - 1,
        ..adaptive
    };
    let a = run(args, adaptive, true, args.seconds, seed)?;
    let key = finest_key(args, seed);
    let cache = cache_path(args, seed);
    let cached = cache
        .as_ref()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|text| read_finest(&text, &key));
    let f = match cached {
        Some(f) => f,
        None => {
            let f = run(args, finest, true, args.seconds, seed)?;
            if let Some(p) = &cache {
                std::fs::write(p, write_finest(&f, &key))?;
            }
            f
        }
    };
    std::fs::write(out.join("metrics_adaptive.csv"), &a.csv)?;
    std::fs::write(out.join("metrics_finest.csv"), &f.csv)?;
    let mut table = format!("levels' jitter seed {seed}\n\n| run | node updates / s | top-face displacement under the tool, held (mm) | splits | merges | flicker (<10 frames) | max active per level | all at level 0 at end | max node updates in a frame | wall ms/frame mean (max) |\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (name, r) in [("adaptive", &a), ("finest only", &f)] {
        let _ = writeln!(
            table,
            "| {name} | {:.3e} | {:.2} | {} | {} | {} | {:?} | {} | {} | {:.2} ({:.2}) |",
            r.updates_per_second,
            1e3 * r.press_displacement,
            r.splits,
            r.merges,
            r.flicker,
            r.max_active,
            r.all_at_level0,
            r.max_frame_updates,
            r.wall_mean_ms,
            r.wall_max_ms
        );
    }
    let ratio = a.updates_per_second / f.updates_per_second;
    let _ = writeln!(
        table,
        "\nupdates ratio adaptive / finest = {ratio:.3}; displacement difference = {:.1} %",
        100.0 * (a.press_displacement - f.press_displacement).abs() / f.press_displacement.abs()
    );
    if a.field.len() == f.field.len() && !f.field.is_empty() {
        let (away, away_max) = field_difference(&a.field, &f.field, false);
        let (near, near_max) = field_difference(&a.field, &f.field, true);
        let _ = writeln!(
            table,
            "displacement field at t = {:.2} s against finest-only, 6×6×6 interior samples: \
             away from the tool (> {NEAR} m from its contact point) relative L2 {:.1} %, max \
             {:.2} mm; near it {:.1} %, max {:.2} mm",
            (FIELD_FRAME + 1) as f64 * DT_FRAME,
            100.0 * away,
            1e3 * away_max,
            100.0 * near,
            1e3 * near_max
        );
    }
    let mut regions = Regions::default();
    if !f.press_top.is_empty() {
        regions = press_report(&a, &f, &mut table);
        std::fs::write(out.join("press_mean.csv"), press_mean_csv(&a, &f))?;
        std::fs::write(out.join("press_frames.csv"), press_frames_csv(&a, &f))?;
    }
    let mut energy_ratio = f64::NAN;
    if args.undamped_seconds > 0.0 {
        for (name, c) in [
            ("variational", Coupling::Variational),
            ("paper", Coupling::Paper),
        ] {
            let settings = AdaptiveSettings {
                coupling: c,
                ..adaptive
            };
            let u = run(args, settings, false, args.undamped_seconds, seed)?;
            std::fs::write(out.join(format!("metrics_undamped_{name}.csv")), &u.csv)?;
            if c == adaptive.coupling {
                energy_ratio = u.energy_ratio;
            }
            let _ = writeln!(
                table,
                "undamped adaptive, {name} coupling, {} s: max energy after release / energy \
                 at release = {:.3}",
                args.undamped_seconds, u.energy_ratio
            );
        }
    }
    std::fs::write(out.join("table.md"), &table)?;
    print!("{table}");
    Ok(Compared {
        seed,
        ratio,
        regions,
        splits: a.splits,
        flicker: a.flicker,
        all_at_level0: a.all_at_level0,
        max_frame_updates: a.max_frame_updates,
        energy_ratio,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        poke: AdaptivePokeArgs,
    }

    fn args(extra: &[&str]) -> AdaptivePokeArgs {
        let mut v = vec!["poke"];
        v.extend_from_slice(extra);
        Cli::parse_from(v).poke
    }

    #[test]
    fn the_finest_cache_is_keyed_and_filed_by_the_levels_seed() {
        let one = args(&["--finest-cache", "/tmp/f"]);
        assert_ne!(finest_key(&one, 3), finest_key(&one, 4));
        assert_eq!(cache_path(&one, 3), Some(PathBuf::from("/tmp/f")));
        let many = args(&["--finest-cache", "/tmp/f", "--seeds", "3"]);
        assert_eq!(cache_path(&many, 4), Some(PathBuf::from("/tmp/f.seed4")));
        let r = RunResult {
            updates_per_second: 1.0,
            press_displacement: -0.1,
            splits: 0,
            merges: 0,
            flicker: 0,
            all_at_level0: true,
            wall_mean_ms: 1.0,
            wall_max_ms: 2.0,
            max_active: Vec::new(),
            disk_levels: Vec::new(),
            energy_ratio: 1.0,
            max_frame_updates: 0,
            field: vec![Vector3::new(0.0, 0.0, -1e-3)],
            press_top: vec![vec![Vector3::new(0.0, 0.0, -2e-3)]],
            press_field: vec![vec![Vector3::new(0.0, 0.0, -3e-3)]],
            csv: String::new(),
        };
        let text = write_finest(&r, &finest_key(&one, 3));
        let back = read_finest(&text, &finest_key(&one, 3)).expect("same seed reads back");
        assert_eq!(back.press_top, r.press_top);
        assert!(read_finest(&text, &finest_key(&one, 4)).is_none());
    }
}
