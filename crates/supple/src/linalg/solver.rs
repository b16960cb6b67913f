//! The linear solver of an implicit integrator: the filtered block PCG (block Jacobi, block
//! SSOR, multicolour SSOR or multigrid preconditioner), or a sparse Cholesky
//! factorization under a fill-reducing vertex ordering that is kept while the matrix does not
//! change (Zhuang & Canny 1999, §4: a constant matrix is factored once, then every step is a
//! back-substitution).

use super::ordering::{self, Graph, OrderingError, OrderingInput, OrderingKind, Permutation};
use super::{par, BlockCsr, BlockPattern, CholeskyError, Pcg, PcgSettings, SparseCholesky};
use nalgebra::Vector3;
use std::sync::Arc;
use thiserror::Error;

/// Which linear solver, with its settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LinearSolverKind {
    /// Preconditioned conjugate gradients (iterative, to a tolerance).
    Pcg(PcgSettings),
    /// Sparse Cholesky (direct) under a vertex ordering computed once, from the pattern, the
    /// rest positions and the cells. Refactored only when the matrix changed.
    Cholesky { ordering: OrderingKind },
}

impl Default for LinearSolverKind {
    fn default() -> Self {
        Self::Pcg(PcgSettings::default())
    }
}

/// Why a linear solver could not be set up.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SolverError {
    #[error("ordering `{}`: {source}", kind.name())]
    Ordering {
        kind: OrderingKind,
        source: OrderingError,
    },
    #[error(transparent)]
    Cholesky(#[from] CholeskyError),
}

/// What one solve did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SolveStats {
    /// CG iterations; 0 for a direct solve.
    pub iterations: usize,
    /// `‖b − A x‖ / ‖b‖` over the free vertices: PCG's recurrence residual, or the true
    /// residual of a direct solve (one extra SpMV). NaN when `b`, `x` or the residual held a
    /// non-finite value or a norm overflowed.
    pub relative_residual: f64,
    /// PCG: reached its tolerance. Direct: the factorization succeeded and the true relative
    /// residual is below [`DIRECT_RESIDUAL_OK`]. Never true for a non-finite residual.
    pub converged: bool,
    /// A numeric factorization was made for this solve.
    pub factorized: bool,
}

/// The largest true relative residual a direct solve reports as converged (a larger one means
/// an ill-conditioned matrix or an unstable LDLᵀ of an indefinite one).
pub const DIRECT_RESIDUAL_OK: f64 = 1e-8;

/// A linear solver with its workspaces; solving allocates nothing.
#[derive(Debug)]
pub enum LinearSolver {
    Pcg {
        pcg: Box<Pcg>,
        settings: PcgSettings,
    },
    Cholesky(Box<Direct>),
}

/// The state of the direct solver.
#[derive(Debug)]
pub struct Direct {
    pub ordering: OrderingKind,
    chol: SparseCholesky,
    /// A factorization of the current matrix and fixed set was attempted.
    attempted: bool,
    /// The error of the last failed factorization (those steps are solved by PCG).
    pub last_error: Option<CholeskyError>,
    /// Steps solved by the PCG fallback after a failed factorization.
    pub fallback_solves: usize,
    fallback: Pcg,
    residual: Vec<Vector3<f64>>,
    partials: Vec<f64>,
}

/// The vertex ordering `kind` of a tet mesh's matrix pattern, from the vertex graph of
/// `pattern`, the rest `positions` and the `tets` (the geometric orderings need both).
pub fn mesh_ordering(
    kind: OrderingKind,
    pattern: &BlockPattern,
    positions: &[Vector3<f64>],
    tets: &[[u32; 4]],
) -> Result<Permutation, SolverError> {
    let graph = Graph::from_pattern(pattern);
    let cells: Vec<Vec<u32>> = tets.iter().map(|t| t.to_vec()).collect();
    let input = OrderingInput {
        graph: &graph,
        positions,
        cells: &cells,
    };
    ordering::compute(kind, &input).map_err(|source| SolverError::Ordering { kind, source })
}

