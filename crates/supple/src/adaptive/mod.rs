//! Adaptive multiresolution soft bodies: Debunne, Desbrun, Cani & Barr 2000, "Adaptive
//! Simulation of Soft Bodies in Real-Time".
//!
//! - [`operator`]: the mixed FV/FE elasticity operator (eq. 1–7), `boundary = paper | fe`.
//! - [`force`]: the per-element force interface the level-of-detail machinery runs on.

pub mod force;
pub mod generate;
pub mod operator;
#[cfg(test)]
mod operator_tests;

pub use force::{ElementForce, LawElements};
pub use operator::{Boundary, DebunneError, DebunneOperator, DebunneParams, LameReading};
