//! Time integrators. An integrator advances one body by `dt`; it sees the body's mass,
//! constraints and [`crate::fem::ForceModel`], never which material it runs.

mod backward_euler_linearized;

pub use backward_euler_linearized::LinearizedBackwardEuler;

use crate::body::Body;
use crate::linalg::PcgSettings;
use nalgebra::Vector3;

/// Statistics of one step of one body.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StepStats {
    pub solver_iterations: usize,
    pub solver_residual: f64,
    pub solver_converged: bool,
    /// Seconds spent on frames and forces, on assembling the matrix, and in the linear solve.
    pub forces_s: f64,
    pub assembly_s: f64,
    pub solve_s: f64,
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
        pcg: PcgSettings,
        warm_start: WarmStart,
    },
}

impl IntegratorKind {
    /// Creates the integrator with workspaces sized for `body`.
    pub fn build(&self, body: &Body) -> Box<dyn Integrator> {
        match *self {
            IntegratorKind::BackwardEulerLinearized { pcg, warm_start } => {
                Box::new(LinearizedBackwardEuler::new(body, pcg, warm_start))
            }
        }
    }
}
