//! Intersection queries over the bodies' current positions, for the run's verdict
//! ([`crate::world::verdict::RunWatch`]): which vertices of a body lie inside another body,
//! and which boundary triangles of a body cross each other (a surface through itself).
//!
//! **Inside another body.** Body `B`'s boundary surface has winding number
//! `w(p) = Σ_t sign(V_t) [p ∈ t]` around a point `p` off its faces: the interior faces of its
//! tets cancel in pairs (a rest mesh is positively oriented), so the sum over `B`'s tets of
//! each tet's own indicator, negative for an inverted tet, is the generalized winding number
//! of [`ContactSurface::winding_number`] — an integer, and local: only the tets whose box
//! holds `p` count. Vertex `p` of body `A` is *inside* `B` when `w ≠ 0` (the nonzero rule:
//! `w = −1` where `B` is turned inside out, and such a vertex is inside `B`'s material too).
//! The candidate
//! vertex–tet pairs come from the broad phase ([`BroadPhase`], BVH, pairs across bodies
//! only); each costs four orientation tests.
//!
//! A point on a face of a tet is decided by a symbolic perturbation (Edelsbrunner &
//! Mücke's simulation of simplicity, one fixed direction `δ`): a zero orientation takes the
//! sign of its derivative along `δ`. The vertex counts as inside only when both `p + εδ` and
//! `p − εδ` are inside, i.e. when `p` is in the *interior* of `B`: a vertex on a face shared
//! by two of `B`'s tets, or on one of `B`'s vertices inside it, is inside; a vertex touching
//! `B`'s surface (two boxes face to face, vertices coinciding) is not.
//!
//! **Through itself.** Two boundary triangles of one body that share no edge *cross* when an
//! edge of one passes through the other: its ends lie strictly on opposite sides of the
//! other's plane and the line through it passes strictly inside the other (five orientation
//! tests); touching counts as nothing. Triangles that share a vertex `v` can only cross
//! through the edges opposite `v`; triangles that share an edge are never tested (they meet
//! along it). Candidates come from one broad phase per body over its boundary triangles.
//! The count is of crossing triangle pairs.
//!
//! **Rounding.** Every orientation within `1e-12` × the product of its three edge lengths
//! counts as zero: touching, or for a point on a tet's face, decided by the perturbation. On a
//! flat face whose vertices lie a few ulps off its plane the computed signs are rounding
//! (the flat bottom of `bunny_5k` at rest and the flat sides of the snapping torus's halves
//! showed false crossings without it).
//!
//! The boxes, the broad phases' trees and pair lists, and the capped example lists are reused:
//! after the first call (which builds the trees) a query allocates only when it meets more
//! overlapping boxes than any before (the pair lists grow). Measured on
//! `scenes/bench/contact_10k.toml` (two 10k-tet boxes in contact, 5k vertices, 4k boundary
//! triangles): see EXPERIMENTS.md, *Verdicts that never lie*.

use super::broad::{Aabb, BroadPhase, BroadPhaseKind};
use super::surface::ContactSurface;
use crate::body::Body;
use nalgebra::Vector3;

/// The symbolic perturbation direction of the point-in-tet tests (generic: no lattice face
/// of a box grid is parallel to it; components from the plastic number's powers).
const DELTA: Vector3<f64> = Vector3::new(1.0, 0.754_877_666_246_692_7, 0.569_840_290_998_053_2);

/// How many vertices inside and crossings of each body are listed by name in an
/// [`IntersectionReport`].
pub const EXAMPLES: usize = 16;

/// A vertex of `body` inside body `other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InsideVertex {
    pub body: usize,
    pub vertex: u32,
    pub other: usize,
}

/// Two crossing boundary triangles of `body`: `edge` (of one) passes through `triangle`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelfCrossing {
    pub body: usize,
    pub edge: [u32; 2],
    pub triangle: [u32; 3],
}

