//! The contact hold for integrators that take no prescribed motions (the Newton schemes):
//! a free solve, then a solve with the vertices it pushed into an obstacle held where their
//! projected velocity takes them. The sliding hold for the linearized scheme is in
//! [`super::sliding_hold`].

use super::Contact;
use crate::body::Body;
use crate::contact::impact_time::{impact_fraction, SPLIT_GAP};
use crate::contact::projection::{project_obstacles, ObstacleStats};
use crate::contact::uncrush::lift_body;
use nalgebra::Vector3;

impl Contact {
    /// Contact held in the solve, for one-step implicit integrators (settings
    /// `hold_contacts`): after body `b`'s first solve of the step, finds the surface vertices
    /// that ended in or passed through an obstacle. If there are any, it restores the
    /// start-of-step state, moves each of them over the step by its projected velocity (Zhuang
    /// & Canny eq. 10: the approach relative to the obstacle removed, friction applied), to
    /// `x⁰ + h v_proj`, holds it there (marks it in `held`, the step inputs' held set), and
    /// returns true: the caller then solves the
    /// step again and calls [`release_holds`](Self::release_holds). The elastic response to
    /// the contact is then part of the implicit solve, as a constraint, instead of a
    /// displacement after it.
    ///
    /// The hold is on the velocity, not on the contact point: a vertex that started a gap `g`
    /// away stops there for this step (and closes the gap in the next ones) rather than being
    /// placed on the obstacle. Placing it on the obstacle moves it by up to `v·h` against its
    /// still-moving neighbours, and the implicit solve started from that jump stores the
    /// strain as elastic energy: the tube drop at dt = 10 ms (corotational) gained 20 J in its
    /// impact step that way (69 % of the energy released by the fall; EXPERIMENTS.md, Impacts
    /// and crushing). With the velocity hold the normal constraint does no work, friction only
    /// removes energy, and the same drop loses energy at every step.
    ///
    /// Integrators that take prescribed and sliding motions
    /// ([`crate::time::Integrator::moves_held_vertices`]) get the sliding hold instead
    /// ([`pre_hold`](Self::pre_hold), [`hold_sliding`](Self::hold_sliding)).
    pub fn hold_obstacle_contacts(
        &mut self,
        b: usize,
        body: &mut Body,
        held: &mut [bool],
        t0: f64,
        dt: f64,
    ) -> bool {
        self.held[b].clear();
        self.hold_stats[b] = ObstacleStats::default();
        self.split[b] = None;
        if !self.settings.hold_contacts || self.settings.obstacles.is_empty() {
            return false;
        }
        self.hold_stats[b] = self.project_solved(b, body, held, t0, dt);
        let x1 = &self.x_before[b];
        for &i in &self.surfaces[b].vertices {
            let i = i as usize;
            if !held[i] && x1[i] != body.x[i] {
                self.held[b].push(i as u32);
            }
        }
        if self.held[b].is_empty() {
            return false;
        }
        self.split[b] = impact_fraction(
            &self.settings.obstacles,
            t0,
            dt,
            self.settings.skin,
            &self.held[b],
            &self.x0[b],
            &body.x,
            SPLIT_GAP * self.surfaces[b].mean_edge,
        );
        body.x.copy_from_slice(&self.x0[b]);
        body.v.copy_from_slice(&self.v0[b]);
        let touching = &mut self.touching[b];
        touching.fill(false);
        for &i in &self.held[b] {
            let i = i as usize;
            body.x[i] = self.x0[b][i] + dt * self.v_hold[b][i];
            body.v[i] = Vector3::zeros();
            touching[i] = true;
        }
        // The held positions must not start the solve from a flat or inverted tet.
        let lift = lift_body(
            &self.settings.obstacles,
            t0 + dt,
            body,
            touching,
            &self.x0[b],
        );
        self.hold_lifts[b] = lift;
        for &i in &self.held[b] {
            held[i as usize] = true;
        }
        true
    }

    /// After [`hold_obstacle_contacts`](Self::hold_obstacle_contacts) held body `b`'s
    /// contacts: the fraction of the step at which the earliest of them began, if one began
    /// far enough from the obstacle (a quarter of the mean surface edge) that holding it for
    /// the whole step would leave it visibly short; the world may then take the step in two
    /// parts split there ([`crate::contact::impact_time`]).
    pub fn impact_split(&self, b: usize) -> Option<f64> {
        self.split.get(b).copied().flatten()
    }

    /// Ends a hold: the held vertices are free again and move on with their projected
    /// velocities (normal part removed, friction applied).
    pub fn release_holds(&mut self, b: usize, body: &mut Body, held: &mut [bool]) {
        for &i in &self.held[b] {
            let i = i as usize;
            held[i] = false;
            body.v[i] = self.v_hold[b][i];
        }
    }

    /// Body `b`'s solved state projected out of the obstacles (velocity projection, Zhuang &
    /// Canny eq. 10) into the workspaces `x_before[b]` and `v_hold[b]`, skipping the vertices
    /// in `skip`; the body is not changed. Vertices whose copy moved are the new contacts.
    pub(super) fn project_solved(
        &mut self,
        b: usize,
        body: &Body,
        skip: &[bool],
        t0: f64,
        dt: f64,
    ) -> ObstacleStats {
        let x1 = &mut self.x_before[b];
        x1.copy_from_slice(&body.x);
        let v1 = &mut self.v_hold[b];
        v1.copy_from_slice(&body.v);
        project_obstacles(
            &self.settings.obstacles,
            t0,
            dt,
            &self.surfaces[b].vertices,
            skip,
            &self.x0[b],
            x1,
            v1,
            self.settings.skin,
        )
    }
}
