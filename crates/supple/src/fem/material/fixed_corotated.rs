//! Fixed corotated elasticity (Stomakhin, Howes, Schroeder & Teran 2012, "Energetically
//! consistent invertible elasticity", §4: `Ψ = μ ‖F − R‖² + λ/2 (J − 1)²`) on Irving et al.
//! 2004's invertible diagonalization, with Teran et al. 2005's definite tangent.
//!
//! **Why a second corotated law.** The linear corotated energy of `super::corotational`,
//! `μ ‖F − R‖² + λ/2 tr(RᵀF − I)²`, measures volume change by the *trace* of the stretch. Under
//! strong compression that term barely grows: a tet squeezed to stretches `(1.3, 1.3, 0.1)` has
//! `tr(F̂ − I) = −0.3` although it kept 17 % of its volume, so the material prefers to fold
//! and keeps inverted tets in a crushed box (EXPERIMENTS, *The stress matrix*). Stomakhin et
//! al. replace the trace by the determinant, `J − 1 = det F − 1`, which costs `λ/2 · 0.69` for
//! the same tet and keeps growing through `J = 0` into inversion. At small strain both are
//! linear elasticity with Lamé `λ`, `μ` (`J − 1 ≈ tr ε`).
//!
//! **Stress** (diagonal frame, `F = U F̂ Vᵀ` from [`signed_svd`], `σᵢ` the signed entries of
//! `F̂`, `J = σ₁σ₂σ₃`): `P̂ᵢ = 2μ (σᵢ − 1) + λ (J − 1) J/σᵢ`, where `J/σᵢ = σⱼσₖ`; in matrix
//! form `P = 2μ (F − R) + λ (J − 1) cof F` with `R = UVᵀ`. The energy is continuous through
//! inversion (the sign flip moves a singular value through 0).
//!
//! **Tangent** (Teran et al. 2005 §5, as in `super::invertible`): `dP̂ = Uᵀ dP V` splits into
//! - the diagonal entries: `dP̂ᵢᵢ = Σⱼ Aᵢⱼ dF̂ⱼⱼ`, `A = ∂²Ψ̂/∂σ∂σ = 2μ I + λ g gᵀ + λ (J − 1) H`
//!   with `gᵢ = σⱼσₖ` (`∂J/∂σ`) and `H` the Hessian of `J` (`Hᵢⱼ = σₖ` off the diagonal, 0 on
//!   it);
//! - for each pair `i < j` a 2×2 block on `(dF̂ᵢⱼ, dF̂ⱼᵢ)` with the symmetric-mode eigenvalue
//!   `(P̂ᵢ − P̂ⱼ)/(σᵢ − σⱼ) = 2μ − λ (J − 1) σₖ` and the rotation-mode eigenvalue
//!   `(P̂ᵢ + P̂ⱼ)/(σᵢ + σⱼ) = 2μ − 4μ/(σᵢ + σⱼ) + λ (J − 1) σₖ` (both in closed form, so equal
//!   singular values need no limit).
//!
//! `A` is projected onto its non-negative eigenvalues and both mode eigenvalues are clamped at
//! 0, so every element stiffness is positive semi-definite and PCG and Newton stay well posed;
//! where nothing is clamped the tangent is the exact `dP/dF` (tested against finite
//! differences).

use super::hyperelastic::{HyperelasticLaw, Pk1Derivative};
use super::invertible::{add_pair_blocks, signed_svd, MIN_PAIR_SUM};
use super::Lame;
use nalgebra::{Matrix3, Vector3};

/// The fixed corotated law with Lamé parameters `lame`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FixedCorotated {
    pub lame: Lame,
    /// Assemble the definite tangent (the projection of the module notes; what simulations
    /// use) rather than the exact `dP/dF` (which may be indefinite under compression).
    pub definite: bool,
}

impl FixedCorotated {
    /// The law with the definite tangent.
    pub fn new(lame: Lame) -> Self {
        Self {
            lame,
            definite: true,
        }
    }

