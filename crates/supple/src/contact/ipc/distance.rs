//! Squared distances between the primitive pairs of Incremental Potential Contact and their
//! closed-form gradients and Hessians (Li et al. 2020, "Incremental Potential Contact",
//! §4: the barrier is evaluated on unsigned distances, and IPC works with `d²` throughout
//! so that every pair distance is a rational function of the vertex positions).
//!
//! Vertex order of every gradient (`VecN`) and Hessian (`MatN`) is the argument order,
//! three components per vertex.
//!
//! The derivatives were derived by hand, not generated. Every "plane" or "line" distance
//! has the form `d = N(x) / D(x)` with polynomial `N` and `D`:
//!
//! * point–line: `N = ‖(e0 − p) × (e1 − p)‖²`, `D = ‖e1 − e0‖²`;
//! * point–plane: `N = ((p − t0)·n)²`, `D = ‖n‖²`, `n = (t1 − t0) × (t2 − t0)`;
//! * line–line: `N = ((eb0 − ea0)·n)²`, `D = ‖n‖²`, `n = (ea1 − ea0) × (eb1 − eb0)`.
//!
//! `N` and `D` and their derivatives are formed in reduced variables (differences of
//! positions), the quotient rule `∇d = (∇N − d ∇D)/D`,
//! `∇²d = (∇²N − d ∇²D − ∇d ∇Dᵀ − ∇D ∇dᵀ)/D` is applied there, and the result is pulled
//! back to vertex coordinates with the constant difference matrix `L` (`∇ₓ = Lᵀ ∇`,
//! `∇²ₓ = Lᵀ ∇² L`).
//!
//! The segment/triangle distances (`point_edge_*`, `point_triangle_*`, `edge_edge_*`) pick
//! the closest feature pair (IPC's "distance types", Li et al. 2020 §4 and the supplement)
//! and evaluate the corresponding point–point, point–line, point–plane or line–line
//! distance; gradients and Hessians are zero for the vertices the case does not involve.

use nalgebra::{Matrix3, SMatrix, SVector, Vector3};

/// A point / vector in 3D.
pub type V3 = Vector3<f64>;
/// Gradient of a two-vertex function.
pub type Vec6 = SVector<f64, 6>;
/// Gradient of a three-vertex function.
pub type Vec9 = SVector<f64, 9>;
/// Gradient of a four-vertex function.
pub type Vec12 = SVector<f64, 12>;
/// Hessian of a two-vertex function.
pub type Mat6 = SMatrix<f64, 6, 6>;
/// Hessian of a three-vertex function.
pub type Mat9 = SMatrix<f64, 9, 9>;
/// Hessian of a four-vertex function.
pub type Mat12 = SMatrix<f64, 12, 12>;

/// Two directions count as parallel (and a triangle as degenerate) when
/// `‖u × v‖² ≤ PARALLEL_SIN2 · ‖u‖² ‖v‖²`, i.e. `sin²θ ≤ 1e-20`: the plane/line–line
/// formulas lose all accuracy below this.
pub(super) const PARALLEL_SIN2: f64 = 1e-20;

// ---------------------------------------------------------------------------------------
// Internal machinery: value + gradient + (optional) Hessian in reduced variables.

/// Value, gradient and Hessian (zero unless requested) of a scalar function of `N` variables.
struct Jet<const N: usize> {
    v: f64,
    g: SVector<f64, N>,
    h: SMatrix<f64, N, N>,
}

/// The vectors stacked into one.
fn stack<const N: usize>(parts: &[V3]) -> SVector<f64, N> {
    SVector::from_iterator(parts.iter().flat_map(|p| [p.x, p.y, p.z]))
}

/// A 3 × N matrix of 3 × 3 blocks side by side.
fn row_of_blocks<const N: usize>(blocks: &[Matrix3<f64>]) -> SMatrix<f64, 3, N> {
    let mut m = SMatrix::<f64, 3, N>::zeros();
    for (k, b) in blocks.iter().enumerate() {
        m.fixed_view_mut::<3, 3>(0, 3 * k).copy_from(b);
    }
    m
}

