//! `supple bench --direct-vs-pcg`: Zhuang & Canny's (1999, §4) argument for pre-factoring,
//! measured. Their explicit Newmark step (eq. 8) solves `(M + ½Δt D) ü = …` with a constant
//! matrix for each allowed step `Δt`, so it can be factored once ("Instead of precomputing the
//! inverse … we precompute its LU-factorization. Given the LU-factorization, solving equation
//! (8) only requires back-substitution", §4), and every step then costs one forward and one
//! back substitution, `O(nnz(L))`. The same holds for the linearized implicit step
//! `(M + Δt D + Δt² K) Δv = …` of a linear model. On the first body's two matrices, with
//! Rayleigh damping `D = αM + βK` and the stiffness `K` at rest, this times the ordering and
//! symbolic analysis, the numeric factorization, the substitution, and cold PCG solves (block
//! Jacobi, `x₀ = 0`) at the simulator's tolerance 1e-6 and at the direct solve's accuracy,
//! for a gravity load `M g` and for a random right-hand side (every mode excited).
//!
//! Times are the calling thread's CPU time (Linux `/proc/thread-self/schedstat`) when the
//! pool has one thread (`--threads 1`): on a shared machine they are far steadier than wall
//! time, and with one thread every solver runs on the calling thread. Otherwise, wall time.

use anyhow::{bail, Result};
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::time::Instant;
use supple::linalg::ordering::OrderingKind;
use supple::linalg::{BlockCsr, Pcg, PcgSettings, Preconditioner, SparseCholesky};
use supple::nalgebra::Vector3;
use supple_run::record::median;

#[derive(Args)]
pub struct DirectArgs {
    /// Instead of stepping, time a Cholesky factorization and its substitutions against PCG
    /// solves on the first body's `M + ½Δt D` (explicit Newmark) and `M + Δt D + Δt² K`
    /// (implicit, the scene's Δt); `D = αM + βK` with the stiffness `K` at rest.
    #[arg(long)]
    pub direct_vs_pcg: bool,
    /// Rayleigh mass coefficient α of `D` (1/s), for `--direct-vs-pcg`.
    #[arg(long = "rayleigh-alpha", default_value_t = 0.1)]
    pub alpha: f64,
    /// Rayleigh stiffness coefficient β of `D` (s), for `--direct-vs-pcg`.
    #[arg(long = "rayleigh-beta", default_value_t = 0.01)]
    pub beta: f64,
    /// Newmark step of `M + ½Δt D` (default: `2/ω̄`, the explicit step's stability limit,
    /// with `ω̄²` the Gershgorin bound of `M⁻¹K` for lumped masses).
    #[arg(long)]
    pub newmark_dt: Option<f64>,
    /// Ordering of the factorization, for `--direct-vs-pcg`.
    #[arg(long = "direct-ordering", value_enum, default_value_t = DirectOrdering::Nd)]
    pub ordering: DirectOrdering,
}

#[derive(Clone, Copy, ValueEnum)]
pub enum DirectOrdering {
    Amd,
    Mnd,
    Nd,
}

/// A stopwatch on the calling thread's CPU time, or on wall time.
#[derive(Clone, Copy)]
struct Clock {
    cpu: bool,
}

impl Clock {
    /// Nanoseconds this thread has run (the first field of `schedstat`).
    fn thread_cpu_ns() -> Option<u64> {
        let s = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
        s.split_whitespace().next()?.parse().ok()
    }

    fn new(threads: usize) -> Self {
        Self {
            cpu: threads == 1 && Self::thread_cpu_ns().is_some(),
        }
    }

    /// Milliseconds `f` took, and its result.
    fn time<T>(self, f: impl FnOnce() -> T) -> (f64, T) {
        if self.cpu {
            let t0 = Self::thread_cpu_ns().unwrap_or(0);
            let r = f();
            let t1 = Self::thread_cpu_ns().unwrap_or(t0);
            ((t1 - t0) as f64 * 1e-6, r)
        } else {
            let t = Instant::now();
            let r = f();
            (t.elapsed().as_secs_f64() * 1e3, r)
        }
    }
}

