//! The scene loader of the command-line programs (`supple`, `supple-lab`): a scene file with
//! the command line's `--set KEY=VALUE` overrides and `--duration`. It lives here, beside the
//! run, so that both programs depend on the libraries and never on each other.

use anyhow::Result;
use std::path::Path;
use supple_io::{Override, Scene};

/// Loads the scene at `path` with `overrides` applied to its keys (validated as the file's
/// own) and `duration`, if given, replacing its `duration`: `supple run SCENE --set dt=0.005
/// --duration 0.5` is
///
/// ```
/// let path = std::env::temp_dir().join(format!("supple-doc-load-{}.toml", std::process::id()));
/// std::fs::write(&path, r#"
/// [[body]]
/// mesh = { kind = "box", cells = [2, 1, 1], cell_size = 0.1 }
/// material = { model = "corotational" }
/// "#)?;
/// let set: supple_io::Override = "dt=0.005".parse()?;
/// let scene = supple_run::load(&path, Some(0.5), &[set])?;
/// std::fs::remove_file(&path)?;
/// assert_eq!((scene.dt, scene.duration), (0.005, 0.5));
/// // A mistyped key is an error that names it (and its likely meaning).
/// let typo: supple_io::Override = "dtt=0.005".parse()?;
/// std::fs::write(&path, "[[body]]\nmesh = { kind = \"box\", cells = [1, 1, 1], cell_size = 0.1 }\nmaterial = { model = \"linear\" }\n")?;
/// let err = supple_run::load(&path, None, &[typo]).unwrap_err();
/// std::fs::remove_file(&path)?;
/// assert!(format!("{err:#}").contains("dtt"), "{err:#}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
