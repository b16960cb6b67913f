//! A step of the hierarchical body (coarse Newton, frame update, fine PCG) allocates nothing
//! once its workspaces exist: both readings, backward Euler and BDF3, with and without the two-level preconditioner, over
//! steps with and
//! without a frame update. One-thread pool, as in `no_alloc.rs`.

mod common;

use supple::body::BodyDesc;
use supple::constraint::ConstraintDesc;
use supple::fem::material::ModelKind;
use supple::hierarchical::{HierarchicalBody, HierarchySettings, Reading, Scheme};
use supple::load::{LoadDesc, LoadKind, TimeFunction};
use supple::mesh::{boundary_faces, box_grid, BoxGrid, TetSplit};
use supple::nalgebra::Vector3;

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

fn bar(reading: Reading, scheme: Scheme, coarse_correction: bool) -> HierarchicalBody {
    let mesh = box_grid(&BoxGrid {
        cells: [1, 1, 3],
        cell_size: Vector3::repeat(0.05),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    });
    let base: Vec<u32> = (0..mesh.n_vertices() as u32)
        .filter(|&v| mesh.positions[v as usize].z < 1e-9)
        .collect();
    let top: Vec<[u32; 3]> = boundary_faces(&mesh.tets)
        .into_iter()
        .filter(|f| {
            f.iter()
                .all(|&v| mesh.positions[v as usize].z > 0.15 - 1e-9)
        })
        .collect();
    let mut desc = BodyDesc::new("bar", mesh, ModelKind::Stvk, 2.6e3, 0.3, 1000.0);
    desc.constraints.push(ConstraintDesc::fixed("base", base));
    desc.loads.push(LoadDesc {
        name: "shear".into(),
        kind: LoadKind::Traction {
            faces: top,
            traction: Vector3::new(20.0, 0.0, 0.0),
        },
        time: TimeFunction::Ramp { t0: 0.0, t1: 1.0 },
    });
    let settings = HierarchySettings {
        reading,
        scheme,
        update_every: 3,
        coarse_correction,
        ..HierarchySettings::default()
    };
    HierarchicalBody::new(desc, settings).unwrap()
}

#[test]
fn hierarchical_steps_do_not_allocate_after_warm_up() {
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    pool.install(|| {
        for reading in [Reading::Detail, Reading::Full] {
            for (scheme, two_level) in [
                (Scheme::BackwardEuler, false),
                (Scheme::Bdf { order: 3 }, false),
                (Scheme::BackwardEuler, true),
            ] {
                let mut body = bar(reading, scheme, two_level);
                let g = Vector3::new(0.0, 0.0, -9.81);
                for _ in 0..4 {
                    body.step(0.03, &g).unwrap();
                }
                let before = common::allocations();
                for _ in 0..6 {
                    body.step(0.03, &g).unwrap();
                }
                let n = common::allocations() - before;
                assert_eq!(
                    n, 0,
                    "{reading:?}/{scheme:?}/two-level {two_level}: {n} allocations in 6 steps"
                );
            }
        }
    });
}
