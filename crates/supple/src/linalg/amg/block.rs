//! Block compressed-sparse-row storage of the hierarchy for the V-cycle: the prolongators
//! (`3 × 6` blocks from the finest level, one block per vertex and aggregate; `6 × 6` below)
//! and their transposes, and the coarse operators (`6 × 6` blocks, one per pair of
//! aggregates: six coarse dofs per aggregate from the rigid-body modes, Vaněk, Mandel &
//! Brezina 1996). The setup builds them in `f64` (its sparse products, `product`); the build
//! casts them once. One column index per block instead of one per scalar (4 bytes per
//! 18 or 36 values) and fixed-size inner loops the compiler unrolls.
//!
//! The values are stored as `T`, `f64` or `f32` ([`AmgSettings::single_precision`]): the
//! hierarchy is only a preconditioner, so rounding its coarse operators and transfers changes
//! the preconditioner (it stays symmetric: `R = Pᵀ` rounds exactly as `P`, and a coarse
//! operator's blocks `A_IJ`, `A_JIᵀ`, equal to `f64` round-off, round to the same `f32` but
//! in rare ties) but not the system CG solves, whose products stay `f64` on the finest matrix.
//! Products accumulate in `f64`.
//!
//! [`AmgSettings::single_precision`]: super::AmgSettings::single_precision

use crate::linalg::{par, BlockCsr};

/// A stored value: `f64` or `f32`, read as `f64`.
pub trait Real: Copy + Default + Send + Sync + std::fmt::Debug + PartialEq + 'static {
    fn from_f64(v: f64) -> Self;
    fn get(self) -> f64;
}

impl Real for f64 {
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn get(self) -> f64 {
        self
    }
}

impl Real for f32 {
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn get(self) -> f64 {
        f64::from(self)
    }
}

/// A sparse matrix of `R × C` blocks, sorted block columns per block row.
#[derive(Debug, Clone, PartialEq)]
pub struct Bsr<const R: usize, const C: usize, T> {
    pub n_brows: usize,
    pub n_bcols: usize,
    pub ptr: Vec<usize>,
    pub idx: Vec<u32>,
    pub val: Vec<[[T; C]; R]>,
}

impl<const R: usize, const C: usize, T: Real> Bsr<R, C, T> {
    /// An empty matrix of `n_brows × n_bcols` blocks (filled by [`Bsr::push_row`]).
    pub fn with_capacity(n_brows: usize, n_bcols: usize, blocks: usize) -> Self {
        let mut ptr = Vec::with_capacity(n_brows + 1);
        ptr.push(0);
        Self {
            n_brows,
            n_bcols,
            ptr,
            idx: Vec::with_capacity(blocks),
            val: Vec::with_capacity(blocks),
        }
    }

    /// Closes the block row whose blocks were pushed since the last call.
    pub fn push_row(&mut self) {
        self.ptr.push(self.idx.len());
    }

    /// The same matrix with its values stored as `U`.
    pub fn cast<U: Real>(&self) -> Bsr<R, C, U> {
        Bsr {
            n_brows: self.n_brows,
            n_bcols: self.n_bcols,
            ptr: self.ptr.clone(),
            idx: self.idx.clone(),
            val: self
                .val
                .iter()
                .map(|m| m.map(|row| row.map(|v| U::from_f64(v.get()))))
                .collect(),
        }
    }

    /// `Aᵀ`, its blocks transposed (a counting sort by block column: rows come out sorted).
    pub fn transpose(&self) -> Bsr<C, R, T> {
        let mut start = vec![0usize; self.n_bcols + 1];
        for &j in &self.idx {
            start[j as usize + 1] += 1;
        }
        for j in 0..self.n_bcols {
            start[j + 1] += start[j];
        }
        let ptr = start.clone();
        let mut idx = vec![0u32; self.n_blocks()];
        let mut val = vec![[[T::default(); R]; C]; self.n_blocks()];
        for i in 0..self.n_brows {
            for k in self.ptr[i]..self.ptr[i + 1] {
                let j = self.idx[k] as usize;
                let at = start[j];
                start[j] += 1;
                idx[at] = i as u32;
                for (r, row) in self.val[k].iter().enumerate() {
                    for (c, &v) in row.iter().enumerate() {
                        val[at][c][r] = v;
                    }
                }
            }
        }
        Bsr {
            n_brows: self.n_bcols,
            n_bcols: self.n_brows,
            ptr,
            idx,
            val,
        }
    }

