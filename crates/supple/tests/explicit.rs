//! Explicit integrators: symplectic Euler with the Courant bound (Debunne et al. 2000),
//! explicit Newmark with the T/2^i ladder (Zhuang & Canny 1999), RKF45 (Liesenfeld & Stolfi
//! 1997). Convergence orders against fine references, RKF45 step control, settings.
//! Stability, energy and the step ladder are in `explicit_stability.rs`.

mod common;

use supple::body::Body;
use supple::fem::material::ModelKind;
use supple::fem::MassKind;
use supple::linalg::OrderingKind;
use supple::mesh::TetSplit;
use supple::nalgebra::Vector3;
use supple::time::{
    CourantBound, Integrator, IntegratorError, IntegratorKind, Newmark, Rkf45, Rkf45Settings,
    SymplecticEuler,
};
use supple::world::World;

const NO_GRAVITY: Vector3<f64> = Vector3::new(0.0, 0.0, 0.0);

/// A free 2×1×1-cube body (cells of 0.1 m), stretched by 10 % along x, spinning about z and
/// shearing (about 2 m/s at the ends): smooth, nonlinear (corotational) motion.
fn vibrating_body(model: ModelKind, mass: MassKind, damping: (f64, f64)) -> Body {
    let desc = common::bar([2, 1, 1], 0.1, TetSplit::Six, model, false)
        .with_mass(mass)
        .with_damping(damping.0, damping.1);
    let mut body = Body::new(desc).unwrap();
    let c = Vector3::new(0.1, 0.05, 0.05);
    for (i, x) in body.x.iter_mut().enumerate() {
        let p = body.mesh.positions[i] - c;
        *x = c + Vector3::new(1.1 * p.x, p.y, p.z);
        body.v[i] = Vector3::new(0.0, 0.0, 2.0).cross(&p) + 20.0 * Vector3::new(p.y, p.x, 0.0);
    }
    body
}

type State = (Vec<Vector3<f64>>, Vec<Vector3<f64>>);

/// Runs `integrator` on `body` with steps `h` up to `T_END`; returns `(x, v)` at every
/// multiple of `SAMPLE` (the states the errors are measured on).
fn trajectory(mut body: Body, integrator: &mut dyn Integrator, h: f64) -> Vec<State> {
    let per_sample = (SAMPLE / h).round() as usize;
    let samples = (T_END / SAMPLE).round() as usize;
    let mut out = Vec::with_capacity(samples);
    for _ in 0..samples {
        for _ in 0..per_sample {
            integrator.step(&mut body, h, &NO_GRAVITY).unwrap();
        }
        assert!(body.check_state().is_none());
        out.push((body.x.clone(), body.v.clone()));
    }
    out
}

fn distance(a: &[Vector3<f64>], b: &[Vector3<f64>]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(p, q)| (p - q).norm_squared())
        .sum::<f64>()
        .sqrt()
}

/// Largest errors in `x` and in `v` over the samples of a trajectory.
fn trajectory_error(run: &[State], reference: &[State]) -> (f64, f64) {
    run.iter()
        .zip(reference)
        .fold((0.0, 0.0), |(ex, ev), (a, b)| {
            (ex.max(distance(&a.0, &b.0)), ev.max(distance(&a.1, &b.1)))
        })
}

/// Errors in `x` and `v` (largest over the samples) for steps `dt`, `dt/2`, `dt/4` against
/// `reference`, and the orders `log₂(e(dt/2)/e(dt/4))` of the last halving.
fn orders(
    make: impl Fn(&Body) -> Box<dyn Integrator>,
    body: impl Fn() -> Body,
    reference: &[State],
    dt: f64,
) -> ([f64; 3], [f64; 3], f64, f64) {
    let mut ex = [0.0; 3];
    let mut ev = [0.0; 3];
    for k in 0..3 {
        let h = dt / f64::from(1 << k);
        let b = body();
        let mut integrator = make(&b);
        (ex[k], ev[k]) = trajectory_error(&trajectory(b, integrator.as_mut(), h), reference);
    }
    let order = |e: &[f64; 3]| (e[1] / e[2]).log2();
    (ex, ev, order(&ex), order(&ev))
}

