//! Obstacles against the faces and edges of the surfaces, not only their vertices.
//!
//! A vertex–obstacle barrier keeps every surface vertex outside an obstacle, but a curved or
//! cornered obstacle smaller than the surface's triangles can still press into a face between
//! its vertices: a capsule of 2 cm radius against the 2 cm triangles of the torus on the post
//! (`scenes/torus_post.toml`) put interior vertices 2.6 mm inside it. IPC (Li et al. 2020)
//! meets obstacles as meshes, with point–triangle and edge–edge pairs; Supple's obstacles are
//! analytic shapes, so each is given by its *core*: the points and segments whose distance,
//! less a radius `r`, is the distance to the obstacle's surface — a sphere's centre (`r` its
//! radius), a capsule's axis, a box's eight corners and twelve edges (`r = 0`; the box's
//! faces meet the surface's vertices through the vertex–obstacle pairs). A core point against
//! a surface triangle and a core segment against a surface edge are then pairs like the
//! others, on the distance `d = √q − r` with `q` the squared primitive distance of
//! `distance.rs` (the thickness offset of Li et al. 2021, C-IPC §4):
//! `s = d² = (√q − r)²`, `∇s = (1 − r/√q) ∇q`, `∇²s = (1 − r/√q) ∇²q + r/(2 q^{3/2}) ∇q ∇qᵀ`.
//! The core does not move within a step's Newton iterations (obstacles sit at their
//! end-of-step pose), so its rows of the stencil are dropped and the line search's CCD is
//! additive CCD with minimum separation `r` and the core's displacement zero.
//!
//! Not covered: friction on these pairs (the vertex–obstacle pairs carry the obstacle's
//! friction), and the edge–edge mollifier (a body edge parallel to a box edge or a capsule's
//! axis is measured by the distance routine's parallel case).

use super::{ContactSet, Obstacles, Pair, PairKind, Stencil};
use crate::contact::ipc::accd::{edge_edge_accd, point_triangle_accd, AccdSettings};
use crate::contact::ipc::barrier::{barrier_first_derivative, barrier_second_derivative};
use crate::contact::ipc::distance::{
    edge_edge_distance2, edge_edge_distance2_gradient, edge_edge_distance2_hessian,
    point_triangle_distance2, point_triangle_distance2_gradient, point_triangle_distance2_hessian,
    Mat12, Vec12,
};
use crate::contact::ipc::mesh::CollisionMesh;
use crate::contact::ipc::psd::project_psd12;
use crate::contact::{Obstacle, Shape};
use nalgebra::{Point3, Vector3};

type V3 = Vector3<f64>;

/// Box corner pairs that are edges (corners numbered by the bits x, y, z of their signs).
const BOX_EDGES: [[usize; 2]; 12] = [
    [0, 1],
    [2, 3],
    [4, 5],
    [6, 7],
    [0, 2],
    [1, 3],
    [4, 6],
    [5, 7],
    [0, 4],
    [1, 5],
    [2, 6],
    [3, 7],
];

/// An obstacle's core at one time (module notes), in world coordinates.
#[derive(Debug, Clone, Copy)]
pub(super) struct Core {
    points: [V3; 8],
    n_points: usize,
    segments: [[usize; 2]; 12],
    n_segments: usize,
    radius: f64,
}

impl Core {
    /// The core of `o` at time `t`; `None` for the half-space (a plane is met first at a
    /// vertex of any face).
    pub(super) fn of(o: &Obstacle, t: f64) -> Option<Self> {
        let pose = o.path.pose(t);
        let world = |p: V3| pose.transform_point(&Point3::from(p)).coords;
        let mut core = Self {
            points: [V3::zeros(); 8],
            n_points: 0,
            segments: [[0, 0]; 12],
            n_segments: 0,
            radius: 0.0,
        };
        match o.shape {
            Shape::HalfSpace => return None,
            Shape::Sphere { radius } => {
                core.points[0] = world(V3::zeros());
                core.n_points = 1;
                core.radius = radius;
            }
            Shape::Capsule {
                radius,
                half_length,
            } => {
                core.points[0] = world(V3::new(0.0, 0.0, -half_length));
                core.points[1] = world(V3::new(0.0, 0.0, half_length));
                core.n_points = 2;
                core.segments[0] = [0, 1];
                core.n_segments = usize::from(half_length > 0.0);
                core.radius = radius;
            }
            Shape::Box { half_extents: h } => {
                for (k, p) in core.points.iter_mut().enumerate() {
                    let sign = |bit: usize| if k >> bit & 1 == 1 { 1.0 } else { -1.0 };
                    *p = world(V3::new(sign(0) * h.x, sign(1) * h.y, sign(2) * h.z));
                }
                core.n_points = 8;
                core.segments = BOX_EDGES;
                core.n_segments = 12;
            }
        }
        Some(core)
    }

