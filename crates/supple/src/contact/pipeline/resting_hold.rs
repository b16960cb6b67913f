//! Resting body–body and self contacts held from the step's start
//! ([`ContactSettings::hold_resting`](crate::contact::ContactSettings::hold_resting); with
//! [`super::surface_hold`], for integrators that move held vertices themselves).
//!
//! Without it a resting stack is solved twice a step: the first solve leaves the pressed
//! faces free, they spring into each other, the surface response pushes them apart and the
//! surface hold solves again. Here, as the sliding hold does for obstacles
//! ([`super::sliding_hold`]):
//! 1. *Which contacts rest* ([`Contact::pre_hold_resting`], before the step's first solve):
//!    candidates are, for every vertex of a pair the surface response pushed apart in the
//!    last step (either side), the faces of the other body around the pair's nearest vertex
//!    on that side; and every hold of the last step that was kept, with the faces around its
//!    face's nearest vertex (where it may have slid). At the step's start the vertex is
//!    projected on the face's plane (barycentric weights `bₖ`, clamped to the face; a
//!    vertex more than [`OFF_FACE`] outside it is not held), and the pair rests when its gap
//!    `g = n·(x − Σ bₖ xₖ)` (n the face's unit outward normal) is within [`REST_GAP`] δ
//!    (δ the contact thickness) and above `−δ`, and the vertex is not leaving the face
//!    faster than [`REST_GAP`] δ per step.
//! 2. *The hold*: the vertex slides along the face (Baraff & Witkin's filtered constraint,
//!    [`crate::time::sliding`]) with the prescribed normal velocity
//!    `n·(Σ bₖ vₖ) + max(0, HOLD_GAP δ − g)/h`: the face's velocity at the step's start — a lag of
//!    one step, since the face's body is solved at the same time — plus the push back to the
//!    gap [`HOLD_GAP`] δ when it fell below it. Tangentially it is free (no friction in the
//!    hold; the contact phase's friction acts on pairs it pushes).
//! 3. *One side per pair*: a vertex is held only if it is not a vertex of a face already
//!    holding another vertex, and the face's vertices are not held themselves, so no
//!    contact is held from both sides (holding the two faces of a resting stack against
//!    each other, each body's reaction passed to the other, would feed each body's load back
//!    to it). Candidates are taken in order of body then vertex, the bodies that touched an
//!    obstacle or have fixed vertices last: on `scenes/bench/contact_10k.toml`, holding the
//!    lower (grounded) box's top against the upper box and loading the upper one made the
//!    holds' total impulse swing between 0.05 and 0.17 N·s a step around the upper box's
//!    weight × h = 0.098 (the lagged exchange of a Dirichlet–Neumann split is unstable when
//!    the held side answers with more inertia than the loaded side); holding the upper box's
//!    vertices and loading the lower box gave 0.07–0.10 (measured).
//! 4. *The active set*: after a solve, a hold whose normal impulse `J = n·R` pulls
//!    (`J < 0`) is released and the body solved again ([`Contact::hold_sliding`]).
//! 5. *The weight reaches the face*: each kept hold's impulse `J n` goes to the face's
//!    vertices, `−bₖ J n`, as an external force `−bₖ J n / h` in the next step (Jacobi between
//!    bodies: every body is solved with the other bodies' last impulses, so the bodies still
//!    solve side by side). The impulses are equal and opposite, one step apart: an island's
//!    linear momentum changes within a step by the impulses not yet passed on, and is kept
//!    over the steps (test `tests/resting_hold.rs`).
//!
//! The contact phase still runs after the solve: new contacts, CCD, and the surface hold's
//! second solve as the fallback when it has to move vertices that were not held — except
//! when every pair it pushed apart had only entered the contact layer (end gap ≥ 0, a push
//! below δ: [`Contact::resting_layer_only`]).
//!
//! Friction is not held: a held vertex slides freely along its face.

use super::Contact;
use crate::body::Body;
use crate::contact::surface::ContactSurface;
use crate::time::BodyInputs;
use nalgebra::Vector3;

/// A vertex more than this barycentric share outside its face is not held.
pub const OFF_FACE: f64 = 0.05;
/// A pair rests while its gap is below this many contact thicknesses, and the vertex leaves
/// the face slower than this many thicknesses per step.
pub const REST_GAP: f64 = 10.0;
/// A held vertex closer to its face than this many thicknesses is moved back to it within
/// the step.
pub const HOLD_GAP: f64 = 2.0;

