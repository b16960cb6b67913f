//! Issue 46's "verdicts that never lie": runs that end broken exit with status 3 and say why
//! in `summary.json`, with every file written; healthy runs still exit 0. The broken runs are
//! the issue's own (*Why*): the head-on crash of the tubes at ±10 m/s with dt = 10 ms, the
//! self-fold bar thrown at 10 m/s, and the St.Venant–Kirchhoff tube drop whose energy spikes
//! from 31 J to 16.7 kJ. They end broken with the projection response (`--set
//! contact.response=projection`: each body solved alone, then pushed apart); with the default
//! response, the coupled IPC step, the crashes end valid and exit 0 and the StVK drop creates
//! no energy.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-verdict-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The projection response, as `--set` arguments of [`run_modified`].
const PROJECTION: &[&str] = &["--set", "contact.response=projection"];
/// The projection response with Eisenstat SSOR, the preconditioner of the runs issue 46
/// measured: the StVK drop's blow-up (16.7 kJ in one step) follows the solves' rounding, and
/// `auto`, which may choose another candidate on the tube, takes another path (its spike is
/// 17.6 J over a scale of 82 J: seen by the verdict as well, but not the case measured).
const PROJECTION_ES: &[&str] = &[
    "--set",
    "contact.response=projection",
    "--set",
    "solver.preconditioner=eisenstat_ssor",
];

/// Runs bundled scene `scene` with the replacements `from=>to` in its text (mesh paths made
/// absolute) and the extra arguments `args`, with one thread; returns the output and the
/// parsed summary.
fn run_modified(
    name: &str,
    scene: &str,
    extra: &[&str],
    args: &[&str],
) -> (Output, serde_json::Value) {
    let dir = temp_dir(name);
    let text = std::fs::read_to_string(repo().join("scenes").join(scene)).unwrap();
    let text = text.replace(
        "path = \"meshes/",
        &format!("path = \"{}/scenes/meshes/", repo().display()),
    );
    let modified = extra.iter().fold(text, |t, kv| {
        let (from, to) = kv.split_once("=>").unwrap();
        assert!(t.contains(from), "{from} not in {scene}");
        t.replace(from, to)
    });
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, modified).unwrap();
    let out = dir.join("out");
    let output = Command::new(env!("CARGO_BIN_EXE_supple"))
        .args(["--threads", "1", "run", "--quiet", "--out"])
        .arg(&out)
        .args(args)
        .arg(&path)
        .output()
        .unwrap();
    let summary =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert!(out.join("metrics.csv").exists() && out.join("scene.pvd").exists());
    (output, summary)
}

fn rules(s: &serde_json::Value) -> Vec<&str> {
    s["invalid_rules"]
        .as_array()
        .map(|a| a.iter().map(|r| r.as_str().unwrap()).collect())
        .unwrap_or_default()
}

fn count(s: &serde_json::Value, key: &str) -> u64 {
    s[key].as_u64().unwrap_or_else(|| panic!("no {key} in {s}"))
}

#[test]
fn the_head_on_crash_at_10_m_per_s_ends_broken_and_exits_3() {
    // Issue 46: the tubes at ±10 m/s with dt = 10 ms end inside each other, crushed and
    // folded through themselves (0.4 s: the whole crash and the rebound).
    let crash = [
        "dt = 0.001=>dt = 0.01",
        "velocity = [2.0,=>velocity = [10.0,",
        "velocity = [-2.0,=>velocity = [-10.0,",
    ];
    let (output, s) = run_modified("head_on_10_ipc", "head_on.toml", &crash, &[]);
    assert_eq!(output.status.code(), Some(0), "the default response: {s}");
    assert_eq!(s["contact"]["response"], "ipc");
    assert_eq!(count(&s, "interpenetrating_vertices_end"), 0);
    assert_eq!(count(&s, "inverted_tets_end"), 0);
    let (output, s) = run_modified("head_on_10", "head_on.toml", &crash, PROJECTION);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    assert_eq!(s["diverged"], false);
    assert_eq!(s["invalid"], true);
    assert_eq!(s["steps"], 40);
    let r = rules(&s);
    for rule in ["interpenetration", "inverted_tets"] {
        assert!(r.contains(&rule), "{r:?}");
    }
    assert!(count(&s, "interpenetrating_vertices_end") > 0);
    assert!(
        count(&s, "interpenetrating_vertices_max") >= count(&s, "interpenetrating_vertices_end")
    );
    assert!(count(&s, "inverted_tets_end") > 100);
    assert!(count(&s, "self_intersections_end") > 0);
    let reason = s["invalid_reason"].as_str().unwrap();
    assert!(
        reason.contains("inside another body") && reason.contains("inverted"),
        "{reason}"
    );
    assert!(stderr.contains("invalid: interpenetration"), "{stderr}");
    // The frames are all written: the initial one and every 10th step.
    let frames = std::fs::read_dir(temp_dir_out("head_on_10").join("frames"))
        .unwrap()
        .count();
    assert_eq!(frames, 2 * 5, "two tubes × five frames");
}

/// The output folder of [`run_modified`]'s run `name` (without clearing it).
fn temp_dir_out(name: &str) -> PathBuf {
    std::env::temp_dir()
        .join(format!("supple-verdict-test-{}-{name}", std::process::id()))
        .join("out")
}

