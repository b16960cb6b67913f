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
//! (`AdaptiveSettings`); `--finest-cache FILE` reuses the finest-only run.

mod cache;

use anyhow::Result;
use cache::{read_finest, write_finest};
use clap::Args;
use nalgebra::Vector3;
use std::fmt::Write as _;
use std::path::PathBuf;
use supple::adaptive::generate::box_levels;
use supple::adaptive::{
    debunne_levels, AdaptiveBody, AdaptiveSettings, Budget, Coupling, Criterion, DebunneParams,
    Hierarchy, NodeState, SphereTool, ToolOrder,
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
    #[arg(long, default_value = "distance")]
    pub tool_order: String,
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
    /// Output folder (default: out/adaptive_poke).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

const DT_FRAME: f64 = 0.02;
const RADIUS: f64 = 0.15;
/// Frame at whose end the displacement field is sampled (t = 1.0 s: end of the hold).
const FIELD_FRAME: usize = 49;
/// The press: frames ending in `(0, PRESS_END]` s, while the tool touches the top face.
const PRESS_END: f64 = 1.5;
/// Top-face samples within this distance of the tool's axis (m): twice the tool's radius.
const FOOTPRINT: f64 = 0.3;
/// Radius of the contact disk at full depth, `√(r² − (r − 0.1)²)` ≈ 0.141 m: top-face samples
/// farther than this from the axis are the free rim around the tool.
const CONTACT: f64 = 0.1414;
/// Field samples closer than this to the tool's contact point (0.5, 0.5, 1) are "under the
/// tool"; the others are "away from the tool".
const NEAR: f64 = 0.35;

/// Sample points of the displacement field: a 6×6×6 grid inside the cube.
fn field_points() -> Vec<Vector3<f64>> {
    let c = |k: usize| 0.05 + 0.18 * k as f64;
    (0..216)
        .map(|k| Vector3::new(c(k % 6), c(k / 6 % 6), c(k / 36)))
        .collect()
}

/// `(‖a − b‖ / ‖b‖ over the samples with near(p) == want, max |a − b| (m))`.
fn field_difference(a: &[Vector3<f64>], b: &[Vector3<f64>], want_near: bool) -> (f64, f64) {
    let tool = Vector3::new(0.5, 0.5, 1.0);
    let (mut num, mut den, mut max) = (0.0, 0.0, 0.0_f64);
    for ((p, x), y) in field_points().iter().zip(a).zip(b) {
        if ((p - tool).norm() < NEAR) == want_near {
            num += (x - y).norm_squared();
            den += y.norm_squared();
            max = max.max((x - y).norm());
        }
    }
    ((num / den).sqrt(), max)
}

/// Samples of the top face (z = 1) within [`FOOTPRINT`] of the tool's axis: a 0.05 m grid.
fn top_points() -> Vec<Vector3<f64>> {
    let mut out = Vec::new();
    for i in 0..=12 {
        for j in 0..=12 {
            let p = Vector3::new(0.2 + 0.05 * i as f64, 0.2 + 0.05 * j as f64, 1.0);
            if (p.xy() - Vector3::new(0.5, 0.5, 0.0).xy()).norm() <= FOOTPRINT + 1e-9 {
                out.push(p);
            }
        }
    }
    out
}

/// Whether top-face sample `p` lies on the free rim (outside the contact disk).
fn on_rim(p: &Vector3<f64>) -> bool {
    (p.xy() - Vector3::new(0.5, 0.5, 0.0).xy()).norm() > CONTACT
}

/// The press's comparison of two runs' samples `a`, `b` (frames × points), over the points
/// with `keep(point)`: (mean over frames of `‖a − b‖ / ‖b‖`, `‖ā − b̄‖ / ‖b̄‖` of the
/// time-averaged fields, largest `|ā − b̄|` (m), `‖ā − b̄‖²` (m²)).
fn press_difference(
    a: &[Vec<Vector3<f64>>],
    b: &[Vec<Vector3<f64>>],
    points: &[Vector3<f64>],
    keep: impl Fn(&Vector3<f64>) -> bool,
) -> (f64, f64, f64, f64) {
    let frames = a.len().min(b.len());
    let mut mean_rel = 0.0;
    let mut abar = vec![Vector3::zeros(); points.len()];
    let mut bbar = abar.clone();
    for f in 0..frames {
        let (mut num, mut den) = (0.0, 0.0);
        for (k, p) in points.iter().enumerate() {
            abar[k] += a[f][k] / frames as f64;
            bbar[k] += b[f][k] / frames as f64;
            if keep(p) {
                num += (a[f][k] - b[f][k]).norm_squared();
                den += b[f][k].norm_squared();
            }
        }
        if den > 0.0 {
            mean_rel += (num / den).sqrt() / frames as f64;
        }
    }
    let (mut num, mut den, mut max) = (0.0, 0.0, 0.0_f64);
    for (k, p) in points.iter().enumerate() {
        if keep(p) {
            num += (abar[k] - bbar[k]).norm_squared();
            den += bbar[k].norm_squared();
            max = max.max((abar[k] - bbar[k]).norm());
        }
    }
    (
        mean_rel,
        (num / den.max(f64::MIN_POSITIVE)).sqrt(),
        max,
        num,
    )
}

/// The time-averaged fields of the press of both runs at every sample (top face and
/// interior grid): `x,y,z,ua_x,ua_y,ua_z,uf_x,uf_y,uf_z`.
fn press_mean_csv(a: &RunResult, f: &RunResult) -> String {
    let mean = |s: &[Vec<Vector3<f64>>], k: usize| {
        s.iter().map(|v| v[k]).sum::<Vector3<f64>>() / s.len().max(1) as f64
    };
    let mut csv = String::from("x,y,z,ua_x,ua_y,ua_z,uf_x,uf_y,uf_z\n");
    for (points, sa, sf) in [
        (top_points(), &a.press_top, &f.press_top),
        (field_points(), &a.press_field, &f.press_field),
    ] {
        for (k, p) in points.iter().enumerate() {
            let (ua, uf) = (mean(sa, k), mean(sf, k));
            let _ = writeln!(
                csv,
                "{},{},{},{:e},{:e},{:e},{:e},{:e},{:e}",
                p.x, p.y, p.z, ua.x, ua.y, ua.z, uf.x, uf.y, uf.z
            );
        }
    }
    csv
}

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
) -> Result<RunResult> {
    let meshes = box_levels(&args.cells, Vector3::zeros(), 1.0, 0.12, 3)?;
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
        field,
        press_top,
        press_field,
        csv,
    })
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
    let adaptive = AdaptiveSettings {
        coupling,
        tool_order,
        criterion,
        split_threshold: args.split,
        merge_threshold: args.merge,
        tool_refine: args.tool_refine,
        tool_reach: args.tool_reach,
        share_overlap: args.share_overlap,
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
    let finest = AdaptiveSettings {
        adapt: false,
        start_level: args.cells.len() - 1,
        ..adaptive
    };
    let a = run(&args, adaptive, true, args.seconds)?;
    let key = format!(
        "cells {:?} phi {} psi {} seconds {}",
        args.cells, args.phi, args.psi, args.seconds
    );
    let cached = args
        .finest_cache
        .as_ref()
        .and_then(|p| std::fs::read_to_string(p).ok())
        .and_then(|text| read_finest(&text, &key));
    let f = match cached {
        Some(f) => f,
        None => {
            let f = run(&args, finest, true, args.seconds)?;
            if let Some(p) = &args.finest_cache {
                std::fs::write(p, write_finest(&f, &key))?;
            }
            f
        }
    };
    std::fs::write(out.join("metrics_adaptive.csv"), &a.csv)?;
    std::fs::write(out.join("metrics_finest.csv"), &f.csv)?;
    let mut table = String::from("| run | node updates / s | top-face displacement under the tool, held (mm) | splits | merges | flicker (<10 frames) | max active per level | all at level 0 at end | wall ms/frame mean (max) |\n|---|---|---|---|---|---|---|---|---|\n");
    for (name, r) in [("adaptive", &a), ("finest only", &f)] {
        let _ = writeln!(
            table,
            "| {name} | {:.3e} | {:.2} | {} | {} | {} | {:?} | {} | {:.2} ({:.2}) |",
            r.updates_per_second,
            1e3 * r.press_displacement,
            r.splits,
            r.merges,
            r.flicker,
            r.max_active,
            r.all_at_level0,
            r.wall_mean_ms,
            r.wall_max_ms
        );
    }
    let _ = writeln!(
        table,
        "\nupdates ratio adaptive / finest = {:.3}; displacement difference = {:.1} %",
        a.updates_per_second / f.updates_per_second,
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
    if !f.press_top.is_empty() {
        let top = top_points();
        let (all_mean, all_bar, all_max, _) =
            press_difference(&a.press_top, &f.press_top, &top, |_| true);
        let (disk_mean, disk_bar, disk_max, _) =
            press_difference(&a.press_top, &f.press_top, &top, |p| !on_rim(p));
        let (rim_mean, rim_bar, rim_max, _) =
            press_difference(&a.press_top, &f.press_top, &top, on_rim);
        let grid = field_points();
        let tool = Vector3::new(0.5, 0.5, 1.0);
        let near = |p: &Vector3<f64>| (p - tool).norm() < NEAR;
        let (near_mean, near_bar, near_max, _) =
            press_difference(&a.press_field, &f.press_field, &grid, near);
        let (away_mean, away_bar, away_max, _) =
            press_difference(&a.press_field, &f.press_field, &grid, |p| !near(p));
        let _ = writeln!(
            table,
            "\nover the press (t in (0, {PRESS_END}] s, {} frames) against finest-only — mean over \
             frames of the relative L2 difference | relative L2 difference of the time-averaged \
             fields | max difference of the time-averaged fields:",
            a.press_top.len().min(f.press_top.len())
        );
        for (name, count, (m, b, x)) in [
            (
                format!("top face under the tool (≤ {FOOTPRINT} m from its axis)"),
                top.len(),
                (all_mean, all_bar, all_max),
            ),
            (
                format!("top-face contact disk (≤ {CONTACT} m from the axis)"),
                top.iter().filter(|p| !on_rim(p)).count(),
                (disk_mean, disk_bar, disk_max),
            ),
            (
                format!("top-face rim ({CONTACT} to {FOOTPRINT} m from the axis)"),
                top.iter().filter(|p| on_rim(p)).count(),
                (rim_mean, rim_bar, rim_max),
            ),
            (
                format!("interior grid near the tool (< {NEAR} m)"),
                grid.iter().filter(|p| near(p)).count(),
                (near_mean, near_bar, near_max),
            ),
            (
                "interior grid away from the tool".to_string(),
                grid.iter().filter(|p| !near(p)).count(),
                (away_mean, away_bar, away_max),
            ),
        ] {
            let _ = writeln!(
                table,
                "- {name}, {count} points: {:.1} % | {:.1} % | {:.2} mm",
                100.0 * m,
                100.0 * b,
                1e3 * x
            );
        }
    }
    if !f.press_top.is_empty() {
        std::fs::write(out.join("press_mean.csv"), press_mean_csv(&a, &f))?;
        let top = top_points();
        let (_, _, _, all_sq) = press_difference(&a.press_top, &f.press_top, &top, |_| true);
        let (_, _, _, disk_sq) = press_difference(&a.press_top, &f.press_top, &top, |p| !on_rim(p));
        let _ = writeln!(
            table,
            "share of the top face's squared difference of the time-averaged fields in the contact \
             disk: {:.1} %; over the hold, share of the disk's samples read from each level: {}",
            100.0 * disk_sq / all_sq.max(f64::MIN_POSITIVE),
            a.disk_levels
                .iter()
                .map(|x| format!("{:.1} %", 100.0 * x))
                .collect::<Vec<_>>()
                .join(" / ")
        );
    }
    if args.undamped_seconds > 0.0 {
        for (name, c) in [
            ("variational", Coupling::Variational),
            ("paper", Coupling::Paper),
        ] {
            let settings = AdaptiveSettings {
                coupling: c,
                ..adaptive
            };
            let u = run(&args, settings, false, args.undamped_seconds)?;
            std::fs::write(out.join(format!("metrics_undamped_{name}.csv")), &u.csv)?;
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
    Ok(())
}