    fn point(&self, k: u32) -> V3 {
        self.points[k as usize]
    }

    fn segment(&self, k: u32) -> [V3; 2] {
        self.segments[k as usize].map(|i| self.points[i])
    }
}

/// `q` (a squared primitive distance) as the squared distance `(√q − r)²` to a core of
/// radius `r`, with the factors `s' = ds/dq` and `s'' = d²s/dq²`; `None` when `√q ≤ r`
/// (touching or inside).
fn offset(q: f64, r: f64) -> Option<(f64, f64, f64)> {
    if r == 0.0 {
        return (q > 0.0).then_some((q, 1.0, 0.0));
    }
    let root = q.sqrt();
    let d = root - r;
    (d > 0.0).then(|| (d * d, d / root, r / (2.0 * q * root)))
}

/// A core pair of obstacle `o`'s core primitive `k` against the body primitive in `v`
/// (placeholders in the core's slots), its distance still to be set.
fn core_pair(kind: PairKind, v: [u32; 4], o: usize, k: u32) -> Pair {
    Pair {
        kind,
        v,
        obstacle: o as u32,
        core: k,
        d2: 0.0,
        eps_x: 0.0,
    }
}

/// Adds `pair` at squared primitive distance `q` to a core of radius `r` to `pairs` when it
/// is within `d̂` (`dhat2 = d̂²`), keeping the smallest squared distance in `min_d2`; `Err`
/// with the pair when it touches or crosses.
fn admit(
    pairs: &mut Vec<Pair>,
    min_d2: &mut f64,
    dhat2: f64,
    r: f64,
    q: f64,
    pair: Pair,
) -> Result<(), Pair> {
    let Some((d2, _, _)) = offset(q, r) else {
        return Err(pair);
    };
    *min_d2 = min_d2.min(d2);
    if d2 < dhat2 {
        pairs.push(Pair { d2, ..pair });
    }
    Ok(())
}

/// Squared box distance from `p` to the box `[lo, hi]`.
fn box_gap2(lo: &V3, hi: &V3, p: &V3) -> f64 {
    (0..3)
        .map(|k| (lo[k] - p[k]).max(p[k] - hi[k]).max(0.0).powi(2))
        .sum()
}

impl ContactSet {
    /// Adds the pairs of every obstacle core within `d̂` of a surface triangle (core points)
    /// or edge (core segments) at `x`; `Err` with the first touching or crossing pair.
    /// Primitives whose vertices are all held are skipped.
    pub(super) fn add_core_pairs(
        &mut self,
        mesh: &CollisionMesh,
        x: &[V3],
        obstacles: &Obstacles,
        min_d2: &mut f64,
    ) -> Result<(), Pair> {
        let dhat2 = self.dhat * self.dhat;
        for (o, obstacle) in obstacles.list.iter().enumerate() {
            let Some(core) = Core::of(obstacle, obstacles.time) else {
                continue;
            };
            let reach = core.radius + self.dhat;
            let (lo, hi) = obstacle
                .aabb(obstacles.time)
                .expect("every shape with a core has a box");
            let near = |v: &[u32]| -> bool {
                let (mut a, mut b) = (V3::repeat(f64::INFINITY), V3::repeat(f64::NEG_INFINITY));
                for &i in v {
                    a = a.inf(&x[i as usize]);
                    b = b.sup(&x[i as usize]);
                }
                (0..3).all(|k| a[k] <= hi[k] + self.dhat && b[k] >= lo[k] - self.dhat)
            };
            for t in &mesh.triangles {
                if t.iter().all(|&v| self.held[v as usize]) || !near(t) {
                    continue;
                }
                let [t0, t1, t2] = t.map(|v| x[v as usize]);
                let (tlo, thi) = (t0.inf(&t1).inf(&t2), t0.sup(&t1).sup(&t2));
                for k in 0..core.n_points as u32 {
                    let c = core.point(k);
                    if box_gap2(&tlo, &thi, &c) >= reach * reach {
                        continue;
                    }
                    let q = point_triangle_distance2(&c, &t0, &t1, &t2);
                    let v = [t[0], t[0], t[1], t[2]];
                    let pair = core_pair(PairKind::CoreTriangle, v, o, k);
                    admit(&mut self.pairs, min_d2, dhat2, core.radius, q, pair)?;
                }
            }
            for e in mesh.edges.iter().filter(|_| core.n_segments > 0) {
                if e.iter().all(|&v| self.held[v as usize]) || !near(e) {
                    continue;
                }
                let [e0, e1] = e.map(|v| x[v as usize]);
                for k in 0..core.n_segments as u32 {
                    let [c0, c1] = core.segment(k);
                    let q = edge_edge_distance2(&c0, &c1, &e0, &e1);
                    if q >= reach * reach {
                        continue;
                    }
                    let pair = core_pair(PairKind::CoreEdge, [e[0], e[0], e[0], e[1]], o, k);
                    admit(&mut self.pairs, min_d2, dhat2, core.radius, q, pair)?;
                }
            }
        }
        Ok(())
    }