#[derive(Serialize)]
pub struct DirectReport {
    scene: String,
    body: String,
    threads: usize,
    /// `thread_cpu` (one thread) or `wall`: what the `_ms` fields measure.
    clock: &'static str,
    /// Free scalar unknowns (both solvers eliminate the fixed vertices).
    free_dofs: usize,
    alpha: f64,
    beta: f64,
    ordering: &'static str,
    /// Ordering plus symbolic analysis, once per pattern.
    analyse_ms: f64,
    /// Scalar nonzeros of `L` (faer's supernodal count).
    nnz_l: usize,
    matrices: Vec<DirectMatrix>,
}

#[derive(Serialize)]
struct DirectMatrix {
    name: &'static str,
    dt: f64,
    /// `A = mass_scale · M + stiffness_scale · K`.
    mass_scale: f64,
    stiffness_scale: f64,
    /// The numeric factorization, once per matrix (per step of Zhuang's ladder `T/2^i`).
    factor_ms: f64,
    /// One forward and back substitution (median of 5), per right-hand side.
    solve_ms: Vec<f64>,
    /// `‖b − A x‖ / ‖b‖` of the direct solution, per right-hand side.
    direct_residual: Vec<f64>,
    pcg: Vec<PcgRun>,
}

#[derive(Serialize)]
struct PcgRun {
    rhs: &'static str,
    tolerance: f64,
    iterations: usize,
    converged: bool,
    ms: f64,
    /// The true `‖b − A x‖ / ‖b‖` at exit.
    residual: f64,
    /// Steps after which factoring once and substituting has cost less than this PCG solve
    /// every step: `factor_ms / (ms − solve_ms)` (null when PCG is faster than a substitution).
    break_even_steps: Option<f64>,
}

/// `‖b − A x‖ / ‖b‖` over the free rows (`ax` is scratch).
fn relative_residual(
    a: &BlockCsr,
    b: &[Vector3<f64>],
    x: &[Vector3<f64>],
    fixed: &[bool],
    ax: &mut [Vector3<f64>],
) -> f64 {
    a.mul_vec(x, ax);
    let (mut r2, mut b2) = (0.0, 0.0);
    for i in (0..b.len()).filter(|&i| !fixed[i]) {
        r2 += (b[i] - ax[i]).norm_squared();
        b2 += b[i].norm_squared();
    }
    (r2 / b2).sqrt()
}

/// Largest stable explicit Newmark step: with `γ = ½` (central differences) the scheme is
/// stable for `Δt ω_max ≤ 2` whatever the viscous damping (Hughes, *The Finite Element
/// Method*, 2000, §9.1, `Ω_crit` at `β = 0, γ = ½`); `ω_max² ≤ max_i Σ_j |K_ij| / m_i`
/// (Gershgorin on `M⁻¹K`, lumped masses, free rows).
fn newmark_stable_dt(k: &BlockCsr, lumped: &[f64], fixed: &[bool]) -> f64 {
    let p = &*k.pattern;
    let mut omega2: f64 = 0.0;
    for i in (0..p.n_rows()).filter(|&i| !fixed[i]) {
        let mut row = Vector3::zeros();
        for s in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
            row += k.values[s].abs().column_sum();
        }
        omega2 = omega2.max(row.max() / lumped[i]);
    }
    2.0 / omega2.sqrt()
}

/// SplitMix64 numbers in `[−1, 1)`: a reproducible random right-hand side.
fn random_rhs(n: usize) -> Vec<Vector3<f64>> {
    let mut state = 0u64;
    let mut unit = || {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 52) as f64 - 1.0
    };
    (0..n)
        .map(|_| Vector3::new(unit(), unit(), unit()))
        .collect()
}

