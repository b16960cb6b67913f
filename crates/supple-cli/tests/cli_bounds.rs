//! Issue 19, bounded resources: every reproducer of the issue is refused before it runs (or
//! bounded), with the key and the estimate, never a panic or an abort; usage errors have
//! their own exit status.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn supple() -> Command {
    Command::new(env!("CARGO_BIN_EXE_supple"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-bounds-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// scenes/bar.toml with `from` replaced by `to`, run into a fresh folder.
fn run_bar(name: &str, from: &str, to: &str, extra: &[&str]) -> (Output, PathBuf) {
    let dir = temp_dir(name);
    let text = std::fs::read_to_string(repo().join("scenes/bar.toml")).unwrap();
    assert!(text.contains(from), "{from}");
    let scene = dir.join("scene.toml");
    std::fs::write(&scene, text.replacen(from, to, 1)).unwrap();
    let out = dir.join("out");
    let o = supple()
        .args(["run", "--quiet", "--out"])
        .arg(&out)
        .args(extra)
        .arg(&scene)
        .output()
        .unwrap();
    (o, out)
}

fn refused(o: &Output, out: &Path, needles: &[&str]) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` not in: {err}");
    }
    assert!(!out.exists(), "a refused run wrote {}", out.display());
}

#[test]
fn tiny_dt_is_refused_before_writing() {
    let (o, out) = run_bar("dt", "dt = 0.01", "dt = 1e-308", &[]);
    refused(&o, &out, &["dt = 1e-308", "inf steps"]);
    // Finite but far too many frames: the estimate names the output and its size.
    let (o, out) = run_bar("dt2", "dt = 0.01", "dt = 2e-7", &[]);
    refused(&o, &out, &["15000000 steps", "frames/*.vtu", "GB"]);
}

#[test]
fn huge_and_overflowing_meshes_are_refused_with_their_key() {
    let box_cells = "cells = [10, 3, 3]";
    for (cells, needle) in [
        ("cells = [10, 3, 4294967296]", "32 bits"),
        ("cells = [100000, 1000, 1]", "to simulate"),
        ("cells = [18446744073709551615, 2, 2]", "overflows"),
    ] {
        let (o, out) = run_bar("mesh", box_cells, cells, &[]);
        // An integer past TOML's i64 fails the TOML parse itself: the place is the file's
        // line and column, not the key path.
        let place = if needle == "overflows" {
            "scene.toml:"
        } else {
            "body[0].mesh.cells"
        };
        refused(&o, &out, &[place, needle]);
    }
}

#[test]
fn huge_iteration_limits_are_refused_with_their_key() {
    let kind = r#"kind = "backward_euler_linearized""#;
    let (o, out) = run_bar(
        "newton",
        kind,
        "kind = \"backward_euler\"\nnewton_max_iterations = 4294967295",
        &[],
    );
    refused(
        &o,
        &out,
        &["integrator.newton_max_iterations = 4294967295", "10000"],
    );
    let (o, out) = run_bar(
        "cg",
        "max_iterations = 1000",
        "max_iterations = 4294967295",
        &[],
    );
    refused(&o, &out, &["solver.max_iterations = 4294967295"]);
}

#[test]
fn big_gifs_need_force() {
    let (o, out) = run_bar(
        "gif",
        "vtu = true",
        "vtu = true\ngif = true\ngif_size = [8192, 8192]",
        &[],
    );
    refused(&o, &out, &["animation.gif", "--force"]);
}

#[test]
fn thread_counts_are_capped_with_a_note() {
    let dir = temp_dir("threads");
    let o = supple()
        .args([
            "--threads",
            "5000",
            "run",
            "--quiet",
            "--duration",
            "0.02",
            "--out",
        ])
        .arg(dir.join("out"))
        .arg(repo().join("scenes/bar.toml"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("--threads 5000 capped at"), "{err}");
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out/summary.json")).unwrap())
            .unwrap();
    let cores = std::thread::available_parallelism().map_or(1, usize::from) as u64;
    assert!(summary["threads"].as_u64().unwrap() <= 4 * cores);
}

#[test]
fn usage_errors_have_their_own_status() {
    let o = supple().args(["run", "--bogus"]).output().unwrap();
    assert_eq!(o.status.code(), Some(64));
    let o = supple().args(["frobnicate"]).output().unwrap();
    assert_eq!(o.status.code(), Some(64));
    let o = supple().arg("--help").output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&o.stdout).contains("Usage"));
}
