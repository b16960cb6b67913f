//! The world: bodies, gravity, the integrator, contact, interaction and the clock.
//! [`World::step`] is the one place that orders the phases of a step: the step inputs of each
//! body (its held vertices, grab springs, external forces from
//! [`World::apply_forces`]: [`BodyInputs`]), contact's
//! start-of-step bookkeeping (contact-spring anchors), each body's integrator step, then the
//! contact phase (obstacles, surface collisions), then the projection onto the exact
//! constraints ([`World::constrain`]) and the dynamic rigid cores ([`World::add_rigid_core`]),
//! then the checks; a step that fails them is
//! retried from its start with half the step ([`StepControl`], in `control.rs`).
//!
//! Bodies are plain data: nothing a phase decides for one step (a contact hold, a grab, a
//! push) is written into a [`Body`]; it travels to the integrator in the body's
//! [`BodyInputs`] (rapier's pipeline: stages with their own scratch, bodies as data).

use crate::body::Body;
mod builder;
mod carried;
mod control;
mod exact;
mod hold;
mod interaction;
mod ipc;
mod linked;
mod links;
mod rigid;
pub mod verdict;

pub use crate::body::BuildError;
pub use builder::WorldBuilder;
pub use control::{RunTotals, StepControl, StepReport};
pub use exact::ConstraintId;
pub use interaction::{Grab, GrabId, GrabPath, GrabSettings, InteractionError};
pub use links::{BodyPoint, LinkId, LinkSpring};

use crate::contact::{Contact, ContactError, ContactSettings, ContactStats, Response};
use crate::time::{BodyInputs, Integrator, IntegratorKind, StepStats};
use control::{Failure, Snapshot};
use nalgebra::Vector3;
use thiserror::Error;

/// A vertex that moves more than this many rest bounding-box diagonals of its body in one
/// step fails the step before the contact phase (see `attempt`).
pub const JUMP_FACTOR: f64 = 10.0;