    /// Scalar entries whose value is not zero: a level's size in [`super::AmgInfo`] and the
    /// operator complexity (a mode that is dependent on an aggregate, or absent, as the
    /// rotations are without positions, gives stored zero rows and columns that are not
    /// counted).
    pub fn n_nonzeros(&self) -> usize {
        self.val
            .iter()
            .map(|m| m.iter().flatten().filter(|v| v.get() != 0.0).count())
            .sum()
    }

    /// Dense copy (the coarsest level and tests).
    pub fn to_dense(&self) -> nalgebra::DMatrix<f64> {
        let mut d = nalgebra::DMatrix::zeros(R * self.n_brows, C * self.n_bcols);
        for i in 0..self.n_brows {
            for k in self.ptr[i]..self.ptr[i + 1] {
                let j = self.idx[k] as usize;
                for (r, row) in self.val[k].iter().enumerate() {
                    for (c, &v) in row.iter().enumerate() {
                        d[(R * i + r, C * j + c)] += v.get();
                    }
                }
            }
        }
        d
    }

    pub fn n_blocks(&self) -> usize {
        self.idx.len()
    }

    /// Scalar entries held (`R · C` per block, stored zeros included).
    pub fn n_scalars(&self) -> usize {
        R * C * self.n_blocks()
    }

    /// Bytes of the values, indices and row pointers.
    pub fn bytes(&self) -> usize {
        self.n_scalars() * std::mem::size_of::<T>() + 4 * self.n_blocks() + 8 * self.ptr.len()
    }

    /// `Σ_k A_{I,idx[k]} x_{idx[k]}` over the block row's stored blocks `range`.
    #[inline(always)]
    pub fn row_product(&self, range: std::ops::Range<usize>, x: &[[f64; C]]) -> [f64; R] {
        let mut acc = [0.0; R];
        for (m, &j) in self.val[range.clone()].iter().zip(&self.idx[range]) {
            let xj = &x[j as usize];
            for r in 0..R {
                for c in 0..C {
                    acc[r] += m[r][c].get() * xj[c];
                }
            }
        }
        acc
    }

    /// `y = A x` (parallel over block rows, each summed in storage order: the same bits on
    /// any number of threads).
    pub fn mul_vec(&self, x: &[f64], y: &mut [f64]) {
        let (x, _) = x[..C * self.n_bcols].as_chunks::<C>();
        let (y, _) = y[..R * self.n_brows].as_chunks_mut::<R>();
        par::for_each_mut(y, |i, yi| {
            *yi = self.row_product(self.ptr[i]..self.ptr[i + 1], x);
        });
    }

    /// `y += A x`.
    pub fn mul_vec_add(&self, x: &[f64], y: &mut [f64]) {
        let (x, _) = x[..C * self.n_bcols].as_chunks::<C>();
        let (y, _) = y[..R * self.n_brows].as_chunks_mut::<R>();
        par::for_each_mut(y, |i, yi| {
            let s = self.row_product(self.ptr[i]..self.ptr[i + 1], x);
            for r in 0..R {
                yi[r] += s[r];
            }
        });
    }
}

impl<const B: usize, T: Real> Bsr<B, B, T> {
    /// The same matrix with every diagonal block stored (a zero block where none was: the
    /// smoothers find the diagonal by position).
    pub fn with_diagonal(self) -> Self {
        let stored = |i: usize| self.idx[self.ptr[i]..self.ptr[i + 1]].binary_search(&(i as u32));
        if (0..self.n_brows).all(|i| stored(i).is_ok()) {
            return self;
        }
        let mut out =
            Self::with_capacity(self.n_brows, self.n_bcols, self.n_blocks() + self.n_brows);
        for i in 0..self.n_brows {
            let mut diagonal = false;
            for k in self.ptr[i]..self.ptr[i + 1] {
                let j = self.idx[k] as usize;
                if j > i && !diagonal {
                    out.idx.push(i as u32);
                    out.val.push([[T::default(); B]; B]);
                }
                diagonal |= j >= i;
                out.idx.push(j as u32);
                out.val.push(self.val[k]);
            }
            if !diagonal {
                out.idx.push(i as u32);
                out.val.push([[T::default(); B]; B]);
            }
            out.push_row();
        }
        out
    }
}

