//! `supple mesh SURFACE --spacing H --out NAME`: fill a closed OBJ/STL surface with tetrahedra
//! by isosurface stuffing (Labelle & Shewchuk 2007; `supple::mesh::stuffing`) and write them as
//! TetGen `.node/.ele` or VTU, printing the mesh's quality. With `--improve` the mesh's
//! smallest dihedral angles are raised first (`supple::mesh::quality`, Debunne et al. 2000
//! §4.1) and the angle histogram is printed before and after; `supple mesh MESH --improve`
//! does the same to a tet mesh file (TetGen, Gmsh, VTU, legacy VTK, Medit).

use anyhow::{anyhow, bail, Result};
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Instant;
use supple::mesh::quality::{improve, DihedralStats, ImproveParams, ImproveReport, BINS, BIN_DEG};
use supple::mesh::stuffing::{
    lattice_vertices, stuff, StuffingError, StuffingParams, BYTES_PER_INSIDE_VERTEX,
    BYTES_PER_LATTICE_VERTEX,
};
use supple::mesh::TetMesh;
use supple_io::import::surface::load_surface;
use supple_io::import::{read_mesh, MeshFormat, Orient};
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
    /// A closed triangle surface to stuff (`.obj`, `.stl`), or a tet mesh to improve with
    /// `--improve` (`.node`/`.ele`, `.msh`, `.vtu`, `.vtk`, `.mesh`).
    #[arg(value_name = "INPUT")]
    pub surface: PathBuf,
    /// Lattice spacing (edge length of the lattice cubes), in the surface's units; a surface
    /// needs it, a tet mesh takes none.
    #[arg(long)]
    pub spacing: Option<f64>,
    /// Output name: `NAME.node` + `NAME.ele` (tetgen) or `NAME.vtu` (a `.vtu` suffix is kept).
    #[arg(long)]
    pub out: PathBuf,
    #[arg(long, value_enum, default_value_t = MeshFormatArg::Tetgen)]
    pub format: MeshFormatArg,
    /// Refuse lattices with more vertices than this (memory: about 16 bytes per lattice vertex
    /// plus the output; the default, about 0.8 GB, takes under a minute of one core).
    #[arg(long, default_value_t = 50_000_000)]
    pub max_lattice_vertices: usize,
    /// Raise the smallest dihedral angles before writing: interior vertices smoothed and
    /// interior faces and edges flipped (2-3, 3-2); boundary vertices and triangles, vertex
    /// indices and volume are kept. Prints the angle histogram before and after.
    #[arg(long)]
    pub improve: bool,
    /// Passes of `--improve` (smoothing, then flips); it stops early when a pass changes
    /// nothing.
    #[arg(long, default_value_t = 6, requires = "improve")]
    pub passes: usize,
}

