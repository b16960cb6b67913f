//! One coupled, intersection-free backward-Euler step of all bodies of an island
//! (Li et al. 2020, IPC §3–4; optimization time integration, Gast et al. 2015).
//!
//! With `x = xⁿ + h u` (the unknown `u` is the end-of-step velocity, as in `time::newton`),
//! the step minimizes over every body at once
//! `E(x) = ½‖x − x̂‖²_M + h² (Ψ(x) + κ B(x) + D(x))`, `x̂ = xⁿ + h vⁿ + h² g`,
//! Ψ the bodies' elastic energies and inputs (each body's [`System`], so every force model,
//! damping, grab spring and load enters as in the single-body integrators), B the barrier of
//! [`super::potential`] and D the lagged friction of [`super::friction_potential`]. Newton
//! solves `r(u) = ∇ₓE / h = 0` with the Jacobian
//! `J = M + h D_damp + h² (K + κ ∇²B₊ + ∇²D)` (each body's matrix from
//! [`System::assemble`], contact blocks PSD-projected per pair), assembled into one
//! [`BlockCsr`] whose pattern couples the bodies in contact ([`super::pattern`]), solved by
//! PCG. Contact reactions are equal and opposite by construction: they are the gradient of
//! one potential of the pair's relative position.
//!
//! Every iterate is intersection-free: a Newton step is first cut to the largest fraction
//! that additive CCD allows for every pair (IPC §4.2, Li et al. 2021), and for barrier
//! materials to 0.9 of the first zero-volume crossing of any element
//! ([`crate::fem::feasible`]); then it is backtracked on Armijo's test on the slopes
//! (`time::newton`'s incremental-potential merit, which needs no energy, so every model
//! has it). The step's start is intersection-free, so by induction every accepted state is.
//!
//! Convergence: the Newton direction's largest velocity change `‖δ‖∞` below
//! `velocity_tolerance × L` (IPC's scale-aware test `‖p‖∞/h < ε_d` on the position step
//! `p = h δ`, L the island's bounding-box diagonal) or the residual below
//! `tolerance × (‖M vⁿ‖ + h ‖M g‖)`.
//!
//! Barrier stiffness: IPC §4.3's adaptive κ, initialized at every step from the balance of
//! the energy and barrier gradients and doubled while the closest distance keeps shrinking
//! (see [`super::barrier`]).

use super::barrier::{initial_barrier_stiffness, update_barrier_stiffness};
use super::friction_potential::FrictionSet;
use super::mesh::CollisionMesh;
use super::pattern::CoupledPattern;
use super::potential::{add_stencils, ContactSet, Obstacles, Pairing};
use super::stiff_core::StiffCores;
use super::IpcSettings;
use crate::body::Body;
use crate::clock::Instant;
use crate::contact::broad::BroadPhaseKind;
use crate::fem::feasible::{
    crushed_below_half_floor, inverts_an_element, max_feasible_step, max_step_keeping_positive,
};
use crate::linalg::{par, BlockCsr, BlockPattern, Pcg};
use crate::time::system::{zero_fixed, System};
use crate::time::{BodyInputs, StepStats};
use nalgebra::Vector3;

/// Fraction of the distance to the first zero-volume crossing a barrier model may go.
const FEASIBLE_FRACTION: f64 = 0.9;
/// Line-search cuts per Newton iteration.
const MAX_CUTS: u32 = 12;
/// Armijo's constant.
const ARMIJO_C: f64 = 1e-4;
/// Newton gives up (the step is unconverged, and the world's step control halves it) after
/// this many iterations in a row that each moved less than the convergence tolerance while
/// their full step did not: the line search is held back (an element at the inversion cap's
/// floor that the direction keeps crushing, a pair at the barrier) and further iterations
/// only creep. The ±10 m/s tubes at dt 1 ms spent 100 iterations per try on such a step
/// before the world halved it.
const STALLED_ITERATIONS: u32 = 5;

