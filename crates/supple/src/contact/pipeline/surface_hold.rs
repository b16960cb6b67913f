//! Body–body and self contact held inside the implicit solve (one-step schemes that move held
//! vertices themselves, [`crate::time::Integrator::moves_held_vertices`]).
//!
//! The surface response ([`Contact::end_step`], step 2) decides where the vertices of the
//! pairs that met end the step, but only those vertices move: their neighbours keep the
//! integrator's positions. When the integrator had driven two surfaces centimetres into each
//! other (a ring pulled tight round a post, a body pressed into another), the pushes back
//! strain the surface layer against its elastic forces and store energy that no force did
//! work for: the snapping torus (`scenes/snapping_torus.toml`) gained 10 J after its release
//! this way, with 2–4 cm penetrations pushed out every step.
//!
//! So, as the sliding hold does for obstacles ([`super::sliding_hold`]), the step is solved
//! again with the contact inside it: every vertex the surface response moved is held, moving
//! from its start position to where the response put it (`v = (x_end − x⁰)/h`), and its body
//! is solved again from the step's start — the whole body answers the contact in the implicit
//! solve, as it would to a prescribed boundary motion. The contact phase then runs once more
//! on the new end state (interior vertices that moved in the second solve are tested and
//! pushed as usual; one round, so the work is bounded; a step whose response needed the
//! fail-safe is not solved again). A held vertex ends the step with the
//! velocity the first contact phase gave it (its impulse response,
//! [`super::velocity`]), not with its prescribed one, which would carry the push-out of a
//! pair that began closer than the thickness as a separation speed.

use super::Contact;
use crate::body::Body;
use crate::time::MovingHolds;
use nalgebra::{Matrix3, Vector3};

impl Contact {
    /// True when body–body or self contact is held in the solve (projection response with
    /// [`crate::contact::ContactSettings::hold_surfaces`]) and surfaces can meet.
    pub fn holds_surfaces(&self) -> bool {
        self.settings.hold_surfaces
            && self.detector.is_some()
            && matches!(
                self.settings.response,
                super::Response::Projection | super::Response::Auto(_)
            )
    }

    /// True when the surfaces are held ([`holds_surfaces`](Self::holds_surfaces)) and the
    /// last contact phase's surface response moved a vertex (there is something to solve
    /// again).
    pub fn surface_response_moved(&self) -> bool {
        self.holds_surfaces() && self.surface_moves > 0
    }

    /// Holds the vertices of body `b` that the last surface response moved (module notes) in
    /// `fixed` / `moving` for a second solve of the step of length `h`, and puts the body
    /// back at the step's start. Returns the number held (0: nothing to solve again; the body
    /// is then left as it is).
    pub fn hold_surface_contacts(
        &mut self,
        b: usize,
        body: &mut Body,
        fixed: &mut [bool],
        moving: &mut MovingHolds,
        h: f64,
    ) -> usize {
        self.surface_held[b].clear();
        // A response that needed its fail-safe or reached a work bound has no positions worth
        // holding (a bar thrown 10⁶ m by a metre-deep obstacle projection, `bounded_work.rs`):
        // such a step keeps what the contact phase made of it.
        let s = &self.stats;
        if !self.holds_surfaces() || s.frozen > 0 || s.unresolved > 0 || s.bounded_out > 0 {
            return 0;
        }
        let held = &mut self.surface_held[b];
        let x0 = &self.x0[b];
        for (i, &m) in self.surface_moved[b].iter().enumerate() {
            if !m || fixed[i] || moving.on[i] {
                continue;
            }
            fixed[i] = true;
            moving.on[i] = true;
            moving.velocity[i] = (body.x[i] - x0[i]) / h;
            held.push(i as u32);
        }
        if !held.is_empty() {
            body.x.copy_from_slice(x0);
            body.v.copy_from_slice(&self.v0[b]);
        }
        held.len()
    }

    /// Records the wall time (s) of the step's second solves in the statistics
    /// ([`ContactStats::resolve_s`](super::ContactStats::resolve_s)).
    pub fn note_resolve_time(&mut self, seconds: f64) {
        self.stats.resolve_s = seconds;
    }

