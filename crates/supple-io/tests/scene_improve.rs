//! `mesh = { ..., improve = true }` (issue 47): an imported or stuffed mesh improved at load
//! time keeps its vertices' indices and boundary (so `fixed` selects the same vertices), its
//! smallest dihedral angle rises, a note says by how much; bad values and unknown keys name
//! the file and key.

use std::path::{Path, PathBuf};
use supple_io::parse_scene;

fn scenes() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes")
}

fn scene(mesh: &str) -> String {
    format!(
        r#"
dt = 0.01
duration = 0.02
[[body]]
name = "tube"
mesh = {mesh}
material = {{ model = "corotational", youngs = 1e5, poisson = 0.3, density = 1000.0 }}
fixed = [{{ plane = {{ point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] }} }}]
"#
    )
}

/// Parses with the scene file placed in `scenes/` (mesh paths are relative to it).
fn parse(text: &str) -> Result<supple_io::Scene, String> {
    parse_scene(text, &scenes().join("improve.toml")).map_err(|e| e.to_string())
}

#[test]
fn an_improved_mesh_keeps_its_boundary_and_fixed_vertices_and_says_so() {
    let plain = parse(&scene(
        r#"{ kind = "tetgen", path = "meshes/tube_solid_1k" }"#,
    ))
    .unwrap();
    let better = parse(&scene(
        r#"{ kind = "tetgen", path = "meshes/tube_solid_1k", improve = true }"#,
    ))
    .unwrap();
    let (a, b) = (&plain.bodies[0], &better.bodies[0]);
    assert_eq!(b.mesh.n_vertices(), a.mesh.n_vertices());
    assert_eq!(b.fixed, a.fixed);
    assert!(!b.fixed.is_empty());
    let (lo0, _) = supple::mesh::octasection::dihedral_range_deg(&a.mesh);
    let (lo1, _) = supple::mesh::octasection::dihedral_range_deg(&b.mesh);
    assert!(lo1 > lo0, "{lo0} → {lo1}");
    assert!((b.mesh.volume() - a.mesh.volume()).abs() < 1e-12 * a.mesh.volume());
    assert!(plain.notes.is_empty(), "{:?}", plain.notes);
    let note = better.notes.join("\n");
    assert!(
        note.starts_with("body[0].mesh: meshes/tube_solid_1k improved: smallest dihedral angle ")
            && note.contains(&format!("{lo0:.1}° → {lo1:.1}°")),
        "{note}"
    );
    // `kind = "file"` and a stuffed surface take the key too.
    let file = parse(&scene(
        r#"{ kind = "file", path = "meshes/tube_solid_1k.node", improve = true }"#,
    ))
    .unwrap();
    assert_eq!(file.bodies[0].mesh, b.mesh);
    let stuffed = parse(&scene(
        r#"{ kind = "surface", path = "meshes/bunny.obj", spacing = 2.0, improve = true }"#,
    ))
    .unwrap();
    assert!(
        stuffed
            .notes
            .iter()
            .any(|n| n.contains("bunny.obj improved")),
        "{:?}",
        stuffed.notes
    );
}

#[test]
fn bad_improve_values_and_unknown_keys_name_the_file_and_key() {
    let e = parse(&scene(
        r#"{ kind = "tetgen", path = "meshes/tube_solid_1k", improve = "yes" }"#,
    ))
    .unwrap_err();
    assert!(
        e.contains("improve.toml:6:")
            && e.contains(
                "body[0].mesh: improve: invalid type: string \"yes\", expected a boolean"
            ),
        "{e}"
    );
    let e = parse(&scene(
        r#"{ kind = "tetgen", path = "meshes/tube_solid_1k", improv = true }"#,
    ))
    .unwrap_err();
    assert!(
        e.contains("improve.toml:6:")
            && e.contains("body[0].mesh.improv: unknown field `improv` (did you mean `improve`?)"),
        "{e}"
    );
    // A box is generated well: the key is not there.
    let e = parse(&scene(
        r#"{ kind = "box", cells = [2, 1, 1], cell_size = 0.1, improve = true }"#,
    ))
    .unwrap_err();
    assert!(
        e.contains("body[0].mesh.improve: unknown field `improve`"),
        "{e}"
    );
}
