//! One level of nested dissection for sweeps that run side by side: `K` pieces of a matrix
//! graph with short boundaries, then a separator. Used by the Eisenstat sweeps
//! (`linalg::eisenstat`) and the multigrid's Gauss–Seidel smoothers (`linalg::amg`, finest
//! and coarse levels).
//!
//! The separator's rows run on one thread after the parts, so the cut between parts should
//! be small. Contiguous ranges of the vertex numbers do not give
//! that: a box grid numbered x-fastest (`mesh::generate::box_grid`) cut in two halves of its
//! numbers is cut across its *slowest* axis, and on the 20k bench bar (40 × 10 × 10 cells)
//! that cut holds a tenth of the vertices. The parts are therefore slabs of a breadth-first
//! level structure from a pseudo-peripheral vertex (N. E. Gibbs, W. G. Poole and
//! P. K. Stockmeyer, "An algorithm for reducing the bandwidth and profile of a sparse
//! matrix", SIAM J. Numer. Anal. 13(2), 1976 — the start of Cuthill–McKee orderings): the
//! levels of a long body from one end are its cross-sections, so the cuts go across it.
//! Each part then keeps its vertices in their own relative order (the order the sweeps of
//! one part run in is the natural order, as without parts).
//!
//! The partition depends on the pattern only: the same parts on any number of threads.
//!
//! Why not the multilevel node separator of nested dissection (`ordering::separator`),
//! which would find smaller cuts: it is made again whenever a body's pattern changes (a
//! contact island's coupled pattern can), and the level structure costs one pass over the
//! pattern where the multilevel scheme costs many. On the 20k bench bar the cut it gives
//! already keeps the iterations of the natural order (41.7 against 41.8 per step).

use super::BlockPattern;
use std::collections::VecDeque;

/// A graph by its rows' neighbour lists (a matrix pattern; the row's own index may be
/// listed).
pub trait Adjacency {
    fn n_nodes(&self) -> usize;
    fn neighbours(&self, i: usize) -> &[u32];
}

impl Adjacency for BlockPattern {
    fn n_nodes(&self) -> usize {
        self.n_rows()
    }
    fn neighbours(&self, i: usize) -> &[u32] {
        &self.cols[self.row_ptr[i] as usize..self.row_ptr[i + 1] as usize]
    }
}

/// A compressed-row graph with `usize` offsets (the multigrid's block matrices).
pub struct RowGraph<'a> {
    pub ptr: &'a [usize],
    pub idx: &'a [u32],
}

impl Adjacency for RowGraph<'_> {
    fn n_nodes(&self) -> usize {
        self.ptr.len() - 1
    }
    fn neighbours(&self, i: usize) -> &[u32] {
        &self.idx[self.ptr[i]..self.ptr[i + 1]]
    }
}

/// Fewest rows a part is given: below twice this, the matrix is one part and its sweeps are
/// plain block SSOR in the natural order. A sweep over a part must cost more than waking a
/// thread (a few microseconds), and the separator must stay a small share of the rows.
pub const MIN_PART_ROWS: usize = 2048;

/// Most parts, whatever the size. Two, for the two cores of the machines this was measured
/// on: on the 20k bench bar four parts took 43.1 CG iterations per step against 41.7 for
/// two, and were slower on two threads (EXPERIMENTS.md, issue 43, *Two cores that pay*).
/// More cores would want more parts; the number must not follow the thread count, or the
/// bits would.
pub const MAX_PARTS: usize = 2;

/// How many parts a matrix of `rows` block rows is cut into.
pub fn parts_for(rows: usize) -> usize {
    (rows / MIN_PART_ROWS).clamp(1, MAX_PARTS)
}

/// Breadth-first sweeps from the far end of the last one, at most, when looking for a
/// pseudo-peripheral vertex (the depth stops growing after two or three on meshes).
const PERIPHERAL_SWEEPS: usize = 5;