    /// Records every body's momenta after the first contact phase, before the second solves
    /// (see [`restore_island_momenta`](Self::restore_island_momenta)).
    pub fn record_surface_momenta(&mut self, bodies: &[Body]) {
        for (m, body) in self.surface_momentum.iter_mut().zip(bodies) {
            *m = momentum(body);
        }
    }

    /// Ends the holds of [`hold_surface_contacts`](Self::hold_surface_contacts) after the
    /// second solve: the held vertices are free again and keep the first contact phase's
    /// velocities.
    pub fn release_surface_holds(
        &mut self,
        b: usize,
        body: &mut Body,
        fixed: &mut [bool],
        moving: &mut MovingHolds,
    ) {
        for &i in &self.surface_held[b] {
            let i = i as usize;
            fixed[i] = body.fixed[i];
            moving.on[i] = false;
            body.v[i] = self.surface_v[b][i];
        }
        // A body an obstacle touched in its second solve is not free.
        self.obstacle_touch[b] |= self.hold_stats[b].contacts > 0;
    }

    /// After every body's second solve: each island of bodies that the surface response's
    /// pairs connect, and that nothing else holds (no fixed vertex, no obstacle contact in
    /// either solve), gets back the linear and angular momentum it had after the first
    /// contact phase. The holds' reactions in a second solve are each body's own, not equal
    /// and opposite between the bodies (the held motions come from pushes weighted by the
    /// surface vertices' masses, not by what each body answers), so without this the
    /// head-on tubes (`scenes/head_on.toml`) ended with a total momentum of −0.27 kg·m/s
    /// from 0 (measured). The difference goes back as the change of least kinetic energy
    /// that restores both momenta, a rigid velocity `a + ω × (x − c)` on the island's vertices
    /// not held (mass `M`, centre `c`, inertia `I_c`): `a = Δp / M`,
    /// `I_c ω = ΔL − c × Δp` (`ΔL` about the origin). Restoring each body's own momentum
    /// instead also removed the momentum the holds rightly pass between them (restitution of
    /// the head-on tubes 0.58 instead of 0.72, measured).
    pub fn restore_island_momenta(&mut self, bodies: &mut [Body]) {
        // Flatten the forest: `island[b]` becomes b's root.
        for b in 0..bodies.len() {
            let mut r = b;
            while self.island[r] != r {
                r = self.island[r];
            }
            self.island[b] = r;
        }
        let island = &self.island;
        for root in 0..bodies.len() {
            let members = || (0..bodies.len()).filter(move |&b| island[b] == root);
            let resolved = members().any(|b| !self.surface_held[b].is_empty());
            let free =
                members().all(|b| !self.obstacle_touch[b] && !bodies[b].fixed.iter().any(|&f| f));
            if !(resolved && free) {
                continue;
            }
            let (mut p, mut l) = (Vector3::zeros(), Vector3::zeros());
            let mut sum = RigidSums::default();
            for b in members() {
                let (pb, lb) = self.surface_momentum[b];
                p += pb;
                l += lb;
                sum.add(&bodies[b], &self.surface_held[b], &mut self.touching[b]);
            }
            let Some((a, omega, c)) = sum.correction(p, l) else {
                continue;
            };
            for b in members() {
                let (body, skip) = (&mut bodies[b], &self.touching[b]);
                for i in (0..body.x.len()).filter(|&i| !skip[i]) {
                    body.v[i] += a + omega.cross(&(body.x[i] - c));
                }
            }
        }
        for held in &mut self.surface_held {
            held.clear();
        }
    }

    /// Joins the islands of bodies `a` and `b` (union–find over the handful of bodies of a
    /// world).
    pub(super) fn join_islands(&mut self, a: usize, b: usize) {
        join(&mut self.island, a, b);
    }

