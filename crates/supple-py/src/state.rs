//! `World.state()` / `World.set_state(s)` / `World.reset()`: a saved state is the record of
//! everything done to the world since it was built (steps, set positions and velocities,
//! forces, grabs, constraints, rigid cores), and restoring it rebuilds the world from its
//! scene and does the same again.
//!
//! Why a record and not a copy of the arrays: the next step depends on more than positions
//! and velocities (the warm start's velocity history, BDF and Newmark history, the step
//! control's halving level, contact and IPC state, grabs and exact constraints, rigid
//! cores), and that state is spread over the integrators and the contact pipeline. The
//! engine's step is deterministic (the same bits for the same inputs, whatever the thread
//! count), so doing the same again restores every part of it, bitwise, and stepping after a
//! restore gives the same bits as stepping on. The cost: restoring replays the steps since
//! the world was built (or, going forward from the live world's own past, only the steps
//! since then). The positions, velocities, time and step count saved with the record are
//! compared bitwise after the replay, so a state of another scene or a replay that went
//! elsewhere raises instead of passing silently.
//!
//! A state pickles as its bytes (`bytes(state)`, `supple.State(data)`): a versioned
//! little-endian encoding of the record and the saved arrays (`state/bytes.rs`).

mod bytes;

use crate::world::{Live, PyWorld};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyTuple};
use std::sync::Arc;
use supple::nalgebra::Vector3;
use supple::world::{ConstraintId, GrabId, GrabSettings, World};

/// A saved state of a `World` (`World.state()`), restored by `World.set_state(state)` bit
/// for bit: stepping after the restore gives the same numbers as stepping on from where it
/// was saved. Picklable (`bytes(state)`, `supple.State(data)`). It holds the record of what
/// was done to the world since it was built (steps, set positions and velocities, forces,
/// grabs, constraints, rigid cores) and restoring does it again on a world rebuilt from the
/// same scene, so a restore costs the steps taken up to the saved state (going forward
/// from the world's own past, only the steps in between).
#[pyclass(name = "State", module = "supple", frozen)]
pub struct PyState {
    saved: Arc<Saved>,
}

#[pymethods]
impl PyState {
    /// A state from the bytes of `bytes(state)`; `ValueError` says what is wrong with them.
    #[new]
    fn new(data: &[u8]) -> PyResult<Self> {
        let saved =
            Saved::decode(data).map_err(|e| PyValueError::new_err(format!("supple.State: {e}")))?;
        Ok(Self {
            saved: Arc::new(saved),
        })
    }

    /// Simulated time of the state (s).
    #[getter]
    fn time(&self) -> f64 {
        self.saved.time
    }

    /// Steps taken up to the state.
    #[getter]
    fn steps(&self) -> u64 {
        self.saved.steps
    }

    fn __bytes__<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.saved.encode())
    }

    /// Pickles as `State(bytes(state))`.
    fn __reduce__<'py>(slf: &Bound<'py, Self>) -> PyResult<Bound<'py, PyTuple>> {
        let py = slf.py();
        let data = slf.get().__bytes__(py);
        PyTuple::new(
            py,
            [
                slf.get_type().into_any(),
                PyTuple::new(py, [data])?.into_any(),
            ],
        )
    }

    fn __repr__(&self) -> String {
        format!(
            "State(t = {} s, {} steps, {} bodies, {} records)",
            self.saved.time,
            self.saved.steps,
            self.saved.bodies.len(),
            self.saved.log.0.len()
        )
    }
}

#[pymethods]
impl PyWorld {
    /// The world's state, to restore with `set_state` (see `supple.State`): picklable, and
    /// restored bit for bit.
    fn state(&self) -> PyResult<PyState> {
        let live = self.lock()?;
        Ok(PyState {
            saved: Arc::new(Saved::of(&live)),
        })
    }

    /// Brings the world back to `state` (from `state()` of this world or of one built from
    /// the same scene, possibly unpickled in another process), bit for bit: stepping on
    /// from here gives the numbers stepping on from the saved state gave. Costs the steps
    /// up to the state (see `supple.State`). `ValueError` for a state of other bodies;
    /// a restore that went differently raises `RuntimeError` and leaves the world as
    /// built. Frames being written (`write_frame`) go on.
    fn set_state(&self, py: Python<'_>, state: &Bound<'_, PyState>) -> PyResult<()> {
        restore(self, py, Some(state.get()))
    }

    /// Brings the world back to its state when built (t = 0, no grabs or constraints but
    /// the scene's, the integrators' history forgotten), as a new `World` of the same
    /// scene. Frames being written (`write_frame`) go on.
    fn reset(&self, py: Python<'_>) -> PyResult<()> {
        restore(self, py, None)
    }
}