/// The reference trajectory: Fehlberg's 4th-order solution with fixed steps `DT/64`.
fn rk4_reference(body: impl Fn() -> Body) -> Vec<State> {
    let b = body();
    let settings = Rkf45Settings {
        rtol: 0.0,
        atol: 0.0,
        substeps: 1,
    };
    let mut rk = Rkf45::new(&b, settings).unwrap();
    trajectory(b, &mut rk, DT / 64.0)
}

/// Run length, sampling interval of the errors, and the largest step of the order studies.
const T_END: f64 = 0.05;
const SAMPLE: f64 = 0.01;
const DT: f64 = 1e-3;

#[test]
fn symplectic_euler_converges_with_order_one() {
    let body = || vibrating_body(common::COROTATIONAL, MassKind::Lumped, (0.0, 0.0));
    let reference = rk4_reference(body);
    let (ex, ev, px, pv) = orders(
        |b| Box::new(SymplecticEuler::new(b, 1)),
        body,
        &reference,
        DT,
    );
    println!("symplectic Euler: x errors {ex:?} (order {px:.3}), v errors {ev:?} (order {pv:.3})");
    assert!((px - 1.0).abs() <= 0.3, "position order {px}");
    assert!((pv - 1.0).abs() <= 0.3, "velocity order {pv}");
}

#[test]
fn newmark_converges_with_order_two_lumped_consistent_and_damped() {
    // (mass, Rayleigh α, β): the diagonal solve, the Cholesky solve, and a damping whose D(x)
    // differs from the factored D₀ (corotational β K(x) on a spinning body).
    for (mass, damping) in [
        (MassKind::Lumped, (0.0, 0.0)),
        (MassKind::Consistent, (0.0, 0.0)),
        (MassKind::Lumped, (2.0, 2e-3)),
    ] {
        let body = || vibrating_body(common::COROTATIONAL, mass, damping);
        let reference = rk4_reference(body);
        let (ex, ev, px, pv) = orders(
            |b| Box::new(Newmark::new(b, 0, OrderingKind::Amd).unwrap()),
            body,
            &reference,
            DT,
        );
        println!(
            "Newmark {mass:?} α, β = {damping:?}: x errors {ex:?} (order {px:.3}), \
             v errors {ev:?} (order {pv:.3})"
        );
        assert!(
            (px - 2.0).abs() <= 0.3,
            "{mass:?} {damping:?}: position order {px}"
        );
        assert!(
            (pv - 2.0).abs() <= 0.3,
            "{mass:?} {damping:?}: velocity order {pv}"
        );
    }
}

#[test]
fn rkf45_with_fixed_steps_converges_with_order_four() {
    for mass in [MassKind::Lumped, MassKind::Consistent] {
        let body = || vibrating_body(common::COROTATIONAL, mass, (0.0, 0.0));
        let reference = rk4_reference(body);
        let (ex, ev, px, pv) = orders(
            |b| {
                let s = Rkf45Settings {
                    rtol: 0.0,
                    atol: 0.0,
                    substeps: 1,
                };
                Box::new(Rkf45::new(b, s).unwrap())
            },
            body,
            &reference,
            DT,
        );
        println!("RKF45 fixed {mass:?}: x errors {ex:?} (order {px:.3}), v errors {ev:?} (order {pv:.3})");
        // Fehlberg's propagated solution is 4th order; pre-asymptotic fits come out higher.
        for (what, p) in [("position", px), ("velocity", pv)] {
            assert!((3.7..=5.3).contains(&p), "{mass:?}: {what} order {p}");
        }
    }
}

