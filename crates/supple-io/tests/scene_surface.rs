//! `surface = "skin.obj"` on a body (Müller et al. 2002 §4.4): read relative to the scene,
//! moved by the body's transform, embedded in the tets; refusals name the key, file and line.

use std::path::{Path, PathBuf};
use supple::nalgebra::{Rotation3, Vector3};
use supple_io::parse_scene;

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-io-surface-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn scene(surface: &str, transform: &str) -> String {
    format!(
        r#"
dt = 0.01
duration = 0.02
[[body]]
name = "bar"
mesh = {{ kind = "box", cells = [4, 1, 1], cell_size = 0.1 }}
surface = "{surface}"
transform = {transform}
material = {{ model = "corotational", youngs = 1e5, poisson = 0.3, density = 1000.0 }}
"#
    )
}

/// A quad surface around the 0.4 × 0.1 × 0.1 box, `gap` outside it, as one OBJ quad per face.
const CUBE_OBJ: &str = "v -0.001 -0.001 -0.001\nv 0.401 -0.001 -0.001\nv 0.401 0.101 -0.001\n\
v -0.001 0.101 -0.001\nv -0.001 -0.001 0.101\nv 0.401 -0.001 0.101\nv 0.401 0.101 0.101\n\
v -0.001 0.101 0.101\nv 0.2 0.05 0.05\n\
f 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 4 8 7 3\nf 1 5 8 4\nf 2/1/1 3/1/1 7/1/1 6/1/1\n";

#[test]
fn a_surface_is_read_transformed_and_embedded() {
    let dir = temp_dir("ok");
    std::fs::create_dir_all(dir.join("skins")).unwrap();
    std::fs::write(dir.join("skins/box.obj"), CUBE_OBJ).unwrap();
    let transform = "{ scale = 2.0, rotate_deg = [10, 20, 30], translate = [1, 2, 3] }";
    let s = parse_scene(&scene("skins/box.obj", transform), &dir.join("s.toml")).unwrap();
    let surf = s.surfaces[0].as_ref().unwrap();
    assert_eq!(surf.path, Path::new("skins/box.obj"));
    assert_eq!(surf.surface.triangles.len(), 12);
    assert_eq!(surf.embedding.len(), 9);
    let r =
        Rotation3::from_euler_angles(10f64.to_radians(), 20f64.to_radians(), 30f64.to_radians());
    let want = r * (Vector3::new(-0.001, 0.101, 0.101) * 2.0) + Vector3::new(1.0, 2.0, 3.0);
    assert!((surf.surface.positions[7] - want).norm() < 1e-14);
    // The 8 corners lie outside the tets (a note says so); the centre is inside.
    assert_eq!(surf.embedding.outside().0, 8);
    assert_eq!(surf.embedding.distance(8), 0.0);
    assert!(
        s.notes.iter().any(|n| n
            .starts_with("body[0].surface: skins/box.obj: 8 of 9 vertices lie outside the tets")),
        "{:?}",
        s.notes
    );
    // At rest the surface is where the file (transformed) put it.
    let mut out = vec![Vector3::zeros(); 9];
    surf.place(&s.bodies[0].mesh.positions, &mut out).unwrap();
    for (o, p) in out.iter().zip(&surf.surface.positions) {
        assert!((o - p).norm() < 1e-12);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn refusals_name_the_key_file_and_line() {
    let dir = temp_dir("bad");
    let path = dir.join("s.toml");
    let none = "{}";
    let e = parse_scene(&scene("missing.obj", none), &path)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("body[0].surface: ") && e.contains("missing.obj"),
        "{e}"
    );
    std::fs::write(dir.join("bad.obj"), "v 0 0 0\nv 1 0 0\nf 1 2 3\n").unwrap();
    let e = parse_scene(&scene("bad.obj", none), &path)
        .unwrap_err()
        .to_string();
    assert!(e.contains("body[0].surface: "), "{e}");
    assert!(
        e.contains("bad.obj:3: face vertex 3 is out of range (2 vertices so far)"),
        "{e}"
    );
    // A surface that is not around the body (forgotten scale, wrong file) is refused.
    std::fs::write(dir.join("far.obj"), "v 0 0 0\nv 1 0 0\nv 5 5 5\nf 1 2 3\n").unwrap();
    let e = parse_scene(&scene("far.obj", none), &path)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("body[0].surface = \"far.obj\": a vertex lies"),
        "{e}"
    );
    assert!(e.contains("the surface must wrap the body"), "{e}");
    let e = parse_scene(
        &scene("far.obj", none).replace("surface =", "surfaces ="),
        &path,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("unknown field `surfaces`"), "{e}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn the_bundled_bunny_carries_its_source_surface() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes/bunny_skin.toml");
    let s = supple_io::load_scene(&path).unwrap();
    let surf = s.surfaces[0].as_ref().unwrap();
    assert_eq!(
        (surf.embedding.len(), surf.surface.triangles.len()),
        (1839, 3674)
    );
    assert_eq!(s.bodies[0].mesh.n_tets(), 5334);
    // The source surface is finer than the decimated one TetGen meshed: vertices just outside
    // the tets are bound to the nearest one, within 1.5 mm of the 15 cm bunny.
    let (outside, farthest) = surf.embedding.outside();
    assert!(outside > 0 && farthest < 1.5e-3, "{outside} {farthest}");
    let mut out = vec![Vector3::zeros(); 1839];
    surf.place(&s.bodies[0].mesh.positions, &mut out).unwrap();
    for (o, p) in out.iter().zip(&surf.surface.positions) {
        assert!((o - p).norm() < 1e-12, "{o:?} {p:?}");
    }
}
