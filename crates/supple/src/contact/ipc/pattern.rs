//! The coupled matrix's sparsity pattern: every body's own pattern on the diagonal (global
//! vertex numbering) plus the blocks that contact pairs couple, with the map from each
//! body's slots to the coupled slots. Rebuilt only when a contact needs a block it lacks,
//! keeping every coupling it ever held, so a resting contact allocates nothing.

use crate::linalg::{BlockCsr, BlockPattern};
use std::sync::Arc;

/// The pattern and the slot maps.
#[derive(Debug)]
pub struct CoupledPattern {
    pub pattern: Arc<BlockPattern>,
    /// For each body, the coupled slot of each of its own slots.
    pub body_slots: Vec<Vec<u32>>,
    /// Extra couplings `(i, j)`, `i < j`, sorted.
    extra: Vec<(u32, u32)>,
}

impl CoupledPattern {
    /// The block-diagonal pattern of the bodies (`offsets` their first global vertices).
    pub fn new(bodies: &[&BlockPattern], offsets: &[usize]) -> Self {
        let mut p = Self {
            pattern: Arc::new(BlockPattern {
                row_ptr: vec![0],
                cols: Vec::new(),
                diag: Vec::new(),
            }),
            body_slots: Vec::new(),
            extra: Vec::new(),
        };
        p.rebuild(bodies, offsets);
        p
    }

    /// True when every pair `(i, j)` of `needed` has its block.
    pub fn holds(&self, needed: impl Iterator<Item = (u32, u32)>) -> bool {
        let mut ok = true;
        for (i, j) in needed {
            if i != j && self.pattern.slot(i as usize, j as usize).is_none() {
                ok = false;
                break;
            }
        }
        ok
    }

    /// Adds the couplings `needed` (any order, duplicates allowed) and rebuilds.
    pub fn grow(
        &mut self,
        needed: impl Iterator<Item = (u32, u32)>,
        bodies: &[&BlockPattern],
        offsets: &[usize],
    ) {
        self.extra.extend(
            needed
                .filter(|(i, j)| i != j)
                .map(|(i, j)| (i.min(j), i.max(j))),
        );
        self.extra.sort_unstable();
        self.extra.dedup();
        self.rebuild(bodies, offsets);
    }

    fn rebuild(&mut self, bodies: &[&BlockPattern], offsets: &[usize]) {
        let n = *offsets.last().unwrap_or(&0);
        let mut extra_rows: Vec<Vec<u32>> = vec![Vec::new(); n];
        for &(i, j) in &self.extra {
            extra_rows[i as usize].push(j);
            extra_rows[j as usize].push(i);
        }
        let mut row_ptr = Vec::with_capacity(n + 1);
        let mut cols = Vec::new();
        let mut diag = Vec::with_capacity(n);
        row_ptr.push(0u32);
        let mut row = Vec::new();
        for (b, p) in bodies.iter().enumerate() {
            let o = offsets[b] as u32;
            for i in 0..p.n_rows() {
                let gi = o as usize + i;
                row.clear();
                let (s, e) = (p.row_ptr[i] as usize, p.row_ptr[i + 1] as usize);
                row.extend(p.cols[s..e].iter().map(|&c| c + o));
                row.extend_from_slice(&extra_rows[gi]);
                row.sort_unstable();
                row.dedup();
                let d = row.binary_search(&(gi as u32)).expect("diagonal present");
                diag.push((cols.len() + d) as u32);
                cols.extend_from_slice(&row);
                row_ptr.push(cols.len() as u32);
            }
        }
        let pattern = BlockPattern {
            row_ptr,
            cols,
            diag,
        };
        self.body_slots = bodies
            .iter()
            .enumerate()
            .map(|(b, p)| {
                let o = offsets[b];
                let mut map = Vec::with_capacity(p.n_blocks());
                for i in 0..p.n_rows() {
                    for k in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
                        let j = p.cols[k] as usize;
                        map.push(pattern.slot(o + i, o + j).expect("body block present") as u32);
                    }
                }
                map
            })
            .collect();
        self.pattern = Arc::new(pattern);
    }

    /// Adds body `b`'s matrix `a_b` into the coupled matrix `a`.
    pub fn add_body(&self, b: usize, a_b: &BlockCsr, a: &mut BlockCsr) {
        for (k, v) in a_b.values.iter().enumerate() {
            a.values[self.body_slots[b][k] as usize] += v;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_bodies_and_a_coupling() {
        let (p0, _) = BlockPattern::from_tets(4, &[[0, 1, 2, 3]]);
        let (p1, _) = BlockPattern::from_tets(4, &[[0, 1, 2, 3]]);
        let offsets = [0, 4, 8];
        let mut c = CoupledPattern::new(&[&p0, &p1], &offsets);
        assert_eq!(c.pattern.n_blocks(), 32);
        assert!(c.holds([(0, 3), (5, 6)].into_iter()));
        assert!(!c.holds([(1, 6)].into_iter()));
        c.grow([(6, 1), (1, 6)].into_iter(), &[&p0, &p1], &offsets);
        assert_eq!(c.pattern.n_blocks(), 34);
        assert!(c.holds([(1, 6), (6, 1)].into_iter()));
        // Each body's slots land on the same (row, column) in the coupled pattern.
        for (b, p) in [&p0, &p1].iter().enumerate() {
            for i in 0..4 {
                for k in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
                    let slot = c.body_slots[b][k] as usize;
                    let j = p.cols[k] as usize;
                    assert_eq!(c.pattern.slot(offsets[b] + i, offsets[b] + j), Some(slot));
                }
            }
        }
    }
}
