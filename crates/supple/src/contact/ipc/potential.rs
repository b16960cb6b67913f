//! The barrier potential of an island (Li et al. 2020, IPC §4, eq. 4–6):
//! `B(x) = Σ_k m_k(x) b(d_k²(x); d̂²)` over the point–triangle and edge–edge pairs of the
//! collision mesh closer than `d̂` (edge–edge pairs mollified by `m_k`, eq. 23) and over the
//! surface vertices closer than `d̂` to an obstacle, with `b` the clamped log barrier on
//! squared distances. Its gradient is added to a global vector; its per-pair Hessians are
//! projected onto the positive semidefinite cone (IPC §4.1: per stencil) and kept as small
//! dense blocks for assembly.
//!
//! The active set is rebuilt at every Newton iterate from a broad phase over the primitives'
//! boxes inflated by `d̂` ([`ContactSet::update`]); the same primitives' swept boxes feed the
//! line search's CCD ([`ContactSet::max_step`]).

use super::barrier::{barrier, barrier_first_derivative, barrier_second_derivative};
use super::distance::{
    edge_edge_distance2, edge_edge_distance2_gradient, edge_edge_distance2_hessian,
    point_triangle_distance2, point_triangle_distance2_gradient, point_triangle_distance2_hessian,
    Mat12, Vec12,
};
use super::mesh::{ee_adjacent, pt_adjacent, CollisionMesh};
use super::mollifier::{
    edge_edge_cross_squarednorm, edge_edge_mollifier, edge_edge_mollifier_gradient,
    edge_edge_mollifier_hessian, edge_edge_mollifier_threshold,
};
use super::psd::project_psd12_translation_invariant as project_psd;
use crate::contact::broad::{Aabb, BroadPhase, BroadPhaseKind};
use crate::contact::Obstacle;
use crate::linalg::par;
use nalgebra::{Matrix3, Vector3};

mod line_search;
mod obstacle_core;

/// The narrow phase runs in parallel from this many candidates, in tasks of at least
/// [`NARROW_MIN_LEN`] (a distance costs about a tenth of a microsecond).
const NARROW_PAR_MIN: usize = 512;
const NARROW_MIN_LEN: usize = 128;

/// Broad-phase groups of the primitives.
const VERTEX: u8 = 0;
const EDGE: u8 = 1;
const TRIANGLE: u8 = 2;

/// The per-pair Hessian of the barrier `b(d²)` that Newton's matrix gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BarrierHessian {
    /// `b'' ∇d² ∇d²ᵀ + b' ∇²d²` as it is (not PSD; for finite-difference tests only).
    Exact,
    /// The exact Hessian made PSD by an eigendecomposition per pair (IPC §4.1: the
    /// Frobenius-nearest PSD matrix of the 12 coordinates, computed in the complement of
    /// translations: [`super::psd::project_psd12_translation_invariant`]).
    /// Projecting instead in the positions relative to one vertex (9×9, also PSD and
    /// translation invariant, but a stiffer matrix) took 100 Newton iterations on each of
    /// the first 5 steps of the ±10 m/s tube crash at dt 5 ms, against 21 with this one.
    Projected,
    /// `(4 d² b'' + 2 b')₊ ∇d ∇dᵀ`: the exact curvature along the pair's normal, without
    /// the curvature of the distance itself (`2 d b' ∇²d`, whose directions the projection
    /// mostly clamps anyway). PSD by construction, rank one, no eigendecomposition: the
    /// projection was a fifth of the step on the 10k-tet stack (EXPERIMENTS.md). Mollified
    /// edge–edge pairs keep [`BarrierHessian::Projected`].
    GaussNewton,
}

