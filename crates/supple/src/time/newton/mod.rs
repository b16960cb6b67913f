//! The Newton core shared by the implicit integrators (Hauth & Straßer 2004 §6: "a layered
//! solver core ... several integration formulas and a Newton method with backtracking").
//!
//! Every implicit formula here is written as `x⁺ = ξ + γ u` for the unknown `u`:
//! - **dynamic** (backward Euler, BDF(k)): `u = v⁺` the end-of-step velocity, and the formula
//!   also gives `v⁺ = η + γ a⁺`, so `M a⁺ = f(x⁺, v⁺) + M g` becomes the residual
//!   `r(u) = M (u − η) − γ (f(ξ + γ u, u) + M g)` with Jacobian
//!   `∂r/∂u = M + γ D(x) + γ² K(x)` ([`System::assemble`] with `(1, γ, γ²)`);
//! - **static**: `γ = 1`, `u` the displacement from `ξ`, `r(u) = −(f(ξ + u, 0) + M g)` with
//!   Jacobian `K(x)` (`(0, 0, 1)`).
//!
//! The unknown is the velocity (not the positions) because fixed vertices then simply keep
//! `u = 0`, and the matrix `M + γD + γ²K` stays well conditioned as `γ → 0`.
//!
//! A warped body's `J` is `B J⁰ Bᵀ` with `J⁰` constant ([`System::frames`]): it is solved in
//! the vertices' frames with `J⁰` assembled and factorized once, as in the linearized step.
//!
//! One iteration solves `J δ = −r` with the body's [`LinearSolver`] and takes `u ← u + α δ`,
//! `α = 1, ½, ¼, …` (at most [`MAX_CUTS`] cuts): backtracking (Hauth & Straßer §6; Dennis &
//! Schnabel §6.3) with Armijo's sufficient-decrease test, `c = 10⁻⁴`, passed on either merit:
//! - the residual, `‖r(u + α δ)‖² ≤ (1 − 2 c α) ‖r(u)‖²` (the merit `½‖r‖²`);
//! - the incremental potential `Φ` with `∇Φ = r` (backward Euler as a minimization, Gast et al.
//!   2015; exact for conservative forces and `α`-Rayleigh damping): `Φ(u + α δ) ≤ Φ(u) + c α φ'(0)`
//!   with `φ'(s) = r(u + s δ)·δ` and `Φ(u + α δ) − Φ(u)` from the trapezoidal rule on the two
//!   slopes (exact for a quadratic `Φ`), i.e. `φ'(α) ≤ (1 − 2c) |φ'(0)|`. It needs no energy, so
//!   every model has it, and `δ` is a descent direction of `Φ` for any positive definite
//!   matrix, also an approximate tangent (corotational `Rotated`).
//!
//! The second test matters: with `h² K ≫ M` a good Newton step often first *raises* `‖r‖`,
//! and an approximate tangent's step need not be a descent direction of `‖r‖` at all (measured
//! on the bar under gravity at 100 ms: the residual-only search took 14 iterations where full
//! steps took 6, and stalled in another step). If no cut passes either test, the trial with
//! the smallest `‖r‖` is taken when it decreases `‖r‖`; otherwise the iteration stops
//! (stagnation, e.g. at round-off).
//!
//! Convergence: `‖r‖ ≤ tolerance · ‖r₀‖` (`r₀` at the first guess; a static solve measures
//! against its load `‖M g‖` instead, so a good first guess is not penalized), or `‖r‖` below a
//! round-off floor `10⁻¹² · (‖M(u₀ − η)‖ + γ‖f₀‖ + γ‖M g‖)`; or `max_iterations` linear solves.
//! Fixed vertices are excluded from `r` and keep `u = 0` (and `x⁺ = ξ`).
//!
//! **The direct solver's floor.** The residual of a slender body cannot go below the round-off
//! of its force evaluation: its element forces are large and cancel (bending), and positions
//! are absolute coordinates, so a change below an ulp of `x` is not representable at all.
//! Measured on the Turek–Hron CSM2 beam (StVK, static, Cholesky, 16 elements through the
//! thickness, tolerance 1e-6): the first load step reaches `‖r‖ = 5.9e-11` (1.05e-6 relative
//! to its load) in 4 iterations, and every later step `δ` is ~1.1e-16 m (under one ulp of the
//! 0.63 m positions) while `‖r‖` wanders between 1.03e-6 and 1.07e-6 relative; 35 × 2 cells
//! of the same beam stall at 7e-8. So a static solve whose step moves no vertex by more than
//! [`FLOOR_ULPS`] ulps of the largest position and does not halve `‖r‖` (or no trial decreases
//! it) is *converged at the floor*: the next iterate would equal this one to within those
//! ulps, which is as converged as the arithmetic allows. A large residual cannot pass for it:
//! `δ = J⁻¹ r` is a few ulps only when `r` is that small in `J⁻¹`'s measure (the Newton
//! decrement `δ·r` is then ~1e-25 J where the load step's work is 1e-5 J).
//!
//! Inexact Newton: a PCG tolerance in the settings is the loosest one used; each solve is
//! tightened to `½ · target / ‖r‖` when that is smaller, so that the last iteration meets the
//! Newton tolerance (one iteration for a linear model).
//!
//! Nothing here allocates after construction.

