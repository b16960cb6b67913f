//! Time integrators. An integrator advances one body by `dt`; it sees the body's mass,
//! constraints and [`crate::fem::ForceModel`], never which material it runs.

mod backward_euler;
mod backward_euler_linearized;
pub(crate) mod bdf;
mod fast_corotated;
pub mod inputs;
mod newmark;
mod newton;
mod rkf45;
pub mod sliding;
mod static_solve;
mod symplectic_euler;
pub mod system;
pub mod warm_start;

pub use backward_euler::BackwardEuler;
pub use backward_euler_linearized::LinearizedBackwardEuler;
pub use bdf::Bdf;
pub use fast_corotated::FastCorotatedStep;
pub use inputs::{Anchors, BodyInputs, MovingHolds, PointSpring, StepInputs};
pub use newmark::Newmark;
pub use newton::NewtonSettings;
pub(crate) use rkf45::linked::LinkedStep;
pub use rkf45::{Rkf45, Rkf45Settings};
pub use static_solve::StaticEquilibrium;
pub use symplectic_euler::{CourantBound, SymplecticEuler, COURANT_SAFETY};
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
    /// Relative residual of the linear solve: `‖b − A x‖` over the free dofs, relative to
    /// `‖b_F − A_FH x_H‖` for CG (the right-hand side with the held dofs at their values) and
    /// to `‖b‖` for a direct solve (where it is the true one).
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
    /// Every Newton solve of the step met its tolerance (meaningful when
    /// `newton_iterations > 0`).
    pub newton_converged: bool,
    /// Internal steps taken to cover the world's `dt` (1 for a plain step).
    pub substeps: usize,
    /// Rejected trial steps (adaptive integrators, the step ladder).
    pub rejected_steps: usize,
    /// Level `i` of the last internal step `T/2^i` (the step ladder; 0 otherwise).
    pub dt_level: u32,
}

impl StepStats {
    /// True when the step's answer missed its tolerance: a Newton solve that ended far from
    /// its own (relative residual above [`NEWTON_FAILED`]), or, in a step without Newton
    /// iterations, a linear solve that missed its tolerance. A Newton solve that stalls just
    /// above a tight tolerance at round-off is not a failed step; nor is one that converged
    /// although some of its inner linear solves did not: Newton's residual is evaluated
    /// afresh from the nonlinear forces, so an inexact inner solve changes its path, not its
    /// answer. (Measured: a Liesenfeld–Stolfi tube thrown at 30 m/s with 20 ms steps has PCG
    /// end its Newton systems at relative residuals of 1–30, indefinite far from equilibrium,
    /// while every Newton solve but one reaches 1e-6; those steps were counted unconverged and
    /// failed the run.) The linear solves' own counts stay in the statistics.
    pub fn solve_failed(&self) -> bool {
        if self.newton_iterations > 0 {
            !self.newton_converged
                && self.newton_residual.partial_cmp(&NEWTON_FAILED)
                    != Some(std::cmp::Ordering::Less)
        } else {
            !self.solver_converged
        }
    }

    /// Adds the statistics of another try or part of the same world step (the step
    /// control's retries and half steps): counts and times add up, residuals keep their
    /// largest value, convergence and the ladder level are those of the latest part.
    pub fn accumulate(&mut self, other: &StepStats) {
        let first = self.substeps == 0 && self.solver_iterations == 0;
        self.solver_iterations += other.solver_iterations;
        self.solver_residual = if first {
            other.solver_residual
        } else {
            self.solver_residual.max(other.solver_residual)
        };
        self.solver_converged = other.solver_converged;
        self.factorized |= other.factorized;
        self.forces_s += other.forces_s;
        self.assembly_s += other.assembly_s;
        self.solve_s += other.solve_s;
        self.newton_iterations += other.newton_iterations;
        self.newton_residual = other.newton_residual;
        self.newton_converged = other.newton_converged;
        self.substeps += other.substeps;
        self.rejected_steps += other.rejected_steps;
        self.dt_level = other.dt_level;
    }
}

