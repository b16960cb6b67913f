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
    input.has_moving = contact.pre_hold(b, body, &mut input.fixed, &mut input.moving, t0, h);
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
