//! `model = "fast_corotated"` (Kugelstadt, Koschier & Bender 2018): the operator-splitting
//! step against its own claims — a minimization, at rest at rest, rotation invariant,
//! tending to the corotational backward Euler step as its iterations grow, the same bits on 1
//! and 2 threads — and the integrators it refuses.

mod common;

use supple::body::{Body, BodyDesc};
use supple::fem::material::{FastCorotatedSettings, ModelKind};
use supple::linalg::OrderingKind;
use supple::mesh::TetSplit;
use supple::nalgebra::{Rotation3, Vector3};
use supple::time::{FastCorotatedStep, Integrator, IntegratorKind};

fn fast(iterations: u32, volume_sweeps: u32) -> ModelKind {
    ModelKind::FastCorotated(FastCorotatedSettings {
        iterations,
        volume_sweeps,
    })
}

/// The clamped bar of `cells` cubes of 0.05 m, stiff (E = 1e6 Pa, ν = 0.33).
fn stiff_bar(cells: [usize; 3], model: ModelKind) -> BodyDesc {
    let mut d = common::bar(cells, 0.05, TetSplit::Five, model, true);
    d.youngs = 1e6;
    d
}

fn stepper(body: &Body) -> FastCorotatedStep {
    let settings = body.model.splitting().expect("a fast_corotated body");
    FastCorotatedStep::new(body, settings, OrderingKind::Nd).unwrap()
}

/// Mean displacement of the vertices at the bar's free end (largest x).
fn tip(body: &Body) -> Vector3<f64> {
    let x_max = body
        .mesh
        .positions
        .iter()
        .map(|p| p.x)
        .fold(f64::MIN, f64::max);
    let ends: Vec<usize> = (0..body.n_vertices())
        .filter(|&i| body.mesh.positions[i].x > x_max - 1e-9)
        .collect();
    ends.iter()
        .map(|&i| body.x[i] - body.mesh.positions[i])
        .sum::<Vector3<f64>>()
        / ends.len() as f64
}

const G: Vector3<f64> = Vector3::new(0.0, -9.81, 0.0);

/// With the volume sweeps off, each local (exact polar rotations) and global (exact solve)
/// step minimizes the stretching objective over its block of unknowns: the objective never
/// rises over the iterations of a step, and it falls.
#[test]
fn the_iterations_of_a_step_lower_the_stretching_objective() {
    let mut body = Body::new(stiff_bar([8, 2, 2], fast(30, 0))).unwrap();
    let mut step = stepper(&body);
    // A few steps first, so the step starts bent and moving.
    for _ in 0..5 {
        step.step(&mut body, 0.01, &(20.0 * G)).unwrap();
    }
    step.record_objective = true;
    step.step(&mut body, 0.01, &(20.0 * G)).unwrap();
    let e = step.objective_history();
    assert_eq!(e.len(), 31);
    for k in 1..e.len() {
        assert!(
            e[k] <= e[k - 1] * (1.0 + 1e-12),
            "iteration {k}: {} after {}",
            e[k],
            e[k - 1]
        );
    }
    assert!(e[e.len() - 1] < e[0] * (1.0 - 1e-3), "{e:?}");
}

/// A clamped bar at rest without gravity stays where it is.
#[test]
fn a_body_at_rest_stays_at_rest() {
    let mut body = Body::new(stiff_bar([6, 2, 2], fast(3, 2))).unwrap();
    let mut step = stepper(&body);
    for _ in 0..10 {
        step.step(&mut body, 0.01, &Vector3::zeros()).unwrap();
    }
    for (x, p) in body.x.iter().zip(&body.mesh.positions) {
        assert!((x - p).norm() < 1e-12, "{}", (x - p).norm());
    }
    assert!(body.v.iter().all(|v| v.norm() < 1e-10));
}

