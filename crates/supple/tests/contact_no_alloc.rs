//! A step with contact allocates nothing once its workspaces have grown to the scene's
//! contact load: two boxes resting on each other and on the ground, with both broad phases,
//! both narrow phases and both responses, and with the energy-limited contact step. One-thread pool, as in `no_alloc.rs`.

mod common;

use supple::body::{Body, BodyDesc};
use supple::contact::{BroadPhaseKind, ContactSettings, NarrowPhase, Obstacle, Response};
use supple::fem::material::{CorotationalTangent, ModelKind};
use supple::mesh::{box_grid, BoxGrid, TetSplit};
use supple::nalgebra::Vector3;
use supple::time::{IntegratorKind, LinearSolverKind, WarmStart};
use supple::world::World;

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

fn stacked(settings: ContactSettings) -> World {
    let cube = |name: &str, origin: Vector3<f64>| {
        let mesh = box_grid(&BoxGrid {
            cells: [4, 2, 2],
            cell_size: Vector3::repeat(0.05),
            origin,
            split: TetSplit::Five,
        });
        let model = ModelKind::corotational(CorotationalTangent::Rotated);
        Body::new(BodyDesc::new(name, mesh, model, 1e5, 0.3, 1000.0)).unwrap()
    };
    let bodies = vec![
        cube("lower", Vector3::zeros()),
        cube("upper", Vector3::new(0.02, 0.1005, 0.01)),
    ];
    let integrator = IntegratorKind::BackwardEulerLinearized {
        solver: LinearSolverKind::Pcg(common::pcg(1e-6)),
        warm_start: WarmStart::Extrapolate,
    };
    World::new(bodies, Vector3::new(0.0, -9.81, 0.0), 0.005, integrator)
        .unwrap()
        .with_contact(ContactSettings {
            obstacles: vec![
                Obstacle::plane("ground", Vector3::zeros(), Vector3::y(), 0.5).unwrap(),
            ],
            ..settings
        })
        .unwrap()
}

#[test]
fn contact_steps_do_not_allocate_after_warm_up() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    pool.install(|| {
        for (broad, narrow, response) in [
            (
                BroadPhaseKind::Bvh,
                NarrowPhase::Exact,
                Response::Projection,
            ),
            (
                BroadPhaseKind::SweepAndPrune,
                NarrowPhase::Exact,
                Response::Projection,
            ),
            (
                BroadPhaseKind::Bvh,
                NarrowPhase::Hermite,
                Response::Projection,
            ),
            (
                BroadPhaseKind::Bvh,
                NarrowPhase::Exact,
                Response::Springs { stiffness: None },
            ),
            (
                BroadPhaseKind::Bvh,
                NarrowPhase::Exact,
                Response::Ipc(supple::contact::ipc::IpcSettings::default()),
            ),
        ] {
            let mut w = stacked(ContactSettings {
                broad_phase: broad,
                narrow_phase: narrow,
                response,
                friction: 0.3,
                ..ContactSettings::default()
            });
            // Fall and settle: the workspaces grow to the contact load.
            for _ in 0..60 {
                w.step().unwrap();
            }
            let before = common::allocations();
            for _ in 0..3 {
                w.step().unwrap();
            }
            let n = common::allocations() - before;
            let contacts = match w.ipc() {
                Some(ipc) => ipc.last.pairs,
                None => w.contact_stats().unwrap().contacts,
            };
            assert!(
                contacts > 0,
                "{broad:?}/{narrow:?}/{response:?}: no contact at rest"
            );
            assert_eq!(
                n, 0,
                "{broad:?}/{narrow:?}/{response:?}: {n} allocations in 3 steps"
            );
        }
    });
}
