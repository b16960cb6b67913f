//! The world's step with the IPC contact response ([`crate::contact::ipc`]): all bodies take
//! one coupled, intersection-free backward-Euler step instead of their own integrators and
//! the contact phase; then the exact constraints and rigid cores are projected and the step
//! is checked as any other.

use super::control::Failure;
use super::{World, WorldError};
use crate::body::Body;
use crate::contact::ipc::potential::{Obstacles, Pairing};
use crate::contact::ipc::{IpcFailure, IpcStep};
use crate::contact::{couples, ContactError, ContactSettings, Response};
use crate::time::Integrator;

/// The coupled step for `settings`, when its response is IPC; refuses bodies whose
/// integrator is not a one-step implicit one (the coupled step is backward Euler).
pub(super) fn build(
    bodies: &[Body],
    integrators: &[Box<dyn Integrator>],
    settings: &ContactSettings,
) -> Result<Option<IpcStep>, WorldError> {
    let Response::Ipc(ipc) = settings.response else {
        return Ok(None);
    };
    for (body, integrator) in bodies.iter().zip(integrators) {
        if !couples(integrator.name()) {
            return Err(WorldError::Contact(ContactError::Setting {
                key: "response",
                value: 0.0,
                why: leak_why(&body.name, integrator.name()),
            }));
        }
    }
    let pairing = Pairing {
        self_collision: settings.self_collision,
        body_collision: settings.body_collision,
    };
    let mut ipc = ipc;
    ipc.friction = settings.friction;
    Ok(Some(IpcStep::new(
        bodies,
        ipc,
        pairing,
        settings.broad_phase,
    )))
}

/// The reason text of a refused integrator (a `'static` message, as
/// [`ContactError::Setting`] wants; made once per refused world).
fn leak_why(body: &str, integrator: &str) -> &'static str {
    Box::leak(
        format!(
            "\"ipc\" is a backward-Euler step of all bodies together: body `{body}` uses the {integrator} integrator (use backward_euler or backward_euler_linearized, or response = \"projection\")"
        )
        .into_boxed_str(),
    )
}

/// The world's coupled step and its obstacles over `[t0, t0 + h]`.
fn step_and_obstacles<'a>(
    contact: &'a Option<crate::contact::Contact>,
    ipc: &'a mut Option<IpcStep>,
    t0: f64,
    h: f64,
) -> (&'a mut IpcStep, Obstacles<'a>) {
    let (Some(contact), Some(ipc)) = (contact.as_ref(), ipc.as_mut()) else {
        unreachable!("attempt_ipc runs only with the IPC response");
    };
    let obstacles = Obstacles {
        list: &contact.settings().obstacles,
        time: t0 + h,
        start: t0,
    };
    (ipc, obstacles)
}

impl World {
    /// One try at `[t0, t0 + h]` with the coupled IPC step.
    pub(super) fn attempt_ipc(&mut self, t0: f64, h: f64) -> Result<(), Failure> {
        self.load_carried_forces();
        for (b, (body, input)) in self.bodies.iter_mut().zip(&mut self.inputs).enumerate() {
            body.set_time(t0 + h);
            input.fixed.copy_from_slice(&body.fixed);
            input.time = t0;
            self.interaction.springs_for(b, t0 + h, &mut input.springs);
            body.model.begin_step();
        }
        let (ipc, obstacles) = step_and_obstacles(&self.contact, &mut self.ipc, t0, h);
        let stats = ipc
            .step(
                &mut self.bodies,
                &self.inputs,
                h,
                &self.gravity,
                &obstacles,
                &mut self.last_stats,
            )
            .map_err(|e| match e {
                IpcFailure::Infeasible(m) => Failure::Hard(0, m),
                IpcFailure::Inside { body, reason } => Failure::Hard(body, reason),
                IpcFailure::NonFinite(what) => {
                    Failure::Hard(0, format!("non-finite {what} in the IPC step"))
                }
            })?;
        self.project_rigid_cores();
        self.project_constraints(t0 + h, h)
            .map_err(|(b, reason)| Failure::Hard(b, reason))?;
        // The projections know nothing of contact: only as much of them is kept as keeps the
        // state intersection-free (a no-op when they moved nothing).
        let (ipc, obstacles) = step_and_obstacles(&self.contact, &mut self.ipc, t0, h);
        if ipc.keep_projection_feasible(&mut self.bodies, &obstacles) < 1.0 {
            // What the constraints' metrics report is the state kept, not the projection.
            self.refresh_constraint_residual(t0 + h);
        }
        for (b, body) in self.bodies.iter().enumerate() {
            if let Some(reason) = self.control.check(body) {
                return Err(Failure::Hard(b, reason));
            }
        }
        if !(stats.converged && stats.cg_converged) {
            return Err(Failure::Unconverged);
        }
        Ok(())
    }

    /// The coupled IPC step, when the world has one.
    pub fn ipc(&self) -> Option<&IpcStep> {
        self.ipc.as_ref()
    }

    /// The coupled IPC step, mutable (for its test switch [`IpcStep::check_iterates`]).
    pub fn ipc_mut(&mut self) -> Option<&mut IpcStep> {
        self.ipc.as_mut()
    }
}
