//! Adaptive multiresolution soft bodies: Debunne, Desbrun, Cani & Barr 2000, "Adaptive
//! Simulation of Soft Bodies in Real-Time".
//!
//! - [`operator`]: the mixed FV/FE elasticity operator (eq. 1–7), `boundary = paper | fe`.
//! - [`force`]: the per-element force interface the level-of-detail machinery runs on; the
//!   hierarchy knows nothing else of the material.
//! - [`hierarchy`]: non-nested meshes, parent/child tets and nodes, per-level time steps
//!   (§3–4.1); [`generate`]: box levels made non-nested.
//! - [`AdaptiveBody`]: the frame loop with ghost nodes (§3.2, §4.3), split/merge (§4.2,
//!   eq. 9), the frame budget (§4.3) and the tool (§5); [`ActiveMesh`] for output.
//! - Beyond the paper ([`AdaptiveSettings`]): a variational ghost coupling, tool-driven
//!   refinement (`tool_refine`: the nodes the tool reaches split down to the finest level at
//!   once) and the interface overlap weighted by active share (`share_overlap`).

#[cfg(test)]
mod contact_tests;
mod coupling;
#[cfg(test)]
mod energy_tests;
mod fired;
pub mod force;
pub mod generate;
mod ghosts;
pub mod hierarchy;
pub mod level;
pub mod operator;
#[cfg(test)]
mod operator_tests;
#[cfg(test)]
mod order_tests;
mod output;
mod refine;
pub mod settings;
mod state;
#[cfg(test)]
mod tests;
mod tool;
mod volume;

pub use force::{ElementForce, LawElements};
pub use hierarchy::{Hierarchy, TetLink};
pub use level::Level;
pub use operator::{Boundary, DebunneError, DebunneOperator, DebunneParams, LameReading};
pub use output::{ActiveMesh, RestPoints};
pub use settings::{
    AdaptiveSettings, Budget, Coupling, Criterion, ToolOrder, ToolSide, ToolTiming,
    REACTIVE_FRACTION,
};
pub use state::{AdaptiveBody, FrameStats, LevelState, NodeState};
pub use tool::{SphereTool, ToolPath};
pub use volume::VolumeProbe;

use crate::mesh::{EmbedError, MeshError};
use thiserror::Error;

/// Why an adaptive body could not be built or stepped.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum AdaptiveError {
    #[error("the hierarchy needs at least one mesh")]
    NoLevels,
    #[error("{key} = {value}: {reason}")]
    Setting {
        key: &'static str,
        value: f64,
        reason: &'static str,
    },
    #[error(transparent)]
    Mesh(#[from] MeshError),
    #[error(transparent)]
    Embed(#[from] EmbedError),
    #[error(transparent)]
    Debunne(#[from] DebunneError),
    #[error("the simulation diverged (non-finite state) in frame {frame}")]
    Diverged { frame: u64 },
}

/// The Debunne operator with `params` for every level (a force factory for
/// [`Hierarchy::new`]).
pub fn debunne_levels(
    params: DebunneParams,
) -> impl Fn(
    &crate::mesh::TetMesh,
    &crate::fem::ElementSet,
) -> Result<Box<dyn ElementForce>, AdaptiveError> {
    move |mesh, elems| Ok(Box::new(DebunneOperator::new(params, mesh, elems)?))
}
