//! Linearized backward Euler (Baraff & Witkin 1998; Müller et al. 2002 eq. 4 and §3.2).
//!
//! With `h = dt`, forces linearized at the current state, `f(x + h v⁺) ≈ f(x) − h K(x) v⁺`,
//! and Rayleigh damping `C = αM + βK`, one step solves
//! `(M + h C + h² K) v⁺ = M v + h (f(x) + f_ext)`, i.e.
//! `((1 + hα) M + (hβ + h²) K) v⁺ = M v + h (f(x) + M g)`, then `x⁺ = x + h v⁺`.
//! A body's strain-rate damping or viscosity `f_d = −D(x) v` is taken implicitly too: `h D`
//! joins the matrix.
//! For a barrier model (Liesenfeld–Stolfi) a step that would leave an element with volume ≤ 0
//! is not accepted: the linearization knows nothing of the barrier. Nor is one that ends with
//! more energy (kinetic + elastic + gravitational + dead-load potential) than it started with, beyond 1 % of the
//! kinetic + elastic part: backward Euler dissipates, so such a step is a linearization that
//! failed (a box hitting the ground at 30 m/s at dt = 2 ms had one tet driven to 1 % of its
//! rest volume and 3.8e7 J of barrier energy by one linear step). Either way the step is
//! taken again from the same start by full backward Euler, whose Newton line search never
//! crosses zero volume and descends the incremental potential ([`super::newton`]); if that
//! fails too, the world's step control retries shorter.
//! Fixed vertices keep `v = 0` (their rows and columns are filtered out of PCG, or replaced by
//! identity in the Cholesky factor).
//!
//! The linear solver is PCG or a sparse Cholesky ([`LinearSolverKind`]). A model with a
//! constant tangent at an unchanged `dt` keeps its matrix, and the Cholesky factor with it:
//! one factorization, then a back-substitution per step (Zhuang & Canny 1999, §4). So does
//! the warped model, whose matrix is a constant one seen in rotating vertex frames,
//! `A = B A⁰ Bᵀ` ([`System::frames`]): the step solves `A⁰ (Bᵀ v⁺) = Bᵀ b`, with no matrix
//! assembled or factorized after the first step (the rest stiffness of Müller et al. 2002,
//! §3.2, never rotated).

use super::sliding::Sliding;
use super::warm_start::VelocityHistory;
use super::{
    check_barrier, BackwardEuler, Integrator, NewtonSettings, StepError, StepInputs, StepStats,
    System, WarmStart,
};
use crate::body::Body;
use crate::clock::Instant;
use crate::linalg::{par, BlockCsr, LinearSolver, LinearSolverKind, SolverError};
use nalgebra::{Matrix3, Vector3};

#[derive(Debug)]
pub struct LinearizedBackwardEuler {
    /// First guess of the velocity solve (ignored by a direct solver).
    pub warm_start: WarmStart,
    solver: LinearSolver,
    system: System,
    a: BlockCsr,
    rhs: Vec<Vector3<f64>>,
    force: Vec<Vector3<f64>>,
    v_new: Vec<Vector3<f64>>,
    /// Velocity before the last step (for [`WarmStart::Extrapolate`]).
    v_prev: Vec<Vector3<f64>>,
    /// The velocities of the last steps' starts (for [`WarmStart::Adaptive`]).
    history: VelocityHistory,
    /// `dt` and tangent version ([`System::matrix_version`]) of the matrix kept from the
    /// last step, for models whose tangent is constant or kept with their frames.
    assembled_for: Option<(f64, u64)>,
    /// Barrier models only: full backward Euler with the inversion-capped Newton line search,
    /// taken from the same start when the linear step would invert an element, and the
    /// start state it needs.
    fallback: Option<Box<BackwardEuler>>,
    x_start: Vec<Vector3<f64>>,
    v_start: Vec<Vector3<f64>>,
    /// Scratch of the energy check (barrier models only).
    scratch: Vec<Vector3<f64>>,
    fallbacks: usize,
    /// Sliding holds of the step (see [`super::sliding`]), and whether the last step's
    /// impulses come from the linear solve (not from a Newton fallback).
    sliding: Sliding,
    sliding_solved: bool,
    /// The start of the last solve that computed its forces and matrix: step start time,
    /// `h`, positions and velocities. A solve of the same step again
    /// ([`StepInputs::again`]) from bitwise this start keeps both (see
    /// [`Integrator::step_with`] below).
    kept: Option<(f64, f64)>,
    x_kept: Vec<Vector3<f64>>,
    v_kept: Vec<Vector3<f64>>,
    /// `a` before the sliding filter changed it (values, allocated at the first filter), and
    /// whether `a` still holds the matrix as assembled.
    a_unfiltered: Vec<Matrix3<f64>>,
    a_intact: bool,
    /// Whether `a` holds the frames' `A⁰` (see `System::frames`) rather than `A`.
    in_frames: bool,
}

