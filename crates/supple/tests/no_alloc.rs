//! A time step allocates nothing: every workspace is sized when the world is built.
//! Counted with a global allocator that tallies the allocations of each thread. The steps run
//! in a one-thread pool, so every parallel loop (still driven through rayon) runs on the
//! counted thread; the pool's own bookkeeping on other threads is rayon's, not ours.

use supple::fem::material::{CorotationalSettings, CorotationalTangent, ModelKind};
use supple::fem::MassKind;
use supple::linalg::{PcgSettings, Preconditioner};
use supple::mesh::TetSplit;
use supple::world::World;

/// Allocations of this thread during 3 steps, after one step that may warm up the pool
/// (and, for a direct solver, make its first factorization).
fn allocations_in_steps(w: &mut supple::world::World) -> usize {
    w.step().unwrap();
    let before = common::allocations();
    for _ in 0..3 {
        w.step().unwrap();
    }
    common::allocations() - before
}

mod common;

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

fn world(
    cells: [usize; 3],
    model: ModelKind,
    mass: MassKind,
    preconditioner: Preconditioner,
) -> World {
    let desc = common::bar(cells, 1.0 / cells[0] as f64, TetSplit::Five, model, true)
        .with_mass(mass)
        .with_damping(0.1, 0.01);
    let pcg = PcgSettings {
        tolerance: 1e-6,
        max_iterations: 500,
        preconditioner,
    };
    common::world(desc, 9.81, 0.01, pcg)
}

#[test]
fn world_step_does_not_allocate() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    pool.install(|| {
        let cases = [
            (
                [10, 3, 3],
                ModelKind::corotational(CorotationalTangent::Rotated),
                MassKind::Lumped,
            ),
            ([10, 3, 3], ModelKind::Linear, MassKind::Consistent),
            (
                [10, 3, 3],
                ModelKind::corotational(CorotationalTangent::Rotated),
                MassKind::Consistent,
            ),
            (
                [10, 3, 3],
                ModelKind::corotational(CorotationalTangent::Exact),
                MassKind::Lumped,
            ),
            // Large enough for the parallel element and vector paths.
            (
                [80, 20, 20],
                ModelKind::corotational(CorotationalTangent::Rotated),
                MassKind::Lumped,
            ),
            // Rotations kept for two steps of three: the steps keep the matrix.
            (
                [10, 3, 3],
                ModelKind::Corotational(CorotationalSettings {
                    update_every: 3,
                    ..CorotationalSettings::default()
                }),
                MassKind::Lumped,
            ),
        ];
        for ((cells, model, mass), preconditioner) in cases.into_iter().zip([
            Preconditioner::BlockJacobi,
            Preconditioner::BlockJacobi,
            Preconditioner::BlockSsor,
            Preconditioner::BlockJacobi,
            Preconditioner::BlockJacobi,
            Preconditioner::BlockSsor,
        ]) {
            let n = allocations_in_steps(&mut world(cells, model, mass, preconditioner));
            assert_eq!(
                n, 0,
                "{cells:?} {model:?} {mass:?} {preconditioner:?}: {n} allocations in 3 steps"
            );
        }
    });
}

/// The adaptive warm start (the default) keeps its velocity history in place: no allocation
/// in its steps, counted after 8 steps (its ring of 7 past velocities full).
#[test]
fn adaptive_warm_start_does_not_allocate() {
    use supple::body::Body;
    use supple::nalgebra::Vector3;
    use supple::time::{IntegratorKind, LinearSolverKind, WarmStart};
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    pool.install(|| {
        let desc = common::bar(
            [10, 3, 3],
            0.1,
            TetSplit::Five,
            ModelKind::corotational(CorotationalTangent::Rotated),
            true,
        );
        let integrator = IntegratorKind::BackwardEulerLinearized {
            solver: LinearSolverKind::Pcg(common::pcg(1e-6)),
            warm_start: WarmStart::Adaptive,
        };
        let body = Body::new(desc).unwrap();
        let mut w =
            World::new(vec![body], Vector3::new(0.0, -9.81, 0.0), 0.01, integrator).unwrap();
        for _ in 0..8 {
            w.step().unwrap();
        }
        let n = allocations_in_steps(&mut w);
        assert_eq!(n, 0, "adaptive warm start: {n} allocations in 3 steps");
    });
}

