//! Node separators for nested dissection: multilevel bisection with FM refinement.
//!
//! The scheme is METIS's (Karypis & Kumar, *A fast and high quality multilevel scheme for
//! partitioning irregular graphs*, SIAM J. Sci. Comput. 20(1), 1998), on node separators as
//! in Ashcraft & Liu (*Robust ordering of sparse matrices using multisection*, SIAM J. Matrix
//! Anal. Appl. 19(3), 1998):
//!
//! 1. **Coarsen** by heavy-edge matching (vertices visited by increasing degree) until the
//!    graph has at most [`COARSEST`] vertices or stops shrinking; vertex weights add up.
//! 2. **Initial separators** on the coarsest graph (and again on the original graph, as rivals
//!    of the projected one), each thinned and refined, the best kept:
//!    with positions, the weighted median plane along x, y and z splits the vertices in two
//!    (the geometric idea of Zhuang & Canny, on vertices), and the boundary of the half with
//!    the lighter boundary is the separator; always, the middle level of a breadth-first
//!    level structure from a pseudo-peripheral vertex (Gibbs, Poole & Stockmeyer 1976;
//!    George & Liu 1979), a separator of any connected graph.
//! 3. **Uncoarsen**: each level inherits its coarse vertex's side, then is thinned and
//!    refined.
//!
//! **Thinning** moves a separator vertex with no neighbour on one side into the other side.
//! **Refinement** is Fiduccia–Mattheyses on the node separator (METIS `FM_2WayNodeRefine`):
//! moving separator vertex `v` into side X pulls its neighbours on the other side into the
//! separator, gain `w(v) − w(N(v) ∩ other)`; the best feasible move is taken in turn (each
//! vertex once per pass, at most [`MAX_BAD_MOVES`] moves past the best state, which is then
//! restored), keeping each side at most [`MAX_SIDE`] of the weight. The best state is the
//! lightest separator, ties broken by balance.

use super::Graph;
use nalgebra::Vector3;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Coarsening stops at this many vertices.
const COARSEST: usize = 100;
/// Largest fraction of the weight either side of a separator may hold.
const MAX_SIDE: f64 = 0.6;
/// FM passes per level (a pass stops early when it improves nothing).
const PASSES: usize = 8;
/// Moves an FM pass makes past its best state before giving up.
const MAX_BAD_MOVES: usize = 60;

pub(super) const A: u8 = 0;
pub(super) const B: u8 = 1;
pub(super) const S: u8 = 2;

/// A vertex- and edge-weighted graph in local indices, with optional coordinates.
pub(super) struct WGraph {
    ptr: Vec<u32>,
    adj: Vec<u32>,
    ew: Vec<u32>,
    vw: Vec<u32>,
    coords: Option<Vec<[f64; 3]>>,
}

impl WGraph {
    /// The unit-weight subgraph induced by `verts` (`local[v]` = index in `verts`, or
    /// `u32::MAX` outside).
    pub(super) fn induced(
        graph: &Graph,
        verts: &[u32],
        local: &[u32],
        positions: Option<&[Vector3<f64>]>,
    ) -> Self {
        let mut ptr = Vec::with_capacity(verts.len() + 1);
        let mut adj = Vec::new();
        ptr.push(0);
        for &v in verts {
            let nb = graph
                .neighbours(v as usize)
                .iter()
                .map(|&u| local[u as usize]);
            adj.extend(nb.filter(|&l| l != u32::MAX));
            ptr.push(adj.len() as u32);
        }
        let coords = positions.map(|p| {
            verts
                .iter()
                .map(|&v| p[v as usize])
                .map(|x| [x.x, x.y, x.z])
                .collect()
        });
        Self {
            ptr,
            ew: vec![1; adj.len()],
            adj,
            vw: vec![1; verts.len()],
            coords,
        }
    }

    pub(super) fn n(&self) -> usize {
        self.ptr.len() - 1
    }

    fn nb(&self, v: usize) -> &[u32] {
        &self.adj[self.ptr[v] as usize..self.ptr[v + 1] as usize]
    }

    fn weight(&self, side: &[u8]) -> [u64; 3] {
        let mut w = [0; 3];
        side.iter()
            .zip(&self.vw)
            .for_each(|(&s, &x)| w[s as usize] += x as u64);
        w
    }

    /// Connected components, each in breadth-first order.
    pub(super) fn components(&self) -> Vec<Vec<u32>> {
        let mut seen = vec![false; self.n()];
        let mut comps = Vec::new();
        for r in 0..self.n() {
            if !seen[r] {
                seen[r] = true;
                let (_, order) = self.bfs(r, Some(&mut seen));
                comps.push(order);
            }
        }
        comps
    }

