//! Sparse Cholesky (LLᵀ, supernodal when faer judges it worth it) of the 3n×3n scalar matrix of
//! a [`BlockCsr`], with a fill-reducing vertex ordering and fixed vertices.
//!
//! Three phases, each reusing the one before (Zhuang & Canny 1999, §4: when the system matrix
//! is constant — a linear model at a fixed time step — it is factored once, before the
//! simulation, and every step is a back-substitution):
//!
//! 1. [`SparseCholesky::new`]: symbolic analysis, once per (pattern, ordering). The vertex
//!    permutation is expanded to the three dofs of each vertex and applied here, while the
//!    scalar CSC pattern of one triangle of `P A Pᵀ` is built, together with a map from each
//!    scalar entry to its source in the blocks. faer then analyses that already permuted
//!    pattern with its identity ordering, so refactoring and solving never permute anything.
//!    (faer could take the permutation as `SymmetricOrdering::Custom`, but then it permutes a
//!    copy of the matrix on every factorization and the right-hand side on every solve.)
//! 2. [`SparseCholesky::factor`]: copies the values through the map — rows and columns of fixed
//!    vertices become identity — and factors into the kept buffer. No allocation.
//! 3. [`SparseCholesky::solve`]: moves the prescribed values of the fixed vertices to the right-
//!    hand side (`b_f − A_fc x_c`) and back-substitutes in place. No allocation.
//!
//! Only the triangle faer reads is copied, so `A` must be symmetric.

use super::{BlockCsr, BlockPattern};
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::ldlt::factor::LdltError;
use faer::linalg::cholesky::llt::factor::LltError;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, CholeskySymbolicParams, LdltRef, LltRef, SymbolicCholesky,
    SymbolicCholeskyRaw, SymmetricOrdering,
};
use faer::sparse::linalg::SupernodalThreshold;
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side};
use nalgebra::{Matrix3, Vector3};
use std::sync::Arc;
use thiserror::Error;

mod scalar;
pub use scalar::ScalarCholesky;

/// faer's parallel mode on `threads` rayon threads. On wasm32 faer is built without its
/// `rayon` feature (crates/supple/Cargo.toml), so the parallel mode is the sequential one there.
#[cfg(not(target_arch = "wasm32"))]
fn parallel_par(threads: usize) -> Par {
    Par::rayon(threads)
}

#[cfg(target_arch = "wasm32")]
fn parallel_par(_threads: usize) -> Par {
    Par::Seq
}

/// Why an analysis, a factorization or a solve failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CholeskyError {
    #[error("the ordering has {got} entries for {expected} vertices, or is not a permutation")]
    Permutation { expected: usize, got: usize },
    #[error("sparse Cholesky analysis failed: {0}")]
    Analysis(String),
    #[error("the matrix's block pattern differs from the one analysed")]
    PatternMismatch,
    #[error(
        "the matrix is not positive definite (pivot of vertex {vertex}, component {component})"
    )]
    NotPositiveDefinite { vertex: usize, component: usize },
    /// LDLᵀ (the fallback) met a pivot that is zero or not finite (a NaN or ∞ in the matrix).
    #[error("the matrix is singular or not finite (zero or non-finite LDLᵀ pivot at vertex {vertex}, component {component})")]
    Singular { vertex: usize, component: usize },
    #[error("solve called without a successful factorization")]
    NotFactored,
    #[error("the fixed vertices differ from those of the factorization")]
    FixedMismatch,
}

/// Which factorization the kept factor holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FactorKind {
    /// `P A Pᵀ = L Lᵀ`.
    Llt,
    /// `P A Pᵀ = L D Lᵀ` without pivoting (the fallback for a non-positive-definite `A`, see
    /// [`SparseCholesky::ldlt_fallback`]).
    Ldlt,
}

/// Counters over the lifetime of a [`SparseCholesky`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CholeskyStats {
    /// Successful numeric factorizations (LLᵀ or LDLᵀ).
    pub factorizations: usize,
    /// Of those, the ones that fell back to LDLᵀ.
    pub ldlt_fallbacks: usize,
    pub solves: usize,
}