use super::inputs::StepInputs;
use super::system::{zero_fixed, System};
use super::{IntegratorError, StepStats};
use crate::body::Body;
use crate::clock::Instant;
use crate::fem::feasible::first_nonpositive;
use crate::linalg::{par, BlockCsr, LinearSolver, LinearSolverKind};
use nalgebra::Vector3;
use residual::{residual, Buffers};

mod line_search;
mod residual;

/// Fraction of the distance to the first zero-volume crossing that a barrier model's Newton
/// step may go (see [`Newton::line_search`]).
const FEASIBLE_FRACTION: f64 = 0.9;
/// Line-search cuts per Newton iteration (the smallest step is `2⁻¹⁰ δ`).
pub const MAX_CUTS: u32 = 10;
/// Armijo's sufficient-decrease constant.
const ARMIJO_C: f64 = 1e-4;
/// Round-off floor of the residual, relative to the size of its terms.
const NOISE: f64 = 1e-12;
/// A Newton step of at most this many ulps of the largest position is at the round-off floor
/// (see [`Newton::step_at_round_off`]).
const FLOOR_ULPS: f64 = 8.0;
/// At the round-off floor, a step that leaves `‖r‖` above this share of the last one has
/// stalled.
const STALL_RATIO: f64 = 0.5;
/// The tightest PCG tolerance the forcing rule asks for.
const PCG_MIN_TOLERANCE: f64 = 1e-13;

/// Settings of the Newton iteration of an implicit integrator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NewtonSettings {
    /// Stop when `‖r‖ ≤ tolerance · ‖r₀‖` (relative residual, in `(0, 1)`).
    pub tolerance: f64,
    /// At most this many Newton iterations (linear solves) per solve (≥ 1).
    pub max_iterations: u32,
    /// Backtracking line search (see the module notes; off: always the full Newton step).
    pub line_search: bool,
    /// The linear solver of each iteration. A PCG tolerance is the loosest one used (see the
    /// module notes).
    pub solver: LinearSolverKind,
}

impl Default for NewtonSettings {
    fn default() -> Self {
        Self {
            tolerance: 1e-6,
            max_iterations: 20,
            line_search: true,
            solver: LinearSolverKind::default(),
        }
    }
}

impl NewtonSettings {
    /// Refuses a tolerance outside `(0, 1)`, zero iterations, or an unusable PCG setting.
    pub fn validate(&self) -> Result<(), IntegratorError> {
        let bad = |key, value, reason| Err(IntegratorError::Setting { key, value, reason });
        if !(self.tolerance > 0.0 && self.tolerance < 1.0) {
            return bad(
                "newton.tolerance",
                self.tolerance,
                "must be a number in (0, 1)",
            );
        }
        if self.max_iterations == 0 {
            return bad("newton.max_iterations", 0.0, "must be at least 1");
        }
        if let LinearSolverKind::Pcg(pcg) = self.solver {
            if !(pcg.tolerance > 0.0 && pcg.tolerance.is_finite()) {
                return bad(
                    "newton.solver.tolerance",
                    pcg.tolerance,
                    "must be a finite number above 0",
                );
            }
            if pcg.max_iterations == 0 {
                return bad("newton.solver.max_iterations", 0.0, "must be at least 1");
            }
        }
        Ok(())
    }
}

