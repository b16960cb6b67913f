//! Linearized backward Euler: first-order convergence in time, exact momentum balance.

mod common;

use supple::fem::material::{CorotationalTangent, ModelKind};
use supple::fem::MassKind;
use supple::mesh::TetSplit;
use supple::nalgebra::Vector3;
use supple::world::World;

fn small_world(model: ModelKind, dt: f64, clamp: bool, g: f64) -> World {
    let mut desc =
        common::bar([4, 1, 1], 0.1, TetSplit::Six, model, clamp).with_mass(MassKind::Consistent);
    desc.poisson = 0.3;
    common::world(desc, g, dt, common::pcg(1e-13))
}

fn positions_at(model: ModelKind, t_end: f64, dt: f64) -> Vec<Vector3<f64>> {
    let mut w = small_world(model, dt, true, 9.81);
    let steps = (t_end / dt).round() as usize;
    for _ in 0..steps {
        w.step().unwrap();
    }
    w.bodies[0].x.clone()
}

fn error(a: &[Vector3<f64>], b: &[Vector3<f64>]) -> f64 {
    a.iter()
        .zip(b)
        .map(|(p, q)| (p - q).norm_squared())
        .sum::<f64>()
        .sqrt()
}

#[test]
fn converges_with_order_one() {
    for model in [
        ModelKind::Linear,
        ModelKind::corotational(CorotationalTangent::Rotated),
    ] {
        let t_end = 0.08;
        let reference = positions_at(model, t_end, 0.01 / 256.0);
        let errors: Vec<f64> = [0.01, 0.005, 0.0025, 0.00125]
            .iter()
            .map(|&dt| error(&positions_at(model, t_end, dt), &reference))
            .collect();
        let orders: Vec<f64> = errors.windows(2).map(|e| (e[0] / e[1]).log2()).collect();
        println!("{model:?}: errors {errors:?}, orders {orders:?}");
        let last = orders[orders.len() - 1];
        assert!(
            (last - 1.0).abs() <= 0.3,
            "{model:?}: measured order {last} ({orders:?})"
        );
    }
}

#[test]
fn free_body_keeps_its_linear_momentum() {
    let mut w = small_world(common::COROTATIONAL, 0.01, false, 0.0);
    // A spinning, translating, stretching initial velocity field.
    let b = &mut w.bodies[0];
    for (v, x) in b.v.iter_mut().zip(&b.mesh.positions) {
        *v = Vector3::new(0.5, -0.2, 0.1)
            + Vector3::new(0.0, 0.0, 3.0).cross(&(x - Vector3::new(0.2, 0.05, 0.05)))
            + 0.4 * Vector3::new(x.x, 0.0, 0.0);
    }
    let p0 = w.bodies[0].momentum();
    for _ in 0..100 {
        w.step().unwrap();
    }
    let p1 = w.bodies[0].momentum();
    assert!((p1 - p0).norm() <= 1e-9 * p0.norm(), "{p0} -> {p1}");
}
