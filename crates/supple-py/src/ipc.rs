//! `supple.ipc`: the geometry of Supple's IPC contact step (`supple::contact::ipc`) as plain
//! functions on numpy arrays, for checking it against other implementations (the tests
//! compare it with IPC Toolkit's `ipctk`) and for users who need the pieces themselves.
//!
//! Points go in as anything numpy turns into a float64 array of shape `(3,)`; gradients
//! come out as `(3k,)` float64 arrays and Hessians as `(3k, 3k)`, vertices in argument
//! order, three components each. A wrong shape or a non-number raises `ValueError` naming
//! the argument. Distances are **squared** throughout, and so is the barrier's `dhat`.

use numpy::ndarray::{Array1, Array2};
use numpy::{AllowTypeChange, IntoPyArray, PyArray1, PyArray2, PyArrayLike1, PyArrayLike2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
// The modules under short aliases: `#[pyfunction] fn barrier` makes an item `barrier` of its
// own in the type namespace.
use supple::contact::ipc::accd::AccdSettings;
use supple::contact::ipc::distance::{EdgeEdgeCase, PointEdgeCase, PointTriangleCase, V3};
use supple::contact::ipc::{
    accd as ccd, barrier as bar, distance as dist, friction as fric, mollifier as moll, psd as proj,
};
use supple::nalgebra::{Dim, Matrix, RawStorage, SMatrix};

/// The name of the submodule (`supple.ipc`; the native part is `supple._supple.ipc`).
pub const NAME: &str = "ipc";

/// A shape as Python writes it: `(3,)`, `(1, 3)`.
fn shape(s: &[usize]) -> String {
    match s {
        [n] => format!("({n},)"),
        _ => format!(
            "({})",
            s.iter()
                .map(|n| n.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// One point: a float64 array (or sequence) of shape `(3,)`.
fn v3(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<V3> {
    let a: PyArrayLike1<'_, f64, AllowTypeChange> = obj.extract().map_err(|e| {
        PyValueError::new_err(format!(
            "{what}: expected an array of 3 numbers, shape (3,) ({e})"
        ))
    })?;
    let view = a.as_array();
    if view.len() != 3 {
        return Err(PyValueError::new_err(format!(
            "{what}: shape {}, expected (3,)",
            shape(view.shape())
        )));
    }
    Ok(V3::new(view[0], view[1], view[2]))
}

/// A 1-D float64 array of any length.
fn floats(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<f64>> {
    let a: PyArrayLike1<'_, f64, AllowTypeChange> = obj.extract().map_err(|e| {
        PyValueError::new_err(format!("{what}: expected a 1-D array of numbers ({e})"))
    })?;
    Ok(a.as_array().to_vec())
}

/// A column vector (gradient) as a 1-D numpy array.
fn vector<'py, R: Dim, C: Dim, S: RawStorage<f64, R, C>>(
    py: Python<'py>,
    v: &Matrix<f64, R, C, S>,
) -> Bound<'py, PyArray1<f64>> {
    Array1::from_iter(v.iter().copied()).into_pyarray(py)
}

/// A matrix as a 2-D numpy array (row `i`, column `j` = entry `(i, j)`).
fn matrix<'py, R: Dim, C: Dim, S: RawStorage<f64, R, C>>(
    py: Python<'py>,
    m: &Matrix<f64, R, C, S>,
) -> Bound<'py, PyArray2<f64>> {
    Array2::from_shape_fn((m.nrows(), m.ncols()), |(i, j)| m[(i, j)]).into_pyarray(py)
}

/// Value, gradient and Hessian of one distance function of `k` points, as three Python
/// functions named after the Rust functions of `supple::contact::ipc::distance`.
macro_rules! distance_functions {
    ($value:ident, $gradient:ident, $hessian:ident, [$($arg:ident),+], $doc:literal) => {
        #[doc = $doc]
        #[pyfunction]
        fn $value($($arg: &Bound<'_, PyAny>),+) -> PyResult<f64> {
            $(let $arg = v3($arg, stringify!($arg))?;)+
            Ok(dist::$value($(&$arg),+))
        }

        #[doc = concat!(
            "Gradient of `", stringify!($value), "`, a `(3k,)` array for its k points \
             (vertices in argument order; zero for vertices the closest-feature case does \
             not involve)."
        )]
        #[pyfunction]
        fn $gradient<'py>(
            py: Python<'py>,
            $($arg: &Bound<'py, PyAny>),+
        ) -> PyResult<Bound<'py, PyArray1<f64>>> {
            $(let $arg = v3($arg, stringify!($arg))?;)+
            Ok(vector(py, &dist::$gradient($(&$arg),+)))
        }

        #[doc = concat!(
            "Hessian of `", stringify!($value), "`, a `(3k, 3k)` array for its k points \
             (vertices in argument order; zero blocks for vertices the closest-feature case \
             does not involve; not projected to PSD)."
        )]
        #[pyfunction]
        fn $hessian<'py>(
            py: Python<'py>,
            $($arg: &Bound<'py, PyAny>),+
        ) -> PyResult<Bound<'py, PyArray2<f64>>> {
            $(let $arg = v3($arg, stringify!($arg))?;)+
            Ok(matrix(py, &dist::$hessian($(&$arg),+)))
        }
    };
}

