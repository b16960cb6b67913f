//! The force-model checks of the spring network (as for every model: `test_support`), for the
//! Hookean, linearized and warped laws.

use super::*;
use crate::fem::material::test_support::{
    deform, energy, force_vs_energy_error, forces, lame, small_mesh, tangent_vs_force_error, Lcg,
};
use nalgebra::Rotation3;

const WARPED: [SpringForce; 4] = [
    SpringForce::Warped {
        field: RotationField::LeastSquares,
        ghost_correction: true,
    },
    SpringForce::Warped {
        field: RotationField::LeastSquares,
        ghost_correction: false,
    },
    SpringForce::Warped {
        field: RotationField::EdgeFrame,
        ghost_correction: true,
    },
    SpringForce::Warped {
        field: RotationField::EdgeFrame,
        ghost_correction: false,
    },
];

fn all_laws() -> impl Iterator<Item = SpringForce> {
    [SpringForce::Hookean, SpringForce::Linear]
        .into_iter()
        .chain(WARPED)
}

fn norm(f: &[Vector3<f64>]) -> f64 {
    f.iter().map(|v| v.norm_squared()).sum::<f64>().sqrt()
}

/// Net force and torque about the centroid, relative to `Σ|f|` and `Σ|x − c||f|`.
fn net(x: &[Vector3<f64>], f: &[Vector3<f64>]) -> (f64, f64) {
    let c = x.iter().sum::<Vector3<f64>>() / x.len() as f64;
    let total: Vector3<f64> = f.iter().sum();
    let torque: Vector3<f64> = x.iter().zip(f).map(|(p, fi)| (p - c).cross(fi)).sum();
    let scale: f64 = f.iter().map(|v| v.norm()).sum();
    let tscale: f64 = x
        .iter()
        .zip(f)
        .map(|(p, fi)| (p - c).norm() * fi.norm())
        .sum();
    (total.norm() / scale, torque.norm() / tscale)
}

#[test]
fn stiffness_is_youngs_times_edge_volume_over_length_squared() {
    // One tet: every edge has the tet's volume, so k = E V / L².
    let x = vec![
        Vector3::zeros(),
        Vector3::new(0.2, 0.0, 0.0),
        Vector3::new(0.0, 0.1, 0.0),
        Vector3::new(0.0, 0.0, 0.3),
    ];
    let m = TetMesh::new(x.clone(), vec![[0, 1, 2, 3]]).unwrap();
    let es = ElementSet::new(&m);
    let net = SpringNetwork::new(1e5, &m, &es);
    let v = 0.2 * 0.1 * 0.3 / 6.0;
    let s = es.pattern.slot(1, 3).unwrap();
    let l2 = 0.2f64.powi(2) + 0.3f64.powi(2);
    assert!((net.stiffness[s] - 1e5 * v / l2).abs() < 1e-9 * net.stiffness[s]);
    assert!((net.rest_length[s] - l2.sqrt()).abs() < 1e-15);
    let e = youngs_of(lame());
    assert!((e - 1e5).abs() < 1e-6, "{e}");
}

/// Under a uniform dilatation by `ε` the network stores `3 E V ε²` on any mesh: the bulk
/// modulus `2E/3` of the material of Young's modulus `E` and `ν = ¼` (the module's
/// derivation of the constant).
#[test]
fn uniform_dilatation_stores_the_bulk_energy_of_poisson_one_quarter() {
    let mut rng = Lcg(41);
    let m = small_mesh(&mut rng);
    let es = ElementSet::new(&m);
    let volume: f64 = es.volume.iter().sum();
    let youngs = youngs_of(lame());
    for eps in [1e-3, -2e-3] {
        let x: Vec<_> = m.positions.iter().map(|p| (1.0 + eps) * p).collect();
        for law in [SpringForce::Hookean, SpringForce::Linear] {
            let mut model = build(law, lame(), &m, &es);
            let e = energy(model.as_mut(), &es, &x);
            let expected = 3.0 * youngs * volume * eps * eps;
            assert!(
                (e - expected).abs() <= 1e-9 * expected,
                "{law:?}: {e} vs {expected}"
            );
        }
    }
}

#[test]
fn forces_match_the_energy_and_the_tangent_matches_the_forces() {
    let mut rng = Lcg(43);
    let m = small_mesh(&mut rng);
    let es = ElementSet::new(&m);
    for law in [SpringForce::Hookean, SpringForce::Linear] {
        let mut model = build(law, lame(), &m, &es);
        for _ in 0..3 {
            let x = deform(&m, &mut rng);
            let e1 = force_vs_energy_error(model.as_mut(), &es, &x);
            let e2 = tangent_vs_force_error(model.as_mut(), &es, &x);
            assert!(e1 <= 1e-6, "{law:?}: force vs energy {e1:e}");
            assert!(e2 <= 1e-6, "{law:?}: tangent vs force {e2:e}");
        }
    }
}

/// The warped network has no energy (Müller's eq. 12 rows each use their own rotation) and a
/// tangent exact at rest and under rigid motions, approximate elsewhere (as the warped FEM).
#[test]
fn warped_tangent_is_exact_at_rest_and_under_rigid_motion() {
    let mut rng = Lcg(45);
    let m = small_mesh(&mut rng);
    let es = ElementSet::new(&m);
    let q = Rotation3::from_euler_angles(0.4, -0.9, 1.7).into_inner();
    let moved: Vec<_> = m
        .positions
        .iter()
        .map(|p| q * p + Vector3::new(0.3, 0.0, -1.0))
        .collect();
    for law in WARPED {
        let mut model = build(law, lame(), &m, &es);
        assert_eq!(model.name(), "mass_spring");
        for x in [&m.positions, &moved] {
            let err = tangent_vs_force_error(model.as_mut(), &es, x);
            assert!(err <= 1e-6, "{law:?}: {err:e}");
        }
        let x = deform(&m, &mut rng);
        let err = tangent_vs_force_error(model.as_mut(), &es, &x);
        assert!(err > 1e-5 && err < 0.5, "{law:?}: {err:e}");
        assert!(model.energy(&es, &x).is_none());
    }
}

