//! # Supple: real-time simulation of deformable solids with tetrahedral finite elements
//!
//! One time step, top to bottom: [`world::World::step`] → [`time::LinearizedBackwardEuler`]
//! (the integrator) → [`body::Body`] (mass, constraints, state) → a [`fem::ForceModel`]
//! (`fem::material::{linear, corotational}`) → the element loop in [`fem::elements`] →
//! assembly into [`linalg::BlockCsr`] → [`linalg::pcg`].
//!
//! The library never prints and keeps no global state; errors are values.

pub mod body;
pub mod fem;
pub mod linalg;
pub mod mesh;
pub mod time;
pub mod world;

pub use nalgebra;
