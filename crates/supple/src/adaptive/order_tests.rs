//! Tests of tool refinement's order under a predictive budget ([`ToolOrder`]) and of the
//! batched element forces of the variational step.

use super::tests::{hierarchy, poke_tool};
use super::*;
use nalgebra::Vector3;

fn poke(order: ToolOrder, budget: Budget) -> AdaptiveBody {
    let settings = AdaptiveSettings {
        split_threshold: 0.15,
        merge_threshold: 0.04,
        tool_order: order,
        budget,
        ..AdaptiveSettings::default()
    };
    AdaptiveBody::new(hierarchy(&[2, 4, 8], true, true), settings).unwrap()
}

const ORDERS: [ToolOrder; 3] = [ToolOrder::Criterion, ToolOrder::Distance, ToolOrder::Graded];

#[test]
fn tool_order_does_not_change_an_unbudgeted_run() {
    // Without a budget every reached node splits whatever the order, and a split reads only
    // coarser values, so the runs are the same bit for bit.
    let mut bodies: Vec<AdaptiveBody> = ORDERS.iter().map(|&o| poke(o, Budget::None)).collect();
    let mut splits = 0;
    for f in 0..40 {
        let tool = poke_tool(f);
        let stats: Vec<FrameStats> = bodies
            .iter_mut()
            .map(|b| b.step_frame(Some(&tool)).unwrap())
            .collect();
        splits += stats[0].splits;
        for (b, s) in bodies[1..].iter().zip(&stats[1..]) {
            assert_eq!(s.active_per_level, stats[0].active_per_level, "frame {f}");
            for (l, l0) in b.levels.iter().zip(&bodies[0].levels) {
                assert_eq!(l.status, l0.status, "frame {f}");
                assert_eq!(l.d, l0.d, "frame {f}");
            }
        }
    }
    assert!(splits > 0);
}

/// Mean distance of the finest level's active nodes from the tool's first contact point,
/// after the first frame of contact, and the most node updates of any frame over 60 frames.
fn finest_distance(order: ToolOrder, budget: u64) -> (f64, u64, usize) {
    let mut body = poke(
        order,
        Budget::Predictive {
            node_updates_per_frame: budget,
        },
    );
    let contact = Vector3::new(0.5, 0.5, 1.0);
    let mut mean = None;
    let mut most = 0;
    for f in 0..60 {
        let stats = body.step_frame(Some(&poke_tool(f))).unwrap();
        most = most
            .max(stats.node_updates)
            .max(body.node_updates_per_frame());
        if mean.is_none() && stats.splits > 0 {
            let (level, st) = (&body.hierarchy.levels[2], &body.levels[2]);
            let sum: f64 = st
                .active
                .iter()
                .map(|&i| (level.mesh.positions[i as usize] - contact).norm())
                .sum();
            mean = Some((sum / st.active.len() as f64, st.active.len()));
        }
    }
    let (mean, count) = mean.expect("a split");
    (mean, most, count)
}

#[test]
fn nearest_first_spends_a_short_budget_next_to_the_tool_and_never_exceeds_it() {
    let budget = 3_000;
    let (criterion, most_c, n_c) = finest_distance(ToolOrder::Criterion, budget);
    let (distance, most_d, n_d) = finest_distance(ToolOrder::Distance, budget);
    let (_, most_g, _) = finest_distance(ToolOrder::Graded, budget);
    assert!(most_c.max(most_d).max(most_g) <= budget);
    assert!(n_c > 0 && n_d > 0, "the budget paid for some finest nodes");
    assert!(
        distance < criterion,
        "nearest first: finest nodes at {distance} m from the contact on average, \
         eq. 9 first: {criterion} m"
    );
}

#[test]
fn batched_element_forces_equal_the_per_element_ones_bit_for_bit() {
    // The adaptive step evaluates runs of tets with `element_forces_batch`; the Debunne
    // operator's lane-wise kernel must give exactly `element_forces` (a run whose length is
    // not a multiple of the lane count, both boundary variants, damped).
    let mesh = generate::jittered_box(
        2,
        Vector3::zeros(),
        1.0,
        crate::mesh::TetSplit::Five,
        0.15,
        7,
    )
    .unwrap();
    let elems = crate::fem::ElementSet::new(&mesh);
    let tets: Vec<u32> = (0..mesh.tets.len() as u32).rev().step_by(3).collect();
    assert!(!tets.len().is_multiple_of(4) && tets.len() > 8);
    let wave = |q: usize, k: usize, s: f64| {
        let x = (q * 4 + k) as f64;
        Vector3::new((x * s).sin(), (x * 1.3 * s).cos(), (x * 0.7 + s).sin()) * 1e-2
    };
    let d: Vec<[Vector3<f64>; 4]> = (0..tets.len())
        .map(|q| std::array::from_fn(|k| wave(q, k, 0.9)))
        .collect();
    let v: Vec<[Vector3<f64>; 4]> = (0..tets.len())
        .map(|q| std::array::from_fn(|k| wave(q, k, 2.1)))
        .collect();
    for boundary in [Boundary::Paper, Boundary::Fe] {
        let p = DebunneParams {
            phi: 20.0,
            psi: 50.0,
            boundary,
            ..DebunneParams::new(4.0e4, 1.0e5)
        };
        let op = DebunneOperator::new(p, &mesh, &elems).unwrap();
        let mut f = vec![[Vector3::zeros(); 4]; tets.len()];
        op.element_forces_batch(&tets, &d, &v, &mut f);
        for (q, &e) in tets.iter().enumerate() {
            let one = op.element_forces(e as usize, &d[q], &v[q]);
            assert_eq!(f[q], one, "{boundary:?}, tet {e}");
            assert!(one.iter().any(|x| x.norm() > 0.0));
        }
    }
}
