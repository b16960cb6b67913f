//! Backward differentiation formulas BDF2 and BDF3 with Newton's method (Hauth & Straßer 2004
//! §6 and §7.4: the liver runs BDF(3) at 30 ms; Hairer & Wanner, *Solving ODEs II*, §V.1).
//!
//! BDF(k) on `y' = F(y)` with a fixed step `h`: `y_{n+1} = Σ_j a_j y_{n−j} + b h F(y_{n+1})`,
//! applied to both halves of `y = (x, v)`:
//! `x⁺ = ξ + b h v⁺`, `v⁺ = η + b h a⁺`, `ξ = Σ a_j x_{n−j}`, `η = Σ a_j v_{n−j}`, and
//! `M a⁺ = f(x⁺, v⁺) + M g`, solved for `v⁺` by the shared Newton core with `γ = b h`:
//!
//! | k | a_0, a_1, a_2            | b      | local error              |
//! |---|--------------------------|--------|--------------------------|
//! | 1 | 1                        | 1      | `−h²/2 y''` (backward Euler) |
//! | 2 | 4/3, −1/3                | 2/3    | `−2/9 h³ y'''`           |
//! | 3 | 18/11, −9/11, 2/11       | 6/11   | `−3/22 h⁴ y⁗`            |
//!
//! Both have `R(∞) = 0`: stiff modes are damped as by backward Euler while the smooth motion
//! is integrated to order `k`. BDF2 is A-stable. BDF3 is only A(86°)-stable, and an *undamped*
//! oscillation with `0 < ωh < 1.9` grows under it (by up to 4.5 % a step near `ωh ≈ 1.2`;
//! computed from its characteristic polynomial, and seen on the clamped bar at 100 ms): a body
//! stepped by BDF3 at large `h` needs some damping on its slow modes (damping ratio ≳ 0.08
//! removes the growth for every `ωh`; Hauth's bar example carries viscosity, `dλ = 10, dμ = 1`).
//!
//! Start-up (the first steps have no history): BDF2 takes one backward Euler step (its local
//! error `O(h²)` is already the order of BDF2's global error). BDF3 needs start values with
//! error `O(h³)`: a plain backward Euler first step would leave an `O(h²)` error that BDF3
//! carries along, so its first step is backward Euler *Richardson-extrapolated*
//! (`2 y_{h/2,h/2} − y_h`: two half steps and one full step, local error `O(h³)`; its stats
//! report the three Newton solves as `substeps`), its second a BDF2 step. Measured on the
//! vibrating bar, a plain backward Euler start leaves BDF3 at order 2.0 (errors 6× larger at
//! `h = 5 ms`). The history restarts when `dt` changes, or after [`Bdf::reset`] (call it after
//! changing the body's state from outside).

use super::backward_euler::implicit_step;
use super::newton::{Newton, NewtonSettings};
use super::{check_barrier, Integrator, IntegratorError, StepError, StepInputs, StepStats};
use crate::body::Body;
use crate::linalg::par;
use nalgebra::Vector3;

/// `a_j` of BDF(k), row `k − 1` (see the module table).
pub(crate) const A: [[f64; 3]; 3] = [
    [1.0, 0.0, 0.0],
    [4.0 / 3.0, -1.0 / 3.0, 0.0],
    [18.0 / 11.0, -9.0 / 11.0, 2.0 / 11.0],
];
/// `b` of BDF(k), entry `k − 1`.
pub(crate) const B: [f64; 3] = [1.0, 2.0 / 3.0, 6.0 / 11.0];

/// Fixed-step BDF2 or BDF3.
#[derive(Debug)]
pub struct Bdf {
    order: u8,
    newton: Newton,
    /// `x_{n−1}, x_{n−2}` and `v_{n−1}, v_{n−2}` (valid: the first `history` of them).
    past_x: [Vec<Vector3<f64>>; 2],
    past_v: [Vec<Vector3<f64>>; 2],
    /// Steps of the current `dt` taken so far.
    history: usize,
    dt: f64,
    xi: Vec<Vector3<f64>>,
    eta: Vec<Vector3<f64>>,
    /// The two-half-steps result of the Richardson start of BDF3.
    half_x: Vec<Vector3<f64>>,
    half_v: Vec<Vector3<f64>>,
}

impl Bdf {
    /// BDF of `order` 2 or 3 for `body`; refuses any other order and invalid `settings`.
    pub fn new(body: &Body, order: u8, settings: NewtonSettings) -> Result<Self, IntegratorError> {
        if !(2..=3).contains(&order) {
            return Err(IntegratorError::Setting {
                key: "bdf.order",
                value: order as f64,
                reason: "must be 2 or 3",
            });
        }
        let n = body.n_vertices();
        let zero = vec![Vector3::zeros(); n];
        let start = if order == 3 { n } else { 0 };
        Ok(Self {
            order,
            newton: Newton::new(body, settings)?,
            past_x: [zero.clone(), zero.clone()],
            past_v: [zero.clone(), zero.clone()],
            history: 0,
            dt: f64::NAN,
            xi: zero.clone(),
            eta: zero,
            half_x: vec![Vector3::zeros(); start],
            half_v: vec![Vector3::zeros(); start],
        })
    }

    pub fn order(&self) -> u8 {
        self.order
    }

    /// Forgets the history: the next step starts again as at the beginning.
    pub fn reset(&mut self) {
        self.history = 0;
    }

