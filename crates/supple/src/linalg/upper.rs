//! The product with a symmetric block matrix from its upper triangle alone, for the
//! conjugate-gradient loop on systems small enough to run on one thread.
//!
//! CG's matrix is symmetric, so `A = D + U + Uᵀ` and `q = A p` is, row by row,
//! `qᵢ += Dᵢ pᵢ + Σ_{j>i} Aᵢⱼ pⱼ` (a gather over the row's upper blocks) and `qⱼ += Aᵢⱼᵀ pᵢ`
//! for `j > i` (a scatter of the same blocks) — every stored block is read once for two block
//! products. Keeping the upper blocks in a compact array of their own halves the bytes one
//! product reads. A body of ~2 500 vertices (10k tets) has ~30 k blocks: 2.1 MB in full,
//! 1.2 MB as its upper half, which fits the 2 MB second-level cache of the machine of
//! EXPERIMENTS.md where the full matrix does not (the CG products of
//! `scenes/bench/contact_10k.toml` were more than half its CPU time). The scatter writes
//! other rows, so the product is sequential; CG uses it only below
//! [`super::par::VEC_PAR_MIN`] vertices, where the full product is sequential too, so the
//! bits never depend on the thread count.
//!
//! Rows are visited in increasing order, and `qᵢ` receives its scatters from the rows above
//! it before its own gather, so it is complete once row `i` is done: `p·q` is summed in the
//! same pass. A fixed row has `pᵢ = 0` (CG keeps `p` zero there) and its `qᵢ` is never read,
//! so it is skipped.

use super::par;
use super::{BlockCsr, BlockPattern};
use nalgebra::{Matrix3, Vector3};

/// The upper blocks (diagonal first in each row) of the last matrix loaded.
#[derive(Debug, Clone, Default)]
pub(super) struct UpperHalf {
    /// Row pointers and diagonal slots of the pattern `start` was built for.
    row_ptr: Vec<u32>,
    diag: Vec<u32>,
    /// Row `i` owns `values[start[i]..start[i + 1]]`, whose columns are the pattern's
    /// `cols[diag[i]..row_ptr[i + 1]]`.
    start: Vec<u32>,
    values: Vec<Matrix3<f64>>,
}

impl UpperHalf {
    /// Copies the upper blocks of `a` (the row offsets are made again only when the
    /// pattern's rows differ from the last one's: once per body).
    pub(super) fn load(&mut self, a: &BlockCsr) {
        let p = &*a.pattern;
        if self.start.is_empty() || self.row_ptr != p.row_ptr || self.diag != p.diag {
            self.start.clear();
            self.start.push(0);
            let mut total = 0u32;
            for i in 0..p.n_rows() {
                total += p.row_ptr[i + 1] - p.diag[i];
                self.start.push(total);
            }
            self.values = vec![Matrix3::zeros(); total as usize];
            self.row_ptr.clone_from(&p.row_ptr);
            self.diag.clone_from(&p.diag);
        }
        for i in 0..p.n_rows() {
            let (s, e) = (p.diag[i] as usize, p.row_ptr[i + 1] as usize);
            let o = self.start[i] as usize;
            self.values[o..o + e - s].copy_from_slice(&a.values[s..e]);
        }
    }

    /// `q = A p` on the free rows (other rows of `q` are left unspecified) for the matrix last
    /// loaded on `pattern`, with `p` zero on fixed rows; returns `p·q` over the free rows,
    /// summed per [`par::CHUNK`] rows and then in chunk order (`partials` needs
    /// [`par::n_chunks`] entries).
    pub(super) fn mul_dot(
        &self,
        pattern: &BlockPattern,
        p: &[Vector3<f64>],
        q: &mut [Vector3<f64>],
        fixed: &[bool],
        partials: &mut [f64],
    ) -> f64 {
        let n = p.len();
        q.fill(Vector3::zeros());
        for (c, partial) in partials[..par::n_chunks(n)].iter_mut().enumerate() {
            let mut pq = 0.0;
            for i in c * par::CHUNK..((c + 1) * par::CHUNK).min(n) {
                if fixed[i] {
                    continue;
                }
                let pi = p[i];
                let (s, e) = (self.start[i] as usize, self.start[i + 1] as usize);
                let cols = &pattern.cols[pattern.diag[i] as usize..];
                let mut acc = self.values[s] * pi;
                for (k, block) in self.values[s + 1..e].iter().enumerate() {
                    let j = cols[k + 1] as usize;
                    acc += block * p[j];
                    q[j] += block.tr_mul(&pi);
                }
                q[i] += acc;
                pq += pi.dot(&q[i]);
            }
            *partial = pq;
        }
        partials[..par::n_chunks(n)].iter().sum()
    }

