//! The broad phases (Liesenfeld & Stolfi §6.4 sweep-and-prune, BVH) against brute force:
//! the same pairs on random scenes over sequences of coherent and incoherent motion, with
//! touching, degenerate and empty boxes; sweep-and-prune's O(n) swaps for coherent motion;
//! no allocation per call in steady state. Timings are the Criterion benchmark
//! (`cargo bench -p supple --bench broad_phase`), not a test.

mod common;

use common::Lcg;
use supple::contact::broad::{Aabb, BroadPhase, BroadPhaseKind};
use supple::nalgebra::Vector3;

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

const KINDS: [BroadPhaseKind; 3] = [
    BroadPhaseKind::SweepAndPrune,
    BroadPhaseKind::Bvh,
    BroadPhaseKind::BruteForce,
];

/// Rounds to a multiple of 1/8, so that boxes share coordinates exactly.
fn snap(x: f64) -> f64 {
    (x * 8.0).round() / 8.0
}

/// A box around `c` with half-extents `h`.
fn around(c: Vector3<f64>, h: Vector3<f64>) -> Aabb {
    Aabb {
        min: c - h,
        max: c + h,
    }
}

/// Random boxes in a cube of side ∝ n^{1/3} (a few overlaps per box): half-extents in
/// [0, 0.5], some flat on one axis, some points, some snapped to the 1/8 grid.
struct Scene {
    centres: Vec<Vector3<f64>>,
    halves: Vec<Vector3<f64>>,
    snapped: Vec<bool>,
    side: f64,
}

impl Scene {
    fn new(rng: &mut Lcg, n: usize) -> Self {
        let side = (n as f64).cbrt();
        let mut s = Scene {
            centres: Vec::new(),
            halves: Vec::new(),
            snapped: Vec::new(),
            side,
        };
        for _ in 0..n {
            let c = rng.vec3() * (0.5 * side);
            let mut h = (rng.vec3() + Vector3::repeat(1.0)) * 0.25;
            let kind = rng.uniform();
            if kind < -0.8 {
                h = Vector3::zeros(); // a point
            } else if kind < -0.6 {
                h[(rng.uniform().abs() * 2.99) as usize] = 0.0; // flat
            }
            s.centres.push(c);
            s.halves.push(h);
            s.snapped.push(rng.uniform() < -0.5);
        }
        s
    }

    fn boxes(&self) -> Vec<Aabb> {
        self.centres
            .iter()
            .zip(&self.halves)
            .zip(&self.snapped)
            .map(|((c, h), &snapped)| {
                let b = around(*c, *h);
                if snapped {
                    Aabb {
                        min: b.min.map(snap),
                        max: b.max.map(snap),
                    }
                } else {
                    b
                }
            })
            .collect()
    }

    /// Moves every box by up to `step` per axis, and teleports a fraction `jump` of them.
    fn shake(&mut self, rng: &mut Lcg, step: f64, jump: f64) {
        let side = self.side;
        for c in &mut self.centres {
            if rng.uniform().abs() < jump {
                *c = rng.vec3() * (0.5 * side);
            } else {
                *c += rng.vec3() * step;
            }
        }
    }
}

fn random_groups(rng: &mut Lcg, n: usize) -> (Vec<u8>, [[bool; 4]; 4]) {
    let groups = (0..n)
        .map(|_| (rng.uniform().abs() * 3.999) as u8)
        .collect();
    let mut wants = [[false; 4]; 4];
    for row in &mut wants {
        for w in row.iter_mut() {
            *w = rng.uniform() > 0.0;
        }
    }
    wants[0][0] = true;
    (groups, wants)
}