distance_functions!(
    point_point_distance2,
    point_point_distance2_gradient,
    point_point_distance2_hessian,
    [p, q],
    "Squared distance `‖p − q‖²`."
);
distance_functions!(
    point_line_distance2,
    point_line_distance2_gradient,
    point_line_distance2_hessian,
    [p, e0, e1],
    "Squared distance from `p` to the infinite line through `e0`, `e1` (`‖p − e0‖²` if \
     `e0 = e1`)."
);
distance_functions!(
    point_plane_distance2,
    point_plane_distance2_gradient,
    point_plane_distance2_hessian,
    [p, t0, t1, t2],
    "Squared distance from `p` to the plane of the triangle `t0 t1 t2` (to the line of its \
     longest edge if the triangle is exactly degenerate)."
);
distance_functions!(
    line_line_distance2,
    line_line_distance2_gradient,
    line_line_distance2_hessian,
    [ea0, ea1, eb0, eb1],
    "Squared distance between the infinite lines through `ea0, ea1` and `eb0, eb1` (for \
     exactly parallel lines: from `ea0` to line b)."
);
distance_functions!(
    point_edge_distance2,
    point_edge_distance2_gradient,
    point_edge_distance2_hessian,
    [p, e0, e1],
    "Squared distance from `p` to the segment `e0 e1`, of the closest feature \
     `point_edge_case` picks."
);
distance_functions!(
    point_triangle_distance2,
    point_triangle_distance2_gradient,
    point_triangle_distance2_hessian,
    [p, t0, t1, t2],
    "Squared distance from `p` to the triangle `t0 t1 t2`, of the closest feature pair \
     `point_triangle_case` picks."
);
distance_functions!(
    edge_edge_distance2,
    edge_edge_distance2_gradient,
    edge_edge_distance2_hessian,
    [ea0, ea1, eb0, eb1],
    "Squared distance between the segments `ea0 ea1` and `eb0 eb1`, of the closest \
     feature pair `edge_edge_case` picks (no mollifier)."
);

/// The closest feature of the segment `e0 e1` to `p`, by IPC's name of the distance type:
/// `"P_E0"`, `"P_E1"` (an endpoint) or `"P_E"` (the interior).
#[pyfunction]
fn point_edge_case(
    p: &Bound<'_, PyAny>,
    e0: &Bound<'_, PyAny>,
    e1: &Bound<'_, PyAny>,
) -> PyResult<&'static str> {
    let (p, e0, e1) = (v3(p, "p")?, v3(e0, "e0")?, v3(e1, "e1")?);
    Ok(match dist::point_edge_case(&p, &e0, &e1) {
        PointEdgeCase::Vertex(0) => "P_E0",
        PointEdgeCase::Vertex(_) => "P_E1",
        PointEdgeCase::Edge => "P_E",
    })
}

/// The closest feature of the triangle `t0 t1 t2` to `p`, by IPC's name of the distance
/// type: `"P_T0"`, `"P_T1"`, `"P_T2"` (a vertex), `"P_E0"` (edge `t0 t1`), `"P_E1"`
/// (`t1 t2`), `"P_E2"` (`t2 t0`), `"P_T"` (the interior: distance to the plane).
#[pyfunction]
fn point_triangle_case(
    p: &Bound<'_, PyAny>,
    t0: &Bound<'_, PyAny>,
    t1: &Bound<'_, PyAny>,
    t2: &Bound<'_, PyAny>,
) -> PyResult<&'static str> {
    let (p, t0, t1, t2) = (v3(p, "p")?, v3(t0, "t0")?, v3(t1, "t1")?, v3(t2, "t2")?);
    const VERTEX: [&str; 3] = ["P_T0", "P_T1", "P_T2"];
    const EDGE: [&str; 3] = ["P_E0", "P_E1", "P_E2"];
    Ok(match dist::point_triangle_case(&p, &t0, &t1, &t2) {
        PointTriangleCase::Vertex(i) => VERTEX[usize::from(i)],
        PointTriangleCase::Edge(i) => EDGE[usize::from(i)],
        PointTriangleCase::Face => "P_T",
    })
}

