//! `[[load]]` and `[[constraint]]` in scene files (issue 13): they reach the bodies, and bad
//! input is refused with its key path.

use std::path::{Path, PathBuf};
use supple::constraint::Components;
use supple::load::{LoadKind, TimeFunction};
use supple_io::{load_scene, parse_scene};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

const BASE: &str = r#"
dt = 0.01
duration = 0.1
[[body]]
name = "bar"
mesh = { kind = "box", cells = [4, 1, 1], cell_size = 0.1 }
material = { model = "corotational", youngs = 1e5, poisson = 0.33, density = 1000.0 }
"#;

fn err(text: &str) -> String {
    parse_scene(text, Path::new("test.toml"))
        .and_then(|s| s.build_world().map(|_| ()))
        .unwrap_err()
        .to_string()
}

#[test]
fn loads_and_constraints_reach_the_body() {
    let text = format!(
        r#"{BASE}
[[constraint]]
name = "clamp"
region = {{ plane = {{ point = [0.0, 0.0, 0.0], normal = [1.0, 0.0, 0.0] }} }}
[[constraint]]
name = "floor"
region = {{ plane = {{ point = [0.0, 0.0, 0.0], normal = [0.0, 0.0, 1.0] }} }}
components = ["normal"]
[[constraint]]
name = "drag"
region = {{ vertices = [4] }}
components = ["x", "y"]
velocity = [0.1, 0.0, 0.0]
release = 0.05
[[load]]
name = "tip"
region = {{ plane = {{ point = [0.4, 0.0, 0.0], normal = [1.0, 0.0, 0.0] }} }}
force = [0.0, -4.0, 0.0]
ramp = [0.0, 0.05]
[[load]]
name = "top"
region = {{ plane = {{ point = [0.0, 0.1, 0.0], normal = [0.0, 1.0, 0.0] }} }}
pressure = 100.0
follower = true
"#
    );
    let scene = parse_scene(&text, Path::new("test.toml")).unwrap();
    let b = &scene.bodies[0];
    assert_eq!(b.constraints.len(), 3);
    assert_eq!(b.constraints[0].vertices.len(), 4);
    assert!(matches!(b.constraints[1].components, Components::Normal(n) if n.z == 1.0));
    assert!(matches!(
        b.constraints[2].components,
        Components::Axes([true, true, false])
    ));
    assert_eq!(b.constraints[2].release, Some(0.05));
    let LoadKind::Nodal(tip) = &b.loads[0].kind else {
        panic!("{:?}", b.loads[0].kind)
    };
    assert_eq!(tip.len(), 4);
    assert!((tip.iter().map(|f| f.1.y).sum::<f64>() + 4.0).abs() < 1e-12);
    assert_eq!(b.loads[0].time, TimeFunction::Ramp { t0: 0.0, t1: 0.05 });
    assert!(
        matches!(b.loads[1].kind, LoadKind::Pressure { follower: true, ref faces, .. } if faces.len() == 8)
    );
    let mut world = scene.build_world().unwrap();
    for _ in 0..3 {
        world.step().unwrap();
    }
}

#[test]
fn bad_loads_and_constraints_are_refused_with_their_key() {
    let c = |body: &str| format!("{BASE}\n[[constraint]]\n{body}\n");
    assert_eq!(
        err(&c(
            "region = { box = { min = [5.0, 5.0, 5.0], max = [6.0, 6.0, 6.0] } }"
        )),
        "test.toml: constraint[0].region: selects no vertex"
    );
    assert_eq!(
        err(&c(
            "region = { vertices = [0] }\ncomponents = [\"x\", \"w\"]"
        )),
        "test.toml: constraint[0].components[1] = \"w\": must be \"x\", \"y\", \"z\" or \"normal\""
    );
    assert_eq!(
        err(&c("region = { vertices = [0] }\ncomponents = [\"normal\"]")),
        "test.toml: constraint[0].normal: required for \"normal\" when the region is not a plane"
    );
    assert_eq!(
        err(&c("region = { vertices = [0] }\ndisplacement = [1.0, 0.0, 0.0]\nvelocity = [1.0, 0.0, 0.0]")),
        "test.toml: constraint[0]: give at most one of displacement, affine, rotation, velocity, path"
    );
    assert!(err(&c(
        "region = { vertices = [0] }\npath = [[0.1, 0.0, 0.0, 0.0], [0.1, 1.0, 0.0, 0.0]]"
    ))
    .starts_with("test.toml: constraint[0]: constraint `constraint0`: path: keyframes[1]"));
    let l = |body: &str| format!("{BASE}\n[[load]]\n{body}\n");
    // A region whose vertices touch the surface but hold no boundary face.
    assert_eq!(
        err(&l("region = { vertices = [0, 1] }\ntraction = [1.0, 0.0, 0.0]")),
        "test.toml: load[0].region: holds no boundary face (a surface load needs faces on the boundary)"
    );
    assert_eq!(
        err(&l(
            "region = { vertices = [0] }\nforce = [1.0, 0.0, 0.0]\npressure = 2.0"
        )),
        "test.toml: load[0]: give exactly one of force, file, traction, pressure"
    );
    assert_eq!(
        err(&l(
            "region = { vertices = [0] }\nforce = [1.0, 0.0, 0.0]\nramp = [1.0, 1.0]"
        )),
        "test.toml: load[0].ramp = [1, 1]: needs finite t0 < t1"
    );
    // An unknown key names its path.
    assert!(err(&l(
        "region = { vertices = [0] }\nforce = [1.0, 0.0, 0.0]\nramps = [0.0, 1.0]"
    ))
    .contains("unknown field `ramps`"));
}

#[test]
fn an_interior_face_is_refused() {
    // The 4x1x1 bar's tets: find a face shared by two tets through the library.
    let scene = parse_scene(BASE, Path::new("test.toml")).unwrap();
    let mesh = &scene.bodies[0].mesh;
    let boundary: Vec<[u32; 3]> = supple::mesh::boundary_faces(&mesh.tets)
        .into_iter()
        .map(|mut f| {
            f.sort_unstable();
            f
        })
        .collect();
    let t = mesh.tets[0];
    let interior = [
        [t[0], t[1], t[2]],
        [t[0], t[1], t[3]],
        [t[0], t[2], t[3]],
        [t[1], t[2], t[3]],
    ]
    .into_iter()
    .find(|f| {
        let mut k = *f;
        k.sort_unstable();
        !boundary.contains(&k)
    })
    .unwrap();
    let text = format!("{BASE}\n[[load]]\nregion = {{ faces = [{interior:?}] }}\npressure = 1.0\n");
    assert_eq!(
        err(&text),
        format!("test.toml: load[0].region.faces: {interior:?} is not a boundary face of the mesh")
    );
}

#[test]
fn benchmark_scenes_load() {
    let mut n = 0;
    for entry in std::fs::read_dir(repo().join("scenes/benchmarks"))
        .unwrap()
        .flatten()
    {
        let path = entry.path();
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        // The 64-cell Cook meshes are generated, not stored.
        if path.extension().is_some_and(|e| e == "toml") && !name.ends_with("_64") {
            let scene = load_scene(&path).unwrap_or_else(|e| panic!("{e}"));
            scene
                .build_world()
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            n += 1;
        }
    }
    assert!(n >= 10, "{n}");
}