/// Runs the three methods side by side over 20 calls and checks they report the same,
/// strictly ascending pairs `i < j`.
fn agree(seed: u64, n: usize, step: f64, jump: f64) {
    let mut rng = Lcg(seed);
    let (groups, wants) = random_groups(&mut rng, n);
    let mut scene = Scene::new(&mut rng, n);
    let mut phases: Vec<BroadPhase> = KINDS
        .iter()
        .map(|&k| BroadPhase::new(k, groups.clone(), wants))
        .collect();
    let mut total = 0;
    for call in 0..20 {
        let boxes = scene.boxes();
        let reference = phases[2].update(&boxes).to_vec();
        assert!(reference.windows(2).all(|w| w[0] < w[1]));
        assert!(reference.iter().all(|&(i, j)| i < j));
        for p in &mut phases[..2] {
            let kind = p.kind();
            let got = p.update(&boxes);
            assert_eq!(
                got,
                &reference[..],
                "{kind:?}: n = {n}, call {call}, step {step}, jump {jump}"
            );
            assert_eq!(p.stats().pairs, reference.len());
        }
        total += reference.len();
        scene.shake(&mut rng, step, jump);
    }
    if n >= 100 {
        assert!(
            total > 20 * n / 10,
            "too few overlaps to test anything: {total}"
        );
    }
}

#[test]
fn same_pairs_as_brute_force_under_coherent_motion() {
    for (seed, n) in [(1, 1), (2, 2), (3, 10), (4, 100), (5, 500), (6, 2000)] {
        agree(seed, n, 0.005, 0.0);
        agree(seed + 100, n, 0.05, 0.0);
    }
}

#[test]
fn same_pairs_as_brute_force_under_incoherent_motion() {
    for (seed, n) in [(7, 3), (8, 50), (9, 300), (10, 2000)] {
        agree(seed, n, 0.5, 0.1);
        agree(seed + 100, n, 2.0, 1.0);
    }
}

#[test]
fn identical_and_empty_boxes() {
    let n = 60;
    let mut rng = Lcg(11);
    let (groups, wants) = random_groups(&mut rng, n);
    let unit = around(Vector3::zeros(), Vector3::repeat(0.5));
    let nan = Aabb {
        min: Vector3::new(0.0, f64::NAN, 0.0),
        max: Vector3::repeat(1.0),
    };
    // Call by call: all identical; some empty, NaN or inverted; all points on one spot;
    // back to identical; everything empty.
    let scenes: Vec<Vec<Aabb>> = vec![
        vec![unit; n],
        (0..n)
            .map(|i| match i % 4 {
                0 => Aabb::empty(),
                1 => nan,
                2 => unit,
                _ => around(Vector3::repeat(0.5), Vector3::new(0.0, 0.2, -0.1)),
            })
            .collect(),
        vec![Aabb::from_point(&Vector3::repeat(0.5)); n],
        vec![unit; n],
        vec![Aabb::empty(); n],
        (0..n)
            .map(|i| around(Vector3::new(i as f64, 0.0, 0.0), Vector3::repeat(0.5)))
            .collect(),
    ];
    let mut phases: Vec<BroadPhase> = KINDS
        .iter()
        .map(|&k| BroadPhase::new(k, groups.clone(), wants))
        .collect();
    for (call, boxes) in scenes.iter().enumerate() {
        let reference = phases[2].update(boxes).to_vec();
        for p in &mut phases[..2] {
            let kind = p.kind();
            assert_eq!(p.update(boxes), &reference[..], "{kind:?}, call {call}");
        }
        if call == 4 {
            assert!(reference.is_empty());
        } else {
            assert!(!reference.is_empty());
        }
    }
}

#[test]
fn extra_boxes_and_changed_counts_do_not_panic() {
    let boxes: Vec<Aabb> = (0..10)
        .map(|i| around(Vector3::new(i as f64 * 0.6, 0.0, 0.0), Vector3::repeat(0.5)))
        .collect();
    // Tags ≥ 4 are never reported; more boxes than tags: the extra ones are ignored.
    let groups = vec![0, 0, 0, 9, 0, 0];
    for kind in KINDS {
        let mut bp = BroadPhase::new(kind, groups.clone(), [[true; 4]; 4]);
        assert_eq!(bp.update(&boxes), &[(0, 1), (1, 2), (4, 5)]);
        assert_eq!(bp.update(&boxes[..3]), &[(0, 1), (1, 2)]);
        assert!(bp.update(&[]).is_empty());
        assert_eq!(bp.update(&boxes), &[(0, 1), (1, 2), (4, 5)]);
    }
}

