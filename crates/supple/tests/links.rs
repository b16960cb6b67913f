//! Springs between two body points (`world::links`): equal and opposite forces, energy kept
//! by an undamped spring, damping that takes energy out, and the refusals.

mod common;

use supple::body::{Body, BodyDesc};
use supple::mesh::{box_grid, BoxGrid, TetSplit};
use supple::nalgebra::Vector3;
use supple::time::{IntegratorKind, LinearSolverKind, WarmStart};
use supple::world::{BodyPoint, LinkSpring, World, WorldError};

/// A free 0.1 m cube of 5 tets at `origin` (E = 1e5 Pa, corotational, 1000 kg/m³).
fn cube(name: &str, origin: Vector3<f64>) -> Body {
    let mesh = box_grid(&BoxGrid {
        cells: [1, 1, 1],
        cell_size: Vector3::repeat(0.1),
        origin,
        split: TetSplit::Five,
    });
    Body::new(BodyDesc::new(
        name,
        mesh,
        common::COROTATIONAL,
        1e5,
        0.33,
        1000.0,
    ))
    .unwrap()
}

/// Two cubes 0.2 m apart, joined from vertex 7 of the first (its far corner, at
/// (0.1, 0.1, 0.1)) to the centroid of tet 0 of the second, rest length 0.1 m shorter than
/// the distance at the start: the spring pulls the cubes together.
fn two_cubes(integrator: IntegratorKind, dt: f64, damping: f64) -> World {
    let a = cube("a", Vector3::zeros());
    let b = cube("b", Vector3::new(0.3, 0.05, 0.0));
    let tet = b.mesh.tets[0];
    let pb: Vector3<f64> = tet.iter().map(|&i| 0.25 * b.x[i as usize]).sum();
    let distance = (a.x[7] - pb).norm();
    let mut world = World::new(vec![a, b], Vector3::zeros(), dt, integrator).unwrap();
    world
        .add_spring(LinkSpring {
            a: BodyPoint::vertex(0, 7),
            b: BodyPoint {
                body: 1,
                vertices: tet,
                w: [0.25; 4],
            },
            rest_length: distance - 0.1,
            stiffness: 200.0,
            damping,
        })
        .unwrap();
    world
}

fn energy(world: &mut World) -> f64 {
    let springs = world.springs_energy();
    let bodies: f64 = (world.bodies.iter_mut())
        .map(|b| b.kinetic_energy() + b.elastic_energy().unwrap())
        .sum();
    bodies + springs
}

fn linearized() -> IntegratorKind {
    IntegratorKind::BackwardEulerLinearized {
        solver: LinearSolverKind::Pcg(common::pcg(1e-10)),
        warm_start: WarmStart::Extrapolate,
    }
}

/// The reported forces on the two ends are opposite, and so are the momenta the two bodies
/// gain over the run: exactly (to round-off) in symplectic Euler with one substep, whose two
/// ends take their forces at the same start state; within 0.1 % of what each gains in
/// linearized backward Euler, which solves each body with the other end lagged (opposite to
/// first order in the step).
#[test]
fn the_two_ends_get_equal_and_opposite_forces() {
    let explicit = IntegratorKind::SymplecticEuler { substeps: 1 };
    for (name, kind) in [("linearized", linearized()), ("symplectic", explicit)] {
        let mut world = two_cubes(kind, 1e-3, 0.0);
        let id = world.springs().next().unwrap().0;
        let f0 = world.spring_force(id).unwrap();
        // Pulls a towards b (+x).
        assert!(f0.x > 1.0, "{f0}");
        for _ in 0..100 {
            world.step().unwrap();
        }
        let (pa, pb) = (world.bodies[0].momentum(), world.bodies[1].momentum());
        let mismatch = (pa + pb).norm() / pa.norm();
        eprintln!("{name}: p_a = {pa:.5}, p_b = {pb:.5}, |p_a + p_b|/|p_a| = {mismatch:.2e}");
        assert!(pa.x > 0.05, "{name}: {pa}");
        let tolerance = if name == "symplectic" { 1e-12 } else { 1e-3 };
        assert!(mismatch < tolerance, "{name}: {mismatch:e}");
        let f = world.spring_force(id).unwrap();
        let spring = *world.springs().next().unwrap().1;
        assert_eq!(f, spring.force(&world.bodies));
    }
}