/// The closest feature pair of the segments `ea0 ea1` and `eb0 eb1`, by IPC's name of the
/// distance type: `"EA{i}_EB{j}"` (endpoints `ea_i`, `eb_j`), `"EA_EB{j}"` (`eb_j` and the
/// interior of edge a), `"EA{i}_EB"` (`ea_i` and the interior of edge b), `"EA_EB"` (both
/// interiors: the line–line distance).
#[pyfunction]
fn edge_edge_case(
    ea0: &Bound<'_, PyAny>,
    ea1: &Bound<'_, PyAny>,
    eb0: &Bound<'_, PyAny>,
    eb1: &Bound<'_, PyAny>,
) -> PyResult<&'static str> {
    let (ea0, ea1) = (v3(ea0, "ea0")?, v3(ea1, "ea1")?);
    let (eb0, eb1) = (v3(eb0, "eb0")?, v3(eb1, "eb1")?);
    const POINTS: [[&str; 2]; 2] = [["EA0_EB0", "EA0_EB1"], ["EA1_EB0", "EA1_EB1"]];
    Ok(match dist::edge_edge_case(&ea0, &ea1, &eb0, &eb1) {
        EdgeEdgeCase::PointPoint(i, j) => POINTS[usize::from(i)][usize::from(j)],
        EdgeEdgeCase::PointEdgeA(j) => ["EA_EB0", "EA_EB1"][usize::from(j)],
        EdgeEdgeCase::PointEdgeB(i) => ["EA0_EB", "EA1_EB"][usize::from(i)],
        EdgeEdgeCase::EdgeEdge => "EA_EB",
    })
}

// ---------------------------------------------------------------------------------------
// Barrier.

/// IPC's log barrier on squared distances: `b(d; d̂) = −(d − d̂)² ln(d / d̂)` for
/// `0 < d < d̂`, `0` for `d ≥ d̂`, `inf` for `d ≤ 0`. Call with `d = dist²`, `dhat = d̂²`.
#[pyfunction]
fn barrier(d: f64, dhat: f64) -> f64 {
    bar::barrier(d, dhat)
}

/// `∂b/∂d` of `barrier` (same squared arguments); `0` for `d ≥ d̂`, `-inf` for `d ≤ 0`.
#[pyfunction]
fn barrier_first_derivative(d: f64, dhat: f64) -> f64 {
    bar::barrier_first_derivative(d, dhat)
}

/// `∂²b/∂d²` of `barrier` (same squared arguments); `0` for `d ≥ d̂`, `inf` for `d ≤ 0`.
#[pyfunction]
fn barrier_second_derivative(d: f64, dhat: f64) -> f64 {
    bar::barrier_second_derivative(d, dhat)
}

/// The initial adaptive barrier stiffness `(κ, κ_max)` (IPC §4.3). `dhat` is the
/// **unsquared** activation distance; `grad_energy` (∇E without contact) and
/// `grad_barrier` (∇ of the unscaled barrier sum) are 1-D arrays of equal length.
#[pyfunction]
#[pyo3(signature = (bbox_diagonal, dhat, average_mass, grad_energy, grad_barrier, min_barrier_stiffness_scale = 1e11))]
fn initial_barrier_stiffness(
    bbox_diagonal: f64,
    dhat: f64,
    average_mass: f64,
    grad_energy: &Bound<'_, PyAny>,
    grad_barrier: &Bound<'_, PyAny>,
    min_barrier_stiffness_scale: f64,
) -> PyResult<(f64, f64)> {
    let ge = floats(grad_energy, "grad_energy")?;
    let gb = floats(grad_barrier, "grad_barrier")?;
    if ge.len() != gb.len() {
        return Err(PyValueError::new_err(format!(
            "grad_energy has {} entries, grad_barrier {}: they must be equal",
            ge.len(),
            gb.len()
        )));
    }
    Ok(bar::initial_barrier_stiffness(
        bbox_diagonal,
        dhat,
        average_mass,
        &ge,
        &gb,
        min_barrier_stiffness_scale,
    ))
}