#[test]
fn cholesky_step_does_not_allocate() {
    use supple::linalg::{LinearSolverKind, OrderingKind};
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    pool.install(|| {
        // The linear model keeps its factor (solve only); the corotational one refactors every
        // step (numeric factorization and solve).
        let cases = [
            (ModelKind::Linear, MassKind::Consistent, OrderingKind::Nd),
            (
                ModelKind::corotational(CorotationalTangent::Rotated),
                MassKind::Lumped,
                OrderingKind::Amd,
            ),
        ];
        for (model, mass, ordering) in cases {
            let desc = common::bar([10, 3, 3], 0.1, TetSplit::Five, model, true)
                .with_mass(mass)
                .with_damping(0.1, 0.01);
            let solver = LinearSolverKind::Cholesky { ordering };
            let n = allocations_in_steps(&mut common::world_with(desc, 9.81, 0.01, solver));
            assert_eq!(
                n, 0,
                "{model:?} {mass:?} {ordering:?}: {n} allocations in 3 steps"
            );
        }
    });
}

/// The explicit integrators and the other models (hyperelastic laws, hybrid, viscosity) step
/// without allocating either; the step ladder after its levels' first factorizations.
#[test]
fn explicit_integrators_and_every_model_do_not_allocate() {
    use supple::body::Body;
    use supple::fem::material::ViscosityKind;
    use supple::linalg::OrderingKind;
    use supple::nalgebra::Vector3;
    use supple::time::IntegratorKind;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    pool.install(|| {
        let integrators = [
            IntegratorKind::SymplecticEuler { substeps: 0 },
            IntegratorKind::Newmark {
                levels: 2,
                ordering: OrderingKind::Amd,
            },
            IntegratorKind::Rkf45 {
                rtol: 1e-5,
                atol: 1e-7,
                substeps: 0,
            },
        ];
        for integrator in integrators {
            for mass in [MassKind::Lumped, MassKind::Consistent] {
                let desc = common::bar([6, 2, 2], 0.1, TetSplit::Five, ModelKind::Stvk, true)
                    .with_mass(mass)
                    .with_damping(0.1, 0.001);
                let body = Body::new(desc).unwrap();
                let mut w =
                    World::new(vec![body], Vector3::new(0.0, -9.81, 0.0), 0.002, integrator)
                        .unwrap();
                // Two warm-up steps: the ladder may factor a level on first use.
                w.step().unwrap();
                let n = allocations_in_steps(&mut w);
                assert_eq!(n, 0, "{integrator:?} {mass:?}: {n} allocations in 3 steps");
            }
        }
        for model in [ModelKind::Hybrid, ModelKind::LiesenfeldStolfi] {
            for viscosity in [
                ViscosityKind::StrainRate {
                    d_mu: 1.0,
                    d_lambda: 1.0,
                },
                ViscosityKind::LiesenfeldStolfi {
                    eta1: 1.0,
                    eta2: 1.0,
                },
            ] {
                let desc = common::bar([6, 2, 2], 0.1, TetSplit::Five, model, true)
                    .with_viscosity(viscosity);
                let mut w = common::world(desc, 9.81, 0.005, common::pcg(1e-6));
                let n = allocations_in_steps(&mut w);
                assert_eq!(n, 0, "{model:?} {viscosity:?}: {n} allocations in 3 steps");
            }
        }
    });
}

