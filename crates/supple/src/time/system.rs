//! The dynamic system every integrator sees: `M a = f(x, v) + M g` with
//! `f(x, v) = f_el(x) − D_visc(x) v − α M v − β K(x) v` (elastic model, the body's
//! strain-rate damping or viscosity, Rayleigh damping) plus the body's loads
//! ([`crate::load`]) and per-component constraints ([`crate::constraint`]), and the step's
//! inputs ([`StepInputs`]: held vertices, anchor and point springs, external forces).
//!
//! Integrators are written only against this (Vega FEM's separation of force model and
//! integrator): they never know which material or dissipation a body has, nor who holds,
//! grabs or pushes it.

use super::inputs::StepInputs;
use crate::body::Body;
use crate::fem::MassKind;
use crate::linalg::{par, BlockCsr};
use nalgebra::{Matrix3, Vector3};

/// Workspaces for evaluating a body's forces and Jacobians (allocated once per body).
#[derive(Debug)]
pub struct System {
    /// Stiffness `K(x)` for the Rayleigh `β K v` term (allocated and assembled only when
    /// `β > 0`).
    k: Option<BlockCsr>,
    tmp: Vec<Vector3<f64>>,
}

impl System {
    pub fn new(body: &Body) -> Self {
        Self {
            k: (body.damping.beta > 0.0).then(|| BlockCsr::zeros(body.elems.pattern.clone())),
            tmp: vec![Vector3::zeros(); body.n_vertices()],
        }
    }

    /// Writes the total force `f(x, v) + M g` into `out` (fixed vertices included; callers
    /// zero what they must). When `refresh_frames`, the model's frames are first updated at
    /// `x` (pass false to reuse frames already computed at this `x`).
    #[allow(clippy::too_many_arguments)]
    pub fn forces(
        &mut self,
        body: &mut Body,
        inputs: &StepInputs,
        x: &[Vector3<f64>],
        v: &[Vector3<f64>],
        gravity: &Vector3<f64>,
        refresh_frames: bool,
        out: &mut [Vector3<f64>],
    ) {
        if refresh_frames {
            body.model.update_frames(&body.elems, x);
        }
        let lumped = &body.mass.lumped;
        par::for_each_mut(out, |i, o| *o = lumped[i] * gravity);
        body.model.add_forces(&body.elems, x, out);
        if let Some(visc) = &body.viscosity {
            visc.add_forces(&body.elems, x, v, out);
        }
        add_input_forces(inputs, x, out);
        for s in inputs.springs {
            s.add_velocity_forces(v, out);
        }
        body.loads.add_forces(x, out);
        let (alpha, beta) = (body.damping.alpha, body.damping.beta);
        if alpha > 0.0 {
            body.mass.mul_vec(&body.elems, v, &mut self.tmp);
            let tmp = &self.tmp;
            par::for_each_mut(out, |i, o| *o -= alpha * tmp[i]);
        }
        if beta > 0.0 {
            // Allocated here only for a β set after the System was built.
            let k = self
                .k
                .get_or_insert_with(|| BlockCsr::zeros(body.elems.pattern.clone()));
            k.set_zero();
            body.model.add_tangent(&body.elems, x, 1.0, k);
            k.mul_vec(v, &mut self.tmp);
            let tmp = &self.tmp;
            par::for_each_mut(out, |i, o| *o -= beta * tmp[i]);
        }
    }

    /// The force terms that do not depend on the velocity, added to `out`: the elastic
    /// force `f_el(x)` (frames refreshed at `x` when `refresh_frames`), the loads, and the
    /// inputs' anchors, external forces and point springs' stiffness part. Gravity is the
    /// caller's. Static solves, and implicit schemes that take every damping term through
    /// their matrix, use this.
    pub fn position_forces(
        &self,
        body: &mut Body,
        inputs: &StepInputs,
        x: &[Vector3<f64>],
        refresh_frames: bool,
        out: &mut [Vector3<f64>],
    ) {
        if refresh_frames {
            body.model.update_frames(&body.elems, x);
        }
        body.model.add_forces(&body.elems, x, out);
        add_input_forces(inputs, x, out);
        body.loads.add_forces(x, out);
    }

    /// Sets `a = cm M + cd D(x) + ck K(x)` with `D = α M + β K + D_visc` the damping matrix
    /// and `K = −∂f_el/∂x` (frames as last refreshed). Backward Euler's Newton matrix is
    /// `cm = 1, cd = h, ck = h²`. Follower loads add the symmetric part of their stiffness
    /// (scaled by `ck`), the inputs' anchors and point springs their stiffness (`ck`) and
    /// damping (`cd`), and partially held vertices are filtered
    /// ([`crate::constraint::Constraints::filter_matrix`]).
    #[allow(clippy::too_many_arguments)]
    pub fn assemble(
        &self,
        body: &Body,
        inputs: &StepInputs,
        x: &[Vector3<f64>],
        cm: f64,
        cd: f64,
        ck: f64,
        a: &mut BlockCsr,
    ) {
        a.set_zero();
        let (alpha, beta) = (body.damping.alpha, body.damping.beta);
        let k_scale = ck + cd * beta;
        if k_scale != 0.0 {
            body.model.add_tangent(&body.elems, x, k_scale, a);
        }
        if cd != 0.0 {
            if let Some(visc) = &body.viscosity {
                visc.add_matrix(&body.elems, x, cd, a);
            }
        }
        body.mass.add_to(a, cm + cd * alpha);
        if ck != 0.0 {
            if let Some(anchors) = inputs.active_anchors() {
                anchors.add_to(a, ck);
            }
            body.loads.add_tangent(x, ck, true, a);
        }
        for s in inputs.springs {
            s.add_to(a, ck, cd);
        }
        body.constraints.filter_matrix(a);
    }

