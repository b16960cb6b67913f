//! Element-level hyperelastic laws and the one body model that turns any of them into forces
//! and tangents.
//!
//! A law is an energy density `Ψ(F)` of the deformation gradient with its first
//! Piola–Kirchhoff stress `P = ∂Ψ/∂F` and the derivative `dP/dF`. On a linear tet `F` is
//! constant, `∂F/∂x_b = e_c ⊗ g_b` for vertex `b` along axis `c` (`g_b` the shape-function
//! gradient), so the element's energy is `V Ψ(F)` and
//! - forces `f_a = −∂(VΨ)/∂x_a = −V P g_a` (the principle of virtual work, Hauth & Straßer
//!   2004 eq. 4.18 / 5.3 with `P` in place of `∂ε/∂μ : C(ε)`),
//! - stiffness `K_ab = −∂f_a/∂x_b = V (dP[e_c ⊗ g_b]) g_a` (column `c` of block `(a, b)`).
//!
//! The tangent is assembled from the 9×9 `dP/dF` of each element, contracted once with the
//! rows of `Dm⁻¹` (the gradients `g_1..g_3`): `K̂ = V (G ⊗ I) H (Gᵀ ⊗ I)` couples the three
//! free vertices, and the blocks of vertex 0 follow from `g_0 = −(g_1 + g_2 + g_3)`:
//! `K_0b = −Σ_a K_ab`, `K_00 = Σ_ab K_ab`. That is ~400 multiply-adds per element after `H`,
//! against 12 full `dP[dF]` evaluations and 48 matrix–vector products for the direct way.
//! A hyperelastic `H` has major symmetry (`∂P_ij/∂F_cl = ∂P_cl/∂F_ij`), so only the blocks
//! `a ≤ b` are formed and the assembled tangent is exactly symmetric.

use super::ForceModel;
use crate::fem::elements::ElementBlocks;
use crate::fem::ElementSet;
use crate::linalg::{par, BlockCsr};
use nalgebra::{Matrix3, SMatrix, Vector3};

/// `dP/dF` on column-major vectorised 3×3 matrices: `H[(i + 3j, c + 3l)] = ∂P_ij/∂F_cl`.
pub type Pk1Derivative = SMatrix<f64, 9, 9>;

/// An isotropic (or not) hyperelastic material law on one element.
///
/// Implement the energy density, its stress and the stress's derivative, and
/// [`BodyDesc::build_with_law`](crate::body::BodyDesc::build_with_law) makes a body of it
/// ([`Hyperelastic`] turns the law into element forces and tangents). Here small-strain
/// linear elasticity as a law, `Ψ = μ ε:ε + λ/2 (tr ε)²` with `ε = sym(F) − I`, which gives
/// the same forces as the built-in linear model (`crates/supple/examples/custom_law.rs`
/// writes a neo-Hookean law and checks its derivatives by finite differences):
///
/// ```
/// use supple::fem::material::HyperelasticLaw;
/// use supple::fem::{ForceModel, Lame};
/// use supple::nalgebra::Matrix3;
/// use supple::prelude::*;
///
/// #[derive(Debug)]
/// struct SmallStrain(Lame);
///
/// impl SmallStrain {
///     fn strain(f: &Matrix3<f64>) -> Matrix3<f64> {
///         0.5 * (f + f.transpose()) - Matrix3::identity()
///     }
/// }
///
/// impl HyperelasticLaw for SmallStrain {
///     fn name(&self) -> &'static str {
///         "small_strain"
///     }
///     fn energy_density(&self, f: &Matrix3<f64>) -> f64 {
///         let e = Self::strain(f);
///         self.0.mu * e.norm_squared() + 0.5 * self.0.lambda * e.trace().powi(2)
///     }
///     fn pk1(&self, f: &Matrix3<f64>) -> Matrix3<f64> {
///         let e = Self::strain(f);
///         2.0 * self.0.mu * e + self.0.lambda * e.trace() * Matrix3::identity()
///     }
///     fn pk1_differential(&self, _f: &Matrix3<f64>, df: &Matrix3<f64>) -> Matrix3<f64> {
///         self.0.mu * (df + df.transpose()) + self.0.lambda * df.trace() * Matrix3::identity()
///     }
/// }
///
/// let mesh = || box_grid(&BoxGrid { cells: [1, 1, 1], cell_size: Vector3::repeat(0.1),
///     origin: Vector3::zeros(), split: TetSplit::Five });
/// let ours = BodyDesc::of(mesh()).build_with_law(SmallStrain)?;
/// let linear = BodyDesc::of(mesh()).linear().build()?;
/// let x: Vec<_> = ours.mesh.positions.iter().map(|p| p + 0.01 * Vector3::new(p.y, p.z, p.x)).collect();
/// let forces = |body: &Body| {
///     let mut f = vec![Vector3::zeros(); x.len()];
///     body.model.add_forces(&body.elems, &x, &mut f);
///     f
/// };
/// for (a, b) in forces(&ours).iter().zip(&forces(&linear)) {
///     assert!((a - b).norm() < 1e-9 * b.norm().max(1.0));
/// }
/// # Ok::<(), BuildError>(())
/// ```
pub trait HyperelasticLaw: Send + Sync + std::fmt::Debug {
    /// The scene name of the model built from this law (`stvk`, `liesenfeld_stolfi`).
    fn name(&self) -> &'static str;

