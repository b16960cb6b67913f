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
//!
//! **Two parts side by side** (issue 43, *two cores that pay*). Above
//! [`MIN_PART_ROWS`](crate::linalg::partition::MIN_PART_ROWS)` × 2` rows the sweeps run in the
//! order of one level of nested dissection (`linalg::partition`, as the Eisenstat sweeps
//! do): two parts with no block between them, then a separator. "Lower" then means *earlier
//! in that order*: row `i` keeps the blocks `A_ij` of the rows `j` swept before it. A part's
//! earlier rows all lie in the part, so the forward sweep runs the parts at once and then the
//! separator (which reads and scatters into both); the backward sweep runs the separator
//! first, then the parts at once. It is Gauss–Seidel in another row order, exactly (nothing
//! dropped), so the smoother stays convergent and the pre- and post-smoothers adjoint. The
//! order depends on the pattern only: the same bits on any number of threads. Vectors stay in
//! the natural order; the copy keeps the blocks in the sweeps' order and the rows' natural
//! indices as columns.

use super::smooth::Block3;
use crate::linalg::par::{self, SharedMut};
use crate::linalg::partition::{partition, parts_for};
use crate::linalg::BlockCsr;
use nalgebra::{Matrix3, Vector3};
use rayon::prelude::*;

/// Position `ii` of the sweeps' order is row `perm[ii]`; it owns
/// `blocks[start[ii]..start[ii + 1]]` (the blocks `A_ij` of the rows `j` swept before it,
/// row-major `f32`, copied from `a.values[slots[..]]`) and the same range of `cols` (the
/// rows `j`).
#[derive(Debug, Clone, Default)]
pub(super) struct FinestLower {
    row_ptr: Vec<u32>,
    diag: Vec<u32>,
    perm: Vec<u32>,
    /// Part `k` owns positions `bounds[k]..bounds[k + 1]`; the separator comes last.
    bounds: Vec<usize>,
    start: Vec<u32>,
    cols: Vec<u32>,
    slots: Vec<u32>,
    blocks: Vec<[[f32; 3]; 3]>,
    /// The backward sweep's scattered sums `Σ_{j after i} A_ij x_j` (zero between sweeps).
    acc: Vec<Vector3<f64>>,
}

impl FinestLower {
    /// The order and offsets for `a`'s pattern (setup: allocates) and a first copy of its
    /// values.
    pub fn new(a: &BlockCsr) -> Self {
        Self::with_parts(a, parts_for(a.pattern.n_rows()))
    }

