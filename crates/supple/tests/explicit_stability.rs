//! Stability and energy of the explicit integrators: the Courant bound of symplectic Euler
//! (Debunne et al. 2000 eq. 8) against the measured stability limit, energy of the undamped
//! schemes over 5 s, and explicit Newmark's T/2^i step ladder (Zhuang & Canny 1999 §4):
//! stepping down from a diverging step, one factorization per level used.

mod common;

use supple::body::{Body, BodyDesc};
use supple::fem::material::{Linear, ModelKind};
use supple::fem::{ForceModel, MassKind};
use supple::linalg::{BlockCsr, OrderingKind};
use supple::mesh::{box_grid, BoxGrid, TetMesh, TetSplit};
use supple::nalgebra::Vector3;
use supple::time::{CourantBound, Integrator, Newmark, SymplecticEuler, System, COURANT_SAFETY};

const NO_GRAVITY: Vector3<f64> = Vector3::new(0.0, 0.0, 0.0);

/// `ω_max` of `M_L⁻¹ K₀` (lumped mass, rest stiffness) by power iteration on
/// `M^{-1/2} K₀ M^{-1/2}`: `2/ω_max` is the exact stability limit of leapfrog-type schemes for
/// the linear model.
fn omega_max(body: &Body) -> f64 {
    let mut k = BlockCsr::zeros(body.elems.pattern.clone());
    Linear::new(body.lame).add_tangent(&body.elems, &body.mesh.positions, 1.0, &mut k);
    let s: Vec<f64> = body.mass.lumped.iter().map(|m| 1.0 / m.sqrt()).collect();
    let n = body.n_vertices();
    let mut y: Vec<Vector3<f64>> = (0..n)
        .map(|i| {
            let t = i as f64;
            Vector3::new((1.3 * t).sin(), (0.7 * t + 1.0).cos(), (2.1 * t).sin())
        })
        .collect();
    let mut z = vec![Vector3::zeros(); n];
    let mut lambda = 0.0;
    for _ in 0..3000 {
        let sy: Vec<_> = y.iter().zip(&s).map(|(v, si)| *si * v).collect();
        k.mul_vec(&sy, &mut z);
        z.iter_mut().zip(&s).for_each(|(v, si)| *v *= *si);
        let yy: f64 = y.iter().map(|v| v.norm_squared()).sum();
        lambda = y.iter().zip(&z).map(|(a, b)| a.dot(b)).sum::<f64>() / yy;
        let norm = z.iter().map(|v| v.norm_squared()).sum::<f64>().sqrt();
        y.iter_mut().zip(&z).for_each(|(a, b)| *a = b / norm);
    }
    lambda.sqrt()
}

fn box_body(cells: [usize; 3], size: Vector3<f64>, split: TetSplit) -> Body {
    let mesh = box_grid(&BoxGrid {
        cells,
        cell_size: size,
        origin: Vector3::zeros(),
        split,
    });
    Body::new(BodyDesc::new(
        "box",
        mesh,
        common::COROTATIONAL,
        1e5,
        0.33,
        1000.0,
    ))
    .unwrap()
}

#[test]
fn courant_bound_of_a_single_tet_is_its_smallest_altitude_over_the_wave_speed() {
    let mesh = TetMesh::new(
        vec![Vector3::zeros(), Vector3::x(), Vector3::y(), Vector3::z()],
        vec![[0, 1, 2, 3]],
    )
    .unwrap();
    let body = Body::new(BodyDesc::new(
        "tet",
        mesh,
        ModelKind::Linear,
        1e5,
        0.25,
        500.0,
    ))
    .unwrap();
    let c = CourantBound::of(&body);
    // The altitude from the origin onto the face x + y + z = 1 is 1/√3; the others are 1.
    let (mu, lambda) = (1e5 / 2.5, 1e5 * 0.25 / (1.25 * 0.5));
    let speed = ((lambda + 2.0 * mu) / 500.0_f64).sqrt();
    assert!((c.min_altitude - 1.0 / 3f64.sqrt()).abs() < 1e-12);
    assert!((c.wave_speed - speed).abs() < 1e-9 * speed);
    assert!((c.dt - c.min_altitude / speed).abs() < 1e-15);
    assert_eq!(c.substeps(c.dt * COURANT_SAFETY * 3.0), 3);
    assert_eq!(c.substeps(c.dt * COURANT_SAFETY * 3.01), 4);
}

