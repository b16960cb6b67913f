//! Scene files: the bundled scenes load, and every documented refusal names its key.

use std::path::{Path, PathBuf};
use supple_io::{load_scene, parse_scene, SceneError};

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
fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }]
"#;

fn err(text: &str) -> String {
    parse_scene(text, Path::new("test.toml"))
        .unwrap_err()
        .to_string()
}

#[test]
fn bundled_bar_scene_builds_the_mueller_bar() {
    let scene = load_scene(&repo().join("scenes/bar.toml")).unwrap();
    assert_eq!(scene.name, "bar");
    assert_eq!(scene.steps(), 300);
    let world = scene.build_world().unwrap();
    let bar = &world.bodies[0];
    assert_eq!((bar.n_vertices(), bar.elems.len()), (176, 450));
    assert_eq!(bar.fixed.iter().filter(|&&f| f).count(), 16);
    assert_eq!(bar.model.name(), "corotational");
    assert!((bar.mass.total() - 90.0).abs() < 1e-9);
    // The probe is the vertex nearest to (1.0, 0.3, 0.3): the far top corner.
    assert_eq!(scene.probes[0].vertex, 175);
}

#[test]
fn every_bundled_scene_loads() {
    let mut n = 0;
    for dir in ["scenes", "scenes/bench"] {
        for entry in std::fs::read_dir(repo().join(dir)).unwrap().flatten() {
            if entry.path().extension().is_some_and(|e| e == "toml") {
                let scene = load_scene(&entry.path()).unwrap_or_else(|e| panic!("{e}"));
                // Building the 160k-tet bench bar takes a while in debug builds: parse only.
                if scene.adaptive.is_some() {
                    scene.build_adaptive().unwrap_or_else(|e| panic!("{e}"));
                } else if !scene.name.contains("160k") {
                    scene.build_world().unwrap_or_else(|e| panic!("{e}"));
                }
                n += 1;
            }
        }
    }
    assert!(n >= 5, "{n}");
}

#[test]
fn unknown_keys_are_refused_with_line_and_key_path() {
    let text = BASE.replace("youngs = 1e5", "youngs_modulus = 1e5");
    let e = err(&text);
    assert!(e.starts_with("test.toml:7:"), "{e}");
    assert!(
        e.contains("body[0].material.youngs_modulus: unknown field `youngs_modulus`"),
        "{e}"
    );

    let e = err(&format!("{BASE}\n[solver]\ntolerence = 1e-6\n"));
    assert!(
        e.contains("solver.tolerence: unknown field `tolerence`"),
        "{e}"
    );
    assert!(e.starts_with("test.toml:11:"), "{e}");

    let e = err(&BASE.replace("\"corotational\"", "\"neo_hookean\""));
    assert!(
        e.contains("body[0].material.model: unknown variant `neo_hookean`"),
        "{e}"
    );
}

#[test]
fn impossible_values_are_refused_with_the_key_path_and_reason() {
    let cases = [
        (
            "poisson = 0.33",
            "poisson = 0.5",
            "body[0].material.poisson = 0.5: must be below 0.5",
        ),
        (
            "poisson = 0.33",
            "poisson = 0.7",
            "body[0].material.poisson = 0.7: must be below 0.5",
        ),
        (
            "youngs = 1e5",
            "youngs = 0.0",
            "body[0].material.youngs = 0: must be a finite number above 0",
        ),
        (
            "youngs = 1e5",
            "youngs = -2e3",
            "body[0].material.youngs = -2000: must be a finite number above 0",
        ),
        (
            "density = 1000.0",
            "density = 0.0",
            "body[0].material.density = 0: must be a finite number above 0",
        ),
        (
            "dt = 0.01",
            "dt = -0.01",
            "dt = -0.01: must be a finite number above 0",
        ),
        (
            "cells = [4, 1, 1]",
            "cells = [4, 0, 1]",
            "body[0].mesh.cells = [4, 0, 1]: every count must be at least 1",
        ),
        (
            "normal = [-1.0, 0.0, 0.0]",
            "normal = [0.0, 0.0, 0.0]",
            "body[0].fixed[0].plane.normal = [0.0, 0.0, 0.0]: must not be zero",
        ),
    ];
    for (from, to, expected) in cases {
        let text = BASE.replace(from, to);
        assert_eq!(err(&text), format!("test.toml: {expected}"));
    }
    let text = BASE.replace(
        "point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0]",
        "point = [5.0, 0.0, 0.0], normal = [1.0, 0.0, 0.0]",
    );
    assert_eq!(err(&text), "test.toml: body[0].fixed[0]: selects no vertex");
    let text = BASE.replace(
        "fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }]",
        "fixed = [{ vertices = [0, 99] }]",
    );
    assert_eq!(err(&text), "test.toml: body[0].fixed[0].vertices: vertex 99 is out of range (the mesh has 20 vertices)");
}