    /// Symmetric block Gauss–Seidel `z = M⁻¹ r`, `M = (D + L) D⁻¹ (D + U)` with `L = Uᵀ`
    /// (see `linalg::ssor`), from the upper half: the forward sweep `(D + L) y = r` visits
    /// the rows in order and scatters each finished `yᵢ` down its column of `L` (the row of
    /// `U`) into `acc`, the backward sweep `zᵢ = yᵢ − Dᵢ⁻¹ Σ_{j>i} Aᵢⱼ zⱼ` gathers along the
    /// rows of `U`. Each sweep reads the upper blocks once. `d_inv` are the inverse diagonal
    /// blocks; fixed rows of `z` are zero; `acc` is scratch of `r`'s length.
    pub(super) fn ssor(
        &self,
        pattern: &BlockPattern,
        d_inv: &[Matrix3<f64>],
        fixed: &[bool],
        r: &[Vector3<f64>],
        z: &mut [Vector3<f64>],
        acc: &mut [Vector3<f64>],
    ) {
        let n = r.len();
        acc.fill(Vector3::zeros());
        for i in 0..n {
            if fixed[i] {
                z[i] = Vector3::zeros();
                continue;
            }
            let yi = d_inv[i] * (r[i] - acc[i]);
            z[i] = yi;
            let (s, e) = (self.start[i] as usize, self.start[i + 1] as usize);
            let cols = &pattern.cols[pattern.diag[i] as usize + 1..];
            for (block, &j) in self.values[s + 1..e].iter().zip(cols) {
                acc[j as usize] += block.tr_mul(&yi);
            }
        }
        for i in (0..n).rev() {
            if fixed[i] {
                continue;
            }
            let (s, e) = (self.start[i] as usize, self.start[i + 1] as usize);
            let cols = &pattern.cols[pattern.diag[i] as usize + 1..];
            let mut sum = Vector3::zeros();
            for (block, &j) in self.values[s + 1..e].iter().zip(cols) {
                sum += block * z[j as usize];
            }
            z[i] -= d_inv[i] * sum;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::test_support::bar_system;

    /// The half product equals the full one on every free row (to rounding: the sums run in
    /// another order), and `p·q` with it.
    #[test]
    fn half_product_matches_the_full_one_on_free_rows() {
        let (a, n) = bar_system([6, 3, 2]);
        let fixed: Vec<bool> = (0..n).map(|i| i % 7 == 3).collect();
        let p: Vec<Vector3<f64>> = (0..n)
            .map(|i| {
                if fixed[i] {
                    Vector3::zeros()
                } else {
                    Vector3::new(
                        (i as f64).sin(),
                        1.0 - 0.1 * i as f64,
                        (0.7 * i as f64).cos(),
                    )
                }
            })
            .collect();
        let mut full = vec![Vector3::zeros(); n];
        a.mul_vec(&p, &mut full);
        let mut half = UpperHalf::default();
        half.load(&a);
        let mut q = vec![Vector3::repeat(f64::NAN); n];
        let mut partials = vec![0.0; par::n_chunks(n)];
        let pq = half.mul_dot(&a.pattern, &p, &mut q, &fixed, &mut partials);
        let scale = full.iter().map(|v| v.norm()).fold(0.0, f64::max);
        let mut pq_full = 0.0;
        for i in (0..n).filter(|&i| !fixed[i]) {
            assert!((q[i] - full[i]).norm() <= 1e-13 * scale, "row {i}");
            pq_full += p[i].dot(&full[i]);
        }
        assert!((pq - pq_full).abs() <= 1e-12 * pq_full.abs());
        // A second load of another matrix on the same pattern keeps the offsets.
        let mut b = a.clone();
        for v in &mut b.values {
            *v *= 2.0;
        }
        half.load(&b);
        let pq2 = half.mul_dot(&b.pattern, &p, &mut q, &fixed, &mut partials);
        assert!((pq2 - 2.0 * pq).abs() <= 1e-12 * pq.abs());
    }

    /// The half-storage SSOR sweeps give the sweeps over the full matrix (lower half forward,
    /// upper half backward, read in place), to rounding.
    #[test]
    fn half_ssor_matches_the_sweeps_over_the_full_matrix() {
        let (a, n) = bar_system([5, 2, 2]);
        let pat = &*a.pattern;
        let fixed: Vec<bool> = (0..n).map(|i| i % 5 == 1).collect();
        let d_inv: Vec<Matrix3<f64>> = (0..n)
            .map(|i| a.values[pat.diag[i] as usize].try_inverse().unwrap())
            .collect();
        let r: Vec<Vector3<f64>> = (0..n)
            .map(|i| {
                if fixed[i] {
                    Vector3::zeros()
                } else {
                    Vector3::new(1.0 + (i as f64).cos(), -0.5, 0.1 * i as f64)
                }
            })
            .collect();
        let mut expected = vec![Vector3::zeros(); n];
        for i in (0..n).filter(|&i| !fixed[i]) {
            let mut s = r[i];
            for k in pat.row_ptr[i] as usize..pat.diag[i] as usize {
                s -= a.values[k] * expected[pat.cols[k] as usize];
            }
            expected[i] = d_inv[i] * s;
        }
        for i in (0..n).rev().filter(|&i| !fixed[i]) {
            let mut s = Vector3::zeros();
            for k in pat.diag[i] as usize + 1..pat.row_ptr[i + 1] as usize {
                s += a.values[k] * expected[pat.cols[k] as usize];
            }
            expected[i] -= d_inv[i] * s;
        }
        let mut half = UpperHalf::default();
        half.load(&a);
        let (mut z, mut acc) = (vec![Vector3::repeat(9.0); n], vec![Vector3::zeros(); n]);
        half.ssor(pat, &d_inv, &fixed, &r, &mut z, &mut acc);
        let scale = expected.iter().map(|v| v.norm()).fold(0.0, f64::max);
        for i in 0..n {
            assert!((z[i] - expected[i]).norm() <= 1e-12 * scale, "row {i}");
            if fixed[i] {
                assert_eq!(z[i], Vector3::zeros());
            }
        }
    }
}
