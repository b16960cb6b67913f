//! Linear algebra: the 3×3-block sparse matrix with a fixed pattern, deterministic parallel
//! reductions, the one preconditioned conjugate gradient loop with its preconditioners
//! (block Jacobi, block SSOR, multicolour SSOR, and block SSOR with Eisenstat's trick in a loop
//! of its own, smoothed-aggregation multigrid), and the
//! sparse Cholesky solver.

pub mod amg;
mod block_csr;
pub mod cg;
mod cholesky;
mod eisenstat;
pub mod multicolor;
pub mod ordering;
pub mod par;
mod partition;
mod pcg;
pub mod small_eigen;
pub mod solver;
mod ssor;
pub mod symbolic;
#[cfg(test)]
pub(crate) mod test_support;
mod upper;

pub use amg::{Amg, AmgInfo, AmgSettings, Merge as AmgMerge};
pub use block_csr::{BlockCsr, BlockPattern};
pub use cg::{conjugate_gradient, CgError, CgInfo, CgWorkspace, Precond};
pub use cholesky::{CholeskyError, CholeskyStats, FactorKind, ScalarCholesky, SparseCholesky};
pub use eisenstat::EisenstatSsor;
pub use multicolor::MulticolorSsor;
pub use ordering::{Graph, OrderingKind, Permutation};
pub use pcg::{
    AutoChoice, BlockJacobi, Candidate, Cost, Pcg, PcgSettings, PcgStats, Preconditioner,
};
pub use solver::{LinearSolver, LinearSolverKind, SolveStats, SolverError};
pub use ssor::Ssor;
pub use symbolic::Symbolic;

// Vectors of `Vector3<f64>` viewed as flat `f64` slices (nalgebra's `Vector3<f64>` is
// `repr(C)` over `[f64; 3]`).
use nalgebra::Vector3;

const _: () = assert!(std::mem::size_of::<Vector3<f64>>() == 24);

/// `v` as `3 · v.len()` contiguous `f64`s.
pub(crate) fn flat(v: &[Vector3<f64>]) -> &[f64] {
    // SAFETY: `Vector3<f64>` is 3 contiguous f64 (asserted above), alignment of f64.
    unsafe { std::slice::from_raw_parts(v.as_ptr().cast::<f64>(), 3 * v.len()) }
}

/// `v` as `3 · v.len()` contiguous `f64`s, mutable.
pub(crate) fn flat_mut(v: &mut [Vector3<f64>]) -> &mut [f64] {
    // SAFETY: as in `flat`; the borrow is unique.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr().cast::<f64>(), 3 * v.len()) }
}
