//! Deterministic parallel helpers: results never depend on the number of threads.
//!
//! Reductions are done over fixed-size chunks whose partial sums are added in chunk order,
//! so 1 thread and 16 threads produce the same bits. Small problems run sequentially
//! (same chunks, same order), which avoids thread overhead on tiny meshes.

use rayon::prelude::*;

/// Items per reduction chunk (fixed: changing it changes rounding, not correctness).
pub const CHUNK: usize = 1024;
/// Below this many items, loops run on the calling thread.
pub const PAR_MIN: usize = 4096;

/// Number of partial sums needed for `n` items.
pub fn n_chunks(n: usize) -> usize {
    n.div_ceil(CHUNK)
}

/// `Σ_i term(i)` for `i in 0..n`, summed per chunk and then in chunk order.
/// `partials` must hold at least [`n_chunks`]`(n)` entries (a workspace: no allocation here).
pub fn sum(n: usize, partials: &mut [f64], term: impl Fn(usize) -> f64 + Sync) -> f64 {
    let nc = n_chunks(n);
    let partials = &mut partials[..nc];
    let chunk_sum = |c: usize| {
        let end = ((c + 1) * CHUNK).min(n);
        (c * CHUNK..end).map(&term).sum::<f64>()
    };
    if n < PAR_MIN {
        for (c, out) in partials.iter_mut().enumerate() {
            *out = chunk_sum(c);
        }
    } else {
        partials
            .par_iter_mut()
            .enumerate()
            .for_each(|(c, out)| *out = chunk_sum(c));
    }
    partials.iter().sum()
}

/// Partial sums of [`sum_auto`] kept on the stack.
const STACK_CHUNKS: usize = 256;

/// [`sum`] with its own workspace: on the stack up to 256 chunks (262,144 items), so energy
/// checks inside a time step allocate nothing; larger sums allocate their partials.
pub fn sum_auto(n: usize, term: impl Fn(usize) -> f64 + Sync) -> f64 {
    let nc = n_chunks(n);
    if nc <= STACK_CHUNKS {
        let mut partials = [0.0; STACK_CHUNKS];
        sum(n, &mut partials, term)
    } else {
        let mut partials = vec![0.0; nc];
        sum(n, &mut partials, term)
    }
}

/// Below this many entries, vector kernels (a few flops per entry) run on one thread: waking
/// other threads would cost more than the work.
pub const VEC_PAR_MIN: usize = 32_768;

/// Runs `body(c, chunk_range)` for every [`CHUNK`]-sized chunk of `0..n` and stores its result
/// in `out[c]`; in parallel when `n ≥ par_min`. Chunks are disjoint, so a body may write the
/// entries of its own range (through `SharedMut`). `out` needs [`n_chunks`]`(n)` entries.
pub fn chunked<T: Send>(
    n: usize,
    par_min: usize,
    out: &mut [T],
    body: impl Fn(std::ops::Range<usize>) -> T + Sync + Send,
) {
    let out = &mut out[..n_chunks(n)];
    let range = |c: usize| c * CHUNK..((c + 1) * CHUNK).min(n);
    if n < par_min {
        for (c, o) in out.iter_mut().enumerate() {
            *o = body(range(c));
        }
    } else {
        out.par_iter_mut()
            .enumerate()
            .for_each(|(c, o)| *o = body(range(c)));
    }
}

/// Runs `body(i, &mut out[i])` for every element of `out`, in parallel when it is large.
pub fn for_each_mut<T: Send>(out: &mut [T], body: impl Fn(usize, &mut T) + Sync + Send) {
    for_each_mut_from(out, PAR_MIN, 256, body);
}

/// Below this many items, [`for_each_mut_costly`] runs on the calling thread.
pub const COSTLY_PAR_MIN: usize = 64;

/// [`for_each_mut`] for items that cost microseconds each (a contact pair's projected
/// Hessian, an eigendecomposition per item): in parallel from [`COSTLY_PAR_MIN`] items, in
/// tasks of at least 16. Each item is written by its own call alone, so the result does not
/// depend on the thread count.
pub fn for_each_mut_costly<T: Send>(out: &mut [T], body: impl Fn(usize, &mut T) + Sync + Send) {
    for_each_mut_from(out, COSTLY_PAR_MIN, 16, body);
}

/// `body(i, &mut out[i])` for every element: on the calling thread below `par_min` items,
/// otherwise in parallel tasks of at least `min_len`.
pub fn for_each_mut_from<T: Send>(
    out: &mut [T],
    par_min: usize,
    min_len: usize,
    body: impl Fn(usize, &mut T) + Sync + Send,
) {
    if out.len() < par_min {
        out.iter_mut().enumerate().for_each(|(i, o)| body(i, o));
    } else {
        out.par_iter_mut()
            .with_min_len(min_len)
            .enumerate()
            .for_each(|(i, o)| body(i, o));
    }
}

/// A raw pointer that may be shared between threads. Used only where a graph colouring
/// guarantees that concurrent writes go to disjoint locations (see `fem::elements`).
#[derive(Clone, Copy)]
pub(crate) struct SharedMut<T>(pub *mut T);
// SAFETY: users guarantee disjoint access (element colouring); see each use.
unsafe impl<T> Send for SharedMut<T> {}
unsafe impl<T> Sync for SharedMut<T> {}

impl<T> SharedMut<T> {
    /// The pointer (a method, so closures capture the whole `Sync` wrapper).
    #[inline]
    pub(crate) fn ptr(&self) -> *mut T {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sum_is_the_same_for_any_thread_count() {
        let n = 50_000;
        let term = |i: usize| ((i as f64) * 0.37).sin() * 1e3 / (1.0 + i as f64);
        let mut p = vec![0.0; n_chunks(n)];
        let s1 = rayon::ThreadPoolBuilder::new()
            .num_threads(1)
            .build()
            .unwrap()
            .install(|| sum(n, &mut p, term));
        let s2 = rayon::ThreadPoolBuilder::new()
            .num_threads(3)
            .build()
            .unwrap()
            .install(|| sum(n, &mut p, term));
        assert_eq!(s1.to_bits(), s2.to_bits());
        let naive: f64 = (0..n).map(term).sum();
        assert!((s1 - naive).abs() < 1e-9 * naive.abs().max(1.0));
    }
}
