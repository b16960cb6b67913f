//! Newton-based implicit integrators: backward Euler, BDF2, BDF3 and static equilibrium.
//! Convergence orders in time, Newton's quadratic convergence with the exact tangent,
//! stability at Hauth & Straßer's 100 ms steps, static equilibria, and the settings refused.

mod common;

use supple::body::{Body, BodyDesc};
use supple::fem::material::{CorotationalTangent, ModelKind};
use supple::linalg::{BlockCsr, LinearSolverKind, OrderingKind, PcgSettings};
use supple::mesh::TetSplit;
use supple::nalgebra::{DMatrix, Vector3};
use supple::time::{
    BackwardEuler, Integrator, IntegratorError, IntegratorKind, NewtonSettings, StaticEquilibrium,
    WarmStart,
};
use supple::world::{World, WorldError};

const EXACT: ModelKind = ModelKind::corotational(CorotationalTangent::Exact);

fn cholesky() -> LinearSolverKind {
    LinearSolverKind::Cholesky {
        ordering: OrderingKind::Amd,
    }
}

fn newton(tolerance: f64, solver: LinearSolverKind) -> NewtonSettings {
    NewtonSettings {
        tolerance,
        max_iterations: 30,
        line_search: true,
        solver,
    }
}

fn be(newton: NewtonSettings) -> IntegratorKind {
    IntegratorKind::BackwardEuler { newton }
}

fn bdf(order: u8, newton: NewtonSettings) -> IntegratorKind {
    IntegratorKind::Bdf { order, newton }
}

fn world(desc: BodyDesc, g: f64, dt: f64, kind: IntegratorKind) -> World {
    let body = Body::new(desc).expect("valid body");
    World::new(vec![body], Vector3::new(0.0, -g, 0.0), dt, kind).expect("valid world")
}

/// The 0.4 m clamped bar of 4×1×1 cells (Six split).
fn released_bar(model: ModelKind) -> BodyDesc {
    common::bar([4, 1, 1], 0.1, TetSplit::Six, model, true)
}

/// The lowest vibration mode `φ` of the body at rest and its `ω`, from the dense generalized
/// eigenproblem `K φ = ω² M φ` (lumped `M`, free dofs), scaled to `max |φ_i| = 1`.
fn first_mode(body: &mut Body) -> (Vec<Vector3<f64>>, f64) {
    let mut k = BlockCsr::zeros(body.elems.pattern.clone());
    body.model.update_frames(&body.elems, &body.x);
    body.model.add_tangent(&body.elems, &body.x, 1.0, &mut k);
    let k = k.to_dense();
    let free: Vec<usize> = (0..3 * body.n_vertices())
        .filter(|d| !body.fixed[d / 3])
        .collect();
    let m = |d: usize| body.mass.lumped[d / 3];
    let a = DMatrix::from_fn(free.len(), free.len(), |i, j| {
        k[(free[i], free[j])] / (m(free[i]) * m(free[j])).sqrt()
    });
    let eig = a.symmetric_eigen();
    let (i_min, omega2) =
        eig.eigenvalues
            .iter()
            .copied()
            .enumerate()
            .fold(
                (0, f64::INFINITY),
                |b, (i, l)| if l < b.1 { (i, l) } else { b },
            );
    let mut phi = vec![Vector3::zeros(); body.n_vertices()];
    for (i, &d) in free.iter().enumerate() {
        phi[d / 3][d % 3] = eig.eigenvectors[(i, i_min)] / m(d).sqrt();
    }
    let scale = phi.iter().map(|p| p.norm()).fold(0.0, f64::max);
    (phi.iter().map(|p| p / scale).collect(), omega2.sqrt())
}

