//! Grab springs (Müller et al. 2002 §4.2): a body lifted by one surface point, the spring's
//! reported force against the body's weight, momentum after a release, scripted grabs, and
//! the spring's force and matrix against finite differences.

mod common;

use supple::body::{Body, BodyDesc};
use supple::constraint::{Interpolation, Keyframes};
use supple::contact::{ContactSettings, Obstacle};
use supple::fem::material::{CorotationalTangent, ModelKind};
use supple::linalg::BlockCsr;
use supple::mesh::{box_grid, BoxGrid, TetMesh, TetSplit};
use supple::nalgebra::Vector3;
use supple::time::{
    IntegratorKind, LinearSolverKind, NewtonSettings, PointSpring, StepInputs, System, WarmStart,
};
use supple::world::{GrabPath, GrabSettings, World};

const COROT: ModelKind = ModelKind::corotational(CorotationalTangent::Rotated);
const G: f64 = 9.81;

fn cube(cells: usize, h: f64, origin: Vector3<f64>) -> TetMesh {
    box_grid(&BoxGrid {
        cells: [cells; 3],
        cell_size: Vector3::repeat(h),
        origin,
        split: TetSplit::Five,
    })
}

fn linearized() -> IntegratorKind {
    IntegratorKind::BackwardEulerLinearized {
        solver: LinearSolverKind::Pcg(common::pcg(1e-10)),
        warm_start: WarmStart::Extrapolate,
    }
}

/// A 10 cm cube of stiff rubber resting on the ground (z = 0), grabbed at the middle of its
/// top face.
fn cube_on_ground(integrator: IntegratorKind, dt: f64) -> World {
    let mesh = cube(2, 0.05, Vector3::new(-0.05, -0.05, 0.0));
    let body =
        Body::new(BodyDesc::new("cube", mesh, COROT, 1e5, 0.3, 1000.0).with_damping(1.0, 0.0))
            .unwrap();
    let contact = ContactSettings {
        obstacles: vec![Obstacle::plane("ground", Vector3::zeros(), Vector3::z(), 0.5).unwrap()],
        ..ContactSettings::default()
    };
    World::new(vec![body], Vector3::new(0.0, 0.0, -G), dt, integrator)
        .unwrap()
        .with_contact(contact)
        .unwrap()
}

#[test]
fn a_slowly_raised_grab_lifts_the_cube_and_carries_its_weight() {
    for (name, integrator) in [
        ("backward_euler_linearized", linearized()),
        (
            "backward_euler",
            IntegratorKind::BackwardEuler {
                newton: NewtonSettings::default(),
            },
        ),
    ] {
        let dt = 0.01;
        let mut w = cube_on_ground(integrator, dt);
        let settings = GrabSettings {
            stiffness: 2000.0,
            damping: 20.0,
        };
        let top = Vector3::new(0.0, 0.0, 0.1);
        let id = w
            .grab(0, top + Vector3::new(0.0, 0.0, 0.01), settings)
            .unwrap();
        // The nearest surface point is the top face's centre vertex.
        let grabbed = w.grabs()[0].clone();
        let p: Vector3<f64> = (0..4)
            .map(|k| grabbed.w[k] * w.bodies[0].x[grabbed.vertices[k] as usize])
            .sum();
        assert!((p - top).norm() < 1e-12, "grabbed {p}");
        // Raise the target 0.3 m over 1.5 s, then hold for 2.5 s.
        for step in 1..=400 {
            let rise = 0.3 * (step as f64 * dt / 1.5).min(1.0);
            w.move_grab(id, top + Vector3::new(0.0, 0.0, rise)).unwrap();
            w.step().unwrap();
        }
        let body = &w.bodies[0];
        let lowest = body.x.iter().map(|x| x.z).fold(f64::INFINITY, f64::min);
        assert!(
            lowest > 0.05,
            "{name}: the cube did not leave the ground (lowest z {lowest})"
        );
        let weight = body.mass.total() * G;
        let f = w.grab_force(id).unwrap();
        eprintln!(
            "{name}: grab force {f:?} N, weight {weight:.4} N, lowest vertex z = {lowest:.4}"
        );
        // At rest the spring carries the weight: its force on the body is m g upward.
        assert!(
            (f.z - weight).abs() < 0.01 * weight,
            "{name}: spring force {} N vs weight {weight} N",
            f.z
        );
        assert!(f.x.abs().max(f.y.abs()) < 0.01 * weight, "{name}: {f:?}");
        // Spring elongation k Δ = m g.
        let p: Vector3<f64> = (0..4)
            .map(|k| grabbed.w[k] * body.x[grabbed.vertices[k] as usize])
            .sum();
        let stretch = top.z + 0.3 - p.z;
        assert!(
            (2000.0 * stretch - weight).abs() < 0.01 * weight,
            "stretch {stretch}"
        );
    }
}

