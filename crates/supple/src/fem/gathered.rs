//! The rotated linear stiffness `Σ_e R_e K_e R_eᵀ` (Müller et al. 2002 eq. 9 with each
//! element's own rotation; Hauth & Straßer 2004 §4.4) assembled slot by slot: every block of
//! the matrix gathers the contributions of the elements that share it and is written once.
//!
//! **The block.** For the linear isotropic tet with shape gradients `g_a`, rest volume `V` and
//! `h_a = R g_a` (see `material::add_rotated_linear_blocks`):
//! `K_ab = V [μ (g_a·g_b) I + μ h_b h_aᵀ + λ h_a h_bᵀ]`. With `ĥ_a = √V h_a` stored per element
//! the rotated part of slot `(i, j)` is `μ Sᵀ + λ S` with `S = Σ ĥ_a ĥ_bᵀ` over its
//! contributions (one outer product each), and the isotropic part `μ (Σ V g_a·g_b) I` does not
//! depend on the rotations, so its sum is kept from the rest state.
//!
//! **Why gather.** The element loop (`ElementSet::scatter_blocks`) adds 16 blocks per element
//! into slots scattered over a matrix larger than the L2 cache: on the 20k-tet bar that
//! read-modify-write alone took 1.0 ms of a 2.3 ms assembly (EXPERIMENTS.md, issue 18, session
//! 19, `assembly_20k`). Here each slot is read from `ĥ` (96 bytes per element, read in element
//! order within a slot) and written once, in slot order; the slots are independent, so they
//! run in parallel with no colouring, and each slot sums its contributions in element order,
//! so the result does not depend on the thread count. Measured (EXPERIMENTS.md, issue 18,
//! session 20): 4.17 → 2.84 ms on the 20k bar on one thread, and 61 → 22–27 ms of assembly
//! on the 160k bar, where the scatter's 16 read-modify-writes per element went to a 35 MB
//! matrix. Computing only the upper triangle and writing each block's transpose too was
//! measured slower (the transposed writes are scattered read-modify-writes again).

use super::ElementSet;
use crate::fem::material::Lame;
use crate::linalg::{par, BlockCsr};
use nalgebra::{Matrix3, Vector3};
use rayon::prelude::*;
use std::sync::Mutex;

/// Slots per call of [`gather_run`] (and per parallel task).
const RUN: usize = 256;

/// The slot-by-slot assembler of the rotated linear stiffness of one element set (module
/// notes). Built once per body; holds its own workspace.
#[derive(Debug)]
pub struct RotatedLinearBlocks {
    /// Slot `s` sums the contributions `ptr[s]..ptr[s + 1]`.
    ptr: Vec<usize>,
    /// Contribution `c`: element `elem[c]`, local block `(pair[c] >> 2, pair[c] & 3)`; within
    /// a slot in increasing element order.
    elem: Vec<u32>,
    pair: Vec<u8>,
    /// `Σ V g_a·g_b` over each slot's contributions (the isotropic part's geometry).
    iso: Vec<f64>,
    /// `ĥ_a = √V R g_a` of each element, filled by every [`add`](Self::add).
    scaled: Mutex<Vec<[Vector3<f64>; 4]>>,
}

impl Clone for RotatedLinearBlocks {
    fn clone(&self) -> Self {
        let scaled = self
            .scaled
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        Self {
            ptr: self.ptr.clone(),
            elem: self.elem.clone(),
            pair: self.pair.clone(),
            iso: self.iso.clone(),
            scaled: Mutex::new(scaled),
        }
    }
}