/// `m` plus the 3 × 3 blocks `(i, j, B)` at block row `i`, block column `j`.
fn add_blocks<const N: usize>(
    mut m: SMatrix<f64, N, N>,
    blocks: &[(usize, usize, Matrix3<f64>)],
) -> SMatrix<f64, N, N> {
    for (i, j, b) in blocks {
        let mut view = m.fixed_view_mut::<3, 3>(3 * i, 3 * j);
        view += b;
    }
    m
}

/// `d = N / D` by the quotient rule (see the module doc).
fn quotient<const N: usize>(num: &Jet<N>, den: &Jet<N>, hess: bool) -> Jet<N> {
    let v = num.v / den.v;
    let g = (num.g - den.g * v) / den.v;
    let h = if hess {
        (num.h - den.h * v - g * den.g.transpose() - den.g * g.transpose()) / den.v
    } else {
        SMatrix::zeros()
    };
    Jet { v, g, h }
}

/// Pulls a jet in reduced variables `r = L x` back to vertex coordinates `x`; block
/// `(k, j)` of `L` is `coef[k][j] · I₃`.
fn pull_back<const M: usize, const N: usize>(jet: &Jet<M>, coef: &[&[f64]], hess: bool) -> Jet<N> {
    let mut l = SMatrix::<f64, M, N>::zeros();
    for (k, row) in coef.iter().enumerate() {
        for (j, &c) in row.iter().enumerate() {
            for r in 0..3 {
                l[(3 * k + r, 3 * j + r)] = c;
            }
        }
    }
    let lt = l.transpose();
    let h = if hess {
        lt * jet.h * l
    } else {
        SMatrix::zeros()
    };
    Jet {
        v: jet.v,
        g: lt * jet.g,
        h,
    }
}

/// Point–line in reduced variables `(a, b) = (e0 − p, e1 − p)`: `‖a × b‖² / ‖b − a‖²`.
fn point_line_reduced(a: &V3, b: &V3, hess: bool) -> Jet<6> {
    let (c, e) = (a.cross(b), b - a);
    // N = ‖c‖², c = a × b, ∂c/∂a = −[b]×, ∂c/∂b = [a]×: ∇N = 2 [b × c, c × a].
    let g = stack(&[b.cross(&c) * 2.0, c.cross(a) * 2.0]);
    let mut num = Jet {
        v: c.norm_squared(),
        g,
        h: SMatrix::zeros(),
    };
    // D = ‖b − a‖².
    let g = stack(&[e * -2.0, e * 2.0]);
    let mut den = Jet {
        v: e.norm_squared(),
        g,
        h: SMatrix::zeros(),
    };
    if hess {
        // ∇²N = 2 JᵀJ + 2 Σₖ cₖ ∇²cₖ, J = [−[b]×, [a]×]; Σₖ cₖ ∇²cₖ = [[0, −[c]×], [[c]×, 0]].
        let j = row_of_blocks::<6>(&[-b.cross_matrix(), a.cross_matrix()]);
        let cx = c.cross_matrix() * 2.0;
        num.h = add_blocks(j.transpose() * j * 2.0, &[(0, 1, -cx), (1, 0, cx)]);
        // ∇²D = 2 LᵀL, L = [−I, I].
        let l = row_of_blocks::<6>(&[-Matrix3::identity(), Matrix3::identity()]);
        den.h = l.transpose() * l * 2.0;
    }
    quotient(&num, &den, hess)
}

