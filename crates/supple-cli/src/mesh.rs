//! `supple mesh SURFACE --spacing H --out NAME`: fill a closed OBJ/STL surface with tetrahedra
//! by isosurface stuffing (Labelle & Shewchuk 2007; `supple::mesh::stuffing`) and write them as
//! TetGen `.node/.ele` or VTU, printing the mesh's quality.

use anyhow::{anyhow, bail, Result};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Instant;
use supple::mesh::stuffing::{
    lattice_vertices, stuff, StuffingError, StuffingParams, BYTES_PER_INSIDE_VERTEX,
    BYTES_PER_LATTICE_VERTEX,
};
use supple_io::import::surface::load_surface;
use supple_io::tetgen::write_tetgen;
use supple_io::vtu::{write_vtu, VtuFrame};
use supple_run::budget::limits::memory_limit;

#[derive(Clone, Copy, ValueEnum)]
pub enum MeshFormatArg {
    Tetgen,
    Vtu,
}

#[derive(Args)]
pub struct MeshArgs {
    /// A closed triangle surface: `.obj` or `.stl`.
    pub surface: PathBuf,
    /// Lattice spacing (edge length of the lattice cubes), in the surface's units.
    #[arg(long)]
    pub spacing: f64,
    /// Output name: `NAME.node` + `NAME.ele` (tetgen) or `NAME.vtu` (a `.vtu` suffix is kept).
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long, value_enum, default_value_t = MeshFormatArg::Tetgen)]
    pub format: MeshFormatArg,
    /// Refuse lattices with more vertices than this (memory: about 16 bytes per lattice vertex
    /// plus the output; the default, about 0.8 GB, takes under a minute of one core).
    #[arg(long, default_value_t = 50_000_000)]
    pub max_lattice_vertices: usize,
}

/// Refuses a stuffing whose estimated memory is above what this process may use (the
/// smallest of the available memory, `ulimit -v` and the control group's limit): a lattice
/// within `--max-lattice-vertices` but not within `ulimit -v 2097152` once aborted in an
/// allocation after two minutes.
fn check_memory(args: &MeshArgs, surface: &supple::mesh::stuffing::TriangleSurface) -> Result<()> {
    let lattice = lattice_vertices(surface, args.spacing);
    if lattice > args.max_lattice_vertices {
        return Ok(()); // refused by the stuffing itself, with the count
    }
    // The BCC lattice has two vertices per cube of side h: those inside the enclosed volume.
    let cubes = surface.volume() / args.spacing.powi(3);
    let need = BYTES_PER_LATTICE_VERTEX * lattice as f64 + BYTES_PER_INSIDE_VERTEX * 2.0 * cubes;
    if let Some(limit) = memory_limit() {
        if need > limit.bytes {
            bail!(
                "{}: stuffing at spacing {:?} needs about {:.2} GB ({lattice} lattice vertices, about {:.3e} tets), more than the {:.2} GB {}: use a larger spacing",
                args.surface.display(),
                args.spacing,
                need / 1e9,
                6.0 * cubes,
                limit.bytes / 1e9,
                limit.from
            );
        }
    }
    Ok(())
}

pub fn mesh(args: MeshArgs) -> Result<()> {
    let start = Instant::now();
    let surface = load_surface(&args.surface)?;
    if surface.open_edges() > 0 {
        eprintln!(
            "note: {}: the surface is not closed ({} edge(s) not shared by exactly two triangles); inside is decided by ray parity and may be wrong near holes",
            args.surface.display(),
            surface.open_edges()
        );
    }
    check_memory(&args, &surface)?;
    let mut params = StuffingParams::new(args.spacing);
    params.max_lattice_vertices = args.max_lattice_vertices;
    // Judged again once the signs tell how much of the lattice is inside (a flat or open
    // surface encloses no volume but fills a slab).
    let limit = memory_limit();
    if let Some(limit) = &limit {
        params.max_memory = limit.bytes;
    }
    let out = stuff(&surface, &params).map_err(|e| {
        // The memory refusal says whose limit it met.
        let from = match (&e, &limit) {
            (StuffingError::TooMuchMemory { .. }, Some(l)) => format!(" ({})", l.from),
            _ => String::new(),
        };
        // Shortest round-trip form of the spacing: `1e299`, not 300 digits.
        anyhow!(
            "{}: stuffing at spacing {:?}: {e}{from}",
            args.surface.display(),
            args.spacing
        )
    })?;
    let seconds = start.elapsed().as_secs_f64();
    let mesh = &out.mesh;
    match args.format {
        MeshFormatArg::Tetgen => write_tetgen(&args.out, mesh)?,
        MeshFormatArg::Vtu => {
            let path = if args.out.extension().is_some_and(|e| e == "vtu") {
                args.out.clone()
            } else {
                args.out.with_extension("vtu")
            };
            write_vtu(&path, &VtuFrame::new(&mesh.positions, &mesh.tets))?
        }
    }
    let (vs, vm) = (surface.volume(), mesh.volume());
    println!(
        "{}: {} triangles, spacing {}: {} vertices, {} tets; dihedral angles {:.2}°–{:.2}°; volume {:.6e} against {:.6e} enclosed by the surface ({:+.3}%); {} lattice vertices, {} warped; {:.2} s",
        args.surface.display(),
        surface.n_triangles(),
        args.spacing,
        mesh.n_vertices(),
        mesh.n_tets(),
        out.stats.min_dihedral_deg,
        out.stats.max_dihedral_deg,
        vm,
        vs,
        100.0 * (vm - vs) / vs,
        out.stats.lattice_vertices,
        out.stats.warped_vertices,
        seconds
    );
    Ok(())
}
