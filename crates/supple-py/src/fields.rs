//! `World`'s per-element fields and surfaces as numpy arrays: stresses and volume ratios
//! (the cell fields of the frames `supple run` writes, computed by the same calls, so they
//! are the same numbers), the tets, the boundary triangles and the embedded surface, ready
//! for pyvista (`pv.PolyData(x, np.hstack([np.full((k, 1), 3), faces]).ravel())`) or
//! matplotlib (`plot_trisurf(x[:, 0], x[:, 1], faces, x[:, 2])`).

use crate::errors::value_error;
use crate::mesh::to_array;
use crate::world::{body_index, PyWorld};
use numpy::ndarray::{Array2, Array3};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArray3};
use pyo3::prelude::*;
use supple::nalgebra::{Matrix3, Vector3};

/// Index rows as an `(m, K)` int64 array.
fn index_array<'py, const K: usize>(
    py: Python<'py>,
    rows: &[[u32; K]],
) -> Bound<'py, PyArray2<i64>> {
    let flat = rows.iter().flatten().map(|&i| i64::from(i)).collect();
    Array2::from_shape_vec((rows.len(), K), flat)
        .expect("K indices per row")
        .into_pyarray(py)
}

#[pymethods]
impl PyWorld {
    /// Per-tet von Mises stress (Pa) of body `name` at its current positions, `(m,)`
    /// float64 in tet order; None where the model defines no stress. The same numbers as
    /// the `von_mises` cell field of the frames (`supple run`, `write_frame`).
    #[pyo3(signature = (name = None))]
    fn von_mises<'py>(
        &self,
        py: Python<'py>,
        name: Option<&str>,
    ) -> PyResult<Option<Bound<'py, PyArray1<f64>>>> {
        let mut w = self.lock()?;
        let i = body_index(&w, name)?;
        Ok(w.bodies[i].von_mises_stress().map(|s| s.into_pyarray(py)))
    }

    /// Per-tet Cauchy stress σ (Pa) of body `name` at its current positions, `(m, 3, 3)`
    /// float64 (`σ[e, i, j]`, symmetric); None where the model defines no stress. The von
    /// Mises stress is `√(3/2 s:s)` of its deviator `s`.
    #[pyo3(signature = (name = None))]
    fn cauchy_stress<'py>(
        &self,
        py: Python<'py>,
        name: Option<&str>,
    ) -> PyResult<Option<Bound<'py, PyArray3<f64>>>> {
        let w = self.lock()?;
        let b = &w.bodies[body_index(&w, name)?];
        let mut sigma = vec![Matrix3::zeros(); b.elems.len()];
        if !b.model.cauchy_stress(&b.elems, &b.x, &mut sigma) {
            return Ok(None);
        }
        // nalgebra is column-major; the array is row-major [e][i][j].
        let flat = (sigma.iter())
            .flat_map(|s| (0..9).map(move |k| s[(k / 3, k % 3)]))
            .collect();
        let a = Array3::from_shape_vec((sigma.len(), 3, 3), flat).expect("9 entries per tet");
        Ok(Some(a.into_pyarray(py)))
    }

    /// Per-tet current over rest volume of body `name`, `(m,)` float64 (the frames'
    /// `volume_ratio`; below 0: inverted).
    #[pyo3(signature = (name = None))]
    fn volume_ratios<'py>(
        &self,
        py: Python<'py>,
        name: Option<&str>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let w = self.lock()?;
        Ok(w.bodies[body_index(&w, name)?]
            .volume_ratios()
            .into_pyarray(py))
    }

    /// The tets of body `name` as simulated, `(m, 4)` int64 indices into `positions(name)`
    /// (the order of `von_mises`, `cauchy_stress`, `volume_ratios`).
    #[pyo3(signature = (name = None))]
    fn tets<'py>(
        &self,
        py: Python<'py>,
        name: Option<&str>,
    ) -> PyResult<Bound<'py, PyArray2<i64>>> {
        let w = self.lock()?;
        Ok(index_array(py, &w.bodies[body_index(&w, name)?].elems.tets))
    }

    /// The boundary triangles of body `name`: `(k, 3)` int64 indices into `positions(name)`,
    /// counter-clockwise seen from outside (the faces of exactly one tet). With
    /// `tets=True`, also the tet each triangle belongs to, `(k,)` int64 (to colour a face
    /// by a per-tet field): `(faces, tet)`.
    #[pyo3(signature = (name = None, *, tets = false))]
    fn boundary_faces<'py>(
        &self,
        py: Python<'py>,
        name: Option<&str>,
        tets: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        let w = self.lock()?;
        let b = &w.bodies[body_index(&w, name)?];
        let with_tets = supple::mesh::boundary_faces_with_tets(&b.elems.tets);
        let faces: Vec<[u32; 3]> = with_tets.iter().map(|(f, _)| *f).collect();
        let faces = index_array(py, &faces);
        if !tets {
            return Ok(faces.into_any());
        }
        let owner: Vec<i64> = with_tets.iter().map(|(_, t)| i64::from(*t)).collect();
        Ok((faces, owner.into_pyarray(py))
            .into_pyobject(py)?
            .into_any())
    }

    /// The embedded surface of body `name` (`Body(surface=...)`, a scene's `surface =`)
    /// placed at the body's current positions: `(points (p, 3) float64, triangles (t, 3)
    /// int64)`, as the frames' `surface_NNNNN.vtp`; None when the body has none.
    #[pyo3(signature = (name = None))]
    #[allow(clippy::type_complexity)]
    fn surface<'py>(
        &self,
        py: Python<'py>,
        name: Option<&str>,
    ) -> PyResult<Option<(Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<i64>>)>> {
        let w = self.lock()?;
        let i = body_index(&w, name)?;
        let Some(Some(s)) = self.scene().surfaces.get(i) else {
            return Ok(None);
        };
        let mut x = vec![Vector3::zeros(); s.surface.positions.len()];
        s.place(&w.bodies[i].x, &mut x).map_err(value_error)?;
        Ok(Some((
            to_array(py, &x),
            index_array(py, &s.surface.triangles),
        )))
    }
}