#[test]
fn automatic_substeps_stay_below_the_measured_stability_limit() {
    let meshes = [
        (
            "cubes, 5 tets",
            [3, 2, 2],
            Vector3::repeat(0.1),
            TetSplit::Five,
        ),
        (
            "cubes, 6 tets",
            [3, 2, 2],
            Vector3::repeat(0.1),
            TetSplit::Six,
        ),
        (
            "flat cells",
            [3, 3, 2],
            Vector3::new(0.1, 0.1, 0.03),
            TetSplit::Six,
        ),
        (
            "long cells",
            [2, 2, 2],
            Vector3::new(0.3, 0.1, 0.1),
            TetSplit::Five,
        ),
    ];
    for (name, cells, size, split) in meshes {
        let body = box_body(cells, size, split);
        let bound = CourantBound::of(&body);
        let limit = 2.0 / omega_max(&body);
        println!(
            "{name}: Courant bound {:.4e} s, stability limit 2/ω_max {:.4e} s, ratio {:.3}",
            bound.dt,
            limit,
            limit / bound.dt
        );
        assert!(
            COURANT_SAFETY * bound.dt < 0.9 * limit,
            "{name}: the automatic step is not safely stable"
        );
    }
    // The limit is sharp: symplectic Euler is stable at the automatic step and blows up
    // slightly above 2/ω_max (linear model, so ω_max is exact).
    let make = || {
        let mut b = box_body([3, 2, 2], Vector3::repeat(0.1), TetSplit::Five);
        b.model = Box::new(Linear::new(b.lame));
        for (x, p) in b.x.iter_mut().zip(&b.mesh.positions) {
            *x = p + 0.01 * Vector3::new(p.y.sin(), p.z.cos(), p.x.sin());
        }
        b
    };
    let limit = 2.0 / omega_max(&make());
    for (h, n, stable) in [(limit * 1.1, 1, false), (limit * 1.1, 0, true)] {
        let mut body = make();
        let e0 = System::total_energy(&mut body, &NO_GRAVITY).unwrap();
        let mut se = SymplecticEuler::new(&body, n);
        for _ in 0..400 {
            se.step(&mut body, h, &NO_GRAVITY).unwrap();
        }
        let e1 = System::total_energy(&mut body, &NO_GRAVITY).unwrap();
        println!(
            "h = {h:.3e} s, substeps {}: energy {e0:.4e} -> {e1:.4e}",
            se.substeps_for(h)
        );
        if stable {
            assert!((e1 - e0).abs() < 0.05 * e0, "{e0} -> {e1}");
        } else {
            // Blown up: grown a hundredfold, or no longer finite.
            assert!(
                e1.is_nan() || e1 >= 100.0 * e0,
                "{e0} -> {e1}: no blow-up above the limit"
            );
        }
    }
}

/// A free corotational bar of 8×2×2 cells of 5 cm with Young's modulus `youngs`, stretched by
/// 5 % along its axis and released: it vibrates with no gravity and no damping.
fn stretched_bar(youngs: f64, mass: MassKind) -> Body {
    let mut desc =
        common::bar([8, 2, 2], 0.05, TetSplit::Six, common::COROTATIONAL, false).with_mass(mass);
    desc.youngs = youngs;
    let mut body = Body::new(desc).unwrap();
    for (x, p) in body.x.iter_mut().zip(&body.mesh.positions) {
        x.x = 0.2 + 1.05 * (p.x - 0.2);
    }
    body
}

/// Runs `steps` steps of `dt` and returns the largest relative energy deviation and the
/// drift (mean over the last 10 % of the run minus the mean over the first 10 %, relative).
fn energy_deviation(
    body: &mut Body,
    integrator: &mut dyn Integrator,
    dt: f64,
    steps: usize,
) -> (f64, f64) {
    let e0 = System::total_energy(body, &NO_GRAVITY).unwrap();
    let mut energies = Vec::with_capacity(steps / 10 + 1);
    for k in 1..=steps {
        integrator.step(body, dt, &NO_GRAVITY).unwrap();
        if k % 10 == 0 {
            energies.push(System::total_energy(body, &NO_GRAVITY).unwrap());
        }
    }
    let dev = energies.iter().map(|e| (e - e0).abs()).fold(0.0, f64::max) / e0;
    let w = energies.len() / 10;
    let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
    let drift = (mean(&energies[energies.len() - w..]) - mean(&energies[..w])) / e0;
    (dev, drift)
}

#[test]
fn undamped_explicit_schemes_keep_the_energy_of_a_vibrating_bar_for_5_s() {
    let bound = CourantBound::of(&stretched_bar(1e4, MassKind::Lumped));
    // Symplectic Euler's energy error is first order (ω h), Newmark's second order.
    for (name, dt) in [("symplectic Euler", 2.5e-4), ("Newmark", 1e-3)] {
        let steps = (5.0 / dt) as usize;
        assert!(dt < COURANT_SAFETY * bound.dt);
        let mut body = stretched_bar(1e4, MassKind::Lumped);
        let mut integrator: Box<dyn Integrator> = if name == "Newmark" {
            Box::new(Newmark::new(&body, 4, OrderingKind::Amd).unwrap())
        } else {
            Box::new(SymplecticEuler::new(&body, 1))
        };
        let (dev, drift) = energy_deviation(&mut body, integrator.as_mut(), dt, steps);
        println!(
            "{name}: dt = {dt:e} s (Courant bound {:.3e} s): max |E − E0|/E0 = {dev:.3e}, \
             drift {drift:.3e} over 5 s; counters {:?}",
            bound.dt,
            integrator.counters()
        );
        assert!(dev <= 0.01 && drift.abs() <= 0.01, "{name}: {dev} {drift}");
    }
    // A stable step is never rejected, and nothing is factored (diagonal matrix).
    let mut body = stretched_bar(1e4, MassKind::Lumped);
    let mut nm = Newmark::new(&body, 4, OrderingKind::Amd).unwrap();
    assert!(nm.is_diagonal());
    for _ in 0..500 {
        nm.step(&mut body, 1e-3, &NO_GRAVITY).unwrap();
    }
    assert_eq!(nm.level_rejections().iter().sum::<usize>(), 0);
    assert_eq!(nm.level_usage()[0], 500);
    assert_eq!(nm.factorizations(), 0);
}

