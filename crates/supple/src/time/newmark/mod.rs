//! Explicit Newmark (central difference) with a pre-factored `M + ½Δt D` and the `T/2^i`
//! step ladder (Zhuang & Canny 1999, §3 eq. 7–9 and §4).
//!
//! One step of size `h` from `(x_n, v_n, a_n)` (Zhuang eq. 7, 8, 9, in that order):
//!
//! - `x_{n+1} = x_n + h v_n + ½ h² a_n`
//! - `(M + ½h D) a_{n+1} = F_{n+1} − R(x_{n+1}) − D (v_n + ½h a_n)`
//! - `v_{n+1} = v_n + ½h (a_n + a_{n+1})`
//!
//! Zhuang's `D` is constant. Here the matrix holds the rest damping
//! `D₀ = α M + β K₀ + D_visc(X)` (`K₀` the linear-elastic stiffness of the body's Lamé
//! parameters, the tangent at rest of every model here; `X` the rest positions), while the
//! forces come from [`System::forces`], whose damping `D(x)` follows the deformation (`β K(x)`,
//! the viscosity at `x`). The right-hand side is evaluated at the predicted velocity
//! `ṽ = v_n + h a_n` and corrected by `½h D₀ a_n`:
//!
//! `(M + ½h D₀) a_{n+1} = f(x_{n+1}, ṽ) + M g + ½h D₀ a_n`.
//!
//! With `D(x) = D₀` this is exactly eq. 8 (`−D ṽ + ½h D a_n = −D (v_n + ½h a_n)`); otherwise it
//! differs from the implicit-in-damping eq. 8 by `½h (D(x) − D₀)(a_{n+1} − a_n) = O(h²)`, so the
//! scheme stays second order. Undamped, it is the central-difference (velocity Verlet) scheme:
//! symplectic, stable for `h ω_max ≤ 2`.
//!
//! `M` is the body's mass (lumped or consistent). The matrix of level `i` is factored by the
//! sparse Cholesky under the chosen vertex ordering the first time that level is used, and kept
//! (Zhuang §4); all levels share one ordering. With a lumped `M` and `D₀ = α M` (no `β`, no
//! viscosity) the matrix is diagonal and solved by a division, with no factorization.
//!
//! **The ladder** (Zhuang §4): the allowed steps are `T/2^i`, `i = 0..=m`, with `T` the world's
//! `dt`; a world step at level `i` is `2^i` equal substeps. It starts at level 0.
//! - A substep is *rejected* when its result is unusable — a non-finite value, or a vertex
//!   farther than [`EXPLOSION_FACTOR`] rest diagonals from the centre of mass (the criteria of
//!   [`Body::check_state`]) — or when the local frequency `ω̂` of the step violates the
//!   central-difference stability limit, `h ω̂ > 2`. `ω̂² = ‖a_{n+1} − a_n‖_M / ‖x_{n+1} − x_n‖_M`
//!   (lumped-mass norms over the free vertices) is the Rayleigh-quotient estimate of the
//!   stiffness the step sees (the stiffness detection of Hairer & Wanner, *Solving ODEs II*,
//!   §IV.2): for a linear system it never exceeds `ω_max`, and it reaches the frequency of an
//!   unstable mode as soon as that mode dominates the step. Heavy stiffness-proportional damping
//!   of the dominant motion can raise `ω̂` too; that only costs extra (safe) halvings.
//! - On a rejection at level `i < m`, the world step restarts from its first state at level
//!   `i + 1` (so a failed level leaves no trace in the state). At level `m` the step is kept as
//!   it is (the world's divergence check reports it).
//! - After [`PROMOTE_AFTER`] consecutive world steps at level `i` without a rejection, the next
//!   world step tries level `i − 1`. Each rejection at a level doubles the wait before that
//!   level is tried again (up to [`MAX_WAIT`] world steps), so a level that keeps failing costs
//!   a logarithmic number of retries.
//!
//! The factors belong to one `T`; when the world's `dt` changes they are dropped and refactored
//! on demand (the factorization count then restarts its `≤ m + 1` bound). The first `a_0` solves
//! `M a_0 = f(x_0, v_0) + M g` by two fixed-point passes of `(M + ½hD₀) a = f + ½hD₀ a` (exact
//! without damping, an `O(h²)` error otherwise); it is recomputed whenever the body's state was
//! changed outside this integrator.

