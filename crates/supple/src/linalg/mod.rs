//! Linear algebra: the 3×3-block sparse matrix with a fixed pattern, deterministic parallel
//! reductions, and the block-Jacobi preconditioned conjugate gradient solver.

mod block_csr;
mod cholesky;
pub mod ordering;
pub mod par;
mod pcg;
pub mod solver;
mod ssor;
pub mod symbolic;

pub use block_csr::{BlockCsr, BlockPattern};
pub use cholesky::{CholeskyError, CholeskyStats, FactorKind, SparseCholesky};
pub use ordering::{Graph, OrderingKind, Permutation};
pub use pcg::{Pcg, PcgSettings, PcgStats, Preconditioner};
pub use solver::{LinearSolver, LinearSolverKind, SolveStats, SolverError};
pub use symbolic::Symbolic;
