//! Detection between deformable surfaces over one step: swept boxes of every surface
//! vertex, edge and triangle (Liesenfeld & Stolfi §6.4), the broad phase, then the
//! continuous test of each vertex–triangle and edge–edge pair (§6.3) in parallel.

use super::broad::{Aabb, BroadPhase};
use super::ccd::{self, Hit};
use super::springs::VertexRef;
use super::surface::ContactSurface;
use super::{ContactSettings, NarrowPhase};
use crate::body::Body;
use crate::clock::Instant;
use nalgebra::Vector3;
use rayon::prelude::*;

pub(super) const VERTEX: u8 = 0;
pub(super) const EDGE: u8 = 1;
pub(super) const TRIANGLE: u8 = 2;

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

/// A broad-phase pair that passed the cheap filters, waiting for its continuous test.
#[derive(Debug, Clone, Copy)]
struct Candidate {
    vertices: [VertexRef; 4],
    /// Edge–edge: the edges opposite to the two edges in a tet of each (eq. 31's `p`, `q`).
    opposite: Option<[[VertexRef; 2]; 2]>,
    /// The primitive on the "face side" (the triangle, or the second edge), whose outward
    /// normal tells entering from leaving.
    face: Prim,
}

/// What a detection pass reads: start-of-step and current states of every body.
pub(super) struct Paths<'a> {
    pub x0: &'a [Vec<Vector3<f64>>],
    pub v0: &'a [Vec<Vector3<f64>>],
    pub bodies: &'a [Body],
    pub dt: f64,
    /// When given, only pairs with a vertex marked here are tested (a later projection
    /// pass: every other pair has the trajectories it had in the pass before).
    pub moved: Option<&'a [Vec<bool>]>,
    /// With `moved`: recompute only the boxes of the primitives with a moved vertex and let
    /// the broad phase search only around them ([`BroadPhase::update_active`]). The caller
    /// then promises that every other primitive's vertices have the paths they had in the
    /// last pass of this detector (so their boxes, kept from that pass, are still theirs).
    /// Off, every box is recomputed and the broad phase runs in full (the same pairs are
    /// tested: the check of `Contact::set_check_skips`).
    pub prune: bool,
}

/// Counters a pass adds to.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct PassStats {
    pub broad_pairs: usize,
    pub broad_work: usize,
    pub pairs_tested: usize,
    /// Continuous tests that reached their work bound (see [`ccd`]'s *Bounded work*).
    pub bounded_out: usize,
    pub broad_s: f64,
    pub narrow_s: f64,
}

#[derive(Debug)]
pub(super) struct Detector {
    prims: Vec<Prim>,
    boxes: Vec<Aabb>,
    broad: BroadPhase,
    /// Per primitive: a vertex of it is marked in [`Paths::moved`] (pruned passes).
    active: Vec<bool>,
    candidates: Vec<Candidate>,
    /// Each candidate's contact, and whether its test reached its work bound.
    results: Vec<(Option<PairHit>, bool)>,
    /// The last pass's pairs that met, earliest first.
    pub hits: Vec<PairHit>,
}

impl Detector {
    pub(super) fn new(settings: &ContactSettings, surfaces: &[ContactSurface]) -> Self {
        let mut prims = Vec::new();
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
        let mut wants = [[false; 4]; 4];
        wants[VERTEX as usize][TRIANGLE as usize] = true;
        wants[EDGE as usize][EDGE as usize] = true;
        let owners: Vec<u32> = prims.iter().map(|p| p.body).collect();
        let broad = BroadPhase::new(
            settings.broad_phase,
            prims.iter().map(|p| p.kind).collect(),
            wants,
        )
        .with_owners(&owners, settings.self_collision);
        Self {
            boxes: vec![Aabb::empty(); prims.len()],
            active: vec![false; prims.len()],
            prims,
            broad,
            candidates: Vec::new(),
            results: Vec::new(),
            hits: Vec::new(),
        }
    }

