//! Rigid obstacles in the pictures: `supple run` writes `obstacles.json` and draws the
//! obstacles in grey; `supple render` draws them again from that file, bit for bit, and
//! without it draws the bodies only.

use std::path::{Path, PathBuf};
use std::process::Command;
use supple::nalgebra::Vector3;
use supple_render::Camera;

fn supple() -> Command {
    Command::new(env!("CARGO_BIN_EXE_supple"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!(
        "supple-cli-obstacles-{}-{name}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
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

/// Runs `supple ARGS DIR`; returns the exit status and standard error.
fn supple_in(args: &[&str], dir: &Path) -> (Option<i32>, String) {
    let out = supple().args(args).arg(dir).output().unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into(),
    )
}

/// `supple render DIR` with `extra` options; requires success; returns final.png's bytes.
fn render_final(dir: &Path, extra: &[&str]) -> Vec<u8> {
    std::fs::remove_file(dir.join("final.png")).unwrap();
    let mut args = vec!["render", "--quiet", "--gif", "false", "--no-plots"];
    args.extend_from_slice(extra);
    let (code, err) = supple_in(&args, dir);
    assert_eq!(code, Some(0), "{err}");
    std::fs::read(dir.join("final.png")).unwrap()
}

/// A neutral grey as obstacles are painted (equal channels, neither black nor background).
fn greyish(p: &[u8]) -> bool {
    let (lo, hi) = (p.iter().min().unwrap(), p.iter().max().unwrap());
    hi - lo <= 3 && (40..=200).contains(hi)
}

fn grey_pixels(rgb: &[u8]) -> usize {
    rgb.chunks(3).filter(|p| greyish(p)).count()
}

#[test]
fn self_fold_draws_its_rod_and_render_redraws_it_from_obstacles_json() {
    let out = temp_dir("self_fold");
    let run = out.join("run");
    let status = supple()
        .args(["run", "--quiet", "--duration", "0.05", "--out"])
        .arg(&run)
        .arg(repo().join("scenes/self_fold.toml"))
        .status()
        .unwrap();
    assert!(status.success());
    let o = json(&run.join("obstacles.json"));
    let list = o["obstacles"].as_array().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["name"], "rod");
    assert_eq!(list[0]["shape"]["kind"], "capsule");
    assert_eq!(list[0]["shape"]["radius"], 0.01);
    assert_eq!(list[0]["shape"]["half_length"], 0.05);
    // A static rod: one pose, the identity.
    let poses = list[0]["poses"].as_array().unwrap();
    assert_eq!(poses.len(), 1);
    assert_eq!(poses[0]["translation"], serde_json::json!([0.0, 0.0, 0.0]));
    assert_eq!(
        poses[0]["rotation_wxyz"],
        serde_json::json!([1.0, 0.0, 0.0, 0.0])
    );

    let original = std::fs::read(run.join("final.png")).unwrap();
    assert!(
        render_final(&run, &[]) == original,
        "render ≠ run (final.png)"
    );
    // Without obstacles.json (an older run) the rod is gone: fewer grey pixels.
    std::fs::rename(run.join("obstacles.json"), out.join("kept.json")).unwrap();
    let bare = render_final(&run, &[]);
    assert!(bare != original, "the rod changes nothing");
    let (w, h, without_rod) = decode_png(&run.join("final.png"));
    std::fs::rename(out.join("kept.json"), run.join("obstacles.json")).unwrap();
    assert_eq!((w, h), (640, 480));
    std::fs::write(run.join("final.png"), &original).unwrap();
    let (_, _, rod) = decode_png(&run.join("final.png"));
    assert!(
        grey_pixels(&rod) > grey_pixels(&without_rod) + 200,
        "grey pixels: {} with the rod, {} without",
        grey_pixels(&rod),
        grey_pixels(&without_rod)
    );
    let _ = std::fs::remove_dir_all(&out);
}

/// Pixel position of world point `p` in a `w × h` image seen by `camera` (the renderer's
/// pinhole model: image centre on the view axis, focal length from the vertical field).
fn project(camera: &Camera, p: Vector3<f64>, w: u32, h: u32) -> (u32, u32) {
    let forward = (camera.target - camera.eye).normalize();
    let right = forward.cross(&camera.up).normalize();
    let up = right.cross(&forward);
    let focal = 0.5 * h as f64 / (0.5 * camera.fov_y_deg.to_radians()).tan();
    let d = p - camera.eye;
    let s = focal / d.dot(&forward);
    let x = 0.5 * w as f64 + s * d.dot(&right);
    let y = 0.5 * h as f64 - s * d.dot(&up);
    (x as u32, y as u32)
}

const BALL_SCENE: &str = r#"
name = "ball_beside"
dt = 0.01
duration = 0.02
gravity = [0.0, 0.0, 0.0]

[output]
image_size = [160, 120]
gif = false
plots = false

[[body]]
name = "cube"
mesh = { kind = "box", cells = [2, 2, 2], cell_size = 0.05 }
material = { model = "corotational", youngs = 1e5, poisson = 0.3, density = 1000.0 }

[[obstacle]]
name = "ball"
shape = "sphere"
radius = 0.04
position = [0.16, 0.05, 0.05]
velocity = [0.0, 0.5, 0.0]
"#;

#[test]
fn a_ball_beside_a_cube_is_grey_where_it_projects_and_framed_with_the_cube() {
    let out = temp_dir("ball");
    let scene = out.join("ball.toml");
    std::fs::write(&scene, BALL_SCENE).unwrap();
    let run = out.join("run");
    let status = supple()
        .args(["run", "--quiet", "--out"])
        .arg(&run)
        .arg(&scene)
        .status()
        .unwrap();
    assert!(status.success());
    // A moving ball: its pose at each of the 3 output frames.
    let o = json(&run.join("obstacles.json"));
    let ball = &o["obstacles"][0];
    assert_eq!(
        ball["shape"],
        serde_json::json!({"kind": "sphere", "radius": 0.04})
    );
    let poses = ball["poses"].as_array().unwrap();
    let times: Vec<f64> = poses.iter().map(|p| p["t"].as_f64().unwrap()).collect();
    assert_eq!(times.len(), 3);
    assert!((times[2] - 0.02).abs() < 1e-12, "{times:?}");
    let y_end = poses[2]["translation"][1].as_f64().unwrap();
    assert!((y_end - 0.06).abs() < 1e-12, "{y_end}");

    // The cube [0, 0.1]³ stays put (no gravity, no contact); the ball's box over the run is
    // near and small, so the camera frames both: [0, 0.2] × [0, 0.1] × [0, 0.1].
    let (w, h, rgb) = decode_png(&run.join("final.png"));
    assert_eq!((w, h), (160, 120));
    let camera = Camera::framing(
        Vector3::zeros(),
        Vector3::new(0.2, 0.1, 0.1),
        w as f64 / h as f64,
        30.0,
        25.0,
        1.0,
    );
    let pixel = |rgb: &[u8], (x, y): (u32, u32)| {
        let k = 3 * (y * w + x) as usize;
        [rgb[k], rgb[k + 1], rgb[k + 2]]
    };
    let (cx, cy) = project(&camera, Vector3::new(0.16, 0.06, 0.05), w, h);
    for dy in 0..5 {
        for dx in 0..5 {
            let p = (cx + dx - 2, cy + dy - 2);
            assert!(
                greyish(&pixel(&rgb, p)),
                "{p:?}: {:?} is not the ball's grey",
                pixel(&rgb, p)
            );
        }
    }
    // The cube's centre is the body's colour, not grey.
    let cube = pixel(&rgb, project(&camera, Vector3::repeat(0.05), w, h));
    assert!(!greyish(&cube), "{cube:?}");

    let original = std::fs::read(run.join("final.png")).unwrap();
    assert!(
        render_final(&run, &["--size", "160x120"]) == original,
        "render ≠ run (final.png)"
    );
    std::fs::rename(run.join("obstacles.json"), out.join("kept.json")).unwrap();
    let bare = render_final(&run, &["--size", "160x120"]);
    assert!(bare != original, "the ball changes nothing");
    let (_, _, bare_rgb) = decode_png(&run.join("final.png"));
    assert!(!greyish(&pixel(&bare_rgb, (cx, cy))));

    // A broken obstacles.json is an error that names it, not a panic.
    std::fs::write(
        run.join("obstacles.json"),
        "{\"obstacles\": [{\"name\": 1}]}",
    )
    .unwrap();
    let (code, err) = supple_in(&["render", "--quiet", "--no-plots"], &run);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("obstacles.json"), "{err}");
    std::fs::write(
        run.join("obstacles.json"),
        r#"{"obstacles": [{"name": "b", "shape": {"kind": "sphere", "radius": -1.0},
            "poses": [{"t": 0.0, "translation": [0, 0, 0], "rotation_wxyz": [1, 0, 0, 0]}]}]}"#,
    )
    .unwrap();
    let (code, err) = supple_in(&["render", "--quiet", "--no-plots"], &run);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("radius"), "{err}");

    // A rerun of a scene without obstacles into the same folder drops the stale file.
    let plain = BALL_SCENE.split("[[obstacle]]").next().unwrap();
    std::fs::write(&scene, plain).unwrap();
    let status = supple()
        .args(["run", "--quiet", "--out"])
        .arg(&run)
        .arg(&scene)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(!run.join("obstacles.json").exists());
    let _ = std::fs::remove_dir_all(&out);
}
