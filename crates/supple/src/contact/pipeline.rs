//! The contact phase of a step: obstacles, then deformable surfaces (broad phase → narrow
//! phase → response), with statistics.
//!
//! Order within [`Contact::end_step`]:
//! 1. Obstacles (Zhuang & Canny §6 eq. 10–12, [`super::projection`]); vertices an obstacle
//!    moved become immovable for the rest of the step.
//! 2. Surfaces: swept boxes of every surface vertex, edge and triangle over the step
//!    (Liesenfeld & Stolfi §6.4), broad-phase pairs (vertex–triangle, edge–edge), the
//!    continuous test of each pair (§6.3), then the response: projection passes (each pair
//!    pushed apart along its normal, mass-weighted, with friction) until no pair meets
//!    during the step, and, past `max_iterations`, the fail-safe: the vertices of every pair
//!    still meeting go back to their start-of-step positions (which met nothing), repeated
//!    until no pair meets. Springs mode instead prunes and adds Liesenfeld's contact springs.
//! 3. Velocities follow the position corrections, `v¹ += Δx / dt`, except that no pair the
//!    surface response pushed apart leaves it separating faster than it did before
//!    (`pipeline/velocity.rs`).

pub use super::detect::PairHit;
mod hold;
mod inside;
pub use inside::Inside;
mod skips;
pub use skips::SkipChecks;
mod sliding_hold;
mod surface_hold;
mod surfaces;
mod velocity;

use super::detect::Detector;
use super::projection::{project_obstacles, ObstacleStats};
use super::rounded::push_triangles_out;
use super::slide::Slide;
use super::springs::{Anchors, ContactSprings};
use super::surface::ContactSurface;
use super::uncrush::{lift_body, LiftStats};
use super::{ContactError, ContactSettings, Response};
use crate::body::Body;
use crate::clock::Instant;
use crate::time::BodyInputs;
use nalgebra::Vector3;

/// Projection passes stop when a pass finds more than this many times the first pass's
/// meeting pairs ([`Contact::end_step`]'s surface response).
const GROWTH_LIMIT: usize = 4;

/// Contact statistics of one step.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ContactStats {
    /// Candidate pairs from the broad phase (first pass).
    pub broad_pairs: usize,
    /// Broad-phase work (sweep-and-prune swaps, BVH node visits), all passes.
    pub broad_work: usize,
    /// Pairs given to the continuous test, all passes.
    pub pairs_tested: usize,
    /// Obstacle contacts (vertices) plus surface pairs that met (first pass).
    pub contacts: usize,
    /// Projection passes run (0 when nothing met).
    pub iterations: usize,
    /// Vertices returned to their start-of-step positions by the fail-safe.
    pub frozen: usize,
    /// Pairs still meeting after the fail-safe (only when both sides are immovable).
    pub unresolved: usize,
    /// Searches stopped by a work bound, all passes: continuous tests that reached theirs
    /// (such a pair is reported as meeting at the earliest time the test could not clear, so
    /// the response moves it apart or the fail-safe returns its vertices to their start
    /// positions; see `contact::ccd`, *Bounded work*), plus fail-safe loops that reached
    /// theirs. 0 in a well-posed scene; a count here means some pairs were resolved
    /// conservatively rather than exactly.
    pub bounded_out: usize,
    /// Vertices lifted so that no tet in contact is left flat or inverted by the obstacle
    /// projection, and tets still below their target volume after the bounded sweeps (see
    /// [`super::uncrush`]).
    pub lifts: usize,
    pub crushed: usize,
    /// Live contact springs (springs mode).
    pub springs: usize,
    /// Surface vertices held at the surface response's positions for a second solve of
    /// their body (body–body and self contact inside the implicit solve, see
    /// `pipeline/surface_hold.rs`), and the bodies solved again.
    pub surface_holds: usize,
    pub surface_resolves: usize,
    /// Deepest penetration (m) the step produced before the response: obstacle depth of the
    /// integrator's end positions, depth of surface pairs that crossed, or the deepest live
    /// contact spring.
    pub max_penetration: f64,
    /// The same, per body.
    pub body_penetration: Vec<f64>,
    /// Wall time (s) of the broad phase, the narrow phase and the response.
    pub broad_s: f64,
    pub narrow_s: f64,
    pub response_s: f64,
    /// Wall time (s) of the surface hold's second solves (`world/hold.rs`: the holds, the
    /// bodies' solves and the momentum restore; not the contact phase run after them); 0
    /// when none ran.
    pub resolve_s: f64,
}

