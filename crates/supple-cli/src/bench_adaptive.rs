//! `supple bench` for a scene with `[adaptive]` (Debunne et al. 2000): wall time per frame of
//! the adaptive body (one frame = the scene's `dt` of simulated time, the tool on its path)
//! and the frames per second that makes, as JSON. The paper's goal is a frame rate held in
//! real time (§4.3); this reports it, no test asserts it.

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
    let mut max_active = vec![0usize; body.levels.len()];
    let (mut splits, mut merges) = (0, 0);
    for f in args.warmup..args.warmup + args.steps {
        let tool = tool_at(f);
        let t = Instant::now();
        let s = body.step_frame(tool.as_ref())?;
        wall.push(t.elapsed().as_secs_f64() * 1e3);
        updates.push(s.node_updates as f64);
        splits += s.splits;
        merges += s.merges;
        for (m, &n) in max_active.iter_mut().zip(&s.active_per_level) {
            *m = (*m).max(n);
        }
    }
    let med = median(&wall);
    let max = wall.iter().copied().fold(0.0, f64::max);
    let period_ms = scene.dt * 1e3;
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
            "max": max,
            "mean": wall.iter().sum::<f64>() / wall.len().max(1) as f64,
            "min": wall.iter().copied().fold(f64::INFINITY, f64::min),
        },
        "fps": {
            "median": 1e3 / med,
            "worst": 1e3 / max,
        },
        "frames_within_period": wall.iter().filter(|&&w| w <= period_ms).count(),
        "node_updates_per_frame": {
            "median": median(&updates),
            "max": updates.iter().copied().fold(0.0, f64::max),
        },
        "max_active_per_level": max_active,
        "splits": splits,
        "merges": merges,
    });
    writeln!(
        std::io::stdout().lock(),
        "{}",
        serde_json::to_string_pretty(&report)?
    )?;
    Ok(())
}
