//! Stiffness warping (Müller et al. 2002 §3) on a free-floating body: the ghost forces of
//! eq. 12 and their correction, seen through linear and angular momentum over 200 implicit
//! Euler steps (no fixed vertices, no gravity, a random initial velocity field).
//!
//! A linearized implicit Euler step changes the momentum by `h Φᵀ(f − h K v⁺)` (`Φ` the rigid
//! velocity fields at the start of the step; `L⁺ = Σ m x × v⁺` exactly, as `x⁺ − x ∥ v⁺`), so
//! both the forces and the tangent must be free of net force and torque. The ghost correction
//! projects the forces globally; the tangent is projected (element by element) only by the
//! `Element` tangent. The default `Rotated` tangent (Müller's stored blocks rotated, issue 18)
//! is not projected, and its runs keep momentum only as well as that allows (measured below).

mod common;

use common::Lcg;

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

use supple::body::Body;
use supple::fem::material::{
    build_model, ForceModel, ModelKind, RotationField, Warped, WarpedTangent,
};
use supple::fem::{ElementSet, Lame};
use supple::linalg::ordering::OrderingKind;
use supple::linalg::BlockCsr;
use supple::mesh::{box_grid, BoxGrid, TetSplit};
use supple::nalgebra::{Matrix3, Rotation3, Vector3};
use supple::time::{IntegratorKind, LinearSolverKind, WarmStart};
use supple::world::World;

const FIELDS: [RotationField; 2] = [RotationField::EdgeFrame, RotationField::LeastSquares];

/// Rotation field, ghost correction, tangent.
type Variant = (RotationField, bool, WarpedTangent);

fn warped_kind(field: RotationField, ghost_correction: bool) -> ModelKind {
    ModelKind::Warped {
        field,
        ghost_correction,
        tangent: WarpedTangent::Rotated,
    }
}

/// A free 0.3 × 0.1 × 0.1 m bar (E = 1e5 Pa, ρ = 1000 kg/m³) spinning at 5 rad/s about z,
/// drifting at (0.2, −0.1, 0.05) m/s, with a random velocity of up to 0.3 m/s per component
/// at each vertex; stepped by linearized backward Euler with a Cholesky solve (exact to
/// round-off, so the solver adds no momentum error of its own).
/// `warped = None` runs the corotational model instead.
fn spinning_bar(warped: Option<Variant>) -> World {
    let model = match warped {
        Some((field, ghost_correction, _)) => warped_kind(field, ghost_correction),
        None => common::COROTATIONAL,
    };
    let desc = common::bar([6, 2, 2], 0.05, TetSplit::Five, model, false);
    let mut body = Body::new(desc).expect("valid body");
    if let Some((field, ghost, tangent)) = warped {
        let w = Warped::new(body.lame, field, ghost, &body.mesh, &body.elems);
        body.model = Box::new(w.with_tangent(tangent));
    }
    let c = body.center_of_mass();
    let mut rng = Lcg(4242);
    for (v, x) in body.v.iter_mut().zip(&body.x) {
        let noise = rng.vec3();
        *v = Vector3::new(0.2, -0.1, 0.05)
            + Vector3::new(0.0, 0.0, 5.0).cross(&(x - c))
            + 0.3 * noise;
    }
    let integrator = IntegratorKind::BackwardEulerLinearized {
        solver: LinearSolverKind::Cholesky {
            ordering: OrderingKind::Amd,
        },
        warm_start: WarmStart::Zero,
    };
    World::new(vec![body], Vector3::zeros(), 0.01, integrator).expect("valid world")
}

/// Angular momentum `Σ m_i x_i × v_i` about the origin.
fn angular_momentum(body: &Body) -> Vector3<f64> {
    body.mass
        .lumped
        .iter()
        .zip(body.x.iter().zip(&body.v))
        .map(|(m, (x, v))| *m * x.cross(v))
        .sum()
}

