//! Embedded surfaces through the `supple` program: `surface.pvd` and `frames/*.vtp` written
//! per frame and readable, the pictures drawing the surface, `supple bench` timing it.

use std::path::{Path, PathBuf};
use std::process::Command;
use supple::nalgebra::Vector3;
use supple_io::vtp::read_vtp;
use supple_io::vtu_read::{read_pvd, read_vtu};

fn supple() -> Command {
    Command::new(env!("CARGO_BIN_EXE_supple"))
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-cli-surface-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// A clamped 0.4 × 0.1 × 0.1 bar sagging under gravity, with `surface` when given.
fn bar_scene(surface: Option<&str>) -> String {
    let surface = surface.map_or_else(String::new, |s| format!("surface = \"{s}\"\n"));
    format!(
        r#"
name = "skin_bar"
dt = 0.01
duration = 0.1
[output]
frame_every = 2
gif = true
[[body]]
name = "bar"
mesh = {{ kind = "box", cells = [8, 2, 2], cell_size = 0.05 }}
{surface}material = {{ model = "corotational", youngs = 2e4, poisson = 0.3, density = 1000.0 }}
fixed = [{{ plane = {{ point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] }} }}]
"#
    )
}

/// A finer quad surface of the bar, 0.5 mm outside it: `n` quads along x, `m` across.
fn bar_obj(n: usize, m: usize) -> String {
    let (lo, hi) = (Vector3::repeat(-5e-4), Vector3::new(0.4005, 0.1005, 0.1005));
    let mut text = String::from("# the bar's skin\n");
    let mut count = 0;
    // The 6 faces as (origin, u, v) spans, each a grid of (nu+1) × (nv+1) vertices.
    let d = hi - lo;
    let faces = [
        (
            lo,
            Vector3::new(0.0, d.y, 0.0),
            Vector3::new(d.x, 0.0, 0.0),
            m,
            n,
        ),
        (
            lo + Vector3::new(0.0, 0.0, d.z),
            Vector3::new(d.x, 0.0, 0.0),
            Vector3::new(0.0, d.y, 0.0),
            n,
            m,
        ),
        (
            lo,
            Vector3::new(d.x, 0.0, 0.0),
            Vector3::new(0.0, 0.0, d.z),
            n,
            m,
        ),
        (
            lo + Vector3::new(0.0, d.y, 0.0),
            Vector3::new(0.0, 0.0, d.z),
            Vector3::new(d.x, 0.0, 0.0),
            m,
            n,
        ),
        (
            lo,
            Vector3::new(0.0, 0.0, d.z),
            Vector3::new(0.0, d.y, 0.0),
            m,
            m,
        ),
        (
            lo + Vector3::new(d.x, 0.0, 0.0),
            Vector3::new(0.0, d.y, 0.0),
            Vector3::new(0.0, 0.0, d.z),
            m,
            m,
        ),
    ];
    for (o, u, v, nu, nv) in faces {
        for j in 0..=nv {
            for i in 0..=nu {
                let p = o + u * (i as f64 / nu as f64) + v * (j as f64 / nv as f64);
                text.push_str(&format!("v {} {} {}\n", p.x, p.y, p.z));
            }
        }
        let at = |i: usize, j: usize| count + 1 + i + (nu + 1) * j;
        for j in 0..nv {
            for i in 0..nu {
                text.push_str(&format!(
                    "f {} {} {} {}\n",
                    at(i, j),
                    at(i + 1, j),
                    at(i + 1, j + 1),
                    at(i, j + 1)
                ));
            }
        }
        count += (nu + 1) * (nv + 1);
    }
    text
}

fn run(dir: &Path, scene: &str, out: &str) -> PathBuf {
    let path = dir.join(format!("{out}.toml"));
    std::fs::write(&path, scene).unwrap();
    let out = dir.join(out);
    let output = supple()
        .args(["run", "--quiet", "--out"])
        .arg(&out)
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    out
}

