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
mod pcg;
pub mod solver;
mod ssor;
pub mod symbolic;
#[cfg(test)]
pub(crate) mod test_support;
mod upper;

pub use amg::{Amg, AmgInfo, AmgSettings, Merge as AmgMerge};
pub use block_csr::{BlockCsr, BlockPattern};
pub use cg::{conjugate_gradient, CgError, CgInfo, CgWorkspace, Precond};
pub use cholesky::{CholeskyError, CholeskyStats, FactorKind, SparseCholesky};
pub use eisenstat::EisenstatSsor;
pub use multicolor::MulticolorSsor;
pub use ordering::{Graph, OrderingKind, Permutation};
pub use pcg::{BlockJacobi, Pcg, PcgSettings, PcgStats, Preconditioner, AUTO_AMG_MIN_FREE};
pub use solver::{LinearSolver, LinearSolverKind, SolveStats, SolverError};
pub use ssor::Ssor;
pub use symbolic::Symbolic;
