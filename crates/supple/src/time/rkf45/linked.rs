//! RKF45 for bodies joined by exact links (Liesenfeld & Stolfi 1997 §3.3, eq. 6–8 across
//! bodies): the linked bodies step as one system.
//!
//! Eq. 8, `N M⁻¹ G λ = N M⁻¹ F − ψ`, is one linear system over the coordinates of every body
//! a constraint touches: a link's multiplier depends on the accelerations of both its ends.
//! Each body stepping alone cannot form it — a link between two bodies was then held only by
//! the world's projection after the step, and a body hanging from another fell freely for a
//! whole world step before being yanked back (RKF45 at a 10 ms world step diverged). So the
//! bodies of a linked group share every step size and are advanced stage by stage together:
//! in stage `s` each member's `k_s` is evaluated at its own stage state (forces, mass solve),
//! then one acceleration projection `a ← a + W Nᵀ λ` over all the members' stage
//! accelerations holds every constraint of the group (links and the members' own points,
//! planes, spheres: they share the multiplier system, as eq. 8 has them), before stage `s+1`
//! uses them. A trial is accepted when every member's scaled error is at most 1 (the largest
//! of them drives the controller, [`super::control`]); each member keeps its own tolerances
//! and mass solve.
//!
//! Stepping them as one system, rather than alternating per-body steps with the other body's
//! link force lagged, is what Liesenfeld & Stolfi's formulation is — one `q` for the whole
//! system — and it keeps the step's momentum exchange exact: the multipliers put equal and
//! opposite forces on a link's two ends in every stage, so the pair's momentum changes only
//! by the external forces, to round-off. The price is that the group moves at the step size
//! its stiffest member needs.

use super::control::{self, Trial};
use super::{node, Rkf45, B4};
use crate::body::Body;
use crate::clock::Instant;
use crate::constraint::exact::{ProjectedBodies, Projector, StageBodies};
use crate::constraint::ExactConstraint;
use crate::time::{BodyInputs, Integrator, StepError, StepStats};
use nalgebra::Vector3;

/// One linked group's step: the world's bodies, integrators and step inputs (indexed by
/// body), the group's members (ascending body indices, each stepped by [`Rkf45`] with the same
/// `substeps`), every exact constraint on them (points indexed by world body), the group's
/// projection scratch, and per constraint its impulse over the step (written) and a trial's
/// (scratch).
pub struct LinkedStep<'a> {
    pub bodies: &'a mut [Body],
    pub integrators: &'a mut [Box<dyn Integrator>],
    pub inputs: &'a [BodyInputs],
    pub members: &'a [usize],
    pub constraints: &'a [ExactConstraint],
    pub projector: &'a mut Projector,
    pub gravity: &'a Vector3<f64>,
    /// Per constraint, `Σ h Σ_s b_s λ_s g` over the accepted substeps: the impulse the stage
    /// multipliers gave its first point, weighted as the 4th-order update weights the stages
    /// (so that with the world's projection it accounts for the momentum change exactly).
    pub impulses: &'a mut [Vector3<f64>],
    pub trial_impulses: &'a mut [Vector3<f64>],
}

const NOT_RKF45: &str = "a linked group holds RKF45 bodies only (checked when it is formed)";

fn rk(integrators: &mut [Box<dyn Integrator>], b: usize) -> &mut Rkf45 {
    integrators[b].as_rkf45_mut().expect(NOT_RKF45)
}

impl LinkedStep<'_> {
    /// Advances the group by `dt` (see the module notes); the statistics are the group's
    /// (the same for every member).
    pub fn step(mut self, dt: f64) -> Result<StepStats, StepError> {
        let t0 = Instant::now();
        let mut stats = StepStats {
            solver_converged: true,
            ..StepStats::default()
        };
        self.impulses.fill(Vector3::zeros());
        let mut h = f64::INFINITY;
        for &m in self.members {
            let r = rk(self.integrators, m);
            r.begin(&self.bodies[m], &self.inputs[m].view(), true);
            h = h.min(r.first_step(dt));
        }
        let substeps = rk(self.integrators, self.members[0]).settings.substeps as usize;
        if substeps > 0 {
            control::fixed_steps(&mut self, substeps, dt, &mut stats);
        } else {
            let next = control::adaptive_steps(&mut self, h, dt, &mut stats)?;
            for &m in self.members {
                rk(self.integrators, m).h = Some(next);
            }
        }
        for &m in self.members {
            let r = rk(self.integrators, m);
            let body = &mut self.bodies[m];
            body.x.copy_from_slice(&r.x);
            body.v.copy_from_slice(&r.v);
        }
        stats.forces_s = t0.elapsed().as_secs_f64();
        Ok(stats)
    }
}

impl Trial for LinkedStep<'_> {
    fn trial(&mut self, t_rel: f64, h: f64, control: bool) -> f64 {
        let time = self.inputs[self.members[0]].time;
        self.trial_impulses.fill(Vector3::zeros());
        let mut solved = true;
        for (s, &b) in B4.iter().enumerate() {
            let mut ok = true;
            for &m in self.members {
                let inputs = self.inputs[m].view();
                ok &=
                    rk(self.integrators, m).stage(&mut self.bodies[m], &inputs, s, h, self.gravity);
            }
            if ok {
                let mut view = GroupStage {
                    integrators: self.integrators,
                    s,
                };
                let t = time + t_rel + node(s) * h;
                ok = (self.projector)
                    .project_accelerations(self.constraints, &mut view, t)
                    .is_ok();
                if ok {
                    (self.projector).add_forces(h * b, self.trial_impulses);
                }
            }
            solved &= ok;
        }
        let mut err = 0.0_f64;
        for &m in self.members {
            let e = rk(self.integrators, m).combine(h, solved, control);
            // `max` drops NaN; `combine` reports a non-finite stage as ∞.
            err = err.max(e);
        }
        err
    }

    fn accept(&mut self) {
        for &m in self.members {
            rk(self.integrators, m).accept();
        }
        for (i, t) in self.impulses.iter_mut().zip(&*self.trial_impulses) {
            *i += t;
        }
    }

    fn reject(&mut self) {
        for &m in self.members {
            rk(self.integrators, m).rejected += 1;
        }
    }
}

/// Stage `s` of the members, by world body index, as the acceleration projection sees it.
struct GroupStage<'a> {
    integrators: &'a mut [Box<dyn Integrator>],
    s: usize,
}

impl GroupStage<'_> {
    fn rk(&self, b: usize) -> &Rkf45 {
        self.integrators[b].as_rkf45().expect(NOT_RKF45)
    }
}

impl ProjectedBodies for GroupStage<'_> {
    fn x(&self, b: usize) -> &[Vector3<f64>] {
        &self.rk(b).xs
    }
    fn v(&self, b: usize) -> &[Vector3<f64>] {
        &self.rk(b).vs
    }
    fn inv_mass(&self, b: usize) -> &[f64] {
        &self.rk(b).inv_w
    }
    fn state_mut(&mut self, b: usize) -> (&mut [Vector3<f64>], &mut [Vector3<f64>]) {
        let r = rk(self.integrators, b);
        (&mut r.xs, &mut r.vs)
    }
}

impl StageBodies for GroupStage<'_> {
    fn a(&self, b: usize) -> &[Vector3<f64>] {
        &self.rk(b).kv[self.s]
    }
    fn a_mut(&mut self, b: usize) -> &mut [Vector3<f64>] {
        let s = self.s;
        &mut rk(self.integrators, b).kv[s]
    }
}