impl LinearSolver {
    /// Sets up `kind` for matrices on `pattern`. The Cholesky ordering sees the vertex graph of
    /// `pattern`, the rest `positions` and the `tets`; its symbolic analysis is done here.
    pub fn new(
        kind: &LinearSolverKind,
        pattern: &Arc<BlockPattern>,
        positions: &[Vector3<f64>],
        tets: &[[u32; 4]],
    ) -> Result<Self, SolverError> {
        let n = pattern.n_rows();
        Ok(match *kind {
            LinearSolverKind::Pcg(settings) => Self::Pcg {
                pcg: Box::new(if positions.len() == n {
                    Pcg::with_positions(n, positions)
                } else {
                    Pcg::new(n)
                }),
                settings,
            },
            LinearSolverKind::Cholesky { ordering } => {
                let perm = mesh_ordering(ordering, pattern, positions, tets)?;
                let mut chol = SparseCholesky::new(pattern.clone(), Some(perm.perm()))?;
                chol.ldlt_fallback = true;
                Self::Cholesky(Box::new(Direct {
                    ordering,
                    chol,
                    attempted: false,
                    last_error: None,
                    fallback_solves: 0,
                    fallback: Pcg::new(n),
                    residual: vec![Vector3::zeros(); n],
                    partials: vec![0.0; par::n_chunks(n)],
                }))
            }
        })
    }

    /// The PCG solver, when this is one (its multigrid hierarchy, for statistics).
    pub fn pcg(&self) -> Option<&Pcg> {
        match self {
            Self::Pcg { pcg, .. } => Some(pcg),
            Self::Cholesky(_) => None,
        }
    }

    /// End-of-run counters: the multigrid's hierarchy builds (`amg_builds`), when PCG has
    /// built one.
    pub fn counters(&self) -> Vec<(String, f64)> {
        match self.pcg().and_then(Pcg::amg) {
            Some(amg) => vec![("amg_builds".to_string(), amg.info().builds as f64)],
            None => Vec::new(),
        }
    }

    /// What `preconditioner = "auto"` chose and why, once a solve has made the choice.
    pub fn auto_choice(&self) -> Option<&super::AutoChoice> {
        self.pcg().and_then(Pcg::auto_choice)
    }

    /// The sparse Cholesky factorization, when this is the direct solver.
    pub fn cholesky(&self) -> Option<&SparseCholesky> {
        match self {
            Self::Cholesky(d) => Some(&d.chol),
            Self::Pcg { .. } => None,
        }
    }

    /// Solves `A x = b` on the free vertices (the contract of [`Pcg::solve`]: `x` holds the
    /// first guess, and the prescribed values on fixed vertices). `matrix_changed: false`
    /// promises that `a` is the matrix of the previous call, so a kept factor is reused; a
    /// change of the fixed set also refactors.
    pub fn solve(
        &mut self,
        a: &BlockCsr,
        matrix_changed: bool,
        b: &[Vector3<f64>],
        fixed: &[bool],
        x: &mut [Vector3<f64>],
    ) -> SolveStats {
        match self {
            Self::Pcg { pcg, settings } => {
                let s = pcg.solve_changed(a, matrix_changed, b, fixed, x, settings);
                SolveStats {
                    iterations: s.iterations,
                    relative_residual: s.relative_residual,
                    converged: s.converged,
                    factorized: false,
                }
            }
            Self::Cholesky(d) => d.solve(a, matrix_changed, b, fixed, x),
        }
    }
}

impl Direct {
    fn solve(
        &mut self,
        a: &BlockCsr,
        matrix_changed: bool,
        b: &[Vector3<f64>],
        fixed: &[bool],
        x: &mut [Vector3<f64>],
    ) -> SolveStats {
        if matrix_changed || self.chol.fixed() != fixed {
            self.attempted = false;
        }
        let mut factorized = false;
        if !self.attempted {
            // Once per matrix (and fixed set): a failed attempt is not repeated until either
            // changes.
            self.attempted = true;
            match self.chol.factor(a, fixed) {
                Ok(_) => {
                    self.last_error = None;
                    factorized = true;
                }
                Err(e) => self.last_error = Some(e),
            }
        }
        if self.chol.factored().is_none() || self.chol.solve(b, fixed, x).is_err() {
            // No usable factor (a singular matrix, or an indefinite one without the LDLᵀ
            // fallback): this step is solved iteratively.
            self.fallback_solves += 1;
            let s = self.fallback.solve(a, b, fixed, x, &PcgSettings::default());
            return SolveStats {
                iterations: s.iterations,
                relative_residual: s.relative_residual,
                converged: s.converged,
                factorized,
            };
        }
        let relative_residual = self.true_residual(a, b, fixed, x);
        SolveStats {
            iterations: 0,
            relative_residual,
            // NaN compares false; the residual is NaN whenever a norm was not finite.
            converged: relative_residual <= DIRECT_RESIDUAL_OK,
            factorized,
        }
    }

