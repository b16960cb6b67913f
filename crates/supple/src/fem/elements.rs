//! Per-tet rest data (`dm_inv`, rest volume, shape-function gradients), the element colouring,
//! and the deterministic parallel loops that scatter element forces and 4×4 blocks.
//!
//! Determinism and locality: elements are cut into *patches* of [`PATCH`] consecutive
//! elements, and patches are greedily coloured so that no two patches of one colour share a
//! vertex (fenris-paradis colours single elements; patches keep neighbouring elements
//! together, so the matrix is written with cache locality). Colours run one after another;
//! inside a colour patches run in parallel, each patch in element order, writing to
//! disjoint vertices and blocks. Every vertex and block therefore receives its contributions
//! in one fixed order, whatever the number of threads.

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
    /// Patches grouped by colour: colour `c` is `patches[color_ptr[c]..color_ptr[c + 1]]`;
    /// patch `p` holds elements `p·PATCH .. min((p+1)·PATCH, len)`.
    patches: Vec<u32>,
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
        let (patches, color_ptr) = color_patches(n, &mesh.tets);
        let (pattern, scatter) = BlockPattern::from_tets(n, &mesh.tets);
        Self {
            tets: mesh.tets.clone(),
            dm_inv,
            volume,
            grad,
            patches,
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
    #[inline(always)]
    pub fn deformation_gradient(&self, e: usize, x: &[Vector3<f64>]) -> Matrix3<f64> {
        // Written out, not `.map(..)`: `map` is not inlined into the AVX2 copies.
        let t = &self.tets[e];
        let (a, b, c, d) = (
            x[t[0] as usize],
            x[t[1] as usize],
            x[t[2] as usize],
            x[t[3] as usize],
        );
        Matrix3::from_columns(&[b - a, c - a, d - a]) * self.dm_inv[e]
    }

    /// Forces `f_a = −V · P · grad_a` of a first Piola–Kirchhoff stress `P` on element `e`.
    #[inline(always)]
    pub fn stress_forces(&self, e: usize, p: &Matrix3<f64>) -> [Vector3<f64>; 4] {
        let (v, g) = (self.volume[e], &self.grad[e]);
        [
            -v * (p * g[0]),
            -v * (p * g[1]),
            -v * (p * g[2]),
            -v * (p * g[3]),
        ]
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

    /// Lets `element_blocks(e, sink)` add 3×3 blocks of element `e` into `k` through the
    /// scatter map (see [`ElementBlocks`]).
    pub fn scatter_blocks<F>(&self, k: &mut BlockCsr, element_blocks: F)
    where
        F: Fn(usize, &mut ElementBlocks) + Sync,
    {
        // Below ~1 MiB of blocks the matrix stays in cache and the hints only cost.
        let large = k.values.len() * std::mem::size_of::<Matrix3<f64>>() >= PREFETCH_MIN_BYTES;
        self.scatter_blocks_with(k, element_blocks, large);
    }

    /// [`ElementSet::scatter_blocks`], with or without the prefetch (the same bits).
    #[inline(always)]
    fn scatter_blocks_with<F>(&self, k: &mut BlockCsr, element_blocks: F, prefetch: bool)
    where
        F: Fn(usize, &mut ElementBlocks) + Sync,
    {
        assert_eq!(
            k.values.len(),
            self.pattern.n_blocks(),
            "matrix is not on this element pattern"
        );
        let out = SharedMut(k.values.as_mut_ptr());
        self.for_each_colored(|e| {
            // The blocks are read-modify-written at scattered places of a matrix larger than
            // the L2 cache: ask for the next element's while this one's are computed.
            if let Some(next) = self.scatter.get(e + 1).filter(|_| prefetch) {
                for &k in next {
                    prefetch_block(out.ptr().wrapping_add(k as usize));
                }
            }
            let mut sink = ElementBlocks {
                values: out.ptr(),
                map: &self.scatter[e],
            };
            element_blocks(e, &mut sink);
        });
    }

    /// Deterministic `Σ_e term(e)` (used for energies and volumes; see [`par::sum_auto`]).
    pub fn sum(&self, term: impl Fn(usize) -> f64 + Sync) -> f64 {
        par::sum_auto(self.len(), term)
    }

    /// Runs `body(e)` for every element, colour by colour, in parallel inside a colour.
    fn for_each_colored(&self, body: impl Fn(usize) + Sync) {
        let parallel = self.len() >= par::PAR_MIN;
        let n = self.len();
        let run_patch = |&p: &u32| {
            let start = p as usize * PATCH;
            (start..(start + PATCH).min(n)).for_each(&body);
        };
        for c in 0..self.n_colors() {
            let patches = &self.patches[self.color_ptr[c]..self.color_ptr[c + 1]];
            if parallel {
                patches.par_iter().for_each(run_patch);
            } else {
                patches.iter().for_each(run_patch);
            }
        }
    }
}

/// A hint to load the cache lines of the 3×3 block at `p` (72 bytes: its first and last byte's
/// lines); no effect on results, nothing dereferenced.
#[inline(always)]
fn prefetch_block(p: *const Matrix3<f64>) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let bytes = p.cast::<i8>();
        let last = bytes.wrapping_add(std::mem::size_of::<Matrix3<f64>>() - 1);
        // SAFETY: SSE is part of the x86-64 baseline, and a prefetch reads nothing and never
        // faults, whatever the address.
        unsafe {
            _mm_prefetch::<_MM_HINT_T0>(bytes);
            _mm_prefetch::<_MM_HINT_T0>(last);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// Where one element's 3×3 blocks go: block `(a, b)` couples local vertex `a` to `b`.
pub struct ElementBlocks<'a> {
    values: *mut Matrix3<f64>,
    map: &'a [u32; 16],
}

impl ElementBlocks<'_> {
    /// Adds `m` to block `(a, b)` (`a, b < 4`).
    #[inline(always)]
    pub fn add(&mut self, a: usize, b: usize, m: &Matrix3<f64>) {
        // SAFETY: `ElementBlocks` is only made by `scatter_blocks`, on the pattern the map
        // belongs to, and elements of one colour share no vertex, hence no block.
        unsafe { *self.values.add(self.map[4 * a + b] as usize) += m };
    }

    /// Adds `m` to block `(a, b)` and `mᵀ` to block `(b, a)` (once when `a = b`).
    #[inline(always)]
    pub fn add_symmetric(&mut self, a: usize, b: usize, m: &Matrix3<f64>) {
        self.add(a, b, m);
        if a != b {
            self.add(b, a, &m.transpose());
        }
    }
}