/// A Newton solve that ends with `‖r‖/‖r₀‖` above this has failed its step (see
/// [`StepStats::solve_failed`]).
pub const NEWTON_FAILED: f64 = 1e-3;

/// A step an integrator could not take: the world restores the state from before the step
/// and retries it with a smaller `dt` where it can (see [`crate::world::StepControl`]).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum StepError {
    /// The model's energy is infinite at zero volume (a barrier model such as
    /// Liesenfeld–Stolfi), and the step would leave an element with volume ≤ 0.
    #[error("element {element} would end the step with current/rest volume {ratio:.3e} (the model allows no element to reach zero volume)")]
    Inverted { element: usize, ratio: f64 },
    /// An iterative loop reached its bound before finishing the step.
    #[error("{what}: {detail}")]
    Bound { what: &'static str, detail: String },
    /// A factorization or linear solve failed outright.
    #[error("linear solve failed: {0}")]
    LinearSolve(String),
    /// A non-finite number appeared where the step cannot go on.
    #[error("non-finite {0}")]
    NonFinite(&'static str),
}

/// A time-stepping scheme for one body (holding that body's workspaces).
pub trait Integrator: Send + std::fmt::Debug {
    fn name(&self) -> &'static str;
    /// True for a scheme that steps explicitly from the step's start (its forces at the
    /// start state or at substeps after it), false for one that takes them at the step's end
    /// (implicit). Springs between body points give such a scheme their other end where it
    /// is at the start (`world/links.rs`).
    fn explicit(&self) -> bool {
        false
    }
    /// Advances `body` by `dt` under the step's `inputs` (held vertices, springs, external
    /// forces; see [`StepInputs`]). On an error the body's state is unspecified (the world
    /// restores it). Implementations read the held set from `inputs.fixed`, never from
    /// `body.fixed`.
    fn step_with(
        &mut self,
        body: &mut Body,
        inputs: &StepInputs,
        dt: f64,
        gravity: &Vector3<f64>,
    ) -> Result<StepStats, StepError>;
    /// Advances `body` by `dt` with nothing but its own fixed vertices held (a body on its
    /// own, outside a world).
    fn step(
        &mut self,
        body: &mut Body,
        dt: f64,
        gravity: &Vector3<f64>,
    ) -> Result<StepStats, StepError> {
        // The body's fixed set is lent to the inputs for the step (a move, no allocation).
        let fixed = std::mem::take(&mut body.fixed);
        let result = self.step_with(body, &StepInputs::new(&fixed), dt, gravity);
        body.fixed = fixed;
        result
    }
    /// Start-up information for the user, one line each (e.g. an explicit scheme's Courant
    /// bound, a factorization plan); the CLI prints it before the run.
    fn notes(&self) -> Vec<String> {
        Vec::new()
    }
    /// End-of-run counters as `(name, value)` pairs (factorizations, substeps per ladder
    /// level, accepted and rejected steps), cumulative since construction.
    fn counters(&self) -> Vec<(String, f64)> {
        Vec::new()
    }
    /// What `preconditioner = "auto"` chose for this body's linear solves and why (schemes
    /// whose solves run PCG with `auto`, once they have solved).
    fn preconditioner_choice(&self) -> Option<crate::linalg::AutoChoice> {
        None
    }
    /// Called before a step is taken again from a restored state (the world's step control
    /// after a failed step): schemes with history forget it, as after a change of `dt`.
    fn restart(&mut self) {}
    /// True for one-step schemes that read the held set from their inputs every step and
    /// keep no history that a step changes, so a step can be taken again from the same start
    /// state with more vertices held (the contact phase does this; see [`crate::contact`]).
    fn restartable(&self) -> bool {
        false
    }
    /// This integrator as [`Rkf45`], if it is one: the world steps bodies joined by exact links
    /// together, stage by stage, when all of them are (`time::rkf45::linked`).
    fn as_rkf45(&self) -> Option<&Rkf45> {
        None
    }
    fn as_rkf45_mut(&mut self) -> Option<&mut Rkf45> {
        None
    }
    /// True when the scheme moves held vertices itself by [`StepInputs::moving`] (their
    /// positions are then left at the step's start); otherwise the caller places them at the
    /// step's end before the step.
    fn moves_held_vertices(&self) -> bool {
        false
    }
    /// After a step with moving or sliding holds ([`StepInputs::moving`]): per vertex, the
    /// constraint impulse each of them received (N·s; see [`sliding::Sliding::reactions`]),
    /// when the scheme measured them.
    fn hold_reactions(&self) -> Option<&[Vector3<f64>]> {
        None
    }
}

/// For a barrier model ([`crate::fem::ForceModel::needs_positive_volume`]), fails when an
/// element of the body's state has volume ≤ 0.
pub(crate) fn check_barrier(body: &Body) -> Result<(), StepError> {
    if !body.model.needs_positive_volume() {
        return Ok(());
    }
    match crate::fem::feasible::first_nonpositive(&body.elems, &body.x) {
        Some((element, ratio)) => Err(StepError::Inverted { element, ratio }),
        None => Ok(()),
    }
}

/// The first guess of an implicit step's linear solve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WarmStart {
    /// Start from zero.
    Zero,
    /// Start from the current velocity.
    Velocity,
    /// Start from the linear extrapolation `2 vₙ − vₙ₋₁` of the last two velocities.
    Extrapolate,
    /// Start from the polynomial extrapolation (order 0 to 6) of the last velocities whose
    /// order predicted the last step best ([`warm_start`]). The default: 20k-tet bar
    /// 20.3 → 11.1 CG iterations per step against [`WarmStart::Extrapolate`] (EXPERIMENTS.md,
    /// issue 18, *The warm start's order*).
    #[default]
    Adaptive,
}

