//! Natural-order Gauss–Seidel sweeps of the V-cycle, with the pre-smoother's residual
//! computed during the sweep.
//!
//! **Forward sweep from zero, residual for free.** The pre-smoother starts from `x = 0`, so
//! one forward sweep gives `x = (D + L)⁻¹ b` and the residual is
//! `b − A x = b − (D + L) x − U x = −U x`: row `i` of it needs the `x_j` of the rows *after*
//! `i`, which is exactly what the lower blocks of those rows hold, transposed
//! (`A_ij = A_jiᵀ`). So when row `j` has computed `x_j` from its lower blocks, it scatters
//! `res_i −= A_jiᵀ x_j` for every `i < j` through the same blocks, still in cache: the
//! sweep and the residual read the lower half of the matrix once, instead of a sweep over
//! the whole matrix and a product with it. This is the identity behind Eisenstat's trick
//! (S. C. Eisenstat, SIAM J. Sci. Stat. Comput. 2(1), 1981; `linalg::eisenstat`), applied to
//! the pre-smoothing step of a V-cycle. In exact arithmetic the result is the residual of
//! the sweep's iterate, so the cycle is the same symmetric operator as with an explicit
//! residual (Vassilevski 2008, Prop. 5.1); only rounding differs.
//!
//! The coarse levels are swept the same way by `6 × 6` blocks (one block per pair of
//! aggregates), on their lower halves only (`coarse`).
//!
//! **Backward sweep** (the post-smoother, the adjoint of the forward one): every row reads
//! its whole row, `x_i ← D_i⁻¹ (b_i − Σ_{j≠i} A_ij x_j)`, in decreasing row order.
//!
//! The sweeps stream the block matrix in its storage order (the natural vertex order), where
//! the multicolour sweeps of `linalg::multicolor` jump between colours; they are sequential,
//! so the same on any number of threads. They serve the finest level without
//! [`AmgSettings::single_precision_finest`](super::AmgSettings::single_precision_finest);
//! with it (the default) `finest` sweeps its `f32` copy, in two parts side by side on large
//! matrices.

use super::block::{Bsr, Real};
use crate::linalg::BlockPattern;
use nalgebra::{Matrix3, Vector3};

/// A stored 3×3 block of the finest matrix: `f64` (the matrix itself) or an `f32` copy
/// (`finest`).
pub trait Block3: Sync {
    /// `M x`.
    fn mul(&self, x: &Vector3<f64>) -> Vector3<f64>;
    /// `Mᵀ x`.
    fn tr_mul(&self, x: &Vector3<f64>) -> Vector3<f64>;
}

impl Block3 for Matrix3<f64> {
    #[inline(always)]
    fn mul(&self, x: &Vector3<f64>) -> Vector3<f64> {
        self * x
    }
    #[inline(always)]
    fn tr_mul(&self, x: &Vector3<f64>) -> Vector3<f64> {
        Matrix3::tr_mul(self, x)
    }
}

/// Row-major, widened to `f64` before the product.
impl Block3 for [[f32; 3]; 3] {
    #[inline(always)]
    fn mul(&self, x: &Vector3<f64>) -> Vector3<f64> {
        widen(self) * x
    }
    #[inline(always)]
    fn tr_mul(&self, x: &Vector3<f64>) -> Vector3<f64> {
        widen(self).tr_mul(x)
    }
}

#[inline(always)]
fn widen(m: &[[f32; 3]; 3]) -> Matrix3<f64> {
    Matrix3::from_fn(|r, c| f64::from(m[r][c]))
}

/// Forward block Gauss–Seidel from `x = 0` on `A x = b` over the free vertices, and the
/// residual `res = b − A x` (zero on fixed vertices). `values` are `A`'s blocks on `p`;
/// `d_inv` holds `D_i⁻¹` (zero on fixed vertices).
pub fn block_forward_from_zero<M: Block3>(
    p: &BlockPattern,
    values: &[M],
    fixed: &[bool],
    d_inv: &[Matrix3<f64>],
    b: &[Vector3<f64>],
    x: &mut [Vector3<f64>],
    res: &mut [Vector3<f64>],
) {
    for i in 0..p.n_rows() {
        // Rows after `i` scatter into `res[i]` later; its own part is zero (`x_i` solves
        // row `i` against the rows before it).
        res[i] = Vector3::zeros();
        if fixed[i] {
            x[i] = Vector3::zeros();
            continue;
        }
        let (s, d) = (p.row_ptr[i] as usize, p.diag[i] as usize);
        let mut acc = b[i];
        for (m, &j) in values[s..d].iter().zip(&p.cols[s..d]) {
            acc -= m.mul(&x[j as usize]);
        }
        let xi = d_inv[i] * acc;
        x[i] = xi;
        for (m, &j) in values[s..d].iter().zip(&p.cols[s..d]) {
            res[j as usize] -= m.tr_mul(&xi);
        }
    }
    for (ri, &f) in res.iter_mut().zip(fixed) {
        if f {
            *ri = Vector3::zeros();
        }
    }
}

/// Backward block Gauss–Seidel on `A x = b` over the free vertices (`x` zero on fixed ones),
/// `values` as in [`block_forward_from_zero`].
pub fn block_backward<M: Block3>(
    p: &BlockPattern,
    values: &[M],
    fixed: &[bool],
    d_inv: &[Matrix3<f64>],
    b: &[Vector3<f64>],
    x: &mut [Vector3<f64>],
) {
    for i in (0..p.n_rows()).rev() {
        if fixed[i] {
            continue;
        }
        let (s, d, e) = (
            p.row_ptr[i] as usize,
            p.diag[i] as usize,
            p.row_ptr[i + 1] as usize,
        );
        let mut acc = b[i];
        for (m, &j) in values[s..d].iter().zip(&p.cols[s..d]) {
            acc -= m.mul(&x[j as usize]);
        }
        for (m, &j) in values[d + 1..e].iter().zip(&p.cols[d + 1..e]) {
            acc -= m.mul(&x[j as usize]);
        }
        x[i] = d_inv[i] * acc;
    }
}

/// Position of each block row's diagonal block (stored: [`Bsr::from_csr`] with `diagonal`).
pub fn diagonal_positions<const B: usize, T: Real>(a: &Bsr<B, B, T>) -> Vec<usize> {
    (0..a.n_brows)
        .map(|i| {
            let row = &a.idx[a.ptr[i]..a.ptr[i + 1]];
            let k = row.partition_point(|&j| (j as usize) < i);
            assert_eq!(row.get(k), Some(&(i as u32)), "diagonal block stored");
            a.ptr[i] + k
        })
        .collect()
}