#[test]
fn momentum_is_conserved_after_a_release() {
    let mesh = cube(2, 0.05, Vector3::zeros());
    let body = Body::new(BodyDesc::new("cube", mesh, COROT, 1e5, 0.3, 1000.0)).unwrap();
    let mut w = World::new(vec![body], Vector3::zeros(), 0.005, linearized()).unwrap();
    let corner = Vector3::new(0.1, 0.1, 0.1);
    let id = w
        .grab(
            0,
            corner,
            GrabSettings {
                stiffness: 500.0,
                damping: 0.0,
            },
        )
        .unwrap();
    // Yank the corner 0.2 m sideways in 0.05 s, then let go.
    for step in 1..=10 {
        w.move_grab(id, corner + Vector3::new(0.02 * step as f64, 0.0, 0.0))
            .unwrap();
        w.step().unwrap();
    }
    let yanked = w.bodies[0].momentum();
    assert!(yanked.x > 0.01, "the yank gave momentum {yanked:?}");
    w.release(id).unwrap();
    assert!(w.grab_force(id).is_none());
    assert!(
        w.release(id).is_err(),
        "a released grab cannot be released again"
    );
    let p0 = {
        w.step().unwrap();
        w.bodies[0].momentum()
    };
    for _ in 0..100 {
        w.step().unwrap();
        let p = w.bodies[0].momentum();
        assert!(
            (p - p0).norm() < 1e-7 * p0.norm(),
            "momentum drifted from {p0:?} to {p:?}"
        );
    }
    // It spins and translates freely: the corner is far from where it was let go.
    eprintln!("momentum after release {p0:?}");
}

#[test]
fn a_scripted_grab_follows_its_path_and_lets_go_at_its_release_time() {
    let mesh = cube(1, 0.1, Vector3::zeros());
    let body = Body::new(BodyDesc::new("cube", mesh, COROT, 1e5, 0.3, 1000.0)).unwrap();
    let mut w = World::new(vec![body], Vector3::zeros(), 0.01, linearized()).unwrap();
    let path = Keyframes::new(
        vec![
            (0.2, Vector3::new(0.3, 0.1, 0.1)),
            (0.4, Vector3::new(0.3, 0.3, 0.1)),
        ],
        Interpolation::CatmullRom,
    )
    .unwrap();
    let id = w
        .script_grab(GrabPath {
            body: 0,
            point: Vector3::new(0.2, 0.1, 0.1),
            settings: GrabSettings {
                stiffness: 1e4,
                damping: 10.0,
            },
            start: 0.1,
            path,
            release: Some(0.5),
        })
        .unwrap();
    for _ in 0..10 {
        w.step().unwrap();
    }
    // Not yet taken: no force, no motion.
    assert!(w.grab_force(id).is_none());
    assert_eq!(w.bodies[0].momentum(), Vector3::zeros());
    w.step().unwrap();
    let g = w.grabs()[0].clone();
    assert_eq!(g.id, id);
    // Taken at the corner (0.1, 0.1, 0.1), nearest to the requested point; the target now
    // moves from there to the first key at t = 0.2.
    let rest = &w.bodies[0].mesh.positions;
    let p: Vector3<f64> = (0..4).map(|k| g.w[k] * rest[g.vertices[k] as usize]).sum();
    assert!(
        (p - Vector3::new(0.1, 0.1, 0.1)).norm() < 1e-12,
        "grabbed at {p}"
    );
    while w.time < 0.4 - 1e-9 {
        w.step().unwrap();
    }
    assert!((w.grabs()[0].target - Vector3::new(0.3, 0.3, 0.1)).norm() < 1e-12);
    while w.time < 0.5 - 1e-9 {
        w.step().unwrap();
    }
    assert!(w.grabs().iter().any(|g| g.id == id));
    w.step().unwrap();
    assert!(w.grabs().is_empty(), "released at t = 0.5");
}