/// Which integrator a world uses, with its settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum IntegratorKind {
    BackwardEulerLinearized {
        /// The linear solver of each step.
        solver: LinearSolverKind,
        warm_start: WarmStart,
    },
    /// Backward Euler solved by Newton's method ([`BackwardEuler`]).
    BackwardEuler { newton: NewtonSettings },
    /// Fixed-step BDF of `order` 2 or 3 solved by Newton's method ([`Bdf`]).
    Bdf { order: u8, newton: NewtonSettings },
    /// Static equilibrium with the load ramped in `load_steps` increments ([`StaticEquilibrium`]).
    Static {
        load_steps: u32,
        newton: NewtonSettings,
    },
    /// Symplectic Euler with lumped masses ([`SymplecticEuler`]); `substeps` per world step,
    /// 0: automatic from the Courant bound.
    SymplecticEuler { substeps: u32 },
    /// Explicit Newmark with steps `dt/2^i`, `i = 0..=levels`, and `M + ½Δt D` factored per
    /// level under `ordering` ([`Newmark`]).
    Newmark {
        levels: u32,
        ordering: crate::linalg::OrderingKind,
    },
    /// Runge–Kutta–Fehlberg 4(5) ([`Rkf45`]): adaptive with tolerances `rtol`, `atol`, or
    /// `substeps > 0` fixed steps per world step.
    Rkf45 { rtol: f64, atol: f64, substeps: u32 },
}

/// The most internal steps an explicit or adaptive integrator takes within one world step;
/// a step that needs more fails with [`StepError::Bound`] (bounded work: a scene whose
/// stability limit or error control asks for more is not one to run at this `dt`).
pub const MAX_SUBSTEPS: usize = 10_000;

/// The most levels the Newmark step ladder may have (`dt/2^30` is far below any useful step).
pub const MAX_LADDER_LEVELS: u32 = 30;