/// The adaptive update of κ (IPC §4.3): doubled (at most `max_kappa`) when both minimum
/// **squared** distances are below `(dmin_frac · bbox_diagonal)²` and still shrinking;
/// otherwise `kappa` unchanged.
#[pyfunction]
#[pyo3(signature = (prev_min_distance2, min_distance2, max_kappa, kappa, bbox_diagonal, dmin_frac = 1e-9))]
fn update_barrier_stiffness(
    prev_min_distance2: f64,
    min_distance2: f64,
    max_kappa: f64,
    kappa: f64,
    bbox_diagonal: f64,
    dmin_frac: f64,
) -> f64 {
    bar::update_barrier_stiffness(
        prev_min_distance2,
        min_distance2,
        max_kappa,
        kappa,
        bbox_diagonal,
        dmin_frac,
    )
}

// ---------------------------------------------------------------------------------------
// Mollifier.

/// The mollifier threshold `ε× = 10⁻³ ‖ea‖² ‖eb‖²` from the edges' rest positions.
#[pyfunction]
fn edge_edge_mollifier_threshold(
    ea0_rest: &Bound<'_, PyAny>,
    ea1_rest: &Bound<'_, PyAny>,
    eb0_rest: &Bound<'_, PyAny>,
    eb1_rest: &Bound<'_, PyAny>,
) -> PyResult<f64> {
    let (a0, a1) = (v3(ea0_rest, "ea0_rest")?, v3(ea1_rest, "ea1_rest")?);
    let (b0, b1) = (v3(eb0_rest, "eb0_rest")?, v3(eb1_rest, "eb1_rest")?);
    Ok(moll::edge_edge_mollifier_threshold(&a0, &a1, &b0, &b1))
}

/// The four edge points, validated.
fn edges(
    ea0: &Bound<'_, PyAny>,
    ea1: &Bound<'_, PyAny>,
    eb0: &Bound<'_, PyAny>,
    eb1: &Bound<'_, PyAny>,
) -> PyResult<[V3; 4]> {
    Ok([
        v3(ea0, "ea0")?,
        v3(ea1, "ea1")?,
        v3(eb0, "eb0")?,
        v3(eb1, "eb1")?,
    ])
}

/// `x = ‖(ea1 − ea0) × (eb1 − eb0)‖²`, the mollifier's argument.
#[pyfunction]
fn edge_edge_cross_squarednorm(
    ea0: &Bound<'_, PyAny>,
    ea1: &Bound<'_, PyAny>,
    eb0: &Bound<'_, PyAny>,
    eb1: &Bound<'_, PyAny>,
) -> PyResult<f64> {
    let [a0, a1, b0, b1] = edges(ea0, ea1, eb0, eb1)?;
    Ok(moll::edge_edge_cross_squarednorm(&a0, &a1, &b0, &b1))
}

/// Gradient of `edge_edge_cross_squarednorm`, `(12,)`.
#[pyfunction]
fn edge_edge_cross_squarednorm_gradient<'py>(
    py: Python<'py>,
    ea0: &Bound<'py, PyAny>,
    ea1: &Bound<'py, PyAny>,
    eb0: &Bound<'py, PyAny>,
    eb1: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let [a0, a1, b0, b1] = edges(ea0, ea1, eb0, eb1)?;
    let g = moll::edge_edge_cross_squarednorm_gradient(&a0, &a1, &b0, &b1);
    Ok(vector(py, &g))
}

/// Hessian of `edge_edge_cross_squarednorm`, `(12, 12)`.
#[pyfunction]
fn edge_edge_cross_squarednorm_hessian<'py>(
    py: Python<'py>,
    ea0: &Bound<'py, PyAny>,
    ea1: &Bound<'py, PyAny>,
    eb0: &Bound<'py, PyAny>,
    eb1: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let [a0, a1, b0, b1] = edges(ea0, ea1, eb0, eb1)?;
    let h = moll::edge_edge_cross_squarednorm_hessian(&a0, &a1, &b0, &b1);
    Ok(matrix(py, &h))
}

