//! `supple` with contact: the contact columns of metrics.csv, `max_penetration` in
//! summary.json, and the contact block of `supple bench`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn supple() -> Command {
    Command::new(env!("CARGO_BIN_EXE_supple"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-cli-contact-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn head_on_run_reports_contact_per_step_and_per_body() {
    let out = temp_dir("head_on");
    let status = supple()
        // The projection response's own columns (the default, IPC, reports its pairs in
        // summary.json's `contact.ipc`).
        .args([
            "run",
            "--quiet",
            "--duration",
            "0.1",
            "--set",
            "contact.response=projection",
        ])
        .arg("--out")
        .arg(&out)
        .arg(repo().join("scenes/head_on.toml"))
        .status()
        .unwrap();
    assert!(status.success());
    let csv = std::fs::read_to_string(out.join("metrics.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    };
    let (tested, contacts, pen) = (
        col("contact.pairs_tested"),
        col("contact.contacts"),
        col("contact.max_penetration"),
    );
    let rows: Vec<Vec<f64>> = lines
        .map(|l| {
            l.split(',')
                .map(|c| c.parse().unwrap_or(f64::NAN))
                .collect()
        })
        .collect();
    // The tubes start 10 cm apart at 4 m/s closing speed: they meet within 0.1 s.
    assert!(rows.iter().any(|r| r[contacts] > 0.0 && r[tested] > 0.0));
    assert!(rows.iter().all(|r| r[pen] >= 0.0));
    let s = json(&out.join("summary.json"));
    for b in s["bodies"].as_array().unwrap() {
        let p = b["max_penetration"].as_f64().unwrap();
        assert!(p > 0.0 && p < 0.05, "{p}");
    }
    assert_eq!(s["contact"]["broad_phase"], "Bvh");
    // No obstacle: no step is split at an obstacle contact (the key is always written).
    assert_eq!(s["contact_splits"], 0);
    assert_eq!(s["contact"]["unresolved_pairs"], 0);
    assert!(s["contact"]["pairs_tested_mean"].as_f64().unwrap() > 0.0);
}

#[test]
fn scenes_without_contact_have_no_contact_columns() {
    let out = temp_dir("bar");
    let status = supple()
        .args(["run", "--quiet", "--duration", "0.02", "--out"])
        .arg(&out)
        .arg(repo().join("scenes/bar.toml"))
        .status()
        .unwrap();
    assert!(status.success());
    let csv = std::fs::read_to_string(out.join("metrics.csv")).unwrap();
    assert!(!csv.lines().next().unwrap().contains("contact."));
    let s = json(&out.join("summary.json"));
    assert!(s.get("contact").is_none());
    assert!(s["bodies"][0].get("max_penetration").is_none());
}

#[test]
fn bench_reports_the_contact_phase_for_each_broad_phase() {
    let mut pairs = Vec::new();
    for bp in ["sap", "bvh", "brute-force"] {
        let output = supple()
            .args([
                "bench",
                "--steps",
                "5",
                "--warmup",
                "60",
                "--broad-phase",
                bp,
                "--set",
                "contact.response=projection",
            ])
            .arg(repo().join("scenes/head_on.toml"))
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{}",
            String::from_utf8_lossy(&output.stderr)
        );
        let r: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
        let c = &r["contact"];
        assert!(c["ms_median"]["total"].as_f64().unwrap() > 0.0);
        assert!(c["surface_primitives"].as_u64().unwrap() > 1000);
        pairs.push(c["broad_pairs_median"].as_f64().unwrap());
    }
    // The three broad phases find the same candidate pairs.
    assert!(
        pairs[0] > 0.0 && pairs.iter().all(|p| *p == pairs[0]),
        "{pairs:?}"
    );
}
