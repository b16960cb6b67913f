//! The matrix halves the Eisenstat sweeps read, in an order whose parts sweep side by side.
//!
//! **Parts and a separator.** The rows are put in the order of one level of nested
//! dissection (`partition`): `K` parts, no block coupling two of them, then a separator
//! holding every row coupled to more than one. `K` follows the matrix's size only
//! ([`parts_for`]), never the thread count. In that order `L` (the strictly lower blocks)
//! has no block between two parts, so the forward sweep `(D + L) w = v` solves the parts'
//! rows independently, then the separator's rows, which read the parts' `w`; the backward
//! sweep solves the separator's rows first, then the parts' independently. The sweeps are
//! exact block SSOR on the reordered matrix, and Eisenstat's trick (`super`) is unchanged:
//! nothing is dropped, only the order of the rows changes, and with it the preconditioner a
//! little (as any reordering does; EXPERIMENTS.md, issue 43, *Two cores that pay*). The
//! separator is a cross-section of the body per cut and runs on one thread.
//!
//! **Storage**, row by row in the sweeps' order and contiguous. A part's row holds `Dᵢ⁻¹`
//! (zero on fixed vertices), then the blocks `Aⱼᵢ = Aᵢⱼᵀ` for `j > i` in its part, with
//! columns relative to the part's first row (stored transposed, so the forward sweep's
//! scatter of `L w` into the later rows of the part is a plain block product), then the same
//! for `j` in the separator, with columns relative to the separator's first row (read by the
//! backward sweep only). A separator row holds `Dᵢ⁻¹`, the blocks `Aⱼᵢ` for `j > i` (all in
//! the separator), then the blocks `Aᵢⱼ` for `j < i`, with columns in the sweeps' order:
//! its forward sweep gathers `(L w)ᵢ` instead of receiving it from scatters, so that parts
//! sweeping side by side never write the same row.

use super::super::par::{SharedMut, PAR_MIN};
use super::super::partition::{partition, parts_for};
use super::super::pcg::invert_block;
use super::super::BlockCsr;
use nalgebra::{Matrix3, Vector3};
use rayon::prelude::*;

/// Smallest compact copy (bytes of blocks) whose backward sweep prefetches. The sweep walks
/// the rows from the last to the first, each row's blocks upwards in memory, and on the 20k
/// bench bar (a copy of 2.3 MB) `perf annotate` put a fifth of the solve's samples on its
/// first block load: it waited for memory. Below ~1 MiB the copy stays in the caches, so
/// the threshold is the tangent scatter's (`fem::elements`), not measured again here
/// (EXPERIMENTS.md, issue 18, *The rotations four at a time*).
const PREFETCH_MIN_BYTES: usize = 1 << 20;

/// How many rows ahead of the one it solves the backward sweep asks for the blocks.
const BACKWARD_PREFETCH_ROWS: usize = 3;

/// What the sweeps read (see the module notes).
#[derive(Debug, Clone, Default)]
pub struct Sweeps {
    /// Row pointers and diagonal slots of the pattern the offsets were built for.
    row_ptr: Vec<u32>,
    diag: Vec<u32>,
    /// The sweeps' order: position `ii` is row `perm[ii]`, row `i` is at `inv[i]`.
    perm: Vec<u32>,
    inv: Vec<u32>,
    /// Part `k < K` owns positions `bounds[k]..bounds[k + 1]`, the separator
    /// `bounds[K]..bounds[K + 1]`.
    bounds: Vec<usize>,
    /// Position `ii` owns `blocks[start[ii]..start[ii + 1]]` and the same range of `cols`:
    /// `Dᵢ⁻¹` at `start[ii]`, the first list up to `mid[ii]`, the second up to
    /// `start[ii + 1]` (see the module notes).
    start: Vec<u32>,
    mid: Vec<u32>,
    cols: Vec<u32>,
    /// Where each stored block comes from in the pattern's values, and whether it is stored
    /// transposed.
    source: Vec<(u32, bool)>,
    blocks: Vec<Matrix3<f64>>,
    /// Whether the backward sweep asks for the blocks of the rows ahead (blocks larger than
    /// the L2 cache, see [`PREFETCH_MIN_BYTES`]).
    pub(super) prefetch: bool,
    /// A number of parts that replaces [`parts_for`] (tests).
    pub(super) parts: Option<usize>,
}

