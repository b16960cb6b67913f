//! Block-sparse matrices with 3×3 blocks (one per pair of vertices sharing an element).
//!
//! The pattern is built once per mesh; each element gets a scatter map from its 4×4 local
//! blocks to their slots, so assembly is a loop of additions with no search and no allocation.

use super::par;
use nalgebra::{Matrix3, Vector3};
use rayon::prelude::*;
use std::sync::Arc;

/// The fixed sparsity pattern: block CSR with both triangles stored, sorted columns.
#[derive(Debug, Clone, PartialEq)]
pub struct BlockPattern {
    /// Row `i` owns slots `row_ptr[i]..row_ptr[i + 1]`.
    pub row_ptr: Vec<u32>,
    /// Column (vertex) of each slot, ascending within a row.
    pub cols: Vec<u32>,
    /// Slot of the diagonal block of each row.
    pub diag: Vec<u32>,
}

impl BlockPattern {
    /// Pattern of a tet mesh with `n` vertices, and the scatter map: for each tet, the slot
    /// of local block `(a, b)` at index `4a + b`.
    pub fn from_tets(n: usize, tets: &[[u32; 4]]) -> (Self, Vec<[u32; 16]>) {
        let mut neighbours: Vec<Vec<u32>> = vec![Vec::new(); n];
        for t in tets {
            for &a in t {
                neighbours[a as usize].extend_from_slice(t);
            }
        }
        let mut row_ptr = Vec::with_capacity(n + 1);
        let mut cols = Vec::new();
        let mut diag = Vec::with_capacity(n);
        row_ptr.push(0u32);
        for (i, nb) in neighbours.iter_mut().enumerate() {
            nb.push(i as u32); // isolated vertices still get a diagonal block
            nb.sort_unstable();
            nb.dedup();
            let start = cols.len();
            let d = nb.binary_search(&(i as u32)).expect("diagonal present");
            diag.push((start + d) as u32);
            cols.extend_from_slice(nb);
            row_ptr.push(cols.len() as u32);
        }
        let pattern = Self {
            row_ptr,
            cols,
            diag,
        };
        let scatter = tets
            .iter()
            .map(|t| {
                std::array::from_fn(|k| {
                    pattern
                        .slot(t[k / 4] as usize, t[k % 4] as usize)
                        .expect("pattern holds every element block") as u32
                })
            })
            .collect();
        (pattern, scatter)
    }

    /// Pattern with a block for every edge of `graph` and on the diagonal (for meshes whose
    /// cells are not tets, e.g. the hexahedral grids of the ordering study).
    pub fn from_graph(graph: &super::ordering::Graph) -> Self {
        let n = graph.n();
        let mut row_ptr = Vec::with_capacity(n + 1);
        let mut cols = Vec::with_capacity(graph.adj.len() + n);
        let mut diag = Vec::with_capacity(n);
        row_ptr.push(0u32);
        for i in 0..n {
            let nb = graph.neighbours(i);
            let below = nb.partition_point(|&j| (j as usize) < i);
            cols.extend_from_slice(&nb[..below]);
            diag.push(cols.len() as u32);
            cols.push(i as u32);
            cols.extend_from_slice(&nb[below..]);
            row_ptr.push(cols.len() as u32);
        }
        Self {
            row_ptr,
            cols,
            diag,
        }
    }

    pub fn n_rows(&self) -> usize {
        self.diag.len()
    }

    pub fn n_blocks(&self) -> usize {
        self.cols.len()
    }

    /// Slot of block `(i, j)`, if it is in the pattern.
    pub fn slot(&self, i: usize, j: usize) -> Option<usize> {
        let (s, e) = (self.row_ptr[i] as usize, self.row_ptr[i + 1] as usize);
        self.cols[s..e]
            .binary_search(&(j as u32))
            .ok()
            .map(|k| s + k)
    }
}

crate::isa::avx2_or_baseline! {
    /// Rows `start..start + out.len()` of `A x`: compiled for the baseline and for AVX2,
    /// chosen at run time ([`crate::isa`]; the same bits).
    fn mul_rows(
        a: &BlockCsr,
        x: &[Vector3<f64>],
        start: usize,
        out: &mut [Vector3<f64>],
    ) => BlockCsr::mul_rows_loop
}

/// A 3n×3n matrix stored as 3×3 blocks on a shared [`BlockPattern`].
#[derive(Debug, Clone)]
pub struct BlockCsr {
    pub pattern: Arc<BlockPattern>,
    pub values: Vec<Matrix3<f64>>,
}

