//! `supple-lab`: the paper experiments that are commands rather than scenes, and the
//! fill-reducing orderings study; research tooling kept apart from the user's `supple`
//! program (as rapier keeps its benchmarks in their own crate). Each writes CSV, Markdown,
//! JSON and PNG files; EXPERIMENTS.md gives the commands and today's numbers.
//!
//! It depends on the libraries (`supple`, `supple-io`, `supple-run`, `supple-render`) and
//! never on the `supple` program.

mod adaptive_poke;
mod debunne_cube;
mod hauth_forces;
mod hauth_hierarchy;
mod hauth_liver;
mod order;
mod stress;
mod tube_drop;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "supple-lab",
    version,
    about = "Supple's paper experiments and the orderings study (research tooling)"
)]
struct Cli {
    /// Worker threads (default: all cores). Results do not depend on it.
    #[arg(long, global = true)]
    threads: Option<usize>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Hauth & Straßer 2004 Example 1: force errors of Cauchy, polar, warped and hybrid
    /// against Green strain on a rotated, sheared, rotated cube.
    HauthForces(hauth_forces::HauthArgs),
    /// Hauth & Straßer 2004 Example 3: the hierarchical corotational bar (coarse StVK,
    /// fine corotational; readings (a) and (b)) against full StVK on the fine mesh.
    HauthHierarchy(hauth_hierarchy::HauthHierarchyArgs),
    /// Hauth & Straßer 2004 Example 4: a liver-like body (300 → 2400 tets), hierarchical
    /// with BDF(3): simulated / wall time and max / median step time.
    HauthLiver(hauth_liver::HauthLiverArgs),
    /// Müller et al. 2002 §4.2: largest stable time step of the dropped tube per Young's
    /// modulus, warped and corotational against St.Venant–Kirchhoff.
    TubeDrop(tube_drop::TubeDropArgs),
    /// Robustness: models × impacts and crushing × time steps; writes table.md and runs.csv
    /// (divergence, retries, inversion, energy gain, wall time per run).
    Stress(stress::StressArgs),
    /// Debunne et al. 2000 §2.6: the clamped cube's sag and first frequency per resolution,
    /// `paper` and `fe` operators in both λ/μ readings, against standard FE.
    DebunneCube(debunne_cube::DebunneCubeArgs),
    /// Debunne et al. 2000 §4–5: a sphere pressed into the cube on a 3-level hierarchy,
    /// adaptive against finest-only (node updates, displacement, splits/merges, wall time).
    AdaptivePoke(adaptive_poke::AdaptivePokeArgs),
    /// Compare fill-reducing orderings on a grid or mesh (Zhuang & Canny Tables 1–2).
    Order(order::OrderArgs),
}

fn main() {
    let cli: Cli = supple_run::cli::parse_or_exit();
    let pool = supple_run::cli::thread_pool_or_exit(cli.threads);
    // On a pool thread, as `supple` runs: parallel loops start from inside the pool.
    let result: Result<()> = pool.install(|| match cli.command {
        Command::HauthForces(args) => hauth_forces::hauth_forces(args).map(|_| ()),
        Command::HauthHierarchy(args) => hauth_hierarchy::hauth_hierarchy(args),
        Command::HauthLiver(args) => hauth_liver::hauth_liver(args),
        Command::TubeDrop(args) => tube_drop::tube_drop(args),
        Command::Stress(args) => stress::stress(args),
        Command::DebunneCube(args) => debunne_cube::debunne_cube(args),
        Command::AdaptivePoke(args) => adaptive_poke::adaptive_poke(args),
        Command::Order(args) => order::order(args),
    });
    match result {
        Ok(()) => {}
        // A closed pipe (`supple-lab order ... | head`) is the reader's choice, not an error.
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) => {}
        Err(e) => {
            // The error and its causes on one line, each said once.
            let mut line = String::new();
            for cause in e.chain() {
                let text = cause.to_string();
                if line.contains(&text) {
                    continue;
                }
                if !line.is_empty() {
                    line.push_str(": ");
                }
                line.push_str(&text);
            }
            eprintln!("error: {line}");
            std::process::exit(1);
        }
    }
}
