//! Broad phase of contact detection: which pairs of axis-aligned bounding boxes overlap.
//!
//! Liesenfeld & Stolfi §6.4 (paper 003): testing every vertex–face and edge–edge pair costs
//! Θ(m²) for m exposed triangles, so each exposed vertex, edge and face gets an axis-aligned
//! box over the step and only pairs whose boxes intersect go on to the exact tests. The
//! boxes are found by one of three interchangeable methods ([`BroadPhaseKind`]):
//!
//! * **Sweep-and-prune** (Lin & Manocha, as used in §6.4; `sap.rs`): three lists of box
//!   endpoints kept sorted between steps by insertion sort; a swap of a minimum past a
//!   maximum is the only event that changes an overlap, so a coherent step costs O(m) swaps
//!   plus the size of the overlap set.
//! * **Bounding-volume hierarchy** (`bvh.rs`): a binary tree built once by median splits,
//!   refitted bottom-up each step (O(m)) and queried against itself by simultaneous descent.
//! * **Brute force**: all m(m−1)/2 wanted pairs; the reference of the tests.
//!
//! The O(m) swaps of §6.4 assume boxes spread over all three axes. A surface lying flat in
//! an axis plane packs all its endpoints on the normal axis into a thin band, so even 1 %
//! jitter makes each endpoint pass hundreds of others there: on a 16k-box sheet the BVH was
//! ~3× faster (see the ignored `broad_phase_timings` test); on 1k boxes they were even.
//!
//! All three return the same pairs, in the same (ascending) order. Boxes are closed: two
//! boxes that share only a face, an edge or a corner overlap. An *empty* box (`min > max` on
//! some axis, or a NaN coordinate, e.g. [`Aabb::empty`]) overlaps nothing, not even itself.
//!
//! Each box carries a group tag (< 4, e.g. vertex / edge / triangle) and only the group pairs
//! asked for are reported; a box with a tag ≥ 4 is never reported.

mod bvh;
mod sap;

use nalgebra::Vector3;

/// An axis-aligned box `[min.x, max.x] × [min.y, max.y] × [min.z, max.z]` (closed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Aabb {
    pub min: Vector3<f64>,
    pub max: Vector3<f64>,
}

impl Aabb {
    /// The empty box (`min = +∞`, `max = −∞`): the identity of [`Aabb::merge`] and
    /// [`Aabb::grow`]; it overlaps nothing.
    pub fn empty() -> Self {
        Self {
            min: Vector3::repeat(f64::INFINITY),
            max: Vector3::repeat(f64::NEG_INFINITY),
        }
    }

    /// The degenerate box of one point.
    pub fn from_point(p: &Vector3<f64>) -> Self {
        Self { min: *p, max: *p }
    }

    /// Enlarges the box to include `p` (a NaN coordinate of `p` is ignored).
    pub fn grow(&mut self, p: &Vector3<f64>) {
        for k in 0..3 {
            self.min[k] = self.min[k].min(p[k]);
            self.max[k] = self.max[k].max(p[k]);
        }
    }

    /// Enlarges the box to include `o` (merging an empty box changes nothing).
    pub fn merge(&mut self, o: &Aabb) {
        for k in 0..3 {
            self.min[k] = self.min[k].min(o.min[k]);
            self.max[k] = self.max[k].max(o.max[k]);
        }
    }

    /// Moves every face outwards by `r` (inwards for `r < 0`, which may leave it empty).
    pub fn inflate(&mut self, r: f64) {
        self.min.add_scalar_mut(-r);
        self.max.add_scalar_mut(r);
    }

    /// True when the box contains no point: `min > max` on some axis, or a NaN coordinate.
    pub fn is_empty(&self) -> bool {
        !(self.min.x <= self.max.x && self.min.y <= self.max.y && self.min.z <= self.max.z)
    }

    /// True when the two closed boxes share a point (touching counts); false when either
    /// is empty.
    pub fn overlaps(&self, o: &Aabb) -> bool {
        !self.is_empty() && !o.is_empty() && touches(self, o)
    }
}

/// The interval test of [`Aabb::overlaps`] without the emptiness checks: exact for boxes
/// already known to be non-empty (the inner loops of the broad phases).
#[inline]
fn touches(a: &Aabb, b: &Aabb) -> bool {
    a.min.x <= b.max.x
        && b.min.x <= a.max.x
        && a.min.y <= b.max.y
        && b.min.y <= a.max.y
        && a.min.z <= b.max.z
        && b.min.z <= a.max.z
}

