//! The exact constraints' forces of the last step carried into the next as loads
//! (Liesenfeld & Stolfi §3.2–3.3: the constraint force `C = −G λ` is a force on the system
//! like any other; here the last step's `λ` is taken as the prediction of this step's).
//!
//! Why: the world holds exact constraints by projecting each step's end (`exact.rs`), so
//! within an implicit step a constrained point does not feel its constraint. For a point of a
//! dynamic rigid core ([`crate::constraint::rigid`]) that is costly: a pinned core falls for
//! the whole step with its skin, then the projection moves the core back as one rigid body
//! and leaves the skin strained by the difference — elastic energy no force did work for
//! (first order in `dt`; the pinned bar of `tests/core_constraints.rs` gained 1.8 J of an 8 J
//! swing at dt = 10 ms with linearized backward Euler). With the last step's force as a load,
//! the body moves within the step as the constraint drives it, and the projection only
//! corrects the change of the force over one step.
//!
//! How: a constraint's force `F` on its point (and `−F` on a link's second point) is shared
//! over the point's vertices by their weights; each share is a force on the rigid core of its
//! vertex: the core's vertices get the accelerations the rigid body would get,
//! `f_i = m_i (F/M + α × (x_i − c))` with `α = I⁻¹ ((p − c) × F)` (`c`, `I` the core's
//! centre of mass and inertia at the try's start), so the loads sum to `F`, their torque about
//! `c` is `(p − c) × F`, and they strain no core. The loads are dead loads for the step; the
//! reported constraint force is the load plus the projection's correction (so it stays all
//! the constraint did: the pinned bar's momentum changes by it and its weight to 1e-6).
//!
//! Which constraints: those whose points all lie on dynamic cores
//! (`World::carry_constraint_forces`), from their third step on, and only with
//! [`crate::constraint::ExactSettings::carry_core_forces`]. A load on a soft vertex made a
//! core linked to a soft cube diverge (the projection corrects a light vertex with its own
//! `1/m`, while within the solve the skin holds it: the lagged force then grew step by step);
//! on a core the loop contracts (the solve moves the core less than the projection's rigid
//! mobility says, so each correction is a fraction of the force's change). It is not on by
//! default because a lagged force is out of phase with fast skin vibration: a core on a
//! hinge thrown with a spin diverged within two steps of its hinge forces being carried.

use super::World;
use crate::time::BodyInputs;
use nalgebra::{Matrix3, Vector3};

impl World {
    /// Fills each body's step loads ([`BodyInputs::loads`]) with its external forces and the
    /// carried constraint forces; a body without carried forces keeps `has_loads = false`.
    pub(super) fn load_carried_forces(&mut self) {
        for input in &mut self.inputs {
            input.has_loads = false;
        }
        let (exact, bodies, rigid) = (&self.exact, &self.bodies, &self.rigid);
        let (inputs, per_core) = (&mut self.inputs, &mut self.core_loads);
        per_core.clear();
        per_core.resize(rigid.len(), (Vector3::zeros(), Vector3::zeros()));
        let mut any = false;
        for (c, f) in exact.carried() {
            if *f == Vector3::zeros() {
                continue;
            }
            any = true;
            for (p, sign) in c.points().zip([1.0, -1.0]) {
                let x = &bodies[p.body].x;
                for k in (0..4).filter(|&k| p.w[k] != 0.0) {
                    let (v, share) = (p.vertices[k], sign * p.w[k] * f);
                    match exact.core_of(p.body, v) {
                        // Force and torque about the origin, moved to the centre below.
                        Some(core) => {
                            per_core[core].0 += share;
                            per_core[core].1 += x[v as usize].cross(&share);
                        }
                        // Not reached (only points on cores carry a force); were it, the
                        // share would act on its vertex, so the reported force stays exact.
                        None => begin(&mut inputs[p.body]).loads[v as usize] += share,
                    }
                }
            }
        }
        if !any {
            return;
        }
        for ((b, core), (force, torque)) in rigid.iter().zip(per_core.iter()) {
            if *force == Vector3::zeros() && *torque == Vector3::zeros() {
                continue;
            }
            let (x, m) = (&bodies[*b].x, &bodies[*b].mass.lumped);
            let vertices = core.vertices();
            let mass: f64 = vertices.iter().map(|&v| m[v as usize]).sum();
            let c: Vector3<f64> = vertices
                .iter()
                .map(|&v| m[v as usize] * x[v as usize])
                .sum::<Vector3<f64>>()
                / mass;
            let mut inertia = Matrix3::zeros();
            for &v in vertices {
                let r = x[v as usize] - c;
                inertia +=
                    m[v as usize] * (Matrix3::identity() * r.norm_squared() - r * r.transpose());
            }
            // A core of collinear vertices is refused when built, so `I` is invertible.
            let Some(inv) = inertia.try_inverse() else {
                continue;
            };
            let alpha = inv * (torque - c.cross(force));
            let a0 = force / mass;
            let loads = &mut begin(&mut inputs[*b]).loads;
            for &v in vertices {
                let i = v as usize;
                loads[i] += m[i] * (a0 + alpha.cross(&(x[i] - c)));
            }
        }
    }
}

/// Starts a body's step loads from its external forces (once per try).
fn begin(input: &mut BodyInputs) -> &mut BodyInputs {
    if !input.has_loads {
        if input.has_external {
            input.loads.copy_from_slice(&input.external);
        } else {
            input.loads.fill(Vector3::zeros());
        }
        input.has_loads = true;
    }
    input
}