/// What a contact pair is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PairKind {
    /// `v = [p, t0, t1, t2]`.
    PointTriangle,
    /// `v = [ea0, ea1, eb0, eb1]`.
    EdgeEdge,
    /// `v[0]` against obstacle `obstacle`.
    PointObstacle,
    /// Point `core` of obstacle `obstacle`'s core against the triangle `v[1..4]` (`v[0]` a
    /// placeholder; `potential/obstacle_core.rs`).
    CoreTriangle,
    /// Segment `core` of obstacle `obstacle`'s core against the edge `v[2..4]` (`v[0..2]`
    /// placeholders).
    CoreEdge,
}

/// One active pair (distance below `d̂`) at the current iterate.
#[derive(Debug, Clone, Copy)]
pub struct Pair {
    pub kind: PairKind,
    pub v: [u32; 4],
    pub obstacle: u32,
    /// The core point or segment of a core pair (0 for other kinds).
    pub core: u32,
    /// Squared distance at the iterate.
    pub d2: f64,
    /// Edge–edge mollifier threshold `ε×` (eq. 23; 0 for other kinds).
    pub eps_x: f64,
}

impl Pair {
    /// A placeholder: no pair (`d2 = ∞`).
    fn none() -> Self {
        Self {
            kind: PairKind::PointTriangle,
            v: [0; 4],
            obstacle: 0,
            core: 0,
            d2: f64::INFINITY,
            eps_x: 0.0,
        }
    }

    /// Vertices of the stencil (1 for a point–obstacle pair, else 4).
    pub fn n_vertices(&self) -> usize {
        if self.kind == PairKind::PointObstacle {
            1
        } else {
            4
        }
    }
}

/// One pair's barrier gradient and projected Hessian (unscaled by κ), for assembly.
#[derive(Debug, Clone, Copy)]
pub struct Stencil {
    pub v: [u32; 4],
    pub n: usize,
    pub grad: Vec12,
    pub hess: Mat12,
}

impl Stencil {
    fn zero() -> Self {
        Self {
            v: [0; 4],
            n: 0,
            grad: Vec12::zeros(),
            hess: Mat12::zeros(),
        }
    }
}

/// The obstacles as the step sees them: their pose at the step's end (`time`), and where
/// the step started (`start`).
#[derive(Debug, Clone, Copy)]
pub struct Obstacles<'a> {
    pub list: &'a [Obstacle],
    pub time: f64,
    pub start: f64,
}

/// Which pairs of the collision mesh may touch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pairing {
    pub self_collision: bool,
    pub body_collision: bool,
}

/// The active pairs and the broad phases that find them (workspaces reused every call).
#[derive(Debug)]
pub struct ContactSet {
    /// `d̂` (m).
    pub dhat: f64,
    pub pairing: Pairing,
    pub pairs: Vec<Pair>,
    pub stencils: Vec<Stencil>,
    /// Smallest distance (m) over the candidate pairs of the last update (∞ when none).
    pub min_distance: f64,
    /// How each pair's Hessian is made positive semidefinite (see [`BarrierHessian`]).
    pub hessian: BarrierHessian,
    near: BroadPhase,
    swept: BroadPhase,
    boxes: Vec<Aabb>,
    /// Primitive pairs closer than `d̂` at rest within one body (never contacts).
    excluded: Vec<(u32, u32)>,
    /// Vertices held on prescribed motions this step ([`set_held`](Self::set_held)): no
    /// obstacle pair, since the barrier cannot move them (a cylinder's base fixed on the
    /// platform it stands on lies at distance 0 from it).
    held: Vec<bool>,
    /// The narrow phase's candidates with their distances, in the broad phase's order
    /// (a workspace of [`update`](Self::update); `d2 = ∞`: not a pair to test).
    narrow: Vec<Pair>,
    /// Per-chunk smallest step fractions of the CCD (a workspace of
    /// [`max_step`](Self::max_step)).
    ccd_partials: Vec<f64>,
}

