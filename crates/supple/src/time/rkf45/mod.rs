//! Runge–Kutta–Fehlberg 4(5) on `q″ = M⁻¹ F(q, q′)` with the mass factored once
//! (Liesenfeld & Stolfi 1997, §2 eq. 3, §5.2 and §8).
//!
//! Liesenfeld & Stolfi write the equations of motion as `M q″ = F` (eq. 3) with a constant,
//! consistent mass matrix (eq. 25), factored once as `M = LDLᵀ` (§5.2), so that every
//! acceleration is one back-substitution; they integrate with "the 4th order adaptive method
//! of Runge-Kutta-Fehlberg" (§8). Here the state is `y = (x, v)`, `y′ = (v, M⁻¹ f(x, v))` with
//! `f` = [`System::forces`] (elastic, viscous, Rayleigh, gravity). A consistent `M` is factored
//! once through [`LinearSolver`]'s sparse Cholesky (`LLᵀ`, equivalent to their `LDLᵀ`; AMD
//! ordering; fixed vertices filtered), then each stage is a back-substitution; a lumped
//! one is divided by. Fixed vertices have zero acceleration and velocity.
//!
//! **The scheme** (Fehlberg 1969; Hairer, Nørsett & Wanner, *Solving ODEs I*, Table II.5.1):
//! six stages `k_s = y′(y + h Σ_{j<s} a_sj k_j)` (the forces do not depend on `t`, so
//! the nodes `c_s` are not needed); the 4th-order solution
//! `y + h Σ b_s k_s` is propagated (Fehlberg's choice, the "4th order method" of the paper) and
//! the embedded 5th-order one gives the local error estimate `e = h Σ (b̂_s − b_s) k_s`.
//!
//! **Error control**: `err = max_i |e_i| / (atol + rtol · max(|y_i|, |y_i⁺|))` over the free
//! vertices' components, with positions measured as displacements from the rest shape (so a
//! mesh placed far from the origin is not judged more loosely) and velocities as they are:
//! `atol` is in metres for positions and in m/s for velocities. A step is accepted when
//! `err ≤ 1`; the next step is `h · min(5, max(0.2, 0.9 err^(−1/5)))` (the standard controller,
//! HNW I §II.4, with safety factor 0.9; no growth right after a rejection). The world's `dt` is
//! covered exactly: the last substep is shortened to end on it, and the step proposed before
//! that shortening is kept for the next world step. The first step is the smaller of `dt` and
//! the Courant bound. A trial that fails at the smallest step allowed, `dt / MAX_SUBSTEPS`,
//! fails the world step (the world then halves it). The controller is in `control.rs`,
//! shared with linked groups.
//!
//! **Exact constraints** (§3.2–3.3): the step's exact constraints on this body
//! ([`StepInputs::exact`]) enter every stage at the acceleration level, eq. 6–8 with
//! `G = Nᵀ`: `a ← a + W Nᵀ λ`, `(N W Nᵀ) λ = −(N a + ψ)`
//! ([`Projector::project_accelerations`]), with `W` the inverse lumped mass (also for a
//! consistent mass: the multiplier is then that of the lumped metric, which still gives
//! `Φ̈ = 0` exactly); the world's projection after the step removes the drift. Bodies joined
//! by exact constraints (a link between two bodies) step together as one system, sharing step
//! sizes and one acceleration projection per stage over all of them (`linked.rs`).
//!
//! With `substeps = n > 0` the integrator takes `n` equal steps per world step and no error
//! control (Fehlberg's 4th-order solution with a fixed step, for order studies).

mod control;
pub(crate) mod linked;

use super::symplectic_euler::CourantBound;
use super::system::{zero_fixed, System};
use super::{Integrator, StepError, StepInputs, StepStats};
use crate::body::Body;
use crate::clock::Instant;
use crate::constraint::exact::{Projector, StageBody};
use crate::fem::MassKind;
use crate::linalg::ordering::OrderingKind;
use crate::linalg::{par, BlockCsr, LinearSolver, LinearSolverKind, SolverError};
use control::Trial;
use nalgebra::Vector3;

/// Fehlberg's coupling coefficients `a_sj` (row `s`, `j < s`).
const A: [[f64; 5]; 6] = [
    [0.0; 5],
    [0.25, 0.0, 0.0, 0.0, 0.0],
    [3.0 / 32.0, 9.0 / 32.0, 0.0, 0.0, 0.0],
    [1932.0 / 2197.0, -7200.0 / 2197.0, 7296.0 / 2197.0, 0.0, 0.0],
    [439.0 / 216.0, -8.0, 3680.0 / 513.0, -845.0 / 4104.0, 0.0],
    [
        -8.0 / 27.0,
        2.0,
        -3544.0 / 2565.0,
        1859.0 / 4104.0,
        -11.0 / 40.0,
    ],
];
/// The node `c_s = Σ_j a_sj` of stage `s` (its time; the forces do not depend on `t`, the
/// exact constraints' paths do).
fn node(s: usize) -> f64 {
    A[s].iter().sum()
}

