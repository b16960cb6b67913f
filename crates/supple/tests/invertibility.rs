//! Liesenfeld & Stolfi 1997 §4.1: their energy "tends to infinity as the volume approaches
//! zero", so "the elastic forces ... will automatically prevent the tetrahedra from collapsing
//! and turning inside out, even under extreme forces". A soft cube (E = 1e4 Pa, ν = 0.3,
//! ρ = 1000 kg/m³, 10 cm, 4×4×4 cells of 5 tets) with its bottom clamped is crushed by a
//! gravity of 1000 m/s²: under the linear model its elements go to zero volume and beyond;
//! under Liesenfeld–Stolfi none does.

use supple::body::{Body, BodyDesc};
use supple::fem::material::ModelKind;
use supple::mesh::{box_grid, BoxGrid, TetSplit};
use supple::nalgebra::Vector3;
use supple::time::{IntegratorKind, LinearSolverKind, WarmStart};
use supple::world::World;

mod common;

const GRAVITY: f64 = 1000.0;
/// Linearized backward Euler takes one linear step from the forces and tangent at the start
/// of the step, so nothing stops it from jumping an element across `J = 0` within a step.
/// Under this load the Liesenfeld–Stolfi cube survives at dt = 1 ms and explodes at 2 ms
/// and above (an element jumps across zero volume, and its `J⁻⁵` stress then throws it
/// apart); 0.5 ms leaves a factor of two of margin.
const DT: f64 = 5e-4;
const STEPS: usize = 800;

fn cube(model: ModelKind) -> World {
    let h = 0.025;
    let mesh = box_grid(&BoxGrid {
        cells: [4, 4, 4],
        cell_size: Vector3::repeat(h),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    });
    let desc = BodyDesc::new("cube", mesh, model, 1e4, 0.3, 1000.0)
        .with_fixed_where(|p| p.y <= 1e-9 * h)
        .with_damping(20.0, 0.0);
    let integrator = IntegratorKind::BackwardEulerLinearized {
        solver: LinearSolverKind::Pcg(common::pcg(1e-10)),
        warm_start: WarmStart::Extrapolate,
    };
    let body = Body::new(desc).expect("valid cube");
    World::new(vec![body], Vector3::new(0.0, -GRAVITY, 0.0), DT, integrator).expect("valid world")
}

/// What a run did: the smallest volume ratio over all steps and elements, the step at which
/// some element first reached volume ≤ 0, the error that stopped it, the final height, and
/// the final elastic energy, and whether every linear solve converged.
#[derive(Debug)]
struct Run {
    min_ratio: f64,
    first_inverted: Option<usize>,
    diverged: Option<String>,
    final_height: f64,
    final_energy: Option<f64>,
    all_converged: bool,
}

fn run(model: ModelKind) -> Run {
    let mut w = cube(model);
    let mut out = Run {
        min_ratio: f64::INFINITY,
        first_inverted: None,
        diverged: None,
        final_height: 0.0,
        final_energy: None,
        all_converged: true,
    };
    for step in 1..=STEPS {
        if let Err(e) = w.step() {
            out.diverged = Some(e.to_string());
            break;
        }
        out.all_converged &= w.last_stats()[0].solver_converged;
        let ratio = w.bodies[0].min_volume_ratio();
        out.min_ratio = out.min_ratio.min(ratio);
        if ratio <= 0.0 && out.first_inverted.is_none() {
            out.first_inverted = Some(step);
        }
    }
    out.final_height = w.bodies[0].bounding_box().1.y;
    out.final_energy = w.bodies[0].elastic_energy();
    out
}

#[test]
fn liesenfeld_stolfi_elements_never_reach_zero_volume() {
    let ls = run(ModelKind::LiesenfeldStolfi);
    let lin = run(ModelKind::Linear);
    let cor = run(common::COROTATIONAL);
    let svd = run(ModelKind::Corotational(
        supple::fem::material::CorotationalSettings {
            rotation: supple::fem::material::RotationMethod::Svd,
            ..Default::default()
        },
    ));
    for (name, r) in [
        ("liesenfeld_stolfi", &ls),
        ("linear", &lin),
        ("corotational", &cor),
        ("corotational_svd", &svd),
    ] {
        eprintln!(
            "{name}: min volume ratio {:.4}, first step with volume <= 0: {:?}, \
             diverged: {:?}, final height {:.4} m (rest 0.1), all solves converged: {}",
            r.min_ratio, r.first_inverted, r.diverged, r.final_height, r.all_converged
        );
    }
    assert!(ls.diverged.is_none(), "{:?}", ls.diverged);
    assert!(ls.first_inverted.is_none() && ls.min_ratio > 0.0, "{ls:?}");
    assert!(ls.min_ratio.is_finite() && ls.final_height.is_finite());
    assert!(ls.final_energy.is_some_and(f64::is_finite), "{ls:?}");
    // The load is extreme: the linear model crushes elements to zero volume and beyond.
    assert!(
        lin.diverged.is_some() || lin.first_inverted.is_some(),
        "the load does not crush the linear cube: {lin:?}"
    );
    // And it is not a mild load for Liesenfeld–Stolfi either: the cube loses height.
    assert!(ls.final_height < 0.09, "{ls:?}");
}
