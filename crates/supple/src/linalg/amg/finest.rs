//! The finest level's smoothers on a compact `f32` copy of the strictly lower blocks
//! ([`super::AmgSettings::single_precision_finest`]): both sweeps of the V-cycle read only
//! that half, as the sweeps of Eisenstat's trick do (`linalg::eisenstat`).
//!
//! **Forward sweep from zero** (the pre-smoother, residual from the sweep, `smooth`): row `i`
//! gathers `Σ_{j<i} A_ij x_j` from its lower blocks, solves `x_i = D_i⁻¹ (b_i − …)` and
//! scatters `res_j −= A_ijᵀ x_i` through the same blocks (`b − A x = −U x` after a forward
//! sweep from zero).
//!
//! **Backward sweep** (the post-smoother): `x_i ← D_i⁻¹ (b_i − Σ_{j<i} A_ij x_j −
//! Σ_{j>i} A_ij x_j)` from the last row up. The rows `j > i` were updated before row `i`, and
//! their contribution `Σ_{j>i} A_ij x_j = Σ_{j>i} A_jiᵀ x_j` is what row `j` scatters through
//! its own lower blocks once `x_j` is known; the rows `j < i` still hold their values from
//! before the sweep and are gathered. So the sweep reads the lower half once, where the
//! full rows of `A` are twice the bytes; it is the same sweep, summed in another order.
//!
//! The copy is made when the matrix changes (one read of the lower half of `A`); the
//! diagonal inverses stay `f64` (`BlockJacobi`'s). The smoother then works on `Ã`: `A`'s
//! diagonal blocks and its off-diagonal blocks rounded to `f32`, symmetric as `A` is, so the
//! V-cycle stays a symmetric preconditioner; CG's products use `A` itself.

use super::smooth::Block3;
use crate::linalg::{par, BlockCsr};
use nalgebra::{Matrix3, Vector3};

/// Row `i` owns `blocks[start[i]..start[i + 1]]` (its blocks `A_ij`, `j < i`, row-major
/// `f32`) and the same range of `cols`.
#[derive(Debug, Clone, Default)]
pub(super) struct FinestLower {
    row_ptr: Vec<u32>,
    diag: Vec<u32>,
    start: Vec<u32>,
    cols: Vec<u32>,
    blocks: Vec<[[f32; 3]; 3]>,
    /// The backward sweep's scattered sums `Σ_{j>i} A_ij x_j` (zero between sweeps).
    acc: Vec<Vector3<f64>>,
}

impl FinestLower {
    /// The offsets for `a`'s pattern (setup: allocates) and a first copy of its values.
    pub fn new(a: &BlockCsr) -> Self {
        let p = &*a.pattern;
        let mut s = Self {
            row_ptr: p.row_ptr.clone(),
            diag: p.diag.clone(),
            start: Vec::with_capacity(p.n_rows() + 1),
            cols: Vec::new(),
            blocks: Vec::new(),
            acc: vec![Vector3::zeros(); p.n_rows()],
        };
        s.start.push(0);
        for i in 0..p.n_rows() {
            let (b, d) = (p.row_ptr[i] as usize, p.diag[i] as usize);
            s.cols.extend_from_slice(&p.cols[b..d]);
            s.start.push(s.cols.len() as u32);
        }
        s.blocks = vec![[[0.0; 3]; 3]; s.cols.len()];
        s.load(a);
        s
    }

    /// Whether the offsets were made for `a`'s pattern.
    pub fn fits(&self, a: &BlockCsr) -> bool {
        self.row_ptr == a.pattern.row_ptr && self.diag == a.pattern.diag
    }

    /// Copies `a`'s strictly lower blocks as `f32` (no allocation).
    pub fn load(&mut self, a: &BlockCsr) {
        let p = &*a.pattern;
        let start = &self.start;
        // Rows in parallel: each writes its own range of `blocks`.
        let blocks = par::SharedMut(self.blocks.as_mut_ptr());
        let rows: &mut [Vector3<f64>] = &mut self.acc;
        par::for_each_mut(rows, |i, _| {
            let (b, d) = (p.row_ptr[i] as usize, p.diag[i] as usize);
            let o = start[i] as usize;
            for (k, v) in a.values[b..d].iter().enumerate() {
                let m: [[f32; 3]; 3] =
                    std::array::from_fn(|r| std::array::from_fn(|c| v[(r, c)] as f32));
                // SAFETY: row `i` owns `start[i]..start[i + 1]` (`d − b` blocks).
                unsafe { *blocks.ptr().add(o + k) = m };
            }
        });
    }

    #[inline(always)]
    fn row(&self, i: usize) -> (&[[[f32; 3]; 3]], &[u32]) {
        let (s, e) = (self.start[i] as usize, self.start[i + 1] as usize);
        (&self.blocks[s..e], &self.cols[s..e])
    }

    /// Forward block Gauss–Seidel from `x = 0` and `res = b − Ã x` (zero on fixed vertices).
    pub fn forward_from_zero(
        &self,
        fixed: &[bool],
        d_inv: &[Matrix3<f64>],
        b: &[Vector3<f64>],
        x: &mut [Vector3<f64>],
        res: &mut [Vector3<f64>],
    ) {
        for i in 0..fixed.len() {
            res[i] = Vector3::zeros();
            if fixed[i] {
                x[i] = Vector3::zeros();
                continue;
            }
            let (blocks, cols) = self.row(i);
            let mut acc = b[i];
            for (m, &j) in blocks.iter().zip(cols) {
                acc -= m.mul(&x[j as usize]);
            }
            let xi = d_inv[i] * acc;
            x[i] = xi;
            for (m, &j) in blocks.iter().zip(cols) {
                res[j as usize] -= m.tr_mul(&xi);
            }
        }
        for (ri, &f) in res.iter_mut().zip(fixed) {
            if f {
                *ri = Vector3::zeros();
            }
        }
    }

    /// Backward block Gauss–Seidel on `Ã x = b` (`x` zero on fixed vertices stays so).
    pub fn backward(
        &mut self,
        fixed: &[bool],
        d_inv: &[Matrix3<f64>],
        b: &[Vector3<f64>],
        x: &mut [Vector3<f64>],
    ) {
        let mut acc = std::mem::take(&mut self.acc);
        for i in (0..fixed.len()).rev() {
            let upper = acc[i];
            acc[i] = Vector3::zeros();
            if fixed[i] {
                continue;
            }
            let (blocks, cols) = self.row(i);
            let mut s = b[i] - upper;
            for (m, &j) in blocks.iter().zip(cols) {
                s -= m.mul(&x[j as usize]);
            }
            let xi = d_inv[i] * s;
            x[i] = xi;
            for (m, &j) in blocks.iter().zip(cols) {
                acc[j as usize] += m.tr_mul(&xi);
            }
        }
        self.acc = acc;
    }
}