use super::symplectic_euler::CourantBound;
use super::system::{zero_fixed, System};
use super::StepInputs;
use crate::body::{Body, EXPLOSION_FACTOR};
use crate::clock::Instant;
use crate::fem::material::Linear;
use crate::fem::{ForceModel, MassKind};
use crate::linalg::ordering::{OrderingKind, Permutation};
use crate::linalg::solver::mesh_ordering;
use crate::linalg::{par, BlockCsr, CholeskyError, SolverError, SparseCholesky};
use nalgebra::Vector3;

mod step;

/// Consecutive world steps without a rejection before the ladder tries the next larger step.
pub const PROMOTE_AFTER: usize = 8;
/// Fraction of the Courant bound a level's step may use (the measured stability limit of the
/// lumped-mass explicit schemes is 0.88–0.96 of the bound on box meshes).
pub const STABILITY_SAFETY: f64 = 0.85;
/// The longest wait (world steps) before a level that failed is tried again.
pub const MAX_WAIT: usize = 1024;

/// How `M + ½h D₀` is solved.
#[derive(Debug)]
enum Solve {
    /// Lumped `M`, `D₀ = α M`: `a_i = rhs_i / ((1 + ½hα) m_i)`.
    Diagonal,
    /// Sparse Cholesky per level, under one vertex ordering; `d0` is the rest damping matrix.
    Cholesky {
        perm: Permutation,
        d0: Option<BlockCsr>,
        matrix: BlockCsr,
        factors: Vec<Option<Box<SparseCholesky>>>,
    },
}

/// Explicit Newmark with the step ladder (see the module documentation).
#[derive(Debug)]
pub struct Newmark {
    /// The largest step the stability estimate allows (see `first_stable_level`), and whether
    /// the estimate is used.
    stable_dt: f64,
    use_estimate: bool,
    /// The finest level `m` (steps down to `T/2^m`).
    levels: u32,
    ordering: OrderingKind,
    solve: Solve,
    system: System,
    /// The `T` the kept factors belong to.
    factored_for: Option<f64>,
    factorizations: usize,
    last_error: Option<CholeskyError>,
    /// Current level, consecutive safe world steps at it, and the wait per level.
    level: u32,
    safe_steps: usize,
    wait: Vec<usize>,
    /// Accepted substeps and rejected trial substeps per level.
    usage: Vec<usize>,
    rejections: Vec<usize>,
    /// `α` (for the diagonal solve) and the lumped masses (norms, diagonal solve).
    alpha: f64,
    lumped: Vec<f64>,
    fixed: Vec<bool>,
    /// Explosion limit: `EXPLOSION_FACTOR` rest bounding-box diagonals.
    explosion_limit: f64,
    /// State `(x_n, v_n, a_n)`, the start of the world step, and the trial substep.
    x: Vec<Vector3<f64>>,
    v: Vec<Vector3<f64>>,
    a: Vec<Vector3<f64>>,
    x0: Vec<Vector3<f64>>,
    v0: Vec<Vector3<f64>>,
    a0: Vec<Vector3<f64>>,
    x1: Vec<Vector3<f64>>,
    v_pred: Vec<Vector3<f64>>,
    a1: Vec<Vector3<f64>>,
    rhs: Vec<Vector3<f64>>,
    tmp: Vec<Vector3<f64>>,
    partials: Vec<f64>,
    /// `a_n` belongs to the body's current `(x, v)`.
    synced: bool,
}