/// Which broad-phase method a [`BroadPhase`] uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BroadPhaseKind {
    /// Incremental sweep-and-prune (Lin–Manocha; Liesenfeld & Stolfi §6.4).
    SweepAndPrune,
    /// A bounding-volume hierarchy, built once and refitted each call.
    Bvh,
    /// Every pair; O(n²) per call.
    BruteForce,
}

/// What the last [`BroadPhase::update`] did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BroadStats {
    /// Pairs reported.
    pub pairs: usize,
    /// Work done. Sweep-and-prune: adjacent swaps of the insertion sorts (on the first call,
    /// which sorts from scratch: the candidate pairs tested by the initial sweep). BVH:
    /// node pairs visited. Brute force: box pairs tested.
    pub work: usize,
}

/// The group tags of the boxes and the wanted group pairs, as bit masks: box `i` is paired
/// with box `j` when `want[i] & bit[j] != 0`.
#[derive(Debug, Clone)]
struct Groups {
    /// `1 << group` (0 for a tag ≥ 4).
    bit: Vec<u8>,
    /// The groups wanted with this box's group, as bits.
    want: Vec<u8>,
    /// Owner of each box (e.g. its body) and whether pairs of one owner are skipped.
    owner: Vec<u32>,
    cross_only: bool,
}

impl Groups {
    /// Symmetrizes `wants` (a pair is wanted when either order is asked for).
    fn new(groups: &[u8], wants: &[[bool; 4]; 4]) -> Self {
        let row: [u8; 4] = std::array::from_fn(|a| {
            (0..4)
                .filter(|&b| wants[a][b] || wants[b][a])
                .fold(0, |r, b| r | 1 << b)
        });
        let bit = groups
            .iter()
            .map(|&g| if g < 4 { 1 << g } else { 0 })
            .collect();
        let want = groups
            .iter()
            .map(|&g| if g < 4 { row[g as usize] } else { 0 })
            .collect();
        Self {
            owner: vec![0; groups.len()],
            cross_only: false,
            bit,
            want,
        }
    }

    fn len(&self) -> usize {
        self.bit.len()
    }

    #[inline]
    fn wanted(&self, i: usize, j: usize) -> bool {
        self.want[i] & self.bit[j] != 0 && self.owners_ok(i, j)
    }

    /// False for two boxes of one owner when only pairs across owners are wanted.
    #[inline]
    fn owners_ok(&self, i: usize, j: usize) -> bool {
        !(self.cross_only && self.owner[i] == self.owner[j])
    }
}

/// The method's own state (workspaces reused between calls).
#[derive(Debug)]
enum Engine {
    Sap(sap::SweepAndPrune),
    Bvh(bvh::Bvh),
    Brute,
}

/// A broad phase over a fixed set of boxes, each with a small group tag. `wants[ga][gb]`
/// (symmetric) says which group pairs are reported (the pipeline uses groups such as
/// "vertex", "edge", "triangle" and asks only for vertex–triangle and edge–edge pairs).
///
/// Every call of [`BroadPhase::update`] takes the boxes of one step, in the same order and
/// number each time; the incremental methods exploit the coherence between calls. In steady
/// state a call allocates nothing: the endpoint lists, tree, stacks and output are reused,
/// and the overlap set of sweep-and-prune only grows (it allocates only when more pairs
/// overlap than ever before).
pub struct BroadPhase {
    kind: BroadPhaseKind,
    groups: Groups,
    engine: Engine,
    pairs: Vec<(u32, u32)>,
    stats: BroadStats,
}