#[test]
fn a_scripted_grab_released_before_its_start_is_never_taken() {
    let mesh = cube(1, 0.1, Vector3::zeros());
    let body = Body::new(BodyDesc::new("cube", mesh, COROT, 1e5, 0.3, 1000.0)).unwrap();
    let mut w = World::new(vec![body], Vector3::zeros(), 0.01, linearized()).unwrap();
    let path = Keyframes::new(
        vec![(0.2, Vector3::new(0.3, 0.1, 0.1))],
        Interpolation::Linear,
    )
    .unwrap();
    let id = w
        .script_grab(GrabPath {
            body: 0,
            point: Vector3::new(0.2, 0.1, 0.1),
            settings: GrabSettings {
                stiffness: 1e4,
                damping: 10.0,
            },
            start: 0.05,
            path,
            release: None,
        })
        .unwrap();
    w.step().unwrap();
    w.release(id).unwrap();
    // Released twice: it is gone.
    assert!(w.release(id).is_err());
    for _ in 0..20 {
        w.step().unwrap();
    }
    assert!(w.grabs().is_empty());
    assert_eq!(w.bodies[0].momentum(), Vector3::zeros());
}

#[test]
fn grab_settings_and_targets_are_checked() {
    let mesh = cube(1, 0.1, Vector3::zeros());
    let body = Body::new(BodyDesc::new("cube", mesh, COROT, 1e5, 0.3, 1000.0)).unwrap();
    let mut w = World::new(vec![body], Vector3::zeros(), 0.01, linearized()).unwrap();
    let ok = GrabSettings {
        stiffness: 1.0,
        damping: 0.0,
    };
    let bad_k = GrabSettings {
        stiffness: 0.0,
        ..ok
    };
    let bad_d = GrabSettings {
        damping: -1.0,
        ..ok
    };
    assert!(w.grab(1, Vector3::zeros(), ok).is_err());
    assert!(w.grab(0, Vector3::zeros(), bad_k).is_err());
    assert!(w.grab(0, Vector3::zeros(), bad_d).is_err());
    assert!(w.grab(0, Vector3::new(f64::NAN, 0.0, 0.0), ok).is_err());
    assert!(w.grab_point(0, &[0, 1], &[0.5, 0.6], ok).is_err());
    assert!(w.grab_point(0, &[0, 99], &[0.5, 0.5], ok).is_err());
    let id = w.grab_point(0, &[0, 1], &[0.5, 0.5], ok).unwrap();
    assert!(w
        .move_grab(id, Vector3::new(0.0, f64::INFINITY, 0.0))
        .is_err());
    w.move_grab(id, Vector3::new(0.05, 0.0, 0.5)).unwrap();
    w.step().unwrap();
    assert!(w.grab_force(id).unwrap().z > 0.0);
}

