//! Issue 12: contact does bounded work whatever the scene. Two scenes that used to hang in the
//! exact narrow phase (`ccd::exact`'s coplanar-throughout distance search, ~10⁹ distance
//! evaluations per pair) must finish their steps. A hang here shows as the test run timing
//! out; no step is timed.
//!
//! Both run with a step control that never retries and never declares divergence, so that
//! the contact phase sees the exploded states (the default control stops such a run after
//! its retries instead).

mod common;

use supple::body::{Body, BodyDesc};
use supple::contact::{ContactSettings, ContactStats, Obstacle, Response, RigidPath, Shape};
use supple::fem::material::{CorotationalTangent, ModelKind};
use supple::mesh::{box_grid, BoxGrid, TetMesh, TetSplit};
use supple::nalgebra::{Isometry3, Vector3};
use supple::time::{IntegratorKind, LinearSolverKind, WarmStart};
use supple::world::{StepControl, World};

const COROT: ModelKind = ModelKind::corotational(CorotationalTangent::Rotated);

fn world(bodies: Vec<BodyDesc>, dt: f64, contact: ContactSettings) -> World {
    let bodies = bodies.into_iter().map(|d| Body::new(d).unwrap()).collect();
    // Block Jacobi, on whose iterates these degenerate scenes were built: the 10⁹ m box's
    // coplanar faces are a rounding-level construction, which another preconditioner's
    // solution (equal to 1e-6, i.e. to ~10³ m there) does not reproduce.
    let integrator = IntegratorKind::BackwardEulerLinearized {
        solver: LinearSolverKind::Pcg(supple::linalg::PcgSettings {
            preconditioner: supple::linalg::Preconditioner::BlockJacobi,
            ..common::pcg(1e-6)
        }),
        warm_start: WarmStart::Extrapolate,
    };
    let keep_going = StepControl {
        max_halvings: 0,
        unconverged_halvings: 0,
        volume_range: [0.0, f64::INFINITY],
        max_inverted_share: 1.0,
        ..StepControl::default()
    };
    World::new(bodies, Vector3::new(0.0, -9.81, 0.0), dt, integrator)
        .unwrap()
        .with_step_control(keep_going)
        .unwrap()
        .with_contact(contact)
        .unwrap()
}

/// Steps `w` `n` times; returns the contact statistics of each step.
fn run(w: &mut World, n: usize) -> Vec<ContactStats> {
    (0..n)
        .map(|_| {
            w.step().expect("this step control keeps every step");
            w.contact_stats().unwrap().clone()
        })
        .collect()
}

fn cube(cells: usize, h: f64) -> TetMesh {
    box_grid(&BoxGrid {
        cells: [cells; 3],
        cell_size: Vector3::repeat(h),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    })
}

/// `scenes/self_fold.toml` with the rod's radius 1.0 instead of 0.01: the bar (cells of 1 cm)
/// starts inside the rod. It used to be projected out to the rod's surface a metre away, and
/// the implicit step of that state threw a vertex to ~10⁶ m, whose pairs (one point moving
/// ~10⁶ m next to points 1 cm apart) sent the exact narrow phase into a distance search that
/// made no progress in 200 s (fixed by per-coefficient tolerances; the unit test
/// `ccd::exact::tests::a_far_point_does_not_make_a_pair_coplanar_throughout` keeps that
/// case). Now a body swallowed by an obstacle fails its step before the surface phase: the
/// obstacles' push turns the bar inside out, and the world says so at once, even under a
/// step control that never declares divergence on the step's end state.
#[test]
fn self_fold_around_a_one_metre_rod_fails_its_first_step_at_once() {
    let bar = box_grid(&BoxGrid {
        cells: [24, 1, 1],
        cell_size: Vector3::repeat(0.01),
        origin: Vector3::new(-0.12, 0.012, -0.005),
        split: TetSplit::Five,
    });
    let body = BodyDesc::new("bar", bar, COROT, 3e4, 0.3, 1000.0).with_damping(1.0, 0.0);
    let rod = Obstacle {
        name: "rod".into(),
        shape: Shape::Capsule {
            radius: 1.0,
            half_length: 0.05,
        },
        path: RigidPath::Static(Isometry3::identity()),
        friction: 0.5,
    };
    let contact = ContactSettings {
        response: Response::Projection,
        obstacles: vec![rod],
        self_collision: true,
        ..ContactSettings::default()
    };
    let mut w = world(vec![body], 2e-3, contact);
    let e = w
        .step()
        .expect_err("a bar turned inside out by the rod's push must fail its step");
    assert!(
        e.reason.contains("after the obstacles' push") && e.step == 1,
        "{e:?}"
    );
}

/// A 10 cm cube inside a cube of 10⁹ m cells, sharing its corner (so three faces of each lie
/// in the same planes), body collision on, above a ground plane. The big body sags by
/// ~10⁹ m per step, so pairs of coincident faces stay coplanar while their points move 10⁹ m
/// apart, with distances at the 10⁻¹⁰-of-the-size resolution of the search: the search
/// cannot prune, and used to run for ~10⁹ evaluations per pair. It now stops at its bound,
/// reports those pairs as meeting from the earliest time it could not clear, and the
/// response and fail-safe take it from there.
#[test]
fn a_small_box_inside_a_billion_metre_box_finishes_its_steps() {
    let bodies = vec![
        BodyDesc::new("small", cube(2, 0.1), COROT, 1e5, 0.33, 1000.0),
        BodyDesc::new("big", cube(2, 1e9), COROT, 1e5, 0.33, 1000.0),
    ];
    let ground =
        Obstacle::plane("ground", Vector3::new(0.0, -0.5, 0.0), Vector3::y(), 0.0).unwrap();
    let contact = ContactSettings {
        response: Response::Projection,
        obstacles: vec![ground],
        body_collision: true,
        ..ContactSettings::default()
    };
    let mut w = world(bodies, 1e-2, contact);
    let stats = run(&mut w, 3);
    assert!(stats[0].bounded_out > 0, "{:?}", stats[0]);
    for (step, s) in stats.iter().enumerate() {
        assert!(s.contacts > 0 && s.frozen > 0, "step {step}: {s:?}");
    }
    for b in &w.bodies {
        assert!(b.x.iter().all(|p| p.iter().all(|c| c.is_finite())));
    }
}
