//! Bounding-volume hierarchy broad phase: an alternative to the sweep-and-prune of Liesenfeld
//! & Stolfi §6.4 that does not depend on the motion being coherent.
//!
//! * **Build** (first call, or when the number of boxes changes): a binary tree by median
//!   split on the longest axis of the box centres, leaves of at most [`LEAF`] boxes;
//!   O(n log n). Nodes are stored in preorder, so a child's index exceeds its parent's.
//! * **Refit** (every later call): the topology is kept and each node's box is recomputed
//!   from its leaves' boxes in one reverse pass, O(n). The tree stays correct for any motion;
//!   it only gets looser (more node visits) when the boxes move far from where it was built.
//! * **Self-query** by simultaneous descent: a node pair `(a, a)` expands into its children's
//!   self pairs and their cross pair; a cross pair `(a, b)` whose boxes do not overlap, or
//!   whose subtrees hold no wanted group pair (per-node group masks), is pruned, otherwise
//!   the bigger node is split, down to leaf–leaf box tests. Every box pair is reached through
//!   exactly one node pair, so no pair is found twice. The cost is the number of node pairs
//!   visited (reported as the work): O(n + k) for well-separated surfaces with k overlaps.
//!
//! Empty boxes stay in the tree but contribute nothing to the node boxes and are skipped.
//! The descent uses explicit stacks, reused between calls; below its first node pairs it runs
//! in parallel runs whose split does not depend on the thread count ([`Bvh::descend`]).

use super::{touches, Aabb, Groups};
use rayon::prelude::*;
use std::cmp::Ordering;

/// Most boxes in a leaf.
const LEAF: usize = 4;

/// Node pairs the descent expands breadth first before it splits into parallel runs, and the
/// number of runs ([`Bvh::descend`]): many runs per thread of a small machine, so that
/// work stealing evens out runs of unequal cost.
const SEEDS: usize = 512;
const TASKS: usize = 32;

/// One parallel run of the descent: its stack, the pairs it found and the node pairs it
/// visited (kept between calls, so a warm descent allocates nothing).
#[derive(Debug, Default)]
struct Task {
    stack: Vec<(u32, u32)>,
    out: Vec<(u32, u32)>,
    visits: usize,
}

#[derive(Debug, Clone, Copy)]
struct Node {
    bounds: Aabb,
    /// The node's boxes are `order[first..first + count]`.
    first: u32,
    count: u32,
    /// Index of the right child (the left one is `self + 1`); 0 for a leaf.
    right: u32,
    /// Union of the group bits of the node's boxes, and of the groups they want.
    bits: u8,
    want: u8,
    /// The one owner of the node's boxes (`u32::MAX` when they have several).
    owner: u32,
}

impl Node {
    fn is_leaf(&self) -> bool {
        self.right == 0
    }
}

/// BVH state, reused between calls.
#[derive(Debug, Default)]
pub(super) struct Bvh {
    /// Number of boxes of the current tree (`None` before the first call).
    n: Option<usize>,
    nodes: Vec<Node>,
    /// Box indices, grouped by leaf.
    order: Vec<u32>,
    /// This call's boxes, and whether each is non-empty.
    boxes: Vec<Aabb>,
    valid: Vec<bool>,
    /// Node pairs still to visit.
    stack: Vec<(u32, u32)>,
    /// The parallel runs of the descent ([`Bvh::descend`]), with their buffers.
    tasks: Vec<Task>,
    /// Pruned updates ([`Bvh::update_active`]): which boxes are active, and which nodes hold
    /// an active box in their subtree.
    box_active: Vec<bool>,
    node_active: Vec<bool>,
}

impl Bvh {
    /// Refits (or builds) the tree on `boxes` and appends the wanted pairs of overlapping
    /// non-empty boxes to `out` (unsorted). Returns the number of node pairs visited.
    pub(super) fn update(
        &mut self,
        boxes: &[Aabb],
        groups: &Groups,
        out: &mut Vec<(u32, u32)>,
    ) -> usize {
        let n = boxes.len();
        self.boxes.clear();
        self.valid.clear();
        for b in boxes {
            self.valid.push(!b.is_empty());
            self.boxes.push(*b);
        }
        if self.n != Some(n) {
            self.n = Some(n);
            self.build(groups);
        }
        if n == 0 {
            return 0;
        }
        self.refit();
        self.query(groups, out)
    }

