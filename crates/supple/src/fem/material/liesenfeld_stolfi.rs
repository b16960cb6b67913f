//! The Liesenfeld–Stolfi elastic energy (Liesenfeld & Stolfi 1997 §4.1, eq. 11–16), which
//! grows without bound as an element's volume goes to zero, so elements resist inversion.
//!
//! With `C = F` the strain tensor (eq. 11, `Jf (Jg)⁻¹`, i.e. the deformation gradient from the
//! rest shape) and `D = CᵀC` the metric tensor, the energy density depends on the
//! characteristic coefficients of `D` (eq. 12–15):
//! `d₀ = det D = (det F)²`, `d₁ = Σ (cof F)²_ij` (the sum of the principal 2×2 minors of `D`),
//! `d₂ = tr D = Σ F²_ij`, and (eq. 16)
//!
//! `φ = α/32 (d₀² + 1/d₀² − 2) + β/6 (d₂² − 3d₁)`.
//!
//! Computed in the equal, cancellation-free forms (with `J = det F`)
//! `d₀² + 1/d₀² − 2 = (J² − J⁻²)²` and `d₂² − 3d₁ = 3/2 ‖dev D‖²` (`dev D = D − tr(D)/3 I`;
//! from `d₁ = ½((tr D)² − tr D²)`), i.e. `φ = α/32 (J² − J⁻²)² + β/4 ‖dev D‖²`.
//!
//! Stress and tangent (exact derivatives of φ; `∂J/∂F = cof F`, `∂‖dev D‖²/∂F = 4 F dev D`):
//! - `P = h(J) cof F + β F dev D`, `h(J) = α/8 (J³ − J⁻⁵)`;
//! - `dP = h'(J)(cof F : dF) cof F + h(J) dcof[dF] + β (dF dev D + F dev(dFᵀF + FᵀdF))`,
//!   `h'(J) = α/8 (3J² + 5J⁻⁶)`; in closed form
//!   `∂P_ij/∂F_cl = h' cof_ij cof_cl + h ∂cof_ij/∂F_cl
//!   + β (δ_ic (dev D)_lj + F_il F_cj + B_ic δ_jl − ⅔ F_ij F_cl)`, `B = F Fᵀ`.
//!
//! Moduli (§4.1, checked here): for small strain `ε`, `J ≈ 1 + tr ε` gives
//! `α/32 (J² − J⁻²)² ≈ α/2 (tr ε)²` and `dev D ≈ 2 dev ε` gives `β/4 ‖dev D‖² ≈ β ‖dev ε‖²`,
//! which is linear elasticity `K/2 (tr ε)² + μ ‖dev ε‖²` with bulk modulus `K = α` and shear
//! modulus `μ = β`, as the paper states; so from Lamé parameters `α = λ + 2μ/3`, `β = μ`.
//! The tests measure both moduli from the Cauchy stress.
//!
//! `φ` depends on `J²` only, so the barrier keeps elements from *reaching* zero volume; a
//! time step that jumps an element across `J = 0` leaves it in an equally stable inverted
//! state. At `J = 0` energy and stress are infinite.

use super::hyperelastic::{HyperelasticLaw, Pk1Derivative};
use super::Lame;
use nalgebra::{Matrix3, Vector3};

/// The Liesenfeld–Stolfi law with bulk modulus `alpha` and shear modulus `beta` (Pa).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LiesenfeldStolfi {
    pub alpha: f64,
    pub beta: f64,
}

impl LiesenfeldStolfi {
    /// `α` = bulk modulus `λ + 2μ/3`, `β` = shear modulus `μ` (see the module doc).
    pub fn from_lame(lame: Lame) -> Self {
        Self {
            alpha: lame.lambda + 2.0 * lame.mu / 3.0,
            beta: lame.mu,
        }
    }

    /// `h(J) = ∂/∂J [α/32 (J² − J⁻²)²] = α/8 (J³ − J⁻⁵)` and `h'(J) = α/8 (3J² + 5J⁻⁶)`.
    #[inline]
    fn volume_terms(&self, j: f64) -> (f64, f64) {
        let (j2, inv) = (j * j, 1.0 / j);
        let inv2 = inv * inv;
        let inv5 = inv2 * inv2 * inv;
        let k = 0.125 * self.alpha;
        (k * (j2 * j - inv5), k * (3.0 * j2 + 5.0 * inv5 * inv))
    }
}

