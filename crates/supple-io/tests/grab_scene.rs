//! `[[grab]]` in scene files (issue 14): the bundled `grab_tube.toml` picks the tube up and
//! the spring carries its weight; bad grab input is refused with its key path.

use std::path::{Path, PathBuf};
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

fn err(grab: &str) -> String {
    let text = format!("{BASE}\n[[grab]]\n{grab}\n");
    parse_scene(&text, Path::new("test.toml"))
        .and_then(|s| s.build_world().map(|_| ()))
        .unwrap_err()
        .to_string()
}

#[test]
fn the_bundled_grab_picks_the_tube_up_and_carries_its_weight() {
    let scene = load_scene(&repo().join("scenes/grab_tube.toml")).unwrap();
    let (mut world, grabs) = scene.build_world_and_grabs().unwrap();
    assert_eq!(grabs.len(), 1);
    assert_eq!(grabs[0].0, "hand");
    let id = grabs[0].1;
    let weight = world.bodies[0].mass.total() * 9.81;
    let mut force_sum = 0.0;
    let mut samples = 0;
    // Lifted by 1.7 s, held to 3.5 s: average the spring's vertical force over 2.5–3.4 s.
    while world.time < 3.4 - 1e-9 {
        world.step().unwrap();
        if world.time > 2.5 {
            force_sum += world.grab_force(id).unwrap().y;
            samples += 1;
        }
    }
    let lowest = world.bodies[0]
        .x
        .iter()
        .map(|x| x.y)
        .fold(f64::INFINITY, f64::min);
    assert!(lowest > 0.2, "the tube's lowest point is at {lowest} m");
    let mean = force_sum / samples as f64;
    assert!(
        (mean - weight).abs() < 0.05 * weight,
        "mean spring force {mean} N vs weight {weight} N"
    );
    // Released at 3.5 s: no spring, the tube falls.
    while world.time < 3.6 - 1e-9 {
        world.step().unwrap();
    }
    assert!(world.grab_force(id).is_none());
    assert!(world.bodies[0].momentum().y < -1.0);
}

#[test]
fn bad_grabs_are_refused_with_their_key() {
    let cases = [
        ("point = [0, 0, 0]", "stiffness"),
        (
            "point = [0, 0, 0]\nstiffness = 0.0",
            "grab[0].stiffness = 0",
        ),
        (
            "point = [0, 0, 0]\nstiffness = 1.0\ndamping = -1.0",
            "grab[0].damping",
        ),
        (
            "point = [0, 0, 0]\nstiffness = 1.0\nbody = \"nope\"",
            "grab[0].body = \"nope\"",
        ),
        (
            "point = [0, 0, 0]\nstiffness = 1.0\nstart = 1.0\nrelease = 0.5",
            "grab[0].release",
        ),
        (
            "point = [0, 0, 0]\nstiffness = 1.0\nstart = 0.5\npath = [[0.2, 0, 0, 0]]",
            "grab[0].path[0]",
        ),
        (
            "point = [0, 0, 0]\nstiffness = 1.0\npath = [[0.5, 0, 0, 0], [0.4, 0, 0, 0]]",
            "grab[0].path",
        ),
        (
            "point = [0, 0, 0]\nstiffness = 1.0\nname = \"a,b\"",
            "grab[0].name",
        ),
        (
            "point = [0, 0, 0]\nstiffness = 1.0\ninterpolation = \"cubic\"",
            "interpolation",
        ),
    ];
    for (grab, expected) in cases {
        let e = err(grab);
        assert!(e.contains(expected), "{grab:?}: {e}");
    }
}
