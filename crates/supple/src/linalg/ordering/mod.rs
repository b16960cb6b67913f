//! Fill-reducing orderings of the vertex graph, for the sparse Cholesky factorization.
//!
//! Every ordering permutes *vertices*; the 3×3 blocks of a vertex stay together (the scalar
//! matrix has a dense `d×d` block per pair of adjacent vertices, so a vertex ordering loses
//! nothing against a scalar one and is `d` times smaller). [`compute`] is the one entry point:
//!
//! | [`OrderingKind`] | file | source |
//! |---|---|---|
//! | `Natural` | `simple.rs` | the mesh's own numbering |
//! | `Random` | `simple.rs` | seeded Fisher–Yates shuffle (the "random" column of Zhuang & Canny 1999, Table 1) |
//! | `Amd` | `amd.rs` | approximate minimum degree, Amestoy, Davis & Duff 1996, via `faer` |
//! | `GridNd` | `grid_nd.rs` | George 1973, regular nested dissection of a vertex grid |
//! | `Mnd` | `mnd.rs` | Zhuang & Canny 1999 §5.1, modified nested dissection by element slabs |
//! | `Nd` | `nd.rs` | graph nested dissection: geometric/BFS separators, FM-refined node separators; never more nnz(L) than `Amd` (the better of the two is kept) |
//! | `NdPure` | `nd.rs` | the same dissection without the final comparison with `Amd` |
//!
//! Fill and flop counts of an ordering come from [`crate::linalg::symbolic::analyze`].

mod amd;
mod grid_nd;
mod mnd;
mod nd;
mod separator;
pub(crate) mod simple;
#[cfg(test)]
mod tests;

use nalgebra::Vector3;

/// Vertex adjacency graph (vertices sharing a cell), CSR with sorted neighbours, no self loops.
#[derive(Debug, Clone, PartialEq)]
pub struct Graph {
    /// Vertex `v`'s neighbours are `adj[ptr[v]..ptr[v + 1]]`.
    pub ptr: Vec<u32>,
    /// Neighbour lists, ascending within each vertex, symmetric (`u ∈ N(v) ⇔ v ∈ N(u)`).
    pub adj: Vec<u32>,
}

impl Graph {
    /// Number of vertices.
    pub fn n(&self) -> usize {
        self.ptr.len().saturating_sub(1)
    }

    /// Number of undirected edges.
    pub fn n_edges(&self) -> usize {
        self.adj.len() / 2
    }

    /// Sorted neighbours of `v` (never `v` itself).
    pub fn neighbours(&self, v: usize) -> &[u32] {
        &self.adj[self.ptr[v] as usize..self.ptr[v + 1] as usize]
    }

    /// The graph of a block pattern's off-diagonal blocks (the pattern is symmetric).
    pub fn from_pattern(p: &crate::linalg::BlockPattern) -> Self {
        let n = p.n_rows();
        let mut ptr = Vec::with_capacity(n + 1);
        let mut adj = Vec::with_capacity(p.n_blocks().saturating_sub(n));
        ptr.push(0);
        for i in 0..n {
            let row = &p.cols[p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize];
            adj.extend(row.iter().copied().filter(|&j| j as usize != i));
            ptr.push(adj.len() as u32);
        }
        Self { ptr, adj }
    }

    /// The graph of a mesh: every two vertices of a cell (tet: 4, hex: 8, any size) are
    /// adjacent. Duplicated vertices inside a cell are ignored.
    ///
    /// # Panics
    /// If a cell names a vertex `≥ n_vertices` (validate meshes first).
    pub fn from_cells(n_vertices: usize, cells: &[Vec<u32>]) -> Self {
        // Two passes over cells: count the (over-estimated) list lengths, then fill.
        let mut ptr = vec![0u32; n_vertices + 1];
        for c in cells {
            for &v in c {
                assert!(
                    (v as usize) < n_vertices,
                    "cell vertex {v} out of range (n = {n_vertices})"
                );
                ptr[v as usize + 1] += c.len() as u32;
            }
        }
        for i in 0..n_vertices {
            ptr[i + 1] += ptr[i];
        }
        let mut fill = ptr.clone();
        let mut raw = vec![0u32; ptr[n_vertices] as usize];
        for c in cells {
            for &v in c {
                let f = &mut fill[v as usize];
                raw[*f as usize..*f as usize + c.len()].copy_from_slice(c);
                *f += c.len() as u32;
            }
        }
        let mut out_ptr = Vec::with_capacity(n_vertices + 1);
        let mut adj = Vec::new();
        out_ptr.push(0);
        for v in 0..n_vertices {
            let list = &mut raw[ptr[v] as usize..ptr[v + 1] as usize];
            list.sort_unstable();
            let mut last = u32::MAX;
            for &u in list.iter() {
                if u != last && u as usize != v {
                    adj.push(u);
                }
                last = u;
            }
            out_ptr.push(adj.len() as u32);
        }
        Self { ptr: out_ptr, adj }
    }
}

/// A vertex permutation: `perm[new] = old`, `inv[old] = new`.
#[derive(Debug, Clone, PartialEq)]
pub struct Permutation {
    perm: Vec<u32>,
    inv: Vec<u32>,
}

