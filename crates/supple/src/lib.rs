//! # Supple: real-time simulation of deformable solids with tetrahedral finite elements
//!
//! One time step, top to bottom: [`world::World::step`] → an integrator of [`time`] (e.g.
//! [`time::LinearizedBackwardEuler`], [`time::BackwardEuler`], [`time::Newmark`]), which sees
//! a body only through [`time::System`] (forces, mass, damping, Jacobians) → [`body::Body`]
//! (mass, constraints, state) → a [`fem::ForceModel`] (`fem::material::{linear, warped,
//! corotational, stvk, hybrid, liesenfeld_stolfi}`) and a [`fem::material::Dissipation`] →
//! the element loop in [`fem::elements`] → assembly into [`linalg::BlockCsr`] → a
//! [`linalg::LinearSolver`] (PCG or sparse Cholesky).
//!
//! The library never prints and keeps no global state; errors are values.

pub mod adaptive;
pub mod body;
pub mod clock;
pub mod constraint;
pub mod contact;
pub mod fem;
pub mod linalg;
pub mod load;
pub mod mesh;
pub mod modes;
pub mod time;
pub mod world;

pub use nalgebra;