    /// Energy density `Ψ(F)` per unit rest volume (J/m³).
    fn energy_density(&self, f: &Matrix3<f64>) -> f64;

    /// First Piola–Kirchhoff stress `P = ∂Ψ/∂F`.
    fn pk1(&self, f: &Matrix3<f64>) -> Matrix3<f64>;

    /// Directional derivative `dP[dF]` of the stress at `f`.
    fn pk1_differential(&self, f: &Matrix3<f64>, df: &Matrix3<f64>) -> Matrix3<f64>;

    /// True when `Ψ → ∞` as `det F → 0` (see [`ForceModel::needs_positive_volume`]).
    fn is_barrier(&self) -> bool {
        false
    }

    /// The full `dP/dF` (see [`Pk1Derivative`] for the layout). The default makes nine
    /// [`pk1_differential`](Self::pk1_differential) calls; laws override it with a closed form.
    fn pk1_derivative(&self, f: &Matrix3<f64>) -> Pk1Derivative {
        let mut h = Pk1Derivative::zeros();
        for q in 0..9 {
            let mut df = Matrix3::zeros();
            df[(q % 3, q / 3)] = 1.0;
            h.column_mut(q)
                .copy_from_slice(self.pk1_differential(f, &df).as_slice());
        }
        h
    }
}

/// The body-level model of a hyperelastic law: forces, tangent and energy summed over the
/// elements (no frames, no state).
#[derive(Debug, Clone)]
pub struct Hyperelastic<L> {
    pub law: L,
}

impl<L: HyperelasticLaw> Hyperelastic<L> {
    pub fn new(law: L) -> Self {
        Self { law }
    }
}

impl<L: HyperelasticLaw> ForceModel for Hyperelastic<L> {
    fn name(&self) -> &'static str {
        self.law.name()
    }

    fn needs_positive_volume(&self) -> bool {
        self.law.is_barrier()
    }

    fn add_forces(&self, elems: &ElementSet, x: &[Vector3<f64>], f: &mut [Vector3<f64>]) {
        elems.scatter_forces(f, |e| {
            let p = self.law.pk1(&elems.deformation_gradient(e, x));
            elems.stress_forces(e, &p)
        });
    }

    fn add_tangent(&self, elems: &ElementSet, x: &[Vector3<f64>], scale: f64, k: &mut BlockCsr) {
        elems.scatter_blocks(k, |e, sink| {
            let h = self.law.pk1_derivative(&elems.deformation_gradient(e, x));
            add_pk1_derivative_blocks(sink, &elems.dm_inv[e], scale * elems.volume[e], &h);
        });
    }

    fn energy(&self, elems: &ElementSet, x: &[Vector3<f64>]) -> Option<f64> {
        Some(
            elems.sum(|e| {
                elems.volume[e] * self.law.energy_density(&elems.deformation_gradient(e, x))
            }),
        )
    }

    /// `σ = P Fᵀ / det F` (see `cauchy_from_pk1`).
    fn cauchy_stress(
        &self,
        elems: &ElementSet,
        x: &[Vector3<f64>],
        out: &mut [Matrix3<f64>],
    ) -> bool {
        par::for_each_mut(&mut out[..elems.len()], |e, s| {
            let f = elems.deformation_gradient(e, x);
            *s = cauchy_from_pk1(&self.law.pk1(&f), &f);
        });
        true
    }
}

