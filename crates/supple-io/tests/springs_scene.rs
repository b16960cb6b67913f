//! Spring networks and springs between body points in scene files: `model = "mass_spring"`
//! with its `springs` law, and `[[spring]]`, with their refusals naming the key.

use std::path::Path;
use supple::fem::material::{ModelKind, RotationField, SpringForce};
use supple_io::parse_scene;

fn bar(material: &str) -> String {
    format!(
        r#"
dt = 0.01
duration = 0.05
[[body]]
name = "bar"
mesh = {{ kind = "box", cells = [4, 1, 1], cell_size = 0.1 }}
material = {{ {material} }}
fixed = [{{ plane = {{ point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] }} }}]
"#
    )
}

fn err(text: &str) -> String {
    parse_scene(text, Path::new("test.toml"))
        .unwrap_err()
        .to_string()
}

#[test]
fn mass_spring_laws_parse_and_their_options_are_checked() {
    let model = |m: &str| {
        let scene = parse_scene(&bar(m), Path::new("test.toml")).unwrap_or_else(|e| panic!("{e}"));
        (scene.bodies[0].model, scene.notes)
    };
    let (m, notes) = model("model = \"mass_spring\", youngs = 1e5");
    assert_eq!(m, ModelKind::MassSpring(SpringForce::Hookean));
    assert!(notes.is_empty(), "{notes:?}");
    let (m, _) = model("model = \"mass_spring\", springs = \"linear\", youngs = 1e5");
    assert_eq!(m, ModelKind::MassSpring(SpringForce::Linear));
    let (m, _) = model(
        "model = \"mass_spring\", springs = \"warped\", rotation_field = \"edge_frame\", ghost_correction = false",
    );
    assert_eq!(
        m,
        ModelKind::MassSpring(SpringForce::Warped {
            field: RotationField::EdgeFrame,
            ghost_correction: false,
        })
    );
    // A Poisson ratio the network cannot have is noted, not silently dropped.
    let (_, notes) = model("model = \"mass_spring\", youngs = 1e5, poisson = 0.4");
    assert!(
        notes
            .iter()
            .any(|n| n.contains("body[0].material") && n.contains("1/4")),
        "{notes:?}"
    );
    for (material, want) in [
        (
            "model = \"mass_spring\", rotation_field = \"edge_frame\"",
            "body[0].material.rotation_field: only the warped model",
        ),
        (
            "model = \"corotational\", springs = \"linear\"",
            "body[0].material.springs: only the mass_spring model",
        ),
        (
            "model = \"mass_spring\", springs = \"warped\", tangent = \"element\"",
            "body[0].material.tangent",
        ),
        ("model = \"mass_spring\", springs = \"stiff\"", "springs"),
    ] {
        let got = err(&bar(material));
        assert!(got.contains(want), "want {want:?} in: {got}");
    }
    // The network steps in the world.
    let scene = parse_scene(
        &bar("model = \"mass_spring\", springs = \"warped\", youngs = 1e5"),
        Path::new("test.toml"),
    )
    .unwrap();
    let mut world = scene.build_world().unwrap();
    for _ in 0..scene.steps() {
        world.step().unwrap();
    }
    assert_eq!(world.bodies[0].model.name(), "mass_spring");
}

const TWO: &str = r#"
dt = 0.001
duration = 0.02
gravity = [0.0, 0.0, 0.0]
[[body]]
name = "left"
mesh = { kind = "box", cells = [1, 1, 1], cell_size = 0.1 }
material = { model = "corotational", youngs = 1e5, poisson = 0.3, density = 1000.0 }
[[body]]
name = "right"
mesh = { kind = "box", cells = [1, 1, 1], cell_size = 0.1, origin = [0.3, 0.0, 0.0] }
material = { model = "corotational", youngs = 1e5, poisson = 0.3, density = 1000.0 }
"#;

fn two(spring: &str) -> String {
    format!("{TWO}[[spring]]\n{spring}\n")
}

