//! `supple run` and `supple bench` on a scene with `[adaptive]` (Debunne et al. 2000): the
//! files a run writes (active mesh per frame with its levels, metrics, pictures) and the
//! bench's JSON.

use std::path::{Path, PathBuf};
use std::process::Command;

fn supple() -> Command {
    Command::new(env!("CARGO_BIN_EXE_supple"))
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-cli-adaptive-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A 2-level cube (2 and 4 cells) poked for 0.3 s: small enough for a debug build.
const SCENE: &str = r#"name = "tiny_poke"
dt = 0.02
duration = 0.3
gravity = [0.0, 0.0, 0.0]
[output]
png_every = 5
gif_size = [160, 120]
image_size = [160, 120]
[[body]]
mesh = { kind = "box", cells = [2, 2, 2], cell_size = 0.5 }
material = { model = "linear", lambda = 4.0e4, mu = 1.0e5, density = 1000.0 }
fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [0.0, -1.0, 0.0] } }]
[adaptive]
levels = 2
phi = 40.0
psi = 100.0
split = 0.15
merge = 0.04
[adaptive.tool]
radius = 0.15
path = [[0.0, 0.5, 1.15, 0.5], [0.3, 0.5, 1.0, 0.5]]
"#;

#[test]
fn run_writes_the_active_mesh_per_frame_metrics_and_level_pictures() {
    let dir = temp_dir("run");
    let scene = dir.join("tiny_poke.toml");
    std::fs::write(&scene, SCENE).unwrap();
    let out = dir.join("out");
    let status = supple()
        .args(["--threads", "1", "run", "--quiet", "--out"])
        .arg(&out)
        .arg(&scene)
        .status()
        .unwrap();
    assert!(status.success());
    let pvd = std::fs::read_to_string(out.join("scene.pvd")).unwrap();
    assert_eq!(pvd.matches("<DataSet").count(), 16, "frames 0..=15");
    let vtu = std::fs::read_to_string(out.join("frames/frame_00015.vtu")).unwrap();
    for name in ["level", "active_nodes", "displacement", "active"] {
        assert!(vtu.contains(&format!(r#"Name="{name}""#)), "{name}");
    }
    let csv = std::fs::read_to_string(out.join("metrics.csv")).unwrap();
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 16, "header and 15 frames");
    assert!(lines[0].starts_with("frame,time,active_0,active_1,node_updates,splits,merges,splits_refused,overrun_warning,active_mass,momentum_x"));
    assert!(lines[0].contains("tool_fy"));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["frames"], 15);
    assert_eq!(summary["diverged"], false);
    assert!(
        summary["splits"].as_u64().unwrap() > 0,
        "the poke refines: {summary}"
    );
    for f in [
        "final.png",
        "animation.gif",
        "images/frame_00000.png",
        "images/frame_00015.png",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
}

#[test]
fn bench_reports_frames_per_second_and_bad_keys_fail_naming_them() {
    let dir = temp_dir("bench");
    let scene = dir.join("tiny_poke.toml");
    std::fs::write(&scene, SCENE).unwrap();
    let output = supple()
        .args(["--threads", "1", "bench", "--steps", "5", "--warmup", "1"])
        .arg(&scene)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let j: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(j["frames"], 5);
    assert_eq!(j["threads"], 1);
    assert!(j["fps"]["median"].as_f64().unwrap() > 0.0);
    assert!(
        j["wall_ms_per_frame"]["max"].as_f64().unwrap()
            >= j["wall_ms_per_frame"]["median"].as_f64().unwrap()
    );
    let bad = dir.join("bad.toml");
    std::fs::write(&bad, SCENE.replace("merge = 0.04", "merge = 0.5")).unwrap();
    let output = supple()
        .arg("run")
        .arg(&bad)
        .arg("--out")
        .arg(dir.join("o"))
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let e = String::from_utf8_lossy(&output.stderr);
    assert!(
        e.contains("bad.toml") && e.contains("adaptive.split"),
        "{e}"
    );
    assert!(!Path::new(&dir.join("o").join("metrics.csv")).exists());
}
