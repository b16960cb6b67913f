//! `supple.World`: bodies stepped in time, arrays in and out by body name. Built from a scene
//! description (the keys of a scene file, validated by the same code) with the same builder
//! `supple run` uses, so a world from Python steps exactly as the same scene run from a file.

use crate::body::PyBody;
use crate::errors::{diverged, scene_error, value_error};
use crate::mesh::{indices as index_list, to_array, vectors};
use crate::state::{Command, Log};
use crate::table::{set, to_toml};
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::ops::{Deref, DerefMut};
use std::sync::{Mutex, MutexGuard, TryLockError};
use supple::world::{ConstraintId, Diverged, GrabId, World};
use supple_io::{GivenMesh, Scene};
use toml::{Table, Value};

/// The made-up path of scenes built from Python (errors then carry the key path alone).
pub const PY_SCENE: &str = "<python>";

/// An id by its name in the scene.
pub(crate) type Named<Id> = (String, Id);

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
    pub(crate) live: Mutex<Live>,
    /// The scene's scripted grabs by name (their ids).
    scripted: Vec<(String, GrabId)>,
    /// The scene's exact constraints by name (their ids; metrics columns of `write_frame`).
    exact: Vec<(String, ConstraintId)>,
    pool: rayon::ThreadPool,
    /// The scene table `World(...)` was built from (None: a scene file, `scene.path`), for
    /// `supple.view(world)` (view.rs).
    pub(crate) table: Option<Table>,
}

/// The world and what goes with it while it steps: the record of what was done to it
/// (`state.rs`) and the frames being written (`frames.rs`). Derefs to the world.
pub(crate) struct Live {
    pub world: World,
    pub log: Log,
    pub frames: Option<crate::frames::Frames>,
}

impl Live {
    /// Takes `n` steps, recorded, each followed by the frames' metrics tracking (as in
    /// `supple run`, the failed step too).
    fn step(&mut self, n: usize) -> Result<(), Diverged> {
        for _ in 0..n {
            let t = std::time::Instant::now();
            let result = self.world.step();
            if let Some(f) = &mut self.frames {
                f.after_step(&mut self.world, t.elapsed().as_secs_f64() * 1e3);
            }
            self.log.step(result.is_err());
            result?;
        }
        Ok(())
    }
}

impl Deref for Live {
    type Target = World;
    fn deref(&self) -> &World {
        &self.world
    }
}

impl DerefMut for Live {
    fn deref_mut(&mut self) -> &mut World {
        &mut self.world
    }
}

impl PyWorld {
    /// Builds the world of `scene` as `supple run` does.
    pub fn from_scene(scene: Scene, threads: Option<usize>) -> PyResult<Self> {
        let (world, scripted, exact) = scene.build_world_with_ids().map_err(scene_error)?;
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
            live: Mutex::new(Live {
                world,
                log: Log::default(),
                frames: None,
            }),
            scripted,
            exact,
            pool,
            table: None,
        })
    }

    /// The world, for a call made with the GIL held. While another thread holds it (a
    /// `step` running with the GIL released), the wait happens with the GIL released too:
    /// holding it here would block that thread, which takes the GIL back before it lets go
    /// of the world.
    pub(crate) fn lock(&self) -> PyResult<MutexGuard<'_, Live>> {
        Python::attach(|py| loop {
            match self.live.try_lock() {
                Ok(guard) => return Ok(guard),
                Err(TryLockError::WouldBlock) => py.detach(|| drop(self.live.lock())),
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

    /// The scene's scripted grabs and exact constraints by name (metrics columns).
    pub(crate) fn ids(&self) -> (&[Named<GrabId>], &[Named<ConstraintId>]) {
        (&self.scripted, &self.exact)
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
        let table = t.clone();
        let scene = supple_io::scene_from_table(t, PY_SCENE, &meshes).map_err(scene_error)?;
        let mut world = Self::from_scene(scene, threads)?;
        world.table = Some(table);
        Ok(world)
    }

    /// Takes `n` steps of `dt`, with the GIL released (other Python threads run meanwhile).
    /// Raises `supple.Diverged` (body, step, time, reason) at a step that fails; the world
    /// keeps the failed state.
    #[pyo3(signature = (n = 1))]
    fn step(&self, py: Python<'_>, n: usize) -> PyResult<()> {
        let (live, pool) = (&self.live, &self.pool);
        // The world is taken and let go without the GIL (see `lock`).
        let result = py.detach(|| {
            let mut guard = live.lock().map_err(|_| None)?;
            let live: &mut Live = &mut guard;
            pool.install(|| live.step(n)).map_err(Some)
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
        b.x.clone_from(&x);
        w.log.push(Command::Positions { body: i as u32, x });
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
        b.v.clone_from(&v);
        w.log.push(Command::Velocities { body: i as u32, v });
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
        w.apply_forces(i, &vertices, &forces).map_err(value_error)?;
        w.log.push(Command::Forces {
            body: i as u32,
            vertices,
            forces,
        });
        Ok(())
    }

    /// Per-vertex lumped masses (kg) of body `name`, `(n,)` float64.
    #[pyo3(signature = (name = None))]
    fn masses<'py>(
        &self,
        py: Python<'py>,
        name: Option<&str>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let w = self.lock()?;
        Ok(w.bodies[body_index(&w, name)?]
            .mass
            .lumped
            .clone()
            .into_pyarray(py))
    }

    /// Linear momentum `Σ m v` of body `name` (kg m/s), `(3,)` float64.
    #[pyo3(signature = (name = None))]
    fn momentum<'py>(
        &self,
        py: Python<'py>,
        name: Option<&str>,
    ) -> PyResult<Bound<'py, PyArray1<f64>>> {
        let w = self.lock()?;
        Ok(vec3(py, w.bodies[body_index(&w, name)?].momentum()))
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

/// A vector as a `(3,)` float64 array.
pub(crate) fn vec3(py: Python<'_>, v: supple::nalgebra::Vector3<f64>) -> Bound<'_, PyArray1<f64>> {
    vec![v.x, v.y, v.z].into_pyarray(py)
}

pub(crate) const POISONED: &str = "the world was left unusable by a panic";

pub(crate) fn poisoned() -> PyErr {
    PyRuntimeError::new_err(POISONED)
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
