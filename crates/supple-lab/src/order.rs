//! `supple order`: the fill-reducing ordering study of Zhuang & Canny §4–5 (Tables 1–2).
//! For a hexahedral vertex grid, a tet box or a tet mesh file, every ordering is timed and its
//! Cholesky factor measured: nnz(L), fill, flops (Supple's own symbolic analysis), and the time
//! of a numeric factorization and of one solve (faer, with the ordering as a user permutation).
//!
//! With the `metis` feature (`cargo build --features metis`), METIS 5's nested dissection
//! (`METIS_NodeND`, Karypis & Kumar, SIAM J. Sci. Comput. 20(1), 1998) of the same vertex
//! graph is a further row, `metis`: the reference the issue measures Supple's orderings against.

use anyhow::{bail, Context, Result};
use clap::Args;
use serde::Serialize;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;
use supple::linalg::ordering::{compute, Graph, OrderingInput, OrderingKind, Permutation};
use supple::linalg::{symbolic, BlockCsr, BlockPattern, SparseCholesky};
use supple::mesh::{box_grid, BoxGrid, TetSplit};
use supple::nalgebra::{Matrix3, Vector3};
use supple_io::scene::budget::{box_counts, check_mesh_size};

#[derive(Args)]
pub struct OrderArgs {
    /// A hexahedral grid of A×B×C vertices (8-node hex cells), as in Zhuang & Canny's tables.
    #[arg(long, value_name = "AxBxC", conflicts_with_all = ["r#box", "mesh"])]
    pub grid: Option<String>,
    /// A tet box of A×B×C cubes (6 tets each).
    #[arg(long = "box", value_name = "AxBxC", conflicts_with = "mesh")]
    pub r#box: Option<String>,
    /// A TetGen mesh (reads FILE.node and FILE.ele).
    #[arg(long, value_name = "FILE")]
    pub mesh: Option<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Seed of the random ordering.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Skip the numeric factorization (times reported as null) of orderings whose factor
    /// needs more than this many GFLOP (the random ordering of a large mesh takes minutes).
    #[arg(long, default_value_t = 200.0)]
    pub max_gflop: f64,
    /// Factorizations and solves timed per ordering (the median is reported); factorizations
    /// slower than a second are timed once.
    #[arg(long, default_value_t = 5)]
    pub repeat: usize,
    /// Comma-separated orderings to run, in this order (default: natural, random, amd,
    /// nd_grid for --grid, mnd, nd, and metis when built with the `metis` feature). Also
    /// `nd_pure`: `nd` without its final comparison with `amd`.
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub orderings: Option<Vec<String>>,
}

/// One row of the study: a Supple ordering or METIS's.
#[derive(Clone, Copy)]
enum Entry {
    Supple(OrderingKind),
    Metis,
}

impl Entry {
    fn name(&self) -> &'static str {
        match self {
            Self::Supple(k) => k.name(),
            Self::Metis => "metis",
        }
    }
}

/// The rows `--orderings` asks for (or the default set), checked against the input kind.
fn entries(args: &OrderArgs, grid_dims: Option<[usize; 3]>) -> Result<Vec<Entry>> {
    let Some(names) = &args.orderings else {
        let mut e = vec![
            Entry::Supple(OrderingKind::Natural),
            Entry::Supple(OrderingKind::Random { seed: args.seed }),
            Entry::Supple(OrderingKind::Amd),
        ];
        if let Some(dims) = grid_dims {
            e.push(Entry::Supple(OrderingKind::GridNd { dims }));
        }
        e.extend([OrderingKind::Mnd, OrderingKind::Nd].map(Entry::Supple));
        if cfg!(feature = "metis") {
            e.push(Entry::Metis);
        }
        return Ok(e);
    };
    names
        .iter()
        .map(|name| {
            Ok(Entry::Supple(match name.trim() {
                "natural" => OrderingKind::Natural,
                "random" => OrderingKind::Random { seed: args.seed },
                "amd" => OrderingKind::Amd,
                "nd_grid" => match grid_dims {
                    Some(dims) => OrderingKind::GridNd { dims },
                    None => bail!("--orderings nd_grid: only for --grid"),
                },
                "mnd" => OrderingKind::Mnd,
                "nd" => OrderingKind::Nd,
                "nd_pure" => OrderingKind::NdPure,
                "metis" if cfg!(feature = "metis") => return Ok(Entry::Metis),
                "metis" => bail!("--orderings metis: this supple was built without the `metis` feature"),
                other => bail!(
                    "--orderings {other}: unknown (natural, random, amd, nd_grid, mnd, nd, nd_pure, metis)"
                ),
            }))
        })
        .collect()
}