/// Sparse Cholesky of a block matrix on a fixed pattern and vertex ordering.
pub struct SparseCholesky {
    pattern: Arc<BlockPattern>,
    /// `perm[new] = old` and `inv[old] = new`, vertices.
    perm: Vec<u32>,
    inv: Vec<u32>,
    symbolic: SymbolicCholesky<usize>,
    /// The triangle of `P A Pᵀ` stored (the one faer's chosen kernel reads).
    side: Side,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// Source of each stored entry: `9 · slot + (column-major index in the block)`.
    src: Vec<u32>,
    values: Vec<f64>,
    l_values: Vec<f64>,
    /// Fixed flag of each permuted scalar dof, and of each vertex, as last factored.
    fixed_dof: Vec<bool>,
    fixed: Vec<bool>,
    /// `(free vertex i, fixed vertex j, A_ij)` of the last factorization.
    coupling: Vec<(u32, u32, Matrix3<f64>)>,
    /// Permuted right-hand side / solution.
    work: Vec<f64>,
    mem: MemBuffer,
    factored: Option<FactorKind>,
    /// Factor with LDLᵀ when LLᵀ meets a non-positive pivot (default `false`: report
    /// [`CholeskyError::NotPositiveDefinite`]).
    pub ldlt_fallback: bool,
    /// Run faer's dense kernels (the supernode updates and solves) on the current rayon pool,
    /// with at most the thread count of the pool current at the analysis. Default `false`:
    /// sequential, which gives the same bits whatever the pool (the parallel kernels do not).
    pub parallel: bool,
    threads: usize,
    stats: CholeskyStats,
}

