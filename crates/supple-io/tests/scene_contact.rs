//! `[contact]` and `[[obstacle]]`: every shape and path parses into the library's types, and
//! impossible values are refused with the key path.

use std::path::Path;
use supple::contact::{BroadPhaseKind, NarrowPhase, Response, RigidPath, Shape};
use supple::nalgebra::Vector3;
use supple_io::parse_scene;

const BASE: &str = r#"
dt = 0.01
duration = 0.05
[[body]]
name = "cube"
mesh = { kind = "box", cells = [2, 2, 2], cell_size = 0.05, origin = [0.0, 0.01, 0.0] }
material = { model = "corotational", youngs = 1e5, poisson = 0.3, density = 1000.0 }
"#;

fn scene(extra: &str) -> Result<supple_io::Scene, String> {
    parse_scene(&format!("{BASE}\n{extra}"), Path::new("test.toml")).map_err(|e| e.to_string())
}

#[test]
fn obstacles_and_contact_settings_parse_build_and_step() {
    let s = scene(
        r#"
[contact]
self_collision = true
broad_phase = "bvh"
narrow_phase = "hermite"
response = "springs"
spring_stiffness = 500.0
friction = 0.2
thickness = 1e-4
max_iterations = 4
skin = 1e-3
hold_contacts = false

[[obstacle]]
name = "ground"
shape = "plane"
normal = [0.0, 2.0, 0.0]
friction = 0.5

[[obstacle]]
name = "ball"
shape = "sphere"
radius = 0.1
position = [1.0, 0.0, 0.0]
velocity = [0.0, 0.0, 1.0]
angular_velocity_deg = [0.0, 90.0, 0.0]

[[obstacle]]
name = "tool"
shape = "capsule"
radius = 0.01
half_length = 0.05
[[obstacle.keyframe]]
t = 0.0
position = [0.0, 1.0, 0.0]
[[obstacle.keyframe]]
t = 1.0
position = [0.0, 0.5, 0.0]
rotate_deg = [0.0, 0.0, 90.0]

[[obstacle]]
shape = "box"
half_extents = [0.1, 0.2, 0.3]
"#,
    )
    .unwrap();
    let c = s.contact.clone().unwrap();
    assert!(c.self_collision && c.body_collision);
    assert_eq!(c.broad_phase, BroadPhaseKind::Bvh);
    assert_eq!(c.narrow_phase, NarrowPhase::Hermite);
    assert_eq!(
        c.response,
        Response::Springs {
            stiffness: Some(500.0)
        }
    );
    assert_eq!(
        (c.friction, c.thickness, c.max_iterations),
        (0.2, Some(1e-4), 4)
    );
    // Every key the README documents is read (hold_contacts was refused before).
    assert_eq!((c.skin, c.hold_contacts), (1e-3, false));
    let names: Vec<&str> = c.obstacles.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(names, ["ground", "ball", "tool", "obstacle3"]);
    // The plane's local +z is the given normal.
    let ground = &c.obstacles[0];
    assert_eq!(ground.shape, Shape::HalfSpace);
    let p = ground.proximity(0.0, &Vector3::new(0.3, 0.25, -0.1));
    assert!((p.distance - 0.25).abs() < 1e-12 && (p.normal - Vector3::y()).norm() < 1e-12);
    assert!(matches!(c.obstacles[1].path, RigidPath::Constant { .. }));
    let RigidPath::Keyframes(k) = &c.obstacles[2].path else {
        panic!("keyframes expected")
    };
    assert_eq!(k.len(), 2);
    assert_eq!(
        c.obstacles[3].shape,
        Shape::Box {
            half_extents: Vector3::new(0.1, 0.2, 0.3)
        }
    );
    let mut w = s.build_world().unwrap();
    for _ in 0..5 {
        w.step().unwrap();
    }
    assert!(w.contact_stats().is_some());
    // No [contact] and no obstacle: no contact phase.
    assert!(scene("").unwrap().contact.is_none());
}

