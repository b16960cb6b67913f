//! The operator-splitting corotated step of Kugelstadt, Koschier & Bender 2018, "Fast
//! Corotated FEM using Operator Splitting" (Computer Graphics Forum 37(8), Algorithm 2), for
//! bodies with `model = "fast_corotated"` ([`crate::fem::material::FastCorotatedModel`]).
//!
//! Backward Euler as an optimization: with `h = dt` and the inertial prediction
//! `x̃ = xₙ + h vₙ + h² g`, the step's end `x` minimizes
//! `½‖x − x̃‖²_M + h² Σ_t V_t [μ‖F_t − R_t‖² + λ/2 C_t²]`, `C_t = tr(R_tᵀF_t) − 3`,
//! with `R_t` the polar rotation of `F_t` (the corotational energy). For fixed rotations the
//! stretching term is quadratic, and its Hessian `M + 2h²μ Σ_t V_t G_tᵀG_t` does not depend
//! on `x` or on the rotations (its 3×3 blocks are `(m_a δ_ab + 2h²μ Σ V g_a·g_b) I`): it is
//! factored once (a scalar sparse Cholesky, [`crate::linalg::ScalarCholesky`], under the
//! mesh's nested-dissection ordering: the blocks are multiples of `I`, so the three
//! components share one scalar factor and are solved together),
//! and again only when `h` or the held set changes. Each iteration then
//! 1. sets every `R_t` to the polar rotation of `F_t(x)` (the local step; the exact polar
//!    rotation by Newton on the rotation warm-started from the last one,
//!    [`crate::fem::polar::update_rotations_near`] — the paper's analytic polar
//!    decomposition iterates the same Cayley-map Newton step, once);
//! 2. solves `A x = M x̃ + h² f(x) + Σ_t (2h²μV_t + κ_t) G_tᵀ vec(R_t)` (the global step: one
//!    back-substitution; `κ_t` are the volume multipliers, `f` the forces of loads, grabs
//!    and anchors taken at the iterate before the solve);
//! 3. runs `volume_sweeps` Gauss–Seidel sweeps of the compliant constraints `C_t` with
//!    compliance `α̃_t = 1/(λ V_t h²)` (XPBD, Macklin et al. 2016): `C_t` is linear in `x` for
//!    the fixed `R_t`, `∇_{x_a} C_t = R_t g_a`, `Δκ = (−C − α̃κ)/(Σ_a w_a|g_a|² + α̃)`,
//!    `x_a += w_a Δκ R_t g_a`, `w_a` the inverse lumped mass (0 for held vertices).
//!
//! One iteration with two sweeps is the paper's step. The multipliers are kept across the
//! iterations of a step, so a fixed point satisfies the step's optimality conditions: as the
//! iterations grow the step tends to the corotational model's backward Euler step (tested).
//! The paper's constraint is the volume (`det F − 1`); the trace form used here is the
//! corotational model's own volume term, so the converged step is that model's.
//! With the volume sweeps off, every local and global step lowers the stretching objective
//! (each minimizes it over one block of unknowns; tested).
//!
//! Supported: fixed and held vertices (the contact holds refactor when the held set changes),
//! gravity, loads, external forces, grab springs and contact anchors (these last forces are
//! taken at the iterate, lagged within the step). Not supported, refused when the integrator
//! is built: Rayleigh damping, viscosity, consistent mass, per-component constraints.

use super::system::add_input_forces;
use super::{Integrator, IntegratorError, StepError, StepInputs, StepStats};
use crate::body::Body;
use crate::clock::Instant;
use crate::fem::material::FastCorotatedSettings;
use crate::fem::{polar, MassKind};
use crate::linalg::solver::mesh_ordering;
use crate::linalg::{OrderingKind, ScalarCholesky};
use nalgebra::{Matrix3, Vector3};

/// The step (workspaces for one body).
#[derive(Debug)]
pub struct FastCorotatedStep {
    settings: FastCorotatedSettings,
    mu: f64,
    lambda: f64,
    /// The scalar matrix `m_a δ_ab + 2h²μ Σ V g_a·g_b`, one value per slot of the pattern
    /// (the system is it ⊗ I₃: the three components decouple).
    a: Vec<f64>,
    cholesky: ScalarCholesky,
    /// The `h` of the kept factor.
    factored_for: Option<f64>,
    factorizations: usize,
    rotations: Vec<Matrix3<f64>>,
    kappa: Vec<f64>,
    inv_mass: Vec<f64>,
    x_tilde: Vec<Vector3<f64>>,
    x_start: Vec<Vector3<f64>>,
    rhs: Vec<Vector3<f64>>,
    force: Vec<Vector3<f64>>,
    /// Record the stretching objective of each iterate ([`Self::objective_history`]).
    pub record_objective: bool,
    objective: Vec<f64>,
}

