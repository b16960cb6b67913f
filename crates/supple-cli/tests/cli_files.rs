//! Issue 19: names that stay inside `--out`, errors said once with their scene key, files
//! that stay valid while a run goes on and after Ctrl-C, full-precision times.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use supple_io::vtu_read::{read_pvd_entries, read_vtu};

fn supple() -> Command {
    Command::new(env!("CARGO_BIN_EXE_supple"))
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-files-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

const BAR: &str = r#"
dt = 0.01
duration = 0.04
[[body]]
name = "bar"
mesh = { kind = "box", cells = [4, 1, 1], cell_size = 0.1 }
material = { model = "corotational", youngs = 1e5, poisson = 0.3, density = 1000.0 }
fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }]
[[probe]]
name = "tip"
point = [0.4, 0.1, 0.1]
"#;

/// Writes `text` as `dir/scene.toml` and runs it into `dir/out`.
fn run_scene(dir: &Path, text: &str, extra: &[&str]) -> Output {
    let scene = dir.join("scene.toml");
    std::fs::write(&scene, text).unwrap();
    supple()
        .args(["run", "--quiet", "--out"])
        .arg(dir.join("out"))
        .args(extra)
        .arg(&scene)
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn unsafe_body_and_probe_names_are_refused_with_their_key() {
    let dir = temp_dir("names");
    let long = "n".repeat(1300);
    let cases = [
        ("name = \"bar\"", "name = \"a,b\"", "body[0].name"),
        ("name = \"bar\"", "name = \"../../x\"", "body[0].name"),
        ("name = \"bar\"", "name = \"a/b\"", "body[0].name"),
        ("name = \"bar\"", "name = \"\"", "body[0].name"),
        (
            "name = \"bar\"",
            &format!("name = \"{long}\""),
            "body[0].name",
        ),
        ("name = \"tip\"", "name = \"t,x\"", "probe[0].name"),
        ("dt = 0.01", "name = \"../up\"\ndt = 0.01", "name = "),
    ];
    for (from, to, key) in cases {
        let text = BAR.replacen(from, to, 1);
        let o = run_scene(&dir, &text, &[]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{to}: {err}");
        assert!(err.contains(key), "{to}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        // Refused before anything was written.
        assert!(!dir.join("out").exists(), "{to}");
    }
}

#[test]
fn a_missing_mesh_names_its_key_and_the_os_reason_once() {
    let dir = temp_dir("missing");
    let text = BAR.replace(
        r#"{ kind = "box", cells = [4, 1, 1], cell_size = 0.1 }"#,
        r#"{ kind = "tetgen", path = "no_such_mesh" }"#,
    );
    let o = run_scene(&dir, &text, &[]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("body[0].mesh.path"), "{err}");
    assert!(err.contains("no_such_mesh.node"), "{err}");
    assert_eq!(err.matches("os error 2").count(), 1, "{err}");
}

#[test]
fn csv_time_has_full_precision_and_multi_body_blocks_are_named() {
    let dir = temp_dir("precision");
    let mut text = BAR.replace("dt = 0.01", "dt = 2e-7").replace(
        "duration = 0.04",
        "duration = 6e-7\n[output]\nplots = false",
    );
    text.push_str(
        &BAR[BAR.find("[[body]]").unwrap()..BAR.find("[[probe]]").unwrap()].replace(
            "name = \"bar\"",
            "name = \"second\"\ntransform = { translate = [0.0, 0.0, 1.0] }",
        ),
    );
    text = text.replace(
        "point = [0.4, 0.1, 0.1]",
        "body = \"bar\"\npoint = [0.4, 0.1, 0.1]",
    );
    let o = run_scene(&dir, &text, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let csv = std::fs::read_to_string(dir.join("out/metrics.csv")).unwrap();
    let times: Vec<f64> = (csv.lines().skip(1))
        .map(|l| l.split(',').nth(1).unwrap().parse().unwrap())
        .collect();
    assert_eq!(times.len(), 4);
    for (k, t) in times.iter().enumerate() {
        assert!((t - 2e-7 * k as f64).abs() < 1e-15, "{csv}");
    }
    let entries = read_pvd_entries(&dir.join("out/scene.pvd")).unwrap();
    assert_eq!(entries.len(), 8);
    for (i, e) in entries.iter().enumerate() {
        assert_eq!(e.part, i % 2);
        let name = ["bar", "second"][i % 2];
        assert_eq!(e.name.as_deref(), Some(name));
        assert!(e.file.starts_with(&format!("frames/{name}_frame_")));
    }
}

/// Lines of `path`, 0 when it does not exist yet.
fn lines(path: &Path) -> usize {
    std::fs::read_to_string(path).map_or(0, |s| s.lines().count())
}

#[test]
fn sigint_mid_run_leaves_a_readable_pvd_metrics_and_an_interrupted_summary() {
    let dir = temp_dir("sigint");
    // 100,000 steps: far longer than the test waits.
    let text = BAR.replace("duration = 0.04", "duration = 1000.0");
    let scene = dir.join("scene.toml");
    std::fs::write(&scene, text).unwrap();
    let out = dir.join("out");
    let mut child = supple()
        .args(["run", "--quiet", "--out"])
        .arg(&out)
        .arg(&scene)
        .spawn()
        .unwrap();
    // While the run goes on: the header and rows are on disk, the collection is valid.
    let started = Instant::now();
    while lines(&out.join("metrics.csv")) < 6 {
        assert!(started.elapsed() < Duration::from_secs(60), "no rows");
        std::thread::sleep(Duration::from_millis(20));
    }
    let during = read_pvd_entries(&out.join("scene.pvd")).unwrap();
    assert!(!during.is_empty());
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(summary["interrupted"], true);
    let steps = summary["steps"].as_u64().unwrap();
    assert!(steps > 0 && steps < 100_000, "{steps}");
    let entries = read_pvd_entries(&out.join("scene.pvd")).unwrap();
    assert!(entries.len() >= during.len());
    // Every listed frame reads back, and the last one is the state the run stopped at.
    for e in &entries {
        let frame = read_vtu(&out.join(&e.file)).unwrap();
        assert_eq!(frame.tets.len(), 20);
    }
    let last_time = entries.last().unwrap().time;
    assert!((last_time - summary["sim_time"].as_f64().unwrap()).abs() < 1e-12);
    let csv = std::fs::read_to_string(out.join("metrics.csv")).unwrap();
    assert!(csv.starts_with("step,time,"));
    let last_row = csv.lines().last().unwrap();
    assert_eq!(last_row.split(',').next().unwrap(), steps.to_string());
}

#[test]
fn a_gmsh_mesh_with_a_region_runs_and_its_notes_reach_the_summary() {
    let dir = temp_dir("gmsh");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../supple-io/tests/data");
    let text = BAR
        .replace(
            r#"{ kind = "box", cells = [4, 1, 1], cell_size = 0.1 }"#,
            &format!(
                r#"{{ kind = "file", path = "{}" }}"#,
                data.join("mixed_gmsh22.msh").display()
            ),
        )
        .replace(
            r#"{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }"#,
            r#"{ region = "clamp" }"#,
        )
        .replace("point = [0.4, 0.1, 0.1]", "point = [0.5, 0.5, 0.5]");
    let o = run_scene(&dir, &text, &[]);
    assert!(o.status.success(), "{}", stderr(&o));
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/summary.json")).unwrap())
            .unwrap();
    let b = &summary["bodies"][0];
    assert_eq!(
        (b["vertices"].as_u64(), b["tets"].as_u64()),
        (Some(27), Some(48))
    );
    assert_eq!(b["fixed_vertices"].as_u64(), Some(9));
    let notes = summary["mesh_notes"].as_array().unwrap();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(notes[0].as_str().unwrap().contains("11 cell(s)"));
}

#[test]
fn load_and_constraint_names_are_refused_like_body_names() {
    let dir = temp_dir("bc-names");
    for (section, key) in [
        (
            "[[constraint]]\nname = \"a,b\"\nregion = { plane = { point = [0.4, 0.0, 0.0], normal = [1.0, 0.0, 0.0] } }\n",
            "constraint[0].name",
        ),
        (
            "[[load]]\nname = \"../x\"\nregion = { plane = { point = [0.4, 0.0, 0.0], normal = [1.0, 0.0, 0.0] } }\nforce = [0.0, -1.0, 0.0]\n",
            "load[0].name",
        ),
    ] {
        let o = run_scene(&dir, &format!("{BAR}{section}"), &[]);
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains(key), "{err}");
        assert!(!dir.join("out").exists());
    }
}