/// Runs 200 steps; returns the largest relative changes of linear and angular momentum and
/// the final over initial kinetic energy.
fn drift(warped: Option<Variant>) -> (f64, f64, f64) {
    let mut w = spinning_bar(warped);
    let (p0, l0) = (w.bodies[0].momentum(), angular_momentum(&w.bodies[0]));
    let e0 = w.bodies[0].kinetic_energy();
    let (mut dp, mut dl) = (0.0f64, 0.0f64);
    for _ in 0..200 {
        w.step().expect("stable step");
        assert!(w.last_stats()[0].solver_converged);
        let b = &w.bodies[0];
        dp = dp.max((b.momentum() - p0).norm() / p0.norm());
        dl = dl.max((angular_momentum(b) - l0).norm() / l0.norm());
    }
    let e = w.bodies[0].kinetic_energy() / e0;
    println!(
        "{}: max |Δp|/|p0| {dp:.3e}, max |ΔL|/|L0| {dl:.3e}, kinetic energy ×{e:.3}",
        warped.map_or("corotational".into(), |(f, g, t)| format!(
            "{f:?} ghost {g} {t:?}"
        ))
    );
    (dp, dl, e)
}

/// With the correction and the element-projected tangent the momenta stay to round-off. For
/// comparison, the corotational model (torque-free forces, tangent `R K Rᵀ` without the
/// projection) on the same run keeps `p` but lets `L` drift by about 1e-3: its tangent's
/// torque on deformed elements.
#[test]
fn corrected_warping_keeps_the_momentum_of_a_free_body() {
    let (dp_cor, dl_cor, _) = drift(None);
    assert!(
        dp_cor <= 1e-9 && dl_cor > 1e-5,
        "corotational {dp_cor:e} {dl_cor:e}"
    );
    for field in FIELDS {
        let (dp, dl, e) = drift(Some((field, true, WarpedTangent::Element)));
        assert!(dp <= 1e-9, "{field:?}: linear momentum drift {dp:e}");
        assert!(dl <= 1e-9, "{field:?}: angular momentum drift {dl:e}");
        // The spin survives: implicit Euler damps the vibration, not the rigid motion.
        assert!(e > 0.5 && e < 1.0, "{field:?}: kinetic energy ratio {e}");
    }
}

/// The default block-rotated tangent is not projected (the projection needs the elements,
/// which the fast path does not visit), so each step's `−h² Φᵀ K̃ v⁺` moves the momenta even
/// though the forces are corrected. On this violent run (random vertex velocities of 0.3 m/s
/// on 5 cm cells, `h² K ≈ 4 M`) that term dominates: the drift is of the order of the
/// uncorrected model's (up to 1e-2 in `p` and `L`), where the element tangent keeps both to 1e-13. This is the property issue 18
/// traded for a tangent built without visiting the elements; `WarpedTangent::Element` keeps
/// it. The bounds are the measured drifts with a margin of about 2, so a change that
/// makes the fast tangent worse fails here; the spin must survive.
#[test]
fn rotated_tangent_drifts_like_an_uncorrected_body() {
    // Measured: edge frames 2.0e-2 / 7.7e-2, least squares 3.0e-3 / 6.2e-3 (p / L).
    for (field, bound_p, bound_l) in [
        (RotationField::EdgeFrame, 4e-2, 0.15),
        (RotationField::LeastSquares, 6e-3, 1.2e-2),
    ] {
        let (dp, dl, e) = drift(Some((field, true, WarpedTangent::Rotated)));
        assert!(dp <= bound_p && dl <= bound_l, "{field:?}: {dp:e} {dl:e}");
        assert!(e > 0.5 && e < 1.0, "{field:?}: kinetic energy ratio {e}");
    }
}

/// Without it the ghost forces push and turn the free body (whichever tangent).
#[test]
fn uncorrected_ghost_forces_move_a_free_body() {
    for field in FIELDS {
        for tangent in [WarpedTangent::Rotated, WarpedTangent::Element] {
            let (dp, dl, _) = drift(Some((field, false, tangent)));
            assert!(
                dp > 1e-4 && dl > 1e-4,
                "{field:?} {tangent:?}: {dp:e} {dl:e}"
            );
        }
    }
}