#[test]
fn a_scene_with_a_surface_writes_its_frames_and_draws_it() {
    let dir = temp_dir("run");
    std::fs::create_dir_all(dir.join("skin")).unwrap();
    let obj = bar_obj(40, 10);
    std::fs::write(dir.join("skin/bar.obj"), &obj).unwrap();
    let rest = supple_io::obj::parse_obj(&obj, Path::new("bar.obj")).unwrap();
    let out = run(&dir, &bar_scene(Some("skin/bar.obj")), "with");
    let tets = read_pvd(&out.join("scene.pvd")).unwrap();
    let skins = read_pvd(&out.join("surface.pvd")).unwrap();
    // 10 steps, a frame every 2, plus the first: the same times in both collections.
    assert_eq!(skins.len(), 6);
    assert_eq!(
        skins.iter().map(|e| e.0).collect::<Vec<_>>(),
        tets.iter().map(|e| e.0).collect::<Vec<_>>()
    );
    let first = read_vtp(&out.join(&skins[0].1)).unwrap();
    assert_eq!(skins[0].1, "frames/surface_00000.vtp");
    assert_eq!(first.triangles, rest.triangles);
    for (a, b) in first.positions.iter().zip(&rest.positions) {
        assert!((a - b).norm() < 1e-12);
    }
    let last = read_vtp(&out.join(&skins[5].1)).unwrap();
    let bar = read_vtu(&out.join(&tets[5].1)).unwrap();
    // The bar sagged, and its skin with it: the free end's lowest point went down as far.
    let low = |p: &[Vector3<f64>]| p.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
    assert!(low(&bar.positions) < -0.01, "{}", low(&bar.positions));
    assert!((low(&last.positions) - (low(&bar.positions) - 5e-4)).abs() < 2e-3);
    let d = &last.point_vectors[0];
    assert_eq!(d.0, "displacement");
    for ((u, x), x0) in d.1.iter().zip(&last.positions).zip(&rest.positions) {
        assert_eq!(*u, x - x0);
    }
    // The pictures draw the skin, not the tet boundary: the run without it looks different.
    let plain = run(&dir, &bar_scene(None), "without");
    assert!(!plain.join("surface.pvd").exists());
    for picture in ["final.png", "animation.gif"] {
        let (a, b) = (
            std::fs::read(out.join(picture)).unwrap(),
            std::fs::read(plain.join(picture)).unwrap(),
        );
        assert_ne!(a, b, "{picture}");
    }
    // `supple render` draws the skin too: same camera and colours, the run's final.png; and
    // coloured by von Mises (a colour per triangle from the tet that holds it) it renders.
    let run_final = std::fs::read(out.join("final.png")).unwrap();
    let status = supple()
        .args(["render", "--quiet", "--gif", "false", "--no-plots"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(
        std::fs::read(out.join("final.png")).unwrap() == run_final,
        "render ≠ run with an embedded surface"
    );
    let status = supple()
        .args([
            "render",
            "--quiet",
            "--gif",
            "false",
            "--no-plots",
            "--color",
            "von_mises",
        ])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(std::fs::read(out.join("final.png")).unwrap() != run_final);
    // A rerun into the same folder without the surface leaves no stale surface files.
    let again = dir.join("with");
    let path = dir.join("without.toml");
    let status = supple()
        .args(["run", "--quiet", "--out"])
        .arg(&again)
        .arg(&path)
        .status()
        .unwrap();
    assert!(status.success());
    assert!(!again.join("surface.pvd").exists());
    assert!(std::fs::read_dir(again.join("frames"))
        .unwrap()
        .flatten()
        .all(|e| e.path().extension().is_some_and(|x| x == "vtu")));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn bench_reports_the_cost_of_placing_the_surface() {
    let dir = temp_dir("bench");
    std::fs::write(dir.join("bar.obj"), bar_obj(40, 10)).unwrap();
    let path = dir.join("s.toml");
    std::fs::write(&path, bar_scene(Some("bar.obj"))).unwrap();
    let output = supple()
        .args(["bench", "--steps", "3", "--warmup", "1"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let s = &v["surface"];
    // 4 long faces of 41 × 11 vertices, 2 ends of 11 × 11.
    assert_eq!(s["points"], 4 * 41 * 11 + 2 * 11 * 11);
    assert_eq!(s["triangles"], 2 * (4 * 40 * 10 + 2 * 10 * 10));
    assert!(s["update_ms_median"].as_f64().unwrap() > 0.0);
    assert!(s["bind_ms"].as_f64().unwrap() > 0.0);
    assert_eq!(s["outside_points"], s["points"]);
    assert!(s["fraction_of_step"].as_f64().unwrap() > 0.0);
    std::fs::remove_dir_all(&dir).unwrap();
}
