//! Criterion benchmarks of the broad phases (Liesenfeld & Stolfi §6.4 sweep-and-prune, BVH,
//! brute force) on the boxes of a wavy triangulated sheet (vertices, edges, triangles;
//! vertex–triangle and edge–edge pairs wanted) whose vertices jitter by 1 % of the spacing
//! between calls: small coherent motion (`cargo bench -p supple --bench broad_phase`).

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use std::hint::black_box;
use supple::contact::broad::{Aabb, BroadPhase, BroadPhaseKind};
use supple::nalgebra::Vector3;

/// The boxes (inflated by 0.1) and groups of a k×k sheet of spacing 1, each vertex moved by
/// up to `amp` per axis with the generator state `seed`.
fn sheet(k: usize, seed: &mut u64, amp: f64) -> (Vec<Aabb>, Vec<u8>) {
    let mut rnd = || {
        *seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((*seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    };
    let verts: Vec<Vector3<f64>> = (0..k * k)
        .map(|v| {
            let (x, y) = ((v % k) as f64, (v / k) as f64);
            let jitter = Vector3::new(rnd(), rnd(), rnd()) * amp;
            Vector3::new(x, y, 0.3 * (0.7 * x).sin() * (0.5 * y).cos()) + jitter
        })
        .collect();
    let id = |i: usize, j: usize| j * k + i;
    let (mut boxes, mut groups) = (Vec::new(), Vec::new());
    let mut push = |vs: &[usize], g: u8| {
        let mut b = Aabb::empty();
        for &v in vs {
            b.grow(&verts[v]);
        }
        b.inflate(0.1);
        boxes.push(b);
        groups.push(g);
    };
    for v in 0..k * k {
        push(&[v], 0);
    }
    for j in 0..k {
        for i in 0..k {
            if i + 1 < k {
                push(&[id(i, j), id(i + 1, j)], 1);
            }
            if j + 1 < k {
                push(&[id(i, j), id(i, j + 1)], 1);
            }
            if i + 1 < k && j + 1 < k {
                push(&[id(i, j), id(i + 1, j + 1)], 1);
            }
        }
    }
    for j in 0..k - 1 {
        for i in 0..k - 1 {
            push(&[id(i, j), id(i + 1, j), id(i + 1, j + 1)], 2);
            push(&[id(i, j), id(i + 1, j + 1), id(i, j + 1)], 2);
        }
    }
    (boxes, groups)
}

fn broad_phase(c: &mut Criterion) {
    let mut wants = [[false; 4]; 4];
    wants[0][2] = true;
    wants[1][1] = true;
    let mut g = c.benchmark_group("broad_phase");
    g.sample_size(10);
    // ~1k, 4k and 16k boxes.
    for (name, k) in [("1k", 13), ("4k", 26), ("16k", 52)] {
        let mut seed = 1;
        let states: Vec<(Vec<Aabb>, Vec<u8>)> = (0..8).map(|_| sheet(k, &mut seed, 0.01)).collect();
        let groups = states[0].1.clone();
        for kind in [
            BroadPhaseKind::SweepAndPrune,
            BroadPhaseKind::Bvh,
            BroadPhaseKind::BruteForce,
        ] {
            let mut bp = BroadPhase::new(kind, groups.clone(), wants);
            bp.update(&states[0].0);
            let mut call = 0;
            g.bench_function(BenchmarkId::new(format!("{kind:?}"), name), |b| {
                b.iter(|| {
                    call += 1;
                    black_box(bp.update(black_box(&states[call % 8].0)).len())
                })
            });
        }
    }
    g.finish();
}

criterion_group!(benches, broad_phase);
criterion_main!(benches);
