//! Resting body–body contacts held from the step's start (`[contact] hold_resting`,
//! `contact/pipeline/resting_hold.rs`).

mod common;

use common::{cube_mesh, implicit, COROTATIONAL};
use supple::body::{Body, BodyDesc};
use supple::contact::ContactSettings;
use supple::nalgebra::Vector3;
use supple::world::World;

fn cube(name: &str, origin: Vector3<f64>) -> BodyDesc {
    BodyDesc::new(
        name,
        cube_mesh(3, 0.05, origin),
        COROTATIONAL,
        2e4,
        0.3,
        1000.0,
    )
}

fn momentum(w: &World) -> Vector3<f64> {
    w.bodies
        .iter()
        .map(|b| {
            (b.v.iter().zip(&b.mass.lumped))
                .map(|(v, m)| *m * v)
                .sum::<Vector3<f64>>()
        })
        .sum()
}

/// Two free cubes without gravity, the upper one thrown down onto the lower at 0.3 m/s:
/// while they touch, the upper cube's vertices rest on the lower one's faces and are held
/// there, their impulses passed to the faces one step later, equal and opposite; then the
/// cubes part. Within the contact the pair's momentum differs from its start by the
/// impulses not yet passed on (up to 13 % of it here, measured); once the last one is
/// passed on it is back to the start, to the solver's tolerance (8e-9 relative measured;
/// 1e-6 allowed). Passing on the second solve's impulses instead of the first's, in this
/// free island whose momentum the surface hold restores to that after the first solves,
/// left 1.4e-3 (measured).
#[test]
fn resting_holds_keep_the_islands_linear_momentum() {
    let lower = Body::new(cube("lower", Vector3::zeros())).unwrap();
    let mut upper = Body::new(cube("upper", Vector3::new(0.01, 0.152, 0.01))).unwrap();
    for v in &mut upper.v {
        *v = Vector3::new(0.0, -0.3, 0.0);
    }
    let mut w = World::new(vec![lower, upper], Vector3::zeros(), 0.01, implicit())
        .unwrap()
        .with_contact(ContactSettings {
            hold_resting: true,
            ..ContactSettings::default()
        })
        .unwrap();
    let p0 = momentum(&w);
    let (mut held_steps, mut last_held) = (0, 0);
    for step in 0..40 {
        w.step().unwrap();
        if w.contact_stats().unwrap().resting_holds > 0 {
            held_steps += 1;
            last_held = step;
        }
    }
    let change = (momentum(&w) - p0).norm() / p0.norm();
    eprintln!("steps with resting holds: {held_steps}, the last {last_held}; momentum change at the end {change:.3e} of the initial");
    assert!(
        held_steps >= 3,
        "the holds were taken in {held_steps} steps"
    );
    assert!(last_held < 38, "a hold is still pending at the end");
    assert!(change < 1e-6, "momentum changed by {change} of the initial");
}

/// The resting stack of `tests/contact.rs` (a 15 cm, 20 kPa cube dropped 5 mm onto another
/// whose base is fixed, dt = 10 ms, μ = 0.5, 1 s) with the resting holds: the energy may only
/// fall (a rise of 0.5 J above an earlier minimum allowed, as there), and holds are taken.
#[test]
fn the_resting_stack_with_resting_holds_gains_no_energy() {
    let lower =
        Body::new(cube("lower", Vector3::zeros()).with_fixed_where(|p| p.y < 1e-3)).unwrap();
    let upper = Body::new(cube("upper", Vector3::new(0.0, 0.155, 0.0))).unwrap();
    let g = Vector3::new(0.0, -9.81, 0.0);
    let mut w = World::new(vec![lower, upper], g, 0.01, implicit())
        .unwrap()
        .with_contact(ContactSettings {
            friction: 0.5,
            hold_resting: true,
            ..ContactSettings::default()
        })
        .unwrap();
    let energy = |w: &mut World| -> f64 {
        (w.bodies.iter_mut())
            .map(|b| b.kinetic_energy() + b.elastic_energy().unwrap() + b.potential_energy(&g))
            .sum()
    };
    let e0 = energy(&mut w);
    let (mut lowest, mut rise) = (e0, 0.0f64);
    let mut held = 0;
    for _ in 0..100 {
        w.step().unwrap();
        held += w.contact_stats().unwrap().resting_holds;
        let e = energy(&mut w);
        rise = rise.max(e - lowest);
        lowest = lowest.min(e);
    }
    eprintln!(
        "resting stack with resting holds: energy rise {rise:.4} J, {held} vertex-steps held"
    );
    assert!(held > 0, "no resting hold was taken");
    assert!(rise < 0.5, "the held contact gained {rise} J");
}