impl ContactSet {
    pub fn new(mesh: &CollisionMesh, dhat: f64, pairing: Pairing, kind: BroadPhaseKind) -> Self {
        let groups: Vec<u8> = std::iter::repeat_n(VERTEX, mesh.vertices.len())
            .chain(std::iter::repeat_n(EDGE, mesh.edges.len()))
            .chain(std::iter::repeat_n(TRIANGLE, mesh.triangles.len()))
            .collect();
        let owners: Vec<u32> = (mesh.vertices.iter().map(|&v| mesh.owner[v as usize]))
            .chain(mesh.edges.iter().map(|e| mesh.owner[e[0] as usize]))
            .chain(mesh.triangles.iter().map(|t| mesh.owner[t[0] as usize]))
            .collect();
        let mut wants = [[false; 4]; 4];
        wants[VERTEX as usize][TRIANGLE as usize] = true;
        wants[EDGE as usize][EDGE as usize] = true;
        let same = pairing.self_collision;
        let make = || {
            BroadPhase::new(kind, groups.clone(), wants)
                .with_owners(&owners, same || !pairing.body_collision)
        };
        let mut set = Self {
            dhat,
            pairing,
            pairs: Vec::new(),
            stencils: Vec::new(),
            min_distance: f64::INFINITY,
            hessian: BarrierHessian::Projected,
            near: make(),
            swept: make(),
            boxes: vec![Aabb::empty(); groups.len()],
            excluded: Vec::new(),
            held: vec![false; mesh.owner.len()],
            narrow: Vec::new(),
            ccd_partials: Vec::new(),
        };
        // Self pairs already within d̂ at rest are features of the mesh, not contacts.
        if pairing.self_collision {
            set.fill_boxes(mesh, &mesh.rest, None, dhat);
            let pairs = set.near.update(&set.boxes).to_vec();
            for (i, j) in pairs {
                if Self::same_body(mesh, i, j)
                    && set
                        .pair_distance2(mesh, &mesh.rest, i, j)
                        .is_some_and(|d2| d2 < dhat * dhat)
                {
                    set.excluded.push((i, j));
                }
            }
        }
        set
    }

    /// The step's held vertices (global numbering; allocates nothing when the count is
    /// unchanged).
    pub fn set_held(&mut self, held: &[bool]) {
        self.held.clear();
        self.held.extend_from_slice(held);
    }

    /// Boxes of every primitive at `x` (swept to `x + dx` when given), inflated by `r`.
    fn fill_boxes(
        &mut self,
        mesh: &CollisionMesh,
        x: &[Vector3<f64>],
        dx: Option<&[Vector3<f64>]>,
        r: f64,
    ) {
        let (nv, ne) = (mesh.vertices.len(), mesh.edges.len());
        let bx = |ids: &[u32]| {
            let mut b = Aabb::empty();
            for &i in ids {
                let p = x[i as usize];
                b.grow(&p);
                if let Some(dx) = dx {
                    b.grow(&(p + dx[i as usize]));
                }
            }
            b.inflate(r);
            b
        };
        // Box by box into its own slot: the same boxes on any thread count.
        par::for_each_mut(&mut self.boxes, |k, b| {
            *b = if k < nv {
                bx(&[mesh.vertices[k]])
            } else if k < nv + ne {
                bx(&mesh.edges[k - nv])
            } else {
                bx(&mesh.triangles[k - nv - ne])
            };
        });
    }

    fn same_body(mesh: &CollisionMesh, i: u32, j: u32) -> bool {
        let first = |k: u32| -> u32 {
            let (nv, ne) = (mesh.vertices.len() as u32, mesh.edges.len() as u32);
            if k < nv {
                mesh.vertices[k as usize]
            } else if k < nv + ne {
                mesh.edges[(k - nv) as usize][0]
            } else {
                mesh.triangles[(k - nv - ne) as usize][0]
            }
        };
        mesh.owner[first(i) as usize] == mesh.owner[first(j) as usize]
    }

