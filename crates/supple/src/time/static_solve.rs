//! Static equilibrium: the positions with `f_el(x) + M g = 0` under the fixed vertices, by
//! Newton's method with load stepping and a backtracking line search on the residual (the
//! Newton core of Hauth & Straßer 2004 §6 without the time-stepping formula).
//!
//! The load `M g` is ramped in `load_steps` equal increments, `M (k/n) g` for `k = 1..n`; each
//! increment is a Newton solve of `K(x) δ = f_el(x) + M g_k` from the last equilibrium (first
//! guess: the previous increment's displacement, a linear extrapolation along the load path),
//! converged when `‖f_el + M g_k‖ ≤ tolerance · ‖M g_k‖` over the free vertices. Ramping keeps
//! each solve inside Newton's region of convergence for large deformations.
//!
//! In a world: the first step solves the equilibrium under the world's gravity (all load
//! steps) and sets the velocities to zero, so the first frame is the equilibrium. Later steps
//! keep it: each does one Newton solve at the full load from the current state, which costs
//! one residual evaluation and no iteration when nothing changed, and re-equilibrates when
//! something did (positions edited from outside); a changed gravity is ramped again from the
//! last one. External loads ([`crate::load`]) and prescribed motions ([`crate::constraint`])
//! are ramped with it: load step `k` applies them on the path from the last equilibrium's time
//! (from zero and the rest position at the first step) to the body's current
//! [`Body::time`] at fraction `k/n` ([`Body::set_path`]); `n = 1` when nothing changed.
//! `dt` is ignored. [`StepStats::substeps`] counts the load steps (Newton solves).

use super::newton::{Formula, Newton, NewtonSettings};
use super::{check_barrier, Integrator, IntegratorError, StepError, StepInputs, StepStats};
use crate::body::Body;
use nalgebra::Vector3;

/// Static equilibrium with load stepping.
#[derive(Debug)]
pub struct StaticEquilibrium {
    load_steps: u32,
    newton: Newton,
    xi: Vec<Vector3<f64>>,
    /// The gravity and the body's time of the last equilibrium solved, if any.
    solved_for: Option<(Vector3<f64>, f64)>,
}

impl StaticEquilibrium {
    /// Refuses `load_steps = 0`, invalid `settings`, and a body without fixed vertices (it has
    /// no unique equilibrium: `K` is singular on rigid motions).
    pub fn new(
        body: &Body,
        load_steps: u32,
        settings: NewtonSettings,
    ) -> Result<Self, IntegratorError> {
        if load_steps == 0 {
            return Err(IntegratorError::Setting {
                key: "static.load_steps",
                value: 0.0,
                reason: "must be at least 1",
            });
        }
        if !body.fixed.iter().any(|&f| f) && body.constraints.is_empty() {
            return Err(IntegratorError::Unsupported {
                body: body.name.clone(),
                reason:
                    "a static solve needs fixed vertices (a free body has no unique equilibrium)",
            });
        }
        Ok(Self {
            load_steps,
            newton: Newton::new(body, settings)?,
            xi: vec![Vector3::zeros(); body.n_vertices()],
            solved_for: None,
        })
    }

    /// `‖r‖` at the first guess and after each Newton iteration of the last load step.
    pub fn residual_history(&self) -> &[f64] {
        self.newton.history()
    }
}

impl Integrator for StaticEquilibrium {
    fn name(&self) -> &'static str {
        "static"
    }

    fn preconditioner_choice(&self) -> Option<crate::linalg::AutoChoice> {
        self.newton.preconditioner_choice().cloned()
    }

    fn step_with(
        &mut self,
        body: &mut Body,
        inputs: &StepInputs,
        _dt: f64,
        gravity: &Vector3<f64>,
    ) -> Result<StepStats, StepError> {
        let t = body.time;
        let (from, from_t, n) = match self.solved_for {
            Some((g, ts)) if g == *gravity && body.same_inputs(ts, t) => (g, Some(ts), 1),
            Some((g, ts)) => (g, Some(ts), self.load_steps),
            None => (Vector3::zeros(), None, self.load_steps),
        };
        let mut stats = StepStats::default();
        self.newton.u.fill(Vector3::zeros());
        for k in 1..=n {
            let mix = k as f64 / n as f64;
            let load = from + (gravity - from) * mix;
            body.set_path(from_t, mix);
            self.xi.copy_from_slice(&body.x);
            let reference = self.newton.load_norm(body, inputs.fixed, &load);
            let form = Formula {
                xi: &self.xi,
                eta: None,
                gamma: 1.0,
                gravity: load,
                reference,
                inputs: *inputs,
            };
            // `newton.u` keeps the last increment as the first guess of the next.
            self.newton.solve(body, &form).add_to(&mut stats);
            body.x.copy_from_slice(&self.newton.x);
            check_barrier(body)?;
        }
        body.v.fill(Vector3::zeros());
        self.solved_for = Some((*gravity, t));
        Ok(stats)
    }
}