/// One position's blocks: `Dᵢ⁻¹`, then two lists with their columns (see the module notes:
/// for a part's row, its later rows in the part and in the separator; for a separator row,
/// its later rows and its earlier ones).
pub struct Row<'a> {
    pub d_inv: &'a Matrix3<f64>,
    pub first: &'a [Matrix3<f64>],
    pub first_cols: &'a [u32],
    pub second: &'a [Matrix3<f64>],
    pub second_cols: &'a [u32],
}

impl Sweeps {
    /// Copies `D⁻¹` and the blocks of `a` in the sweeps' order (the order and the offsets
    /// are made again only when the pattern's rows differ from the last one's: once per
    /// body).
    pub fn load(&mut self, a: &BlockCsr, fixed: &[bool]) {
        let p = &*a.pattern;
        if self.start.is_empty() || self.row_ptr != p.row_ptr || self.diag != p.diag {
            self.layout(a);
        }
        let values = &a.values;
        let (start, source) = (&self.start, &self.source);
        let blocks = SharedMut(self.blocks.as_mut_ptr());
        let load_row = |(ii, &i): (usize, &u32)| {
            let (o, e) = (start[ii] as usize, start[ii + 1] as usize);
            // SAFETY: position `ii` owns `blocks[o..e]` (the offsets grow), which is within
            // the copy: each position writes its own blocks.
            let row = unsafe { std::slice::from_raw_parts_mut(blocks.ptr().add(o), e - o) };
            row[0] = if fixed[i as usize] {
                Matrix3::zeros()
            } else {
                invert_block(&values[p.diag[i as usize] as usize])
            };
            for (dst, &(slot, transposed)) in row[1..].iter_mut().zip(&source[o + 1..e]) {
                let v = &values[slot as usize];
                *dst = if transposed { v.transpose() } else { *v };
            }
        };
        // A copy (no sums): the same values whichever thread copies a row.
        if self.perm.len() < PAR_MIN {
            self.perm.iter().enumerate().for_each(load_row);
        } else {
            self.perm
                .par_iter()
                .with_min_len(256)
                .enumerate()
                .for_each(load_row);
        }
    }

    /// The order, the offsets and the sources of a new pattern.
    fn layout(&mut self, a: &BlockCsr) {
        let p = &*a.pattern;
        let n = p.n_rows();
        // Balance the parts by stored upper blocks (what a sweep reads), one per diagonal.
        let work: Vec<usize> = (0..n)
            .map(|i| (p.row_ptr[i + 1] - p.diag[i]) as usize)
            .collect();
        let k = self.parts.unwrap_or_else(|| parts_for(n));
        let (perm, bounds) = partition(p, &work, k);
        self.inv = vec![0; n];
        for (ii, &i) in perm.iter().enumerate() {
            self.inv[i as usize] = ii as u32;
        }
        self.perm = perm;
        self.bounds = bounds;
        self.start.clear();
        self.mid.clear();
        self.cols.clear();
        self.source.clear();
        let sep = self.separator().start;
        for group in 0..=self.n_parts() {
            let (lo, hi) = (self.bounds[group], self.bounds[group + 1]);
            let is_sep = group == self.n_parts();
            for ii in lo..hi {
                let i = self.perm[ii] as usize;
                self.start.push(self.cols.len() as u32);
                // `D⁻¹` first (its source is the diagonal, read through `invert_block`).
                self.cols.push(ii as u32);
                self.source.push((p.diag[i], false));
                let slots = p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize;
                let inv = &self.inv;
                let pos = |slot: usize| inv[p.cols[slot] as usize] as usize;
                // Later rows of the group, transposed, relative to the group's first row.
                for slot in slots.clone().filter(|&s| pos(s) > ii && pos(s) < hi) {
                    self.cols.push((pos(slot) - lo) as u32);
                    self.source.push((slot as u32, true));
                }
                self.mid.push(self.cols.len() as u32);
                if is_sep {
                    // Earlier rows, as they are, in the sweeps' order.
                    for slot in slots.filter(|&s| pos(s) < ii) {
                        self.cols.push(pos(slot) as u32);
                        self.source.push((slot as u32, false));
                    }
                } else {
                    // Rows in the separator, transposed, relative to its first row.
                    for slot in slots.filter(|&s| pos(s) >= sep) {
                        self.cols.push((pos(slot) - sep) as u32);
                        self.source.push((slot as u32, true));
                    }
                }
            }
        }
        self.start.push(self.cols.len() as u32);
        self.blocks = vec![Matrix3::zeros(); self.cols.len()];
        self.prefetch =
            self.blocks.len() * std::mem::size_of::<Matrix3<f64>>() >= PREFETCH_MIN_BYTES;
        self.row_ptr.clone_from(&p.row_ptr);
        self.diag.clone_from(&p.diag);
    }