/// 4th-order weights `b_s` (propagated).
const B4: [f64; 6] = [
    25.0 / 216.0,
    0.0,
    1408.0 / 2565.0,
    2197.0 / 4104.0,
    -0.2,
    0.0,
];
/// `b̂_s − b_s`: 5th-order minus 4th-order weights (the error estimate).
const E: [f64; 6] = [
    1.0 / 360.0,
    0.0,
    -128.0 / 4275.0,
    -2197.0 / 75240.0,
    1.0 / 50.0,
    2.0 / 55.0,
];

/// Settings of [`Rkf45`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rkf45Settings {
    /// Relative and absolute tolerances of the local error (see the module documentation).
    pub rtol: f64,
    pub atol: f64,
    /// 0: adaptive; `n > 0`: `n` fixed steps per world step, no error control.
    pub substeps: u32,
}

/// How `M a = f` is solved.
#[derive(Debug)]
enum MassSolve {
    /// `1/m_i` (0 for a massless vertex).
    Lumped(Vec<f64>),
    /// The consistent `M`, factored on the first solve and kept.
    Consistent {
        solver: Box<LinearSolver>,
        m: BlockCsr,
        factored: bool,
    },
}

/// Runge–Kutta–Fehlberg 4(5) (see the module documentation).
#[derive(Debug)]
pub struct Rkf45 {
    pub settings: Rkf45Settings,
    mass: MassSolve,
    system: System,
    fixed: Vec<bool>,
    rest: Vec<Vector3<f64>>,
    courant_dt: f64,
    /// Proposed next step (adaptive mode), `None` before the first step.
    h: Option<f64>,
    accepted: usize,
    rejected: usize,
    /// Stage derivatives: `kx[s]` velocities, `kv[s]` accelerations.
    kx: [Vec<Vector3<f64>>; 6],
    kv: [Vec<Vector3<f64>>; 6],
    x: Vec<Vector3<f64>>,
    v: Vec<Vector3<f64>>,
    xs: Vec<Vector3<f64>>,
    vs: Vec<Vector3<f64>>,
    force: Vec<Vector3<f64>>,
    partials: Vec<f64>,
    /// Exact constraints: the projection's scratch and `1/m_i` of the lumped mass (0 on
    /// held vertices).
    projector: Projector,
    inv_w: Vec<f64>,
}

impl Rkf45 {
    /// The integrator for `body`; a consistent mass gets its Cholesky analysis here.
    pub fn new(body: &Body, settings: Rkf45Settings) -> Result<Self, SolverError> {
        let n = body.n_vertices();
        let mass = match body.mass.kind {
            MassKind::Lumped => MassSolve::Lumped(
                body.mass
                    .lumped
                    .iter()
                    .map(|&m| if m <= 0.0 { 0.0 } else { 1.0 / m })
                    .collect(),
            ),
            MassKind::Consistent => {
                let solver = LinearSolver::new(
                    &LinearSolverKind::Cholesky {
                        ordering: OrderingKind::Amd,
                    },
                    &body.elems.pattern,
                    &body.mesh.positions,
                    &body.mesh.tets,
                )?;
                let mut m = BlockCsr::zeros(body.elems.pattern.clone());
                body.mass.add_to(&mut m, 1.0);
                MassSolve::Consistent {
                    solver: Box::new(solver),
                    m,
                    factored: false,
                }
            }
        };
        let zeros = vec![Vector3::zeros(); n];
        let stages = || std::array::from_fn(|_| zeros.clone());
        Ok(Self {
            settings,
            mass,
            system: System::new(body),
            fixed: body.fixed.clone(),
            rest: body.mesh.positions.clone(),
            courant_dt: CourantBound::of(body).dt,
            h: None,
            accepted: 0,
            rejected: 0,
            kx: stages(),
            kv: stages(),
            x: zeros.clone(),
            v: zeros.clone(),
            xs: zeros.clone(),
            vs: zeros.clone(),
            force: zeros,
            partials: vec![0.0; par::n_chunks(n)],
            projector: Projector::default(),
            inv_w: vec![0.0; n],
        })
    }

    /// Accepted and rejected steps since construction.
    pub fn accepted(&self) -> usize {
        self.accepted
    }

    pub fn rejected(&self) -> usize {
        self.rejected
    }

    /// The step the controller proposes next (adaptive mode).
    pub fn proposed_step(&self) -> Option<f64> {
        self.h
    }

