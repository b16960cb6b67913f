//! One body's solve of a step with its obstacle contacts held inside the implicit solve
//! (one-step schemes; see [`crate::contact`]): the place where the contact hold and the
//! integrator take turns.

use super::control::Failure;
use crate::body::Body;
use crate::contact::Contact;
use crate::time::{BodyInputs, Integrator, StepStats};
use nalgebra::Vector3;

/// Solves beyond the first with a changed contact set, at most.
const MAX_RESOLVES: usize = 3;

/// Body `b`'s step `[t0, t0 + h]` with its contacts held: the sliding hold for integrators
/// that move held vertices themselves (an active set: pre-held resting contacts, then up to
/// [`MAX_RESOLVES`] solves again as holds are released or added), otherwise one free solve
/// and one held solve ([`Contact::hold_obstacle_contacts`]). With `split_possible`, a new
/// contact that began well inside the step returns [`Failure::Split`] before its held solve.
/// `surface_held`: vertices are already held in `input.moving` by the body–body contact hold
/// ([`resolve_surface_contacts`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn solve_with_holds(
    contact: &mut Contact,
    integrator: &mut dyn Integrator,
    body: &mut Body,
    input: &mut BodyInputs,
    b: usize,
    t0: f64,
    h: f64,
    gravity: &Vector3<f64>,
    split_possible: bool,
    surface_held: bool,
) -> Result<StepStats, Failure> {
    let solve = |integrator: &mut dyn Integrator, body: &mut Body, input: &BodyInputs| {
        integrator
            .step_with(body, &input.view(), h, gravity)
            .map_err(|e| Failure::Hard(b, e.to_string()))
    };
    if !integrator.moves_held_vertices() {
        let mut stats = solve(integrator, body, input)?;
        if contact.hold_obstacle_contacts(b, body, &mut input.fixed, t0, h) {
            // The hold restored the start-of-step positions: place the prescribed vertices
            // at the step's end again.
            body.set_time(t0 + h);
            if let Some(tau) = contact.impact_split(b).filter(|_| split_possible) {
                contact.release_holds(b, body, &mut input.fixed);
                return Err(Failure::Split(tau));
            }
            let first = stats;
            let second = solve(integrator, body, input);
            contact.release_holds(b, body, &mut input.fixed);
            stats = second?;
            add_work(&mut stats, &first);
        }
        return Ok(stats);
    }
    input.has_moving =
        contact.pre_hold(b, body, &mut input.fixed, &mut input.moving, t0, h) || surface_held;
    let mut stats = solve(integrator, body, input);
    let mut resolves = 0;
    while let Ok(done) = &stats {
        if resolves == MAX_RESOLVES
            || !contact.hold_sliding(
                b,
                body,
                &mut input.fixed,
                &mut input.moving,
                integrator.hold_reactions(),
                t0,
                h,
            )
        {
            break;
        }
        input.has_moving = true;
        body.set_time(t0 + h);
        if let Some(tau) = contact.impact_split(b).filter(|_| split_possible) {
            contact.release_sliding(b, body, &mut input.fixed, &mut input.moving, None, t0 + h);
            input.has_moving = false;
            return Err(Failure::Split(tau));
        }
        let before = *done;
        stats = solve(integrator, body, input).map(|mut s| {
            add_work(&mut s, &before);
            s
        });
        resolves += 1;
    }
    let reactions = integrator.hold_reactions();
    contact.release_sliding(
        b,
        body,
        &mut input.fixed,
        &mut input.moving,
        reactions,
        t0 + h,
    );
    input.has_moving = false;
    stats
}

/// Counts the work of an earlier solve of the same step into `stats`.
fn add_work(stats: &mut StepStats, earlier: &StepStats) {
    stats.solver_iterations += earlier.solver_iterations;
    stats.newton_iterations += earlier.newton_iterations;
    stats.substeps += earlier.substeps;
}

/// Body–body and self contact inside the solve (`contact/pipeline/surface_hold.rs`): after
/// the contact phase of `[t0, t0 + h]`, each body whose surface response moved vertices, and
/// whose integrator moves held vertices itself, is solved again from the step's start with
/// those vertices held where the response put them (its obstacle holds as in its first
/// solve); then the contact phase runs once more. Returns whether a second solve missed its
/// tolerance.
#[allow(clippy::too_many_arguments)]
pub(super) fn resolve_surface_contacts(
    contact: &mut Contact,
    bodies: &mut [Body],
    integrators: &mut [Box<dyn Integrator>],
    inputs: &mut [BodyInputs],
    totals: &mut [StepStats],
    t0: f64,
    h: f64,
    gravity: &Vector3<f64>,
) -> Result<bool, Failure> {
    if !contact.surface_response_moved() {
        return Ok(false);
    }
    contact.record_surface_momenta(bodies);
    let (mut held, mut resolves, mut unconverged) = (0, 0, false);
    for (b, (((body, integrator), input), total)) in (bodies.iter_mut())
        .zip(integrators.iter_mut())
        .zip(inputs.iter_mut())
        .zip(totals.iter_mut())
        .enumerate()
    {
        if !(integrator.restartable() && integrator.moves_held_vertices()) {
            continue;
        }
        input.fixed.copy_from_slice(&body.fixed);
        let n = contact.hold_surface_contacts(b, body, &mut input.fixed, &mut input.moving, h);
        if n == 0 {
            continue;
        }
        // Back at the step's start: the prescribed vertices go to the step's end again.
        body.set_time(t0 + h);
        held += n;
        resolves += 1;
        let stats = solve_with_holds(
            contact,
            integrator.as_mut(),
            body,
            input,
            b,
            t0,
            h,
            gravity,
            false,
            true,
        );
        contact.release_surface_holds(b, body, &mut input.fixed, &mut input.moving);
        let stats = stats?;
        unconverged |= stats.solve_failed();
        total.accumulate(&stats);
    }
    contact.restore_island_momenta(bodies);
    if resolves > 0 {
        contact.end_step_again(bodies, t0, h, held, resolves);
    }
    Ok(unconverged)
}