/// Contact state of a world (see the module doc).
#[derive(Debug)]
pub struct Contact {
    settings: ContactSettings,
    surfaces: Vec<ContactSurface>,
    /// Broad and narrow phase (absent when no surfaces can meet).
    detector: Option<Detector>,
    /// Vertices the last projection pass moved (the next pass tests only their pairs).
    moved: Vec<Vec<bool>>,
    /// Vertices the obstacle projection moved or held this step (for [`lift_body`]).
    touching: Vec<Vec<bool>>,
    x0: Vec<Vec<Vector3<f64>>>,
    v0: Vec<Vec<Vector3<f64>>>,
    /// Positions before the surface response (to update velocities).
    x_before: Vec<Vec<Vector3<f64>>>,
    inv_mass: Vec<Vec<f64>>,
    /// Vertices held for a re-solve ([`Contact::hold_obstacle_contacts`]) and their
    /// projected velocities.
    held: Vec<Vec<u32>>,
    v_hold: Vec<Vec<Vector3<f64>>>,
    /// Obstacle statistics of the first solve of a held step.
    hold_stats: Vec<ObstacleStats>,
    /// Where in the step the held contacts began, when a split there is worth it
    /// ([`super::impact_time`]).
    split: Vec<Option<f64>>,
    /// Lifts applied to the held positions of a held step.
    hold_lifts: Vec<LiftStats>,
    /// Held vertices that slide on one obstacle ([`super::slide`]), per vertex, and the
    /// vertices that ended the last step stuck by static friction.
    slides: Vec<Vec<Option<Slide>>>,
    stuck: Vec<Vec<bool>>,
    /// Per obstacle: `(Σ R_t, Σ J)` of the stuck vertices on it (a body's contact patch).
    patch: Vec<(Vector3<f64>, f64)>,
    hits: Vec<PairHit>,
    /// Pairs the surface response pushed apart this step, and their relative normal
    /// velocities before it (`pipeline/velocity.rs`).
    pushed: Vec<PairHit>,
    pushed_u: Vec<f64>,
    /// Vertices the surface response moved this step (pushes and the fail-safe), their
    /// velocities after the contact phase, and the ones held for a second solve
    /// (`pipeline/surface_hold.rs`).
    surface_moved: Vec<Vec<bool>>,
    /// How many vertices are marked in `surface_moved`.
    surface_moves: usize,
    surface_v: Vec<Vec<Vector3<f64>>>,
    surface_held: Vec<Vec<u32>>,
    /// Per body: its linear momentum and its angular momentum about the origin after the
    /// first contact phase, whether an obstacle touched it this step, and its island (the
    /// bodies the surface response's pairs connect: a union–find forest over bodies).
    surface_momentum: Vec<(Vector3<f64>, Vector3<f64>)>,
    obstacle_touch: Vec<bool>,
    island: Vec<usize>,
    /// The surface response's last contact-free state (`pipeline/skips.rs`): every body's
    /// positions and velocities when a detection pass last found no meeting pair, whether
    /// they are current (`clean`), and whether the contact phase running is the one after
    /// the second solves (`again`).
    clean_x: Vec<Vec<Vector3<f64>>>,
    clean_v: Vec<Vec<Vector3<f64>>>,
    clean: bool,
    again: bool,
    /// Checks every pruned detection pass against a full one (`pipeline/skips.rs`; tests).
    check_skips: bool,
    skips_checked: SkipChecks,
    check_hits: Vec<PairHit>,
    /// The first contact phase's statistics while [`Contact::end_step_again`] runs.
    first_stats: ContactStats,
    springs: ContactSprings,
    spring_p: Vec<Vector3<f64>>,
    thickness: f64,
    spring_stiffness: f64,
    stats: ContactStats,
}