    /// Numeric factorizations of the mass matrix (0 or 1; 0 for a lumped mass).
    pub fn factorizations(&self) -> usize {
        match &self.mass {
            MassSolve::Lumped(_) => 0,
            MassSolve::Consistent { solver, .. } => {
                solver.cholesky().map_or(0, |c| c.stats().factorizations)
            }
        }
    }

    /// Stage `s`: `kx[s] = v_s`, `kv[s] = M⁻¹ f(x_s, v_s)` at `(x_s, v_s) = y + h Σ a_sj k_j`
    /// (before any exact constraint; false when the mass solve failed).
    fn stage(
        &mut self,
        body: &mut Body,
        inputs: &StepInputs,
        s: usize,
        h: f64,
        gravity: &Vector3<f64>,
    ) -> bool {
        let (x, v) = (&self.x, &self.v);
        let (kx, kv) = (&self.kx, &self.kv);
        let a = &A[s];
        par::for_each_mut(&mut self.xs, |i, xi| {
            let mut d = Vector3::zeros();
            for j in 0..s {
                d += a[j] * kx[j][i];
            }
            *xi = x[i] + h * d;
        });
        par::for_each_mut(&mut self.vs, |i, vi| {
            let mut d = Vector3::zeros();
            for j in 0..s {
                d += a[j] * kv[j][i];
            }
            *vi = v[i] + h * d;
        });
        self.kx[s].copy_from_slice(&self.vs);
        self.system.forces(
            body,
            inputs,
            &self.xs,
            &self.vs,
            gravity,
            true,
            &mut self.force,
        );
        let out = &mut self.kv[s];
        match &mut self.mass {
            MassSolve::Lumped(inv) => {
                let (f, inv, fixed) = (&self.force, &*inv, &self.fixed);
                par::for_each_mut(out, |i, o| {
                    *o = if fixed[i] {
                        Vector3::zeros()
                    } else {
                        inv[i] * f[i]
                    }
                });
                true
            }
            MassSolve::Consistent {
                solver,
                m,
                factored,
            } => {
                zero_fixed(&self.fixed, out);
                let stats = solver.solve(m, !*factored, &self.force, &self.fixed, out);
                *factored = true;
                stats.converged
            }
        }
    }

    /// Eq. 8 in stage `s` for the exact constraints within this body
    /// ([`StepInputs::exact`]), at the stage's time `t`.
    fn hold_stage(&mut self, inputs: &StepInputs, s: usize, t: f64) -> bool {
        if inputs.exact.is_empty() {
            return true;
        }
        let mut view = StageBody {
            x: &mut self.xs,
            v: &mut self.vs,
            inv_mass: &self.inv_w,
            a: &mut self.kv[s],
        };
        (self.projector)
            .project_accelerations(inputs.exact, &mut view, t)
            .is_ok()
    }

    /// Prepares a world step from the body's state: the held set, `(x, v)`, and `1/m` for
    /// the exact constraints (0 on held vertices).
    fn begin(&mut self, body: &Body, inputs: &StepInputs, exact: bool) {
        // The held set of this step (a consistent mass is refactored when it changes).
        self.fixed.copy_from_slice(inputs.fixed);
        self.x.copy_from_slice(&body.x);
        self.v.copy_from_slice(&body.v);
        zero_fixed(&self.fixed, &mut self.v);
        if exact {
            let (w, fixed) = (&mut self.inv_w, &self.fixed);
            for ((w, &m), &held) in w.iter_mut().zip(&body.mass.lumped).zip(fixed) {
                *w = if held || m <= 0.0 { 0.0 } else { 1.0 / m };
            }
        }
    }

    /// Makes the last trial's result `(xs, vs)` the current state.
    fn accept(&mut self) {
        std::mem::swap(&mut self.x, &mut self.xs);
        std::mem::swap(&mut self.v, &mut self.vs);
        self.accepted += 1;
    }

    /// The first step of an adaptive world step: the last proposal, else the Courant bound.
    fn first_step(&self, dt: f64) -> f64 {
        self.h.unwrap_or(dt.min(self.courant_dt))
    }