/// Cauchy stress `σ = P Fᵀ / det F`. Where `det F ≤ 1e-12` (inverted or collapsed element,
/// where the Cauchy stress is undefined) the Kirchhoff stress `τ = P Fᵀ` is returned instead,
/// so output fields stay finite and keep the sign of the load.
#[inline]
pub(crate) fn cauchy_from_pk1(p: &Matrix3<f64>, f: &Matrix3<f64>) -> Matrix3<f64> {
    let det = f.determinant();
    let tau = p * f.transpose();
    if det > 1e-12 {
        tau / det
    } else {
        tau
    }
}

/// Adds `sv ·` the element stiffness `K_ab = (dP[e_c ⊗ g_b]) g_a` of an element with
/// `Dm⁻¹ = dm_inv` (rows `g_1..g_3`) and `dP/dF = h` into `sink`; `sv` is the rest volume
/// times the caller's scale. Uses the upper half (`a ≤ b`) of the blocks, see the module doc.
#[inline]
pub(crate) fn add_pk1_derivative_blocks(
    sink: &mut ElementBlocks,
    dm_inv: &Matrix3<f64>,
    sv: f64,
    h: &Pk1Derivative,
) {
    // hg[(p, c + 3b)] = Σ_l H[(p, c + 3l)] g_{b+1}[l]: dP for vertex b + 1 moving along c.
    let mut hg = Pk1Derivative::zeros();
    for b in 0..3 {
        let g = dm_inv.row(b);
        for c in 0..3 {
            let col = h.column(c) * g[0] + h.column(c + 3) * g[1] + h.column(c + 6) * g[2];
            hg.column_mut(c + 3 * b).copy_from(&col);
        }
    }
    // K_ab[(i, c)] = sv Σ_j g_{a+1}[j] hg[(i + 3j, c + 3b)] for the free vertices a ≤ b.
    let block = |a: usize, b: usize| {
        let g = dm_inv.row(a) * sv;
        Matrix3::from_fn(|i, c| {
            let q = c + 3 * b;
            g[0] * hg[(i, q)] + g[1] * hg[(i + 3, q)] + g[2] * hg[(i + 6, q)]
        })
    };
    let upper = UPPER.map(|(a, b)| block(a, b));
    let [k11, k12, k13, k22, k23, k33] = &upper;
    // Vertex 0 has g_0 = −(g_1 + g_2 + g_3): K_0b = −Σ_a K_ab (with K_ba = K_abᵀ),
    // K_00 = −Σ_b K_0b.
    let k0 = [
        -(k11 + k12.transpose() + k13.transpose()),
        -(k12 + k22 + k23.transpose()),
        -(k13 + k23 + k33),
    ];
    sink.add(0, 0, &-(k0[0] + k0[1] + k0[2]));
    for (b, k0b) in k0.iter().enumerate() {
        sink.add_symmetric(0, b + 1, k0b);
    }
    for (&(a, b), kab) in UPPER.iter().zip(&upper) {
        sink.add_symmetric(a + 1, b + 1, kab);
    }
}

/// The pairs `a ≤ b` of free vertices (local vertices `a + 1`, `b + 1`).
const UPPER: [(usize, usize); 6] = [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)];

