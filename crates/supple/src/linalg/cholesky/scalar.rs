//! Sparse Cholesky of a scalar matrix on the vertex graph, solved for three right-hand sides
//! at once: systems `(A ⊗ I₃) x = b` whose 3×3 blocks are `a_ij I` (the constant matrix of
//! the operator-splitting corotated step, `time::FastCorotatedStep`, where the three
//! components decouple). Against the 3n×3n [`super::SparseCholesky`] of the same blocks the
//! factor has a ninth of the entries and a back-substitution a third of the flops.
//!
//! The same three phases as [`super::SparseCholesky`]: analysis of the permuted pattern once
//! (faer under its identity ordering), numeric factorization into kept buffers, and solves
//! with fixed vertices as prescribed values (their rows and columns identity, their couplings
//! moved to the right-hand side). No allocation after the analysis, except when the set of
//! fixed vertices grows (the couplings).

use super::{parallel_par, CholeskyError};
use crate::linalg::BlockPattern;
use faer::dyn_stack::{MemBuffer, MemStack, StackReq};
use faer::linalg::cholesky::llt::factor::LltError;
use faer::sparse::linalg::cholesky::{
    factorize_symbolic_cholesky, CholeskySymbolicParams, LltRef, SymbolicCholesky,
    SymbolicCholeskyRaw, SymmetricOrdering,
};
use faer::sparse::{SparseColMatRef, SymbolicSparseColMatRef};
use faer::{Conj, MatMut, Par, Side};
use nalgebra::Vector3;
use std::sync::Arc;

/// Sparse Cholesky of a scalar matrix (one value per slot of a [`BlockPattern`]).
pub struct ScalarCholesky {
    pattern: Arc<BlockPattern>,
    /// `perm[new] = old`, `inv[old] = new`.
    perm: Vec<u32>,
    inv: Vec<u32>,
    symbolic: SymbolicCholesky<usize>,
    side: Side,
    col_ptr: Vec<usize>,
    row_idx: Vec<usize>,
    /// Slot of each stored entry.
    src: Vec<u32>,
    values: Vec<f64>,
    l_values: Vec<f64>,
    fixed: Vec<bool>,
    /// `(free vertex i, fixed vertex j, a_ij)` of the last factorization.
    coupling: Vec<(u32, u32, f64)>,
    /// Permuted right-hand sides, column-major `n × 3`.
    work: Vec<f64>,
    mem: MemBuffer,
    factored: bool,
}

impl std::fmt::Debug for ScalarCholesky {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScalarCholesky")
            .field("n", &self.perm.len())
            .field("nnz_l", &self.l_values.len())
            .field("factored", &self.factored)
            .finish_non_exhaustive()
    }
}

