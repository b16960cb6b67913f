//! The `supple.ipc` functions of additive CCD, friction and the PSD projection (the rest of
//! the submodule is in `ipc.rs`).

use super::*;

// ---------------------------------------------------------------------------------------
// Additive CCD.

/// ACCD's settings from the keyword arguments, validated.
fn accd_settings(
    s: f64,
    min_separation: f64,
    max_iterations: i64,
    t_max: f64,
) -> PyResult<AccdSettings> {
    let max_iterations = u32::try_from(max_iterations).map_err(|_| {
        PyValueError::new_err(format!(
            "max_iterations = {max_iterations}: must be in 0..={}",
            u32::MAX
        ))
    })?;
    Ok(AccdSettings {
        s,
        min_separation,
        max_iterations,
        t_max,
    })
}

/// Additive CCD (Li et al. 2021, Algorithm 1) of the point `p + τ dp` against the triangle
/// `t_i + τ dt_i`, `τ ∈ [0, t_max]` — note: start positions and **displacements**, not end
/// positions. Returns the largest step fraction it certifies: `t_max` if there is no
/// impact, `0 < t < t_max` a step over which the distance stays above `min_separation`
/// (leaving at least the fraction `s` of the initial gap), `0` if the pair starts within
/// `min_separation` (or the input is not finite).
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (p, t0, t1, t2, dp, dt0, dt1, dt2, *, s = 0.1, min_separation = 0.0, max_iterations = 10_000, t_max = 1.0))]
pub(super) fn point_triangle_accd(
    p: &Bound<'_, PyAny>,
    t0: &Bound<'_, PyAny>,
    t1: &Bound<'_, PyAny>,
    t2: &Bound<'_, PyAny>,
    dp: &Bound<'_, PyAny>,
    dt0: &Bound<'_, PyAny>,
    dt1: &Bound<'_, PyAny>,
    dt2: &Bound<'_, PyAny>,
    s: f64,
    min_separation: f64,
    max_iterations: i64,
    t_max: f64,
) -> PyResult<f64> {
    let (p, t0, t1, t2) = (v3(p, "p")?, v3(t0, "t0")?, v3(t1, "t1")?, v3(t2, "t2")?);
    let (dp, dt0, dt1, dt2) = (
        v3(dp, "dp")?,
        v3(dt0, "dt0")?,
        v3(dt1, "dt1")?,
        v3(dt2, "dt2")?,
    );
    let settings = accd_settings(s, min_separation, max_iterations, t_max)?;
    Ok(ccd::point_triangle_accd(
        &p, &t0, &t1, &t2, &dp, &dt0, &dt1, &dt2, &settings,
    ))
}

/// Additive CCD of the edges `ea_i + τ dea_i` and `eb_j + τ deb_j`, `τ ∈ [0, t_max]`
/// (start positions and displacements); same settings and return convention as
/// `point_triangle_accd`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (ea0, ea1, eb0, eb1, dea0, dea1, deb0, deb1, *, s = 0.1, min_separation = 0.0, max_iterations = 10_000, t_max = 1.0))]
pub(super) fn edge_edge_accd(
    ea0: &Bound<'_, PyAny>,
    ea1: &Bound<'_, PyAny>,
    eb0: &Bound<'_, PyAny>,
    eb1: &Bound<'_, PyAny>,
    dea0: &Bound<'_, PyAny>,
    dea1: &Bound<'_, PyAny>,
    deb0: &Bound<'_, PyAny>,
    deb1: &Bound<'_, PyAny>,
    s: f64,
    min_separation: f64,
    max_iterations: i64,
    t_max: f64,
) -> PyResult<f64> {
    let [a0, a1, b0, b1] = edges(ea0, ea1, eb0, eb1)?;
    let (da0, da1) = (v3(dea0, "dea0")?, v3(dea1, "dea1")?);
    let (db0, db1) = (v3(deb0, "deb0")?, v3(deb1, "deb1")?);
    let settings = accd_settings(s, min_separation, max_iterations, t_max)?;
    Ok(ccd::edge_edge_accd(
        &a0, &a1, &b0, &b1, &da0, &da1, &db0, &db1, &settings,
    ))
}