/// What the last coupled step did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IpcStats {
    pub newton_iterations: usize,
    pub cg_iterations: usize,
    pub converged: bool,
    /// Final `‖r‖ / ‖r₀‖`.
    pub residual: f64,
    pub cg_converged: bool,
    /// Active contact pairs at the end.
    pub pairs: usize,
    /// Closest distance between surfaces or to an obstacle at the end (m; ∞ when none is
    /// within `d̂`).
    pub min_distance: f64,
    /// Barrier stiffness κ (IPC units: `E` has `κ B`, N·m⁻³ for squared distances).
    pub kappa: f64,
    /// Newton steps cut by CCD or the inversion cap.
    pub ccd_cuts: usize,
    /// Line-search halvings.
    pub backtracks: usize,
    /// With [`IpcStep::check_iterates`]: accepted iterates in which a vertex of one body
    /// lay inside another body.
    pub intersecting_iterates: usize,
    /// The fraction of the world's projections (rigid cores, exact constraints) that
    /// [`IpcStep::keep_projection_feasible`] kept (1: all of it; 0 before it ran).
    pub projection_fraction: f64,
    /// Wall time (s) of the step's phases: residuals (forces, barrier and friction
    /// gradients), Jacobians (bodies' matrices and contact Hessians), linear solves, contact
    /// set updates (broad phase and distances) and CCD with the inversion cap.
    pub times: IpcTimes,
}

/// Wall time (s) of the phases of one coupled step (see [`IpcStats::times`]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct IpcTimes {
    pub residual_s: f64,
    pub jacobian_s: f64,
    pub solve_s: f64,
    pub pairs_s: f64,
    pub ccd_s: f64,
}