/// What one [`Intersections::update`] found.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct IntersectionReport {
    /// Per body: its vertices (interior or boundary) that lie inside some other body.
    pub inside: Vec<usize>,
    /// Per body: pairs of its boundary triangles, sharing no edge, that cross.
    pub self_crossings: Vec<usize>,
    /// The first [`EXAMPLES`] vertices of each body inside another body, in body and vertex
    /// order.
    pub inside_examples: Vec<InsideVertex>,
    /// The first [`EXAMPLES`] self-crossings of each body, in body and triangle order.
    pub crossing_examples: Vec<SelfCrossing>,
}

impl IntersectionReport {
    /// Vertices inside another body, all bodies.
    pub fn inside_total(&self) -> usize {
        self.inside.iter().sum()
    }

    /// Self-crossings, all bodies.
    pub fn self_crossings_total(&self) -> usize {
        self.self_crossings.iter().sum()
    }
}

/// One body's boundary for the self-crossing query.
struct SelfSurface {
    triangles: Vec<[u32; 3]>,
    boxes: Vec<Aabb>,
    phase: BroadPhase,
}

/// The queries' workspaces, built once for a fixed set of bodies (see the module notes).
pub struct Intersections {
    /// Body `b`'s vertices are `vertex_start[b]..vertex_start[b + 1]` of the vertex boxes.
    vertex_start: Vec<usize>,
    /// Each body's tets (copied: the query outlives no borrow).
    tets: Vec<Vec<[u32; 4]>>,
    /// Vertex boxes, then tet boxes (body by body); `None` with fewer than two bodies.
    inside_phase: Option<BroadPhase>,
    inside_boxes: Vec<Aabb>,
    /// Owner body of each tet box, by tet box index (from `n_vertices`).
    tet_owner: Vec<u32>,
    /// First tet box index of each body (relative to the tet boxes' start).
    tet_start: Vec<usize>,
    n_vertices: usize,
    surfaces: Vec<SelfSurface>,
    report: IntersectionReport,
}

impl std::fmt::Debug for Intersections {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Intersections")
            .field("bodies", &self.tets.len())
            .field("vertices", &self.n_vertices)
            .field("report", &self.report)
            .finish_non_exhaustive()
    }
}

