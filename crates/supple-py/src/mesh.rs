//! `supple.TetMesh`: vertices and tets in and out as numpy arrays, validated on the way in;
//! the box generator and the mesh file loaders of the scene format.

use crate::errors::{scene_error, value_error};
use numpy::ndarray::Array2;
use numpy::{AllowTypeChange, IntoPyArray, PyArray2, PyArrayLike2};
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::{Path, PathBuf};
use supple::mesh::TetMesh;
use supple::nalgebra::Vector3;
use supple_io::{GivenMesh, SceneError};

/// A tetrahedral mesh: `vertices` `(n, 3)` float64 and `tets` `(m, 4)` vertex indices
/// (0-based), every tet positively oriented (det[b-a, c-a, d-a] > 0).
///
/// `TetMesh(vertices, tets)` copies both arrays in the given order and validates them:
/// indices in range and distinct per tet, finite coordinates, no degenerate or inverted tet.
/// A `ValueError` names the first tet at fault (`tet 7: rest volume -1.6e-4 is negative
/// (inverted) ...`).
#[pyclass(name = "TetMesh", module = "supple", frozen, from_py_object)]
#[derive(Clone)]
pub struct PyTetMesh {
    pub(crate) given: GivenMesh,
    /// What loading changed or left out (skipped cells, dropped vertices, swapped tets).
    notes: Vec<String>,
}

#[pymethods]
impl PyTetMesh {
    #[new]
    fn new(vertices: &Bound<'_, PyAny>, tets: &Bound<'_, PyAny>) -> PyResult<Self> {
        let positions = vectors(vertices, "vertices")?;
        let tets = index_rows::<4>(tets, "tets")?;
        let mesh = TetMesh::new(positions, tets).map_err(value_error)?;
        Ok(Self::from_mesh(mesh))
    }

    /// A box of `cells = (nx, ny, nz)` cubes of `cell_size` (one number or three) from
    /// `origin`, each split into `split` (5 or 6) tets; vertex `(i, j, k)` has index
    /// `i + (nx+1)(j + (ny+1)k)`. The same mesh as a scene's `mesh = { kind = "box", ... }`.
    #[staticmethod]
    #[pyo3(signature = (cells, cell_size, origin = None, split = 5))]
    #[pyo3(name = "box")]
    fn box_(
        cells: &Bound<'_, PyAny>,
        cell_size: &Bound<'_, PyAny>,
        origin: Option<&Bound<'_, PyAny>>,
        split: u8,
    ) -> PyResult<Self> {
        let py = cells.py();
        let table = PyDict::new(py);
        table.set_item("kind", "box")?;
        table.set_item("cells", cells)?;
        table.set_item("cell_size", cell_size)?;
        table.set_item("origin", origin)?;
        table.set_item("split", split)?;
        Self::from_table(&table, Path::new("."))
    }

    /// Reads a tet mesh file: TetGen (`.node` + `.ele`), Gmsh `.msh` (2.2/4.1, ASCII or
    /// binary), VTK XML `.vtu`, legacy `.vtk`, Medit `.mesh`; `kind` (`"tetgen"`, `"gmsh"`,
    /// `"vtu"`, `"vtk"`, `"medit"`) overrides the extension. `orient = "fix"` swaps
    /// negatively oriented tets instead of refusing them. Named regions (Gmsh physical
    /// groups) are kept for `Body(fixed=[{"region": name}])`.
    #[staticmethod]
    #[pyo3(signature = (path, kind = None, orient = "check"))]
    fn load(py: Python<'_>, path: PathBuf, kind: Option<&str>, orient: &str) -> PyResult<Self> {
        let table = PyDict::new(py);
        table.set_item("kind", kind.unwrap_or("file"))?;
        table.set_item("path", &path)?;
        table.set_item("orient", orient)?;
        Self::from_table(&table, Path::new(""))
    }

    /// Fills a closed triangle surface (`.obj`, `.stl`) with tets by isosurface stuffing
    /// at lattice `spacing` (dihedral angles between 10.7° and 164.8°), as a scene's
    /// `mesh = { kind = "surface", ... }`.
    #[staticmethod]
    fn from_surface(py: Python<'_>, path: PathBuf, spacing: f64) -> PyResult<Self> {
        let table = PyDict::new(py);
        table.set_item("kind", "surface")?;
        table.set_item("path", &path)?;
        table.set_item("spacing", spacing)?;
        Self::from_table(&table, Path::new(""))
    }

    /// The vertices, `(n, 3)` float64 (a copy).
    #[getter]
    fn vertices<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        to_array(py, &self.given.mesh.positions)
    }

    /// The tets, `(m, 4)` int64 (a copy).
    #[getter]
    fn tets<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<i64>> {
        let t = &self.given.mesh.tets;
        let flat = t.iter().flatten().map(|&i| i64::from(i)).collect();
        Array2::from_shape_vec((t.len(), 4), flat)
            .expect("4 indices per tet")
            .into_pyarray(py)
    }

    #[getter]
    fn n_vertices(&self) -> usize {
        self.given.mesh.n_vertices()
    }

    #[getter]
    fn n_tets(&self) -> usize {
        self.given.mesh.n_tets()
    }

    /// Named vertex sets of the file (Gmsh physical groups): name → int64 indices.
    #[getter]
    fn regions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        for (name, v) in &self.given.regions {
            let v: Vec<i64> = v.iter().map(|&i| i64::from(i)).collect();
            d.set_item(name, v.into_pyarray(py))?;
        }
        Ok(d)
    }

    /// What loading changed or left out (skipped non-tet cells, dropped vertices, swapped
    /// tets, the quality of a stuffed surface).
    #[getter]
    fn notes(&self) -> Vec<String> {
        self.notes.clone()
    }

    /// Total rest volume.
    fn volume(&self) -> f64 {
        self.given.mesh.volume()
    }

    fn __repr__(&self) -> String {
        self.describe()
    }
}

