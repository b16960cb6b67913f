//! Dynamic rigid cores (Müller et al. 2002 §4.3–4.4): the core keeps its rest shape to
//! round-off, is two-way coupled with the skin (a push on the skin moves the core, the
//! core's weight pulls the skin), momentum is kept, and impossible cores are refused.

mod common;

use supple::body::{Body, BodyDesc};
use supple::fem::material::{CorotationalTangent, ModelKind};
use supple::mesh::{box_grid, BoxGrid, TetSplit};
use supple::nalgebra::Vector3;
use supple::time::{IntegratorKind, LinearSolverKind, WarmStart};
use supple::world::{World, WorldError};

const COROT: ModelKind = ModelKind::corotational(CorotationalTangent::Rotated);

fn integrator() -> IntegratorKind {
    IntegratorKind::BackwardEulerLinearized {
        solver: LinearSolverKind::Pcg(common::pcg(1e-12)),
        warm_start: WarmStart::Extrapolate,
    }
}

/// A 40 × 10 × 10 cm soft bar whose first 10 cm are bone.
fn bar(youngs: f64) -> (Body, Vec<u32>) {
    let mesh = box_grid(&BoxGrid {
        cells: [8, 2, 2],
        cell_size: Vector3::repeat(0.05),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    });
    let body = Body::new(BodyDesc::new("bar", mesh, COROT, youngs, 0.3, 1000.0)).unwrap();
    let core = (0..body.n_vertices() as u32)
        .filter(|&v| body.mesh.positions[v as usize].x <= 0.1 + 1e-9)
        .collect();
    (body, core)
}

/// Largest change of a pairwise distance within the core from its rest value.
fn shape_error(body: &Body, core: &[u32]) -> f64 {
    let mut worst: f64 = 0.0;
    for (k, &a) in core.iter().enumerate() {
        for &b in &core[k + 1..] {
            let (a, b) = (a as usize, b as usize);
            let d = (body.x[a] - body.x[b]).norm();
            let d0 = (body.mesh.positions[a] - body.mesh.positions[b]).norm();
            worst = worst.max((d - d0).abs());
        }
    }
    worst
}

#[test]
fn a_tumbling_body_keeps_its_core_rigid_and_its_momentum() {
    let (mut body, core) = bar(2e4);
    // Thrown and spun: v = v0 + ω × (x − c).
    let c = Vector3::new(0.2, 0.05, 0.05);
    let omega = Vector3::new(1.0, 4.0, 2.0);
    for (v, x) in body.v.iter_mut().zip(&body.mesh.positions) {
        *v = Vector3::new(0.3, 0.0, 0.5) + omega.cross(&(x - c));
    }
    let gravity = Vector3::new(0.0, 0.0, -9.81);
    let mut w = World::new(vec![body], gravity, 0.01, integrator()).unwrap();
    w.add_rigid_core(0, core.clone()).unwrap();
    let m = w.bodies[0].mass.total();
    let p0 = w.bodies[0].momentum();
    let mut worst: f64 = 0.0;
    for _ in 0..100 {
        w.step().unwrap();
        worst = worst.max(shape_error(&w.bodies[0], &core));
        let expected = p0 + m * gravity * w.time;
        let p = w.bodies[0].momentum();
        assert!(
            (p - expected).norm() <= 1e-9 * expected.norm(),
            "{p} vs {expected}"
        );
    }
    assert!(worst <= 1e-10, "core shape error {worst:e}");
    // The core really turned (the pose is not the rest pose).
    let (_, r) = w.rigid_cores()[0].1.pose();
    assert!((r - supple::nalgebra::Matrix3::identity()).norm() > 0.1);
}

/// No gravity: a push along the bar on its far end reaches the core through the skin and
/// sets it moving; a soft bar's core lags behind its stiff twin's.
#[test]
fn the_skin_moves_the_core_and_the_core_moves_with_the_skin() {
    let mut core_travel = Vec::new();
    for youngs in [2e3, 2e5] {
        let (body, core) = bar(youngs);
        let far: Vec<u32> = (0..body.n_vertices() as u32)
            .filter(|&v| body.mesh.positions[v as usize].x >= 0.4 - 1e-9)
            .collect();
        let mut w = World::new(vec![body], Vector3::zeros(), 0.01, integrator()).unwrap();
        w.add_rigid_core(0, core.clone()).unwrap();
        let (start, _) = w.rigid_cores()[0].1.pose();
        for _ in 0..20 {
            let f = vec![Vector3::new(-2.0, 0.0, 0.0); far.len()];
            w.apply_forces(0, &far, &f).unwrap();
            w.step().unwrap();
        }
        assert!(shape_error(&w.bodies[0], &core) <= 1e-10);
        let (center, _) = w.rigid_cores()[0].1.pose();
        core_travel.push(start.x - center.x);
    }
    assert!(core_travel.iter().all(|&d| d > 1e-4), "{core_travel:?}");
    assert!(core_travel[0] < core_travel[1], "{core_travel:?}");
}

