//! St.Venant–Kirchhoff: Hooke's law on the Green strain (Zhuang & Canny 1999 §3, eq. 5–6;
//! Hauth & Straßer 2004 eq. 4.7 with eq. 4.8/4.10).
//!
//! - Green strain `E = ½(FᵀF − I)` (Zhuang & Canny eq. 5–6 written per component, Hauth &
//!   Straßer eq. 4.10); rotation invariant (Hauth & Straßer eq. 4.11).
//! - Second Piola–Kirchhoff stress `S = 2μE + λ tr(E) I` (Hauth & Straßer eq. 4.7), first
//!   `P = F S`.
//! - Energy density `Ψ = μ E:E + λ/2 tr(E)²` (Hauth & Straßer eq. 4.5 with 4.7, halved:
//!   `Ψ = ½ E : S`).
//! - `dP[dF] = dF S + F (2μ dE + λ tr(dE) I)` with `dE = sym(FᵀdF)`, and in closed form
//!   `∂P_ij/∂F_cl = δ_ic S_jl + μ (B_ic δ_jl + F_il F_cj) + λ F_ij F_cl` with `B = F Fᵀ`.
//!
//! The energy stays finite as an element collapses or inverts (it even has a stationary point
//! at `F = 0`), so this model alone does not resist inversion.

use super::hyperelastic::{HyperelasticLaw, Pk1Derivative};
use super::Lame;
use nalgebra::Matrix3;

/// The St.Venant–Kirchhoff law with Lamé parameters `lame`: `Ψ = μ E:E + λ/2 (tr E)²` of
/// the Green strain `E`. A law is used through [`HyperelasticLaw`] (or, for a body,
/// [`BodyDesc::stvk`](crate::body::BodyDesc::stvk)):
///
/// ```
/// use supple::fem::material::{HyperelasticLaw, StVenantKirchhoff};
/// use supple::fem::Lame;
/// use supple::nalgebra::Matrix3;
/// let law = StVenantKirchhoff::new(Lame { mu: 1e5, lambda: 2e5 });
/// // A 10 % uniaxial stretch: E = diag(0.105, 0, 0).
/// let f = Matrix3::from_diagonal(&[1.1, 1.0, 1.0].into());
/// let e = 0.5 * (1.1f64 * 1.1 - 1.0);
/// let psi = 1e5 * e * e + 0.5 * 2e5 * e * e;
/// assert!((law.energy_density(&f) - psi).abs() < 1e-9 * psi);
/// // P = F S, S = 2μE + λ tr(E) I: P_xx = 1.1 (2μ + λ) e.
/// assert!((law.pk1(&f)[(0, 0)] - 1.1 * 4e5 * e).abs() < 1e-6);
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StVenantKirchhoff {
    pub lame: Lame,
}

impl StVenantKirchhoff {
    pub fn new(lame: Lame) -> Self {
        Self { lame }
    }

    /// Green strain `E = ½(FᵀF − I)`.
    #[inline]
    pub fn green_strain(f: &Matrix3<f64>) -> Matrix3<f64> {
        0.5 * (f.tr_mul(f) - Matrix3::identity())
    }

    /// Second Piola–Kirchhoff stress `S = 2μE + λ tr(E) I` of a Green strain `E`.
    #[inline]
    pub fn pk2(&self, e: &Matrix3<f64>) -> Matrix3<f64> {
        2.0 * self.lame.mu * e + Matrix3::from_diagonal_element(self.lame.lambda * e.trace())
    }
}

impl HyperelasticLaw for StVenantKirchhoff {
    fn name(&self) -> &'static str {
        "stvk"
    }

    fn energy_density(&self, f: &Matrix3<f64>) -> f64 {
        let e = Self::green_strain(f);
        self.lame.mu * e.norm_squared() + 0.5 * self.lame.lambda * e.trace().powi(2)
    }

    fn pk1(&self, f: &Matrix3<f64>) -> Matrix3<f64> {
        f * self.pk2(&Self::green_strain(f))
    }

    fn pk1_differential(&self, f: &Matrix3<f64>, df: &Matrix3<f64>) -> Matrix3<f64> {
        let s = self.pk2(&Self::green_strain(f));
        let ft_df = f.tr_mul(df);
        let de = 0.5 * (ft_df + ft_df.transpose());
        df * s + f * self.pk2(&de)
    }

    fn pk1_derivative(&self, f: &Matrix3<f64>) -> Pk1Derivative {
        let (mu, lambda) = (self.lame.mu, self.lame.lambda);
        let s = self.pk2(&Self::green_strain(f));
        let b = f * f.transpose();
        Pk1Derivative::from_fn(|p, q| {
            let (i, j, c, l) = (p % 3, p / 3, q % 3, q / 3);
            let mut v = mu * f[(i, l)] * f[(c, j)] + lambda * f[(i, j)] * f[(c, l)];
            if i == c {
                v += s[(j, l)];
            }
            if j == l {
                v += mu * b[(i, c)];
            }
            v
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::hyperelastic::{checks, Hyperelastic};
    use super::super::test_support::{lame, Lcg};
    use super::*;
    use nalgebra::Vector3;

    fn model() -> Hyperelastic<StVenantKirchhoff> {
        Hyperelastic::new(StVenantKirchhoff::new(lame()))
    }

    #[test]
    fn stress_derivatives_match_finite_differences() {
        let (e_diff, e_full) = checks::law_derivative_errors(&StVenantKirchhoff::new(lame()), 1);
        assert!(e_diff <= 1e-7, "dP[dF] vs FD {e_diff:e}");
        assert!(e_full <= 1e-12, "dP/dF vs dP[dF] {e_full:e}");
    }

    #[test]
    fn forces_tangent_energy_and_invariances() {
        checks::model_checks(&mut model(), 31);
    }

    #[test]
    fn patch_test() {
        checks::patch_test(&mut model());
    }

    #[test]
    fn agrees_with_linear_elasticity_for_small_strain() {
        checks::agrees_with_linear(&mut model(), lame());
    }

    #[test]
    fn uniaxial_stretch_has_the_green_strain_stress() {
        // F = diag(s, 1, 1): E_xx = (s² − 1)/2, P_xx = s (λ + 2μ) E_xx.
        let law = StVenantKirchhoff::new(lame());
        let s = 1.3;
        let f = Matrix3::from_diagonal(&Vector3::new(s, 1.0, 1.0));
        let exx = 0.5 * (s * s - 1.0);
        let p = law.pk1(&f);
        let l = lame();
        assert!((p[(0, 0)] - s * (l.lambda + 2.0 * l.mu) * exx).abs() < 1e-9 * p.norm());
        assert!((p[(1, 1)] - l.lambda * exx).abs() < 1e-9 * p.norm());
        let psi = 0.5 * (l.lambda + 2.0 * l.mu) * exx * exx;
        assert!((law.energy_density(&f) - psi).abs() < 1e-12 * psi);
        // Under a random F, Ψ = ½ E : S.
        let mut rng = Lcg(4);
        let f = checks::random_f(&mut rng, 0.4);
        let e = StVenantKirchhoff::green_strain(&f);
        let half_es = 0.5 * e.dot(&law.pk2(&e));
        assert!((law.energy_density(&f) - half_es).abs() < 1e-12 * half_es);
    }
}