impl ScalarCholesky {
    /// Symbolic analysis of the scalar matrices on `pattern` under the vertex ordering `perm`
    /// (`perm[new] = old`).
    pub fn new(pattern: Arc<BlockPattern>, perm: &[u32]) -> Result<Self, CholeskyError> {
        let n = pattern.n_rows();
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
        let (col_ptr, row_idx, src) = triangle(&pattern, perm, &inv, Side::Upper);
        let symbolic = factorize_symbolic_cholesky(
            SymbolicSparseColMatRef::new_checked(n, n, &col_ptr, None, &row_idx),
            Side::Upper,
            SymmetricOrdering::Identity,
            CholeskySymbolicParams::default(),
        )
        .map_err(|e| CholeskyError::Analysis(format!("{e:?}")))?;
        let (side, col_ptr, row_idx, src) = match symbolic.raw() {
            SymbolicCholeskyRaw::Supernodal(_) => {
                let (c, r, s) = triangle(&pattern, perm, &inv, Side::Lower);
                (Side::Lower, c, r, s)
            }
            SymbolicCholeskyRaw::Simplicial(_) => (Side::Upper, col_ptr, row_idx, src),
        };
        let par = parallel_par(1);
        let reqs = [
            symbolic.factorize_numeric_llt_scratch::<f64>(Par::Seq, Default::default()),
            symbolic.solve_in_place_scratch::<f64>(3, Par::Seq),
            symbolic.solve_in_place_scratch::<f64>(3, par),
        ];
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
            perm: perm.to_vec(),
            inv,
            pattern,
            fixed: vec![false; n],
            coupling: Vec::new(),
            work: vec![0.0; 3 * n],
            mem,
            factored: false,
        })
    }

    /// Stored entries of the factor.
    pub fn nnz_l(&self) -> usize {
        self.l_values.len()
    }

    /// The fixed flags given to the last [`Self::factor`].
    pub fn fixed(&self) -> &[bool] {
        &self.fixed
    }

    /// Factors the matrix with values `a` (one per slot, symmetric), the rows and columns of
    /// `fixed` vertices replaced by identity. On error no factor is kept.
    pub fn factor(&mut self, a: &[f64], fixed: &[bool]) -> Result<(), CholeskyError> {
        if a.len() != self.pattern.n_blocks() {
            return Err(CholeskyError::PatternMismatch);
        }
        self.factored = false;
        self.fixed.copy_from_slice(fixed);
        let n = self.perm.len();
        for col in 0..n {
            let fc = fixed[self.perm[col] as usize];
            let range = self.col_ptr[col]..self.col_ptr[col + 1];
            for ((v, &row), &s) in self.values[range.clone()]
                .iter_mut()
                .zip(&self.row_idx[range.clone()])
                .zip(&self.src[range])
            {
                *v = if fc || fixed[self.perm[row] as usize] {
                    f64::from(u8::from(row == col))
                } else {
                    a[s as usize]
                };
            }
        }
        self.coupling.clear();
        let p = &*self.pattern;
        for i in (0..n).filter(|&i| !fixed[i]) {
            let row = p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize;
            for (&j, &v) in p.cols[row.clone()].iter().zip(&a[row]) {
                if fixed[j as usize] {
                    self.coupling.push((i as u32, j, v));
                }
            }
        }
        let mat = SparseColMatRef::new(
            SymbolicSparseColMatRef::new_checked(n, n, &self.col_ptr, None, &self.row_idx),
            &self.values,
        );
        match self.symbolic.factorize_numeric_llt(
            &mut self.l_values,
            mat,
            self.side,
            Default::default(),
            Par::Seq,
            MemStack::new(&mut self.mem),
            Default::default(),
        ) {
            Ok(_) => {
                self.factored = true;
                Ok(())
            }
            Err(LltError::NonPositivePivot { index }) => {
                // faer's simplicial kernel counts this pivot from 1, its supernodal one
                // from 0 (see `SparseCholesky::pivot_vertex`).
                let column = match self.symbolic.raw() {
                    SymbolicCholeskyRaw::Supernodal(_) => index,
                    SymbolicCholeskyRaw::Simplicial(_) => index.saturating_sub(1),
                };
                let column = column.min(n.saturating_sub(1));
                Err(CholeskyError::NotPositiveDefinite {
                    vertex: self.perm[column] as usize,
                    component: 0,
                })
            }
        }
    }

    /// Solves `(A ⊗ I₃) x = b` for the free vertices; the fixed entries of `x` hold
    /// prescribed values and are left untouched. `fixed` must be the factored set.
    /// Sequential (the same bits on any pool).
    pub fn solve(
        &mut self,
        b: &[Vector3<f64>],
        fixed: &[bool],
        x: &mut [Vector3<f64>],
    ) -> Result<(), CholeskyError> {
        if !self.factored {
            return Err(CholeskyError::NotFactored);
        }
        if fixed != self.fixed.as_slice() {
            return Err(CholeskyError::FixedMismatch);
        }
        let n = self.perm.len();
        let w = &mut self.work;
        for (new, &old) in self.perm.iter().enumerate() {
            let old = old as usize;
            let src = if fixed[old] { &x[old] } else { &b[old] };
            for c in 0..3 {
                w[c * n + new] = src[c];
            }
        }
        for &(i, j, a) in &self.coupling {
            let at = self.inv[i as usize] as usize;
            let xj = x[j as usize];
            for c in 0..3 {
                w[c * n + at] -= a * xj[c];
            }
        }
        let rhs = MatMut::from_column_major_slice_mut(&mut w[..], n, 3);
        LltRef::new(&self.symbolic, &self.l_values).solve_in_place_with_conj(
            Conj::No,
            rhs,
            Par::Seq,
            MemStack::new(&mut self.mem),
        );
        for (new, &old) in self.perm.iter().enumerate() {
            let old = old as usize;
            if !fixed[old] {
                x[old] = Vector3::new(w[new], w[n + new], w[2 * n + new]);
            }
        }
        Ok(())
    }
}