/// The measurement of the module doc on `body` (at rest); `dt` is the scene's step.
pub fn direct_vs_pcg(
    args: &DirectArgs,
    scene: &str,
    dt: f64,
    body: &supple::body::Body,
) -> Result<DirectReport> {
    let pattern = body.elems.pattern.clone();
    let n = body.n_vertices();
    let fixed = &body.fixed;
    if fixed.iter().all(|&f| f) {
        bail!("--direct-vs-pcg: body `{}` has no free vertex", body.name);
    }
    let mut k = BlockCsr::zeros(pattern.clone());
    body.model.add_tangent(&body.elems, &body.x, 1.0, &mut k);
    let dt_newmark = args
        .newmark_dt
        .unwrap_or_else(|| newmark_stable_dt(&k, &body.mass.lumped, fixed));
    if !(dt_newmark > 0.0 && dt_newmark.is_finite() && dt > 0.0 && dt.is_finite()) {
        bail!("--direct-vs-pcg: steps must be positive (Newmark {dt_newmark}, scene {dt})");
    }
    let (alpha, beta) = (args.alpha, args.beta);
    // M + ½Δt D = (1 + ½Δt α) M + ½Δt β K;  M + Δt D + Δt² K = (1 + Δt α) M + (Δt β + Δt²) K.
    let matrices = [
        (
            "newmark_explicit: M + dt/2 D",
            dt_newmark,
            1.0 + 0.5 * dt_newmark * alpha,
            0.5 * dt_newmark * beta,
        ),
        (
            "implicit: M + dt D + dt^2 K",
            dt,
            1.0 + dt * alpha,
            dt * beta + dt * dt,
        ),
    ];

    let kind = match args.ordering {
        DirectOrdering::Amd => OrderingKind::Amd,
        DirectOrdering::Mnd => OrderingKind::Mnd,
        DirectOrdering::Nd => OrderingKind::Nd,
    };
    let threads = rayon::current_num_threads();
    let clock = Clock::new(threads);
    let (analyse_ms, chol) = clock.time(|| -> Result<SparseCholesky> {
        let perm =
            supple::linalg::solver::mesh_ordering(kind, &pattern, &body.x, &body.elems.tets)?;
        Ok(SparseCholesky::new(pattern.clone(), Some(perm.perm()))?)
    });
    let mut chol = chol?;

    let gravity: Vec<Vector3<f64>> = (0..n)
        .map(|i| body.mass.lumped[i] * Vector3::new(0.0, -9.81, 0.0))
        .collect();
    let random = random_rhs(n);
    let rhs = [("gravity", &gravity), ("random", &random)];

    let mut a = BlockCsr::zeros(pattern.clone());
    let (mut x, mut ax) = (vec![Vector3::zeros(); n], vec![Vector3::zeros(); n]);
    let mut pcg = Pcg::new(n);
    let mut out = Vec::new();
    for (name, dt, mass_scale, stiffness_scale) in matrices {
        for (v, kv) in a.values.iter_mut().zip(&k.values) {
            *v = stiffness_scale * kv;
        }
        body.mass.add_to(&mut a, mass_scale);
        let (factor_ms, factored) = clock.time(|| chol.factor(&a, fixed));
        factored?;
        let (mut solve_ms, mut direct_residual) = (Vec::new(), Vec::new());
        for (_, b) in rhs {
            let mut times = Vec::new();
            for _ in 0..5 {
                let (ms, solved) = clock.time(|| chol.solve(b, fixed, &mut x));
                solved?;
                times.push(ms);
            }
            solve_ms.push(median(&times));
            direct_residual.push(relative_residual(&a, b, &x, fixed, &mut ax));
        }
        let mut runs = Vec::new();
        for (r, &(rhs_name, b)) in rhs.iter().enumerate() {
            // The simulator's tolerance, then the direct solve's accuracy (PCG's recursive
            // residual cannot go much below 1e-13 in double precision).
            for tolerance in [1e-6, direct_residual[r].max(1e-13)] {
                x.iter_mut().for_each(|v| *v = Vector3::zeros());
                let settings = PcgSettings {
                    tolerance,
                    max_iterations: 20 * n,
                    preconditioner: Preconditioner::BlockJacobi,
                };
                let (ms, s) = clock.time(|| pcg.solve(&a, b, fixed, &mut x, &settings));
                runs.push(PcgRun {
                    rhs: rhs_name,
                    tolerance,
                    iterations: s.iterations,
                    converged: s.converged,
                    ms,
                    residual: relative_residual(&a, b, &x, fixed, &mut ax),
                    break_even_steps: (ms > solve_ms[r]).then(|| factor_ms / (ms - solve_ms[r])),
                });
            }
        }
        out.push(DirectMatrix {
            name,
            dt,
            mass_scale,
            stiffness_scale,
            factor_ms,
            solve_ms,
            direct_residual,
            pcg: runs,
        });
    }
    Ok(DirectReport {
        scene: scene.to_string(),
        body: body.name.clone(),
        threads,
        clock: if clock.cpu { "thread_cpu" } else { "wall" },
        free_dofs: 3 * fixed.iter().filter(|&&f| !f).count(),
        alpha,
        beta,
        ordering: kind.name(),
        analyse_ms,
        nnz_l: chol.nnz_l(),
        matrices: out,
    })
}