    /// The row at each position of the sweeps' order.
    pub fn perm(&self) -> &[u32] {
        &self.perm
    }

    /// The number of parts (without the separator).
    pub fn n_parts(&self) -> usize {
        self.bounds.len() - 2
    }

    /// The positions of part `k`.
    pub fn part(&self, k: usize) -> std::ops::Range<usize> {
        self.bounds[k]..self.bounds[k + 1]
    }

    /// The positions of the separator (empty for one part).
    pub fn separator(&self) -> std::ops::Range<usize> {
        let k = self.n_parts();
        self.bounds[k]..self.bounds[k + 1]
    }

    /// Position `ii`'s blocks.
    #[inline(always)]
    pub fn row(&self, ii: usize) -> Row<'_> {
        let (s, m, e) = (
            self.start[ii] as usize,
            self.mid[ii] as usize,
            self.start[ii + 1] as usize,
        );
        Row {
            d_inv: &self.blocks[s],
            first: &self.blocks[s + 1..m],
            first_cols: &self.cols[s + 1..m],
            second: &self.blocks[m..e],
            second_cols: &self.cols[m..e],
        }
    }

    /// A hint to load the cache lines of position `ii`'s blocks; no effect on results.
    #[inline(always)]
    fn prefetch_row(&self, ii: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let (s, e) = (self.start[ii] as usize, self.start[ii + 1] as usize);
            let first = self.blocks[s..e].as_ptr().cast::<i8>();
            let bytes = (e - s) * std::mem::size_of::<Matrix3<f64>>();
            let mut offset = 0;
            while offset < bytes {
                // SAFETY: SSE is part of the x86-64 baseline, and a prefetch reads nothing
                // and never faults, whatever the address.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(offset)) };
                offset += 64;
            }
            // The last line, which the 64-byte steps miss when the row starts mid-line.
            // SAFETY: as above.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(bytes - 1)) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = ii;
    }
}

/// The vectors of one group's positions, as slices of that group (index 0 is its first
/// position).
pub struct PartVectors<'a> {
    pub fixed: &'a [bool],
    pub d: &'a [Matrix3<f64>],
    pub r: &'a [Vector3<f64>],
    pub rh: &'a mut [Vector3<f64>],
    pub z: &'a mut [Vector3<f64>],
    pub p: &'a mut [Vector3<f64>],
    pub t: &'a mut [Vector3<f64>],
    pub q: &'a mut [Vector3<f64>],
    pub w: &'a mut [Vector3<f64>],
    pub acc: &'a mut [Vector3<f64>],
}

crate::isa::avx2_or_baseline! {
    /// The backward sweep over `rows` (a part's with the separator's `t` in `t_sep`, solved
    /// before; or the separator's, with `None`): `p̂ = ẑ + β p̂`, then `(D + U) t = p̂` from
    /// the last row up, keeping each row's gathered `(U t)ᵢ` in `q`.
    pub fn backward(
        sw: &Sweeps,
        rows: std::ops::Range<usize>,
        v: PartVectors<'_>,
        t_sep: Option<&[Vector3<f64>]>,
        beta: f64,
    ) {
        let lo = rows.start;
        let (fixed, z, p, t, q) = (v.fixed, &*v.z, v.p, v.t, v.q);
        for i in (0..rows.len()).rev() {
            if sw.prefetch && i >= BACKWARD_PREFETCH_ROWS {
                sw.prefetch_row(lo + i - BACKWARD_PREFETCH_ROWS);
            }
            if fixed[i] {
                continue;
            }
            let pi = z[i] + beta * p[i];
            p[i] = pi;
            let row = sw.row(lo + i);
            let mut ut = Vector3::zeros();
            for (block, &j) in row.first.iter().zip(row.first_cols) {
                ut += block.tr_mul(&t[j as usize]);
            }
            if let Some(t_sep) = t_sep {
                for (block, &j) in row.second.iter().zip(row.second_cols) {
                    ut += block.tr_mul(&t_sep[j as usize]);
                }
            }
            t[i] = row.d_inv * (pi - ut);
            q[i] = ut;
        }
    }
}

