//! Identities of Debunne's operator (eq. 1–7) against P1 linear finite elements.
#![allow(clippy::needless_range_loop)] // index loops mirror the formulas

use super::generate::jittered_box;
use super::*;
use crate::fem::material::{ForceModel, Lame, Linear};
use crate::fem::ElementSet;
use crate::linalg::BlockCsr;
use crate::mesh::{TetMesh, TetSplit};
use nalgebra::{DMatrix, Matrix3, SymmetricEigen, Vector3};

const LAMBDA: f64 = 4.0e4;
const MU: f64 = 1.0e5;

fn mesh(cells: usize, split: TetSplit) -> TetMesh {
    jittered_box(cells, Vector3::zeros(), 1.0, split, 0.15, 7).unwrap()
}

fn op(mesh: &TetMesh, elems: &ElementSet, boundary: Boundary) -> DebunneOperator {
    let p = DebunneParams {
        boundary,
        ..DebunneParams::new(LAMBDA, MU)
    };
    DebunneOperator::new(p, mesh, elems).unwrap()
}

fn stiffness(model: &dyn ForceModel, mesh: &TetMesh, elems: &ElementSet) -> BlockCsr {
    let mut k = BlockCsr::zeros(elems.pattern.clone());
    model.add_tangent(elems, &mesh.positions, 1.0, &mut k);
    k
}

fn is_interior(p: &Vector3<f64>) -> bool {
    p.iter().all(|&c| c > 1e-9 && c < 1.0 - 1e-9)
}

/// Pseudo-random displacements of size ~1e-3.
fn displacements(n: usize) -> Vec<Vector3<f64>> {
    (0..n)
        .map(|i| {
            let s = i as f64;
            1e-3 * Vector3::new(
                (1.3 * s).sin(),
                (2.1 * s + 0.4).cos(),
                (0.7 * s + 1.1).sin(),
            )
        })
        .collect()
}

#[test]
fn fe_boundary_is_p1_linear_fe_everywhere_and_paper_on_interior_pairs() {
    for split in [TetSplit::Five, TetSplit::Six] {
        let m = mesh(3, split);
        let elems = ElementSet::new(&m);
        let linear = Linear::new(Lame {
            mu: MU,
            lambda: LAMBDA,
        });
        let k_fe_lib = stiffness(&linear, &m, &elems);
        let k_fe = stiffness(&op(&m, &elems, Boundary::Fe), &m, &elems);
        let k_paper = stiffness(&op(&m, &elems, Boundary::Paper), &m, &elems);
        let scale = k_fe_lib.values.iter().map(|b| b.norm()).fold(0.0, f64::max);
        let (mut boundary_pairs_differ, mut interior_pairs) = (0, 0);
        let n = m.n_vertices();
        for i in 0..n {
            for j in 0..n {
                let Some(_) = k_fe_lib.pattern.slot(i, j) else {
                    continue;
                };
                let lib = k_fe_lib.block(i, j);
                assert!(
                    (k_fe.block(i, j) - lib).norm() <= 1e-12 * scale,
                    "fe ({i},{j})"
                );
                let d = (k_paper.block(i, j) - lib).norm();
                if is_interior(&m.positions[i]) || is_interior(&m.positions[j]) {
                    interior_pairs += 1;
                    assert!(d <= 1e-12 * scale, "paper ({i},{j}): {d:e}");
                } else if d > 1e-6 * scale {
                    boundary_pairs_differ += 1;
                }
            }
        }
        assert!(interior_pairs > 100);
        // The skipped terms do matter between boundary nodes.
        assert!(boundary_pairs_differ > 20, "{boundary_pairs_differ}");
    }
}

fn zero_modes(k: &BlockCsr) -> usize {
    let dense: DMatrix<f64> = k.to_dense();
    assert!(
        (&dense - dense.transpose()).norm() <= 1e-9 * dense.norm(),
        "K symmetric"
    );
    let eig = SymmetricEigen::new(dense);
    let max = eig.eigenvalues.amax();
    eig.eigenvalues
        .iter()
        .filter(|&&l| l.abs() < 1e-9 * max)
        .count()
}

#[test]
fn free_body_has_six_zero_modes_with_fe_and_three_with_paper() {
    let m = mesh(2, TetSplit::Five);
    let elems = ElementSet::new(&m);
    assert_eq!(
        zero_modes(&stiffness(&op(&m, &elems, Boundary::Fe), &m, &elems)),
        6
    );
    assert_eq!(
        zero_modes(&stiffness(&op(&m, &elems, Boundary::Paper), &m, &elems)),
        3
    );
}

fn forces(
    model: &dyn ForceModel,
    m: &TetMesh,
    elems: &ElementSet,
    d: &[Vector3<f64>],
) -> Vec<Vector3<f64>> {
    let x: Vec<_> = m.positions.iter().zip(d).map(|(p, u)| p + u).collect();
    let mut f = vec![Vector3::zeros(); m.n_vertices()];
    model.add_forces(elems, &x, &mut f);
    f
}