/// METIS 5's `METIS_NodeND` with default options on the vertex graph; `perm[new] = old`
/// (METIS's `perm`: row `i` of the permuted matrix is row `perm[i]` of the original).
#[cfg(feature = "metis")]
fn metis_nd(graph: &Graph) -> Result<Vec<u32>> {
    use metis_sys as m;
    let n = graph.n();
    if n == 0 {
        return Ok(Vec::new());
    }
    let idx = |v: u32| m::idx_t::try_from(v).context("graph too large for METIS's 32-bit indices");
    let mut nvtxs = m::idx_t::try_from(n).context("graph too large for METIS")?;
    let mut xadj = graph
        .ptr
        .iter()
        .map(|&p| idx(p))
        .collect::<Result<Vec<_>>>()?;
    let mut adjncy = graph
        .adj
        .iter()
        .map(|&u| idx(u))
        .collect::<Result<Vec<_>>>()?;
    let mut options = [0 as m::idx_t; m::METIS_NOPTIONS as usize];
    let (mut perm, mut iperm) = (vec![0 as m::idx_t; n], vec![0 as m::idx_t; n]);
    // SAFETY: every array has the length METIS reads (`options`: METIS_NOPTIONS; `xadj`:
    // n + 1; `adjncy`: xadj[n]; `perm`, `iperm`: n), the graph is symmetric without self
    // loops as METIS requires, and a null `vwgt` means unit vertex weights.
    let status = unsafe {
        m::METIS_SetDefaultOptions(options.as_mut_ptr());
        options[m::moptions_et_METIS_OPTION_NUMBERING as usize] = 0;
        m::METIS_NodeND(
            &mut nvtxs,
            xadj.as_mut_ptr(),
            adjncy.as_mut_ptr(),
            std::ptr::null_mut(),
            options.as_mut_ptr(),
            perm.as_mut_ptr(),
            iperm.as_mut_ptr(),
        )
    };
    anyhow::ensure!(
        status == m::rstatus_et_METIS_OK,
        "METIS_NodeND failed (status {status})"
    );
    Ok(perm.into_iter().map(|p| p as u32).collect())
}

/// The vertex permutation of one row.
fn permutation(entry: Entry, input: &OrderingInput) -> Result<Permutation> {
    match entry {
        Entry::Supple(kind) => {
            compute(kind, input).with_context(|| format!("ordering {}", kind.name()))
        }
        #[cfg(feature = "metis")]
        Entry::Metis => Ok(Permutation::new(metis_nd(input.graph)?)?),
        #[cfg(not(feature = "metis"))]
        Entry::Metis => bail!("this supple was built without the `metis` feature"),
    }
}

#[derive(Serialize)]
struct Report {
    /// Scalar unknowns (3 per vertex).
    n: usize,
    /// Scalar nonzeros of the lower triangle of A, diagonal included.
    nnz_a: u64,
    orderings: Vec<Row>,
}

