//! Supple from Python: the native part of the `supple` module (`supple._supple`, re-exported
//! by `python/supple/__init__.py`; built into a wheel by maturin, see `pyproject.toml`).
//!
//! Arrays go in and out as numpy arrays, copied, in the caller's vertex order: vertices and
//! positions as `(n, 3)` float64, tets as `(m, 4)` integers. Bodies and worlds are described
//! with the keys of a scene file and validated by the same code as scene files
//! ([`supple_io::scene_from_table`]), so a bad parameter raises `ValueError` with the scene's
//! key path and reason (`body[0].material.poisson = 0.5: must be below 0.5`).
//!
//! What the engine has is reachable from a world: per-element stresses and volume ratios,
//! boundary and embedded surfaces (`src/fields.rs`); frames written from a scripted loop by
//! `supple run`'s own writers (`src/frames.rs`); saved states restored bit for bit
//! (`src/state.rs`). `World`'s methods are spread over those files and `src/interact.rs`
//! (pyo3's `multiple-pymethods`).
//!
//! `supple.ipc` (`src/ipc.rs`) exposes the geometry of the IPC contact step (distances,
//! barrier, mollifier, CCD) as plain functions, for checking and for users who need it.

use pyo3::prelude::*;

mod body;
mod constrain;
mod errors;
mod fields;
mod frames;
mod interact;
mod ipc;
mod mesh;
mod run;
mod state;
mod sweep;
mod table;
mod view;
mod world;

pub use body::PyBody;
pub use errors::{Diverged, Invalid};
pub use mesh::PyTetMesh;
pub use state::PyState;
pub use world::PyWorld;

/// Loads a scene file (TOML) as a `World` ready to step, as `supple run` would build it;
/// `threads` sets the worker threads (default: all cores; results do not depend on it).
#[pyfunction]
#[pyo3(signature = (path, threads = None))]
fn load_scene(path: std::path::PathBuf, threads: Option<usize>) -> PyResult<PyWorld> {
    let scene = supple_io::load_scene(&path).map_err(errors::scene_error)?;
    PyWorld::from_scene(scene, threads)
}

/// The native module; `supple/__init__.py` re-exports it as `supple`.
#[pymodule(name = "_supple")]
fn supple_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyTetMesh>()?;
    m.add_class::<PyBody>()?;
    m.add_class::<PyWorld>()?;
    m.add_class::<PyState>()?;
    m.add_function(wrap_pyfunction!(load_scene, m)?)?;
    m.add_function(wrap_pyfunction!(frames::read_vtu, m)?)?;
    // `supple.sweep` (python/supple/_sweep.py) resolves and runs scene files through these.
    m.add_function(wrap_pyfunction!(sweep::resolve_scene, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::run_scene, m)?)?;
    // `supple.ipc` (python/supple/ipc.py re-exports it): the IPC contact geometry.
    m.add_submodule(&ipc::module(m.py())?)?;
    m.add("Diverged", m.py().get_type::<Diverged>())?;
    m.add("Invalid", m.py().get_type::<Invalid>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
