//! Ctrl-C during a run: the first press asks the run to stop after the current step and
//! finish its files (last frame, `scene.pvd`, `metrics.csv`, `summary.json` with
//! `"interrupted": true`, pictures); a second press quits at once with the same status.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Once;

static REQUESTED: AtomicBool = AtomicBool::new(false);
static INSTALL: Once = Once::new();

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

/// Installs the Ctrl-C handler (once per process). When it cannot be installed the run
/// goes on without it (Ctrl-C then kills the process as usual) and a note says so.
pub fn watch() -> Interrupt {
    let mut installed = true;
    INSTALL.call_once(|| {
        let handler = || {
            if REQUESTED.swap(true, Ordering::SeqCst) {
                eprintln!("\ninterrupted again: quitting without finishing the files");
                std::process::exit(crate::EXIT_INTERRUPTED);
            }
            eprintln!(
                "\ninterrupt: stopping after the current step and finishing the files (Ctrl-C again to quit now)"
            );
        };
        if let Err(e) = ctrlc::set_handler(handler) {
            eprintln!("note: Ctrl-C will not finish the files: {e}");
            installed = false;
        }
    });
    Interrupt { installed }
}
