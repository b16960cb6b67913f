//! Detection passes that test only the pairs that can have changed.
//!
//! A detection pass's outcome for one pair is a function of the pair's four paths over the
//! step: its vertices' start-of-step positions `x⁰` (and velocities `v⁰`), their current end
//! positions `x` (and, for the Hermite narrow phase, end velocities `v`), the step length
//! and the thickness. Within one step only `x` (and `v`) change. So a pair none of whose
//! vertices changed since a pass that found it not meeting cannot meet now, and its swept box
//! is the one that pass computed. Two places use this:
//!
//! 1. **The response's later passes** (already so before this module): a pass after a round
//!    of pushes tests only the pairs with a vertex the pushes marked (`Contact::moved`; every
//!    vertex of a pushed pair is marked, pushed or not, and nothing else moves between passes).
//!    The pass is now pruned ([`Paths::prune`](crate::contact::detect::Paths)): only the
//!    boxes of primitives with a marked vertex are recomputed, and the BVH refits and searches
//!    only above them ([`BroadPhase::update_active`](crate::contact::broad::BroadPhase)).
//!    Same pairs tested, same hits.
//! 2. **The contact phase after the second solves** (`surface_hold.rs`): the first contact
//!    phase ended with a pass that found no meeting pair, at positions `x_c` (velocities
//!    `v_c`) recorded here ([`Contact::note_clean`]). The second solves hold the vertices the
//!    response moved and solve the rest of each body again, and the obstacles project
//!    again; a pair whose four vertices end bitwise where they were at `x_c` (`x⁰`, `v⁰` are
//!    those of the same step) has the paths it had in that pass, which found it not meeting,
//!    and keeps the box that pass gave it. So the first pass of the second phase tests only
//!    the pairs with a vertex that differs from `x_c` ([`Contact::mark_changed_since_clean`]),
//!    as a later pass would, and finds exactly what a full pass finds. The comparison is
//!    bitwise: a vertex whose held motion rounds to a different end position is tested again.
//!
//! [`Contact::set_check_skips`] runs a full pass after every pruned one and panics unless the
//! two found the same pairs (`tests/contact_skips.rs`); off by default (it doubles the work).

use super::Contact;
use crate::body::Body;
use crate::contact::NarrowPhase;

/// What [`Contact::set_check_skips`] checked.
#[doc(hidden)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SkipChecks {
    /// Pruned passes checked against a full pass.
    pub passes: usize,
    /// Of those, first passes after the second solves, and the meeting pairs they found.
    pub after_solves: usize,
    pub found_after_solves: usize,
}

impl Contact {
    /// With `on`, every pruned detection pass is followed by the same pass in full, which
    /// must find the same pairs (a panic otherwise). For tests: it doubles detection's work
    /// and is not free of allocation.
    #[doc(hidden)]
    pub fn set_check_skips(&mut self, on: bool) {
        self.check_skips = on;
    }

    /// Pruned passes checked against a full one so far ([`set_check_skips`](Self::set_check_skips)).
    #[doc(hidden)]
    pub fn skips_checked(&self) -> SkipChecks {
        self.skips_checked
    }

    /// Records the bodies' state when a detection pass of the response found no meeting pair
    /// (only in the first contact phase of a step whose bodies can be solved again).
    pub(super) fn note_clean(&mut self, bodies: &[Body]) {
        if self.again || !self.holds_surfaces() {
            return;
        }
        let hermite = self.settings.narrow_phase == NarrowPhase::Hermite;
        for (b, body) in bodies.iter().enumerate() {
            self.clean_x[b].copy_from_slice(&body.x);
            if hermite {
                self.clean_v[b].copy_from_slice(&body.v);
            }
        }
        self.clean = true;
    }

    /// In the contact phase after the second solves, when the first phase ended clean: marks
    /// in `moved` the surface vertices whose path changed since (module doc, 2) and returns
    /// true (the first pass then tests only their pairs). Otherwise false.
    pub(super) fn mark_changed_since_clean(&mut self, bodies: &[Body]) -> bool {
        let clean = std::mem::take(&mut self.clean);
        if !(self.again && clean) {
            return false;
        }
        let hermite = self.settings.narrow_phase == NarrowPhase::Hermite;
        for (b, body) in bodies.iter().enumerate() {
            let (moved, cx, cv) = (&mut self.moved[b], &self.clean_x[b], &self.clean_v[b]);
            moved.fill(false);
            for &i in &self.surfaces[b].vertices {
                let i = i as usize;
                moved[i] = body.x[i] != cx[i] || (hermite && body.v[i] != cv[i]);
            }
        }
        true
    }
}