#[derive(Serialize)]
struct Row {
    name: &'static str,
    nnz_l: u64,
    fill: u64,
    flops: f64,
    order_ms: f64,
    factor_ms: Option<f64>,
    solve_ms: Option<f64>,
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn dims(text: &str, what: &str) -> Result<[usize; 3]> {
    let parts: Vec<&str> = text.split(['x', 'X']).collect();
    let parsed: Option<Vec<usize>> = parts.iter().map(|p| p.trim().parse().ok()).collect();
    match parsed.as_deref() {
        Some(&[a, b, c]) if a > 0 && b > 0 && c > 0 => Ok([a, b, c]),
        _ => bail!("--{what} {text}: expected three positive counts like 8x8x9"),
    }
}

/// Vertices and 8-node hex cells of a grid of `d` vertices (unit spacing, x fastest).
fn hex_grid(d: [usize; 3]) -> (Vec<Vector3<f64>>, Vec<Vec<u32>>) {
    let idx = |i: usize, j: usize, k: usize| (i + d[0] * (j + d[1] * k)) as u32;
    let mut positions = Vec::with_capacity(d[0] * d[1] * d[2]);
    for k in 0..d[2] {
        for j in 0..d[1] {
            for i in 0..d[0] {
                positions.push(Vector3::new(i as f64, j as f64, k as f64));
            }
        }
    }
    let mut cells = Vec::new();
    for k in 0..d[2].saturating_sub(1) {
        for j in 0..d[1].saturating_sub(1) {
            for i in 0..d[0].saturating_sub(1) {
                cells.push(
                    (0..8)
                        .map(|b| idx(i + (b & 1), j + ((b >> 1) & 1), k + ((b >> 2) & 1)))
                        .collect(),
                );
            }
        }
    }
    (positions, cells)
}

pub fn order(args: OrderArgs) -> Result<()> {
    let (positions, cells, grid_dims) = match (&args.grid, &args.r#box, &args.mesh) {
        (Some(g), None, None) => {
            let d = dims(g, "grid")?;
            // Before allocating: a grid whose counts overflow or cannot be held is refused.
            let vertices = (d.iter().map(|&n| n as u64)).try_fold(1u64, u64::checked_mul);
            let cells = (d.iter().map(|&n| n as u64 - 1)).try_fold(1u64, u64::checked_mul);
            let (vertices, cells) = vertices
                .zip(cells)
                .ok_or_else(|| anyhow::anyhow!("--grid {g}: the vertex count overflows"))?;
            check_mesh_size(&format!("--grid {g}"), vertices, cells, "hex cells")
                .map_err(anyhow::Error::msg)?;
            let (p, c) = hex_grid(d);
            (p, c, Some(d))
        }
        (None, Some(b), None) => {
            let d = dims(b, "box")?;
            let (vertices, tets) = box_counts(d, 6)
                .ok_or_else(|| anyhow::anyhow!("--box {b}: the vertex or tet count overflows"))?;
            check_mesh_size(&format!("--box {b}"), vertices, tets, "tets")
                .map_err(anyhow::Error::msg)?;
            let m = box_grid(&BoxGrid {
                cells: d,
                cell_size: Vector3::repeat(1.0),
                origin: Vector3::zeros(),
                split: TetSplit::Six,
            });
            (
                m.positions,
                m.tets.iter().map(|t| t.to_vec()).collect(),
                None,
            )
        }
        (None, None, Some(path)) => {
            let m = supple_io::tetgen::read_tetgen(path)?;
            (
                m.positions,
                m.tets.iter().map(|t| t.to_vec()).collect(),
                None,
            )
        }
        _ => bail!("give exactly one of --grid, --box, --mesh"),
    };
    let graph = Graph::from_cells(positions.len(), &cells);
    let pattern = Arc::new(BlockPattern::from_graph(&graph));
    // An SPD matrix on the pattern: (graph Laplacian + identity) ⊗ I₃. The values do not
    // change the fill or the flop count; they only need to be factorable without pivoting.
    let mut a = BlockCsr::zeros(pattern.clone());
    for i in 0..graph.n() {
        for k in pattern.row_ptr[i] as usize..pattern.row_ptr[i + 1] as usize {
            let j = pattern.cols[k] as usize;
            a.values[k] = if i == j {
                Matrix3::from_diagonal_element(graph.neighbours(i).len() as f64 + 1.0)
            } else {
                -Matrix3::identity()
            };
        }
    }
    let fixed = vec![false; graph.n()];
    let b: Vec<Vector3<f64>> = (0..graph.n())
        .map(|i| Vector3::new(1.0, (i % 7) as f64, -0.5))
        .collect();
    let kinds = entries(&args, grid_dims)?;
    let input = OrderingInput {
        graph: &graph,
        positions: &positions,
        cells: &cells,
    };
    let mut rows = Vec::new();
    let mut nnz_a = 0;
    for kind in kinds {
        let t = Instant::now();
        let perm = permutation(kind, &input)?;
        let order_ms = t.elapsed().as_secs_f64() * 1e3;
        let sym = symbolic::analyze(&graph, &perm, 3);
        nnz_a = sym.nnz_a_lower;
        let (factor_ms, solve_ms) = if sym.flops <= args.max_gflop * 1e9 {
            let mut chol = SparseCholesky::new(pattern.clone(), Some(perm.perm()))?;
            let mut x = vec![Vector3::zeros(); graph.n()];
            let (mut factor, mut solve) = (Vec::new(), Vec::new());
            while factor.len() < args.repeat.max(1) {
                let t = Instant::now();
                chol.factor(&a, &fixed)?;
                factor.push(t.elapsed().as_secs_f64() * 1e3);
                let t = Instant::now();
                chol.solve(&b, &fixed, &mut x)?;
                solve.push(t.elapsed().as_secs_f64() * 1e3);
                if factor[0] > 1000.0 {
                    break;
                }
            }
            (Some(median(&factor)), Some(median(&solve)))
        } else {
            (None, None)
        };
        rows.push(Row {
            name: kind.name(),
            nnz_l: sym.nnz_l,
            fill: sym.fill,
            flops: sym.flops,
            order_ms,
            factor_ms,
            solve_ms,
        });
    }
    let report = Report {
        n: 3 * graph.n(),
        nnz_a,
        orderings: rows,
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&report)?)?;
    } else {
        writeln!(
            out,
            "n = {} dofs, nnz(A) lower = {}",
            report.n, report.nnz_a
        )?;
        writeln!(
            out,
            "{:<8} {:>12} {:>12} {:>12} {:>10} {:>10} {:>10}",
            "ordering", "nnz_l", "fill", "flops", "order_ms", "factor_ms", "solve_ms"
        )?;
        let ms = |v: Option<f64>| v.map_or_else(|| "skipped".to_string(), |v| format!("{v:.3}"));
        for r in &report.orderings {
            writeln!(
                out,
                "{:<8} {:>12} {:>12} {:>12.4e} {:>10.3} {:>10} {:>10}",
                r.name,
                r.nnz_l,
                r.fill,
                r.flops,
                r.order_ms,
                ms(r.factor_ms),
                ms(r.solve_ms)
            )?;
        }
    }
    Ok(())
}