impl FastCorotatedStep {
    /// The step for `body` (whose model is `fast_corotated`, with `settings`); `ordering` is
    /// the Cholesky ordering (the scene's `[solver] ordering` when it names one, else `nd`).
    pub fn new(
        body: &Body,
        settings: FastCorotatedSettings,
        ordering: OrderingKind,
    ) -> Result<Self, IntegratorError> {
        let unsupported = |reason| IntegratorError::Unsupported {
            body: body.name.clone(),
            reason,
        };
        if settings.iterations == 0 {
            return Err(IntegratorError::Setting {
                key: "iterations",
                value: 0.0,
                reason: "must be at least 1",
            });
        }
        if body.damping.alpha > 0.0 || body.damping.beta > 0.0 || body.viscosity.is_some() {
            return Err(unsupported(
                "model fast_corotated: damping and viscosity are not supported (the step's only dissipation is backward Euler's own)",
            ));
        }
        if body.mass.kind != MassKind::Lumped {
            return Err(unsupported(
                "model fast_corotated: needs mass = \"lumped\" (its volume sweeps use the lumped masses)",
            ));
        }
        if body.constraints.any_partial() {
            return Err(unsupported(
                "model fast_corotated: per-component (partial) constraints are not supported",
            ));
        }
        let solver_error = |source| IntegratorError::Solver {
            body: body.name.clone(),
            source,
        };
        let perm = mesh_ordering(
            ordering,
            &body.elems.pattern,
            &body.mesh.positions,
            &body.mesh.tets,
        )
        .map_err(solver_error)?;
        let cholesky = ScalarCholesky::new(body.elems.pattern.clone(), perm.perm())
            .map_err(|e| solver_error(e.into()))?;
        let (n, m) = (body.n_vertices(), body.elems.len());
        Ok(Self {
            settings,
            mu: body.lame.mu,
            lambda: body.lame.lambda,
            a: vec![0.0; body.elems.pattern.n_blocks()],
            cholesky,
            factored_for: None,
            factorizations: 0,
            rotations: vec![Matrix3::identity(); m],
            kappa: vec![0.0; m],
            inv_mass: vec![0.0; n],
            x_tilde: vec![Vector3::zeros(); n],
            x_start: vec![Vector3::zeros(); n],
            rhs: vec![Vector3::zeros(); n],
            force: vec![Vector3::zeros(); n],
            record_objective: false,
            objective: Vec::with_capacity(settings.iterations as usize + 1),
        })
    }

    /// With [`Self::record_objective`]: the stretching objective
    /// `½‖x − x̃‖²_M + h² Σ V μ‖F − polar(F)‖²` at `x̃` and after each global step of the last
    /// step (before its volume sweeps).
    pub fn objective_history(&self) -> &[f64] {
        &self.objective
    }

    /// Sets `a = M + 2h²μ Σ_t V_t G_tᵀG_t` (its scalar entries) and factors it with the held
    /// set `fixed`.
    fn factor(&mut self, body: &Body, h: f64, fixed: &[bool]) -> Result<(), StepError> {
        self.a.fill(0.0);
        let c = 2.0 * h * h * self.mu;
        let elems = &body.elems;
        for e in 0..elems.len() {
            let (g, s, map) = (&elems.grad[e], c * elems.volume[e], &elems.scatter[e]);
            for p in 0..4 {
                for q in 0..4 {
                    self.a[map[4 * p + q] as usize] += s * g[p].dot(&g[q]);
                }
            }
        }
        for (i, &m) in body.mass.lumped.iter().enumerate() {
            self.a[elems.pattern.diag[i] as usize] += m;
        }
        self.cholesky
            .factor(&self.a, fixed)
            .map_err(|e| StepError::LinearSolve(e.to_string()))?;
        self.factored_for = Some(h);
        self.factorizations += 1;
        Ok(())
    }

    fn stretch_objective(&self, body: &Body, x: &[Vector3<f64>], h: f64) -> f64 {
        let elems = &body.elems;
        let inertia: f64 = (0..x.len())
            .map(|i| 0.5 * body.mass.lumped[i] * (x[i] - self.x_tilde[i]).norm_squared())
            .sum();
        let stretch: f64 = (0..elems.len())
            .map(|e| {
                let f = elems.deformation_gradient(e, x);
                elems.volume[e] * self.mu * (f - polar::rotation(&f)).norm_squared()
            })
            .sum();
        inertia + h * h * stretch
    }
}

