//! Corotational linear elasticity: per-element rotation `R` extracted from the deformation
//! gradient, forces `f = −R K_e (Rᵀx − x₀)` (Müller et al. 2002 eq. 9 with the element's own
//! rotation; Hauth & Straßer 2004 §4.4, eq. 4.12 and 5.6).
//!
//! Element-wise: `P = R σ(RᵀF)` with `σ` the linear stress. How `R` is found is a setting
//! ([`RotationMethod`], Hauth & Straßer §4.5):
//! - `Polar` / `Svd`: the polar rotation (warm-started Newton with Higham and SVD fallbacks, or
//!   the SVD alone). Then `S = RᵀF` is symmetric and `σ(S)` commutes with `S`, so `P` is the
//!   exact gradient of `Ψ(F) = Ψ_lin(RᵀF)`: the model has an energy.
//! - `Qr`: `R = Q(Ds) Q(Dm)ᵀ`, the rotation of the QR decomposition (Gram–Schmidt on the
//!   element's edges `x₁ − x₀`, `x₂ − x₀` in vertex order) relative to the same frame at rest
//!   (SOFA's "large"). Equivalently `Q(F Q_m) Q_mᵀ` with `Q_m = Q(Dm)`: the QR rotation of `F`
//!   written in the element's rest edge frame. `S = RᵀF` is then not symmetric and `Sσ(S)` is
//!   not, so the `dR` term of `dΨ` does not vanish and `P` is *not* the gradient of
//!   `Ψ_lin(RᵀF)`: the forces do work around closed paths. [`energy`](ForceModel::energy) is
//!   `None` for `Qr`, and the `Exact` tangent falls back to `Rotated` (the true Jacobian is not
//!   symmetric, and the linear solvers need a symmetric matrix).
//!
//! Two tangents are offered:
//! - `Rotated`: `R K_e Rᵀ`, the rotation's derivative ignored (Müller; always positive
//!   semi-definite, the stable choice for implicit steps);
//! - `Exact`: the full derivative including `dR` (McAdams et al. 2011 form), possibly
//!   indefinite under compression.
//!
//! Update rate (Hauth & Straßer §7.2): with `update_every = N` the rotations are recomputed
//! during every N-th world step (counted by `begin_step`; the first step always refreshes, as
//! does every call before the first `begin_step`) and kept through the steps in between. With frames held fixed, `P = R σ(RᵀF)` is the exact gradient of `Ψ_lin(RᵀF)` at
//! that fixed `R`, whose exact Hessian is `R K_e Rᵀ`: for `N > 1` the `Exact` tangent is
//! therefore `R K_e Rᵀ` too (the `dR` term describes a rotation that follows `F`, which the
//! kept rotations do not). Energies and stresses for output do not refresh frames: with
//! `update_every = 1` they use each element's polar rotation of the given `x`.

use super::hyperelastic::{add_pk1_derivative_blocks, Pk1Derivative};
use super::invertible;
use super::{
    linear_energy_density, linear_stress, CorotationalSettings, ForceModel, Lame, RotationMethod,
};
use crate::fem::gathered::RotatedLinearBlocks;
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