impl BlockCsr {
    pub fn zeros(pattern: Arc<BlockPattern>) -> Self {
        let values = vec![Matrix3::zeros(); pattern.n_blocks()];
        Self { pattern, values }
    }

    pub fn n_rows(&self) -> usize {
        self.pattern.n_rows()
    }

    pub fn set_zero(&mut self) {
        self.values.fill(Matrix3::zeros());
    }

    /// Block `(i, j)`, or zero when it is outside the pattern.
    pub fn block(&self, i: usize, j: usize) -> Matrix3<f64> {
        self.pattern
            .slot(i, j)
            .map_or_else(Matrix3::zeros, |s| self.values[s])
    }

    /// `y = A x`, row-parallel (each row is summed in column order: thread-count independent).
    pub fn mul_vec(&self, x: &[Vector3<f64>], y: &mut [Vector3<f64>]) {
        /// Rows per parallel task.
        const ROWS: usize = 256;
        if y.len() < par::PAR_MIN {
            mul_rows(self, x, 0, y);
        } else {
            y.par_chunks_mut(ROWS)
                .enumerate()
                .for_each(|(c, out)| mul_rows(self, x, c * ROWS, out));
        }
    }

    #[inline(always)]
    fn mul_rows_loop(&self, x: &[Vector3<f64>], start: usize, out: &mut [Vector3<f64>]) {
        let p = &*self.pattern;
        let vals = &self.values;
        for (k, yi) in out.iter_mut().enumerate() {
            let i = start + k;
            let (s, e) = (p.row_ptr[i] as usize, p.row_ptr[i + 1] as usize);
            let mut acc = Vector3::zeros();
            for k in s..e {
                acc += vals[k] * x[p.cols[k] as usize];
            }
            *yi = acc;
        }
    }

    /// Dense copy (tests and debugging only).
    pub fn to_dense(&self) -> nalgebra::DMatrix<f64> {
        let n = self.n_rows();
        let mut d = nalgebra::DMatrix::zeros(3 * n, 3 * n);
        let p = &*self.pattern;
        for i in 0..n {
            for k in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
                let j = p.cols[k] as usize;
                d.fixed_view_mut::<3, 3>(3 * i, 3 * j)
                    .copy_from(&self.values[k]);
            }
        }
        d
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pattern_of_two_tets_and_scatter_map() {
        let tets = [[0, 1, 2, 3], [1, 2, 3, 4]];
        let (p, scatter) = BlockPattern::from_tets(6, &tets);
        assert_eq!(p.n_rows(), 6);
        // rows 0 and 4 see 4 vertices, rows 1..3 see 5, isolated vertex 5 sees itself.
        assert_eq!(p.n_blocks(), 4 + 5 * 3 + 4 + 1);
        for (t, s) in tets.iter().zip(&scatter) {
            for k in 0..16 {
                let slot = s[k] as usize;
                let row = p.row_ptr.partition_point(|&r| r as usize <= slot) - 1;
                assert_eq!(row, t[k / 4] as usize);
                assert_eq!(p.cols[slot], t[k % 4]);
            }
        }
        assert_eq!(p.slot(0, 4), None);
        assert_eq!(p.cols[p.diag[5] as usize], 5);
    }

    #[test]
    fn mul_vec_matches_dense() {
        let tets = [[0, 1, 2, 3], [1, 2, 3, 4]];
        let (p, _) = BlockPattern::from_tets(5, &tets);
        let mut a = BlockCsr::zeros(Arc::new(p));
        for (k, v) in a.values.iter_mut().enumerate() {
            *v = Matrix3::from_fn(|r, c| (k * 9 + r * 3 + c) as f64 * 0.1 - 2.0);
        }
        let x: Vec<_> = (0..5)
            .map(|i| Vector3::new(i as f64, 1.0, -0.5 * i as f64))
            .collect();
        let mut y = vec![Vector3::zeros(); 5];
        a.mul_vec(&x, &mut y);
        let xd = nalgebra::DVector::from_iterator(15, x.iter().flat_map(|v| v.iter().copied()));
        let yd = a.to_dense() * xd;
        for i in 0..5 {
            for c in 0..3 {
                assert!((y[i][c] - yd[3 * i + c]).abs() < 1e-12);
            }
        }
    }
}
