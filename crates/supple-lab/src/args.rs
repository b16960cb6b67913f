//! Command-line values shared by the experiments.

use clap::ValueEnum;
use supple::linalg::Preconditioner;

/// The PCG preconditioner, as `supple bench --preconditioner` names it.
#[derive(Clone, Copy, ValueEnum)]
pub enum BenchPreconditioner {
    BlockJacobi,
    BlockSsor,
    /// Block SSOR run with Eisenstat's trick (no product with A per iteration).
    EisenstatSsor,
    MulticolorSsor,
    Amg,
    /// Eisenstat SSOR below 12,000 free vertices, the multigrid from there.
    Auto,
}

impl From<BenchPreconditioner> for Preconditioner {
    fn from(p: BenchPreconditioner) -> Self {
        match p {
            BenchPreconditioner::BlockJacobi => Preconditioner::BlockJacobi,
            BenchPreconditioner::BlockSsor => Preconditioner::BlockSsor,
            BenchPreconditioner::EisenstatSsor => Preconditioner::EisenstatSsor,
            BenchPreconditioner::MulticolorSsor => Preconditioner::MulticolorSsor,
            BenchPreconditioner::Amg => Preconditioner::Amg,
            BenchPreconditioner::Auto => Preconditioner::Auto,
        }
    }
}
