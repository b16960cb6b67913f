//! Lagged, smoothed Coulomb friction of IPC (Li et al. 2020, "Incremental Potential
//! Contact", §5): the friction potential of a contact is `μ λ f0(‖u‖)` with `u = Tᵀ Γ Δx`
//! the tangential relative displacement over the step, where the normal force `λ`, the
//! tangent basis `T` and the closest-point coordinates in `Γ` are lagged (computed from
//! the previous iterate / step start and held fixed while minimizing).
//!
//! The smoothing (IPC eq. 15, with `ε = ε_v h` in displacement units):
//! `f1(y) = −y²/ε² + 2y/ε` for `0 ≤ y < ε`, `1` for `y ≥ ε`, and `f0` its antiderivative
//! with `f0(ε) = ε`: `f0(y) = −y³/(3ε²) + y²/ε + ε/3` for `y < ε`, `y` otherwise. Then
//! `∇ᵤ f0(‖u‖) = (f1(y)/y) u` and
//! `∇²ᵤ f0(‖u‖) = (f1(y)/y) I + ((f1'(y) y − f1(y))/y³) u uᵀ`, `y = ‖u‖`.

use super::distance::{PARALLEL_SIN2, V3};
use nalgebra::{Matrix3, Matrix3x2, SMatrix, Vector2};

/// IPC eq. 15's `f0(y)` (the smoothed `|y|`): `−y³/(3ε²) + y²/ε + ε/3` for `y < ε`, `y`
/// for `y ≥ ε`; `y = ‖u‖ ≥ 0`, `eps_v = ε_v h > 0`.
pub fn f0_sf(y: f64, eps_v: f64) -> f64 {
    if y >= eps_v {
        y
    } else {
        y * y * (1.0 / eps_v - y / (3.0 * eps_v * eps_v)) + eps_v / 3.0
    }
}

/// `f1(y) / y`: `(2 − y/ε)/ε` for `y < ε` (so `2/ε` at `y = 0`), `1/y` for `y ≥ ε`.
/// The friction gradient is `(f1(y)/y) u`.
pub fn f1_sf_over_x(y: f64, eps_v: f64) -> f64 {
    if y >= eps_v {
        1.0 / y
    } else {
        (2.0 - y / eps_v) / eps_v
    }
}

/// `(f1'(y) y − f1(y)) / y³`, the coefficient of `u uᵀ` in the friction Hessian:
/// `−1/(ε² y)` for `0 < y < ε`, `−1/y³` for `y ≥ ε`.
///
/// **Not bounded near 0**: it grows like `−1/(ε² y)`, but its product with `u uᵀ`
/// (`‖u uᵀ‖ = y²`) tends to 0, and the Hessian of `f0(‖u‖)` at `u = 0` is `(2/ε) I`. So
/// this returns `0` at `y = 0` (and wherever `−1/(ε² y)` would overflow), which makes
/// `f1_sf_over_x(y) I + df1_x_minus_f1_over_x3(y) u uᵀ` exact and finite for every `u`.
/// That 2×2 Hessian is PSD everywhere (`f0` is convex): its eigenvalue along `u` is
/// `f1'(y) ≥ 0`, across `u` it is `f1(y)/y > 0`.
pub fn df1_x_minus_f1_over_x3(y: f64, eps_v: f64) -> f64 {
    if y.is_nan() {
        return f64::NAN;
    }
    let c = if y >= eps_v {
        -1.0 / (y * y * y)
    } else {
        -1.0 / (eps_v * eps_v * y)
    };
    if c.is_finite() {
        c
    } else {
        0.0
    }
}

// ---------------------------------------------------------------------------------------
// Tangent bases.

/// A unit vector orthogonal to `w` (`w ≠ 0`): `w` crossed with the axis it is least
/// aligned with.
fn perpendicular(w: &V3) -> V3 {
    let a = w.abs();
    let axis = if a.x <= a.y && a.x <= a.z {
        V3::x()
    } else if a.y <= a.z {
        V3::y()
    } else {
        V3::z()
    };
    w.cross(&axis).normalize()
}

/// An orthonormal pair `[t1, t2]`, both orthogonal to `normal` (unless `normal = 0`), with
/// `t1` along the part of `along` orthogonal to `normal` when that is not zero.
fn tangent_basis(normal: &V3, along: &V3) -> Matrix3x2<f64> {
    let n = (normal.norm_squared() > 0.0).then(|| normal.normalize());
    let mut t1 = match n {
        Some(n) => along - n * n.dot(along),
        None => *along,
    };
    if t1.norm_squared() > 1e-24 * along.norm_squared() && t1.norm_squared() > 0.0 {
        t1.normalize_mut();
    } else {
        t1 = match n {
            Some(n) => perpendicular(&n),
            None => V3::x(),
        };
    }
    let t2 = match n {
        Some(n) => n.cross(&t1).normalize(),
        None => perpendicular(&t1),
    };
    Matrix3x2::from_columns(&[t1, t2])
}