/// One implicit formula `x⁺ = ξ + γ u` (see the module notes).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Formula<'a> {
    pub xi: &'a [Vector3<f64>],
    /// `Some(η)`: dynamic, `u = v⁺ = η + γ a⁺`. `None`: static, `u` a displacement.
    pub eta: Option<&'a [Vector3<f64>]>,
    pub gamma: f64,
    /// The (possibly ramped) gravity of the load `M g`.
    pub gravity: Vector3<f64>,
    /// The scale of the convergence test when above 0 (else `‖r₀‖`).
    pub reference: f64,
    /// The step's held vertices, springs and external forces.
    pub inputs: StepInputs<'a>,
}

/// What one Newton solve did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(crate) struct NewtonStats {
    pub iterations: usize,
    /// Final `‖r‖` relative to `‖r₀‖` (or to the formula's reference).
    pub residual: f64,
    pub converged: bool,
    pub linear_iterations: usize,
    /// Largest relative residual of the linear solves, and whether all converged.
    pub solver_residual: f64,
    pub solver_converged: bool,
    pub factorized: bool,
    pub forces_s: f64,
    pub assembly_s: f64,
    pub solve_s: f64,
}

impl NewtonStats {
    /// Adds this solve to the statistics of a step (several solves per step: the BDF3 start,
    /// load steps); the Newton residual is that of the last solve.
    pub fn add_to(&self, s: &mut StepStats) {
        s.newton_iterations += self.iterations;
        s.newton_residual = self.residual;
        s.newton_converged = if s.substeps == 0 {
            self.converged
        } else {
            s.newton_converged && self.converged
        };
        s.solver_iterations += self.linear_iterations;
        s.solver_residual = s.solver_residual.max(self.solver_residual);
        s.solver_converged = if s.substeps == 0 {
            self.solver_converged
        } else {
            s.solver_converged && self.solver_converged
        };
        s.factorized |= self.factorized;
        s.forces_s += self.forces_s;
        s.assembly_s += self.assembly_s;
        s.solve_s += self.solve_s;
        s.substeps += 1;
    }
}

/// The Newton solver of one body, with its workspaces.
#[derive(Debug)]
pub(crate) struct Newton {
    pub settings: NewtonSettings,
    system: System,
    solver: LinearSolver,
    a: BlockCsr,
    /// Coefficients `(cm, cd, ck)` of the matrix kept in `a` (models with a constant one, one
    /// kept with their frames, or a warped one seen in its frames), whether `a` holds the
    /// frames' `A⁰`, and the tangent's version ([`System::matrix_version`]).
    kept: Option<([f64; 3], bool, u64)>,
    /// `Bᵀ g`, the right-hand side in the vertices' frames (see `System::frames`).
    g_frames: Vec<Vector3<f64>>,
    /// The unknown: holds the first guess on entry to [`solve`](Self::solve), the solution after.
    pub u: Vec<Vector3<f64>>,
    /// Positions `ξ + γ u` of the solution.
    pub x: Vec<Vector3<f64>>,
    /// `−r(u)`, the out-of-balance force (the right-hand side of `J δ = −r`).
    g: Vec<Vector3<f64>>,
    u_trial: Vec<Vector3<f64>>,
    x_trial: Vec<Vector3<f64>>,
    g_trial: Vec<Vector3<f64>>,
    f: Vec<Vector3<f64>>,
    mv: Vec<Vector3<f64>>,
    delta: Vec<Vector3<f64>>,
    partials: Vec<f64>,
    /// Per-chunk minima of the element step caps (barrier models).
    tet_partials: Vec<f64>,
    /// `‖r‖` after each iteration (index 0: the first guess).
    history: Vec<f64>,
}

impl Newton {
    /// What `preconditioner = "auto"` chose for the Newton systems, once one was solved.
    pub fn preconditioner_choice(&self) -> Option<&crate::linalg::AutoChoice> {
        self.solver.auto_choice()
    }
}