impl Integrator for FastCorotatedStep {
    fn name(&self) -> &'static str {
        "fast_corotated"
    }

    fn restartable(&self) -> bool {
        true
    }

    fn counters(&self) -> Vec<(String, f64)> {
        vec![("factorizations".to_string(), self.factorizations as f64)]
    }

    fn notes(&self) -> Vec<String> {
        vec![format!(
            "fast_corotated: {} local-global iteration(s) and {} volume sweep(s) per step; system matrix factored once per dt and held set ({} entries in L)",
            self.settings.iterations,
            self.settings.volume_sweeps,
            self.cholesky.nnz_l()
        )]
    }

    fn step_with(
        &mut self,
        body: &mut Body,
        inputs: &StepInputs,
        h: f64,
        gravity: &Vector3<f64>,
    ) -> Result<StepStats, StepError> {
        let t0 = Instant::now();
        let fixed = inputs.fixed;
        let factorized = self.factored_for != Some(h) || self.cholesky.fixed() != fixed;
        if factorized {
            self.factor(body, h, fixed)?;
        }
        let t1 = Instant::now();
        for i in 0..body.n_vertices() {
            let lumped = &body.mass.lumped;
            self.x_start[i] = body.x[i];
            self.inv_mass[i] = if fixed[i] { 0.0 } else { 1.0 / lumped[i] };
            if !fixed[i] {
                self.x_tilde[i] = body.x[i] + h * body.v[i] + h * h * gravity;
                body.x[i] = self.x_tilde[i];
            } else {
                self.x_tilde[i] = body.x[i];
            }
        }
        self.kappa.fill(0.0);
        self.objective.clear();
        if self.record_objective {
            let e = self.stretch_objective(body, &body.x, h);
            self.objective.push(e);
        }
        let (mut local_s, mut solve_s) = (0.0, 0.0);
        let c2 = 2.0 * h * h * self.mu;
        for _ in 0..self.settings.iterations {
            let t = Instant::now();
            let Body {
                elems,
                x,
                loads,
                mass,
                ..
            } = &mut *body;
            let lumped = &mass.lumped;
            let elems = &*elems;
            {
                let x = &*x;
                polar::update_rotations_near(&mut self.rotations, |e| {
                    elems.deformation_gradient(e, x)
                });
            }
            self.force.fill(Vector3::zeros());
            add_input_forces(inputs, x, &mut self.force);
            loads.add_forces(x, &mut self.force);
            for (i, r) in self.rhs.iter_mut().enumerate() {
                *r = lumped[i] * self.x_tilde[i] + h * h * self.force[i];
            }
            let (rotations, kappa) = (&self.rotations, &self.kappa);
            elems.scatter_forces(&mut self.rhs, |e| {
                let (r, g) = (&rotations[e], &elems.grad[e]);
                let c = c2 * elems.volume[e] + kappa[e];
                [
                    c * (r * g[0]),
                    c * (r * g[1]),
                    c * (r * g[2]),
                    c * (r * g[3]),
                ]
            });
            let t_solve = Instant::now();
            local_s += (t_solve - t).as_secs_f64();
            self.cholesky
                .solve(&self.rhs, fixed, x)
                .map_err(|e| StepError::LinearSolve(e.to_string()))?;
            solve_s += t_solve.elapsed().as_secs_f64();
            if self.record_objective {
                let e = self.stretch_objective(body, &body.x, h);
                self.objective.push(e);
            }
            let t = Instant::now();
            for _ in 0..self.settings.volume_sweeps {
                volume_sweep(
                    &body.elems,
                    &self.rotations,
                    &mut self.kappa,
                    &self.inv_mass,
                    1.0 / (self.lambda * h * h),
                    &mut body.x,
                );
            }
            local_s += t.elapsed().as_secs_f64();
        }
        for (i, v) in body.v.iter_mut().enumerate() {
            *v = if fixed[i] {
                Vector3::zeros()
            } else {
                (body.x[i] - self.x_start[i]) / h
            };
        }
        if !body.x.iter().all(|p| p.iter().all(|c| c.is_finite())) {
            return Err(StepError::NonFinite("positions"));
        }
        Ok(StepStats {
            solver_converged: true,
            factorized,
            forces_s: local_s,
            assembly_s: (t1 - t0).as_secs_f64(),
            solve_s,
            substeps: 1,
            ..StepStats::default()
        })
    }
}

/// One Gauss–Seidel sweep, in element order, of the compliant constraints
/// `C_t = tr(R_tᵀF_t) − 3` with compliance `α̃_t = alpha_v / V_t` (`alpha_v = 1/(λh²)`).
fn volume_sweep(
    elems: &crate::fem::ElementSet,
    rotations: &[Matrix3<f64>],
    kappa: &mut [f64],
    inv_mass: &[f64],
    alpha_v: f64,
    x: &mut [Vector3<f64>],
) {
    for e in 0..elems.len() {
        let (t, g, r) = (&elems.tets[e], &elems.grad[e], &rotations[e]);
        let rg = [r * g[0], r * g[1], r * g[2], r * g[3]];
        let mut c = -3.0;
        let mut denom = alpha_v / elems.volume[e];
        for k in 0..4 {
            let i = t[k] as usize;
            c += rg[k].dot(&x[i]);
            denom += inv_mass[i] * g[k].norm_squared();
        }
        let dk = (-c - alpha_v / elems.volume[e] * kappa[e]) / denom;
        kappa[e] += dk;
        for k in 0..4 {
            let i = t[k] as usize;
            x[i] += (inv_mass[i] * dk) * rg[k];
        }
    }
}