impl Newmark {
    /// The integrator for `body` with levels `0..=levels` (at most
    /// [`MAX_LADDER_LEVELS`](super::MAX_LADDER_LEVELS); more are cut to it). For a non-diagonal
    /// matrix this computes the vertex `ordering` once (from the pattern, rest positions and
    /// tets) and the rest damping `D₀`; the factors are made when their level is first used.
    pub fn new(body: &Body, levels: u32, ordering: OrderingKind) -> Result<Self, SolverError> {
        let levels = levels.min(super::MAX_LADDER_LEVELS);
        let n = body.n_vertices();
        let (alpha, beta) = (body.damping.alpha, body.damping.beta);
        let diagonal =
            body.mass.kind == MassKind::Lumped && beta == 0.0 && body.viscosity.is_none();
        let solve = if diagonal {
            Solve::Diagonal
        } else {
            let perm = mesh_ordering(
                ordering,
                &body.elems.pattern,
                &body.mesh.positions,
                &body.mesh.tets,
            )?;
            // D₀ = α M + β K₀ + D_visc(X), assembled once.
            let damped = alpha > 0.0 || beta > 0.0 || body.viscosity.is_some();
            let d0 = damped.then(|| {
                let mut d = BlockCsr::zeros(body.elems.pattern.clone());
                if beta > 0.0 {
                    Linear::new(body.lame).add_tangent(
                        &body.elems,
                        &body.mesh.positions,
                        beta,
                        &mut d,
                    );
                }
                if let Some(visc) = &body.viscosity {
                    visc.add_matrix(&body.elems, &body.mesh.positions, 1.0, &mut d);
                }
                body.mass.add_to(&mut d, alpha);
                d
            });
            Solve::Cholesky {
                perm,
                d0,
                matrix: BlockCsr::zeros(body.elems.pattern.clone()),
                factors: (0..=levels).map(|_| None).collect(),
            }
        };
        let (lo, hi) = body.mesh.bounding_box();
        let zeros = vec![Vector3::zeros(); n];
        let n_levels = levels as usize + 1;
        let mass_factor = match body.mass.kind {
            MassKind::Lumped => 1.0,
            MassKind::Consistent => 3f64.sqrt().recip(),
        };
        Ok(Self {
            stable_dt: STABILITY_SAFETY * mass_factor * CourantBound::of(body).dt,
            use_estimate: true,
            levels,
            ordering,
            solve,
            system: System::new(body),
            factored_for: None,
            factorizations: 0,
            last_error: None,
            level: 0,
            safe_steps: 0,
            wait: vec![PROMOTE_AFTER; n_levels],
            usage: vec![0; n_levels],
            rejections: vec![0; n_levels],
            alpha,
            lumped: body.mass.lumped.clone(),
            fixed: body.fixed.clone(),
            explosion_limit: EXPLOSION_FACTOR * (hi - lo).norm(),
            x: zeros.clone(),
            v: zeros.clone(),
            a: zeros.clone(),
            x0: zeros.clone(),
            v0: zeros.clone(),
            a0: zeros.clone(),
            x1: zeros.clone(),
            v_pred: zeros.clone(),
            a1: zeros.clone(),
            rhs: zeros.clone(),
            tmp: zeros,
            partials: vec![0.0; par::n_chunks(n)],
            synced: false,
        })
    }

    /// The coarsest level `i` (at most `m`) whose step `dt/2^i` is within the stability
    /// estimate: `STABILITY_SAFETY` × the Courant bound (Debunne eq. 8), divided by √3 for
    /// a consistent mass (it raises the highest frequency by up to √3, as for 1D linear
    /// elements). Coarser levels are skipped; the reactive halving handles what the estimate
    /// misses (stiffening under large deformation).
    pub fn first_stable_level(&self, dt: f64) -> u32 {
        if !self.use_estimate {
            return 0;
        }
        (0..=self.levels)
            .find(|&i| dt / f64::from(1u32 << i) <= self.stable_dt)
            .unwrap_or(self.levels)
    }

    /// Turns the stability estimate off (`false`: every world step may start from level 0 and
    /// only the reactive halving guards the step — for studying the ladder) or back on.
    pub fn set_stability_estimate(&mut self, on: bool) {
        self.use_estimate = on;
    }

    /// The finest level `m`.
    pub fn levels(&self) -> u32 {
        self.levels
    }

    /// The level the next world step starts from.
    pub fn level(&self) -> u32 {
        self.level
    }

    /// Accepted substeps at each level `0..=m`.
    pub fn level_usage(&self) -> &[usize] {
        &self.usage
    }

    /// Rejected trial substeps at each level `0..=m`.
    pub fn level_rejections(&self) -> &[usize] {
        &self.rejections
    }

    /// Numeric factorizations made so far (0 for the diagonal solve; at most `m + 1` per `T`).
    pub fn factorizations(&self) -> usize {
        self.factorizations
    }

    /// True when the matrix is diagonal (lumped mass, no `β`, no viscosity).
    pub fn is_diagonal(&self) -> bool {
        matches!(self.solve, Solve::Diagonal)
    }

    /// The error of a failed factorization (that world step was not taken).
    pub fn last_error(&self) -> Option<&CholeskyError> {
        self.last_error.as_ref()
    }

