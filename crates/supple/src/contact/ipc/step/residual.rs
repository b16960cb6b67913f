//! The coupled step's residual and merit (`step.rs`): `r(u) = ∇ᵤΦ` with the barrier and
//! lagged friction, the incremental potential `Φ` the line search backtracks on, and the
//! momentum scale the residual is measured against.

use super::{zero_fixed, IpcStep};
use crate::body::Body;
use crate::clock::Instant;
use crate::contact::ipc::potential::Obstacles;
use crate::linalg::par;
use crate::time::BodyInputs;
use nalgebra::Vector3;

impl IpcStep {
    /// The incremental potential `Φ(u)` with `∇ᵤΦ = r` at `self.x`, `self.u`:
    /// `½ (u − vⁿ)ᵀ M (u − vⁿ) + Ψ(x) − h uᵀ(M g + F) + ½ h α uᵀ M u + κ/h² B(x) + D(x)`
    /// (Gast et al. 2015's objective divided by h²), when every term of every body has a
    /// potential (an energy-based model; no β damping, viscosity, springs, anchors or loads);
    /// `None` otherwise. Uses `dx` and `mv` as scratch.
    pub(super) fn merit(
        &mut self,
        bodies: &[Body],
        inputs: &[BodyInputs],
        h: f64,
        gravity: &Vector3<f64>,
        eps: f64,
    ) -> Option<f64> {
        let started = Instant::now();
        let phi = self.merit_inner(bodies, inputs, h, gravity, eps);
        self.times.residual_s += started.elapsed().as_secs_f64();
        phi
    }

    fn merit_inner(
        &mut self,
        bodies: &[Body],
        inputs: &[BodyInputs],
        h: f64,
        gravity: &Vector3<f64>,
        eps: f64,
    ) -> Option<f64> {
        let mut phi = 0.0;
        for (b, body) in bodies.iter().enumerate() {
            let view = inputs[b].view();
            if body.damping.beta != 0.0
                || body.viscosity.is_some()
                || view.has_springs()
                || !body.loads.is_empty()
            {
                return None;
            }
            let r = self.mesh.offsets[b]..self.mesh.offsets[b + 1];
            phi += body.model.energy(&body.elems, &self.x[r.clone()])?;
            for i in r.clone() {
                self.dx[i] = self.u[i] - self.v0[i];
            }
            body.mass
                .mul_vec(&body.elems, &self.dx[r.clone()], &mut self.mv[r.clone()]);
            let alpha = body.damping.alpha;
            for (k, i) in r.clone().enumerate() {
                if self.fixed[i] {
                    continue;
                }
                let (u, m) = (self.u[i], body.mass.lumped[k]);
                phi += 0.5 * self.dx[i].dot(&self.mv[i]) - h * m * gravity.dot(&u)
                    + 0.5 * h * alpha * m * u.norm_squared();
                if let Some(f) = view.external {
                    phi -= h * f[k].dot(&u);
                }
            }
            if alpha != 0.0 && body.mass.kind != crate::fem::MassKind::Lumped {
                return None;
            }
        }
        phi += self.cores.energy(&self.x);
        phi += self.kappa / (h * h) * self.set.energy(&self.x);
        if eps > 0.0 {
            phi += self.friction.energy(&self.x0, &self.x, eps);
        }
        Some(phi)
    }

    /// `‖M vⁿ‖ + h ‖M g‖` over the free vertices (lumped masses).
    pub(super) fn momentum_scale(&self, bodies: &[Body], h: f64, gravity: &Vector3<f64>) -> f64 {
        let (mut mv, mut mg) = (0.0, 0.0);
        for (b, body) in bodies.iter().enumerate() {
            let o = self.mesh.offsets[b];
            for (i, m) in body.mass.lumped.iter().enumerate() {
                if !self.fixed[o + i] {
                    mv += (m * self.v0[o + i].norm()).powi(2);
                    mg += (m * gravity.norm()).powi(2);
                }
            }
        }
        (mv.sqrt() + h * mg.sqrt()).max(f64::MIN_POSITIVE)
    }

    /// `g = −r(u)` at `self.x` (see the module notes); returns `‖r‖`. With `eps > 0` and
    /// `friction`, the lagged friction is included. Leaves the barrier stencils (gradients
    /// only) of `self.x` in the contact set.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn eval(
        &mut self,
        bodies: &mut [Body],
        inputs: &[BodyInputs],
        h: f64,
        gravity: &Vector3<f64>,
        obstacles: &Obstacles,
        eps: f64,
        contact: bool,
    ) -> f64 {
        let started = Instant::now();
        for (b, body) in bodies.iter_mut().enumerate() {
            let r = self.mesh.offsets[b]..self.mesh.offsets[b + 1];
            let (x, u) = (&self.x[r.clone()], &self.u[r.clone()]);
            let f = &mut self.g_t[r.clone()];
            self.systems[b].forces(body, &inputs[b].view(), x, u, gravity, true, f);
            let du = &mut self.dx[r.clone()];
            for ((d, ui), vi) in du.iter_mut().zip(u).zip(&self.v0[r.clone()]) {
                *d = ui - vi;
            }
            body.mass.mul_vec(&body.elems, du, &mut self.mv[r.clone()]);
            for i in r.clone() {
                self.g[i] = h * self.g_t[i] - self.mv[i];
            }
        }
        // g = h f − M Δu with f = −∇Ψ: the cores' potential enters as its elastic energy.
        self.cores.add_gradient(&self.x, -h, &mut self.g);
        if contact {
            let kappa_force = self.kappa / (h * h);
            self.set.compute_stencils(&self.x, obstacles, false);
            self.set.add_gradient(-h * kappa_force, &mut self.g);
            if eps > 0.0 && !self.friction.is_empty() {
                self.friction.compute_stencils(&self.x0, &self.x, eps);
                self.friction.add_gradient(-h, &mut self.g);
            }
        }
        zero_fixed(&self.fixed, &mut self.g);
        for (b, body) in bodies.iter().enumerate() {
            body.constraints
                .project(&mut self.g[self.mesh.offsets[b]..self.mesh.offsets[b + 1]]);
        }
        let g = &self.g;
        let norm = par::sum(g.len(), &mut self.partials, |i| g[i].norm_squared()).sqrt();
        self.times.residual_s += started.elapsed().as_secs_f64();
        norm
    }
}