/// Why a coupled step could not be taken.
#[derive(Debug, Clone, PartialEq)]
pub enum IpcFailure {
    /// The step's start state already has a pair at distance 0 (bodies placed intersecting).
    Infeasible(String),
    /// A free surface vertex of `body` starts the step deeper than `d̂` inside an obstacle
    /// (`step/start.rs`): the body was placed inside it.
    Inside { body: usize, reason: String },
    /// A non-finite value appeared.
    NonFinite(&'static str),
}

/// The coupled step's state and workspaces (sized once; the pattern grows with contact).
#[derive(Debug)]
pub struct IpcStep {
    pub settings: IpcSettings,
    pub mesh: CollisionMesh,
    set: ContactSet,
    friction: FrictionSet,
    pattern: CoupledPattern,
    a: BlockCsr,
    body_a: Vec<BlockCsr>,
    systems: Vec<System>,
    pcg: Pcg,
    x0: Vec<Vector3<f64>>,
    v0: Vec<Vector3<f64>>,
    u: Vec<Vector3<f64>>,
    x: Vec<Vector3<f64>>,
    g: Vec<Vector3<f64>>,
    delta: Vec<Vector3<f64>>,
    dx: Vec<Vector3<f64>>,
    u_t: Vec<Vector3<f64>>,
    x_t: Vec<Vector3<f64>>,
    g_t: Vec<Vector3<f64>>,
    mv: Vec<Vector3<f64>>,
    fixed: Vec<bool>,
    start_pairs: Vec<super::potential::Pair>,
    /// `mesh.offsets` again (see `step`).
    offsets: Vec<usize>,
    partials: Vec<f64>,
    tet_partials: Vec<Vec<f64>>,
    /// Per body, the elements the inversion cap leaves free in this step (those crushed below
    /// half its floor at the step's start: [`crushed_below_half_floor`]).
    free_tets: Vec<Vec<bool>>,
    /// `d̂` (m), the island's rest bounding-box diagonal (m), `ε_v` (m/s).
    pub dhat: f64,
    pub length: f64,
    pub eps_v: f64,
    /// κ in IPC units and its cap.
    kappa: f64,
    kappa_max: f64,
    average_mass: f64,
    pub last: IpcStats,
    /// Test switch: check every accepted Newton iterate for a vertex inside another body
    /// (winding numbers, `O(vertices × triangles)`; counted in
    /// [`IpcStats::intersecting_iterates`]).
    pub check_iterates: bool,
    surfaces: Vec<crate::contact::ContactSurface>,
    /// The running step's phase times.
    times: IpcTimes,
    /// The dynamic rigid cores' stiff potential ([`super::stiff_core`]).
    cores: StiffCores,
}

impl IpcStep {
    /// The step for `bodies` (all of one island).
    pub fn new(
        bodies: &[Body],
        settings: IpcSettings,
        pairing: Pairing,
        broad: BroadPhaseKind,
    ) -> Self {
        let mesh = CollisionMesh::new(bodies);
        let length = CollisionMesh::bbox_diagonal(&mesh.rest).max(f64::MIN_POSITIVE);
        let dhat = settings.dhat.unwrap_or(1e-3 * length);
        let eps_v = settings.eps_v.unwrap_or(1e-3 * length);
        let mut set = ContactSet::new(&mesh, dhat, pairing, broad);
        set.hessian = settings.hessian;
        let patterns: Vec<&BlockPattern> = bodies.iter().map(|b| &*b.elems.pattern).collect();
        let pattern = CoupledPattern::new(&patterns, &mesh.offsets);
        let n = mesh.n_vertices();
        let zero = vec![Vector3::zeros(); n];
        let total_mass: f64 = bodies.iter().flat_map(|b| b.mass.lumped.iter()).sum();
        Self {
            a: BlockCsr::zeros(pattern.pattern.clone()),
            body_a: bodies
                .iter()
                .map(|b| BlockCsr::zeros(b.elems.pattern.clone()))
                .collect(),
            systems: bodies.iter().map(System::new).collect(),
            pcg: Pcg::new(n),
            x0: zero.clone(),
            v0: zero.clone(),
            u: zero.clone(),
            x: zero.clone(),
            g: zero.clone(),
            delta: zero.clone(),
            dx: zero.clone(),
            u_t: zero.clone(),
            x_t: zero.clone(),
            g_t: zero.clone(),
            mv: zero,
            fixed: vec![false; n],
            start_pairs: Vec::new(),
            offsets: mesh.offsets.clone(),
            partials: vec![0.0; par::n_chunks(n)],
            tet_partials: bodies
                .iter()
                .map(|b| vec![0.0; par::n_chunks(b.elems.len())])
                .collect(),
            free_tets: bodies.iter().map(|b| vec![false; b.elems.len()]).collect(),
            dhat,
            length,
            eps_v,
            kappa: settings.kappa.unwrap_or(0.0),
            kappa_max: settings.kappa.unwrap_or(f64::INFINITY),
            average_mass: total_mass / n.max(1) as f64,
            last: IpcStats::default(),
            check_iterates: false,
            surfaces: bodies
                .iter()
                .map(|b| crate::contact::ContactSurface::new(&b.mesh.positions, &b.mesh.tets))
                .collect(),
            times: IpcTimes::default(),
            cores: StiffCores::default(),
            settings,
            mesh,
            set,
            friction: FrictionSet::default(),
            pattern,
        }
    }

    /// Holds the vertices `core` of body `b` (a dynamic rigid core of the world) close to a
    /// rigid motion in the minimization ([`super::stiff_core`]).
    pub fn add_core(&mut self, body: &Body, b: usize, core: &[u32]) {
        self.cores.add(body, self.mesh.offsets[b], core);
    }

