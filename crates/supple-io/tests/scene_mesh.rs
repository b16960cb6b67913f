//! Scenes with imported meshes (issue 19): every kind, by extension, regions as `fixed`
//! selectors, notes for what the reader skipped or swapped, errors with their key.

use std::path::{Path, PathBuf};
use supple_io::parse_scene;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn scene(mesh: &str, fixed: &str) -> String {
    format!(
        r#"
dt = 0.01
duration = 0.02
[[body]]
name = "cube"
mesh = {mesh}
material = {{ model = "corotational", youngs = 1e5, poisson = 0.3, density = 1000.0 }}
fixed = [{fixed}]
"#
    )
}

/// Parses with the scene file placed in tests/data (mesh paths are relative to it).
fn parse(text: &str) -> Result<supple_io::Scene, String> {
    parse_scene(text, &data("scene.toml")).map_err(|e| e.to_string())
}

#[test]
fn every_kind_and_extension_loads_the_same_mesh() {
    let plane = "{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }";
    let reference = parse(&scene(r#"{ kind = "tetgen", path = "cube" }"#, plane)).unwrap();
    let want = &reference.bodies[0].mesh;
    for (kind, file) in [
        ("gmsh", "cube_gmsh22.msh"),
        ("gmsh", "cube_gmsh41.msh"),
        ("vtu", "cube_zlib.vtu"),
        ("vtk", "cube.vtk"),
        ("medit", "cube.mesh"),
        ("file", "cube_gmsh41.msh"),
        ("file", "cube_ascii.vtu"),
        ("file", "cube42.vtk"),
        ("file", "cube.mesh"),
        ("file", "cube.node"),
    ] {
        let text = scene(&format!(r#"{{ kind = "{kind}", path = "{file}" }}"#), plane);
        let s = parse(&text).unwrap_or_else(|e| panic!("{kind} {file}: {e}"));
        assert_eq!(&s.bodies[0].mesh, want, "{kind} {file}");
        assert_eq!(s.bodies[0].fixed, reference.bodies[0].fixed);
        assert!(s.notes.is_empty(), "{:?}", s.notes);
    }
}

#[test]
fn gmsh_regions_select_fixed_vertices_and_notes_say_what_was_skipped() {
    let s = parse(&scene(
        r#"{ kind = "gmsh", path = "mixed_gmsh22.msh" }"#,
        r#"{ region = "clamp" }"#,
    ))
    .unwrap();
    let b = &s.bodies[0];
    assert_eq!(b.fixed.len(), 9);
    assert!(b
        .fixed
        .iter()
        .all(|&v| b.mesh.positions[v as usize].x == 0.0));
    assert_eq!(
        s.notes,
        [
            "body[0].mesh: mixed_gmsh22.msh: 11 cell(s) that are not tetrahedra skipped",
            "body[0].mesh: mixed_gmsh22.msh: 1 vertex(es) used by no tet dropped"
        ]
    );
    let err = parse(&scene(
        r#"{ kind = "gmsh", path = "mixed_gmsh22.msh" }"#,
        r#"{ region = "wall" }"#,
    ))
    .unwrap_err();
    assert!(
        err.contains(r#"body[0].fixed[0].region = "wall": the mesh has no such region (it has "corner", "clamp", "body")"#),
        "{err}"
    );
    let err = parse(&scene(
        r#"{ kind = "medit", path = "cube.mesh" }"#,
        r#"{ region = "wall" }"#,
    ))
    .unwrap_err();
    assert!(err.contains("no named regions"), "{err}");
}

#[test]
fn mesh_errors_name_the_key_and_the_file() {
    let plane = "{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }";
    for (mesh, needle) in [
        (
            r#"{ kind = "gmsh", path = "nope.msh" }"#,
            "body[0].mesh.path:",
        ),
        (
            r#"{ kind = "file", path = "cube.obj" }"#,
            "unknown mesh format",
        ),
        (
            r#"{ kind = "gmsh", path = "cube.mesh" }"#,
            "cube.mesh:1: unexpected",
        ),
        (
            r#"{ kind = "gmsh", path = "cube.msh", orient = "maybe" }"#,
            "body[0].mesh.orient: unknown variant `maybe`, expected one of `check`, `fix`",
        ),
    ] {
        let err = parse(&scene(mesh, plane)).unwrap_err();
        assert!(err.contains(needle), "{mesh}: {err}");
        assert!(err.contains("scene.toml"), "{err}");
    }
}