    /// One trial substep of size `h` at `level` from `(x, v, a)`. Commits it (into
    /// `x, v, a`) when it passes the rejection test or when `force`; returns whether it passed,
    /// or the error of a failed solve.
    #[allow(clippy::too_many_arguments)]
    fn substep(
        &mut self,
        body: &mut Body,
        inputs: &StepInputs,
        level: u32,
        h: f64,
        gravity: &Vector3<f64>,
        force: bool,
        times: &mut Times,
    ) -> Result<bool, CholeskyError> {
        let t0 = Instant::now();
        // Zhuang eq. 7, and the predicted velocity of the damping forces.
        {
            let (x, v, a) = (&self.x, &self.v, &self.a);
            par::for_each_mut(&mut self.x1, |i, x1| {
                *x1 = x[i] + h * v[i] + (0.5 * h * h) * a[i]
            });
            par::for_each_mut(&mut self.v_pred, |i, vp| *vp = v[i] + h * a[i]);
        }
        self.system.forces(
            body,
            inputs,
            &self.x1,
            &self.v_pred,
            gravity,
            true,
            &mut self.rhs,
        );
        // Eq. 8's right-hand side: f(x_{n+1}, ṽ) + M g + ½h D₀ a_n.
        if apply_d0(
            &self.solve,
            &self.lumped,
            self.alpha,
            &self.a,
            &mut self.tmp,
        ) {
            let tmp = &self.tmp;
            par::for_each_mut(&mut self.rhs, |i, r| *r += (0.5 * h) * tmp[i]);
        }
        let t1 = Instant::now();
        solve_into(
            &mut self.solve,
            &self.lumped,
            &self.fixed,
            self.alpha,
            level,
            h,
            &self.rhs,
            &mut self.a1,
        )?;
        times.forces += (t1 - t0).as_secs_f64();
        times.solve += t1.elapsed().as_secs_f64();

        let passed = self.passes(h);
        if passed || force {
            // Eq. 9.
            let (a, a1) = (&self.a, &self.a1);
            par::for_each_mut(&mut self.v, |i, vi| *vi += (0.5 * h) * (a[i] + a1[i]));
            std::mem::swap(&mut self.x, &mut self.x1);
            std::mem::swap(&mut self.a, &mut self.a1);
        }
        Ok(passed)
    }

    /// The rejection test of the trial `(x1, a1)` against `(x, a)` (see the module
    /// documentation): finite, not exploded, and `h ω̂ ≤ 2`.
    fn passes(&mut self, h: f64) -> bool {
        let n = self.x.len();
        let (x, x1, a, a1, m, fixed) = (
            &self.x,
            &self.x1,
            &self.a,
            &self.a1,
            &self.lumped,
            &self.fixed,
        );
        // Lumped-mass weighted squares over the free vertices.
        let weighted = |i: usize, d: Vector3<f64>| {
            if fixed[i] {
                0.0
            } else {
                m[i] * d.norm_squared()
            }
        };
        let dx2 = par::sum(n, &mut self.partials, |i| weighted(i, x1[i] - x[i]));
        let da2 = par::sum(n, &mut self.partials, |i| weighted(i, a1[i] - a[i]));
        // Finite positions and accelerations (the velocities are their averages).
        let size = par::sum(n, &mut self.partials, |i| {
            x1[i].norm_squared() + a1[i].norm_squared()
        });
        if !(dx2.is_finite() && da2.is_finite() && size.is_finite()) {
            return false;
        }
        if dx2 > 0.0 && h * h * (da2 / dx2).sqrt() > 4.0 {
            return false;
        }
        let com = m
            .iter()
            .zip(x1.iter())
            .map(|(mi, xi)| *mi * xi)
            .sum::<Vector3<f64>>()
            / m.iter().sum::<f64>();
        let limit = self.explosion_limit;
        let far = par::sum(n, &mut self.partials, |i| {
            f64::from(u8::from((x1[i] - com).norm() > limit))
        });
        far == 0.0
    }