    /// Advances every body by `h` together (see the module notes). `inputs[b]` are body
    /// `b`'s step inputs (held vertices already placed at the step's end). On success the
    /// bodies hold the end state; on failure their state is unspecified (the world restores
    /// it). Per-body statistics are written into `stats`.
    pub fn step(
        &mut self,
        bodies: &mut [Body],
        inputs: &[BodyInputs],
        h: f64,
        gravity: &Vector3<f64>,
        obstacles: &Obstacles,
        stats: &mut [StepStats],
    ) -> Result<IpcStats, IpcFailure> {
        // A copy of the mesh's offsets, moved out for the step and put back (no allocation).
        let offsets = std::mem::take(&mut self.offsets);
        let result = self.step_inner(bodies, inputs, h, gravity, obstacles, stats, &offsets);
        self.offsets = offsets;
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn step_inner(
        &mut self,
        bodies: &mut [Body],
        inputs: &[BodyInputs],
        h: f64,
        gravity: &Vector3<f64>,
        obstacles: &Obstacles,
        stats: &mut [StepStats],
        offsets: &[usize],
    ) -> Result<IpcStats, IpcFailure> {
        let range = |b: usize| offsets[b]..offsets[b + 1];
        self.times = IpcTimes::default();
        for (b, body) in bodies.iter().enumerate() {
            let r = range(b);
            self.x0[r.clone()].copy_from_slice(&body.x);
            self.v0[r.clone()].copy_from_slice(&body.v);
            self.fixed[r].copy_from_slice(&inputs[b].fixed);
        }
        self.set.set_held(&self.fixed);
        let mut out = IpcStats {
            cg_converged: true,
            ..IpcStats::default()
        };
        // A moving obstacle is met at its end-of-step pose: the surface vertices it would
        // reach are first carried with it (a feasible start for Newton, not a change of the
        // state: the step's velocities are still measured from xⁿ).
        self.x_t.copy_from_slice(&self.x0);
        let carried = self.carry_with_obstacles(obstacles)?;
        for (b, body) in bodies.iter().enumerate() {
            if !body.model.needs_positive_volume() {
                crushed_below_half_floor(&body.elems, &self.x_t[range(b)], &mut self.free_tets[b]);
            }
        }
        // The start state must be feasible; friction is lagged from it.
        self.update_set(false, obstacles)
            .map_err(|p| IpcFailure::Infeasible(self.describe(&p)))?;
        self.start_pairs.clone_from(&self.set.pairs);
        let mut min_d2 = self.set.min_distance.powi(2);
        // First guess: the start velocities from the (carried) start, cut by CCD (and the
        // inversion cap).
        for i in 0..self.u.len() {
            self.dx[i] = if self.fixed[i] {
                Vector3::zeros()
            } else {
                h * self.v0[i]
            };
        }
        let t = if carried {
            0.0
        } else {
            std::mem::swap(&mut self.x0, &mut self.x_t);
            let t = self.max_fraction(bodies, true, obstacles);
            std::mem::swap(&mut self.x0, &mut self.x_t);
            t
        };
        let mut t = t;
        loop {
            for i in 0..self.u.len() {
                self.u[i] = if self.fixed[i] {
                    Vector3::zeros()
                } else {
                    (self.x_t[i] + t * self.dx[i] - self.x0[i]) / h
                };
            }
            self.positions(h);
            // The cap's root can be off by round-off: the positions themselves decide.
            if t == 0.0 || !self.inverts_an_element(bodies) {
                break;
            }
            t = if t > 1e-12 { 0.5 * t } else { 0.0 };
        }
        self.update_set(true, obstacles)
            .map_err(|_| IpcFailure::NonFinite("first guess"))?;
        if self.settings.kappa.is_none() {
            self.init_kappa(bodies, inputs, h, gravity, obstacles);
        }
        // Friction lagged at the step's start (IPC §5: λ, T and the closest points from xⁿ,
        // carried as above; `x_t` still holds it).
        self.friction.lag(
            &self.start_pairs,
            &self.x_t,
            self.dhat,
            self.kappa / (h * h),
            self.settings.friction,
            obstacles,
        );
        let eps = self.eps_v * h;
        let mut norm = self.eval(bodies, inputs, h, gravity, obstacles, eps, true);
        if !norm.is_finite() {
            return Err(IpcFailure::NonFinite("residual at the first guess"));
        }
        let r0 = norm.max(f64::MIN_POSITIVE);
        // The residual is a momentum (kg·m/s): measured against the step's own momentum
        // scale `‖M vⁿ‖ + h ‖M g‖`, not against the first guess's residual (which a barrier
        // pair made close by the first guess's CCD cut can make arbitrarily large).
        let scale = self.momentum_scale(bodies, h, gravity);
        let target = self.settings.tolerance * scale;
        // Compared with h ‖δ‖∞, the largest position change of the direction.
        let tol_x = self.settings.velocity_tolerance * self.length * h;
        // Φ of the accepted iterate, when the line search computed it (`None`: not known).
        let mut phi_current: Option<Option<f64>> = None;
        // Iterations in a row whose accepted move was below the convergence tolerance while
        // the Newton step itself was not (see `STALLED_ITERATIONS`).
        let mut stalled = 0;
        for _ in 0..self.settings.max_iterations {
            if norm <= target {
                out.converged = true;
                break;
            }
            self.assemble(bodies, inputs, h, obstacles);
            let mut cg = self.settings.solver;
            cg.tolerance = cg.tolerance.min(0.5 * target / norm).max(1e-12);
            self.delta.fill(Vector3::zeros());
            let t_solve = Instant::now();
            let s = self
                .pcg
                .solve(&self.a, &self.g, &self.fixed, &mut self.delta, &cg);
            self.times.solve_s += t_solve.elapsed().as_secs_f64();
            out.cg_iterations += s.iterations;
            out.cg_converged &= s.converged;
            out.newton_iterations += 1;
            for (b, body) in bodies.iter().enumerate() {
                body.constraints.project(&mut self.delta[range(b)]);
            }
            if self.delta.iter().any(|d| !d.iter().all(|c| c.is_finite())) {
                return Err(IpcFailure::NonFinite("Newton direction"));
            }
            let step_inf = h * self.delta.iter().map(|d| d.amax()).fold(0.0, f64::max);
            // The line search: CCD and inversion cap, then Armijo on the slopes.
            for i in 0..self.dx.len() {
                self.dx[i] = h * self.delta[i];
            }
            let cap = self.max_fraction(bodies, false, obstacles);
            if cap < 1.0 {
                out.ccd_cuts += 1;
            }
            if cap <= 0.0 {
                // Nothing may move (a pair or sliver at the rounding floor): every further
                // iteration would repeat this one.
                break;
            }
            let slope0 = -dot(&self.g, &self.delta);
            // Φ at the current iterate: the last accepted trial's, unless κ changed since.
            let phi0 = match phi_current.take() {
                Some(phi) => phi,
                None => self.merit(bodies, inputs, h, gravity, eps),
            };
            let mut alpha = cap;
            let mut accepted = false;
            for _ in 0..MAX_CUTS {
                for i in 0..self.u.len() {
                    self.u_t[i] = self.u[i] + alpha * self.delta[i];
                }
                std::mem::swap(&mut self.u, &mut self.u_t);
                std::mem::swap(&mut self.x, &mut self.x_t);
                std::mem::swap(&mut self.g, &mut self.g_t);
                self.positions(h);
                // The inversion cap's root can be off by round-off (see
                // `inverts_an_element`): a trial that inverts an element is refused too.
                let feasible =
                    !self.inverts_an_element(bodies) && self.update_set(true, obstacles).is_ok();
                let trial = if feasible {
                    self.eval(bodies, inputs, h, gravity, obstacles, eps, true)
                } else {
                    f64::NAN
                };
                let ok = trial.is_finite()
                    && match phi0 {
                        // Armijo on Φ itself (IPC's backtracking on the incremental potential).
                        Some(phi0) => {
                            let phi = self.merit(bodies, inputs, h, gravity, eps);
                            phi_current = Some(phi);
                            phi.is_some_and(|phi| phi <= phi0 + ARMIJO_C * alpha * slope0.min(0.0))
                        }
                        // Without a potential: the trapezoid on the two slopes,
                        // Φ(α) − Φ(0) ≈ ½ α (φ'(0) + φ'(α)) ≤ c α φ'(0).
                        None => {
                            let slope = -dot(&self.g, &self.delta);
                            slope0 >= 0.0 || slope <= (1.0 - 2.0 * ARMIJO_C) * slope0.abs()
                        }
                    };
                if !ok {
                    phi_current = None;
                }
                if ok {
                    norm = trial;
                    accepted = true;
                    break;
                }
                // Undo: the accepted iterate is in the `_t` buffers.
                std::mem::swap(&mut self.u, &mut self.u_t);
                std::mem::swap(&mut self.x, &mut self.x_t);
                std::mem::swap(&mut self.g, &mut self.g_t);
                alpha *= 0.5;
                out.backtracks += 1;
            }
            if !accepted {
                // Restore the contact set of the kept iterate.
                self.update_set(true, obstacles)
                    .map_err(|_| IpcFailure::NonFinite("kept iterate"))?;
                break;
            }
            if self.check_iterates && self.intersecting(bodies.len()) {
                out.intersecting_iterates += 1;
            }
            if self.settings.kappa.is_none() {
                let d2 = self.set.min_distance.powi(2);
                let kappa = self.kappa;
                self.kappa = update_barrier_stiffness(
                    min_d2,
                    d2,
                    self.kappa_max,
                    self.kappa,
                    self.length,
                    // IPC's ε = 10⁻⁹ l² on squared distances: d < 3.2·10⁻⁵ l.
                    1e-9f64.sqrt(),
                );
                min_d2 = d2;
                if self.kappa != kappa {
                    phi_current = None;
                }
            }
            if step_inf <= tol_x {
                out.converged = true;
                break;
            }
            stalled = if alpha * step_inf < tol_x {
                stalled + 1
            } else {
                0
            };
            if stalled >= STALLED_ITERATIONS {
                break;
            }
        }
        out.residual = norm / r0;
        out.pairs = self.set.pairs.len();
        out.min_distance = self.set.min_distance;
        out.kappa = self.kappa;
        out.times = self.times;
        for (b, body) in bodies.iter_mut().enumerate() {
            body.x.copy_from_slice(&self.x[range(b)]);
            body.v.copy_from_slice(&self.u[range(b)]);
            let s = &mut stats[b];
            s.newton_iterations += out.newton_iterations;
            s.newton_residual = out.residual;
            s.newton_converged = out.converged;
            s.solver_iterations += out.cg_iterations;
            s.solver_converged = out.cg_converged;
            s.substeps += 1;
        }
        // The coupled phases are the island's, not one body's: they are counted once, on
        // its first body.
        if let Some(s) = stats.first_mut() {
            s.forces_s += out.times.residual_s;
            s.assembly_s += out.times.jacobian_s;
            s.solve_s += out.times.solve_s;
        }
        self.last = out;
        Ok(out)
    }

    /// Whether `self.x` has an element with volume ≤ 0 that is positive at `self.x_t` (the
    /// accepted iterate during a line search's trial, the start at the first guess).
    fn inverts_an_element(&self, bodies: &[Body]) -> bool {
        (bodies.iter().enumerate()).any(|(b, body)| {
            let r = self.mesh.offsets[b]..self.mesh.offsets[b + 1];
            inverts_an_element(&body.elems, &self.x_t[r.clone()], &self.x[r])
        })
    }

    /// `x = x⁰ + h u` (held vertices: `x⁰`).
    fn positions(&mut self, h: f64) {
        for i in 0..self.x.len() {
            self.x[i] = if self.fixed[i] {
                self.x0[i]
            } else {
                self.x0[i] + h * self.u[i]
            };
        }
    }

    /// The largest fraction of `self.dx` from `x⁰` (`from_start`) or `x` that CCD and the
    /// inversion cap allow (1 when nothing limits it).
    fn max_fraction(&mut self, bodies: &[Body], from_start: bool, obstacles: &Obstacles) -> f64 {
        let started = Instant::now();
        let x = if from_start { &self.x0 } else { &self.x };
        let mut t = self.set.max_step(&self.mesh, x, &self.dx, obstacles);
        for (b, body) in bodies.iter().enumerate() {
            let r = self.mesh.offsets[b]..self.mesh.offsets[b + 1];
            let (x, dx, partials) = (&x[r.clone()], &self.dx[r], &mut self.tet_partials[b]);
            let c = if body.model.needs_positive_volume() {
                max_feasible_step(&body.elems, x, dx, 1.0, partials)
            } else {
                let free = &self.free_tets[b];
                max_step_keeping_positive(&body.elems, x, dx, 1.0, partials, free)
            };
            if c.is_finite() {
                t = t.min(FEASIBLE_FRACTION * c);
            }
        }
        self.times.ccd_s += started.elapsed().as_secs_f64();
        t
    }

    /// The contact set's pairs at `self.x` (`at_x`) or `self.x_t` (timed).
    fn update_set(
        &mut self,
        at_x: bool,
        obstacles: &Obstacles,
    ) -> Result<(), super::potential::Pair> {
        let started = Instant::now();
        let x = if at_x { &self.x } else { &self.x_t };
        let r = self.set.update(&self.mesh, x, obstacles);
        self.times.pairs_s += started.elapsed().as_secs_f64();
        r
    }

    /// IPC §4.3's κ at the first guess: the value that best balances the energy's gradient
    /// with the barrier's, at least `κ_min` (IPC Toolkit's `initial_barrier_stiffness`).
    fn init_kappa(
        &mut self,
        bodies: &mut [Body],
        inputs: &[BodyInputs],
        h: f64,
        gravity: &Vector3<f64>,
        obstacles: &Obstacles,
    ) {
        self.eval(bodies, inputs, h, gravity, obstacles, 0.0, false);
        // ∇ₓE of IPC's energy without contact is h r = −h g; the barrier's is ∇B.
        self.set.compute_stencils(&self.x, obstacles, false);
        self.dx.fill(Vector3::zeros());
        self.set.add_gradient(1.0, &mut self.dx);
        zero_fixed(&self.fixed, &mut self.dx);
        for gi in &mut self.g {
            *gi *= -h;
        }
        let (k, kmax) = initial_barrier_stiffness(
            self.length,
            self.dhat,
            self.average_mass,
            flat(&self.g),
            flat(&self.dx),
            1e11,
        );
        self.kappa = k;
        self.kappa_max = kmax;
    }

    /// The coupled Jacobian at `self.x`: each body's `M + h D + h² K`, and `h² κ ∇²B₊ +
    /// h² ∇²D` of the contact pairs (the pattern grown first if a pair needs new blocks).
    fn assemble(&mut self, bodies: &[Body], inputs: &[BodyInputs], h: f64, obstacles: &Obstacles) {
        let started = Instant::now();
        self.set.compute_stencils(&self.x, obstacles, true);
        let needed = self
            .set
            .stencils
            .iter()
            .chain(self.friction.stencils.iter())
            .flat_map(|s| {
                let n = s.n;
                let v = s.v;
                (0..n).flat_map(move |i| (0..n).map(move |j| (v[i], v[j])))
            });
        if !self.pattern.holds(needed.clone()) {
            let patterns: Vec<&BlockPattern> = bodies.iter().map(|b| &*b.elems.pattern).collect();
            self.pattern.grow(needed, &patterns, &self.mesh.offsets);
            self.a = BlockCsr::zeros(self.pattern.pattern.clone());
            self.pcg = Pcg::new(self.a.n_rows());
        }
        self.a.set_zero();
        for (b, body) in bodies.iter().enumerate() {
            let r = self.mesh.offsets[b]..self.mesh.offsets[b + 1];
            self.systems[b].assemble(
                body,
                &inputs[b].view(),
                &self.x[r],
                1.0,
                h,
                h * h,
                &mut self.body_a[b],
            );
            self.pattern.add_body(b, &self.body_a[b], &mut self.a);
        }
        self.cores.add_hessian(h * h, &mut self.a);
        add_stencils(&self.set.stencils, self.kappa, &mut self.a);
        add_stencils(&self.friction.stencils, h * h, &mut self.a);
        self.times.jacobian_s += started.elapsed().as_secs_f64();
    }

    /// The active pairs at the end of the last step.
    pub fn contact_set(&self) -> &ContactSet {
        &self.set
    }
}

/// The components of `v` as one slice.
fn flat(v: &[Vector3<f64>]) -> &[f64] {
    // SAFETY: `Vector3<f64>` is `#[repr(C)]` storage of three contiguous f64 (nalgebra's
    // `ArrayStorage<f64, 3, 1>`), so `n` vectors are `3n` f64 with the same alignment.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const f64, 3 * v.len()) }
}

fn dot(a: &[Vector3<f64>], b: &[Vector3<f64>]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x.dot(y)).sum()
}

mod projected;
mod residual;
mod start;

#[cfg(test)]
#[path = "step_tests.rs"]
mod tests;