/// A vertex–face contact held from the step's start (module notes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RestHold {
    /// The held vertex: `(body, vertex)`.
    pub vertex: (u32, u32),
    /// The face's body and vertices, in the order whose normal `sign ×
    /// (x₁ − x₀) × (x₂ − x₀)` points out of the face's body.
    pub face_body: u32,
    pub face: [u32; 3],
    pub sign: f64,
    /// Barycentric weights and unit outward normal at the step's start.
    pub w: [f64; 3],
    pub normal: Vector3<f64>,
    /// The normal impulse of the last solve (N·s, ≥ 0 while held).
    pub j: f64,
    /// Still held in this step.
    pub on: bool,
}

/// Role of a vertex among the step's resting holds.
const FREE: u8 = 0;
const HELD: u8 = 1;
const FACE: u8 = 2;

/// Workspaces of the resting holds (empty when off).
#[derive(Debug, Default)]
pub(super) struct Resting {
    pub on: bool,
    /// Candidates for the next step's holds (kept holds, then pairs pushed apart).
    pub next: Vec<RestHold>,
    /// Pairs the surface response pushed apart in this try.
    pub found: Vec<RestHold>,
    /// This step's holds.
    pub holds: Vec<RestHold>,
    /// Per body and vertex: its role (`FREE`, `HELD`, `FACE`).
    role: Vec<Vec<u8>>,
    /// Per body: the forces the last step's holds pass on, and whether there are any.
    pub load: Vec<Vec<Vector3<f64>>>,
    pub loaded: Vec<bool>,
    /// The step length of this try.
    h: f64,
    /// The smallest end gap (m) of a pair the last surface response pushed apart (−∞ after
    /// the fail-safe).
    pub min_gap: f64,
    /// The holds are on for the surface hold's second solve (their impulses are then not
    /// recorded again).
    again: bool,
    /// Per body: the surface triangles around each vertex (CSR: `around_start[b][v]..
    /// around_start[b][v + 1]` into `around[b]`), and which vertices were noted as
    /// candidates in this try.
    around_start: Vec<Vec<u32>>,
    around: Vec<Vec<u32>>,
    noted: Vec<Vec<bool>>,
    /// Per body: it touched an obstacle in the last contact phase or has fixed vertices (its
    /// faces are loaded before its vertices are held, module notes 3).
    pub supported: Vec<bool>,
}

impl Resting {
    pub fn new(on: bool, bodies: &[Body], surfaces: &[ContactSurface]) -> Self {
        if !on {
            return Self::default();
        }
        let mut around_start = Vec::with_capacity(bodies.len());
        let mut around = Vec::with_capacity(bodies.len());
        for (body, s) in bodies.iter().zip(surfaces) {
            let n = body.n_vertices();
            let mut start = vec![0u32; n + 1];
            for t in &s.triangles {
                for &v in t {
                    start[v as usize + 1] += 1;
                }
            }
            for v in 0..n {
                start[v + 1] += start[v];
            }
            let mut fill = start.clone();
            let mut list = vec![0u32; start[n] as usize];
            for (k, t) in s.triangles.iter().enumerate() {
                for &v in t {
                    list[fill[v as usize] as usize] = k as u32;
                    fill[v as usize] += 1;
                }
            }
            around_start.push(start);
            around.push(list);
        }
        let triangles: usize = surfaces.iter().map(|s| s.triangles.len()).sum();
        let surface: usize = bodies.iter().map(|b| b.n_vertices()).sum();
        Self {
            on,
            next: Vec::with_capacity(surface + 6 * triangles),
            found: Vec::with_capacity(6 * triangles),
            around_start,
            around,
            noted: bodies.iter().map(|b| vec![false; b.n_vertices()]).collect(),
            holds: Vec::with_capacity(surface),
            role: bodies.iter().map(|b| vec![FREE; b.n_vertices()]).collect(),
            load: bodies
                .iter()
                .map(|b| vec![Vector3::zeros(); b.n_vertices()])
                .collect(),
            loaded: vec![false; bodies.len()],
            h: 0.0,
            min_gap: f64::INFINITY,
            again: false,
            supported: vec![false; bodies.len()],
        }
    }
}

