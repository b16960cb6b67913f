// A scene from TOML text, run the way `supple run` runs it: frames, metrics.csv,
// summary.json and pictures in a folder (the supple-io and supple-run crates).
use std::path::Path;
use supple_run::{run_scene, RunOptions, RunOutcome, Silent};

const SCENE: &str = r#"
dt = 0.01
duration = 0.2
[output]
gif = false
plots = false
[[body]]
name = "bar"
mesh = { kind = "box", cells = [4, 1, 1], cell_size = 0.1 }
material = { model = "corotational", youngs = 1e5, poisson = 0.33, density = 1000.0 }
fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }]
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The path names the scene in error messages and anchors relative mesh paths;
    // `supple_io::load_scene(path)` reads a file instead.
    let scene = supple_io::parse_scene(SCENE, Path::new("bar.toml"))?;
    let out = std::env::temp_dir().join("supple-guide-run-scene");
    let opts = RunOptions {
        out: Some(out.clone()),
        quiet: true,
        force: false,
    };
    let report = run_scene(&scene, &opts, &mut Silent)?;
    assert_eq!(report.outcome, RunOutcome::Finished);
    println!("{} steps, files in {}", report.summary.steps, out.display());
    assert!(out.join("summary.json").is_file() && out.join("scene.pvd").is_file());
    Ok(())
}
