//! Hauth & Straßer's hybrid tensor (2004 §7.1): Green's tensor for the pressure (volumetric)
//! part, the corotated Cauchy tensor for the shear part.
//!
//! The paper names the split but gives no formula; we take the bulk/deviatoric split of the
//! linear energy `K/2 (tr ε)² + μ ‖dev ε‖²` (`K = λ + 2μ/3`) and put the Green strain
//! `E = ½(FᵀF − I)` (eq. 4.10) in the volumetric term and the corotated Cauchy strain
//! `ε_CR = sym(RᵀF) − I` (eq. 4.12, `R` the polar rotation of `F`, eq. 4.13–4.14) in the
//! deviatoric one:
//!
//! `Ψ = K/2 (tr E)² + μ ‖dev S‖²`, `S = RᵀF` (`dev(S − I) = dev S`).
//!
//! Both terms are rotation invariant and, for small strain, reduce to linear elasticity
//! (`tr E ≈ tr ε`, `dev S ≈ dev ε`). Stress: `P = K tr(E) F + R σ_s(S)` with
//! `σ_s(S) = 2μ dev S` (the corotational stress with Lamé parameters `(μ, −2μ/3)`; it commutes
//! with the symmetric `S`, so `R σ_s` is the exact gradient of `μ ‖dev S‖²`, as for the
//! corotational model).
//!
//! Tangent ("the Jacobian is updated correctly including the nonlinear terms", §7.1): the
//! volumetric part `K (F_ij F_cl + tr(E) δ_ic δ_jl)` plus the shear part including `dR`: with
//! `W = RᵀdR` (axial vector `w`), `(tr S · I − S) w = axial(RᵀdF − dFᵀR)` and
//! `dP_s = R [W σ_s + σ_s'(−WS + RᵀdF)]` (see `corotational::stress_differential`).
//!
//! Why a [`ForceModel`] with per-element frames and not a `HyperelasticLaw` computing `R`
//! inside: Hauth & Straßer refresh the rotation frame and this tangent together (their update
//! rate), so the model belongs to the frame-based family; and `update_frames` finds each
//! rotation by Newton warm-started from the last step (`polar::rotation_near`, 2–3 cheap
//! iterations), once per step, where a law would run a cold polar decomposition in every
//! force and every tangent call. Forces, tangent, energy and stress use the frames of the
//! last `update_frames`; they are exact when that was called at the same `x`.

use super::hyperelastic::{add_pk1_derivative_blocks, cauchy_from_pk1, Pk1Derivative};
use super::{ForceModel, Lame};
use crate::fem::polar;
use crate::fem::ElementSet;
use crate::linalg::{par, BlockCsr};
use nalgebra::{Matrix3, Vector3};

#[derive(Debug, Clone)]
pub struct Hybrid {
    pub lame: Lame,
    /// Bulk modulus `K = λ + 2μ/3`.
    bulk: f64,
    /// Per-element polar rotations from the last `update_frames`.
    rotations: Vec<Matrix3<f64>>,
}

impl Hybrid {
    pub fn new(lame: Lame, n_elements: usize) -> Self {
        Self {
            lame,
            bulk: lame.lambda + 2.0 * lame.mu / 3.0,
            rotations: vec![Matrix3::identity(); n_elements],
        }
    }

    pub fn rotations(&self) -> &[Matrix3<f64>] {
        &self.rotations
    }

    /// Symmetric stretch `sym(RᵀF)` (symmetric already when `R` is the polar rotation of `F`).
    #[inline]
    fn stretch(f: &Matrix3<f64>, r: &Matrix3<f64>) -> Matrix3<f64> {
        let g = r.tr_mul(f);
        0.5 * (g + g.transpose())
    }

    /// Energy density `K/2 (tr E)² + μ ‖dev S‖²`.
    pub fn energy_density(&self, f: &Matrix3<f64>, r: &Matrix3<f64>) -> f64 {
        let tr_e = 0.5 * (f.norm_squared() - 3.0);
        let s = Self::stretch(f, r);
        let dev_s = s - Matrix3::from_diagonal_element(s.trace() / 3.0);
        0.5 * self.bulk * tr_e * tr_e + self.lame.mu * dev_s.norm_squared()
    }