#[test]
fn fe_forces_are_torque_free_and_paper_forces_are_not() {
    let m = mesh(3, TetSplit::Five);
    let elems = ElementSet::new(&m);
    let d = displacements(m.n_vertices());
    for (boundary, torque_free) in [(Boundary::Fe, true), (Boundary::Paper, false)] {
        let f = forces(&op(&m, &elems, boundary), &m, &elems, &d);
        let net: Vector3<f64> = f.iter().sum();
        let torque: Vector3<f64> = m.positions.iter().zip(&f).map(|(x, f)| x.cross(f)).sum();
        let scale: f64 = f.iter().map(|f| f.norm()).sum();
        assert!(net.norm() <= 1e-12 * scale, "{boundary:?}: net force {net}");
        if torque_free {
            assert!(
                torque.norm() <= 1e-12 * scale,
                "fe torque {}",
                torque.norm() / scale
            );
        } else {
            assert!(
                torque.norm() >= 1e-3 * scale,
                "paper torque {}",
                torque.norm() / scale
            );
        }
    }
}

#[test]
fn forces_are_minus_the_energy_gradient_by_finite_differences() {
    let m = mesh(2, TetSplit::Six);
    let elems = ElementSet::new(&m);
    let d = displacements(m.n_vertices());
    for boundary in [Boundary::Paper, Boundary::Fe] {
        let model = op(&m, &elems, boundary);
        let f = forces(&model, &m, &elems, &d);
        let energy = |d: &[Vector3<f64>]| {
            let x: Vec<_> = m.positions.iter().zip(d).map(|(p, u)| p + u).collect();
            model.energy(&elems, &x).unwrap()
        };
        let h = 1e-7;
        let fmax = f.iter().map(|f| f.amax()).fold(0.0, f64::max);
        for i in (0..m.n_vertices()).step_by(5) {
            for a in 0..3 {
                let (mut dp, mut dm) = (d.clone(), d.clone());
                dp[i][a] += h;
                dm[i][a] -= h;
                let fd = -(energy(&dp) - energy(&dm)) / (2.0 * h);
                assert!(
                    (fd - f[i][a]).abs() <= 1e-6 * fmax,
                    "{boundary:?} {i} {a}: {fd} vs {}",
                    f[i][a]
                );
            }
        }
    }
}

#[test]
fn element_forces_match_blocks_and_damping_uses_the_same_operator_on_velocities() {
    let m = mesh(2, TetSplit::Five);
    let elems = ElementSet::new(&m);
    for boundary in [Boundary::Paper, Boundary::Fe] {
        let p = DebunneParams {
            phi: 3.0,
            psi: 5.0,
            boundary,
            ..DebunneParams::new(LAMBDA, MU)
        };
        let damped = DebunneOperator::new(p, &m, &elems).unwrap();
        let undamped_for_v = DebunneOperator::new(
            DebunneParams {
                boundary,
                ..DebunneParams::new(3.0, 5.0)
            },
            &m,
            &elems,
        )
        .unwrap();
        let d = displacements(4);
        let v: Vec<Vector3<f64>> = displacements(9)[5..].to_vec();
        for e in 0..elems.len() {
            let de = [d[0], d[1], d[2], d[3]];
            let vv = [v[0], v[1], v[2], v[3]];
            let f = damped.element_forces(e, &de, &vv);
            for i in 0..4 {
                let mut expect = Vector3::zeros();
                for j in 0..4 {
                    expect -= damped.block(e, i, j) * d[j] + undamped_for_v.block(e, i, j) * vv[j];
                }
                assert!((f[i] - expect).norm() <= 1e-9 * expect.norm().max(1e-6));
            }
            // A rigid translation velocity is not damped (eq. 7: "rigid motions will not be
            // damped").
            let fv = damped.element_forces(
                e,
                &[Vector3::zeros(); 4],
                &[Vector3::new(1.0, -2.0, 0.5); 4],
            );
            assert!(fv.iter().all(|f| f.norm() < 1e-9));
        }
    }
}

#[test]
fn paper_damping_damps_a_rigid_rotation_and_fe_does_not() {
    let m = mesh(2, TetSplit::Five);
    let elems = ElementSet::new(&m);
    let omega = Vector3::new(0.3, -0.5, 1.0);
    let v: Vec<Vector3<f64>> = m.positions.iter().map(|x| omega.cross(x)).collect();
    for (boundary, damps) in [(Boundary::Fe, false), (Boundary::Paper, true)] {
        let p = DebunneParams {
            boundary,
            ..DebunneParams::new(1.0, 1.0)
        };
        let model = DebunneOperator::new(p, &m, &elems).unwrap();
        let mut f = vec![Vector3::zeros(); m.n_vertices()];
        for (e, t) in m.tets.iter().enumerate() {
            let ve = t.map(|i| v[i as usize]);
            // The elastic pair (1, 1) on velocities is the damping operator with φ = ψ = 1.
            let fe = model.element_forces(e, &ve, &[Vector3::zeros(); 4]);
            for k in 0..4 {
                f[t[k] as usize] += fe[k];
            }
        }
        let size: f64 = f.iter().map(|f| f.norm()).sum::<f64>();
        assert_eq!(size > 1e-6, damps, "{boundary:?}: {size:e}");
    }
}