/// Corotational linear elasticity (Müller et al. 2002): linear elasticity in each element's
/// rotated frame, so a rigid rotation costs no energy, where the linear model's grows with the
/// angle:
///
/// ```
/// use supple::fem::ForceModel;
/// use supple::nalgebra::Rotation3;
/// use supple::prelude::*;
/// let mesh = || box_grid(&BoxGrid { cells: [1, 1, 1], cell_size: Vector3::repeat(0.1),
///     origin: Vector3::zeros(), split: TetSplit::Five });
/// let turn = Rotation3::from_axis_angle(&Vector3::z_axis(), 0.5);
/// let energy = |desc: BodyDesc| -> Result<f64, BuildError> {
///     let mut body = desc.build()?;
///     let x: Vec<_> = body.mesh.positions.iter().map(|p| turn * p).collect();
///     body.model.update_frames(&body.elems, &x);
///     Ok(body.model.energy(&body.elems, &x).unwrap_or(f64::NAN))
/// };
/// let (corotational, linear) = (energy(BodyDesc::of(mesh()).corotational())?,
///     energy(BodyDesc::of(mesh()).linear())?);
/// assert!(corotational.abs() < 1e-9 * linear, "{corotational} against {linear}");
/// # Ok::<(), BuildError>(())
/// ```
#[derive(Debug, Clone)]
pub struct Corotational {
    pub lame: Lame,
    settings: CorotationalSettings,
    /// Per-element rotations from the last refresh in `update_frames`.
    rotations: Vec<Matrix3<f64>>,
    /// `Q(Dm)` of each element (the rest edge frame); only for [`RotationMethod::Qr`].
    rest_frames: Vec<Matrix3<f64>>,
    /// Calls of `update_frames` so far.
    /// World steps begun (see `begin_step`), and whether this step keeps its frames.
    steps: u64,
    frozen: bool,
    /// Refreshes of `rotations` so far: the version of the `Rotated` tangent.
    refreshes: u64,
    /// The `Rotated` tangent's assembler (slot by slot, `fem::gathered`).
    blocks: RotatedLinearBlocks,
}

impl Corotational {
    /// The model for the elements of `elems`. `settings.update_every = 0` is taken as 1.
    pub fn new(lame: Lame, settings: CorotationalSettings, elems: &ElementSet) -> Self {
        let rest_frames = if settings.rotation == RotationMethod::Qr {
            elems
                .dm_inv
                .iter()
                .map(|dm_inv| {
                    // Validated meshes have non-degenerate tets, so Dm has a frame.
                    dm_inv
                        .try_inverse()
                        .and_then(|dm| polar::qr_rotation(&dm))
                        .unwrap_or_else(Matrix3::identity)
                })
                .collect()
        } else {
            Vec::new()
        };
        Self {
            lame,
            settings: CorotationalSettings {
                update_every: settings.update_every.max(1),
                ..settings
            },
            rotations: vec![Matrix3::identity(); elems.len()],
            rest_frames,
            steps: 0,
            frozen: false,
            refreshes: 0,
            blocks: RotatedLinearBlocks::new(elems),
        }
    }

    pub fn settings(&self) -> &CorotationalSettings {
        &self.settings
    }

    pub fn rotations(&self) -> &[Matrix3<f64>] {
        &self.rotations
    }

    /// The tangent actually assembled: `Exact` needs rotations that follow `F` (refreshed at
    /// every call) and forces that are an energy gradient (not `Qr`); otherwise `Rotated`.
    pub fn effective_tangent(&self) -> CorotationalTangent {
        let exact_possible =
            self.settings.rotation != RotationMethod::Qr && self.settings.update_every == 1;
        match self.settings.tangent {
            CorotationalTangent::Exact if exact_possible => CorotationalTangent::Exact,
            _ => CorotationalTangent::Rotated,
        }
    }
}

crate::isa::avx2_or_baseline! {
    /// The forces `f_a = −V P g_a` of element `e` at `x` with `P = R σ(RᵀF)`: compiled for the
    /// baseline and for AVX2, chosen at run time ([`crate::isa`]; the same bits).
    fn element_forces(
        elems: &ElementSet,
        e: usize,
        x: &[Vector3<f64>],
        r: &Matrix3<f64>,
        lame: Lame,
    ) -> [Vector3<f64>; 4] {
        elems.stress_forces(e, &stress(&elems.deformation_gradient(e, x), r, lame))
    }
}

/// First Piola–Kirchhoff stress `P = R σ(RᵀF)`.
#[inline(always)]
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

impl Corotational {
    /// The rotation energies and stresses use for element `e` at deformation `f`: the kept
    /// frame when rotations are refreshed less than every step (the model simulated is then
    /// the one with kept frames), else the polar rotation of `f` itself, so that output does
    /// not depend on when frames were last refreshed.
    fn output_rotation(&self, e: usize, f: &Matrix3<f64>) -> Matrix3<f64> {
        match self.settings.rotation {
            _ if self.settings.update_every > 1 => self.rotations[e],
            RotationMethod::Polar => polar::rotation_near(f, &self.rotations[e]),
            RotationMethod::Svd | RotationMethod::SvdInvertible => polar::svd_rotation(f),
            RotationMethod::Qr => self.rotations[e],
        }
    }
}