impl Contact {
    /// Prepares contact for `bodies` stepped by `dt` (surfaces, broad phase, workspaces). In
    /// springs mode ([`uses_springs`](Self::uses_springs)) the step inputs of the bodies need
    /// anchors (their matrices then change between steps).
    pub fn new(settings: ContactSettings, bodies: &[Body], dt: f64) -> Result<Self, ContactError> {
        settings.validate()?;
        let surfaces: Vec<ContactSurface> = bodies
            .iter()
            .map(|b| ContactSurface::new(&b.mesh.positions, &b.mesh.tets))
            .collect();
        let edge_sum: f64 = surfaces
            .iter()
            .map(|s| s.mean_edge * s.edges.len() as f64)
            .sum();
        let edge_count: usize = surfaces.iter().map(|s| s.edges.len()).sum();
        let mean_edge = if edge_count > 0 {
            edge_sum / edge_count as f64
        } else {
            1.0
        };
        let thickness = settings.thickness.unwrap_or(0.01 * mean_edge);
        // Default spring stiffness: the anchors keep each vertex's own share implicit but lag
        // the other side's, which stays stable while h² k / m is below about one (m the
        // lightest surface vertex mass): k = ¼ m / h².
        let lightest = bodies
            .iter()
            .zip(&surfaces)
            .flat_map(|(b, s)| s.vertices.iter().map(|&v| b.mass.lumped[v as usize]))
            .fold(f64::INFINITY, f64::min);
        let spring_stiffness = match settings.response {
            Response::Springs { stiffness } => stiffness.unwrap_or(0.25 * lightest / (dt * dt)),
            Response::Projection | Response::Auto(_) | Response::Ipc(_) => 0.0,
        };
        let surfaces_meet =
            settings.self_collision || (settings.body_collision && bodies.len() > 1);
        let detector = surfaces_meet.then(|| Detector::new(&settings, &surfaces));
        let n_obstacles = settings.obstacles.len();
        let per_body = |f: &dyn Fn(&Body) -> usize| -> Vec<Vec<Vector3<f64>>> {
            bodies
                .iter()
                .map(|b| vec![Vector3::zeros(); f(b)])
                .collect()
        };
        let x0 = per_body(&|b| b.n_vertices());
        let v0 = per_body(&|b| b.n_vertices());
        let x_before = per_body(&|b| b.n_vertices());
        let inv_mass = bodies.iter().map(|b| vec![0.0; b.n_vertices()]).collect();
        let v_hold = per_body(&|b| b.n_vertices());
        let held = bodies.iter().map(|_| Vec::new()).collect();
        let stats = ContactStats {
            body_penetration: vec![0.0; bodies.len()],
            ..ContactStats::default()
        };
        let moved = bodies.iter().map(|b| vec![false; b.n_vertices()]).collect();
        let touching = bodies.iter().map(|b| vec![false; b.n_vertices()]).collect();
        Ok(Self {
            settings,
            surfaces,
            detector,
            moved,
            touching,
            x0,
            v0,
            x_before,
            inv_mass,
            held,
            v_hold,
            hold_stats: vec![ObstacleStats::default(); bodies.len()],
            split: vec![None; bodies.len()],
            hold_lifts: vec![LiftStats::default(); bodies.len()],
            slides: bodies.iter().map(|b| vec![None; b.n_vertices()]).collect(),
            stuck: bodies.iter().map(|b| vec![false; b.n_vertices()]).collect(),
            patch: vec![(Vector3::zeros(), 0.0); n_obstacles],
            hits: Vec::new(),
            pushed: Vec::new(),
            pushed_u: Vec::new(),
            surface_moved: bodies.iter().map(|b| vec![false; b.n_vertices()]).collect(),
            surface_moves: 0,
            surface_v: per_body(&|b| b.n_vertices()),
            surface_held: bodies
                .iter()
                .map(|b| Vec::with_capacity(b.n_vertices()))
                .collect(),
            surface_momentum: vec![(Vector3::zeros(), Vector3::zeros()); bodies.len()],
            obstacle_touch: vec![false; bodies.len()],
            island: (0..bodies.len()).collect(),
            clean_x: per_body(&|b| b.n_vertices()),
            clean_v: per_body(&|b| b.n_vertices()),
            clean: false,
            again: false,
            check_skips: false,
            skips_checked: SkipChecks::default(),
            check_hits: Vec::new(),
            first_stats: stats.clone(),
            springs: ContactSprings::default(),
            spring_p: Vec::new(),
            thickness,
            spring_stiffness,
            stats,
        })
    }

    pub fn settings(&self) -> &ContactSettings {
        &self.settings
    }

