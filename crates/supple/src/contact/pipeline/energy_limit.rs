//! The energy-limited contact step (opt-in, [`ContactSettings::energy_limit`](crate::contact::ContactSettings::energy_limit)).
//!
//! The projection response and the surface hold's second solve (`surface_hold.rs`) move
//! contact vertices to prescribed positions; a prescribed motion can do positive work, so a
//! step with contact can end with more energy than it began with although nothing outside
//! did work (the snapping torus, `scenes/snapping_torus.toml`, gained up to 0.39 J in one
//! 2.5 ms step after its release; EXPERIMENTS.md). This step takes such a rise back out, as
//! a **correction, not physics**: the idea of correcting velocities after a step so that the
//! energy does not grow is Su, Sheth & Fedkiw 2013, "Energy conservation for the simulation
//! of deformable bodies" (IEEE TVCG 19(2)); here it only ever removes energy.
//!
//! After every phase of a step (solves, contact phases, exact-constraint projection), per
//! *island* — the bodies that this step's body–body pairs joined, in any contact phase —
//! that had a contact this step (a surface pair pushed, or an obstacle touched):
//! - it is skipped when something outside could do work on it in the step: a member is
//!   `driven` (the world's call: grab springs, external forces or loads, prescribed motions
//!   that move, exact constraints, rigid cores), or a member touched an obstacle while an
//!   obstacle moves; a member whose material has no energy function (warped stiffness) also
//!   skips its island;
//! - `E = K + U_el + U_g` (kinetic `½ vᵀMv` with the body's mass matrix, the model's elastic
//!   energy, gravity with lumped masses, as `Body::kinetic_energy`, `Body::elastic_energy`
//!   and `Body::potential_energy` count them) at the step's start (the contact phase's
//!   start-of-step copies) and end; when `E_end > E_start`,
//! - the island's velocity is split `v = u + d`: for a *free* island (no fixed vertex, no
//!   obstacle touched) `u` is its rigid velocity of least kinetic energy,
//!   `u = a + ω × (x − c)` with `M a = p` and `I_c ω = L − c × p` (lumped masses `m`, centre
//!   `c`, inertia `I_c`, momenta `p = Σ m v`, `L = Σ m x × v` about the origin), so the
//!   deformation velocity `d` carries no linear or angular momentum and scaling it keeps both;
//!   an island held by fixed vertices or an obstacle has no momentum to keep, and `u = 0`
//!   (all of its velocity is scaled; fixed vertices keep theirs);
//! - `v ← u + s d` with the largest `s ∈ [0, 1]` for which `K(s) = ½ (u + s d)ᵀ M (u + s d)`
//!   brings `E` back to `E_start` (a quadratic in `s`; its cross term vanishes for lumped
//!   masses); when even the `s` of least `K(s)` is not enough, that `s` is taken and the
//!   rest of the rise is reported ([`ContactStats::energy_excess`](crate::contact::ContactStats::energy_excess)).
//!
//! Positions are not changed. The workspaces are allocated once (with the contact phase),
//! the islands are visited in body order and each sum in vertex order, so the result does
//! not depend on the thread count.

use super::surface_hold::{join, root};
use super::Contact;
use crate::body::Body;
use crate::clock::Instant;
use nalgebra::{Matrix3, Vector3};

/// Workspaces and per-step bookkeeping of the energy-limited step.
#[derive(Debug, Default)]
pub(super) struct EnergyLimit {
    on: bool,
    /// Union–find forest over bodies: the pairs of every contact phase of this step.
    island: Vec<usize>,
    /// Per body: a contact this step (pair pushed or obstacle touched), an obstacle touched.
    contact: Vec<bool>,
    touched: Vec<bool>,
    /// Per body and vertex: the deformation velocity `d` and `M d` (also kinetic scratch).
    d: Vec<Vec<Vector3<f64>>>,
    md: Vec<Vec<Vector3<f64>>>,
}

impl EnergyLimit {
    pub fn new(on: bool, bodies: &[Body]) -> Self {
        if !on {
            return Self::default();
        }
        let per_vertex = || -> Vec<Vec<Vector3<f64>>> {
            (bodies.iter())
                .map(|b| vec![Vector3::zeros(); b.n_vertices()])
                .collect()
        };
        Self {
            on,
            island: (0..bodies.len()).collect(),
            contact: vec![false; bodies.len()],
            touched: vec![false; bodies.len()],
            d: per_vertex(),
            md: per_vertex(),
        }
    }

