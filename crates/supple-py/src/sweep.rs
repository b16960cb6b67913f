//! The two native calls under `supple.sweep` (python/supple/_sweep.py): a scene file with
//! `--set KEY=VALUE` overrides resolved and validated without running it
//! ([`resolve_scene`]), and run as `supple run SCENE --set ... --out OUT` runs it
//! ([`run_scene`]). Both parse the overrides and load the scene with the code of `supple run`
//! (`supple_io::load_scene_with_overrides`, `supple_run::run_scene`), so a variant of a sweep
//! is exactly the scene that command line would run.

use crate::errors::scene_error;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::path::{Path, PathBuf};
use supple_io::scene::apply_overrides;
use supple_io::{Override, Scene};
use supple_run::{RunOptions, RunOutcome, Silent};

/// `KEY=VALUE` strings as `--set` parses them (a bare word is a string).
fn overrides(set: &[String]) -> PyResult<Vec<Override>> {
    set.iter()
        .map(|s| {
            s.parse()
                .map_err(|e| PyValueError::new_err(format!("--set {e}")))
        })
        .collect()
}

fn load(path: &Path, set: &[Override]) -> PyResult<Scene> {
    supple_io::load_scene_with_overrides(path, set).map_err(scene_error)
}

/// Validates the scene file at `path` with the `set` overrides (`"KEY=VALUE"`, as `supple
/// run --set`) applied, exactly as `supple run` would before its first step (keys, values,
/// meshes, the output size limit unless `force`), and returns the resolved scene text: the
/// file's TOML with the overrides applied, keys sorted (what a sweep hashes into a variant's
/// id). Raises `ValueError` naming the key, `OSError` for unreadable files.
#[pyfunction]
#[pyo3(signature = (path, set = Vec::new(), force = false))]
pub fn resolve_scene(path: PathBuf, set: Vec<String>, force: bool) -> PyResult<String> {
    let set = overrides(&set)?;
    let scene = load(&path, &set)?;
    supple_run::budget::check(&scene, force)
        .map_err(|e| PyValueError::new_err(format!("{}: {e:#}", path.display())))?;
    let text = std::fs::read_to_string(&path)
        .map_err(|e| PyOSError::new_err(format!("{}: {e}", path.display())))?;
    // The file parsed and took the overrides in `load`: these cannot fail now.
    let mut table: toml::Table =
        toml::from_str(&text).map_err(|e| PyValueError::new_err(e.to_string()))?;
    apply_overrides(&mut table, &set).map_err(PyValueError::new_err)?;
    toml::to_string(&table).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Runs the scene file at `path` with the `set` overrides as `supple run SCENE --set ...
/// --out OUT --quiet` does (same loader, same run, same files), on `threads` worker threads
/// (default: all cores; the results do not depend on it). Returns a dict: `outcome`
/// (`"finished"`, `"diverged"` or `"invalid"`), `reason` (why it diverged or is invalid,
/// else `None`) and `summary` (summary.json as a dict). A diverged or invalid run is a
/// result here, not an exception: a sweep keeps it as a row.
#[pyfunction]
#[pyo3(signature = (path, out, set = Vec::new(), threads = None, force = false))]
pub fn run_scene<'py>(
    py: Python<'py>,
    path: PathBuf,
    out: PathBuf,
    set: Vec<String>,
    threads: Option<usize>,
    force: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let set = overrides(&set)?;
    let scene = load(&path, &set)?;
    let mut pool = rayon::ThreadPoolBuilder::new();
    if let Some(n) = threads {
        if n == 0 {
            return Err(PyValueError::new_err("threads = 0: must be at least 1"));
        }
        pool = pool.num_threads(n);
    }
    let pool = pool
        .build()
        .map_err(|e| PyRuntimeError::new_err(format!("cannot start the worker threads: {e}")))?;
    let opts = RunOptions {
        out: Some(out),
        quiet: true,
        force,
    };
    let report = py
        .detach(|| pool.install(|| supple_run::run_scene(&scene, &opts, &mut Silent)))
        .map_err(|e| PyOSError::new_err(format!("{e:#}")))?;
    let (outcome, reason) = match &report.outcome {
        RunOutcome::Finished => ("finished", None),
        RunOutcome::Diverged(d) => ("diverged", Some(d.to_string())),
        RunOutcome::Invalid(reasons) => {
            let lines: Vec<String> = reasons.iter().map(ToString::to_string).collect();
            ("invalid", Some(lines.join("; ")))
        }
        // `Silent` never asks to stop.
        RunOutcome::Interrupted => ("interrupted", None),
    };
    let json =
        serde_json::to_string(&report.summary).map_err(|e| PyOSError::new_err(e.to_string()))?;
    let d = pyo3::types::PyDict::new(py);
    d.set_item("outcome", outcome)?;
    d.set_item("reason", reason)?;
    d.set_item(
        "summary",
        py.import("json")?.call_method1("loads", (json,))?,
    )?;
    Ok(d.into_any())
}