    /// `a_n` at the current `(x, v)`: two fixed-point passes of
    /// `(M + ½hD₀) a = f(x, v) + M g + ½hD₀ a` from `a = 0`.
    fn initial_acceleration(
        &mut self,
        body: &mut Body,
        inputs: &StepInputs,
        level: u32,
        h: f64,
        gravity: &Vector3<f64>,
    ) -> Result<(), CholeskyError> {
        // `v_pred` holds the force, `rhs` the right-hand side.
        self.system.forces(
            body,
            inputs,
            &self.x,
            &self.v,
            gravity,
            true,
            &mut self.v_pred,
        );
        self.rhs.copy_from_slice(&self.v_pred);
        let passes = if apply_d0(
            &self.solve,
            &self.lumped,
            self.alpha,
            &self.a,
            &mut self.tmp,
        ) {
            2
        } else {
            1
        };
        for pass in 0..passes {
            if pass > 0 {
                apply_d0(
                    &self.solve,
                    &self.lumped,
                    self.alpha,
                    &self.a,
                    &mut self.tmp,
                );
                let (f, tmp) = (&self.v_pred, &self.tmp);
                par::for_each_mut(&mut self.rhs, |i, r| *r = f[i] + (0.5 * h) * tmp[i]);
            }
            solve_into(
                &mut self.solve,
                &self.lumped,
                &self.fixed,
                self.alpha,
                level,
                h,
                &self.rhs,
                &mut self.a,
            )?;
        }
        Ok(())
    }

    /// Factors level `level`'s `M + ½h D₀` if it is not yet; returns whether it did.
    fn ensure_factor(&mut self, body: &Body, level: u32, h: f64) -> Result<bool, CholeskyError> {
        let Solve::Cholesky {
            perm,
            d0,
            matrix,
            factors,
        } = &mut self.solve
        else {
            return Ok(false);
        };
        let slot = &mut factors[level as usize];
        if slot.is_some() {
            return Ok(false);
        }
        // M + ½h D₀ (Zhuang eq. 8), constant for this level.
        matrix.set_zero();
        if let Some(d) = d0 {
            for (m, dv) in matrix.values.iter_mut().zip(&d.values) {
                *m += 0.5 * h * dv;
            }
        }
        body.mass.add_to(matrix, 1.0);
        let mut chol = SparseCholesky::new(matrix.pattern.clone(), Some(perm.perm()))?;
        chol.ldlt_fallback = true;
        chol.factor(matrix, &self.fixed)?;
        *slot = Some(Box::new(chol));
        self.factorizations += 1;
        Ok(true)
    }

    fn restore_checkpoint(&mut self) {
        self.x.copy_from_slice(&self.x0);
        self.v.copy_from_slice(&self.v0);
        self.a.copy_from_slice(&self.a0);
    }

    fn drop_factors(&mut self) {
        if let Solve::Cholesky { factors, .. } = &mut self.solve {
            factors.iter_mut().for_each(|f| *f = None);
        }
    }
}

/// Seconds spent in forces and in solves during one world step.
#[derive(Default)]
struct Times {
    forces: f64,
    solve: f64,
}

/// `out = D₀ a`; false (leaving `out` alone) when `D₀ = 0`.
fn apply_d0(
    solve: &Solve,
    lumped: &[f64],
    alpha: f64,
    a: &[Vector3<f64>],
    out: &mut [Vector3<f64>],
) -> bool {
    match solve {
        Solve::Diagonal if alpha > 0.0 => {
            par::for_each_mut(out, |i, o| *o = (alpha * lumped[i]) * a[i]);
            true
        }
        Solve::Diagonal => false,
        Solve::Cholesky { d0: Some(d), .. } => {
            d.mul_vec(a, out);
            true
        }
        Solve::Cholesky { d0: None, .. } => false,
    }
}

/// Solves `(M + ½h D₀) out = rhs` with the level's factor (or the diagonal); fixed vertices
/// get 0.
#[allow(clippy::too_many_arguments)]
fn solve_into(
    solve: &mut Solve,
    lumped: &[f64],
    fixed: &[bool],
    alpha: f64,
    level: u32,
    h: f64,
    rhs: &[Vector3<f64>],
    out: &mut [Vector3<f64>],
) -> Result<(), CholeskyError> {
    match solve {
        Solve::Diagonal => {
            let scale = 1.0 + 0.5 * h * alpha;
            par::for_each_mut(out, |i, o| {
                *o = if fixed[i] {
                    Vector3::zeros()
                } else {
                    rhs[i] / (scale * lumped[i])
                }
            });
            Ok(())
        }
        Solve::Cholesky { factors, .. } => {
            let chol = factors[level as usize]
                .as_mut()
                .ok_or(CholeskyError::NotFactored)?;
            zero_fixed(fixed, out);
            chol.solve(rhs, fixed, out)
        }
    }
}