    /// The largest fraction `≤ t` of the step `dx` from `x` that keeps every surface
    /// triangle and edge at least the core radius from every obstacle core (additive CCD
    /// with minimum separation `r`; the core does not move).
    pub(super) fn core_max_step(
        &self,
        mesh: &CollisionMesh,
        x: &[V3],
        dx: &[V3],
        obstacles: &Obstacles,
        mut t: f64,
    ) -> f64 {
        let zero = V3::zeros();
        for obstacle in obstacles.list {
            let Some(core) = Core::of(obstacle, obstacles.time) else {
                continue;
            };
            let (lo, hi) = obstacle
                .aabb(obstacles.time)
                .expect("every shape with a core has a box");
            let settings = |t_max: f64| AccdSettings {
                t_max,
                min_separation: core.radius,
                ..AccdSettings::default()
            };
            let swept_near = |v: &[u32]| -> bool {
                let (mut a, mut b) = (V3::repeat(f64::INFINITY), V3::repeat(f64::NEG_INFINITY));
                for &i in v {
                    let (p, q) = (x[i as usize], x[i as usize] + dx[i as usize]);
                    a = a.inf(&p).inf(&q);
                    b = b.sup(&p).sup(&q);
                }
                (0..3).all(|k| a[k] <= hi[k] + self.dhat && b[k] >= lo[k] - self.dhat)
            };
            let moves = |v: &[u32]| v.iter().any(|&i| dx[i as usize] != zero);
            for tri in &mesh.triangles {
                if !moves(tri) || !swept_near(tri) {
                    continue;
                }
                let [t0, t1, t2] = tri.map(|v| x[v as usize]);
                let [d0, d1, d2] = tri.map(|v| dx[v as usize]);
                for k in 0..core.n_points as u32 {
                    let c = core.point(k);
                    let tk =
                        point_triangle_accd(&c, &t0, &t1, &t2, &zero, &d0, &d1, &d2, &settings(t));
                    t = t.min(tk);
                }
            }
            for e in mesh.edges.iter().filter(|_| core.n_segments > 0) {
                if !moves(e) || !swept_near(e) {
                    continue;
                }
                let [e0, e1] = e.map(|v| x[v as usize]);
                let [d0, d1] = e.map(|v| dx[v as usize]);
                for k in 0..core.n_segments as u32 {
                    let [c0, c1] = core.segment(k);
                    let tk =
                        edge_edge_accd(&c0, &c1, &e0, &e1, &zero, &zero, &d0, &d1, &settings(t));
                    t = t.min(tk);
                }
            }
        }
        t
    }