#[test]
fn probes_bodies_and_mesh_files() {
    let text = format!("{BASE}\n[[probe]]\nname = \"p\"\nbody = \"nope\"\npoint = [0, 0, 0]\n");
    assert_eq!(
        err(&text),
        "test.toml: probe[0].body = \"nope\": no body has this name"
    );

    // A TetGen mesh path is relative to the scene file; a missing one names the scene, the
    // key and the file.
    let text = BASE.replace(
        "mesh = { kind = \"box\", cells = [4, 1, 1], cell_size = 0.1 }",
        "mesh = { kind = \"tetgen\", path = \"missing/bar\" }",
    );
    let e = parse_scene(&text, Path::new("/tmp/scenes/test.toml")).unwrap_err();
    assert!(matches!(e, SceneError::Mesh { .. }));
    assert!(
        e.to_string()
            .starts_with("/tmp/scenes/test.toml: body[0].mesh.path: /tmp/scenes/missing/bar.node:"),
        "{e}"
    );

    // A bundled mesh, moved and rotated: orientation survives the transform.
    let bundled = repo().join("scenes/meshes/tube_solid_1k.node");
    {
        let text = BASE
            .replace(
                "mesh = { kind = \"box\", cells = [4, 1, 1], cell_size = 0.1 }",
                &format!("mesh = {{ kind = \"tetgen\", path = {:?} }}\ntransform = {{ rotate_deg = [0, 0, 45], translate = [0, 0.5, 0], scale = 2.0 }}", bundled.display().to_string()),
            )
            .replace("fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }]", "");
        let scene = parse_scene(&text, Path::new("test.toml")).unwrap();
        let w = scene.build_world().unwrap();
        assert_eq!(w.bodies[0].elems.len(), 1034);
    }
}

#[test]
fn picture_output_keys_parse_and_are_checked() {
    let base = "dt = 0.01\nduration = 1.0\n[[body]]\nmesh = { kind = \"box\", cells = [1, 1, 1], cell_size = 0.1 }\nmaterial = { model = \"linear\", youngs = 1e5, poisson = 0.3, density = 1000.0 }\n";
    let with = |output: &str| format!("{base}[output]\n{output}\n");
    let s = parse_scene(
        &with("png_every = 3\ngif = false\ngif_fps = 10\ngif_size = [100, 80]\nimage_size = [800, 600]\ncolor = \"von_mises\"\nedges = false\nplots = false"),
        Path::new("test.toml"),
    )
    .unwrap();
    let o = &s.output;
    assert_eq!((o.png_every, o.gif, o.gif_fps), (3, Some(false), 10.0));
    assert_eq!((o.gif_size, o.image_size), ([100, 80], [800, 600]));
    assert_eq!(
        (o.color, o.edges, o.plots),
        (supple_io::ColorBy::VonMises, false, false)
    );
    let d = parse_scene(base, Path::new("test.toml")).unwrap().output;
    assert_eq!(
        (d.gif, d.color, d.image_size),
        (None, supple_io::ColorBy::Body, [640, 480])
    );
    assert!(err(&with("gif_fps = 0")).contains("output.gif_fps = 0: must be above 0"));
    assert!(err(&with("image_size = [8, 600]")).contains("output.image_size = [8, 600]"));
    assert!(err(&with("color = \"red\"")).contains("output.color"));
}