/// Share of the start's kinetic + elastic energy a linearized step of a barrier model may
/// gain before it is redone by Newton (see the module notes).
const ENERGY_GAIN_TOLERANCE: f64 = 0.01;

/// Kinetic + elastic energy and gravitational + load potential of `body`; `None` when the
/// check cannot judge the step: no elastic energy, a load without a potential (follower
/// pressure), or a prescribed motion doing work during the step (`body.time` is its end).
fn total_energy(
    body: &Body,
    h: f64,
    gravity: &Vector3<f64>,
    scratch: &mut [Vector3<f64>],
) -> Option<(f64, f64)> {
    if !body.constraints.same_at(body.time - h, body.time) {
        return None;
    }
    let kinetic = body.mass.kinetic_energy(&body.elems, &body.v, scratch);
    let elastic = body.model.energy(&body.elems, &body.x)?;
    let loads = body.loads.potential(&body.x, &body.mesh.positions)?;
    Some((kinetic + elastic, body.potential_energy(gravity) + loads))
}

impl LinearizedBackwardEuler {
    /// The integrator for `body`; for a direct solver this computes the ordering (from the
    /// body's pattern, rest positions and tets) and the symbolic factorization.
    pub fn new(
        body: &Body,
        solver: LinearSolverKind,
        warm_start: WarmStart,
    ) -> Result<Self, SolverError> {
        let n = body.n_vertices();
        let fallback = if body.model.needs_positive_volume() {
            let settings = NewtonSettings {
                solver,
                ..NewtonSettings::default()
            };
            // The settings are the defaults with this step's solver, which `new` validated.
            BackwardEuler::new(body, settings).ok().map(Box::new)
        } else {
            None
        };
        let start = if fallback.is_some() { n } else { 0 };
        let solver = LinearSolver::new(
            &solver,
            &body.elems.pattern,
            &body.mesh.positions,
            &body.mesh.tets,
        )?;
        Ok(Self {
            warm_start,
            solver,
            system: System::new(body),
            a: BlockCsr::zeros(body.elems.pattern.clone()),
            rhs: vec![Vector3::zeros(); n],
            force: vec![Vector3::zeros(); n],
            v_new: vec![Vector3::zeros(); n],
            v_prev: body.v.clone(),
            history: VelocityHistory::new(n),
            assembled_for: None,
            fallback,
            x_start: vec![Vector3::zeros(); start],
            v_start: vec![Vector3::zeros(); start],
            scratch: vec![Vector3::zeros(); start],
            fallbacks: 0,
            sliding: Sliding::default(),
            sliding_solved: false,
            kept: None,
            x_kept: vec![Vector3::zeros(); n],
            v_kept: vec![Vector3::zeros(); n],
            a_unfiltered: Vec::new(),
            a_intact: false,
            in_frames: false,
        })
    }

    /// The linear solver and its state (e.g. [`LinearSolver::cholesky`]'s counters).
    pub fn solver(&self) -> &LinearSolver {
        &self.solver
    }
}