/// The rows of `p` ordered part after part, then the separator, and where each group
/// starts: `perm[ii]` is the row at position `ii`; part `k < K` holds positions
/// `bounds[k]..bounds[k + 1]`, the separator `bounds[K]..bounds[K + 1] = n`. No block of
/// `p` couples two different parts; the separator holds every row coupled to a part before
/// its own. The parts are balanced by `work[i]` (what row `i` costs a sweep).
pub fn partition(p: &impl Adjacency, work: &[usize], k: usize) -> (Vec<u32>, Vec<usize>) {
    let n = p.n_nodes();
    if k <= 1 || n == 0 {
        return ((0..n as u32).collect(), vec![0, n, n]);
    }
    let order = level_order(p);
    let total: usize = work.iter().sum();
    let mut group = vec![0_u32; n];
    let mut acc = 0;
    let mut current = 0;
    for &v in &order {
        // The part is the one whose share of the work `acc` falls in.
        while current + 1 < k && acc * k >= total * (current + 1) {
            current += 1;
        }
        group[v as usize] = current as u32;
        acc += work[v as usize];
    }
    // The separator: the rows with a neighbour in an earlier part (on a level structure,
    // the first level of each slab after the first).
    let separator: Vec<bool> = (0..n)
        .map(|i| {
            p.neighbours(i)
                .iter()
                .any(|&j| group[j as usize] < group[i])
        })
        .collect();
    for (g, &s) in group.iter_mut().zip(&separator) {
        if s {
            *g = k as u32;
        }
    }
    // Stable by group: each keeps its rows' relative order.
    let mut perm: Vec<u32> = (0..n as u32).collect();
    perm.sort_by_key(|&i| group[i as usize]);
    let mut bounds = vec![0; k + 2];
    for &g in &group {
        bounds[g as usize + 1] += 1;
    }
    for i in 0..=k {
        bounds[i + 1] += bounds[i];
    }
    (perm, bounds)
}

/// Every vertex once: each connected component (by its smallest vertex) in breadth-first
/// order from a pseudo-peripheral vertex of it.
fn level_order(p: &impl Adjacency) -> Vec<u32> {
    let n = p.n_nodes();
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    // Scratch marks for the trial sweeps, by the sweep's number (0 = never).
    let mut mark = vec![0_u32; n];
    let mut sweep = 0;
    let mut queue = VecDeque::new();
    for first in 0..n {
        if seen[first] {
            continue;
        }
        // Gibbs–Poole–Stockmeyer's search: sweep from the last vertex reached until the
        // depth stops growing.
        let mut start = first;
        let mut depth = 0;
        for _ in 0..PERIPHERAL_SWEEPS {
            sweep += 1;
            let (last, d) = bfs(p, start, &mut mark, sweep, &mut queue, |_| {});
            if d <= depth {
                break;
            }
            depth = d;
            start = last;
        }
        sweep += 1;
        bfs(p, start, &mut mark, sweep, &mut queue, |v| {
            seen[v as usize] = true;
            order.push(v);
        });
    }
    order
}

/// A breadth-first sweep from `start` marking with `sweep`; `visit` sees each vertex in
/// order. Returns the last vertex reached and its depth.
fn bfs(
    p: &impl Adjacency,
    start: usize,
    mark: &mut [u32],
    sweep: u32,
    queue: &mut VecDeque<(u32, usize)>,
    mut visit: impl FnMut(u32),
) -> (usize, usize) {
    queue.clear();
    queue.push_back((start as u32, 0));
    mark[start] = sweep;
    let mut last = (start, 0);
    while let Some((v, d)) = queue.pop_front() {
        visit(v);
        last = (v as usize, d);
        let v = v as usize;
        for &j in p.neighbours(v) {
            if mark[j as usize] != sweep {
                mark[j as usize] = sweep;
                queue.push_back((j, d + 1));
            }
        }
    }
    last
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::test_support::bar_system;

    /// On a long bar numbered x-fastest, two parts cut across the long axis: the separator
    /// is a cross-section (a level structure's is a little slanted), far below the 41 × 5
    /// vertices of a cut across the slowest axis; no block couples the two parts; each group
    /// keeps its rows' relative order.
    #[test]
    fn two_parts_of_a_bar_are_cut_across_it() {
        let (a, n) = bar_system([40, 4, 4]);
        let p = &*a.pattern;
        let work = vec![1; n];
        let (perm, bounds) = partition(p, &work, 2);
        assert_eq!((bounds.len(), bounds[0], bounds[3]), (4, 0, n));
        let mut group = vec![0; n];
        for g in 0..3 {
            for &i in &perm[bounds[g]..bounds[g + 1]] {
                group[i as usize] = g;
            }
        }
        let separator = bounds[3] - bounds[2];
        assert!(separator > 0 && separator <= 3 * 25, "{separator} of {n}");
        assert!(
            bounds[1] >= n / 3 && bounds[2] - bounds[1] >= n / 3,
            "{bounds:?}"
        );
        for i in 0..n {
            for &j in &p.cols[p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize] {
                let (gi, gj) = (group[i], group[j as usize]);
                assert!(
                    gi == gj || gi == 2 || gj == 2,
                    "{i} and {j} couple two parts"
                );
            }
        }
        for g in 0..3 {
            assert!(perm[bounds[g]..bounds[g + 1]]
                .windows(2)
                .all(|w| w[0] < w[1]));
        }
    }
}