#[test]
fn rkf45_adaptive_meets_its_tolerance_and_reports_its_steps() {
    let body = || vibrating_body(common::COROTATIONAL, MassKind::Consistent, (0.0, 0.0));
    let reference = rk4_reference(body);
    let reference = reference.last().unwrap();
    let dt = 0.01;
    let mut last = f64::INFINITY;
    for tol in [1e-4, 1e-6, 1e-8] {
        let mut b = body();
        let settings = Rkf45Settings {
            rtol: tol,
            atol: tol,
            substeps: 0,
        };
        let mut rk = Rkf45::new(&b, settings).unwrap();
        let (mut acc, mut rej) = (0, 0);
        for _ in 0..(T_END / dt).round() as usize {
            let s = rk.step(&mut b, dt, &NO_GRAVITY).unwrap();
            assert!(s.solver_converged);
            acc += s.substeps;
            rej += s.rejected_steps;
        }
        let u_max =
            b.x.iter()
                .zip(&b.mesh.positions)
                .flat_map(|(p, q)| (p - q).iter().map(|c| c.abs()).collect::<Vec<_>>())
                .fold(0.0, f64::max);
        let v_max =
            b.v.iter()
                .flat_map(|v| v.iter().map(|c| c.abs()).collect::<Vec<_>>())
                .fold(0.0, f64::max);
        let err_x =
            b.x.iter()
                .zip(&reference.0)
                .flat_map(|(p, q)| (p - q).iter().map(|c| c.abs()).collect::<Vec<_>>())
                .fold(0.0, f64::max);
        let err_v =
            b.v.iter()
                .zip(&reference.1)
                .flat_map(|(p, q)| (p - q).iter().map(|c| c.abs()).collect::<Vec<_>>())
                .fold(0.0, f64::max);
        println!(
            "tol {tol:e}: {acc} accepted, {rej} rejected steps; max error x {err_x:.3e} m, v {err_v:.3e} m/s"
        );
        assert_eq!((acc, rej), (rk.accepted(), rk.rejected()));
        assert_eq!(
            rk.factorizations(),
            1,
            "the consistent mass is factored once"
        );
        // Each accepted step's local error is below `atol + rtol |y|` per component, so the
        // global error stays below the sum of those bounds over the steps (the error of this
        // oscillation does not grow in 0.05 s), and falls with the tolerance.
        let (bound_x, bound_v) = (tol + tol * u_max, tol + tol * v_max);
        println!(
            "  error / (steps × local bound): x {:.3}, v {:.3}",
            err_x / (acc as f64 * bound_x),
            err_v / (acc as f64 * bound_v)
        );
        assert!(err_x <= acc as f64 * bound_x, "tol {tol}: x error {err_x}");
        assert!(err_v <= acc as f64 * bound_v, "tol {tol}: v error {err_v}");
        assert!(err_x.max(err_v) < last);
        last = err_x.max(err_v);
    }
}

#[test]
fn rkf45_covers_the_world_step_exactly() {
    // A free body in uniform motion under gravity does not deform: x(t) = X + v₀t + ½gt², a
    // quadratic that RK4 integrates exactly, so any gap or overlap of the substeps would show.
    // The body is soft (E = 100 Pa) so that no step goes past RK4's stability limit, where
    // the round-off of the elastic forces would grow.
    let mut desc = common::bar([2, 1, 1], 0.1, TetSplit::Five, common::COROTATIONAL, false);
    desc.youngs = 100.0;
    let mut body = Body::new(desc).unwrap();
    let v0 = Vector3::new(0.3, 1.0, -0.2);
    body.v.iter_mut().for_each(|v| *v = v0);
    let g = Vector3::new(0.0, -9.81, 0.0);
    let settings = Rkf45Settings {
        rtol: 1e-6,
        atol: 1e-6,
        substeps: 0,
    };
    let mut rk = Rkf45::new(&body, settings).unwrap();
    let (dt, n) = (0.013, 7);
    for _ in 0..n {
        rk.step(&mut body, dt, &g).unwrap();
    }
    let t = dt * n as f64;
    for (x, p) in body.x.iter().zip(&body.mesh.positions) {
        let exact = p + v0 * t + 0.5 * g * t * t;
        assert!((x - exact).norm() < 1e-12, "{x} vs {exact}");
    }
    // With the step control busy (a vibrating body), one world step of 0.05 s and five of
    // 0.01 s end in the same state, to the tolerance: no substep is lost at the seams.
    let settings = Rkf45Settings {
        rtol: 1e-10,
        atol: 1e-10,
        substeps: 0,
    };
    let mut ends = Vec::new();
    for (dt, n) in [(0.05, 1), (0.01, 5)] {
        let mut b = vibrating_body(common::COROTATIONAL, MassKind::Lumped, (0.0, 0.0));
        let mut rk = Rkf45::new(&b, settings).unwrap();
        let mut sub = 0;
        for _ in 0..n {
            sub += rk.step(&mut b, dt, &NO_GRAVITY).unwrap().substeps;
        }
        println!("world dt {dt}: {sub} substeps, {} rejected", rk.rejected());
        assert!(sub > 3 * n, "the step control should be busy");
        ends.push(b.x);
    }
    let d = distance(&ends[0], &ends[1]);
    println!("difference of the end states: {d:.3e} m");
    assert!(d < 1e-7, "{d}");
}