/// Smallest matrix (bytes of blocks) whose element scatter prefetches the next element's
/// blocks: measured to pay on the 20k- and 160k-tet bench bars (several MB of blocks), to
/// cost on the 450-tet one (EXPERIMENTS.md, issue 18, *The tangent's scatter prefetches*).
const PREFETCH_MIN_BYTES: usize = 1 << 20;

/// Elements per patch (consecutive indices) in the coloured element loops.
pub const PATCH: usize = 64;

/// Greedy colouring of patches: each patch, in index order, takes the smallest colour unused
/// by the earlier patches it shares a vertex with. Returns patches grouped by colour (in
/// index order inside a colour) and the colour offsets.
fn color_patches(n_vertices: usize, tets: &[[u32; 4]]) -> (Vec<u32>, Vec<usize>) {
    let n_patches = tets.len().div_ceil(PATCH);
    let mut vertex_patches: Vec<Vec<u32>> = vec![Vec::new(); n_vertices];
    for (e, t) in tets.iter().enumerate() {
        for &v in t {
            let list = &mut vertex_patches[v as usize];
            let p = (e / PATCH) as u32;
            if list.last() != Some(&p) {
                list.push(p);
            }
        }
    }
    let mut color = vec![u32::MAX; n_patches];
    let mut mark: Vec<usize> = Vec::new(); // mark[c] == p + 1: colour c is taken for patch p
    let mut n_colors = 0usize;
    for p in 0..n_patches {
        for t in &tets[p * PATCH..((p + 1) * PATCH).min(tets.len())] {
            for &v in t {
                for &o in &vertex_patches[v as usize] {
                    let c = color[o as usize];
                    if c != u32::MAX {
                        mark[c as usize] = p + 1;
                    }
                }
            }
        }
        let c = (0..n_colors)
            .find(|&c| mark[c] != p + 1)
            .unwrap_or_else(|| {
                mark.push(0);
                n_colors += 1;
                n_colors - 1
            });
        color[p] = c as u32;
    }
    let mut color_ptr = vec![0usize; n_colors + 1];
    for &c in &color {
        color_ptr[c as usize + 1] += 1;
    }
    for c in 0..n_colors {
        color_ptr[c + 1] += color_ptr[c];
    }
    let mut fill = color_ptr.clone();
    let mut patches = vec![0u32; n_patches];
    for (p, &c) in color.iter().enumerate() {
        patches[fill[c as usize]] = p as u32;
        fill[c as usize] += 1;
    }
    (patches, color_ptr)
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
            for &p in &es.patches[es.color_ptr[c]..es.color_ptr[c + 1]] {
                let mut patch_vertices: Vec<u32> = Vec::new();
                let range = p as usize * PATCH..((p as usize + 1) * PATCH).min(m.n_tets());
                for (s, t) in seen[range.clone()].iter_mut().zip(&m.tets[range]) {
                    assert!(!*s);
                    *s = true;
                    patch_vertices.extend(t);
                }
                patch_vertices.sort_unstable();
                patch_vertices.dedup();
                for v in patch_vertices {
                    assert!(
                        !used[v as usize],
                        "colour {c} touches vertex {v} from two patches"
                    );
                    used[v as usize] = true;
                }
            }
        }
        assert!(seen.iter().all(|&s| s));
        assert!(
            es.n_colors() >= 2 && es.n_colors() < 40,
            "{}",
            es.n_colors()
        );
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

    /// The prefetch is a hint: with and without it the scatter writes the same matrix (on
    /// a small bar, where `scatter_blocks` itself would not prefetch).
    #[test]
    fn prefetching_the_blocks_changes_no_value() {
        let es = ElementSet::new(&bar());
        let mut a = BlockCsr::zeros(es.pattern.clone());
        let mut b = BlockCsr::zeros(es.pattern.clone());
        let blocks = |e: usize, sink: &mut ElementBlocks| {
            for i in 0..4 {
                for j in 0..4 {
                    let m = Matrix3::from_fn(|r, c| (e + 3 * i + j + r * c) as f64);
                    sink.add(i, j, &m);
                }
            }
        };
        es.scatter_blocks_with(&mut a, blocks, true);
        es.scatter_blocks_with(&mut b, blocks, false);
        assert!(a.values.iter().any(|m| m.norm() > 0.0));
        assert!(a.values == b.values);
    }

    /// Cost per element of the corotational tangent's scatter (zeroing included), kernel
    /// outlined or inlined, with and without the prefetch, interleaved in one process on
    /// the 20k and 160k bench bars. Run with `cargo test --release -p supple --lib
    /// elements::tests::time_rotated_blocks -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn time_rotated_blocks() {
        use crate::fem::material::{add_rotated_linear_blocks, test_support::Lcg, Lame};
        let lame = Lame::from_youngs_poisson(1e5, 0.33).unwrap();
        for cells in [[40, 10, 10], [80, 20, 20]] {
            let m = box_grid(&BoxGrid {
                cells,
                cell_size: Vector3::repeat(1.0 / cells[0] as f64),
                origin: Vector3::zeros(),
                split: TetSplit::Five,
            });
            let es = ElementSet::new(&m);
            let mut lcg = Lcg(3);
            let rot: Vec<Matrix3<f64>> = (0..es.len())
                .map(|_| {
                    let w = 0.3 * lcg.vec3();
                    nalgebra::Rotation3::new(w).into_inner()
                })
                .collect();
            let mut k = BlockCsr::zeros(es.pattern.clone());
            let mut run = |prefetch: bool| {
                let t = std::time::Instant::now();
                k.set_zero();
                es.scatter_blocks_with(
                    &mut k,
                    |e, sink| {
                        add_rotated_linear_blocks(
                            sink,
                            &es.grad[e],
                            &rot[e],
                            es.volume[e],
                            lame,
                            1e-4,
                        )
                    },
                    prefetch,
                );
                (
                    t.elapsed().as_secs_f64() * 1e9 / es.len() as f64,
                    k.values.clone(),
                )
            };
            let reference = run(false).1;
            let mut ns = [[0.0; 41]; 2];
            for round in 0..41 {
                for (v, ns) in ns.iter_mut().enumerate() {
                    let (t, values) = run(v == 1);
                    // The prefetch changes no result.
                    assert!(values == reference, "variant {v} changed the matrix");
                    ns[round] = t;
                }
            }
            for (v, ns) in ns.iter_mut().enumerate() {
                ns.sort_by(f64::total_cmp);
                println!(
                    "{} tets, {:.1} MB of blocks, prefetch {}: {:.1} ns per element (median of 41; lower quartile {:.1}, min {:.1})",
                    es.len(),
                    (k.values.len() * std::mem::size_of::<Matrix3<f64>>()) as f64 * 1e-6,
                    v == 1,
                    ns[20],
                    ns[10],
                    ns[0]
                );
            }
        }
    }
}