    /// The stencil of broad-phase pair `(i, j)` (`i < j`), if it is a pair to test.
    fn stencil(
        pairing: Pairing,
        mesh: &CollisionMesh,
        i: u32,
        j: u32,
    ) -> Option<(PairKind, [u32; 4])> {
        let (nv, ne) = (mesh.vertices.len() as u32, mesh.edges.len() as u32);
        let same = Self::same_body(mesh, i, j);
        if (same && !pairing.self_collision) || (!same && !pairing.body_collision) {
            return None;
        }
        if i < nv && j >= nv + ne {
            let p = mesh.vertices[i as usize];
            let t = mesh.triangles[(j - nv - ne) as usize];
            (!pt_adjacent(p, &t)).then_some((PairKind::PointTriangle, [p, t[0], t[1], t[2]]))
        } else if (nv..nv + ne).contains(&i) && (nv..nv + ne).contains(&j) {
            let (a, b) = (mesh.edges[(i - nv) as usize], mesh.edges[(j - nv) as usize]);
            (!ee_adjacent(&a, &b)).then_some((PairKind::EdgeEdge, [a[0], a[1], b[0], b[1]]))
        } else {
            None
        }
    }

    fn pair_distance2(
        &self,
        mesh: &CollisionMesh,
        x: &[Vector3<f64>],
        i: u32,
        j: u32,
    ) -> Option<f64> {
        let (kind, v) = Self::stencil(self.pairing, mesh, i, j)?;
        let p = v.map(|k| x[k as usize]);
        Some(match kind {
            PairKind::PointTriangle => point_triangle_distance2(&p[0], &p[1], &p[2], &p[3]),
            _ => edge_edge_distance2(&p[0], &p[1], &p[2], &p[3]),
        })
    }

    /// Rebuilds the active pairs at `x` (pairs closer than `d̂`, obstacles at their pose at
    /// `obstacles.time`), and their barrier gradients and projected Hessians when `hessians`.
    /// Returns `Err(pair)` when a pair is at distance 0 or crossing an obstacle (an
    /// infeasible iterate).
    pub fn update(
        &mut self,
        mesh: &CollisionMesh,
        x: &[Vector3<f64>],
        obstacles: &Obstacles,
    ) -> Result<(), Pair> {
        let dhat2 = self.dhat * self.dhat;
        self.fill_boxes(mesh, x, None, self.dhat);
        self.pairs.clear();
        let mut min_d2 = f64::INFINITY;
        let pairing = self.pairing;
        let candidates = self.near.update(&self.boxes);
        // The distances candidate by candidate, in parallel into their own slots, then the
        // pairs kept in the broad phase's order (the same set, and the same first infeasible
        // pair, on any thread count).
        let excluded = &self.excluded;
        self.narrow.resize(candidates.len(), Pair::none());
        par::for_each_mut_from(
            &mut self.narrow,
            NARROW_PAR_MIN,
            NARROW_MIN_LEN,
            |c, out| {
                let (i, j) = candidates[c];
                *out = Pair::none();
                if excluded.binary_search(&(i, j)).is_ok() {
                    return;
                }
                let Some((kind, v)) = Self::stencil(pairing, mesh, i, j) else {
                    return;
                };
                let p = v.map(|k| x[k as usize]);
                let (d2, eps_x) = match kind {
                    PairKind::PointTriangle => {
                        (point_triangle_distance2(&p[0], &p[1], &p[2], &p[3]), 0.0)
                    }
                    _ => {
                        let r = v.map(|k| mesh.rest[k as usize]);
                        (
                            edge_edge_distance2(&p[0], &p[1], &p[2], &p[3]),
                            edge_edge_mollifier_threshold(&r[0], &r[1], &r[2], &r[3]),
                        )
                    }
                };
                *out = Pair {
                    kind,
                    v,
                    obstacle: 0,
                    core: 0,
                    d2,
                    eps_x,
                };
            },
        );
        for pair in &self.narrow {
            if pair.d2 == f64::INFINITY {
                continue;
            }
            min_d2 = min_d2.min(pair.d2);
            if pair.d2.is_nan() || pair.d2 <= 0.0 {
                return Err(*pair);
            }
            if pair.d2 < dhat2 {
                self.pairs.push(*pair);
            }
        }
        for (o, obstacle) in obstacles.list.iter().enumerate() {
            let bounds = obstacle.aabb(obstacles.time);
            for &v in &mesh.vertices {
                let p = x[v as usize];
                if self.held[v as usize] {
                    continue;
                }
                if let Some((lo, hi)) = bounds {
                    let outside =
                        (0..3).any(|k| p[k] < lo[k] - self.dhat || p[k] > hi[k] + self.dhat);
                    if outside {
                        continue;
                    }
                }
                let d = obstacle.proximity(obstacles.time, &p).distance;
                let pair = Pair {
                    kind: PairKind::PointObstacle,
                    v: [v, v, v, v],
                    obstacle: o as u32,
                    core: 0,
                    d2: d * d.abs(),
                    eps_x: 0.0,
                };
                if d < self.dhat {
                    min_d2 = min_d2.min(d * d);
                }
                if d.is_nan() || d <= 0.0 {
                    return Err(pair);
                }
                if d < self.dhat {
                    self.pairs.push(pair);
                }
            }
        }
        self.add_core_pairs(mesh, x, obstacles, &mut min_d2)?;
        self.min_distance = min_d2.sqrt();
        Ok(())
    }

