//! The block-rotated warped tangent ([`WarpedTangent::Rotated`](super::WarpedTangent)), as
//! Müller et al. 2002 §3 build it: the global rest stiffness `K` is assembled once, and each
//! step only rotates its stored 3×3 blocks, `K̃_ij = R_i K_ij R_jᵀ`. No element is visited.
//!
//! `K̃ = B K Bᵀ` with `B = diag(R_i)` orthogonal, so `K̃` is symmetric positive semi-definite
//! whenever `K` is. `K` is symmetric (`K_ji = K_ijᵀ`), so only the blocks with `j ≥ i` are
//! rotated and `K̃_ji` is written as `K̃_ijᵀ` (half the work; `K̃` exactly symmetric). A
//! parallel loop over block rows: row `i` writes its own slots `j ≥ i` and their mirrors
//! `(j, i)`, so every slot is written by exactly one row and the result does not depend on the
//! thread count.

use crate::linalg::par::{self, SharedMut};
use crate::linalg::{BlockCsr, BlockPattern};
use nalgebra::Matrix3;
use rayon::prelude::*;
use std::sync::Arc;

/// For every slot `s` of block `(i, j)` in `p`, the slot of `(j, i)` (the pattern is
/// structurally symmetric: it comes from the vertex graph).
pub(super) fn transpose_slots(p: &BlockPattern) -> Vec<u32> {
    let mut t = vec![0; p.n_blocks()];
    for i in 0..p.n_rows() {
        let row = p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize;
        for (ts, &j) in t[row.clone()].iter_mut().zip(&p.cols[row]) {
            *ts = p
                .slot(j as usize, i)
                .expect("the block pattern is symmetric") as u32;
        }
    }
    t
}

/// Adds `scale · R_i K_ij R_jᵀ` into `k` for every stored block `K_ij` of `k0`; `transpose`
/// is [`transpose_slots`] of `k0`'s pattern. `k`'s pattern must hold `k0`'s blocks (the
/// body's pattern: the same `Arc`, or an equal one; any other pattern is searched slot by
/// slot).
pub(super) fn add_rotated_blocks(
    k0: &BlockCsr,
    transpose: &[u32],
    rotations: &[Matrix3<f64>],
    scale: f64,
    k: &mut BlockCsr,
) {
    let p = &*k0.pattern;
    let n = p.n_rows();
    if !(Arc::ptr_eq(&k.pattern, &k0.pattern) || *k.pattern == *p) {
        return add_rotated_blocks_searched(k0, rotations, scale, k);
    }
    let out = SharedMut(k.values.as_mut_ptr());
    let rows = |range: std::ops::Range<usize>| {
        // SAFETY: `out` points at `k`'s blocks, on `k0`'s pattern (checked above), and the
        // rows of `range` write only their own slots (see `rotated_rows_loop`).
        unsafe { rotated_rows(k0, transpose, rotations, scale, &out, range) }
    };
    /// Rows per parallel task.
    const ROWS: usize = 256;
    if n < par::PAR_MIN {
        rows(0..n);
    } else {
        (0..n.div_ceil(ROWS))
            .into_par_iter()
            .for_each(|c| rows(c * ROWS..((c + 1) * ROWS).min(n)));
    }
}

crate::isa::avx2_or_baseline! {
    /// Rows `range` of [`add_rotated_blocks`]: compiled for the baseline and for AVX2,
    /// chosen at run time ([`crate::isa`]; the same bits).
    ///
    /// # Safety
    /// `out` points at the blocks of a matrix on `k0`'s pattern, and no other rows' call
    /// writes meanwhile to the slots of these rows (each slot is written by exactly one row).
    unsafe fn rotated_rows(
        k0: &BlockCsr,
        transpose: &[u32],
        rotations: &[Matrix3<f64>],
        scale: f64,
        out: &SharedMut<Matrix3<f64>>,
        range: std::ops::Range<usize>,
    ) {
        let p = &*k0.pattern;
        for i in range {
            let ri = scale * rotations[i];
            let d = p.diag[i] as usize;
            let block = ri * k0.values[d] * rotations[i].transpose();
            // SAFETY: slot `s ≥ diag[i]` lies in row `i` at or right of the diagonal, and its
            // mirror `transpose[s]` in row `j > i` left of the diagonal: each slot of the pattern
            // is written by exactly one row, so no two iterations write the same slot.
            unsafe { *out.ptr().add(d) += block };
            let upper = d + 1..p.row_ptr[i + 1] as usize;
            let mirrors = p.cols[upper.clone()].iter().zip(&transpose[upper.clone()]);
            for (s, (&j, &t)) in upper.zip(mirrors) {
                let block = ri * k0.values[s] * rotations[j as usize].transpose();
                unsafe {
                    *out.ptr().add(s) += block;
                    *out.ptr().add(t as usize) += block.transpose();
                }
            }
        }
    }
}

/// [`add_rotated_blocks`] into a matrix on another pattern holding `k0`'s blocks (the same
/// blocks, mirrored the same way).
fn add_rotated_blocks_searched(
    k0: &BlockCsr,
    rotations: &[Matrix3<f64>],
    scale: f64,
    k: &mut BlockCsr,
) {
    let p = &*k0.pattern;
    let kp = Arc::clone(&k.pattern);
    let slot = |i: usize, j: usize| {
        kp.slot(i, j)
            .expect("the matrix's pattern holds the body's blocks")
    };
    for i in 0..p.n_rows() {
        let ri = scale * rotations[i];
        for s in p.diag[i] as usize..p.row_ptr[i + 1] as usize {
            let j = p.cols[s] as usize;
            let block = ri * k0.values[s] * rotations[j].transpose();
            k.values[slot(i, j)] += block;
            if j != i {
                k.values[slot(j, i)] += block.transpose();
            }
        }
    }
}
