//! `supple.World`: bodies stepped in time, arrays in and out by body name. Built from a scene
//! description (the keys of a scene file, validated by the same code) with the same builder
//! `supple run` uses, so a world from Python steps exactly as the same scene run from a file.

use crate::body::PyBody;
use crate::errors::{diverged, scene_error, value_error};
use crate::mesh::{indices as index_list, to_array, vectors};
use crate::table::{set, to_toml};
use numpy::PyArray2;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::sync::{Mutex, MutexGuard, TryLockError};
use supple::world::{GrabId, GrabSettings, World};
use supple_io::{GivenMesh, Scene};
use toml::{Table, Value};

/// The made-up path of scenes built from Python (errors then carry the key path alone).
pub const PY_SCENE: &str = "<python>";

/// Bodies, gravity, the integrator and contact, stepped in time.
///
/// `World(bodies, dt=0.01, gravity=(0, -9.81, 0), integrator=None, solver=None,
/// threads=None, contact=None, obstacles=None, ...)` takes the keys of a scene file:
/// `integrator` and `solver` are a kind (`"backward_euler"`, `"cholesky"`) or a dict of the
/// section (`{"kind": "pcg", "tolerance": 1e-8}`); `contact` a dict of `[contact]`;
/// `obstacles` a list of `[[obstacle]]` dicts; `step_control`, `output` dicts; `probes`,
/// `loads`, `constraints`, `grabs` lists of dicts; `duration` and `name` are used by
/// `run()`. `threads` sets the worker threads (default: all cores; results do not depend
/// on it). A bad value raises `ValueError` naming its key.
#[pyclass(name = "World", module = "supple", frozen)]
pub struct PyWorld {
    scene: Scene,
    world: Mutex<World>,
    /// The scene's scripted grabs by name (their ids).
    scripted: Vec<(String, GrabId)>,
    pool: rayon::ThreadPool,
}

impl PyWorld {
    /// Builds the world of `scene` as `supple run` does.
    pub fn from_scene(scene: Scene, threads: Option<usize>) -> PyResult<Self> {
        let (world, scripted) = scene.build_world_and_grabs().map_err(scene_error)?;
        let mut pool = rayon::ThreadPoolBuilder::new();
        if let Some(n) = threads {
            if n == 0 {
                return Err(PyValueError::new_err("threads = 0: must be at least 1"));
            }
            pool = pool.num_threads(n);
        }
        let pool = pool.build().map_err(|e| {
            PyRuntimeError::new_err(format!("cannot start the worker threads: {e}"))
        })?;
        Ok(Self {
            scene,
            world: Mutex::new(world),
            scripted,
            pool,
        })
    }

    /// The world, for a call made with the GIL held. While another thread holds it (a
    /// `step` running with the GIL released), the wait happens with the GIL released too:
    /// holding it here would block that thread, which takes the GIL back before it lets go
    /// of the world.
    pub(crate) fn lock(&self) -> PyResult<MutexGuard<'_, World>> {
        Python::attach(|py| loop {
            match self.world.try_lock() {
                Ok(guard) => return Ok(guard),
                Err(TryLockError::WouldBlock) => py.detach(|| drop(self.world.lock())),
                Err(TryLockError::Poisoned(_)) => return Err(poisoned()),
            }
        })
    }

    pub(crate) fn scene(&self) -> &Scene {
        &self.scene
    }

    pub(crate) fn pool(&self) -> &rayon::ThreadPool {
        &self.pool
    }
}

/// The index of body `name`; `None` names the only body.
pub(crate) fn body_index(world: &World, name: Option<&str>) -> PyResult<usize> {
    match name {
        Some(n) => world
            .bodies
            .iter()
            .position(|b| b.name == n)
            .ok_or_else(|| {
                let names: Vec<_> = world.bodies.iter().map(|b| b.name.as_str()).collect();
                PyValueError::new_err(format!("no body is named {n:?} (the bodies are {names:?})"))
            }),
        None if world.bodies.len() == 1 => Ok(0),
        None => Err(PyValueError::new_err(
            "name: required when the world has several bodies",
        )),
    }
}