/// Additive CCD of the point `p + τ dp` against the edge `e_i + τ de_i`,
/// `τ ∈ [0, t_max]`; same settings and return convention as `point_triangle_accd`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (p, e0, e1, dp, de0, de1, *, s = 0.1, min_separation = 0.0, max_iterations = 10_000, t_max = 1.0))]
pub(super) fn point_edge_accd(
    p: &Bound<'_, PyAny>,
    e0: &Bound<'_, PyAny>,
    e1: &Bound<'_, PyAny>,
    dp: &Bound<'_, PyAny>,
    de0: &Bound<'_, PyAny>,
    de1: &Bound<'_, PyAny>,
    s: f64,
    min_separation: f64,
    max_iterations: i64,
    t_max: f64,
) -> PyResult<f64> {
    let (p, e0, e1) = (v3(p, "p")?, v3(e0, "e0")?, v3(e1, "e1")?);
    let (dp, de0, de1) = (v3(dp, "dp")?, v3(de0, "de0")?, v3(de1, "de1")?);
    let settings = accd_settings(s, min_separation, max_iterations, t_max)?;
    Ok(ccd::point_edge_accd(
        &p, &e0, &e1, &dp, &de0, &de1, &settings,
    ))
}

/// Additive CCD of the point `p + τ dp` against the point `q + τ dq`, `τ ∈ [0, t_max]`;
/// same settings and return convention as `point_triangle_accd`.
#[pyfunction]
#[allow(clippy::too_many_arguments)]
#[pyo3(signature = (p, q, dp, dq, *, s = 0.1, min_separation = 0.0, max_iterations = 10_000, t_max = 1.0))]
pub(super) fn point_point_accd(
    p: &Bound<'_, PyAny>,
    q: &Bound<'_, PyAny>,
    dp: &Bound<'_, PyAny>,
    dq: &Bound<'_, PyAny>,
    s: f64,
    min_separation: f64,
    max_iterations: i64,
    t_max: f64,
) -> PyResult<f64> {
    let (p, q, dp, dq) = (v3(p, "p")?, v3(q, "q")?, v3(dp, "dp")?, v3(dq, "dq")?);
    let settings = accd_settings(s, min_separation, max_iterations, t_max)?;
    Ok(ccd::point_point_accd(&p, &q, &dp, &dq, &settings))
}

// ---------------------------------------------------------------------------------------
// Friction.

/// IPC's smoothed `|y|` of friction: `f0(y) = −y³/(3ε²) + y²/ε + ε/3` for `y < ε`, `y`
/// otherwise (`y = ‖u‖ ≥ 0`, `eps_v = ε_v h`).
#[pyfunction]
pub(super) fn f0_sf(y: f64, eps_v: f64) -> f64 {
    fric::f0_sf(y, eps_v)
}

/// `f1(y) / y` (`f1 = f0'`): `(2 − y/ε)/ε` for `y < ε`, `1/y` otherwise.
#[pyfunction]
pub(super) fn f1_sf_over_x(y: f64, eps_v: f64) -> f64 {
    fric::f1_sf_over_x(y, eps_v)
}

/// `(f1'(y) y − f1(y)) / y³`: `−1/(ε² y)` for `0 < y < ε`, `−1/y³` for `y ≥ ε`, and `0`
/// at `y = 0` (where its product with `u uᵀ` vanishes).
#[pyfunction]
pub(super) fn df1_x_minus_f1_over_x3(y: f64, eps_v: f64) -> f64 {
    fric::df1_x_minus_f1_over_x3(y, eps_v)
}

/// Closest point of `p` on the triangle's plane: `(β1, β2)`, the point being
/// `t0 + β1 (t1 − t0) + β2 (t2 − t0)` (not clamped to the triangle).
#[pyfunction]
pub(super) fn point_triangle_closest_point<'py>(
    py: Python<'py>,
    p: &Bound<'py, PyAny>,
    t0: &Bound<'py, PyAny>,
    t1: &Bound<'py, PyAny>,
    t2: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let (p, t0, t1, t2) = (v3(p, "p")?, v3(t0, "t0")?, v3(t1, "t1")?, v3(t2, "t2")?);
    Ok(vector(
        py,
        &fric::point_triangle_closest_point(&p, &t0, &t1, &t2),
    ))
}

/// Closest points of the lines: `(α, β)`, the points being `ea0 + α (ea1 − ea0)` and
/// `eb0 + β (eb1 − eb0)` (not clamped to the segments).
#[pyfunction]
pub(super) fn edge_edge_closest_point<'py>(
    py: Python<'py>,
    ea0: &Bound<'py, PyAny>,
    ea1: &Bound<'py, PyAny>,
    eb0: &Bound<'py, PyAny>,
    eb1: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let [a0, a1, b0, b1] = edges(ea0, ea1, eb0, eb1)?;
    Ok(vector(
        py,
        &fric::edge_edge_closest_point(&a0, &a1, &b0, &b1),
    ))
}