/// Cofactor matrix `cof F = det F · F⁻ᵀ`, from the columns `c₀, c₁, c₂` of `F`:
/// `[c₁×c₂, c₂×c₀, c₀×c₁]` (defined for singular and inverted `F` too).
#[inline]
pub(crate) fn cofactor(f: &Matrix3<f64>) -> Matrix3<f64> {
    let (c0, c1, c2) = (f.column(0), f.column(1), f.column(2));
    Matrix3::from_columns(&[c1.cross(&c2), c2.cross(&c0), c0.cross(&c1)])
}

/// Deviatoric part `A − tr(A)/3 I`.
#[inline]
fn dev(a: &Matrix3<f64>) -> Matrix3<f64> {
    a - Matrix3::from_diagonal_element(a.trace() / 3.0)
}

/// `e_c × v`.
#[inline]
fn unit_cross(c: usize, v: &Vector3<f64>) -> Vector3<f64> {
    let mut w = Vector3::zeros();
    w[(c + 1) % 3] = -v[(c + 2) % 3];
    w[(c + 2) % 3] = v[(c + 1) % 3];
    w
}

impl HyperelasticLaw for LiesenfeldStolfi {
    fn name(&self) -> &'static str {
        "liesenfeld_stolfi"
    }

    /// Eq. 16's `1/d₀²` term is infinite at zero volume.
    fn is_barrier(&self) -> bool {
        true
    }

    fn energy_density(&self, f: &Matrix3<f64>) -> f64 {
        let j2 = f.determinant().powi(2);
        let vol = j2 - 1.0 / j2;
        let d = f.tr_mul(f);
        self.alpha / 32.0 * vol * vol + 0.25 * self.beta * dev(&d).norm_squared()
    }

    fn pk1(&self, f: &Matrix3<f64>) -> Matrix3<f64> {
        let cof = cofactor(f);
        let (h, _) = self.volume_terms(f.column(0).dot(&cof.column(0)));
        h * cof + self.beta * f * dev(&f.tr_mul(f))
    }

    fn pk1_differential(&self, f: &Matrix3<f64>, df: &Matrix3<f64>) -> Matrix3<f64> {
        let cof = cofactor(f);
        let (h, dh) = self.volume_terms(f.column(0).dot(&cof.column(0)));
        let (c, dc) = (|k: usize| f.column(k), |k: usize| df.column(k));
        let dcof = Matrix3::from_columns(&[
            dc(1).cross(&c(2)) + c(1).cross(&dc(2)),
            dc(2).cross(&c(0)) + c(2).cross(&dc(0)),
            dc(0).cross(&c(1)) + c(0).cross(&dc(1)),
        ]);
        let ft_df = f.tr_mul(df);
        let dd = ft_df + ft_df.transpose();
        (dh * cof.dot(df)) * cof + h * dcof + self.beta * (df * dev(&f.tr_mul(f)) + f * dev(&dd))
    }

    fn pk1_derivative(&self, f: &Matrix3<f64>) -> Pk1Derivative {
        let beta = self.beta;
        let cof = cofactor(f);
        let (h, dh) = self.volume_terms(f.column(0).dot(&cof.column(0)));
        let dev_d = dev(&f.tr_mul(f));
        let b = f * f.transpose();
        let mut out = Pk1Derivative::from_fn(|p, q| {
            let (i, j, c, l) = (p % 3, p / 3, q % 3, q / 3);
            let mut v = dh * cof[(i, j)] * cof[(c, l)]
                + beta * (f[(i, l)] * f[(c, j)] - 2.0 / 3.0 * f[(i, j)] * f[(c, l)]);
            if i == c {
                v += beta * dev_d[(l, j)];
            }
            if j == l {
                v += beta * b[(i, c)];
            }
            v
        });
        // h ∂cof/∂F_cl: moving F_cl (column l along e_c) changes cof column j = c_{j+1} × c_{j+2}
        // by e_c × c_{j+2} when l = j+1 and by c_{j+1} × e_c when l = j+2 (indices mod 3).
        for l in 0..3 {
            for c in 0..3 {
                let q = c + 3 * l;
                let j1 = (l + 2) % 3; // the column j with l = j + 1
                let d1 = unit_cross(c, &f.column((l + 1) % 3).into_owned());
                let j2 = (l + 1) % 3; // the column j with l = j + 2
                let d2 = -unit_cross(c, &f.column((l + 2) % 3).into_owned());
                for i in 0..3 {
                    out[(i + 3 * j1, q)] += h * d1[i];
                    out[(i + 3 * j2, q)] += h * d2[i];
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::hyperelastic::{cauchy_from_pk1, checks, Hyperelastic};
    use super::super::test_support::{lame, Lcg};
    use super::*;

    fn model() -> Hyperelastic<LiesenfeldStolfi> {
        Hyperelastic::new(LiesenfeldStolfi::from_lame(lame()))
    }

    #[test]
    fn energy_is_eq_16_of_the_characteristic_coefficients() {
        let law = LiesenfeldStolfi {
            alpha: 3.0e4,
            beta: 1.7e4,
        };
        let mut rng = Lcg(8);
        for _ in 0..50 {
            let f = checks::random_f(&mut rng, 0.5);
            let d = f.tr_mul(&f);
            // Coefficients of det(D − λI) read off as in eq. 13–15: d₀ = det D,
            // d₁ = Σ principal 2×2 minors of D, d₂ = tr D; d₁ also = Σ (F⁽²⁾_ij)² (eq. 14).
            let d0 = d.determinant();
            let d1 = d[(0, 0)] * d[(1, 1)] - d[(0, 1)] * d[(1, 0)] + d[(0, 0)] * d[(2, 2)]
                - d[(0, 2)] * d[(2, 0)]
                + d[(1, 1)] * d[(2, 2)]
                - d[(1, 2)] * d[(2, 1)];
            assert!((d1 - cofactor(&f).norm_squared()).abs() < 1e-12 * d1);
            let d2 = d.trace();
            let phi = law.alpha / 32.0 * (d0 * d0 + 1.0 / (d0 * d0) - 2.0)
                + law.beta / 6.0 * (d2 * d2 - 3.0 * d1);
            let psi = law.energy_density(&f);
            assert!((psi - phi).abs() <= 1e-9 * psi, "{psi} vs {phi}");
        }
        // Zero at rest, growing without bound as the volume goes to zero.
        assert_eq!(law.energy_density(&Matrix3::identity()), 0.0);
        let squash =
            |s: f64| law.energy_density(&Matrix3::from_diagonal(&Vector3::new(1.0, 1.0, s)));
        assert!(squash(1e-2) > 1e6 * squash(0.5) && squash(1e-3) > 1e3 * squash(1e-2));
    }

    #[test]
    fn stress_derivatives_match_finite_differences() {
        let law = LiesenfeldStolfi::from_lame(lame());
        let (e_diff, e_full) = checks::law_derivative_errors(&law, 2);
        assert!(e_diff <= 1e-7, "dP[dF] vs FD {e_diff:e}");
        assert!(e_full <= 1e-12, "dP/dF vs dP[dF] {e_full:e}");
    }

    #[test]
    fn forces_tangent_energy_and_invariances() {
        checks::model_checks(&mut model(), 37);
    }

    #[test]
    fn patch_test() {
        checks::patch_test(&mut model());
    }

    #[test]
    fn agrees_with_linear_elasticity_for_small_strain() {
        checks::agrees_with_linear(&mut model(), lame());
    }

    /// Bulk modulus `−Δp / (ΔV/V)` under `F = (1 − ε) I` and shear modulus `σ_xy / γ` under
    /// `F = I + γ e_x e_yᵀ`, from the Cauchy stress: α and β within 1 %.
    #[test]
    fn measured_moduli_are_alpha_and_beta() {
        let l = lame();
        let law = LiesenfeldStolfi::from_lame(l);
        let eps = 1e-4;
        let f = Matrix3::from_diagonal_element(1.0 - eps);
        let sigma = cauchy_from_pk1(&law.pk1(&f), &f);
        let p = -sigma.trace() / 3.0;
        let dv_v = f.determinant() - 1.0;
        let bulk = -p / dv_v;
        let gamma = 1e-4;
        let mut f = Matrix3::identity();
        f[(0, 1)] = gamma;
        let sigma = cauchy_from_pk1(&law.pk1(&f), &f);
        let shear = sigma[(0, 1)] / gamma;
        let (alpha, beta) = (l.lambda + 2.0 * l.mu / 3.0, l.mu);
        eprintln!(
            "liesenfeld_stolfi moduli: bulk {bulk:.6e} (alpha {alpha:.6e}, rel {:.2e}), \
             shear {shear:.6e} (beta {beta:.6e}, rel {:.2e})",
            bulk / alpha - 1.0,
            shear / beta - 1.0
        );
        assert!((bulk / alpha - 1.0).abs() < 0.01);
        assert!((shear / beta - 1.0).abs() < 0.01);
        // The same bulk modulus from the energy: Ψ ≈ α/2 (ΔV/V)².
        let f = Matrix3::from_diagonal_element(1.0 - eps);
        let dv_v: f64 = f.determinant() - 1.0;
        let bulk_energy = 2.0 * law.energy_density(&f) / (dv_v * dv_v);
        assert!((bulk_energy / alpha - 1.0).abs() < 0.01, "{bulk_energy}");
    }
}
