//! Multicolour block Gauss–Seidel: parallel sweeps whose result does not depend on the number
//! of threads, used as the SSOR preconditioner [`MulticolorSsor`] and as the multigrid's
//! finest-level smoother.
//!
//! The vertices are greedily coloured so that no two vertices of one colour share a matrix
//! block (a distance-1 colouring of the matrix graph; the element colouring of `fem::elements`
//! colours patches of elements, which is a different graph). Gauss–Seidel in the order
//! "colour by colour" then updates all rows of a colour at once: each row reads only rows of
//! other colours (Saad, *Iterative Methods for Sparse Linear Systems*, 2nd ed., §12.4.1,
//! multicolour SOR). A row's sum is taken in pattern order, so 1 or 16 threads give the
//! same bits. A forward sweep followed by a backward sweep (colours in reverse) is symmetric
//! Gauss–Seidel in the colour order: `M = (D + L_c) D⁻¹ (D + U_c)`, SPD when `A` is.

use super::cg::Precond;
use super::par::SharedMut;
use super::pcg::BlockJacobi;
use super::{BlockCsr, BlockPattern};
use nalgebra::{Matrix3, Vector3};
use rayon::prelude::*;

/// Rows per parallel task inside a colour.
const ROWS_PER_TASK: usize = 512;
/// Colours with fewer rows run on the calling thread (same arithmetic either way).
const PAR_MIN_ROWS: usize = 1024;

/// A distance-1 colouring of the vertex graph of a pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct VertexColoring {
    /// Vertices grouped by colour, ascending inside a colour.
    pub order: Vec<u32>,
    /// Colour `c` is `order[color_ptr[c]..color_ptr[c + 1]]`.
    pub color_ptr: Vec<usize>,
}

impl VertexColoring {
    /// Greedy colouring in vertex order: each vertex takes the smallest colour none of its
    /// lower-numbered neighbours has.
    pub fn greedy(pattern: &BlockPattern) -> Self {
        let n = pattern.n_rows();
        let mut color = vec![u32::MAX; n];
        let mut used: Vec<usize> = Vec::new(); // used[c] == i: colour c taken for vertex i
        let mut n_colors = 0;
        for i in 0..n {
            for k in pattern.row_ptr[i] as usize..pattern.row_ptr[i + 1] as usize {
                let c = color[pattern.cols[k] as usize];
                if c != u32::MAX {
                    used[c as usize] = i;
                }
            }
            let c = (0..n_colors).find(|&c| used[c] != i).unwrap_or_else(|| {
                used.push(usize::MAX);
                n_colors += 1;
                n_colors - 1
            });
            color[i] = c as u32;
        }
        let mut color_ptr = vec![0usize; n_colors + 1];
        for &c in &color {
            color_ptr[c as usize + 1] += 1;
        }
        for c in 0..n_colors {
            color_ptr[c + 1] += color_ptr[c];
        }
        let mut next = color_ptr.clone();
        let mut order = vec![0u32; n];
        for (i, &c) in color.iter().enumerate() {
            order[next[c as usize]] = i as u32;
            next[c as usize] += 1;
        }
        Self { order, color_ptr }
    }

    pub fn n_colors(&self) -> usize {
        self.color_ptr.len() - 1
    }
}

/// One Gauss–Seidel sweep on `A x = r` over the free vertices, colours in order (`forward`)
/// or in reverse: `xᵢ ← Dᵢ⁻¹ (rᵢ − Σ_{j≠i} Aᵢⱼ xⱼ)`. `x` must be zero on fixed vertices (it
/// stays so); `d_inv` holds the inverse diagonal blocks.
pub fn gauss_seidel_sweep(
    a: &BlockCsr,
    fixed: &[bool],
    d_inv: &[Matrix3<f64>],
    coloring: &VertexColoring,
    r: &[Vector3<f64>],
    x: &mut [Vector3<f64>],
    forward: bool,
) {
    let p = &*a.pattern;
    let n_colors = coloring.n_colors();
    let xp = SharedMut(x.as_mut_ptr());
    let row = |i: usize| {
        if fixed[i] {
            return;
        }
        let mut s = r[i];
        for k in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
            let j = p.cols[k] as usize;
            if j != i {
                // SAFETY: `j` has another colour than every row updated now, so it is only
                // read during this colour; `j < n = x.len()`.
                s -= a.values[k] * unsafe { *xp.ptr().add(j) };
            }
        }
        // SAFETY: rows of one colour are distinct and share no block, so no other task
        // reads or writes `x[i]` during this colour.
        unsafe { *xp.ptr().add(i) = d_inv[i] * s };
    };
    for step in 0..n_colors {
        let c = if forward { step } else { n_colors - 1 - step };
        let rows = &coloring.order[coloring.color_ptr[c]..coloring.color_ptr[c + 1]];
        if rows.len() < PAR_MIN_ROWS {
            rows.iter().for_each(|&i| row(i as usize));
        } else {
            rows.par_chunks(ROWS_PER_TASK)
                .for_each(|chunk| chunk.iter().for_each(|&i| row(i as usize)));
        }
    }
}