    /// The contact phase again after the second solves (module notes), reporting what the
    /// first one found: its contacts and penetrations (those before any response), with the
    /// work of both; `held` vertices of `resolves` bodies were held.
    pub fn end_step_again(
        &mut self,
        bodies: &mut [Body],
        t0: f64,
        dt: f64,
        held: usize,
        resolves: usize,
    ) {
        // (A swap of two buffers, so that the step allocates nothing.)
        std::mem::swap(&mut self.stats, &mut self.first_stats);
        self.again = true;
        self.end_step(bodies, t0, dt);
        self.again = false;
        let (s, first) = (&mut self.stats, &self.first_stats);
        // The broad pairs of the step's first (full) pass.
        s.broad_pairs = first.broad_pairs;
        s.broad_work += first.broad_work;
        s.pairs_tested += first.pairs_tested;
        s.iterations += first.iterations;
        s.frozen += first.frozen;
        s.unresolved = s.unresolved.max(first.unresolved);
        s.bounded_out += first.bounded_out;
        s.lifts += first.lifts;
        s.crushed = s.crushed.max(first.crushed);
        s.contacts = first.contacts;
        s.max_penetration = first.max_penetration;
        s.body_penetration.copy_from_slice(&first.body_penetration);
        s.broad_s += first.broad_s;
        s.narrow_s += first.narrow_s;
        s.response_s += first.response_s;
        s.surface_holds = held;
        s.surface_resolves = resolves;
    }
}

/// The root of `b` in a union–find forest over bodies.
pub(super) fn root(forest: &[usize], mut b: usize) -> usize {
    while forest[b] != b {
        b = forest[b];
    }
    b
}

/// Joins the trees of `a` and `b` in a union–find forest over bodies (the smaller root wins).
pub(super) fn join(forest: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (root(forest, a), root(forest, b));
    if ra != rb {
        forest[ra.max(rb)] = ra.min(rb);
    }
}

/// Linear momentum `Σ m v` and angular momentum about the origin `Σ m x × v` of a body
/// (lumped masses).
fn momentum(body: &Body) -> (Vector3<f64>, Vector3<f64>) {
    let m = &body.mass.lumped;
    body.x.iter().zip(&body.v).zip(m).fold(
        (Vector3::zeros(), Vector3::zeros()),
        |(p, l), ((x, v), &m)| (p + m * v, l + m * x.cross(v)),
    )
}

/// Sums over the vertices not held of an island's bodies, for the rigid velocity that gives
/// the island its momenta back ([`Contact::restore_island_momenta`]).
#[derive(Default)]
struct RigidSums {
    /// Current momenta of all vertices, and mass, first and second moments of the free ones.
    p: Vector3<f64>,
    l: Vector3<f64>,
    mass: f64,
    first: Vector3<f64>,
    second: Matrix3<f64>,
}

impl RigidSums {
    /// Adds `body`, whose vertices in `held` are skipped (marked in `mask`, a workspace).
    fn add(&mut self, body: &Body, held: &[u32], mask: &mut [bool]) {
        mask.fill(false);
        for &i in held {
            mask[i as usize] = true;
        }
        let (p, l) = momentum(body);
        self.p += p;
        self.l += l;
        for ((x, &m), _) in (body.x.iter().zip(&body.mass.lumped))
            .zip(mask.iter())
            .filter(|(_, &s)| !s)
        {
            self.mass += m;
            self.first += m * x;
            self.second += m * x * x.transpose();
        }
    }

    /// `(a, ω, c)` restoring the momenta `(p, l)`; `None` without free mass.
    fn correction(
        &self,
        p: Vector3<f64>,
        l: Vector3<f64>,
    ) -> Option<(Vector3<f64>, Vector3<f64>, Vector3<f64>)> {
        if self.mass <= 0.0 {
            return None;
        }
        let c = self.first / self.mass;
        // Σ m (x − c)(x − c)ᵀ, then I_c = tr(·) I − (·).
        let spread = self.second - self.mass * c * c.transpose();
        let inertia = Matrix3::identity() * spread.trace() - spread;
        let dp = p - self.p;
        // Free vertices on a line have no inertia about it: no rotation then.
        let omega = inertia
            .try_inverse()
            .map_or(Vector3::zeros(), |inv| inv * (l - self.l - c.cross(&dp)));
        Some((dp / self.mass, omega, c))
    }
}
