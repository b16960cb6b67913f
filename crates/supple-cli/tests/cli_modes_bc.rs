//! `supple modes` and the loads/constraints outputs of `supple run` (issue 13).

use std::path::{Path, PathBuf};
use std::process::Command;

fn supple() -> Command {
    Command::new(env!("CARGO_BIN_EXE_supple"))
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-cli-bc-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

const BAR: &str = r#"
dt = 1.0
duration = 1.0
gravity = [0.0, 0.0, 0.0]
[output]
vtu = false
png_every = 0
gif = false
plots = false
[[body]]
name = "bar"
mesh = { kind = "box", cells = [6, 2, 2], cell_size = 0.05 }
material = { model = "stvk", youngs = 1e6, poisson = 0.3, density = 1000.0 }
"#;

#[test]
fn modes_of_a_free_body_show_six_rigid_modes_and_write_shapes() {
    let dir = temp_dir("modes");
    let scene = dir.join("free.toml");
    std::fs::write(&scene, BAR).unwrap();
    let out = dir.join("modes");
    let output = supple()
        .args(["modes", "--count", "8", "--json", "--out"])
        .arg(&out)
        .arg(&scene)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let modes = v[0]["modes"].as_array().unwrap();
    assert_eq!(modes.len(), 8);
    let f: Vec<f64> = modes
        .iter()
        .map(|m| m["frequency_hz"].as_f64().unwrap())
        .collect();
    assert!(f[6] > 1.0, "{f:?}");
    assert!(f[..6].iter().all(|x| x.abs() < 1e-4 * f[6]), "{f:?}");
    assert!(out.join("modes.json").exists());
    let vtu = std::fs::read_to_string(out.join("bar_modes.vtu")).unwrap();
    assert!(vtu.contains("mode_1") && vtu.contains("mode_8"));
}

#[test]
fn a_static_run_reports_reactions_and_no_energy_drift() {
    let dir = temp_dir("static");
    let scene = dir.join("static.toml");
    let text = format!(
        r#"{BAR}
[integrator]
kind = "static"
load_steps = 2
newton_tolerance = 1e-10
[solver]
kind = "cholesky"
[[constraint]]
name = "clamp"
region = {{ plane = {{ point = [0.0, 0.0, 0.0], normal = [1.0, 0.0, 0.0] }} }}
[[load]]
name = "tip"
region = {{ plane = {{ point = [0.3, 0.0, 0.0], normal = [1.0, 0.0, 0.0] }} }}
force = [0.0, -2.0, 1.0]
"#
    );
    std::fs::write(&scene, text).unwrap();
    let out = dir.join("run");
    let status = supple()
        .args(["run", "-q", "--out"])
        .arg(&out)
        .arg(&scene)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(0));
    let s = json(&out.join("summary.json"));
    assert_eq!(s["newton_unconverged_steps"], 0);
    assert!(s.get("energy_rel_drift_max").is_none(), "{s}");
    let r = &s["bodies"][0]["reactions"][0];
    assert_eq!(r["name"], "clamp");
    let f: Vec<f64> = r["force"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    assert!(
        (f[0]).abs() < 1e-8 && (f[1] - 2.0).abs() < 1e-8 && (f[2] + 1.0).abs() < 1e-8,
        "{f:?}"
    );
    let csv = std::fs::read_to_string(out.join("metrics.csv")).unwrap();
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .contains("bar.clamp.reaction_fy"));

    // The same scene with one Newton iteration allowed: the equilibrium is not reached, and
    // the run says so and exits 2.
    let text = std::fs::read_to_string(&scene)
        .unwrap()
        .replace(
            "newton_tolerance = 1e-10",
            "newton_tolerance = 1e-10\nnewton_max_iterations = 1",
        )
        .replace("force = [0.0, -2.0, 1.0]", "force = [0.0, -200.0, 100.0]");
    std::fs::write(&scene, text).unwrap();
    let status = supple()
        .args(["run", "-q", "--out"])
        .arg(&out)
        .arg(&scene)
        .status()
        .unwrap();
    assert_eq!(status.code(), Some(2));
    let s = json(&out.join("summary.json"));
    assert!(s["newton_unconverged_steps"].as_u64().unwrap() >= 1, "{s}");
    assert_eq!(s["diverged"], true);
}