#[test]
fn impossible_contact_values_are_refused_with_the_key_path() {
    let cases = [
        (
            "[[obstacle]]\nshape = \"sphere\"\nradius = -1.0",
            "obstacle[0]",
        ),
        ("[[obstacle]]\nshape = \"sphere\"", "obstacle[0].radius: required"),
        (
            "[[obstacle]]\nshape = \"plane\"\nnormal = [0.0, 0.0, 0.0]",
            "obstacle[0].normal",
        ),
        ("[[obstacle]]\nshape = \"plane\"", "obstacle[0].normal: required"),
        (
            "[[obstacle]]\nshape = \"box\"\nhalf_extents = [1.0, 1.0, 1.0]\nradius = 1.0",
            "obstacle[0].radius: not a setting of shape \"box\"",
        ),
        (
            "[[obstacle]]\nshape = \"sphere\"\nradius = 1.0\nfriction = -0.1",
            "friction",
        ),
        (
            "[[obstacle]]\nshape = \"sphere\"\nradius = 1.0\nvelocity = [1.0, 0.0, 0.0]\n[[obstacle.keyframe]]\nt = 0.0\nposition = [0.0, 0.0, 0.0]",
            "not both",
        ),
        (
            "[[obstacle]]\nshape = \"sphere\"\nradius = 1.0\n[[obstacle.keyframe]]\nt = 1.0\nposition = [0.0, 0.0, 0.0]\n[[obstacle.keyframe]]\nt = 0.5\nposition = [0.0, 0.0, 0.0]",
            "obstacle[0]",
        ),
        ("[contact]\nfriction = -1.0", "contact.friction = -1"),
        ("[contact]\nthickness = 0.0", "contact.thickness = 0"),
        ("[contact]\nmax_iterations = 0", "contact.max_iterations = 0"),
        ("[contact]\nspring_stiffness = 10.0", "contact.spring_stiffness"),
        (
            "[contact]\nresponse = \"springs\"\nspring_stiffness = -5.0",
            "contact.spring_stiffness = -5",
        ),
        ("[contact]\nbroad_phase = \"octree\"", "broad_phase"),
        ("[contact]\nsticky = true", "sticky"),
        ("[contact]\nenergy_limit = true", "contact.energy_limit: removed"),
        ("[contact]\npush_guard = false", "contact.push_guard: removed"),
        (
            "[contact]\nresponse = \"projection\"\ndhat = 1e-3",
            "contact.dhat: a setting of response = \"ipc\"",
        ),
        ("[contact]\ndhat = -1.0", "contact.dhat = -1"),
        (
            "[contact]\nresponse = \"projection\"\nipc_hessian = \"gauss_newton\"",
            "contact.ipc_hessian: a setting of response = \"ipc\"",
        ),
        ("[contact]\nipc_hessian = \"exact\"", "ipc_hessian"),
        (
            "[[obstacle]]\nname = \"a\"\nshape = \"sphere\"\nradius = 1.0\n[[obstacle]]\nname = \"a\"\nshape = \"sphere\"\nradius = 1.0",
            "`a`",
        ),
    ];
    for (text, expected) in cases {
        let e = scene(text).unwrap_err();
        assert!(
            e.contains("test.toml") && e.contains(expected),
            "{text}\n→ {e}"
        );
    }
}

/// No `response` key: the IPC keys are kept (`Response::Auto`), and the world resolves it to
/// IPC when every body steps with backward Euler (full or linearized), to projection with an
/// explicit integrator or BDF; `response = "projection"` stays projection.
#[test]
fn the_default_response_is_ipc_with_backward_euler_and_projection_otherwise() {
    let chosen = |text: &str| {
        let s = scene(text).unwrap();
        let w = s.build_world().unwrap();
        w.contact().unwrap().settings().response
    };
    let Response::Auto(ipc) = scene("[contact]\ndhat = 2e-3")
        .unwrap()
        .contact
        .unwrap()
        .response
    else {
        panic!("no response key must give Response::Auto");
    };
    assert_eq!(ipc.dhat, Some(2e-3));
    assert_eq!(ipc.hessian, supple::contact::ipc::BarrierHessian::Projected);
    let Response::Auto(ipc) = scene("[contact]\nipc_hessian = \"gauss_newton\"")
        .unwrap()
        .contact
        .unwrap()
        .response
    else {
        panic!("no response key must give Response::Auto");
    };
    assert_eq!(
        ipc.hessian,
        supple::contact::ipc::BarrierHessian::GaussNewton
    );
    assert!(matches!(chosen("[contact]\ndhat = 2e-3"), Response::Ipc(i) if i.dhat == Some(2e-3)));
    let ground =
        "[[obstacle]]\nshape = \"plane\"\npoint = [0.0, 0.0, 0.0]\nnormal = [0.0, 1.0, 0.0]";
    assert_eq!(chosen(ground).name(), "ipc");
    for kind in ["backward_euler", "backward_euler_linearized"] {
        let text = format!("[integrator]\nkind = \"{kind}\"\n{ground}");
        assert_eq!(chosen(&text).name(), "ipc", "{kind}");
    }
    for kind in ["symplectic_euler", "bdf2", "rkf45"] {
        let text = format!("[integrator]\nkind = \"{kind}\"\n{ground}");
        assert_eq!(chosen(&text).name(), "projection", "{kind}");
    }
    let text = format!("{ground}\n[contact]\nresponse = \"projection\"");
    assert_eq!(chosen(&text).name(), "projection");
}