#[test]
fn the_bar_thrown_onto_the_rod_ends_folded_through_itself_and_exits_3() {
    // Issue 46: `self_fold` thrown down at 10 m/s (0.3 s) ends inside out in places.
    let thrown = [
        "duration = 2.0=>duration = 0.3",
        "damping = { alpha = 1.0, beta = 0.0 }=>damping = { alpha = 1.0, beta = 0.0 }\nvelocity = [0.0, -10.0, 0.0]",
    ];
    let (output, s) = run_modified("self_fold_10_ipc", "self_fold.toml", &thrown, &[]);
    assert_eq!(output.status.code(), Some(0), "the default response: {s}");
    assert_eq!(count(&s, "inverted_tets_end"), 0);
    let (output, s) = run_modified("self_fold_10", "self_fold.toml", &thrown, PROJECTION);
    assert_eq!(output.status.code(), Some(3), "{s}");
    let r = rules(&s);
    for rule in ["self_intersection", "inverted_tets"] {
        assert!(r.contains(&rule), "{r:?}");
    }
    assert!(count(&s, "inverted_tets_end") > 0);
}

#[test]
fn the_stvk_tube_drop_creates_energy_and_exits_3() {
    // Issue 46: the St.Venant–Kirchhoff tube drop's total energy jumps in one step from about
    // the 31 J released (to 16.7 kJ when an unconverged step was halved at most twice; by
    // 80 J, 47 % of the run's energy scale, with the default three halvings);
    // energy_rel_drift_max cannot see it, the largest rise per step relative to the energy
    // scale does.
    let stvk = ["model = \"warped\"=>model = \"stvk\""];
    // With the default response (IPC) no energy is created. St.Venant–Kirchhoff has no
    // resistance to inversion, so a few tets may end inside out at the landing (whether they
    // do changes with the Newton path): then the verdict says so, and only that.
    let (output, s) = run_modified("stvk_drop_ipc", "tube_drop.toml", &stvk, &[]);
    assert!(s["energy_rise_max"].as_f64().unwrap() < 0.01, "{s}");
    match output.status.code() {
        Some(0) => {}
        Some(3) => assert_eq!(rules(&s), ["inverted_tets"], "{s}"),
        other => panic!("the default response: exit {other:?}: {s}"),
    }
    let (output, s) = run_modified("stvk_drop", "tube_drop.toml", &stvk, PROJECTION_ES);
    assert_eq!(output.status.code(), Some(3), "{s}");
    assert!(rules(&s).contains(&"energy_created"), "{s}");
    // 0.48 of the scale in one step (the verdict's tolerance is 0.05), a scale the spike
    // itself sets (168 J, five times the energy released).
    let rise = s["energy_rise_max"].as_f64().unwrap();
    assert!(rise > 0.25, "{rise}");
    assert!(s["energy_scale"].as_f64().unwrap() > 100.0, "{s}");
    assert!(s["invalid_reason"]
        .as_str()
        .unwrap()
        .contains("energy created"));
    // The same drop with the corotational model is healthy: no energy created.
    let (output, s) = run_modified(
        "corotational_drop",
        "tube_drop.toml",
        &["model = \"warped\"=>model = \"corotational\""],
        PROJECTION,
    );
    assert_eq!(output.status.code(), Some(0), "{s}");
    assert!(s["energy_rise_max"].as_f64().unwrap() < 0.01, "{s}");
    assert_eq!(count(&s, "energy_rise_steps"), 150);
}

#[test]
fn healthy_runs_exit_0_with_nothing_invalid() {
    // The clamped bar, and the head-on tubes at their bundled ±2 m/s (contact that works).
    for (scene, duration) in [("bar.toml", "0.5"), ("head_on.toml", "0.4")] {
        let out = temp_dir(scene).join("out");
        let output = Command::new(env!("CARGO_BIN_EXE_supple"))
            .args(["run", "--quiet", "--duration", duration, "--out"])
            .arg(&out)
            .arg(repo().join("scenes").join(scene))
            .output()
            .unwrap();
        let text = std::fs::read_to_string(out.join("summary.json")).unwrap();
        let s: serde_json::Value = serde_json::from_str(&text).unwrap();
        assert_eq!(output.status.code(), Some(0), "{scene}: {s}");
        assert_eq!(s["invalid"], false, "{scene}");
        assert!(s.get("invalid_reason").is_none(), "{scene}");
        for key in [
            "interpenetrating_vertices_end",
            "interpenetrating_vertices_max",
            "self_intersections_end",
            "inverted_tets_end",
        ] {
            assert_eq!(count(&s, key), 0, "{scene}: {key}");
        }
        assert!(
            s["energy_rise_max"].as_f64().unwrap() < 0.01,
            "{scene}: {s}"
        );
    }
}

#[test]
fn the_verdict_tolerances_are_scene_settings() {
    // The StVK drop with the energy and inversion rules relaxed in the scene: only the
    // self-crossings it also ends with could fail it, and it has none at its end.
    let (output, s) = run_modified(
        "stvk_relaxed",
        "tube_drop.toml",
        &[
            "model = \"warped\"=>model = \"stvk\"",
            "[integrator]=>[step_control]\nmax_energy_rise = inf\nend_inverted_share = 0.1\n\n[integrator]",
        ],
        PROJECTION_ES,
    );
    assert_eq!(output.status.code(), Some(0), "{s}");
    assert!(s["energy_rise_max"].as_f64().unwrap() > 0.25, "{s}");
    assert!(count(&s, "inverted_tets_end") > 0);
}