/// `(a·(b×c))² / ‖b×c‖²` in reduced variables `(a, b, c)`: the squared distance of the
/// point `a` (relative to a point of the plane) to the plane spanned by `b` and `c`.
fn triple_reduced(a: &V3, b: &V3, c: &V3, hess: bool) -> Jet<9> {
    let n = b.cross(c);
    let s = a.dot(&n);
    // ∇s = [b×c, c×a, a×b]; N = s², ∇N = 2 s ∇s.
    let gs = stack::<9>(&[n, c.cross(a), a.cross(b)]);
    let mut num = Jet {
        v: s * s,
        g: gs * (2.0 * s),
        h: SMatrix::zeros(),
    };
    // D = ‖n‖², ∂n/∂b = −[c]×, ∂n/∂c = [b]×: ∇_b D = 2 c×n, ∇_c D = 2 n×b.
    let g = stack(&[V3::zeros(), c.cross(&n) * 2.0, n.cross(b) * 2.0]);
    let mut den = Jet {
        v: n.norm_squared(),
        g,
        h: SMatrix::zeros(),
    };
    if hess {
        let (ax, bx, cx) = (a.cross_matrix(), b.cross_matrix(), c.cross_matrix());
        // ∇²(s²) = 2 ∇s ∇sᵀ + 2 s ∇²s; ∇²s: ab = −[c]×, ac = [b]×, bc = −[a]× (+ transposes).
        let (cs, bs, as_) = (cx * (2.0 * s), bx * (2.0 * s), ax * (2.0 * s));
        num.h = add_blocks(
            gs * gs.transpose() * 2.0,
            &[
                (0, 1, -cs),
                (1, 0, cs),
                (0, 2, bs),
                (2, 0, -bs),
                (1, 2, -as_),
                (2, 1, as_),
            ],
        );
        // ∇²D = 2 JᵀJ + 2 Σₖ nₖ ∇²nₖ, J = [0, −[c]×, [b]×]; Σₖ nₖ ∇²nₖ: bc = −[n]×, cb = [n]×.
        let j = row_of_blocks::<9>(&[Matrix3::zeros(), -cx, bx]);
        let nx = n.cross_matrix() * 2.0;
        den.h = add_blocks(j.transpose() * j * 2.0, &[(1, 2, -nx), (2, 1, nx)]);
    }
    quotient(&num, &den, hess)
}

/// The primitive distance a closest-feature case evaluates, on the stencil's vertices
/// `x` (argument order).
#[derive(Clone, Copy)]
enum Primitive {
    /// Point–point between `x[i]`, `x[j]`.
    Points([usize; 2]),
    /// Point `x[i]` to the line through `x[j]`, `x[k]`.
    Line([usize; 3]),
    /// Point `x[0]` to the plane of `x[1..4]`.
    Plane,
    /// The lines through `x[0..2]` and `x[2..4]`.
    Lines,
}

fn primitive_value(x: &[&V3], prim: Primitive) -> f64 {
    match prim {
        Primitive::Points([i, j]) => point_point_distance2(x[i], x[j]),
        Primitive::Line([i, j, k]) => point_line_distance2(x[i], x[j], x[k]),
        Primitive::Plane => point_plane_distance2(x[0], x[1], x[2], x[3]),
        Primitive::Lines => line_line_distance2(x[0], x[1], x[2], x[3]),
    }
}

/// Gradient and Hessian (zero unless `hess`) of a primitive, zero-padded to the `N / 3`
/// vertices of the stencil.
fn primitive_jet<const N: usize>(x: &[&V3], prim: Primitive, hess: bool) -> Jet<N> {
    fn embed<const M: usize, const N: usize>(jet: Jet<M>, map: &[usize]) -> Jet<N> {
        let (mut g, mut h) = (SVector::<f64, N>::zeros(), SMatrix::<f64, N, N>::zeros());
        for (k, &vk) in map.iter().enumerate() {
            g.fixed_rows_mut::<3>(3 * vk)
                .copy_from(&jet.g.fixed_rows::<3>(3 * k));
            for (l, &vl) in map.iter().enumerate() {
                h.fixed_view_mut::<3, 3>(3 * vk, 3 * vl)
                    .copy_from(&jet.h.fixed_view::<3, 3>(3 * k, 3 * l));
            }
        }
        Jet { v: jet.v, g, h }
    }
    match prim {
        Primitive::Points([i, j]) => {
            let (p, q) = (x[i], x[j]);
            let jet = Jet {
                v: point_point_distance2(p, q),
                g: point_point_distance2_gradient(p, q),
                h: point_point_distance2_hessian(p, q),
            };
            embed(jet, &[i, j])
        }
        Primitive::Line([i, j, k]) => embed(point_line_jet(x[i], x[j], x[k], hess), &[i, j, k]),
        Primitive::Plane => embed(point_plane_jet(x[0], x[1], x[2], x[3], hess), &[0, 1, 2, 3]),
        Primitive::Lines => embed(line_line_jet(x[0], x[1], x[2], x[3], hess), &[0, 1, 2, 3]),
    }
}