    /// `‖b − A x‖ / ‖b‖` over the free vertices (`‖b − A x‖` when `b = 0` there); NaN when
    /// either sum of squares is not finite (a NaN or ∞ in `b` or `x`, or an overflow), since
    /// `∞ / ∞` or a NaN must not pass, nor `‖b‖ = ∞` make an infinite residual look small.
    fn true_residual(
        &mut self,
        a: &BlockCsr,
        b: &[Vector3<f64>],
        fixed: &[bool],
        x: &[Vector3<f64>],
    ) -> f64 {
        let n = x.len();
        a.mul_vec(x, &mut self.residual);
        let r = &self.residual;
        let rr = par::sum(n, &mut self.partials, |i| {
            if fixed[i] {
                0.0
            } else {
                (b[i] - r[i]).norm_squared()
            }
        });
        let bb = par::sum(n, &mut self.partials, |i| {
            if fixed[i] {
                0.0
            } else {
                b[i].norm_squared()
            }
        });
        if !(rr.is_finite() && bb.is_finite()) {
            f64::NAN
        } else if bb == 0.0 {
            rr.sqrt()
        } else {
            (rr / bb).sqrt()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::OrderingKind;
    use nalgebra::Matrix3;

    /// An SPD block matrix on a strip of 4 tets (a graph Laplacian ⊗ S plus a shift).
    fn system() -> (BlockCsr, Vec<[u32; 4]>, Vec<Vector3<f64>>) {
        let tets: Vec<[u32; 4]> = (0..4).map(|i| [i, i + 1, i + 2, i + 3]).collect();
        let (p, scatter) = BlockPattern::from_tets(7, &tets);
        let mut a = BlockCsr::zeros(Arc::new(p));
        let s = Matrix3::new(2.0, 0.3, 0.0, 0.3, 1.5, 0.2, 0.0, 0.2, 1.0);
        for map in &scatter {
            for (k, &slot) in map.iter().enumerate() {
                a.values[slot as usize] += if k / 4 == k % 4 { 3.0 * s } else { -s };
            }
        }
        for i in 0..7 {
            a.values[a.pattern.diag[i] as usize] += Matrix3::identity() * 0.5;
        }
        let positions = (0..7).map(|i| Vector3::new(i as f64, 0.0, 0.0)).collect();
        (a, tets, positions)
    }

    /// Issue 12: a non-finite right-hand side (or one whose norm overflows) is never reported
    /// as converged, by either solver, and its residual is NaN.
    #[test]
    fn a_non_finite_solve_is_never_converged() {
        let (a, tets, positions) = system();
        let fixed = [true, false, false, false, false, false, false];
        let finite: Vec<_> = (0..7).map(|i| Vector3::new(1.0, i as f64, -0.5)).collect();
        let mut nan_b = finite.clone();
        nan_b[3].x = f64::NAN;
        let huge_b: Vec<_> = finite.iter().map(|v| v * 1e160).collect();
        let kinds = [
            LinearSolverKind::default(),
            LinearSolverKind::Cholesky {
                ordering: OrderingKind::Natural,
            },
        ];
        for kind in kinds {
            let mut solver = LinearSolver::new(&kind, &a.pattern, &positions, &tets).unwrap();
            for (what, b) in [("NaN", &nan_b), ("overflow", &huge_b)] {
                let mut x = vec![Vector3::zeros(); 7];
                let s = solver.solve(&a, true, b, &fixed, &mut x);
                assert!(
                    !s.converged && s.relative_residual.is_nan(),
                    "{kind:?}, {what}: {s:?}"
                );
            }
            // The same solver converges on finite data (the cases differ only there).
            let mut x = vec![Vector3::zeros(); 7];
            let s = solver.solve(&a, false, &finite, &fixed, &mut x);
            assert!(s.converged && s.relative_residual < 1e-6, "{kind:?}: {s:?}");
        }
    }
}