impl Newton {
    pub fn new(body: &Body, settings: NewtonSettings) -> Result<Self, IntegratorError> {
        settings.validate()?;
        let solver = LinearSolver::new(
            &settings.solver,
            &body.elems.pattern,
            &body.mesh.positions,
            &body.mesh.tets,
        )
        .map_err(|source| IntegratorError::Solver {
            body: body.name.clone(),
            source,
        })?;
        let n = body.n_vertices();
        let zero = vec![Vector3::zeros(); n];
        Ok(Self {
            settings,
            system: System::new(body),
            solver,
            a: BlockCsr::zeros(body.elems.pattern.clone()),
            kept: None,
            g_frames: zero.clone(),
            u: zero.clone(),
            x: zero.clone(),
            g: zero.clone(),
            u_trial: zero.clone(),
            x_trial: zero.clone(),
            g_trial: zero.clone(),
            f: zero.clone(),
            mv: zero.clone(),
            delta: zero,
            partials: vec![0.0; par::n_chunks(n)],
            tet_partials: vec![0.0; par::n_chunks(body.elems.len())],
            history: Vec::with_capacity(settings.max_iterations as usize + 1),
        })
    }

    /// The scale of a static solve's convergence test at `body.x`: `‖M g‖` over the free
    /// vertices; with loads `‖M g + f_load(x)‖` over the free components; with constraints
    /// also `+ ‖f_el(x) + M g + f_load(x)‖` over the held components (the reactions, which
    /// are the only scale of a displacement-driven problem). Uses `f`, `mv` as scratch.
    pub fn load_norm(&mut self, body: &mut Body, fixed: &[bool], gravity: &Vector3<f64>) -> f64 {
        if body.loads.is_empty() && body.constraints.is_empty() {
            return load_norm(body, fixed, gravity);
        }
        let lumped = &body.mass.lumped;
        par::for_each_mut(&mut self.f, |i, f| *f = lumped[i] * gravity);
        body.loads.add_forces(&body.x, &mut self.f);
        let mut norm = 0.0;
        if !body.constraints.is_empty() {
            // Held part: f − (free part), with the elastic forces at x.
            body.model.update_frames(&body.elems, &body.x);
            self.mv.copy_from_slice(&self.f);
            body.model.add_forces(&body.elems, &body.x, &mut self.mv);
            self.g_trial.copy_from_slice(&self.mv);
            zero_fixed(fixed, &mut self.g_trial);
            body.constraints.project(&mut self.g_trial);
            let (all, free) = (&self.mv, &self.g_trial);
            norm += par::sum(all.len(), &mut self.partials, |i| {
                (all[i] - free[i]).norm_squared()
            })
            .sqrt();
        }
        zero_fixed(fixed, &mut self.f);
        body.constraints.project(&mut self.f);
        let f = &self.f;
        norm + par::sum(f.len(), &mut self.partials, |i| f[i].norm_squared()).sqrt()
    }

    /// `‖r‖` of the first guess and after each iteration of the last solve.
    pub fn history(&self) -> &[f64] {
        &self.history
    }