    /// `B(x)` of the active pairs (unscaled by κ).
    pub fn energy(&self, x: &[Vector3<f64>]) -> f64 {
        let dhat2 = self.dhat * self.dhat;
        self.pairs
            .iter()
            .map(|pair| {
                let b = barrier(pair.d2, dhat2);
                if pair.kind == PairKind::EdgeEdge {
                    let p = pair.v.map(|k| x[k as usize]);
                    b * edge_edge_mollifier(&p[0], &p[1], &p[2], &p[3], pair.eps_x)
                } else {
                    b
                }
            })
            .sum()
    }

    /// Computes each active pair's gradient and projected Hessian of `m b` into
    /// [`stencils`](Self::stencils) (unscaled by κ).
    pub fn compute_stencils(&mut self, x: &[Vector3<f64>], obstacles: &Obstacles, hessians: bool) {
        // Pair by pair, in parallel: each stencil depends on its pair alone and lands in its
        // own slot, so the result does not depend on the thread count.
        let mut stencils = std::mem::take(&mut self.stencils);
        stencils.resize(self.pairs.len(), Stencil::zero());
        let this = &*self;
        par::for_each_mut_costly(&mut stencils, |k, s| {
            *s = this.pair_stencil(&this.pairs[k], x, obstacles, hessians);
        });
        self.stencils = stencils;
    }

