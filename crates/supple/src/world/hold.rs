//! The bodies' solves of a step, with their contacts held inside the implicit solve
//! (one-step schemes; see [`crate::contact`]): the place where the contact holds and the
//! integrators take turns.
//!
//! **Lock-step over bodies.** Each body's solves depend only on its own state and on its own
//! share of the contact state (its holds, slides and friction flags), so the bodies advance
//! together in rounds: every body that needs a solve is solved in parallel (one body per
//! worker, [`solve_round`]), then the contact bookkeeping of each body (which holds to
//! release or add, whether to solve again) runs sequentially in body order. A body's results
//! are bitwise those of solving the bodies one after another (its solves and its bookkeeping
//! see the same data in the same order), whatever the thread count. The only difference is
//! on a failed try: every body has then run its solves, where one after another stopped at
//! the first failure; the failure reported is still that of the first failing body, and the
//! world retries the step from its start.
//!
//! On the 2-core machine of EXPERIMENTS.md the linear solves of `scenes/bench/contact_10k.toml`
//! (two 10k-tet bodies) are ~60 % of the step and each one runs on a single thread (a
//! 2541-vertex CG is below [`crate::linalg::par::VEC_PAR_MIN`]), so solving the two bodies
//! side by side is what lets the second thread help.

use super::control::Failure;
use crate::body::Body;
use crate::clock::Instant;
use crate::contact::Contact;
use crate::time::{BodyInputs, Integrator, StepStats};
use nalgebra::Vector3;
use rayon::prelude::*;

/// Solves beyond the first with a changed contact set, at most.
const MAX_RESOLVES: usize = 3;

/// How a body's step is solved.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum Mode {
    /// Not solved in this round of calls.
    #[default]
    Idle,
    /// One plain solve (no contact, or an integrator that cannot be restarted).
    Plain,
    /// A free solve and, if it ran into an obstacle, one held solve
    /// ([`Contact::hold_obstacle_contacts`]); `held` after the second one started.
    Obstacle { held: bool },
    /// The sliding hold's active set ([`Contact::pre_hold`], [`Contact::hold_sliding`]).
    Sliding,
}

/// One body's progress through a step's solves (a workspace of the world, one per body).
#[derive(Debug, Default)]
pub(super) struct Lane {
    mode: Mode,
    /// Solve this body in the next round.
    pending: bool,
    /// The outcome of its last solve.
    last: Option<Result<StepStats, Failure>>,
    /// The work of its earlier solves in this step.
    earlier: Option<StepStats>,
    /// Solves after the first with a changed sliding set.
    resolves: usize,
    /// Its result, once finished.
    done: Option<Result<StepStats, Failure>>,
}

impl Lane {
    fn start(&mut self, mode: Mode) {
        *self = Lane {
            mode,
            pending: true,
            ..Lane::default()
        };
    }

    fn finish(&mut self, result: Result<StepStats, Failure>) {
        self.pending = false;
        self.done = Some(result);
    }

    /// The finished result (`None` for a body that took no part).
    pub(super) fn take(&mut self) -> Option<Result<StepStats, Failure>> {
        self.mode = Mode::Idle;
        self.done.take()
    }
}

/// What a round of solves needs besides the bodies.
#[derive(Clone, Copy)]
pub(super) struct StepWindow<'a> {
    pub t0: f64,
    pub h: f64,
    pub gravity: &'a Vector3<f64>,
}

/// Solves every pending lane's body once, in parallel (one body per task; each solve is
/// deterministic, so the bits do not depend on which thread runs it). In the sliding hold,
/// every later solve of the step starts again from the step's start (the holds put the body
/// back there), so it is marked as the same step again ([`BodyInputs::again`]); the obstacle
/// hold's second solve starts from moved vertices and is not.
fn solve_round(
    bodies: &mut [Body],
    integrators: &mut [Box<dyn Integrator>],
    inputs: &mut [BodyInputs],
    lanes: &mut [Lane],
    w: StepWindow,
) {
    (bodies.par_iter_mut())
        .zip(integrators.par_iter_mut())
        .zip(inputs.par_iter_mut())
        .zip(lanes.par_iter_mut())
        .enumerate()
        .for_each(|(b, (((body, integrator), input), lane))| {
            if !lane.pending {
                return;
            }
            let result = integrator
                .step_with(body, &input.view(), w.h, w.gravity)
                .map_err(|e| Failure::Hard(b, e.to_string()));
            input.again |= lane.mode == Mode::Sliding;
            lane.last = Some(result);
        });
}