    /// The law with the exact, possibly indefinite tangent (for checks and comparisons).
    pub fn exact(lame: Lame) -> Self {
        Self {
            lame,
            definite: false,
        }
    }

    /// `P̂ᵢ = 2μ (σᵢ − 1) + λ (J − 1) σⱼσₖ` (see the module notes).
    fn diagonal_stress(&self, s: &Vector3<f64>) -> Vector3<f64> {
        let Lame { mu, lambda } = self.lame;
        2.0 * mu * (s - Vector3::repeat(1.0)) + lambda * (s.product() - 1.0) * det_gradient(s)
    }

    /// The diagonal Hessian `A` and the symmetric- and rotation-mode eigenvalues of the pairs
    /// `(0, 1)`, `(0, 2)`, `(1, 2)` (see the module notes); projected and clamped at 0 when
    /// `self.definite`.
    fn diagonal_tangent(&self, s: &Vector3<f64>) -> (Matrix3<f64>, [f64; 3], [f64; 3]) {
        let Lame { mu, lambda } = self.lame;
        let j = s.product();
        let g = det_gradient(s);
        let hess_j = Matrix3::new(0.0, s[2], s[1], s[2], 0.0, s[0], s[1], s[0], 0.0);
        let a = Matrix3::from_diagonal_element(2.0 * mu)
            + lambda * g * g.transpose()
            + lambda * (j - 1.0) * hess_j;
        let floor = if self.definite {
            0.0
        } else {
            f64::NEG_INFINITY
        };
        // The eigen-decomposition only where `A` is not already positive definite (a Cholesky
        // factorization is the cheap test): most elements need none.
        let a = if self.definite && a.cholesky().is_none() {
            let mut eig = a.symmetric_eigen();
            eig.eigenvalues.apply(|l| *l = l.max(0.0));
            eig.recompose()
        } else {
            a
        };
        let scale = s.abs().max().max(1.0);
        let (mut sym, mut rot) = ([0.0; 3], [0.0; 3]);
        for (q, (i, j_, k)) in [(0, 1, 2), (0, 2, 1), (1, 2, 0)].into_iter().enumerate() {
            let sum = s[i] + s[j_];
            let denom = if sum.abs() < MIN_PAIR_SUM * scale {
                MIN_PAIR_SUM * scale
            } else {
                sum
            };
            sym[q] = (2.0 * mu - lambda * (j - 1.0) * s[k]).max(floor);
            rot[q] = (2.0 * mu - 4.0 * mu / denom + lambda * (j - 1.0) * s[k]).max(floor);
        }
        (a, sym, rot)
    }
}

impl HyperelasticLaw for FixedCorotated {
    fn name(&self) -> &'static str {
        "fixed_corotated"
    }

    /// `μ Σ(σᵢ − 1)² + λ/2 (J − 1)²` with the signed singular values.
    fn energy_density(&self, f: &Matrix3<f64>) -> f64 {
        let (_, s, _) = signed_svd(f);
        let j = f.determinant();
        self.lame.mu * (s - Vector3::repeat(1.0)).norm_squared()
            + 0.5 * self.lame.lambda * (j - 1.0) * (j - 1.0)
    }

    fn pk1(&self, f: &Matrix3<f64>) -> Matrix3<f64> {
        let (u, s, v) = signed_svd(f);
        u * Matrix3::from_diagonal(&self.diagonal_stress(&s)) * v.transpose()
    }

    /// The definite tangent of the module notes when `self.definite` (the exact `dP[dF]`
    /// wherever nothing is clamped), else the exact `dP[dF]`.
    fn pk1_differential(&self, f: &Matrix3<f64>, df: &Matrix3<f64>) -> Matrix3<f64> {
        let (u, s, v) = signed_svd(f);
        let (a, sym, rot) = self.diagonal_tangent(&s);
        differential(&u, &v, &a, &sym, &rot, df)
    }

    /// The nine columns of `dP/dF` from one SVD and one diagonal tangent (the default would
    /// repeat both per column).
    fn pk1_derivative(&self, f: &Matrix3<f64>) -> Pk1Derivative {
        let (u, s, v) = signed_svd(f);
        let (a, sym, rot) = self.diagonal_tangent(&s);
        let mut h = Pk1Derivative::zeros();
        for q in 0..9 {
            let mut df = Matrix3::zeros();
            df[(q % 3, q / 3)] = 1.0;
            let dp = differential(&u, &v, &a, &sym, &rot, &df);
            h.column_mut(q).copy_from_slice(dp.as_slice());
        }
        h
    }
}