/// `World.set_state(state)` (`None`: `World.reset()`), with the GIL released. A restore
/// that fails leaves the world as built (and raises).
pub(crate) fn restore(w: &PyWorld, py: Python<'_>, state: Option<&PyState>) -> PyResult<()> {
    let saved = state.map(|s| Arc::clone(&s.saved));
    let (scene, pool) = (w.scene(), w.pool());
    let rebuild = || {
        (scene.build_world_with_ids())
            .map(|(world, _, _)| world)
            .map_err(|e| Failed::Other(format!("cannot rebuild the world: {e}")))
    };
    let result = py.detach(|| {
        let mut guard = w.live.lock().map_err(|_| Failed::Poisoned)?;
        let live: &mut Live = &mut guard;
        pool.install(|| {
            let Some(saved) = &saved else {
                live.world = rebuild()?;
                live.log = Log::default();
                return Ok(());
            };
            if let Some(why) = saved.foreign_to(&live.world) {
                return Err(Failed::Foreign(why));
            }
            let rest = match live.log.rest_after(&saved.log) {
                Some(rest) => rest,
                None => {
                    live.world = rebuild()?;
                    saved.log.0.clone()
                }
            };
            live.log = saved.log.clone();
            let replayed = (rest.iter())
                .try_for_each(|c| replay(&mut live.world, c))
                .err()
                .or_else(|| saved.differs_from(&live.world));
            if let Some(why) = replayed {
                live.world = rebuild()?;
                live.log = Log::default();
                return Err(Failed::Other(format!(
                    "the state could not be restored ({why}); the world is back at its start"
                )));
            }
            Ok(())
        })
    });
    result.map_err(|e| match e {
        Failed::Foreign(why) => PyValueError::new_err(format!("set_state: {why}")),
        Failed::Other(why) => PyRuntimeError::new_err(format!("set_state: {why}")),
        Failed::Poisoned => crate::world::poisoned(),
    })
}

enum Failed {
    Foreign(String),
    Other(String),
    Poisoned,
}

/// One thing done to a world, with what it needs to be done again.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Command {
    /// `n` steps; `failed`: the last of them raised `Diverged`.
    Steps {
        n: u64,
        failed: bool,
    },
    Positions {
        body: u32,
        x: Vec<Vector3<f64>>,
    },
    Velocities {
        body: u32,
        v: Vec<Vector3<f64>>,
    },
    Forces {
        body: u32,
        vertices: Vec<u32>,
        forces: Vec<Vector3<f64>>,
    },
    Grab {
        body: u32,
        point: Vector3<f64>,
        stiffness: f64,
        damping: f64,
    },
    GrabPoint {
        body: u32,
        vertices: Vec<u32>,
        weights: Vec<f64>,
        stiffness: f64,
        damping: f64,
    },
    MoveGrab {
        id: u64,
        target: Vector3<f64>,
    },
    Release {
        id: u64,
    },
    Constrain(crate::constrain::ConstrainArgs),
    ReleaseConstraint {
        id: u64,
    },
    RigidCore {
        body: u32,
        vertices: Vec<u32>,
    },
}

/// The record of a world since it was built.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Log(pub Vec<Command>);

impl Log {
    /// Notes one step taken (merged with the steps before it).
    pub fn step(&mut self, failed: bool) {
        if let Some(Command::Steps { n, failed: last }) = self.0.last_mut() {
            if !*last {
                *n += 1;
                *last = failed;
                return;
            }
        }
        self.0.push(Command::Steps { n: 1, failed });
    }

    pub fn push(&mut self, c: Command) {
        self.0.push(c);
    }

    /// What `to` does after `self`, when `self` is a start of `to` (the live world can go
    /// forward to `to` without a rebuild): the remaining commands, the first possibly a
    /// part of a run of steps.
    pub fn rest_after(&self, to: &Log) -> Option<Vec<Command>> {
        let (a, b) = (&self.0, &to.0);
        let Some((last, head)) = a.split_last() else {
            return Some(b.clone());
        };
        if b.len() < a.len() || b[..head.len()] != *head {
            return None;
        }
        let mut rest = b[a.len()..].to_vec();
        match (last, &b[head.len()]) {
            (x, y) if x == y => {}
            (
                Command::Steps {
                    n: m,
                    failed: false,
                },
                Command::Steps { n, failed },
            ) if n > m => rest.insert(
                0,
                Command::Steps {
                    n: n - m,
                    failed: *failed,
                },
            ),
            _ => return None,
        }
        Some(rest)
    }
}

/// A body's name, positions and velocities in a saved state.
pub(crate) type SavedBody = (String, Vec<Vector3<f64>>, Vec<Vector3<f64>>);

/// A saved state: the record, and the state it leads to (compared after a replay).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Saved {
    pub log: Log,
    pub time: f64,
    pub steps: u64,
    /// Per body: name, positions, velocities.
    pub bodies: Vec<SavedBody>,
}

impl Saved {
    pub fn of(live: &Live) -> Self {
        Self {
            log: live.log.clone(),
            time: live.world.time,
            steps: live.world.steps as u64,
            bodies: (live.world.bodies.iter())
                .map(|b| (b.name.clone(), b.x.clone(), b.v.clone()))
                .collect(),
        }
    }

