//! The sliding contact hold, for integrators that take prescribed and sliding motions
//! ([`crate::time::Integrator::moves_held_vertices`]; see [`crate::contact::slide`] and
//! [`crate::time::sliding`]).
//!
//! An active set of obstacle contacts, kept inside the implicit solve:
//! 1. [`Contact::pre_hold`]: before the step's first solve, every surface vertex resting on
//!    exactly one obstacle (within the skin plus [`RESTING`] mean edges of it, and not
//!    already leaving it) slides on it at the obstacle's normal velocity. A body in lasting contact — a box pressed by a plate —
//!    therefore stays pressed in the first solve instead of springing back in it.
//!    A vertex that ended the last step stuck by static friction starts stuck (held in all
//!    three directions, moving with the obstacle).
//! 2. [`Contact::hold_sliding`], after a solve, from the constraint impulses `R` it measured
//!    ([`crate::time::sliding::Sliding::reactions`]; normal part `J = n·R`): holds with
//!    `J < 0` (pulling the vertex against its obstacle: the body is leaving) are released;
//!    a stuck vertex whose tangential impulse exceeds `μ J` slips (Coulomb); free
//!    vertices that ended in or passed through an obstacle are added (sliding when they
//!    touch one obstacle, fully held at their projected velocity when they touch several).
//!    If anything changed the step is solved again from its start.
//! 3. [`Contact::release_sliding`]: kinetic friction on the sliding vertices' velocities
//!    (`|Δvₙ| = J / m`); the held ones move on with their prescribed velocities. A vertex that
//!    ends the step stuck, or sliding but stopped by friction, starts the next one stuck.

use super::Contact;
use crate::body::Body;
use crate::contact::impact_time::{impact_fraction, SPLIT_GAP};
use crate::contact::projection::ObstacleStats;
use crate::contact::slide::{self, Slide};
use crate::time::MovingHolds;
use nalgebra::Vector3;

/// A vertex within the skin plus this share of the mean surface edge of an obstacle at the
/// step's start rests on it ([`Contact::pre_hold`]).
pub const RESTING: f64 = 1e-3;
/// ... unless it leaves it faster than this (m/s, normal velocity relative to the obstacle).
pub const LEAVING: f64 = 1e-9;

impl Contact {
    /// Holds the vertices of body `b` resting on one obstacle at the start of the step
    /// `[t0, t0 + dt]` as sliding holds (module notes, 1); returns true when there are any.
    pub fn pre_hold(
        &mut self,
        b: usize,
        body: &Body,
        fixed: &mut [bool],
        moving: &mut MovingHolds,
        t0: f64,
        dt: f64,
    ) -> bool {
        self.held[b].clear();
        self.hold_stats[b] = ObstacleStats::default();
        self.split[b] = None;
        if !self.settings.hold_contacts || self.settings.obstacles.is_empty() {
            return false;
        }
        let tol = self.settings.skin.max(0.0) + RESTING * self.surfaces[b].mean_edge;
        let t_mid = t0 + 0.5 * dt;
        for &i in &self.surfaces[b].vertices {
            let i = i as usize;
            if fixed[i] {
                continue;
            }
            let x = &body.x[i];
            let mut found = None;
            let mut count = 0;
            for (k, o) in self.settings.obstacles.iter().enumerate() {
                let q = o.proximity(t0, x);
                if q.distance < tol {
                    count += 1;
                    found = Some((k, q.normal));
                }
            }
            let Some((k, normal)) = found.filter(|_| count == 1) else {
                continue;
            };
            if !normal.iter().all(|c| c.is_finite()) {
                continue;
            }
            // A vertex already leaving its obstacle is not held.
            let u = self.settings.obstacles[k].path.point_velocity(t_mid, x);
            if (body.v[i] - u).dot(&normal) > LEAVING {
                continue;
            }
            let stick = self.stuck[b][i];
            moving.on[i] = true;
            moving.normal[i] = normal;
            moving.velocity[i] = u;
            fixed[i] = stick;
            self.slides[b][i] = Some(Slide {
                obstacle: k,
                normal,
                approach: 0.0,
                stick,
            });
            self.held[b].push(i as u32);
        }
        !self.held[b].is_empty()
    }

