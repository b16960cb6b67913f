//! A shared checking harness for force models (after SOFA's `ForceFieldTestCreation`): every
//! model is checked the same way — forces against finite differences of the energy, tangent
//! against finite differences of the forces, zero net force, rotation behaviour, patch test.

use super::*;
use crate::linalg::BlockCsr;
use crate::mesh::{box_grid, BoxGrid, TetMesh, TetSplit};
use nalgebra::Rotation3;

/// A small deterministic generator (tests must not depend on a random crate's versions).
pub struct Lcg(pub u64);
impl Lcg {
    pub fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
    pub fn vec3(&mut self) -> Vector3<f64> {
        Vector3::new(self.uniform(), self.uniform(), self.uniform())
    }
}

pub fn lame() -> Lame {
    Lame::from_youngs_poisson(1e5, 0.33).unwrap()
}

/// A small box of 5-tet cubes, slightly jittered so tets are not all alike.
pub fn small_mesh(rng: &mut Lcg) -> TetMesh {
    let mut m = box_grid(&BoxGrid {
        cells: [2, 2, 1],
        cell_size: Vector3::new(0.1, 0.12, 0.09),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    });
    for p in &mut m.positions {
        *p += 0.01 * rng.vec3();
    }
    m.validate().unwrap();
    m
}

/// A large but well-shaped deformation: rotation, stretch, translation and noise.
pub fn deform(m: &TetMesh, rng: &mut Lcg) -> Vec<Vector3<f64>> {
    let r = Rotation3::from_euler_angles(
        0.8 * rng.uniform(),
        1.2 * rng.uniform(),
        2.0 * rng.uniform(),
    )
    .into_inner();
    let s = Matrix3::identity() + 0.2 * Matrix3::from_fn(|_, _| rng.uniform());
    m.positions
        .iter()
        .map(|p| r * s * p + Vector3::new(0.3, -0.1, 0.2) + 0.008 * rng.vec3())
        .collect()
}

pub fn forces(
    model: &mut dyn ForceModel,
    es: &ElementSet,
    x: &[Vector3<f64>],
) -> Vec<Vector3<f64>> {
    model.update_frames(es, x);
    let mut f = vec![Vector3::zeros(); x.len()];
    model.add_forces(es, x, &mut f);
    f
}

pub fn energy(model: &mut dyn ForceModel, es: &ElementSet, x: &[Vector3<f64>]) -> f64 {
    model.update_frames(es, x);
    model.energy(es, x).unwrap()
}

fn flat(v: &[Vector3<f64>]) -> nalgebra::DVector<f64> {
    nalgebra::DVector::from_iterator(3 * v.len(), v.iter().flat_map(|p| p.iter().copied()))
}

/// `‖f + ∇E‖ / ‖f‖` with `∇E` by central differences.
pub fn force_vs_energy_error(
    model: &mut dyn ForceModel,
    es: &ElementSet,
    x: &[Vector3<f64>],
) -> f64 {
    let f = flat(&forces(model, es, x));
    let h = 1e-6;
    let mut grad = nalgebra::DVector::zeros(3 * x.len());
    let mut xp = x.to_vec();
    for j in 0..3 * x.len() {
        let orig = xp[j / 3][j % 3];
        xp[j / 3][j % 3] = orig + h;
        let ep = energy(model, es, &xp);
        xp[j / 3][j % 3] = orig - h;
        let em = energy(model, es, &xp);
        xp[j / 3][j % 3] = orig;
        grad[j] = (ep - em) / (2.0 * h);
    }
    (f + grad).norm() / flat(&forces(model, es, x)).norm()
}