    /// One pair's gradient and (projected, with `hessians`) Hessian of `m b`.
    fn pair_stencil(
        &self,
        pair: &Pair,
        x: &[Vector3<f64>],
        obstacles: &Obstacles,
        hessians: bool,
    ) -> Stencil {
        let dhat2 = self.dhat * self.dhat;
        let (db, d2b) = (
            barrier_first_derivative(pair.d2, dhat2),
            barrier_second_derivative(pair.d2, dhat2),
        );
        let p = pair.v.map(|k| x[k as usize]);
        match pair.kind {
            PairKind::CoreTriangle | PairKind::CoreEdge => {
                self.core_stencil(pair, x, obstacles, hessians)
            }
            PairKind::PointObstacle => {
                let prox = obstacles.list[pair.obstacle as usize].proximity(obstacles.time, &p[0]);
                let (d, n) = (prox.distance, prox.normal);
                // ∇(d²) = 2 d n; ∇²(d²) ≈ 2 n nᵀ (the shape's curvature dropped), so the
                // Hessian of b is (4 d² b'' + 2 b') n nᵀ, clamped at 0.
                let mut grad = Vec12::zeros();
                grad.fixed_rows_mut::<3>(0).copy_from(&(2.0 * d * db * n));
                let c = (4.0 * d * d * d2b + 2.0 * db).max(0.0);
                let mut hess = Mat12::zeros();
                hess.fixed_view_mut::<3, 3>(0, 0)
                    .copy_from(&(c * n * n.transpose()));
                Stencil {
                    v: pair.v,
                    n: 1,
                    grad,
                    hess,
                }
            }
            PairKind::PointTriangle => {
                let g = point_triangle_distance2_gradient(&p[0], &p[1], &p[2], &p[3]);
                Stencil {
                    v: pair.v,
                    n: 4,
                    grad: db * g,
                    hess: if !hessians {
                        Mat12::zeros()
                    } else if self.hessian == BarrierHessian::GaussNewton {
                        gauss_newton(&g, pair.d2, db, d2b)
                    } else {
                        let h = point_triangle_distance2_hessian(&p[0], &p[1], &p[2], &p[3]);
                        let m = d2b * g * g.transpose() + db * h;
                        if self.hessian == BarrierHessian::Projected {
                            project_psd(&m)
                        } else {
                            m
                        }
                    },
                }
            }
            PairKind::EdgeEdge => {
                let g = edge_edge_distance2_gradient(&p[0], &p[1], &p[2], &p[3]);
                let bg = db * g;
                let cross = edge_edge_cross_squarednorm(&p[0], &p[1], &p[2], &p[3]);
                let mollified = cross < pair.eps_x;
                let gauss_newton_pair = self.hessian == BarrierHessian::GaussNewton && !mollified;
                let bh = if !hessians {
                    Mat12::zeros()
                } else if gauss_newton_pair {
                    gauss_newton(&g, pair.d2, db, d2b)
                } else {
                    let h = edge_edge_distance2_hessian(&p[0], &p[1], &p[2], &p[3]);
                    d2b * g * g.transpose() + db * h
                };
                let (grad, hess) = if mollified {
                    // Eq. 23: the product m b and its derivatives.
                    let b = barrier(pair.d2, dhat2);
                    let m = edge_edge_mollifier(&p[0], &p[1], &p[2], &p[3], pair.eps_x);
                    let mg = edge_edge_mollifier_gradient(&p[0], &p[1], &p[2], &p[3], pair.eps_x);
                    let hess = if hessians {
                        let mh =
                            edge_edge_mollifier_hessian(&p[0], &p[1], &p[2], &p[3], pair.eps_x);
                        m * bh + b * mh + mg * bg.transpose() + bg * mg.transpose()
                    } else {
                        Mat12::zeros()
                    };
                    (m * bg + b * mg, hess)
                } else {
                    (bg, bh)
                };
                Stencil {
                    v: pair.v,
                    n: 4,
                    grad,
                    hess: if hessians && !gauss_newton_pair && self.hessian != BarrierHessian::Exact
                    {
                        project_psd(&hess)
                    } else {
                        hess
                    },
                }
            }
        }
    }

    /// `out[v] += scale · ∇B` over the stencils.
    pub fn add_gradient(&self, scale: f64, out: &mut [Vector3<f64>]) {
        for s in &self.stencils {
            for a in 0..s.n {
                out[s.v[a] as usize] += scale * s.grad.fixed_rows::<3>(3 * a);
            }
        }
    }
}

/// `(b'' + b'/(2d²))₊ g gᵀ` with `g = ∇d² = 2d ∇d` (see [`BarrierHessian::GaussNewton`]).
fn gauss_newton(g: &Vec12, d2: f64, db: f64, d2b: f64) -> Mat12 {
    let c = (d2b + db / (2.0 * d2)).max(0.0);
    c * g * g.transpose()
}