    /// Fills [`Self::hits`] with the pairs that meet over the step `x⁰ → x` (broad phase,
    /// then the continuous tests). `thickness` pads the boxes; with `all_hits: false` only
    /// pairs ending closer than `thickness` are kept (what the projection response needs).
    pub(super) fn detect(
        &mut self,
        settings: &ContactSettings,
        surfaces: &[ContactSurface],
        paths: &Paths,
        thickness: f64,
        all_hits: bool,
        stats: &mut PassStats,
    ) {
        let t = Instant::now();
        let (x0, v0, bodies, dt) = (paths.x0, paths.v0, paths.bodies, paths.dt);
        let hermite = settings.narrow_phase == NarrowPhase::Hermite;
        let pruned = paths.moved.filter(|_| paths.prune);
        if let Some(moved) = pruned {
            for (prim, a) in self.prims.iter().zip(self.active.iter_mut()) {
                let b = prim.body as usize;
                *a = prim_vertices(&surfaces[b], prim)
                    .iter()
                    .any(|&v| moved[b][v as usize]);
            }
        }
        // The swept boxes, in parallel (each box is its own primitive's: the same bits on any
        // number of threads).
        let active = &self.active;
        (self.prims.par_iter())
            .zip(self.boxes.par_iter_mut())
            .enumerate()
            .for_each(|(k, (prim, bx))| {
                if pruned.is_some() && !active[k] {
                    return; // the box of the last pass (`Paths::prune`)
                }
                let b = prim.body as usize;
                let verts = prim_vertices(&surfaces[b], prim);
                let mut bb = Aabb::empty();
                for &v in verts {
                    let v = v as usize;
                    let (a, c) = (x0[b][v], bodies[b].x[v]);
                    bb.grow(&a);
                    bb.grow(&c);
                    if hermite {
                        // Bernstein control points of the cubic Hermite path (§6.4).
                        bb.grow(&(a + v0[b][v] * (dt / 3.0)));
                        bb.grow(&(c - bodies[b].v[v] * (dt / 3.0)));
                    }
                }
                bb.inflate(0.5 * thickness);
                *bx = bb;
            });
        if pruned.is_some() {
            self.broad.update_active(&self.boxes, &self.active);
        } else {
            self.broad.update(&self.boxes);
        }
        let bstats = self.broad.stats();
        if stats.broad_pairs == 0 {
            stats.broad_pairs = bstats.pairs;
        }
        stats.broad_work += bstats.work;
        // The pairs of the update just made (`update` returns the same slice).
        let pairs = self.broad.update_pairs();
        let t_narrow = Instant::now();
        stats.broad_s += (t_narrow - t).as_secs_f64();

        self.candidates.clear();
        for &(i, j) in pairs {
            let (pi, pj) = (self.prims[i as usize], self.prims[j as usize]);
            let same = pi.body == pj.body;
            if (same && !settings.self_collision) || (!same && !settings.body_collision) {
                continue;
            }
            let (sa, sb) = (&surfaces[pi.body as usize], &surfaces[pj.body as usize]);
            let c = if pi.kind == EDGE {
                let (ea, eb) = (sa.edges[pi.index as usize], sb.edges[pj.index as usize]);
                let (oa, ob) = (
                    sa.opposite[pi.index as usize],
                    sb.opposite[pj.index as usize],
                );
                Candidate {
                    vertices: [
                        (pi.body, ea[0]),
                        (pi.body, ea[1]),
                        (pj.body, eb[0]),
                        (pj.body, eb[1]),
                    ],
                    opposite: Some([
                        [(pi.body, oa[0]), (pi.body, oa[1])],
                        [(pj.body, ob[0]), (pj.body, ob[1])],
                    ]),
                    face: pj,
                }
            } else {
                let (vp, tp) = if pi.kind == VERTEX {
                    (pi, pj)
                } else {
                    (pj, pi)
                };
                let v = surfaces[vp.body as usize].vertices[vp.index as usize];
                let tri = surfaces[tp.body as usize].triangles[tp.index as usize];
                Candidate {
                    vertices: [
                        (vp.body, v),
                        (tp.body, tri[0]),
                        (tp.body, tri[1]),
                        (tp.body, tri[2]),
                    ],
                    opposite: None,
                    face: tp,
                }
            };
            let r = &c.vertices;
            if same && (0..4).any(|k| r[k + 1..].contains(&r[k])) {
                continue; // adjacent: the pair shares a vertex
            }
            if let Some(moved) = paths.moved {
                if !r.iter().any(|&(b, v)| moved[b as usize][v as usize]) {
                    continue;
                }
            }
            self.candidates.push(c);
        }
        stats.pairs_tested += self.candidates.len();

        // The continuous tests, in parallel; results keep the candidates' order.
        let eta = 0.25 * thickness;
        self.candidates
            .par_iter()
            .map(|c| test(c, paths, surfaces, hermite, eta))
            .collect_into_vec(&mut self.results);
        self.hits.clear();
        for (h, bounded_out) in &self.results {
            stats.bounded_out += usize::from(*bounded_out);
            let Some(h) = h else { continue };
            // The projection response only needs pairs that end closer than the thickness
            // (a leaving vertex, or one that went in and out, ends apart).
            if all_hits || gap(bodies, h) < thickness {
                self.hits.push(*h);
            }
        }
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

/// The surface vertices of a primitive.
fn prim_vertices<'a>(s: &'a ContactSurface, prim: &Prim) -> &'a [u32] {
    match prim.kind {
        VERTEX => std::slice::from_ref(&s.vertices[prim.index as usize]),
        EDGE => &s.edges[prim.index as usize],
        _ => &s.triangles[prim.index as usize],
    }
}

