//! Scalar compressed-sparse-row matrices for the multigrid hierarchy: the prolongators and
//! the coarse operators, whose blocks are 6×6 (one per rigid-body mode) rather than the
//! finest level's 3×3. Products are Gustavson's row-by-row algorithm (ACM TOMS 4, 1978) with
//! a dense accumulator per thread; each row is computed alone in a fixed order and its
//! columns sorted, so the result does not depend on the number of threads. Only the setup
//! calls the products; the V-cycle uses [`Csr::mul_vec`] and the triangular sweeps.

use crate::linalg::{par, BlockCsr};
use rayon::prelude::*;

/// Rows per parallel task of a sparse product.
const ROWS_PER_TASK: usize = 256;

/// A sparse `n_rows × n_cols` matrix, sorted columns per row.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Csr {
    pub n_rows: usize,
    pub n_cols: usize,
    pub ptr: Vec<usize>,
    pub idx: Vec<u32>,
    pub val: Vec<f64>,
}

impl Csr {
    /// `A` restricted to the free vertices as scalars: rows and columns of fixed vertices
    /// are left empty (their dofs are decoupled zeros of the hierarchy).
    pub fn from_block(a: &BlockCsr, fixed: &[bool]) -> Self {
        let p = &*a.pattern;
        let n = p.n_rows();
        let mut ptr = Vec::with_capacity(3 * n + 1);
        let mut idx = Vec::with_capacity(9 * p.n_blocks());
        let mut val = Vec::with_capacity(9 * p.n_blocks());
        ptr.push(0);
        for i in 0..n {
            for r in 0..3 {
                if !fixed[i] {
                    for k in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
                        let j = p.cols[k] as usize;
                        if fixed[j] {
                            continue;
                        }
                        for c in 0..3 {
                            idx.push((3 * j + c) as u32);
                            val.push(a.values[k][(r, c)]);
                        }
                    }
                }
                ptr.push(idx.len());
            }
        }
        Self {
            n_rows: 3 * n,
            n_cols: 3 * n,
            ptr,
            idx,
            val,
        }
    }

    pub fn nnz(&self) -> usize {
        self.idx.len()
    }

    pub fn row(&self, i: usize) -> std::ops::Range<usize> {
        self.ptr[i]..self.ptr[i + 1]
    }

    /// `y = A x` (parallel over rows, each row summed in column order).
    pub fn mul_vec(&self, x: &[f64], y: &mut [f64]) {
        par::for_each_mut(&mut y[..self.n_rows], |i, yi| {
            let mut s = 0.0;
            for k in self.row(i) {
                s += self.val[k] * x[self.idx[k] as usize];
            }
            *yi = s;
        });
    }

    /// `y += A x`.
    pub fn mul_vec_add(&self, x: &[f64], y: &mut [f64]) {
        par::for_each_mut(&mut y[..self.n_rows], |i, yi| {
            let mut s = 0.0;
            for k in self.row(i) {
                s += self.val[k] * x[self.idx[k] as usize];
            }
            *yi += s;
        });
    }

    /// `Aᵀ` (a counting sort by column; rows of the result come out sorted).
    pub fn transpose(&self) -> Self {
        let mut count = vec![0usize; self.n_cols + 1];
        for &j in &self.idx {
            count[j as usize + 1] += 1;
        }
        for j in 0..self.n_cols {
            count[j + 1] += count[j];
        }
        let ptr = count.clone();
        let mut idx = vec![0u32; self.nnz()];
        let mut val = vec![0.0; self.nnz()];
        for i in 0..self.n_rows {
            for k in self.row(i) {
                let j = self.idx[k] as usize;
                idx[count[j]] = i as u32;
                val[count[j]] = self.val[k];
                count[j] += 1;
            }
        }
        Self {
            n_rows: self.n_cols,
            n_cols: self.n_rows,
            ptr,
            idx,
            val,
        }
    }

    /// `self · b` (Gustavson), parallel over row blocks.
    pub fn mul(&self, b: &Csr) -> Csr {
        assert_eq!(self.n_cols, b.n_rows, "inner dimensions");
        self.rowwise(b.n_cols, |i, acc, touched| {
            for k in self.row(i) {
                let a_ik = self.val[k];
                for l in b.row(self.idx[k] as usize) {
                    let j = b.idx[l] as usize;
                    if acc[j].is_none() {
                        acc[j] = Some(0.0);
                        touched.push(j as u32);
                    }
                    *acc[j].as_mut().expect("set above") += a_ik * b.val[l];
                }
            }
        })
    }

    /// `self + alpha · b` (same shape).
    pub fn add_scaled(&self, alpha: f64, b: &Csr) -> Csr {
        assert_eq!((self.n_rows, self.n_cols), (b.n_rows, b.n_cols));
        self.rowwise(self.n_cols, |i, acc, touched| {
            for (m, scale) in [(self, 1.0), (b, alpha)] {
                for k in m.row(i) {
                    let j = m.idx[k] as usize;
                    if acc[j].is_none() {
                        acc[j] = Some(0.0);
                        touched.push(j as u32);
                    }
                    *acc[j].as_mut().expect("set above") += scale * m.val[k];
                }
            }
        })
    }

    /// Builds a matrix of `self.n_rows` rows and `n_cols` columns row by row: `fill(i, acc,
    /// touched)` accumulates row `i` into `acc` (None = not yet touched) and lists the columns
    /// it touched. Exact zeros are kept (the pattern is what the product structure gives).
    fn rowwise(
        &self,
        n_cols: usize,
        fill: impl Fn(usize, &mut [Option<f64>], &mut Vec<u32>) + Sync,
    ) -> Csr {
        let n = self.n_rows;
        let starts: Vec<usize> = (0..n).step_by(ROWS_PER_TASK).collect();
        let blocks: Vec<(Vec<usize>, Vec<u32>, Vec<f64>)> = starts
            .par_iter()
            .map_init(
                || (vec![None; n_cols], Vec::new()),
                |(acc, touched), &s| {
                    let e = (s + ROWS_PER_TASK).min(n);
                    let (mut len, mut idx, mut val) = (Vec::new(), Vec::new(), Vec::new());
                    for i in s..e {
                        touched.clear();
                        fill(i, acc, touched);
                        touched.sort_unstable();
                        for &j in touched.iter() {
                            idx.push(j);
                            val.push(acc[j as usize].take().expect("touched"));
                        }
                        len.push(touched.len());
                    }
                    (len, idx, val)
                },
            )
            .collect();
        let mut out = Csr {
            n_rows: n,
            n_cols,
            ptr: Vec::with_capacity(n + 1),
            idx: Vec::new(),
            val: Vec::new(),
        };
        out.ptr.push(0);
        for (len, idx, val) in blocks {
            for l in len {
                out.ptr.push(out.ptr.last().expect("non-empty") + l);
            }
            out.idx.extend_from_slice(&idx);
            out.val.extend_from_slice(&val);
        }
        out
    }

    /// Dense copy (coarsest level and tests).
    pub fn to_dense(&self) -> nalgebra::DMatrix<f64> {
        let mut d = nalgebra::DMatrix::zeros(self.n_rows, self.n_cols);
        for i in 0..self.n_rows {
            for k in self.row(i) {
                d[(i, self.idx[k] as usize)] += self.val[k];
            }
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n_rows: usize, n_cols: usize, seed: usize) -> Csr {
        let mut m = Csr {
            n_rows,
            n_cols,
            ptr: vec![0],
            ..Default::default()
        };
        for i in 0..n_rows {
            for j in 0..n_cols {
                if (i * 7 + j * 3 + seed) % 5 < 2 {
                    m.idx.push(j as u32);
                    m.val.push(((i * 31 + j * 17 + seed) % 11) as f64 - 5.0);
                }
            }
            m.ptr.push(m.idx.len());
        }
        m
    }

    #[test]
    fn products_transpose_and_sums_match_dense() {
        let a = sample(700, 40, 1);
        let b = sample(40, 300, 2);
        let ab = a.mul(&b);
        assert!((ab.to_dense() - a.to_dense() * b.to_dense()).norm() < 1e-9);
        assert_eq!(a.transpose().to_dense(), a.to_dense().transpose());
        let c = sample(700, 40, 3);
        let s = a.add_scaled(-0.5, &c);
        assert!((s.to_dense() - (a.to_dense() - 0.5 * c.to_dense())).norm() < 1e-12);
        let x: Vec<f64> = (0..300).map(|i| (i as f64 * 0.1).sin()).collect();
        let mut y = vec![0.0; 700];
        ab.mul_vec(&x, &mut y);
        let yd = ab.to_dense() * nalgebra::DVector::from_vec(x);
        assert!(y.iter().zip(yd.iter()).all(|(p, q)| (p - q).abs() < 1e-9));
    }
}