    /// Like [`update`](Self::update), but only pairs with an `active` box are reported, and
    /// the boxes not marked active must be those of the last call (they are not read
    /// again). Only the nodes above an active box are refitted, and a node pair whose
    /// subtrees hold no active box is pruned: a later pass of the contact response, which
    /// tests only the pairs of the vertices the last pass moved, visits the part of the tree
    /// around those vertices instead of all of it. Returns the node pairs visited.
    pub(super) fn update_active(
        &mut self,
        boxes: &[Aabb],
        active: &[bool],
        groups: &Groups,
        out: &mut Vec<(u32, u32)>,
    ) -> usize {
        let n = boxes.len();
        if self.n != Some(n) || self.boxes.len() != n {
            // No tree yet: the full update, keeping only the active pairs.
            let work = self.update(boxes, groups, out);
            out.retain(|&(i, j)| active[i as usize] || active[j as usize]);
            return work;
        }
        if n == 0 {
            return 0;
        }
        self.box_active.clear();
        self.box_active.extend_from_slice(&active[..n]);
        for (i, b) in boxes.iter().enumerate().filter(|(i, _)| active[*i]) {
            self.valid[i] = !b.is_empty();
            self.boxes[i] = *b;
        }
        self.refit_active();
        self.query_active(groups, out)
    }

    fn build(&mut self, groups: &Groups) {
        let n = self.boxes.len();
        self.order.clear();
        self.order.extend(0..n as u32);
        // Boxes of one owner stay contiguous, so subtrees split by owner first.
        if groups.cross_only {
            self.order.sort_by_key(|&i| groups.owner[i as usize]);
        }
        self.nodes.clear();
        if n == 0 {
            return;
        }
        // Centres, with NaN (empty or infinite boxes) replaced by 0 so that the ordering is
        // total.
        let centres: Vec<[f64; 3]> = self
            .boxes
            .iter()
            .map(|b| {
                let c = (b.min + b.max) * 0.5;
                [0, 1, 2].map(|k| if c[k].is_nan() { 0.0 } else { c[k] })
            })
            .collect();
        self.split(&centres, groups, 0, n);
    }

    /// Appends the subtree of `order[lo..hi]` in preorder; returns its root's index.
    fn split(&mut self, centres: &[[f64; 3]], groups: &Groups, lo: usize, hi: usize) -> u32 {
        let index = self.nodes.len() as u32;
        let (mut bits, mut want) = (0u8, 0u8);
        for &i in &self.order[lo..hi] {
            bits |= groups.bit[i as usize];
            want |= groups.want[i as usize];
        }
        let first_owner = groups.owner[self.order[lo] as usize];
        let one_owner = self.order[lo..hi]
            .iter()
            .all(|&i| groups.owner[i as usize] == first_owner);
        let owner = if one_owner { first_owner } else { u32::MAX };
        self.nodes.push(Node {
            bounds: Aabb::empty(),
            first: lo as u32,
            count: (hi - lo) as u32,
            right: 0,
            bits,
            want,
            owner,
        });
        if hi - lo <= LEAF && one_owner {
            return index;
        }
        if !one_owner {
            // Split at the owner boundary nearest the middle (owners are contiguous).
            let mid = (lo + hi) / 2;
            let owner_at = |k: usize| groups.owner[self.order[k] as usize];
            let split = (lo + 1..hi)
                .filter(|&k| owner_at(k) != owner_at(k - 1))
                .min_by_key(|&k| k.abs_diff(mid))
                .unwrap_or(mid);
            self.split(centres, groups, lo, split);
            let right = self.split(centres, groups, split, hi);
            self.nodes[index as usize].right = right;
            return index;
        }
        let (mut cmin, mut cmax) = ([f64::INFINITY; 3], [f64::NEG_INFINITY; 3]);
        for &i in &self.order[lo..hi] {
            for k in 0..3 {
                cmin[k] = cmin[k].min(centres[i as usize][k]);
                cmax[k] = cmax[k].max(centres[i as usize][k]);
            }
        }
        let extent = |k: usize| {
            let e = cmax[k] - cmin[k];
            if e.is_nan() {
                0.0
            } else {
                e
            }
        };
        let axis = (0..3)
            .max_by(|&a, &b| extent(a).partial_cmp(&extent(b)).unwrap_or(Ordering::Equal))
            .unwrap_or(0);
        let mid = (lo + hi) / 2;
        self.order[lo..hi].select_nth_unstable_by(mid - lo, |&a, &b| {
            centres[a as usize][axis]
                .partial_cmp(&centres[b as usize][axis])
                .unwrap_or(Ordering::Equal)
        });
        self.split(centres, groups, lo, mid);
        let right = self.split(centres, groups, mid, hi);
        self.nodes[index as usize].right = right;
        index
    }

