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
//!
//! **Two parts side by side**, as on the finest level (`finest`): a coarse level whose
//! lower half holds at least [`MIN_PART_ENTRIES`] `× 2` values is swept in the order of one
//! level of nested dissection of its block graph (`linalg::partition`), "lower" meaning
//! *earlier in that order*; the parts run at once, the separator alone (after them forward,
//! before them backward).

use super::block::{Bsr, Real};
use crate::linalg::par::SharedMut;
use crate::linalg::partition::{partition, RowGraph, MAX_PARTS};
use rayon::prelude::*;

/// Six coarse dofs per aggregate (`setup::MODES`).
const B: usize = 6;

/// Fewest stored values of the lower half a part is given: what
/// [`MIN_PART_ROWS`](crate::linalg::partition::MIN_PART_ROWS) rows of the finest level hold
/// (about 7 lower `3 × 3` blocks per row on tet meshes), so that a part costs what a
/// finest-level part at the threshold costs. On the 160k bench bar the first coarse level
/// (2,491 block rows, 2.3 M lower values) is split; on the 20k bar's (356 rows) it is not.
pub const MIN_PART_ENTRIES: usize = 2048 * 7 * 9;

/// Position `ii` of the sweeps' order is block row `perm[ii]`; it owns
/// `blocks[start[ii]..start[ii + 1]]` (the blocks `A_IJ` of the rows `J` swept before it,
/// row-major, as stored by the hierarchy: `f64` or `f32`) and the same range of `cols`.
#[derive(Debug, Clone)]
pub(super) struct CoarseLower<T> {
    perm: Vec<u32>,
    /// Part `k` owns positions `bounds[k]..bounds[k + 1]`; the separator comes last.
    bounds: Vec<usize>,
    start: Vec<usize>,
    cols: Vec<u32>,
    blocks: Vec<[[T; B]; B]>,
    /// The diagonal blocks `A_II` (for products with the level, not for the sweeps).
    diag: Vec<[[T; B]; B]>,
    /// The backward sweep's scattered sums `Σ_{J after I} A_IJ x_J` (zero between sweeps).
    acc: Vec<[f64; B]>,
}

impl<T: Real> CoarseLower<T> {
    /// The lower blocks of `a` (every diagonal block stored, at `diag[I]`), in the order of
    /// [`MIN_PART_ENTRIES`]'s rule.
    pub fn new(a: &Bsr<B, B, T>, diag: &[usize]) -> Self {
        let lower: usize = (0..a.n_brows).map(|i| diag[i] - a.ptr[i]).sum();
        let k = (lower * B * B / MIN_PART_ENTRIES).clamp(1, MAX_PARTS);
        Self::with_parts(a, diag, k)
    }

    /// [`CoarseLower::new`] with `k` parts.
    pub fn with_parts(a: &Bsr<B, B, T>, diag: &[usize], k: usize) -> Self {
        let n = a.n_brows;
        let graph = RowGraph {
            ptr: &a.ptr,
            idx: &a.idx,
        };
        let work: Vec<usize> = (0..n).map(|i| a.ptr[i + 1] - a.ptr[i]).collect();
        let (perm, bounds) = partition(&graph, &work, k);
        let mut inv = vec![0_u32; n];
        for (ii, &i) in perm.iter().enumerate() {
            inv[i as usize] = ii as u32;
        }
        let mut s = Self {
            perm: Vec::new(),
            bounds,
            start: Vec::with_capacity(n + 1),
            cols: Vec::new(),
            blocks: Vec::new(),
            diag: (0..n).map(|i| a.val[diag[i]]).collect(),
            acc: vec![[0.0; B]; n],
        };
        s.start.push(0);
        for (ii, &i) in perm.iter().enumerate() {
            let i = i as usize;
            for slot in a.ptr[i]..a.ptr[i + 1] {
                let j = a.idx[slot];
                if (inv[j as usize] as usize) < ii {
                    s.cols.push(j);
                    s.blocks.push(a.val[slot]);
                }
            }
            s.start.push(s.cols.len());
        }
        s.perm = perm;
        s
    }

    pub fn n_brows(&self) -> usize {
        self.diag.len()
    }

    /// Bytes of the blocks, indices, offsets and scatter buffer.
    pub fn bytes(&self) -> usize {
        let block = B * B * std::mem::size_of::<T>();
        block * (self.blocks.len() + self.diag.len())
            + 4 * (self.cols.len() + self.perm.len())
            + 8 * self.start.len()
            + 8 * B * self.acc.len()
    }

    #[inline(always)]
    fn row(&self, ii: usize) -> (&[[[T; B]; B]], &[u32]) {
        let (s, e) = (self.start[ii], self.start[ii + 1]);
        (&self.blocks[s..e], &self.cols[s..e])
    }

    /// The sweeps' order and the groups' bounds (tests).
    #[cfg(test)]
    pub fn order(&self) -> (&[u32], &[usize]) {
        (&self.perm, &self.bounds)
    }

    /// The number of parts (without the separator).
    fn n_parts(&self) -> usize {
        self.bounds.len() - 2
    }

    /// Runs `sweep` on every part's positions, side by side when there are several.
    fn for_parts(&self, sweep: impl Fn(std::ops::Range<usize>) + Sync) {
        let k = self.n_parts();
        if k == 1 {
            sweep(self.bounds[0]..self.bounds[1]);
        } else {
            (0..k)
                .into_par_iter()
                .for_each(|g| sweep(self.bounds[g]..self.bounds[g + 1]));
        }
    }