impl PyTetMesh {
    /// `TetMesh(n vertices, m tets)`.
    pub(crate) fn describe(&self) -> String {
        format!(
            "TetMesh({} vertices, {} tets)",
            self.given.mesh.n_vertices(),
            self.given.mesh.n_tets()
        )
    }

    fn from_mesh(mesh: TetMesh) -> Self {
        Self {
            given: GivenMesh {
                mesh,
                regions: Vec::new(),
            },
            notes: Vec::new(),
        }
    }

    /// The mesh a scene's `mesh = { ... }` table describes, validated by the scene code.
    fn from_table(table: &Bound<'_, PyDict>, dir: &Path) -> PyResult<Self> {
        let table = crate::table::dict_to_table(table, "mesh")?;
        let (given, notes) =
            supple_io::scene::mesh_from_table(table, "TetMesh", dir).map_err(|e| match e {
                // The keys are the arguments': `cells = [0, 1, 1]: ...`.
                SceneError::Invalid { message, .. } => {
                    PyValueError::new_err(message.replace("TetMesh.mesh.", ""))
                }
                SceneError::Mesh { source, .. } => PyOSError::new_err(source.to_string()),
                e => scene_error(e),
            })?;
        Ok(Self { given, notes })
    }
}

/// `(n, 3)` float64 from anything numpy reads as numbers (arrays of any float or int
/// dtype, nested lists); `what` names it in errors.
pub fn vectors(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<Vector3<f64>>> {
    let a: PyArrayLike2<'_, f64, AllowTypeChange> = obj.extract().map_err(|e| {
        PyValueError::new_err(format!("{what}: expected an (n, 3) array of numbers ({e})"))
    })?;
    let view = a.as_array();
    if view.ncols() != 3 {
        return Err(PyValueError::new_err(format!(
            "{what}: shape {:?}, expected (n, 3)",
            view.shape()
        )));
    }
    Ok(view
        .rows()
        .into_iter()
        .map(|r| Vector3::new(r[0], r[1], r[2]))
        .collect())
}

/// `(m, K)` vertex indices from an integer array or nested lists of ints (floats are
/// refused rather than truncated); `what` names it in errors.
pub fn index_rows<const K: usize>(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<[u32; K]>> {
    let a = integer_array(obj, what)?;
    let a: PyArrayLike2<'_, i64, AllowTypeChange> = a.extract().map_err(|e| {
        PyValueError::new_err(format!("{what}: expected an (m, {K}) integer array ({e})"))
    })?;
    let view = a.as_array();
    if view.ncols() != K {
        return Err(PyValueError::new_err(format!(
            "{what}: shape {:?}, expected (m, {K})",
            view.shape()
        )));
    }
    view.rows()
        .into_iter()
        .enumerate()
        .map(|(row, r)| {
            let mut out = [0u32; K];
            for (k, &i) in r.iter().enumerate() {
                out[k] = index(i, what, row)?;
            }
            Ok(out)
        })
        .collect()
}

/// A 1-d array of vertex indices (as for [`index_rows`]).
pub fn indices(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Vec<u32>> {
    let a = integer_array(obj, what)?;
    let a = a.call_method1("reshape", (-1,))?;
    let v: Vec<i64> = a.call_method0("tolist")?.extract()?;
    v.iter()
        .enumerate()
        .map(|(row, &i)| index(i, what, row))
        .collect()
}

fn index(i: i64, what: &str, row: usize) -> PyResult<u32> {
    u32::try_from(i).map_err(|_| {
        PyValueError::new_err(format!(
            "{what}[{row}]: index {i} is negative or above 2^32 - 1"
        ))
    })
}

/// `numpy.asarray(obj)`, refused unless its dtype is an integer kind.
fn integer_array<'py>(obj: &Bound<'py, PyAny>, what: &str) -> PyResult<Bound<'py, PyAny>> {
    let np = obj.py().import("numpy")?;
    let a = np.call_method1("asarray", (obj,))?;
    let kind: String = a.getattr("dtype")?.getattr("kind")?.extract()?;
    // An empty list has dtype float64: nothing to truncate.
    let empty: usize = a.getattr("size")?.extract()?;
    if kind != "i" && kind != "u" && empty > 0 {
        return Err(PyValueError::new_err(format!(
            "{what}: vertex indices must be integers (got dtype {})",
            a.getattr("dtype")?.str()?
        )));
    }
    a.call_method1("astype", ("int64",))
}

/// Vectors as an `(n, 3)` float64 array, in order.
pub fn to_array<'py>(py: Python<'py>, v: &[Vector3<f64>]) -> Bound<'py, PyArray2<f64>> {
    let flat: Vec<f64> = v.iter().flat_map(|p| [p.x, p.y, p.z]).collect();
    Array2::from_shape_vec((v.len(), 3), flat)
        .expect("3 coordinates per vector")
        .into_pyarray(py)
}
