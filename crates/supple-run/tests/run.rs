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
