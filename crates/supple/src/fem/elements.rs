//! Per-tet rest data (`dm_inv`, rest volume, shape-function gradients), the element colouring,
//! and the deterministic parallel loops that scatter element forces and 4×4 blocks.
//!
//! Determinism: elements are greedily coloured so that no two elements of one colour share a
//! vertex. Colours run one after another; inside a colour elements run in parallel and write
//! to disjoint vertices and blocks. Each vertex therefore receives its contributions in a
//! fixed order (colour by colour), whatever the number of threads.

use crate::linalg::par::{self, SharedMut};
use crate::linalg::{BlockCsr, BlockPattern};
use crate::mesh::TetMesh;
use nalgebra::{Matrix3, Vector3};
use rayon::prelude::*;
use std::sync::Arc;

/// Element data computed once from the rest shape.
#[derive(Debug, Clone)]
pub struct ElementSet {
    pub tets: Vec<[u32; 4]>,
    /// Inverse of the rest edge matrix `Dm = [X1 − X0, X2 − X0, X3 − X0]`.
    pub dm_inv: Vec<Matrix3<f64>>,
    /// Rest volume.
    pub volume: Vec<f64>,
    /// Gradients of the four linear shape functions: `F = Σ_a x_a ⊗ grad[a]`.
    pub grad: Vec<[Vector3<f64>; 4]>,
    /// Elements grouped by colour: colour `c` is `order[color_ptr[c]..color_ptr[c + 1]]`.
    order: Vec<u32>,
    color_ptr: Vec<usize>,
    /// Block pattern of the body's matrices and each element's scatter map into it.
    pub pattern: Arc<BlockPattern>,
    pub scatter: Vec<[u32; 16]>,
}

impl ElementSet {
    /// Precomputes rest data for a validated mesh.
    pub fn new(mesh: &TetMesh) -> Self {
        let n = mesh.n_vertices();
        let mut dm_inv = Vec::with_capacity(mesh.n_tets());
        let mut volume = Vec::with_capacity(mesh.n_tets());
        let mut grad = Vec::with_capacity(mesh.n_tets());
        for t in 0..mesh.n_tets() {
            let p = mesh.tet_positions(t);
            let dm = Matrix3::from_columns(&[p[1] - p[0], p[2] - p[0], p[3] - p[0]]);
            // Validation guarantees a positive, non-degenerate volume.
            let inv = dm.try_inverse().unwrap_or_else(Matrix3::zeros);
            let g1: Vector3<f64> = inv.row(0).transpose();
            let g2: Vector3<f64> = inv.row(1).transpose();
            let g3: Vector3<f64> = inv.row(2).transpose();
            dm_inv.push(inv);
            volume.push(dm.determinant() / 6.0);
            grad.push([-(g1 + g2 + g3), g1, g2, g3]);
        }
        let (order, color_ptr) = color_elements(n, &mesh.tets);
        let (pattern, scatter) = BlockPattern::from_tets(n, &mesh.tets);
        Self {
            tets: mesh.tets.clone(),
            dm_inv,
            volume,
            grad,
            order,
            color_ptr,
            pattern: Arc::new(pattern),
            scatter,
        }
    }

    pub fn len(&self) -> usize {
        self.tets.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tets.is_empty()
    }

    pub fn n_colors(&self) -> usize {
        self.color_ptr.len() - 1
    }

    /// Deformation gradient `F = Ds · Dm⁻¹` of element `e` at positions `x`.
    #[inline]
    pub fn deformation_gradient(&self, e: usize, x: &[Vector3<f64>]) -> Matrix3<f64> {
        let [a, b, c, d] = self.tets[e].map(|i| x[i as usize]);
        Matrix3::from_columns(&[b - a, c - a, d - a]) * self.dm_inv[e]
    }

    /// Forces `f_a = −V · P · grad_a` of a first Piola–Kirchhoff stress `P` on element `e`.
    #[inline]
    pub fn stress_forces(&self, e: usize, p: &Matrix3<f64>) -> [Vector3<f64>; 4] {
        let v = self.volume[e];
        self.grad[e].map(|g| -v * (p * g))
    }

    /// Adds `element_force(e)` (the forces on the element's 4 vertices) into `f`.
    pub fn scatter_forces<F>(&self, f: &mut [Vector3<f64>], element_force: F)
    where
        F: Fn(usize) -> [Vector3<f64>; 4] + Sync,
    {
        let out = SharedMut(f.as_mut_ptr());
        self.for_each_colored(|e| {
            let fe = element_force(e);
            for (k, &v) in self.tets[e].iter().enumerate() {
                // SAFETY: `v < f.len()` (validated mesh) and no other element of this colour
                // touches vertex `v` (see `color_elements`).
                unsafe { *out.ptr().add(v as usize) += fe[k] };
            }
        });
    }

