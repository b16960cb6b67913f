//! The `supple` program end to end: files written, exit codes, error lines.

use std::path::{Path, PathBuf};
use std::process::Command;

fn supple() -> Command {
    Command::new(env!("CARGO_BIN_EXE_supple"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-cli-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Runs `supple ARGS`, requires success, and parses its standard output as JSON.
fn json_stdout(args: &[&str], scene: Option<&Path>) -> serde_json::Value {
    let mut cmd = supple();
    cmd.args(args);
    if let Some(scene) = scene {
        cmd.arg(scene);
    }
    let output = cmd.output().unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn json(path: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn run_writes_frames_metrics_and_summary() {
    let out = temp_dir("run");
    let status = supple()
        .args(["run", "--quiet", "--duration", "0.2", "--out"])
        .arg(&out)
        .arg(repo().join("scenes/bar.toml"))
        .status()
        .unwrap();
    assert!(status.success());
    // 20 steps, a frame every 2 steps, plus the initial frame.
    let frames = std::fs::read_dir(out.join("frames")).unwrap().count();
    assert_eq!(frames, 11);
    let pvd = std::fs::read_to_string(out.join("scene.pvd")).unwrap();
    assert_eq!(pvd.matches("<DataSet").count(), 11);
    let csv = std::fs::read_to_string(out.join("metrics.csv")).unwrap();
    let lines: Vec<_> = csv.lines().collect();
    assert_eq!(lines.len(), 12);
    assert!(lines[0]
        .starts_with("step,time,wall_ms_step,retried_steps,dt_min,bar.volume,bar.kinetic_energy,bar.elastic_energy"));
    assert!(lines[0].ends_with("tip.x,tip.y,tip.z"));
    let s = json(&out.join("summary.json"));
    assert_eq!(s["scene"], "bar");
    assert_eq!(s["steps"], 20);
    assert_eq!(s["diverged"], false);
    assert!((s["sim_time"].as_f64().unwrap() - 0.2).abs() < 1e-12);
    assert!(s["wall_ms_per_step_median"].as_f64().unwrap() > 0.0);
    let b = &s["bodies"][0];
    assert_eq!(
        (
            b["name"].as_str(),
            b["vertices"].as_u64(),
            b["tets"].as_u64()
        ),
        (Some("bar"), Some(176), Some(450))
    );
    for key in [
        "volume_rest",
        "volume_final",
        "volume_max_rel_change",
        "min_tet_volume_ratio",
    ] {
        assert!(b[key].is_number(), "{key}");
    }
    let tip = &s["probes"][0];
    assert_eq!(tip["name"], "tip");
    // The tip falls: its lowest y is below its rest y and equals min over the run.
    assert!(tip["min"][1].as_f64().unwrap() < tip["rest"][1].as_f64().unwrap() - 0.01);
    assert!(tip["final"][1].as_f64().unwrap() >= tip["min"][1].as_f64().unwrap());
}

#[test]
fn a_diverging_run_keeps_its_frames_and_exits_with_status_2() {
    let dir = temp_dir("diverge");
    // A clamped bar thrown at 1e7 m/s tears apart in the first step.
    let scene = std::fs::read_to_string(repo().join("scenes/bar.toml"))
        .unwrap()
        .replace("name = \"bar\"\ndt", "name = \"thrown\"\ndt")
        .replace("fixed = [", "velocity = [0.0, 1e7, 0.0]\nfixed = [");
    let path = dir.join("thrown.toml");
    std::fs::write(&path, scene).unwrap();
    let out = dir.join("out");
    let output = supple()
        .args(["run", "--quiet", "--out"])
        .arg(&out)
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.contains("body `bar` diverged at step 1"), "{stderr}");
    assert!(out.join("frames/frame_00000.vtu").exists());
    let s = json(&out.join("summary.json"));
    assert_eq!(s["diverged"], true);
    assert_eq!(s["diverged_step"], 1);
    assert_eq!(s["diverged_body"], "bar");
}

#[test]
fn a_bad_scene_names_file_and_key_and_exits_with_status_1() {
    let dir = temp_dir("bad");
    let path = dir.join("bad.toml");
    let scene = std::fs::read_to_string(repo().join("scenes/bar.toml"))
        .unwrap()
        .replace("poisson = 0.33", "poisson = 0.5");
    std::fs::write(&path, scene).unwrap();
    let output = supple()
        .args(["run", "--quiet"])
        .arg(&path)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("bad.toml: body[0].material.poisson = 0.5: must be below 0.5"),
        "{stderr}"
    );
}

#[test]
fn bench_prints_json_with_a_phase_breakdown() {
    let r = json_stdout(
        &["bench", "--steps", "5", "--warmup", "1"],
        Some(&repo().join("scenes/bar.toml")),
    );
    assert_eq!(r["steps"], 5);
    for key in ["median", "min", "mean"] {
        assert!(r["wall_ms_per_step"][key].as_f64().unwrap() > 0.0);
    }
    for key in ["forces", "assembly", "solve"] {
        assert!(r["phases_ms_median"][key].is_number());
    }
    assert!(r["solver_iterations"]["mean"].as_f64().unwrap() > 0.0);
    assert_eq!(r["bodies"][0]["tets"], 450);
    // The SpMV beside STREAM's triad at its footprint, and the main-memory triad.
    let spmv = &r["spmv"][0];
    let ratio = spmv["gb_per_s"].as_f64().unwrap() / spmv["triad_gb_per_s"].as_f64().unwrap();
    assert!((spmv["of_triad"].as_f64().unwrap() - ratio).abs() < 1e-12 * ratio);
    let main = &r["triad_main_memory"];
    assert!(main["bytes"].as_u64().unwrap() >= (3 << 26) - 24);
    assert!(main["gb_per_s"].as_f64().unwrap() > 0.0);
    // The gentle bar sags: no tet near inversion.
    let ratio = r["bodies"][0]["min_volume_ratio_timed"].as_f64().unwrap();
    assert!(ratio > 0.9 && ratio <= 1.0 + 1e-9, "{ratio}");
    assert_eq!(r["bodies"][0]["inverted_tets_end"], 0);
    assert_eq!(r["valid"], true);
    assert!(r.get("invalid_reason").is_none());
}

/// A bench whose body inverts tets during the timed steps says so, in the JSON and on stderr
/// (the linear model under 30 g: its clamped end collapses within a few steps), and refuses
/// the timing (issue 43): `valid: false`, the reason on stderr, exit status 3.
#[test]
fn bench_refuses_the_timing_of_a_collapsing_body() {
    let dir = temp_dir("bench_inverted");
    let path = dir.join("heavy.toml");
    let scene = std::fs::read_to_string(repo().join("scenes/bar.toml"))
        .unwrap()
        .replace(
            "gravity = [0.0, -9.81, 0.0]",
            "gravity = [0.0, -300.0, 0.0]",
        );
    std::fs::write(&path, scene).unwrap();
    let output = supple()
        .args([
            "--threads",
            "1",
            "bench",
            "--model",
            "linear",
            "--steps",
            "5",
            "--warmup",
            "3",
        ])
        .arg(&path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(3), "{stderr}");
    let r: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(r["valid"], false);
    assert!(r["invalid_reason"].as_str().unwrap().contains("body `bar`"));
    assert!(
        stderr.contains("bench: INVALID timing: body `bar`"),
        "{stderr}"
    );
    let body = &r["bodies"][0];
    let ratio = body["min_volume_ratio_timed"].as_f64().unwrap();
    assert!(ratio < 0.0, "{ratio}");
    assert!(body["inverted_tets_end"].as_u64().unwrap() > 0);
    assert!(
        stderr.contains("bench: body `bar` had inverted tets during the timed steps"),
        "{stderr}"
    );
}

/// `--direct-vs-pcg` (Zhuang & Canny §4): both matrices factored and solved to round-off, PCG
/// to its tolerance on the same systems, and the Newmark matrix built as `M + ½Δt D`.
#[test]
fn bench_direct_vs_pcg_solves_both_matrices() {
    let args = "--threads 1 bench --model linear --direct-vs-pcg --rayleigh-alpha 0.5 \
                --rayleigh-beta 0.02";
    let args: Vec<&str> = args.split_whitespace().collect();
    let r = json_stdout(&args, Some(&repo().join("scenes/bar.toml")));
    assert_eq!(r["ordering"], "nd");
    let m = r["matrices"].as_array().unwrap();
    assert_eq!(m.len(), 2);
    let dt = m[0]["dt"].as_f64().unwrap();
    assert!(dt > 0.0 && dt < 0.01, "stable Newmark step {dt}");
    let close = |a: &serde_json::Value, b: f64| (a.as_f64().unwrap() - b).abs() < 1e-12 * b.abs();
    assert!(close(&m[0]["mass_scale"], 1.0 + 0.5 * dt * 0.5));
    assert!(close(&m[0]["stiffness_scale"], 0.5 * dt * 0.02));
    assert!(close(&m[1]["stiffness_scale"], 0.01 * 0.02 + 0.01 * 0.01));
    for m in m {
        for res in m["direct_residual"].as_array().unwrap() {
            assert!(res.as_f64().unwrap() < 1e-12, "{res}");
        }
        for p in m["pcg"].as_array().unwrap() {
            assert_eq!(p["converged"], true);
            let res = p["residual"].as_f64().unwrap();
            let tol = p["tolerance"].as_f64().unwrap();
            assert!(res < 10.0 * tol, "PCG residual {res} for tolerance {tol}");
        }
    }
}

fn decode_png(path: &Path) -> (u32, u32, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut reader = png::Decoder::new(std::io::Cursor::new(bytes))
        .read_info()
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    (info.width, info.height, buf)
}

fn gif_frames(path: &Path) -> usize {
    let mut opts = gif::DecodeOptions::new();
    opts.set_color_output(gif::ColorOutput::RGBA);
    let mut dec = opts.read_info(std::fs::File::open(path).unwrap()).unwrap();
    let mut n = 0;
    while dec.read_next_frame().unwrap().is_some() {
        n += 1;
    }
    n
}

#[test]
fn run_leaves_pictures_and_render_redoes_them() {
    let out = temp_dir("pictures");
    let scene = std::fs::read_to_string(repo().join("scenes/bar.toml"))
        .unwrap()
        .replace(
            "vtu = true",
            "vtu = true\npng_every = 5\ngif_fps = 50\nimage_size = [160, 120]\ngif_size = [96, 72]",
        );
    let scene_path = out.join("bar.toml");
    std::fs::write(&scene_path, scene).unwrap();
    let run = out.join("run");
    let status = supple()
        .args(["run", "--quiet", "--duration", "0.2", "--out"])
        .arg(&run)
        .arg(&scene_path)
        .status()
        .unwrap();
    assert!(status.success());
    let (w, h, final_rgb) = decode_png(&run.join("final.png"));
    assert_eq!((w, h), (160, 120));
    assert!(final_rgb.chunks(3).any(|p| p != &final_rgb[..3]), "uniform");
    // 11 output frames (t = 0, 0.02, ..., 0.2): PNGs of frames 0, 5, 10.
    let mut images: Vec<_> = std::fs::read_dir(run.join("images"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    images.sort();
    assert_eq!(
        images,
        ["frame_00000.png", "frame_00005.png", "frame_00010.png"]
    );
    // At 50 fps of simulated time, one GIF frame per output frame (0.02 s apart).
    assert_eq!(gif_frames(&run.join("animation.gif")), 11);
    for plot in ["volume", "energy", "probes", "solver"] {
        let (w, h, _) = decode_png(&run.join("plots").join(format!("{plot}.png")));
        assert!(w >= 400 && h >= 300, "{plot}: {w}×{h}");
    }
    let csv = std::fs::read_to_string(run.join("metrics.csv")).unwrap();
    assert!(csv.starts_with("step,time,wall_ms_step,retried_steps,dt_min,bar.volume,bar.kinetic_energy,bar.elastic_energy,bar.potential_energy,"));
    let vtu = std::fs::read_to_string(run.join("frames/frame_00010.vtu")).unwrap();
    assert!(vtu.contains(r#"Name="von_mises""#));

    // `supple render` from the VTU frames: same camera and colours give the same final.png;
    // other options take effect.
    std::fs::remove_file(run.join("final.png")).unwrap();
    let status = supple()
        .args(["render", "--quiet", "--size", "160x120", "--gif", "false"])
        .arg(&run)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(
        decode_png(&run.join("final.png")).2 == final_rgb,
        "render ≠ run"
    );
    assert!(!run.join("animation.gif").exists());
    let status = supple()
        .args([
            "render",
            "--quiet",
            "--size",
            "200x100",
            "--color",
            "von_mises",
            "--azimuth",
            "-60",
            "--gif-fps",
            "10",
            "--gif",
            "true",
            "--no-plots",
        ])
        .arg(&run)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(decode_png(&run.join("final.png")).0, 200);
    assert_eq!(gif_frames(&run.join("animation.gif")), 3);
    let bad = supple()
        .args(["render", "--quiet"])
        .arg(out.join("nowhere"))
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("scene.pvd"));
    let _ = std::fs::remove_dir_all(&out);
}
