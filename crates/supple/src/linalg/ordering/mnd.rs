//! Modified nested dissection: Y. Zhuang & J. Canny, *Real-time simulation of physically
//! realistic global deformation*, IEEE Vis 1999 late-breaking hot topics, §5.1.
//!
//! Their pseudo-code, `Modified-nested-dissection(E, top, perm)`:
//! for the current set of cells `E`, `Find-dissector` computes the medians of the cell
//! centroids along x, y and z and keeps the axis-aligned plane through a median that cuts
//! the fewest cells; `middle` = the cells cut by it, `left` / `right` = the cells wholly on
//! either side. The routine recurses on `middle`, then `left`, then `right`, and a single
//! cell numbers its not-yet-numbered nodes downwards from `top`. Since `middle` is numbered
//! first from the top, the nodes of the cut cells (the separator, a layer of *cells* rather
//! than George's layer of nodes) come after both sides, and the separator is itself
//! dissected by the recursion on `middle`. (The paper's `if perm[j] ≠ -1` is a typo for
//! `= -1`: a node is numbered the first time it is met.)
//!
//! Small parts: as in the paper, the recursion runs down to single cells, whose new nodes
//! are numbered in the cell's own vertex order. The one addition is for sets that no median
//! plane can split (every plane cuts every cell, e.g. a few cells around a common vertex):
//! they are leaves too, numbering their new nodes cell by cell in the same way, which
//! guarantees termination. Vertices in no cell take the lowest numbers, in natural order.
//! Cost: `O(|E|)` per level (median by selection), `O(n log n)` in all, as in §5.2.

use nalgebra::Vector3;

/// `perm[new] = old` by Zhuang & Canny's modified nested dissection. `cells` are checked.
pub(crate) fn mnd(n: usize, positions: &[Vector3<f64>], cells: &[Vec<u32>]) -> Vec<u32> {
    let nc = cells.len();
    // Per-cell bounding box and centroid, computed once (the paper's preprocessing step).
    let mut lo = vec![[f64::INFINITY; 3]; nc];
    let mut hi = vec![[f64::NEG_INFINITY; 3]; nc];
    let mut centroid = vec![[0.0f64; 3]; nc];
    for (c, cell) in cells.iter().enumerate() {
        for &v in cell {
            let p = positions[v as usize];
            for a in 0..3 {
                lo[c][a] = lo[c][a].min(p[a]);
                hi[c][a] = hi[c][a].max(p[a]);
                centroid[c][a] += p[a];
            }
        }
        let k = cell.len().max(1) as f64;
        centroid[c].iter_mut().for_each(|x| *x /= k);
    }

    let mut numbered = vec![false; n];
    let mut perm = vec![0u32; n];
    // Nodes in no cell go first (lowest numbers).
    let mut in_cell = vec![false; n];
    cells
        .iter()
        .flatten()
        .for_each(|&v| in_cell[v as usize] = true);
    let mut bottom = 0;
    for v in 0..n {
        if !in_cell[v] {
            perm[bottom] = v as u32;
            numbered[v] = true;
            bottom += 1;
        }
    }
    let mut top = n; // next number to give is top − 1

    let mut number_cells = |set: &[u32], top: &mut usize, numbered: &mut [bool]| {
        for &c in set {
            for &v in &cells[c as usize] {
                if !numbered[v as usize] {
                    numbered[v as usize] = true;
                    *top -= 1;
                    perm[*top] = v;
                }
            }
        }
    };

    // Explicit stack instead of recursion (a set of slabs can nest deeply); pushing right,
    // left, middle pops them in the paper's order middle, left, right.
    let mut stack: Vec<Vec<u32>> = vec![(0..nc as u32).collect()];
    let mut keys: Vec<f64> = Vec::new();
    while let Some(set) = stack.pop() {
        if set.len() <= 1 {
            number_cells(&set, &mut top, &mut numbered);
            continue;
        }
        // Find-dissector: the median plane with the fewest cut cells.
        let mut best: Option<(usize, usize, f64)> = None; // (cut, axis, plane)
        for a in 0..3 {
            keys.clear();
            keys.extend(set.iter().map(|&c| centroid[c as usize][a]));
            let m = keys.len() / 2;
            let plane = *keys.select_nth_unstable_by(m, f64::total_cmp).1;
            let (mut cut, mut left) = (0, 0);
            for &c in &set {
                let (l, h) = (lo[c as usize][a], hi[c as usize][a]);
                cut += usize::from(l < plane && h > plane);
                left += usize::from(!(l < plane && h > plane) && h <= plane);
            }
            // A plane that leaves every cell on one side (a flat axis) splits nothing.
            let splits = cut < set.len() && left < set.len() && cut + left > 0;
            if splits && best.is_none_or(|(b, _, _)| cut < b) {
                best = Some((cut, a, plane));
            }
        }
        let Some((_, a, plane)) = best else {
            number_cells(&set, &mut top, &mut numbered); // no plane splits it: a leaf
            continue;
        };
        let (mut middle, mut left, mut right) = (Vec::new(), Vec::new(), Vec::new());
        for &c in &set {
            let (l, h) = (lo[c as usize][a], hi[c as usize][a]);
            if l < plane && h > plane {
                middle.push(c);
            } else if h <= plane {
                left.push(c);
            } else {
                right.push(c);
            }
        }
        stack.push(right);
        stack.push(left);
        stack.push(middle);
    }
    debug_assert_eq!(top, bottom);
    perm
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_squares_share_their_middle_edge_last() {
        // Two unit quads side by side in x: 0 1 2 / 3 4 5 (y = 0 and y = 1 rows).
        let positions: Vec<_> = (0..6)
            .map(|v| Vector3::new((v % 3) as f64, (v / 3) as f64, 0.0))
            .collect();
        let cells = vec![vec![0, 1, 4, 3], vec![1, 2, 5, 4]];
        let p = mnd(6, &positions, &cells);
        // z is flat (splits nothing), y cuts both cells; the upper x-median 1.5 cuts the
        // right cell only: its nodes are the separator, numbered downwards from the top.
        assert_eq!(p, vec![3, 0, 4, 5, 2, 1]);
    }
}