    /// Solves `r(u) = 0` for the formula `form`, starting from `self.u`; the solution is left
    /// in `self.u` and its positions in `self.x`. The body's state is not touched (its model's
    /// frames are left at a trial point).
    pub fn solve(&mut self, body: &mut Body, form: &Formula) -> NewtonStats {
        let mut stats = NewtonStats {
            solver_converged: true,
            ..NewtonStats::default()
        };
        zero_fixed(form.inputs.fixed, &mut self.u);
        body.constraints.project(&mut self.u);
        self.history.clear();
        let t0 = Instant::now();
        let mut norm = self.eval_current(body, form);
        if body.model.needs_positive_volume() && first_nonpositive(&body.elems, &self.x).is_some() {
            // The first guess (e.g. x + h v) already crosses zero volume somewhere: start from
            // u = 0 instead, which for backward Euler is the start of the step.
            self.u.fill(Vector3::zeros());
            norm = self.eval_current(body, form);
            if first_nonpositive(&body.elems, &self.x).is_some() {
                stats.residual = f64::NAN;
                return stats;
            }
        }
        let floor = NOISE * self.noise_scale(body, form);
        stats.forces_s += t0.elapsed().as_secs_f64();
        self.history.push(norm);
        let r_ref = if form.reference > 0.0 {
            form.reference
        } else {
            norm
        };
        let target = (self.settings.tolerance * r_ref).max(floor);
        let coeffs = match form.eta {
            Some(_) => [1.0, form.gamma, form.gamma * form.gamma],
            None => [0.0, 0.0, 1.0],
        };
        let base_tolerance = match &self.solver {
            LinearSolver::Pcg { settings, .. } => settings.tolerance,
            LinearSolver::Cholesky(_) => 0.0,
        };

        let mut floor = false;
        while !reached(norm, target) && stats.iterations < self.settings.max_iterations as usize {
            // Jacobian J = cm M + cd D + ck K at the current u (frames are at self.x).
            let t0 = Instant::now();
            // A warped tangent is `B A⁰ Bᵀ` with `A⁰` constant (`System::frames`): `J δ = g`
            // is solved as `A⁰ (Bᵀ δ) = Bᵀ g`, with `A⁰` (and its factor) kept.
            let frames = System::frames(body, &form.inputs);
            let in_frames = frames.is_some();
            // The frames' `A⁰` is constant: version 0.
            let version = if in_frames {
                Some(0)
            } else {
                System::matrix_version(body, &form.inputs)
            };
            let changed = version.is_none_or(|v| self.kept != Some((coeffs, in_frames, v)));
            if changed {
                let [cm, cd, ck] = coeffs;
                if in_frames {
                    System::assemble_rest(body, cm, cd, ck, &mut self.a);
                } else {
                    self.system
                        .assemble(body, &form.inputs, &self.x, cm, cd, ck, &mut self.a);
                }
                self.kept = version.map(|v| (coeffs, in_frames, v));
            }
            let t1 = Instant::now();
            if let LinearSolver::Pcg { settings, .. } = &mut self.solver {
                settings.tolerance = (0.5 * target / norm)
                    .clamp(PCG_MIN_TOLERANCE.min(base_tolerance), base_tolerance);
            }
            self.delta.fill(Vector3::zeros());
            let rhs = match frames {
                Some(r) => {
                    let g = &self.g;
                    par::for_each_mut(&mut self.g_frames, |i, b| *b = r[i].tr_mul(&g[i]));
                    &self.g_frames
                }
                None => &self.g,
            };
            let s = self
                .solver
                .solve(&self.a, changed, rhs, form.inputs.fixed, &mut self.delta);
            if let Some(r) = frames {
                par::for_each_mut(&mut self.delta, |i, d| *d = r[i] * *d);
            }
            let t2 = Instant::now();
            stats.assembly_s += (t1 - t0).as_secs_f64();
            stats.solve_s += (t2 - t1).as_secs_f64();
            stats.iterations += 1;
            stats.linear_iterations += s.iterations;
            stats.solver_residual = stats.solver_residual.max(s.relative_residual);
            stats.solver_converged &= s.converged;
            stats.factorized |= s.factorized;

            let at_floor = self.step_at_round_off(form);
            let t0 = Instant::now();
            let accepted = self.line_search(body, form, norm);
            stats.forces_s += t0.elapsed().as_secs_f64();
            match accepted {
                Some(n) => {
                    // The step moved no vertex by more than a few ulps and ‖r‖ did not drop
                    // by half: the residual is round-off (see the module notes).
                    floor |= at_floor && n > STALL_RATIO * norm;
                    norm = n;
                }
                None => {
                    floor |= at_floor;
                    break;
                }
            }
            self.history.push(norm);
            if floor {
                break;
            }
        }
        if let LinearSolver::Pcg { settings, .. } = &mut self.solver {
            settings.tolerance = base_tolerance;
        }
        stats.converged = reached(norm, target) || floor;
        stats.residual = if r_ref > 0.0 { norm / r_ref } else { 0.0 };
        stats
    }

    fn accept(&mut self) {
        std::mem::swap(&mut self.u, &mut self.u_trial);
        std::mem::swap(&mut self.x, &mut self.x_trial);
        std::mem::swap(&mut self.g, &mut self.g_trial);
    }

