//! Criterion benchmark of the small symmetric eigendecompositions behind the contact step's
//! per-pair PSD projections (IPC §4.1): `supple::linalg::small_eigen` against nalgebra's
//! `SymmetricEigen` on the same 6×6 and 9×9 indefinite matrices, each followed by the
//! projection `V max(Λ, 0) Vᵀ` (`cargo bench -p supple --bench small_eigen`).

use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;
use supple::linalg::small_eigen;
use supple::nalgebra::{SMatrix, SymmetricEigen};

/// 64 random symmetric N×N matrices with entries in [−1, 1].
#[allow(clippy::needless_range_loop)]
fn matrices<const N: usize>() -> Vec<[[f64; N]; N]> {
    let mut state = 12345u64;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    (0..64)
        .map(|_| {
            let mut a = [[0.0; N]; N];
            for i in 0..N {
                for j in 0..=i {
                    let x = next();
                    a[i][j] = x;
                    a[j][i] = x;
                }
            }
            a
        })
        .collect()
}

macro_rules! compare {
    ($c:expr, $n:literal) => {{
        let ours = matrices::<$n>();
        let theirs: Vec<SMatrix<f64, $n, $n>> = ours
            .iter()
            .map(|a| SMatrix::<f64, $n, $n>::from_fn(|i, j| a[i][j]))
            .collect();
        let mut group = $c.benchmark_group(concat!("psd_projection_", $n, "x", $n));
        group.bench_function("small_eigen", |b| {
            b.iter(|| {
                for a in &ours {
                    black_box(small_eigen::project_psd(black_box(a)));
                }
            })
        });
        group.bench_function("nalgebra", |b| {
            b.iter(|| {
                for a in &theirs {
                    let e = SymmetricEigen::try_new(*black_box(a), f64::EPSILON, 10_000).unwrap();
                    let mut out = SMatrix::<f64, $n, $n>::zeros();
                    for (k, &l) in e.eigenvalues.iter().enumerate() {
                        if l > 0.0 {
                            let v = e.eigenvectors.column(k);
                            out += l * v * v.transpose();
                        }
                    }
                    black_box(out);
                }
            })
        });
        group.finish();
    }};
}

fn bench(c: &mut Criterion) {
    compare!(c, 6);
    compare!(c, 9);
}

criterion_group!(benches, bench);
criterion_main!(benches);