    /// Forgets the last step's islands and contacts.
    pub fn begin_step(&mut self) {
        for (b, r) in self.island.iter_mut().enumerate() {
            *r = b;
        }
        self.contact.fill(false);
        self.touched.fill(false);
    }

    /// Bodies `a` and `b` met in this step.
    pub fn join(&mut self, a: usize, b: usize) {
        if self.on {
            join(&mut self.island, a, b);
        }
    }
}

impl Contact {
    /// Records which bodies had contact in the contact phase that just ran.
    pub(super) fn note_step_contacts(&mut self) {
        if !self.limit.on {
            return;
        }
        let l = &mut self.limit;
        for (b, moved) in self.surface_moved.iter().enumerate() {
            let touched = self.obstacle_touch[b];
            l.touched[b] |= touched;
            l.contact[b] |= touched || moved.iter().any(|&m| m);
        }
    }

    /// The energy-limited step (module notes) at the end of the step `[t0, t0 + h]`, with
    /// `driven[b]` true for the bodies something outside could do work on. Does nothing
    /// unless [`ContactSettings::energy_limit`](crate::contact::ContactSettings::energy_limit) is on.
    pub fn limit_energy(
        &mut self,
        bodies: &mut [Body],
        gravity: &Vector3<f64>,
        driven: &[bool],
        t0: f64,
        h: f64,
    ) {
        let stats = &mut self.stats;
        (
            stats.energy_limited,
            stats.energy_removed,
            stats.energy_excess,
        ) = (0, 0.0, 0.0);
        if !self.limit.on {
            return;
        }
        let started = Instant::now();
        let moving_obstacle =
            (self.settings.obstacles.iter()).any(|o| o.path.pose(t0) != o.path.pose(t0 + h));
        let n = bodies.len();
        for b in 0..n {
            self.limit.island[b] = root(&self.limit.island, b);
        }
        for r in 0..n {
            let l = &self.limit;
            if l.island[r] != r {
                continue;
            }
            let members = || (r..n).filter(move |&b| l.island[b] == r);
            let outside = |b: usize| driven[b] || (moving_obstacle && l.touched[b]);
            if !members().any(|b| l.contact[b]) || members().any(outside) {
                continue;
            }
            let free = members().all(|b| !l.touched[b] && !bodies[b].fixed.iter().any(|&f| f));
            let Some((e0, e1, k1)) =
                island_energies(&mut self.limit, &self.x0, &self.v0, bodies, gravity, r)
            else {
                continue;
            };
            let excess = e1 - e0;
            if excess.is_nan() || excess <= 0.0 {
                continue;
            }
            let (removed, left) = scale_deformation(&mut self.limit, bodies, r, free, k1, excess);
            let stats = &mut self.stats;
            stats.energy_limited += 1;
            stats.energy_removed += removed;
            stats.energy_excess += left;
        }
        self.stats.energy_limit_s = started.elapsed().as_secs_f64();
    }
}

/// Kinetic energy `½ vᵀ M v` of `body` at velocities `v` (`scratch`: one entry per vertex).
fn kinetic(body: &Body, v: &[Vector3<f64>], scratch: &mut [Vector3<f64>]) -> f64 {
    body.mass.kinetic_energy(&body.elems, v, scratch)
}

/// Gravitational energy `Σ m (−g · (x − X))` at positions `x` (as `Body::potential_energy`).
fn gravitational(body: &Body, x: &[Vector3<f64>], g: &Vector3<f64>) -> f64 {
    (body.mass.lumped.iter())
        .zip(x.iter().zip(&body.mesh.positions))
        .map(|(m, (x, rest))| -m * g.dot(&(x - rest)))
        .sum()
}

/// The island of root `r`'s total energy at the step's start and end, and its kinetic
/// energy at the end; `None` when a member's model has no energy.
fn island_energies(
    limit: &mut EnergyLimit,
    x0: &[Vec<Vector3<f64>>],
    v0: &[Vec<Vector3<f64>>],
    bodies: &[Body],
    g: &Vector3<f64>,
    r: usize,
) -> Option<(f64, f64, f64)> {
    let (mut e0, mut e1, mut k1) = (0.0, 0.0, 0.0);
    for b in (r..bodies.len()).filter(|&b| limit.island[b] == r) {
        let body = &bodies[b];
        let scratch = &mut limit.md[b];
        let el0 = body.model.energy(&body.elems, &x0[b])?;
        let el1 = body.model.energy(&body.elems, &body.x)?;
        let k = kinetic(body, &body.v, scratch);
        e0 += el0 + kinetic(body, &v0[b], scratch) + gravitational(body, &x0[b], g);
        e1 += el1 + k + gravitational(body, &body.x, g);
        k1 += k;
    }
    Some((e0, e1, k1))
}

