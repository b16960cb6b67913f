//! Preconditioned conjugate gradients as the integrators call it: the settings (stopping rule
//! and which preconditioner), the statistics of one solve, and [`Pcg`], which holds the
//! workspace of the one CG loop ([`conjugate_gradient`]) and the preconditioners behind its
//! [`Precond`] trait: block Jacobi (here), block SSOR (`linalg::ssor`), multicolour SSOR
//! (`linalg::multicolor`) and smoothed-aggregation multigrid (`linalg::amg`); and block SSOR
//! with Eisenstat's trick, which runs a loop of its own (`linalg::eisenstat` says why).

use super::amg::{Amg, AmgSettings};
use super::cg::{conjugate_gradient, CgError, CgInfo, CgWorkspace, Precond};
use super::eisenstat::EisenstatSsor;
use super::multicolor::MulticolorSsor;
use super::par;
use super::ssor::Ssor;
use super::BlockCsr;
use nalgebra::{Matrix3, Vector3};

/// The preconditioner of [`Pcg`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Preconditioner {
    /// Inverse 3×3 diagonal blocks (parallel, cheap).
    BlockJacobi,
    /// Symmetric block Gauss–Seidel in vertex order, `M = (D + L) D⁻¹ (D + Lᵀ)` (sequential
    /// sweeps; fewer iterations). See `linalg::ssor`.
    BlockSsor,
    /// The same preconditioner run with Eisenstat's trick (1981): CG on the split-preconditioned
    /// system, one backward and one forward sweep per iteration and no product with `A`; the
    /// same iterates as [`Preconditioner::BlockSsor`] in exact arithmetic, up to 4,095
    /// vertices; from 4,096 the rows are swept in a nested-dissection order whose two parts
    /// run side by side on two threads (block SSOR of the reordered matrix). See
    /// `linalg::eisenstat`. A solve that breaks down (`pᵀ A p ≤ 0`: a matrix that is not
    /// positive definite, as on the tangents of very large deformations) is run again with
    /// block Jacobi from the same first guess. Fewer CPU ms per step than block Jacobi on the
    /// 450, 20k and 160k-tet bars of EXPERIMENTS.md (*Performance (issue 18)*); what
    /// one of the candidates of [`Preconditioner::Auto`].
    EisenstatSsor,
    /// Symmetric block Gauss–Seidel in a vertex-colour order: the rows of one colour are
    /// independent, so the sweeps run in parallel (same bits for any thread count). See
    /// `linalg::multicolor`.
    MulticolorSsor,
    /// Smoothed-aggregation algebraic multigrid (one V-cycle) with the rigid-body modes as
    /// near-null space: iteration counts nearly flat under refinement. See `linalg::amg`.
    Amg,
    /// The default: the cheapest of Eisenstat SSOR, block Jacobi and the multigrid on the
    /// body's own system, from a trial solve with each and a cost model in products with the
    /// matrix (`linalg::auto`; the same choice on any machine and thread count). The trial is
    /// made again when the system has changed enough.
    #[default]
    Auto,
}

impl Preconditioner {
    /// The name used in scene files and reports (`eisenstat_ssor`).
    pub fn name(self) -> &'static str {
        match self {
            Self::BlockJacobi => "block_jacobi",
            Self::BlockSsor => "block_ssor",
            Self::EisenstatSsor => "eisenstat_ssor",
            Self::MulticolorSsor => "multicolor_ssor",
            Self::Amg => "amg",
            Self::Auto => "auto",
        }
    }

    /// Whether solves with this preconditioner may build a multigrid hierarchy (`Auto` may,
    /// when its trial finds the multigrid worth trying).
    pub fn may_use_amg(self) -> bool {
        matches!(self, Self::Amg | Self::Auto)
    }
}

/// Stopping rule: `‖r‖ ≤ tolerance · ‖b_F − A_FH x_H‖` on the free dofs `F` (the right-hand
/// side of their system with the held dofs `H` at their values; `‖b‖` on the free dofs when
/// those are zero), or `max_iterations`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PcgSettings {
    pub tolerance: f64,
    pub max_iterations: usize,
    pub preconditioner: Preconditioner,
}

impl Default for PcgSettings {
    fn default() -> Self {
        Self {
            tolerance: 1e-6,
            max_iterations: 1000,
            preconditioner: Preconditioner::Auto,
        }
    }
}

/// What one solve did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct PcgStats {
    pub iterations: usize,
    /// Final `‖r‖` relative to the stopping rule's scale (0 when that is zero). NaN when `b`, `‖b‖`, an iterate's residual or a
    /// CG scalar was not finite (a NaN or infinite input, or an overflow): the solve then
    /// stopped there and `converged` is false.
    pub relative_residual: f64,
    /// The stopping rule ([`PcgSettings`]) was met with every quantity finite; never true when
    /// `relative_residual` is not finite.
    pub converged: bool,
}

