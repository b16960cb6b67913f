//! `fast_corotated`: the corotated linear material stepped by Kugelstadt, Koschier & Bender
//! 2018, "Fast Corotated FEM using Operator Splitting" (Computer Graphics Forum 37(8)).
//!
//! The energy is the corotational model's, `Ψ = μ‖F − R‖² + λ/2 (tr(RᵀF) − 3)²` with `R` the
//! polar rotation of `F` (`μ‖F − R‖² = μ‖S − I‖²`, `tr(RᵀF) − 3 = tr(S − I)`), so forces,
//! energies and stresses for output are exactly [`Corotational`]'s (rotated tangent, polar
//! rotations). What differs is the step: written as an optimization, the stretching term is
//! invariant to rotations and its system matrix is constant, so the time step
//! ([`crate::time::FastCorotatedStep`]) factors it once and iterates local rotations and
//! back-substitutions, with the volume term as a compliant constraint solved by Gauss–Seidel.
//! This model is therefore as much an integrator as a material: a body with it is stepped by
//! that scheme whenever the world's integrator is backward Euler (linearized or Newton), and
//! other integrators refuse it ([`crate::time::IntegratorKind::build`]).

use super::{Corotational, CorotationalSettings, ForceModel, Lame};
use crate::fem::ElementSet;
use crate::linalg::BlockCsr;
use nalgebra::{Matrix3, Vector3};

/// Settings of the operator-splitting step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FastCorotatedSettings {
    /// Local–global iterations per step (rotations, then one back-substitution, then the
    /// volume sweeps). 1 is the paper's Algorithm 2; more converge towards the backward Euler
    /// step of the corotational energy.
    pub iterations: u32,
    /// Gauss–Seidel sweeps over the volume constraints after each back-substitution (the
    /// paper's two).
    pub volume_sweeps: u32,
}

impl Default for FastCorotatedSettings {
    fn default() -> Self {
        Self {
            iterations: 1,
            volume_sweeps: 2,
        }
    }
}

/// The corotational force model under the name `fast_corotated`, carrying the step's
/// settings ([`ForceModel::splitting`]).
#[derive(Debug, Clone)]
pub struct FastCorotatedModel {
    inner: Corotational,
    settings: FastCorotatedSettings,
}

impl FastCorotatedModel {
    pub fn new(lame: Lame, settings: FastCorotatedSettings, elems: &ElementSet) -> Self {
        Self {
            inner: Corotational::new(lame, CorotationalSettings::default(), elems),
            settings,
        }
    }
}

impl ForceModel for FastCorotatedModel {
    fn name(&self) -> &'static str {
        "fast_corotated"
    }
    fn update_frames(&mut self, elems: &ElementSet, x: &[Vector3<f64>]) {
        self.inner.update_frames(elems, x);
    }
    fn begin_step(&mut self) {
        self.inner.begin_step();
    }
    fn add_forces(&self, elems: &ElementSet, x: &[Vector3<f64>], f: &mut [Vector3<f64>]) {
        self.inner.add_forces(elems, x, f);
    }
    fn add_tangent(&self, elems: &ElementSet, x: &[Vector3<f64>], scale: f64, k: &mut BlockCsr) {
        self.inner.add_tangent(elems, x, scale, k);
    }
    fn energy(&self, elems: &ElementSet, x: &[Vector3<f64>]) -> Option<f64> {
        self.inner.energy(elems, x)
    }
    fn tangent_version(&self) -> Option<u64> {
        self.inner.tangent_version()
    }
    fn cauchy_stress(
        &self,
        elems: &ElementSet,
        x: &[Vector3<f64>],
        out: &mut [Matrix3<f64>],
    ) -> bool {
        self.inner.cauchy_stress(elems, x, out)
    }
    fn splitting(&self) -> Option<FastCorotatedSettings> {
        Some(self.settings)
    }
}
