//! The scene format's defaults and key errors: a scene needs only a body's mesh and material
//! model; every unknown and missing key is reported at once, each with its line and, for a
//! typo, the key meant; `--set KEY=VALUE` overrides are validated as the file's own keys.

use std::path::Path;
use supple_io::files::Files;
use supple_io::scene::{parse_scene_with_overrides, scene_from_table, Override};
use supple_io::{parse_scene, Scene};

const MINIMAL: &str = "[[body]]\n\
    mesh = { kind = \"box\", cells = [3, 1, 1], cell_size = 0.1 }\n\
    material = { model = \"corotational\" }\n";

fn err(text: &str) -> String {
    parse_scene(text, Path::new("s.toml"))
        .unwrap_err()
        .to_string()
}

fn with_set(text: &str, set: &[&str]) -> Result<Scene, String> {
    let set: Vec<Override> = set.iter().map(|s| s.parse()).collect::<Result<_, _>>()?;
    parse_scene_with_overrides(text, Path::new("s.toml"), Files::Disk, &set)
        .map_err(|e| e.to_string())
}

#[test]
fn a_scene_with_only_a_mesh_and_a_model_runs_with_the_python_defaults() {
    let scene = parse_scene(MINIMAL, Path::new("s.toml")).unwrap();
    let b = &scene.bodies[0];
    // The defaults of `supple.World(dt=0.01, duration=1.0)` and `supple.Body(density=1000.0)`.
    assert_eq!((scene.dt, scene.duration, scene.steps()), (0.01, 1.0, 100));
    assert_eq!((b.youngs, b.poisson, b.density), (1e5, 0.33, 1000.0));
    assert_eq!(scene.gravity.y, -9.81);
    let mut world = scene.build_world().unwrap();
    let y0 = world.bodies[0].x.iter().map(|p| p.y).sum::<f64>();
    for _ in 0..3 {
        world.step().unwrap();
    }
    let y = world.bodies[0].x.iter().map(|p| p.y).sum::<f64>();
    assert!(y < y0, "the free bar falls under the default gravity");

    // The Python module's tables go through the same defaults.
    let mut table: toml::Table = toml::from_str(MINIMAL).unwrap();
    table.insert("duration".into(), toml::Value::Float(0.5));
    let from_table = scene_from_table(table, "python", &[]).unwrap();
    assert_eq!((from_table.dt, from_table.bodies[0].youngs), (0.01, 1e5));

    // One of E and ν alone takes the other's default.
    let s = with_set(MINIMAL, &["body[0].material.poisson=0.45"]).unwrap();
    assert_eq!((s.bodies[0].youngs, s.bodies[0].poisson), (1e5, 0.45));
}

#[test]
fn every_missing_and_unknown_key_is_reported_at_once_with_its_line() {
    let text = "dt = 0.01\n\
        [[body]]\n\
        material = { modle = \"linear\" }\n\
        [[body]]\n\
        mesh = { cells = [1, 1, 1], cell_size = 0.1 }\n\
        material = { model = \"linear\", yungs = 1e5 }\n\
        [solver]\n\
        tolerence = 1e-6\n";
    let e = err(text);
    let lines: Vec<&str> = e.lines().collect();
    let expected = [
        "s.toml:3:14: body[0].material.modle: unknown field `modle` (did you mean `model`?)",
        "s.toml:3:1: body[0].material.model: missing field `model` (one of \"linear\", \"corotational\", \"warped\", \"stvk\", \"hybrid\", \"liesenfeld_stolfi\", \"fixed_corotated\", \"mass_spring\", \"fast_corotated\")",
        "s.toml:2:1: body[0].mesh: missing field `mesh`",
        "s.toml:5:1: body[1].mesh.kind: missing field `kind` (one of \"box\", \"tetgen\", \"gmsh\", \"vtu\", \"vtk\", \"medit\", \"surface\", \"file\", \"given\")",
        "s.toml:6:32: body[1].material.yungs: unknown field `yungs` (did you mean `youngs`?)",
        "s.toml:8:1: solver.tolerence: unknown field `tolerence` (did you mean `tolerance`?)",
    ];
    for x in expected {
        assert!(lines.contains(&x), "{x}\nnot in:\n{e}");
    }
    assert_eq!(lines.len(), expected.len(), "{e}");

    // A wrong variant name gets the nearest one too; far names get the list.
    let e = err(&MINIMAL.replace("\"corotational\"", "\"corotatonal\""));
    assert!(
        e.contains("unknown variant `corotatonal` (did you mean `corotational`?)"),
        "{e}"
    );
    let e = err(&MINIMAL.replace("kind = \"box\"", "kind = \"sphere\""));
    assert!(
        e.starts_with("s.toml:2:10: body[0].mesh.kind: unknown variant `sphere`, expected one of `box`, `tetgen`"),
        "{e}"
    );
    // A value of the wrong type still names its line.
    let e = err(&format!("dt = \"fast\"\n{MINIMAL}"));
    assert!(
        e.starts_with("s.toml:1:1: dt: invalid type: string \"fast\""),
        "{e}"
    );
}

#[test]
fn set_overrides_keys_and_refuses_bad_paths_clearly() {
    let s = with_set(
        MINIMAL,
        &[
            "body[0].material.youngs=2e5",
            "dt=0.005",
            "solver.kind=cholesky",
            "gravity=[0.0, 0.0, -9.81]",
        ],
    )
    .unwrap();
    assert_eq!((s.dt, s.bodies[0].youngs, s.gravity.z), (0.005, 2e5, -9.81));

    let refused = [
        (
            "body[1].material.youngs=2e5",
            "s.toml: --set body[1].material.youngs: `body[1]`: the scene has 1 (body[0] to body[0])",
        ),
        ("dt.x=1", "s.toml: --set dt.x: dt: invalid type: map, expected f64"),
        ("probe[0].name=a", "s.toml: --set probe[0].name: the scene has no `probe`"),
        (
            "body[0].material.yungs=2e5",
            "s.toml: --set body[0].material.yungs: body[0].material.yungs: unknown field `yungs` (did you mean `youngs`?)",
        ),
        (
            "dt=fast",
            "s.toml: --set dt: dt: invalid type: string \"fast\", expected f64",
        ),
        (
            "body[0].material.poisson=0.5",
            "s.toml: body[0].material.poisson = 0.5: must be below 0.5",
        ),
    ];
    for (set, expected) in refused {
        assert_eq!(with_set(MINIMAL, &[set]).unwrap_err(), expected, "{set}");
    }
    let e = with_set(&format!("dt = 0.01\n{MINIMAL}"), &["dt.x=1"]).unwrap_err();
    assert_eq!(e, "s.toml: --set dt.x: `dt` is a float, not a table");
    for bad in ["dt", "=1", "body[x].name=a", "body[0.name=a", "a..b=1"] {
        assert!(bad.parse::<Override>().is_err(), "{bad}");
    }
}