#[test]
fn cholesky_solver_keys_build_a_prefactored_world() {
    let text = format!("{BASE}\n[solver]\nkind = \"cholesky\"\nordering = \"amd\"\n")
        .replace("\"corotational\"", "\"linear\"");
    let scene = parse_scene(&text, Path::new("test.toml")).unwrap();
    let mut world = scene.build_world().unwrap();
    for _ in 0..5 {
        world.step().unwrap();
        let s = world.last_stats()[0];
        assert_eq!(s.solver_iterations, 0);
        assert!(s.solver_converged && s.solver_residual < 1e-10, "{s:?}");
    }
    let e = err(&format!(
        "{BASE}\n[solver]\nkind = \"cholesky\"\nordering = \"metis\"\n"
    ));
    assert!(
        e.contains("solver.ordering: unknown variant `metis`"),
        "{e}"
    );
}

#[test]
fn material_options_and_native_constants() {
    use supple::fem::material::{
        CorotationalSettings, CorotationalTangent, ModelKind, RotationField, RotationMethod,
        ViscosityKind,
    };
    let with = |material: &str| {
        BASE.replace(
            "material = { model = \"corotational\", youngs = 1e5, poisson = 0.33, density = 1000.0 }",
            &format!("material = {{ {material}, density = 1000.0 }}"),
        )
    };
    let body = |material: &str| {
        parse_scene(&with(material), Path::new("test.toml"))
            .unwrap_or_else(|e| panic!("{e}"))
            .bodies
            .remove(0)
    };
    let b = body("model = \"corotational\", youngs = 1e5, poisson = 0.33, rotation = \"qr\", update_every = 4");
    assert_eq!(
        b.model,
        ModelKind::Corotational(CorotationalSettings {
            tangent: CorotationalTangent::Rotated,
            rotation: RotationMethod::Qr,
            update_every: 4,
        })
    );
    let b = body("model = \"warped\", youngs = 1e5, poisson = 0.33, rotation_field = \"edge_frame\", ghost_correction = false");
    assert_eq!(
        b.model,
        ModelKind::Warped {
            field: RotationField::EdgeFrame,
            ghost_correction: false,
            tangent: supple::fem::material::WarpedTangent::Rotated,
        }
    );
    let b = body("model = \"warped\", youngs = 1e5, poisson = 0.33, tangent = \"element\"");
    assert_eq!(
        b.model,
        ModelKind::Warped {
            field: RotationField::LeastSquares,
            ghost_correction: true,
            tangent: supple::fem::material::WarpedTangent::Element,
        }
    );
    for (material, want) in [
        (
            "model = \"warped\", youngs = 1e5, poisson = 0.33, tangent = \"exact\"",
            "body[0].material.tangent = \"exact\": the warped model has no energy",
        ),
        (
            "model = \"corotational\", youngs = 1e5, poisson = 0.33, tangent = \"element\"",
            "body[0].material.tangent = \"element\": a warped-model tangent",
        ),
        (
            "model = \"stvk\", youngs = 1e5, poisson = 0.33, tangent = \"rotated\"",
            "body[0].material.tangent: only the corotational model",
        ),
    ] {
        let got = parse_scene(&with(material), Path::new("test.toml"))
            .unwrap_err()
            .to_string();
        assert!(got.contains(want), "want {want:?} in: {got}");
    }
    // Lamé parameters and Liesenfeld–Stolfi's bulk/shear moduli map to the same (E, ν).
    let (mu, lambda) = (2.0e4, 5.0e4);
    let e = mu * (3.0 * lambda + 2.0 * mu) / (lambda + mu);
    let nu = lambda / (2.0 * (lambda + mu));
    for m in [
        format!("model = \"stvk\", mu = {mu}, lambda = {lambda}"),
        format!(
            "model = \"liesenfeld_stolfi\", alpha = {}, beta = {mu}",
            lambda + 2.0 / 3.0 * mu
        ),
    ] {
        let b = body(&m);
        assert!((b.youngs / e - 1.0).abs() < 1e-12, "{m}: {}", b.youngs);
        assert!((b.poisson / nu - 1.0).abs() < 1e-12, "{m}: {}", b.poisson);
    }
    assert_eq!(
        body("model = \"hybrid\", youngs = 1e5, poisson = 0.3").model,
        ModelKind::Hybrid
    );

    // Viscosity.
    let text =
        format!("{BASE}viscosity = {{ kind = \"strain_rate\", d_mu = 1.0, d_lambda = 10.0 }}\n");
    let s = parse_scene(&text, Path::new("test.toml")).unwrap();
    assert_eq!(
        s.bodies[0].viscosity,
        ViscosityKind::StrainRate {
            d_mu: 1.0,
            d_lambda: 10.0
        }
    );
    let text =
        format!("{BASE}viscosity = {{ kind = \"liesenfeld_stolfi\", eta1 = -1.0, eta2 = 0.0 }}\n");
    assert_eq!(
        err(&text),
        "test.toml: body[0].viscosity.eta1 = -1: must be a finite number ≥ 0"
    );

    // Refusals name the key.
    let refusals = [
        (
            "model = \"linear\", youngs = 1e5, poisson = 0.3, rotation = \"svd\"",
            "body[0].material.rotation: only the corotational model has this option",
        ),
        (
            "model = \"corotational\", youngs = 1e5, poisson = 0.3, ghost_correction = true",
            "body[0].material.ghost_correction: only the warped model has this option",
        ),
        (
            "model = \"stvk\", youngs = 1e5, mu = 3.0",
            "body[0].material: give the elastic constants once: both youngs/poisson and mu/lambda are set",
        ),
        (
            "model = \"stvk\", mu = 3.0",
            "body[0].material.lambda: missing (it goes with mu)",
        ),
        (
            "model = \"liesenfeld_stolfi\", alpha = 1e5, beta = 0.0",
            "body[0].material.beta = 0: must be a finite number above 0 (the shear modulus)",
        ),
        (
            "model = \"corotational\", youngs = 1e5, poisson = 0.3, update_every = 0",
            "body[0].material.update_every = 0: must be at least 1",
        ),
        (
            "model = \"corotational\", youngs = 1e5, poisson = 0.3, rotation = \"qr\", tangent = \"exact\"",
            "body[0].material.tangent = \"exact\": the exact tangent needs the polar rotation (rotation = \"polar\" or \"svd\"); QR rotations have no energy to differentiate",
        ),
    ];
    for (m, expected) in refusals {
        assert_eq!(err(&with(m)), format!("test.toml: {expected}"), "{m}");
    }
    let e = err(&with("model = \"stvk\", density2 = 1.0"));
    assert!(e.contains("unknown field `density2`"), "{e}");
    // No elastic pair: the defaults (E = 1e5 Pa, ν = 0.33), as the Python module's.
    let s = parse_scene(&with("model = \"stvk\""), Path::new("test.toml")).unwrap();
    assert_eq!((s.bodies[0].youngs, s.bodies[0].poisson), (1e5, 0.33));
}

