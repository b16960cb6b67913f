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
//! 3. Velocities follow the position corrections, `v¹ += Δx / dt`.

use super::broad::{Aabb, BroadPhase};
use super::ccd::{self, Hit};
use super::projection::{project_obstacles, ObstacleStats};
use super::springs::{ContactSprings, Spring, VertexRef};
use super::surface::ContactSurface;
use super::{ContactError, ContactSettings, NarrowPhase, Response};
use crate::body::Body;
use nalgebra::Vector3;
use std::time::Instant;

const VERTEX: u8 = 0;
const EDGE: u8 = 1;
const TRIANGLE: u8 = 2;

/// One surface primitive in the broad phase.
#[derive(Debug, Clone, Copy)]
struct Prim {
    body: u32,
    kind: u8,
    index: u32,
}

/// A pair of primitives that met during the step.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PairHit {
    /// Vertex–face: the vertex then the triangle; edge–edge: the two edges.
    pub vertices: [VertexRef; 4],
    pub hit: Hit,
    /// The first primitive came from outside the second's body (by the second's outward
    /// surface normal); a leaving pair started interpenetrated.
    pub entering: bool,
}

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
    /// Live contact springs (springs mode).
    pub springs: usize,
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
}

/// Contact state of a world (see the module doc).
#[derive(Debug)]
pub struct Contact {
    settings: ContactSettings,
    surfaces: Vec<ContactSurface>,
    prims: Vec<Prim>,
    boxes: Vec<Aabb>,
    broad: Option<BroadPhase>,
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
    hits: Vec<PairHit>,
    springs: ContactSprings,
    spring_p: Vec<Vector3<f64>>,
    thickness: f64,
    spring_stiffness: f64,
    stats: ContactStats,
}