impl RotatedLinearBlocks {
    /// The contributions of every slot of `elems.pattern`, from the elements' scatter maps.
    pub fn new(elems: &ElementSet) -> Self {
        let slots = elems.pattern.cols.len();
        let mut ptr = vec![0usize; slots + 1];
        for map in &elems.scatter {
            for &s in map {
                ptr[s as usize + 1] += 1;
            }
        }
        for s in 0..slots {
            ptr[s + 1] += ptr[s];
        }
        let mut next = ptr.clone();
        let mut elem = vec![0u32; ptr[slots]];
        let mut pair = vec![0u8; ptr[slots]];
        let mut iso = vec![0.0; slots];
        for (e, map) in elems.scatter.iter().enumerate() {
            let g = &elems.grad[e];
            for (k, &s) in map.iter().enumerate() {
                let s = s as usize;
                let c = next[s];
                next[s] += 1;
                elem[c] = e as u32;
                pair[c] = k as u8; // 4a + b: a = k >> 2, b = k & 3
                iso[s] += elems.volume[e] * g[k / 4].dot(&g[k % 4]);
            }
        }
        Self {
            ptr,
            elem,
            pair,
            iso,
            scaled: Mutex::new(vec![[Vector3::zeros(); 4]; elems.len()]),
        }
    }

    /// Adds `scale · Σ_e R_e K_e R_eᵀ` (material `lame`, `rotation(e)` the rotation of
    /// element `e`) into `k`, which must be on `elems.pattern`.
    pub fn add(
        &self,
        elems: &ElementSet,
        rotation: impl Fn(usize) -> Matrix3<f64> + Sync,
        lame: Lame,
        scale: f64,
        k: &mut BlockCsr,
    ) {
        assert_eq!(
            k.values.len(),
            self.iso.len(),
            "matrix is not on this element pattern"
        );
        let mut scaled = self.scaled.lock().unwrap_or_else(|e| e.into_inner());
        par::for_each_mut(&mut scaled, |e, h| {
            let (r, g) = (rotation(e), &elems.grad[e]);
            let sv = elems.volume[e].sqrt();
            // Written out, not `g.map(..)`, as in `add_rotated_linear_blocks`.
            *h = [
                sv * (r * g[0]),
                sv * (r * g[1]),
                sv * (r * g[2]),
                sv * (r * g[3]),
            ];
        });
        let scaled = &*scaled;
        let (mu, lambda) = (scale * lame.mu, scale * lame.lambda);
        let run =
            |c: usize, out: &mut [Matrix3<f64>]| gather_run(self, scaled, mu, lambda, c * RUN, out);
        if k.values.len() < par::PAR_MIN {
            k.values
                .chunks_mut(RUN)
                .enumerate()
                .for_each(|(c, o)| run(c, o));
        } else {
            (k.values.par_chunks_mut(RUN).enumerate()).for_each(|(c, o)| run(c, o));
        }
    }
}

