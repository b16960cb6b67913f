//! `World.run(out=...)`: the scene run of `supple run` ([`supple_run::run_scene`]), with the
//! GIL released.

use crate::errors::diverged;
use crate::world::PyWorld;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use std::path::PathBuf;
use supple_run::{run_scene, RunOptions, RunOutcome, Silent};

pub fn run<'py>(
    w: &PyWorld,
    py: Python<'py>,
    out: Option<PathBuf>,
    duration: Option<f64>,
    quiet: bool,
    force: bool,
) -> PyResult<Bound<'py, PyAny>> {
    let mut scene = w.scene().clone();
    if let Some(d) = duration {
        if !(d >= 0.0 && d.is_finite()) {
            return Err(PyValueError::new_err(format!(
                "duration = {d}: must be a finite number ≥ 0"
            )));
        }
        scene.duration = d;
    }
    let opts = RunOptions { out, quiet, force };
    let pool = w.pool();
    let report = py
        .detach(|| pool.install(|| run_scene(&scene, &opts, &mut Silent)))
        .map_err(|e| PyOSError::new_err(format!("{e:#}")))?;
    if let RunOutcome::Diverged(d) = &report.outcome {
        return Err(diverged(py, d));
    }
    let json =
        serde_json::to_string(&report.summary).map_err(|e| PyOSError::new_err(e.to_string()))?;
    let summary = py.import("json")?.call_method1("loads", (json,))?;
    if let RunOutcome::Invalid(reasons) = &report.outcome {
        let lines: Vec<String> = reasons.iter().map(ToString::to_string).collect();
        let err = crate::errors::Invalid::new_err(lines.join("; "));
        let value = err.value(py);
        value.setattr("reasons", lines)?;
        value.setattr(
            "rules",
            reasons.iter().map(|r| r.kind()).collect::<Vec<_>>(),
        )?;
        value.setattr("summary", summary)?;
        return Err(err);
    }
    Ok(summary)
}