impl Contact {
    /// The forces the last step's resting holds pass to body `b`'s faces (module notes, 5),
    /// if any.
    pub fn resting_load(&self, b: usize) -> Option<&[Vector3<f64>]> {
        let r = &self.resting;
        (r.on && r.loaded[b]).then(|| r.load[b].as_slice())
    }

    /// Holds the resting contacts (module notes, 1–3) of the bodies with `sliding[b]` in
    /// their step inputs, before the step's first solve (`again = false`) or again for the
    /// surface hold's second solve (`again = true`: the holds of the first solves still on,
    /// on the vertices that hold left free). Positions and velocities at the step's start
    /// are the contact phase's records. A body that holds any gets `has_moving`.
    pub fn pre_hold_resting(
        &mut self,
        inputs: &mut [BodyInputs],
        sliding: &dyn Fn(usize) -> bool,
        h: f64,
        again: bool,
    ) {
        if !self.resting.on || !self.holds_surfaces() {
            return;
        }
        let delta = self.thickness;
        let r = &mut self.resting;
        let (x0, v0) = (&self.x0, &self.v0);
        r.again = again;
        if !again {
            r.h = h;
            for role in &mut r.role {
                role.fill(FREE);
            }
            r.holds.clear();
            for c in &r.next {
                let (b, i) = (c.vertex.0 as usize, c.vertex.1 as usize);
                let fb = c.face_body as usize;
                let face = c.face.map(|k| k as usize);
                if !sliding(b)
                    || r.role[b][i] != FREE
                    || face.iter().any(|&k| r.role[fb][k] == HELD)
                    || inputs[b].fixed[i]
                    || inputs[b].moving.on[i]
                {
                    continue;
                }
                let Some(mut hold) = rest_at(c, x0, v0, delta, h) else {
                    continue;
                };
                hold.j = 0.0;
                hold.on = true;
                r.role[b][i] = HELD;
                for &k in &face {
                    r.role[fb][k] = FACE;
                }
                r.holds.push(hold);
            }
        }
        for hold in r.holds.iter().filter(|c| c.on) {
            let (b, i) = (hold.vertex.0 as usize, hold.vertex.1 as usize);
            let input = &mut inputs[b];
            if !sliding(b) || input.fixed[i] || input.moving.on[i] {
                continue;
            }
            let fb = hold.face_body as usize;
            let (xf, vf) = (&x0[fb], &v0[fb]);
            let (mut p, mut u) = (Vector3::zeros(), Vector3::zeros());
            for k in 0..3 {
                p += hold.w[k] * xf[hold.face[k] as usize];
                u += hold.w[k] * vf[hold.face[k] as usize];
            }
            let gap = hold.normal.dot(&(x0[b][i] - p));
            input.moving.on[i] = true;
            input.moving.normal[i] = hold.normal;
            input.moving.velocity[i] = u + hold.normal * ((HOLD_GAP * delta - gap).max(0.0) / h);
            input.has_moving = true;
        }
    }

    /// After a solve of body `b` with the constraint impulses `reactions`: releases its
    /// resting holds that pull (module notes, 4). Returns true when any was released (the
    /// body must be solved again).
    pub(super) fn release_pulling_rests(
        &mut self,
        b: usize,
        moving: &mut crate::time::MovingHolds,
        reactions: Option<&[Vector3<f64>]>,
    ) -> bool {
        let Some(r) = reactions.filter(|_| self.resting.on) else {
            return false;
        };
        let mut changed = false;
        for hold in &mut self.resting.holds {
            let i = hold.vertex.1 as usize;
            if hold.on
                && hold.vertex.0 as usize == b
                && moving.on[i]
                && r[i].dot(&hold.normal) < 0.0
            {
                hold.on = false;
                hold.j = 0.0;
                moving.on[i] = false;
                changed = true;
            }
        }
        changed
    }