impl ForceModel for Corotational {
    fn name(&self) -> &'static str {
        "corotational"
    }

    fn begin_step(&mut self) {
        self.frozen = !self
            .steps
            .is_multiple_of(u64::from(self.settings.update_every));
        self.steps += 1;
    }

    fn update_frames(&mut self, elems: &ElementSet, x: &[Vector3<f64>]) {
        if self.frozen {
            return;
        }
        self.refreshes += 1;
        match self.settings.rotation {
            // Warm start from the element's last rotation: it turns little in one step, and
            // the Newton iteration on the rotation then needs 2–3 steps instead of Higham's 5–8.
            RotationMethod::Polar => polar::update_rotations_near(&mut self.rotations, |e| {
                elems.deformation_gradient(e, x)
            }),
            RotationMethod::Svd | RotationMethod::SvdInvertible => {
                par::for_each_mut(&mut self.rotations, |e, r| {
                    *r = polar::svd_rotation(&elems.deformation_gradient(e, x));
                })
            }
            RotationMethod::Qr => {
                let rest = &self.rest_frames;
                par::for_each_mut(&mut self.rotations, |e, r| {
                    let [a, b, c, d] = elems.tets[e].map(|i| x[i as usize]);
                    let ds = Matrix3::from_columns(&[b - a, c - a, d - a]);
                    // A collapsed element (first two edges parallel) has no edge frame: take
                    // the polar rotation, which the SVD gives for any F.
                    *r = match polar::qr_rotation(&ds) {
                        Some(q) => q * rest[e].transpose(),
                        None => polar::svd_rotation(&(ds * elems.dm_inv[e])),
                    };
                });
            }
        }
    }

    /// `R K_e Rᵀ` depends on the rotations alone: its version is their refresh count (with
    /// `update_every > 1` the steps between refreshes keep the matrix). The `Exact` tangent
    /// depends on `x`.
    fn tangent_version(&self) -> Option<u64> {
        (self.effective_tangent() == CorotationalTangent::Rotated).then_some(self.refreshes)
    }

    fn add_forces(&self, elems: &ElementSet, x: &[Vector3<f64>], f: &mut [Vector3<f64>]) {
        elems.scatter_forces(f, |e| {
            element_forces(elems, e, x, &self.rotations[e], self.lame)
        });
    }

    fn add_tangent(&self, elems: &ElementSet, x: &[Vector3<f64>], scale: f64, k: &mut BlockCsr) {
        match self.effective_tangent() {
            CorotationalTangent::Rotated => {
                (self.blocks).add(elems, |e| self.rotations[e], self.lame, scale, k)
            }
            CorotationalTangent::Exact
                if self.settings.rotation == RotationMethod::SvdInvertible =>
            {
                // Teran et al. 2005's definite tangent (material::invertible), assembled from
                // its 9×9 dP/dF like a hyperelastic law's.
                elems.scatter_blocks(k, |e, sink| {
                    let (u, s, v) = invertible::signed_svd(&elems.deformation_gradient(e, x));
                    let mut h = Pk1Derivative::zeros();
                    for q in 0..9 {
                        let mut df = Matrix3::zeros();
                        df[(q % 3, q / 3)] = 1.0;
                        let dp = invertible::definite_differential(&u, &s, &v, self.lame, &df);
                        h.column_mut(q).copy_from_slice(dp.as_slice());
                    }
                    add_pk1_derivative_blocks(sink, &elems.dm_inv[e], scale * elems.volume[e], &h);
                })
            }
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

    /// `Σ V Ψ_lin(RᵀF)` with the kept rotations; `None` for `Qr`, whose forces are not the
    /// gradient of any energy (see the module notes).
    fn energy(&self, elems: &ElementSet, x: &[Vector3<f64>]) -> Option<f64> {
        if self.settings.rotation == RotationMethod::Qr {
            return None;
        }
        Some(elems.sum(|e| {
            let f = elems.deformation_gradient(e, x);
            let r = self.output_rotation(e, &f);
            elems.volume[e] * linear_energy_density(&(r.transpose() * f), self.lame)
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
            let r = &self.output_rotation(e, &f);
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fem::material::test_support::{
        deform, force_vs_energy_error, forces, lame, small_mesh, tangent_vs_force_error, Lcg,
    };
    use nalgebra::Rotation3;

    fn model(
        es: &ElementSet,
        rotation: RotationMethod,
        tangent: CorotationalTangent,
        update_every: u32,
    ) -> Corotational {
        let settings = CorotationalSettings {
            tangent,
            rotation,
            update_every,
        };
        Corotational::new(lame(), settings, es)
    }

    fn norm(f: &[Vector3<f64>]) -> f64 {
        f.iter().map(|v| v.norm_squared()).sum::<f64>().sqrt()
    }

    /// Net force and net torque about the origin, relative to `Σ|f_i|` (and `Σ|x_i||f_i|`).
    fn net(x: &[Vector3<f64>], f: &[Vector3<f64>]) -> (f64, f64) {
        let total: Vector3<f64> = f.iter().sum();
        let torque: Vector3<f64> = x.iter().zip(f).map(|(p, fi)| p.cross(fi)).sum();
        let scale: f64 = f.iter().map(|v| v.norm()).sum();
        let tscale: f64 = x.iter().zip(f).map(|(p, fi)| p.norm() * fi.norm()).sum();
        (total.norm() / scale, torque.norm() / tscale)
    }

    #[test]
    fn polar_and_svd_forces_match_the_energy_and_the_exact_tangent() {
        for rotation in [RotationMethod::Polar, RotationMethod::Svd] {
            let mut rng = Lcg(11);
            let m = small_mesh(&mut rng);
            let es = ElementSet::new(&m);
            let mut cor = model(&es, rotation, CorotationalTangent::Exact, 1);
            assert_eq!(cor.effective_tangent(), CorotationalTangent::Exact);
            for _ in 0..3 {
                let x = deform(&m, &mut rng);
                let e1 = force_vs_energy_error(&mut cor, &es, &x);
                let e2 = tangent_vs_force_error(&mut cor, &es, &x);
                assert!(e1 <= 1e-6, "{rotation:?}: force vs energy {e1:e}");
                assert!(e2 <= 1e-6, "{rotation:?}: tangent vs force {e2:e}");
            }
        }
    }

    #[test]
    fn rigid_motion_gives_zero_force_for_every_method() {
        let mut rng = Lcg(5);
        let m = small_mesh(&mut rng);
        let es = ElementSet::new(&m);
        let q = Rotation3::from_euler_angles(0.3, 1.0, -0.6).into_inner();
        let x: Vec<_> = m
            .positions
            .iter()
            .map(|p| q * p + Vector3::new(1.0, 2.0, -3.0))
            .collect();
        let stretch: Vec<_> = m.positions.iter().map(|p| p * 1.01).collect();
        for rotation in [
            RotationMethod::Polar,
            RotationMethod::Svd,
            RotationMethod::Qr,
        ] {
            let mut cor = model(&es, rotation, CorotationalTangent::Rotated, 1);
            let scale = norm(&forces(&mut cor, &es, &stretch));
            let f = norm(&forces(&mut cor, &es, &x));
            assert!(f <= 1e-9 * scale, "{rotation:?}: {f:e} vs {scale:e}");
            assert!(cor.rotations().iter().all(|r| (r - q).norm() < 1e-12));
            if rotation != RotationMethod::Qr {
                assert!(cor.energy(&es, &x).unwrap().abs() < 1e-12 * scale);
            }
        }
    }

    /// QR rotations: zero force under rigid motion, no energy, the exact tangent replaced by
    /// `R K Rᵀ` (exact at a rotated rest state only), and net torques the polar rotation does
    /// not have (`P Fᵀ = R σ(S) Sᵀ Rᵀ` is not symmetric when `S = RᵀF` is not).
    #[test]
    fn qr_has_no_energy_and_falls_back_to_the_rotated_tangent() {
        let mut rng = Lcg(13);
        let m = small_mesh(&mut rng);
        let es = ElementSet::new(&m);
        let mut qr = model(&es, RotationMethod::Qr, CorotationalTangent::Exact, 1);
        assert_eq!(qr.effective_tangent(), CorotationalTangent::Rotated);
        let q = Rotation3::from_euler_angles(0.4, -0.9, 1.7).into_inner();
        let xr: Vec<_> = m.positions.iter().map(|p| q * p).collect();
        assert!(tangent_vs_force_error(&mut qr, &es, &xr) <= 1e-6);
        let x = deform(&m, &mut rng);
        let fd = tangent_vs_force_error(&mut qr, &es, &x);
        let f_qr = forces(&mut qr, &es, &x);
        assert!(qr.energy(&es, &x).is_none());
        let mut polar = model(&es, RotationMethod::Polar, CorotationalTangent::Rotated, 1);
        let f_polar = forces(&mut polar, &es, &x);
        let diff: Vec<_> = f_qr.iter().zip(&f_polar).map(|(a, b)| a - b).collect();
        let rel = norm(&diff) / norm(&f_polar);
        let (qr_force, qr_torque) = net(&x, &f_qr);
        let (_, polar_torque) = net(&x, &f_polar);
        println!(
            "QR: rotated-tangent FD error {fd:.3e}, |f_qr − f_polar|/|f_polar| {rel:.3e}, \
             net torque {qr_torque:.3e} (polar {polar_torque:.3e})"
        );
        assert!(fd > 1e-3 && fd < 0.5, "{fd:e}");
        assert!(rel > 1e-3 && rel < 0.5, "{rel:e}");
        assert!(qr_force < 1e-12 && polar_torque < 1e-10);
        assert!(qr_torque > 1e-4, "{qr_torque:e}");
    }

    /// `update_every = 3`: rotations computed in steps 1, 4, 7 and kept in between (the body
    /// turns to a new rigid orientation before every step; each step evaluates forces twice).
    #[test]
    fn update_every_three_recomputes_in_steps_1_4_7() {
        let mut rng = Lcg(17);
        let m = small_mesh(&mut rng);
        let es = ElementSet::new(&m);
        let turn = |k: usize| Rotation3::from_euler_angles(0.1 * k as f64, 0.2, -0.05).into_inner();
        for rotation in [
            RotationMethod::Polar,
            RotationMethod::Svd,
            RotationMethod::Qr,
        ] {
            let mut cor = model(&es, rotation, CorotationalTangent::Exact, 3);
            assert_eq!(cor.effective_tangent(), CorotationalTangent::Rotated);
            let scale = norm(&forces(
                &mut model(&es, rotation, CorotationalTangent::Rotated, 1),
                &es,
                &m.positions.iter().map(|p| p * 1.01).collect::<Vec<_>>(),
            ));
            for call in 1..=8 {
                let x: Vec<_> = m.positions.iter().map(|p| turn(call) * p).collect();
                cor.begin_step();
                let _ = forces(&mut cor, &es, &x);
                let f = norm(&forces(&mut cor, &es, &x));
                let refreshed = 1 + 3 * ((call - 1) / 3);
                assert!(
                    cor.rotations()
                        .iter()
                        .all(|r| (r - turn(refreshed)).norm() < 1e-12),
                    "{rotation:?} call {call}"
                );
                // Fresh rotations: no force; kept ones: the ghost force of a 0.1 rad turn.
                if call == refreshed {
                    assert!(f <= 1e-9 * scale, "{rotation:?} call {call}: {f:e}");
                } else {
                    assert!(
                        f > 0.1 * scale,
                        "{rotation:?} call {call}: {f:e} vs {scale:e}"
                    );
                }
            }
        }
        // 0 is taken as 1.
        let cor = model(&es, RotationMethod::Polar, CorotationalTangent::Exact, 0);
        assert_eq!(cor.settings().update_every, 1);
        assert_eq!(cor.effective_tangent(), CorotationalTangent::Exact);
    }
}