    /// A core pair's barrier gradient and (projected) Hessian over its body vertices (the
    /// core's slots zero: slot 0 of a core point–triangle pair, slots 0 and 1 of a core
    /// segment–edge pair).
    pub(super) fn core_stencil(
        &self,
        pair: &Pair,
        x: &[V3],
        obstacles: &Obstacles,
        hessians: bool,
    ) -> Stencil {
        let core = Core::of(&obstacles.list[pair.obstacle as usize], obstacles.time)
            .expect("a core pair's obstacle has a core");
        let (p, n_core) = match pair.kind {
            PairKind::CoreTriangle => {
                let c = core.point(pair.core);
                (
                    [
                        c,
                        x[pair.v[1] as usize],
                        x[pair.v[2] as usize],
                        x[pair.v[3] as usize],
                    ],
                    1,
                )
            }
            _ => {
                let [c0, c1] = core.segment(pair.core);
                ([c0, c1, x[pair.v[2] as usize], x[pair.v[3] as usize]], 2)
            }
        };
        let (q, g, h): (f64, Vec12, Mat12) = match pair.kind {
            PairKind::CoreTriangle => (
                point_triangle_distance2(&p[0], &p[1], &p[2], &p[3]),
                point_triangle_distance2_gradient(&p[0], &p[1], &p[2], &p[3]),
                if hessians {
                    point_triangle_distance2_hessian(&p[0], &p[1], &p[2], &p[3])
                } else {
                    Mat12::zeros()
                },
            ),
            _ => (
                edge_edge_distance2(&p[0], &p[1], &p[2], &p[3]),
                edge_edge_distance2_gradient(&p[0], &p[1], &p[2], &p[3]),
                if hessians {
                    edge_edge_distance2_hessian(&p[0], &p[1], &p[2], &p[3])
                } else {
                    Mat12::zeros()
                },
            ),
        };
        let dhat2 = self.dhat * self.dhat;
        let (s, ds, d2s) = offset(q, core.radius).unwrap_or((pair.d2, 1.0, 0.0));
        let (db, d2b) = (
            barrier_first_derivative(s, dhat2),
            barrier_second_derivative(s, dhat2),
        );
        let gs = ds * g;
        let mut grad = db * gs;
        let mut hess = if hessians {
            d2b * gs * gs.transpose() + db * (ds * h + d2s * g * g.transpose())
        } else {
            Mat12::zeros()
        };
        for r in 0..3 * n_core {
            grad[r] = 0.0;
            hess.row_mut(r).fill(0.0);
            hess.column_mut(r).fill(0.0);
        }
        Stencil {
            v: pair.v,
            n: 4,
            grad,
            hess: if hessians && self.hessian != super::BarrierHessian::Exact {
                project_psd12(&hess)
            } else {
                hess
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::{Body, BodyDesc};
    use crate::contact::ipc::potential::{BarrierHessian, Pairing};
    use crate::contact::{BroadPhaseKind, RigidPath};
    use crate::fem::material::ModelKind;
    use crate::mesh::TetMesh;

    /// One tet whose bottom face (vertices 0–2) spans 2 m at height `y`, over a ball of
    /// radius 0.1 m at the origin: the face's vertices are a metre from the ball.
    fn face_over_ball(y: f64) -> (Vec<Body>, Obstacle) {
        let mesh = TetMesh::new(
            vec![
                V3::new(-1.0, y, -1.0),
                V3::new(1.0, y, -1.0),
                V3::new(0.0, y, 1.5),
                V3::new(0.0, y + 1.0, 0.0),
            ],
            vec![[0, 2, 1, 3]],
        )
        .unwrap();
        let desc = BodyDesc::new("tet", mesh, ModelKind::Linear, 1e5, 0.3, 1000.0);
        let ball = Obstacle {
            name: "ball".into(),
            shape: Shape::Sphere { radius: 0.1 },
            path: RigidPath::Static(nalgebra::Isometry3::identity()),
            friction: 0.0,
        };
        (vec![Body::new(desc).unwrap()], ball)
    }

    fn set_for(bodies: &[Body], dhat: f64) -> (CollisionMesh, ContactSet) {
        let mesh = CollisionMesh::new(bodies);
        let pairing = Pairing {
            self_collision: false,
            body_collision: true,
        };
        let set = ContactSet::new(&mesh, dhat, pairing, BroadPhaseKind::BruteForce);
        (mesh, set)
    }

    #[test]
    fn a_face_over_a_ball_is_a_pair_though_its_vertices_are_far() {
        let (bodies, ball) = face_over_ball(0.105);
        let (mesh, mut set) = set_for(&bodies, 0.01);
        let list = [ball];
        let obstacles = Obstacles {
            list: &list,
            time: 0.0,
            start: 0.0,
        };
        let x = bodies[0].x.clone();
        set.update(&mesh, &x, &obstacles).unwrap();
        let core: Vec<&Pair> = (set.pairs.iter())
            .filter(|p| p.kind == PairKind::CoreTriangle)
            .collect();
        assert_eq!(core.len(), 1, "{:?}", set.pairs);
        assert!((core[0].d2.sqrt() - 0.005).abs() < 1e-12, "{}", core[0].d2);
        assert!(set.pairs.iter().all(|p| p.kind != PairKind::PointObstacle));
        // The whole tet moved 5 cm down: the face would pass through the ball's top; CCD
        // stops it short, with the face still outside the ball.
        let dx = vec![V3::new(0.0, -0.05, 0.0); 4];
        let t = set.max_step(&mesh, &x, &dx, &obstacles);
        assert!(t > 0.0 && t < 0.1, "t = {t}");
        let y: Vec<V3> = x.iter().zip(&dx).map(|(p, d)| p + t * d).collect();
        let q = point_triangle_distance2(&V3::zeros(), &y[0], &y[1], &y[2]);
        assert!(q.sqrt() > 0.1, "the face ends {} from the centre", q.sqrt());
        // Touching the ball is an infeasible state, reported as the core pair.
        let (bodies, ball) = face_over_ball(0.1);
        let (mesh, mut set) = set_for(&bodies, 0.01);
        let list = [ball];
        let obstacles = Obstacles {
            list: &list,
            ..obstacles
        };
        let err = set.update(&mesh, &bodies[0].x, &obstacles).unwrap_err();
        assert_eq!(err.kind, PairKind::CoreTriangle);
    }

    /// The stencil is the gradient and Hessian of `b((√q − r)²)` in the body's vertices,
    /// by central differences, for a ball (a point core with radius) and a box (corners
    /// and edges, radius 0).
    #[test]
    fn core_stencils_match_finite_differences_of_the_barrier() {
        let (bodies, ball) = face_over_ball(0.104);
        let boxed = Obstacle {
            name: "box".into(),
            shape: Shape::Box {
                half_extents: V3::new(0.3, 0.1, 0.2),
            },
            path: RigidPath::Static(nalgebra::Isometry3::rotation(V3::new(0.0, 0.3, 0.0))),
            friction: 0.0,
        };
        for obstacle in [ball, boxed] {
            let (mesh, mut set) = set_for(&bodies, 0.01);
            set.hessian = BarrierHessian::Exact;
            let list = [obstacle];
            let obstacles = Obstacles {
                list: &list,
                time: 0.0,
                start: 0.0,
            };
            let mut x = bodies[0].x.clone();
            // Tilt the face a little so no distance is at a symmetric point.
            x[0].y += 0.002;
            x[1].y -= 0.001;
            set.update(&mesh, &x, &obstacles).unwrap();
            let energy = |set: &mut ContactSet, x: &[V3]| {
                set.update(&mesh, x, &obstacles).unwrap();
                set.pairs
                    .iter()
                    .filter(|p| matches!(p.kind, PairKind::CoreTriangle | PairKind::CoreEdge))
                    .map(|p| crate::contact::ipc::barrier::barrier(p.d2, 1e-4))
                    .sum::<f64>()
            };
            let grad = |set: &mut ContactSet, x: &[V3]| {
                set.update(&mesh, x, &obstacles).unwrap();
                let mut g = vec![V3::zeros(); 4];
                for p in set.pairs.clone() {
                    if matches!(p.kind, PairKind::CoreTriangle | PairKind::CoreEdge) {
                        let s = set.core_stencil(&p, x, &obstacles, true);
                        for a in 0..4 {
                            g[s.v[a] as usize] += s.grad.fixed_rows::<3>(3 * a);
                        }
                    }
                }
                g
            };
            assert!(
                energy(&mut set, &x) > 0.0,
                "no core pair near {:?}",
                list[0].shape
            );
            let g = grad(&mut set, &x);
            let eps = 1e-7;
            for v in 0..3 {
                for k in 0..3 {
                    let (mut xp, mut xm) = (x.clone(), x.clone());
                    xp[v][k] += eps;
                    xm[v][k] -= eps;
                    let fd = (energy(&mut set, &xp) - energy(&mut set, &xm)) / (2.0 * eps);
                    let scale = g[v].norm().max(1e-8);
                    assert!(
                        (fd - g[v][k]).abs() <= 1e-5 * scale,
                        "{:?}: ∂B/∂x[{v}][{k}] = {} by differences, {fd} by the stencil",
                        list[0].shape,
                        g[v][k]
                    );
                    let (gp, gm) = (grad(&mut set, &xp), grad(&mut set, &xm));
                    set.update(&mesh, &x, &obstacles).unwrap();
                    let mut h = [V3::zeros(); 4];
                    for p in set.pairs.clone() {
                        if matches!(p.kind, PairKind::CoreTriangle | PairKind::CoreEdge) {
                            let s = set.core_stencil(&p, &x, &obstacles, true);
                            for a in 0..4 {
                                let col = (0..4)
                                    .filter(|&b| s.v[b] as usize == v)
                                    .map(|b| {
                                        s.hess.fixed_view::<3, 1>(3 * a, 3 * b + k).into_owned()
                                    })
                                    .fold(V3::zeros(), |acc, c| acc + c);
                                h[s.v[a] as usize] += col;
                            }
                        }
                    }
                    for w in 0..4 {
                        let fd = (gp[w] - gm[w]) / (2.0 * eps);
                        let scale = h[w].norm().max(fd.norm()).max(1e-3);
                        assert!(
                            (fd - h[w]).norm() <= 1e-4 * scale,
                            "{:?}: Hessian column x[{v}][{k}], row vertex {w}: {} against {fd}",
                            list[0].shape,
                            h[w]
                        );
                    }
                }
            }
        }
    }
}