/// The stress of a turned uniform expansion turns with the body (every vertex rotation is the
/// body's turn, so each element sees the linear stress of the expansion).
#[test]
fn stress_of_a_turned_uniform_expansion_turns_with_the_body() {
    let m = box_grid(&BoxGrid {
        cells: [2, 2, 1],
        cell_size: Vector3::new(0.1, 0.12, 0.09),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    });
    let es = ElementSet::new(&m);
    let (q, eps) = (Rotation3::from_euler_angles(0.2, 2.0, -1.0), 1e-3);
    let x: Vec<_> = m.positions.iter().map(|p| (1.0 + eps) * (q * p)).collect();
    let lame = Lame::from_youngs_poisson(1e5, 0.33).unwrap();
    let expected = Matrix3::from_diagonal_element((2.0 * lame.mu + 3.0 * lame.lambda) * eps);
    let mut out = vec![Matrix3::zeros(); es.len()];
    for field in FIELDS {
        let mut model = build_model(warped_kind(field, false), lame, &m, &es);
        model.update_frames(&es, &x);
        assert!(model.cauchy_stress(&es, &x, &mut out));
        for s in &out {
            assert!((s - expected).norm() <= 1e-9 * expected.norm(), "{s}");
        }
    }
}

/// Forces (with the ghost correction's reduction) and tangent are the same bits on 1 and 2
/// threads, on a mesh large enough (4913 vertices, 20480 tets) for the parallel paths.
#[test]
fn results_do_not_depend_on_the_thread_count() {
    let mut m = box_grid(&BoxGrid {
        cells: [16, 16, 16],
        cell_size: Vector3::repeat(0.05),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    });
    let mut rng = Lcg(33);
    for p in &mut m.positions {
        *p += 0.005 * rng.vec3();
    }
    let es = ElementSet::new(&m);
    let a = Rotation3::from_euler_angles(0.3, -0.2, 1.1).into_inner()
        * (Matrix3::identity() + 0.1 * Matrix3::from_fn(|_, _| rng.uniform()));
    let x: Vec<_> = m
        .positions
        .iter()
        .map(|p| a * p + 0.003 * rng.vec3())
        .collect();
    let lame = Lame::from_youngs_poisson(1e5, 0.33).unwrap();
    for field in FIELDS {
        for tangent in [WarpedTangent::Rotated, WarpedTangent::Element] {
            let run = |threads: usize| {
                rayon::ThreadPoolBuilder::new()
                    .num_threads(threads)
                    .build()
                    .unwrap()
                    .install(|| {
                        let mut model =
                            Warped::new(lame, field, true, &m, &es).with_tangent(tangent);
                        model.update_frames(&es, &x);
                        let mut f = vec![Vector3::zeros(); x.len()];
                        model.add_forces(&es, &x, &mut f);
                        let mut k = BlockCsr::zeros(es.pattern.clone());
                        model.add_tangent(&es, &x, 1.0, &mut k);
                        (f, k.values)
                    })
            };
            let (one, two) = (run(1), run(2));
            assert!(one.0 == two.0, "{field:?} {tangent:?} forces");
            assert!(one.1 == two.1, "{field:?} {tangent:?} tangent");
        }
    }
}

/// A step of a warped body allocates nothing (frames, forces with the ghost correction's
/// reduction, block-rotated and element-projected tangents), on the sequential and the parallel paths; nor does one of
/// the corotational model with each rotation method and a kept-rotation schedule.
#[test]
fn steps_do_not_allocate() {
    use supple::fem::material::{CorotationalSettings, CorotationalTangent, RotationMethod};
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    pool.install(|| {
        let mut cases = vec![];
        for field in FIELDS {
            cases.push(([10, 3, 3], warped_kind(field, true)));
            cases.push(([40, 10, 10], warped_kind(field, true)));
        }
        for rotation in [
            RotationMethod::Polar,
            RotationMethod::Svd,
            RotationMethod::Qr,
        ] {
            let settings = CorotationalSettings {
                tangent: CorotationalTangent::Exact,
                rotation,
                update_every: 2,
            };
            cases.push(([10, 3, 3], ModelKind::Corotational(settings)));
        }
        let element = |field| Some((field, WarpedTangent::Element));
        let mut cases: Vec<_> = cases.into_iter().map(|(c, m)| (c, m, None)).collect();
        for field in FIELDS {
            cases.push(([10, 3, 3], warped_kind(field, true), element(field)));
        }
        for (cells, model, swap) in cases {
            let desc = common::bar(cells, 1.0 / cells[0] as f64, TetSplit::Five, model, true);
            let mut w = common::world(desc, 9.81, 0.01, common::pcg(1e-6));
            if let Some((field, tangent)) = swap {
                let b = &mut w.bodies[0];
                let model = Warped::new(b.lame, field, true, &b.mesh, &b.elems);
                b.model = Box::new(model.with_tangent(tangent));
            }
            w.step().unwrap();
            let before = common::allocations();
            for _ in 0..3 {
                w.step().unwrap();
            }
            let n = common::allocations() - before;
            assert_eq!(
                n, 0,
                "{cells:?} {model:?} {swap:?}: {n} allocations in 3 steps"
            );
        }
    });
}