#[test]
fn impossible_cores_are_refused() {
    let (mut body, core) = bar(2e4);
    body.fixed[core[0] as usize] = true;
    let mut w = World::new(vec![body], Vector3::zeros(), 0.01, integrator()).unwrap();
    let refused = |r: Result<usize, WorldError>| matches!(r, Err(WorldError::Rigid { .. }));
    assert!(refused(w.add_rigid_core(0, core.clone())));
    assert!(refused(w.add_rigid_core(0, vec![1, 2])));
    assert!(refused(w.add_rigid_core(0, vec![1, 2, 100_000])));
    // Three vertices on one edge of the bar: on one line.
    let line: Vec<u32> = (0..w.bodies[0].n_vertices() as u32)
        .filter(|&v| {
            let p = w.bodies[0].mesh.positions[v as usize];
            p.y == 0.0 && p.z == 0.0
        })
        .take(3)
        .collect();
    assert_eq!(line.len(), 3);
    assert!(refused(w.add_rigid_core(0, line)));
    assert!(matches!(
        w.add_rigid_core(3, vec![0, 1, 2]),
        Err(WorldError::NoBody { .. })
    ));
}

/// The guide's rigid-core recipe under the default (IPC) contact: a tilted soft bar with a
/// bone in its middle lands on the ground. The core's projection after the coupled step
/// knows nothing of contact, and once moved a bottom vertex 4.5 mm into the ground (the
/// scene then stopped); it is now kept only as far as its path is free, so no vertex ends a
/// step below the ground, and the core is rigid again once the impact is over.
#[test]
fn a_core_landing_on_the_ground_under_ipc_never_ends_a_step_inside_it() {
    use supple::contact::{ContactSettings, Obstacle};
    let mut mesh = box_grid(&BoxGrid {
        cells: [10, 2, 2],
        cell_size: Vector3::repeat(0.05),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    });
    let r = supple::nalgebra::Rotation3::from_axis_angle(&Vector3::z_axis(), 15f64.to_radians());
    for p in &mut mesh.positions {
        *p = r * *p + Vector3::new(0.0, 0.2, 0.0);
    }
    let centre = r * Vector3::new(0.25, 0.05, 0.05) + Vector3::new(0.0, 0.2, 0.0);
    let body = Body::new(BodyDesc::new("bar", mesh, COROT, 2e4, 0.4, 1000.0)).unwrap();
    let core: Vec<u32> = (0..body.n_vertices() as u32)
        .filter(|&v| (body.mesh.positions[v as usize] - centre).norm() <= 0.08)
        .collect();
    let contact = ContactSettings {
        obstacles: vec![Obstacle::plane("ground", Vector3::zeros(), Vector3::y(), 0.5).unwrap()],
        ..ContactSettings::default()
    };
    let mut w = World::new(
        vec![body],
        Vector3::new(0.0, -9.81, 0.0),
        0.01,
        common::implicit(),
    )
    .unwrap()
    .with_contact(contact)
    .unwrap();
    assert!(
        w.ipc().is_some(),
        "the default response of backward Euler is IPC"
    );
    w.add_rigid_core(0, core.clone()).unwrap();
    let (mut cut_steps, mut worst_shape): (usize, f64) = (0, 0.0);
    for step in 0..100 {
        w.step().unwrap();
        let lowest = (w.bodies[0].x.iter().map(|x| x.y)).fold(f64::INFINITY, f64::min);
        assert!(lowest > 0.0, "step {step}: a vertex at y = {lowest:e}");
        let last = w.ipc().unwrap().last;
        cut_steps += usize::from(last.projection_fraction < 1.0);
        worst_shape = worst_shape.max(shape_error(&w.bodies[0], &core));
    }
    let end_shape = shape_error(&w.bodies[0], &core);
    eprintln!(
        "projection cut in {cut_steps} of 100 steps; core shape error worst {worst_shape:.3e} m, at the end {end_shape:.3e} m"
    );
    assert!(worst_shape < 2e-4, "core shape error {worst_shape:e} m");
    assert!(
        end_shape < 1e-9,
        "core not rigid again at rest: {end_shape:e} m"
    );
}
