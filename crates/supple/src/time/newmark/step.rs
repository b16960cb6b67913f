//! One world step of [`Newmark`]: the ladder's level choice, the substeps, the halving on a
//! rejection (the module documentation of `newmark` gives the rules).

use super::{zero_fixed, Newmark, Solve, Times, MAX_WAIT};
use crate::body::Body;
use crate::clock::Instant;
use crate::linalg::CholeskyError;
use crate::time::{Integrator, StepError, StepInputs, StepStats, MAX_SUBSTEPS};
use nalgebra::Vector3;

impl Integrator for Newmark {
    fn name(&self) -> &'static str {
        "newmark"
    }

    fn explicit(&self) -> bool {
        true
    }

    fn step_with(
        &mut self,
        body: &mut Body,
        inputs: &StepInputs,
        dt: f64,
        gravity: &Vector3<f64>,
    ) -> Result<StepStats, StepError> {
        let mut stats = StepStats {
            solver_converged: true,
            ..StepStats::default()
        };
        let mut times = Times::default();
        if self.factored_for != Some(dt) {
            self.drop_factors();
            self.factored_for = Some(dt);
        }
        if inputs.fixed != self.fixed.as_slice() {
            // The held set changed (a release, a hold): the factors filter the old one, and
            // the kept acceleration was solved under it.
            self.fixed.copy_from_slice(inputs.fixed);
            self.drop_factors();
            self.synced = false;
        }
        let m = self.levels;
        // Levels whose step exceeds the stability estimate are never tried: an unstable
        // central-difference step grows its highest mode from round-off over several steps
        // before any test can see it, and by then the state is spoiled.
        let first_level = self.first_stable_level(dt);
        if self.level < first_level {
            self.level = first_level;
            self.safe_steps = 0;
        }
        if self.level > first_level && self.safe_steps >= self.wait[self.level as usize - 1] {
            self.level -= 1;
            self.safe_steps = 0;
        }
        let fresh = !self.synced || body.x != self.x || body.v != self.v;
        let mut first = true;
        loop {
            let level = self.level;
            if (1usize << level) > MAX_SUBSTEPS {
                self.synced = false;
                return Err(StepError::Bound {
                    what: "Newmark step ladder",
                    detail: format!(
                        "level {level} needs {} substeps per world step, more than {MAX_SUBSTEPS}",
                        1usize << level
                    ),
                });
            }
            let h = dt / f64::from(1u32 << level);
            let t0 = Instant::now();
            match self.ensure_factor(body, level, h) {
                Ok(f) => stats.factorized |= f,
                Err(e) => return self.fail(e, stats),
            }
            times.solve += t0.elapsed().as_secs_f64();
            if first {
                first = false;
                if fresh {
                    self.x.copy_from_slice(&body.x);
                    self.v.copy_from_slice(&body.v);
                    zero_fixed(&self.fixed, &mut self.v);
                    if let Err(e) = self.initial_acceleration(body, inputs, level, h, gravity) {
                        return self.fail(e, stats);
                    }
                    self.synced = true;
                }
                self.x0.copy_from_slice(&self.x);
                self.v0.copy_from_slice(&self.v);
                self.a0.copy_from_slice(&self.a);
            }
            let mut rejected = false;
            for _ in 0..1usize << level {
                match self.substep(body, inputs, level, h, gravity, level == m, &mut times) {
                    Ok(true) => {}
                    Ok(false) if level == m => stats.solver_converged = false,
                    Ok(false) => {
                        rejected = true;
                        break;
                    }
                    Err(e) => return self.fail(e, stats),
                }
            }
            if !rejected {
                self.usage[level as usize] += 1 << level;
                stats.substeps = 1 << level;
                stats.dt_level = level;
                self.safe_steps += 1;
                break;
            }
            // Halve the step: restart the world step one level down.
            stats.rejected_steps += 1;
            self.rejections[level as usize] += 1;
            self.wait[level as usize] = (2 * self.wait[level as usize]).min(MAX_WAIT);
            self.level += 1;
            self.safe_steps = 0;
            self.restore_checkpoint();
        }
        body.x.copy_from_slice(&self.x);
        body.v.copy_from_slice(&self.v);
        stats.forces_s = times.forces;
        stats.solve_s = times.solve;
        Ok(stats)
    }

    fn notes(&self) -> Vec<String> {
        let solve = match &self.solve {
            Solve::Diagonal => "diagonal M + ½Δt αM (lumped mass, no β, no viscosity)".to_string(),
            Solve::Cholesky { .. } => format!(
                "M + ½Δt D₀ by sparse Cholesky under the {} ordering, factored per level on first use",
                self.ordering.name()
            ),
        };
        vec![format!(
            "explicit Newmark (Zhuang & Canny eq. 7–9): steps T/2^i, i = 0..={}; {solve}; steps above {:.3e} s (the stability estimate from the Courant bound) are skipped",
            self.levels, self.stable_dt
        )]
    }

    fn counters(&self) -> Vec<(String, f64)> {
        let mut out = vec![("factorizations".to_string(), self.factorizations as f64)];
        for (i, (&u, &r)) in self.usage.iter().zip(&self.rejections).enumerate() {
            if u > 0 || r > 0 {
                out.push((format!("level_{i}_substeps"), u as f64));
                out.push((format!("level_{i}_rejected"), r as f64));
            }
        }
        out
    }
}

impl Newmark {
    /// A failed factorization or solve: the world step is not taken (the body keeps its state).
    fn fail(&mut self, e: CholeskyError, _stats: StepStats) -> Result<StepStats, StepError> {
        let message = e.to_string();
        self.last_error = Some(e);
        self.synced = false;
        Err(StepError::LinearSolve(message))
    }
}