impl Bsr<3, 3, f64> {
    /// `A` restricted to the free vertices: rows and columns of fixed vertices are left
    /// empty (their dofs are decoupled zeros of the hierarchy).
    pub fn from_block_csr(a: &BlockCsr, fixed: &[bool]) -> Self {
        let p = &*a.pattern;
        let n = p.n_rows();
        let mut out = Self::with_capacity(n, n, p.n_blocks());
        for i in 0..n {
            if !fixed[i] {
                for k in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
                    let j = p.cols[k] as usize;
                    if !fixed[j] {
                        let m = &a.values[k];
                        out.idx.push(j as u32);
                        out.val
                            .push(std::array::from_fn(|r| std::array::from_fn(|c| m[(r, c)])));
                    }
                }
            }
            out.push_row();
        }
        out
    }
}

#[cfg(test)]
impl<const R: usize, const C: usize> Bsr<R, C, f64> {
    /// The blocks of `d` (shape a multiple of `R × C`) that hold a nonzero, for tests.
    pub fn from_dense(d: &nalgebra::DMatrix<f64>) -> Self {
        let (n_brows, n_bcols) = (d.nrows() / R, d.ncols() / C);
        let mut out = Self::with_capacity(n_brows, n_bcols, 0);
        for i in 0..n_brows {
            for j in 0..n_bcols {
                let m: [[f64; C]; R] =
                    std::array::from_fn(|r| std::array::from_fn(|c| d[(R * i + r, C * j + c)]));
                if m.iter().flatten().any(|&v| v != 0.0) {
                    out.idx.push(j as u32);
                    out.val.push(m);
                }
            }
            out.push_row();
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::{DMatrix, DVector};

    /// A matrix with scattered entries (zero blocks left out by [`Bsr::from_dense`]).
    fn scattered(rows: usize, cols: usize, seed: usize) -> DMatrix<f64> {
        DMatrix::from_fn(rows, cols, |i, j| {
            if (i * 5 + j * 7 + seed).is_multiple_of(4) {
                ((i * 13 + j * 3 + seed) % 9) as f64 - 4.0 + 0.1
            } else {
                0.0
            }
        })
    }

    #[test]
    fn block_products_transposes_and_casts_match_the_dense_ones() {
        let d = scattered(12, 18, 0);
        let x: Vec<f64> = (0..18).map(|i| (i as f64 * 0.3).cos()).collect();
        let want = &d * DVector::from_vec(x.clone());
        let b36 = Bsr::<3, 6, f64>::from_dense(&d);
        let b66 = Bsr::<6, 6, f64>::from_dense(&d);
        assert_eq!(b36.to_dense(), d);
        assert_eq!(b66.to_dense(), d);
        assert_eq!(b66.n_nonzeros(), d.iter().filter(|&&v| v != 0.0).count());
        assert_eq!(b36.transpose().to_dense(), d.transpose());
        let mut y = vec![0.0; 12];
        b36.mul_vec(&x, &mut y);
        assert!(y
            .iter()
            .zip(want.iter())
            .all(|(p, q)| (p - q).abs() <= 1e-12));
        let mut y = vec![1.0; 12];
        b66.mul_vec_add(&x, &mut y);
        assert!(y
            .iter()
            .zip(want.iter())
            .all(|(p, q)| (p - 1.0 - q).abs() <= 1e-12));
        let mut y = vec![0.0; 12];
        b36.cast::<f32>().mul_vec(&x, &mut y);
        assert!(y
            .iter()
            .zip(want.iter())
            .all(|(p, q)| (p - q).abs() <= 1e-5));
        assert_eq!(b66.n_brows, 2);
    }

    #[test]
    fn with_diagonal_stores_every_diagonal_block_and_keeps_the_values() {
        // Block rows: no diagonal in row 0 (a later block), none in row 2 (an earlier one),
        // an empty row 3.
        let mut d = DMatrix::<f64>::zeros(12, 12);
        d[(0, 4)] = 1.0;
        d[(4, 4)] = 2.0;
        d[(6, 1)] = 3.0;
        let a = Bsr::<3, 3, f64>::from_dense(&d).with_diagonal();
        assert_eq!(a.to_dense(), d);
        for i in 0..4 {
            assert!(
                a.idx[a.ptr[i]..a.ptr[i + 1]].contains(&(i as u32)),
                "row {i}"
            );
            assert!(a.idx[a.ptr[i]..a.ptr[i + 1]]
                .windows(2)
                .all(|w| w[0] < w[1]));
        }
        assert_eq!(a.n_blocks(), 6);
    }
}
