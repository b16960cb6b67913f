//! Step control: what counts as a failed step, how a failed step is retried, and what is
//! counted for the run's verdict.
//!
//! Real-time users run at a fixed, large step and bang things together. A step that fails is
//! taken again from the state before it as two steps of half the length, recursively, down to
//! `dt / 2^max_halvings` (the classic step-size control of a fixed-step engine: the output
//! times stay on the `dt` grid). A step fails when
//! - an integrator returns an error (a barrier model's element would reach volume ≤ 0, an
//!   iterative loop reached its bound, a factorization failed),
//! - a body's state is unusable ([`Body::check_state`]: non-finite, exploded),
//! - a body's total volume leaves `volume_range` × its rest volume (crushed flat, inside
//!   out, or blown up — none of which the explosion test alone sees),
//! - more than `max_inverted_share` of a body's tets are inverted (default ½; the end of the
//!   run is judged more strictly, see [`super::verdict`]),
//! - a barrier model ([`crate::fem::ForceModel::needs_positive_volume`]) has an element at
//!   volume ≤ 0 after the contact phase,
//! - or a linear or Newton solve missed its tolerance (retried at most `unconverged_halvings`
//!   times; then the step is kept and counted, and a run with more than
//!   `max_unconverged_share` such steps fails its verdict).
//!
//! The volume and inversion rules do not apply to a *linear static answer* (a static solve of
//! a model whose forces are linear in the positions, [`crate::fem::ForceModel::tangent_is_constant`]):
//! linear elasticity has no notion of volume or inversion at large displacement, and its
//! static answer is the linear solution however large (a clamped 1 m cantilever of
//! E = 1e5 Pa sags to 12–212 × its rest volume); the world notes instead that the strains
//! are outside the linear range ([`super::World::integrator_notes`]).
//!
//! A step is also split, not for failing but for accuracy, when a held obstacle contact
//! began well inside it (`contact_splits`; see [`crate::contact::impact_time`]): it is taken
//! as two parts at the contact's start, sharing the same depth budget as the halvings.

use crate::body::Body;
use crate::fem::feasible::first_nonpositive;
use crate::mesh::signed_volume;
use nalgebra::Vector3;

use super::WorldError;

/// How the world judges and retries steps (see the module notes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepControl {
    /// A failed step is retried as two half steps, at most this many halvings deep (0: never
    /// retry; the smallest step is `dt / 2^max_halvings`).
    pub max_halvings: u32,
    /// Halvings allowed for a step whose only failure is an unconverged solve (at most
    /// `max_halvings`). Three (default): a head-on crash of two corotational tubes at
    /// ±10 m/s and dt 20 ms kept 3 of its 20 steps unconverged at a quarter step and
    /// converges at an eighth; the held crush of the stress matrix keeps fewer steps
    /// unconverged for every model and runs faster than with two (a failed try of the coupled
    /// contact step gives up within a few iterations once it stops moving).
    pub unconverged_halvings: u32,
    /// A body whose total volume leaves `[min, max]` × its rest volume has diverged.
    pub volume_range: [f64; 2],
    /// A body with more than this share of its tets inverted after a step fails the step
    /// (retried with halving, then diverged).
    pub max_inverted_share: f64,
    /// A body (of a model without a barrier) that ends the run with more than this share of
    /// its tets inverted fails the run's verdict ([`super::verdict`]); a barrier model
    /// allows none.
    pub end_inverted_share: f64,
    /// A run whose total energy rose over one step, where nothing outside did work, by more
    /// than this share of the run's energy scale fails its verdict ([`super::verdict`];
    /// `inf`: off).
    pub max_energy_rise: f64,
    /// A run in which more than this share of the steps kept unconverged solves fails
    /// ([`super::World::verdict`]).
    pub max_unconverged_share: f64,
    /// A step whose obstacle contact began well inside it (see
    /// [`crate::contact::impact_time`]) is taken in two parts, free until the contact and held
    /// after it, at most this many splits deep (0: never; one-step implicit integrators with
    /// `hold_contacts` only). Splits and halvings share the depth `max_halvings`, so no more
    /// than that many take effect. Each level costs one more solve on the steps that need it.
    pub contact_splits: u32,
}

