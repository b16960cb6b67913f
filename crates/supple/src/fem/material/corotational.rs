//! Corotational linear elasticity: per-element rotation `R` from the polar decomposition of
//! the deformation gradient, forces `f = −R K_e (Rᵀx − x₀)` (Müller et al. 2002 eq. 9 with the
//! element's own rotation; Hauth & Straßer 2004 §4.3).
//!
//! Element-wise: `P = R σ(RᵀF)` with `σ` the linear stress. Because `S = RᵀF` is symmetric and
//! `σ(S)` commutes with `S`, this `P` is the exact gradient of `Ψ(F) = Ψ_lin(RᵀF)`, so the model
//! has an energy. Two tangents are offered:
//! - `Rotated`: `R K_e Rᵀ`, the rotation's derivative ignored (Müller; always positive
//!   semi-definite, the stable choice for implicit steps);
//! - `Exact`: the full derivative including `dR` (McAdams et al. 2011 form), possibly
//!   indefinite under compression.

use super::{add_rotated_linear_blocks, linear_energy_density, linear_stress, ForceModel, Lame};
use crate::fem::polar;
use crate::fem::ElementSet;
use crate::linalg::{par, BlockCsr};
use nalgebra::{Matrix3, Vector3};

/// Which tangent stiffness the corotational model assembles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CorotationalTangent {
    #[default]
    Rotated,
    Exact,
}

#[derive(Debug, Clone)]
pub struct Corotational {
    pub lame: Lame,
    pub tangent: CorotationalTangent,
    /// Per-element rotations from the last `update_frames`.
    rotations: Vec<Matrix3<f64>>,
}

impl Corotational {
    pub fn new(lame: Lame, tangent: CorotationalTangent, n_elements: usize) -> Self {
        Self {
            lame,
            tangent,
            rotations: vec![Matrix3::identity(); n_elements],
        }
    }

    pub fn rotations(&self) -> &[Matrix3<f64>] {
        &self.rotations
    }
}

/// First Piola–Kirchhoff stress `P = R σ(RᵀF)`.
pub(crate) fn stress(f: &Matrix3<f64>, r: &Matrix3<f64>, lame: Lame) -> Matrix3<f64> {
    r * linear_stress(&(r.transpose() * f), lame)
}

/// Directional derivative `dP[dF]` of `P(F) = R(F) σ(R(F)ᵀF)`.
///
/// With `S = RᵀF` and `W = RᵀdR` (skew, axial vector `w`): `RᵀdF − dFᵀR = WS + SW`, whose
/// axial vector is `(tr S · I − S) w`; then `dP = R [W σ(S) + σ'(−WS + RᵀdF)]`.
pub(crate) fn stress_differential(
    f: &Matrix3<f64>,
    r: &Matrix3<f64>,
    lame: Lame,
    df: &Matrix3<f64>,
) -> Matrix3<f64> {
    let s = r.transpose() * f;
    let rt_df = r.transpose() * df;
    let a = rt_df - rt_df.transpose();
    let axial = Vector3::new(a[(2, 1)], a[(0, 2)], a[(1, 0)]);
    let m = Matrix3::from_diagonal_element(s.trace()) - s;
    // A singular (trS·I − S) happens only for degenerate or inverted elements: drop dR there.
    let w = m.try_inverse().map_or_else(Vector3::zeros, |mi| mi * axial);
    let w_mat = w.cross_matrix();
    let dg = -w_mat * s + rt_df;
    let dsym = 0.5 * (dg + dg.transpose());
    let dsigma = 2.0 * lame.mu * dsym + Matrix3::from_diagonal_element(lame.lambda * dg.trace());
    r * (w_mat * linear_stress(&s, lame) + dsigma)
}

impl ForceModel for Corotational {
    fn name(&self) -> &'static str {
        "corotational"
    }

    fn update_frames(&mut self, elems: &ElementSet, x: &[Vector3<f64>]) {
        // Warm start from the element's last rotation: it turns little in one step, and the
        // Newton iteration on the rotation then needs 2–3 steps instead of Higham's 5–8.
        par::for_each_mut(&mut self.rotations, |e, r| {
            *r = polar::rotation_near(&elems.deformation_gradient(e, x), r);
        });
    }

    fn add_forces(&self, elems: &ElementSet, x: &[Vector3<f64>], f: &mut [Vector3<f64>]) {
        elems.scatter_forces(f, |e| {
            let p = stress(
                &elems.deformation_gradient(e, x),
                &self.rotations[e],
                self.lame,
            );
            elems.stress_forces(e, &p)
        });
    }

    fn add_tangent(&self, elems: &ElementSet, x: &[Vector3<f64>], scale: f64, k: &mut BlockCsr) {
        match self.tangent {
            CorotationalTangent::Rotated => elems.scatter_blocks(k, |e, sink| {
                add_rotated_linear_blocks(
                    sink,
                    &elems.grad[e],
                    &self.rotations[e],
                    elems.volume[e],
                    self.lame,
                    scale,
                )
            }),
            CorotationalTangent::Exact => elems.scatter_blocks(k, |e, sink| {
                let f = elems.deformation_gradient(e, x);
                let r = &self.rotations[e];
                let g = &elems.grad[e];
                let s = scale * elems.volume[e];
                let mut blocks = [[Matrix3::<f64>::zeros(); 4]; 4];
                for b in 0..4 {
                    for c in 0..3 {
                        // dF for a unit move of vertex b along axis c: e_c ⊗ g_b.
                        let df = Vector3::ith(c, 1.0) * g[b].transpose();
                        let dp = stress_differential(&f, r, self.lame, &df);
                        for a in 0..4 {
                            blocks[a][b].set_column(c, &(s * (dp * g[a])));
                        }
                    }
                }
                for (a, row) in blocks.iter().enumerate() {
                    for (b, block) in row.iter().enumerate() {
                        sink.add(a, b, block);
                    }
                }
            }),
        }
    }

    fn energy(&self, elems: &ElementSet, x: &[Vector3<f64>]) -> Option<f64> {
        Some(elems.sum(|e| {
            let g = self.rotations[e].transpose() * elems.deformation_gradient(e, x);
            elems.volume[e] * linear_energy_density(&g, self.lame)
        }))
    }

    /// `σ = P Fᵀ / det F` with `P = R σ_lin(RᵀF)`; for an inverted or degenerate element
    /// (`det F ≤ 0`), where that is meaningless, the rotated linear stress `R σ_lin Rᵀ`.
    fn cauchy_stress(
        &self,
        elems: &ElementSet,
        x: &[Vector3<f64>],
        out: &mut [Matrix3<f64>],
    ) -> bool {
        par::for_each_mut(&mut out[..elems.len()], |e, s| {
            let f = elems.deformation_gradient(e, x);
            let r = &self.rotations[e];
            let det = f.determinant();
            *s = if det > 1e-12 {
                stress(&f, r, self.lame) * f.transpose() / det
            } else {
                r * linear_stress(&(r.transpose() * f), self.lame) * r.transpose()
            };
        });
        true
    }
}
