//! Bodies swallowed by an obstacle (issue 45, item 4): `scenes/mueller_bars.toml` inside a
//! sphere of radius 1e9 m spent 48 s of one step in the exact CCD under the projection
//! response (the obstacles pushed every vertex 1e9 m out and the body–body sweeps met every
//! pair), and under IPC was refused as "the surfaces of bodies 0 and 1 touch or cross".
//! Shrunk here to two bars of 12 tets each: a step fails at once, saying which vertex is how
//! deep inside which obstacle, under both responses.

use std::path::Path;
use std::time::{Duration, Instant};
use supple_io::parse_scene;

/// Two bars side by side (`z = 0` and `z = 0.3`), linearized backward Euler, inside a
/// sphere `huge` of `radius` about the origin, with `response`.
fn scene(radius: &str, response: &str) -> supple::world::World {
    let text = format!(
        r#"
dt = 0.01
duration = 0.05
gravity = [0.0, -9.81, 0.0]
[integrator]
kind = "backward_euler_linearized"
[[body]]
name = "first"
mesh = {{ kind = "box", cells = [2, 1, 1], cell_size = 0.1 }}
material = {{ model = "corotational", youngs = 1e5, poisson = 0.3, density = 1000.0 }}
[[body]]
name = "second"
mesh = {{ kind = "box", cells = [2, 1, 1], cell_size = 0.1 }}
transform = {{ translate = [0.0, 0.0, 0.3] }}
material = {{ model = "corotational", youngs = 1e5, poisson = 0.3, density = 1000.0 }}
[contact]
body_collision = true
response = "{response}"
[[obstacle]]
name = "huge"
shape = "sphere"
position = [0.0, 0.0, 0.0]
radius = {radius}
"#
    );
    parse_scene(&text, Path::new("swallowed.toml"))
        .unwrap()
        .build_world()
        .unwrap()
}

/// The first step's failure, and how long it took.
fn first_step_error(radius: &str, response: &str) -> (String, Duration) {
    let mut world = scene(radius, response);
    let start = Instant::now();
    let err = world
        .step()
        .expect_err("a step inside the sphere must fail");
    (err.to_string(), start.elapsed())
}

#[test]
fn projection_fails_a_body_deep_inside_an_obstacle_before_the_contact_phase() {
    let (err, took) = first_step_error("1e9", "projection");
    assert!(
        err.contains("body `first`") && err.contains("inside obstacle `huge`"),
        "{err}"
    );
    assert!(err.contains("1.000e9 m inside"), "{err}");
    // Generous: the check costs one distance per surface vertex (the whole step takes
    // milliseconds; before, the contact phase's sweeps ran first).
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn projection_fails_a_body_the_obstacles_blew_up_before_the_surface_phase() {
    // A sphere a few body sizes across: every vertex is inside by less than the jump limit
    // (10 rest diagonals), so the obstacle phase runs and pushes the bars out onto a 1.5 m
    // shell; the body–body sweeps of those motions are skipped.
    let (err, _) = first_step_error("1.5", "projection");
    assert!(err.contains("after the obstacles' push"), "{err}");
}

#[test]
fn ipc_refuses_a_body_that_starts_inside_an_obstacle() {
    let (err, took) = first_step_error("1e9", "ipc");
    assert!(
        err.contains("inside obstacle `huge` at the step's start"),
        "{err}"
    );
    assert!(!err.contains("touch or cross"), "{err}");
    assert!(took < Duration::from_secs(5), "{took:?}");
}

#[test]
fn a_vertex_resting_on_an_obstacle_is_not_refused() {
    // The refusal is for a body inside an obstacle, not one placed on it: the bars' bottom
    // faces lie on the ground plane (y = 0).
    for response in ["ipc", "projection"] {
        let text = format!(
            r#"
dt = 0.01
duration = 0.05
gravity = [0.0, -9.81, 0.0]
[integrator]
kind = "backward_euler_linearized"
[[body]]
name = "bar"
mesh = {{ kind = "box", cells = [2, 1, 1], cell_size = 0.1, origin = [-0.1, 0.0, -0.05] }}
material = {{ model = "corotational", youngs = 1e5, poisson = 0.3, density = 1000.0 }}
[contact]
response = "{response}"
[[obstacle]]
name = "ground"
shape = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 1.0, 0.0]
"#
        );
        let mut world = parse_scene(&text, Path::new("resting.toml"))
            .unwrap()
            .build_world()
            .unwrap();
        for _ in 0..3 {
            world.step().unwrap_or_else(|e| panic!("{response}: {e}"));
        }
    }
}