    /// Breadth-first search from `root`: levels and visit order. With `seen`, only unseen
    /// vertices are visited (and marked).
    fn bfs(&self, root: usize, mut seen: Option<&mut Vec<bool>>) -> (Vec<u32>, Vec<u32>) {
        let mut level = vec![u32::MAX; self.n()];
        level[root] = 0;
        let mut order = vec![root as u32];
        let mut head = 0;
        while head < order.len() {
            let v = order[head] as usize;
            head += 1;
            for &u in self.nb(v) {
                let u = u as usize;
                let fresh = seen
                    .as_mut()
                    .is_none_or(|s| !std::mem::replace(&mut s[u], true));
                if fresh && level[u] == u32::MAX {
                    level[u] = level[v] + 1;
                    order.push(u as u32);
                }
            }
        }
        (level, order)
    }

    /// Multilevel node separator of this connected graph: a side (A, B or S) per vertex.
    pub(super) fn separator(&self) -> Vec<u8> {
        self.multilevel(true)
    }

    /// The best of the refined separator projected from the coarsened graph and, on the
    /// coarsest and the finest (`top`) level, the refined initial candidates.
    fn multilevel(&self, top: bool) -> Vec<u8> {
        let max_side = (MAX_SIDE * self.vw.iter().map(|&w| w as f64).sum::<f64>()).ceil() as u64;
        let mut candidates = Vec::new();
        let coarse = (self.n() > COARSEST).then(|| self.coarsen()).flatten();
        if let Some((coarse, map)) = &coarse {
            let cside = coarse.multilevel(false);
            candidates.push(map.iter().map(|&c| cside[c as usize]).collect());
        }
        if top || coarse.is_none() {
            if let Some(c) = &self.coords {
                for axis in [0, 1, 2] {
                    let mut idx: Vec<u32> = (0..self.n() as u32).collect();
                    idx.sort_unstable_by(|&a, &b| {
                        c[a as usize][axis].total_cmp(&c[b as usize][axis])
                    });
                    candidates.push(self.boundary_separator(self.halves(&idx)));
                }
            }
            candidates.push(self.level_separator());
        }
        let mut best: Option<((bool, u64, u64), Vec<u8>)> = None;
        for mut side in candidates {
            self.thin(&mut side);
            self.fm(&mut side, max_side);
            let [a, b, s] = self.weight(&side);
            let key = (a.max(b) > max_side || a == 0 || b == 0, s, a.abs_diff(b));
            if best.as_ref().is_none_or(|(k, _)| key < *k) {
                best = Some((key, side));
            }
        }
        best.map_or_else(|| vec![S; self.n()], |b| b.1)
    }

    /// Heavy-edge matching (lightest-degree vertices first) and the contracted graph, or
    /// `None` when it would shrink by less than 10 %.
    fn coarsen(&self) -> Option<(WGraph, Vec<u32>)> {
        let n = self.n();
        let mut order: Vec<u32> = (0..n as u32).collect();
        order.sort_by_key(|&v| (self.nb(v as usize).len(), v));
        let mut map = vec![u32::MAX; n];
        let mut members: Vec<[u32; 2]> = Vec::new();
        for &v in &order {
            let v = v as usize;
            if map[v] != u32::MAX {
                continue;
            }
            let (s, e) = (self.ptr[v] as usize, self.ptr[v + 1] as usize);
            let mate = (s..e)
                .filter(|&k| map[self.adj[k] as usize] == u32::MAX)
                .max_by_key(|&k| (self.ew[k], Reverse(self.adj[k])))
                .map_or(v, |k| self.adj[k] as usize);
            map[v] = members.len() as u32;
            map[mate] = members.len() as u32;
            members.push([v as u32, mate as u32]);
        }
        let cn = members.len();
        if cn * 10 > n * 9 {
            return None;
        }
        let (mut ptr, mut adj, mut ew, mut vw) = (vec![0u32], Vec::new(), Vec::new(), Vec::new());
        let mut slot = vec![u32::MAX; cn];
        for (c, m) in members.iter().enumerate() {
            let start = adj.len();
            let pair: &[u32] = if m[0] == m[1] { &m[..1] } else { &m[..] };
            for &v in pair {
                let (s, e) = (
                    self.ptr[v as usize] as usize,
                    self.ptr[v as usize + 1] as usize,
                );
                for k in s..e {
                    let cu = map[self.adj[k] as usize];
                    if cu as usize == c {
                        continue;
                    }
                    if slot[cu as usize] == u32::MAX {
                        slot[cu as usize] = adj.len() as u32;
                        adj.push(cu);
                        ew.push(0);
                    }
                    ew[slot[cu as usize] as usize] += self.ew[k];
                }
            }
            adj[start..]
                .iter()
                .for_each(|&cu| slot[cu as usize] = u32::MAX);
            ptr.push(adj.len() as u32);
            vw.push(pair.iter().map(|&v| self.vw[v as usize]).sum());
        }
        let coords = self.coords.as_ref().map(|x| {
            let avg = |p: &[u32]| -> [f64; 3] {
                let w: f64 = p.iter().map(|&v| self.vw[v as usize] as f64).sum();
                std::array::from_fn(|a| {
                    p.iter()
                        .map(|&v| x[v as usize][a] * self.vw[v as usize] as f64)
                        .sum::<f64>()
                        / w
                })
            };
            members
                .iter()
                .map(|m| avg(if m[0] == m[1] { &m[..1] } else { &m[..] }))
                .collect()
        });
        Some((
            WGraph {
                ptr,
                adj,
                ew,
                vw,
                coords,
            },
            map,
        ))
    }