/// Closest point of `p` on the plane of the triangle: `(β1, β2)` with the closest point
/// `t0 + β1 (t1 − t0) + β2 (t2 − t0)`, from the 2×2 normal equations
/// `[[b·b, b·c], [b·c, c·c]] β = [b·r, c·r]` (`b = t1 − t0`, `c = t2 − t0`, `r = p − t0`;
/// determinant `‖b × c‖²`). Degenerate triangle: the projection onto the line of the
/// longer of `b`, `c` (the other coordinate 0); a triangle collapsed to a point: `(0, 0)`.
pub fn point_triangle_closest_point(p: &V3, t0: &V3, t1: &V3, t2: &V3) -> Vector2<f64> {
    let (b, c, r) = (t1 - t0, t2 - t0, p - t0);
    let (bb, cc, bc) = (b.norm_squared(), c.norm_squared(), b.dot(&c));
    let det = b.cross(&c).norm_squared();
    if det > PARALLEL_SIN2 * bb * cc {
        let (br, cr) = (b.dot(&r), c.dot(&r));
        Vector2::new((cc * br - bc * cr) / det, (bb * cr - bc * br) / det)
    } else if bb >= cc && bb > 0.0 {
        Vector2::new(b.dot(&r) / bb, 0.0)
    } else if cc > 0.0 {
        Vector2::new(0.0, c.dot(&r) / cc)
    } else {
        Vector2::zeros()
    }
}

/// Tangent basis of a point–triangle contact: `[b̂, n̂ × b̂]`, `n = b × c` the triangle
/// normal (`b = t1 − t0`, `c = t2 − t0`). Degenerate triangles fall back to the vector from
/// the closest point to `p` as the normal, and to any orthonormal pair if all vanish.
pub fn point_triangle_tangent_basis(p: &V3, t0: &V3, t1: &V3, t2: &V3) -> Matrix3x2<f64> {
    let (b, c) = (t1 - t0, t2 - t0);
    let n = b.cross(&c);
    if n.norm_squared() > PARALLEL_SIN2 * b.norm_squared() * c.norm_squared() {
        tangent_basis(&n, &b)
    } else {
        let along = if b.norm_squared() >= c.norm_squared() {
            b
        } else {
            c
        };
        let beta = point_triangle_closest_point(p, t0, t1, t2);
        tangent_basis(&(p - (t0 + b * beta[0] + c * beta[1])), &along)
    }
}

/// Closest points of the lines: `(α, β)` with `ea0 + α (ea1 − ea0)` and
/// `eb0 + β (eb1 − eb0)` closest, from the 2×2 normal equations (`u = ea1 − ea0`,
/// `v = eb1 − eb0`, `w = ea0 − eb0`): `α = ((u·v)(v·w) − (v·v)(u·w)) / ‖u×v‖²`,
/// `β = ((u·u)(v·w) − (u·v)(u·w)) / ‖u×v‖²`. Parallel lines (`sin²θ ≤ 1e-20`): `α = ½`
/// and `β` the projection of the midpoint of edge a onto line b (one of the closest pairs);
/// zero-length edges project the one point onto the other line.
pub fn edge_edge_closest_point(ea0: &V3, ea1: &V3, eb0: &V3, eb1: &V3) -> Vector2<f64> {
    let (u, v, w) = (ea1 - ea0, eb1 - eb0, ea0 - eb0);
    let (a, b, c, d, e) = (
        u.norm_squared(),
        u.dot(&v),
        v.norm_squared(),
        u.dot(&w),
        v.dot(&w),
    );
    let det = u.cross(&v).norm_squared();
    if det > PARALLEL_SIN2 * a * c {
        return Vector2::new((b * e - c * d) / det, (a * e - b * d) / det);
    }
    if c == 0.0 {
        // Edge b is a point: project it onto line a.
        let alpha = if a > 0.0 { -d / a } else { 0.0 };
        return Vector2::new(alpha, 0.0);
    }
    let alpha = if a > 0.0 { 0.5 } else { 0.0 };
    let mid = ea0 + u * alpha;
    Vector2::new(alpha, (mid - eb0).dot(&v) / c)
}