/// The continuous test of one candidate (exact or Hermite/Bernstein), with the normal
/// turned outward of the face's body when a vertex leaves through a face, and whether the
/// test reached its work bound (its contact is then the conservative one).
fn test(
    c: &Candidate,
    paths: &Paths,
    surfaces: &[ContactSurface],
    hermite: bool,
    eta: f64,
) -> (Option<PairHit>, bool) {
    let bodies = paths.bodies;
    let get = |r: VertexRef, src: u8| -> Vector3<f64> {
        let (b, v) = (r.0 as usize, r.1 as usize);
        match src {
            0 => paths.x0[b][v],
            1 => bodies[b].x[v],
            2 => paths.v0[b][v],
            _ => bodies[b].v[v],
        }
    };
    let four = |src: u8| c.vertices.map(|r| get(r, src));
    let outcome = match (hermite, c.opposite) {
        (false, None) => ccd::vertex_face_exact_outcome(&four(0), &four(1), eta),
        (false, Some(_)) => ccd::edge_edge_exact_outcome(&four(0), &four(1), eta),
        (true, None) => {
            ccd::vertex_face_hermite_outcome(&four(0), &four(2), &four(1), &four(3), paths.dt)
        }
        (true, Some(o)) => {
            let six = |src: u8| {
                let f = four(src);
                let mid = |e: [VertexRef; 2]| 0.5 * (get(e[0], src) + get(e[1], src));
                [f[0], f[1], f[2], f[3], mid(o[0]), mid(o[1])]
            };
            ccd::edge_edge_hermite_outcome(&six(0), &six(2), &six(1), &six(3), paths.dt)
        }
    };
    let Some(mut hit) = outcome.hit else {
        return (None, outcome.bounded_out);
    };
    let face = c.face;
    let fs = &surfaces[face.body as usize];
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
    let pair = PairHit {
        vertices: c.vertices,
        hit,
        entering,
    };
    (Some(pair), outcome.bounded_out)
}

/// The pair's gap `n · Σ w_k x_k` at the current end positions.
pub(super) fn gap(bodies: &[Body], h: &PairHit) -> f64 {
    let p: Vector3<f64> = (0..4)
        .map(|k| {
            let (b, v) = h.vertices[k];
            h.hit.w[k] * bodies[b as usize].x[v as usize]
        })
        .sum();
    h.hit.normal.dot(&p)
}
