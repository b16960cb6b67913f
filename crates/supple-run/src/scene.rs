//! The scene loader of the command-line programs (`supple`, `supple-lab`): a scene file with
//! the command line's `--set KEY=VALUE` overrides and `--duration`. It lives here, beside the
//! run, so that both programs depend on the libraries and never on each other.

use anyhow::Result;
use std::path::Path;
use supple_io::{Override, Scene};

/// Loads the scene at `path` with `overrides` applied to its keys (validated as the file's
/// own) and `duration`, if given, replacing its `duration`.
pub fn load(path: &Path, duration: Option<f64>, overrides: &[Override]) -> Result<Scene> {
    let mut s = supple_io::load_scene_with_overrides(path, overrides)?;
    if let Some(d) = duration {
        anyhow::ensure!(
            d >= 0.0 && d.is_finite(),
            "--duration {d}: must be a finite number ≥ 0"
        );
        s.duration = d;
    }
    Ok(s)
}
