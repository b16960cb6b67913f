//! `World`'s grabs, exact constraints and rigid cores (a `#[pymethods]` block of its own;
//! see world.rs). Every change is recorded for `World.state()` (state.rs).

use crate::errors::value_error;
use crate::mesh::indices as index_list;
use crate::state::Command;
use crate::world::{body_index, vec3, PyWorld};
use numpy::PyArray1;
use pyo3::prelude::*;
use supple::world::{ConstraintId, GrabId, GrabSettings};

#[pymethods]
impl PyWorld {
    /// Grabs body `name` at the surface point nearest to `point` with a spring of
    /// `stiffness` (N/m) and `damping` (N s/m); returns the grab's id. Its target stays at
    /// the point until `move_grab`.
    #[pyo3(signature = (name, point, stiffness, damping = 0.0))]
    fn grab(
        &self,
        name: Option<&str>,
        point: [f64; 3],
        stiffness: f64,
        damping: f64,
    ) -> PyResult<u64> {
        let mut w = self.lock()?;
        let i = body_index(&w, name)?;
        let settings = GrabSettings { stiffness, damping };
        let id = w.grab(i, point.into(), settings).map_err(value_error)?;
        w.log.push(Command::Grab {
            body: i as u32,
            point: point.into(),
            stiffness,
            damping,
        });
        Ok(id.0)
    }

    /// Grabs the point `Σ weights[k] x[vertices[k]]` of body `name` (up to 4 vertices,
    /// weights summing to 1); returns the grab's id.
    #[pyo3(signature = (name, vertices, weights, stiffness, damping = 0.0))]
    fn grab_point(
        &self,
        name: Option<&str>,
        vertices: &Bound<'_, PyAny>,
        weights: Vec<f64>,
        stiffness: f64,
        damping: f64,
    ) -> PyResult<u64> {
        let vertices = index_list(vertices, "vertices")?;
        let mut w = self.lock()?;
        let i = body_index(&w, name)?;
        let settings = GrabSettings { stiffness, damping };
        let id = (w.grab_point(i, &vertices, &weights, settings)).map_err(value_error)?;
        w.log.push(Command::GrabPoint {
            body: i as u32,
            vertices,
            weights,
            stiffness,
            damping,
        });
        Ok(id.0)
    }

    /// Moves grab `id`'s target to `target`, reached at the end of the next step.
    fn move_grab(&self, id: u64, target: [f64; 3]) -> PyResult<()> {
        let mut w = self.lock()?;
        let target = target.into();
        w.move_grab(GrabId(id), target).map_err(value_error)?;
        w.log.push(Command::MoveGrab { id, target });
        Ok(())
    }

    /// Lets go of grab `id`.
    fn release(&self, id: u64) -> PyResult<()> {
        let mut w = self.lock()?;
        w.release(GrabId(id)).map_err(value_error)?;
        w.log.push(Command::Release { id });
        Ok(())
    }

    /// The force (N) grab `id`'s spring exerted on its body in the last step, or None when
    /// the grab is not live.
    fn grab_force<'py>(
        &self,
        py: Python<'py>,
        id: u64,
    ) -> PyResult<Option<Bound<'py, PyArray1<f64>>>> {
        Ok(self.lock()?.grab_force(GrabId(id)).map(|f| vec3(py, f)))
    }

    /// Adds an exact constraint (Liesenfeld & Stolfi §3.2–3.3) on the material point of body
    /// `name` at rest position `point`; returns its id. `kind`: `"point"` (fixed where it is,
    /// or dragged along `path`, a list of `(t, x, y, z)`), `"plane"` (`normal`, `origin`
    /// default the point), `"sphere"` (`center`, `radius` default the rest distance) or
    /// `"link"` (to the point `other_point`, default `point`, of body `other`, default the
    /// same). `release`: when it lets go (s). Held exactly after every step (projection) and,
    /// with RKF45, inside it.
    #[pyo3(signature = (name, point, kind = "point", *, path = None, normal = None,
        origin = None, center = None, radius = None, other = None, other_point = None,
        release = None))]
    #[allow(clippy::too_many_arguments)]
    fn constrain(
        &self,
        name: Option<&str>,
        point: [f64; 3],
        kind: &str,
        path: Option<Vec<[f64; 4]>>,
        normal: Option<[f64; 3]>,
        origin: Option<[f64; 3]>,
        center: Option<[f64; 3]>,
        radius: Option<f64>,
        other: Option<&str>,
        other_point: Option<[f64; 3]>,
        release: Option<f64>,
    ) -> PyResult<u64> {
        let mut w = self.lock()?;
        let body = body_index(&w, name)? as u32;
        // `other` only names a body for a link (other kinds refuse the key).
        let other = match other {
            Some(o) if kind == "link" => Some(body_index(&w, Some(o))? as u32),
            Some(_) => Some(body),
            None => None,
        };
        let args = crate::constrain::ConstrainArgs {
            body,
            point,
            kind: kind.to_string(),
            path,
            normal,
            origin,
            center,
            radius,
            other,
            other_point,
            release,
        };
        let id = crate::constrain::constrain(&mut w, &args)?;
        w.log.push(Command::Constrain(args));
        Ok(id.0)
    }

    /// The force (N) exact constraint `id` exerted on its point over the last step, or None
    /// once released.
    fn constraint_force<'py>(
        &self,
        py: Python<'py>,
        id: u64,
    ) -> PyResult<Option<Bound<'py, PyArray1<f64>>>> {
        let w = self.lock()?;
        Ok(w.constraint_force(ConstraintId(id)).map(|f| vec3(py, f)))
    }

    /// Removes exact constraint `id`.
    fn release_constraint(&self, id: u64) -> PyResult<()> {
        let mut w = self.lock()?;
        w.release_constraint(ConstraintId(id))
            .map_err(value_error)?;
        w.log.push(Command::ReleaseConstraint { id });
        Ok(())
    }

    /// `max |Φ|` over the exact constraints at the end of the last step (m).
    fn constraint_residual(&self) -> PyResult<f64> {
        Ok(self.lock()?.constraint_residual())
    }

    /// Makes `vertices` of body `name` a dynamic rigid core (Müller et al. §4.3–4.4: moved
    /// as one rigid body, two-way coupled with the skin); returns its index.
    fn add_rigid_core(&self, name: Option<&str>, vertices: &Bound<'_, PyAny>) -> PyResult<usize> {
        let vertices = index_list(vertices, "vertices")?;
        let mut w = self.lock()?;
        let i = body_index(&w, name)?;
        let core = w.add_rigid_core(i, vertices.clone()).map_err(value_error)?;
        w.log.push(Command::RigidCore {
            body: i as u32,
            vertices,
        });
        Ok(core)
    }

    /// The scene's scripted grabs (`grabs=` or `[[grab]]`), name → id (live from their
    /// start to their release).
    fn scripted_grabs(&self) -> Vec<(String, u64)> {
        (self.ids().0.iter())
            .map(|(n, id)| (n.clone(), id.0))
            .collect()
    }
}
