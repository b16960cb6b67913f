//! Dragged vertices (issue 14): vertices moved along keyframed paths (linear or Catmull–Rom)
//! and released, as hard constraints in every integrator: the path is followed exactly at
//! every step, and after the release the vertices are free.

use supple::body::{Body, BodyDesc};
use supple::constraint::{ConstraintDesc, Interpolation, Keyframes, Motion};
use supple::fem::material::{CorotationalTangent, ModelKind};
use supple::linalg::{LinearSolverKind, OrderingKind, PcgSettings};
use supple::load::TimeFunction;
use supple::mesh::{box_grid, BoxGrid, TetSplit};
use supple::nalgebra::Vector3;
use supple::time::{IntegratorKind, NewtonSettings, WarmStart};
use supple::world::World;

const COROT: ModelKind = ModelKind::corotational(CorotationalTangent::Rotated);

fn integrators() -> Vec<(&'static str, IntegratorKind)> {
    let pcg = LinearSolverKind::Pcg(PcgSettings {
        tolerance: 1e-10,
        ..PcgSettings::default()
    });
    let newton = NewtonSettings {
        tolerance: 1e-8,
        solver: pcg,
        ..NewtonSettings::default()
    };
    vec![
        (
            "backward_euler_linearized",
            IntegratorKind::BackwardEulerLinearized {
                solver: pcg,
                warm_start: WarmStart::Extrapolate,
            },
        ),
        ("backward_euler", IntegratorKind::BackwardEuler { newton }),
        ("bdf2", IntegratorKind::Bdf { order: 2, newton }),
        ("bdf3", IntegratorKind::Bdf { order: 3, newton }),
        (
            "newmark",
            IntegratorKind::Newmark {
                levels: 8,
                ordering: OrderingKind::Amd,
            },
        ),
        (
            "rkf45",
            IntegratorKind::Rkf45 {
                rtol: 1e-6,
                atol: 1e-9,
                substeps: 0,
            },
        ),
        (
            "symplectic_euler",
            IntegratorKind::SymplecticEuler { substeps: 0 },
        ),
    ]
}

#[test]
fn a_dragged_end_follows_its_spline_exactly_in_every_integrator_and_is_free_after_release() {
    let mesh = box_grid(&BoxGrid {
        cells: [4, 1, 1],
        cell_size: Vector3::repeat(0.05),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    });
    let select = |f: &dyn Fn(&Vector3<f64>) -> bool| -> Vec<u32> {
        (0..mesh.n_vertices() as u32)
            .filter(|&i| f(&mesh.positions[i as usize]))
            .collect()
    };
    let clamp = select(&|p| p.x < 1e-9);
    let end = select(&|p| p.x > 0.2 - 1e-9);
    let path = Keyframes::new(
        vec![
            (0.0, Vector3::zeros()),
            (0.04, Vector3::new(0.0, 0.01, 0.0)),
            (0.08, Vector3::new(0.005, 0.015, -0.005)),
            (0.1, Vector3::new(0.005, 0.02, 0.0)),
        ],
        Interpolation::CatmullRom,
    )
    .unwrap();
    let dt = 0.005;
    for (name, kind) in integrators() {
        let mut desc = BodyDesc::new("bar", mesh.clone(), COROT, 1e5, 0.3, 1000.0);
        desc.constraints = vec![
            ConstraintDesc::fixed("clamp", clamp.clone()),
            ConstraintDesc {
                motion: Motion::Spline(path.clone()),
                time: TimeFunction::One,
                release: Some(0.1),
                ..ConstraintDesc::fixed("drag", end.clone())
            },
        ];
        let body = Body::new(desc).unwrap();
        let mut w = World::new(vec![body], Vector3::zeros(), dt, kind).unwrap();
        for step in 1..=20 {
            w.step().unwrap_or_else(|e| panic!("{name}: {e}"));
            let t = step as f64 * dt;
            let d = path.at(t);
            for &i in &end {
                let i = i as usize;
                let want = w.bodies[0].mesh.positions[i] + d;
                let off = (w.bodies[0].x[i] - want).norm();
                assert!(
                    off < 1e-12,
                    "{name}: vertex {i} is {off:e} off its path at t = {t}"
                );
            }
        }
        // Released after t = 0.1: the end is free and springs back towards the bar's rest
        // shape (the path would hold it at d(0.1)).
        for _ in 0..10 {
            w.step().unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        let b = &w.bodies[0];
        assert!(end.iter().all(|&i| !b.fixed[i as usize]), "{name}");
        let i = end[0] as usize;
        let left = (b.x[i] - b.mesh.positions[i] - path.at(0.1)).norm();
        assert!(
            left > 1e-4,
            "{name}: the released end stayed on its path ({left:e} m off)"
        );
        assert!(b.check_state().is_none(), "{name}: {:?}", b.check_state());
        eprintln!("{name}: released end {left:.3e} m off its last path point 0.05 s later");
    }
}