/// `∂J/∂σ = (σ₂σ₃, σ₁σ₃, σ₁σ₂)` for `J = σ₁σ₂σ₃`.
fn det_gradient(s: &Vector3<f64>) -> Vector3<f64> {
    Vector3::new(s[1] * s[2], s[0] * s[2], s[0] * s[1])
}

/// `dP[dF] = U dP̂ Vᵀ` with `dP̂` from `dF̂ = Uᵀ dF V`: `A` on the diagonal entries, the pair
/// blocks off it (module notes).
fn differential(
    u: &Matrix3<f64>,
    v: &Matrix3<f64>,
    a: &Matrix3<f64>,
    sym: &[f64; 3],
    rot: &[f64; 3],
    df: &Matrix3<f64>,
) -> Matrix3<f64> {
    let dfh = u.transpose() * df * v;
    let ddiag = a * Vector3::new(dfh[(0, 0)], dfh[(1, 1)], dfh[(2, 2)]);
    let mut dph = Matrix3::from_diagonal(&ddiag);
    add_pair_blocks(&mut dph, &dfh, sym, rot);
    u * dph * v.transpose()
}

#[cfg(test)]
mod tests {
    use super::super::hyperelastic::checks::{
        agrees_with_linear, law_derivative_errors, model_checks, patch_test, random_f,
    };
    use super::super::hyperelastic::Hyperelastic;
    use super::super::liesenfeld_stolfi::cofactor;
    use super::super::test_support::{lame, Lcg};
    use super::*;

    fn law() -> FixedCorotated {
        FixedCorotated::new(lame())
    }

    #[test]
    fn exact_tangent_matches_finite_differences() {
        let (e_diff, e_full) = law_derivative_errors(&FixedCorotated::exact(lame()), 41);
        assert!(e_diff <= 1e-6 && e_full <= 1e-12, "{e_diff:e} {e_full:e}");
    }

    /// The diagonal form equals `2μ (F − R) + λ (J − 1) cof F` with Irving's proper rotation,
    /// and the energy is the same formula, for stretched and inverted elements.
    #[test]
    fn stress_is_the_matrix_form_and_the_gradient_of_the_energy() {
        let mut rng = Lcg(3);
        let l = law();
        let mut inverted = 0;
        for k in 0..200 {
            let mut f = random_f(&mut rng, 0.5);
            if k % 2 == 1 {
                f.column_mut(2).neg_mut();
                inverted += 1;
            }
            let (u, _, v) = signed_svd(&f);
            let r = u * v.transpose();
            let j = f.determinant();
            let matrix_form = 2.0 * l.lame.mu * (f - r) + l.lame.lambda * (j - 1.0) * cofactor(&f);
            let p = l.pk1(&f);
            assert!((p - matrix_form).norm() <= 1e-9 * p.norm().max(1.0));
            // P = ∂Ψ/∂F by central differences (the energy is smooth away from σᵢ = σⱼ).
            let df = Matrix3::from_fn(|_, _| rng.uniform() - 0.5);
            let h = 1e-6;
            let fd =
                (l.energy_density(&(f + h * df)) - l.energy_density(&(f - h * df))) / (2.0 * h);
            assert!(
                (fd - p.dot(&df)).abs() <= 1e-6 * p.norm().max(1.0) * df.norm(),
                "{k}: {fd} vs {}",
                p.dot(&df)
            );
        }
        assert_eq!(inverted, 100);
    }