    pub fn surfaces(&self) -> &[ContactSurface] {
        &self.surfaces
    }

    /// Separation the projection response leaves (m).
    pub fn thickness(&self) -> f64 {
        self.thickness
    }

    /// Contact-spring stiffness (N/m; 0 unless springs mode).
    pub fn spring_stiffness(&self) -> f64 {
        self.spring_stiffness
    }

    pub fn springs(&self) -> &ContactSprings {
        &self.springs
    }

    /// Statistics of the last step.
    pub fn stats(&self) -> &ContactStats {
        &self.stats
    }

    /// True in springs mode: the bodies' step inputs carry anchors
    /// ([`crate::time::Anchors`]) that [`begin_step`](Self::begin_step) fills.
    pub fn uses_springs(&self) -> bool {
        matches!(self.settings.response, Response::Springs { .. })
    }

    /// Records the start-of-step state and, in springs mode, writes the springs' lagged
    /// shares into the bodies' step inputs as anchors (so the integrator sees them as forces
    /// and stiffness). Vertices held in the inputs get no share.
    pub fn begin_step(&mut self, bodies: &[Body], inputs: &mut [BodyInputs]) {
        for (b, body) in bodies.iter().enumerate() {
            self.x0[b].copy_from_slice(&body.x);
            self.v0[b].copy_from_slice(&body.v);
        }
        if matches!(self.settings.response, Response::Springs { .. }) {
            self.spring_p.clear();
            for s in &self.springs.springs {
                self.spring_p.push(s.separation(|b, v| bodies[b].x[v]));
            }
            for (input, body) in inputs.iter_mut().zip(bodies) {
                if !input.anchors.enabled() {
                    input.anchors = Anchors::zeros(body.n_vertices());
                }
                input.anchors.clear();
            }
            for (s, p) in self.springs.springs.iter().zip(&self.spring_p) {
                for k in 0..4 {
                    let (b, v) = (s.vertices[k].0 as usize, s.vertices[k].1 as usize);
                    let input = &mut inputs[b];
                    if s.w[k] == 0.0 || input.fixed[v] {
                        continue;
                    }
                    let (kappa, c) = s.share(k, p, &bodies[b].x[v]);
                    input.anchors.kappa[v] += kappa;
                    input.anchors.offset[v] += c;
                }
            }
        }
    }

    /// The contact phase after the integrators moved the bodies from `t0` to `t0 + dt`.
    pub fn end_step(&mut self, bodies: &mut [Body], t0: f64, dt: f64) {
        self.obstacle_phase(bodies, t0, dt);
        self.surface_phase(bodies, t0, dt);
    }

