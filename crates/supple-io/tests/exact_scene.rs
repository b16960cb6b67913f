//! `[[exact_constraint]]`, `[[rigid_core]]` and the `tets_in_*` regions in scene files
//! (issue 14): the bundled scenes build and do what they say; bad input is refused with its
//! key path.

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

fn build(extra: &str) -> Result<supple::world::World, String> {
    let text = format!("{BASE}\n{extra}\n");
    parse_scene(&text, Path::new("test.toml"))
        .and_then(|s| s.build_world())
        .map_err(|e| e.to_string())
}

#[test]
fn the_snapping_torus_drags_its_handle_along_the_path() {
    let scene = load_scene(&repo().join("scenes/snapping_torus.toml")).unwrap();
    assert_eq!(scene.exact.len(), 1);
    let (mut world, _, exact) = scene.build_world_with_ids().unwrap();
    assert_eq!(exact[0].0, "handle");
    let (_, c) = world.exact_constraints().next().unwrap();
    let (point, path) = match &c.kind {
        supple::constraint::ExactKind::Point { path } => (c.point, path.clone()),
        other => panic!("{other:?}"),
    };
    // The handle is the torus' core vertex 0 (a vertex: one weight is 1).
    assert!(
        point.w.iter().any(|&w| (w - 1.0).abs() < 1e-9),
        "{:?}",
        point.w
    );
    for _ in 0..20 {
        world.step().unwrap();
        let p = point.eval(&world.bodies[point.body].x);
        assert!((p - path.at(world.time)).amax() <= 1e-10);
    }
    assert!(world.constraint_force(exact[0].1).unwrap().norm() > 0.0);
}

#[test]
fn the_bunny_scenes_hold_their_cores_by_region() {
    for (file, core) in [("bunny_skull", "skull"), ("floppy_skin", "core")] {
        let scene = load_scene(&repo().join(format!("scenes/{file}.toml"))).unwrap();
        let body = &scene.bodies[0];
        let held = body
            .constraints
            .iter()
            .find(|c| c.name == core)
            .unwrap_or_else(|| panic!("{file}: no constraint {core}"));
        // A core of a few hundred vertices, inside the body.
        assert!(
            (100..1000).contains(&held.vertices.len()),
            "{file}: {}",
            held.vertices.len()
        );
        let mut world = scene.build_world().unwrap();
        let rest = world.bodies[0].mesh.positions.clone();
        for _ in 0..10 {
            world.step().unwrap();
        }
        // The core moved rigidly: pairwise distances of its first vertices are kept.
        let x = &world.bodies[0].x;
        let v = &held.vertices;
        let moved = v
            .iter()
            .any(|&i| (x[i as usize] - rest[i as usize]).norm() > 1e-4);
        assert!(moved, "{file}: the core did not move");
        for &a in &v[..20] {
            for &b in &v[..20] {
                let (a, b) = (a as usize, b as usize);
                let d = (x[a] - x[b]).norm() - (rest[a] - rest[b]).norm();
                assert!(d.abs() <= 1e-12, "{file}: {d:e}");
            }
        }
    }
}

#[test]
fn a_rigid_core_section_makes_a_dynamic_core() {
    let world = build(
        r#"[[rigid_core]]
name = "bone"
region = { tets_in_box = { min = [0.0, 0.0, 0.0], max = [0.1, 0.1, 0.1] } }"#,
    )
    .unwrap();
    assert_eq!(world.rigid_cores().len(), 1);
    assert_eq!(world.rigid_cores()[0].1.vertices().len(), 8);
}

#[test]
fn bad_exact_constraints_and_cores_are_refused_with_their_key() {
    for (extra, expected) in [
        (
            "[[exact_constraint]]\nkind = \"plane\"\npoint = [0.0, 0.0, 0.0]",
            "exact_constraint[0].normal: required",
        ),
        (
            "[[exact_constraint]]\nkind = \"point\"\npoint = [0.0, 0.0, 0.0]\nradius = 1.0",
            "exact_constraint[0].radius: not a key",
        ),
        (
            "[[exact_constraint]]\nkind = \"sphere\"\npoint = [0.0, 0.0, 0.0]\ncenter = [0.0, 0.0, 0.0]",
            "exact_constraint[0].radius = 0",
        ),
        (
            "[[exact_constraint]]\nkind = \"link\"\npoint = [0.1, 0.0, 0.0]",
            "exact_constraint[0]: a link joins a point to itself",
        ),
        (
            "[[exact_constraint]]\nkind = \"point\"\npoint = [0.0, 0.0, 0.0]\npath = [[1.0, 0.0, 0.0, 0.0], [0.5, 0.0, 0.0, 0.0]]",
            "exact_constraint[0].path",
        ),
        (
            "[[exact_constraint]]\nkind = \"point\"\nbody = \"nobody\"\npoint = [0.0, 0.0, 0.0]",
            "exact_constraint[0].body = \"nobody\"",
        ),
        (
            "[[rigid_core]]\nregion = { tets_in_sphere = { center = [5.0, 5.0, 5.0], radius = 0.1 } }",
            "rigid_core[0].region: selects no vertex",
        ),
        (
            "[[rigid_core]]\nregion = { tets_in_sphere = { center = [0.0, 0.0, 0.0], radius = -1.0 } }",
            "rigid_core[0].region.tets_in_sphere.radius = -1",
        ),
    ] {
        let e = build(extra).unwrap_err();
        assert!(e.contains(expected), "{extra}\n→ {e}");
    }
    // A dynamic core may not hold fixed vertices: the error names the section.
    let text = format!(
        "{}\nfixed = [{{ vertices = [0] }}]\n[[rigid_core]]\nregion = {{ tets_in_box = {{ min = [0.0, 0.0, 0.0], max = [0.1, 0.1, 0.1] }} }}\n",
        BASE.trim_end()
    );
    let e = parse_scene(&text, Path::new("test.toml"))
        .and_then(|s| s.build_world())
        .unwrap_err()
        .to_string();
    assert!(e.contains("rigid_core[0]") && e.contains("held"), "{e}");
}