/// Releases the bar, without gravity, from its first bending mode with a 4 cm tip amplitude
/// (a 0.1 rad rotation, where the nonlinear models part from the linear one): a smooth motion
/// (ω ≈ 10.7 rad/s) with little energy in the stiff modes. A light Rayleigh `β = 10⁻³ s` damps
/// the stiff modes the nonlinear coupling excites (ζ ≈ 0.25 at 500 rad/s; 0.005 for the bending
/// mode): undamped, BDF3, which is not A-stable, slowly amplifies those with `ωh ≈ 1`.
fn positions_at(model: ModelKind, kind: IntegratorKind, t_end: f64, dt: f64) -> Vec<Vector3<f64>> {
    let mut w = world(released_bar(model).with_damping(0.0, 1e-3), 0.0, dt, kind);
    let b = &mut w.bodies[0];
    let (phi, _) = first_mode(b);
    for (x, p) in b.x.iter_mut().zip(&phi) {
        *x += 0.04 * p;
    }
    for _ in 0..(t_end / dt).round() as usize {
        w.step().unwrap();
    }
    w.bodies[0].x.clone()
}

fn distance(a: &[Vector3<f64>], b: &[Vector3<f64>]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(p, q)| (p - q).norm_squared())
        .sum::<f64>()
        .sqrt()
}

/// Least-squares slope of `log e` against `log dt`.
fn fitted_order(dts: &[f64], errors: &[f64]) -> f64 {
    let n = dts.len() as f64;
    let (lx, ly): (Vec<f64>, Vec<f64>) = dts
        .iter()
        .zip(errors)
        .map(|(d, e)| (d.ln(), e.ln()))
        .unzip();
    let (mx, my) = (lx.iter().sum::<f64>() / n, ly.iter().sum::<f64>() / n);
    let sxy: f64 = lx.iter().zip(&ly).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = lx.iter().map(|x| (x - mx).powi(2)).sum();
    sxy / sxx
}