    /// Recomputes the node boxes bottom-up (children follow their parents).
    fn refit(&mut self) {
        for k in (0..self.nodes.len()).rev() {
            let node = self.nodes[k];
            let mut bounds = Aabb::empty();
            if node.is_leaf() {
                let range = node.first as usize..(node.first + node.count) as usize;
                for &i in &self.order[range] {
                    if self.valid[i as usize] {
                        bounds.merge(&self.boxes[i as usize]);
                    }
                }
            } else {
                bounds = self.nodes[k + 1].bounds;
                bounds.merge(&self.nodes[node.right as usize].bounds);
            }
            self.nodes[k].bounds = bounds;
        }
    }

    /// Marks the nodes above an active box and refits only those (the others' boxes did not
    /// change since they were last fitted).
    fn refit_active(&mut self) {
        self.node_active.clear();
        self.node_active.resize(self.nodes.len(), false);
        for k in (0..self.nodes.len()).rev() {
            let node = self.nodes[k];
            if node.is_leaf() {
                let range = node.first as usize..(node.first + node.count) as usize;
                if !self.order[range.clone()]
                    .iter()
                    .any(|&i| self.box_active[i as usize])
                {
                    continue;
                }
                let mut bounds = Aabb::empty();
                for &i in &self.order[range] {
                    if self.valid[i as usize] {
                        bounds.merge(&self.boxes[i as usize]);
                    }
                }
                self.nodes[k].bounds = bounds;
            } else {
                let r = node.right as usize;
                if !(self.node_active[k + 1] || self.node_active[r]) {
                    continue;
                }
                let mut bounds = self.nodes[k + 1].bounds;
                bounds.merge(&self.nodes[r].bounds);
                self.nodes[k].bounds = bounds;
            }
            self.node_active[k] = true;
        }
    }

    /// [`query`](Self::query) restricted to pairs with an active box: a node pair neither of
    /// whose subtrees holds one is pruned.
    fn query_active(&mut self, groups: &Groups, out: &mut Vec<(u32, u32)>) -> usize {
        self.descend(groups, out, true)
    }

    /// The box pairs of two leaves (of one leaf with itself when `same`) with an active box.
    fn leaf_pairs(
        &self,
        a: &Node,
        b: &Node,
        same: bool,
        groups: &Groups,
        out: &mut Vec<(u32, u32)>,
    ) {
        let ia = &self.order[a.first as usize..(a.first + a.count) as usize];
        let ib = &self.order[b.first as usize..(b.first + b.count) as usize];
        for (k, &i) in ia.iter().enumerate() {
            let from = if same { k + 1 } else { 0 };
            for &j in &ib[from..] {
                if self.box_active[i as usize] || self.box_active[j as usize] {
                    self.test(i, j, groups, out);
                }
            }
        }
    }

    /// Simultaneous descent from `(root, root)`; returns the node pairs visited.
    fn query(&mut self, groups: &Groups, out: &mut Vec<(u32, u32)>) -> usize {
        self.descend(groups, out, false)
    }