    /// First Piola–Kirchhoff stress `P = K tr(E) F + 2μ R dev S`.
    pub fn stress(&self, f: &Matrix3<f64>, r: &Matrix3<f64>) -> Matrix3<f64> {
        let tr_e = 0.5 * (f.norm_squared() - 3.0);
        let s = Self::stretch(f, r);
        let sigma_s = 2.0 * self.lame.mu * (s - Matrix3::from_diagonal_element(s.trace() / 3.0));
        self.bulk * tr_e * f + r * sigma_s
    }

    /// `dP/dF` at `f` with `r` its polar rotation (see the module doc).
    pub fn stress_derivative(&self, f: &Matrix3<f64>, r: &Matrix3<f64>) -> Pk1Derivative {
        let (k, mu) = (self.bulk, self.lame.mu);
        let tr_e = 0.5 * (f.norm_squared() - 3.0);
        let mut out = Pk1Derivative::from_fn(|p, q| {
            let (i, j, c, l) = (p % 3, p / 3, q % 3, q / 3);
            let diag = if i == c && j == l { tr_e } else { 0.0 };
            k * (f[(i, j)] * f[(c, l)] + diag)
        });
        let s = Self::stretch(f, r);
        let sigma_s = 2.0 * mu * (s - Matrix3::from_diagonal_element(s.trace() / 3.0));
        // (tr S · I − S) is singular only for degenerate or inverted elements: drop dR there,
        // as `corotational::stress_differential` does.
        let m_inv = (Matrix3::from_diagonal_element(s.trace()) - s).try_inverse();
        for l in 0..3 {
            for c in 0..3 {
                // dF = e_c ⊗ e_l: RᵀdF = u e_lᵀ with u = Rᵀe_c; axial(u e_lᵀ − e_l uᵀ) = e_l × u.
                let u: Vector3<f64> = r.row(c).transpose();
                let w = m_inv.map_or_else(Vector3::zeros, |mi| mi * Vector3::ith(l, 1.0).cross(&u));
                let w_mat = w.cross_matrix();
                let mut dg = -w_mat * s;
                for a in 0..3 {
                    dg[(a, l)] += u[a];
                }
                let dsym = 0.5 * (dg + dg.transpose());
                let dsigma = 2.0 * mu * (dsym - Matrix3::from_diagonal_element(dg.trace() / 3.0));
                let dp = r * (w_mat * sigma_s + dsigma);
                let mut col = out.column_mut(c + 3 * l);
                col += nalgebra::SVector::<f64, 9>::from_column_slice(dp.as_slice());
            }
        }
        out
    }
}

impl ForceModel for Hybrid {
    fn name(&self) -> &'static str {
        "hybrid"
    }

    fn update_frames(&mut self, elems: &ElementSet, x: &[Vector3<f64>]) {
        polar::update_rotations_near(&mut self.rotations, |e| elems.deformation_gradient(e, x));
    }

    fn add_forces(&self, elems: &ElementSet, x: &[Vector3<f64>], f: &mut [Vector3<f64>]) {
        elems.scatter_forces(f, |e| {
            let p = self.stress(&elems.deformation_gradient(e, x), &self.rotations[e]);
            elems.stress_forces(e, &p)
        });
    }

    fn add_tangent(&self, elems: &ElementSet, x: &[Vector3<f64>], scale: f64, k: &mut BlockCsr) {
        elems.scatter_blocks(k, |e, sink| {
            let f = elems.deformation_gradient(e, x);
            let h = self.stress_derivative(&f, &self.rotations[e]);
            add_pk1_derivative_blocks(sink, &elems.dm_inv[e], scale * elems.volume[e], &h);
        });
    }

    /// The energy at `x` with each element's polar rotation of `x` (warm-started from its
    /// frame, not stored): a diagnostic must not depend on when frames were last refreshed.
    fn energy(&self, elems: &ElementSet, x: &[Vector3<f64>]) -> Option<f64> {
        Some(elems.sum(|e| {
            let f = elems.deformation_gradient(e, x);
            let r = polar::rotation_near(&f, &self.rotations[e]);
            elems.volume[e] * self.energy_density(&f, &r)
        }))
    }

    /// `σ = P Fᵀ / det F` (the Kirchhoff stress where `det F ≤ 1e-12`), with fresh rotations
    /// like [`energy`](Self::energy).
    fn cauchy_stress(
        &self,
        elems: &ElementSet,
        x: &[Vector3<f64>],
        out: &mut [Matrix3<f64>],
    ) -> bool {
        par::for_each_mut(&mut out[..elems.len()], |e, s| {
            let f = elems.deformation_gradient(e, x);
            let r = polar::rotation_near(&f, &self.rotations[e]);
            *s = cauchy_from_pk1(&self.stress(&f, &r), &f);
        });
        true
    }
}