/// Checks shared by the energy-based models' tests (the models' own files run them).
#[cfg(test)]
pub(crate) mod checks {
    use super::super::test_support::{self, Lcg};
    use super::super::{ForceModel, Lame, Linear};
    use super::*;
    use crate::mesh::{box_grid, BoxGrid, TetMesh, TetSplit};
    use nalgebra::Rotation3;

    /// A random deformation gradient near `I` (rotation times a well-conditioned stretch).
    pub fn random_f(rng: &mut Lcg, size: f64) -> Matrix3<f64> {
        let r = Rotation3::from_euler_angles(rng.uniform(), rng.uniform(), 2.0 * rng.uniform());
        r.into_inner() * (Matrix3::identity() + size * Matrix3::from_fn(|_, _| rng.uniform()))
    }

    /// `dP[dF]` against central differences of `P`, and `pk1_derivative` against `dP[dF]`,
    /// on random `F` and `dF`; returns the largest relative errors (differential, derivative).
    pub fn law_derivative_errors(law: &dyn HyperelasticLaw, seed: u64) -> (f64, f64) {
        let mut rng = Lcg(seed);
        let (mut e_diff, mut e_full) = (0.0f64, 0.0f64);
        for _ in 0..20 {
            let f = random_f(&mut rng, 0.3);
            let df = Matrix3::from_fn(|_, _| rng.uniform());
            let h = 1e-6;
            let fd = (law.pk1(&(f + h * df)) - law.pk1(&(f - h * df))) / (2.0 * h);
            let dp = law.pk1_differential(&f, &df);
            e_diff = e_diff.max((dp - fd).norm() / dp.norm());
            let full = law.pk1_derivative(&f);
            let dp_full = full * SMatrix::<f64, 9, 1>::from_column_slice(df.as_slice());
            let dp_full = Matrix3::from_column_slice(dp_full.as_slice());
            e_full = e_full.max((dp_full - dp).norm() / dp.norm());
            // Major symmetry of a hyperelastic dP/dF.
            e_full = e_full.max((full - full.transpose()).norm() / full.norm());
        }
        (e_diff, e_full)
    }

    /// The four FD / invariance checks of the shared harness plus net torque; panics with
    /// the model's name on failure.
    pub fn model_checks(model: &mut dyn ForceModel, seed: u64) {
        let name = model.name();
        let mut rng = Lcg(seed);
        let m = test_support::small_mesh(&mut rng);
        let es = ElementSet::new(&m);
        for _ in 0..3 {
            let x = test_support::deform(&m, &mut rng);
            let e1 = test_support::force_vs_energy_error(model, &es, &x);
            let e2 = test_support::tangent_vs_force_error(model, &es, &x);
            eprintln!("{name}: force vs energy {e1:.1e}, tangent vs force {e2:.1e}");
            assert!(e1 <= 1e-6, "{name}: force vs energy {e1:e}");
            assert!(e2 <= 1e-6, "{name}: tangent vs force {e2:e}");
            // Zero net force and torque (translation and rotation invariance of the energy).
            let f = test_support::forces(model, &es, &x);
            let scale: f64 = f.iter().map(|v| v.norm()).sum();
            let total: Vector3<f64> = f.iter().sum();
            let torque: Vector3<f64> = x.iter().zip(&f).map(|(p, fi)| p.cross(fi)).sum();
            assert!(total.norm() <= 1e-12 * scale, "{name}: net force {total}");
            assert!(
                torque.norm() <= 1e-10 * scale,
                "{name}: net torque {torque}"
            );
        }
        // Rigid motion of the rest shape: no force, no energy. Scale: a 1% stretch.
        let stretch: Vec<_> = m.positions.iter().map(|p| p * 1.01).collect();
        let f_scale: f64 = test_support::forces(model, &es, &stretch)
            .iter()
            .map(|v| v.norm())
            .sum();
        let e_scale = test_support::energy(model, &es, &stretch);
        let r = Rotation3::from_euler_angles(0.3, 1.0, -2.6).into_inner();
        let x: Vec<_> = m
            .positions
            .iter()
            .map(|p| r * p + Vector3::new(1.0, 2.0, -3.0))
            .collect();
        let f_rigid: f64 = test_support::forces(model, &es, &x)
            .iter()
            .map(|v| v.norm())
            .sum();
        let e_rigid = test_support::energy(model, &es, &x);
        assert!(f_rigid <= 1e-9 * f_scale, "{name}: rigid force {f_rigid:e}");
        assert!(
            e_rigid.abs() <= 1e-9 * e_scale,
            "{name}: rigid energy {e_rigid:e}"
        );
    }