#[test]
fn every_integrator_kind_parses_builds_and_steps() {
    use supple::time::IntegratorKind;
    for (kind, extra) in [
        ("backward_euler_linearized", ""),
        (
            "backward_euler",
            "newton_tolerance = 1e-8\nnewton_max_iterations = 30\nline_search = false",
        ),
        ("bdf2", ""),
        ("bdf3", ""),
        ("static", "load_steps = 4"),
        ("symplectic_euler", "substeps = 0"),
        ("newmark", "levels = 3"),
        ("rkf45", "rtol = 1e-5\natol = 1e-7"),
    ] {
        let text = format!("{BASE}\n[integrator]\nkind = \"{kind}\"\n{extra}\n");
        let scene =
            parse_scene(&text, Path::new("test.toml")).unwrap_or_else(|e| panic!("{kind}: {e}"));
        match (kind, scene.integrator) {
            ("backward_euler", IntegratorKind::BackwardEuler { newton }) => {
                assert_eq!(
                    (newton.tolerance, newton.max_iterations, newton.line_search),
                    (1e-8, 30, false)
                );
            }
            ("bdf3", IntegratorKind::Bdf { order, .. }) => assert_eq!(order, 3),
            ("static", IntegratorKind::Static { load_steps, .. }) => assert_eq!(load_steps, 4),
            ("newmark", IntegratorKind::Newmark { levels, .. }) => assert_eq!(levels, 3),
            (
                "rkf45",
                IntegratorKind::Rkf45 {
                    rtol,
                    atol,
                    substeps,
                },
            ) => {
                assert_eq!((rtol, atol, substeps), (1e-5, 1e-7, 0))
            }
            _ => {}
        }
        let mut world = scene
            .build_world()
            .unwrap_or_else(|e| panic!("{kind}: {e}"));
        for _ in 0..2 {
            world.step().unwrap_or_else(|e| panic!("{kind}: {e}"));
        }
    }
    let refusals = [
        (
            "kind = \"bdf2\"\nload_steps = 3",
            "integrator.load_steps: not a setting of `bdf2` (only of static)",
        ),
        (
            "kind = \"newmark\"\nrtol = 1e-3",
            "integrator.rtol: not a setting of `newmark` (only of rkf45)",
        ),
        (
            "kind = \"backward_euler\"\nnewton_tolerance = 2.0",
            "integrator.newton_tolerance = 2: must be between 0 and 1 (a relative residual)",
        ),
        (
            "kind = \"static\"\nload_steps = 0",
            "integrator.load_steps = 0: must be at least 1",
        ),
        (
            "kind = \"newmark\"\nlevels = 99",
            "integrator.levels = 99: must be at most 30",
        ),
        (
            "kind = \"rkf45\"\natol = -1.0",
            "integrator.atol = -1: must be a finite number ≥ 0",
        ),
    ];
    for (section, expected) in refusals {
        let text = format!("{BASE}\n[integrator]\n{section}\n");
        assert_eq!(err(&text), format!("test.toml: {expected}"), "{section}");
    }
    let e = err(&format!("{BASE}\n[integrator]\nkind = \"verlet\"\n"));
    assert!(
        e.contains("integrator.kind: unknown variant `verlet`"),
        "{e}"
    );
}