impl Permutation {
    /// Wraps `perm` (`perm[new] = old`), refusing anything that is not a permutation of
    /// `0..perm.len()`.
    pub fn new(perm: Vec<u32>) -> Result<Self, OrderingError> {
        let n = perm.len();
        let mut inv = vec![u32::MAX; n];
        for (new, &old) in perm.iter().enumerate() {
            if old as usize >= n || inv[old as usize] != u32::MAX {
                return Err(OrderingError::NotAPermutation {
                    index: new,
                    value: old,
                    len: n,
                });
            }
            inv[old as usize] = new as u32;
        }
        Ok(Self { perm, inv })
    }

    /// The identity on `n` vertices.
    pub fn identity(n: usize) -> Self {
        let perm: Vec<u32> = (0..n as u32).collect();
        Self {
            inv: perm.clone(),
            perm,
        }
    }

    /// `perm[new] = old`.
    pub fn perm(&self) -> &[u32] {
        &self.perm
    }

    /// `inv[old] = new`.
    pub fn inv(&self) -> &[u32] {
        &self.inv
    }

    pub fn len(&self) -> usize {
        self.perm.len()
    }

    pub fn is_empty(&self) -> bool {
        self.perm.is_empty()
    }
}

/// Which ordering [`compute`] runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrderingKind {
    /// The mesh's vertex numbering.
    Natural,
    /// A uniformly random permutation (reproducible from `seed`).
    Random { seed: u64 },
    /// Approximate minimum degree on the vertex graph.
    Amd,
    /// Regular nested dissection of a structured vertex grid `[nx, ny, nz]`, vertex
    /// `(i, j, k)` at index `i + nx (j + ny k)`.
    GridNd { dims: [usize; 3] },
    /// Zhuang & Canny's modified nested dissection (median planes cutting slabs of cells).
    Mnd,
    /// Graph nested dissection with refined node separators, for unstructured meshes; at the
    /// root, the better of that and `Amd` by nnz(L), so never more fill than `Amd`.
    Nd,
    /// `Nd` without the comparison with `Amd` at the root (the dissection itself; for studies).
    NdPure,
}

impl OrderingKind {
    /// Short name for files, tables and the command line.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Natural => "natural",
            Self::Random { .. } => "random",
            Self::Amd => "amd",
            Self::GridNd { .. } => "nd_grid",
            Self::Mnd => "mnd",
            Self::Nd => "nd",
            Self::NdPure => "nd_pure",
        }
    }
}

/// Why an ordering could not be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum OrderingError {
    #[error("not a permutation of 0..{len}: entry {index} is {value} (out of range or repeated)")]
    NotAPermutation {
        index: usize,
        value: u32,
        len: usize,
    },
    #[error("grid dims {dims:?} hold {} vertices but the graph has {n_vertices}", dims[0] * dims[1] * dims[2])]
    GridMismatch { dims: [usize; 3], n_vertices: usize },
    #[error("{positions} positions given for {n_vertices} vertices")]
    PositionCount { positions: usize, n_vertices: usize },
    #[error("cell {cell} names vertex {vertex}, but there are only {n_vertices} vertices")]
    CellVertex {
        cell: usize,
        vertex: u32,
        n_vertices: usize,
    },
    #[error("approximate minimum degree failed: {0}")]
    Amd(String),
}

/// What an ordering may look at: the graph always; positions (one per vertex) for the
/// geometric orderings (`Mnd`, `Nd`); cells (vertex lists) for `Mnd`.
pub struct OrderingInput<'a> {
    pub graph: &'a Graph,
    pub positions: &'a [Vector3<f64>],
    pub cells: &'a [Vec<u32>],
}

/// Computes the ordering `kind` of `input.graph`'s vertices.
///
/// `Mnd` needs one position per vertex and cells; `Nd` uses positions when there is one per
/// vertex (geometric separator candidates) and works from the graph alone otherwise.
pub fn compute(kind: OrderingKind, input: &OrderingInput) -> Result<Permutation, OrderingError> {
    let n = input.graph.n();
    let perm = match kind {
        OrderingKind::Natural => return Ok(Permutation::identity(n)),
        OrderingKind::Random { seed } => simple::random(n, seed),
        OrderingKind::Amd => amd::amd(input.graph)?,
        OrderingKind::GridNd { dims } => {
            if dims.iter().product::<usize>() != n {
                return Err(OrderingError::GridMismatch {
                    dims,
                    n_vertices: n,
                });
            }
            grid_nd::grid_nd(dims)
        }
        OrderingKind::Mnd => {
            check_positions(input.positions.len(), n)?;
            check_cells(input.cells, n)?;
            mnd::mnd(n, input.positions, input.cells)
        }
        OrderingKind::Nd | OrderingKind::NdPure => {
            let pos = (input.positions.len() == n).then_some(input.positions);
            nd::nd(input.graph, pos, kind == OrderingKind::Nd)?
        }
    };
    Permutation::new(perm)
}

fn check_positions(positions: usize, n_vertices: usize) -> Result<(), OrderingError> {
    if positions == n_vertices {
        Ok(())
    } else {
        Err(OrderingError::PositionCount {
            positions,
            n_vertices,
        })
    }
}

fn check_cells(cells: &[Vec<u32>], n_vertices: usize) -> Result<(), OrderingError> {
    for (cell, c) in cells.iter().enumerate() {
        if let Some(&vertex) = c.iter().find(|&&v| v as usize >= n_vertices) {
            return Err(OrderingError::CellVertex {
                cell,
                vertex,
                n_vertices,
            });
        }
    }
    Ok(())
}