    /// Vertices in `order` up to half the weight go to A, the rest to B.
    fn halves(&self, order: &[u32]) -> Vec<u8> {
        let total: u64 = self.vw.iter().map(|&w| w as u64).sum();
        let mut side = vec![B; self.n()];
        let mut acc = 0;
        for &v in order {
            if 2 * acc >= total {
                break;
            }
            side[v as usize] = A;
            acc += self.vw[v as usize] as u64;
        }
        side
    }

    /// From a two-way split, the boundary of the side whose boundary is lighter.
    fn boundary_separator(&self, mut side: Vec<u8>) -> Vec<u8> {
        let boundary: Vec<usize> = (0..self.n())
            .filter(|&v| self.nb(v).iter().any(|&u| side[u as usize] != side[v]))
            .collect();
        let mut w = [0u64; 2];
        boundary
            .iter()
            .for_each(|&v| w[side[v] as usize] += self.vw[v] as u64);
        let which = if w[0] <= w[1] { A } else { B };
        for v in boundary {
            if side[v] == which {
                side[v] = S;
            }
        }
        side
    }

    /// The level holding the weighted median of a BFS from a pseudo-peripheral vertex.
    fn level_separator(&self) -> Vec<u8> {
        let depth =
            |(level, order): &(Vec<u32>, Vec<u32>)| level[*order.last().unwrap_or(&0) as usize];
        let mut lo = self.bfs(0, None);
        // George & Liu: restart from a min-degree vertex of the last level while the
        // eccentricity grows.
        for _ in 0..4 {
            let d = depth(&lo);
            let far = lo.1.iter().rev().take_while(|&&v| lo.0[v as usize] == d);
            let far = far
                .min_by_key(|&&v| (self.nb(v as usize).len(), v))
                .map_or(0, |&v| v as usize);
            let next = self.bfs(far, None);
            let grew = depth(&next) > d;
            lo = next;
            if !grew {
                break;
            }
        }
        let (level, order) = lo;
        let half = self.halves(&order);
        let mid = order
            .iter()
            .find(|&&v| half[v as usize] == B)
            .map_or(0, |&v| level[v as usize]);
        level
            .iter()
            .map(|&l| [A, S, B][(l.cmp(&mid) as i32 + 1) as usize])
            .collect()
    }

    /// Moves separator vertices that touch only one side (or none) into that side.
    fn thin(&self, side: &mut [u8]) {
        for v in 0..self.n() {
            if side[v] == S {
                let touches = |s: u8| self.nb(v).iter().any(|&u| side[u as usize] == s);
                if !touches(B) {
                    side[v] = A;
                } else if !touches(A) {
                    side[v] = B;
                }
            }
        }
    }

    /// Gain of moving separator vertex `v` into side `to`.
    fn gain(&self, v: usize, to: u8, side: &[u8]) -> i64 {
        let pulled: u64 = self
            .nb(v)
            .iter()
            .filter(|&&u| side[u as usize] == 1 - to)
            .map(|&u| self.vw[u as usize] as u64)
            .sum();
        self.vw[v] as i64 - pulled as i64
    }