    #[test]
    fn tangent_is_exact_where_not_clamped_and_definite_everywhere() {
        let mut rng = Lcg(17);
        let l = law();
        let (mut exact, mut clamped) = (0, 0);
        for k in 0..300 {
            let mut f = random_f(&mut rng, 0.6);
            if k % 3 == 0 {
                f.column_mut(0).neg_mut();
            }
            for _ in 0..5 {
                let df = Matrix3::from_fn(|_, _| rng.uniform() - 0.5);
                let dp = l.pk1_differential(&f, &df);
                assert!(
                    df.dot(&dp) >= -1e-9 * dp.norm() * df.norm(),
                    "{k}: indefinite"
                );
            }
            let (_, s, _) = signed_svd(&f);
            // The unprojected, unclamped diagonal tangent: is anything clamped here?
            let (a, sym, rot) = FixedCorotated::exact(l.lame).diagonal_tangent(&s);
            let unclamped = a.symmetric_eigen().eigenvalues.min() > 0.0
                && sym.iter().chain(&rot).all(|&x| x > 0.0);
            if unclamped {
                exact += 1;
                let df = Matrix3::from_fn(|_, _| rng.uniform() - 0.5);
                let h = 1e-6;
                let fd = (l.pk1(&(f + h * df)) - l.pk1(&(f - h * df))) / (2.0 * h);
                let dp = l.pk1_differential(&f, &df);
                assert!(
                    (dp - fd).norm() <= 1e-5 * fd.norm().max(1.0),
                    "{k}: {dp} vs {fd}"
                );
            } else {
                clamped += 1;
            }
        }
        assert!(
            exact > 30 && clamped > 20,
            "{exact} exact, {clamped} clamped"
        );
    }

    /// Rotated and inverted states: `P(QF) = Q P(F)`, `Ψ(QF) = Ψ(F)` for proper rotations `Q`.
    #[test]
    fn rotation_invariant() {
        let mut rng = Lcg(29);
        let l = law();
        for k in 0..50 {
            let mut f = random_f(&mut rng, 0.4);
            if k % 2 == 0 {
                f.column_mut(1).neg_mut();
            }
            let axis = nalgebra::Unit::new_normalize(rng.vec3() - Vector3::repeat(0.5));
            let q = nalgebra::Rotation3::from_axis_angle(&axis, 6.0 * rng.uniform()).into_inner();
            let (e, eq) = (l.energy_density(&f), l.energy_density(&(q * f)));
            assert!((e - eq).abs() <= 1e-9 * e.abs().max(1.0));
            assert!((l.pk1(&(q * f)) - q * l.pk1(&f)).norm() <= 1e-9 * l.pk1(&f).norm().max(1.0));
        }
    }

    /// Body-level checks shared by every model (with the exact tangent): forces against the
    /// energy, the tangent against the forces, zero forces under rigid motion, momentum; the
    /// patch test; small strains give linear elasticity.
    #[test]
    fn body_model_checks_patch_test_and_small_strain_limit() {
        let mut m = Hyperelastic::new(FixedCorotated::exact(lame()));
        model_checks(&mut m, 7);
        patch_test(&mut m);
        agrees_with_linear(&mut m, lame());
    }

    /// The point of the law: a tet squeezed flat in one direction and stretched in the other
    /// two is pushed back towards its volume, and an inverted one back through `J = 0`; the
    /// linear corotated trace term gives a much weaker push.
    #[test]
    fn volume_term_pushes_crushed_and_inverted_elements_back_out() {
        let l = law();
        for s3 in [0.1, 0.0, -0.2] {
            let f = Matrix3::from_diagonal(&Vector3::new(1.3, 1.3, s3));
            let p = l.pk1(&f);
            // The thin direction's stress is compressive (negative) and pushes σ₃ up.
            assert!(
                p[(2, 2)] < -0.5 * l.lame.lambda,
                "σ₃ = {s3}: P₃₃ = {}",
                p[(2, 2)]
            );
            let trace_term = 2.0 * l.lame.mu * (s3 - 1.0) + l.lame.lambda * (2.6 + s3 - 3.0);
            assert!(
                p[(2, 2)] < trace_term,
                "σ₃ = {s3}: {} vs {trace_term}",
                p[(2, 2)]
            );
        }
    }
}
