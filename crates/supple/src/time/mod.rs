//! Time integrators. An integrator advances one body by `dt`; it sees the body's mass,
//! constraints and [`crate::fem::ForceModel`], never which material it runs.

mod backward_euler_linearized;
pub mod system;

pub use backward_euler_linearized::LinearizedBackwardEuler;
pub use system::System;

use crate::body::Body;
pub use crate::linalg::LinearSolverKind;
use crate::linalg::SolverError;
use nalgebra::Vector3;

/// Statistics of one step of one body.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepStats {
    /// CG iterations (0 for a direct solve).
    pub solver_iterations: usize,
    /// Relative residual `‖b − A x‖ / ‖b‖` of the linear solve (the true one for a direct solve).
    pub solver_residual: f64,
    pub solver_converged: bool,
    /// A direct solver factored the matrix in this step (a kept factor was not reused).
    pub factorized: bool,
    /// Seconds spent on frames and forces, on assembling the matrix, and in the linear solve
    /// (with the numeric factorization when `factorized`).
    pub forces_s: f64,
    pub assembly_s: f64,
    pub solve_s: f64,
    /// Newton iterations (summed over substeps; 0 for integrators without Newton).
    pub newton_iterations: usize,
    /// Final Newton residual `‖r‖ / ‖r₀‖` (0 without Newton).
    pub newton_residual: f64,
    /// Internal steps taken to cover the world's `dt` (1 for a plain step).
    pub substeps: usize,
    /// Rejected trial steps (adaptive integrators, the step ladder).
    pub rejected_steps: usize,
    /// Level `i` of the last internal step `T/2^i` (the step ladder; 0 otherwise).
    pub dt_level: u32,
}

/// A time-stepping scheme for one body (holding that body's workspaces).
pub trait Integrator: Send + std::fmt::Debug {
    fn name(&self) -> &'static str;
    fn step(&mut self, body: &mut Body, dt: f64, gravity: &Vector3<f64>) -> StepStats;
}

/// The first guess of an implicit step's linear solve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WarmStart {
    /// Start from zero.
    Zero,
    /// Start from the current velocity.
    Velocity,
    /// Start from the linear extrapolation `2 vₙ − vₙ₋₁` of the last two velocities.
    #[default]
    Extrapolate,
}

/// Which integrator a world uses, with its settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum IntegratorKind {
    BackwardEulerLinearized {
        /// The linear solver of each step.
        solver: LinearSolverKind,
        warm_start: WarmStart,
    },
}

/// Why an integrator could not be built for a body.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IntegratorError {
    #[error("body `{body}`: linear solver: {source}")]
    Solver { body: String, source: SolverError },
}

impl IntegratorKind {
    /// Creates the integrator with workspaces sized for `body` (for a direct solver: the
    /// ordering and the symbolic factorization).
    pub fn build(&self, body: &Body) -> Result<Box<dyn Integrator>, IntegratorError> {
        match *self {
            IntegratorKind::BackwardEulerLinearized { solver, warm_start } => {
                let integrator =
                    LinearizedBackwardEuler::new(body, solver, warm_start).map_err(|source| {
                        IntegratorError::Solver {
                            body: body.name.clone(),
                            source,
                        }
                    })?;
                Ok(Box::new(integrator))
            }
        }
    }
}