#[derive(Debug, Clone, PartialEq, Error)]
pub enum WorldError {
    #[error("dt = {0}: must be a finite number above 0")]
    Dt(f64),
    #[error("gravity has a non-finite component")]
    Gravity,
    #[error("{integrators} integrator(s) for {bodies} bodies: one per body")]
    Integrators { bodies: usize, integrators: usize },
    #[error("two bodies are named `{0}`: body names must be unique")]
    DuplicateName(String),
    #[error(transparent)]
    Integrator(#[from] crate::time::IntegratorError),
    #[error(transparent)]
    Contact(#[from] ContactError),
    #[error(transparent)]
    Interaction(#[from] InteractionError),
    #[error("exact constraint: {0}")]
    Exact(crate::constraint::ExactError),
    #[error("no exact constraint {0:?} (released, or never made)")]
    UnknownConstraint(ConstraintId),
    #[error("there is no body {body} (the world has {n_bodies})")]
    NoBody { body: usize, n_bodies: usize },
    #[error("body `{body}`: rigid core: {source}")]
    Rigid {
        body: String,
        source: crate::constraint::RigidError,
    },
    /// A refused spring between body points ([`World::add_spring`]).
    #[error("spring: {0}")]
    Link(String),
    #[error("step_control.{key} = {value}: {reason}")]
    StepControl {
        key: &'static str,
        value: f64,
        reason: &'static str,
    },
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

/// The simulation: bodies, gravity, the step `dt`, each body's integrator, and optionally
/// contact (obstacles, collisions), grabs, springs and exact constraints. Set one up with
/// [`World::builder`] (named settings, the scene format's defaults) or [`World::new`]; then
/// [`step`](Self::step) it and read the bodies (`world.bodies`, [`body`](Self::body)), the
/// clock (`time`, `steps`) and what the steps did ([`last_stats`](Self::last_stats),
/// [`last_step`](Self::last_step), [`verdict`](Self::verdict)):
///
/// ```
/// use supple::prelude::*;
/// let mesh = box_grid(&BoxGrid { cells: [2, 1, 1], cell_size: Vector3::repeat(0.1),
///     origin: Vector3::zeros(), split: TetSplit::Five });
/// // The same world two ways: positional arguments, or the builder's names.
/// let integrator = IntegratorKind::BackwardEulerLinearized {
///     solver: LinearSolverKind::Pcg(PcgSettings::default()),
///     warm_start: WarmStart::Extrapolate,
/// };
/// let bar = || BodyDesc::of(mesh.clone()).fix_where(|p| p.x < 1e-9);
/// let gravity = Vector3::new(0.0, -9.81, 0.0);
/// let mut a = World::new(vec![bar().build()?], gravity, 0.01, integrator)?;
/// let mut b = World::builder().body(bar()).gravity(gravity).dt(0.01).integrator(integrator).build()?;
/// for _ in 0..3 {
///     a.step()?;
///     b.step()?;
/// }
/// assert_eq!(a.bodies[0].x, b.bodies[0].x);
/// assert_eq!((b.steps, b.last_step().retries, b.verdict()), (3, 0, None));
/// assert!((b.time - 0.03).abs() < 1e-15);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct World {
    pub bodies: Vec<Body>,
    integrators: Vec<Box<dyn Integrator>>,
    pub gravity: Vector3<f64>,
    pub dt: f64,
    pub time: f64,
    /// Steps taken so far.
    pub steps: usize,
    /// What happens when a step fails (see [`StepControl`]).
    pub control: StepControl,
    last_stats: Vec<StepStats>,
    contact: Option<Contact>,
    report: StepReport,
    totals: RunTotals,
    /// Start-of-attempt states, one per halving depth (filled on first use).
    snapshots: Vec<Snapshot>,
    /// Each body's step inputs (held vertices, springs, external forces), rebuilt per try.
    inputs: Vec<BodyInputs>,
    /// Grabs (see [`World::grab`]).
    interaction: interaction::Interaction,
    /// Exact constraints (see [`World::constrain`]).
    exact: exact::Exact,
    /// Dynamic rigid cores (see [`World::add_rigid_core`]) and their bodies.
    rigid: Vec<(usize, crate::constraint::RigidCore)>,
    /// Bodies joined by exact constraints that step together (RKF45; see `linked.rs`).
    linked: linked::Linked,
    /// Per dynamic core, the carried constraint forces' sum and torque (`carried.rs`).
    core_loads: Vec<(Vector3<f64>, Vector3<f64>)>,
    /// Each body's progress through the step's solves (`hold.rs`).
    lanes: Vec<hold::Lane>,
    /// The coupled IPC step, with the [`Response::Ipc`] contact response (`ipc.rs`).
    ipc: Option<crate::contact::ipc::IpcStep>,
}

impl World {
    /// A world whose bodies all step with `integrator`.
    pub fn new(
        bodies: Vec<Body>,
        gravity: Vector3<f64>,
        dt: f64,
        integrator: IntegratorKind,
    ) -> Result<Self, WorldError> {
        let integrators = bodies
            .iter()
            .map(|b| integrator.build(b))
            .collect::<Result<Vec<_>, _>>()?;
        Self::with_integrators(bodies, integrators, gravity, dt)
    }

    /// A world whose body `i` steps with `integrators[i]` (built for it: a body of its own
    /// kind, such as the fine body of a [`crate::hierarchical::HierarchicalStepper`], beside
    /// plain ones).
    pub fn with_integrators(
        bodies: Vec<Body>,
        integrators: Vec<Box<dyn Integrator>>,
        gravity: Vector3<f64>,
        dt: f64,
    ) -> Result<Self, WorldError> {
        if !(dt > 0.0 && dt.is_finite()) {
            return Err(WorldError::Dt(dt));
        }
        if !gravity.iter().all(|c| c.is_finite()) {
            return Err(WorldError::Gravity);
        }
        if integrators.len() != bodies.len() {
            return Err(WorldError::Integrators {
                bodies: bodies.len(),
                integrators: integrators.len(),
            });
        }
        for (i, b) in bodies.iter().enumerate() {
            if bodies[..i].iter().any(|o| o.name == b.name) {
                return Err(WorldError::DuplicateName(b.name.clone()));
            }
        }
        let n_bodies = bodies.len();
        let last_stats = vec![StepStats::default(); n_bodies];
        let snapshots = vec![Snapshot::for_bodies(&bodies)];
        let inputs = bodies
            .iter()
            .map(|b| BodyInputs::new(b.n_vertices()))
            .collect();
        Ok(Self {
            bodies,
            integrators,
            gravity,
            dt,
            time: 0.0,
            steps: 0,
            control: StepControl::default(),
            last_stats,
            contact: None,
            report: StepReport::default(),
            totals: RunTotals::default(),
            snapshots,
            inputs,
            interaction: Default::default(),
            exact: Default::default(),
            rigid: Vec::new(),
            linked: Default::default(),
            core_loads: Vec::new(),
            lanes: std::iter::repeat_with(hold::Lane::default)
                .take(n_bodies)
                .collect(),
            ipc: None,
        })
    }

    /// Replaces the step control (refuses impossible settings).
    pub fn with_step_control(mut self, control: StepControl) -> Result<Self, WorldError> {
        control.validate()?;
        self.control = control;
        Ok(self)
    }

    /// Turns on contact (obstacles, self- and body–body collision) with these settings; the
    /// default response ([`Response::Auto`]) becomes IPC when every body steps with backward
    /// Euler, projection otherwise ([`Contact::settings`] holds the one chosen).
    pub fn with_contact(mut self, mut settings: ContactSettings) -> Result<Self, WorldError> {
        let all_backward_euler = self
            .integrators
            .iter()
            .all(|i| crate::contact::couples(i.name()));
        settings.response = settings.response.resolve(all_backward_euler);
        self.ipc = ipc::build(&self.bodies, &self.integrators, &settings)?;
        if let Some(step) = self.ipc.as_mut() {
            for (b, core) in &self.rigid {
                step.add_core(&self.bodies[*b], *b, core.vertices());
            }
        }
        self.contact = Some(Contact::new(settings, &self.bodies, self.dt)?);
        Ok(self)
    }

    /// The contact phase, if the world has one.
    pub fn contact(&self) -> Option<&Contact> {
        self.contact.as_ref()
    }

    /// The contact phase, mutable (for its test switches, such as
    /// [`Contact::set_check_skips`]).
    pub fn contact_mut(&mut self) -> Option<&mut Contact> {
        self.contact.as_mut()
    }

    /// Contact statistics of the last step, if the world has contact.
    pub fn contact_stats(&self) -> Option<&ContactStats> {
        self.contact.as_ref().map(|c| c.stats())
    }

    /// Advances every body by `dt`. A step that fails (an integrator error, a non-finite or
    /// exploded state, total volume out of range, too many inverted tets, a barrier model's
    /// element at volume ≤ 0, or unconverged solves) is taken again from its start as two
    /// half steps, recursively, as [`StepControl`] allows. When no halving is left, a step
    /// with unconverged solves is kept (and counted, see [`verdict`](Self::verdict)); any other
    /// failure is returned as [`Diverged`], the world keeping the failed state (the caller
    /// keeps what it wrote before).
    pub fn step(&mut self) -> Result<(), Diverged> {
        let t0 = self.time;
        self.report = StepReport {
            min_dt: self.dt,
            ..StepReport::default()
        };
        for s in &mut self.last_stats {
            *s = StepStats::default();
        }
        self.begin_interaction(t0);
        self.release_due_constraints(t0);
        self.carry_constraint_forces();
        let result = self.advance(t0, self.dt, 0);
        self.end_interaction();
        self.steps += 1;
        self.time = self.steps as f64 * self.dt;
        self.totals.retried_steps += usize::from(self.report.retries > 0);
        self.totals.retries += self.report.retries;
        self.totals.min_dt = self.totals.min_dt.min(self.report.min_dt);
        self.totals.unconverged_steps += usize::from(self.report.unconverged);
        self.totals.contact_splits += self.report.contact_splits;
        result.map_err(|(b, reason)| Diverged {
            body: self.bodies[b].name.clone(),
            step: self.steps,
            time: self.time,
            reason,
        })
    }

    /// Covers `[t0, t0 + h]`, halving on failure (see [`step`](Self::step)); a failure left
    /// after the last halving is returned as `(body, reason)`.
    fn advance(&mut self, t0: f64, h: f64, depth: u32) -> Result<(), (usize, String)> {
        let retry_possible = depth < self.control.max_halvings && self.retries_allowed();
        if retry_possible {
            if self.snapshots.len() <= depth as usize {
                // Allocated once, on the first retry that reaches this depth.
                self.snapshots.push(Snapshot::for_bodies(&self.bodies));
            }
            self.snapshots[depth as usize].save(&self.bodies);
        }
        let split_possible = retry_possible && depth < self.control.contact_splits;
        let failure = match self.attempt(t0, h, split_possible) {
            Ok(()) => return Ok(()),
            Err(f) => f,
        };
        let first = match failure {
            Failure::Split(tau) => {
                self.report.contact_splits += 1;
                tau * h
            }
            Failure::Unconverged if retry_possible && depth < self.control.unconverged_halvings => {
                self.report.retries += 1;
                0.5 * h
            }
            Failure::Hard(..) if retry_possible => {
                self.report.retries += 1;
                0.5 * h
            }
            Failure::Unconverged => {
                self.report.unconverged = true;
                return Ok(());
            }
            Failure::Hard(b, reason) => return Err((b, reason)),
        };
        self.snapshots[depth as usize].restore(&mut self.bodies);
        for integrator in &mut self.integrators {
            integrator.restart();
        }
        self.report.min_dt = self.report.min_dt.min(first).min(h - first);
        self.advance(t0, first, depth + 1)?;
        self.advance(t0 + first, h - first, depth + 1)
    }

    /// Step control needs a state it can restore: not with contact springs, whose set
    /// changes during a step.
    fn retries_allowed(&self) -> bool {
        self.contact
            .as_ref()
            .is_none_or(|c| !matches!(c.settings().response, Response::Springs { .. }))
    }

    /// One try at `[t0, t0 + h]`: contact's start-of-step bookkeeping, each body's
    /// integrator step (with the contact hold), the contact phase, then the checks. With
    /// `split_possible`, a held contact that began well inside the step ends the try with
    /// [`Failure::Split`] before the held solve.
    fn attempt(&mut self, t0: f64, h: f64, split_possible: bool) -> Result<(), Failure> {
        if self.ipc.is_some() {
            return self.attempt_ipc(t0, h);
        }
        // The last step's constraint forces as loads (see `carried.rs`).
        self.load_carried_forces();
        if let Some(contact) = &mut self.contact {
            // Contact springs skip the vertices held at the step's start.
            for (body, input) in self.bodies.iter().zip(&mut self.inputs) {
                input.fixed.copy_from_slice(&body.fixed);
            }
            contact.begin_step(&self.bodies, &mut self.inputs);
        }
        for (b, (body, input)) in self.bodies.iter_mut().zip(&mut self.inputs).enumerate() {
            // The step's inputs: the held set at the step's end, the grab springs.
            body.set_time(t0 + h);
            input.fixed.copy_from_slice(&body.fixed);
            input.time = t0;
            let explicit = self.integrators[b].explicit();
            (self.interaction).springs_for_step(b, t0, h, explicit, &mut input.springs);
            body.model.begin_step();
        }
        // Every body's solves (with the obstacle holds of one-step schemes), the bodies side
        // by side (`hold.rs`); the first failure in body order ends the try. Bodies of a
        // linked group step with their group below, once every member's inputs are set.
        let window = hold::StepWindow {
            t0,
            h,
            gravity: &self.gravity,
        };
        let linked = &self.linked;
        hold::solve_bodies(
            self.contact.as_mut(),
            &mut self.bodies,
            &mut self.integrators,
            &mut self.inputs,
            &mut self.lanes,
            window,
            split_possible,
            &|b| linked.is_linked(b),
        );
        let mut unconverged = false;
        let mut failure = None;
        for (lane, total) in self.lanes.iter_mut().zip(&mut self.last_stats) {
            match lane.take() {
                Some(Ok(stats)) if failure.is_none() => {
                    unconverged |= stats.solve_failed();
                    total.accumulate(&stats);
                }
                Some(Err(e)) if failure.is_none() => failure = Some(e),
                _ => {}
            }
        }
        if let Some(e) = failure {
            return Err(e);
        }
        unconverged |= self.step_linked_groups(h)?;
        if let Some(contact) = &mut self.contact {
            // A state that already failed, or a vertex that jumped more than JUMP_FACTOR
            // rest diagonals in one step, is not worth the contact phase: the continuous
            // tests of such a sweep meet every pair (a mutated snapping torus spent 73 s in
            // one step's tests before it was judged exploded).
            for (b, body) in self.bodies.iter().enumerate() {
                let linear = linear_static(&*self.integrators[b], body);
                if let Some(reason) = self.control.check_answer(body, linear) {
                    return Err(Failure::Hard(b, reason));
                }
                let (i, d) = contact.farthest_move(b, body);
                let limit = JUMP_FACTOR * body.rest_diagonal;
                if d.is_nan() || d > limit {
                    return Err(Failure::Hard(
                        b,
                        format!(
                            "vertex {i} moved {d:.3e} m in one step, more than {JUMP_FACTOR} rest diagonals ({limit:.3e} m)"
                        ),
                    ));
                }
                // The obstacle phase moves a vertex at least as far as it is deep inside an
                // obstacle: one swallowed by an obstacle is judged here, before the phase's
                // sweeps (`contact/pipeline/inside.rs`).
                if let Some(inside) = contact.deepest_inside(b, body, t0 + h) {
                    if inside.depth > limit {
                        let name = &contact.settings().obstacles[inside.obstacle].name;
                        return Err(Failure::Hard(
                            b,
                            format!(
                                "vertex {} is {:.3e} m inside obstacle `{name}`, more than {JUMP_FACTOR} rest diagonals ({limit:.3e} m): the contact phase would move it that far (does the body start inside the obstacle?)",
                                inside.vertex, inside.depth
                            ),
                        ));
                    }
                }
            }
            // The obstacles first; a state they blew up (a body swallowed by an obstacle
            // is pushed out by the obstacle's size) fails before the surface phase's sweeps.
            contact.obstacle_phase(&mut self.bodies, t0, h);
            for (b, body) in self.bodies.iter().enumerate() {
                let linear = linear_static(&*self.integrators[b], body);
                if let Some(reason) = self.control.check_volume(body, linear) {
                    return Err(Failure::Hard(
                        b,
                        format!("{reason} after the obstacles' push"),
                    ));
                }
                let (i, d) = contact.farthest_move(b, body);
                let limit = JUMP_FACTOR * body.rest_diagonal;
                if d.is_nan() || d > limit {
                    return Err(Failure::Hard(
                        b,
                        format!(
                            "the obstacles pushed vertex {i} {d:.3e} m in one step, more than {JUMP_FACTOR} rest diagonals ({limit:.3e} m)"
                        ),
                    ));
                }
            }
            contact.surface_phase(&mut self.bodies, t0, h);
            unconverged |= hold::resolve_surface_contacts(
                contact,
                &mut self.bodies,
                &mut self.integrators,
                &mut self.inputs,
                &mut self.last_stats,
                &mut self.lanes,
                hold::StepWindow {
                    t0,
                    h,
                    gravity: &self.gravity,
                },
            )?;
        }
        self.project_rigid_cores();
        self.project_constraints(t0 + h, h)
            .map_err(|(b, reason)| Failure::Hard(b, reason))?;
        for (b, body) in self.bodies.iter().enumerate() {
            let linear = self.is_linear_static(b);
            if let Some(reason) = self.control.check_answer(body, linear) {
                return Err(Failure::Hard(b, reason));
            }
        }
        if unconverged {
            return Err(Failure::Unconverged);
        }
        Ok(())
    }

    /// What the step control did in the last step.
    pub fn last_step(&self) -> &StepReport {
        &self.report
    }

    /// What the step control did since the world was built.
    pub fn totals(&self) -> &RunTotals {
        &self.totals
    }

    /// Why the run so far counts as failed although no step diverged, if it does: more than
    /// [`StepControl::max_unconverged_share`] of the steps kept unconverged solves.
    pub fn verdict(&self) -> Option<String> {
        let share = self.totals.unconverged_steps as f64 / self.steps.max(1) as f64;
        (self.steps > 0 && share > self.control.max_unconverged_share).then(|| {
            format!(
                "{} of {} steps ({:.1} %) kept linear or Newton solves that missed their tolerance after every halving (more than {:.1} % allowed)",
                self.totals.unconverged_steps,
                self.steps,
                100.0 * share,
                100.0 * self.control.max_unconverged_share
            )
        })
    }

    /// Statistics of the last step, one per body.
    pub fn last_stats(&self) -> &[StepStats] {
        &self.last_stats
    }

    /// The integrator's name (the first body's; see [`integrator_names`](Self::integrator_names)).
    pub fn integrator_name(&self) -> &'static str {
        self.integrators.first().map_or("none", |i| i.name())
    }

    /// Each body's integrator name, by body name.
    pub fn integrator_names(&self) -> Vec<(&str, &'static str)> {
        (self.bodies.iter().zip(&self.integrators))
            .map(|(b, i)| (b.name.as_str(), i.name()))
            .collect()
    }

    /// Start-up notes of each body's integrator (e.g. the Courant bound), by body name; a
    /// linear static answer ([`is_linear_static`](Self::is_linear_static)) whose volume is
    /// outside [`StepControl::volume_range`] or which has inverted tets gets a note that its
    /// strains are outside the linear range (the step checks let it through).
    pub fn integrator_notes(&self) -> Vec<(&str, Vec<String>)> {
        (self.bodies.iter().zip(&self.integrators).enumerate())
            .map(|(k, (b, i))| {
                let mut notes = i.notes();
                if self.is_linear_static(k) {
                    notes.extend(linear_range_note(b, self.control.volume_range));
                }
                (b.name.as_str(), notes)
            })
            .collect()
    }

    /// True when body `b`'s state is a linear static answer: a static solve of a model whose
    /// forces are linear in the positions (constant tangent). Such an answer is the linear
    /// solution however large the displacement, so the volume and inversion rules of the step
    /// checks and the verdict do not apply to it (see [`StepControl`]).
    pub fn is_linear_static(&self, b: usize) -> bool {
        linear_static(&*self.integrators[b], &self.bodies[b])
    }

    /// Run counters of each body's integrator (factorizations, ladder levels, accepted and
    /// rejected steps), by body name.
    pub fn integrator_counters(&self) -> Vec<(&str, Vec<(String, f64)>)> {
        (self.bodies.iter().zip(&self.integrators))
            .map(|(b, i)| (b.name.as_str(), i.counters()))
            .collect()
    }

    /// What `preconditioner = "auto"` chose for each body whose solves made the choice, by
    /// body name.
    pub fn preconditioner_choices(&self) -> Vec<(&str, crate::linalg::AutoChoice)> {
        (self.bodies.iter().zip(&self.integrators))
            .filter_map(|(b, i)| Some((b.name.as_str(), i.preconditioner_choice()?)))
            .collect()
    }

    pub fn body(&self, name: &str) -> Option<&Body> {
        self.bodies.iter().find(|b| b.name == name)
    }
}

/// [`World::is_linear_static`] for a body and its integrator.
fn linear_static(integrator: &dyn Integrator, body: &Body) -> bool {
    integrator.name() == "static" && body.model.tangent_is_constant()
}

/// The note of a linear static answer whose total volume is outside `range` × rest or which
/// has inverted tets: the answer stands, but the strains are outside the linear range.
fn linear_range_note(body: &Body, range: [f64; 2]) -> Option<String> {
    let ratio = body.volume() / body.elems.volume.iter().sum::<f64>();
    let inverted = verdict::inverted_tets(body);
    let [lo, hi] = range;
    (!(ratio >= lo && ratio <= hi) || inverted > 0).then(|| {
        format!(
            "the linear static answer has total volume {ratio:.3e} × rest and {inverted} inverted tets: the strains are far outside the linear range (linear elasticity knows no volume at large displacement; a nonlinear model such as stvk or corotational is needed for this load)"
        )
    })
}
