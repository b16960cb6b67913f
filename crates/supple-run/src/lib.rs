//! The run behind `supple run`, as a library: [`run_scene`] simulates a scene and writes its
//! frames (VTU/PVD), `metrics.csv`, `summary.json` and pictures. The command-line program and
//! the Python module (`supple.World.run`) both call it, so both write the same files; [`load`]
//! reads a scene with the command line's `--set` overrides.
//!
//! [`frames::FrameWriter`] writes the frames of a run and of a world stepped by a script
//! (Python's `World.write_frame`), so both write the same files.
//!
//! Also here because a run and its re-rendering share them: the recording and pictures
//! ([`pictures`], [`plots`]), the metrics and summary ([`record`]), embedded surfaces
//! ([`skin`]) and the resource estimate checked before a run ([`budget`]).

pub mod budget;
#[cfg(feature = "cli")]
pub mod cli;
pub mod frames;
pub mod pictures;
pub mod plots;
pub mod record;
mod run;
mod scene;
pub mod skin;
mod summary;

pub use run::{run_scene, Progress, RunOptions, RunOutcome, RunReport, Silent};
pub use scene::load;
pub use summary::{CandidateSummary, PreconditionerSummary};
