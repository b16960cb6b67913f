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
