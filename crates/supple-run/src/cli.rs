//! What the command-line programs (`supple`, `supple-lab`) share: the worker-thread pool of
//! their global `--threads` option and the `--preconditioner` values. Behind the `cli`
//! feature (it brings in `clap`); the library itself has no command line.

use clap::ValueEnum;
use supple::linalg::Preconditioner;

/// Exit status of a command line that cannot be understood (unknown option, missing
/// argument): `EX_USAGE` of BSD's sysexits, distinct from a failed run (clap's own 2 is the
/// status of a diverged run here).
pub const EXIT_USAGE: i32 = 64;

/// The parsed command line; on an error, clap's message and exit status [`EXIT_USAGE`]
/// (`--help` and `--version` print to stdout and exit 0).
pub fn parse_or_exit<T: clap::Parser>() -> T {
    T::try_parse().unwrap_or_else(|e| {
        let _ = e.print();
        std::process::exit(if e.use_stderr() { EXIT_USAGE } else { 0 });
    })
}

/// [`thread_pool`], or the error printed and exit status 1.
pub fn thread_pool_or_exit(threads: Option<usize>) -> rayon::ThreadPool {
    match thread_pool(threads) {
        Ok((pool, note)) => {
            if let Some(note) = note {
                eprintln!("note: {note}");
            }
            pool
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    }
}

/// `--threads` above this many times the cores is capped (more threads than cores only adds
/// switching; thousands make a run many times slower).
pub const MAX_THREADS_PER_CORE: usize = 4;

/// The worker threads for `--threads N` (all cores when `None`), with a note to print when N
/// was capped at [`MAX_THREADS_PER_CORE`] × the cores.
pub fn thread_pool(threads: Option<usize>) -> Result<(rayon::ThreadPool, Option<String>), String> {
    let mut pool = rayon::ThreadPoolBuilder::new();
    let mut note = None;
    if let Some(n) = threads {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let max = MAX_THREADS_PER_CORE * cores;
        if n > max {
            note = Some(format!(
                "--threads {n} capped at {max} ({MAX_THREADS_PER_CORE} × the {cores} cores)"
            ));
        }
        pool = pool.num_threads(n.min(max));
    }
    let pool = pool
        .build()
        .map_err(|e| format!("cannot start the worker threads: {e}"))?;
    Ok((pool, note))
}

/// The PCG preconditioner, as `--preconditioner` names it.
#[derive(Clone, Copy, ValueEnum)]
pub enum PreconditionerArg {
    BlockJacobi,
    BlockSsor,
    /// Block SSOR run with Eisenstat's trick (no product with A per iteration).
    EisenstatSsor,
    MulticolorSsor,
    Amg,
    /// The cheapest of Eisenstat SSOR, block Jacobi and the multigrid on the body's own
    /// system, from a trial solve with each (the default).
    Auto,
}

impl From<PreconditionerArg> for Preconditioner {
    fn from(p: PreconditionerArg) -> Self {
        match p {
            PreconditionerArg::BlockJacobi => Preconditioner::BlockJacobi,
            PreconditionerArg::BlockSsor => Preconditioner::BlockSsor,
            PreconditionerArg::EisenstatSsor => Preconditioner::EisenstatSsor,
            PreconditionerArg::MulticolorSsor => Preconditioner::MulticolorSsor,
            PreconditionerArg::Amg => Preconditioner::Amg,
            PreconditionerArg::Auto => Preconditioner::Auto,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn too_many_threads_are_capped_with_a_note() {
        let cores = std::thread::available_parallelism().map_or(1, usize::from);
        let (pool, note) = thread_pool(Some(1)).unwrap();
        assert_eq!((pool.current_num_threads(), note), (1, None));
        let (pool, note) = thread_pool(Some(1000 * cores)).unwrap();
        assert_eq!(pool.current_num_threads(), MAX_THREADS_PER_CORE * cores);
        assert!(note.unwrap().contains("capped"));
    }

    #[test]
    fn every_preconditioner_name_maps_to_the_engines() {
        for (name, p) in [
            ("eisenstat-ssor", Preconditioner::EisenstatSsor),
            ("amg", Preconditioner::Amg),
            ("auto", Preconditioner::Auto),
        ] {
            let arg = PreconditionerArg::from_str(name, false).unwrap();
            assert_eq!(Preconditioner::from(arg), p);
        }
    }
}