#[pymethods]
impl PyWorld {
    #[new]
    #[pyo3(signature = (bodies, *, dt = 0.01, gravity = None, integrator = None, solver = None,
        threads = None, contact = None, obstacles = None, step_control = None, output = None,
        probes = None, loads = None, constraints = None, grabs = None, duration = 1.0,
        name = "world"))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        bodies: Vec<PyBody>,
        dt: f64,
        gravity: Option<&Bound<'_, PyAny>>,
        integrator: Option<&Bound<'_, PyAny>>,
        solver: Option<&Bound<'_, PyAny>>,
        threads: Option<usize>,
        contact: Option<&Bound<'_, PyAny>>,
        obstacles: Option<&Bound<'_, PyAny>>,
        step_control: Option<&Bound<'_, PyAny>>,
        output: Option<&Bound<'_, PyAny>>,
        probes: Option<&Bound<'_, PyAny>>,
        loads: Option<&Bound<'_, PyAny>>,
        constraints: Option<&Bound<'_, PyAny>>,
        grabs: Option<&Bound<'_, PyAny>>,
        duration: f64,
        name: &str,
    ) -> PyResult<Self> {
        let mut t = Table::new();
        t.insert("name".into(), Value::String(name.into()));
        t.insert("dt".into(), Value::Float(dt));
        t.insert("duration".into(), Value::Float(duration));
        set(&mut t, "gravity", gravity, "")?;
        for (key, v) in [("integrator", integrator), ("solver", solver)] {
            if let Some(v) = v.filter(|v| !v.is_none()) {
                let section = match v.extract::<String>() {
                    Ok(kind) => Value::Table(Table::from_iter([(
                        "kind".to_string(),
                        Value::String(kind),
                    )])),
                    Err(_) => to_toml(v, key)?,
                };
                t.insert(key.into(), section);
            }
        }
        set(&mut t, "contact", contact, "")?;
        set(&mut t, "obstacle", obstacles, "")?;
        set(&mut t, "step_control", step_control, "")?;
        set(&mut t, "output", output, "")?;
        set(&mut t, "probe", probes, "")?;
        set(&mut t, "load", loads, "")?;
        set(&mut t, "constraint", constraints, "")?;
        set(&mut t, "grab", grabs, "")?;
        let mut sections = Vec::with_capacity(bodies.len());
        let mut meshes = Vec::with_capacity(bodies.len());
        for (i, b) in bodies.into_iter().enumerate() {
            let mut section = b.section.clone();
            let mesh = Table::from_iter([
                ("kind".to_string(), Value::String("given".into())),
                ("index".to_string(), Value::Integer(i as i64)),
            ]);
            section.insert("mesh".into(), Value::Table(mesh));
            sections.push(Value::Table(section));
            meshes.push(GivenMesh::clone(&b.mesh.given));
        }
        t.insert("body".into(), Value::Array(sections));
        let scene = supple_io::scene_from_table(t, PY_SCENE, &meshes).map_err(scene_error)?;
        Self::from_scene(scene, threads)
    }

    /// Takes `n` steps of `dt`, with the GIL released (other Python threads run meanwhile).
    /// Raises `supple.Diverged` (body, step, time, reason) at a step that fails; the world
    /// keeps the failed state.
    #[pyo3(signature = (n = 1))]
    fn step(&self, py: Python<'_>, n: usize) -> PyResult<()> {
        let (world, pool) = (&self.world, &self.pool);
        // The world is taken and let go without the GIL (see `lock`).
        let result = py.detach(|| {
            let mut guard = world.lock().map_err(|_| None)?;
            let w: &mut World = &mut guard;
            pool.install(|| (0..n).try_for_each(|_| w.step()))
                .map_err(Some)
        });
        match result {
            Ok(()) => Ok(()),
            Err(Some(d)) => Err(diverged(py, &d)),
            Err(None) => Err(poisoned()),
        }
    }

    /// Current positions of body `name` (may be omitted with one body): `(n, 3)` float64,
    /// a copy, in the mesh's vertex order.
    #[pyo3(signature = (name = None))]
    fn positions<'py>(
        &self,
        py: Python<'py>,
        name: Option<&str>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let w = self.lock()?;
        Ok(to_array(py, &w.bodies[body_index(&w, name)?].x))
    }

    /// Current velocities of body `name`: `(n, 3)` float64, a copy, in vertex order.
    #[pyo3(signature = (name = None))]
    fn velocities<'py>(
        &self,
        py: Python<'py>,
        name: Option<&str>,
    ) -> PyResult<Bound<'py, PyArray2<f64>>> {
        let w = self.lock()?;
        Ok(to_array(py, &w.bodies[body_index(&w, name)?].v))
    }

    /// Replaces the positions of body `name` (`(n, 3)`, vertex order), fixed vertices
    /// included: the next step starts from them.
    #[pyo3(signature = (name, x))]
    fn set_positions(&self, name: Option<&str>, x: &Bound<'_, PyAny>) -> PyResult<()> {
        let x = vectors(x, "positions")?;
        let mut w = self.lock()?;
        let i = body_index(&w, name)?;
        let b = &mut w.bodies[i];
        check_len(&x, b.n_vertices(), "positions")?;
        b.x = x;
        Ok(())
    }

    /// Replaces the velocities of body `name` (`(n, 3)`, vertex order).
    #[pyo3(signature = (name, v))]
    fn set_velocities(&self, name: Option<&str>, v: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = vectors(v, "velocities")?;
        let mut w = self.lock()?;
        let i = body_index(&w, name)?;
        let b = &mut w.bodies[i];
        check_len(&v, b.n_vertices(), "velocities")?;
        b.v = v;
        Ok(())
    }

    /// Adds forces (N, `(k, 3)`) on vertices `indices` (`k`) of body `name` for the next
    /// step only (calls before one step add up).
    fn apply_forces(
        &self,
        name: Option<&str>,
        indices: &Bound<'_, PyAny>,
        forces: &Bound<'_, PyAny>,
    ) -> PyResult<()> {
        let vertices = index_list(indices, "indices")?;
        let forces = vectors(forces, "forces")?;
        let mut w = self.lock()?;
        let i = body_index(&w, name)?;
        w.apply_forces(i, &vertices, &forces).map_err(value_error)
    }

    /// Per-vertex lumped masses (kg) of body `name`, `(n,)` float64.
    #[pyo3(signature = (name = None))]
    fn masses(&self, name: Option<&str>) -> PyResult<Vec<f64>> {
        let w = self.lock()?;
        Ok(w.bodies[body_index(&w, name)?].mass.lumped.clone())
    }

    /// Linear momentum `Σ m v` of body `name` (kg m/s), `(3,)`.
    #[pyo3(signature = (name = None))]
    fn momentum(&self, name: Option<&str>) -> PyResult<[f64; 3]> {
        let w = self.lock()?;
        Ok(w.bodies[body_index(&w, name)?].momentum().into())
    }

    /// Energies by body name: `{"kinetic", "elastic" (None where the model has none),
    /// "gravity" (potential relative to the rest positions)}` in J.
    fn energies<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut w = self.lock()?;
        let g = w.gravity;
        let out = PyDict::new(py);
        for b in w.bodies.iter_mut() {
            let d = PyDict::new(py);
            d.set_item("kinetic", b.kinetic_energy())?;
            d.set_item("elastic", b.elastic_energy())?;
            d.set_item("gravity", b.potential_energy(&g))?;
            out.set_item(&b.name, d)?;
        }
        Ok(out)
    }

    /// The clock and what the last step did: `time`, `steps`, `dt`, `integrator`,
    /// `retried_steps` (step control), `verdict` (why the run so far counts as failed, or
    /// None) and per body the solver's and Newton's iterations, residuals, convergence,
    /// substeps and phase times of the last step.
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let w = self.lock()?;
        let d = PyDict::new(py);
        d.set_item("time", w.time)?;
        d.set_item("steps", w.steps)?;
        d.set_item("dt", w.dt)?;
        d.set_item("integrator", w.integrator_name())?;
        d.set_item("retried_steps", w.totals().retried_steps)?;
        d.set_item("verdict", w.verdict())?;
        let bodies = PyDict::new(py);
        for (b, s) in w.bodies.iter().zip(w.last_stats()) {
            let e = PyDict::new(py);
            e.set_item("solver_iterations", s.solver_iterations)?;
            e.set_item("solver_residual", s.solver_residual)?;
            e.set_item("solver_converged", s.solver_converged)?;
            e.set_item("newton_iterations", s.newton_iterations)?;
            e.set_item("newton_residual", s.newton_residual)?;
            e.set_item("newton_converged", s.newton_converged)?;
            e.set_item("substeps", s.substeps)?;
            e.set_item("forces_s", s.forces_s)?;
            e.set_item("assembly_s", s.assembly_s)?;
            e.set_item("solve_s", s.solve_s)?;
            e.set_item("min_volume_ratio", b.min_volume_ratio())?;
            bodies.set_item(&b.name, e)?;
        }
        d.set_item("bodies", bodies)?;
        Ok(d)
    }

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
        Ok(w.grab(i, point.into(), settings).map_err(value_error)?.0)
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
        Ok(w.grab_point(i, &vertices, &weights, settings)
            .map_err(value_error)?
            .0)
    }

    /// Moves grab `id`'s target to `target`, reached at the end of the next step.
    fn move_grab(&self, id: u64, target: [f64; 3]) -> PyResult<()> {
        self.lock()?
            .move_grab(GrabId(id), target.into())
            .map_err(value_error)
    }

    /// Lets go of grab `id`.
    fn release(&self, id: u64) -> PyResult<()> {
        self.lock()?.release(GrabId(id)).map_err(value_error)
    }

    /// The force (N) grab `id`'s spring exerted on its body in the last step, or None when
    /// the grab is not live.
    fn grab_force(&self, id: u64) -> PyResult<Option<[f64; 3]>> {
        Ok(self.lock()?.grab_force(GrabId(id)).map(Into::into))
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
        use supple::constraint::{ExactConstraint, ExactKind, Interpolation, Keyframes};
        let mut w = self.lock()?;
        let i = body_index(&w, name)?;
        let at = point.into();
        let p = w.material_point(i, at).map_err(value_error)?;
        let given = [
            ("path", path.as_ref().is_some_and(|p| !p.is_empty())),
            ("normal", normal.is_some()),
            ("origin", origin.is_some()),
            ("center", center.is_some()),
            ("radius", radius.is_some()),
            ("other", other.is_some()),
            ("other_point", other_point.is_some()),
        ];
        let allowed: &[&str] = match kind {
            "point" => &["path"],
            "plane" => &["normal", "origin"],
            "sphere" => &["center", "radius"],
            "link" => &["other", "other_point"],
            _ => &[],
        };
        if let Some((key, _)) = given.iter().find(|(k, set)| *set && !allowed.contains(k)) {
            return Err(PyValueError::new_err(format!(
                "{key}: not a key of kind {kind:?}"
            )));
        }
        let kind = match kind {
            "point" => {
                let keys = match path {
                    Some(k) if !k.is_empty() => k
                        .iter()
                        .map(|k| (k[0], [k[1], k[2], k[3]].into()))
                        .collect(),
                    _ => vec![(0.0, at)],
                };
                let path = Keyframes::new(keys, Interpolation::Linear)
                    .map_err(|e| PyValueError::new_err(format!("path: {e}")))?;
                ExactKind::Point { path }
            }
            "plane" => {
                let normal = normal.ok_or_else(|| PyValueError::new_err("normal: required"))?;
                ExactKind::Plane {
                    origin: origin.map_or(at, Into::into),
                    normal: normal.into(),
                }
            }
            "sphere" => {
                let center = center
                    .ok_or_else(|| PyValueError::new_err("center: required"))?
                    .into();
                ExactKind::Sphere {
                    center,
                    radius: radius.unwrap_or_else(|| (at - center).norm()),
                }
            }
            "link" => {
                let j = match other {
                    Some(o) => body_index(&w, Some(o))?,
                    None => i,
                };
                let other = w
                    .material_point(j, other_point.map_or(at, Into::into))
                    .map_err(value_error)?;
                ExactKind::Link { other }
            }
            k => {
                return Err(PyValueError::new_err(format!(
                    "kind = {k:?}: must be \"point\", \"plane\", \"sphere\" or \"link\""
                )))
            }
        };
        let id = w
            .constrain(ExactConstraint {
                point: p,
                kind,
                release,
            })
            .map_err(value_error)?;
        Ok(id.0)
    }

    /// The force (N) exact constraint `id` exerted on its point over the last step, or None
    /// once released.
    fn constraint_force(&self, id: u64) -> PyResult<Option<[f64; 3]>> {
        Ok(self
            .lock()?
            .constraint_force(supple::world::ConstraintId(id))
            .map(Into::into))
    }

    /// Removes exact constraint `id`.
    fn release_constraint(&self, id: u64) -> PyResult<()> {
        self.lock()?
            .release_constraint(supple::world::ConstraintId(id))
            .map_err(value_error)
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
        w.add_rigid_core(i, vertices).map_err(value_error)
    }

    /// The scene's scripted grabs (`grabs=` or `[[grab]]`), name → id (live from their
    /// start to their release).
    fn scripted_grabs(&self) -> Vec<(String, u64)> {
        self.scripted
            .iter()
            .map(|(n, id)| (n.clone(), id.0))
            .collect()
    }

    /// Simulated time (s).
    #[getter]
    fn time(&self) -> PyResult<f64> {
        Ok(self.lock()?.time)
    }

    /// Steps taken.
    #[getter]
    fn steps(&self) -> PyResult<usize> {
        Ok(self.lock()?.steps)
    }

    /// The step (s).
    #[getter]
    fn dt(&self) -> PyResult<f64> {
        Ok(self.lock()?.dt)
    }

    /// The bodies' names, in order.
    #[getter]
    fn body_names(&self) -> PyResult<Vec<String>> {
        Ok(self.lock()?.bodies.iter().map(|b| b.name.clone()).collect())
    }

    /// The scene's name and duration (used by `run`).
    #[getter]
    fn name(&self) -> String {
        self.scene.name.clone()
    }

    #[getter]
    fn duration(&self) -> f64 {
        self.scene.duration
    }

    /// Runs this world's scene from its initial state as `supple run` does, writing the
    /// same files into `out` (default `out/<name>`): frames (VTU/PVD), `metrics.csv`,
    /// `summary.json`, pictures. `duration` overrides the scene's. This world is not
    /// stepped. Returns the summary as a dict; raises `supple.Diverged` when the run
    /// diverged (its files are written up to the failure) and `supple.Invalid` (with the
    /// summary) when it took every step but its end state fails the verdict.
    #[pyo3(signature = (out = None, duration = None, quiet = false, force = false))]
    fn run<'py>(
        &self,
        py: Python<'py>,
        out: Option<std::path::PathBuf>,
        duration: Option<f64>,
        quiet: bool,
        force: bool,
    ) -> PyResult<Bound<'py, PyAny>> {
        crate::run::run(self, py, out, duration, quiet, force)
    }

    fn __repr__(&self) -> PyResult<String> {
        let w = self.lock()?;
        Ok(format!(
            "World({} bodies, t = {} s, {} steps, dt = {} s)",
            w.bodies.len(),
            w.time,
            w.steps,
            w.dt
        ))
    }
}

fn poisoned() -> PyErr {
    PyRuntimeError::new_err("the world was left unusable by a panic")
}

fn check_len<T>(v: &[T], n: usize, what: &str) -> PyResult<()> {
    if v.len() == n {
        Ok(())
    } else {
        Err(PyValueError::new_err(format!(
            "{what}: {} rows, the body has {n} vertices",
            v.len()
        )))
    }
}