/// Tangent basis of an edge–edge contact: `[û, n̂ × û]`, `n = u × v` (`u = ea1 − ea0`,
/// `v = eb1 − eb0`). For parallel edges the normal is the vector between the closest
/// points of the lines; for collinear or degenerate edges any orthonormal pair orthogonal
/// to the (nonzero) edge direction.
pub fn edge_edge_tangent_basis(ea0: &V3, ea1: &V3, eb0: &V3, eb1: &V3) -> Matrix3x2<f64> {
    let (u, v) = (ea1 - ea0, eb1 - eb0);
    let n = u.cross(&v);
    if n.norm_squared() > PARALLEL_SIN2 * u.norm_squared() * v.norm_squared() {
        tangent_basis(&n, &u)
    } else {
        let along = if u.norm_squared() >= v.norm_squared() {
            u
        } else {
            v
        };
        let ab = edge_edge_closest_point(ea0, ea1, eb0, eb1);
        let diff = (ea0 + u * ab[0]) - (eb0 + v * ab[1]);
        tangent_basis(&diff, &along)
    }
}

/// Closest point of `p` on the line of the edge: `α = (p − e0)·e / ‖e‖²` (`e = e1 − e0`),
/// `0` for a zero-length edge.
pub fn point_edge_closest_point(p: &V3, e0: &V3, e1: &V3) -> f64 {
    let e = e1 - e0;
    let len2 = e.norm_squared();
    if len2 > 0.0 {
        (p - e0).dot(&e) / len2
    } else {
        0.0
    }
}

/// Tangent basis of a point–edge contact: `[ê, n̂ × ê]` with the normal
/// `n = p − (e0 + α e)` (so the second column is along `e × (p − e0)`). A point on the
/// line, or a zero-length edge, gets any orthonormal pair orthogonal to what is defined.
pub fn point_edge_tangent_basis(p: &V3, e0: &V3, e1: &V3) -> Matrix3x2<f64> {
    let e = e1 - e0;
    let alpha = point_edge_closest_point(p, e0, e1);
    tangent_basis(&(p - (e0 + e * alpha)), &e)
}

/// Tangent basis of a point–point contact: any orthonormal pair orthogonal to `p − q`
/// (`[x̂, ŷ]`-like if `p = q`).
pub fn point_point_tangent_basis(p: &V3, q: &V3) -> Matrix3x2<f64> {
    tangent_basis(&(p - q), &V3::zeros())
}

// ---------------------------------------------------------------------------------------
// Relative-displacement Jacobians Γ (u = Tᵀ Γ Δx).

fn blocks<const C: usize>(coefs: &[f64]) -> SMatrix<f64, 3, C> {
    let mut g = SMatrix::<f64, 3, C>::zeros();
    for (k, &c) in coefs.iter().enumerate() {
        g.fixed_view_mut::<3, 3>(0, 3 * k)
            .copy_from(&(Matrix3::identity() * c));
    }
    g
}

/// `Γ` with `Γ Δx = Δp − (Δt0 + β1 (Δt1 − Δt0) + β2 (Δt2 − Δt0))`:
/// `[I, −(1 − β1 − β2) I, −β1 I, −β2 I]`, `coords = (β1, β2)`.
pub fn point_triangle_relative_velocity_matrix(coords: &Vector2<f64>) -> SMatrix<f64, 3, 12> {
    let (b1, b2) = (coords[0], coords[1]);
    blocks(&[1.0, -(1.0 - b1 - b2), -b1, -b2])
}

/// `Γ` with `Γ Δx = (Δea0 + α (Δea1 − Δea0)) − (Δeb0 + β (Δeb1 − Δeb0))`:
/// `[(1 − α) I, α I, −(1 − β) I, −β I]`, `coords = (α, β)`.
pub fn edge_edge_relative_velocity_matrix(coords: &Vector2<f64>) -> SMatrix<f64, 3, 12> {
    let (a, b) = (coords[0], coords[1]);
    blocks(&[1.0 - a, a, -(1.0 - b), -b])
}

/// `Γ` with `Γ Δx = Δp − (Δe0 + α (Δe1 − Δe0))`: `[I, −(1 − α) I, −α I]`.
pub fn point_edge_relative_velocity_matrix(alpha: f64) -> SMatrix<f64, 3, 9> {
    blocks(&[1.0, -(1.0 - alpha), -alpha])
}

/// `Γ` with `Γ Δx = Δp − Δq`: `[I, −I]`.
pub fn point_point_relative_velocity_matrix() -> SMatrix<f64, 3, 6> {
    blocks(&[1.0, -1.0])
}

#[cfg(test)]
#[path = "friction_tests.rs"]
mod tests;