// ---------------------------------------------------------------------------------------
// Point–point.

/// `‖p − q‖²`.
pub fn point_point_distance2(p: &V3, q: &V3) -> f64 {
    (p - q).norm_squared()
}

/// Gradient of [`point_point_distance2`]: `[2(p − q), −2(p − q)]`.
pub fn point_point_distance2_gradient(p: &V3, q: &V3) -> Vec6 {
    let d = (p - q) * 2.0;
    stack(&[d, -d])
}

/// Hessian of [`point_point_distance2`]: `2 [[I, −I], [−I, I]]` (constant).
pub fn point_point_distance2_hessian(_p: &V3, _q: &V3) -> Mat6 {
    let l = row_of_blocks::<6>(&[Matrix3::identity(), -Matrix3::identity()]);
    l.transpose() * l * 2.0
}

// ---------------------------------------------------------------------------------------
// Point–line (infinite line through e0, e1).

fn point_line_jet(p: &V3, e0: &V3, e1: &V3, hess: bool) -> Jet<9> {
    if (e1 - e0).norm_squared() == 0.0 {
        // Degenerate line: the distance to the point e0 = e1.
        return primitive_jet(&[p, e0, e1], Primitive::Points([0, 1]), hess);
    }
    let reduced = point_line_reduced(&(e0 - p), &(e1 - p), hess);
    pull_back(&reduced, &[&[-1.0, 1.0, 0.0], &[-1.0, 0.0, 1.0]], hess)
}

/// Squared distance from `p` to the infinite line through `e0`, `e1`:
/// `‖(e0 − p) × (e1 − p)‖² / ‖e1 − e0‖²`. For `e0 = e1` it is `‖p − e0‖²` (the line is
/// undefined; gradient and Hessian then are those of the point–point distance to `e0`).
pub fn point_line_distance2(p: &V3, e0: &V3, e1: &V3) -> f64 {
    let den = (e1 - e0).norm_squared();
    if den == 0.0 {
        return point_point_distance2(p, e0);
    }
    (e0 - p).cross(&(e1 - p)).norm_squared() / den
}

/// Gradient of [`point_line_distance2`] (quotient rule, module doc).
pub fn point_line_distance2_gradient(p: &V3, e0: &V3, e1: &V3) -> Vec9 {
    point_line_jet(p, e0, e1, false).g
}

/// Hessian of [`point_line_distance2`] (quotient rule, module doc).
pub fn point_line_distance2_hessian(p: &V3, e0: &V3, e1: &V3) -> Mat9 {
    point_line_jet(p, e0, e1, true).h
}

// ---------------------------------------------------------------------------------------
// Point–plane.

fn point_plane_jet(p: &V3, t0: &V3, t1: &V3, t2: &V3, hess: bool) -> Jet<12> {
    let (b, c) = (t1 - t0, t2 - t0);
    if b.cross(&c).norm_squared() == 0.0 {
        // Degenerate triangle: the distance to the line of its longest edge.
        let l = [b.norm_squared(), (t2 - t1).norm_squared(), c.norm_squared()];
        let k = (1..3).fold(0, |k, i| if l[i] > l[k] { i } else { k });
        let line = Primitive::Line([0, 1 + k, 1 + (k + 1) % 3]);
        return primitive_jet(&[p, t0, t1, t2], line, hess);
    }
    let reduced = triple_reduced(&(p - t0), &b, &c, hess);
    let coef: [&[f64]; 3] = [
        &[1.0, -1.0, 0.0, 0.0],
        &[0.0, -1.0, 1.0, 0.0],
        &[0.0, -1.0, 0.0, 1.0],
    ];
    pull_back(&reduced, &coef, hess)
}

