//! Finite elements: per-tet rest data and the parallel element loop, the slot-by-slot
//! assembly of the rotated linear stiffness, mass matrices, rotation extraction, and the force
//! models (materials).

pub mod elements;
pub mod feasible;
pub mod gathered;
pub mod mass;
pub mod material;
pub mod polar;

pub use elements::ElementSet;
pub use mass::{Mass, MassKind};
pub use material::{ForceModel, FrameTangent, Lame, MaterialError};