/// Undamped, the bodies' kinetic and elastic energy plus the spring's stays within 1 % of
/// its start over 0.3 s (the spring's 1 J goes into motion and back) at dt = 0.5 ms in
/// symplectic Euler, and halving the step halves the deviation (symplectic Euler's bounded
/// O(h) energy error: 1.2 % at 1 ms, 0.62 % at 0.5 ms). Damped, the energy falls.
#[test]
fn an_undamped_spring_keeps_the_energy_and_damping_takes_it() {
    let explicit = IntegratorKind::SymplecticEuler { substeps: 1 };
    let mut drifts = Vec::new();
    for dt in [1e-3, 5e-4] {
        let mut world = two_cubes(explicit, dt, 0.0);
        let e0 = energy(&mut world);
        let mut drift: f64 = 0.0;
        let mut spring_min = f64::INFINITY;
        for _ in 0..(0.3 / dt).round() as usize {
            world.step().unwrap();
            drift = drift.max((energy(&mut world) / e0 - 1.0).abs());
            spring_min = spring_min.min(world.springs_energy());
        }
        eprintln!("dt {dt:e}: E0 = {e0:.5} J, max |E/E0 − 1| = {drift:.2e}, spring energy min {spring_min:.2e} J");
        // The spring's energy went into motion and back: it was nearly released.
        assert!(spring_min < 0.1 * e0, "{spring_min} vs {e0}");
        drifts.push(drift);
    }
    assert!(drifts[1] < 0.01, "{drifts:?}");
    assert!(drifts[1] < 0.7 * drifts[0], "{drifts:?}");
    let mut damped = two_cubes(linearized(), 1e-3, 5.0);
    let e0 = energy(&mut damped);
    for _ in 0..300 {
        damped.step().unwrap();
    }
    let e1 = energy(&mut damped);
    eprintln!("damped: {e0:.4} J → {e1:.4} J");
    assert!(e1 < 0.5 * e0, "{e1} vs {e0}");
}

/// Both ends in one body: a spring across a free cube's diagonal, shorter than it, squeezes
/// the cube without moving its centre of mass or setting it spinning.
#[test]
fn a_spring_within_one_body_keeps_its_momentum() {
    let body = cube("c", Vector3::zeros());
    let d = (body.x[7] - body.x[0]).norm();
    let mut world = World::new(vec![body], Vector3::zeros(), 1e-3, linearized()).unwrap();
    world
        .add_spring(LinkSpring {
            a: BodyPoint::vertex(0, 0),
            b: BodyPoint::vertex(0, 7),
            rest_length: 0.5 * d,
            stiffness: 500.0,
            damping: 0.0,
        })
        .unwrap();
    for _ in 0..50 {
        world.step().unwrap();
    }
    let b = &world.bodies[0];
    let shrink = (b.x[7] - b.x[0]).norm() / d;
    let speed: f64 = b.v.iter().map(|v| v.norm()).fold(0.0, f64::max);
    let p = b.momentum().norm() / (b.mass.total() * speed);
    eprintln!("diagonal {shrink:.4} of its rest length, |p|/(m v_max) = {p:.2e}");
    assert!(shrink < 0.99, "{shrink}");
    assert!(p < 1e-3, "{p:e}");
}

#[test]
fn bad_springs_are_refused() {
    let mut world = two_cubes(linearized(), 1e-3, 0.0);
    let ok = *world.springs().next().unwrap().1;
    let cases = [
        (
            LinkSpring {
                a: BodyPoint::vertex(0, 99),
                ..ok
            },
            "a: vertex 99 is out of range (body `a` has 8)",
        ),
        (
            LinkSpring {
                b: BodyPoint::vertex(5, 0),
                ..ok
            },
            "there is no body 5",
        ),
        (
            LinkSpring {
                stiffness: 0.0,
                ..ok
            },
            "stiffness = 0: must be a finite number above 0",
        ),
        (
            LinkSpring {
                rest_length: -1.0,
                ..ok
            },
            "rest_length = -1",
        ),
        (
            LinkSpring {
                a: BodyPoint {
                    w: [0.5, 0.1, 0.0, 0.0],
                    ..ok.b
                },
                ..ok
            },
            "must be finite and sum to 1",
        ),
    ];
    for (spring, want) in cases {
        let got = world.add_spring(spring).unwrap_err().to_string();
        assert!(got.contains(want), "want {want:?} in: {got}");
    }
    assert!(matches!(
        world.add_spring(LinkSpring {
            damping: f64::NAN,
            ..ok
        }),
        Err(WorldError::Link(_))
    ));
}