#[cfg(test)]
mod tests {
    use super::super::hyperelastic::checks;
    use super::super::test_support::{lame, Lcg};
    use super::super::StVenantKirchhoff;
    use super::*;
    use crate::fem::material::HyperelasticLaw;

    fn model() -> Hybrid {
        // The harness's small mesh: 2×2×1 cells of 5 tets.
        Hybrid::new(lame(), 20)
    }

    #[test]
    fn stress_derivative_matches_finite_differences_with_the_rotation_recomputed() {
        let hy = model();
        let mut rng = Lcg(17);
        for _ in 0..20 {
            let f = checks::random_f(&mut rng, 0.3);
            let h = hy.stress_derivative(&f, &polar::rotation(&f));
            let d = 1e-6;
            let mut fd = Pk1Derivative::zeros();
            for q in 0..9 {
                let mut df = Matrix3::zeros();
                df[(q % 3, q / 3)] = d;
                let (fp, fm) = (f + df, f - df);
                let dp = (hy.stress(&fp, &polar::rotation(&fp))
                    - hy.stress(&fm, &polar::rotation(&fm)))
                    / (2.0 * d);
                fd.column_mut(q).copy_from_slice(dp.as_slice());
            }
            assert!(
                (h - fd).norm() <= 1e-7 * h.norm(),
                "{:e}",
                (h - fd).norm() / h.norm()
            );
            assert!((h - h.transpose()).norm() <= 1e-10 * h.norm());
        }
    }

    #[test]
    fn forces_tangent_energy_and_invariances() {
        checks::model_checks(&mut model(), 41);
    }

    #[test]
    fn patch_test() {
        // 3×3×3 cells of 6 tets.
        checks::patch_test(&mut Hybrid::new(lame(), 162));
    }

    #[test]
    fn agrees_with_linear_elasticity_for_small_strain() {
        checks::agrees_with_linear(&mut model(), lame());
    }

    #[test]
    fn pressure_is_green_and_shear_is_corotated() {
        // Pure dilation F = sI: no shear, P = K tr(E) s I, the St.Venant–Kirchhoff pressure
        // with λ → K (for which StVK's 2μE would add 2μ(s² − 1)/2 s).
        let hy = model();
        let l = lame();
        let s = 1.2;
        let f = Matrix3::from_diagonal_element(s);
        let tr_e = 1.5 * (s * s - 1.0);
        let p = hy.stress(&f, &Matrix3::identity());
        let k = l.lambda + 2.0 * l.mu / 3.0;
        assert!((p - Matrix3::from_diagonal_element(k * tr_e * s)).norm() < 1e-9 * p.norm());
        let stvk = StVenantKirchhoff::new(Lame { mu: 0.0, lambda: k });
        assert!((stvk.pk1(&f) - p).norm() < 1e-9 * p.norm());
        // Volume-preserving stretch diag(a, 1/a, 1) turned by R: the shear stress is the
        // corotated 2μ R dev(S); the volumetric part is K tr(E) F.
        let a: f64 = 1.3;
        let stretch = Matrix3::from_diagonal(&Vector3::new(a, 1.0 / a, 1.0));
        let r = nalgebra::Rotation3::from_euler_angles(0.4, 0.1, -0.7).into_inner();
        let f = r * stretch;
        let tr_e = 0.5 * (a * a + 1.0 / (a * a) + 1.0 - 3.0);
        let dev = stretch - Matrix3::from_diagonal_element(stretch.trace() / 3.0);
        let expected = k * tr_e * f + 2.0 * l.mu * r * dev;
        let p = hy.stress(&f, &polar::rotation(&f));
        assert!((p - expected).norm() < 1e-9 * p.norm());
    }
}
