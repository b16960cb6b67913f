//! `supple`: run scenes, benchmark them, re-render their pictures, mesh surfaces, list vibration
//! modes, view scenes and meshes in the browser, print the scene format's schema and sweep a scene's
//! keys (through the Python module). The paper experiments and the orderings study are
//! the separate `supple-lab` program (crates/supple-lab).

mod adaptive_pictures;
mod bench;
mod bench_adaptive;
mod bench_ipc;
mod interrupt;
mod mesh;
mod modes;
mod render;
mod run;
mod run_adaptive;
mod sweep;
mod view;
mod view_http;

use anyhow::Result;
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "supple",
    version,
    about = "Real-time simulation of deformable solids (tetrahedral FEM)"
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
    /// Simulate a scene and write frames (VTU/PVD), metrics.csv, summary.json and pictures.
    Run(run::RunArgs),
    /// Re-render the pictures and plots of a finished run (camera, size, colouring).
    Render(render::RenderArgs),
    /// Time steps of a scene and print JSON (median/min per step, per-phase breakdown).
    Bench(bench::BenchArgs),
    /// The lowest vibration modes of each body at rest (frequencies in Hz, shapes as VTU).
    Modes(modes::ModesArgs),
    /// Fill a closed OBJ/STL surface with tetrahedra (isosurface stuffing) and write TetGen
    /// or VTU, printing the dihedral angles, tet count and volume error; `--improve` raises
    /// the smallest dihedral angles of the stuffed mesh or of a tet mesh file.
    Mesh(mesh::MeshArgs),
    /// Look at a scene or a mesh in the browser and pull on it: serves the page on 127.0.0.1
    /// (the engine runs in the page) with the scene and its files preloaded, and opens a
    /// browser. A bare mesh file is dropped on a ground plane.
    View(view::ViewArgs),
    /// Print the scene format's JSON Schema (every key: type, default, allowed values, what
    /// it does), for editors that check TOML against a schema (taplo).
    Schema,
    /// Run a scene over a grid of its keys on a Dask cluster, one folder per variant and a
    /// table (parquet, CSV); a rerun skips the variants already done. Runs the Python
    /// module's sweep (`python3 -m supple sweep`; `supple sweep --help` for its options).
    Sweep(sweep::SweepArgs),
}

/// Exit status of a command line that cannot be understood (BSD's `EX_USAGE`).
pub const EXIT_USAGE: i32 = supple_run::cli::EXIT_USAGE;

/// Exit status of a run that diverged (or failed its verdict on unconverged solves).
pub const EXIT_DIVERGED: i32 = 2;
/// Exit status of a run that took every step but whose end state is invalid (a vertex inside
/// another body, a surface through itself, inverted tets, volume out of range, energy
/// created; `supple::world::verdict`); its files are all written.
pub const EXIT_INVALID: i32 = 3;
/// Exit status of a run stopped by Ctrl-C (128 + SIGINT, the shell's convention); its files
/// are complete up to the last step.
pub const EXIT_INTERRUPTED: i32 = 130;

fn main() {
    let cli: Cli = supple_run::cli::parse_or_exit();
    let pool = supple_run::cli::thread_pool_or_exit(cli.threads);
    // Run on a pool thread: parallel loops then start from inside the pool instead of
    // handing every loop to another thread and sleeping (which dominates small steps).
    let result: Result<i32> = pool.install(|| match cli.command {
        Command::Run(args) => run::run(args),
        Command::Render(args) => render::render(args),
        Command::Bench(args) => bench::bench(args),
        Command::Mesh(args) => mesh::mesh(args).map(|()| 0),
        Command::Modes(args) => modes::modes(args),
        Command::View(args) => view::view(args),
        Command::Sweep(args) => sweep::sweep(args, cli.threads),
        Command::Schema => {
            // `writeln!`, not `println!`: a closed pipe is then an error (handled below), not
            // a panic.
            use std::io::Write as _;
            writeln!(
                std::io::stdout(),
                "{}",
                supple_io::scene::scene_schema_json()
            )?;
            Ok(0)
        }
    });
    match result {
        Ok(code) => std::process::exit(code),
        // A closed pipe (`supple schema | head`) is the reader's choice, not an error.
        Err(e)
            if e.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
            }) =>
        {
            std::process::exit(0)
        }
        Err(e) => {
            eprintln!("error: {}", error_line(&e));
            std::process::exit(1);
        }
    }
}

/// The error and its causes on one line, each said once: a cause whose text its parent
/// already quotes (an OS error inside a file error) is not repeated.
fn error_line(e: &anyhow::Error) -> String {
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
    line
}
