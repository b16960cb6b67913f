//! Block sparse products of the multigrid setup: `A T`, the smoothed prolongator
//! `P = T − ω D⁻¹ A T` and the Galerkin operator `Pᵀ (A P)` (Vaněk, Mandel & Brezina 1996,
//! eq. 3.6 and §2), on `3 × 3` / `6 × 6` operator blocks and `3 × 6` / `6 × 6` transfer
//! blocks. Gustavson's row-by-row algorithm (ACM TOMS 4, 1978) with a dense accumulator of
//! blocks per task: one block column index per block product (where a scalar product reads
//! one per multiply-add) and fixed-size inner loops the compiler unrolls. Each block row is
//! computed alone, its blocks summed in storage order and its columns sorted, so the result
//! does not depend on the number of threads.
//!
//! Written here rather than taken from a sparse crate: `faer` and `sprs` multiply scalar
//! matrices, and the point of this module is the block structure the rigid-body modes give.

use super::block::Bsr;
use rayon::prelude::*;

/// Block rows per parallel task of a product.
const ROWS_PER_TASK: usize = 128;

/// `acc += a b` for an `R × K` and a `K × C` block.
#[inline(always)]
fn mul_add<const R: usize, const K: usize, const C: usize>(
    a: &[[f64; K]; R],
    b: &[[f64; C]; K],
    acc: &mut [[f64; C]; R],
) {
    for r in 0..R {
        for k in 0..K {
            let s = a[r][k];
            for c in 0..C {
                acc[r][c] += s * b[k][c];
            }
        }
    }
}

/// A task's dense accumulator: one block per block column, whether it is in use, and the
/// columns touched by the current row.
struct Accumulator<const R: usize, const C: usize> {
    blocks: Vec<[[f64; C]; R]>,
    used: Vec<bool>,
    touched: Vec<u32>,
}

impl<const R: usize, const C: usize> Accumulator<R, C> {
    fn new(n_bcols: usize) -> Self {
        Self {
            blocks: vec![[[0.0; C]; R]; n_bcols],
            used: vec![false; n_bcols],
            touched: Vec::new(),
        }
    }

    /// The accumulator block of column `j`, marked touched.
    #[inline(always)]
    fn at(&mut self, j: usize) -> &mut [[f64; C]; R] {
        if !self.used[j] {
            self.used[j] = true;
            self.touched.push(j as u32);
        }
        &mut self.blocks[j]
    }
}

/// Builds an `n_brows × n_bcols` block matrix row by row in two passes, so the result is
/// written once, in place: `columns(i, mark)` marks the block columns of row `i` (a pass on
/// the patterns alone, for the row lengths), then `fill(i, acc)` accumulates row `i`, whose
/// blocks are stored in column order and the accumulator cleared.
fn rowwise<const R: usize, const C: usize>(
    n_brows: usize,
    n_bcols: usize,
    columns: impl Fn(usize, &mut dyn FnMut(usize)) + Sync,
    fill: impl Fn(usize, &mut Accumulator<R, C>) + Sync,
) -> Bsr<R, C, f64> {
    let mut ptr = vec![0usize; n_brows + 1];
    ptr[1..]
        .par_chunks_mut(ROWS_PER_TASK)
        .enumerate()
        .for_each_init(
            || (vec![false; n_bcols], Vec::new()),
            |(used, touched): &mut (Vec<bool>, Vec<usize>), (task, lens)| {
                for (r, len) in lens.iter_mut().enumerate() {
                    columns(task * ROWS_PER_TASK + r, &mut |j| {
                        if !used[j] {
                            used[j] = true;
                            touched.push(j);
                        }
                    });
                    *len = touched.len();
                    touched.drain(..).for_each(|j| used[j] = false);
                }
            },
        );
    for i in 0..n_brows {
        ptr[i + 1] += ptr[i];
    }
    let blocks = ptr[n_brows];
    let mut idx = vec![0u32; blocks];
    let mut val = vec![[[0.0; C]; R]; blocks];
    // Each task's rows own one contiguous run of the output.
    let mut runs = Vec::with_capacity(n_brows.div_ceil(ROWS_PER_TASK));
    let (mut idx_rest, mut val_rest) = (&mut idx[..], &mut val[..]);
    for s in (0..n_brows).step_by(ROWS_PER_TASK) {
        let e = (s + ROWS_PER_TASK).min(n_brows);
        let len = ptr[e] - ptr[s];
        let (i_run, i_next) = std::mem::take(&mut idx_rest).split_at_mut(len);
        let (v_run, v_next) = std::mem::take(&mut val_rest).split_at_mut(len);
        (idx_rest, val_rest) = (i_next, v_next);
        runs.push((s, e, i_run, v_run));
    }
    runs.into_par_iter().for_each_init(
        || Accumulator::<R, C>::new(n_bcols),
        |acc, (s, e, idx, val)| {
            let mut at = 0;
            for i in s..e {
                acc.touched.clear();
                fill(i, acc);
                acc.touched.sort_unstable();
                debug_assert_eq!(acc.touched.len(), ptr[i + 1] - ptr[i], "row {i}");
                for &j in &acc.touched {
                    let j = j as usize;
                    idx[at] = j as u32;
                    val[at] = std::mem::replace(&mut acc.blocks[j], [[0.0; C]; R]);
                    acc.used[j] = false;
                    at += 1;
                }
            }
        },
    );
    Bsr {
        n_brows,
        n_bcols,
        ptr,
        idx,
        val,
    }
}

