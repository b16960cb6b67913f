//! Incremental sweep-and-prune (Lin & Manocha), as used by Liesenfeld & Stolfi §6.4.
//!
//! The minimum and maximum of every box on each axis are kept in three sorted lists
//! `L⁰, L¹, L²`. Each call refreshes the endpoint values and re-sorts each list by insertion
//! sort, which for coherent motion is almost sorted already: §6.4 shows the expected number
//! of adjacent swaps is O(m) when the boxes move little compared with their size. The
//! interval order on an axis changes only when a minimum and a maximum swap, so those swaps
//! are the only events that can change an overlap:
//!
//! * minimum of `i` moves before maximum of `j` (the intervals start to overlap on this
//!   axis): the pair enters the overlap set `S` if its boxes now overlap on all three axes;
//! * maximum of `i` moves before minimum of `j` (they stop overlapping): the pair leaves `S`.
//!
//! **Per-axis flags.** Liesenfeld & Stolfi keep the flags `S^c_ij` ("boxes i and j overlap
//! on axis c") as three n×n boolean matrices, O(n²) memory, and scan `S` after the sort to
//! drop pairs whose flags went stale. Here the flags are not stored at all: at a swap the
//! flags of the other axes are read off the (already updated) box coordinates, an O(1)
//! interval test. This is exact, so the final scan is not needed, and memory is O(n + |S|):
//! *proof* — insertion sort swaps each inverted pair of endpoints exactly once, so on an
//! axis each of the two "min before max" relations of a pair flips at most once per call.
//! A pair that overlaps after the call therefore sees no "stop" swap (that relation could not
//! flip back), and if it did not overlap before, some axis went from apart to overlapping
//! and produced a "start" swap, whose test on the new coordinates adds it. A pair that
//! overlapped before and not after went apart on some axis: a "stop" swap removes it, and
//! its "start" swaps test false.
//!
//! `S` is a hash set of the wanted pairs only (unwanted group pairs are not tracked); it is
//! never shrunk, so it allocates only when more pairs overlap than ever before.
//!
//! Ties: at equal coordinates a minimum sorts before a maximum, so boxes that touch overlap
//! (closed intervals), consistently with [`super::Aabb::overlaps`]. An empty or NaN box is
//! kept in the lists as a point at `(+∞, +∞, i)` (distinct for each box, so such boxes never
//! meet each other) and filtered out of the output.
//!
//! The first call (or one with a different number of boxes) sorts the lists from scratch and
//! finds `S` by one sweep along the axis where the box centres spread most.

use super::{touches, Aabb, Groups};
use std::cmp::Ordering;
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

/// One end of a box's interval on an axis. `tag = box << 1 | is_max`; the box's group bit
/// and wanted groups ride along (they fit in the padding) so that a swap needs no look-up.
#[derive(Debug, Clone, Copy)]
struct Endpoint {
    value: f64,
    tag: u32,
    bit: u8,
    want: u8,
}

impl Endpoint {
    #[inline]
    fn is_max(self) -> bool {
        self.tag & 1 == 1
    }
    #[inline]
    fn id(self) -> usize {
        (self.tag >> 1) as usize
    }
}

/// The list order: by value, a minimum before a maximum at equal values (values are never
/// NaN). `after(a, b)`: `a` must come after `b`.
#[inline]
fn after(a: Endpoint, b: Endpoint) -> bool {
    a.value > b.value || (a.value == b.value && (a.tag & 1) > (b.tag & 1))
}

fn order(a: &Endpoint, b: &Endpoint) -> Ordering {
    a.value
        .partial_cmp(&b.value)
        .unwrap_or(Ordering::Equal)
        .then((a.tag & 1).cmp(&(b.tag & 1)))
}

/// A pair `i < j` as one key.
#[inline]
fn key(i: usize, j: usize) -> u64 {
    let (a, b) = if i < j { (i, j) } else { (j, i) };
    ((a as u64) << 32) | b as u64
}

/// A fast hasher for the pair keys (MurmurHash3's 64-bit finalizer); the set's iteration
/// order never reaches the output, which is sorted.
#[derive(Debug, Default, Clone, Copy)]
struct PairHasher(u64);

impl Hasher for PairHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(self.0 ^ b as u64);
        }
    }
    fn write_u64(&mut self, x: u64) {
        let mut h = x ^ self.0.rotate_left(29);
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^= h >> 33;
        self.0 = h;
    }
}