/// The scalar CSC pattern of one triangle of `P A Pᵀ` (permuted numbering, rows ascending)
/// and the slot of each entry.
fn triangle(
    pattern: &BlockPattern,
    perm: &[u32],
    inv: &[u32],
    side: Side,
) -> (Vec<usize>, Vec<usize>, Vec<u32>) {
    let keep = |row: usize, col: usize| match side {
        Side::Lower => row >= col,
        Side::Upper => row <= col,
    };
    let cap = (pattern.n_blocks() + perm.len()) / 2;
    let mut col_ptr = Vec::with_capacity(perm.len() + 1);
    let (mut row_idx, mut src) = (Vec::with_capacity(cap), Vec::with_capacity(cap));
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
        for &(i_new, k) in &column {
            row_idx.push(i_new as usize);
            src.push(k);
        }
        col_ptr.push(row_idx.len());
    }
    (col_ptr, row_idx, src)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::{BlockCsr, SparseCholesky};
    use crate::mesh::{box_grid, BoxGrid, TetSplit};
    use nalgebra::Matrix3;

    /// On `A ⊗ I₃` (a mesh Laplacian plus masses) with held vertices, the scalar factor's
    /// solve is the block factor's to round-off, under a non-trivial ordering.
    #[test]
    fn solves_as_the_block_factor_of_the_same_blocks() {
        let mesh = box_grid(&BoxGrid {
            cells: [3, 2, 2],
            cell_size: Vector3::repeat(0.1),
            origin: Vector3::zeros(),
            split: TetSplit::Five,
        });
        let n = mesh.n_vertices();
        let (pattern, scatter) = BlockPattern::from_tets(n, &mesh.tets);
        let pattern = Arc::new(pattern);
        let mut a = vec![0.0; pattern.n_blocks()];
        for (t, map) in mesh.tets.iter().zip(&scatter) {
            for p in 0..4 {
                for q in 0..4 {
                    let w = if p == q { 3.0 } else { -1.0 };
                    a[map[4 * p + q] as usize] += w * (1.0 + 0.1 * f64::from(t[0] % 3));
                }
            }
        }
        for i in 0..n {
            a[pattern.diag[i] as usize] += 0.5 + 0.01 * i as f64;
        }
        let mut block = BlockCsr::zeros(pattern.clone());
        for (m, &v) in block.values.iter_mut().zip(&a) {
            *m = Matrix3::from_diagonal_element(v);
        }
        let perm: Vec<u32> = (0..n as u32).rev().collect();
        let fixed: Vec<bool> = (0..n).map(|i| i % 7 == 0).collect();
        let b: Vec<Vector3<f64>> = (0..n)
            .map(|i| Vector3::new(i as f64, 1.0 - i as f64 * 0.3, (i * i % 5) as f64))
            .collect();
        let x0: Vec<Vector3<f64>> = (0..n).map(|i| Vector3::repeat(0.2 * i as f64)).collect();
        let mut s = ScalarCholesky::new(pattern.clone(), &perm).unwrap();
        s.factor(&a, &fixed).unwrap();
        let mut xs = x0.clone();
        s.solve(&b, &fixed, &mut xs).unwrap();
        let mut c = SparseCholesky::new(pattern, Some(&perm)).unwrap();
        c.factor(&block, &fixed).unwrap();
        let mut xc = x0.clone();
        c.solve(&b, &fixed, &mut xc).unwrap();
        for i in 0..n {
            assert!((xs[i] - xc[i]).norm() < 1e-10 * (1.0 + xc[i].norm()), "{i}");
            if fixed[i] {
                assert_eq!(xs[i], x0[i]);
            }
        }
        assert!(s.nnz_l() * 9 <= c.nnz_l() + 9 * n);
        assert_eq!(
            s.solve(&b, &vec![false; n], &mut xs),
            Err(CholeskyError::FixedMismatch)
        );
    }
}