/// `‖K − K_fd‖_F / ‖K‖_F` with `K_fd = −∂f/∂x` by central differences of the forces.
pub fn tangent_vs_force_error(
    model: &mut dyn ForceModel,
    es: &ElementSet,
    x: &[Vector3<f64>],
) -> f64 {
    model.update_frames(es, x);
    let mut k = BlockCsr::zeros(es.pattern.clone());
    model.add_tangent(es, x, 1.0, &mut k);
    let k = k.to_dense();
    let h = 1e-6;
    let mut kfd = nalgebra::DMatrix::zeros(3 * x.len(), 3 * x.len());
    let mut xp = x.to_vec();
    for j in 0..3 * x.len() {
        let orig = xp[j / 3][j % 3];
        xp[j / 3][j % 3] = orig + h;
        let fp = flat(&forces(model, es, &xp));
        xp[j / 3][j % 3] = orig - h;
        let fm = flat(&forces(model, es, &xp));
        xp[j / 3][j % 3] = orig;
        kfd.set_column(j, &(-(fp - fm) / (2.0 * h)));
    }
    (&k - kfd).norm() / k.norm()
}

#[test]
fn lame_parameters_and_refusals() {
    let l = Lame::from_youngs_poisson(1e5, 0.25).unwrap();
    assert!((l.mu - 4e4).abs() < 1e-9 && (l.lambda - 4e4).abs() < 1e-9);
    assert_eq!(
        Lame::from_youngs_poisson(1e5, 0.5).unwrap_err().to_string(),
        "poisson = 0.5: must be below 0.5"
    );
    assert_eq!(
        Lame::from_youngs_poisson(0.0, 0.3).unwrap_err().to_string(),
        "youngs = 0: must be a finite number above 0"
    );
    assert!(Lame::from_youngs_poisson(-3.0, 0.3).is_err());
    assert!(Lame::from_youngs_poisson(1.0, -1.0).is_err());
    assert!(Lame::from_youngs_poisson(f64::NAN, 0.3).is_err());
}

#[test]
fn linear_force_matches_energy_and_tangent_matches_force() {
    let mut rng = Lcg(7);
    let m = small_mesh(&mut rng);
    let es = ElementSet::new(&m);
    let mut model = Linear::new(lame());
    for _ in 0..3 {
        let x = deform(&m, &mut rng);
        let e1 = force_vs_energy_error(&mut model, &es, &x);
        let e2 = tangent_vs_force_error(&mut model, &es, &x);
        assert!(e1 <= 1e-6, "force vs energy {e1:e}");
        assert!(e2 <= 1e-6, "tangent vs force {e2:e}");
    }
}

#[test]
fn corotational_force_matches_energy_and_exact_tangent_matches_force() {
    let mut rng = Lcg(11);
    let m = small_mesh(&mut rng);
    let es = ElementSet::new(&m);
    let mut model = Corotational::new(
        lame(),
        CorotationalSettings {
            tangent: CorotationalTangent::Exact,
            ..Default::default()
        },
        &es,
    );
    for _ in 0..3 {
        let x = deform(&m, &mut rng);
        let e1 = force_vs_energy_error(&mut model, &es, &x);
        let e2 = tangent_vs_force_error(&mut model, &es, &x);
        assert!(e1 <= 1e-6, "force vs energy {e1:e}");
        assert!(e2 <= 1e-6, "tangent vs force {e2:e}");
    }
}

#[test]
fn rotated_tangent_is_exact_at_rest_and_close_for_small_strain() {
    let mut rng = Lcg(3);
    let m = small_mesh(&mut rng);
    let es = ElementSet::new(&m);
    let mut model = Corotational::new(lame(), CorotationalSettings::default(), &es);
    let r = Rotation3::from_euler_angles(0.4, -0.9, 1.7).into_inner();
    let x: Vec<_> = m.positions.iter().map(|p| r * p).collect();
    // At a rigidly rotated rest state the dR term vanishes (σ = 0): R K Rᵀ is the exact tangent.
    assert!(tangent_vs_force_error(&mut model, &es, &x) <= 1e-6);
}

