//! The backtracking line search of one Newton iteration and the incremental potential it
//! judges trials on (see the notes of [`super`]).

use super::{dot, Formula, Newton, ARMIJO_C, FEASIBLE_FRACTION, MAX_CUTS};
use crate::body::Body;
use crate::fem::feasible::max_feasible_step;
use crate::linalg::par;

impl Newton {
    /// Takes `u + α δ` for the first `α = 2⁻ʲ` that passes one of the two sufficient-decrease
    /// tests (see the module notes), or the full step without a line search, or the trial
    /// with the smallest `‖r‖` when none passes but one decreases it. Returns the new `‖r‖`,
    /// or `None` (keeping `u`) when no trial decreases `‖r‖`.
    pub(super) fn line_search(
        &mut self,
        body: &mut Body,
        form: &Formula,
        norm: f64,
    ) -> Option<f64> {
        // φ'(0) = r·δ = −g·δ: the slope of the incremental potential along δ.
        let slope0 = -dot(&self.g, &self.delta, &mut self.partials);
        let mut alpha = 1.0;
        // Barrier models: never leave the set of positive element volumes (the first root of
        // any element's volume cubic along δ caps the step, see `fem::feasible`), and judge
        // trials on the incremental potential itself where it is known.
        let mut phi0 = None;
        if body.model.needs_positive_volume() {
            let t = max_feasible_step(
                &body.elems,
                &self.x,
                &self.delta,
                form.gamma,
                &mut self.tet_partials,
            );
            if t <= 0.0 {
                return None;
            }
            if t <= 1.0 {
                alpha = FEASIBLE_FRACTION * t;
            }
            phi0 = self.potential(body, form, false);
        }
        let mut best = (f64::INFINITY, 0.0);
        for cut in 0..=MAX_CUTS {
            let n_trial = self.eval_trial(body, form, alpha);
            let residual_ok = n_trial * n_trial <= (1.0 - 2.0 * ARMIJO_C * alpha) * norm * norm;
            let potential_ok = slope0 < 0.0
                && match phi0 {
                    // Armijo on Φ itself: Φ(u + α δ) ≤ Φ(u) + c α φ'(0).
                    Some(phi0) => self
                        .potential(body, form, true)
                        .is_some_and(|phi| phi <= phi0 + ARMIJO_C * alpha * slope0),
                    None => {
                        let slope = -dot(&self.g_trial, &self.delta, &mut self.partials);
                        slope <= (2.0 * ARMIJO_C - 1.0) * slope0
                    }
                };
            if !self.settings.line_search || residual_ok || potential_ok {
                self.accept();
                return Some(n_trial);
            }
            if n_trial < best.0 {
                best = (n_trial, alpha);
            }
            if cut < MAX_CUTS {
                alpha *= 0.5;
            }
        }
        // No trial decreased ‖r‖ (a non-finite ‖r‖ never does; any finite one beats NaN).
        if best.0 >= norm || !best.0.is_finite() {
            return None;
        }
        if best.1 != alpha {
            self.eval_trial(body, form, best.1);
        }
        self.accept();
        Some(best.0)
    }

    /// The incremental potential `Φ` with `∇Φ = r` at the current (`trial = false`) or trial
    /// point, where it exists: the model has an energy and the forces are conservative apart
    /// from mass-proportional damping (no `β K v`, viscosity or contact springs). Dynamic:
    /// `Φ(u) = ½ (u − η)ᵀ M (u − η) + E(ξ + γ u) − γ (M g)·u + ½ γ α uᵀ M u`; static:
    /// `Φ(u) = E(ξ + u) − (M g)·u`. Uses `mv` as scratch.
    fn potential(&mut self, body: &Body, form: &Formula, trial: bool) -> Option<f64> {
        let conservative = body.damping.beta == 0.0
            && body.viscosity.is_none()
            && !form.inputs.has_springs()
            && form.inputs.external.is_none();
        if !conservative {
            return None;
        }
        let (u, x) = if trial {
            (&self.u_trial, &self.x_trial)
        } else {
            (&self.u, &self.x)
        };
        let elastic = body.model.energy(&body.elems, x)?;
        let (lumped, fixed, g) = (&body.mass.lumped, form.inputs.fixed, form.gravity);
        let free = |i: usize| !fixed[i];
        let load = par::sum(u.len(), &mut self.partials, |i| {
            if free(i) {
                lumped[i] * g.dot(&u[i])
            } else {
                0.0
            }
        });
        Some(
            match form.eta {
                Some(eta) => {
                    par::for_each_mut(&mut self.f, |i, d| *d = u[i] - eta[i]);
                    body.mass.mul_vec(&body.elems, &self.f, &mut self.mv);
                    let (d, mv) = (&self.f, &self.mv);
                    let inertia = 0.5 * par::sum(u.len(), &mut self.partials, |i| d[i].dot(&mv[i]));
                    let mass_damping = if body.damping.alpha > 0.0 {
                        body.mass.mul_vec(&body.elems, u, &mut self.mv);
                        let mv = &self.mv;
                        0.5 * form.gamma
                            * body.damping.alpha
                            * par::sum(u.len(), &mut self.partials, |i| u[i].dot(&mv[i]))
                    } else {
                        0.0
                    };
                    inertia + elastic - form.gamma * load + mass_damping
                }
                None => elastic - load,
            } + body.loads.potential(x, &body.mesh.positions)?,
        )
    }
}