impl Default for StepControl {
    fn default() -> Self {
        Self {
            max_halvings: 5,
            unconverged_halvings: 3,
            volume_range: [0.1, 10.0],
            // Half: a step that leaves more than half of a body's tets inverted has turned
            // it inside out, not folded it; it is retried with halving (which can avoid the
            // state) and the run diverges if that does not help. Not lower: a step cannot
            // tell a recovering body from a collapsing one, and the invertible corotational
            // elements recover from states with a third of their tets inverted
            // (tests/robustness.rs pushes a third of a bar through itself). What a run may
            // *end* with is stricter: `end_inverted_share`, none by default.
            max_inverted_share: 0.5,
            max_unconverged_share: 0.1,
            end_inverted_share: 0.0,
            max_energy_rise: 0.05,
            contact_splits: 2,
        }
    }
}

impl StepControl {
    /// Refuses settings that cannot be meant: more than 20 halvings (a millionth of the step),
    /// a volume range that does not contain 1, shares outside `[0, 1]`.
    pub fn validate(&self) -> Result<(), WorldError> {
        let bad = |key, value, reason| Err(WorldError::StepControl { key, value, reason });
        if self.contact_splits > 20 {
            return bad(
                "contact_splits",
                f64::from(self.contact_splits),
                "must be at most 20",
            );
        }
        if self.max_halvings > 20 {
            return bad(
                "max_halvings",
                f64::from(self.max_halvings),
                "must be at most 20",
            );
        }
        let [lo, hi] = self.volume_range;
        if !(0.0..1.0).contains(&lo) {
            return bad("volume_range[0]", lo, "must be in [0, 1)");
        }
        if hi.is_nan() || hi <= 1.0 {
            return bad("volume_range[1]", hi, "must be above 1 (or inf)");
        }
        for (key, v) in [
            ("max_inverted_share", self.max_inverted_share),
            ("max_unconverged_share", self.max_unconverged_share),
            ("end_inverted_share", self.end_inverted_share),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return bad(key, v, "must be in [0, 1]");
            }
        }
        if self.max_energy_rise.is_nan() || self.max_energy_rise < 0.0 {
            return bad(
                "max_energy_rise",
                self.max_energy_rise,
                "must be a number ≥ 0 (inf: off)",
            );
        }
        Ok(())
    }

    /// Why `body`'s state fails the step, if it does (see the module notes).
    pub fn check(&self, body: &Body) -> Option<String> {
        self.check_answer(body, false)
    }

    /// The volume rule of [`check_answer`](Self::check_answer) alone: why the body's total
    /// volume is outside [`volume_range`](Self::volume_range) × rest, if it is (never for a
    /// linear static answer). The world asks it between the contact phase's obstacles and
    /// surfaces, where an inverted tet may still be lifted but a blown-up body is lost.
    pub fn check_volume(&self, body: &Body, linear_static: bool) -> Option<String> {
        if linear_static {
            return None;
        }
        let rest = body.elems.volume.iter().sum::<f64>();
        let ratio = volume_and_inverted(body).0 / rest;
        let [lo, hi] = self.volume_range;
        (!(ratio >= lo && ratio <= hi))
            .then(|| format!("total volume is {ratio:.3e} × the rest volume, outside [{lo}, {hi}]"))
    }

    /// As [`check`](Self::check); with `linear_static` (the body's state is a linear static
    /// answer, see the module notes) only the state itself is judged (finite, not exploded).
    pub fn check_answer(&self, body: &Body, linear_static: bool) -> Option<String> {
        if let Some(reason) = body.check_state() {
            return Some(reason);
        }
        if linear_static {
            return None;
        }
        let (volume, inverted) = volume_and_inverted(body);
        let rest = body.elems.volume.iter().sum::<f64>();
        let ratio = volume / rest;
        let [lo, hi] = self.volume_range;
        if !(ratio >= lo && ratio <= hi) {
            return Some(format!(
                "total volume is {ratio:.3e} × the rest volume, outside [{lo}, {hi}]"
            ));
        }
        let share = inverted as f64 / body.elems.len().max(1) as f64;
        if share > self.max_inverted_share {
            return Some(format!(
                "{inverted} of {} tets ({:.1} %) are inverted, more than {:.1} %",
                body.elems.len(),
                100.0 * share,
                100.0 * self.max_inverted_share
            ));
        }
        if inverted > 0 && body.model.needs_positive_volume() {
            if let Some((e, r)) = first_nonpositive(&body.elems, &body.x) {
                return Some(format!(
                    "element {e} has current/rest volume {r:.3e}; the {} model allows no element to reach zero volume",
                    body.model.name()
                ));
            }
        }
        None
    }
}

