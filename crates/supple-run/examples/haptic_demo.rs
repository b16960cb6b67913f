//! A scripted haptic device on a scene's grab: the device loop (`supple::haptic`) runs at
//! 1 kHz on its own thread while the world steps in real time at the scene's `dt`, and every
//! tick's position and force are recorded (EXPERIMENTS.md, *The haptic loop*).
//!
//! ```sh
//! cargo run --release -p supple-run --example haptic_demo -- scenes/grab_tube.toml haptic
//! ```
//! The scene's first `[[grab]]` is taken over by the device: it grabs at the grab's `start`
//! and releases at its `release`, and the device follows the grab's `path` with a tremor of
//! 2 mm at 25 Hz along z on top (motion between the simulation's steps). Before each step
//! the world reads the device's latest position as the grab's target for the step's end; after
//! it, the loop gets the step's local model `f₀ + K (p − p₀)`. Writes `PREFIX.ticks.csv`
//! (`tick,t,x,y,z,fx,fy,fz,model_step`: the force on the tool at device rate) and
//! `PREFIX.steps.csv` (`step,t,x,y,z,fx,fy,fz,kxx,kyy,kzz`: each step's target, the
//! simulation's force on the tool and the diagonal of `K`) and `PREFIX.png` (the force at
//! device rate beside the simulation's at its steps), and prints the rate achieved.

use std::io::Write;
use supple::constraint::Keyframes;
use supple::haptic::{Device, GrabResponse, HapticLoop, LocalModel, LoopSettings, Tick};
use supple::nalgebra::Vector3;
use supple_render::plot::{write_chart, Chart, Panel, Series};

/// The grab's path with a tremor, recorded into a buffer reserved up front.
struct Scripted {
    path: Keyframes,
    start: f64,
    at_start: Vector3<f64>,
    ticks: Vec<Tick>,
}

impl Scripted {
    fn at(&self, t: f64) -> Vector3<f64> {
        let tremor = Vector3::new(
            0.0,
            0.0,
            0.002 * (2.0 * std::f64::consts::PI * 25.0 * t).sin(),
        );
        let base = if t < self.start {
            self.at_start
        } else {
            self.path.at(t)
        };
        base + tremor
    }
}

impl Device for Scripted {
    fn position(&mut self, _: u64, t: f64) -> Option<Vector3<f64>> {
        Some(self.at(t))
    }
    fn render(&mut self, tick: &Tick) {
        if self.ticks.len() < self.ticks.capacity() {
            self.ticks.push(*tick);
        }
    }
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 3 {
        return Err("usage: haptic_demo SCENE OUT_PREFIX".into());
    }
    let mut scene = supple_io::load_scene(std::path::Path::new(&args[1]))?;
    if scene.grabs.is_empty() {
        return Err(format!("{}: the scene has no [[grab]] for the device", args[1]).into());
    }
    let grab = scene.grabs.remove(0).script;
    let steps = scene.steps();
    let mut world = scene.build_world()?;
    // Where the grab will take the body: the path starts there (as a scripted grab's does).
    let probe = world.grab(grab.body, grab.point, grab.settings)?;
    let at_start = world.grabs()[0].target;
    world.release(probe)?;
    let settings = LoopSettings::default();
    let capacity = ((steps as f64 * scene.dt + 1.0) * settings.rate_hz * 1.2) as usize;
    let device = Scripted {
        path: grab.path.starting_at(grab.start, at_start),
        start: grab.start,
        at_start,
        ticks: Vec::with_capacity(capacity),
    };
    let haptic = HapticLoop::start(settings, device)?;
    let mut response = GrabResponse::new();
    let mut held = None;
    let mut rows = Vec::with_capacity(steps);
    let mut late_steps = 0;
    for _ in 0..steps {
        // Real time: the step from t waits for the device to reach t.
        let t = world.time;
        let last = loop {
            match haptic.last() {
                Some(tick) if tick.t + 0.5 / settings.rate_hz >= t => break tick,
                _ => std::thread::sleep(std::time::Duration::from_micros(200)),
            }
        };
        if last.t > t + scene.dt {
            late_steps += 1;
        }
        if held.is_none() && t >= grab.start - 1e-9 && grab.release.is_none_or(|r| t < r) {
            held = Some(world.grab(grab.body, grab.point, grab.settings)?);
        }
        if let (Some(id), Some(r)) = (held, grab.release) {
            if t >= r - 1e-9 {
                world.release(id)?;
                held = None;
                haptic.update(LocalModel {
                    step: world.steps as u64,
                    ..LocalModel::zero()
                });
            }
        }
        if let Some(id) = held {
            world.move_grab(id, last.position)?;
        }
        world.step()?;
        if let Some(id) = held {
            let model = response.model(&world, id)?;
            haptic.update(model);
            rows.push((world.steps, world.time, model));
        }
    }
    let (stats, device) = haptic.stop()?;
    let mut ticks =
        std::io::BufWriter::new(std::fs::File::create(format!("{}.ticks.csv", args[2]))?);
    writeln!(ticks, "tick,t,x,y,z,fx,fy,fz,model_step")?;
    for k in &device.ticks {
        let (p, f) = (k.position, k.force);
        writeln!(
            ticks,
            "{},{},{},{},{},{},{},{},{}",
            k.index, k.t, p.x, p.y, p.z, f.x, f.y, f.z, k.model_step
        )?;
    }
    ticks.flush()?;
    let mut out = std::io::BufWriter::new(std::fs::File::create(format!("{}.steps.csv", args[2]))?);
    writeln!(out, "step,t,x,y,z,fx,fy,fz,kxx,kyy,kzz")?;
    for (step, t, m) in &rows {
        let (p, f, k) = (m.p0, m.f0, m.k);
        writeln!(
            out,
            "{step},{t},{},{},{},{},{},{},{},{},{}",
            p.x,
            p.y,
            p.z,
            f.x,
            f.y,
            f.z,
            k[(0, 0)],
            k[(1, 1)],
            k[(2, 2)]
        )?;
    }
    out.flush()?;
    let panel = |axis: usize, name: &str| Panel {
        title: format!("Force on the tool, {name}"),
        y_label: format!("f{name} (N)"),
        series: vec![
            Series {
                name: "device loop (1 kHz)".into(),
                points: device.ticks.iter().map(|k| (k.t, k.force[axis])).collect(),
            },
            Series {
                name: "simulation steps".into(),
                points: rows.iter().map(|r| (r.1, r.2.f0[axis])).collect(),
            },
        ],
    };
    let chart = Chart {
        x_label: "time (s)".into(),
        panels: vec![panel(1, "y"), panel(2, "z")],
        width: 900,
        height: 700,
    };
    write_chart(std::path::Path::new(&format!("{}.png", args[2])), &chart)?;
    let peak = rows.iter().map(|r| r.2.f0.norm()).fold(0.0, f64::max);
    println!(
        "{} ticks in {:.3} s: {:.1} Hz (target {:.0}), {} deadlines missed, wake-up at most {:.2} ms late; {} steps, {} started more than a step late; peak force {:.2} N",
        stats.ticks,
        stats.elapsed_s,
        stats.rate_hz,
        settings.rate_hz,
        stats.missed,
        1e3 * stats.max_late_s,
        steps,
        late_steps,
        peak
    );
    Ok(())
}
