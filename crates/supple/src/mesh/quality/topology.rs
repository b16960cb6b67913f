//! The mesh being improved: tets in slots (a flip frees or fills one), each vertex's star
//! (the tets around it), and the two topological flips of Joe (1995, "Construction of
//! three-dimensional improved-quality triangulations using local transformations", SIAM J.
//! Sci. Comput. 16) as used by Freitag & Ollivier-Gooch (1997) and Klingner & Shewchuk (2007,
//! "Aggressive tetrahedral mesh improvement", IMR):
//!
//! - **2-3**: two tets `abcd`, `abce` sharing the interior face `abc` become the three tets
//!   around the new edge `de`, when `de` crosses the triangle `abc`;
//! - **3-2**: the three tets around an interior edge `de` with ring `a, b, c` become `abcd`
//!   and `abce`, when the triangle `abc` crosses `de`.
//!
//! Both keep the six outer faces of the cluster, so a flip never changes the boundary; one is
//! made only when the smallest dihedral angle of the new tets is above that of the old ones.
//! Everything runs in slot order: the same input gives the same flips on every machine.

use super::measure::{min_dihedral, INVALID};
use nalgebra::Vector3;

pub(super) struct Work {
    pub positions: Vec<Vector3<f64>>,
    /// Tets by slot; a slot freed by a 3-2 flip is `None` until a 2-3 flip fills it.
    pub tets: Vec<Option<[u32; 4]>>,
    /// Free slots, reused last freed first.
    free: Vec<u32>,
    /// For each vertex, the slots of the tets using it.
    pub star: Vec<Vec<u32>>,
}

impl Work {
    pub fn new(positions: Vec<Vector3<f64>>, tets: &[[u32; 4]]) -> Self {
        let mut star = vec![Vec::new(); positions.len()];
        for (t, tet) in tets.iter().enumerate() {
            for &v in tet {
                star[v as usize].push(t as u32);
            }
        }
        Self {
            positions,
            tets: tets.iter().copied().map(Some).collect(),
            free: Vec::new(),
            star,
        }
    }

    /// The tets left, in slot order.
    pub fn into_tets(self) -> (Vec<Vector3<f64>>, Vec<[u32; 4]>) {
        (self.positions, self.tets.into_iter().flatten().collect())
    }

    pub fn quality(&self, tet: [u32; 4]) -> f64 {
        min_dihedral(&tet.map(|i| self.positions[i as usize]))
    }

    fn remove(&mut self, t: u32) {
        if let Some(tet) = self.tets[t as usize].take() {
            for v in tet {
                self.star[v as usize].retain(|&s| s != t);
            }
            self.free.push(t);
        }
    }

    fn add(&mut self, tet: [u32; 4]) {
        let t = match self.free.pop() {
            Some(t) => {
                self.tets[t as usize] = Some(tet);
                t
            }
            None => {
                self.tets.push(Some(tet));
                (self.tets.len() - 1) as u32
            }
        };
        for v in tet {
            self.star[v as usize].push(t);
        }
    }

    /// The slots of the tets that hold every vertex of `verts`.
    fn tets_with(&self, verts: &[u32]) -> Vec<u32> {
        self.star[verts[0] as usize]
            .iter()
            .copied()
            .filter(|&t| {
                self.tets[t as usize].is_some_and(|tet| verts.iter().all(|v| tet.contains(v)))
            })
            .collect()
    }

    /// Tries a 2-3 flip of the face of slot `t` opposite its local vertex `k`; true if made.
    pub fn try_flip23(&mut self, t: u32, k: usize) -> bool {
        let Some(tet) = self.tets[t as usize] else {
            return false;
        };
        // Reorder so that `tet` reads [a, b, c, d] with the same orientation: an even
        // permutation moving local vertex k to the end.
        let [a, b, c, d] = match k {
            0 => [tet[1], tet[3], tet[2], tet[0]],
            1 => [tet[0], tet[2], tet[3], tet[1]],
            2 => [tet[0], tet[3], tet[1], tet[2]],
            _ => tet,
        };
        let others: Vec<u32> = self
            .tets_with(&[a, b, c])
            .into_iter()
            .filter(|&u| u != t)
            .collect();
        let [u] = others[..] else {
            return false; // a boundary face (none) or, refused at the start, a non-manifold one
        };
        let Some(other) = self.tets[u as usize] else {
            return false;
        };
        let Some(&e) = other.iter().find(|v| ![a, b, c].contains(v)) else {
            return false;
        };
        // The edge de must be new (in a valid mesh it always is: it lies inside the pair).
        if !self.tets_with(&[d, e]).is_empty() {
            return false;
        }
        let old = self.quality(tet).min(self.quality(other));
        // [a, b, c, d] positive and e across abc: [a, b, e, d], [b, c, e, d], [c, a, e, d].
        let new = [[a, b, e, d], [b, c, e, d], [c, a, e, d]];
        let q = new
            .iter()
            .map(|&n| self.quality(n))
            .fold(f64::INFINITY, f64::min);
        if q == INVALID || q <= old {
            return false;
        }
        self.remove(t);
        self.remove(u);
        for n in new {
            self.add(n);
        }
        true
    }