impl std::fmt::Debug for BroadPhase {
    /// A summary: the per-box state can be megabytes.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BroadPhase")
            .field("kind", &self.kind)
            .field("boxes", &self.groups.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl BroadPhase {
    /// A broad phase of `kind` over `groups.len()` boxes; box `i` has tag `groups[i]` (< 4;
    /// a larger tag is never reported). `wants` is symmetrized.
    pub fn new(kind: BroadPhaseKind, mut groups: Vec<u8>, wants: [[bool; 4]; 4]) -> Self {
        // Pairs are reported as u32 indices.
        groups.truncate(u32::MAX as usize);
        let engine = match kind {
            BroadPhaseKind::SweepAndPrune => Engine::Sap(sap::SweepAndPrune::default()),
            BroadPhaseKind::Bvh => Engine::Bvh(bvh::Bvh::default()),
            BroadPhaseKind::BruteForce => Engine::Brute,
        };
        Self {
            kind,
            groups: Groups::new(&groups, &wants),
            engine,
            pairs: Vec::new(),
            stats: BroadStats::default(),
        }
    }

    /// Gives each box an owner (e.g. the body it belongs to); with `same_owner: false` pairs
    /// of one owner are never reported (bodies without self-collision), and the BVH splits
    /// by owner first so that it never descends into such pairs. Call before the first
    /// update; `owners` has one entry per box (missing entries count as owner 0).
    pub fn with_owners(mut self, owners: &[u32], same_owner: bool) -> Self {
        let n = self.groups.len();
        self.groups.owner = (0..n)
            .map(|i| owners.get(i).copied().unwrap_or(0))
            .collect();
        self.groups.cross_only = !same_owner;
        self
    }

    /// Takes this step's boxes (same count and order every call) and returns every pair
    /// `(i, j)`, `i < j`, of overlapping boxes whose groups are wanted, sorted ascending
    /// (deterministic).
    ///
    /// Boxes beyond the number of group tags given to [`BroadPhase::new`] are ignored; a
    /// call with a different number of boxes than the last one starts the incremental
    /// methods afresh (correct, but not incremental).
    pub fn update(&mut self, boxes: &[Aabb]) -> &[(u32, u32)] {
        let boxes = &boxes[..boxes.len().min(self.groups.len())];
        self.pairs.clear();
        let work = match &mut self.engine {
            Engine::Sap(s) => s.update(boxes, &self.groups, &mut self.pairs),
            Engine::Bvh(b) => b.update(boxes, &self.groups, &mut self.pairs),
            Engine::Brute => brute_force(boxes, &self.groups, &mut self.pairs),
        };
        self.pairs.sort_unstable();
        self.stats = BroadStats {
            pairs: self.pairs.len(),
            work,
        };
        &self.pairs
    }

    /// Like [`update`](Self::update), but returns only the pairs with a box marked in
    /// `active`; the boxes not marked must be the same as in the last call. The BVH then
    /// refits and searches only the part of its tree above the active boxes; the other
    /// methods run in full and drop the other pairs.
    pub fn update_active(&mut self, boxes: &[Aabb], active: &[bool]) -> &[(u32, u32)] {
        let boxes = &boxes[..boxes.len().min(self.groups.len())];
        self.pairs.clear();
        let work = match &mut self.engine {
            Engine::Sap(s) => s.update(boxes, &self.groups, &mut self.pairs),
            Engine::Bvh(b) => b.update_active(boxes, active, &self.groups, &mut self.pairs),
            Engine::Brute => brute_force(boxes, &self.groups, &mut self.pairs),
        };
        self.pairs
            .retain(|&(i, j)| active[i as usize] || active[j as usize]);
        self.pairs.sort_unstable();
        self.stats = BroadStats {
            pairs: self.pairs.len(),
            work,
        };
        &self.pairs
    }

    /// The pairs of the last [`update`](Self::update).
    pub fn update_pairs(&self) -> &[(u32, u32)] {
        &self.pairs
    }

    /// The pairs and work of the last call.
    pub fn stats(&self) -> BroadStats {
        self.stats
    }

    /// The method.
    pub fn kind(&self) -> BroadPhaseKind {
        self.kind
    }
}

/// Every wanted pair tested with [`Aabb::overlaps`]; returns the number of tests.
fn brute_force(boxes: &[Aabb], groups: &Groups, out: &mut Vec<(u32, u32)>) -> usize {
    let mut tests = 0;
    for (i, a) in boxes.iter().enumerate() {
        for (j, b) in boxes.iter().enumerate().skip(i + 1) {
            if groups.wanted(i, j) {
                tests += 1;
                if a.overlaps(b) {
                    out.push((i as u32, j as u32));
                }
            }
        }
    }
    tests
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bx(min: [f64; 3], max: [f64; 3]) -> Aabb {
        Aabb {
            min: Vector3::from(min),
            max: Vector3::from(max),
        }
    }

    #[test]
    fn aabb_building() {
        let mut b = Aabb::empty();
        assert!(b.is_empty());
        b.grow(&Vector3::new(1.0, 2.0, 3.0));
        assert_eq!(b, Aabb::from_point(&Vector3::new(1.0, 2.0, 3.0)));
        assert!(!b.is_empty());
        b.grow(&Vector3::new(-1.0, 5.0, f64::NAN));
        assert_eq!(b, bx([-1.0, 2.0, 3.0], [1.0, 5.0, 3.0]));
        let mut m = Aabb::empty();
        m.merge(&b);
        m.merge(&Aabb::empty());
        assert_eq!(m, b);
        m.merge(&bx([0.0, 0.0, 0.0], [0.5, 0.5, 9.0]));
        assert_eq!(m, bx([-1.0, 0.0, 0.0], [1.0, 5.0, 9.0]));
        m.inflate(0.5);
        assert_eq!(m, bx([-1.5, -0.5, -0.5], [1.5, 5.5, 9.5]));
        m.inflate(-3.0);
        assert!(m.is_empty());
    }

    #[test]
    fn overlap_is_closed_and_empty_boxes_overlap_nothing() {
        let a = bx([0.0, 0.0, 0.0], [1.0, 1.0, 1.0]);
        // Sharing a face, an edge, a corner: all overlap.
        assert!(a.overlaps(&bx([1.0, 0.2, 0.2], [2.0, 0.8, 0.8])));
        assert!(a.overlaps(&bx([1.0, 1.0, 0.2], [2.0, 2.0, 0.8])));
        assert!(a.overlaps(&bx([1.0, 1.0, 1.0], [2.0, 2.0, 2.0])));
        // A point on the boundary, and -0 against +0.
        assert!(a.overlaps(&Aabb::from_point(&Vector3::new(-0.0, 0.5, 1.0))));
        // Separated on one axis only.
        assert!(!a.overlaps(&bx([0.2, 0.2, 1.0 + 1e-12], [0.8, 0.8, 2.0])));
        // Empty boxes, even against everything.
        let all = bx([f64::NEG_INFINITY; 3], [f64::INFINITY; 3]);
        assert!(!Aabb::empty().overlaps(&all));
        assert!(!Aabb::empty().overlaps(&Aabb::empty()));
        let inverted = bx([0.6, 0.0, 0.0], [0.4, 1.0, 1.0]);
        assert!(!inverted.overlaps(&a));
        let nan = bx([f64::NAN, 0.0, 0.0], [1.0, 1.0, 1.0]);
        assert!(!nan.overlaps(&a) && !a.overlaps(&nan));
        assert!(all.overlaps(&a));
    }

    #[test]
    fn groups_are_symmetrized_and_large_tags_never_wanted() {
        let mut wants = [[false; 4]; 4];
        wants[0][2] = true; // vertex–triangle, one order only
        wants[1][1] = true; // edge–edge
        let g = Groups::new(&[0, 1, 2, 1, 7, 0], &wants);
        assert!(g.wanted(0, 2) && g.wanted(2, 0));
        assert!(g.wanted(1, 3));
        assert!(!g.wanted(0, 5) && !g.wanted(0, 1) && !g.wanted(2, 2));
        assert!((0..6).all(|j| !g.wanted(4, j) && !g.wanted(j, 4)));
    }

    #[test]
    fn methods_agree_on_a_small_scene_with_ties() {
        // A row of unit cubes touching face to face, a point on a shared corner, an empty
        // box and an infinite slab.
        let mut boxes: Vec<Aabb> = (0..5)
            .map(|i| {
                let x = i as f64;
                bx([x, 0.0, 0.0], [x + 1.0, 1.0, 1.0])
            })
            .collect();
        boxes.push(Aabb::from_point(&Vector3::new(2.0, 1.0, 1.0)));
        boxes.push(Aabb::empty());
        boxes.push(bx(
            [f64::NEG_INFINITY, 0.5, f64::NEG_INFINITY],
            [f64::INFINITY; 3],
        ));
        let expected: Vec<(u32, u32)> = vec![
            (0, 1),
            (0, 7),
            (1, 2),
            (1, 5),
            (1, 7),
            (2, 3),
            (2, 5),
            (2, 7),
            (3, 4),
            (3, 7),
            (4, 7),
            (5, 7),
        ];
        for kind in [
            BroadPhaseKind::SweepAndPrune,
            BroadPhaseKind::Bvh,
            BroadPhaseKind::BruteForce,
        ] {
            let mut bp = BroadPhase::new(kind, vec![0; boxes.len()], [[true; 4]; 4]);
            assert_eq!(bp.kind(), kind);
            assert_eq!(bp.update(&boxes), &expected[..], "{kind:?}, first call");
            // Shift the row by one cube: the same pairs, found incrementally.
            let mut moved = boxes.clone();
            for b in &mut moved[..6] {
                b.min.x += 1.0;
                b.max.x += 1.0;
            }
            assert_eq!(bp.update(&moved), &expected[..], "{kind:?}, moved");
            assert_eq!(bp.stats().pairs, expected.len());
            assert!(format!("{bp:?}").contains("BroadPhase"));
        }
    }
}