    /// Evaluates `−r` at `self.u` into `self.x`, `self.g`; returns `‖r‖`.
    fn eval_current(&mut self, body: &mut Body, form: &Formula) -> f64 {
        residual(
            &mut self.system,
            body,
            form,
            &self.u,
            Buffers {
                x: &mut self.x,
                g: &mut self.g,
                f: &mut self.f,
                mv: &mut self.mv,
                partials: &mut self.partials,
            },
        )
    }

    /// Evaluates `−r` at `u + α δ` into the trial buffers; returns `‖r‖`.
    fn eval_trial(&mut self, body: &mut Body, form: &Formula, alpha: f64) -> f64 {
        let (u, delta, fixed) = (&self.u, &self.delta, form.inputs.fixed);
        par::for_each_mut(&mut self.u_trial, |i, ut| {
            *ut = if fixed[i] {
                Vector3::zeros()
            } else {
                u[i] + alpha * delta[i]
            }
        });
        body.constraints.project(&mut self.u_trial);
        residual(
            &mut self.system,
            body,
            form,
            &self.u_trial,
            Buffers {
                x: &mut self.x_trial,
                g: &mut self.g_trial,
                f: &mut self.f,
                mv: &mut self.mv,
                partials: &mut self.partials,
            },
        )
    }

    /// True when the static Newton step `δ` just solved moves no free vertex by more than
    /// [`FLOOR_ULPS`] units in the last place of the largest position: `‖δ‖∞ ≤ FLOOR_ULPS ·
    /// ε · ‖x‖∞` (never for a dynamic formula). Such a step is below what the positions can represent, so the residual it
    /// leaves is the round-off of the force evaluation and the direct solve, not an error of
    /// the iterate (see the module notes).
    fn step_at_round_off(&self, form: &Formula) -> bool {
        if form.eta.is_some() {
            // Dynamic: `u` is a velocity, whose own precision the positions do not bound.
            return false;
        }
        let fixed = form.inputs.fixed;
        // One pass each, sequential: O(n) beside the iteration's solve.
        let free_max = |v: &[Vector3<f64>]| {
            (v.iter().zip(fixed))
                .filter(|(_, &f)| !f)
                .fold(0.0, |m: f64, (p, _)| m.max(p.amax()))
        };
        let step = form.gamma * free_max(&self.delta);
        step <= FLOOR_ULPS * f64::EPSILON * free_max(&self.x)
    }

    /// The size of the residual's terms at the first guess (`f`, `mv` still hold them):
    /// `‖M(u₀ − η)‖ + γ‖f₀‖ + γ‖M g‖` over the free vertices.
    fn noise_scale(&mut self, body: &Body, form: &Formula) -> f64 {
        let (f, mv, fixed) = (&self.f, &self.mv, form.inputs.fixed);
        let free = |i: usize, v: &Vector3<f64>| if fixed[i] { 0.0 } else { v.norm_squared() };
        let n = f.len();
        let nf = par::sum(n, &mut self.partials, |i| free(i, &f[i])).sqrt();
        let nm = match form.eta {
            Some(_) => par::sum(n, &mut self.partials, |i| free(i, &mv[i])).sqrt(),
            None => 0.0,
        };
        nm + form.gamma * (nf + load_norm(body, fixed, &form.gravity))
    }
}

/// `‖M g‖` over the free vertices (the lumped masses are the row sums of either mass matrix).
pub(crate) fn load_norm(body: &Body, fixed: &[bool], gravity: &Vector3<f64>) -> f64 {
    let m2: f64 = body
        .mass
        .lumped
        .iter()
        .zip(fixed)
        .filter(|(_, &f)| !f)
        .map(|(m, _)| m * m)
        .sum();
    m2.sqrt() * gravity.norm()
}

/// `‖r‖ ≤ target` (false for a NaN `‖r‖`).
fn reached(norm: f64, target: f64) -> bool {
    norm <= target
}

/// `Σ a_i · b_i` (deterministic for any thread count).
fn dot(a: &[Vector3<f64>], b: &[Vector3<f64>], partials: &mut [f64]) -> f64 {
    par::sum(a.len(), partials, |i| a[i].dot(&b[i]))
}
