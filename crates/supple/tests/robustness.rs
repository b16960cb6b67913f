//! What users of soft-body engines complain about, each as a test: inverted elements that
//! never recover, results that change with the scale of the scene, jitter at rest.

use supple::mesh::TetSplit;
use supple::world::World;

mod common;

use common::COROTATIONAL;

struct Setup {
    scale: f64,
    clamp: bool,
    gravity: f64,
    alpha: f64,
    dt: f64,
}

fn bar(s: &Setup) -> World {
    let desc = common::bar(
        [6, 2, 2],
        0.1 * s.scale,
        TetSplit::Five,
        COROTATIONAL,
        s.clamp,
    )
    .with_damping(s.alpha, 0.0);
    common::world(desc, s.gravity, s.dt, common::pcg(1e-12))
}

#[test]
fn an_inverted_body_recovers() {
    // Push the whole far end of a free bar through itself: many tets start inverted.
    let mut w = bar(&Setup {
        scale: 1.0,
        clamp: false,
        gravity: 0.0,
        alpha: 1.0,
        dt: 0.01,
    });
    let b = &mut w.bodies[0];
    for x in &mut b.x {
        if x.x > 0.45 {
            x.x = 0.9 - x.x; // mirror the last cells back past x = 0.45
        }
    }
    let inverted_before = b.volume_ratios().iter().filter(|&&r| r < 0.0).count();
    assert!(inverted_before > 10, "{inverted_before}");
    for _ in 0..300 {
        w.step().unwrap();
    }
    let b = &w.bodies[0];
    let ratios = b.volume_ratios();
    assert!(
        ratios.iter().all(|&r| r > 0.5),
        "min ratio {}",
        b.min_volume_ratio()
    );
    assert!(
        (b.volume() / b.mesh.volume() - 1.0).abs() < 0.02,
        "volume {}",
        b.volume() / b.mesh.volume()
    );
}

#[test]
fn the_same_scene_at_1_m_and_1_cm_gives_the_same_motion() {
    // Scaling lengths by s with E and ρ fixed: times scale by s, gravity by 1/s, and the
    // motion must be the same up to the factor s (nothing in the engine may use an absolute
    // length tolerance).
    let run = |s: f64| {
        let mut w = bar(&Setup {
            scale: s,
            clamp: true,
            gravity: 9.81 / s,
            alpha: 0.0,
            dt: 0.01 * s,
        });
        for _ in 0..60 {
            w.step().unwrap();
        }
        w.bodies[0].x.iter().map(|x| x / s).collect::<Vec<_>>()
    };
    let (a, b) = (run(1.0), run(0.01));
    let sag = a.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
    assert!(sag < -0.05, "the bar must actually move: {sag}");
    let err = a
        .iter()
        .zip(&b)
        .map(|(p, q)| (p - q).norm())
        .fold(0.0, f64::max);
    println!("scale test: max difference {err:e}, sag {sag}");
    assert!(err < 1e-8, "max difference {err:e} m (bar length 0.6 m)");
}

#[test]
fn a_damped_bar_comes_to_rest_without_jitter() {
    let mut w = bar(&Setup {
        scale: 1.0,
        clamp: true,
        gravity: 9.81,
        alpha: 3.0,
        dt: 0.01,
    });
    let mut peak: f64 = 0.0;
    for _ in 0..1000 {
        w.step().unwrap();
        peak = peak.max(w.bodies[0].kinetic_energy());
    }
    let last = w.bodies[0].kinetic_energy();
    assert!(peak > 0.1, "{peak}");
    assert!(
        last < 1e-10 * peak,
        "kinetic energy {last:e} after 10 s (peak {peak:e})"
    );
}
