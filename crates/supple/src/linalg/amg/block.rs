//! Block compressed-sparse-row storage of the hierarchy for the V-cycle: the prolongators
//! (`3 × 6` blocks from the finest level, one block per vertex and aggregate; `6 × 6` below)
//! and their transposes, and the coarse operators (`6 × 6` blocks, one per pair of
//! aggregates: six coarse dofs per aggregate from the rigid-body modes, Vaněk, Mandel &
//! Brezina 1996). The setup builds scalar [`Csr`] matrices (its sparse products); the build
//! converts them once. One column index per block instead of one per scalar (4 bytes per
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

use super::csr::Csr;
use crate::linalg::par;

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
    /// The block form of `a` (`a.n_rows` a multiple of `R`, `a.n_cols` of `C`): a block is
    /// stored when any of its scalars is, missing scalars as zeros; with `diagonal`, every
    /// diagonal block is stored (square matrices: the smoothers find it by position).
    pub fn from_csr(a: &Csr, diagonal: bool) -> Self {
        assert!(
            a.n_rows.is_multiple_of(R) && a.n_cols.is_multiple_of(C),
            "block shape"
        );
        let (n_brows, n_bcols) = (a.n_rows / R, a.n_cols / C);
        let mut slot = vec![usize::MAX; n_bcols];
        let mut touched: Vec<u32> = Vec::new();
        let mut out = Self {
            n_brows,
            n_bcols,
            ptr: Vec::with_capacity(n_brows + 1),
            idx: Vec::new(),
            val: Vec::new(),
        };
        out.ptr.push(0);
        for bi in 0..n_brows {
            touched.clear();
            if diagonal {
                touched.push(bi as u32);
            }
            for row in R * bi..R * (bi + 1) {
                touched.extend(a.idx[a.row(row)].iter().map(|&j| j / C as u32));
            }
            touched.sort_unstable();
            touched.dedup();
            let base = out.idx.len();
            for (k, &bj) in touched.iter().enumerate() {
                slot[bj as usize] = base + k;
                out.idx.push(bj);
                out.val.push([[T::default(); C]; R]);
            }
            for r in 0..R {
                for k in a.row(R * bi + r) {
                    let j = a.idx[k] as usize;
                    out.val[slot[j / C]][r][j % C] = T::from_f64(a.val[k]);
                }
            }
            out.ptr.push(out.idx.len());
        }
        out
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_products_match_the_scalar_ones() {
        // A 12 × 18 scalar matrix with scattered entries, as 3 × 6 and 6 × 6 blocks.
        let mut a = Csr {
            n_rows: 12,
            n_cols: 18,
            ptr: vec![0],
            ..Default::default()
        };
        for i in 0..12 {
            for j in 0..18 {
                if (i * 5 + j * 7) % 4 == 0 {
                    a.idx.push(j as u32);
                    a.val.push(((i * 13 + j * 3) % 9) as f64 - 4.0 + 0.1);
                }
            }
            a.ptr.push(a.idx.len());
        }
        let x: Vec<f64> = (0..18).map(|i| (i as f64 * 0.3).cos()).collect();
        let mut want = vec![0.0; 12];
        a.mul_vec(&x, &mut want);
        let b36 = Bsr::<3, 6, f64>::from_csr(&a, false);
        let b66 = Bsr::<6, 6, f64>::from_csr(&a, false);
        let b36s = Bsr::<3, 6, f32>::from_csr(&a, false);
        for (got, tol) in [
            (
                {
                    let mut y = vec![0.0; 12];
                    b36.mul_vec(&x, &mut y);
                    y
                },
                1e-12,
            ),
            (
                {
                    let mut y = vec![1.0; 12];
                    b66.mul_vec_add(&x, &mut y);
                    y.iter_mut().for_each(|v| *v -= 1.0);
                    y
                },
                1e-12,
            ),
            (
                {
                    let mut y = vec![0.0; 12];
                    b36s.mul_vec(&x, &mut y);
                    y
                },
                1e-5,
            ),
        ] {
            assert!(
                got.iter().zip(&want).all(|(p, q)| (p - q).abs() <= tol),
                "{got:?}"
            );
        }
        assert_eq!(b66.n_brows, 2);
        assert!(b36.n_scalars() >= a.nnz());
    }
}
