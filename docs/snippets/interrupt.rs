// Stop a run from your own code (as Ctrl-C stops `supple run`) and read what it left:
// the files are complete up to the last step, and summary.json says it was interrupted.
use std::path::Path;
use supple_run::{run_scene, Progress, RunOptions, RunOutcome};

/// Asks the run to stop once `limit` steps are done.
struct StopAfter {
    done: usize,
    limit: usize,
}

impl Progress for StopAfter {
    fn stop_requested(&mut self) -> bool {
        self.done + 1 >= self.limit
    }
    fn step_done(&mut self) {
        self.done += 1;
    }
}

const SCENE: &str = r#"
dt = 0.01
duration = 10.0
[output]
frame_every = 5
gif = false
plots = false
[[body]]
name = "bar"
mesh = { kind = "box", cells = [4, 1, 1], cell_size = 0.1 }
material = { model = "corotational", youngs = 1e5, poisson = 0.33, density = 1000.0 }
fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }]
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scene = supple_io::parse_scene(SCENE, Path::new("long.toml"))?;
    let out = std::env::temp_dir().join("supple-guide-interrupt");
    let opts = RunOptions {
        out: Some(out.clone()),
        quiet: true,
        force: false,
    };
    let report = run_scene(&scene, &opts, &mut StopAfter { done: 0, limit: 40 })?;
    assert_eq!(report.outcome, RunOutcome::Interrupted);
    assert!(report.summary.interrupted);

    // metrics.csv: a header and one row per output frame, every row on disk.
    let metrics = std::fs::read_to_string(out.join("metrics.csv"))?;
    let mut rows = metrics.lines();
    let header: Vec<&str> = rows.next().expect("a header").split(',').collect();
    let time = header
        .iter()
        .position(|c| *c == "time")
        .expect("a time column");
    let last = rows
        .last()
        .expect("rows")
        .split(',')
        .nth(time)
        .expect("a time");
    println!(
        "stopped after {} steps; the last row is at t = {last} s",
        report.summary.steps
    );
    Ok(())
}