/// `[exact]`: the projection's settings. `carry_core_forces` carries a constraint on a dynamic
/// core into the next step as a load (`supple::constraint::ExactSettings::carry_core_forces`):
/// a bar whose first cell is bone, pinned at its end face's centre, swings differently with it
/// (from its third step on, when a constraint has been carried).
#[test]
fn the_exact_section_sets_the_projection() {
    const PINNED_CORE: &str = r#"[[rigid_core]]
name = "bone"
region = { tets_in_box = { min = [0.0, 0.0, 0.0], max = [0.1, 0.1, 0.1] } }
[[exact_constraint]]
kind = "point"
point = [0.0, 0.05, 0.05]"#;
    let swing = |exact: &str| {
        let mut w = build(&format!("{PINNED_CORE}\n{exact}")).unwrap();
        for _ in 0..10 {
            w.step().unwrap();
        }
        assert!(
            w.constraint_residual() <= 1e-8,
            "{}",
            w.constraint_residual()
        );
        w.bodies[0].x.clone()
    };
    let default = swing("");
    assert_eq!(default, swing("[exact]\ncarry_core_forces = false"));
    let carried = swing("[exact]\ncarry_core_forces = true");
    let moved = (default.iter().zip(&carried)).fold(0.0f64, |a, (p, q)| a.max((p - q).norm()));
    assert!(moved > 0.0, "carrying the pin's force changed nothing");
    for (extra, expected) in [
        ("[exact]\ntolerance = 0.0", "exact.tolerance = 0"),
        ("[exact]\nmax_iterations = 0", "exact.max_iterations = 0"),
        ("[exact]\ncarry = true", "carry"),
    ] {
        let e = build(extra).unwrap_err();
        assert!(e.contains(expected), "{extra}\n→ {e}");
    }
}

/// Liesenfeld & Stolfi §8.2 with the paper's moving platform: a dynamic rigid body that the
/// cylinders' base springs hang on the left cylinder's fixed top. Over the first 0.25 s the
/// platform stays rigid, sags and swings (it is not fixed), and the springs hold it: every
/// spring keeps within 5 mm of its rest length, and the handle follows its path.
#[test]
fn the_platform_scene_hangs_a_rigid_platform_on_the_cylinders_springs() {
    let scene = load_scene(&repo().join("scenes/snapping_torus_platform.toml")).unwrap();
    let mut world = scene.build_world().unwrap();
    assert!(world.ipc().is_some());
    let platform = world
        .bodies
        .iter()
        .position(|b| b.name == "platform")
        .unwrap();
    assert_eq!(world.rigid_cores().len(), 1);
    let n = world.bodies[platform].n_vertices();
    assert_eq!(
        world.rigid_cores()[0].1.vertices().len(),
        n,
        "every vertex is bone"
    );
    let springs: Vec<_> = world.springs().map(|(_, s)| *s).collect();
    assert_eq!(springs.len(), 8);
    let rest = world.bodies[platform].mesh.positions.clone();
    let (mut stretch, mut moved): (f64, f64) = (0.0, 0.0);
    for _ in 0..100 {
        world.step().unwrap();
        for s in &springs {
            stretch = stretch.max((s.length(&world.bodies) - s.rest_length).abs());
        }
        let x = &world.bodies[platform].x;
        moved = moved.max(
            x.iter()
                .zip(&rest)
                .map(|(x, r)| (x - r).norm())
                .fold(0.0, f64::max),
        );
    }
    let x = &world.bodies[platform].x;
    let mut shape: f64 = 0.0;
    for a in (0..n).step_by(7) {
        for b in (0..n).step_by(11) {
            let d = (x[a] - x[b]).norm() - (rest[a] - rest[b]).norm();
            shape = shape.max(d.abs());
        }
    }
    eprintln!("platform moved {moved:.3e} m, shape error {shape:.3e} m; springs stretched up to {stretch:.3e} m");
    assert!(moved > 1e-3, "the platform did not move: {moved:e} m");
    assert!(shape < 1e-6, "the platform is not rigid: {shape:e} m");
    assert!(stretch < 5e-3, "a base spring stretched {stretch:e} m");
}