/// Why an integrator could not be built for a body.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum IntegratorError {
    #[error("body `{body}`: linear solver: {source}")]
    Solver { body: String, source: SolverError },
    #[error("{key} = {value}: {reason}")]
    Setting {
        key: &'static str,
        value: f64,
        reason: &'static str,
    },
    #[error("body `{body}`: {reason}")]
    Unsupported { body: String, reason: &'static str },
}

impl IntegratorKind {
    /// Creates the integrator with workspaces sized for `body` (for a direct solver: the
    /// ordering and the symbolic factorization).
    pub fn build(&self, body: &Body) -> Result<Box<dyn Integrator>, IntegratorError> {
        // A model stepped by operator splitting (`fast_corotated`) takes the place of the
        // backward Euler integrators; the others cannot step it.
        if let Some(settings) = body.model.splitting() {
            let solver = match self {
                IntegratorKind::BackwardEulerLinearized { solver, .. } => solver,
                IntegratorKind::BackwardEuler { newton } => &newton.solver,
                _ => {
                    return Err(IntegratorError::Unsupported {
                        body: body.name.clone(),
                        reason: "model fast_corotated is stepped by its own operator-splitting backward Euler: the integrator must be backward_euler_linearized or backward_euler",
                    })
                }
            };
            let ordering = match solver {
                LinearSolverKind::Cholesky { ordering } => *ordering,
                LinearSolverKind::Pcg(_) => crate::linalg::OrderingKind::Nd,
            };
            return Ok(Box::new(FastCorotatedStep::new(body, settings, ordering)?));
        }
        let linear_solve = matches!(
            self,
            IntegratorKind::BackwardEulerLinearized { .. }
                | IntegratorKind::BackwardEuler { .. }
                | IntegratorKind::Bdf { .. }
                | IntegratorKind::Static { .. }
        );
        if body.constraints.any_partial() && !linear_solve {
            return Err(IntegratorError::Unsupported {
                body: body.name.clone(),
                reason: "per-component (partial) constraints need backward_euler_linearized, backward_euler, bdf or static",
            });
        }
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
            IntegratorKind::BackwardEuler { newton } => {
                Ok(Box::new(BackwardEuler::new(body, newton)?))
            }
            IntegratorKind::Bdf { order, newton } => Ok(Box::new(Bdf::new(body, order, newton)?)),
            IntegratorKind::Static { load_steps, newton } => {
                Ok(Box::new(StaticEquilibrium::new(body, load_steps, newton)?))
            }
            IntegratorKind::SymplecticEuler { substeps } => {
                Ok(Box::new(SymplecticEuler::new(body, substeps)))
            }
            IntegratorKind::Newmark { levels, ordering } => {
                if levels > MAX_LADDER_LEVELS {
                    return Err(IntegratorError::Setting {
                        key: "levels",
                        value: f64::from(levels),
                        reason: "must be at most 30",
                    });
                }
                let solver_error = |source| IntegratorError::Solver {
                    body: body.name.clone(),
                    source,
                };
                Ok(Box::new(
                    Newmark::new(body, levels, ordering).map_err(solver_error)?,
                ))
            }
            IntegratorKind::Rkf45 {
                rtol,
                atol,
                substeps,
            } => {
                for (key, value) in [("rtol", rtol), ("atol", atol)] {
                    if !(value.is_finite() && value >= 0.0) {
                        return Err(IntegratorError::Setting {
                            key,
                            value,
                            reason: "must be a finite number ≥ 0",
                        });
                    }
                }
                if substeps == 0 && atol <= 0.0 {
                    return Err(IntegratorError::Setting {
                        key: "atol",
                        value: atol,
                        reason: "must be above 0 for an adaptive step",
                    });
                }
                let settings = Rkf45Settings {
                    rtol,
                    atol,
                    substeps,
                };
                let integrator =
                    Rkf45::new(body, settings).map_err(|source| IntegratorError::Solver {
                        body: body.name.clone(),
                        source,
                    })?;
                Ok(Box::new(integrator))
            }
        }
    }
}
