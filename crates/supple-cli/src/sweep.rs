//! `supple sweep SCENE --grid KEY=V1,V2 ... --out DIR [--scheduler ADDRESS]`: the Python
//! module's sweep (`python3 -m supple sweep`, crates/supple-py/python/supple/_sweep.py) run
//! from the command line, its arguments passed through unchanged.
//!
//! A front end and not a second implementation: the fan-out is Dask's, which only has a
//! Python client, and a variant's id, its folder, the resume rule and the table must be one
//! code's, or a study started here and continued from Python would rerun or mix variants.
//! The interpreter is `python3`, or `SUPPLE_PYTHON` when set.

use anyhow::{bail, Context, Result};
use clap::Args;
use std::process::Command;

#[derive(Args)]
#[command(disable_help_flag = true)]
pub struct SweepArgs {
    /// The arguments of `python3 -m supple sweep` (`supple sweep --help` lists them): SCENE,
    /// `--grid KEY=V1,V2` (repeatable), `--zip`, `--set KEY=VALUE`, `--out DIR`,
    /// `--scheduler ADDRESS`, `--workers N`, `--keep WHAT`.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    pub args: Vec<String>,
}

/// How to get the module, for the error when the interpreter cannot import it.
const INSTALL: &str = "install it with `pip install supple distributed pandas pyarrow`, or build it from this repository: `maturin build --release -m crates/supple-py/Cargo.toml -o target/wheels && pip install target/wheels/supple-*.whl distributed pandas pyarrow`; SUPPLE_PYTHON names the interpreter to use";

/// Runs the sweep; returns its exit status (0: every variant has a result; 1: some have
/// none, a rerun runs them; 64: refused before anything ran).
pub fn sweep(args: SweepArgs, threads: Option<usize>) -> Result<i32> {
    let python = std::env::var("SUPPLE_PYTHON").unwrap_or_else(|_| "python3".into());
    let check = Command::new(&python)
        .args([
            "-c",
            "import sys, supple; sys.stdout.write(supple.__version__)",
        ])
        .output();
    let check = match check {
        Ok(c) => c,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "supple sweep runs the `supple` Python module, and there is no `{python}` to run it: {INSTALL}"
        ),
        Err(e) => return Err(e).with_context(|| format!("cannot start `{python}`")),
    };
    if !check.status.success() {
        let why = String::from_utf8_lossy(&check.stderr);
        let last = why.lines().last().unwrap_or("").trim();
        bail!("supple sweep runs the `supple` Python module, which `{python}` cannot import ({last}): {INSTALL}");
    }
    let version = String::from_utf8_lossy(&check.stdout);
    if version != env!("CARGO_PKG_VERSION") {
        eprintln!(
            "note: the supple Python module is version {version}, this program {}: the runs are the module's engine",
            env!("CARGO_PKG_VERSION")
        );
    }
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "supple", "sweep"]);
    if let Some(n) = threads {
        cmd.args(["--threads", &n.to_string()]);
    }
    let status = cmd
        .args(&args.args)
        .status()
        .with_context(|| format!("cannot start `{python}`"))?;
    // Killed by a signal (Ctrl-C): the shell's 128 + SIGINT.
    Ok(status.code().unwrap_or(crate::EXIT_INTERRUPTED))
}
