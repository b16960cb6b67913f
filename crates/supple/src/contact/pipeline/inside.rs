//! How deep a body sits inside the obstacles before the contact phase.
//!
//! The projection response moves every free surface vertex found inside an obstacle onto
//! its surface, so a vertex at depth `d` moves at least `d`. When an obstacle swallows a
//! body (a sphere of radius 1e9 m around a scene, issue 45 item 4), that push is of the
//! obstacle's size, and the body–body continuous tests that follow sweep those motions: every
//! swept box overlaps every other, and one step of `scenes/mueller_bars.toml` spent 48 s in
//! the exact CCD before the state was judged exploded. The world asks for the depth first
//! ([`Contact::deepest_inside`]) and fails the step by the same rule as a vertex that jumped
//! ([`crate::world::JUMP_FACTOR`]), at the cost of one distance per surface vertex and
//! obstacle.

use super::Contact;
use crate::body::Body;

/// The deepest free surface vertex of a body inside an obstacle ([`Contact::deepest_inside`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Inside {
    /// The vertex (index in its body).
    pub vertex: usize,
    /// The obstacle (index in [`crate::contact::ContactSettings::obstacles`]).
    pub obstacle: usize,
    /// How far inside (m, > 0).
    pub depth: f64,
}

impl Contact {
    /// The free surface vertex of body `b` deepest inside an obstacle at its pose at time
    /// `t`, if any is inside. A NaN distance counts as infinitely deep (the state is lost
    /// and the contact phase is not worth running on it).
    pub fn deepest_inside(&self, b: usize, body: &Body, t: f64) -> Option<Inside> {
        let mut deepest: Option<Inside> = None;
        for (k, o) in self.settings.obstacles.iter().enumerate() {
            for &i in &self.surfaces[b].vertices {
                let i = i as usize;
                if body.fixed[i] {
                    continue;
                }
                let d = o.proximity(t, &body.x[i]).distance;
                let depth = if d.is_nan() { f64::INFINITY } else { -d };
                if depth > 0.0 && deepest.is_none_or(|s| depth > s.depth) {
                    deepest = Some(Inside {
                        vertex: i,
                        obstacle: k,
                        depth,
                    });
                }
            }
        }
        deepest
    }
}