crate::isa::avx2_or_baseline! {
    /// Adds the blocks of slots `s0..s0 + out.len()` into `out` (module notes): compiled for
    /// the baseline and for AVX2, chosen at run time ([`crate::isa`]; the same bits).
    fn gather_run(
        blocks: &RotatedLinearBlocks,
        scaled: &[[Vector3<f64>; 4]],
        mu: f64,
        lambda: f64,
        s0: usize,
        out: &mut [Matrix3<f64>],
    ) {
        for (o, block) in out.iter_mut().enumerate() {
            let s = s0 + o;
            let range = blocks.ptr[s]..blocks.ptr[s + 1];
            // S = Σ ĥ_a ĥ_bᵀ, column-major: S[(i, j)] = sum[3j + i].
            let mut sum = [0.0f64; 9];
            for (&e, &k) in blocks.elem[range.clone()].iter().zip(&blocks.pair[range]) {
                let h = &scaled[e as usize];
                let (x, y) = (&h[usize::from(k >> 2)], &h[usize::from(k & 3)]);
                for j in 0..3 {
                    for i in 0..3 {
                        sum[3 * j + i] += x[i] * y[j];
                    }
                }
            }
            let iso = mu * blocks.iso[s];
            for j in 0..3 {
                for i in 0..3 {
                    let diagonal = if i == j { iso } else { 0.0 };
                    block[(i, j)] += mu * sum[3 * i + j] + lambda * sum[3 * j + i] + diagonal;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fem::material::add_rotated_linear_blocks;
    use crate::fem::material::test_support::{small_mesh, Lcg};
    use nalgebra::Rotation3;

    fn rotations(n: usize, rng: &mut Lcg) -> Vec<Matrix3<f64>> {
        (0..n)
            .map(|_| {
                let (a, b, c) = (rng.uniform(), rng.uniform(), rng.uniform());
                Rotation3::from_euler_angles(1.5 * a, 1.5 * b, 1.5 * c).into_inner()
            })
            .collect()
    }

    /// The element loop's blocks (`add_rotated_linear_blocks` through `scatter_blocks`).
    fn scattered(es: &ElementSet, r: &[Matrix3<f64>], lame: Lame, scale: f64) -> BlockCsr {
        let mut k = BlockCsr::zeros(es.pattern.clone());
        es.scatter_blocks(&mut k, |e, sink| {
            add_rotated_linear_blocks(sink, &es.grad[e], &r[e], es.volume[e], lame, scale)
        });
        k
    }

    /// The same matrix as the element loop, to round-off, for random per-element rotations;
    /// it adds to what the matrix holds; and it is symmetric.
    #[test]
    fn gathers_the_element_loops_matrix() {
        let mut rng = Lcg(21);
        let mesh = small_mesh(&mut rng);
        let es = ElementSet::new(&mesh);
        let lame = Lame::from_youngs_poisson(1e5, 0.3).unwrap();
        let r = rotations(es.len(), &mut rng);
        let blocks = RotatedLinearBlocks::new(&es);
        let reference = scattered(&es, &r, lame, 0.37);
        let mut k = BlockCsr::zeros(es.pattern.clone());
        for v in k.values.iter_mut() {
            *v = Matrix3::from_element(2.0);
        }
        blocks.add(&es, |e| r[e], lame, 0.37, &mut k);
        let scale = reference
            .values
            .iter()
            .map(|b| b.norm())
            .fold(0.0, f64::max);
        let mut worst: f64 = 0.0;
        for (got, want) in k.values.iter().zip(&reference.values) {
            let added = got - Matrix3::from_element(2.0);
            worst = worst.max((added - want).norm());
        }
        assert!(worst <= 1e-13 * scale, "{worst:e} vs {scale:e}");
        let p = &es.pattern;
        for i in 0..p.row_ptr.len() - 1 {
            for s in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
                let t = p.slot(p.cols[s] as usize, i).unwrap();
                let asym = (k.values[s] - k.values[t].transpose()).norm();
                assert!(asym <= 1e-13 * scale, "slot {s}: {asym:e}");
            }
        }
    }

    /// A mesh large enough for the parallel path gives the same bits on one thread and on
    /// two (each slot sums in element order).
    #[test]
    fn same_bits_on_one_and_two_threads() {
        use crate::linalg::test_support::on_threads;
        use crate::mesh::{box_grid, BoxGrid, TetSplit};
        let mesh = box_grid(&BoxGrid {
            cells: [16, 8, 8],
            cell_size: Vector3::repeat(0.1),
            origin: Vector3::zeros(),
            split: TetSplit::Five,
        });
        let es = ElementSet::new(&mesh);
        assert!(es.pattern.cols.len() >= par::PAR_MIN);
        let lame = Lame::from_youngs_poisson(1e5, 0.3).unwrap();
        let r = rotations(es.len(), &mut Lcg(5));
        let blocks = RotatedLinearBlocks::new(&es);
        let on = |threads: usize| {
            on_threads(threads, || {
                let mut k = BlockCsr::zeros(es.pattern.clone());
                blocks.add(&es, |e| r[e], lame, 1.0, &mut k);
                k.values
            })
        };
        let one = on(1);
        assert!(one == on(2));
        let reference = scattered(&es, &r, lame, 1.0);
        let scale = reference
            .values
            .iter()
            .map(|b| b.norm())
            .fold(0.0, f64::max);
        let worst = (one.iter().zip(&reference.values))
            .map(|(a, b)| (a - b).norm())
            .fold(0.0, f64::max);
        assert!(worst <= 1e-13 * scale, "{worst:e} vs {scale:e}");
    }
}