/// Müller et al. 2002 §4.1, Fig. 6: a clamped bar (E = 1e6 Pa) sagging under gravity keeps its
/// volume with warped stiffness, while the linear model's grows.
#[test]
fn clamped_bar_keeps_its_volume() {
    let run = |model: ModelKind| {
        let mut desc = common::bar([10, 3, 3], 0.1, TetSplit::Five, model, true);
        desc.youngs = 1e6;
        let mut w = common::world(desc, 9.81, 0.01, common::pcg(1e-8));
        let v0 = w.bodies[0].mesh.volume();
        let mut max_rel = 0.0f64;
        for _ in 0..200 {
            w.step().unwrap();
            assert!(w.last_stats()[0].solver_converged);
            max_rel = max_rel.max((w.bodies[0].volume() / v0 - 1.0).abs());
        }
        let tip = w.bodies[0].x.len() - 1;
        (
            max_rel,
            w.bodies[0].mesh.positions[tip].y - w.bodies[0].x[tip].y,
        )
    };
    let (linear, _) = run(ModelKind::Linear);
    println!("linear: max volume change {linear:.4}");
    assert!(linear > 0.05, "{linear}");
    for field in FIELDS {
        for ghost in [false, true] {
            let (rel, drop) = run(warped_kind(field, ghost));
            println!("{field:?} ghost {ghost}: max volume change {rel:.4}, tip drop {drop:.3} m");
            assert!(rel < 0.01, "{field:?} ghost {ghost}: {rel}");
            assert!(drop > 0.05, "{field:?} ghost {ghost}: {drop}");
        }
    }
}

/// `(max |a_i − b_i|, max |a_i|)`: how far two runs' positions ended apart, and their scale.
fn largest_difference(a: &[Vector3<f64>], b: &[Vector3<f64>]) -> (f64, f64) {
    let diff = a
        .iter()
        .zip(b)
        .map(|(p, q)| (p - q).norm())
        .fold(0.0, f64::max);
    let scale = a.iter().map(|p| p.norm()).fold(0.0, f64::max);
    (diff, scale)
}