/// Solves the step `[t0, t0 + h]` of every body whose lane was started (`lanes[b]` not
/// idle), with its contacts held: one plain solve without contact or for integrators that
/// cannot be restarted; the sliding hold for integrators that move held vertices themselves
/// (an active set: pre-held resting contacts, then up to [`MAX_RESOLVES`] solves again as
/// holds are released or added); otherwise one free solve and one held solve
/// ([`Contact::hold_obstacle_contacts`]). With `split_possible`, a new contact that began well
/// inside the step finishes that body with [`Failure::Split`] before its held solve.
/// `surface_held`: vertices are already held in `inputs[b].moving` by the body–body contact
/// hold ([`resolve_surface_contacts`]). Each lane's result is left in it ([`Lane::take`]).
#[allow(clippy::too_many_arguments)]
fn solve_lanes(
    mut contact: Option<&mut Contact>,
    bodies: &mut [Body],
    integrators: &mut [Box<dyn Integrator>],
    inputs: &mut [BodyInputs],
    lanes: &mut [Lane],
    w: StepWindow,
    split_possible: bool,
    surface_held: bool,
) {
    let (t0, h) = (w.t0, w.h);
    for (b, ((lane, body), input)) in (lanes.iter_mut())
        .zip(bodies.iter())
        .zip(inputs.iter_mut())
        .enumerate()
    {
        input.again = surface_held;
        if let (Mode::Sliding, Some(c)) = (lane.mode, contact.as_deref_mut()) {
            input.has_moving =
                c.pre_hold(b, body, &mut input.fixed, &mut input.moving, t0, h) || surface_held;
        }
    }
    while lanes.iter().any(|l| l.pending) {
        solve_round(bodies, integrators, inputs, lanes, w);
        // The contact bookkeeping of each body that was just solved, in body order.
        for (b, (((lane, body), integrator), input)) in (lanes.iter_mut())
            .zip(bodies.iter_mut())
            .zip(integrators.iter())
            .zip(inputs.iter_mut())
            .enumerate()
        {
            if !lane.pending {
                continue;
            }
            let Some(last) = lane.last.take() else {
                continue;
            };
            let contact = contact.as_deref_mut();
            match (lane.mode, contact) {
                (Mode::Obstacle { held }, Some(c)) => {
                    obstacle_turn(c, lane, last, held, b, body, input, w, split_possible)
                }
                (Mode::Sliding, Some(c)) => sliding_turn(
                    c,
                    lane,
                    last,
                    integrator.as_ref(),
                    b,
                    body,
                    input,
                    w,
                    split_possible,
                ),
                _ => lane.finish(last),
            }
        }
    }
    for input in inputs.iter_mut() {
        input.again = false;
    }
}

/// After a solve of the free-then-held obstacle hold (see [`solve_lanes`]).
#[allow(clippy::too_many_arguments)]
fn obstacle_turn(
    contact: &mut Contact,
    lane: &mut Lane,
    last: Result<StepStats, Failure>,
    held: bool,
    b: usize,
    body: &mut Body,
    input: &mut BodyInputs,
    w: StepWindow,
    split_possible: bool,
) {
    if held {
        contact.release_holds(b, body, &mut input.fixed);
        let earlier = lane.earlier.take().unwrap_or_default();
        lane.finish(last.map(|mut s| {
            add_work(&mut s, &earlier);
            s
        }));
        return;
    }
    let stats = match last {
        Ok(s) => s,
        Err(e) => return lane.finish(Err(e)),
    };
    if !contact.hold_obstacle_contacts(b, body, &mut input.fixed, w.t0, w.h) {
        return lane.finish(Ok(stats));
    }
    // The hold restored the start-of-step positions: place the prescribed vertices at the
    // step's end again.
    body.set_time(w.t0 + w.h);
    if let Some(tau) = contact.impact_split(b).filter(|_| split_possible) {
        contact.release_holds(b, body, &mut input.fixed);
        return lane.finish(Err(Failure::Split(tau)));
    }
    lane.earlier = Some(stats);
    lane.mode = Mode::Obstacle { held: true };
    lane.pending = true;
}

/// After a solve of the sliding hold (see [`solve_lanes`]).
#[allow(clippy::too_many_arguments)]
fn sliding_turn(
    contact: &mut Contact,
    lane: &mut Lane,
    last: Result<StepStats, Failure>,
    integrator: &dyn Integrator,
    b: usize,
    body: &mut Body,
    input: &mut BodyInputs,
    w: StepWindow,
    split_possible: bool,
) {
    let (t0, h) = (w.t0, w.h);
    let stats = last.map(|mut s| {
        if let Some(earlier) = &lane.earlier {
            add_work(&mut s, earlier);
        }
        s
    });
    if let Ok(done) = &stats {
        let changed = lane.resolves < MAX_RESOLVES
            && contact.hold_sliding(
                b,
                body,
                &mut input.fixed,
                &mut input.moving,
                integrator.hold_reactions(),
                t0,
                h,
            );
        if changed {
            input.has_moving = true;
            body.set_time(t0 + h);
            if let Some(tau) = contact.impact_split(b).filter(|_| split_possible) {
                contact.release_sliding(b, body, &mut input.fixed, &mut input.moving, None, t0 + h);
                input.has_moving = false;
                return lane.finish(Err(Failure::Split(tau)));
            }
            lane.earlier = Some(*done);
            lane.resolves += 1;
            lane.pending = true;
            return;
        }
    }
    contact.release_sliding(
        b,
        body,
        &mut input.fixed,
        &mut input.moving,
        integrator.hold_reactions(),
        t0 + h,
    );
    input.has_moving = false;
    lane.finish(stats);
}