    /// [`FinestLower::new`] with `k` parts.
    pub fn with_parts(a: &BlockCsr, k: usize) -> Self {
        let p = &*a.pattern;
        let n = p.n_rows();
        let work: Vec<usize> = (0..n)
            .map(|i| (p.row_ptr[i + 1] - p.row_ptr[i]) as usize)
            .collect();
        let (perm, bounds) = partition(p, &work, k);
        let mut inv = vec![0_u32; n];
        for (ii, &i) in perm.iter().enumerate() {
            inv[i as usize] = ii as u32;
        }
        let mut s = Self {
            row_ptr: p.row_ptr.clone(),
            diag: p.diag.clone(),
            start: Vec::with_capacity(n + 1),
            acc: vec![Vector3::zeros(); n],
            ..Default::default()
        };
        s.start.push(0);
        for (ii, &i) in perm.iter().enumerate() {
            let i = i as usize;
            for slot in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
                let j = p.cols[slot];
                if (inv[j as usize] as usize) < ii {
                    s.cols.push(j);
                    s.slots.push(slot as u32);
                }
            }
            s.start.push(s.cols.len() as u32);
        }
        s.perm = perm;
        s.bounds = bounds;
        s.blocks = vec![[[0.0; 3]; 3]; s.cols.len()];
        s.load(a);
        s
    }

    /// Whether the offsets were made for `a`'s pattern.
    pub fn fits(&self, a: &BlockCsr) -> bool {
        self.row_ptr == a.pattern.row_ptr && self.diag == a.pattern.diag
    }

    /// Copies `a`'s blocks as `f32` (no allocation).
    pub fn load(&mut self, a: &BlockCsr) {
        let (start, slots) = (&self.start, &self.slots);
        // Positions in parallel: each writes its own range of `blocks`.
        let blocks = SharedMut(self.blocks.as_mut_ptr());
        let rows: &mut [Vector3<f64>] = &mut self.acc;
        par::for_each_mut(rows, |ii, _| {
            let (o, e) = (start[ii] as usize, start[ii + 1] as usize);
            for (k, &slot) in slots.iter().enumerate().take(e).skip(o) {
                let v = &a.values[slot as usize];
                let m: [[f32; 3]; 3] =
                    std::array::from_fn(|r| std::array::from_fn(|c| v[(r, c)] as f32));
                // SAFETY: position `ii` owns `start[ii]..start[ii + 1]`.
                unsafe { *blocks.ptr().add(k) = m };
            }
        });
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

    /// Forward block Gauss–Seidel from `x = 0` and `res = b − Ã x` (zero on fixed vertices).
    pub fn forward_from_zero(
        &self,
        fixed: &[bool],
        d_inv: &[Matrix3<f64>],
        b: &[Vector3<f64>],
        x: &mut [Vector3<f64>],
        res: &mut [Vector3<f64>],
    ) {
        let n = fixed.len();
        assert!(x.len() >= n && res.len() >= n && b.len() >= n && d_inv.len() >= n);
        let (xp, rp) = (SharedMut(x.as_mut_ptr()), SharedMut(res.as_mut_ptr()));
        // SAFETY: a part's positions write `x` and `res` only at rows of the part (its
        // earlier rows lie in it), so parts running at once touch disjoint rows; the
        // separator runs alone after them. Every index is below `n` (the pattern's rows).
        let sweep = |range: std::ops::Range<usize>| unsafe {
            self.forward_rows(range, fixed, d_inv, b, xp.ptr(), rp.ptr())
        };
        self.for_parts(sweep);
        sweep(self.separator());
        for (ri, &f) in res.iter_mut().zip(fixed) {
            if f {
                *ri = Vector3::zeros();
            }
        }
    }

    /// The forward sweep over `range` of positions.
    ///
    /// # Safety
    /// `x` and `res` point to vectors of the pattern's rows, and no other thread touches the
    /// rows these positions write (see [`FinestLower::forward_from_zero`]).
    #[inline(always)]
    unsafe fn forward_rows(
        &self,
        range: std::ops::Range<usize>,
        fixed: &[bool],
        d_inv: &[Matrix3<f64>],
        b: &[Vector3<f64>],
        x: *mut Vector3<f64>,
        res: *mut Vector3<f64>,
    ) {
        for ii in range {
            let i = self.perm[ii] as usize;
            // Rows swept after `i` scatter into `res[i]` later; its own part is zero (`x_i`
            // solves row `i` against the rows before it).
            *res.add(i) = Vector3::zeros();
            if fixed[i] {
                *x.add(i) = Vector3::zeros();
                continue;
            }
            let (s, e) = (self.start[ii] as usize, self.start[ii + 1] as usize);
            let (blocks, cols) = (&self.blocks[s..e], &self.cols[s..e]);
            let mut acc = b[i];
            for (m, &j) in blocks.iter().zip(cols) {
                acc -= m.mul(&*x.add(j as usize));
            }
            let xi = d_inv[i] * acc;
            *x.add(i) = xi;
            for (m, &j) in blocks.iter().zip(cols) {
                *res.add(j as usize) -= m.tr_mul(&xi);
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
        let n = fixed.len();
        assert!(x.len() >= n && b.len() >= n && d_inv.len() >= n && self.acc.len() >= n);
        let mut acc = std::mem::take(&mut self.acc);
        let (xp, ap) = (SharedMut(x.as_mut_ptr()), SharedMut(acc.as_mut_ptr()));
        // SAFETY: as in `forward_from_zero`: a part writes `x` and `acc` at its own rows
        // only; the separator runs alone before the parts.
        let sweep = |range: std::ops::Range<usize>| unsafe {
            self.backward_rows(range, fixed, d_inv, b, xp.ptr(), ap.ptr())
        };
        sweep(self.separator());
        self.for_parts(sweep);
        self.acc = acc;
    }

    /// The backward sweep over `range` of positions, from the last.
    ///
    /// # Safety
    /// As [`FinestLower::forward_rows`], with `acc` for `res`.
    #[inline(always)]
    unsafe fn backward_rows(
        &self,
        range: std::ops::Range<usize>,
        fixed: &[bool],
        d_inv: &[Matrix3<f64>],
        b: &[Vector3<f64>],
        x: *mut Vector3<f64>,
        acc: *mut Vector3<f64>,
    ) {
        for ii in range.rev() {
            let i = self.perm[ii] as usize;
            let later = *acc.add(i);
            *acc.add(i) = Vector3::zeros();
            if fixed[i] {
                continue;
            }
            let (s, e) = (self.start[ii] as usize, self.start[ii + 1] as usize);
            let (blocks, cols) = (&self.blocks[s..e], &self.cols[s..e]);
            let mut sum = b[i] - later;
            for (m, &j) in blocks.iter().zip(cols) {
                sum -= m.mul(&*x.add(j as usize));
            }
            let xi = d_inv[i] * sum;
            *x.add(i) = xi;
            for (m, &j) in blocks.iter().zip(cols) {
                *acc.add(j as usize) += m.tr_mul(&xi);
            }
        }
    }
}