/// Squared distance from `p` to the plane of the triangle `t0 t1 t2`:
/// `((p − t0)·n)² / ‖n‖²`, `n = (t1 − t0) × (t2 − t0)`. For an exactly degenerate triangle
/// (`n = 0`) it is the distance to the line of its longest edge.
pub fn point_plane_distance2(p: &V3, t0: &V3, t1: &V3, t2: &V3) -> f64 {
    let n = (t1 - t0).cross(&(t2 - t0));
    let den = n.norm_squared();
    if den == 0.0 {
        return point_plane_jet(p, t0, t1, t2, false).v;
    }
    let s = (p - t0).dot(&n);
    s * s / den
}

/// Gradient of [`point_plane_distance2`] (quotient rule, module doc).
pub fn point_plane_distance2_gradient(p: &V3, t0: &V3, t1: &V3, t2: &V3) -> Vec12 {
    point_plane_jet(p, t0, t1, t2, false).g
}

/// Hessian of [`point_plane_distance2`] (quotient rule, module doc).
pub fn point_plane_distance2_hessian(p: &V3, t0: &V3, t1: &V3, t2: &V3) -> Mat12 {
    point_plane_jet(p, t0, t1, t2, true).h
}

// ---------------------------------------------------------------------------------------
// Line–line.

fn line_line_jet(ea0: &V3, ea1: &V3, eb0: &V3, eb1: &V3, hess: bool) -> Jet<12> {
    let (u, v) = (ea1 - ea0, eb1 - eb0);
    if u.cross(&v).norm_squared() == 0.0 {
        // Parallel (or degenerate) lines: the distance from a point of one line to the other.
        let line = Primitive::Line(if v.norm_squared() > 0.0 {
            [0, 2, 3]
        } else {
            [2, 0, 1]
        });
        return primitive_jet(&[ea0, ea1, eb0, eb1], line, hess);
    }
    let reduced = triple_reduced(&(eb0 - ea0), &u, &v, hess);
    let coef: [&[f64]; 3] = [
        &[-1.0, 0.0, 1.0, 0.0],
        &[-1.0, 1.0, 0.0, 0.0],
        &[0.0, 0.0, -1.0, 1.0],
    ];
    pull_back(&reduced, &coef, hess)
}

/// Squared distance between the infinite lines through `ea0, ea1` and `eb0, eb1`:
/// `((eb0 − ea0)·n)² / ‖n‖²`, `n = (ea1 − ea0) × (eb1 − eb0)`. For exactly parallel lines
/// (`n = 0`) it is the distance from `ea0` to line b (or from `eb0` to line a when edge b
/// has zero length).
pub fn line_line_distance2(ea0: &V3, ea1: &V3, eb0: &V3, eb1: &V3) -> f64 {
    let n = (ea1 - ea0).cross(&(eb1 - eb0));
    let den = n.norm_squared();
    if den == 0.0 {
        return line_line_jet(ea0, ea1, eb0, eb1, false).v;
    }
    let s = (eb0 - ea0).dot(&n);
    s * s / den
}

/// Gradient of [`line_line_distance2`] (quotient rule, module doc).
pub fn line_line_distance2_gradient(ea0: &V3, ea1: &V3, eb0: &V3, eb1: &V3) -> Vec12 {
    line_line_jet(ea0, ea1, eb0, eb1, false).g
}

/// Hessian of [`line_line_distance2`] (quotient rule, module doc).
pub fn line_line_distance2_hessian(ea0: &V3, ea1: &V3, eb0: &V3, eb1: &V3) -> Mat12 {
    line_line_jet(ea0, ea1, eb0, eb1, true).h
}