/// Sweep-and-prune state, reused between calls.
#[derive(Debug, Default)]
pub(super) struct SweepAndPrune {
    /// Number of boxes of the current lists (`None` before the first call).
    n: Option<usize>,
    /// This call's boxes and the last call's; empty ones replaced by their sentinel points.
    boxes: Vec<Aabb>,
    prev: Vec<Aabb>,
    /// Whether each box is non-empty.
    valid: Vec<bool>,
    /// The sorted endpoint lists `L⁰, L¹, L²`.
    lists: [Vec<Endpoint>; 3],
    /// The wanted pairs whose (sentinel-substituted) boxes overlap.
    set: HashSet<u64, BuildHasherDefault<PairHasher>>,
    /// Initial sweep: the boxes whose interval is open, and each box's slot in it.
    active: Vec<u32>,
    slot: Vec<u32>,
}

impl SweepAndPrune {
    /// Updates the lists and the overlap set for `boxes` and appends the wanted pairs of
    /// non-empty overlapping boxes to `out` (unsorted). Returns the swap count.
    pub(super) fn update(
        &mut self,
        boxes: &[Aabb],
        groups: &Groups,
        out: &mut Vec<(u32, u32)>,
    ) -> usize {
        let n = boxes.len();
        std::mem::swap(&mut self.boxes, &mut self.prev);
        self.load(boxes);
        let work = if self.n == Some(n) {
            let mut swaps = 0;
            for axis in 0..3 {
                refresh(&mut self.lists[axis], &self.boxes, axis);
                swaps += insertion_sort(
                    &mut self.lists[axis],
                    [&self.boxes, &self.prev],
                    groups,
                    &mut self.set,
                );
            }
            swaps
        } else {
            self.n = Some(n);
            self.initialize(groups)
        };
        out.extend(self.set.iter().filter_map(|&k| {
            let (i, j) = ((k >> 32) as u32, k as u32);
            (self.valid[i as usize] && self.valid[j as usize]).then_some((i, j))
        }));
        work
    }

    /// Copies the boxes, replacing each empty one by a point at `(+∞, +∞, i)`.
    fn load(&mut self, boxes: &[Aabb]) {
        self.boxes.clear();
        self.valid.clear();
        for (i, b) in boxes.iter().enumerate() {
            let valid = !b.is_empty();
            self.valid.push(valid);
            self.boxes.push(if valid {
                *b
            } else {
                let p = nalgebra::Vector3::new(f64::INFINITY, f64::INFINITY, i as f64);
                Aabb::from_point(&p)
            });
        }
    }

    /// Sorts the lists from scratch and fills the set by one sweep; returns the number of
    /// candidate pairs the sweep tested.
    fn initialize(&mut self, groups: &Groups) -> usize {
        let n = self.boxes.len();
        for (axis, list) in self.lists.iter_mut().enumerate() {
            list.clear();
            for (i, b) in self.boxes.iter().enumerate() {
                let tag = (i as u32) << 1;
                let (bit, want) = (groups.bit[i], groups.want[i]);
                list.push(Endpoint {
                    value: b.min[axis],
                    tag,
                    bit,
                    want,
                });
                list.push(Endpoint {
                    value: b.max[axis],
                    tag: tag | 1,
                    bit,
                    want,
                });
            }
            list.sort_unstable_by(order);
        }
        self.set.clear();
        // Sweep along the axis where the finite box centres spread most (fewest candidates).
        let axis = (0..3)
            .max_by(|&a, &b| {
                spread(&self.boxes, &self.valid, a)
                    .partial_cmp(&spread(&self.boxes, &self.valid, b))
                    .unwrap_or(Ordering::Equal)
            })
            .unwrap_or(0);
        self.active.clear();
        self.slot.clear();
        self.slot.resize(n, 0);
        let mut tests = 0;
        for e in &self.lists[axis] {
            let i = e.id();
            if e.is_max() {
                let s = self.slot[i] as usize;
                self.active.swap_remove(s);
                if let Some(&moved) = self.active.get(s) {
                    self.slot[moved as usize] = s as u32;
                }
            } else {
                for &j in &self.active {
                    let j = j as usize;
                    if groups.wanted(i, j) {
                        tests += 1;
                        if touches(&self.boxes[i], &self.boxes[j]) {
                            self.set.insert(key(i, j));
                        }
                    }
                }
                self.slot[i] = self.active.len() as u32;
                self.active.push(i as u32);
            }
        }
        tests
    }
}