    /// Why `world` is not this state, bit for bit (None: it is).
    pub fn differs_from(&self, world: &World) -> Option<String> {
        if world.time.to_bits() != self.time.to_bits() || world.steps as u64 != self.steps {
            return Some(format!(
                "t = {} s after {} steps, the state has t = {} s after {} steps",
                world.time, world.steps, self.time, self.steps
            ));
        }
        for (b, (name, x, v)) in world.bodies.iter().zip(&self.bodies) {
            let same = |a: &[Vector3<f64>], b: &[Vector3<f64>]| {
                a.len() == b.len()
                    && (a.iter().flatten().zip(b.iter().flatten()))
                        .all(|(p, q)| p.to_bits() == q.to_bits())
            };
            if !same(&b.x, x) || !same(&b.v, v) {
                return Some(format!("body `{name}`: positions or velocities differ"));
            }
        }
        None
    }

    /// Why this state cannot belong to `world`'s scene (other bodies), or None.
    pub fn foreign_to(&self, world: &World) -> Option<String> {
        let theirs: Vec<_> = (self.bodies.iter())
            .map(|(n, x, _)| (n.as_str(), x.len()))
            .collect();
        let ours: Vec<_> = (world.bodies.iter())
            .map(|b| (b.name.as_str(), b.n_vertices()))
            .collect();
        (theirs != ours).then(|| {
            format!("the state is of bodies (name, vertices) {theirs:?}, this world has {ours:?}")
        })
    }
}

/// Body `body` of `world`, when `rows` fits it (a state read from bytes is checked here
/// rather than trusted).
fn arrays<'w>(
    world: &'w mut World,
    body: u32,
    rows: &[Vector3<f64>],
) -> Result<&'w mut supple::body::Body, String> {
    match world.bodies.get_mut(body as usize) {
        Some(b) if b.n_vertices() == rows.len() => Ok(b),
        _ => Err(format!("body {body} has no {} vertices", rows.len())),
    }
}

/// Does `c` to `world` again. `Err`: what went differently.
pub(crate) fn replay(world: &mut World, c: &Command) -> Result<(), String> {
    let e = |e: supple::world::WorldError| e.to_string();
    let settings = |stiffness, damping| GrabSettings { stiffness, damping };
    match c {
        Command::Steps { n, failed } => {
            for k in 0..*n {
                match world.step() {
                    Ok(()) if *failed && k + 1 == *n => {
                        return Err(format!("step {} did not diverge this time", world.steps))
                    }
                    Ok(()) => {}
                    Err(_) if *failed && k + 1 == *n => {}
                    Err(d) => return Err(format!("diverged this time: {d}")),
                }
            }
        }
        Command::Positions { body, x } => arrays(world, *body, x)?.x.clone_from(x),
        Command::Velocities { body, v } => arrays(world, *body, v)?.v.clone_from(v),
        Command::Forces {
            body,
            vertices,
            forces,
        } => world
            .apply_forces(*body as usize, vertices, forces)
            .map_err(e)?,
        Command::Grab {
            body,
            point,
            stiffness,
            damping,
        } => {
            world
                .grab(*body as usize, *point, settings(*stiffness, *damping))
                .map_err(e)?;
        }
        Command::GrabPoint {
            body,
            vertices,
            weights,
            stiffness,
            damping,
        } => {
            let s = settings(*stiffness, *damping);
            world
                .grab_point(*body as usize, vertices, weights, s)
                .map_err(e)?;
        }
        Command::MoveGrab { id, target } => world.move_grab(GrabId(*id), *target).map_err(e)?,
        Command::Release { id } => world.release(GrabId(*id)).map_err(e)?,
        Command::Constrain(args) => {
            crate::constrain::constrain(world, args).map_err(|e| e.to_string())?;
        }
        Command::ReleaseConstraint { id } => {
            world.release_constraint(ConstraintId(*id)).map_err(e)?
        }
        Command::RigidCore { body, vertices } => {
            world
                .add_rigid_core(*body as usize, vertices.clone())
                .map_err(e)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps(n: u64, failed: bool) -> Command {
        Command::Steps { n, failed }
    }

    /// A restore goes forward without a rebuild only from a start of the saved record.
    #[test]
    fn forward_only_from_a_start_of_the_record() {
        let grab = Command::Release { id: 3 };
        let mut live = Log::default();
        (0..4).for_each(|_| live.step(false));
        assert_eq!(live.0, [steps(4, false)]);
        let to = Log(vec![steps(9, false), grab.clone(), steps(2, true)]);
        assert_eq!(
            live.rest_after(&to).unwrap(),
            [steps(5, false), grab.clone(), steps(2, true)]
        );
        assert_eq!(Log::default().rest_after(&to).unwrap(), to.0);
        assert_eq!(to.rest_after(&to).unwrap(), []);
        // Ahead of the state, or elsewhere: rebuild.
        assert!(Log(vec![steps(10, false)]).rest_after(&to).is_none());
        assert!(Log(vec![steps(4, true)]).rest_after(&to).is_none());
        assert!(Log(vec![grab.clone()]).rest_after(&to).is_none());
        // A failed step ends a run: the next one starts a new entry.
        live.step(true);
        live.step(false);
        assert_eq!(live.0, [steps(5, true), steps(1, false)]);
    }
}