/// `a += scale · H` for the stencils, into the global matrix (slots by binary search).
pub fn add_stencils(stencils: &[Stencil], scale: f64, a: &mut crate::linalg::BlockCsr) {
    for s in stencils {
        for i in 0..s.n {
            for j in 0..s.n {
                let (vi, vj) = (s.v[i] as usize, s.v[j] as usize);
                let slot = a
                    .pattern
                    .slot(vi, vj)
                    .expect("the coupled pattern holds every stencil block");
                let block: Matrix3<f64> = s.hess.fixed_view::<3, 3>(3 * i, 3 * j).into_owned();
                a.values[slot] += scale * block;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::ipc::accd::{point_sdf_accd, AccdSettings};
    use crate::contact::{Obstacle, RigidPath, Shape};

    /// Two cubes face to face, `gap` apart, moved by a step that leaves them `1e-9` m apart
    /// (a head-on crash whose closing per step matches the gap, up to round-off). Their swept
    /// boxes never meet, so without inflating them the CCD saw no pair, allowed the whole
    /// step, and Newton started next to a barrier singularity it could not leave (every
    /// further step was cut to 0). The boxes are inflated by a tenth of `d̂`: the step is cut,
    /// and the faces keep at least ACCD's tenth of the gap.
    #[test]
    fn ccd_cuts_a_step_that_brings_two_faces_within_rounding_of_each_other() {
        use crate::body::{Body, BodyDesc};
        use crate::fem::material::ModelKind;
        use crate::mesh::{box_grid, BoxGrid, TetSplit};
        let cube = |x: f64| {
            let mesh = box_grid(&BoxGrid {
                cells: [1, 1, 1],
                cell_size: Vector3::repeat(0.1),
                origin: Vector3::new(x, 0.0, 0.0),
                split: TetSplit::Five,
            });
            Body::new(BodyDesc::new(
                "cube",
                mesh,
                ModelKind::Linear,
                1e5,
                0.3,
                1000.0,
            ))
            .unwrap()
        };
        let gap = 0.02;
        let bodies = [cube(0.0), cube(0.1 + gap)];
        let mesh = CollisionMesh::new(&bodies);
        let pairing = Pairing {
            self_collision: false,
            body_collision: true,
        };
        let dhat = 1e-3;
        for broad in [
            BroadPhaseKind::BruteForce,
            BroadPhaseKind::SweepAndPrune,
            BroadPhaseKind::Bvh,
        ] {
            let mut set = ContactSet::new(&mesh, dhat, pairing, broad);
            let mut x = vec![Vector3::zeros(); mesh.n_vertices()];
            mesh.gather(&bodies, &mut x);
            let half = 0.5 * (gap - 1e-9);
            let dx: Vec<Vector3<f64>> = (0..x.len())
                .map(|i| Vector3::new(if i < 8 { half } else { -half }, 0.0, 0.0))
                .collect();
            let obstacles = Obstacles {
                list: &[],
                time: 0.0,
                start: 0.0,
            };
            let t = set.max_step(&mesh, &x, &dx, &obstacles);
            let y: Vec<Vector3<f64>> = x.iter().zip(&dx).map(|(p, d)| p + t * d).collect();
            set.update(&mesh, &y, &obstacles).unwrap();
            assert!(
                t < 1.0 && set.min_distance >= 0.1 * gap - 1e-12,
                "{broad:?}: t = {t}, the faces end {} apart",
                set.min_distance
            );
        }
    }

    #[test]
    fn ccd_stops_a_point_before_a_capsule() {
        let rod = Obstacle {
            name: "rod".into(),
            shape: Shape::Capsule {
                radius: 0.01,
                half_length: 0.05,
            },
            path: RigidPath::Static(nalgebra::Isometry3::identity()),
            friction: 0.5,
        };
        let sdf = |q: &Vector3<f64>| rod.proximity(0.0, q).distance;
        for x in [0.0, 0.005, 0.0099] {
            let p = Vector3::new(x, 0.0105, 0.004);
            let d = Vector3::new(0.0, -0.05, 0.0);
            let t = point_sdf_accd(&p, &d, sdf, &AccdSettings::default());
            assert!(t < 1.0 && sdf(&(p + t * d)) > 0.0, "x = {x}: t = {t}");
        }
    }
}
