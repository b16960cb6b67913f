//! Detection passes that skip pairs (`contact/pipeline/skips.rs`): the response's later passes
//! refit and search the BVH only around the vertices the last pushes moved, and the contact
//! phase after the surface hold's second solves tests only the pairs with a vertex whose path
//! changed since the first phase ended without a meeting pair. With the check switched on,
//! every such pass is followed by the full pass, which must find exactly the same pairs (the
//! world panics otherwise); the check itself must leave the step's results bitwise alone.

mod common;

use common::{cube_mesh, implicit};
use supple::body::{Body, BodyDesc};
use supple::contact::{BroadPhaseKind, ContactSettings, NarrowPhase, Response, SkipChecks};
use supple::fem::material::{CorotationalTangent, ModelKind};
use supple::nalgebra::Vector3;
use supple::world::World;

const COROT: ModelKind = ModelKind::corotational(CorotationalTangent::Rotated);

/// Two soft cubes: the upper one dropped onto the lower one (base fixed) under gravity, as
/// the resting stack of `tests/contact.rs`, or, with `thrown`, two free cubes without
/// gravity, the upper one thrown onto the other at `thrown` m/s down and 0.3 × that sideways.
fn stack(settings: ContactSettings, thrown: f64) -> World {
    let cube = |name: &str, origin: Vector3<f64>| {
        BodyDesc::new(name, cube_mesh(3, 0.05, origin), COROT, 2e4, 0.3, 1000.0)
    };
    let lower = if thrown > 0.0 {
        Body::new(cube("lower", Vector3::zeros())).unwrap()
    } else {
        Body::new(cube("lower", Vector3::zeros()).with_fixed_where(|p| p.y < 1e-3)).unwrap()
    };
    let mut upper = Body::new(cube("upper", Vector3::new(0.01, 0.155, 0.02))).unwrap();
    let g = if thrown > 0.0 {
        for v in &mut upper.v {
            *v = Vector3::new(0.3 * thrown, -thrown, 0.0);
        }
        Vector3::zeros()
    } else {
        Vector3::new(0.0, -9.81, 0.0)
    };
    World::new(vec![lower, upper], g, 0.01, implicit())
        .unwrap()
        .with_contact(ContactSettings {
            response: Response::Projection,
            friction: 0.5,
            ..settings
        })
        .unwrap()
}

/// Steps `w` `n` times with the check `on`; returns every body's final positions and
/// velocities, the passes checked, and the pairs tested and steps solved again over the run.
fn run(mut w: World, n: usize, on: bool) -> (Vec<Vector3<f64>>, SkipChecks, usize, usize) {
    w.contact_mut().unwrap().set_check_skips(on);
    let (mut tested, mut resolves) = (0, 0);
    for _ in 0..n {
        w.step().unwrap();
        let s = w.contact_stats().unwrap();
        tested += s.pairs_tested;
        resolves += usize::from(s.surface_resolves > 0);
    }
    let state = (w.bodies.iter())
        .flat_map(|b| b.x.iter().chain(&b.v).copied())
        .collect();
    let checked = w.contact().unwrap().skips_checked();
    (state, checked, tested, resolves)
}

fn check(settings: ContactSettings, thrown: f64, n: usize) -> SkipChecks {
    let (plain, none, tested, resolves) = run(stack(settings.clone(), thrown), n, false);
    let (checked_state, checked, _, _) = run(stack(settings, thrown), n, true);
    eprintln!("{checked:?} checked, {tested} pairs tested, {resolves} steps solved again");
    assert_eq!(none, SkipChecks::default());
    assert!(resolves > 0, "no second solve: the test shows nothing");
    // Each step solved again ran a later pass of its first response and the first pass of
    // the phase after the second solves, both pruned.
    assert!(
        checked.passes >= 2 * resolves && checked.after_solves == resolves,
        "{checked:?} checked for {resolves} steps solved again"
    );
    assert!(
        plain == checked_state,
        "the check changed the results (it must only compare)"
    );
    checked
}

#[test]
fn pruned_passes_find_what_full_passes_find_on_a_resting_stack() {
    check(ContactSettings::default(), 0.0, 60);
}

#[test]
fn pruned_passes_find_what_full_passes_find_with_the_hermite_narrow_phase() {
    let settings = ContactSettings {
        response: Response::Projection,
        narrow_phase: NarrowPhase::Hermite,
        ..ContactSettings::default()
    };
    check(settings, 0.0, 40);
}

#[test]
fn pruned_passes_find_what_full_passes_find_for_a_thrown_cube_with_self_collision() {
    let settings = ContactSettings {
        response: Response::Projection,
        self_collision: true,
        ..ContactSettings::default()
    };
    for v in [0.5, 2.0, 4.0, 8.0] {
        check(settings.clone(), v, 40);
    }
}

#[test]
fn pruned_passes_find_what_full_passes_find_with_sweep_and_prune() {
    let settings = ContactSettings {
        response: Response::Projection,
        broad_phase: BroadPhaseKind::SweepAndPrune,
        ..ContactSettings::default()
    };
    check(settings, 0.0, 30);
}
