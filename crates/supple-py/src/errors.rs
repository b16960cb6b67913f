//! Rust errors as Python exceptions: `ValueError` for what the caller gave (with the key path
//! and reason), `OSError` for files, `supple.Diverged` for a step that failed, `supple.Invalid`
//! for a run whose end state fails its verdict.

use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use supple_io::SceneError;

pyo3::create_exception!(
    supple,
    Diverged,
    PyRuntimeError,
    "A step left a body in an unusable state (non-finite or exploded positions, inverted tets, \
     total volume out of range). Attributes: `body` (name), `step` (the step that failed), \
     `time` (s) and `reason`. The world keeps the failed state."
);

pyo3::create_exception!(
    supple,
    Invalid,
    PyRuntimeError,
    "A run took every step but its end state fails the verdict: a vertex inside another body, \
     a surface through itself, inverted tets, total volume out of range, or energy created \
     (see the README, *Exit statuses*). Attributes: `reasons` (one line per broken rule), \
     `rules` (their names) and `summary` (the run's summary dict; its files are all written)."
);

/// `supple.Diverged` carrying the library's message and its parts as attributes.
pub fn diverged(py: Python<'_>, d: &supple::world::Diverged) -> PyErr {
    let err = Diverged::new_err(d.to_string());
    let value = err.value(py);
    // Setting attributes on a fresh exception instance cannot fail short of memory.
    let _ = value.setattr("body", d.body.as_str());
    let _ = value.setattr("step", d.step);
    let _ = value.setattr("time", d.time);
    let _ = value.setattr("reason", d.reason.as_str());
    err
}

/// A scene that could not be read or validated: `OSError` for unreadable files, `ValueError`
/// (with the key path) for everything else.
pub fn scene_error(e: SceneError) -> PyErr {
    match e {
        SceneError::Io(io) => PyOSError::new_err(io.to_string()),
        SceneError::Mesh { .. } => PyOSError::new_err(e.to_string()),
        // Scenes built from Python have a made-up path: the message alone names the key.
        SceneError::Invalid {
            ref path,
            ref message,
        } if path.as_os_str() == crate::world::PY_SCENE => PyValueError::new_err(message.clone()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// Any library error the caller caused: `ValueError` with its message.
pub fn value_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}