    /// Ends body `b`'s resting holds after its last solve, keeping each one's impulse.
    pub(super) fn release_rests(
        &mut self,
        b: usize,
        moving: &mut crate::time::MovingHolds,
        reactions: Option<&[Vector3<f64>]>,
    ) {
        if !self.resting.on {
            return;
        }
        let (again, supported) = (self.resting.again, &self.resting.supported);
        for hold in &mut self.resting.holds {
            let i = hold.vertex.1 as usize;
            if hold.vertex.0 as usize != b || !moving.on[i] {
                continue;
            }
            moving.on[i] = false;
            // In a free island, the first solves' impulses: the surface hold's second solve
            // gives it back the momentum it had after them (`restore_island_momenta`), so
            // those are the impulses its bodies received. Elsewhere the last solve's.
            let free = !supported[b] && !supported[hold.face_body as usize];
            if let Some(r) = reactions.filter(|_| !(again && free)) {
                hold.j = r[i].dot(&hold.normal).max(0.0);
            }
        }
    }

    /// Notes the vertices of a pair the surface response pushed apart: each one not noted
    /// yet in this try becomes a candidate for the next step's holds against every face,
    /// on the other side of the pair, around that side's nearest vertex (the largest
    /// weight); both sides, so that the order of module notes 3 decides which is held.
    pub(super) fn note_pushed(&mut self, h: &super::PairHit) {
        if !self.resting.on {
            return;
        }
        let r = &mut self.resting;
        for k in 0..4 {
            let (b, v) = h.vertices[k];
            let side = h.hit.w[k] >= 0.0;
            if h.hit.w[k] == 0.0 || r.noted[b as usize][v as usize] {
                continue;
            }
            // The nearest vertex of the other side.
            let Some(o) = (0..4)
                .filter(|&m| (h.hit.w[m] >= 0.0) != side && h.hit.w[m] != 0.0)
                .max_by(|&m, &n| h.hit.w[m].abs().total_cmp(&h.hit.w[n].abs()))
            else {
                continue;
            };
            let (fb, fv) = h.vertices[o];
            if fb == b {
                // Self contact: only the pair's own face (below).
                continue;
            }
            r.noted[b as usize][v as usize] = true;
            let (s0, s1) = (
                r.around_start[fb as usize][fv as usize] as usize,
                r.around_start[fb as usize][fv as usize + 1] as usize,
            );
            for &t in &r.around[fb as usize][s0..s1] {
                r.found.push(RestHold {
                    vertex: (b, v),
                    face_body: fb,
                    face: self.surfaces[fb as usize].triangles[t as usize],
                    sign: 1.0,
                    w: [0.0; 3],
                    normal: Vector3::zeros(),
                    j: 0.0,
                    on: false,
                });
            }
        }
        // A vertex–face pair of one body (self contact): its own face.
        let (b, fb) = (h.vertices[0].0, h.vertices[1].0);
        if h.face && h.entering && b == fb && h.vertices[2].0 == fb && h.vertices[3].0 == fb {
            let face = [h.vertices[1].1, h.vertices[2].1, h.vertices[3].1];
            let Some(t) = self.surfaces[fb as usize].triangles.iter().position(|t| {
                let mut a = *t;
                let mut c = face;
                a.sort_unstable();
                c.sort_unstable();
                a == c
            }) else {
                return;
            };
            r.found.push(RestHold {
                vertex: h.vertices[0],
                face_body: fb,
                face: self.surfaces[fb as usize].triangles[t],
                sign: 1.0,
                w: [0.0; 3],
                normal: Vector3::zeros(),
                j: 0.0,
                on: false,
            });
        }
    }