/// Symmetric block Gauss–Seidel in the colour order as a preconditioner: `z = P r` is a
/// forward then a backward sweep from `z = 0`. Parallel inside each colour.
#[derive(Debug, Clone)]
pub struct MulticolorSsor {
    coloring: VertexColoring,
    jacobi: BlockJacobi,
}

impl MulticolorSsor {
    /// Colours the vertex graph of `pattern` (once per pattern).
    pub fn new(pattern: &BlockPattern) -> Self {
        Self {
            coloring: VertexColoring::greedy(pattern),
            jacobi: BlockJacobi::new(pattern.n_rows()),
        }
    }

    /// Takes the diagonal blocks of `a` on the free vertices.
    pub fn refresh(&mut self, a: &BlockCsr, fixed: &[bool]) {
        self.jacobi.refresh(a, fixed);
    }

    pub fn coloring(&self) -> &VertexColoring {
        &self.coloring
    }
}

impl Precond for MulticolorSsor {
    fn apply(&mut self, a: &BlockCsr, fixed: &[bool], r: &[Vector3<f64>], z: &mut [Vector3<f64>]) {
        let d_inv = self.jacobi.block_diagonal().expect("block diagonal");
        z.fill(Vector3::zeros());
        gauss_seidel_sweep(a, fixed, d_inv, &self.coloring, r, z, true);
        gauss_seidel_sweep(a, fixed, d_inv, &self.coloring, r, z, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::test_support::{bar_system, random_vectors};

    #[test]
    fn the_coloring_is_proper_and_covers_every_vertex_once() {
        let (a, n) = bar_system([8, 3, 3]);
        let c = VertexColoring::greedy(&a.pattern);
        let mut color = vec![usize::MAX; n];
        for k in 0..c.n_colors() {
            for &i in &c.order[c.color_ptr[k]..c.color_ptr[k + 1]] {
                assert_eq!(color[i as usize], usize::MAX, "vertex {i} twice");
                color[i as usize] = k;
            }
        }
        let p = &*a.pattern;
        for i in 0..n {
            for k in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
                let j = p.cols[k] as usize;
                assert!(j == i || color[i] != color[j], "{i} and {j} share colour");
            }
        }
        assert!(c.n_colors() < 40, "{} colours", c.n_colors());
    }

    /// The preconditioner is symmetric and positive definite on the free vertices, and one
    /// thread or two give the same bits.
    #[test]
    fn multicolor_ssor_is_spd_and_thread_count_independent() {
        let (a, n) = bar_system([80, 16, 16]);
        let fixed: Vec<bool> = (0..n).map(|i| i % 17 == 0).collect();
        let mut pc = MulticolorSsor::new(&a.pattern);
        pc.refresh(&a, &fixed);
        let u = random_vectors(n, 1, &fixed);
        let v = random_vectors(n, 2, &fixed);
        let run = |threads: usize, pc: &mut MulticolorSsor, r: &[Vector3<f64>]| {
            let mut z = vec![Vector3::zeros(); n];
            crate::linalg::test_support::on_threads(threads, || pc.apply(&a, &fixed, r, &mut z));
            z
        };
        let pu1 = run(1, &mut pc, &u);
        let pu2 = run(2, &mut pc, &u);
        assert!(pu1
            .iter()
            .zip(&pu2)
            .all(|(x, y)| x.map(f64::to_bits) == y.map(f64::to_bits)));
        let pv = run(2, &mut pc, &v);
        let dot = |x: &[Vector3<f64>], y: &[Vector3<f64>]| -> f64 {
            x.iter().zip(y).map(|(p, q)| p.dot(q)).sum()
        };
        let (vpu, upv) = (dot(&v, &pu1), dot(&u, &pv));
        assert!(
            (vpu - upv).abs() <= 1e-10 * vpu.abs().max(upv.abs()),
            "{vpu} vs {upv}"
        );
        assert!(dot(&u, &pu1) > 0.0 && dot(&v, &pv) > 0.0);
        for (i, z) in pu1.iter().enumerate() {
            if fixed[i] {
                assert_eq!(*z, Vector3::zeros());
            }
        }
    }
}
