//! STREAM's triad `a = b + s·c` (McCalpin 1995), the memory bandwidth `supple bench` sets
//! each SpMV's against (issue 18): at the SpMV's own footprint (three arrays of as many bytes
//! as the matrix and vectors together, so a small matrix is compared with the cache level it
//! lives in) and at a footprint well beyond the last-level cache (main memory).
//!
//! Written here rather than taken from a crate: it is a four-line loop, and what matters is
//! that it runs in this process, on the same threads as the SpMV, right after it.

use rayon::prelude::*;
use serde::Serialize;
use std::time::Instant;
use supple_run::record::median;

/// Entries per parallel task.
const CHUNK: usize = 16_384;

/// Bytes of the main-memory triad: three arrays of 64 MB, six times a 32 MB last-level cache.
pub const MAIN_MEMORY_BYTES: usize = 3 << 26;

#[derive(Serialize)]
pub struct Triad {
    /// Bytes moved per triad, counted as STREAM does: two arrays read and one written, 8 B
    /// each per entry (the write-allocate read is not counted).
    pub bytes: usize,
    pub ms_median: f64,
    pub gb_per_s: f64,
}

/// The median of `reps` triads over `bytes` bytes (rounded down to whole entries, at least
/// one), in parallel on the current thread pool when `parallel`.
pub fn triad(bytes: usize, reps: usize, parallel: bool) -> Triad {
    let n = (bytes / 24).max(1);
    let (b, c) = (vec![1.0_f64; n], vec![2.0_f64; n]);
    let mut a = vec![0.0_f64; n];
    let s = std::hint::black_box(3.0);
    let run = |a: &mut [f64]| {
        if parallel {
            a.par_chunks_mut(CHUNK)
                .zip(b.par_chunks(CHUNK))
                .zip(c.par_chunks(CHUNK))
                .for_each(|((a, b), c)| kernel(a, b, c, s));
        } else {
            kernel(a, &b, &c, s);
        }
    };
    // Once untimed: the pages of `a` are touched and the caches hold what they can.
    run(&mut a);
    let times: Vec<f64> = (0..reps)
        .map(|_| {
            let t = Instant::now();
            run(&mut a);
            std::hint::black_box(&mut a);
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    let ms = median(&times);
    Triad {
        bytes: 24 * n,
        ms_median: ms,
        gb_per_s: (24 * n) as f64 / (ms * 1e-3) / 1e9,
    }
}

#[inline]
fn kernel(a: &mut [f64], b: &[f64], c: &[f64], s: f64) {
    for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
        *a = b + s * c;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_triad_computes_a_equals_b_plus_s_c_and_counts_24_bytes_an_entry() {
        let (mut a, b, c) = (vec![0.0; 5], vec![1.0, 2.0, 3.0, 4.0, 5.0], vec![0.5; 5]);
        kernel(&mut a, &b, &c, 2.0);
        assert_eq!(a, [2.0, 3.0, 4.0, 5.0, 6.0]);
        for parallel in [false, true] {
            let t = triad(100_000, 3, parallel);
            assert_eq!(t.bytes, 24 * (100_000 / 24));
            assert!(t.ms_median > 0.0 && t.gb_per_s.is_finite() && t.gb_per_s > 0.0);
        }
    }
}