#[test]
fn the_ladder_steps_down_from_a_diverging_step_and_factors_each_level_once() {
    let mut body = stretched_bar(1e5, MassKind::Consistent);
    let dt = 0.01;
    let m = 6;
    let e0 = System::total_energy(&mut body, &NO_GRAVITY).unwrap();
    // With the stability estimate (the default) the ladder starts at a stable level: no
    // rejection, one factorization.
    let mut guarded = Newmark::new(&body, m, OrderingKind::Nd).unwrap();
    let mut copy = stretched_bar(1e5, MassKind::Consistent);
    for _ in 0..20 {
        let s = guarded.step(&mut copy, dt, &NO_GRAVITY).unwrap();
        assert_eq!(s.rejected_steps, 0);
        assert!(s.dt_level >= 1, "{s:?}");
    }
    assert!(copy.check_state().is_none());
    assert_eq!(guarded.factorizations(), 1);
    // Without it, the reactive halving alone must find the stable level.
    let mut nm = Newmark::new(&body, m, OrderingKind::Nd).unwrap();
    nm.set_stability_estimate(false);
    assert!(!nm.is_diagonal());
    let first = nm.step(&mut body, dt, &NO_GRAVITY).unwrap();
    println!("first world step: {first:?}");
    assert!(first.rejected_steps >= 1, "level 0 should be rejected");
    assert!(first.dt_level >= 1 && first.substeps == 1 << first.dt_level);
    let steps = 200;
    let mut rejected = first.rejected_steps;
    let mut substeps = first.substeps;
    let mut energies = Vec::with_capacity(steps);
    for _ in 1..steps {
        let s = nm.step(&mut body, dt, &NO_GRAVITY).unwrap();
        assert!(s.solver_converged);
        assert_eq!(s.substeps, 1 << s.dt_level);
        rejected += s.rejected_steps;
        substeps += s.substeps;
        energies.push(System::total_energy(&mut body, &NO_GRAVITY).unwrap() / e0 - 1.0);
    }
    let dev = energies.iter().fold(0.0_f64, |m, e| m.max(e.abs()));
    let mean = |s: &[f64]| s.iter().sum::<f64>() / s.len() as f64;
    let drift = mean(&energies[steps - 41..]) - mean(&energies[..40]);
    assert!(body.check_state().is_none());
    let e1 = System::total_energy(&mut body, &NO_GRAVITY).unwrap();
    let usage = nm.level_usage();
    let rejections = nm.level_rejections();
    println!(
        "usage per level {usage:?}, rejections {rejections:?}, factorizations {}, energy \
         {e0:.4e} -> {e1:.4e}, max |E − E0|/E0 = {dev:.3e}, drift {drift:.3e}",
        nm.factorizations()
    );
    println!("counters {:?}", nm.counters());
    // The run stayed stable: no growth, only central differences' O((ωh)²) energy error,
    // which is a few % at the largest stable level (it falls about 4× per level below it),
    // and no drift.
    assert!(
        dev < 0.1 && drift.abs() < 0.01,
        "{e0} -> {e1}, deviation {dev}, drift {drift}"
    );
    let used = (0..=m as usize)
        .filter(|&i| usage[i] > 0 || rejections[i] > 0)
        .count();
    assert_eq!(nm.factorizations(), used);
    assert!(used <= m as usize + 1);
    assert_eq!(usage.iter().sum::<usize>(), substeps);
    assert_eq!(rejections.iter().sum::<usize>(), rejected);
    // Retries of the failing levels back off: a handful of rejections in 200 world steps.
    let stable = (0..=m as usize).find(|&i| usage[i] > 0).unwrap();
    assert!(stable >= 1);
    assert!(
        rejected <= 2 * (stable + 8),
        "{rejected} rejections: the waits do not back off"
    );
}

#[test]
fn the_ladder_works_with_the_diagonal_solve_without_factoring() {
    let mut body = stretched_bar(1e5, MassKind::Lumped);
    let mut nm = Newmark::new(&body, 6, OrderingKind::Amd).unwrap();
    nm.set_stability_estimate(false);
    assert!(nm.is_diagonal());
    for _ in 0..50 {
        nm.step(&mut body, 0.01, &NO_GRAVITY).unwrap();
    }
    assert!(body.check_state().is_none());
    assert!(nm.level_rejections()[0] >= 1);
    assert_eq!(nm.factorizations(), 0);
    println!(
        "diagonal: usage {:?}, rejections {:?}",
        nm.level_usage(),
        nm.level_rejections()
    );
}