crate::isa::avx2_or_baseline! {
    /// Part `k`'s forward sweep: `(D + L) w = q` from its first row down (the sums `(L w)ᵢ`
    /// scattered into `acc`), `w` kept for the separator, `q = Â p̂ = t + w`; returns the
    /// part's `p̂ᵀ Â p̂`. With `r` for `q`, `rh` for `w` and `ẑ = D r̂` for `q` it is the
    /// sweep of `r̂ = E⁻¹ r` ([`replace`]).
    pub fn forward(sw: &Sweeps, rows: std::ops::Range<usize>, v: PartVectors<'_>) -> f64 {
        let lo = rows.start;
        let (fixed, p, t, q, w, acc) = (v.fixed, &*v.p, &*v.t, v.q, v.w, v.acc);
        let mut pq = 0.0;
        for i in 0..rows.len() {
            if fixed[i] {
                acc[i] = Vector3::zeros();
                continue;
            }
            let row = sw.row(lo + i);
            let wi = row.d_inv * (q[i] - acc[i]);
            acc[i] = Vector3::zeros();
            w[i] = wi;
            let qi = t[i] + wi;
            q[i] = qi;
            pq += p[i].dot(&qi);
            for (block, &j) in row.first.iter().zip(row.first_cols) {
                acc[j as usize] += block * wi;
            }
        }
        pq
    }
}

crate::isa::avx2_or_baseline! {
    /// The separator's forward sweep, after the parts': `wᵢ = Dᵢ⁻¹ (qᵢ − Σⱼ₍ⱼ₎ Aᵢⱼ wⱼ)`
    /// gathered over its earlier rows (`w_all`, the whole `w` in the sweeps' order: the
    /// parts' and the separator's rows before this one), `q = t + w`; returns the
    /// separator's `p̂ᵀ Â p̂`.
    pub fn forward_separator(
        sw: &Sweeps,
        fixed: &[bool],
        p: &[Vector3<f64>],
        t: &[Vector3<f64>],
        q: &mut [Vector3<f64>],
        w_all: &mut [Vector3<f64>],
    ) -> f64 {
        let rows = sw.separator();
        let lo = rows.start;
        let mut pq = 0.0;
        for ii in rows {
            if fixed[ii] {
                continue;
            }
            let row = sw.row(ii);
            let mut lw = Vector3::zeros();
            for (block, &j) in row.second.iter().zip(row.second_cols) {
                lw += block * w_all[j as usize];
            }
            let wi = row.d_inv * (q[ii - lo] - lw);
            w_all[ii] = wi;
            let qi = t[ii] + wi;
            q[ii - lo] = qi;
            pq += p[ii].dot(&qi);
        }
        pq
    }
}

crate::isa::avx2_or_baseline! {
    /// Part `k`'s `r̂ = E⁻¹ r` (its forward sweep) and `ẑ = D r̂`; returns the part's
    /// `r̂ᵀ ẑ`.
    pub fn replace(sw: &Sweeps, rows: std::ops::Range<usize>, v: PartVectors<'_>) -> f64 {
        let lo = rows.start;
        let (fixed, d, r, rh, z, acc) = (v.fixed, v.d, v.r, v.rh, v.z, v.acc);
        let mut rz = 0.0;
        for i in 0..rows.len() {
            if fixed[i] {
                acc[i] = Vector3::zeros();
                rh[i] = Vector3::zeros();
                z[i] = Vector3::zeros();
                continue;
            }
            let row = sw.row(lo + i);
            let yi = row.d_inv * (r[i] - acc[i]);
            acc[i] = Vector3::zeros();
            rh[i] = yi;
            let zi = d[i] * yi;
            z[i] = zi;
            rz += yi.dot(&zi);
            for (block, &j) in row.first.iter().zip(row.first_cols) {
                acc[j as usize] += block * yi;
            }
        }
        rz
    }
}

crate::isa::avx2_or_baseline! {
    /// The separator's `r̂ = E⁻¹ r` after the parts' (gathered over its earlier rows of
    /// `rh_all`) and `ẑ = D r̂`; returns its `r̂ᵀ ẑ`.
    pub fn replace_separator(
        sw: &Sweeps,
        fixed: &[bool],
        d: &[Matrix3<f64>],
        r: &[Vector3<f64>],
        rh_all: &mut [Vector3<f64>],
        z: &mut [Vector3<f64>],
    ) -> f64 {
        let mut rz = 0.0;
        for ii in sw.separator() {
            if fixed[ii] {
                rh_all[ii] = Vector3::zeros();
                z[ii] = Vector3::zeros();
                continue;
            }
            let row = sw.row(ii);
            let mut ly = Vector3::zeros();
            for (block, &j) in row.second.iter().zip(row.second_cols) {
                ly += block * rh_all[j as usize];
            }
            let yi = row.d_inv * (r[ii] - ly);
            rh_all[ii] = yi;
            let zi = d[ii] * yi;
            z[ii] = zi;
            rz += yi.dot(&zi);
        }
        rz
    }
}