    /// The descent of [`query`](Self::query) and, with `active_only`, of
    /// [`query_active`](Self::query_active) (node pairs without an active box pruned, leaf
    /// pairs tested only where a box is active); returns the node pairs visited.
    ///
    /// The first node pairs are expanded breadth first until [`SEEDS`] are pending (or none
    /// are), then the pending pairs are dealt out to [`TASKS`] runs (pair `k` to run
    /// `k mod TASKS`: neighbouring pairs of the breadth-first order cover neighbouring space
    /// and a contact is local, so dealing them in turn spreads its work over the runs) that
    /// descend depth first in parallel, each into its own pair list, appended in run order.
    /// Every node pair is still visited exactly once, so the pairs found and the work are
    /// those of one sequential descent; the split does not depend on the thread count, and
    /// the caller sorts the pairs. On `contact_10k` (12 004 surface primitives, ~3 000
    /// pairs) the descent and its box tests were ~4 % of the step's CPU time, all of it on
    /// one thread (EXPERIMENTS.md, contact_10k).
    fn descend(&mut self, groups: &Groups, out: &mut Vec<(u32, u32)>, active_only: bool) -> usize {
        let mut visits = 0;
        let mut queue = std::mem::take(&mut self.stack);
        queue.clear();
        queue.push((0, 0));
        let mut head = 0;
        while head < queue.len() && queue.len() - head < SEEDS {
            let (a, b) = queue[head];
            head += 1;
            visits += 1;
            self.visit(a, b, groups, active_only, &mut queue, out);
        }
        let seeds = &queue[head..];
        let mut tasks = std::mem::take(&mut self.tasks);
        if tasks.len() != TASKS {
            tasks.resize_with(TASKS, Task::default);
        }
        let this = &*self;
        tasks.par_iter_mut().enumerate().for_each(|(k, task)| {
            task.out.clear();
            task.visits = 0;
            task.stack.clear();
            task.stack.extend(seeds.iter().skip(k).step_by(TASKS).rev());
            while let Some((a, b)) = task.stack.pop() {
                task.visits += 1;
                this.visit(a, b, groups, active_only, &mut task.stack, &mut task.out);
            }
        });
        for task in &tasks {
            out.extend_from_slice(&task.out);
            visits += task.visits;
        }
        self.tasks = tasks;
        self.stack = queue;
        visits
    }

    /// Visits the node pair `(a, b)`: pushes the node pairs it expands into onto `stack`, or
    /// tests a leaf pair's boxes into `out`.
    fn visit(
        &self,
        a: u32,
        b: u32,
        groups: &Groups,
        active_only: bool,
        stack: &mut Vec<(u32, u32)>,
        out: &mut Vec<(u32, u32)>,
    ) {
        if active_only && !(self.node_active[a as usize] || self.node_active[b as usize]) {
            return;
        }
        let (na, nb) = (self.nodes[a as usize], self.nodes[b as usize]);
        if na.want & nb.bits == 0 || na.bounds.is_empty() || nb.bounds.is_empty() {
            return;
        }
        if groups.cross_only && na.owner != u32::MAX && na.owner == nb.owner {
            return;
        }
        if a == b {
            if !na.is_leaf() {
                let (l, r) = (a + 1, na.right);
                stack.extend([(l, l), (r, r), (l, r)]);
            } else if active_only {
                self.leaf_pairs(&na, &na, true, groups, out);
            } else {
                self.leaf_self(&na, groups, out);
            }
            return;
        }
        if !touches(&na.bounds, &nb.bounds) {
            return;
        }
        match (na.is_leaf(), nb.is_leaf()) {
            (true, true) if active_only => self.leaf_pairs(&na, &nb, false, groups, out),
            (true, true) => self.leaf_pair(&na, &nb, groups, out),
            (false, leaf_b) if leaf_b || na.count >= nb.count => {
                stack.extend([(a + 1, b), (na.right, b)]);
            }
            _ => stack.extend([(a, b + 1), (a, nb.right)]),
        }
    }

    fn test(&self, i: u32, j: u32, groups: &Groups, out: &mut Vec<(u32, u32)>) {
        let (iu, ju) = (i as usize, j as usize);
        if groups.wanted(iu, ju)
            && self.valid[iu]
            && self.valid[ju]
            && touches(&self.boxes[iu], &self.boxes[ju])
        {
            out.push((i.min(j), i.max(j)));
        }
    }