// ---------------------------------------------------------------------------------------
// Point–edge (segment).

/// Which feature of the segment `e0 e1` is closest to a point.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointEdgeCase {
    /// The endpoint `e0` (0) or `e1` (1).
    Vertex(u8),
    /// The interior of the segment.
    Edge,
}

/// Closest feature of the segment `e0 e1` to `p`: the projection parameter
/// `t = (p − e0)·(e1 − e0) / ‖e1 − e0‖²` clamped to `[0, 1]`. A zero-length segment gives
/// `Vertex(0)`.
pub fn point_edge_case(p: &V3, e0: &V3, e1: &V3) -> PointEdgeCase {
    let e = e1 - e0;
    let len2 = e.norm_squared();
    let t = (p - e0).dot(&e);
    if len2 == 0.0 || t <= 0.0 {
        PointEdgeCase::Vertex(0)
    } else if t >= len2 {
        PointEdgeCase::Vertex(1)
    } else {
        PointEdgeCase::Edge
    }
}

fn point_edge_primitive(case: PointEdgeCase) -> Primitive {
    match case {
        PointEdgeCase::Vertex(k) => Primitive::Points([0, 1 + k as usize]),
        PointEdgeCase::Edge => Primitive::Line([0, 1, 2]),
    }
}

/// Squared distance from `p` to the segment `e0 e1`.
pub fn point_edge_distance2(p: &V3, e0: &V3, e1: &V3) -> f64 {
    primitive_value(
        &[p, e0, e1],
        point_edge_primitive(point_edge_case(p, e0, e1)),
    )
}

/// Gradient of [`point_edge_distance2`] (of the chosen case; zero for unused vertices).
pub fn point_edge_distance2_gradient(p: &V3, e0: &V3, e1: &V3) -> Vec9 {
    let prim = point_edge_primitive(point_edge_case(p, e0, e1));
    primitive_jet(&[p, e0, e1], prim, false).g
}

/// Hessian of [`point_edge_distance2`] (of the chosen case; zero for unused vertices).
pub fn point_edge_distance2_hessian(p: &V3, e0: &V3, e1: &V3) -> Mat9 {
    let prim = point_edge_primitive(point_edge_case(p, e0, e1));
    primitive_jet(&[p, e0, e1], prim, true).h
}

// ---------------------------------------------------------------------------------------
// Point–triangle.

/// Which feature pair is closest (IPC's distance types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PointTriangleCase {
    /// The vertex `t0`, `t1` or `t2`.
    Vertex(u8),
    /// The interior of edge 0: `t0t1`, 1: `t1t2`, 2: `t2t0`.
    Edge(u8),
    /// The interior of the triangle (distance to its plane).
    Face,
}

fn point_triangle_primitive(case: PointTriangleCase) -> Primitive {
    match case {
        PointTriangleCase::Vertex(i) => Primitive::Points([0, 1 + i as usize]),
        PointTriangleCase::Edge(i) => {
            Primitive::Line([0, 1 + i as usize, 1 + (i as usize + 1) % 3])
        }
        PointTriangleCase::Face => Primitive::Plane,
    }
}

