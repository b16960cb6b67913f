//! The world: bodies, gravity, the integrator, contact and the clock. [`World::step`] is
//! the one place that orders the phases of a step: contact's start-of-step bookkeeping, each
//! body's integrator step, then the contact phase (obstacles, surface collisions).

use crate::body::Body;
use crate::contact::{Contact, ContactError, ContactSettings, ContactStats};
use crate::time::{Integrator, IntegratorKind, StepStats};
use nalgebra::Vector3;
use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Error)]
pub enum WorldError {
    #[error("dt = {0}: must be a finite number above 0")]
    Dt(f64),
    #[error("gravity has a non-finite component")]
    Gravity,
    #[error("two bodies are named `{0}`: body names must be unique")]
    DuplicateName(String),
    #[error(transparent)]
    Integrator(#[from] crate::time::IntegratorError),
    #[error(transparent)]
    Contact(#[from] ContactError),
}

/// A step that left a body in an unusable state (see [`Body::check_state`]).
#[derive(Debug, Clone, PartialEq, Error)]
#[error("body `{body}` diverged at step {step} (t = {time:.6} s): {reason}")]
pub struct Diverged {
    pub body: String,
    pub step: usize,
    pub time: f64,
    pub reason: String,
}

#[derive(Debug)]
pub struct World {
    pub bodies: Vec<Body>,
    integrators: Vec<Box<dyn Integrator>>,
    pub gravity: Vector3<f64>,
    pub dt: f64,
    pub time: f64,
    /// Steps taken so far.
    pub steps: usize,
    last_stats: Vec<StepStats>,
    contact: Option<Contact>,
}

impl World {
    pub fn new(
        bodies: Vec<Body>,
        gravity: Vector3<f64>,
        dt: f64,
        integrator: IntegratorKind,
    ) -> Result<Self, WorldError> {
        if !(dt > 0.0 && dt.is_finite()) {
            return Err(WorldError::Dt(dt));
        }
        if !gravity.iter().all(|c| c.is_finite()) {
            return Err(WorldError::Gravity);
        }
        for (i, b) in bodies.iter().enumerate() {
            if bodies[..i].iter().any(|o| o.name == b.name) {
                return Err(WorldError::DuplicateName(b.name.clone()));
            }
        }
        let integrators = bodies
            .iter()
            .map(|b| integrator.build(b))
            .collect::<Result<Vec<_>, _>>()?;
        let last_stats = vec![StepStats::default(); bodies.len()];
        Ok(Self {
            bodies,
            integrators,
            gravity,
            dt,
            time: 0.0,
            steps: 0,
            last_stats,
            contact: None,
        })
    }

    /// Turns on contact (obstacles, self- and body–body collision) with these settings.
    pub fn with_contact(mut self, settings: ContactSettings) -> Result<Self, WorldError> {
        self.contact = Some(Contact::new(settings, &mut self.bodies, self.dt)?);
        Ok(self)
    }

    /// The contact phase, if the world has one.
    pub fn contact(&self) -> Option<&Contact> {
        self.contact.as_ref()
    }

    /// Contact statistics of the last step, if the world has contact.
    pub fn contact_stats(&self) -> Option<&ContactStats> {
        self.contact.as_ref().map(|c| c.stats())
    }

    /// Advances every body by `dt`. On divergence the world keeps the diverged state (the
    /// caller keeps what it wrote before) and reports which body failed and why.
    pub fn step(&mut self) -> Result<(), Diverged> {
        let t0 = self.time;
        if let Some(contact) = &mut self.contact {
            contact.begin_step(&mut self.bodies);
        }
        for (b, ((body, integrator), stats)) in (self.bodies.iter_mut())
            .zip(&mut self.integrators)
            .zip(&mut self.last_stats)
            .enumerate()
        {
            body.model.begin_step();
            *stats = integrator.step(body, self.dt, &self.gravity);
            if let Some(contact) = &mut self.contact {
                // Obstacle contact held inside the implicit solve (one-step schemes).
                if integrator.restartable() && contact.hold_obstacle_contacts(b, body, t0, self.dt)
                {
                    let first = *stats;
                    *stats = integrator.step(body, self.dt, &self.gravity);
                    contact.release_holds(b, body);
                    stats.solver_iterations += first.solver_iterations;
                    stats.newton_iterations += first.newton_iterations;
                    stats.substeps += first.substeps;
                }
            }
        }
        if let Some(contact) = &mut self.contact {
            contact.end_step(&mut self.bodies, t0, self.dt);
        }
        self.steps += 1;
        self.time = self.steps as f64 * self.dt;
        for body in &self.bodies {
            if let Some(reason) = body.check_state() {
                return Err(Diverged {
                    body: body.name.clone(),
                    step: self.steps,
                    time: self.time,
                    reason,
                });
            }
        }
        Ok(())
    }

    /// Statistics of the last step, one per body.
    pub fn last_stats(&self) -> &[StepStats] {
        &self.last_stats
    }

    /// The integrator's name (the same for every body).
    pub fn integrator_name(&self) -> &'static str {
        self.integrators.first().map_or("none", |i| i.name())
    }

    /// Start-up notes of each body's integrator (e.g. the Courant bound), by body name.
    pub fn integrator_notes(&self) -> Vec<(&str, Vec<String>)> {
        (self.bodies.iter().zip(&self.integrators))
            .map(|(b, i)| (b.name.as_str(), i.notes()))
            .collect()
    }

    /// Run counters of each body's integrator (factorizations, ladder levels, accepted and
    /// rejected steps), by body name.
    pub fn integrator_counters(&self) -> Vec<(&str, Vec<(String, f64)>)> {
        (self.bodies.iter().zip(&self.integrators))
            .map(|(b, i)| (b.name.as_str(), i.counters()))
            .collect()
    }

    pub fn body(&self, name: &str) -> Option<&Body> {
        self.bodies.iter().find(|b| b.name == name)
    }
}