/// IPC's edge–edge mollifier `m(x) = −x²/ε² + 2x/ε` for `x < ε`, else `1`, with
/// `x = edge_edge_cross_squarednorm(...)` and `ε = eps_x`
/// (`edge_edge_mollifier_threshold` of the rest positions).
#[pyfunction]
fn edge_edge_mollifier(
    ea0: &Bound<'_, PyAny>,
    ea1: &Bound<'_, PyAny>,
    eb0: &Bound<'_, PyAny>,
    eb1: &Bound<'_, PyAny>,
    eps_x: f64,
) -> PyResult<f64> {
    let [a0, a1, b0, b1] = edges(ea0, ea1, eb0, eb1)?;
    Ok(moll::edge_edge_mollifier(&a0, &a1, &b0, &b1, eps_x))
}

/// Gradient of `edge_edge_mollifier`, `(12,)`.
#[pyfunction]
fn edge_edge_mollifier_gradient<'py>(
    py: Python<'py>,
    ea0: &Bound<'py, PyAny>,
    ea1: &Bound<'py, PyAny>,
    eb0: &Bound<'py, PyAny>,
    eb1: &Bound<'py, PyAny>,
    eps_x: f64,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let [a0, a1, b0, b1] = edges(ea0, ea1, eb0, eb1)?;
    let g = moll::edge_edge_mollifier_gradient(&a0, &a1, &b0, &b1, eps_x);
    Ok(vector(py, &g))
}

/// Hessian of `edge_edge_mollifier`, `(12, 12)` (not PSD in general).
#[pyfunction]
fn edge_edge_mollifier_hessian<'py>(
    py: Python<'py>,
    ea0: &Bound<'py, PyAny>,
    ea1: &Bound<'py, PyAny>,
    eb0: &Bound<'py, PyAny>,
    eb1: &Bound<'py, PyAny>,
    eps_x: f64,
) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let [a0, a1, b0, b1] = edges(ea0, ea1, eb0, eb1)?;
    let h = moll::edge_edge_mollifier_hessian(&a0, &a1, &b0, &b1, eps_x);
    Ok(matrix(py, &h))
}

mod ccd_friction;
use ccd_friction::*;

/// Builds the `ipc` submodule.
pub fn module(py: Python<'_>) -> PyResult<Bound<'_, PyModule>> {
    let m = PyModule::new(py, NAME)?;
    m.setattr(
        "__doc__",
        "The geometry of Supple's IPC contact step (`supple::contact::ipc`), exposed for \
         checking and for users who need it: squared distances with gradients and Hessians, \
         closest-feature cases, IPC's log barrier and adaptive stiffness, the edge-edge \
         mollifier, additive CCD, friction's smoothing and tangent bases, and the PSD \
         projection. Points are float64 arrays of shape (3,); distances and the barrier's \
         dhat are squared.",
    )?;
    macro_rules! add {
        ($($f:ident),+ $(,)?) => { $(m.add_function(wrap_pyfunction!($f, &m)?)?;)+ };
    }
    add!(
        point_point_distance2,
        point_point_distance2_gradient,
        point_point_distance2_hessian,
        point_line_distance2,
        point_line_distance2_gradient,
        point_line_distance2_hessian,
        point_plane_distance2,
        point_plane_distance2_gradient,
        point_plane_distance2_hessian,
        line_line_distance2,
        line_line_distance2_gradient,
        line_line_distance2_hessian,
        point_edge_distance2,
        point_edge_distance2_gradient,
        point_edge_distance2_hessian,
        point_triangle_distance2,
        point_triangle_distance2_gradient,
        point_triangle_distance2_hessian,
        edge_edge_distance2,
        edge_edge_distance2_gradient,
        edge_edge_distance2_hessian,
        point_edge_case,
        point_triangle_case,
        edge_edge_case,
        barrier,
        barrier_first_derivative,
        barrier_second_derivative,
        initial_barrier_stiffness,
        update_barrier_stiffness,
        edge_edge_mollifier_threshold,
        edge_edge_cross_squarednorm,
        edge_edge_cross_squarednorm_gradient,
        edge_edge_cross_squarednorm_hessian,
        edge_edge_mollifier,
        edge_edge_mollifier_gradient,
        edge_edge_mollifier_hessian,
        point_triangle_accd,
        edge_edge_accd,
        point_edge_accd,
        point_point_accd,
        f0_sf,
        f1_sf_over_x,
        df1_x_minus_f1_over_x3,
        point_triangle_closest_point,
        edge_edge_closest_point,
        point_edge_closest_point,
        point_triangle_tangent_basis,
        edge_edge_tangent_basis,
        point_edge_tangent_basis,
        point_point_tangent_basis,
        project_psd,
    );
    Ok(m)
}