impl Intersections {
    /// Workspaces for bodies given as (positions, tets); the positions only size them (the
    /// queries take current positions in [`update`](Self::update)).
    pub fn new<'a>(bodies: impl IntoIterator<Item = (&'a [Vector3<f64>], &'a [[u32; 4]])>) -> Self {
        let bodies: Vec<_> = bodies.into_iter().collect();
        let mut vertex_start = vec![0];
        let mut tet_start = vec![0];
        for (x, tets) in &bodies {
            vertex_start.push(vertex_start.last().unwrap() + x.len());
            tet_start.push(tet_start.last().unwrap() + tets.len());
        }
        let n_vertices = *vertex_start.last().unwrap();
        let n_tets = *tet_start.last().unwrap();
        let tet_owner: Vec<u32> = (0..bodies.len())
            .flat_map(|b| std::iter::repeat_n(b as u32, bodies[b].1.len()))
            .collect();
        let inside_phase = (bodies.len() > 1).then(|| {
            let mut groups = vec![0u8; n_vertices];
            groups.resize(n_vertices + n_tets, 1);
            let mut owners: Vec<u32> = (0..bodies.len())
                .flat_map(|b| std::iter::repeat_n(b as u32, bodies[b].0.len()))
                .collect();
            owners.extend_from_slice(&tet_owner);
            let mut wants = [[false; 4]; 4];
            wants[0][1] = true;
            BroadPhase::new(BroadPhaseKind::Bvh, groups, wants).with_owners(&owners, false)
        });
        let surfaces = bodies
            .iter()
            .map(|(x, tets)| {
                let s = ContactSurface::new(x, tets);
                let mut wants = [[false; 4]; 4];
                wants[0][0] = true;
                SelfSurface {
                    boxes: Vec::with_capacity(s.triangles.len()),
                    phase: BroadPhase::new(BroadPhaseKind::Bvh, vec![0; s.triangles.len()], wants),
                    triangles: s.triangles,
                }
            })
            .collect();
        let n = bodies.len();
        Self {
            vertex_start,
            tets: bodies.iter().map(|(_, t)| t.to_vec()).collect(),
            inside_phase,
            inside_boxes: Vec::with_capacity(n_vertices + n_tets),
            tet_owner,
            tet_start,
            n_vertices,
            surfaces,
            report: IntersectionReport {
                inside: vec![0; n],
                self_crossings: vec![0; n],
                inside_examples: Vec::with_capacity(n * EXAMPLES),
                crossing_examples: Vec::with_capacity(n * EXAMPLES),
            },
        }
    }

    /// Workspaces for these bodies (their simulated tets, [`Body::elems`]).
    pub fn for_bodies(bodies: &[Body]) -> Self {
        Self::new(bodies.iter().map(|b| (&b.x[..], &b.elems.tets[..])))
    }

    /// Both queries at positions `x(b)` of each body `b` (the same vertex counts as at
    /// construction).
    pub fn update<'a>(&mut self, x: impl Fn(usize) -> &'a [Vector3<f64>]) -> &IntersectionReport {
        self.update_inside(&x);
        self.update_self(&x);
        &self.report
    }

    /// Both queries at the bodies' current positions.
    pub fn update_bodies(&mut self, bodies: &[Body]) -> &IntersectionReport {
        self.update(|b| &bodies[b].x)
    }

    /// The last update's findings.
    pub fn report(&self) -> &IntersectionReport {
        &self.report
    }

    fn update_inside<'a>(&mut self, x: &impl Fn(usize) -> &'a [Vector3<f64>]) {
        let report = &mut self.report;
        report.inside.fill(0);
        report.inside_examples.clear();
        let Some(phase) = &mut self.inside_phase else {
            return;
        };
        self.inside_boxes.clear();
        for b in 0..self.tets.len() {
            self.inside_boxes.extend(x(b).iter().map(Aabb::from_point));
        }
        for (b, tets) in self.tets.iter().enumerate() {
            let xb = x(b);
            self.inside_boxes.extend(tets.iter().map(|t| {
                let mut bx = Aabb::empty();
                for &i in t {
                    bx.grow(&xb[i as usize]);
                }
                bx
            }));
        }
        let pairs = phase.update(&self.inside_boxes);
        let nv = self.n_vertices;
        // Pairs are sorted: those of one vertex are consecutive, and within them the tets of
        // one other body (tet boxes are numbered body by body).
        let mut k = 0;
        while k < pairs.len() {
            let v = pairs[k].0 as usize;
            let body = self.vertex_start.partition_point(|&s| s <= v) - 1;
            let p = x(body)[v - self.vertex_start[body]];
            let mut inside_of = None;
            while k < pairs.len() && pairs[k].0 as usize == v {
                let other = self.tet_owner[pairs[k].1 as usize - nv] as usize;
                let (mut plus, mut minus) = (0i32, 0i32);
                let xo = x(other);
                while k < pairs.len()
                    && pairs[k].0 as usize == v
                    && self.tet_owner[pairs[k].1 as usize - nv] as usize == other
                {
                    let t = pairs[k].1 as usize - nv - self.tet_start[other];
                    let q = self.tets[other][t].map(|i| xo[i as usize]);
                    let (a, b) = tet_contains(&q, &p);
                    plus += a;
                    minus += b;
                    k += 1;
                }
                if inside_of.is_none() && plus != 0 && minus != 0 {
                    inside_of = Some(other);
                }
            }
            if let Some(other) = inside_of {
                report.inside[body] += 1;
                if report.inside[body] <= EXAMPLES {
                    report.inside_examples.push(InsideVertex {
                        body,
                        vertex: (v - self.vertex_start[body]) as u32,
                        other,
                    });
                }
            }
        }
    }

    fn update_self<'a>(&mut self, x: &impl Fn(usize) -> &'a [Vector3<f64>]) {
        let report = &mut self.report;
        report.self_crossings.fill(0);
        report.crossing_examples.clear();
        for (body, s) in self.surfaces.iter_mut().enumerate() {
            let xb = x(body);
            s.boxes.clear();
            s.boxes.extend(s.triangles.iter().map(|t| {
                let mut bx = Aabb::from_point(&xb[t[0] as usize]);
                bx.grow(&xb[t[1] as usize]);
                bx.grow(&xb[t[2] as usize]);
                bx
            }));
            for &(i, j) in s.phase.update(&s.boxes) {
                let (t, u) = (s.triangles[i as usize], s.triangles[j as usize]);
                if let Some((edge, triangle)) = triangles_cross(xb, t, u) {
                    report.self_crossings[body] += 1;
                    if report.self_crossings[body] <= EXAMPLES {
                        report.crossing_examples.push(SelfCrossing {
                            body,
                            edge,
                            triangle,
                        });
                    }
                }
            }
        }
    }
}

