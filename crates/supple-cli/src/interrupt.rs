//! Ctrl-C during a run: the first press asks the run to stop after the current step and
//! finish its files (last frame, `scene.pvd`, `metrics.csv`, `summary.json` with
//! `"interrupted": true`, pictures); a second press quits at once with the same status.
//!
//! Once every step is done and `summary.json` is written (the picture phase, from
//! [`pictures_phase`]), there is no step to stop after: a first press says so and the
//! pictures are finished (the run then ends as it would have, `"interrupted": false`); a
//! second press quits without them, after setting `"interrupted": true` in `summary.json`,
//! so that the summary agrees with the exit status ([`crate::EXIT_INTERRUPTED`]).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, Once};

static REQUESTED: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();
/// `summary.json` of the run, once the picture phase has begun.
static PICTURES: Mutex<Option<PathBuf>> = Mutex::new(None);

/// Whether a stop has been asked for (see [`watch`]).
pub struct Interrupt {
    installed: bool,
}

impl Interrupt {
    /// Whether Ctrl-C (SIGINT, or SIGTERM) has been pressed since [`watch`].
    pub fn requested(&self) -> bool {
        self.installed && REQUESTED.load(Ordering::Relaxed)
    }
}

/// The steps are done and `summary` is written: Ctrl-C now concerns the pictures.
pub fn pictures_phase(summary: &Path) {
    if let Ok(mut p) = PICTURES.lock() {
        *p = Some(summary.to_path_buf());
    }
}

/// Sets `"interrupted": true` in the summary at `path` (the run is quitting before its
/// pictures are done); says so when it cannot.
fn mark_interrupted(path: &Path) {
    let marked = std::fs::read_to_string(path)
        .ok()
        .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
        .and_then(|mut v| {
            v.get_mut("interrupted")?;
            v["interrupted"] = serde_json::Value::Bool(true);
            serde_json::to_string_pretty(&v).ok()
        })
        .is_some_and(|s| std::fs::write(path, s + "\n").is_ok());
    if !marked {
        eprintln!("{}: could not set \"interrupted\": true", path.display());
    }
}

/// Installs the Ctrl-C handler (once per process). When it cannot be installed the run
/// goes on without it (Ctrl-C then kills the process as usual) and a note says so.
pub fn watch() -> Interrupt {
    let mut installed = true;
    INSTALL.call_once(|| {
        let handler = || {
            let pictures = PICTURES.lock().ok().and_then(|p| p.clone());
            let again = REQUESTED.swap(true, Ordering::SeqCst);
            match (again, pictures) {
                (true, None) => {
                    eprintln!("\ninterrupted again: quitting without finishing the files");
                    std::process::exit(crate::EXIT_INTERRUPTED);
                }
                (true, Some(summary)) => {
                    mark_interrupted(&summary);
                    eprintln!(
                        "\ninterrupted again: quitting before the pictures are done; every step's files are complete and {} says \"interrupted\": true",
                        summary.display()
                    );
                    std::process::exit(crate::EXIT_INTERRUPTED);
                }
                (false, None) => eprintln!(
                    "\ninterrupt: stopping after the current step and finishing the files (Ctrl-C again to quit now)"
                ),
                (false, Some(_)) => eprintln!(
                    "\ninterrupt: every step is done and its files are written; finishing the pictures (Ctrl-C again to quit without them)"
                ),
            }
        };
        if let Err(e) = ctrlc::set_handler(handler) {
            eprintln!("note: Ctrl-C will not finish the files: {e}");
            installed = false;
        }
    });
    Interrupt { installed }
}