    /// Patch test: under a uniform `F` every element sees `F` and interior vertices carry no
    /// force (to 1e-9 of the largest boundary force).
    pub fn patch_test(model: &mut dyn ForceModel) {
        let m = box_grid(&BoxGrid {
            cells: [3, 3, 3],
            cell_size: Vector3::repeat(0.1),
            origin: Vector3::zeros(),
            split: TetSplit::Six,
        });
        let es = ElementSet::new(&m);
        let a = Matrix3::new(1.15, 0.1, 0.0, -0.05, 0.85, 0.12, 0.08, 0.0, 1.05);
        let rot = Rotation3::from_euler_angles(0.5, -0.2, 1.1).into_inner();
        let x: Vec<_> = m
            .positions
            .iter()
            .map(|p| rot * a * p + Vector3::new(0.5, 0.0, 0.1))
            .collect();
        let f = test_support::forces(model, &es, &x);
        let f_max = f.iter().map(|v| v.norm()).fold(0.0, f64::max);
        assert!(f_max > 0.0);
        let mut n_interior = 0;
        for (i, p) in m.positions.iter().enumerate() {
            if p.iter().all(|&c| c > 0.05 && c < 0.25) {
                n_interior += 1;
                assert!(
                    f[i].norm() <= 1e-9 * f_max,
                    "{} vertex {i}: {}",
                    model.name(),
                    f[i]
                );
            }
        }
        assert_eq!(n_interior, 8);
    }

    /// Relative difference `‖f − f_lin‖ / ‖f_lin‖` between the model's and the linear model's
    /// forces for random displacements of size `strain` (relative to the cell size) around
    /// the rest shape.
    pub fn linear_difference(model: &mut dyn ForceModel, lame: Lame, strain: f64) -> f64 {
        let mut rng = Lcg(21);
        let m: TetMesh = test_support::small_mesh(&mut rng);
        let es = ElementSet::new(&m);
        let x: Vec<_> = m
            .positions
            .iter()
            .map(|p| p + 0.1 * strain * rng.vec3())
            .collect();
        let f = test_support::forces(model, &es, &x);
        let f_lin = test_support::forces(&mut Linear::new(lame), &es, &x);
        let diff: f64 = f
            .iter()
            .zip(&f_lin)
            .map(|(a, b)| (a - b).norm_squared())
            .sum();
        let norm: f64 = f_lin.iter().map(|v| v.norm_squared()).sum();
        (diff / norm).sqrt()
    }

    /// The model agrees with linear elasticity to first order: the relative force difference
    /// is `O(strain)` (below `strain` times a small constant, and shrinking ~10× per decade).
    pub fn agrees_with_linear(model: &mut dyn ForceModel, lame: Lame) {
        let d3 = linear_difference(model, lame, 1e-3);
        let d4 = linear_difference(model, lame, 1e-4);
        eprintln!(
            "{}: relative force difference to linear at strain 1e-3: {d3:.2e}, 1e-4: {d4:.2e}",
            model.name()
        );
        assert!(d4 <= 20.0 * 1e-4, "{}: {d4:e}", model.name());
        assert!(
            d3 / d4 > 7.0 && d3 / d4 < 13.0,
            "{}: {d3:e} {d4:e}",
            model.name()
        );
    }
}
