//! Hauth & Straßer's update rate (§7.2) in the implicit steps: a corotational body whose
//! rotations are refreshed every `update_every` steps keeps its tangent `R K_e Rᵀ` between
//! refreshes, and the integrators keep the assembled matrix with its factor or
//! preconditioner through those steps (`ForceModel::tangent_version`).

mod common;

use supple::body::Body;
use supple::fem::material::{
    build_model, CorotationalSettings, CorotationalTangent, ForceModel, ModelKind, RotationMethod,
};
use supple::fem::ElementSet;
use supple::linalg::ordering::OrderingKind;
use supple::linalg::BlockCsr;
use supple::mesh::TetSplit;
use supple::nalgebra::{Matrix3, Vector3};
use supple::time::{IntegratorKind, LinearSolverKind};
use supple::world::World;

/// The model it wraps, except that it never promises a kept tangent (`tangent_version` is
/// `None`): the integrators assemble (and factorize) at every step, as before the versions.
#[derive(Debug)]
struct Reassembled(Box<dyn ForceModel>);

impl ForceModel for Reassembled {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn update_frames(&mut self, elems: &ElementSet, x: &[Vector3<f64>]) {
        self.0.update_frames(elems, x)
    }
    fn begin_step(&mut self) {
        self.0.begin_step()
    }
    fn add_forces(&self, elems: &ElementSet, x: &[Vector3<f64>], f: &mut [Vector3<f64>]) {
        self.0.add_forces(elems, x, f)
    }
    fn add_tangent(&self, elems: &ElementSet, x: &[Vector3<f64>], scale: f64, k: &mut BlockCsr) {
        self.0.add_tangent(elems, x, scale, k)
    }
    fn energy(&self, elems: &ElementSet, x: &[Vector3<f64>]) -> Option<f64> {
        self.0.energy(elems, x)
    }
    fn cauchy_stress(
        &self,
        elems: &ElementSet,
        x: &[Vector3<f64>],
        out: &mut [Matrix3<f64>],
    ) -> bool {
        self.0.cauchy_stress(elems, x, out)
    }
}

const STEPS: usize = 30;
const EVERY: u32 = 3;

fn corotational(rotation: RotationMethod) -> ModelKind {
    ModelKind::Corotational(CorotationalSettings {
        tangent: CorotationalTangent::Exact,
        rotation,
        update_every: EVERY,
    })
}

/// A clamped bar swinging down 0.1 m+ under gravity, `STEPS` steps of 10 ms; the final
/// positions and the steps that factorized.
fn swing(
    integrator: IntegratorKind,
    model: ModelKind,
    reassembled: bool,
) -> (Vec<Vector3<f64>>, usize) {
    let desc = common::bar([8, 2, 2], 0.1, TetSplit::Five, model, true);
    let body = Body::new(desc).expect("valid bar");
    let mut w = World::new(vec![body], Vector3::new(0.0, -9.81, 0.0), 0.01, integrator)
        .expect("valid world");
    if reassembled {
        let b = &mut w.bodies[0];
        let model = build_model(model, b.lame, &b.mesh, &b.elems);
        b.model = Box::new(Reassembled(model));
    }
    let mut factorized = 0;
    for _ in 0..STEPS {
        w.step().unwrap();
        let stats = &w.last_stats()[0];
        assert!(!stats.solve_failed(), "{stats:?}");
        factorized += usize::from(stats.factorized);
    }
    let b = &w.bodies[0];
    let tip = b.x.len() - 1;
    let drop = b.mesh.positions[tip].y - b.x[tip].y;
    assert!(drop > 0.1, "tip drop {drop} m");
    (b.x.clone(), factorized)
}

/// Steps that refresh the rotations with `update_every = 3` over `STEPS` steps: 1, 4, 7, ...
fn refreshing_steps() -> usize {
    STEPS.div_ceil(EVERY as usize)
}

/// The linearized backward Euler step keeps the matrix between refreshes: bitwise the steps
/// of assembling it every step, with one factorization per refresh instead of one per
/// step (Cholesky), and by PCG with the kept preconditioner. Polar and QR rotations (the
/// `Exact` tangent requested falls back to `R K Rᵀ` with kept frames).
#[test]
fn the_linearized_step_keeps_the_matrix_between_refreshes() {
    let solvers = [
        LinearSolverKind::Cholesky {
            ordering: OrderingKind::Amd,
        },
        LinearSolverKind::Pcg(common::pcg(1e-10)),
    ];
    for rotation in [RotationMethod::Polar, RotationMethod::Qr] {
        for solver in solvers {
            let integrator = IntegratorKind::BackwardEulerLinearized {
                solver,
                warm_start: Default::default(),
            };
            let model = corotational(rotation);
            let (kept, kept_factorized) = swing(integrator, model, false);
            let (every, every_factorized) = swing(integrator, model, true);
            let case = format!("{rotation:?} {solver:?}");
            assert!(kept == every, "{case}: the kept matrix changed the steps");
            if matches!(solver, LinearSolverKind::Cholesky { .. }) {
                assert_eq!(kept_factorized, refreshing_steps(), "{case}");
                assert_eq!(every_factorized, STEPS, "{case}");
            }
        }
    }
}

/// Newton's backward Euler keeps the Jacobian `M + h² R K Rᵀ` through the iterations of a
/// step and through the steps that keep the frames. A refreshing step refreshes the
/// rotations at every Newton iterate, the last of them after its last assembly: the step
/// after it assembles once for those rotations, and the third step keeps that matrix.
#[test]
fn newton_keeps_the_jacobian_between_refreshes() {
    let integrator = common::newton_cholesky(1e-10);
    let model = corotational(RotationMethod::Polar);
    let (kept, kept_factorized) = swing(integrator, model, false);
    let (every, every_factorized) = swing(integrator, model, true);
    assert!(kept == every, "the kept Jacobian changed the steps");
    let keeping_steps = (0..STEPS).filter(|s| s % EVERY as usize == 2).count();
    assert_eq!(kept_factorized, STEPS - keeping_steps);
    assert_eq!(every_factorized, STEPS);
}

/// With the default update rate (every step) nothing is kept: the version changes at every
/// refresh, so each step assembles and factorizes.
#[test]
fn refreshing_every_step_assembles_every_step() {
    let integrator = IntegratorKind::BackwardEulerLinearized {
        solver: LinearSolverKind::Cholesky {
            ordering: OrderingKind::Amd,
        },
        warm_start: Default::default(),
    };
    let model = ModelKind::corotational(CorotationalTangent::Rotated);
    let (_, factorized) = swing(integrator, model, false);
    assert_eq!(factorized, STEPS);
}