/// All three laws agree at rest: the Hookean tangent there is `K⁰`, the linear and the warped
/// one's constant stiffness.
#[test]
fn the_three_tangents_agree_at_rest() {
    let mut rng = Lcg(47);
    let m = small_mesh(&mut rng);
    let es = ElementSet::new(&m);
    let tangent = |law| {
        let mut model = build(law, lame(), &m, &es);
        model.update_frames(&es, &m.positions);
        let mut k = BlockCsr::zeros(es.pattern.clone());
        model.add_tangent(&es, &m.positions, 1.0, &mut k);
        k.to_dense()
    };
    let reference = tangent(SpringForce::Hookean);
    let scale = reference.norm();
    for law in all_laws() {
        let diff = (tangent(law) - &reference).norm();
        assert!(diff <= 1e-12 * scale, "{law:?}: {diff:e}");
    }
    // Rigid modes only in the null space: a tet mesh's edge network is rigid.
    let eig = reference.symmetric_eigenvalues();
    let zero = eig.iter().filter(|&&l| l.abs() <= 1e-9 * scale).count();
    assert_eq!(zero, 6, "{eig}");
}

/// Patch-like test: the rest state, and any translation of it, gives zero force for every law.
#[test]
fn rest_state_gives_zero_force() {
    let mut rng = Lcg(49);
    let m = small_mesh(&mut rng);
    let es = ElementSet::new(&m);
    let stretch: Vec<_> = m.positions.iter().map(|p| p * 1.01).collect();
    let shifted: Vec<_> = m
        .positions
        .iter()
        .map(|p| p + Vector3::new(2.0, -1.0, 0.5))
        .collect();
    for law in all_laws() {
        let mut model = build(law, lame(), &m, &es);
        let scale = norm(&forces(model.as_mut(), &es, &stretch));
        for x in [&m.positions, &shifted] {
            let f = norm(&forces(model.as_mut(), &es, x));
            assert!(f <= 1e-10 * scale, "{law:?}: {f:e} vs {scale:e}");
        }
    }
}

/// Hookean and warped springs feel no rigid rotation; the linearized network does (it grows a
/// rotated body, as linear FEM does: the artefact warping removes).
#[test]
fn rotation_invariance_of_hookean_and_warped_springs_only() {
    let mut rng = Lcg(51);
    let m = small_mesh(&mut rng);
    let es = ElementSet::new(&m);
    let stretch: Vec<_> = m.positions.iter().map(|p| p * 1.01).collect();
    let q = Rotation3::from_euler_angles(0.3, 1.0, -2.6).into_inner();
    let x: Vec<_> = m
        .positions
        .iter()
        .map(|p| q * p + Vector3::new(1.0, 2.0, -3.0))
        .collect();
    let y = deform(&m, &mut rng);
    let qy: Vec<_> = y.iter().map(|p| q * p).collect();
    for law in all_laws() {
        let mut model = build(law, lame(), &m, &es);
        let scale = norm(&forces(model.as_mut(), &es, &stretch));
        let f = norm(&forces(model.as_mut(), &es, &x));
        if law == SpringForce::Linear {
            assert!(f >= 10.0 * scale, "{law:?}: {f:e} vs {scale:e}");
            continue;
        }
        assert!(f <= 1e-9 * scale, "{law:?}: {f:e} vs {scale:e}");
        // A deformed state's forces turn with it.
        let (fy, fqy) = (
            forces(model.as_mut(), &es, &y),
            forces(model.as_mut(), &es, &qy),
        );
        let diff: f64 = fy
            .iter()
            .zip(&fqy)
            .map(|(a, b)| (q * a - b).norm_squared())
            .sum::<f64>()
            .sqrt();
        assert!(diff <= 1e-9 * norm(&fy), "{law:?}: {diff:e}");
        if law == SpringForce::Hookean {
            let (ey, eqy) = (
                energy(model.as_mut(), &es, &y),
                energy(model.as_mut(), &es, &qy),
            );
            assert!((ey - eqy).abs() <= 1e-12 * ey);
        }
    }
}

/// Momentum: Hookean springs put equal and opposite forces on their ends (zero net force and
/// torque at any state); the linearized network zero net force only (`K⁰` annihilates
/// translations, not the rotations of a deformed state); the warped one both with the ghost
/// correction, neither without it.
#[test]
fn net_force_and_torque() {
    let mut rng = Lcg(53);
    let m = small_mesh(&mut rng);
    let es = ElementSet::new(&m);
    let x = deform(&m, &mut rng);
    for law in all_laws() {
        let mut model = build(law, lame(), &m, &es);
        let (force, torque) = net(&x, &forces(model.as_mut(), &es, &x));
        match law {
            SpringForce::Hookean => {
                assert!(force <= 1e-13 && torque <= 1e-13, "{force:e} {torque:e}")
            }
            SpringForce::Linear => assert!(force <= 1e-13 && torque > 1e-3, "{force:e} {torque:e}"),
            SpringForce::Warped {
                ghost_correction: true,
                ..
            } => assert!(
                force <= 1e-13 && torque <= 1e-12,
                "{law:?}: {force:e} {torque:e}"
            ),
            SpringForce::Warped { .. } => {
                assert!(
                    force > 1e-3 && torque > 1e-3,
                    "{law:?}: {force:e} {torque:e}"
                )
            }
        }
    }
}