/// The rigid velocity of least kinetic energy of the island of root `r`, `(a, ω, c)` with
/// `u(x) = a + ω × (x − c)` (module notes; lumped masses). `None` without mass.
fn rigid_velocity(
    bodies: &[Body],
    island: &[usize],
    r: usize,
) -> Option<(Vector3<f64>, Vector3<f64>, Vector3<f64>)> {
    let (mut p, mut l, mut first) = (Vector3::zeros(), Vector3::zeros(), Vector3::zeros());
    let (mut mass, mut second) = (0.0, Matrix3::zeros());
    for b in (r..bodies.len()).filter(|&b| island[b] == r) {
        let body = &bodies[b];
        for ((x, v), &m) in body.x.iter().zip(&body.v).zip(&body.mass.lumped) {
            p += m * v;
            l += m * x.cross(v);
            mass += m;
            first += m * x;
            second += m * x * x.transpose();
        }
    }
    if mass.is_nan() || mass <= 0.0 {
        return None;
    }
    let c = first / mass;
    // Σ m (x − c)(x − c)ᵀ, then I_c = tr(·) I − (·).
    let spread = second - mass * c * c.transpose();
    let inertia = Matrix3::identity() * spread.trace() - spread;
    // Vertices on a line have no inertia about it: no rotation then.
    let omega = (inertia.try_inverse()).map_or(Vector3::zeros(), |inv| inv * (l - c.cross(&p)));
    Some((p / mass, omega, c))
}

/// Scales the deformation velocity of the island of root `r` (module notes) so that its
/// kinetic energy `k1` drops by `excess`, as far as scaling to zero allows. Returns the
/// energy removed and the part of `excess` left.
fn scale_deformation(
    limit: &mut EnergyLimit,
    bodies: &mut [Body],
    r: usize,
    free: bool,
    k1: f64,
    excess: f64,
) -> (f64, f64) {
    let n = bodies.len();
    let rigid = if free {
        rigid_velocity(bodies, &limit.island, r)
    } else {
        None
    };
    // K(s) = K_u + s B + s² A with A = ½ dᵀMd, B = uᵀMd = vᵀMd − dᵀMd, K(1) = k1.
    let (mut a, mut vmd) = (0.0, 0.0);
    for b in (r..n).filter(|&b| limit.island[b] == r) {
        let body = &bodies[b];
        let d = &mut limit.d[b];
        for (i, di) in d.iter_mut().enumerate() {
            *di = if body.fixed[i] {
                Vector3::zeros()
            } else if let Some((lin, omega, c)) = rigid {
                body.v[i] - (lin + omega.cross(&(body.x[i] - c)))
            } else {
                body.v[i]
            };
        }
        let md = &mut limit.md[b];
        body.mass.mul_vec(&body.elems, d, md);
        for ((di, mdi), vi) in d.iter().zip(md.iter()).zip(&body.v) {
            a += 0.5 * di.dot(mdi);
            vmd += vi.dot(mdi);
        }
    }
    let bq = vmd - 2.0 * a;
    let ku = k1 - bq - a;
    let target = k1 - excess;
    let k = |s: f64| ku + s * bq + s * s * a;
    if a.is_nan() || a <= 0.0 {
        return (0.0, excess);
    }
    let lowest = (-bq / (2.0 * a)).clamp(0.0, 1.0);
    let s = if k(lowest) >= target {
        lowest
    } else {
        // The larger root of A s² + B s + (K_u − K*) = 0, between `lowest` and 1.
        let disc = (bq * bq - 4.0 * a * (ku - target)).max(0.0);
        ((-bq + disc.sqrt()) / (2.0 * a)).clamp(lowest, 1.0)
    };
    for b in (r..n).filter(|&b| limit.island[b] == r) {
        for (v, d) in bodies[b].v.iter_mut().zip(&limit.d[b]) {
            *v -= (1.0 - s) * d;
        }
    }
    let removed = k1 - k(s);
    (removed, (excess - removed).max(0.0))
}

#[cfg(test)]
#[path = "energy_limit_tests.rs"]
mod tests;