/// Issue 18: the multicolour SSOR, the multigrid and the Eisenstat-SSOR preconditioners
/// allocate nothing per step once the hierarchy is built (a rebuild is setup and allocates, so
/// the steps counted here must not have rebuilt it: asserted through the `amg_builds` counter).
#[test]
fn multigrid_and_multicolor_steps_do_not_allocate() {
    let builds = |w: &World| -> f64 {
        w.integrator_counters()
            .iter()
            .flat_map(|(_, c)| c.iter())
            .filter(|(k, _)| k == "amg_builds")
            .map(|(_, v)| v)
            .sum()
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    pool.install(|| {
        let corot = ModelKind::corotational(CorotationalTangent::Rotated);
        for (cells, preconditioner) in [
            ([12, 3, 3], Preconditioner::MulticolorSsor),
            ([12, 4, 4], Preconditioner::Amg),
            ([12, 3, 3], Preconditioner::EisenstatSsor),
            // Large enough for the parallel sweeps, products and vector paths.
            ([80, 20, 20], Preconditioner::MulticolorSsor),
            ([40, 10, 10], Preconditioner::Amg),
            ([80, 20, 20], Preconditioner::EisenstatSsor),
            // The default: `auto`'s trial, then its choice, allocate nothing per step.
            ([80, 20, 20], Preconditioner::Auto),
        ] {
            let mut w = world(cells, corot, MassKind::Lumped, preconditioner);
            w.step().unwrap();
            let built = builds(&w);
            let n = allocations_in_steps(&mut w);
            assert_eq!(builds(&w), built, "{cells:?} {preconditioner:?}: rebuilt");
            assert_eq!(
                n, 0,
                "{cells:?} {preconditioner:?}: {n} allocations in 3 steps"
            );
        }
    });
}

/// Two bodies joined by an exact link and stepped by RKF45 as one linked group (stages
/// evaluated together, one acceleration projection per stage across both, Liesenfeld &
/// Stolfi eq. 8) allocate nothing per step once the projection's scratch is sized.
#[test]
fn a_linked_rkf45_group_does_not_allocate() {
    use supple::body::Body;
    use supple::constraint::{ExactConstraint, ExactKind};
    use supple::nalgebra::Vector3;
    use supple::time::IntegratorKind;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    pool.install(|| {
        let clamped = common::bar([4, 2, 2], 0.05, TetSplit::Five, ModelKind::Linear, true);
        let mut free = common::bar([4, 2, 2], 0.05, TetSplit::Five, ModelKind::Linear, false);
        free.name = "free".into();
        free.mesh.positions.iter_mut().for_each(|p| p.x += 0.2);
        let bodies = vec![Body::new(clamped).unwrap(), Body::new(free).unwrap()];
        let rkf45 = IntegratorKind::Rkf45 {
            rtol: 1e-4,
            atol: 1e-7,
            substeps: 0,
        };
        let mut w = World::new(bodies, Vector3::new(0.0, 0.0, -9.81), 0.005, rkf45).unwrap();
        let joint = Vector3::new(0.2, 0.05, 0.05);
        let a = w.material_point(0, joint).unwrap();
        let b = w.material_point(1, joint).unwrap();
        w.constrain(ExactConstraint {
            point: a,
            kind: ExactKind::Link { other: b },
            release: None,
        })
        .unwrap();
        let n = allocations_in_steps(&mut w);
        assert_eq!(n, 0, "{n} allocations in 3 steps");
        assert!(w.constraint_residual() <= 1e-8);
    });
}

/// `fast_corotated` (Kugelstadt et al. 2018): once its matrix is factored (the first step),
/// its steps — rotations, right-hand sides, back-substitutions, volume sweeps — allocate
/// nothing; on the 450-tet bar and on a 20k-tet one (the parallel element loops).
#[test]
fn fast_corotated_steps_do_not_allocate() {
    use supple::fem::material::FastCorotatedSettings;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    pool.install(|| {
        for cells in [[10, 3, 3], [40, 10, 10]] {
            let model = ModelKind::FastCorotated(FastCorotatedSettings {
                iterations: 2,
                volume_sweeps: 2,
            });
            let desc = common::bar(cells, 1.0 / cells[0] as f64, TetSplit::Five, model, true);
            let mut w = common::world(desc, 9.81, 0.01, common::pcg(1e-6));
            let n = allocations_in_steps(&mut w);
            assert_eq!(n, 0, "{cells:?}: {n} allocations in 3 steps");
        }
    });
}
