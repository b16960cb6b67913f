//! Backward Euler with Newton's method (Hauth & Straßer 2004 §6; Baraff & Witkin 1998 solve
//! only its first Newton iteration, see [`super::LinearizedBackwardEuler`]).
//!
//! With `h = dt`, one step solves the nonlinear system
//! `M (v⁺ − v) = h f(x + h v⁺, v⁺) + h M g`, then `x⁺ = x + h v⁺`,
//! where `f(x, v) = f_el(x) − D_visc(x) v − α M v − β K(x) v` ([`super::System`]). The unknown is
//! `v⁺` (first guess `v`); the Newton matrix is `M + h D(x) + h² K(x)` (the `x`-derivative of
//! the damping forces `D(x) v` is not included). Backward Euler is L-stable and first-order
//! accurate: it damps high frequencies, which lets stiff bodies take 100 ms steps (Hauth §6).

use super::newton::{Formula, Newton, NewtonSettings, NewtonStats};
use super::{check_barrier, Integrator, IntegratorError, StepError, StepInputs, StepStats};
use crate::body::Body;
use nalgebra::Vector3;

/// Nonlinear backward Euler, one Newton solve per step.
#[derive(Debug)]
pub struct BackwardEuler {
    newton: Newton,
    xi: Vec<Vector3<f64>>,
    eta: Vec<Vector3<f64>>,
}

impl BackwardEuler {
    /// The integrator for `body` (refuses invalid `settings`; a direct solver computes its
    /// ordering and symbolic factorization here).
    pub fn new(body: &Body, settings: NewtonSettings) -> Result<Self, IntegratorError> {
        let n = body.n_vertices();
        Ok(Self {
            newton: Newton::new(body, settings)?,
            xi: vec![Vector3::zeros(); n],
            eta: vec![Vector3::zeros(); n],
        })
    }

    /// `‖r‖` at the first guess and after each Newton iteration of the last step.
    pub fn residual_history(&self) -> &[f64] {
        self.newton.history()
    }
}

impl Integrator for BackwardEuler {
    fn name(&self) -> &'static str {
        "backward_euler"
    }

    fn preconditioner_choice(&self) -> Option<crate::linalg::AutoChoice> {
        self.newton.preconditioner_choice().cloned()
    }

    fn restartable(&self) -> bool {
        true
    }

    fn step_with(
        &mut self,
        body: &mut Body,
        inputs: &StepInputs,
        h: f64,
        gravity: &Vector3<f64>,
    ) -> Result<StepStats, StepError> {
        self.xi.copy_from_slice(&body.x);
        self.eta.copy_from_slice(&body.v);
        let mut stats = StepStats::default();
        implicit_step(
            &mut self.newton,
            body,
            inputs,
            &self.xi,
            &self.eta,
            h,
            gravity,
        )
        .add_to(&mut stats);
        check_barrier(body)?;
        Ok(stats)
    }
}

/// One step of an implicit formula `x⁺ = ξ + γ v⁺`, `v⁺ = η + γ a⁺` with
/// `M a⁺ = f(x⁺, v⁺) + M g`, from the first guess `v⁺ ≈ v` (the body's velocity); writes
/// `(x⁺, v⁺)` into the body. Fixed vertices keep their position (`ξ` there) and `v = 0`.
pub(crate) fn implicit_step(
    newton: &mut Newton,
    body: &mut Body,
    inputs: &StepInputs,
    xi: &[Vector3<f64>],
    eta: &[Vector3<f64>],
    gamma: f64,
    gravity: &Vector3<f64>,
) -> NewtonStats {
    newton.u.copy_from_slice(&body.v);
    let form = Formula {
        xi,
        eta: Some(eta),
        gamma,
        gravity: *gravity,
        reference: 0.0,
        inputs: *inputs,
    };
    let stats = newton.solve(body, &form);
    body.v.copy_from_slice(&newton.u);
    body.x.copy_from_slice(&newton.x);
    stats
}
