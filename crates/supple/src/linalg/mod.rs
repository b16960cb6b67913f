//! Linear algebra: the 3×3-block sparse matrix with a fixed pattern, deterministic parallel
//! reductions, and the block-Jacobi preconditioned conjugate gradient solver.

mod block_csr;
pub mod par;
mod pcg;
mod ssor;

pub use block_csr::{BlockCsr, BlockPattern};
pub use pcg::{Pcg, PcgSettings, PcgStats, Preconditioner};