impl PcgStats {
    /// The report of a solve that met a non-finite `‖b‖`, residual or CG scalar after
    /// `iterations` iterations. An IEEE comparison with NaN or ∞ can pass a tolerance test
    /// (`∞ ≤ tol · ∞`), so non-finite values are caught before any such test.
    pub(super) fn non_finite(iterations: usize) -> Self {
        Self {
            iterations,
            relative_residual: f64::NAN,
            converged: false,
        }
    }
}

/// The block-Jacobi preconditioner: the inverse 3×3 diagonal blocks of the free vertices.
#[derive(Debug, Clone)]
pub struct BlockJacobi {
    inv_diag: Vec<Matrix3<f64>>,
}

impl BlockJacobi {
    pub fn new(n: usize) -> Self {
        Self {
            inv_diag: vec![Matrix3::zeros(); n],
        }
    }

    /// Inverts the diagonal blocks of `a` (zero on fixed vertices; a singular block falls
    /// back to its inverted diagonal entries).
    pub fn refresh(&mut self, a: &BlockCsr, fixed: &[bool]) {
        let pattern = &*a.pattern;
        par::for_each_mut(&mut self.inv_diag, |i, m| {
            *m = if fixed[i] {
                Matrix3::zeros()
            } else {
                invert_block(&a.values[pattern.diag[i] as usize])
            };
        });
    }
}

/// The inverse of a diagonal block, or of its diagonal entries when it is singular.
pub(super) fn invert_block(d: &Matrix3<f64>) -> Matrix3<f64> {
    d.try_inverse().unwrap_or_else(|| {
        Matrix3::from_diagonal(&d.diagonal().map(|v| if v != 0.0 { 1.0 / v } else { 0.0 }))
    })
}

impl Precond for BlockJacobi {
    fn apply(&mut self, _: &BlockCsr, _: &[bool], r: &[Vector3<f64>], z: &mut [Vector3<f64>]) {
        let inv = &self.inv_diag;
        par::for_each_mut(z, |i, zi| *zi = inv[i] * r[i]);
    }

    fn block_diagonal(&self) -> Option<&[Matrix3<f64>]> {
        Some(&self.inv_diag)
    }
}

/// PCG for systems with `n` block rows: the CG workspace of [`conjugate_gradient`] and the
/// preconditioners, each made on its first use. Solving allocates nothing after that.
#[derive(Debug)]
pub struct Pcg {
    ws: CgWorkspace,
    jacobi: BlockJacobi,
    ssor: Option<Ssor>,
    eisenstat: Option<EisenstatSsor>,
    multicolor: Option<MulticolorSsor>,
    amg: Option<Amg>,
    /// The trial and choice of `Auto`.
    auto: auto::AutoState,
    /// Rest positions of the vertices, for the rigid-body modes of the multigrid.
    positions: Option<Vec<Vector3<f64>>>,
    /// The preconditioner last refreshed and the fixed set it was refreshed for: a solve
    /// whose matrix did not change (a constant or frame-warped tangent at the same `dt`)
    /// keeps its inverted diagonal blocks and copied sweeps.
    refreshed: Option<Preconditioner>,
    refreshed_fixed: Vec<bool>,
}

impl Pcg {
    pub fn new(n: usize) -> Self {
        Self {
            ws: CgWorkspace::new(n),
            jacobi: BlockJacobi::new(n),
            ssor: None,
            eisenstat: None,
            multicolor: None,
            amg: None,
            auto: auto::AutoState::default(),
            positions: None,
            refreshed: None,
            refreshed_fixed: vec![false; n],
        }
    }

    /// A PCG whose multigrid preconditioner uses the six rigid-body modes of the rest
    /// `positions` as its near-null space (without positions: the three translations).
    pub fn with_positions(n: usize, positions: &[Vector3<f64>]) -> Self {
        Self {
            positions: Some(positions.to_vec()),
            ..Self::new(n)
        }
    }

    /// The multigrid preconditioner, once made.
    pub fn amg(&self) -> Option<&Amg> {
        self.amg.as_ref()
    }

    /// Solves `A x = b` for the free vertices; `x` holds the initial guess on entry (its fixed
    /// entries are prescribed values and are left untouched). `A` must be symmetric positive
    /// definite on the free dofs.
    pub fn solve(
        &mut self,
        a: &BlockCsr,
        b: &[Vector3<f64>],
        fixed: &[bool],
        x: &mut [Vector3<f64>],
        settings: &PcgSettings,
    ) -> PcgStats {
        self.solve_changed(a, true, b, fixed, x, settings)
    }

    /// [`Pcg::solve`] where `matrix_changed: false` promises that `a` is the matrix of the
    /// previous call, so the preconditioner is kept: the multigrid hierarchy as it is, the
    /// others' inverted diagonal blocks and sweep copies when the fixed set is also that of
    /// the previous call.
    pub fn solve_changed(
        &mut self,
        a: &BlockCsr,
        matrix_changed: bool,
        b: &[Vector3<f64>],
        fixed: &[bool],
        x: &mut [Vector3<f64>],
        settings: &PcgSettings,
    ) -> PcgStats {
        match settings.preconditioner {
            Preconditioner::Auto => self.solve_auto(a, matrix_changed, b, fixed, x, settings),
            p => self.solve_with(p, a, matrix_changed, b, fixed, x, settings, true),
        }
    }