/// Refuses a stuffing whose estimated memory is above what this process may use (the
/// smallest of the available memory, `ulimit -v` and the control group's limit): a lattice
/// within `--max-lattice-vertices` but not within `ulimit -v 2097152` once aborted in an
/// allocation after two minutes.
fn check_memory(
    args: &MeshArgs,
    spacing: f64,
    surface: &supple::mesh::stuffing::TriangleSurface,
) -> Result<()> {
    let lattice = lattice_vertices(surface, spacing);
    if lattice > args.max_lattice_vertices {
        return Ok(()); // refused by the stuffing itself, with the count
    }
    // The BCC lattice has two vertices per cube of side h: those inside the enclosed volume.
    let cubes = surface.volume() / spacing.powi(3);
    let need = BYTES_PER_LATTICE_VERTEX * lattice as f64 + BYTES_PER_INSIDE_VERTEX * 2.0 * cubes;
    if let Some(limit) = memory_limit() {
        if need > limit.bytes {
            bail!(
                "{}: stuffing at spacing {:?} needs about {:.2} GB ({lattice} lattice vertices, about {:.3e} tets), more than the {:.2} GB {}: use a larger spacing",
                args.surface.display(),
                spacing,
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
    if MeshFormat::from_path(&args.surface).is_some() {
        return improve_file(&args);
    }
    let Some(spacing) = args.spacing else {
        bail!(
            "{}: a surface is stuffed at a lattice spacing: add --spacing H (a tet mesh, .node/.ele/.msh/.vtu/.vtk/.mesh, is read for --improve)",
            args.surface.display()
        );
    };
    let start = Instant::now();
    let surface = load_surface(&args.surface)?;
    if surface.open_edges() > 0 {
        eprintln!(
            "note: {}: the surface is not closed ({} edge(s) not shared by exactly two triangles); inside is decided by ray parity and may be wrong near holes",
            args.surface.display(),
            surface.open_edges()
        );
    }
    check_memory(&args, spacing, &surface)?;
    let mut params = StuffingParams::new(spacing);
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
            spacing
        )
    })?;
    let seconds = start.elapsed().as_secs_f64();
    let mesh = &out.mesh;
    let improved = if args.improve {
        Some(improved(&args, mesh)?)
    } else {
        write(&args, mesh)?;
        None
    };
    let (vs, vm) = (surface.volume(), mesh.volume());
    println!(
        "{}: {} triangles, spacing {}: {} vertices, {} tets; dihedral angles {:.2}°–{:.2}°; volume {:.6e} against {:.6e} enclosed by the surface ({:+.3}%); {} lattice vertices, {} warped; {:.2} s",
        args.surface.display(),
        surface.n_triangles(),
        spacing,
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
    if let Some((report, seconds)) = improved {
        print_report(&report, seconds);
    }
    Ok(())
}

/// `supple mesh MESH --improve`: a tet mesh file read, improved and written.
fn improve_file(args: &MeshArgs) -> Result<()> {
    if args.spacing.is_some() {
        bail!(
            "{}: --spacing is for stuffing a surface; a tet mesh is not stuffed",
            args.surface.display()
        );
    }
    if !args.improve {
        bail!(
            "{}: a tet mesh is read to be improved: add --improve (a surface, .obj/.stl, is stuffed at --spacing)",
            args.surface.display()
        );
    }
    let read = read_mesh(&args.surface, None, Orient::Check)?;
    let mesh = &read.mesh;
    let file = args.surface.display();
    if read.skipped_cells > 0 {
        eprintln!(
            "note: {file}: {} cell(s) that are not tetrahedra skipped",
            read.skipped_cells
        );
    }
    if read.dropped_vertices > 0 {
        eprintln!(
            "note: {file}: {} vertex(es) used by no tet dropped (the written mesh numbers the others from 0)",
            read.dropped_vertices
        );
    }
    println!(
        "{}: {} vertices, {} tets, volume {:.6e}",
        args.surface.display(),
        mesh.n_vertices(),
        mesh.n_tets(),
        mesh.volume()
    );
    let (report, seconds) = improved(args, mesh)?;
    print_report(&report, seconds);
    Ok(())
}

/// Improves `mesh` and writes the result; the report and the seconds the improvement took.
fn improved(args: &MeshArgs, mesh: &TetMesh) -> Result<(ImproveReport, f64)> {
    let start = Instant::now();
    let params = ImproveParams {
        passes: args.passes,
        ..ImproveParams::default()
    };
    let (better, report) = improve(mesh, &params)
        .map_err(|e| anyhow!("{}: --improve: {e}", args.surface.display()))?;
    let seconds = start.elapsed().as_secs_f64();
    write(args, &better)?;
    Ok((report, seconds))
}

fn write(args: &MeshArgs, mesh: &TetMesh) -> Result<()> {
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
    Ok(())
}

/// The dihedral angles before and after `--improve`, as a table: range, tets under 10°,
/// 20° and 30°, and the histogram's non-empty 10° bins.
fn print_report(r: &ImproveReport, seconds: f64) {
    let (b, a) = (&r.before, &r.after);
    println!(
        "improved in {seconds:.2} s: {} passes, {} vertex moves, {} 2-3 and {} 3-2 flips; {} → {} tets",
        r.passes,
        r.moves,
        r.flips_23,
        r.flips_32,
        b.n_tets(),
        a.n_tets()
    );
    println!("dihedral angles        before      after");
    println!("  smallest        {:>10.2}° {:>9.2}°", b.min_deg, a.min_deg);
    println!("  largest         {:>10.2}° {:>9.2}°", b.max_deg, a.max_deg);
    for deg in [10.0, 20.0, 30.0] {
        println!(
            "  tets below {deg:>3}° {:>10} {:>10}",
            b.tets_below(deg),
            a.tets_below(deg)
        );
    }
    println!("  histogram (all six angles of each tet, 10° bins)");
    for k in 0..BINS {
        if b.histogram[k] + a.histogram[k] > 0 {
            let lo = DihedralStats::bin_start_deg(k);
            let bin = format!("{lo}–{}°", lo + BIN_DEG);
            println!("  {bin:<15} {:>10} {:>10}", b.histogram[k], a.histogram[k]);
        }
    }
}
