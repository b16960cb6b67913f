//! The dynamic system every integrator sees: `M a = f(x, v) + M g` with
//! `f(x, v) = f_el(x) − D_visc(x) v − α M v − β K(x) v` (elastic model, the body's
//! strain-rate damping or viscosity, Rayleigh damping) plus contact-spring anchors
//! ([`crate::contact::springs::Anchors`]) and external loads ([`crate::load`]), and fixed
//! vertices and per-component constraints ([`crate::constraint`]).
//!
//! Integrators are written only against this (Vega FEM's separation of force model and
//! integrator): they never know which material or dissipation a body has.

use crate::body::Body;
use crate::linalg::{par, BlockCsr};
use nalgebra::Vector3;

/// Workspaces for evaluating a body's forces and Jacobians (allocated once per body).
#[derive(Debug)]
pub struct System {
    /// Stiffness `K(x)` for the Rayleigh `β K v` term (assembled only when `β > 0`).
    k: BlockCsr,
    tmp: Vec<Vector3<f64>>,
}

impl System {
    pub fn new(body: &Body) -> Self {
        Self {
            k: BlockCsr::zeros(body.elems.pattern.clone()),
            tmp: vec![Vector3::zeros(); body.n_vertices()],
        }
    }

    /// Writes the total force `f(x, v) + M g` into `out` (fixed vertices included; callers
    /// zero what they must). When `refresh_frames`, the model's frames are first updated at
    /// `x` (pass false to reuse frames already computed at this `x`).
    pub fn forces(
        &mut self,
        body: &mut Body,
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
        if body.anchors.enabled() {
            body.anchors.add_forces(x, out);
        }
        body.loads.add_forces(x, out);
        let (alpha, beta) = (body.damping.alpha, body.damping.beta);
        if alpha > 0.0 {
            body.mass.mul_vec(&body.elems, v, &mut self.tmp);
            let tmp = &self.tmp;
            par::for_each_mut(out, |i, o| *o -= alpha * tmp[i]);
        }
        if beta > 0.0 {
            self.k.set_zero();
            body.model.add_tangent(&body.elems, x, 1.0, &mut self.k);
            self.k.mul_vec(v, &mut self.tmp);
            let tmp = &self.tmp;
            par::for_each_mut(out, |i, o| *o -= beta * tmp[i]);
        }
    }

    /// Sets `a = cm M + cd D(x) + ck K(x)` with `D = α M + β K + D_visc` the damping matrix
    /// and `K = −∂f_el/∂x` (frames as last refreshed). Backward Euler's Newton matrix is
    /// `cm = 1, cd = h, ck = h²`. Follower loads add the symmetric part of their stiffness
    /// (scaled by `ck`), and partially held vertices are filtered
    /// ([`crate::constraint::Constraints::filter_matrix`]).
    pub fn assemble(
        &self,
        body: &Body,
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
            body.anchors.add_to(a, ck);
            body.loads.add_tangent(x, ck, true, a);
        }
        body.constraints.filter_matrix(a);
    }

    /// True when `assemble` gives the same matrix for every `x` (so it and its factor can be
    /// kept while the coefficients do not change).
    pub fn matrix_is_constant(body: &Body) -> bool {
        body.model.tangent_is_constant()
            && body.viscosity.is_none()
            && !body.anchors.enabled()
            && !body.loads.has_follower()
            && !(body.constraints.any_partial() && body.constraints.any_release())
    }

    /// Total energy `kinetic + elastic + gravitational + load potential` of the body's
    /// state, where the model has an energy and the loads a potential.
    pub fn total_energy(body: &mut Body, gravity: &Vector3<f64>) -> Option<f64> {
        let elastic = body.elastic_energy()?;
        let loads = body.loads.potential(&body.x, &body.mesh.positions)?;
        Some(body.kinetic_energy() + elastic + body.potential_energy(gravity) + loads)
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