#[test]
fn printed_reading_is_navier_with_lambda_and_mu_exchanged() {
    let m = mesh(2, TetSplit::Six);
    let elems = ElementSet::new(&m);
    let printed = DebunneOperator::new(
        DebunneParams {
            reading: LameReading::Printed,
            ..DebunneParams::new(LAMBDA, MU)
        },
        &m,
        &elems,
    )
    .unwrap();
    let swapped = DebunneOperator::new(DebunneParams::new(MU, LAMBDA), &m, &elems).unwrap();
    for e in 0..elems.len() {
        for (i, j) in [(0, 0), (0, 3), (2, 1)] {
            assert_eq!(printed.block(e, i, j), swapped.block(e, i, j));
        }
        // Printed: λ on the Laplacian: the diagonal part of an off-diagonal block is
        // `λ V α_i·α_j`.
        let b = printed.block(e, 0, 1);
        let lap = LAMBDA * elems.volume[e] * elems.grad[e][0].dot(&elems.grad[e][1]);
        let gd = (LAMBDA + MU) * elems.volume[e] * elems.grad[e][0] * elems.grad[e][1].transpose();
        assert!((b - (Matrix3::from_diagonal_element(lap) + gd)).norm() <= 1e-9 * b.norm());
    }
}

#[test]
fn a_linear_displacement_field_leaves_interior_nodes_unloaded() {
    // The patch test: eq. 5–6 are exact for linear fields at interior nodes, whichever
    // boundary treatment.
    let m = mesh(3, TetSplit::Five);
    let elems = ElementSet::new(&m);
    let g = Matrix3::new(0.01, 0.002, -0.003, 0.004, -0.02, 0.001, 0.0, 0.005, 0.015);
    let d: Vec<_> = m.positions.iter().map(|x| g * x).collect();
    for boundary in [Boundary::Paper, Boundary::Fe] {
        let f = forces(&op(&m, &elems, boundary), &m, &elems, &d);
        let fmax = f.iter().map(|f| f.norm()).fold(0.0, f64::max);
        for (i, x) in m.positions.iter().enumerate() {
            if is_interior(x) {
                assert!(f[i].norm() <= 1e-10 * fmax, "{boundary:?} node {i}");
            }
        }
    }
}

#[test]
fn bad_parameters_are_errors() {
    let m = mesh(1, TetSplit::Six);
    let elems = ElementSet::new(&m);
    let bad = DebunneParams::new(-1.0, MU);
    assert!(DebunneOperator::new(bad, &m, &elems).is_err());
    let zero_shear = DebunneParams::new(LAMBDA, 0.0);
    assert!(DebunneOperator::new(zero_shear, &m, &elems).is_err());
    let nan = DebunneParams {
        phi: f64::NAN,
        ..DebunneParams::new(LAMBDA, MU)
    };
    assert!(DebunneOperator::new(nan, &m, &elems).is_err());
}

#[test]
fn a_hyperelastic_law_plugs_in_on_displacements() {
    // `LawElements` builds `F = I + Σ d_a α_aᵀ` from displacements alone: its forces are minus
    // the gradient of its energy (central differences), vanish under a rigid translation and
    // match the Debunne `fe` operator (= P1 linear FE) for small displacements, where
    // St.Venant–Kirchhoff linearises to it.
    use crate::fem::material::StVenantKirchhoff;
    let m = mesh(2, TetSplit::Six);
    let elems = ElementSet::new(&m);
    let lame = Lame {
        lambda: LAMBDA,
        mu: MU,
    };
    let law = LawElements::new(StVenantKirchhoff::new(lame), &elems, LAMBDA, MU);
    let fe_op = op(&m, &elems, Boundary::Fe);
    let zero = [Vector3::zeros(); 4];
    let d = displacements(4);
    let d = [d[0], d[1], d[2], d[3]];
    for e in 0..elems.len() {
        let f = law.element_forces(e, &d, &zero);
        for a in 0..4 {
            for c in 0..3 {
                let h = 1e-7;
                let (mut p, mut q) = (d, d);
                p[a][c] += h;
                q[a][c] -= h;
                let fd = -(law.element_energy(e, &p).unwrap() - law.element_energy(e, &q).unwrap())
                    / (2.0 * h);
                assert!(
                    (fd - f[a][c]).abs() <= 1e-5 * f[a].norm().max(1.0),
                    "{e} {a} {c}"
                );
            }
        }
        let t = law.element_forces(e, &[Vector3::new(0.3, -0.1, 2.0); 4], &zero);
        assert!(t.iter().all(|f| f.norm() < 1e-6), "{e}: {t:?}");
        let small = d.map(|x| 1e-4 * x);
        let (fl, fo) = (
            law.element_forces(e, &small, &zero),
            fe_op.element_forces(e, &small, &zero),
        );
        for a in 0..4 {
            assert!(
                (fl[a] - fo[a]).norm() <= 1e-3 * fo[a].norm().max(1e-12),
                "{e} {a}"
            );
        }
    }
}
