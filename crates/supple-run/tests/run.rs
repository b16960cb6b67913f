//! `run_scene` as a library: outcomes, the progress hooks, the files.

use std::path::PathBuf;
use supple_run::{run_scene, Progress, RunOptions, RunOutcome, Silent};

const SCENE: &str = r#"
dt = 0.01
duration = 0.1
[output]
gif = false
png_every = 0
plots = false
[[body]]
name = "bar"
mesh = { kind = "box", cells = [3, 1, 1], cell_size = 0.1 }
material = { model = "corotational", youngs = 1e5, poisson = 0.3, density = 1000.0 }
fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }]
"#;

fn out_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("supple-run-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

fn scene() -> supple_io::Scene {
    supple_io::parse_scene(SCENE, std::path::Path::new("bar.toml")).unwrap()
}

/// Counts the hooks' calls and asks to stop after `stop_after` steps.
struct Counting {
    started: Option<usize>,
    steps: usize,
    finished: bool,
    stop_after: usize,
}

impl Progress for Counting {
    fn start(&mut self, steps: usize) {
        self.started = Some(steps);
    }
    fn stop_requested(&mut self) -> bool {
        self.steps + 1 >= self.stop_after
    }
    fn step_done(&mut self) {
        self.steps += 1;
    }
    fn finish(&mut self) {
        self.finished = true;
    }
}

#[test]
fn a_finished_run_writes_its_files() {
    let out = out_dir("finished");
    let opts = RunOptions {
        out: Some(out.clone()),
        quiet: true,
        force: false,
    };
    let report = run_scene(&scene(), &opts, &mut Silent).unwrap();
    assert_eq!(report.outcome, RunOutcome::Finished);
    assert_eq!(report.summary.steps, 10);
    assert_eq!(report.out, out);
    for f in [
        "summary.json",
        "metrics.csv",
        "scene.pvd",
        "frames/frame_00010.vtu",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_stop_request_ends_the_run_after_that_step() {
    let out = out_dir("stopped");
    let opts = RunOptions {
        out: Some(out.clone()),
        quiet: true,
        force: false,
    };
    let mut p = Counting {
        started: None,
        steps: 0,
        finished: false,
        stop_after: 4,
    };
    let report = run_scene(&scene(), &opts, &mut p).unwrap();
    assert_eq!(report.outcome, RunOutcome::Interrupted);
    assert_eq!((p.started, p.steps, p.finished), (Some(10), 4, true));
    assert!(report.summary.interrupted);
    assert_eq!(report.summary.steps, 4);
    let _ = std::fs::remove_dir_all(&out);
}

/// Two boxes placed overlapping, at rest, in zero gravity: continuous contact sees no
/// crossing during a step, so they stay inside each other to the end.
const OVERLAPPING: &str = r#"
dt = 0.01
duration = 0.05
gravity = [0.0, 0.0, 0.0]
[output]
gif = false
png_every = 0
plots = false
[[body]]
name = "a"
mesh = { kind = "box", cells = [2, 2, 2], cell_size = 0.05 }
material = { model = "corotational", youngs = 1e5, poisson = 0.3, density = 1000.0 }
[[body]]
name = "b"
mesh = { kind = "box", cells = [2, 2, 2], cell_size = 0.05, origin = [0.06, 0.01, 0.01] }
material = { model = "corotational", youngs = 1e5, poisson = 0.3, density = 1000.0 }
"#;

#[test]
fn a_run_that_ends_with_bodies_inside_each_other_is_invalid_where_they_collide() {
    let opts = |name: &str| RunOptions {
        out: Some(out_dir(name)),
        quiet: true,
        force: false,
    };
    // The default response, IPC, refuses a start whose surfaces cross: the run stops at its
    // first step with that reason (exit 2), the initial frame written.
    let default = format!("{OVERLAPPING}[contact]\nbody_collision = true\n");
    let scene = supple_io::parse_scene(&default, std::path::Path::new("o.toml")).unwrap();
    let report = run_scene(&scene, &opts("overlap_ipc"), &mut Silent).unwrap();
    let RunOutcome::Diverged(d) = &report.outcome else {
        panic!("{:?}", report.outcome);
    };
    assert!(
        d.step == 1 && d.reason.contains("touch or cross at the step's start"),
        "{d:?}"
    );
    // The projection response runs it, and the verdict finds them inside each other.
    let with_contact =
        format!("{OVERLAPPING}[contact]\nbody_collision = true\nresponse = \"projection\"\n");
    let scene = supple_io::parse_scene(&with_contact, std::path::Path::new("o.toml")).unwrap();
    let report = run_scene(&scene, &opts("overlap"), &mut Silent).unwrap();
    let RunOutcome::Invalid(reasons) = &report.outcome else {
        panic!("{:?}", report.outcome);
    };
    let kinds: Vec<_> = reasons.iter().map(|r| r.kind()).collect();
    assert_eq!(kinds, ["interpenetration", "interpenetration"]);
    let s = &report.summary;
    assert!(s.invalid && !s.diverged);
    assert_eq!(s.invalid_rules, ["interpenetration"]);
    assert_eq!(s.interpenetrating_vertices_end, 8);
    assert_eq!(s.interpenetrating_vertices_max, 8);
    assert_eq!(s.steps, 5);
    let text = std::fs::read_to_string(report.out.join("summary.json")).unwrap();
    assert!(text.contains("\"invalid_reason\": \"interpenetration: 4 vertices of body `a`"));
    // Without body–body contact the scene lets them pass through each other: counted only.
    let scene = supple_io::parse_scene(OVERLAPPING, std::path::Path::new("o.toml")).unwrap();
    let report = run_scene(&scene, &opts("overlap_ghosts"), &mut Silent).unwrap();
    assert_eq!(report.outcome, RunOutcome::Finished);
    assert_eq!(report.summary.interpenetrating_vertices_end, 8);
    assert!(!report.summary.invalid && report.summary.invalid_reason.is_none());
}

/// Issue 45 item 13: every float of metrics.csv is in the shortest form that reads back to
/// the same `f64`, so a value read from the file is the computed one to the last bit.
#[test]
fn metrics_floats_read_back_bitwise() {
    let out = out_dir("shortest");
    let opts = RunOptions {
        out: Some(out.clone()),
        quiet: true,
        force: false,
    };
    let scene = scene();
    run_scene(&scene, &opts, &mut Silent).unwrap();
    let csv = std::fs::read_to_string(out.join("metrics.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    // Every float cell (not the wall clock, a 0.1 µs reading) is written as Rust's
    // shortest round trip writes it.
    for row in &rows {
        for (name, cell) in header.iter().zip(row) {
            if name.starts_with("wall_ms") || cell.is_empty() || cell.parse::<u64>().is_ok() {
                continue;
            }
            let v: f64 = cell
                .parse()
                .unwrap_or_else(|e| panic!("{name} = {cell}: {e}"));
            assert_eq!(*cell, format!("{v:?}"), "{name}: not the shortest form");
        }
    }
    // The rest volume (row 0) and the kinetic energy after the last step, against the same
    // scene stepped here: equal bit for bit.
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let read = |row: &[&str], name: &str| row[col(name)].parse::<f64>().unwrap();
    let mut world = scene.build_world().unwrap();
    let volume0 = world.bodies[0].volume();
    assert_eq!(read(&rows[0], "bar.volume").to_bits(), volume0.to_bits());
    for _ in 0..scene.steps() {
        world.step().unwrap();
    }
    let last = rows.last().unwrap();
    assert_eq!(read(last, "step") as usize, world.steps);
    let ke = world.bodies[0].kinetic_energy();
    assert!(ke > 0.0);
    assert_eq!(read(last, "bar.kinetic_energy").to_bits(), ke.to_bits());
    let _ = std::fs::remove_dir_all(&out);
}