impl std::fmt::Debug for SparseCholesky {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SparseCholesky")
            .field("dofs", &self.work.len())
            .field("nnz_a", &self.values.len())
            .field("nnz_l", &self.l_values.len())
            .field("supernodal", &self.is_supernodal())
            .field("factored", &self.factored)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl SparseCholesky {
    /// Symbolic analysis of the matrices on `pattern` under the vertex ordering `perm`
    /// (`perm[new] = old`; `None`: the natural order).
    pub fn new(pattern: Arc<BlockPattern>, perm: Option<&[u32]>) -> Result<Self, CholeskyError> {
        Self::with_kernel(pattern, perm, SupernodalThreshold::default())
    }

    /// [`Self::new`] with faer's choice between its simplicial and supernodal kernels made by
    /// `threshold` (the tests force each kernel; they report pivots differently).
    fn with_kernel(
        pattern: Arc<BlockPattern>,
        perm: Option<&[u32]>,
        threshold: SupernodalThreshold,
    ) -> Result<Self, CholeskyError> {
        let n = pattern.n_rows();
        let perm: Vec<u32> = match perm {
            Some(p) => p.to_vec(),
            None => (0..n as u32).collect(),
        };
        let bad = CholeskyError::Permutation {
            expected: n,
            got: perm.len(),
        };
        if perm.len() != n {
            return Err(bad);
        }
        let mut inv = vec![u32::MAX; n];
        for (new, &old) in perm.iter().enumerate() {
            match inv.get_mut(old as usize) {
                Some(slot) if *slot == u32::MAX => *slot = new as u32,
                _ => return Err(bad),
            }
        }
        let dim = 3 * n;
        // faer's analysis reads the upper triangle; the supernodal kernel then reads the lower
        // one and the simplicial kernel the upper one.
        let (col_ptr, row_idx, src) = triangle(&pattern, &perm, &inv, Side::Upper);
        let symbolic = factorize_symbolic_cholesky(
            SymbolicSparseColMatRef::new_checked(dim, dim, &col_ptr, None, &row_idx),
            Side::Upper,
            SymmetricOrdering::Identity,
            CholeskySymbolicParams {
                supernodal_flop_ratio_threshold: threshold,
                ..Default::default()
            },
        )
        .map_err(|e| CholeskyError::Analysis(format!("{e:?}")))?;
        let (side, col_ptr, row_idx, src) = match symbolic.raw() {
            SymbolicCholeskyRaw::Supernodal(_) => {
                let (c, r, s) = triangle(&pattern, &perm, &inv, Side::Lower);
                (Side::Lower, c, r, s)
            }
            SymbolicCholeskyRaw::Simplicial(_) => (Side::Upper, col_ptr, row_idx, src),
        };
        // One workspace for every later factorization and solve, sequential or parallel.
        let threads = rayon::current_num_threads();
        let mut reqs = Vec::new();
        for par in [Par::Seq, parallel_par(threads)] {
            reqs.push(symbolic.factorize_numeric_llt_scratch::<f64>(par, Default::default()));
            reqs.push(symbolic.factorize_numeric_ldlt_scratch::<f64>(par, Default::default()));
            reqs.push(symbolic.solve_in_place_scratch::<f64>(1, par));
        }
        let mem = MemBuffer::try_new(StackReq::any_of(&reqs))
            .map_err(|e| CholeskyError::Analysis(format!("workspace: {e}")))?;
        Ok(Self {
            l_values: vec![0.0; symbolic.len_val()],
            values: vec![0.0; row_idx.len()],
            symbolic,
            side,
            col_ptr,
            row_idx,
            src,
            perm,
            inv,
            pattern,
            fixed_dof: vec![false; dim],
            fixed: vec![false; n],
            coupling: Vec::new(),
            work: vec![0.0; dim],
            mem,
            factored: None,
            ldlt_fallback: false,
            parallel: false,
            threads,
            stats: CholeskyStats::default(),
        })
    }

    /// Vertices (block rows).
    pub fn n_vertices(&self) -> usize {
        self.perm.len()
    }

    /// Stored entries of the factor `L` (its memory is 8 bytes each).
    pub fn nnz_l(&self) -> usize {
        self.l_values.len()
    }

    /// Whether faer chose its supernodal (rather than simplicial) kernel.
    pub fn is_supernodal(&self) -> bool {
        matches!(self.symbolic.raw(), SymbolicCholeskyRaw::Supernodal(_))
    }

    /// The factor kept, if any.
    pub fn factored(&self) -> Option<FactorKind> {
        self.factored
    }

    /// The fixed flags (per vertex) given to the last [`Self::factor`].
    pub fn fixed(&self) -> &[bool] {
        &self.fixed
    }

    pub fn stats(&self) -> CholeskyStats {
        self.stats
    }

    /// Numeric factorization of `a` (symmetric, on the analysed pattern) with the rows and
    /// columns of `fixed` vertices replaced by identity. On error no factor is kept.
    pub fn factor(&mut self, a: &BlockCsr, fixed: &[bool]) -> Result<FactorKind, CholeskyError> {
        if !Arc::ptr_eq(&a.pattern, &self.pattern) && *a.pattern != *self.pattern {
            return Err(CholeskyError::PatternMismatch);
        }
        assert_eq!(fixed.len(), self.n_vertices(), "one fixed flag per vertex");
        self.factored = None;
        self.fixed.copy_from_slice(fixed);
        for (new, &old) in self.perm.iter().enumerate() {
            self.fixed_dof[3 * new..3 * new + 3].fill(fixed[old as usize]);
        }
        let (fd, vals) = (&self.fixed_dof, &a.values);
        for col in 0..self.work.len() {
            let range = self.col_ptr[col]..self.col_ptr[col + 1];
            for ((v, &row), &s) in self.values[range.clone()]
                .iter_mut()
                .zip(&self.row_idx[range.clone()])
                .zip(&self.src[range])
            {
                *v = if fd[col] || fd[row] {
                    f64::from(u8::from(row == col))
                } else {
                    let s = s as usize;
                    vals[s / 9][s % 9]
                };
            }
        }
        // b_f − A_fc x_c needs the couplings at solve time (this allocates only when the set
        // of fixed vertices grows).
        self.coupling.clear();
        let p = &*self.pattern;
        for i in (0..self.n_vertices()).filter(|&i| !fixed[i]) {
            let row = p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize;
            for (&j, m) in p.cols[row.clone()].iter().zip(&vals[row]) {
                if fixed[j as usize] {
                    self.coupling.push((i as u32, j, *m));
                }
            }
        }

        let (dim, par) = (self.work.len(), self.par());
        let mat = SparseColMatRef::new(
            SymbolicSparseColMatRef::new_checked(dim, dim, &self.col_ptr, None, &self.row_idx),
            &self.values,
        );
        let llt = self
            .symbolic
            .factorize_numeric_llt(
                &mut self.l_values,
                mat,
                self.side,
                Default::default(),
                par,
                MemStack::new(&mut self.mem),
                Default::default(),
            )
            .map(|_| ());
        let kind = match llt {
            Ok(()) => FactorKind::Llt,
            Err(LltError::NonPositivePivot { index }) => {
                if !self.ldlt_fallback {
                    let (vertex, component) = self.pivot_vertex(index);
                    return Err(CholeskyError::NotPositiveDefinite { vertex, component });
                }
                let ldlt = self
                    .symbolic
                    .factorize_numeric_ldlt(
                        &mut self.l_values,
                        mat,
                        self.side,
                        Default::default(),
                        par,
                        MemStack::new(&mut self.mem),
                        Default::default(),
                    )
                    .map(|_| ());
                if let Err(LdltError::ZeroPivot { index }) = ldlt {
                    let (vertex, component) = self.pivot_vertex(index);
                    return Err(CholeskyError::Singular { vertex, component });
                }
                self.stats.ldlt_fallbacks += 1;
                FactorKind::Ldlt
            }
        };
        self.stats.factorizations += 1;
        self.factored = Some(kind);
        Ok(kind)
    }

    /// Solves `A x = b` for the free vertices with the kept factor; the fixed entries of `x`
    /// hold prescribed values on entry and are left untouched (the contract of
    /// [`super::Pcg::solve`]). `fixed` must be the set given to [`Self::factor`].
    pub fn solve(
        &mut self,
        b: &[Vector3<f64>],
        fixed: &[bool],
        x: &mut [Vector3<f64>],
    ) -> Result<(), CholeskyError> {
        let kind = self.factored.ok_or(CholeskyError::NotFactored)?;
        let par = self.par();
        if fixed != self.fixed.as_slice() {
            return Err(CholeskyError::FixedMismatch);
        }
        let w = &mut self.work;
        for (new, &old) in self.perm.iter().enumerate() {
            let old = old as usize;
            let src = if fixed[old] { &x[old] } else { &b[old] };
            w[3 * new..3 * new + 3].copy_from_slice(src.as_slice());
        }
        for &(i, j, ref m) in &self.coupling {
            let d = m * x[j as usize];
            let at = 3 * self.inv[i as usize] as usize;
            for c in 0..3 {
                w[at + c] -= d[c];
            }
        }
        let dim = w.len();
        let rhs = MatMut::from_column_major_slice_mut(&mut w[..], dim, 1);
        let stack = MemStack::new(&mut self.mem);
        match kind {
            FactorKind::Llt => LltRef::new(&self.symbolic, &self.l_values)
                .solve_in_place_with_conj(Conj::No, rhs, par, stack),
            FactorKind::Ldlt => LdltRef::new(&self.symbolic, &self.l_values)
                .solve_in_place_with_conj(Conj::No, rhs, par, stack),
        }
        for (new, &old) in self.perm.iter().enumerate() {
            let old = old as usize;
            if !fixed[old] {
                x[old] = Vector3::from_column_slice(&w[3 * new..3 * new + 3]);
            }
        }
        self.stats.solves += 1;
        Ok(())
    }

    fn par(&self) -> Par {
        if self.parallel {
            parallel_par(self.threads)
        } else {
            Par::Seq
        }
    }

    /// The original vertex and component of the pivot that faer's `index` of a failed
    /// factorization names.
    ///
    /// faer 0.24 numbers that pivot differently in its two kernels (neither is documented; read
    /// from `sparse/linalg/cholesky.rs`): the simplicial kernel returns `index: k + 1` for a
    /// failure at column `k`, 1-based, while the supernodal one returns the 0-based column of
    /// its dense kernel plus the supernode's first column, 0-based. Both count columns of the
    /// matrix faer was given, which is already `P A Pᵀ` (analysed under faer's identity
    /// ordering), so the column is a permuted dof. Taking the simplicial index as 0-based read
    /// one dof too far, and past the end for the last column (issue 12's panic). An index
    /// outside the matrix, which neither kernel produces, is clamped to the last dof rather
    /// than panicking in an error path.
    fn pivot_vertex(&self, index: usize) -> (usize, usize) {
        let column = if self.is_supernodal() {
            index
        } else {
            index.saturating_sub(1)
        };
        let column = column.min(self.work.len().saturating_sub(1));
        (self.perm[column / 3] as usize, column % 3)
    }
}

/// The scalar CSC pattern of one triangle of `P A Pᵀ` (columns and rows in the permuted
/// numbering, rows ascending) and the source of each entry in the block values.
///
/// Column `3J + c` is read from block row `j = perm[J]`: entry `(3I + r, 3J + c)` of `P A Pᵀ`
/// is `A_ij[r, c] = A_ji[c, r]` (`A` symmetric), i.e. column-major index `3r + c` of the block
/// in slot `(j, i)`.
fn triangle(
    pattern: &BlockPattern,
    perm: &[u32],
    inv: &[u32],
    side: Side,
) -> (Vec<usize>, Vec<usize>, Vec<u32>) {
    let n = perm.len();
    let keep = |row: usize, col: usize| match side {
        Side::Lower => row >= col,
        Side::Upper => row <= col,
    };
    let nnz_blocks = pattern.n_blocks();
    let mut col_ptr = Vec::with_capacity(3 * n + 1);
    let mut row_idx = Vec::with_capacity(9 * (nnz_blocks + n) / 2);
    let mut src = Vec::with_capacity(9 * (nnz_blocks + n) / 2);
    let mut column: Vec<(u32, u32)> = Vec::new();
    col_ptr.push(0);
    for (jn, &j) in perm.iter().enumerate() {
        let j = j as usize;
        column.clear();
        for k in pattern.row_ptr[j] as usize..pattern.row_ptr[j + 1] as usize {
            let i_new = inv[pattern.cols[k] as usize];
            if keep(i_new as usize, jn) {
                column.push((i_new, k as u32));
            }
        }
        column.sort_unstable();
        for c in 0..3 {
            let col = 3 * jn + c;
            for &(i_new, k) in &column {
                for r in 0..3 {
                    let row = 3 * i_new as usize + r;
                    if keep(row, col) {
                        row_idx.push(row);
                        src.push(9 * k + (3 * r + c) as u32);
                    }
                }
            }
            col_ptr.push(row_idx.len());
        }
    }
    (col_ptr, row_idx, src)
}

#[cfg(test)]
mod tests;