/// The closest feature of the triangle to `p`.
///
/// `Face` when the projection of `p` onto the plane lies strictly inside the triangle
/// (the three sub-triangles `(tᵢ, tᵢ₊₁, p)` have the orientation of `n`); otherwise the
/// minimum of the squared distance over the triangle lies on its boundary (it is a convex
/// quadratic in the barycentric coordinates), so the closest of the three edge segments
/// decides (ties: the lower edge index). Degenerate triangles (`sin²` of the angle at `t0`
/// below `1e-20`) never give `Face`.
pub fn point_triangle_case(p: &V3, t0: &V3, t1: &V3, t2: &V3) -> PointTriangleCase {
    let t = [t0, t1, t2];
    let (b, c) = (t1 - t0, t2 - t0);
    let n = b.cross(&c);
    if n.norm_squared() > PARALLEL_SIN2 * b.norm_squared() * c.norm_squared() {
        let inside = (0..3).all(|i| (t[(i + 1) % 3] - t[i]).cross(&(p - t[i])).dot(&n) > 0.0);
        if inside {
            return PointTriangleCase::Face;
        }
    }
    // Non-finite input keeps the fallback `Vertex(0)` (its distance is NaN/∞ anyway).
    let mut best = (f64::INFINITY, PointTriangleCase::Vertex(0));
    for i in 0..3u8 {
        let j = (i + 1) % 3;
        let case = match point_edge_case(p, t[i as usize], t[j as usize]) {
            PointEdgeCase::Vertex(0) => PointTriangleCase::Vertex(i),
            PointEdgeCase::Vertex(_) => PointTriangleCase::Vertex(j),
            PointEdgeCase::Edge => PointTriangleCase::Edge(i),
        };
        let d = primitive_value(&[p, t0, t1, t2], point_triangle_primitive(case));
        if d < best.0 {
            best = (d, case);
        }
    }
    best.1
}

/// Squared distance from `p` to the triangle `t0 t1 t2` (of the case
/// [`point_triangle_case`] picks).
pub fn point_triangle_distance2(p: &V3, t0: &V3, t1: &V3, t2: &V3) -> f64 {
    let prim = point_triangle_primitive(point_triangle_case(p, t0, t1, t2));
    primitive_value(&[p, t0, t1, t2], prim)
}

/// Gradient of [`point_triangle_distance2`] (of the chosen case, zero-padded).
pub fn point_triangle_distance2_gradient(p: &V3, t0: &V3, t1: &V3, t2: &V3) -> Vec12 {
    let prim = point_triangle_primitive(point_triangle_case(p, t0, t1, t2));
    primitive_jet(&[p, t0, t1, t2], prim, false).g
}

/// Hessian of [`point_triangle_distance2`] (of the chosen case, zero-padded).
pub fn point_triangle_distance2_hessian(p: &V3, t0: &V3, t1: &V3, t2: &V3) -> Mat12 {
    let prim = point_triangle_primitive(point_triangle_case(p, t0, t1, t2));
    primitive_jet(&[p, t0, t1, t2], prim, true).h
}

// ---------------------------------------------------------------------------------------
// Edge–edge (segments).

/// Which feature pair of two segments is closest (IPC's distance types).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeEdgeCase {
    /// Endpoint `(i, j)`: `ea_i` and `eb_j`.
    PointPoint(u8, u8),
    /// Endpoint `eb_j` and the interior of edge a.
    PointEdgeA(u8),
    /// Endpoint `ea_i` and the interior of edge b.
    PointEdgeB(u8),
    /// The interiors of both edges (line–line distance).
    EdgeEdge,
}

fn edge_edge_primitive(case: EdgeEdgeCase) -> Primitive {
    match case {
        EdgeEdgeCase::PointPoint(i, j) => Primitive::Points([i as usize, 2 + j as usize]),
        EdgeEdgeCase::PointEdgeA(j) => Primitive::Line([2 + j as usize, 0, 1]),
        EdgeEdgeCase::PointEdgeB(i) => Primitive::Line([i as usize, 2, 3]),
        EdgeEdgeCase::EdgeEdge => Primitive::Lines,
    }
}

