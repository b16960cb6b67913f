//! Issue 45 (the abuse campaign) as the command line meets it: huge surfaces for `supple
//! mesh`, extreme metrics and mixed meshes for `supple render`, Ctrl-C while the pictures
//! are drawn.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output};
use std::time::{Duration, Instant};

fn supple() -> Command {
    Command::new(env!("CARGO_BIN_EXE_supple"))
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-abuse-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A 12-triangle cube of side `side` as OBJ.
fn cube_obj(side: f64) -> String {
    let mut s = String::new();
    for k in 0..8 {
        let c = |b: usize| if k & b != 0 { side } else { 0.0 };
        s += &format!("v {:e} {:e} {:e}\n", c(1), c(2), c(4));
    }
    for f in [
        "1 3 4", "1 4 2", "5 6 8", "5 8 7", "1 2 6", "1 6 5", "3 7 8", "3 8 4", "1 5 7", "1 7 3",
        "2 4 8", "2 8 6",
    ] {
        s += &format!("f {f}\n");
    }
    s
}

/// Item 5: a cube of side 1e155 panicked in stuffing; a unit cube at spacing 1e299 too far.
/// Both are refused (exit 1), naming the file and the coordinate bound.
#[test]
fn mesh_refuses_huge_coordinates_naming_the_file() {
    let dir = temp_dir("mesh");
    for (side, spacing) in [(1e155, "3e154"), (1.0, "1e299")] {
        let obj = dir.join("cube.obj");
        std::fs::write(&obj, cube_obj(side)).unwrap();
        let o = supple()
            .args(["mesh", "--spacing", spacing, "--out"])
            .arg(dir.join("out"))
            .arg(&obj)
            .output()
            .unwrap();
        let e = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "side {side}: {e}");
        assert!(e.contains("cube.obj") && e.contains("at most 1e100"), "{e}");
        assert!(e.contains(&format!("at spacing {spacing}:")), "{e}");
        assert!(!e.contains("panicked"), "{e}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

const BAR: &str = r#"
dt = 0.01
duration = 0.05
[output]
frame_every = 1
gif = false
png_every = 0
image_size = [64, 48]
[[body]]
name = "bar"
mesh = { kind = "box", cells = [4, 1, 1], cell_size = 0.1 }
material = { model = "corotational", youngs = 1e5, poisson = 0.3, density = 1000.0 }
fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }]
"#;

fn run(dir: &Path, name: &str, text: &str) -> PathBuf {
    let scene = dir.join(format!("{name}.toml"));
    std::fs::write(&scene, text).unwrap();
    let out = dir.join(name);
    let o = supple()
        .args(["run", "--quiet", "--out"])
        .arg(&out)
        .arg(&scene)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    out
}

/// Runs `supple render` on `run`, killing it after 60 s (a hang).
fn render(run: &Path) -> (Option<i32>, String, Duration) {
    let start = Instant::now();
    let mut child = supple()
        .args(["render", "--quiet", "--size", "64x48", "--gif", "false"])
        .arg(run)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("supple render {} hung", run.display());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    (o.status.code(), stderr(&o), start.elapsed())
}

/// Item 6: `±1e308` in an energy column hung the plot's tick loop; item 7: a frame written
/// from another mesh was drawn. The first renders promptly, the second is refused naming
/// the frame.
#[test]
fn render_survives_extreme_metrics_and_refuses_mixed_meshes() {
    let dir = temp_dir("render");
    let bar = run(&dir, "bar", BAR);
    let csv_path = bar.join("metrics.csv");
    let csv = std::fs::read_to_string(&csv_path).unwrap();
    let mut lines: Vec<String> = csv.lines().map(str::to_string).collect();
    let col = lines[0]
        .split(',')
        .position(|h| h == "bar.kinetic_energy")
        .unwrap();
    for (row, value) in [(2, "1e308"), (3, "-1e308"), (4, "inf")] {
        let mut cells: Vec<&str> = lines[row].split(',').collect();
        cells[col] = value;
        lines[row] = cells.join(",");
    }
    std::fs::write(&csv_path, lines.join("\n") + "\n").unwrap();
    let (code, e, took) = render(&bar);
    assert_eq!(code, Some(0), "{e}");
    assert!(took < Duration::from_secs(30), "{took:?}");
    assert!(bar.join("plots/energy.png").is_file());

    // Frame 3 from a bar of another mesh (3 cells, not 4).
    let other = run(&dir, "other", &BAR.replace("[4, 1, 1]", "[3, 1, 1]"));
    std::fs::copy(
        other.join("frames/frame_00003.vtu"),
        bar.join("frames/frame_00003.vtu"),
    )
    .unwrap();
    let (code, e, _) = render(&bar);
    assert_eq!(code, Some(1), "{e}");
    assert!(
        e.contains("frame_00003.vtu") && e.contains("another mesh than frame 0"),
        "{e}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Spawns a run whose pictures take a while (many large GIF frames and PNGs) and waits
/// until its steps are done (`summary.json` is written before the pictures).
fn run_into_pictures(dir: &Path, name: &str) -> (Child, PathBuf) {
    let text = BAR
        .replace("duration = 0.05", "duration = 2.0")
        .replace("gif = false", "gif = true\ngif_size = [480, 360]")
        .replace("png_every = 0", "png_every = 1")
        .replace("image_size = [64, 48]", "image_size = [480, 360]");
    let scene = dir.join("slow.toml");
    std::fs::write(&scene, text).unwrap();
    let out = dir.join(name);
    let child = supple()
        .args(["run", "--quiet", "--out"])
        .arg(&out)
        .arg(&scene)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !out.join("summary.json").is_file() {
        assert!(start.elapsed() < Duration::from_secs(60), "no summary");
        std::thread::sleep(Duration::from_millis(5));
    }
    // The picture phase begins right after the summary is written.
    std::thread::sleep(Duration::from_millis(50));
    (child, out)
}

fn interrupt(child: &Child) {
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

fn summary(out: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap()
}

/// Item 9: Ctrl-C while the pictures are drawn said "stopping after the current step" and
/// exited 0. Now one press says the steps are done and the pictures are being finished
/// (exit 0, `interrupted: false`, pictures complete); two presses quit (exit 130) with
/// `interrupted: true` in summary.json.
#[test]
fn ctrl_c_during_the_pictures_says_what_happens() {
    let dir = temp_dir("pictures");
    let (child, out) = run_into_pictures(&dir, "once");
    interrupt(&child);
    let o = child.wait_with_output().unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(0), "{e}");
    assert!(
        e.contains("every step is done") && e.contains("finishing the pictures"),
        "{e}"
    );
    assert!(!e.contains("stopping after the current step"), "{e}");
    let first = summary(&out);
    assert_eq!(first["interrupted"], false);
    assert!(out.join("animation.gif").is_file() && out.join("final.png").is_file());

    let (child, out) = run_into_pictures(&dir, "twice");
    interrupt(&child);
    std::thread::sleep(Duration::from_millis(100));
    interrupt(&child);
    let o = child.wait_with_output().unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{e}");
    assert!(e.contains("quitting before the pictures are done"), "{e}");
    let s = summary(&out);
    assert_eq!(s["interrupted"], true, "{s}");
    assert_eq!(s["steps"], first["steps"], "every step was taken");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Item 3: the memory check compared with the machine's memory only, so a run under
/// `ulimit -v` passed it and aborted in an allocation; and an 8192² GIF (the documented
/// maximum) counted 12 bytes a pixel once, though a batch of frames and every worker's
/// frame are held at once. Under a 3 GB address-space limit that GIF is refused before the
/// first step, naming the limit; the same run with a small GIF goes through.
#[test]
fn the_memory_check_respects_the_address_space_limit() {
    let dir = temp_dir("ulimit");
    let big = BAR
        .replace("gif = false", "gif = true\ngif_size = [8192, 8192]")
        .replace("duration = 0.05", "duration = 0.2");
    let small = big.replace("[8192, 8192]", "[64, 48]");
    for (name, text) in [("big", &big), ("small", &small)] {
        std::fs::write(dir.join(format!("{name}.toml")), text).unwrap();
    }
    let under_limit = |name: &str| {
        let start = Instant::now();
        let o = Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 3000000 && exec \"$0\" run --quiet --out \"$1\" \"$2\"")
            .arg(env!("CARGO_BIN_EXE_supple"))
            .arg(dir.join(name).join("out"))
            .arg(dir.join(format!("{name}.toml")))
            .output()
            .unwrap();
        (o.status.code(), stderr(&o), start.elapsed())
    };
    let (code, e, took) = under_limit("big");
    assert_eq!(code, Some(1), "{e}");
    assert!(e.contains("ulimit -v") && e.contains("big.toml"), "{e}");
    assert!(
        !dir.join("big/out/metrics.csv").exists(),
        "refused after the first step"
    );
    assert!(took < Duration::from_secs(20), "{took:?}");
    let (code, e, _) = under_limit("small");
    assert_eq!(code, Some(0), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
