//! Obstacle contact held inside the linearized implicit solve as sliding holds (issue 12,
//! `supple::contact::slide`): a frictionless crush compresses the box uniformly, Coulomb
//! friction sticks below the friction angle and slides above it, and a resting body thrown
//! upward leaves the ground (the hold releases when its impulse turns adhesive).

use std::path::Path;
use supple::world::World;

/// A 0.2 m box (4×4×4 cells × 5 tets, E = 1 MPa, ν = 0.33) resting on the ground (friction
/// `mu`), with `extra` scene text appended.
fn box_world(model: &str, mu: f64, gravity: [f64; 3], velocity: [f64; 3], extra: &str) -> World {
    let text = format!(
        r#"name = "box"
dt = 0.01
duration = 1.0
gravity = {gravity:?}

[integrator]
kind = "backward_euler_linearized"

[[body]]
name = "box"
mesh = {{ kind = "box", cells = [4, 4, 4], cell_size = 0.05, origin = [-0.1, 0.0, -0.1], split = 5 }}
material = {{ model = "{model}", youngs = 1e6, poisson = 0.33, density = 1000.0 }}
velocity = {velocity:?}

[[obstacle]]
name = "ground"
shape = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 1.0, 0.0]
friction = {mu:?}
{extra}"#
    );
    supple_io::parse_scene(&text, Path::new("<sliding test>"))
        .unwrap()
        .build_world()
        .unwrap()
}

fn run(w: &mut World, seconds: f64) {
    let steps = (seconds / w.dt).round() as usize;
    for _ in 0..steps {
        if let Err(d) = w.step() {
            panic!("{d}");
        }
    }
    assert_eq!(w.verdict(), None);
}

/// Smallest and largest current/rest volume ratio of body 0's tets.
fn ratio_range(w: &World) -> (f64, f64) {
    let body = &w.bodies[0];
    let x = &body.x;
    let rest = &body.mesh.positions;
    let vol = |p: &[nalgebra::Vector3<f64>], t: &[u32; 4]| {
        let [a, b, c, d] = t.map(|i| p[i as usize]);
        (b - a).cross(&(c - a)).dot(&(d - a)) / 6.0
    };
    body.mesh
        .tets
        .iter()
        .fold((f64::INFINITY, 0.0_f64), |(lo, hi), t| {
            let r = vol(x, t) / vol(rest, t);
            (lo.min(r), hi.max(r))
        })
}

/// Without friction a box pressed by a wide plate deforms affinely: every tet has the same
/// volume ratio. (Before the sliding hold, the held vertices moved sideways with a solve
/// that knew nothing of the plate — the box sprang back in it — and the corner tets of this
/// crush ended 10–40 % more compressed than the median.)
#[test]
fn a_frictionless_crush_compresses_every_tet_alike() {
    let plate = r#"
[[obstacle]]
name = "plate"
shape = "box"
half_extents = [0.4, 0.05, 0.4]
friction = 0.0
keyframe = [
  { t = 0.0, position = [0.0, 0.25, 0.0] },
  { t = 0.3, position = [0.0, 0.15, 0.0] },
]
"#;
    for model in ["corotational", "liesenfeld_stolfi"] {
        let mut w = box_world(model, 0.0, [0.0, 0.0, 0.0], [0.0; 3], plate);
        run(&mut w, 0.3);
        let (lo, hi) = ratio_range(&w);
        let top = w.bodies[0].x.iter().map(|p| p.y).fold(f64::MIN, f64::max);
        eprintln!("{model}: crushed to {top:.4} m, volume ratios {lo:.4} – {hi:.4}");
        assert!((top - 0.1).abs() < 2e-3, "{model}: top at {top}");
        assert!(lo > 0.3, "{model}: {lo}");
        assert!(hi - lo < 0.02 * hi, "{model}: ratios {lo} – {hi}");
    }
}

/// Gravity tilted by θ on a ground with μ = 0.2: at 8° (tan θ = 0.14) the box stays put; at
/// 20° (tan θ = 0.36) it slides with about `g (sin θ − μ cos θ)`.
#[test]
fn coulomb_friction_sticks_below_the_friction_angle_and_slides_above() {
    let g = 9.81_f64;
    let t = 0.5;
    for (deg, slides) in [(8.0_f64, false), (20.0, true)] {
        let th = deg.to_radians();
        let gravity = [g * th.sin(), -g * th.cos(), 0.0];
        let mut w = box_world("corotational", 0.2, gravity, [0.0; 3], "");
        let x0 = centroid_x(&w);
        run(&mut w, t);
        let dx = centroid_x(&w) - x0;
        let expected = 0.5 * g * (th.sin() - 0.2 * th.cos()) * t * t;
        eprintln!(
            "{deg}°: slid {dx:.4} m (rigid block: {:.4} m)",
            expected.max(0.0)
        );
        if slides {
            assert!(
                (dx - expected).abs() < 0.25 * expected,
                "{deg}°: {dx} against {expected}"
            );
        } else {
            assert!(dx.abs() < 2e-3, "{deg}°: crept {dx} m");
        }
    }
}

fn centroid_x(w: &World) -> f64 {
    let x = &w.bodies[0].x;
    x.iter().map(|p| p.x).sum::<f64>() / x.len() as f64
}

/// A box resting on the ground and thrown up at 2 m/s leaves it at once: its resting
/// vertices start the step held, and the hold is released when its impulse pulls.
#[test]
fn a_resting_box_thrown_up_leaves_the_ground() {
    let mut w = box_world("corotational", 0.5, [0.0, -9.81, 0.0], [0.0, 2.0, 0.0], "");
    run(&mut w, 0.1);
    let lowest = w.bodies[0].x.iter().map(|p| p.y).fold(f64::MAX, f64::min);
    // Ballistic: 2 · 0.1 − ½ · 9.81 · 0.01 = 0.151 m.
    eprintln!("lowest vertex after 0.1 s: {lowest:.4} m");
    assert!(lowest > 0.12, "{lowest}");
}