/// Total signed volume and the number of tets with volume ≤ 0.
fn volume_and_inverted(body: &Body) -> (f64, usize) {
    let mut volume = 0.0;
    let mut inverted = 0;
    for tet in &body.elems.tets {
        let v = signed_volume(&tet.map(|i| body.x[i as usize]));
        volume += v;
        inverted += usize::from(v <= 0.0);
    }
    (volume, inverted)
}

/// What the step control did in one world step.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepReport {
    /// Failed tries that were taken again as two half steps.
    pub retries: usize,
    /// The shortest step taken (the world's `dt` when nothing failed).
    pub min_dt: f64,
    /// Times the step was split at an obstacle contact's start ([`StepControl::contact_splits`]).
    pub contact_splits: usize,
    /// The step was kept with unconverged solves after its last allowed halving.
    pub unconverged: bool,
}

/// What the step control did since the world was built.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RunTotals {
    /// World steps that needed at least one retry.
    pub retried_steps: usize,
    /// Failed tries, summed over all steps.
    pub retries: usize,
    /// The shortest step taken (infinite before the first step).
    pub min_dt: f64,
    /// Steps kept with unconverged solves.
    pub unconverged_steps: usize,
    /// Splits at obstacle contacts, summed over all steps.
    pub contact_splits: usize,
}

impl Default for RunTotals {
    fn default() -> Self {
        Self {
            retried_steps: 0,
            retries: 0,
            min_dt: f64::INFINITY,
            unconverged_steps: 0,
            contact_splits: 0,
        }
    }
}

/// Why one try at a step failed.
#[derive(Debug)]
pub(super) enum Failure {
    /// A solve missed its tolerance; the state is usable.
    Unconverged,
    /// Body `.0` cannot go on from this state, for reason `.1`.
    Hard(usize, String),
    /// An obstacle contact began at this fraction of the step: take it in two parts there.
    Split(f64),
}

/// The positions and velocities of every body (the state a retried step starts from).
#[derive(Debug)]
pub(super) struct Snapshot {
    x: Vec<Vec<Vector3<f64>>>,
    v: Vec<Vec<Vector3<f64>>>,
}

impl Snapshot {
    pub fn for_bodies(bodies: &[Body]) -> Self {
        Self {
            x: bodies.iter().map(|b| b.x.clone()).collect(),
            v: bodies.iter().map(|b| b.v.clone()).collect(),
        }
    }

    pub fn save(&mut self, bodies: &[Body]) {
        for ((x, v), b) in self.x.iter_mut().zip(&mut self.v).zip(bodies) {
            x.copy_from_slice(&b.x);
            v.copy_from_slice(&b.v);
        }
    }

    pub fn restore(&self, bodies: &mut [Body]) {
        for ((x, v), b) in self.x.iter().zip(&self.v).zip(bodies) {
            b.x.copy_from_slice(x);
            b.v.copy_from_slice(v);
        }
    }
}
