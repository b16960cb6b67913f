//! Müller et al. 2002 §4.1, Fig. 6: a 4×4×11-vertex bar clamped at one end sags under
//! gravity. Linear elasticity inflates it; the corotational model keeps its volume.

mod common;

use supple::fem::material::{CorotationalTangent, ModelKind};
use supple::mesh::TetSplit;
use supple::world::World;

fn bar_world(model: ModelKind, youngs: f64, cells: [usize; 3]) -> World {
    let mut desc = common::bar(cells, 1.0 / cells[0] as f64, TetSplit::Five, model, true);
    desc.youngs = youngs;
    common::world(desc, 9.81, 0.01, common::pcg(1e-8))
}

/// Runs 3 s and returns (max |V/V0 − 1|, final tip height drop).
fn run(model: ModelKind, youngs: f64) -> (f64, f64) {
    let mut w = bar_world(model, youngs, [10, 3, 3]);
    let v0 = w.bodies[0].mesh.volume();
    let tip = 4 * 4 * 11 - 1;
    let y0 = w.bodies[0].x[tip].y;
    let mut max_rel = 0.0f64;
    for _ in 0..300 {
        w.step().unwrap();
        assert!(w.last_stats()[0].solver_converged);
        max_rel = max_rel.max((w.bodies[0].volume() / v0 - 1.0).abs());
    }
    (max_rel, y0 - w.bodies[0].x[tip].y)
}

const COROTATIONAL: ModelKind = ModelKind::corotational(CorotationalTangent::Rotated);

/// The bundled scene's material (E = 1e5 Pa). This bar is so soft that the fibres at the
/// clamp reach ±50–100 % strain while it swings: a compressible (ν = 0.33) material then
/// changes volume *physically* (second order in the strain), so the corotational bar does
/// lose a few percent (4.96 % measured), not Fig. 6's < 1 %. What the test shows is the
/// ratio: the linear bar's largest volume change (7.88, it inflates to 8.9×) is 159× the
/// corotational one's; asserted ≥ 50×.
#[test]
fn bundled_bar_corotational_changes_volume_at_least_50x_less_than_linear() {
    let (lin, lin_drop) = run(ModelKind::Linear, 1e5);
    let (cor, cor_drop) = run(COROTATIONAL, 1e5);
    let ratio = lin / cor;
    println!("E=1e5 linear: max volume change {lin:.4}, final tip drop {lin_drop:.3} m");
    println!("E=1e5 corotational: max volume change {cor:.4}, final tip drop {cor_drop:.3} m");
    println!("E=1e5 linear / corotational max volume change: {ratio:.1}");
    assert!(lin > 0.05, "linear volume change {lin}");
    assert!(ratio >= 50.0, "linear / corotational volume change {ratio}");
    // Both sag visibly.
    assert!(lin_drop > 0.3 && cor_drop > 0.3, "{lin_drop} {cor_drop}");
}

/// Müller Fig. 6 in the regime it describes (large rotations, small strains): a bar ten
/// times stiffer sags with ~0.2 rad at the tip; linear grows > 5 %, corotational < 1 %.
#[test]
fn stiffer_bar_reproduces_mueller_fig6_volume_claim() {
    let (lin, _) = run(ModelKind::Linear, 1e6);
    let (cor, _) = run(COROTATIONAL, 1e6);
    println!("E=1e6 linear: {lin:.4}, corotational: {cor:.4}");
    assert!(lin > 0.05, "linear volume change {lin}");
    assert!(cor < 0.01, "corotational volume change {cor}");
}

#[test]
fn results_do_not_depend_on_the_thread_count() {
    let run_with = |threads: usize| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                // Large enough (20k tets, 5k vertices) for the parallel paths to run.
                let mut w = bar_world(COROTATIONAL, 1e5, [40, 10, 10]);
                for _ in 0..5 {
                    w.step().unwrap();
                }
                w.bodies[0].x.clone()
            })
    };
    let (a, b) = (run_with(1), run_with(2));
    assert!(a.iter().zip(&b).all(|(p, q)| p
        .iter()
        .zip(q.iter())
        .all(|(s, t)| s.to_bits() == t.to_bits())));
}
