//! The page's simulation on the host: the bundled scenes load from bytes, step, pick, and
//! take new settings.

use nalgebra::Vector3;
use std::collections::BTreeMap;
use std::path::Path;
use supple_web::Sim;

fn scene(name: &str, meshes: &[&str]) -> Sim {
    let dir = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenes"));
    let text = std::fs::read_to_string(dir.join(name)).unwrap();
    let files: BTreeMap<String, Vec<u8>> = meshes
        .iter()
        .map(|m| (m.to_string(), std::fs::read(dir.join(m)).unwrap()))
        .collect();
    Sim::load(&text, name, files).unwrap()
}

fn tube() -> Sim {
    scene(
        "tube_drop.toml",
        &["meshes/tube_solid_1k.node", "meshes/tube_solid_1k.ele"],
    )
}

#[test]
fn the_tube_falls_and_a_ray_from_above_hits_it() {
    let mut sim = tube();
    let n_tris = sim.triangles().len() / 3;
    assert_eq!(sim.triangle_offsets(), &[0, n_tris]);
    assert_eq!(sim.positions().len(), 3 * sim.vertex_offsets()[1]);
    let y0 = sim.positions()[1];
    sim.step(10).unwrap();
    assert!(sim.positions()[1] < y0, "the tube falls");
    // Straight down through the middle of the tube's bounding box.
    let b = &sim.world().bodies[0];
    let mid = b.x.iter().sum::<Vector3<f64>>() / b.x.len() as f64;
    let hit = sim
        .pick(
            mid + Vector3::new(0.0, 5.0, 0.0),
            Vector3::new(0.0, -1.0, 0.0),
        )
        .expect("a hit");
    assert_eq!(hit.body, 0);
    let p = sim.surface_point(0, hit.triangle, hit.barycentric).unwrap();
    assert!((p - hit.point).norm() < 1e-9);
    assert!(hit.point.y > mid.y - 1e-9);
    assert!(sim
        .pick(
            mid + Vector3::new(0.0, 5.0, 0.0),
            Vector3::new(0.0, 1.0, 0.0)
        )
        .is_none());
}

#[test]
fn a_stiffer_bar_sags_less_and_settings_keep_the_state() {
    let bar = || scene("bar.toml", &[]);
    let tip_y = |s: &Sim| {
        s.world().bodies[0]
            .x
            .iter()
            .map(|p| p.y)
            .fold(f64::MAX, f64::min)
    };
    let (mut soft, mut stiff) = (bar(), bar());
    stiff.step(1).unwrap();
    let t = stiff.world().time;
    let mut o = stiff.overrides().clone();
    o.youngs = Some(1e7);
    stiff.set_overrides(o).unwrap();
    assert_eq!(stiff.world().time, t, "the time is kept");
    soft.step(30).unwrap();
    stiff.step(29).unwrap();
    assert!(
        tip_y(&stiff) > tip_y(&soft) + 1e-3,
        "{} vs {}",
        tip_y(&stiff),
        tip_y(&soft)
    );
    // Every model and integrator the page offers builds on the bar and steps.
    for model in [
        "linear",
        "corotational",
        "warped",
        "stvk",
        "hybrid",
        "liesenfeld_stolfi",
        "fixed_corotated",
        "mass_spring",
    ] {
        let mut s = bar();
        let mut o = s.overrides().clone();
        o.model = Some(model.into());
        s.set_overrides(o).unwrap();
        s.step(2).unwrap();
    }
    for integrator in [
        "backward_euler_linearized",
        "backward_euler",
        "bdf2",
        "bdf3",
        "static",
        "symplectic_euler",
        "newmark",
        "rkf45",
    ] {
        let mut s = bar();
        let mut o = s.overrides().clone();
        o.integrator = Some(integrator.into());
        s.set_overrides(o)
            .unwrap_or_else(|e| panic!("{integrator}: {e}"));
        s.step(2).unwrap_or_else(|e| panic!("{integrator}: {e}"));
    }
    // A refused setting changes nothing.
    let mut s = bar();
    let before = s.overrides().clone();
    let mut o = before.clone();
    o.dt = Some(-1.0);
    assert!(s.set_overrides(o).unwrap_err().contains("dt"));
    assert_eq!(s.overrides(), &before);
}

/// A diverged world is not stepped on from its wreck: a new setting starts it again from the
/// scene's start (the page's recovery: any slider after a failure gives a running world).
#[test]
fn after_a_divergence_a_setting_restarts_the_world() {
    // An explicit step 100× past its stability limit (one substep: no automatic CFL split).
    let text =
        "dt = 0.01\nduration = 1.0\n[integrator]\nkind = \"symplectic_euler\"\nsubsteps = 1\n\
        [[body]]\nmesh = { kind = \"box\", cells = [4, 1, 1], cell_size = 0.1 }\n\
        material = { model = \"corotational\", youngs = 1e8, poisson = 0.3, density = 1000.0 }\n\
        fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }]\n";
    let mut s = Sim::load(text, "explode.toml", BTreeMap::new()).unwrap();
    let err = (0..200).find_map(|_| s.step(1).err());
    let err = err.expect("the explicit step diverges");
    assert_eq!(s.step(1).unwrap_err(), err, "a failed world stays stopped");
    let mut o = s.overrides().clone();
    o.youngs = Some(1e3);
    s.set_overrides(o).unwrap();
    assert_eq!(s.world().time, 0.0, "started again");
    s.step(5).unwrap();
    assert!(s.world().bodies[0]
        .x
        .iter()
        .all(|p| p.iter().all(|c| c.is_finite())));
}

/// Every body's positions and velocities, as bits.
fn state_bits(w: &supple::world::World) -> Vec<u64> {
    (w.bodies.iter())
        .flat_map(|b| b.x.iter().chain(&b.v))
        .flat_map(|p| p.iter().map(|c| c.to_bits()).collect::<Vec<_>>())
        .collect()
}

#[test]
fn a_handed_over_state_is_where_the_page_starts_and_resets_to() {
    // The script's world: the tube stepped natively (as `supple.view(world)` hands it over).
    let mut native = tube();
    native.step(12).unwrap();
    let json = supple_io::snapshot::Snapshot::of(native.world()).to_json();
    let mut page = tube();
    page.set_start(&json).unwrap();
    assert_eq!(state_bits(page.world()), state_bits(native.world()));
    assert_eq!(
        (page.world().time, page.world().steps),
        (native.world().time, 12)
    );
    // Stepping on, the page and the script agree to the solver's tolerance, not bitwise: the
    // state leaves out the integrator's warm start (the last steps' solutions that seed CG).
    native.step(5).unwrap();
    page.step(5).unwrap();
    let gap = (page.world().bodies[0].x.iter())
        .zip(&native.world().bodies[0].x)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    assert!(gap < 1e-7, "{gap} m apart after 5 steps");
    page.reset().unwrap();
    assert_eq!(
        page.world().steps,
        12,
        "reset returns to the handed-over state"
    );
    // A new setting on a failed world restarts from it too; a state of another scene is
    // refused and changes nothing.
    let bar = scene("bar.toml", &[]);
    let other = supple_io::snapshot::Snapshot::of(bar.world()).to_json();
    let before = state_bits(page.world());
    let err = page.set_start(&other).unwrap_err();
    assert!(err.contains("bodies[0]"), "{err}");
    assert_eq!(state_bits(page.world()), before);
    assert!(page
        .set_start("{")
        .unwrap_err()
        .starts_with("the world state: not a world state"));
}
