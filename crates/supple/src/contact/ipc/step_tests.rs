//! Tests of the coupled step's Jacobian (`step.rs`).
use super::*;
use crate::body::BodyDesc;
use crate::fem::material::ModelKind;
use crate::mesh::{box_grid, BoxGrid, TetSplit};

fn cube(name: &str, origin: Vector3<f64>, v: Vector3<f64>) -> Body {
    let mesh = box_grid(&BoxGrid {
        cells: [2, 2, 2],
        cell_size: Vector3::repeat(0.05),
        origin,
        split: TetSplit::Five,
    });
    Body::new(BodyDesc {
        velocity: v,
        ..BodyDesc::new(name, mesh, ModelKind::Linear, 1e5, 0.3, 1000.0)
    })
    .unwrap()
}

/// The coupled Jacobian against central differences of the residual, with the cubes
/// 0.2 d̂ apart face to face (every active pair in its face or parallel-edge case, where
/// the projected Hessian is the exact one) and a random velocity.
#[test]
fn the_coupled_jacobian_is_the_derivative_of_the_residual() {
    let gap = 1e-4;
    let mut bodies = vec![
        cube("a", Vector3::zeros(), Vector3::zeros()),
        cube("b", Vector3::new(0.1 + gap, 0.013, 0.007), Vector3::zeros()),
    ];
    let settings = IpcSettings {
        dhat: Some(5.0 * gap),
        kappa: Some(1e5),
        ..IpcSettings::default()
    };
    let pairing = Pairing {
        self_collision: false,
        body_collision: true,
    };
    let mut step = IpcStep::new(&bodies, settings, pairing, BroadPhaseKind::BruteForce);
    step.set.hessian = super::super::potential::BarrierHessian::Exact;
    let inputs: Vec<BodyInputs> = bodies
        .iter()
        .map(|b| BodyInputs::new(b.n_vertices()))
        .collect();
    let obstacles = Obstacles {
        list: &[],
        time: 0.0,
        start: 0.0,
    };
    let (h, g) = (0.01, Vector3::new(0.0, -9.81, 0.0));
    let n = step.mesh.n_vertices();
    step.mesh.gather(&bodies, &mut step.x0);
    let mut seed = 7u64;
    let mut rnd = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % 2001) as f64 / 1000.0 - 1.0
    };
    for i in 0..n {
        step.u[i] = 1e-3 * Vector3::new(rnd(), rnd(), rnd());
    }
    let dir: Vec<Vector3<f64>> = (0..n).map(|_| Vector3::new(rnd(), rnd(), rnd())).collect();
    let eval = |step: &mut IpcStep, bodies: &mut [Body], u: &[Vector3<f64>]| {
        step.u.copy_from_slice(u);
        step.positions(h);
        step.set.update(&step.mesh, &step.x, &obstacles).unwrap();
        step.eval(bodies, &inputs, h, &g, &obstacles, 0.0, true);
        step.g.clone()
    };
    let u0 = step.u.clone();
    eval(&mut step, &mut bodies, &u0);
    assert!(step.set.pairs.len() > 10, "{} pairs", step.set.pairs.len());
    step.assemble(&bodies, &inputs, h, &obstacles);
    let mut jd = vec![Vector3::zeros(); n];
    step.a.mul_vec(&dir, &mut jd);
    let eps = 1e-8;
    let plus: Vec<_> = u0.iter().zip(&dir).map(|(u, d)| u + eps * d).collect();
    let minus: Vec<_> = u0.iter().zip(&dir).map(|(u, d)| u - eps * d).collect();
    let (gp, gm) = (
        eval(&mut step, &mut bodies, &plus),
        eval(&mut step, &mut bodies, &minus),
    );
    // g = −r, so J d = −(g(u + εd) − g(u − εd)) / 2ε.
    let (mut err, mut scale) = (0.0f64, 0.0f64);
    for i in 0..n {
        let fd = -(gp[i] - gm[i]) / (2.0 * eps);
        err = err.max((fd - jd[i]).norm());
        scale = scale.max(jd[i].norm());
    }
    assert!(
        err < 1e-5 * scale,
        "‖J d − FD‖∞ = {err:e}, ‖J d‖∞ = {scale:e}"
    );
}