/// The spring's forces are minus the gradient of `½ k |p − P(x)|²`, and `System::assemble`
/// adds its stiffness `k w wᵀ` and damping `d w wᵀ` (checked against differences of
/// `System::forces` in x and in v).
#[test]
fn point_spring_force_and_matrix_match_finite_differences() {
    let mesh = cube(1, 0.1, Vector3::zeros());
    let mut body = Body::new(BodyDesc::new("cube", mesh, COROT, 1e5, 0.3, 1000.0)).unwrap();
    let n = body.n_vertices();
    let tet = body.mesh.tets[0];
    let spring = PointSpring {
        vertices: tet,
        w: [0.1, 0.2, 0.3, 0.4],
        target: Vector3::new(0.3, -0.2, 0.5),
        target_velocity: Vector3::new(1.0, 2.0, -1.0),
        stiffness: 700.0,
        damping: 3.0,
    };
    let fixed = vec![false; n];
    let springs = [spring];
    let inputs = StepInputs {
        springs: &springs,
        ..StepInputs::new(&fixed)
    };
    let mut system = System::new(&body);
    let x: Vec<Vector3<f64>> = body
        .x
        .iter()
        .enumerate()
        .map(|(i, p)| p + 0.01 * Vector3::new((i as f64).sin(), (2.0 * i as f64).cos(), 0.3))
        .collect();
    let v: Vec<Vector3<f64>> = (0..n)
        .map(|i| Vector3::new(0.1 * i as f64, -0.2, 0.05))
        .collect();
    let g = Vector3::zeros();
    let forces = |system: &mut System, body: &mut Body, x: &[Vector3<f64>], v: &[Vector3<f64>]| {
        let mut f = vec![Vector3::zeros(); n];
        system.forces(body, &inputs, x, v, &g, true, &mut f);
        let mut without = vec![Vector3::zeros(); n];
        let bare = StepInputs::new(&fixed);
        system.forces(body, &bare, x, v, &g, true, &mut without);
        f.iter()
            .zip(&without)
            .map(|(a, b)| a - b)
            .collect::<Vec<_>>()
    };
    let f0 = forces(&mut system, &mut body, &x, &v);
    // Force = the spring's, shared by the weights.
    let total = spring.force(&x, &v);
    for (&i, w) in tet.iter().zip(spring.w) {
        assert!((f0[i as usize] - w * total).norm() < 1e-12);
    }
    // Stiffness and damping blocks against central differences.
    let mut k_mat = BlockCsr::zeros(body.elems.pattern.clone());
    let mut k_bare = BlockCsr::zeros(body.elems.pattern.clone());
    system.assemble(&body, &inputs, &x, 0.0, 0.0, 1.0, &mut k_mat);
    system.assemble(
        &body,
        &StepInputs::new(&fixed),
        &x,
        0.0,
        0.0,
        1.0,
        &mut k_bare,
    );
    let mut d_mat = BlockCsr::zeros(body.elems.pattern.clone());
    system.assemble(&body, &inputs, &x, 0.0, 1.0, 0.0, &mut d_mat);
    let mut d_bare = BlockCsr::zeros(body.elems.pattern.clone());
    system.assemble(
        &body,
        &StepInputs::new(&fixed),
        &x,
        0.0,
        1.0,
        0.0,
        &mut d_bare,
    );
    let eps = 1e-6;
    for &j in &tet {
        for c in 0..3 {
            let (mut xp, mut xm) = (x.clone(), x.clone());
            xp[j as usize][c] += eps;
            xm[j as usize][c] -= eps;
            let (fp, fm) = (
                forces(&mut system, &mut body, &xp, &v),
                forces(&mut system, &mut body, &xm, &v),
            );
            let (mut vp, mut vm) = (v.clone(), v.clone());
            vp[j as usize][c] += eps;
            vm[j as usize][c] -= eps;
            let (gp, gm) = (
                forces(&mut system, &mut body, &x, &vp),
                forces(&mut system, &mut body, &x, &vm),
            );
            for &i in &tet {
                let (i, j) = (i as usize, j as usize);
                let dk = -(fp[i] - fm[i]) / (2.0 * eps);
                let dd = -(gp[i] - gm[i]) / (2.0 * eps);
                let kb = k_mat.block(i, j) - k_bare.block(i, j);
                let db = d_mat.block(i, j) - d_bare.block(i, j);
                assert!(
                    (kb.column(c) - dk).norm() < 1e-6 * 700.0,
                    "K[{i},{j}] col {c}"
                );
                assert!(
                    (db.column(c) - dd).norm() < 1e-6 * 3.0,
                    "D[{i},{j}] col {c}"
                );
            }
        }
    }
}

/// External forces act for the next step only: their impulse `h Σ f` is the momentum they
/// give (backward Euler conserves momentum otherwise), and bad input is refused.
#[test]
fn applied_forces_act_for_one_step() {
    let mesh = cube(2, 0.05, Vector3::zeros());
    let body = Body::new(BodyDesc::new("cube", mesh, COROT, 1e5, 0.3, 1000.0)).unwrap();
    let n = body.n_vertices() as u32;
    let h = 0.01;
    let mut w = World::new(vec![body], Vector3::zeros(), h, linearized()).unwrap();
    let vertices: Vec<u32> = (0..n).step_by(3).collect();
    let forces: Vec<Vector3<f64>> = vertices
        .iter()
        .map(|&i| Vector3::new(1.0, 0.5 * i as f64, -2.0))
        .collect();
    let total: Vector3<f64> = forces.iter().sum();
    w.apply_forces(0, &vertices, &forces).unwrap();
    w.step().unwrap();
    let p1 = w.bodies[0].momentum();
    assert!(
        (p1 - h * total).norm() < 1e-8 * (h * total).norm(),
        "{p1:?} vs {:?}",
        h * total
    );
    w.step().unwrap();
    let p2 = w.bodies[0].momentum();
    assert!(
        (p2 - p1).norm() < 1e-8 * p1.norm(),
        "the force acted again: {p2:?}"
    );
    assert!(w.apply_forces(0, &[0, 1], &[Vector3::zeros()]).is_err());
    assert!(w.apply_forces(0, &[n], &[Vector3::zeros()]).is_err());
    assert!(w.apply_forces(1, &[0], &[Vector3::zeros()]).is_err());
    assert!(w
        .apply_forces(0, &[0], &[Vector3::new(f64::NAN, 0.0, 0.0)])
        .is_err());
}