    /// Fiduccia–Mattheyses refinement of the node separator (see the module doc).
    fn fm(&self, side: &mut [u8], max_side: u64) {
        let n = self.n();
        let mut w = self.weight(side);
        let mut locked = vec![false; n];
        let score = |w: &[u64; 3]| (w[0].max(w[1]) > max_side, w[2], w[0].abs_diff(w[1]));
        for _ in 0..PASSES {
            let start = score(&w);
            locked.fill(false);
            let mut heaps: [BinaryHeap<(i64, Reverse<u32>)>; 2] = Default::default();
            for v in (0..n).filter(|&v| side[v] == S) {
                for to in [A, B] {
                    heaps[to as usize].push((self.gain(v, to, side), Reverse(v as u32)));
                }
            }
            let (mut best, mut best_len) = (start, 0);
            let mut log: Vec<(u32, u8)> = Vec::new();
            let mut bad = 0;
            loop {
                // The best valid entry of each heap (stale entries are dropped or re-keyed).
                let mut top: [Option<(i64, usize)>; 2] = [None, None];
                for to in [A, B] {
                    let h = &mut heaps[to as usize];
                    while let Some(&(g, Reverse(v))) = h.peek() {
                        let v = v as usize;
                        h.pop();
                        if side[v] != S || locked[v] {
                            continue;
                        }
                        let actual = self.gain(v, to, side);
                        h.push((actual, Reverse(v as u32)));
                        if actual == g {
                            if w[to as usize] + self.vw[v] as u64 <= max_side {
                                top[to as usize] = Some((g, v));
                            }
                            break;
                        }
                    }
                }
                let to = match top {
                    [Some((ga, _)), Some((gb, _))] => {
                        if ga > gb || (ga == gb && w[0] <= w[1]) {
                            A
                        } else {
                            B
                        }
                    }
                    [Some(_), None] => A,
                    [None, Some(_)] => B,
                    [None, None] => break,
                };
                let Some((_, v)) = top[to as usize] else {
                    break;
                };
                let other = 1 - to;
                side[v] = to;
                locked[v] = true;
                log.push((v as u32, S));
                w[to as usize] += self.vw[v] as u64;
                w[2] -= self.vw[v] as u64;
                for &u in self.nb(v) {
                    let u = u as usize;
                    if side[u] != other {
                        continue;
                    }
                    side[u] = S;
                    log.push((u as u32, other));
                    w[other as usize] -= self.vw[u] as u64;
                    w[2] += self.vw[u] as u64;
                    for t in [A, B] {
                        heaps[t as usize].push((self.gain(u, t, side), Reverse(u as u32)));
                    }
                    // Separator neighbours of u gain: u no longer pulls from `other`.
                    for &x in self.nb(u) {
                        if side[x as usize] == S && !locked[x as usize] {
                            heaps[to as usize].push((self.gain(x as usize, to, side), Reverse(x)));
                        }
                    }
                }
                if score(&w) < best {
                    (best, best_len, bad) = (score(&w), log.len(), 0);
                } else {
                    bad += 1;
                    if bad > MAX_BAD_MOVES {
                        break;
                    }
                }
            }
            for &(v, old) in log[best_len..].iter().rev() {
                w[side[v as usize] as usize] -= self.vw[v as usize] as u64;
                w[old as usize] += self.vw[v as usize] as u64;
                side[v as usize] = old;
            }
            if score(&w) >= start {
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separator_of_a_long_grid_is_one_cross_section() {
        // 4 × 4 × 40 vertex grid, 6-neighbour stencil: the best separator is a 4 × 4 plane.
        let (nx, ny, nz) = (4usize, 4usize, 40usize);
        let id = |i: usize, j: usize, k: usize| (i + nx * (j + ny * k)) as u32;
        let (mut cells, mut pos) = (Vec::new(), Vec::new());
        for k in 0..nz {
            for j in 0..ny {
                for i in 0..nx {
                    pos.push(Vector3::new(i as f64, j as f64, k as f64));
                    for (di, dj, dk) in [(1, 0, 0), (0, 1, 0), (0, 0, 1)] {
                        if i + di < nx && j + dj < ny && k + dk < nz {
                            cells.push(vec![id(i, j, k), id(i + di, j + dj, k + dk)]);
                        }
                    }
                }
            }
        }
        let g = Graph::from_cells(nx * ny * nz, &cells);
        let verts: Vec<u32> = (0..g.n() as u32).collect();
        for p in [Some(&pos[..]), None] {
            let sub = WGraph::induced(&g, &verts, &verts, p);
            assert_eq!(sub.components().len(), 1);
            let side = sub.separator();
            let [a, b, s] = sub.weight(&side);
            assert_eq!(s, 16, "with positions: {}", p.is_some());
            assert!(a.max(b) <= 384 && a.min(b) > 0);
            for v in 0..g.n() {
                for &u in g.neighbours(v) {
                    assert!(side[v] == S || side[u as usize] == S || side[v] == side[u as usize]);
                }
            }
        }
    }
}