/// Whether boundary triangles `t` and `u` (sharing no edge) cross, as an edge of one that
/// passes through the other (see the module notes).
fn triangles_cross(x: &[Vector3<f64>], t: [u32; 3], u: [u32; 3]) -> Option<([u32; 2], [u32; 3])> {
    let common = t.iter().filter(|v| u.contains(v)).count();
    if common >= 2 {
        return None;
    }
    let through = |a: [u32; 3], b: [u32; 3]| -> Option<([u32; 2], [u32; 3])> {
        let tb = b.map(|v| x[v as usize]);
        for k in 0..3 {
            let e = [a[k], a[(k + 1) % 3]];
            // An edge through a vertex of the other triangle meets its plane there.
            if b.contains(&e[0]) || b.contains(&e[1]) {
                continue;
            }
            if segment_crosses_triangle(&x[e[0] as usize], &x[e[1] as usize], &tb) {
                return Some((e, b));
            }
        }
        None
    };
    through(t, u).or_else(|| through(u, t))
}

/// Orientations smaller than this share of the product of their edge lengths count as 0
/// (touching): their sign is rounding (a flat face's vertices a few ulps off its plane).
const FLAT: f64 = 1e-12;

/// The sign of six times the signed volume of `(a, b, c, d)`: 1, −1, or 0 where it is within
/// [`FLAT`] × `|b − a| |c − a| |d − a|` of zero (or NaN).
#[inline]
fn orient(a: &Vector3<f64>, b: &Vector3<f64>, c: &Vector3<f64>, d: &Vector3<f64>) -> i8 {
    let (u, v, w) = (b - a, c - a, d - a);
    let det = u.cross(&v).dot(&w);
    let tol = FLAT * (u.norm_squared() * v.norm_squared() * w.norm_squared()).sqrt();
    if det > tol {
        1
    } else if det < -tol {
        -1
    } else {
        0
    }
}

/// Whether `p + εδ` and `p − εδ` lie strictly inside tet `q`, as the tet's contribution to the
/// winding number: `sign(V)` when inside, else 0 (0 for a flat tet). An orientation within
/// [`FLAT`] of zero counts as zero, and the perturbation decides.
fn tet_contains(q: &[Vector3<f64>; 4], p: &Vector3<f64>) -> (i32, i32) {
    let s = match orient(&q[0], &q[1], &q[2], &q[3]) {
        0 => return (0, 0),
        o => o > 0,
    };
    let (mut plus, mut minus) = (true, true);
    // Slot k of the tet replaced by p: orient(.., p at k, ..) = σ_k (f₁ − p) · n_k with the
    // face (f₁, f₂, f₃) opposite slot k and n_k = (f₂ − f₁) × (f₃ − f₁); its derivative along
    // δ is −σ_k n_k · δ. The tolerance, |n_k| × the farthest face vertex from p, is the same
    // for the two tets that share the face, so they agree on which side p is.
    const FACES: [(usize, usize, usize, f64); 4] = [
        (1, 2, 3, 1.0),
        (0, 2, 3, -1.0),
        (0, 1, 3, 1.0),
        (0, 1, 2, -1.0),
    ];
    for (f1, f2, f3, sigma) in FACES {
        let n = (q[f2] - q[f1]).cross(&(q[f3] - q[f1]));
        let value = sigma * (q[f1] - p).dot(&n);
        let reach = [f1, f2, f3]
            .iter()
            .map(|&i| (q[i] - p).norm_squared())
            .fold(0.0, f64::max);
        let tol = FLAT * (n.norm_squared() * reach).sqrt();
        if value.is_nan() {
            return (0, 0);
        }
        if value.abs() > tol {
            if (value > 0.0) != s {
                return (0, 0);
            }
        } else {
            let slope = -sigma * n.dot(&DELTA);
            // Along +δ the orientation takes the slope's sign, along −δ the opposite.
            plus &= slope != 0.0 && (slope > 0.0) == s;
            minus &= slope != 0.0 && (slope < 0.0) == s;
        }
    }
    let w = if s { 1 } else { -1 };
    (i32::from(plus) * w, i32::from(minus) * w)
}