    /// The first part of [`end_step`](Self::end_step): the obstacles (projection, lifts,
    /// faces pushed out of rounded obstacles). The world checks the bodies between the two
    /// parts, so that a state the obstacles blew up (an obstacle that swallows a body pushes
    /// its vertices out by the obstacle's size) is failed before the surface phase's
    /// continuous tests sweep those motions (`pipeline/inside.rs`).
    pub fn obstacle_phase(&mut self, bodies: &mut [Body], t0: f64, dt: f64) {
        let mut stats = std::mem::take(&mut self.stats);
        let body_penetration = std::mem::take(&mut stats.body_penetration);
        stats = ContactStats {
            body_penetration,
            ..ContactStats::default()
        };
        stats.body_penetration.fill(0.0);
        // 1. Obstacles.
        let t_resp = Instant::now();
        for (b, body) in bodies.iter_mut().enumerate() {
            self.x_before[b].copy_from_slice(&body.x);
            self.obstacle_touch[b] = false;
            if self.settings.obstacles.is_empty() {
                continue;
            }
            let o = project_obstacles(
                &self.settings.obstacles,
                t0,
                dt,
                &self.surfaces[b].vertices,
                &body.fixed,
                &self.x0[b],
                &mut body.x,
                &mut body.v,
                self.settings.skin,
            );
            // No tet in contact is left flat or inverted by the projection.
            let touching = &mut self.touching[b];
            for (t, (x, xb)) in touching
                .iter_mut()
                .zip(body.x.iter().zip(&self.x_before[b]))
            {
                *t = x != xb;
            }
            let lift = lift_body(
                &self.settings.obstacles,
                t0 + dt,
                body,
                touching,
                &self.x_before[b],
            );
            let held_lift = std::mem::take(&mut self.hold_lifts[b]);
            stats.lifts += lift.lifts + held_lift.lifts;
            stats.crushed += lift.unresolved;
            // Faces poking into spheres and capsules (the vertices are already out).
            let (faces, face_depth) = push_triangles_out(
                &self.settings.obstacles,
                t0 + dt,
                &self.surfaces[b].triangles,
                &body.fixed,
                &mut body.x,
                &mut body.v,
                self.settings.skin,
                3,
            );
            stats.contacts += faces;
            // A held step reports what its first solve ran into.
            let held = self.hold_stats[b];
            self.obstacle_touch[b] = o.contacts + held.contacts + faces > 0;
            stats.contacts += o.contacts.max(held.contacts);
            stats.body_penetration[b] = o.max_penetration.max(held.max_penetration).max(face_depth);
            self.hold_stats[b] = ObstacleStats::default();
        }
        // Vertices on an obstacle (moved by it, or within the thickness of one) are
        // immovable for the surface response, so it cannot push them into the obstacle.
        let t1 = t0 + dt;
        let obstacles = &self.settings.obstacles;
        let near = self.thickness;
        for (b, body) in bodies.iter().enumerate() {
            let lumped = &body.mass.lumped;
            let inv_mass = &mut self.inv_mass[b];
            for (i, im) in inv_mass.iter_mut().enumerate() {
                let pinned = body.fixed[i] || body.x[i] != self.x_before[b][i];
                *im = if pinned { 0.0 } else { 1.0 / lumped[i] };
            }
            // Only surface vertices take part in pairs.
            for &i in &self.surfaces[b].vertices {
                let i = i as usize;
                if obstacles
                    .iter()
                    .any(|o| o.proximity(t1, &body.x[i]).distance < near)
                {
                    inv_mass[i] = 0.0;
                }
            }
            self.x_before[b].copy_from_slice(&body.x);
        }
        stats.response_s += t_resp.elapsed().as_secs_f64();
        self.stats = stats;
    }

    /// The rest of [`end_step`](Self::end_step) after
    /// [`obstacle_phase`](Self::obstacle_phase): the surfaces, the obstacles again for
    /// vertices the surface response pushed into one, and the velocities.
    pub fn surface_phase(&mut self, bodies: &mut [Body], t0: f64, dt: f64) {
        let n_bodies = bodies.len();
        let mut stats = std::mem::take(&mut self.stats);
        // 2. Surfaces.
        if self.detector.is_some() {
            match self.settings.response {
                Response::Projection | Response::Auto(_) | Response::Ipc(_) => {
                    self.project_surfaces(bodies, dt, &mut stats)
                }
                Response::Springs { .. } => self.update_springs(bodies, dt, &mut stats),
            }
        }
        // A vertex the surface response pushed into an obstacle (it was free, the push was
        // deeper than the thickness) is projected out again: obstacles win.
        if self.detector.is_some() && !self.settings.obstacles.is_empty() {
            for (b, body) in bodies.iter_mut().enumerate() {
                // (Its contacts were counted by the first projection.)
                project_obstacles(
                    &self.settings.obstacles,
                    t0,
                    dt,
                    &self.surfaces[b].vertices,
                    &body.fixed,
                    &self.x_before[b],
                    &mut body.x,
                    &mut body.v,
                    self.settings.skin,
                );
            }
        }
        // 3. Velocities follow the surface response's corrections (no pair pushed apart
        // separates faster than it did before: `pipeline/velocity.rs`).
        let t_resp = Instant::now();
        self.update_velocities(bodies, dt);
        stats.response_s += t_resp.elapsed().as_secs_f64();
        // The velocities a second solve's held vertices keep (`pipeline/surface_hold.rs`).
        if self.surface_moves > 0 {
            for ((v, moved), body) in (self.surface_v.iter_mut())
                .zip(&self.surface_moved)
                .zip(&*bodies)
            {
                for (i, _) in moved.iter().enumerate().filter(|(_, m)| **m) {
                    v[i] = body.v[i];
                }
            }
        }
        stats.max_penetration = stats
            .body_penetration
            .iter()
            .take(n_bodies)
            .fold(0.0, |a, &b| a.max(b));
        self.stats = stats;
    }
}
