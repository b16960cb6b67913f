//! `supple bench` for a scene with `[adaptive]` (Debunne et al. 2000): wall time per frame of
//! the adaptive body (one frame = the scene's `dt` of simulated time, the tool on its path)
//! and the frames per second that makes, as JSON. The paper's goal is a frame rate held in
//! real time (§4.3); this reports it, no test asserts it. "Held" is about the slowest frames,
//! not the median, so the report gives the percentiles of the frame time, the frames within
//! the period, and the frames that changed the level of detail (splits or merges) apart from
//! the others: a refining frame's extra work (eq. 9, split/merge, rebuilding the active and
//! ghost sets) against the cost of stepping the finer state it leaves.
//!
//! On a shared machine the wall time of a frame includes the time the thread waited for a
//! core. Where Linux's scheduler statistics are readable (`/proc/thread-self/schedstat`),
//! each frame's time on a CPU and its wait in the run queue are reported beside it: the CPU
//! time is what the frame costs, the wall time what a user on this machine saw.

use crate::bench::BenchArgs;
use anyhow::Result;
use serde_json::json;
use std::io::Write;
use std::time::Instant;
use supple_io::Scene;
use supple_run::record::median;

/// Times `args.steps` frames after `args.warmup` untimed ones.
pub fn bench(args: &BenchArgs, scene: &Scene) -> Result<()> {
    let overrides = [
        ("--model", args.model.is_some()),
        ("--preconditioner", args.preconditioner.is_some()),
        ("--warm-start", args.warm_start.is_some()),
        ("--broad-phase", args.broad_phase.is_some()),
        ("--direct-vs-pcg", args.direct.direct_vs_pcg),
    ];
    if let Some((flag, _)) = overrides.iter().find(|(_, set)| *set) {
        anyhow::bail!("{flag}: not available for an [adaptive] scene");
    }
    let a = scene.adaptive.as_ref().expect("checked by the caller");
    let t = Instant::now();
    let mut body = scene.build_adaptive()?;
    let setup_ms = t.elapsed().as_secs_f64() * 1e3;
    let tool_at = |f: usize| a.tool.as_ref().and_then(|p| p.at(f as f64 * scene.dt));
    for f in 0..args.warmup {
        body.step_frame(tool_at(f).as_ref())?;
    }
    let (mut wall, mut updates) = (Vec::with_capacity(args.steps), Vec::new());
    let (mut refining, mut steady) = (Vec::new(), Vec::new());
    let (mut cpu, mut waited) = (Vec::new(), Vec::new());
    let mut max_active = vec![0usize; body.levels.len()];
    let (mut splits, mut merges) = (0, 0);
    let mut peak = (0.0_f64, 0usize, 0u64);
    for f in args.warmup..args.warmup + args.steps {
        let tool = tool_at(f);
        let sched = sched_ns();
        let t = Instant::now();
        let s = body.step_frame(tool.as_ref())?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if let (Some((c0, w0)), Some((c1, w1))) = (sched, sched_ns()) {
            cpu.push((c1 - c0) as f64 * 1e-6);
            waited.push((w1 - w0) as f64 * 1e-6);
        }
        wall.push(ms);
        updates.push(s.node_updates as f64);
        if s.splits + s.merges > 0 {
            refining.push(ms);
        } else {
            steady.push(ms);
        }
        if ms > peak.0 {
            peak = (ms, f, s.node_updates);
        }
        splits += s.splits;
        merges += s.merges;
        for (m, &n) in max_active.iter_mut().zip(&s.active_per_level) {
            *m = (*m).max(n);
        }
    }
    let med = median(&wall);
    let max = wall.iter().copied().fold(0.0, f64::max);
    let period_ms = scene.dt * 1e3;
    let mut sorted = wall.clone();
    sorted.sort_by(f64::total_cmp);
    let cpu_report = (cpu.len() == wall.len()).then(|| {
        let mut c = cpu.clone();
        c.sort_by(f64::total_cmp);
        json!({
            "cpu_ms_per_frame": {
                "median": median(&c),
                "p95": percentile(&c, 0.95),
                "max": c.last().copied().unwrap_or(0.0),
                "frames_within_period": c.iter().filter(|&&w| w <= period_ms).count(),
            },
            "runqueue_wait_ms": {
                "total": waited.iter().sum::<f64>(),
                "max": waited.iter().copied().fold(0.0, f64::max),
            },
        })
    });
    let report = json!({
        "scene": scene.name,
        "adaptive": true,
        "threads": rayon::current_num_threads(),
        "frames": args.steps,
        "warmup": args.warmup,
        "frame_period_ms": period_ms,
        "setup_ms": setup_ms,
        "wall_ms_per_frame": {
            "median": med,
            "p90": percentile(&sorted, 0.90),
            "p95": percentile(&sorted, 0.95),
            "p99": percentile(&sorted, 0.99),
            "max": max,
            "mean": wall.iter().sum::<f64>() / wall.len().max(1) as f64,
            "min": sorted.first().copied().unwrap_or(0.0),
        },
        "fps": {
            "median": 1e3 / med,
            "worst": 1e3 / max,
        },
        "frames_within_period": wall.iter().filter(|&&w| w <= period_ms).count(),
        "peak_frame": { "frame": peak.1, "wall_ms": peak.0, "node_updates": peak.2 },
        "refining_frames": {
            "count": refining.len(),
            "wall_ms_median": median(&refining),
            "wall_ms_max": refining.iter().copied().fold(0.0, f64::max),
        },
        "other_frames": {
            "count": steady.len(),
            "wall_ms_median": median(&steady),
            "wall_ms_max": steady.iter().copied().fold(0.0, f64::max),
        },
        "node_updates_per_frame": {
            "median": median(&updates),
            "max": updates.iter().copied().fold(0.0, f64::max),
        },
        "max_active_per_level": max_active,
        "splits": splits,
        "merges": merges,
        "scheduler": cpu_report,
    });
    writeln!(
        std::io::stdout().lock(),
        "{}",
        serde_json::to_string_pretty(&report)?
    )?;
    Ok(())
}

/// The `q`-quantile of ascending `sorted` by the nearest-rank rule: the smallest value with at
/// least a fraction `q` of the frames at or below it (0 when empty).
fn percentile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

/// This thread's time on a CPU and time waiting in the run queue so far (ns), from Linux's
/// scheduler statistics; `None` where they cannot be read.
fn sched_ns() -> Option<(u64, u64)> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let mut fields = text.split_whitespace().map(|f| f.parse::<u64>().ok());
    Some((fields.next()??, fields.next()??))
}