/// Random boxes of size 0.5–1 at density ~1 box per unit volume; returns (boxes, centres).
fn jitter_scene(rng: &mut Lcg, n: usize) -> (Vec<Vector3<f64>>, Vec<Vector3<f64>>) {
    let side = (n as f64).cbrt();
    let centres = (0..n).map(|_| rng.vec3() * (0.5 * side)).collect();
    let halves = (0..n)
        .map(|_| (rng.vec3() + Vector3::repeat(3.0)) * 0.125)
        .collect();
    (centres, halves)
}

#[test]
fn sweep_and_prune_swaps_are_linear_for_coherent_motion() {
    let n = 2000;
    let mut rng = Lcg(12);
    let (mut centres, halves) = jitter_scene(&mut rng, n);
    let mut bp = BroadPhase::new(BroadPhaseKind::SweepAndPrune, vec![0; n], [[true; 4]; 4]);
    let boxes = |c: &[Vector3<f64>]| -> Vec<Aabb> {
        c.iter().zip(&halves).map(|(c, h)| around(*c, *h)).collect()
    };
    bp.update(&boxes(&centres));
    let mut most = 0;
    for _ in 0..20 {
        // 1 % of the box size (0.5–1).
        for c in &mut centres {
            *c += rng.vec3() * 0.0075;
        }
        bp.update(&boxes(&centres));
        let s = bp.stats();
        assert!(s.pairs > n / 2, "a scene with overlaps: {}", s.pairs);
        most = most.max(s.work);
    }
    println!("SAP coherent: at most {most} swaps per call for n = {n}");
    assert!(most < 20 * n, "{most} swaps ≥ 20 n");
    // The count does measure the motion: reshuffling everything costs Θ(n²) swaps.
    let (shuffled, _) = jitter_scene(&mut rng, n);
    bp.update(&boxes(&shuffled));
    assert!(
        bp.stats().work > 100 * n,
        "shuffle: {} swaps",
        bp.stats().work
    );
}

#[test]
fn no_allocation_per_call_in_steady_state() {
    let n = 1000;
    let mut rng = Lcg(13);
    let (centres, halves) = jitter_scene(&mut rng, n);
    let offsets: Vec<Vector3<f64>> = (0..n).map(|_| rng.vec3() * 0.05).collect();
    // Two states A, B alternating: after a few rounds every workspace has its size.
    let states: Vec<Vec<Aabb>> = [1.0, -1.0]
        .iter()
        .map(|&s| {
            (0..n)
                .map(|i| around(centres[i] + offsets[i] * s, halves[i]))
                .collect()
        })
        .collect();
    let groups: Vec<u8> = (0..n).map(|i| (i % 3) as u8).collect();
    let mut wants = [[false; 4]; 4];
    wants[0][2] = true;
    wants[1][1] = true;
    // A one-thread pool: the BVH's parallel descent runs its tasks, and grows their
    // buffers, on the thread whose allocations are counted.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .unwrap();
    pool.install(|| {
        for kind in KINDS {
            let mut bp = BroadPhase::new(kind, groups.clone(), wants);
            for k in 0..6 {
                bp.update(&states[k % 2]);
            }
            let before = common::allocations();
            let mut pairs = 0;
            for k in 0..6 {
                pairs += bp.update(&states[k % 2]).len();
            }
            let allocations = common::allocations() - before;
            assert!(pairs > 0);
            assert_eq!(allocations, 0, "{kind:?}");
        }
    });
}