/// The closest feature pair of the segments `ea0 ea1` and `eb0 eb1`.
///
/// With `u = ea1 − ea0`, `v = eb1 − eb0`, `w = ea0 − eb0`, the closest points of the lines
/// are `ea0 + s u`, `eb0 + t v` with `s = ((u·v)(v·w) − ‖v‖²(u·w)) / ‖u×v‖²` and
/// `t = (‖u‖²(v·w) − (u·v)(u·w)) / ‖u×v‖²`. `EdgeEdge` when both lie strictly inside
/// `(0, 1)`; otherwise (and always for parallel edges, `sin²θ ≤ 1e-20`, and zero-length
/// edges) the minimum of the convex quadratic over `[0, 1]²` lies on the boundary, i.e.
/// it is the closest of the four endpoint–segment distances (ties: `ea0`, `ea1`, `eb0`,
/// `eb1` in this order).
pub fn edge_edge_case(ea0: &V3, ea1: &V3, eb0: &V3, eb1: &V3) -> EdgeEdgeCase {
    let (u, v, w) = (ea1 - ea0, eb1 - eb0, ea0 - eb0);
    let (a, c) = (u.norm_squared(), v.norm_squared());
    let den = u.cross(&v).norm_squared();
    let x = [ea0, ea1, eb0, eb1];
    // Non-finite input keeps the fallback (its distance is NaN/∞ anyway).
    let mut best = (f64::INFINITY, EdgeEdgeCase::PointPoint(0, 0));
    for k in 0..4u8 {
        let own = k % 2;
        let case = if k < 2 {
            match point_edge_case(x[k as usize], eb0, eb1) {
                PointEdgeCase::Vertex(j) => EdgeEdgeCase::PointPoint(own, j),
                PointEdgeCase::Edge => EdgeEdgeCase::PointEdgeB(own),
            }
        } else {
            match point_edge_case(x[k as usize], ea0, ea1) {
                PointEdgeCase::Vertex(i) => EdgeEdgeCase::PointPoint(i, own),
                PointEdgeCase::Edge => EdgeEdgeCase::PointEdgeA(own),
            }
        };
        let d = primitive_value(&x, edge_edge_primitive(case));
        if d < best.0 {
            best = (d, case);
        }
    }
    // The interior case when its parameters are inside and its closest points are closer
    // than every boundary case. Nearly collinear segments that do not touch can get
    // rounding-only `s, t` inside (0, 1) with the lines' distance ~0 (found against IPC
    // Toolkit, crates/supple-py/tests/test_ipc_ipctk.py): the points at such `(s, t)` are
    // points of the segments, so they are never closer than the true minimum, which a
    // boundary case then has.
    if den > PARALLEL_SIN2 * a * c {
        let (b, d, e) = (u.dot(&v), u.dot(&w), v.dot(&w));
        let (s, t) = ((b * e - c * d) / den, (a * e - b * d) / den);
        if s > 0.0 && s < 1.0 && t > 0.0 && t < 1.0 {
            let gap = (w + s * u - t * v).norm_squared();
            if gap <= best.0 {
                return EdgeEdgeCase::EdgeEdge;
            }
        }
    }
    best.1
}

/// Squared distance between the segments `ea0 ea1` and `eb0 eb1` (of the case
/// [`edge_edge_case`] picks).
pub fn edge_edge_distance2(ea0: &V3, ea1: &V3, eb0: &V3, eb1: &V3) -> f64 {
    let prim = edge_edge_primitive(edge_edge_case(ea0, ea1, eb0, eb1));
    primitive_value(&[ea0, ea1, eb0, eb1], prim)
}

/// Gradient of [`edge_edge_distance2`] (of the chosen case, zero-padded).
pub fn edge_edge_distance2_gradient(ea0: &V3, ea1: &V3, eb0: &V3, eb1: &V3) -> Vec12 {
    let prim = edge_edge_primitive(edge_edge_case(ea0, ea1, eb0, eb1));
    primitive_jet(&[ea0, ea1, eb0, eb1], prim, false).g
}

/// Hessian of [`edge_edge_distance2`] (of the chosen case, zero-padded).
pub fn edge_edge_distance2_hessian(ea0: &V3, ea1: &V3, eb0: &V3, eb1: &V3) -> Mat12 {
    let prim = edge_edge_primitive(edge_edge_case(ea0, ea1, eb0, eb1));
    primitive_jet(&[ea0, ea1, eb0, eb1], prim, true).h
}

#[cfg(test)]
#[path = "distance_tests.rs"]
mod tests;
