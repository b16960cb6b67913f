//! The block-rotated warped tangent ([`WarpedTangent::Rotated`](super::WarpedTangent)), as
//! Müller et al. 2002 §3 build it: the global rest stiffness `K` is assembled once, and each
//! step only rotates its stored 3×3 blocks, `K̃_ij = R_i K_ij R_jᵀ`. No element is visited.
//!
//! `K̃ = B K Bᵀ` with `B = diag(R_i)` orthogonal, so `K̃` is symmetric positive semi-definite
//! whenever `K` is. A parallel loop over block rows: each row writes only its own slots, so
//! the result does not depend on the thread count.

use crate::linalg::par::{self, SharedMut};
use crate::linalg::BlockCsr;
use nalgebra::Matrix3;
use rayon::prelude::*;
use std::sync::Arc;

/// Adds `scale · R_i K_ij R_jᵀ` into `k` for every stored block `K_ij` of `k0`. `k`'s
/// pattern must hold `k0`'s blocks (the body's pattern: the same `Arc`, or an equal one; any
/// other pattern is searched slot by slot).
pub(super) fn add_rotated_blocks(
    k0: &BlockCsr,
    rotations: &[Matrix3<f64>],
    scale: f64,
    k: &mut BlockCsr,
) {
    let p = &*k0.pattern;
    let n = p.n_rows();
    let same = Arc::ptr_eq(&k.pattern, &k0.pattern) || *k.pattern == *p;
    let kp = Arc::clone(&k.pattern);
    let out = SharedMut(k.values.as_mut_ptr());
    let row = |i: usize| {
        let ri = scale * rotations[i];
        for s in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
            let j = p.cols[s] as usize;
            let block = ri * k0.values[s] * rotations[j].transpose();
            let t = if same {
                s
            } else {
                kp.slot(i, j)
                    .expect("the matrix's pattern holds the body's blocks")
            };
            // SAFETY: slot `t` lies in row `i` of `k`'s pattern, and each row is visited by
            // exactly one iteration, so no two iterations write the same slot.
            unsafe { *out.ptr().add(t) += block };
        }
    };
    if n < par::PAR_MIN {
        (0..n).for_each(row);
    } else {
        (0..n).into_par_iter().with_min_len(256).for_each(row);
    }
}