    /// `‖r‖` at the first guess and after each Newton iteration of the last Newton solve.
    pub fn residual_history(&self) -> &[f64] {
        self.newton.history()
    }

    /// `ξ = Σ a_j x_{n−j}`, `η = Σ a_j v_{n−j}` of BDF(`k`) (fixed vertices: `x_n` and 0).
    fn combine_history(&mut self, body: &Body, fixed: &[bool], k: usize) {
        let past = (&self.past_x, &self.past_v);
        combine(
            k,
            (&body.x, &body.v),
            past,
            fixed,
            &mut self.xi,
            &mut self.eta,
        );
    }

    /// `x_{n−2} ← x_{n−1} ← x_n` (and the velocities).
    fn shift_history(&mut self, body: &Body) {
        self.past_x.swap(0, 1);
        self.past_v.swap(0, 1);
        self.past_x[0].copy_from_slice(&body.x);
        self.past_v[0].copy_from_slice(&body.v);
    }

    /// Backward Euler Richardson-extrapolated from the state in `past_*[0]` (already in the
    /// body): `y = 2 y_{h/2,h/2} − y_h`.
    fn richardson_start(
        &mut self,
        body: &mut Body,
        inputs: &StepInputs,
        h: f64,
        gravity: &Vector3<f64>,
    ) -> StepStats {
        let mut stats = StepStats::default();
        for _ in 0..2 {
            self.xi.copy_from_slice(&body.x);
            self.eta.copy_from_slice(&body.v);
            implicit_step(
                &mut self.newton,
                body,
                inputs,
                &self.xi,
                &self.eta,
                0.5 * h,
                gravity,
            )
            .add_to(&mut stats);
        }
        self.half_x.copy_from_slice(&body.x);
        self.half_v.copy_from_slice(&body.v);
        body.x.copy_from_slice(&self.past_x[0]);
        body.v.copy_from_slice(&self.past_v[0]);
        implicit_step(
            &mut self.newton,
            body,
            inputs,
            &self.past_x[0],
            &self.past_v[0],
            h,
            gravity,
        )
        .add_to(&mut stats);
        let (hx, hv, x0, fixed) = (&self.half_x, &self.half_v, &self.past_x[0], inputs.fixed);
        par::for_each_mut(&mut body.x, |i, x| {
            *x = if fixed[i] { x0[i] } else { 2.0 * hx[i] - *x }
        });
        par::for_each_mut(&mut body.v, |i, v| {
            *v = if fixed[i] {
                Vector3::zeros()
            } else {
                2.0 * hv[i] - *v
            }
        });
        stats
    }
}

impl Integrator for Bdf {
    fn name(&self) -> &'static str {
        match self.order {
            2 => "bdf2",
            _ => "bdf3",
        }
    }

    fn preconditioner_choice(&self) -> Option<crate::linalg::AutoChoice> {
        self.newton.preconditioner_choice().cloned()
    }

    fn step_with(
        &mut self,
        body: &mut Body,
        inputs: &StepInputs,
        h: f64,
        gravity: &Vector3<f64>,
    ) -> Result<StepStats, StepError> {
        if h != self.dt {
            self.history = 0;
            self.dt = h;
        }
        // The formula of this step: the order the history allows.
        let k = (self.history + 1).min(self.order as usize);
        if k == 1 {
            self.xi.copy_from_slice(&body.x);
            self.eta.copy_from_slice(&body.v);
        } else {
            self.combine_history(body, inputs.fixed, k);
        }
        self.shift_history(body);
        self.history += 1;
        if k == 1 && self.order == 3 {
            let stats = self.richardson_start(body, inputs, h, gravity);
            check_barrier(body)?;
            return Ok(stats);
        }
        let mut stats = StepStats::default();
        implicit_step(
            &mut self.newton,
            body,
            inputs,
            &self.xi,
            &self.eta,
            B[k - 1] * h,
            gravity,
        )
        .add_to(&mut stats);
        check_barrier(body)?;
        Ok(stats)
    }

    /// A retried step starts the formula again from backward Euler (the history is of the
    /// abandoned step's start).
    fn restart(&mut self) {
        self.history = 0;
    }
}

/// The two past states of one field (positions or velocities), newest first.
pub(crate) type History = [Vec<Vector3<f64>>; 2];

/// The BDF(`k`) combinations `ξ = Σ a_j x_{n−j}`, `η = Σ a_j v_{n−j}` of the current state
/// `(x, v)` and the `past` states (newest first); held vertices take `x_n` and 0. Shared with
/// the hierarchical body's fine level.
pub(crate) fn combine(
    k: usize,
    (x, v): (&[Vector3<f64>], &[Vector3<f64>]),
    (px, pv): (&History, &History),
    fixed: &[bool],
    xi: &mut [Vector3<f64>],
    eta: &mut [Vector3<f64>],
) {
    let a = A[k - 1];
    par::for_each_mut(xi, |i, xi| {
        *xi = if fixed[i] {
            x[i]
        } else {
            (1..k).fold(a[0] * x[i], |s, j| s + a[j] * px[j - 1][i])
        }
    });
    par::for_each_mut(eta, |i, eta| {
        *eta = if fixed[i] {
            Vector3::zeros()
        } else {
            (1..k).fold(a[0] * v[i], |s, j| s + a[j] * pv[j - 1][i])
        }
    });
}
