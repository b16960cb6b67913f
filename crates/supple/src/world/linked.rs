//! Bodies joined by exact constraints that step together (Liesenfeld & Stolfi §3.3, eq. 8
//! across bodies; the stepping itself is [`crate::time::LinkedStep`]).
//!
//! Each body has its own integrator, so a constraint between two bodies (a link) is held by
//! the world's projection after the step alone — enough for the implicit integrators, not for
//! RKF45, whose stages would otherwise let a linked body fall freely for a whole world step.
//! When every body of a connected set (bodies joined through constraints) steps with RKF45
//! in the same mode (adaptive, or the same fixed substeps), the set is a *linked group*: it
//! steps as one system with shared step sizes and one acceleration projection per stage over
//! all its constraints. A set that mixes integrators keeps the projection alone (an implicit
//! body has no stages to share). A single RKF45 body with constraints of its own is a group
//! of one: the same stages and projection as its integrator's own
//! ([`crate::time::StepInputs::exact`]), and the group reports the stage multipliers' impulse
//! in [`World::constraint_force`], so that the force is all the constraint did.

use super::control::Failure;
use super::World;
use crate::constraint::exact::Projector;
use crate::constraint::ExactConstraint;
use crate::time::{Integrator, LinkedStep};
use nalgebra::Vector3;

/// Marks a body that steps alone in `Linked::group_of`.
const ALONE: u32 = u32::MAX;

/// The linked groups (rebuilt when the world's exact constraints change).
#[derive(Debug, Default)]
pub(super) struct Linked {
    groups: Vec<Group>,
    /// Per body, its group, or [`ALONE`].
    group_of: Vec<u32>,
}

#[derive(Debug)]
struct Group {
    /// Ascending body indices.
    members: Vec<usize>,
    /// Every exact constraint on the members (points indexed by world body), and each one's
    /// index in the world's list.
    constraints: Vec<ExactConstraint>,
    indices: Vec<usize>,
    projector: Projector,
    /// Per constraint, the stage multipliers' impulse over the last step, and a trial's.
    impulses: Vec<Vector3<f64>>,
    trial_impulses: Vec<Vector3<f64>>,
}

impl Linked {
    /// Groups the bodies joined through `constraints` whose integrators can step together
    /// (every connected set with a constraint, all of whose bodies are RKF45 in one mode).
    pub(super) fn rebuild(
        &mut self,
        constraints: &[ExactConstraint],
        integrators: &[Box<dyn Integrator>],
    ) {
        let n = integrators.len();
        // Union–find over the bodies, joined by every constraint between two of them.
        let mut parent: Vec<usize> = (0..n).collect();
        fn root(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        for c in constraints {
            let a = c.point.body;
            for p in c.points() {
                let (ra, rb) = (root(&mut parent, a), root(&mut parent, p.body));
                // The smaller index as root: deterministic groups.
                parent[ra.max(rb)] = ra.min(rb);
            }
        }
        self.groups.clear();
        self.group_of.clear();
        self.group_of.resize(n, ALONE);
        for r in 0..n {
            let members: Vec<usize> = (0..n).filter(|&b| root(&mut parent, b) == r).collect();
            let constrained = |b: &usize| constraints.iter().any(|c| c.point.body == *b);
            if !members.iter().any(constrained) {
                continue;
            }
            let mode = |b: usize| integrators[b].as_rkf45().map(|rk| rk.settings.substeps);
            let first = mode(members[0]);
            if first.is_none() || members.iter().any(|&b| mode(b) != first) {
                continue;
            }
            let k = self.groups.len() as u32;
            for &b in &members {
                self.group_of[b] = k;
            }
            let indices: Vec<usize> = (0..constraints.len())
                .filter(|&i| self.group_of[constraints[i].point.body] == k)
                .collect();
            let n_constraints = indices.len();
            self.groups.push(Group {
                members,
                constraints: indices.iter().map(|&i| constraints[i].clone()).collect(),
                indices,
                projector: Projector::default(),
                impulses: vec![Vector3::zeros(); n_constraints],
                trial_impulses: vec![Vector3::zeros(); n_constraints],
            });
        }
    }

    /// `forces[i] += J_i / h` for each constraint `i` of a group, `J_i` its stage multipliers'
    /// impulse over the last step of length `h` (the world's projection writes the rest of
    /// the constraint's force).
    pub(super) fn add_stage_forces(&self, h: f64, forces: &mut [Vector3<f64>]) {
        for g in &self.groups {
            for (&i, j) in g.indices.iter().zip(&g.impulses) {
                forces[i] += j / h;
            }
        }
    }

    /// True when body `b` steps in a linked group (its integrator is called by the group).
    pub(super) fn is_linked(&self, b: usize) -> bool {
        self.group_of.get(b).is_some_and(|&g| g != ALONE)
    }
}

impl World {
    /// Steps each linked group by `h` (after the other bodies' integrator steps; the inputs
    /// of every member are already set). Returns whether a solve stayed unconverged.
    pub(super) fn step_linked_groups(&mut self, h: f64) -> Result<bool, Failure> {
        let mut unconverged = false;
        for group in &mut self.linked.groups {
            let step = LinkedStep {
                bodies: &mut self.bodies,
                integrators: &mut self.integrators,
                inputs: &self.inputs,
                members: &group.members,
                constraints: &group.constraints,
                projector: &mut group.projector,
                gravity: &self.gravity,
                impulses: &mut group.impulses,
                trial_impulses: &mut group.trial_impulses,
            };
            let stats = step
                .step(h)
                .map_err(|e| Failure::Hard(group.members[0], e.to_string()))?;
            unconverged |= stats.solve_failed();
            for &b in &group.members {
                self.last_stats[b].accumulate(&stats);
            }
        }
        Ok(unconverged)
    }
}
