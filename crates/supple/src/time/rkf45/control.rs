//! RKF45's step-size control over one world step, written once for one body ([`super::Rkf45`])
//! and for a group of bodies joined by exact links ([`super::linked`]), which must share
//! every step size so that their stages are evaluated at the same states and times.
//!
//! The controller (Hairer, Nørsett & Wanner, *Solving ODEs I*, §II.4): a trial of size `h`
//! gives the scaled error `err`; it is accepted when `err ≤ 1`, and the next step is
//! `h · min(5, max(0.2, 0.9 err^(−1/5)))`, with no growth right after a rejection. The world's
//! `dt` is covered exactly: the last substep is shortened to end on it, and the step proposed
//! before that shortening is kept for the next world step. Bounded work: at most
//! [`MAX_SUBSTEPS`] accepted steps (so none below `dt / MAX_SUBSTEPS`) and as many rejected
//! ones per world step.

use super::super::{StepError, StepStats, MAX_SUBSTEPS};

/// Step-size controller: safety factor and the bounds of the step ratio.
const SAFETY: f64 = 0.9;
const FAC_MIN: f64 = 0.2;
const FAC_MAX: f64 = 5.0;

/// What the controller drives: trial steps from the current state, then accept or reject.
pub(super) trait Trial {
    /// One trial step of size `h` from the current state, starting `t_rel` into the world
    /// step: the scaled error norm (`0` without `control`, `∞` when a stage failed).
    fn trial(&mut self, t_rel: f64, h: f64, control: bool) -> f64;
    /// Makes the last trial's result the current state.
    fn accept(&mut self);
    /// Counts a rejected trial.
    fn reject(&mut self);
}

/// `n` fixed steps of `dt / n`, no error control (Fehlberg's 4th-order solution, for order
/// studies); a failed stage marks the step unconverged in `stats`.
pub(super) fn fixed_steps(stepper: &mut impl Trial, n: usize, dt: f64, stats: &mut StepStats) {
    let h = dt / n as f64;
    for i in 0..n {
        if !stepper.trial(i as f64 * h, h, false).is_finite() {
            stats.solver_converged = false;
        }
        stepper.accept();
    }
    stats.substeps = n;
}

/// Covers `dt` by adaptive steps starting from the proposal `h`; returns the proposal for
/// the next world step.
pub(super) fn adaptive_steps(
    stepper: &mut impl Trial,
    h: f64,
    dt: f64,
    stats: &mut StepStats,
) -> Result<f64, StepError> {
    let h_min = dt / MAX_SUBSTEPS as f64;
    let mut h = h.min(dt);
    let mut t = 0.0;
    let mut after_reject = false;
    while t < dt {
        let remaining = dt - t;
        // Shorten the last step to end on dt (and avoid a sliver step after it).
        let clamped = h >= remaining * (1.0 - 1e-12);
        let h_try = if clamped { remaining } else { h };
        let err = stepper.trial(t, h_try, true);
        let fac = if err == 0.0 {
            FAC_MAX
        } else if err.is_finite() {
            (SAFETY * err.powf(-0.2)).clamp(FAC_MIN, FAC_MAX)
        } else {
            FAC_MIN
        };
        if err > 1.0 && (h_try <= h_min || stats.rejected_steps >= MAX_SUBSTEPS) {
            return Err(StepError::Bound {
                what: "RKF45 step-size control",
                detail: format!(
                    "error {err:.3e} × tolerance at a step of {h_try:.3e} s after {} rejected trials (the smallest step allowed is dt / {MAX_SUBSTEPS} = {h_min:.3e} s)",
                    stats.rejected_steps
                ),
            });
        }
        if err <= 1.0 {
            stepper.accept();
            t = if clamped { dt } else { t + h_try };
            stats.substeps += 1;
            let grow = if after_reject { fac.min(1.0) } else { fac };
            // A shortened last step keeps the proposal it was cut from.
            if !clamped || h_try * grow > h {
                h = h_try * grow;
            }
            after_reject = false;
        } else {
            stepper.reject();
            stats.rejected_steps += 1;
            h = h_try * fac;
            after_reject = true;
        }
        h = h.max(h_min);
    }
    Ok(h)
}