    /// After a solve of body `b` over `[t0, t0 + dt]` with the holds so far: releases the
    /// adhesive ones and adds new contacts (module notes, 2). Returns true when the set
    /// changed; the body is then back at the step's start, for the caller to solve again
    /// (or to split the step, see [`Contact::impact_split`]).
    #[allow(clippy::too_many_arguments)]
    pub fn hold_sliding(
        &mut self,
        b: usize,
        body: &mut Body,
        fixed: &mut [bool],
        moving: &mut MovingHolds,
        reactions: Option<&[Vector3<f64>]>,
        t0: f64,
        dt: f64,
    ) -> bool {
        self.split[b] = None;
        if !self.settings.hold_contacts || self.settings.obstacles.is_empty() {
            return false;
        }
        let mut changed = false;
        if let Some(r) = reactions {
            // Coulomb's test per obstacle, on the stuck vertices together (the contact patch,
            // held like a rigid interface): the patch slips when the net tangential impulse
            // it needed, `|Σ R_t|`, exceeds `μ Σ J`. Per vertex, or with `Σ|R_t|`, the test
            // also counts the self-balanced tangential impulses of the body's own lateral
            // expansion under its weight: a box on an 8° slope with μ = 0.2 slipped and
            // crept 5 cm in 0.5 s either way (`Σ|R_t| / Σ J` = 0.24 against tan 8° = 0.14).
            let patch = &mut self.patch;
            patch.fill((Vector3::zeros(), 0.0));
            for &i in &self.held[b] {
                let i = i as usize;
                if let Some(s) = self.slides[b][i].filter(|s| s.stick) {
                    let jn = r[i].dot(&s.normal);
                    let p = &mut patch[s.obstacle];
                    p.0 += r[i] - s.normal * jn;
                    p.1 += jn;
                }
            }
            let (slides, obstacles) = (&mut self.slides[b], &self.settings.obstacles);
            self.held[b].retain(|&i| {
                let i = i as usize;
                let Some(s) = slides[i].as_mut() else {
                    return true;
                };
                let jn = r[i].dot(&s.normal);
                if jn < 0.0 {
                    // Adhesive: the body leaves the obstacle here.
                    moving.on[i] = false;
                    fixed[i] = false;
                    slides[i] = None;
                    changed = true;
                    return false;
                }
                // Stuck → sliding only, within a step (a vertex whose sliding friction stops
                // it starts the next step stuck, see `release_sliding`): one change per
                // vertex and step, so the re-solves cannot alternate.
                let (tangential, normal) = patch[s.obstacle];
                let mu = obstacles[s.obstacle].friction;
                if s.stick && tangential.norm() > mu * normal {
                    s.stick = false;
                    fixed[i] = false;
                    changed = true;
                }
                true
            });
        }
        // New contacts among the vertices neither fixed nor held.
        // (The mask is lent out of its workspace for the call: a move, no allocation.)
        let mut skip = std::mem::take(&mut self.touching[b]);
        for (i, s) in skip.iter_mut().enumerate() {
            *s = fixed[i] || moving.on[i];
        }
        let o = self.project_solved(b, body, &skip, t0, dt);
        let stats = &mut self.hold_stats[b];
        stats.contacts = stats.contacts.max(o.contacts + self.held[b].len());
        stats.max_penetration = stats.max_penetration.max(o.max_penetration);
        let first_new = self.held[b].len();
        for &i in &self.surfaces[b].vertices {
            let i = i as usize;
            if skip[i] || self.x_before[b][i] == body.x[i] {
                continue;
            }
            let s = slide::classify(
                &self.settings.obstacles,
                t0 + dt,
                self.settings.skin,
                &body.x[i],
                &body.v[i],
            );
            self.slides[b][i] = s;
            fixed[i] = s.is_none();
            moving.on[i] = true;
            moving.velocity[i] = self.v_hold[b][i];
            moving.normal[i] = s.map_or(Vector3::zeros(), |s| s.normal);
            self.held[b].push(i as u32);
            changed = true;
        }
        self.touching[b] = skip;
        if !changed {
            return false;
        }
        self.split[b] = impact_fraction(
            &self.settings.obstacles,
            t0,
            dt,
            self.settings.skin,
            &self.held[b][first_new..],
            &self.x0[b],
            &body.x,
            SPLIT_GAP * self.surfaces[b].mean_edge,
        );
        body.x.copy_from_slice(&self.x0[b]);
        body.v.copy_from_slice(&self.v0[b]);
        true
    }

    /// Ends the holds of body `b` after the step ending at `t1` (module notes, 3), with the
    /// constraint impulses of the last solve when the integrator measured them.
    #[allow(clippy::too_many_arguments)]
    pub fn release_sliding(
        &mut self,
        b: usize,
        body: &mut Body,
        fixed: &mut [bool],
        moving: &mut MovingHolds,
        reactions: Option<&[Vector3<f64>]>,
        t1: f64,
    ) {
        for &i in &self.held[b] {
            let i = i as usize;
            moving.on[i] = false;
            let slide = self.slides[b][i].take();
            // Next step it starts stuck when it ends this one stuck, or sliding but stopped
            // by friction (see `hold_sliding`).
            let mut stuck_next = slide.is_some_and(|s| s.stick);
            match slide {
                Some(s) if !s.stick => {
                    let dvn = match reactions.and_then(|r| r.get(i)) {
                        Some(r) => r.dot(&s.normal) / body.mass.lumped[i],
                        None => s.approach,
                    };
                    stuck_next = slide::apply_friction(
                        &self.settings.obstacles,
                        &s,
                        t1,
                        dvn,
                        &body.x[i],
                        &mut body.v[i],
                    );
                    fixed[i] = false;
                }
                Some(_) => fixed[i] = false,
                None => {
                    fixed[i] = false;
                    body.v[i] = self.v_hold[b][i];
                }
            }
            self.stuck[b][i] = stuck_next;
        }
        self.held[b].clear();
    }

    /// The vertex of body `b` that moved farthest since the step's start, and how far (m).
    pub fn farthest_move(&self, b: usize, body: &Body) -> (usize, f64) {
        self.x0[b]
            .iter()
            .zip(&body.x)
            .map(|(a, x)| (x - a).norm())
            .enumerate()
            .fold(
                (0, 0.0),
                |best, (i, d)| if d > best.1 { (i, d) } else { best },
            )
    }
}