    /// `Some(v)` when `assemble` gives the same matrix for every `x` while the model's
    /// [`tangent_version`](crate::fem::ForceModel::tangent_version) is `v` (so it and its
    /// factor can be kept while the coefficients and the version do not change).
    pub fn matrix_version(body: &Body, inputs: &StepInputs) -> Option<u64> {
        let version = body.model.tangent_version()?;
        let varies = body.viscosity.is_some()
            || inputs.changes_matrix()
            || body.loads.has_follower()
            || (body.constraints.any_partial() && body.constraints.any_release());
        (!varies).then_some(version)
    }

    /// The vertex rotations `B = diag(R_i)` when [`assemble`](Self::assemble) gives
    /// `B A⁰ Bᵀ` with `A⁰` independent of `x` ([`assemble_rest`](Self::assemble_rest)): the
    /// model's tangent is `B K⁰ Bᵀ` ([`crate::fem::ForceModel::frame_tangent`]) and every
    /// other term of the matrix is a multiple of the identity per block, which the frames
    /// leave alone: lumped mass (`R_i m_i I R_iᵀ = m_i I`), Rayleigh damping, no viscosity,
    /// anchors, springs, follower loads or partially held vertices. Then `A v = b` is
    /// `A⁰ (Bᵀ v) = Bᵀ b`, and PCG in the frames runs, in exact arithmetic, the iterates of
    /// PCG on `A`: the block Jacobi and SSOR preconditioners of `B A⁰ Bᵀ` are `B P⁰ Bᵀ`
    /// with `P⁰` those of `A⁰`, and `B` keeps every norm.
    pub fn frames<'a>(body: &'a Body, inputs: &StepInputs) -> Option<&'a [Matrix3<f64>]> {
        let frames = body.model.frame_tangent()?;
        (body.mass.kind == MassKind::Lumped
            && body.viscosity.is_none()
            && !inputs.changes_matrix()
            && !body.loads.has_follower()
            && !body.constraints.any_partial())
        .then_some(frames.rotations)
    }

    /// Sets `a = (cm + cd α) M + (ck + cd β) K⁰`, the matrix `A⁰` of [`frames`](Self::frames)
    /// (for a body whose `frames` is `Some`).
    pub fn assemble_rest(body: &Body, cm: f64, cd: f64, ck: f64, a: &mut BlockCsr) {
        let (alpha, beta) = (body.damping.alpha, body.damping.beta);
        let k_scale = ck + cd * beta;
        match body.model.frame_tangent() {
            Some(frames) if k_scale != 0.0 => {
                let rest = &frames.rest.values;
                par::for_each_mut(&mut a.values, |s, v| *v = k_scale * rest[s]);
            }
            _ => a.set_zero(),
        }
        body.mass.add_to(a, cm + cd * alpha);
    }

    /// Total energy `kinetic + elastic + gravitational + load potential` of the body's
    /// state, where the model has an energy and the loads a potential.
    pub fn total_energy(body: &mut Body, gravity: &Vector3<f64>) -> Option<f64> {
        let elastic = body.elastic_energy()?;
        let loads = body.loads.potential(&body.x, &body.mesh.positions)?;
        Some(body.kinetic_energy() + elastic + body.potential_energy(gravity) + loads)
    }
}

/// `out +=` the inputs' anchor forces, external forces and the position part of the point
/// springs ([`super::inputs::PointSpring::add_position_forces`]).
pub(crate) fn add_input_forces(inputs: &StepInputs, x: &[Vector3<f64>], out: &mut [Vector3<f64>]) {
    if let Some(anchors) = inputs.active_anchors() {
        anchors.add_forces(x, out);
    }
    if let Some(external) = inputs.external {
        for (o, f) in out.iter_mut().zip(external) {
            *o += f;
        }
    }
    for s in inputs.springs {
        s.add_position_forces(x, out);
    }
}

/// Sets the entries of fixed vertices to zero (see [`Body::constraints`] for partially held
/// ones).
pub fn zero_fixed(fixed: &[bool], v: &mut [Vector3<f64>]) {
    for (vi, &f) in v.iter_mut().zip(fixed) {
        if f {
            *vi = Vector3::zeros();
        }
    }
}