/// The linearized step of a warped body solves in the vertices' frames,
/// `A⁰ (Bᵀ v⁺) = Bᵀ b` with `A⁰` the rest matrix, assembled and factorized once
/// (`System::frames`). Without the ghost correction the `Element` tangent assembles the same
/// matrix `B K Bᵀ` in world axes every step, so both runs take the same steps: a clamped bar
/// (E = 1e5 Pa) swinging down under gravity for 40 steps, by Cholesky (one factorization
/// against one per step) and by PCG from the same first guesses; with Rayleigh damping
/// (both of its terms are in `A⁰`), and with consistent mass, whose blocks `m_ij I` the
/// frames do not keep (`R_i m_ij R_jᵀ`): that step must assemble `A` in world axes instead.
#[test]
fn the_solve_in_vertex_frames_takes_the_steps_of_the_assembled_matrix() {
    use supple::body::Rayleigh;
    use supple::fem::MassKind;
    let solvers = [
        LinearSolverKind::Cholesky {
            ordering: OrderingKind::Amd,
        },
        LinearSolverKind::Pcg(common::pcg(1e-11)),
    ];
    let undamped = Rayleigh {
        alpha: 0.0,
        beta: 0.0,
    };
    let damped = Rayleigh {
        alpha: 0.5,
        beta: 0.002,
    };
    let variants = [
        (MassKind::Lumped, undamped),
        (MassKind::Lumped, damped),
        (MassKind::Consistent, undamped),
    ];
    for field in FIELDS {
        for solver in &solvers {
            for (mass, damping) in variants {
                let run = |tangent: WarpedTangent| {
                    let mut desc = common::bar(
                        [8, 2, 2],
                        0.1,
                        TetSplit::Five,
                        warped_kind(field, false),
                        true,
                    );
                    desc.mass = mass;
                    desc.damping = damping;
                    let mut w = common::world_with(desc, 9.81, 0.01, *solver);
                    let b = &mut w.bodies[0];
                    let model = Warped::new(b.lame, field, false, &b.mesh, &b.elems);
                    b.model = Box::new(model.with_tangent(tangent));
                    let mut factorized = 0;
                    for _ in 0..40 {
                        w.step().unwrap();
                        let stats = &w.last_stats()[0];
                        assert!(stats.solver_converged);
                        factorized += usize::from(stats.factorized);
                    }
                    // Far from small rotations: the frames matter.
                    let b = &w.bodies[0];
                    let tip = b.x.len() - 1;
                    let drop = b.mesh.positions[tip].y - b.x[tip].y;
                    assert!(
                        drop > 0.1,
                        "{field:?} {solver:?} {mass:?}: tip drop {drop} m"
                    );
                    (b.x.clone(), factorized)
                };
                let (frames, frames_factorized) = run(WarpedTangent::Rotated);
                let (world_axes, world_factorized) = run(WarpedTangent::Element);
                let (diff, scale) = largest_difference(&frames, &world_axes);
                let case = format!("{field:?} {solver:?} {mass:?} {damping:?}");
                println!("{case}: max |Δx| {diff:.2e} m, factorizations {frames_factorized} / {world_factorized}");
                assert!(diff < 1e-9 * scale, "{case}: {diff:e}");
                if matches!(solver, LinearSolverKind::Cholesky { .. }) {
                    let in_frames = mass == MassKind::Lumped;
                    assert_eq!(frames_factorized, if in_frames { 1 } else { 40 }, "{case}");
                    assert_eq!(world_factorized, 40, "{case}");
                }
            }
        }
    }
}

/// Newton's backward Euler solves in the frames too: the bar of the test above, 20 steps at
/// a Newton tolerance of 1e-10 by Cholesky, takes the steps of the `Element` tangent (the
/// same Jacobian assembled in world axes) with one factorization for the whole run instead
/// of at least one per step.
#[test]
fn newton_solves_in_vertex_frames_too() {
    for field in FIELDS {
        let run = |tangent: WarpedTangent| {
            let desc = common::bar(
                [8, 2, 2],
                0.1,
                TetSplit::Five,
                warped_kind(field, false),
                true,
            );
            let body = Body::new(desc).expect("valid body");
            let integrator = common::newton_cholesky(1e-10);
            let mut w = World::new(vec![body], Vector3::new(0.0, -9.81, 0.0), 0.01, integrator)
                .expect("valid world");
            let b = &mut w.bodies[0];
            let model = Warped::new(b.lame, field, false, &b.mesh, &b.elems);
            b.model = Box::new(model.with_tangent(tangent));
            let (mut factorized, mut newton_iterations) = (0, 0);
            for _ in 0..20 {
                w.step().unwrap();
                let stats = &w.last_stats()[0];
                assert!(!stats.solve_failed(), "{field:?} {tangent:?}: {stats:?}");
                factorized += usize::from(stats.factorized);
                newton_iterations += stats.newton_iterations;
            }
            (w.bodies[0].x.clone(), factorized, newton_iterations)
        };
        let (frames, frames_factorized, frames_its) = run(WarpedTangent::Rotated);
        let (world_axes, world_factorized, world_its) = run(WarpedTangent::Element);
        let (diff, scale) = largest_difference(&frames, &world_axes);
        println!(
            "{field:?}: max |Δx| {diff:.2e} m, Newton iterations {frames_its} / {world_its}, \
             steps that factorized {frames_factorized} / {world_factorized}"
        );
        assert!(diff < 1e-8 * scale, "{field:?}: {diff:e}");
        assert_eq!(frames_factorized, 1, "{field:?}");
        assert_eq!(world_factorized, 20, "{field:?}");
    }
}