    /// Adds `element_blocks(e)` (a 4×4 array of 3×3 blocks, `[a][b]` coupling local vertex
    /// `a` to `b`) into `k` through the scatter map.
    pub fn scatter_blocks<F>(&self, k: &mut BlockCsr, element_blocks: F)
    where
        F: Fn(usize) -> [[Matrix3<f64>; 4]; 4] + Sync,
    {
        debug_assert!(Arc::ptr_eq(&k.pattern, &self.pattern) || *k.pattern == *self.pattern);
        let out = SharedMut(k.values.as_mut_ptr());
        self.for_each_colored(|e| {
            let ke = element_blocks(e);
            let map = &self.scatter[e];
            for a in 0..4 {
                for b in 0..4 {
                    // SAFETY: slots come from the scatter map of this pattern; elements of one
                    // colour share no vertex, hence no block.
                    unsafe { *out.ptr().add(map[4 * a + b] as usize) += ke[a][b] };
                }
            }
        });
    }

    /// Deterministic `Σ_e term(e)` (used for energies and volumes).
    pub fn sum(&self, term: impl Fn(usize) -> f64 + Sync) -> f64 {
        let mut partials = vec![0.0; par::n_chunks(self.len())];
        par::sum(self.len(), &mut partials, term)
    }

    /// Runs `body(e)` for every element, colour by colour, in parallel inside a colour.
    fn for_each_colored(&self, body: impl Fn(usize) + Sync) {
        let parallel = self.len() >= par::PAR_MIN;
        for c in 0..self.n_colors() {
            let elems = &self.order[self.color_ptr[c]..self.color_ptr[c + 1]];
            if parallel {
                elems
                    .par_iter()
                    .with_min_len(64)
                    .for_each(|&e| body(e as usize));
            } else {
                elems.iter().for_each(|&e| body(e as usize));
            }
        }
    }
}

/// Greedy colouring: each element, in index order, takes the smallest colour unused by the
/// elements it shares a vertex with. Returns elements grouped by colour and colour offsets.
fn color_elements(n_vertices: usize, tets: &[[u32; 4]]) -> (Vec<u32>, Vec<usize>) {
    let mut vertex_elems: Vec<Vec<u32>> = vec![Vec::new(); n_vertices];
    for (e, t) in tets.iter().enumerate() {
        for &v in t {
            vertex_elems[v as usize].push(e as u32);
        }
    }
    let mut color = vec![u32::MAX; tets.len()];
    let mut mark: Vec<usize> = Vec::new(); // mark[c] == e + 1: colour c is taken for element e
    let mut n_colors = 0usize;
    for (e, t) in tets.iter().enumerate() {
        for &v in t {
            for &o in &vertex_elems[v as usize] {
                let c = color[o as usize];
                if c != u32::MAX {
                    mark[c as usize] = e + 1;
                }
            }
        }
        let c = (0..n_colors)
            .find(|&c| mark[c] != e + 1)
            .unwrap_or_else(|| {
                mark.push(0);
                n_colors += 1;
                n_colors - 1
            });
        color[e] = c as u32;
    }
    let mut color_ptr = vec![0usize; n_colors + 1];
    for &c in &color {
        color_ptr[c as usize + 1] += 1;
    }
    for c in 0..n_colors {
        color_ptr[c + 1] += color_ptr[c];
    }
    let mut fill = color_ptr.clone();
    let mut order = vec![0u32; tets.len()];
    for (e, &c) in color.iter().enumerate() {
        order[fill[c as usize]] = e as u32;
        fill[c as usize] += 1;
    }
    (order, color_ptr)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{box_grid, BoxGrid, TetSplit};

    fn bar() -> TetMesh {
        box_grid(&BoxGrid {
            cells: [4, 3, 5],
            cell_size: Vector3::new(0.1, 0.2, 0.15),
            origin: Vector3::zeros(),
            split: TetSplit::Five,
        })
    }

    #[test]
    fn colours_are_proper_and_cover_every_element_once() {
        let m = bar();
        let es = ElementSet::new(&m);
        let mut seen = vec![false; m.n_tets()];
        for c in 0..es.n_colors() {
            let mut used = vec![false; m.n_vertices()];
            for &e in &es.order[es.color_ptr[c]..es.color_ptr[c + 1]] {
                assert!(!seen[e as usize]);
                seen[e as usize] = true;
                for &v in &m.tets[e as usize] {
                    assert!(!used[v as usize], "colour {c} touches vertex {v} twice");
                    used[v as usize] = true;
                }
            }
        }
        assert!(seen.iter().all(|&s| s));
        assert!(es.n_colors() < 40, "{}", es.n_colors());
    }

    #[test]
    fn rest_data_reproduces_affine_maps() {
        let m = bar();
        let es = ElementSet::new(&m);
        let a = Matrix3::new(1.1, 0.2, -0.3, 0.05, 0.9, 0.1, 0.0, -0.2, 1.3);
        let x: Vec<_> = m
            .positions
            .iter()
            .map(|p| a * p + Vector3::new(1.0, 2.0, 3.0))
            .collect();
        for e in 0..es.len() {
            assert!((es.deformation_gradient(e, &x) - a).norm() < 1e-12);
            let g = &es.grad[e];
            assert!((g[0] + g[1] + g[2] + g[3]).norm() < 1e-9);
        }
        assert!((es.volume.iter().sum::<f64>() - m.volume()).abs() < 1e-12);
    }
}