/// Orders fitted to the errors at `dt`, `dt/2`, `dt/4` against BDF3 at `dt/64`, for the
/// linear model and the nonlinear corotational and St.Venant–Kirchhoff ones. (BDF3 started by
/// a plain backward Euler step instead of the Richardson-extrapolated one measures ≈ 2 here.)
#[test]
fn backward_euler_bdf2_bdf3_converge_with_orders_one_two_three() {
    let tight = newton(1e-12, cholesky());
    let t_end = 0.3;
    let dts = [0.005, 0.0025, 0.00125];
    let mut failures = Vec::new();
    for model in [ModelKind::Linear, common::COROTATIONAL, ModelKind::Stvk] {
        let reference = positions_at(model, bdf(3, tight), t_end, dts[2] / 16.0);
        for (kind, expected) in [(be(tight), 1.0), (bdf(2, tight), 2.0), (bdf(3, tight), 3.0)] {
            let errors: Vec<f64> = dts
                .iter()
                .map(|&dt| distance(&positions_at(model, kind, t_end, dt), &reference))
                .collect();
            let order = fitted_order(&dts, &errors);
            let shown: Vec<String> = errors.iter().map(|e| format!("{e:.2e}")).collect();
            println!(
                "{} {}: errors {shown:?}, order {order:.3}",
                model.name(),
                kind_name(&kind)
            );
            if (order - expected).abs() > 0.3 {
                failures.push(format!("{} {kind:?}: order {order}", model.name()));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:?}");
}

fn kind_name(kind: &IntegratorKind) -> String {
    match kind {
        IntegratorKind::BackwardEuler { .. } => "backward Euler".into(),
        IntegratorKind::Bdf { order, .. } => format!("BDF{order}"),
        other => format!("{other:?}"),
    }
}

/// The Newton residuals of one large backward Euler step of the released bar.
fn be_residuals(model: ModelKind, dt: f64) -> Vec<f64> {
    let mut body = Body::new(released_bar(model)).unwrap();
    // A bent and stretched start, far from the step's solution.
    for (x, p) in body.x.iter_mut().zip(&body.mesh.positions) {
        *x = p + Vector3::new(0.04 * p.x, 0.25 * p.x * p.x, 0.0);
    }
    let mut be = BackwardEuler::new(&body, newton(1e-14, cholesky())).unwrap();
    be.step(&mut body, dt, &Vector3::zeros()).unwrap();
    be.residual_history().to_vec()
}

/// `log(e_{k+1}/e_k) / log(e_k/e_{k−1})` for the iterations well above round-off.
fn convergence_rates(r: &[f64]) -> Vec<f64> {
    let floor = 1e-11 * r[0];
    r.windows(3)
        .filter(|w| w[2] > floor)
        .map(|w| (w[2] / w[1]).ln() / (w[1] / w[0]).ln())
        .collect()
}

#[test]
fn newton_converges_quadratically_with_the_exact_tangent() {
    let exact = be_residuals(EXACT, 0.05);
    let rates = convergence_rates(&exact);
    println!("exact tangent: residuals {exact:?}, rates {rates:?}");
    assert!(exact.len() >= 4, "too few iterations to measure: {exact:?}");
    let last = rates.last().copied().unwrap_or(0.0);
    assert!(last >= 1.8, "rate {last}: {rates:?} ({exact:?})");
    // The rotated tangent (dR ignored) converges only linearly: the test can tell them apart.
    let rotated = be_residuals(common::COROTATIONAL, 0.05);
    let rates = convergence_rates(&rotated);
    println!("rotated tangent: residuals {rotated:?}, rates {rates:?}");
    assert!(rotated.len() > exact.len(), "{rotated:?} vs {exact:?}");
    assert!(rates.iter().all(|&r| r < 1.5), "{rates:?}");
}

/// Kinetic energies of `steps` steps of the clamped 0.4 m bar (8×2×2 cells) under gravity,
/// with Rayleigh `α`.
fn run_under_gravity(kind: IntegratorKind, alpha: f64, dt: f64, steps: usize) -> Vec<f64> {
    let desc = common::bar([8, 2, 2], 0.05, TetSplit::Five, common::COROTATIONAL, true)
        .with_damping(alpha, 0.0);
    let mut w = world(desc, 9.81, dt, kind);
    let mut ke = Vec::new();
    for step in 0..steps {
        w.step()
            .unwrap_or_else(|e| panic!("{kind:?}: step {step}: {e}"));
        let b = &w.bodies[0];
        assert!(b.check_state().is_none(), "{kind:?}: {:?}", b.check_state());
        assert!(
            w.last_stats()[0].newton_residual <= 1e-6,
            "{kind:?} step {step}: {:?}",
            w.last_stats()[0]
        );
        // The bar (0.4 m) stays within a bar length of its rest shape.
        let sag =
            b.x.iter()
                .zip(&b.mesh.positions)
                .map(|(x, p)| (x - p).norm());
        assert!(sag.fold(0.0, f64::max) < 0.4, "{kind:?} step {step}");
        ke.push(b.kinetic_energy());
    }
    ke
}

/// Hauth & Straßer §6–7 step stiff bodies at 20–100 ms. Backward Euler and BDF2 (A-stable)
/// need no damping. BDF3 is only A(86°)-stable: an undamped oscillation with `0 < ωh < 1.9`
/// grows (by 4 % a step at `ωh ≈ 1.1`, the bar's first bending mode at 100 ms), so it runs
/// with Rayleigh `α = 2 s⁻¹` (damping ratio 0.09 on that mode; BDF3 needs ≳ 0.08).
#[test]
fn backward_euler_and_bdf3_are_stable_at_100_ms() {
    let s = NewtonSettings::default();
    for (kind, alpha) in [
        (be(s), 0.0),
        (bdf(2, s), 0.0),
        (be(s), 2.0),
        (bdf(2, s), 2.0),
        (bdf(3, s), 2.0),
    ] {
        let ke = run_under_gravity(kind, alpha, 0.1, 40);
        let peak = |r: std::ops::Range<usize>| ke[r].iter().copied().fold(0.0, f64::max);
        let (first, second, last) = (peak(0..20), peak(20..40), peak(30..40));
        println!(
            "{} α = {alpha}: max KE {first:.3e} J in 0–2 s, {second:.3e} J in 2–4 s, {last:.3e} J in 3–4 s",
            kind_name(&kind)
        );
        assert!(second <= first, "{kind:?}: kinetic energy grew: {ke:?}");
        // The bar settles (BDF2 damps less than backward Euler).
        assert!(last < 0.1 * first, "{kind:?}: {ke:?}");
    }
}

/// `‖f_el(x) + M g‖` over the free vertices and `‖M g‖` for the body's state.
fn equilibrium_residual(body: &mut Body, g: &Vector3<f64>) -> (f64, f64) {
    let mut f: Vec<Vector3<f64>> = body.mass.lumped.iter().map(|m| *m * g).collect();
    body.model.update_frames(&body.elems, &body.x);
    body.model.add_forces(&body.elems, &body.x, &mut f);
    let free = |v: &Vector3<f64>, i: usize| if body.fixed[i] { 0.0 } else { v.norm_squared() };
    let r: f64 = f.iter().enumerate().map(|(i, v)| free(v, i)).sum();
    let load: f64 = body
        .mass
        .lumped
        .iter()
        .enumerate()
        .map(|(i, m)| free(&(*m * g), i))
        .sum();
    (r.sqrt(), load.sqrt())
}

fn static_world(model: ModelKind, g: f64, load_steps: u32, solver: LinearSolverKind) -> World {
    let desc = common::bar([8, 2, 2], 0.05, TetSplit::Five, model, true);
    let kind = IntegratorKind::Static {
        load_steps,
        newton: newton(1e-8, solver),
    };
    world(desc, g, 0.01, kind)
}

fn displacement(w: &World) -> Vec<Vector3<f64>> {
    let b = &w.bodies[0];
    b.x.iter()
        .zip(&b.mesh.positions)
        .map(|(x, p)| x - p)
        .collect()
}

#[test]
fn static_cantilever_reaches_equilibrium_and_keeps_it() {
    for (solver, name) in [
        (cholesky(), "cholesky"),
        (LinearSolverKind::default(), "pcg"),
    ] {
        let mut w = static_world(common::COROTATIONAL, 9.81, 5, solver);
        w.step().unwrap();
        let stats = w.last_stats()[0];
        let g = w.gravity;
        let (r, load) = equilibrium_residual(&mut w.bodies[0], &g);
        let tip = w.bodies[0]
            .x
            .iter()
            .map(|x| x.y)
            .fold(f64::INFINITY, f64::min);
        println!("{name}: {stats:?}; residual {r:.3e} of load {load:.3e}; lowest y {tip:.4} m");
        assert!(r <= 1e-8 * load, "{name}: residual {r} of load {load}");
        assert!(stats.newton_residual <= 1e-8);
        assert_eq!(stats.substeps, 5);
        // It sags (the soft bar bends far: a large rotation), and stands still.
        assert!(tip < -0.05 && tip > -0.4, "{name}: {tip}");
        assert!(w.bodies[0].v.iter().all(|v| *v == Vector3::zeros()));
        // The next frame is the same equilibrium, found without a Newton iteration.
        let x = w.bodies[0].x.clone();
        w.step().unwrap();
        assert_eq!(w.last_stats()[0].newton_iterations, 0);
        assert_eq!(w.bodies[0].x, x);
    }
}

#[test]
fn static_solution_under_a_tiny_load_is_the_linear_one() {
    // A linear model is solved in one Newton iteration.
    let mut lin = static_world(ModelKind::Linear, 9.81e-4, 1, cholesky());
    lin.step().unwrap();
    assert_eq!(lin.last_stats()[0].newton_iterations, 1);
    let g = lin.gravity;
    let (r, load) = equilibrium_residual(&mut lin.bodies[0], &g);
    assert!(r <= 1e-8 * load, "{r} of {load}");
    // Under a load 10⁴ times below gravity the corotational equilibrium is the linear one.
    let mut corot = static_world(common::COROTATIONAL, 9.81e-4, 1, cholesky());
    corot.step().unwrap();
    let (ul, uc) = (displacement(&lin), displacement(&corot));
    let rel = distance(&ul, &uc) / ul.iter().map(|u| u.norm_squared()).sum::<f64>().sqrt();
    println!("tiny load: relative difference {rel:.3e}");
    assert!(rel < 1e-3, "{rel}");
    // Under full gravity they part (the comparison can fail).
    let mut lin = static_world(ModelKind::Linear, 9.81, 1, cholesky());
    let mut corot = static_world(common::COROTATIONAL, 9.81, 5, cholesky());
    lin.step().unwrap();
    corot.step().unwrap();
    let (ul, uc) = (displacement(&lin), displacement(&corot));
    let rel = distance(&ul, &uc) / ul.iter().map(|u| u.norm_squared()).sum::<f64>().sqrt();
    println!("full gravity: relative difference {rel:.3e}");
    assert!(rel > 0.05, "{rel}");
}

#[test]
fn linear_model_takes_one_newton_iteration_and_matches_linearized_euler() {
    let desc = || {
        common::bar([6, 2, 2], 0.05, TetSplit::Five, ModelKind::Linear, true)
            .with_damping(0.5, 0.002)
    };
    let mut a = world(desc(), 9.81, 0.01, be(newton(1e-10, cholesky())));
    let mut b = world(
        desc(),
        9.81,
        0.01,
        IntegratorKind::BackwardEulerLinearized {
            solver: cholesky(),
            warm_start: WarmStart::Velocity,
        },
    );
    for _ in 0..30 {
        a.step().unwrap();
        b.step().unwrap();
        assert_eq!(a.last_stats()[0].newton_iterations, 1);
    }
    let (xa, xb) = (&a.bodies[0].x, &b.bodies[0].x);
    let scale = distance(xb, &b.bodies[0].mesh.positions);
    let d = distance(xa, xb);
    assert!(d <= 1e-9 * scale, "{d} vs displacement {scale}");
}

#[test]
fn bdf3_keeps_the_linear_momentum_of_a_free_body() {
    let desc = common::bar([4, 1, 1], 0.1, TetSplit::Six, common::COROTATIONAL, false);
    let mut w = world(desc, 0.0, 0.02, bdf(3, newton(1e-10, cholesky())));
    let b = &mut w.bodies[0];
    for (v, x) in b.v.iter_mut().zip(&b.mesh.positions) {
        *v = Vector3::new(0.5, -0.2, 0.1)
            + Vector3::new(0.0, 0.0, 3.0).cross(&(x - Vector3::new(0.2, 0.05, 0.05)));
    }
    let p0 = w.bodies[0].momentum();
    for _ in 0..50 {
        w.step().unwrap();
    }
    let p1 = w.bodies[0].momentum();
    assert!((p1 - p0).norm() <= 1e-8 * p0.norm(), "{p0} -> {p1}");
}

#[test]
fn invalid_settings_are_refused() {
    let body = || Body::new(released_bar(common::COROTATIONAL)).unwrap();
    let build = |kind: IntegratorKind| {
        World::new(vec![body()], Vector3::zeros(), 0.01, kind)
            .err()
            .map(|e| e.to_string())
    };
    let ok = NewtonSettings::default();
    for order in [0, 1, 4] {
        let e = build(bdf(order, ok)).expect("refused");
        assert!(e.contains("bdf.order"), "{e}");
    }
    for tolerance in [0.0, -1e-6, 1.0, f64::NAN] {
        let e = build(be(NewtonSettings { tolerance, ..ok })).expect("refused");
        assert!(e.contains("newton.tolerance"), "{e}");
    }
    let e = build(be(NewtonSettings {
        max_iterations: 0,
        ..ok
    }))
    .expect("refused");
    assert!(e.contains("newton.max_iterations"), "{e}");
    let e = build(be(NewtonSettings {
        solver: LinearSolverKind::Pcg(PcgSettings {
            tolerance: f64::INFINITY,
            ..Default::default()
        }),
        ..ok
    }))
    .expect("refused");
    assert!(e.contains("newton.solver.tolerance"), "{e}");
    let e = build(IntegratorKind::Static {
        load_steps: 0,
        newton: ok,
    })
    .expect("refused");
    assert!(e.contains("static.load_steps"), "{e}");
    // A free body has no unique equilibrium.
    let free = Body::new(common::bar(
        [2, 1, 1],
        0.1,
        TetSplit::Six,
        common::COROTATIONAL,
        false,
    ))
    .unwrap();
    let err = StaticEquilibrium::new(&free, 1, ok).unwrap_err();
    assert!(matches!(err, IntegratorError::Unsupported { .. }), "{err}");
    let world_err = World::new(
        vec![free],
        Vector3::zeros(),
        0.01,
        IntegratorKind::Static {
            load_steps: 1,
            newton: ok,
        },
    )
    .unwrap_err();
    assert!(matches!(world_err, WorldError::Integrator(_)));
}

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

#[test]
fn implicit_steps_do_not_allocate() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    pool.install(|| {
        for solver in [LinearSolverKind::default(), cholesky()] {
            let s = newton(1e-8, solver);
            let kinds = [
                be(s),
                bdf(2, s),
                bdf(3, s),
                IntegratorKind::Static {
                    load_steps: 3,
                    newton: s,
                },
            ];
            for kind in kinds {
                let desc =
                    common::bar([10, 3, 3], 0.04, TetSplit::Five, common::COROTATIONAL, true)
                        .with_damping(0.1, 0.01);
                let mut w = world(desc, 9.81, 0.01, kind);
                // The first step may warm the pool up and make the first factorization.
                w.step().unwrap();
                let before = common::allocations();
                for _ in 0..3 {
                    // A changed gravity makes the static solve ramp its load again.
                    w.gravity *= 0.9;
                    w.step().unwrap();
                    assert!(w.last_stats()[0].newton_iterations > 0, "{kind:?}");
                }
                let n = common::allocations() - before;
                assert_eq!(n, 0, "{kind:?}: {n} allocations in 3 steps");
            }
        }
    });
}

/// Newton iterations, PCG iterations and wall time per step of backward Euler and BDF3 (run
/// with `--ignored --nocapture`, and `RAYON_NUM_THREADS=1` for one thread).
fn time_steps(cells: [usize; 3], h: f64, dt: f64, alpha: f64, steps: usize) {
    for model in [common::COROTATIONAL, ModelKind::Stvk] {
        for kind in [
            be(NewtonSettings::default()),
            bdf(3, NewtonSettings::default()),
        ] {
            let desc = common::bar(cells, h, TetSplit::Five, model, true).with_damping(alpha, 0.0);
            let mut w = world(desc, 9.81, dt, kind);
            let (mut newton, mut pcg, mut max_newton) = (0, 0, 0);
            let t0 = std::time::Instant::now();
            for _ in 0..steps {
                w.step().unwrap();
                let s = w.last_stats()[0];
                newton += s.newton_iterations;
                pcg += s.solver_iterations;
                max_newton = max_newton.max(s.newton_iterations);
            }
            let ms = t0.elapsed().as_secs_f64() * 1e3 / steps as f64;
            println!(
                "{cells:?} dt {dt} α {alpha} {} {}: {:.2} Newton/step (max {max_newton}), {:.0} PCG/step, {ms:.2} ms/step",
                model.name(),
                kind_name(&kind),
                newton as f64 / steps as f64,
                pcg as f64 / steps as f64,
            );
        }
    }
}

#[test]
#[ignore]
fn timing_small_bar() {
    time_steps([8, 2, 2], 0.05, 0.01, 0.0, 200);
    time_steps([8, 2, 2], 0.05, 0.1, 2.0, 40);
}

#[test]
#[ignore]
fn timing_large_bar() {
    time_steps([80, 20, 20], 1.0 / 80.0, 0.01, 0.0, 5);
}
