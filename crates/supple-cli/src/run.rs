//! `supple run`: simulate a scene and write what a person can open. The run itself is
//! [`supple_run::run_scene`] (shared with the Python module); this adds the command line, the
//! progress bar and Ctrl-C.

use anyhow::Result;
use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::path::PathBuf;
use supple_run::{run_scene, Progress, RunOptions, RunOutcome};

#[derive(Args)]
pub struct RunArgs {
    /// The scene file (TOML).
    pub scene: PathBuf,
    /// Output folder (default: out/<scene name>).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Simulated seconds, overriding the scene's `duration`.
    #[arg(long)]
    pub duration: Option<f64>,
    /// Replace a scene key, checked as the file's own (repeatable):
    /// `--set body[0].material.youngs=2e5 --set dt=0.005`.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<supple_io::Override>,
    /// Print nothing but errors (no progress bar, no closing line).
    #[arg(long, short)]
    pub quiet: bool,
    /// Run even when the output is estimated above the size limit (5 GB).
    #[arg(long)]
    pub force: bool,
}

/// The progress bar (hidden with `--quiet`; indicatif hides it when stderr is not a
/// terminal) and Ctrl-C, both from the first step on.
struct Terminal {
    quiet: bool,
    bar: ProgressBar,
    interrupt: Option<crate::interrupt::Interrupt>,
}

impl Progress for Terminal {
    fn start(&mut self, steps: usize) {
        if !self.quiet {
            self.bar =
                ProgressBar::with_draw_target(Some(steps as u64), ProgressDrawTarget::stderr());
            self.bar.set_style(
                ProgressStyle::with_template(
                    "{spinner} [{bar:40}] {pos}/{len} steps, {per_sec}, eta {eta} {msg}",
                )
                .expect("static template")
                .progress_chars("=> "),
            );
        }
        self.interrupt = Some(crate::interrupt::watch());
    }
    fn stop_requested(&mut self) -> bool {
        self.interrupt.as_ref().is_some_and(|i| i.requested())
    }
    fn step_done(&mut self) {
        self.bar.inc(1);
    }
    fn finish(&mut self) {
        self.bar.finish_and_clear();
    }
    fn pictures(&mut self, summary: &std::path::Path) {
        crate::interrupt::pictures_phase(summary);
    }
}

/// Runs the scene; returns the process exit status (0; [`crate::EXIT_DIVERGED`] when the
/// simulation diverged; [`crate::EXIT_INVALID`] when it took every step but its end state
/// fails the verdict; [`crate::EXIT_INTERRUPTED`] after Ctrl-C).
pub fn run(args: RunArgs) -> Result<i32> {
    let scene = supple_run::load(&args.scene, args.duration, &args.set)?;
    if scene.adaptive.is_some() {
        return crate::run_adaptive::run(&scene, args.out, args.quiet);
    }
    let opts = RunOptions {
        out: args.out,
        quiet: args.quiet,
        force: args.force,
    };
    let mut terminal = Terminal {
        quiet: args.quiet,
        bar: ProgressBar::hidden(),
        interrupt: None,
    };
    let report = run_scene(&scene, &opts, &mut terminal)?;
    Ok(match report.outcome {
        RunOutcome::Finished => 0,
        RunOutcome::Diverged(_) => crate::EXIT_DIVERGED,
        RunOutcome::Invalid(_) => crate::EXIT_INVALID,
        RunOutcome::Interrupted => crate::EXIT_INTERRUPTED,
    })
}