    /// Tries a 3-2 flip of the edge `(tet[i], tet[j])` of slot `t`; true if made.
    pub fn try_flip32(&mut self, t: u32, i: usize, j: usize) -> bool {
        let Some(tet) = self.tets[t as usize] else {
            return false;
        };
        let (d, e) = (tet[i], tet[j]);
        let around = self.tets_with(&[d, e]);
        if around.len() != 3 {
            return false;
        }
        // Each tet around de is [x, y, e, d] up to an even permutation for one order of its
        // other two vertices; in a closed ring the three pairs chain as a → b → c → a.
        let mut pairs = [(0u32, 0u32); 3];
        let mut old = f64::INFINITY;
        for (p, &s) in pairs.iter_mut().zip(&around) {
            let Some(tt) = self.tets[s as usize] else {
                return false;
            };
            old = old.min(self.quality(tt));
            let rest: Vec<u32> = tt.iter().copied().filter(|&v| v != d && v != e).collect();
            let (x, y) = (rest[0], rest[1]);
            *p = if even(tt, [x, y, e, d]) {
                (x, y)
            } else {
                (y, x)
            };
        }
        let (a, b) = pairs[0];
        let Some(&(_, c)) = pairs.iter().find(|p| p.0 == b) else {
            return false;
        };
        if !pairs.contains(&(c, a)) || c == a {
            return false; // an open ring: de is on the boundary
        }
        // The face abc must be new (in a valid mesh it always is).
        if !self.tets_with(&[a, b, c]).is_empty() {
            return false;
        }
        let new = [[a, b, c, d], [b, a, c, e]];
        let q = self.quality(new[0]).min(self.quality(new[1]));
        if q == INVALID || q <= old {
            return false;
        }
        for s in around {
            self.remove(s);
        }
        for n in new {
            self.add(n);
        }
        true
    }

    /// One sweep of flips over the slots in order (3-2 on each edge, then 2-3 on each face
    /// of a tet still there); returns the 2-3 and 3-2 flips made.
    pub fn flip_sweep(&mut self) -> (usize, usize) {
        const EDGES: [(usize, usize); 6] = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)];
        let (mut f23, mut f32) = (0, 0);
        let mut t = 0;
        while t < self.tets.len() {
            let s = t as u32;
            t += 1;
            if EDGES.iter().any(|&(i, j)| self.try_flip32(s, i, j)) {
                f32 += 1;
                continue;
            }
            if (0..4).any(|k| self.try_flip23(s, k)) {
                f23 += 1;
            }
        }
        (f23, f32)
    }
}

/// Whether `q` is an even permutation of `p` (the same four vertices).
fn even(p: [u32; 4], q: [u32; 4]) -> bool {
    let mut idx = q.map(|v| p.iter().position(|&w| w == v).unwrap_or(0));
    let mut swaps = 0;
    for i in 0..4 {
        while idx[i] != i {
            let j = idx[i];
            idx.swap(i, j);
            swaps += 1;
        }
    }
    swaps % 2 == 0
}

#[cfg(test)]
mod tests {
    use super::even;

    #[test]
    fn permutation_parity() {
        assert!(even([1, 2, 3, 4], [1, 2, 3, 4]));
        assert!(!even([1, 2, 3, 4], [2, 1, 3, 4]));
        assert!(even([1, 2, 3, 4], [2, 3, 1, 4]));
        assert!(even([1, 2, 3, 4], [4, 3, 2, 1]));
        assert!(!even([5, 6, 7, 8], [8, 6, 7, 5]));
    }
}