#[test]
fn integrator_kinds_build_through_a_world_and_refuse_bad_settings() {
    let body = || vibrating_body(common::COROTATIONAL, MassKind::Consistent, (0.0, 0.0));
    let kinds = [
        IntegratorKind::SymplecticEuler { substeps: 0 },
        IntegratorKind::Newmark {
            levels: 3,
            ordering: OrderingKind::Amd,
        },
        IntegratorKind::Rkf45 {
            rtol: 1e-6,
            atol: 1e-6,
            substeps: 0,
        },
    ];
    for kind in kinds {
        let integrator = kind.build(&body()).unwrap();
        println!("{}: {:?}", integrator.name(), integrator.notes());
        assert!(!integrator.notes().is_empty());
        let mut world = World::new(vec![body()], NO_GRAVITY, 0.005, kind).unwrap();
        for _ in 0..10 {
            world.step().unwrap();
        }
        assert!(world.last_stats()[0].substeps >= 1);
    }
    let bad = [
        IntegratorKind::Rkf45 {
            rtol: -1.0,
            atol: 1e-6,
            substeps: 0,
        },
        IntegratorKind::Rkf45 {
            rtol: 1e-6,
            atol: f64::NAN,
            substeps: 0,
        },
        IntegratorKind::Rkf45 {
            rtol: 1e-6,
            atol: 0.0,
            substeps: 0,
        },
        IntegratorKind::Newmark {
            levels: 31,
            ordering: OrderingKind::Amd,
        },
    ];
    for kind in bad {
        let err = kind.build(&body()).unwrap_err();
        println!("{kind:?}: {err}");
        assert!(matches!(err, IntegratorError::Setting { .. }));
    }
}

/// Newmark on the 20×20×80-cell bar (Five split: 160,000 tets, 35,721 vertices), consistent
/// mass (pre-factored `M`, a back-substitution per step) against lumped mass (a division):
/// `cargo test --release -p supple --test explicit -- --ignored --nocapture timing`.
#[test]
#[ignore]
fn timing_newmark_prefactored_vs_lumped_on_a_20x20x80_bar() {
    for mass in [MassKind::Lumped, MassKind::Consistent] {
        let desc = common::bar(
            [20, 20, 80],
            0.01,
            TetSplit::Five,
            common::COROTATIONAL,
            true,
        )
        .with_mass(mass);
        let mut body = Body::new(desc).unwrap();
        let dt = 0.25 * CourantBound::of(&body).dt;
        let g = Vector3::new(0.0, -9.81, 0.0);
        let t0 = std::time::Instant::now();
        let mut nm = Newmark::new(&body, 4, OrderingKind::Nd).unwrap();
        let first = nm.step(&mut body, dt, &g).unwrap();
        let setup = t0.elapsed().as_secs_f64();
        let steps = 20;
        let t1 = std::time::Instant::now();
        let (mut forces, mut solve) = (0.0, 0.0);
        for _ in 0..steps {
            let s = nm.step(&mut body, dt, &g).unwrap();
            assert_eq!((s.rejected_steps, s.dt_level), (0, 0));
            forces += s.forces_s;
            solve += s.solve_s;
        }
        let per_step = t1.elapsed().as_secs_f64() / steps as f64;
        println!(
            "{mass:?}: ordering + first factorization + first step {setup:.2} s (factorized: {}); \
             {:.2} ms/step (forces {:.2} ms, solve {:.2} ms), {} factorizations",
            first.factorized,
            1e3 * per_step,
            1e3 * forces / steps as f64,
            1e3 * solve / steps as f64,
            nm.factorizations()
        );
    }
}