#[test]
fn springs_between_body_points_parse_and_pull() {
    let text = two(
        "name = \"link\"\na = { body = \"left\", vertex = 7 }\nb = { body = \"right\", tet = 0, barycentric = [0.25, 0.25, 0.25, 0.25] }\nstiffness = 100.0\nrest_length = 0.05",
    );
    let scene = parse_scene(&text, Path::new("test.toml")).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scene.springs.len(), 1);
    let s = &scene.springs[0];
    assert_eq!(
        (s.name.as_str(), s.spring.a.body, s.spring.b.body),
        ("link", 0, 1)
    );
    assert_eq!(s.spring.rest_length, 0.05);
    // Stretched: pulls the left body towards the right one, and the right one back; alone
    // and in the coupled IPC step (the default contact response with backward Euler).
    let with_contact = format!("{text}[contact]\nbody_collision = true\n");
    for (text, ipc) in [(text.clone(), false), (with_contact, true)] {
        let scene = parse_scene(&text, Path::new("test.toml")).unwrap();
        let mut world = scene.build_world().unwrap();
        assert_eq!(world.ipc().is_some(), ipc);
        let id = world.springs().next().unwrap().0;
        for _ in 0..scene.steps() {
            world.step().unwrap();
        }
        let f = world.spring_force(id).unwrap();
        assert!(f.x > 0.0, "ipc {ipc}: {f}");
        let (p0, p1) = (world.bodies[0].momentum().x, world.bodies[1].momentum().x);
        assert!(p0 > 0.0 && p1 < 0.0, "ipc {ipc}: {p0} {p1}");
        // The ends are lagged: opposite to first order in dt.
        assert!((p0 + p1).abs() < 0.05 * p0, "ipc {ipc}: {p0} {p1}");
    }
    // Without rest_length, the spring starts at rest.
    let scene = parse_scene(
        &two("a = { body = \"left\", vertex = 7 }\nb = { body = \"right\", vertex = 0 }\nstiffness = 100.0"),
        Path::new("test.toml"),
    )
    .unwrap();
    assert!((scene.springs[0].spring.rest_length - 0.2f64.hypot(0.1).hypot(0.1)).abs() < 1e-12);
}

#[test]
fn bad_springs_name_their_key() {
    let a = "a = { body = \"left\", vertex = 7 }";
    let b = "b = { body = \"right\", vertex = 0 }";
    for (spring, want) in [
        (
            format!("a = {{ body = \"left\", vertex = 8 }}\n{b}\nstiffness = 1.0"),
            "spring[0].a.vertex = 8: body `left` has 8 vertices (0 to 7)",
        ),
        (
            format!("{a}\nb = {{ body = \"right\", vertex = -1 }}\nstiffness = 1.0"),
            "spring[0].b.vertex = -1",
        ),
        (
            format!("{a}\nb = {{ body = \"right\", tet = 5, barycentric = [1.0, 0.0, 0.0, 0.0] }}\nstiffness = 1.0"),
            "spring[0].b.tet = 5: body `right` has 5 tets (0 to 4)",
        ),
        (
            format!("{a}\nb = {{ body = \"right\", tet = 1, barycentric = [0.5, 0.0, 0.0, 0.0] }}\nstiffness = 1.0"),
            "spring[0].b.barycentric",
        ),
        (
            format!("{a}\nb = {{ body = \"right\", tet = 1 }}\nstiffness = 1.0"),
            "spring[0].b.barycentric: missing",
        ),
        (
            format!("{a}\nb = {{ body = \"right\", vertex = 1, tet = 1, barycentric = [1.0, 0.0, 0.0, 0.0] }}\nstiffness = 1.0"),
            "spring[0].b: give either vertex or tet",
        ),
        (
            format!("{a}\nb = {{ body = \"middle\", vertex = 0 }}\nstiffness = 1.0"),
            "spring[0].b.body = \"middle\": no body has this name",
        ),
        (
            format!("{a}\nb = {{ vertex = 0 }}\nstiffness = 1.0"),
            "spring[0].b.body: required when the scene has several bodies",
        ),
        (format!("{a}\n{b}\nstiffness = 0.0"), "spring[0].stiffness = 0"),
        (format!("{a}\n{b}\nstiffness = 1.0\ndamping = -1.0"), "spring[0].damping = -1"),
        (format!("{a}\n{b}\nstiffness = 1.0\nrest_length = -0.1"), "spring[0].rest_length = -0.1"),
    ] {
        let got = err(&two(&spring));
        assert!(got.contains(want), "want {want:?} in: {got}");
    }
}