/// Marks the block columns of row `i` of `a · b` (the pattern pass of [`rowwise`]).
fn product_columns<const R: usize, const K: usize, const C: usize>(
    a: &Bsr<R, K, f64>,
    b: &Bsr<K, C, f64>,
    i: usize,
    mark: &mut dyn FnMut(usize),
) {
    for &j in &a.idx[a.ptr[i]..a.ptr[i + 1]] {
        let j = j as usize;
        b.idx[b.ptr[j]..b.ptr[j + 1]]
            .iter()
            .for_each(|&g| mark(g as usize));
    }
}

/// Accumulates row `i` of `a · b`, its blocks summed in storage order.
fn add_product_row<const R: usize, const K: usize, const C: usize>(
    a: &Bsr<R, K, f64>,
    b: &Bsr<K, C, f64>,
    i: usize,
    acc: &mut Accumulator<R, C>,
) {
    for k in a.ptr[i]..a.ptr[i + 1] {
        let (m, j) = (&a.val[k], a.idx[k] as usize);
        for l in b.ptr[j]..b.ptr[j + 1] {
            mul_add(m, &b.val[l], acc.at(b.idx[l] as usize));
        }
    }
}

/// `a · b` (Gustavson by block rows, parallel over tasks of block rows).
pub fn mul<const R: usize, const K: usize, const C: usize>(
    a: &Bsr<R, K, f64>,
    b: &Bsr<K, C, f64>,
) -> Bsr<R, C, f64> {
    assert_eq!(a.n_bcols, b.n_brows, "inner dimensions");
    rowwise(
        a.n_brows,
        b.n_bcols,
        |i, mark| product_columns(a, b, i, mark),
        |i, acc| add_product_row(a, b, i, acc),
    )
}

/// The smoothed prolongator `P = T − ω D⁻¹ A T` (Vaněk et al. 1996, eq. 3.6) in one pass:
/// block row `i` of `A T` accumulated, then `D_i⁻¹` and `ω` applied to each of its blocks
/// and `T_i` added.
pub fn smoothed_prolongator<const B: usize, const C: usize>(
    a: &Bsr<B, B, f64>,
    t: &Bsr<B, C, f64>,
    d_inv: &[[[f64; B]; B]],
    omega: f64,
) -> Bsr<B, C, f64> {
    assert_eq!(a.n_bcols, t.n_brows, "inner dimensions");
    let columns = |i: usize, mark: &mut dyn FnMut(usize)| {
        product_columns(a, t, i, mark);
        t.idx[t.ptr[i]..t.ptr[i + 1]]
            .iter()
            .for_each(|&g| mark(g as usize));
    };
    rowwise(a.n_brows, t.n_bcols, columns, |i, acc| {
        add_product_row(a, t, i, acc);
        let mut scaled = d_inv[i];
        scaled.iter_mut().flatten().for_each(|v| *v *= -omega);
        for n in 0..acc.touched.len() {
            let j = acc.touched[n] as usize;
            let at = std::mem::replace(&mut acc.blocks[j], [[0.0; C]; B]);
            mul_add(&scaled, &at, &mut acc.blocks[j]);
        }
        for l in t.ptr[i]..t.ptr[i + 1] {
            let blk = acc.at(t.idx[l] as usize);
            for (row, trow) in blk.iter_mut().zip(&t.val[l]) {
                row.iter_mut().zip(trow).for_each(|(v, tv)| *v += tv);
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::DMatrix;

    fn scattered(rows: usize, cols: usize, seed: usize) -> DMatrix<f64> {
        DMatrix::from_fn(rows, cols, |i, j| {
            if (i * 7 + j * 3 + seed) % 5 < 2 {
                ((i * 31 + j * 17 + seed) % 11) as f64 - 5.0
            } else {
                0.0
            }
        })
    }

    #[test]
    fn block_products_match_the_dense_ones() {
        let a = scattered(36, 48, 1);
        let b = scattered(48, 30, 2);
        let ab = mul(
            &Bsr::<3, 6, f64>::from_dense(&a),
            &Bsr::<6, 6, f64>::from_dense(&b),
        );
        assert!((ab.to_dense() - &a * &b).norm() < 1e-9);
        // Every row's columns sorted; 2 threads give the same bits as 1.
        assert!((0..ab.n_brows).all(|i| ab.idx[ab.ptr[i]..ab.ptr[i + 1]]
            .windows(2)
            .all(|w| w[0] < w[1])));
        let big_a = scattered(3 * 700, 3 * 700, 3);
        let big_t = scattered(3 * 700, 6 * 90, 4);
        let (ba, bt) = (
            Bsr::<3, 3, f64>::from_dense(&big_a),
            Bsr::<3, 6, f64>::from_dense(&big_t),
        );
        let one = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap();
        let two = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        assert_eq!(one.install(|| mul(&ba, &bt)), two.install(|| mul(&ba, &bt)));
    }

    #[test]
    fn the_smoothed_prolongator_is_t_minus_omega_d_inv_a_t() {
        let a = scattered(24, 24, 5);
        let t = scattered(24, 12, 6);
        let d_inv: Vec<[[f64; 3]; 3]> = (0..8)
            .map(|i| std::array::from_fn(|r| std::array::from_fn(|c| (i + r * 2 + c) as f64 * 0.1)))
            .collect();
        let mut d = DMatrix::<f64>::zeros(24, 24);
        for (i, m) in d_inv.iter().enumerate() {
            for r in 0..3 {
                for c in 0..3 {
                    d[(3 * i + r, 3 * i + c)] = m[r][c];
                }
            }
        }
        let p = smoothed_prolongator(
            &Bsr::<3, 3, f64>::from_dense(&a),
            &Bsr::<3, 6, f64>::from_dense(&t),
            &d_inv,
            0.7,
        );
        let want = &t - 0.7 * &d * &a * &t;
        assert!((p.to_dense() - want).norm() < 1e-9);
    }
}