    /// After a successful try: the holds still on and the pairs pushed apart become the next
    /// step's candidates, and the holds' impulses the next step's loads (module notes, 5).
    pub fn commit_resting(&mut self) {
        let r = &mut self.resting;
        if !r.on {
            return;
        }
        for (load, loaded) in r.load.iter_mut().zip(&mut r.loaded) {
            if *loaded {
                load.fill(Vector3::zeros());
                *loaded = false;
            }
        }
        r.next.clear();
        let h = r.h;
        for hold in r.holds.iter().filter(|c| c.on) {
            r.next.push(*hold);
            // The faces around its face's nearest vertex, where it may slide next.
            let k = (0..3)
                .max_by(|&a, &b| hold.w[a].total_cmp(&hold.w[b]))
                .unwrap_or(0);
            let (fb, fv) = (hold.face_body as usize, hold.face[k] as usize);
            let (s0, s1) = (
                r.around_start[fb][fv] as usize,
                r.around_start[fb][fv + 1] as usize,
            );
            for &t in &r.around[fb][s0..s1] {
                let face = self.surfaces[fb].triangles[t as usize];
                if face != hold.face {
                    r.next.push(RestHold {
                        face,
                        sign: 1.0,
                        on: false,
                        ..*hold
                    });
                }
            }
            if hold.j > 0.0 && h > 0.0 {
                let fb = hold.face_body as usize;
                for k in 0..3 {
                    r.load[fb][hold.face[k] as usize] -= hold.normal * (hold.w[k] * hold.j / h);
                }
                r.loaded[fb] = true;
            }
        }
        r.next.extend_from_slice(&r.found);
        for c in &r.found {
            r.noted[c.vertex.0 as usize][c.vertex.1 as usize] = false;
        }
        r.found.clear();
        // Free bodies first (module notes, 3), then in order of body and vertex, a kept hold
        // before the pairs pushed apart (the first candidate of a vertex wins; the unstable
        // sort does not allocate, and the order of equal keys does not matter: they are the
        // same candidate).
        let supported = &r.supported;
        let key = |c: &RestHold| {
            let b = c.vertex.0;
            (
                supported[b as usize],
                b,
                c.vertex.1,
                !c.on,
                c.face_body,
                c.face,
            )
        };
        r.next.sort_unstable_by_key(key);
    }

    /// True with resting holds when the last surface response only restored the contact
    /// layer: every pair it pushed apart ended the solve at a gap ≥ 0 (within the thickness,
    /// not crossed). Such pushes are below the thickness (1 % of the mean edge by default)
    /// and strain the surface by as little, so the surface hold's second solve is skipped.
    pub fn resting_layer_only(&self) -> bool {
        self.resting.on && self.resting.min_gap >= 0.0
    }

    /// Records which bodies are supported (module notes, 3) after a contact phase.
    pub(super) fn note_supported(&mut self, bodies: &[Body]) {
        if !self.resting.on {
            return;
        }
        for (b, body) in bodies.iter().enumerate() {
            self.resting.supported[b] = self.obstacle_touch[b] || body.fixed.iter().any(|&f| f);
        }
    }

    /// Forgets the pairs pushed apart in a failed try.
    pub(super) fn begin_resting_try(&mut self) {
        let r = &mut self.resting;
        for c in &r.found {
            r.noted[c.vertex.0 as usize][c.vertex.1 as usize] = false;
        }
        r.found.clear();
    }
}

/// The resting hold of candidate `c` at the step's start (module notes, 1), if it rests.
fn rest_at(
    c: &RestHold,
    x0: &[Vec<Vector3<f64>>],
    v0: &[Vec<Vector3<f64>>],
    delta: f64,
    h: f64,
) -> Option<RestHold> {
    let (b, i) = (c.vertex.0 as usize, c.vertex.1 as usize);
    let fb = c.face_body as usize;
    let [a, p1, p2] = c.face.map(|k| x0[fb][k as usize]);
    let (e1, e2) = (p1 - a, p2 - a);
    let cross = e1.cross(&e2);
    let area2 = cross.norm_squared();
    if area2 <= 0.0 || !area2.is_finite() {
        return None;
    }
    let normal = cross * (c.sign / area2.sqrt());
    let x = x0[b][i];
    // Barycentric weights of the projection of x on the face's plane.
    let d = x - a;
    let s = d.cross(&e2).dot(&cross) / area2;
    let t = e1.cross(&d).dot(&cross) / area2;
    let mut w = [1.0 - s - t, s, t];
    if w.iter().any(|&wk| wk < -OFF_FACE) {
        return None;
    }
    for wk in &mut w {
        *wk = wk.max(0.0);
    }
    let sum: f64 = w.iter().sum();
    w.iter_mut().for_each(|wk| *wk /= sum);
    let (mut p, mut u) = (Vector3::zeros(), Vector3::zeros());
    for k in 0..3 {
        p += w[k] * x0[fb][c.face[k] as usize];
        u += w[k] * v0[fb][c.face[k] as usize];
    }
    let gap = normal.dot(&(x - p));
    let leaving = normal.dot(&(v0[b][i] - u));
    if !(gap > -delta && gap < REST_GAP * delta && leaving <= REST_GAP * delta / h) {
        return None;
    }
    Some(RestHold { w, normal, ..*c })
}
