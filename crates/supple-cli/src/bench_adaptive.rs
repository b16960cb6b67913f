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
//! core. On Linux each frame's CPU time (the thread's CPU clock) is reported beside it: the
//! CPU time is what the frame costs, the wall time what a user on this machine saw.

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
    let (mut cpu, mut refine_ms) = (Vec::new(), Vec::new());
    let mut max_active = vec![0usize; body.levels.len()];
    let (mut splits, mut merges) = (0, 0);
    let mut peak = (0.0_f64, 0usize, 0u64);
    for f in args.warmup..args.warmup + args.steps {
        let tool = tool_at(f);
        let cpu0 = thread_cpu_seconds();
        let t = Instant::now();
        let s = body.step_frame(tool.as_ref())?;
        let ms = t.elapsed().as_secs_f64() * 1e3;
        if let (Some(c0), Some(c1)) = (cpu0, thread_cpu_seconds()) {
            cpu.push((c1 - c0) * 1e3);
        }
        wall.push(ms);
        updates.push(s.node_updates as f64);
        refine_ms.push(s.refine_seconds * 1e3);
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
            "median": median(&c),
            "p90": percentile(&c, 0.90),
            "p95": percentile(&c, 0.95),
            "p99": percentile(&c, 0.99),
            "max": c.last().copied().unwrap_or(0.0),
            "mean": c.iter().sum::<f64>() / c.len().max(1) as f64,
            "frames_within_period": c.iter().filter(|&&w| w <= period_ms).count(),
            "wall_minus_cpu_ms_total": wall.iter().sum::<f64>() - c.iter().sum::<f64>(),
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
            // The split/merge step's own share (criterion, decisions, rebuild), which the
            // node-update budget does not bound.
            "refine_ms_max": refine_ms.iter().copied().fold(0.0, f64::max),
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
        "cpu_ms_per_frame": cpu_report,
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

/// This thread's CPU time (s), from `clock_gettime(CLOCK_THREAD_CPUTIME_ID)` (POSIX; clock
/// id 3 on Linux), `None` where it is not available. The standard library has no thread CPU
/// clock, and Linux's scheduler statistics (`/proc/thread-self/schedstat`) advance only at
/// scheduler ticks for a running thread (4 ms steps on the development machine).
#[cfg(all(target_os = "linux", target_pointer_width = "64"))]
fn thread_cpu_seconds() -> Option<f64> {
    /// `struct timespec` on 64-bit Linux: two 64-bit fields.
    #[repr(C)]
    struct Timespec {
        tv_sec: i64,
        tv_nsec: i64,
    }
    extern "C" {
        fn clock_gettime(clock: i32, ts: *mut Timespec) -> i32;
    }
    const CLOCK_THREAD_CPUTIME_ID: i32 = 3;
    let mut ts = Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: the C library's clock_gettime writes one `struct timespec` (the layout above on
    // 64-bit Linux) through the pointer, which points to a live, writable `Timespec`; with a
    // valid clock id it touches nothing else.
    let rc = unsafe { clock_gettime(CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    (rc == 0).then_some(ts.tv_sec as f64 + 1e-9 * ts.tv_nsec as f64)
}

#[cfg(not(all(target_os = "linux", target_pointer_width = "64")))]
fn thread_cpu_seconds() -> Option<f64> {
    None
}
