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
    let with_contact = format!("{OVERLAPPING}[contact]\nbody_collision = true\n");
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
