//! `model = "fast_corotated"` in scene files: its options, and what the scene refuses because
//! the operator-splitting step cannot take part in it (each refusal names the key).

use std::path::Path;
use supple::fem::material::{FastCorotatedSettings, ModelKind};
use supple_io::parse_scene;

const BASE: &str = r#"
dt = 0.01
duration = 0.05
[[body]]
name = "bar"
mesh = { kind = "box", cells = [4, 1, 1], cell_size = 0.1 }
material = { model = "fast_corotated", youngs = 1e6, poisson = 0.33, density = 1000.0, iterations = 3 }
fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }]
"#;

fn err(text: &str) -> String {
    match parse_scene(text, Path::new("test.toml")).and_then(|s| s.build_world()) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_model_parses_builds_and_steps() {
    let scene = parse_scene(BASE, Path::new("test.toml")).unwrap();
    assert_eq!(
        scene.bodies[0].model,
        ModelKind::FastCorotated(FastCorotatedSettings {
            iterations: 3,
            volume_sweeps: 2
        })
    );
    let mut world = scene.build_world().unwrap();
    for _ in 0..5 {
        world.step().unwrap();
    }
    assert_eq!(world.bodies[0].model.name(), "fast_corotated");
    assert!(
        world.bodies[0].x.iter().any(|p| p.y < -1e-6),
        "the bar sags"
    );
}

#[test]
fn what_the_step_cannot_take_is_refused_by_key() {
    let cases = [
        (
            format!("{BASE}\n[integrator]\nkind = \"symplectic_euler\"\n"),
            "integrator.kind must be",
        ),
        (
            format!("{BASE}\n[contact]\nresponse = \"ipc\"\n"),
            "contact.response = \"ipc\" is not supported",
        ),
        (
            BASE.replace("iterations = 3", "iterations = 0"),
            "body[0].material.iterations = 0: must be 1 to 1000",
        ),
        (
            BASE.replace("model = \"fast_corotated\"", "model = \"corotational\""),
            "body[0].material.iterations: only the fast_corotated model has this option",
        ),
        (
            BASE.replace(
                "density = 1000.0,",
                "density = 1000.0, volume_sweeps = 1001,",
            ),
            "volume_sweeps = 1001: must be at most 1000",
        ),
        (
            format!("{BASE}damping = {{ alpha = 0.5 }}\n"),
            "damping and viscosity are not supported",
        ),
    ];
    for (text, want) in cases {
        let e = err(&text);
        assert!(e.contains(want), "{e}\nwanted: {want}");
        assert!(e.starts_with("test.toml"), "{e}");
    }
}