/// Whether segment `pq` passes through the interior of triangle `t`; touching, and any sign
/// within [`FLAT`] of zero, is not.
fn segment_crosses_triangle(p: &Vector3<f64>, q: &Vector3<f64>, t: &[Vector3<f64>; 3]) -> bool {
    let sp = orient(&t[0], &t[1], &t[2], p);
    let sq = orient(&t[0], &t[1], &t[2], q);
    if sp == 0 || sp != -sq {
        return false;
    }
    let a = orient(p, q, &t[0], &t[1]);
    a != 0 && a == orient(p, q, &t[1], &t[2]) && a == orient(p, q, &t[2], &t[0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{box_grid, BoxGrid, TetMesh, TetSplit};

    fn cube(cells: usize, size: f64, origin: [f64; 3], split: TetSplit) -> TetMesh {
        box_grid(&BoxGrid {
            cells: [cells; 3],
            cell_size: Vector3::repeat(size / cells as f64),
            origin: Vector3::from(origin),
            split,
        })
    }

    fn query(meshes: &[&TetMesh]) -> IntersectionReport {
        let mut q = Intersections::new(meshes.iter().map(|m| (&m.positions[..], &m.tets[..])));
        q.update(|b| &meshes[b].positions).clone()
    }

    /// Vertices of `a` inside `b` by the closed surface's winding number (the reference).
    fn brute_inside(a: &TetMesh, b: &TetMesh) -> usize {
        let s = ContactSurface::new(&b.positions, &b.tets);
        (a.positions.iter())
            .filter(|p| s.winding_number(&b.positions, p).abs() > 0.5 + 1e-9)
            .count()
    }

    #[test]
    fn overlapping_cubes_count_the_vertices_inside() {
        for split in [TetSplit::Five, TetSplit::Six] {
            // A = [0, 1]³, B = [0.6, 1.6] × [0.1, 1.1]²; cells of 0.5: A's vertices with
            // x = 1, y, z ∈ {0.5, 1} are inside B, B's with x = 0.6, y, z ∈ {0.1, 0.6} inside A.
            let a = cube(2, 1.0, [0.0; 3], split);
            let b = cube(2, 1.0, [0.6, 0.1, 0.1], split);
            let r = query(&[&a, &b]);
            assert_eq!(r.inside, vec![4, 4], "{split:?}");
            assert_eq!(r.inside, vec![brute_inside(&a, &b), brute_inside(&b, &a)]);
            assert_eq!(r.inside_total(), 8);
            assert_eq!(r.inside_examples.len(), 8);
            assert!(r.inside_examples.iter().all(|e| e.other != e.body));
            assert_eq!(r.self_crossings, vec![0, 0]);
        }
    }

    #[test]
    fn a_vertex_on_an_interior_vertex_of_the_other_body_is_inside() {
        // B = [0.5, 1.5]³ on the same lattice: A's corner (1, 1, 1) coincides with B's
        // interior vertex, and B's corner (0.5, 0.5, 0.5) with A's.
        for split in [TetSplit::Five, TetSplit::Six] {
            let a = cube(2, 1.0, [0.0; 3], split);
            let b = cube(2, 1.0, [0.5; 3], split);
            assert_eq!(query(&[&a, &b]).inside, vec![1, 1], "{split:?}");
        }
    }

    #[test]
    fn separated_and_touching_bodies_have_nothing_inside() {
        let a = cube(3, 1.0, [0.0; 3], TetSplit::Five);
        for origin in [
            [1.01, 0.0, 0.0],  // separated
            [1.0, 0.0, 0.0],   // face to face, vertices coinciding
            [1.0, 0.25, 0.1],  // face to face, vertices on the other's faces and edges
            [1.0, 1.0, 1.0],   // corner to corner
            [0.0, -1.0, 0.0],  // below, face to face
            [-1.0, 0.5, -0.5], // face to face, half a cell off
        ] {
            let b = cube(2, 1.0, origin, TetSplit::Six);
            let r = query(&[&a, &b]);
            assert_eq!(r.inside, vec![0, 0], "B at {origin:?}");
            assert_eq!(r.self_crossings, vec![0, 0], "B at {origin:?}");
        }
    }

    #[test]
    fn a_body_deep_inside_another_has_every_vertex_inside() {
        let a = cube(4, 1.0, [0.0; 3], TetSplit::Five);
        let b = cube(2, 0.3, [0.3, 0.35, 0.4], TetSplit::Six);
        // B = [0.3, 0.6] × [0.35, 0.65] × [0.4, 0.7] holds A's lattice point (0.5, 0.5, 0.5).
        let r = query(&[&a, &b]);
        assert_eq!(r.inside, vec![1, b.positions.len()]);
        assert_eq!(r.inside, vec![brute_inside(&a, &b), brute_inside(&b, &a)]);
        // A third body far away changes nothing, and nothing is inside it.
        let c = cube(1, 1.0, [5.0, 0.0, 0.0], TetSplit::Five);
        assert_eq!(query(&[&a, &b, &c]).inside, vec![1, b.positions.len(), 0]);
    }

    #[test]
    fn a_body_turned_inside_out_still_holds_what_is_inside_it() {
        // B mirrored through its middle (every tet inverted): its surface, traversed inside
        // out, has winding number −1 inside; A's vertices there are inside it all the same.
        let a = cube(2, 1.0, [0.0; 3], TetSplit::Five);
        let mut b = cube(2, 1.0, [0.6, 0.1, 0.1], TetSplit::Five);
        for p in &mut b.positions {
            p.x = 1.6 - (p.x - 0.6);
        }
        assert_eq!(query(&[&a, &b]).inside, vec![4, 4]);
    }

    /// A bar of `n` cells along x whose second half is folded back over the first (mirrored
    /// about the middle, shifted by `shift` in x) and lifted by `lift` in y.
    fn folded_bar(n: usize, lift: f64, shift: f64) -> TetMesh {
        let mut m = box_grid(&BoxGrid {
            cells: [n, 1, 1],
            cell_size: Vector3::repeat(1.0),
            origin: Vector3::zeros(),
            split: TetSplit::Five,
        });
        let half = (n / 2) as f64;
        for p in &mut m.positions {
            if p.x > half {
                p.x = 2.0 * half - p.x + shift;
                p.y += lift;
            }
        }
        m
    }

    /// One body of two unit cubes, the second at `origin`.
    fn two_part_body(origin: [f64; 3]) -> TetMesh {
        let a = cube(2, 1.0, [0.0; 3], TetSplit::Five);
        let b = cube(2, 1.0, origin, TetSplit::Five);
        let n = a.positions.len() as u32;
        TetMesh {
            positions: a.positions.iter().chain(&b.positions).copied().collect(),
            tets: (a.tets.iter().copied())
                .chain(b.tets.iter().map(|t| t.map(|i| i + n)))
                .collect(),
        }
    }

    #[test]
    fn a_folded_surface_crosses_itself() {
        // Folded back half a height up: the folded half passes through the rest.
        let r = query(&[&folded_bar(8, 0.5, 0.3)]);
        assert!(r.self_crossings[0] > 0, "{r:?}");
        assert_eq!(r.crossing_examples.len(), r.self_crossings[0].min(EXAMPLES));
        for c in &r.crossing_examples {
            assert!(!c.triangle.contains(&c.edge[0]) && !c.triangle.contains(&c.edge[1]));
        }
        // Every crossing pair, as testing all pairs of triangles finds them.
        for m in [
            folded_bar(8, 0.5, 0.3),
            folded_bar(6, 0.3, 0.7),
            two_part_body([0.6, 0.1, 0.1]),
        ] {
            let tris = ContactSurface::new(&m.positions, &m.tets).triangles;
            let brute = (0..tris.len())
                .flat_map(|i| (i + 1..tris.len()).map(move |j| (i, j)))
                .filter(|&(i, j)| triangles_cross(&m.positions, tris[i], tris[j]).is_some())
                .count();
            assert!(brute > 0);
            assert_eq!(query(&[&m]).self_crossings, vec![brute]);
        }
        // Unfolded: nothing crosses (adjacent triangles and edges are never tested).
        let straight = cube(1, 1.0, [0.0; 3], TetSplit::Five);
        assert_eq!(query(&[&straight]).self_crossings, vec![0]);
        assert_eq!(query(&[&folded_bar(8, 0.0, 0.0)]).self_crossings, vec![0]);
    }

    #[test]
    fn parts_of_one_body_cross_when_they_overlap_not_when_they_touch() {
        let r = query(&[&two_part_body([0.6, 0.1, 0.1])]);
        assert!(r.self_crossings[0] > 0);
        // One body: there is no other body to be inside of.
        assert_eq!(r.inside, vec![0]);
        for origin in [
            [1.0, 0.0, 0.0],  // face to face, vertices coinciding
            [0.0, 1.0, 0.5],  // face to face, half a cell off
            [1.0, 1.0, 1.0],  // corner to corner
            [1.05, 0.2, 0.0], // separated
        ] {
            let r = query(&[&two_part_body(origin)]);
            assert_eq!(r.self_crossings, vec![0], "second part at {origin:?}");
        }
    }

    /// Every vertex turned by a generic rotation and moved: flat faces stay flat only up to
    /// rounding, coinciding vertices stay coinciding (the same operations on the same bits).
    fn turn(m: &mut TetMesh) {
        let r = nalgebra::Rotation3::from_euler_angles(0.3, 0.7, 1.1);
        for p in &mut m.positions {
            *p = r * *p + Vector3::new(0.1, 0.2, 0.3);
        }
    }

    #[test]
    fn faces_a_few_ulps_off_their_plane_only_touch() {
        // After a generic rotation the computed orientations of coplanar primitives have
        // rounding signs, which must not count as crossings or as a vertex inside.
        for origin in [[1.0, 0.0, 0.0], [0.0, 1.0, 0.5], [1.0, 0.5, 0.0]] {
            let mut one = two_part_body(origin);
            turn(&mut one);
            assert_eq!(query(&[&one]).self_crossings, vec![0], "{origin:?}");
            let mut a = cube(3, 1.0, [0.0; 3], TetSplit::Five);
            let mut b = cube(2, 1.0, origin, TetSplit::Six);
            turn(&mut a);
            turn(&mut b);
            let r = query(&[&a, &b]);
            assert_eq!(
                (r.inside, r.self_crossings),
                (vec![0, 0], vec![0, 0]),
                "{origin:?}"
            );
        }
    }

    #[test]
    fn repeated_updates_follow_the_motion() {
        let a = cube(2, 1.0, [0.0; 3], TetSplit::Five);
        let b = cube(2, 1.0, [2.0, 0.1, 0.1], TetSplit::Five);
        let mut q = Intersections::new([
            (&a.positions[..], &a.tets[..]),
            (&b.positions[..], &b.tets[..]),
        ]);
        assert_eq!(
            q.update(|i| if i == 0 { &a.positions } else { &b.positions })
                .inside,
            vec![0, 0]
        );
        let moved: Vec<_> = b
            .positions
            .iter()
            .map(|p| p - Vector3::new(1.4, 0.0, 0.0))
            .collect();
        let r = q.update(|i| if i == 0 { &a.positions } else { &moved });
        assert_eq!(r.inside, vec![4, 4]);
        assert_eq!(q.report().inside_total(), 8);
    }
}