/// A free, deformed, spinning body stepped from a rotated copy of its state ends rotated
/// the same way (no gravity): the constant matrix and the local rotations are
/// rotation-invariant.
#[test]
fn the_step_is_rotation_invariant() {
    let desc = common::bar([6, 2, 2], 0.05, TetSplit::Five, fast(2, 2), false);
    let mut a = Body::new(desc).unwrap();
    let mut rng = common::Lcg(7);
    for i in 0..a.n_vertices() {
        a.x[i] += 0.004 * rng.vec3();
        a.v[i] = Vector3::new(0.0, 0.3 * a.x[i].x, -0.2) + 0.05 * rng.vec3();
    }
    let q = Rotation3::from_euler_angles(0.7, -1.1, 2.3);
    let mut b = Body::new(common::bar(
        [6, 2, 2],
        0.05,
        TetSplit::Five,
        fast(2, 2),
        false,
    ))
    .unwrap();
    for i in 0..a.n_vertices() {
        b.x[i] = q * a.x[i];
        b.v[i] = q * a.v[i];
    }
    let (mut sa, mut sb) = (stepper(&a), stepper(&b));
    for _ in 0..5 {
        sa.step(&mut a, 0.01, &Vector3::zeros()).unwrap();
        sb.step(&mut b, 0.01, &Vector3::zeros()).unwrap();
    }
    let worst = (0..a.n_vertices())
        .map(|i| (q * a.x[i] - b.x[i]).norm())
        .fold(0.0, f64::max);
    assert!(worst < 1e-12, "{worst}");
}

/// The tip of the stiff bar after 10 steps under gravity: the step's difference from Newton's
/// backward Euler on the corotational model (same energy, tight tolerance) shrinks as the
/// iterations per step grow.
#[test]
fn more_iterations_tend_to_the_corotational_backward_euler_step() {
    let cells = [8, 2, 2];
    let mut reference = Body::new(stiff_bar(cells, common::COROTATIONAL)).unwrap();
    let mut newton = common::newton_cholesky(1e-12).build(&reference).unwrap();
    for _ in 0..10 {
        newton.step(&mut reference, 0.01, &G).unwrap();
    }
    let want = tip(&reference);
    let mut diffs = Vec::new();
    for iterations in [1, 4, 16, 64] {
        let mut body = Body::new(stiff_bar(cells, fast(iterations, 2))).unwrap();
        let mut step = stepper(&body);
        for _ in 0..10 {
            step.step(&mut body, 0.01, &G).unwrap();
        }
        diffs.push((tip(&body) - want).norm());
    }
    println!("tip {want:?}, differences {diffs:?}");
    for k in 1..diffs.len() {
        assert!(diffs[k] < diffs[k - 1], "{diffs:?}");
    }
    assert!(
        diffs[3] < 0.01 * want.norm(),
        "{diffs:?} of {}",
        want.norm()
    );
}

/// 1 and 2 threads give the same bits: the rotations run lane by lane in any grouping, the
/// right-hand side scatters colour by colour, the back-substitution and the volume sweeps are
/// sequential. The bar is large enough (5,000 tets) for the parallel element loops.
#[test]
fn one_and_two_threads_give_the_same_bits() {
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            let mut body = Body::new(stiff_bar([20, 5, 10], fast(2, 2))).unwrap();
            let mut step = stepper(&body);
            for _ in 0..4 {
                step.step(&mut body, 0.01, &(10.0 * G)).unwrap();
            }
            body.x
        })
    };
    let (one, two) = (run(1), run(2));
    assert!(one.iter().zip(&two).all(|(a, b)| a
        .iter()
        .zip(b.iter())
        .all(|(p, q)| p.to_bits() == q.to_bits())));
}

/// The other integrators refuse the model, naming it and the integrators that take it; so
/// does a body with damping.
#[test]
fn other_integrators_and_damping_are_refused() {
    let body = Body::new(stiff_bar([4, 1, 1], fast(1, 2))).unwrap();
    let e = IntegratorKind::SymplecticEuler { substeps: 0 }
        .build(&body)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("fast_corotated") && e.contains("backward_euler_linearized"),
        "{e}"
    );
    let damped = Body::new(stiff_bar([4, 1, 1], fast(1, 2)).with_damping(0.1, 0.0)).unwrap();
    let e = common::implicit().build(&damped).unwrap_err().to_string();
    assert!(e.contains("damping"), "{e}");
    // Backward Euler (linearized or Newton) builds it.
    assert_eq!(
        common::implicit().build(&body).unwrap().name(),
        "fast_corotated"
    );
}