/// The variance of the box centres along `axis` (infinite and empty boxes left out).
fn spread(boxes: &[Aabb], valid: &[bool], axis: usize) -> f64 {
    let (mut n, mut s, mut s2) = (0.0, 0.0, 0.0);
    for (b, &v) in boxes.iter().zip(valid) {
        let c = 0.5 * (b.min[axis] + b.max[axis]);
        if v && c.is_finite() {
            n += 1.0;
            s += c;
            s2 += c * c;
        }
    }
    if n > 0.0 {
        s2 / n - (s / n) * (s / n)
    } else {
        0.0
    }
}

/// Writes the current coordinates into the endpoints of one axis.
fn refresh(list: &mut [Endpoint], boxes: &[Aabb], axis: usize) {
    for e in list {
        let b = &boxes[e.id()];
        e.value = if e.is_max() { b.max[axis] } else { b.min[axis] };
    }
}

/// Insertion sort of one list; each min/max swap updates the overlap set (module docs).
/// Returns the number of adjacent swaps.
///
/// `boxes = [now, before]`. A pair is in the set only if its boxes met before, so a "stop"
/// swap of boxes that did not meet before skips the hash look-up: on a flat surface most
/// swaps along the normal are between far-apart elements.
fn insertion_sort(
    list: &mut [Endpoint],
    [boxes, prev]: [&[Aabb]; 2],
    groups: &Groups,
    set: &mut HashSet<u64, BuildHasherDefault<PairHasher>>,
) -> usize {
    let mut swaps = 0;
    for k in 1..list.len() {
        let e = list[k];
        let mut j = k;
        while j > 0 && after(list[j - 1], e) {
            let p = list[j - 1];
            let (a, b) = (e.id(), p.id());
            if e.is_max() != p.is_max() && e.want & p.bit != 0 && groups.owners_ok(a, b) {
                if e.is_max() {
                    // max of a now before min of b: apart on this axis.
                    if touches(&prev[a], &prev[b]) {
                        set.remove(&key(a, b));
                    }
                } else if touches(&boxes[a], &boxes[b]) {
                    // min of a now before max of b, and the boxes meet on all axes.
                    set.insert(key(a, b));
                }
            }
            list[j] = p;
            j -= 1;
        }
        swaps += k - j;
        list[j] = e;
    }
    swaps
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Vector3;

    fn cube(c: [f64; 3], h: f64) -> Aabb {
        let c = Vector3::from(c);
        Aabb {
            min: c.add_scalar(-h),
            max: c.add_scalar(h),
        }
    }

    fn ep(value: f64, tag: u32) -> Endpoint {
        Endpoint {
            value,
            tag,
            bit: 1,
            want: 1,
        }
    }

    #[test]
    fn ties_order_min_before_max() {
        let min = ep(1.0, 2);
        let max = ep(1.0, 5);
        assert!(after(max, min) && !after(min, max));
        assert_eq!(order(&min, &max), Ordering::Less);
        let zero_max = ep(-0.0, 1);
        let zero_min = ep(0.0, 0);
        assert!(after(zero_max, zero_min));
    }

    #[test]
    fn events_add_and_remove_pairs() {
        let g = Groups::new(&[0, 0, 0], &[[true; 4]; 4]);
        let mut sap = SweepAndPrune::default();
        let mut out = Vec::new();
        let mut boxes = vec![
            cube([0.0, 0.0, 0.0], 0.5),
            cube([3.0, 0.0, 0.0], 0.5),
            cube([0.0, 3.0, 0.0], 0.5),
        ];
        sap.update(&boxes, &g, &mut out);
        assert!(out.is_empty());
        // Box 1 slides onto box 0 along x (swaps on x only; y, z already overlap).
        boxes[1] = cube([0.5, 0.0, 0.0], 0.5);
        let swaps = sap.update(&boxes, &g, &mut out);
        assert_eq!(out, vec![(0, 1)]);
        assert_eq!(
            swaps, 2,
            "min of 1 passes the maxima of 0 and 2; nothing else moves"
        );
        // Box 2 comes down onto both; box 1 leaves; then box 2 becomes empty.
        out.clear();
        boxes[2] = cube([0.2, 0.9, 0.0], 0.5);
        sap.update(&boxes, &g, &mut out);
        out.sort_unstable();
        assert_eq!(out, vec![(0, 1), (0, 2), (1, 2)]);
        out.clear();
        boxes[1] = cube([5.0, 0.0, 0.0], 0.5);
        boxes[2] = Aabb::empty();
        sap.update(&boxes, &g, &mut out);
        assert!(out.is_empty(), "{out:?}");
        assert!(sap.set.is_empty());
    }
}