impl Contact {
    /// Prepares contact for `bodies` stepped by `dt` (surfaces, broad phase, workspaces). In
    /// springs mode the bodies get anchors (their matrices then change between steps).
    pub fn new(
        settings: ContactSettings,
        bodies: &mut [Body],
        dt: f64,
    ) -> Result<Self, ContactError> {
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
            Response::Projection => 0.0,
        };
        let surfaces_meet =
            settings.self_collision || (settings.body_collision && bodies.len() > 1);
        let mut prims = Vec::new();
        if surfaces_meet {
            for (b, s) in surfaces.iter().enumerate() {
                let b = b as u32;
                let mut push = |kind, n: usize| {
                    prims.extend((0..n as u32).map(|index| Prim {
                        body: b,
                        kind,
                        index,
                    }))
                };
                push(VERTEX, s.vertices.len());
                push(EDGE, s.edges.len());
                push(TRIANGLE, s.triangles.len());
            }
        }
        let broad = surfaces_meet.then(|| {
            let mut wants = [[false; 4]; 4];
            wants[VERTEX as usize][TRIANGLE as usize] = true;
            wants[TRIANGLE as usize][VERTEX as usize] = true;
            wants[EDGE as usize][EDGE as usize] = true;
            BroadPhase::new(
                settings.broad_phase,
                prims.iter().map(|p| p.kind).collect(),
                wants,
            )
        });
        if matches!(settings.response, Response::Springs { .. }) {
            for b in bodies.iter_mut() {
                b.anchors = super::Anchors::zeros(b.n_vertices());
            }
        }
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
        Ok(Self {
            boxes: vec![Aabb::empty(); prims.len()],
            settings,
            surfaces,
            prims,
            broad,
            x0,
            v0,
            x_before,
            inv_mass,
            held,
            v_hold,
            hold_stats: vec![ObstacleStats::default(); bodies.len()],
            hits: Vec::new(),
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

    /// Records the start-of-step state and, in springs mode, writes the springs' lagged
    /// shares into the bodies' anchors (so the integrator sees them as forces and stiffness).
    pub fn begin_step(&mut self, bodies: &mut [Body]) {
        for (b, body) in bodies.iter().enumerate() {
            self.x0[b].copy_from_slice(&body.x);
            self.v0[b].copy_from_slice(&body.v);
        }
        if matches!(self.settings.response, Response::Springs { .. }) {
            self.spring_p.clear();
            for s in &self.springs.springs {
                self.spring_p.push(s.separation(|b, v| bodies[b].x[v]));
            }
            for body in bodies.iter_mut() {
                body.anchors.clear();
            }
            for (s, p) in self.springs.springs.iter().zip(&self.spring_p) {
                for k in 0..4 {
                    let (b, v) = (s.vertices[k].0 as usize, s.vertices[k].1 as usize);
                    let body = &mut bodies[b];
                    if s.w[k] == 0.0 || body.fixed[v] {
                        continue;
                    }
                    let (kappa, c) = s.share(k, p, &body.x[v]);
                    body.anchors.kappa[v] += kappa;
                    body.anchors.offset[v] += c;
                }
            }
        }
    }

    /// Contact held in the solve, for one-step implicit integrators (settings
    /// `hold_contacts`): after body `b`'s first solve of the step, finds the surface vertices
    /// that ended in or passed through an obstacle. If there are any, it restores the
    /// start-of-step state, moves each of them to its projected end position (a point on
    /// its own path's way, so nothing is pushed backwards) and holds it there (`fixed`), and
    /// returns true: the caller then solves the step again and calls
    /// [`release_holds`](Self::release_holds). The elastic response to the contact is then
    /// part of the implicit solve, as a constraint, instead of a displacement after it.
    pub fn hold_obstacle_contacts(&mut self, b: usize, body: &mut Body, t0: f64, dt: f64) -> bool {
        self.held[b].clear();
        self.hold_stats[b] = ObstacleStats::default();
        if !self.settings.hold_contacts || self.settings.obstacles.is_empty() {
            return false;
        }
        let x1 = &mut self.x_before[b];
        x1.copy_from_slice(&body.x);
        let v1 = &mut self.v_hold[b];
        v1.copy_from_slice(&body.v);
        let o = project_obstacles(
            &self.settings.obstacles,
            t0,
            dt,
            &self.surfaces[b].vertices,
            &body.fixed,
            &self.x0[b],
            x1,
            v1,
            self.settings.skin,
        );
        self.hold_stats[b] = o;
        for &i in &self.surfaces[b].vertices {
            let i = i as usize;
            if !body.fixed[i] && x1[i] != body.x[i] {
                self.held[b].push(i as u32);
            }
        }
        if self.held[b].is_empty() {
            return false;
        }
        body.x.copy_from_slice(&self.x0[b]);
        body.v.copy_from_slice(&self.v0[b]);
        for &i in &self.held[b] {
            let i = i as usize;
            body.x[i] = x1[i];
            body.v[i] = Vector3::zeros();
            body.fixed[i] = true;
        }
        true
    }

    /// Ends a hold: the held vertices are free again and move on with their projected
    /// velocities (normal part removed, friction applied).
    pub fn release_holds(&mut self, b: usize, body: &mut Body) {
        for &i in &self.held[b] {
            let i = i as usize;
            body.fixed[i] = false;
            body.v[i] = self.v_hold[b][i];
        }
    }

    /// The contact phase after the integrators moved the bodies from `t0` to `t0 + dt`.
    pub fn end_step(&mut self, bodies: &mut [Body], t0: f64, dt: f64) {
        let n_bodies = bodies.len();
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
            // A held step reports what its first solve ran into.
            let held = self.hold_stats[b];
            stats.contacts += o.contacts.max(held.contacts);
            stats.body_penetration[b] = o.max_penetration.max(held.max_penetration);
            self.hold_stats[b] = ObstacleStats::default();
        }
        for (b, body) in bodies.iter().enumerate() {
            let lumped = &body.mass.lumped;
            for (i, im) in self.inv_mass[b].iter_mut().enumerate() {
                let pinned = body.fixed[i] || body.x[i] != self.x_before[b][i];
                *im = if pinned { 0.0 } else { 1.0 / lumped[i] };
            }
            self.x_before[b].copy_from_slice(&body.x);
        }
        stats.response_s += t_resp.elapsed().as_secs_f64();
        // 2. Surfaces.
        if self.broad.is_some() {
            match self.settings.response {
                Response::Projection => self.project_surfaces(bodies, dt, &mut stats),
                Response::Springs { .. } => self.update_springs(bodies, dt, &mut stats),
            }
        }
        // 3. Velocities follow the surface response's corrections.
        let t_resp = Instant::now();
        for (b, body) in bodies.iter_mut().enumerate() {
            let before = &self.x_before[b];
            for ((v, x), xb) in body.v.iter_mut().zip(&body.x).zip(before) {
                if x != xb {
                    *v += (x - xb) / dt;
                }
            }
        }
        stats.response_s += t_resp.elapsed().as_secs_f64();
        stats.max_penetration = stats
            .body_penetration
            .iter()
            .take(n_bodies)
            .fold(0.0, |a, &b| a.max(b));
        self.stats = stats;
    }

    /// Projection passes, then the fail-safe (module doc, step 2).
    fn project_surfaces(&mut self, bodies: &mut [Body], dt: f64, stats: &mut ContactStats) {
        let delta = self.thickness;
        let mu = self.settings.friction;
        for pass in 0..self.settings.max_iterations {
            self.detect(bodies, dt, stats);
            if pass == 0 {
                stats.contacts += self.hits.len();
                for h in &self.hits {
                    let depth = -gap(bodies, h);
                    for &(b, _) in &h.vertices {
                        let p = &mut stats.body_penetration[b as usize];
                        *p = p.max(depth);
                    }
                }
            }
            if self.hits.is_empty() {
                return;
            }
            stats.iterations += 1;
            let t = Instant::now();
            for h in &self.hits {
                self.push_apart(bodies, h, delta, mu);
            }
            stats.response_s += t.elapsed().as_secs_f64();
        }
        // Fail-safe: every vertex of a pair that still meets goes back to x⁰ (where no pair
        // met), and is immovable from then on. Each round freezes at least one more vertex
        // or ends, so this terminates.
        loop {
            self.detect(bodies, dt, stats);
            if self.hits.is_empty() {
                return;
            }
            let t = Instant::now();
            let mut froze = 0;
            for h in &self.hits {
                for k in 0..4 {
                    let (b, v) = (h.vertices[k].0 as usize, h.vertices[k].1 as usize);
                    if h.hit.w[k] != 0.0 && !bodies[b].fixed[v] && self.inv_mass[b][v] != 0.0 {
                        self.inv_mass[b][v] = 0.0;
                        bodies[b].x[v] = self.x0[b][v];
                        froze += 1;
                    } else if h.hit.w[k] != 0.0
                        && bodies[b].x[v] != self.x0[b][v]
                        && !bodies[b].fixed[v]
                    {
                        // Pinned by an obstacle this step: its start position met nothing.
                        bodies[b].x[v] = self.x0[b][v];
                        froze += 1;
                    }
                }
            }
            stats.frozen += froze;
            stats.response_s += t.elapsed().as_secs_f64();
            if froze == 0 {
                stats.unresolved = self.hits.len();
                return;
            }
        }
    }

    /// Moves the pair's end positions apart along its normal until the gap is `delta`,
    /// mass-weighted (`Δx_k = m_k⁻¹ w_k λ n`), and applies Coulomb friction to the pair's
    /// relative tangential displacement over the step (at most μ times the normal push).
    fn push_apart(&self, bodies: &mut [Body], h: &PairHit, delta: f64, mu: f64) {
        let n = h.hit.normal;
        let g = gap(bodies, h);
        if g >= delta {
            return;
        }
        let inv = |k: usize| {
            let (b, v) = h.vertices[k];
            self.inv_mass[b as usize][v as usize]
        };
        let denom: f64 = (0..4).map(|k| h.hit.w[k] * h.hit.w[k] * inv(k)).sum();
        if denom <= 0.0 {
            return;
        }
        let push = delta - g;
        let mut correction = (push / denom) * n;
        if mu > 0.0 {
            let dr: Vector3<f64> = (0..4)
                .map(|k| {
                    let (b, v) = (h.vertices[k].0 as usize, h.vertices[k].1 as usize);
                    h.hit.w[k] * (bodies[b].x[v] - self.x0[b][v])
                })
                .sum();
            let dr_t = dr - dr.dot(&n) * n;
            let len = dr_t.norm();
            if len > 0.0 {
                let cut = (mu * push).min(len);
                correction -= (cut / len / denom) * dr_t;
            }
        }
        for k in 0..4 {
            let (b, v) = (h.vertices[k].0 as usize, h.vertices[k].1 as usize);
            bodies[b].x[v] += inv(k) * h.hit.w[k] * correction;
        }
    }

    /// Springs mode: remove the springs that pull, add one per pair that met.
    fn update_springs(&mut self, bodies: &mut [Body], dt: f64, stats: &mut ContactStats) {
        self.springs.prune(|b, v| bodies[b].x[v]);
        self.detect(bodies, dt, stats);
        stats.contacts += self.hits.len();
        // Only entering pairs get a spring: one leaving through a face is a vertex that an
        // earlier spring let in, and a spring there would hold it inside (the failure
        // Liesenfeld & Stolfi report in §9).
        for h in self.hits.iter().filter(|h| h.entering) {
            self.springs.add(Spring {
                vertices: h.vertices,
                w: h.hit.w,
                normal: h.hit.normal,
                stiffness: self.spring_stiffness,
            });
        }
        stats.springs = self.springs.springs.len();
        for s in &self.springs.springs {
            let depth = -s.separation(|b, v| bodies[b].x[v]).dot(&s.normal);
            for &(b, _) in &s.vertices {
                let p = &mut stats.body_penetration[b as usize];
                *p = p.max(depth);
            }
        }
    }

    /// Fills `self.hits` with the pairs that meet over the step `x⁰ → x` (broad + narrow).
    fn detect(&mut self, bodies: &[Body], dt: f64, stats: &mut ContactStats) {
        let t = Instant::now();
        let pad = 0.5 * self.thickness;
        let hermite = self.settings.narrow_phase == NarrowPhase::Hermite;
        for (prim, bx) in self.prims.iter().zip(self.boxes.iter_mut()) {
            let b = prim.body as usize;
            let s = &self.surfaces[b];
            let vertex_box = |v: u32| {
                let v = v as usize;
                let (a, c) = (self.x0[b][v], bodies[b].x[v]);
                let mut bb = Aabb::from_point(&a);
                bb.grow(&c);
                if hermite {
                    // Bernstein control points of the cubic Hermite path (§6.4).
                    bb.grow(&(a + self.v0[b][v] * (dt / 3.0)));
                    bb.grow(&(c - bodies[b].v[v] * (dt / 3.0)));
                }
                bb
            };
            let verts: &[u32] = match prim.kind {
                VERTEX => std::slice::from_ref(&s.vertices[prim.index as usize]),
                EDGE => &s.edges[prim.index as usize],
                _ => &s.triangles[prim.index as usize],
            };
            let mut bb = Aabb::empty();
            for &v in verts {
                bb.merge(&vertex_box(v));
            }
            bb.inflate(pad);
            *bx = bb;
        }
        let broad = self
            .broad
            .as_mut()
            .expect("detect runs only with a broad phase");
        let pairs = broad.update(&self.boxes);
        let t_narrow = Instant::now();
        stats.broad_s += (t_narrow - t).as_secs_f64();
        self.hits.clear();
        let eta = 0.25 * self.thickness;
        let springs = matches!(self.settings.response, Response::Springs { .. });
        for &(i, j) in pairs {
            let (pi, pj) = (self.prims[i as usize], self.prims[j as usize]);
            let same = pi.body == pj.body;
            if (same && !self.settings.self_collision) || (!same && !self.settings.body_collision) {
                continue;
            }
            let (sa, sb) = (
                &self.surfaces[pi.body as usize],
                &self.surfaces[pj.body as usize],
            );
            // `face`: the primitive on the "face side" (the triangle, or the second edge),
            // whose outward normal tells entering from leaving.
            let (refs, opp, face) = if pi.kind == EDGE {
                let (ea, eb) = (sa.edges[pi.index as usize], sb.edges[pj.index as usize]);
                let (oa, ob) = (
                    sa.opposite[pi.index as usize],
                    sb.opposite[pj.index as usize],
                );
                (
                    [
                        (pi.body, ea[0]),
                        (pi.body, ea[1]),
                        (pj.body, eb[0]),
                        (pj.body, eb[1]),
                    ],
                    Some([
                        [(pi.body, oa[0]), (pi.body, oa[1])],
                        [(pj.body, ob[0]), (pj.body, ob[1])],
                    ]),
                    pj,
                )
            } else {
                let (vp, tp) = if pi.kind == VERTEX {
                    (pi, pj)
                } else {
                    (pj, pi)
                };
                let v = self.surfaces[vp.body as usize].vertices[vp.index as usize];
                let tri = self.surfaces[tp.body as usize].triangles[tp.index as usize];
                (
                    [
                        (vp.body, v),
                        (tp.body, tri[0]),
                        (tp.body, tri[1]),
                        (tp.body, tri[2]),
                    ],
                    None,
                    tp,
                )
            };
            if same && (0..4).any(|k| refs[k + 1..].contains(&refs[k])) {
                continue; // adjacent: the pair shares a vertex
            }
            stats.pairs_tested += 1;
            let get = |r: VertexRef, src: u8| -> Vector3<f64> {
                let (b, v) = (r.0 as usize, r.1 as usize);
                match src {
                    0 => self.x0[b][v],
                    1 => bodies[b].x[v],
                    2 => self.v0[b][v],
                    _ => bodies[b].v[v],
                }
            };
            let four = |src: u8| refs.map(|r| get(r, src));
            let hit = match (hermite, opp) {
                (false, None) => ccd::vertex_face_exact(&four(0), &four(1), eta),
                (false, Some(_)) => ccd::edge_edge_exact(&four(0), &four(1), eta),
                (true, None) => {
                    ccd::vertex_face_hermite(&four(0), &four(2), &four(1), &four(3), dt)
                }
                (true, Some(o)) => {
                    let six = |src: u8| {
                        let f = four(src);
                        let mid = |e: [VertexRef; 2]| 0.5 * (get(e[0], src) + get(e[1], src));
                        [f[0], f[1], f[2], f[3], mid(o[0]), mid(o[1])]
                    };
                    ccd::edge_edge_hermite(&six(0), &six(2), &six(1), &six(3), dt)
                }
            };
            if let Some(mut hit) = hit {
                let fs = &self.surfaces[face.body as usize];
                let fx = &bodies[face.body as usize].x;
                let outward = if face.kind == EDGE {
                    fs.edge_normal(fx, face.index as usize)
                } else {
                    fs.triangle_normal(fx, face.index as usize)
                };
                let entering = hit.normal.dot(&outward) >= 0.0;
                if !entering && face.kind == TRIANGLE {
                    // A vertex leaving through a face started inside the body: push it out.
                    hit.normal = -hit.normal;
                }
                let h = PairHit {
                    vertices: refs,
                    hit,
                    entering,
                };
                // The projection response only needs pairs that end closer than the
                // thickness (a leaving vertex, or one that went in and out, ends apart).
                if springs || gap(bodies, &h) < self.thickness {
                    self.hits.push(h);
                }
            }
        }
        let bstats = broad.stats();
        if stats.broad_pairs == 0 {
            stats.broad_pairs = bstats.pairs;
        }
        stats.broad_work += bstats.work;
        // Earliest first; ties by vertices, so the order is deterministic (and the unstable
        // sort does not allocate).
        self.hits.sort_unstable_by(|a, b| {
            a.hit
                .t
                .total_cmp(&b.hit.t)
                .then_with(|| a.vertices.cmp(&b.vertices))
        });
        stats.narrow_s += t_narrow.elapsed().as_secs_f64();
    }
}

/// The pair's gap `n · Σ w_k x_k` at the current end positions.
fn gap(bodies: &[Body], h: &PairHit) -> f64 {
    let p: Vector3<f64> = (0..4)
        .map(|k| {
            let (b, v) = h.vertices[k];
            h.hit.w[k] * bodies[b as usize].x[v as usize]
        })
        .sum();
    h.hit.normal.dot(&p)
}