    /// The end of a trial step of size `h` whose six stages are in `(kx, kv)`: the
    /// 4th-order result into `(xs, vs)`, then the scaled error norm (`0` without error
    /// control, `∞` when a stage was not `solved`).
    fn combine(&mut self, h: f64, solved: bool, control: bool) -> f64 {
        let (x, v, kx, kv) = (&self.x, &self.v, &self.kx, &self.kv);
        par::for_each_mut(&mut self.xs, |i, xi| {
            *xi = x[i] + h * (0..6).map(|s| B4[s] * kx[s][i]).sum::<Vector3<f64>>();
        });
        par::for_each_mut(&mut self.vs, |i, vi| {
            *vi = v[i] + h * (0..6).map(|s| B4[s] * kv[s][i]).sum::<Vector3<f64>>();
        });
        if !solved {
            return f64::INFINITY;
        }
        if !control {
            return 0.0;
        }
        // Max norm over the free vertices (chunk maxima, then their maximum: deterministic).
        let (xs, vs, rest, fixed) = (&self.xs, &self.vs, &self.rest, &self.fixed);
        let (rtol, atol) = (self.settings.rtol, self.settings.atol);
        let err_of = |i: usize| -> f64 {
            if fixed[i] {
                return 0.0;
            }
            let ex: Vector3<f64> = h * (0..6).map(|s| E[s] * kx[s][i]).sum::<Vector3<f64>>();
            let ev: Vector3<f64> = h * (0..6).map(|s| E[s] * kv[s][i]).sum::<Vector3<f64>>();
            let (u0, u1) = (x[i] - rest[i], xs[i] - rest[i]);
            let mut e = 0.0_f64;
            for c in 0..3 {
                let sx = atol + rtol * u0[c].abs().max(u1[c].abs());
                let sv = atol + rtol * v[i][c].abs().max(vs[i][c].abs());
                let r = (ex[c] / sx).abs().max((ev[c] / sv).abs());
                // `max` drops NaN: a non-finite stage must reject the step.
                if !(ex[c].is_finite()
                    && ev[c].is_finite()
                    && u1[c].is_finite()
                    && vs[i][c].is_finite())
                {
                    return f64::INFINITY;
                }
                e = e.max(r);
            }
            e
        };
        let n = self.x.len();
        par::chunked(n, par::PAR_MIN, &mut self.partials, |range| {
            range.map(err_of).fold(0.0, f64::max)
        });
        let err = self.partials[..par::n_chunks(n)]
            .iter()
            .fold(0.0_f64, |m, &p| m.max(p));
        err
    }
}

/// One body stepped alone, with the exact constraints within it.
struct Single<'a, 'i> {
    rk: &'a mut Rkf45,
    body: &'a mut Body,
    inputs: &'a StepInputs<'i>,
    gravity: &'a Vector3<f64>,
}

impl Trial for Single<'_, '_> {
    fn trial(&mut self, t_rel: f64, h: f64, control: bool) -> f64 {
        let mut solved = true;
        for s in 0..6 {
            let t = self.inputs.time + t_rel + node(s) * h;
            solved &= self.rk.stage(self.body, self.inputs, s, h, self.gravity)
                && self.rk.hold_stage(self.inputs, s, t);
        }
        self.rk.combine(h, solved, control)
    }

    fn accept(&mut self) {
        self.rk.accept();
    }

    fn reject(&mut self) {
        self.rk.rejected += 1;
    }
}

impl Integrator for Rkf45 {
    fn name(&self) -> &'static str {
        "rkf45"
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
        let t0 = Instant::now();
        let mut stats = StepStats {
            solver_converged: true,
            ..StepStats::default()
        };
        self.begin(body, inputs, !inputs.exact.is_empty());
        let substeps = self.settings.substeps as usize;
        let h = self.first_step(dt);
        let mut one = Single {
            rk: self,
            body,
            inputs,
            gravity,
        };
        if substeps > 0 {
            control::fixed_steps(&mut one, substeps, dt, &mut stats);
        } else {
            let next = control::adaptive_steps(&mut one, h, dt, &mut stats)?;
            self.h = Some(next);
        }
        body.x.copy_from_slice(&self.x);
        body.v.copy_from_slice(&self.v);
        stats.forces_s = t0.elapsed().as_secs_f64();
        Ok(stats)
    }

    fn as_rkf45(&self) -> Option<&Rkf45> {
        Some(self)
    }

    fn as_rkf45_mut(&mut self) -> Option<&mut Rkf45> {
        Some(self)
    }

    /// A retried step starts its step-size control afresh.
    fn restart(&mut self) {
        self.h = None;
    }

    fn notes(&self) -> Vec<String> {
        let mass = match &self.mass {
            MassSolve::Lumped(_) => "lumped mass",
            MassSolve::Consistent { .. } => "consistent mass, sparse Cholesky (AMD) once",
        };
        let mode = match self.settings.substeps {
            0 => format!(
                "adaptive, rtol = {:e}, atol = {:e}",
                self.settings.rtol, self.settings.atol
            ),
            n => format!("{n} fixed steps per world step"),
        };
        vec![format!("RKF45 (Liesenfeld & Stolfi §8): {mass}; {mode}")]
    }

    fn counters(&self) -> Vec<(String, f64)> {
        vec![
            ("accepted_steps".to_string(), self.accepted as f64),
            ("rejected_steps".to_string(), self.rejected as f64),
            (
                "mass_factorizations".to_string(),
                self.factorizations() as f64,
            ),
        ]
    }
}