/// Issue 18: every preconditioner is a scene key; each one's world steps and converges, the
/// multigrid's in fewer iterations than block Jacobi's, and it reports its hierarchy builds;
/// a scene without the key gets Eisenstat SSOR.
#[test]
fn every_preconditioner_key_builds_a_converging_world() {
    let mut iterations = Vec::new();
    // "" is the scene without the key: the default, Eisenstat SSOR.
    let keys = [
        "block_jacobi",
        "block_ssor",
        "multicolor_ssor",
        "amg",
        "eisenstat_ssor",
        "",
    ];
    for pc in keys {
        let key = if pc.is_empty() {
            String::new()
        } else {
            format!("preconditioner = \"{pc}\"\n")
        };
        let text = format!("{BASE}\n[solver]\n{key}tolerance = 1e-8\n");
        let scene = parse_scene(&text, Path::new("test.toml")).unwrap();
        let mut world = scene.build_world().unwrap();
        let mut its = 0;
        for _ in 0..5 {
            world.step().unwrap();
            let s = world.last_stats()[0];
            assert!(
                s.solver_converged && s.solver_residual <= 1e-8,
                "{pc}: {s:?}"
            );
            its += s.solver_iterations;
        }
        let builds: f64 = world
            .integrator_counters()
            .iter()
            .flat_map(|(_, c)| c.iter())
            .filter(|(k, _)| k == "amg_builds")
            .map(|(_, v)| v)
            .sum();
        assert_eq!(builds >= 1.0, pc == "amg", "{pc}: {builds} builds");
        iterations.push(its);
    }
    assert!(iterations[3] < iterations[0], "{iterations:?}");
    // Eisenstat's trick runs block SSOR's iterates (±1 iteration per solve in rounding), and
    // it is the default.
    assert!(iterations[4].abs_diff(iterations[1]) <= 5, "{iterations:?}");
    assert!(iterations[4] < iterations[0], "{iterations:?}");
    assert_eq!(iterations[5], iterations[4], "{iterations:?}");
    assert!(
        err(&format!("{BASE}\n[solver]\npreconditioner = \"ilu\"\n"))
            .contains("solver.preconditioner")
    );
}
