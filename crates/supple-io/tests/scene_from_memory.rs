//! Scenes loaded from bytes in memory (as a web page does) equal the same scenes read from disk.

use std::collections::BTreeMap;
use std::path::Path;
use supple_io::{load_scene, parse_scene_from_memory};

fn scenes_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenes"))
}

#[test]
fn tube_drop_from_memory_equals_tube_drop_from_disk() {
    let dir = scenes_dir();
    let text = std::fs::read_to_string(dir.join("tube_drop.toml")).unwrap();
    let mut files = BTreeMap::new();
    for ext in ["node", "ele"] {
        let rel = format!("meshes/tube_solid_1k.{ext}");
        files.insert(rel.clone(), std::fs::read(dir.join(&rel)).unwrap());
    }
    let memory = parse_scene_from_memory(&text, "tube_drop.toml", &files).unwrap();
    let disk = load_scene(&dir.join("tube_drop.toml")).unwrap();
    assert_eq!(memory.name, disk.name);
    assert_eq!(memory.bodies.len(), 1);
    assert_eq!(memory.bodies[0].mesh.tets, disk.bodies[0].mesh.tets);
    assert_eq!(
        memory.bodies[0].mesh.positions,
        disk.bodies[0].mesh.positions
    );
    // The worlds step to the same bits.
    let (mut a, mut b) = (memory.build_world().unwrap(), disk.build_world().unwrap());
    for _ in 0..3 {
        a.step().unwrap();
        b.step().unwrap();
    }
    assert_eq!(a.bodies[0].x, b.bodies[0].x);
}

#[test]
fn a_missing_mesh_in_memory_is_named() {
    let dir = scenes_dir();
    let text = std::fs::read_to_string(dir.join("tube_drop.toml")).unwrap();
    let err = parse_scene_from_memory(&text, "tube_drop.toml", &BTreeMap::new())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("body[0].mesh.path") && err.contains("meshes/tube_solid_1k.node"),
        "{err}"
    );
}

#[test]
fn a_stuffed_surface_is_read_from_memory_not_from_disk() {
    // Before the corpus (issue 19), `kind = "surface"` read its OBJ from the disk even when the
    // scene came from memory, so this scene failed with "No such file or directory".
    let obj = "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nv 0 0 1\nv 1 0 1\nv 0 1 1\nv 1 1 1\n\
               f 1 3 4 2\nf 5 6 8 7\nf 1 2 6 5\nf 3 7 8 4\nf 1 5 7 3\nf 2 4 8 6\n";
    let files = BTreeMap::from([(
        "in_memory_only/cube.obj".to_string(),
        obj.as_bytes().to_vec(),
    )]);
    let text = "dt = 0.01\nduration = 0.1\n[[body]]\n\
                mesh = { kind = \"surface\", path = \"in_memory_only/cube.obj\", spacing = 0.25 }\n\
                material = { model = \"linear\", youngs = 1e5, poisson = 0.3, density = 1000.0 }\n";
    let scene = parse_scene_from_memory(text, "cube.toml", &files).unwrap();
    let mesh = &scene.bodies[0].mesh;
    assert!(mesh.n_tets() > 0);
    assert!((mesh.volume() - 1.0).abs() < 0.1, "{}", mesh.volume());
}
