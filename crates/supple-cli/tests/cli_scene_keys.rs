//! The user's program: `supple schema`, `supple run --set KEY=VALUE`, a scene with only a mesh
//! and a model, and a help that lists the user's commands and no research tooling.

use std::path::PathBuf;
use std::process::Command;

fn supple() -> Command {
    Command::new(env!("CARGO_BIN_EXE_supple"))
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-cli-keys-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const MINIMAL: &str = "[[body]]\n\
    mesh = { kind = \"box\", cells = [3, 1, 1], cell_size = 0.1 }\n\
    material = { model = \"corotational\" }\n";

#[test]
fn schema_into_a_pipe_closed_early_exits_0_without_a_panic() {
    // `supple schema | head`: the schema (73 kB) is more than a pipe holds, so the write
    // meets the closed pipe.
    use std::io::Read;
    let mut child = supple()
        .arg("schema")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 16];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn schema_prints_the_scene_format_with_its_defaults() {
    let o = supple().arg("schema").output().unwrap();
    assert!(o.status.success());
    let s: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(s["title"], "Supple scene");
    assert_eq!(s["properties"]["dt"]["default"], 0.01);
    assert_eq!(s["properties"]["duration"]["default"], 1.0);
    let material = &s["definitions"]["MaterialSection"];
    assert_eq!(material["properties"]["density"]["default"], 1000.0);
    assert_eq!(material["required"], serde_json::json!(["model"]));
    assert_eq!(
        s["definitions"]["BodySection"]["required"],
        serde_json::json!(["mesh", "material"])
    );
}

#[test]
fn run_takes_a_minimal_scene_and_set_overrides() {
    let dir = temp_dir("set");
    let scene = dir.join("minimal.toml");
    std::fs::write(&scene, MINIMAL).unwrap();
    let o = supple()
        .args(["run", "--quiet", "--duration", "0.05"])
        .args(["--set", "dt=0.025", "--set", "body[0].material.youngs=2e5"])
        .args(["--set", "output.vtu=false", "--set", "output.plots=false"])
        .arg("--out")
        .arg(dir.join("out"))
        .arg(&scene)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/summary.json")).unwrap())
            .unwrap();
    assert_eq!(
        (summary["dt"].as_f64(), summary["steps"].as_u64()),
        (Some(0.025), Some(2))
    );

    for (set, message) in [
        (
            "body[2].material.youngs=2e5",
            "--set body[2].material.youngs: `body[2]`: the scene has 1 (body[0] to body[0])",
        ),
        (
            "body[0].material.yungs=2e5",
            "unknown field `yungs` (did you mean `youngs`?)",
        ),
        ("dt", "`dt`: expected KEY=VALUE"),
    ] {
        let o = supple()
            .args(["run", "--quiet", "--set", set])
            .arg(&scene)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_ne!(o.status.code(), Some(0), "{set}");
        assert!(err.contains(message), "{set}: {err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn help_lists_the_users_commands_only() {
    let o = supple().arg("--help").output().unwrap();
    let help = String::from_utf8_lossy(&o.stdout).to_lowercase();
    for command in ["run", "bench", "render", "mesh", "modes", "schema"] {
        assert!(help.contains(&format!("  {command} ")), "{command}: {help}");
    }
    for research in ["experiment", "order", "hauth", "stress", "issue"] {
        assert!(!help.contains(research), "{research}: {help}");
    }
}