#[test]
fn rigid_rotation_gives_zero_corotational_force_and_nonzero_linear_force() {
    let mut rng = Lcg(5);
    let m = small_mesh(&mut rng);
    let es = ElementSet::new(&m);
    let r = Rotation3::from_euler_angles(0.3, 1.0, -0.6).into_inner();
    let x: Vec<_> = m
        .positions
        .iter()
        .map(|p| r * p + Vector3::new(1.0, 2.0, -3.0))
        .collect();
    // Force scale: what a 1% stretch would produce.
    let stretch: Vec<_> = m.positions.iter().map(|p| p * 1.01).collect();
    let mut lin = Linear::new(lame());
    let scale = flat(&forces(&mut lin, &es, &stretch)).norm();
    let mut cor = Corotational::new(lame(), CorotationalSettings::default(), &es);
    let f_cor = flat(&forces(&mut cor, &es, &x)).norm();
    let f_lin = flat(&forces(&mut lin, &es, &x)).norm();
    assert!(
        f_cor <= 1e-9 * scale,
        "corotational {f_cor:e} vs scale {scale:e}"
    );
    assert!(f_lin >= 10.0 * scale, "linear {f_lin:e} vs scale {scale:e}");
    assert!(energy(&mut cor, &es, &x).abs() <= 1e-12 * scale);
}

#[test]
fn patch_test_affine_deformation_gives_exact_constant_strain() {
    // Interior vertices of a patch under a homogeneous deformation carry no net force, and
    // every element sees the exact deformation gradient.
    let m = box_grid(&BoxGrid {
        cells: [3, 3, 3],
        cell_size: Vector3::repeat(0.1),
        origin: Vector3::zeros(),
        split: TetSplit::Six,
    });
    let es = ElementSet::new(&m);
    let a = Matrix3::new(1.05, 0.02, 0.0, -0.01, 0.97, 0.03, 0.02, 0.0, 1.01);
    let x: Vec<_> = m
        .positions
        .iter()
        .map(|p| a * p + Vector3::new(0.5, 0.0, 0.1))
        .collect();
    let models: Vec<Box<dyn ForceModel>> = vec![
        Box::new(Linear::new(lame())),
        Box::new(Corotational::new(
            lame(),
            CorotationalSettings::default(),
            &es,
        )),
    ];
    for mut model in models {
        let f = forces(model.as_mut(), &es, &x);
        let p_exact = match model.name() {
            "linear" => linear_stress(&a, lame()),
            _ => corotational::stress(&a, &crate::fem::polar::rotation(&a), lame()),
        };
        let force_scale = p_exact.norm() * 0.01; // stress × face area
        for (i, p) in m.positions.iter().enumerate() {
            let interior = p.iter().all(|&c| c > 0.05 && c < 0.25);
            if interior {
                assert!(
                    f[i].norm() <= 1e-9 * force_scale,
                    "{} vertex {i}: {}",
                    model.name(),
                    f[i]
                );
            }
        }
        for e in 0..es.len() {
            assert!((es.deformation_gradient(e, &x) - a).norm() < 1e-12);
        }
    }
}

#[test]
fn internal_forces_sum_to_zero() {
    let mut rng = Lcg(9);
    let m = small_mesh(&mut rng);
    let es = ElementSet::new(&m);
    let x = deform(&m, &mut rng);
    let mut models: Vec<Box<dyn ForceModel>> = vec![
        Box::new(Linear::new(lame())),
        Box::new(Corotational::new(
            lame(),
            CorotationalSettings::default(),
            &es,
        )),
    ];
    for model in &mut models {
        let f = forces(model.as_mut(), &es, &x);
        let total: Vector3<f64> = f.iter().sum();
        let scale: f64 = f.iter().map(|v| v.norm()).sum();
        assert!(total.norm() <= 1e-12 * scale, "{}: {total}", model.name());
        if model.name() == "corotational" {
            // Rotation invariance also means zero net torque.
            let torque: Vector3<f64> = x.iter().zip(&f).map(|(p, fi)| p.cross(fi)).sum();
            assert!(torque.norm() <= 1e-10 * scale, "torque {torque}");
        }
    }
}