    /// The separator's positions.
    fn separator(&self) -> std::ops::Range<usize> {
        let k = self.n_parts();
        self.bounds[k]..self.bounds[k + 1]
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
        let n = self.n_brows();
        let (b, _) = b.as_chunks::<B>();
        let (x, _) = x.as_chunks_mut::<B>();
        let (res, _) = res.as_chunks_mut::<B>();
        assert!(b.len() >= n && x.len() >= n && res.len() >= n && d_inv.len() >= n);
        let (xp, rp) = (SharedMut(x.as_mut_ptr()), SharedMut(res.as_mut_ptr()));
        // SAFETY: a part's positions write `x` and `res` only at its own rows (its earlier
        // rows lie in it); the separator runs alone after the parts. Indices are below `n`.
        let sweep = |range: std::ops::Range<usize>| unsafe {
            self.forward_rows(range, d_inv, b, xp.ptr(), rp.ptr())
        };
        self.for_parts(sweep);
        sweep(self.separator());
    }

    /// # Safety
    /// See [`CoarseLower::forward_from_zero`].
    #[inline(always)]
    unsafe fn forward_rows(
        &self,
        range: std::ops::Range<usize>,
        d_inv: &[[[f64; B]; B]],
        b: &[[f64; B]],
        x: *mut [f64; B],
        res: *mut [f64; B],
    ) {
        for ii in range {
            let i = self.perm[ii] as usize;
            let (blocks, cols) = self.row(ii);
            let lower = gather(blocks, cols, x);
            let mut acc = b[i];
            for r in 0..B {
                acc[r] -= lower[r];
            }
            let di = &d_inv[i];
            let xi = block_solve(di, &acc);
            *x.add(i) = xi;
            // Rows swept after `i` scatter into `res[i]` later; its own part is zero except
            // on zero dofs, whose row of `a` is zero.
            let ri = &mut *res.add(i);
            for r in 0..B {
                ri[r] = if di[r][r] == 0.0 { acc[r] } else { 0.0 };
            }
            scatter(blocks, cols, &xi, res, -1.0);
        }
    }

    /// Backward block Gauss–Seidel on `a x = b` from the given `x` (the adjoint of
    /// [`CoarseLower::forward_from_zero`]).
    pub fn backward(&mut self, d_inv: &[[[f64; B]; B]], b: &[f64], x: &mut [f64]) {
        let n = self.n_brows();
        let (b, _) = b.as_chunks::<B>();
        let (x, _) = x.as_chunks_mut::<B>();
        assert!(b.len() >= n && x.len() >= n && d_inv.len() >= n);
        let mut acc = std::mem::take(&mut self.acc);
        let (xp, ap) = (SharedMut(x.as_mut_ptr()), SharedMut(acc.as_mut_ptr()));
        // SAFETY: as in `forward_from_zero`, the separator alone before the parts.
        let sweep = |range: std::ops::Range<usize>| unsafe {
            self.backward_rows(range, d_inv, b, xp.ptr(), ap.ptr())
        };
        sweep(self.separator());
        self.for_parts(sweep);
        self.acc = acc;
    }

    /// # Safety
    /// See [`CoarseLower::backward`].
    #[inline(always)]
    unsafe fn backward_rows(
        &self,
        range: std::ops::Range<usize>,
        d_inv: &[[[f64; B]; B]],
        b: &[[f64; B]],
        x: *mut [f64; B],
        acc: *mut [f64; B],
    ) {
        for ii in range.rev() {
            let i = self.perm[ii] as usize;
            let later = *acc.add(i);
            *acc.add(i) = [0.0; B];
            let (blocks, cols) = self.row(ii);
            let lower = gather(blocks, cols, x);
            let mut s = b[i];
            for r in 0..B {
                s[r] -= later[r] + lower[r];
            }
            let xi = block_solve(&d_inv[i], &s);
            *x.add(i) = xi;
            scatter(blocks, cols, &xi, acc, 1.0);
        }
    }

    /// `y = a x` (both halves from the lower blocks; for tests).
    #[cfg(test)]
    pub fn mul_vec(&self, x: &[f64], y: &mut [f64]) {
        let (x, _) = x.as_chunks::<B>();
        let (y, _) = y.as_chunks_mut::<B>();
        // SAFETY: sequential; every index is a row of the level.
        unsafe {
            let (xp, yp) = (x.as_ptr(), y.as_mut_ptr());
            for ii in 0..self.n_brows() {
                let i = self.perm[ii] as usize;
                let (blocks, cols) = self.row(ii);
                let mut s = gather(blocks, cols, xp);
                let d = gather(std::slice::from_ref(&self.diag[i]), &[i as u32], xp);
                for r in 0..B {
                    s[r] += d[r];
                }
                *yp.add(i) = s;
            }
            for ii in 0..self.n_brows() {
                let i = self.perm[ii] as usize;
                let (blocks, cols) = self.row(ii);
                scatter(blocks, cols, &x[i], yp, 1.0);
            }
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
///
/// # Safety
/// `x` holds every row `cols` names.
#[inline(always)]
unsafe fn gather<T: Real>(blocks: &[[[T; B]; B]], cols: &[u32], x: *const [f64; B]) -> [f64; B] {
    let mut acc = [0.0; B];
    for (m, &j) in blocks.iter().zip(cols) {
        let xj = &*x.add(j as usize);
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
///
/// # Safety
/// `y` holds every row `cols` names, and no other thread touches them.
#[inline(always)]
unsafe fn scatter<T: Real>(
    blocks: &[[[T; B]; B]],
    cols: &[u32],
    xi: &[f64; B],
    y: *mut [f64; B],
    sign: f64,
) {
    let sx = xi.map(|v| sign * v);
    for (m, &j) in blocks.iter().zip(cols) {
        let yj = &mut *y.add(j as usize);
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
