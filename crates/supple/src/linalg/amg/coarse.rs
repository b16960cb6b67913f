//! A coarse level's operator for the sweeps, lower half only: the strictly lower `6 × 6`
//! blocks of each block row in one compact array, as the finest level's `f32` copy keeps
//! them (`finest`), so that both sweeps of the V-cycle read half of the operator.
//!
//! **Forward sweep from zero** (the pre-smoother, residual from the sweep, `smooth`): row `I`
//! gathers `Σ_{J<I} A_IJ x_J` through its lower blocks, solves its diagonal block and
//! scatters `res_J −= A_IJᵀ x_I` through the same blocks (`b − A x = −U x` after a forward
//! sweep from zero).
//!
//! **Backward sweep** (the post-smoother): `x_I ← D_I⁻¹ (b_I − Σ_{J<I} A_IJ x_J −
//! Σ_{J>I} A_IJ x_J)` from the last row up. The rows `J > I` were updated before row `I`;
//! their part `Σ_{J>I} A_JIᵀ x_J` is scattered by row `J` through its own lower blocks once
//! `x_J` is known (the arrangement of the sweeps of Eisenstat's trick, `linalg::eisenstat`).
//! A backward sweep over whole block rows (the upper blocks are the other half of the
//! bytes) is what it replaces; this reads the lower half once.
//!
//! Using `A_JIᵀ` for the upper blocks makes the swept operator exactly symmetric even in
//! `f32` (the stored `A_IJ` and `A_JIᵀ` of the Galerkin product agree only to round-off), so
//! the forward and backward sweeps are exact adjoints and the V-cycle stays symmetric.
//! The first coarse level holds more nonzeros than the finest matrix (operator complexity
//! 2.2 on the 160k bar), and its two sweeps were the largest share of the V-cycle's time
//! (EXPERIMENTS.md, *Block storage and `f32` for the V-cycle*).

use super::block::{Bsr, Real};

/// Six coarse dofs per aggregate (`setup::MODES`).
const B: usize = 6;

/// Row `I` owns `blocks[start[I]..start[I + 1]]` (its blocks `A_IJ`, `J < I`, row-major, as
/// stored by the hierarchy: `f64` or `f32`) and the same range of `cols`.
#[derive(Debug, Clone)]
pub(super) struct CoarseLower<T> {
    start: Vec<usize>,
    cols: Vec<u32>,
    blocks: Vec<[[T; B]; B]>,
    /// The diagonal blocks `A_II` (for products with the level, not for the sweeps).
    diag: Vec<[[T; B]; B]>,
    /// The backward sweep's scattered sums `Σ_{J>I} A_IJ x_J` (zero between sweeps).
    acc: Vec<[f64; B]>,
}

impl<T: Real> CoarseLower<T> {
    /// The lower blocks of `a` (every diagonal block stored, at `diag[I]`).
    pub fn new(a: &Bsr<B, B, T>, diag: &[usize]) -> Self {
        let n = a.n_brows;
        let mut s = Self {
            start: Vec::with_capacity(n + 1),
            cols: Vec::new(),
            blocks: Vec::new(),
            diag: (0..n).map(|i| a.val[diag[i]]).collect(),
            acc: vec![[0.0; B]; n],
        };
        s.start.push(0);
        for (i, &d) in diag.iter().enumerate().take(n) {
            s.cols.extend_from_slice(&a.idx[a.ptr[i]..d]);
            s.blocks.extend_from_slice(&a.val[a.ptr[i]..d]);
            s.start.push(s.cols.len());
        }
        s
    }

    pub fn n_brows(&self) -> usize {
        self.diag.len()
    }

    /// Bytes of the blocks, indices, offsets and scatter buffer.
    pub fn bytes(&self) -> usize {
        let block = B * B * std::mem::size_of::<T>();
        block * (self.blocks.len() + self.diag.len())
            + 4 * self.cols.len()
            + 8 * self.start.len()
            + 8 * B * self.acc.len()
    }

    #[inline(always)]
    fn row(&self, i: usize) -> (&[[[T; B]; B]], &[u32]) {
        let (s, e) = (self.start[i], self.start[i + 1]);
        (&self.blocks[s..e], &self.cols[s..e])
    }