    /// A solve with the preconditioner `resolved` (not `Auto`). `observe: false` keeps the
    /// solve's iterations from the multigrid's rebuild trigger (a trial solve stopped early).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn solve_with(
        &mut self,
        resolved: Preconditioner,
        a: &BlockCsr,
        matrix_changed: bool,
        b: &[Vector3<f64>],
        fixed: &[bool],
        x: &mut [Vector3<f64>],
        settings: &PcgSettings,
        observe: bool,
    ) -> PcgStats {
        let ws = &mut self.ws;
        // The multigrid decides for itself (`Amg::prepare`).
        let refresh = matrix_changed
            || self.refreshed != Some(resolved)
            || self.refreshed_fixed[..] != fixed[..];
        if refresh {
            self.refreshed = None;
        }
        let result = match resolved {
            // `solve_changed` sends `Auto` to `solve_auto`, whose candidates are concrete.
            Preconditioner::Auto => unreachable!("Auto is resolved by its trial"),
            Preconditioner::BlockJacobi => {
                if refresh {
                    self.jacobi.refresh(a, fixed);
                }
                conjugate_gradient(ws, a, b, fixed, x, settings, &mut self.jacobi)
            }
            Preconditioner::BlockSsor => {
                let pc = self.ssor.get_or_insert_with(|| Ssor::new(a.n_rows()));
                if refresh {
                    pc.refresh(a, fixed);
                }
                conjugate_gradient(ws, a, b, fixed, x, settings, pc)
            }
            Preconditioner::EisenstatSsor => {
                if self.eisenstat.is_none() {
                    // The block-Jacobi fallback below must not allocate when it first runs.
                    ws.prepare(a);
                }
                let es = self
                    .eisenstat
                    .get_or_insert_with(|| EisenstatSsor::new(a.n_rows()));
                if refresh {
                    es.refresh(a, fixed);
                }
                let result = es.solve(a, b, fixed, x, settings);
                match (result, es.breakdown()) {
                    // SSOR needs a positive definite matrix; on the indefinite tangents of
                    // large deformations (a Liesenfeld–Stolfi bar under 200 g) it breaks
                    // down where block Jacobi's CG may still get through: the solve is run
                    // again with block Jacobi from the same first guess, iterations added.
                    (Err(CgError::NoConvergence(info)), (true, x0)) => {
                        x.copy_from_slice(x0);
                        self.jacobi.refresh(a, fixed);
                        let more = |i: CgInfo| CgInfo {
                            iterations: i.iterations + info.iterations,
                            ..i
                        };
                        match conjugate_gradient(ws, a, b, fixed, x, settings, &mut self.jacobi) {
                            Ok(i) => Ok(more(i)),
                            Err(CgError::NoConvergence(i)) => Err(CgError::NoConvergence(more(i))),
                            Err(CgError::NonFinite { iterations }) => Err(CgError::NonFinite {
                                iterations: iterations + info.iterations,
                            }),
                        }
                    }
                    (result, _) => result,
                }
            }
            Preconditioner::MulticolorSsor => {
                let pc = self
                    .multicolor
                    .get_or_insert_with(|| MulticolorSsor::new(&a.pattern));
                if refresh {
                    pc.refresh(a, fixed);
                }
                conjugate_gradient(ws, a, b, fixed, x, settings, pc)
            }
            Preconditioner::Amg => {
                let positions = self.positions.as_deref();
                let pc = self
                    .amg
                    .get_or_insert_with(|| Amg::new(AmgSettings::default(), &a.pattern, positions));
                pc.prepare(a, fixed, matrix_changed);
                let result = conjugate_gradient(ws, a, b, fixed, x, settings, pc);
                if observe {
                    pc.observe(match &result {
                        Ok(info) | Err(CgError::NoConvergence(info)) => info.iterations,
                        Err(CgError::NonFinite { iterations }) => *iterations,
                    });
                }
                result
            }
        };
        if refresh && resolved != Preconditioner::Amg {
            self.refreshed = Some(resolved);
            if self.refreshed_fixed.len() == fixed.len() {
                self.refreshed_fixed.copy_from_slice(fixed);
            } else {
                self.refreshed_fixed = fixed.to_vec();
            }
        }
        match result {
            Ok(info) => PcgStats {
                iterations: info.iterations,
                relative_residual: info.relative_residual,
                converged: true,
            },
            Err(CgError::NoConvergence(info)) => PcgStats {
                iterations: info.iterations,
                relative_residual: info.relative_residual,
                converged: false,
            },
            Err(CgError::NonFinite { iterations }) => PcgStats::non_finite(iterations),
        }
    }
}

#[path = "auto.rs"]
mod auto;
pub use auto::{AutoChoice, Candidate, Cost};

#[cfg(test)]
#[path = "pcg_tests.rs"]
mod tests;