/// Counts the work of an earlier solve of the same step into `stats`.
fn add_work(stats: &mut StepStats, earlier: &StepStats) {
    stats.solver_iterations += earlier.solver_iterations;
    stats.newton_iterations += earlier.newton_iterations;
    stats.substeps += earlier.substeps;
    stats.forces_s += earlier.forces_s;
    stats.assembly_s += earlier.assembly_s;
    stats.solve_s += earlier.solve_s;
}

/// Every body's first solves of the step `[t0, t0 + h]` (see [`solve_lanes`]): returns the
/// result of each body, in body order, into `lanes`.
#[allow(clippy::too_many_arguments)]
pub(super) fn solve_bodies(
    contact: Option<&mut Contact>,
    bodies: &mut [Body],
    integrators: &mut [Box<dyn Integrator>],
    inputs: &mut [BodyInputs],
    lanes: &mut [Lane],
    w: StepWindow,
    split_possible: bool,
    skip: &dyn Fn(usize) -> bool,
) {
    let with_contact = contact.is_some();
    for (b, (lane, integrator)) in lanes.iter_mut().zip(integrators.iter()).enumerate() {
        if skip(b) {
            // Stepped elsewhere (a linked group, `linked.rs`): takes no part.
            *lane = Lane::default();
            continue;
        }
        lane.start(match (with_contact, integrator.restartable()) {
            (true, true) if integrator.moves_held_vertices() => Mode::Sliding,
            (true, true) => Mode::Obstacle { held: false },
            _ => Mode::Plain,
        });
    }
    solve_lanes(
        contact,
        bodies,
        integrators,
        inputs,
        lanes,
        w,
        split_possible,
        false,
    );
}

/// Body–body and self contact inside the solve (`contact/pipeline/surface_hold.rs`): after
/// the contact phase of `[t0, t0 + h]`, each body whose surface response moved vertices, and
/// whose integrator moves held vertices itself, is solved again from the step's start with
/// those vertices held where the response put them (its obstacle holds as in its first
/// solve; the bodies in parallel, [`solve_lanes`]); then the contact phase runs once more.
/// Returns whether a second solve missed its tolerance; a failed second solve is the first
/// failing body's, in body order.
#[allow(clippy::too_many_arguments)]
pub(super) fn resolve_surface_contacts(
    contact: &mut Contact,
    bodies: &mut [Body],
    integrators: &mut [Box<dyn Integrator>],
    inputs: &mut [BodyInputs],
    totals: &mut [StepStats],
    lanes: &mut [Lane],
    w: StepWindow,
) -> Result<bool, Failure> {
    if !contact.surface_response_moved() {
        return Ok(false);
    }
    let started = Instant::now();
    contact.record_surface_momenta(bodies);
    let (mut held, mut resolves) = (0, 0);
    for (b, (((body, integrator), input), lane)) in (bodies.iter_mut())
        .zip(integrators.iter())
        .zip(inputs.iter_mut())
        .zip(lanes.iter_mut())
        .enumerate()
    {
        if !(integrator.restartable() && integrator.moves_held_vertices()) {
            continue;
        }
        input.fixed.copy_from_slice(&body.fixed);
        let n = contact.hold_surface_contacts(b, body, &mut input.fixed, &mut input.moving, w.h);
        if n == 0 {
            continue;
        }
        // Back at the step's start: the prescribed vertices go to the step's end again.
        body.set_time(w.t0 + w.h);
        held += n;
        resolves += 1;
        lane.start(Mode::Sliding);
    }
    solve_lanes(
        Some(&mut *contact),
        bodies,
        integrators,
        inputs,
        lanes,
        w,
        false,
        true,
    );
    let mut failure = None;
    let mut unconverged = false;
    for (b, ((body, input), (lane, total))) in (bodies.iter_mut())
        .zip(inputs.iter_mut())
        .zip(lanes.iter_mut().zip(totals.iter_mut()))
        .enumerate()
    {
        let Some(result) = lane.take() else {
            continue;
        };
        contact.release_surface_holds(b, body, &mut input.fixed, &mut input.moving);
        match result {
            Ok(stats) if failure.is_none() => {
                unconverged |= stats.solve_failed();
                total.accumulate(&stats);
            }
            Err(e) if failure.is_none() => failure = Some(e),
            _ => {}
        }
    }
    if let Some(e) = failure {
        return Err(e);
    }
    contact.restore_island_momenta(bodies);
    let resolve_s = started.elapsed().as_secs_f64();
    if resolves > 0 {
        contact.end_step_again(bodies, w.t0, w.h, held, resolves);
    }
    contact.note_resolve_time(resolve_s);
    Ok(unconverged)
}