    /// Forward block Gauss–Seidel from `x = 0` on `a x = b` and `res = b − a x` (the
    /// residual from the sweep, as `smooth::block_forward_from_zero`). `d_inv[I]` is
    /// the inverse of `A_II` in `f64`; a zero dof (zero row and column of `d_inv`) keeps
    /// `x = 0` and `res = b`.
    pub fn forward_from_zero(
        &self,
        d_inv: &[[[f64; B]; B]],
        b: &[f64],
        x: &mut [f64],
        res: &mut [f64],
    ) {
        let (b, _) = b.as_chunks::<B>();
        let (x, _) = x.as_chunks_mut::<B>();
        let (res, _) = res.as_chunks_mut::<B>();
        for i in 0..self.n_brows() {
            let (blocks, cols) = self.row(i);
            let lower = gather(blocks, cols, x);
            let mut acc = b[i];
            for r in 0..B {
                acc[r] -= lower[r];
            }
            let di = &d_inv[i];
            let xi = block_solve(di, &acc);
            x[i] = xi;
            // Rows after `i` scatter into `res[i]` later; its own part is zero except on
            // zero dofs, whose row of `a` is zero.
            for r in 0..B {
                res[i][r] = if di[r][r] == 0.0 { acc[r] } else { 0.0 };
            }
            scatter(blocks, cols, &xi, res, -1.0);
        }
    }

    /// Backward block Gauss–Seidel on `a x = b` from the given `x` (the adjoint of
    /// [`CoarseLower::forward_from_zero`]).
    pub fn backward(&mut self, d_inv: &[[[f64; B]; B]], b: &[f64], x: &mut [f64]) {
        let (b, _) = b.as_chunks::<B>();
        let (x, _) = x.as_chunks_mut::<B>();
        let mut acc = std::mem::take(&mut self.acc);
        for i in (0..self.n_brows()).rev() {
            let upper = acc[i];
            acc[i] = [0.0; B];
            let (blocks, cols) = self.row(i);
            let lower = gather(blocks, cols, x);
            let mut s = b[i];
            for r in 0..B {
                s[r] -= upper[r] + lower[r];
            }
            let xi = block_solve(&d_inv[i], &s);
            x[i] = xi;
            scatter(blocks, cols, &xi, &mut acc, 1.0);
        }
        self.acc = acc;
    }

    /// `y = a x` (both halves from the lower blocks; for tests).
    #[cfg(test)]
    pub fn mul_vec(&self, x: &[f64], y: &mut [f64]) {
        let (x, _) = x.as_chunks::<B>();
        let (y, _) = y.as_chunks_mut::<B>();
        for (i, yi) in y.iter_mut().enumerate() {
            let (blocks, cols) = self.row(i);
            let mut s = gather(blocks, cols, x);
            let d = gather(std::slice::from_ref(&self.diag[i]), &[i as u32], x);
            for r in 0..B {
                s[r] += d[r];
            }
            *yi = s;
        }
        for (i, xi) in x.iter().enumerate().take(self.n_brows()) {
            let (blocks, cols) = self.row(i);
            scatter(blocks, cols, xi, y, 1.0);
        }
    }

    /// The operator with every entry replaced by its magnitude (for round-off bounds in tests).
    #[cfg(test)]
    pub fn abs(&self) -> Self {
        let abs = |m: &[[T; B]; B]| m.map(|row| row.map(|v| T::from_f64(v.get().abs())));
        Self {
            blocks: self.blocks.iter().map(abs).collect(),
            diag: self.diag.iter().map(abs).collect(),
            ..self.clone()
        }
    }
}

/// `Σ_k A_k x_{cols[k]}`, each block's product summed on its own before it is added: the
/// running sum then carries one dependent addition per block and row instead of six.
#[inline(always)]
fn gather<T: Real>(blocks: &[[[T; B]; B]], cols: &[u32], x: &[[f64; B]]) -> [f64; B] {
    let mut acc = [0.0; B];
    for (m, &j) in blocks.iter().zip(cols) {
        let xj = &x[j as usize];
        for r in 0..B {
            let mut t = 0.0;
            for c in 0..B {
                t += m[r][c].get() * xj[c];
            }
            acc[r] += t;
        }
    }
    acc
}

/// `y_{cols[k]} += sign · A_kᵀ xi` for every block `k` of a row.
#[inline(always)]
fn scatter<T: Real>(
    blocks: &[[[T; B]; B]],
    cols: &[u32],
    xi: &[f64; B],
    y: &mut [[f64; B]],
    sign: f64,
) {
    let sx = xi.map(|v| sign * v);
    for (m, &j) in blocks.iter().zip(cols) {
        let yj = &mut y[j as usize];
        for r in 0..B {
            for c in 0..B {
                yj[c] += m[r][c].get() * sx[r];
            }
        }
    }
}

/// `D⁻¹ acc` with a diagonal block's inverse `d_inv` (row-major), summed in column order.
#[inline]
fn block_solve(d_inv: &[[f64; B]; B], acc: &[f64; B]) -> [f64; B] {
    let mut x = [0.0; B];
    for r in 0..B {
        for c in 0..B {
            x[r] += d_inv[r][c] * acc[c];
        }
    }
    x
}