/// Closest point of `p` on the edge's line: `α`, the point being `e0 + α (e1 − e0)`.
#[pyfunction]
pub(super) fn point_edge_closest_point(
    p: &Bound<'_, PyAny>,
    e0: &Bound<'_, PyAny>,
    e1: &Bound<'_, PyAny>,
) -> PyResult<f64> {
    let (p, e0, e1) = (v3(p, "p")?, v3(e0, "e0")?, v3(e1, "e1")?);
    Ok(fric::point_edge_closest_point(&p, &e0, &e1))
}

/// Friction's tangent basis of a point–triangle contact, `(3, 2)` with orthonormal columns.
#[pyfunction]
pub(super) fn point_triangle_tangent_basis<'py>(
    py: Python<'py>,
    p: &Bound<'py, PyAny>,
    t0: &Bound<'py, PyAny>,
    t1: &Bound<'py, PyAny>,
    t2: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (p, t0, t1, t2) = (v3(p, "p")?, v3(t0, "t0")?, v3(t1, "t1")?, v3(t2, "t2")?);
    Ok(matrix(
        py,
        &fric::point_triangle_tangent_basis(&p, &t0, &t1, &t2),
    ))
}

/// Friction's tangent basis of an edge–edge contact, `(3, 2)` with orthonormal columns.
#[pyfunction]
pub(super) fn edge_edge_tangent_basis<'py>(
    py: Python<'py>,
    ea0: &Bound<'py, PyAny>,
    ea1: &Bound<'py, PyAny>,
    eb0: &Bound<'py, PyAny>,
    eb1: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let [a0, a1, b0, b1] = edges(ea0, ea1, eb0, eb1)?;
    Ok(matrix(
        py,
        &fric::edge_edge_tangent_basis(&a0, &a1, &b0, &b1),
    ))
}

/// Friction's tangent basis of a point–edge contact, `(3, 2)` with orthonormal columns.
#[pyfunction]
pub(super) fn point_edge_tangent_basis<'py>(
    py: Python<'py>,
    p: &Bound<'py, PyAny>,
    e0: &Bound<'py, PyAny>,
    e1: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (p, e0, e1) = (v3(p, "p")?, v3(e0, "e0")?, v3(e1, "e1")?);
    Ok(matrix(py, &fric::point_edge_tangent_basis(&p, &e0, &e1)))
}

/// Friction's tangent basis of a point–point contact, `(3, 2)` with orthonormal columns.
#[pyfunction]
pub(super) fn point_point_tangent_basis<'py>(
    py: Python<'py>,
    p: &Bound<'py, PyAny>,
    q: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let (p, q) = (v3(p, "p")?, v3(q, "q")?);
    Ok(matrix(py, &fric::point_point_tangent_basis(&p, &q)))
}

// ---------------------------------------------------------------------------------------
// PSD projection.

fn project<'py, const N: usize>(py: Python<'py>, rows: &[f64]) -> Bound<'py, PyArray2<f64>> {
    let m = SMatrix::<f64, N, N>::from_row_slice(rows);
    matrix(py, &proj::project_psd(&m))
}

/// The per-stencil PSD projection of the IPC step: the nearest symmetric positive
/// semidefinite matrix to the symmetric part of `m` (eigenvalues clamped at 0), for a
/// square `m` of size 3, 6, 9 or 12.
#[pyfunction]
pub(super) fn project_psd<'py>(
    py: Python<'py>,
    m: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let a: PyArrayLike2<'_, f64, AllowTypeChange> = m.extract().map_err(|e| {
        PyValueError::new_err(format!("m: expected a square 2-D array of numbers ({e})"))
    })?;
    let view = a.as_array();
    let rows: Vec<f64> = view.iter().copied().collect();
    match view.shape() {
        [3, 3] => Ok(project::<3>(py, &rows)),
        [6, 6] => Ok(project::<6>(py, &rows)),
        [9, 9] => Ok(project::<9>(py, &rows)),
        [12, 12] => Ok(project::<12>(py, &rows)),
        s => Err(PyValueError::new_err(format!(
            "m: shape {}, expected (n, n) with n in 3, 6, 9, 12",
            shape(s)
        ))),
    }
}