    fn leaf_self(&self, leaf: &Node, groups: &Groups, out: &mut Vec<(u32, u32)>) {
        let items = &self.order[leaf.first as usize..(leaf.first + leaf.count) as usize];
        for (k, &i) in items.iter().enumerate() {
            for &j in &items[k + 1..] {
                self.test(i, j, groups, out);
            }
        }
    }

    fn leaf_pair(&self, a: &Node, b: &Node, groups: &Groups, out: &mut Vec<(u32, u32)>) {
        let ia = &self.order[a.first as usize..(a.first + a.count) as usize];
        let ib = &self.order[b.first as usize..(b.first + b.count) as usize];
        for &i in ia {
            for &j in ib {
                self.test(i, j, groups, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Vector3;

    #[test]
    fn tree_is_balanced_and_covers_every_box_once() {
        let n = 1000;
        let boxes: Vec<Aabb> = (0..n)
            .map(|i| {
                let p = Vector3::new((i % 10) as f64, ((i / 10) % 10) as f64, (i / 100) as f64);
                Aabb::from_point(&p)
            })
            .collect();
        let g = Groups::new(&vec![0; n], &[[true; 4]; 4]);
        let mut bvh = Bvh::default();
        let mut out = Vec::new();
        bvh.update(&boxes, &g, &mut out);
        assert!(out.is_empty(), "distinct points never meet");
        let mut seen = vec![0; n];
        let mut max_depth = 0;
        let mut stack = vec![(0u32, 0usize)];
        while let Some((k, depth)) = stack.pop() {
            let node = bvh.nodes[k as usize];
            max_depth = max_depth.max(depth);
            if node.is_leaf() {
                assert!(node.count as usize <= LEAF);
                for &i in &bvh.order[node.first as usize..(node.first + node.count) as usize] {
                    seen[i as usize] += 1;
                    assert!(touches(&node.bounds, &boxes[i as usize]));
                }
            } else {
                assert!(node.right > k + 1);
                stack.push((k + 1, depth + 1));
                stack.push((node.right, depth + 1));
            }
        }
        assert!(seen.iter().all(|&s| s == 1));
        // ⌈log₂(1000 / 4)⌉ = 8 levels below the root for median splits.
        assert!(max_depth <= 8, "depth {max_depth}");
    }

    /// The descent split into parallel runs finds every overlapping pair once (against all
    /// pairs tested one by one), on a tree big enough that several runs find pairs, and on
    /// any number of threads the same pairs and work.
    #[test]
    fn the_split_descent_finds_every_pair_once() {
        let n = 2000;
        let boxes: Vec<Aabb> = (0..n)
            .map(|i| {
                let k = (i * 7919) % n;
                let c = Vector3::new((k % 20) as f64, ((k / 20) % 10) as f64, (k / 200) as f64);
                let mut b = Aabb::from_point(&(c * 0.9));
                b.inflate(0.3 + 0.2 * ((i % 3) as f64));
                b
            })
            .collect();
        let g = Groups::new(&vec![0; n], &[[true; 4]; 4]);
        let mut expected = Vec::new();
        for i in 0..n {
            for j in i + 1..n {
                if touches(&boxes[i], &boxes[j]) {
                    expected.push((i as u32, j as u32));
                }
            }
        }
        let run = |threads: usize| {
            crate::linalg::test_support::on_threads(threads, || {
                let mut bvh = Bvh::default();
                let mut out = Vec::new();
                let work = bvh.update(&boxes, &g, &mut out);
                let busy = bvh.tasks.iter().filter(|t| !t.out.is_empty()).count();
                out.sort_unstable();
                (out, work, busy)
            })
        };
        let (one, work_one, busy) = run(1);
        assert_eq!(one, expected);
        assert!(busy >= TASKS / 2, "{busy} runs found pairs");
        let (two, work_two, _) = run(2);
        assert_eq!((two, work_two), (one, work_one));
    }
}
