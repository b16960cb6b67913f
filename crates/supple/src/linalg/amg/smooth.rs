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
//! **Backward sweep** (the post-smoother, the adjoint of the forward one): every row reads
//! its whole row, `x_i ← D_i⁻¹ (b_i − Σ_{j≠i} A_ij x_j)`, in decreasing row order.
//!
//! The sweeps stream the block matrix in its storage order (the natural vertex order), where
//! the multicolour sweeps of `linalg::multicolor` jump between colours; they are sequential,
//! so the same on any number of threads.

use super::csr::Csr;
use crate::linalg::BlockCsr;
use nalgebra::{Matrix3, Vector3};

/// Forward block Gauss–Seidel from `x = 0` on `A x = b` over the free vertices, and the
/// residual `res = b − A x` (zero on fixed vertices). `d_inv` holds `D_i⁻¹` (zero on fixed
/// vertices).
pub fn block_forward_from_zero(
    a: &BlockCsr,
    fixed: &[bool],
    d_inv: &[Matrix3<f64>],
    b: &[Vector3<f64>],
    x: &mut [Vector3<f64>],
    res: &mut [Vector3<f64>],
) {
    let p = &*a.pattern;
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
        for (m, &j) in a.values[s..d].iter().zip(&p.cols[s..d]) {
            acc -= m * x[j as usize];
        }
        let xi = d_inv[i] * acc;
        x[i] = xi;
        for (m, &j) in a.values[s..d].iter().zip(&p.cols[s..d]) {
            res[j as usize] -= m.tr_mul(&xi);
        }
    }
    for (ri, &f) in res.iter_mut().zip(fixed) {
        if f {
            *ri = Vector3::zeros();
        }
    }
}

/// Backward block Gauss–Seidel on `A x = b` over the free vertices (`x` zero on fixed ones).
pub fn block_backward(
    a: &BlockCsr,
    fixed: &[bool],
    d_inv: &[Matrix3<f64>],
    b: &[Vector3<f64>],
    x: &mut [Vector3<f64>],
) {
    let p = &*a.pattern;
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
        for (m, &j) in a.values[s..d].iter().zip(&p.cols[s..d]) {
            acc -= m * x[j as usize];
        }
        for (m, &j) in a.values[d + 1..e].iter().zip(&p.cols[d + 1..e]) {
            acc -= m * x[j as usize];
        }
        x[i] = d_inv[i] * acc;
    }
}

/// Forward point Gauss–Seidel from `x = 0` on `a x = b` and the residual `res = b − a x`, as
/// [`block_forward_from_zero`]; `diag[i]` is the position of row `i`'s diagonal entry (its
/// lower entries come before it), `d_inv[i] = 0` marks a zero dof, which keeps `x_i = 0` and
/// `res_i = b_i` (its row and column are zero).
pub fn point_forward_from_zero(
    a: &Csr,
    diag: &[usize],
    d_inv: &[f64],
    b: &[f64],
    x: &mut [f64],
    res: &mut [f64],
) {
    for i in 0..a.n_rows {
        if d_inv[i] == 0.0 {
            x[i] = 0.0;
            res[i] = b[i];
            continue;
        }
        res[i] = 0.0;
        let s = a.ptr[i];
        let (idx, val) = (&a.idx[s..diag[i]], &a.val[s..diag[i]]);
        let mut acc = b[i];
        for (&j, &v) in idx.iter().zip(val) {
            acc -= v * x[j as usize];
        }
        let xi = acc * d_inv[i];
        x[i] = xi;
        for (&j, &v) in idx.iter().zip(val) {
            res[j as usize] -= v * xi;
        }
    }
}

/// Backward point Gauss–Seidel on `a x = b`, skipping zero dofs.
pub fn point_backward(a: &Csr, diag: &[usize], d_inv: &[f64], b: &[f64], x: &mut [f64]) {
    for i in (0..a.n_rows).rev() {
        if d_inv[i] == 0.0 {
            continue;
        }
        let (s, d, e) = (a.ptr[i], diag[i], a.ptr[i + 1]);
        let mut acc = b[i];
        for (&j, &v) in a.idx[s..d].iter().zip(&a.val[s..d]) {
            acc -= v * x[j as usize];
        }
        for (&j, &v) in a.idx[d + 1..e].iter().zip(&a.val[d + 1..e]) {
            acc -= v * x[j as usize];
        }
        x[i] = acc * d_inv[i];
    }
}

/// Position of each row's diagonal entry in `a` (rows sorted; a row without one gets the
/// position where it would be, and must be a zero dof).
pub fn diagonal_positions(a: &Csr) -> Vec<usize> {
    (0..a.n_rows)
        .map(|i| a.ptr[i] + a.idx[a.row(i)].partition_point(|&j| (j as usize) < i))
        .collect()
}