impl Integrator for LinearizedBackwardEuler {
    fn name(&self) -> &'static str {
        "backward_euler_linearized"
    }

    fn restartable(&self) -> bool {
        true
    }

    fn moves_held_vertices(&self) -> bool {
        true
    }

    fn hold_reactions(&self) -> Option<&[Vector3<f64>]> {
        self.sliding_solved.then(|| self.sliding.reactions())
    }

    fn counters(&self) -> Vec<(String, f64)> {
        match self.fallback {
            Some(_) => vec![("newton_fallbacks".to_string(), self.fallbacks as f64)],
            None => self.solver.counters(),
        }
    }

    fn preconditioner_choice(&self) -> Option<crate::linalg::AutoChoice> {
        self.solver.auto_choice().cloned()
    }

    fn step_with(
        &mut self,
        body: &mut Body,
        inputs: &StepInputs,
        h: f64,
        gravity: &Vector3<f64>,
    ) -> Result<StepStats, StepError> {
        let t0 = Instant::now();
        let mut e_start = None;
        if self.fallback.is_some() {
            self.x_start.copy_from_slice(&body.x);
            self.v_start.copy_from_slice(&body.v);
            // Springs to moving targets and external forces do work the check cannot count.
            if !inputs.has_springs() && inputs.external.is_none() {
                // Measured with the moving holds at their end, as Newton would start: the
                // work of a prescribed motion is not the linearization's gain.
                place_moving(body, inputs, h);
                e_start = total_energy(body, h, gravity, &mut self.scratch);
                body.x.copy_from_slice(&self.x_start);
            }
        }
        // The same step again from bitwise the same start (the contact holds' second solves):
        // forces and matrix depend on the start state, the forces, springs, anchors and loads,
        // never on the held set, so the last solve's are kept. On `contact_10k` (two 10k-tet
        // bodies, each solved twice per step) rotations, forces and assembly were ~13 % of the
        // CPU time, half of it in the second solves (EXPERIMENTS.md, issue 18, contact_10k).
        let again = inputs.again
            && self.kept == Some((inputs.time, h))
            && same_bits(&body.x, &self.x_kept)
            && same_bits(&body.v, &self.v_kept);
        if !again {
            // f(x) without the damping forces, which act at v⁺ through the matrix; a point
            // spring's damping toward its moving target keeps its constant part `d ṗ` here.
            self.force.fill(Vector3::zeros());
            // The positions are lent out of the body for the call (a move, no allocation).
            let x = std::mem::take(&mut body.x);
            self.system
                .position_forces(body, inputs, &x, true, &mut self.force);
            body.x = x;
            for s in inputs.springs {
                s.add_target_damping(&mut self.force);
            }
            self.kept = Some((inputs.time, h));
            self.x_kept.copy_from_slice(&body.x);
            self.v_kept.copy_from_slice(&body.v);
        }
        let t1 = Instant::now();

        let version = System::matrix_version(body, inputs);
        let captured = self.sliding.prepare(inputs.moving, inputs.fixed);
        let sliding = self.sliding.has_sliding();
        // A warped tangent, `A = B A⁰ Bᵀ` (see `System::frames`): `a` keeps `A⁰` and the solve
        // runs in the vertices' frames. Not with captured holds, whose reactions and filter
        // need `A` itself.
        let in_frames = !captured && System::frames(body, inputs).is_some();
        let switched = in_frames != self.in_frames;
        let changed = if again && !switched {
            // The kept matrix as assembled (the last solve's filter changed `a`). The solver
            // gets the matrix of its last call unless either solve filters it.
            let was_filtered = !self.a_intact;
            if was_filtered {
                self.a.values.copy_from_slice(&self.a_unfiltered);
                self.a_intact = true;
            }
            was_filtered || sliding
        } else {
            // The frames' `A⁰` is constant: version 0.
            let kept = if in_frames { Some(0) } else { version };
            let changed = sliding
                || switched
                || !self.a_intact
                || kept.is_none_or(|v| self.assembled_for != Some((h, v)));
            if changed {
                // (1 + hα) M + h D + (hβ + h²) K, or its `A⁰`.
                if in_frames {
                    System::assemble_rest(body, 1.0, h, h * h, &mut self.a);
                } else {
                    self.system
                        .assemble(body, inputs, &body.x, 1.0, h, h * h, &mut self.a);
                }
                self.assembled_for = kept.map(|v| (h, v));
                self.in_frames = in_frames;
                self.a_intact = true;
            }
            changed
        };
        let t2 = Instant::now();

        // rhs = M v + h (f + m g); the lumped masses are the row sums of M, so M g = m g.
        let Body {
            elems,
            mass,
            model,
            x,
            v,
            constraints,
            ..
        } = body;
        let fixed = inputs.fixed;
        mass.mul_vec(elems, v, &mut self.rhs);
        let (force, lumped) = (&self.force, &mass.lumped);
        par::for_each_mut(&mut self.rhs, |i, r| {
            *r += h * (force[i] + lumped[i] * gravity)
        });
        match self.warm_start {
            WarmStart::Zero => self.v_new.fill(Vector3::zeros()),
            WarmStart::Velocity => self.v_new.copy_from_slice(v),
            WarmStart::Extrapolate => {
                let prev = &self.v_prev;
                let cur = &*v;
                par::for_each_mut(&mut self.v_new, |i, g| *g = 2.0 * cur[i] - prev[i]);
            }
            WarmStart::Adaptive => {
                if again {
                    self.history.again(v, &mut self.v_new);
                } else {
                    self.history.begin_step(inputs.time, h, v, &mut self.v_new);
                }
            }
        }
        // Held vertices keep their place, or move with their prescribed velocity: a
        // boundary condition of the solve, which is linearized at the step's start.
        for (i, (vn, &f)) in self.v_new.iter_mut().zip(fixed.iter()).enumerate() {
            if f {
                *vn = inputs
                    .moving
                    .and_then(|m| m.of(i))
                    .unwrap_or_else(Vector3::zeros);
            }
        }
        constraints.project(&mut self.rhs);
        constraints.project(&mut self.v_new);
        if captured {
            if sliding {
                // Kept for a solve of the same step again (the filter changes `a`).
                if self.a_unfiltered.len() != self.a.values.len() {
                    self.a_unfiltered = self.a.values.clone();
                } else {
                    self.a_unfiltered.copy_from_slice(&self.a.values);
                }
                self.a_intact = false;
            }
            self.sliding
                .filter(&mut self.a, &mut self.rhs, &mut self.v_new);
        }
        if sliding {
            // The filtered matrix is this step's only: the next one assembles again.
            self.assembled_for = None;
        }
        let frames = model
            .frame_tangent()
            .filter(|_| in_frames)
            .map(|f| f.rotations);
        if let Some(r) = frames {
            par::for_each_mut(&mut self.rhs, |i, b| *b = r[i].tr_mul(b));
            par::for_each_mut(&mut self.v_new, |i, g| *g = r[i].tr_mul(g));
        }
        let stats = self
            .solver
            .solve(&self.a, changed, &self.rhs, fixed, &mut self.v_new);
        if let Some(r) = frames {
            par::for_each_mut(&mut self.v_new, |i, y| *y = r[i] * *y);
        }
        if captured {
            self.sliding.restore(&self.a, &mut self.v_new);
        }
        self.sliding_solved = captured;
        self.v_prev.copy_from_slice(v);
        v.copy_from_slice(&self.v_new);
        let vn = &self.v_new;
        par::for_each_mut(x, |i, xi| *xi += h * vn[i]);
        let t3 = Instant::now();
        // One linear step can jump an element across zero volume, which a barrier model must
        // never do: take the step again with Newton, whose line search stays on the
        // positive-volume side (and fails, for the world to retry shorter, if it cannot).
        // A step that gained energy failed its linearization (module notes).
        let failed = self.fallback.is_some()
            && (check_barrier(body).is_err()
                || match (e_start, total_energy(body, h, gravity, &mut self.scratch)) {
                    (Some((kw0, p0)), Some((kw1, p1))) => {
                        let allowed = ENERGY_GAIN_TOLERANCE * kw0 + 1e-12 * (1.0 + p0.abs());
                        // A NaN energy counts as a gain.
                        let e1 = kw1 + p1;
                        e1.is_nan() || e1 > kw0 + p0 + allowed
                    }
                    _ => false,
                });
        if let (true, Some(newton)) = (failed, self.fallback.as_mut()) {
            // Newton keeps held vertices where they are: the moving ones are placed at
            // their end. The sliding ones are held along their normals only, as partial
            // constraints of the body for this one solve: their start moved by the
            // prescribed normal motion `h p`, Newton's velocity then keeps no normal part
            // and `p` is added back after. (Holding them fully where the failed linear step
            // put them left Newton unconverged in a 10 g drop, with +180 % energy; leaving
            // them free lost the crushing plate's push.)
            body.x.copy_from_slice(&self.x_start);
            body.v.copy_from_slice(&self.v_start);
            place_moving(body, inputs, h);
            for i in self.sliding.vertices() {
                body.x[i] += h * self.sliding.prescribed(i);
            }
            let added = body
                .constraints
                .push_temporary(self.sliding.partial_holds());
            self.fallbacks += 1;
            self.sliding_solved = false;
            let result = newton.step_with(body, inputs, h, gravity);
            body.constraints.pop_temporary(added);
            let mut full = result?;
            for i in self.sliding.vertices() {
                body.v[i] += self.sliding.prescribed(i);
            }
            // The held moving vertices leave with the velocity of their motion.
            if let Some(m) = inputs.moving {
                for (i, v) in body.v.iter_mut().enumerate() {
                    if m.on[i] && inputs.fixed[i] {
                        *v = m.velocity[i];
                    }
                }
            }
            full.solver_iterations += stats.iterations;
            full.forces_s += (t1 - t0).as_secs_f64();
            full.assembly_s += (t2 - t1).as_secs_f64();
            full.solve_s += (t3 - t2).as_secs_f64();
            return Ok(full);
        }

        Ok(StepStats {
            solver_iterations: stats.iterations,
            solver_residual: stats.relative_residual,
            solver_converged: stats.converged,
            factorized: stats.factorized,
            forces_s: (t1 - t0).as_secs_f64(),
            assembly_s: (t2 - t1).as_secs_f64(),
            solve_s: (t3 - t2).as_secs_f64(),
            substeps: 1,
            ..StepStats::default()
        })
    }
}

/// True when the two vectors hold the same bits.
fn same_bits(a: &[Vector3<f64>], b: &[Vector3<f64>]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(p, q)| (p.iter().zip(q.iter())).all(|(s, t)| s.to_bits() == t.to_bits()))
}

/// Moves the held vertices of `inputs.moving` to their end-of-step positions.
fn place_moving(body: &mut Body, inputs: &StepInputs, h: f64) {
    if let Some(m) = inputs.moving {
        for (i, x) in body.x.iter_mut().enumerate() {
            if let (true, Some(u)) = (inputs.fixed[i], m.of(i)) {
                *x += h * u;
            }
        }
    }
}
