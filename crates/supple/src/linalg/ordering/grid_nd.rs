//! Regular nested dissection of a structured vertex grid: A. George, *Nested dissection of a
//! regular finite element mesh*, SIAM J. Numer. Anal. 10(2), 1973, generalized from his 2D
//! grid to 3D boxes.
//!
//! A box of vertices is split by the plane of vertices through the middle of its longest
//! side. On a grid of hexes (27-point stencil) or of Kuhn-split tets, vertices are only
//! adjacent to vertices at most one index away along every axis, so that plane separates the
//! two halves. The separator is numbered after both halves, the halves are dissected in
//! turn, and boxes at most 2 vertices long in every direction (≤ 8 vertices) are numbered in
//! natural order. Inside a separator the order is natural: the separator's block of `L` is
//! (nearly) dense, so its inner order hardly matters.

/// A box `lo..hi` (per axis) of vertices and the range of new indices it owns.
struct Task {
    lo: [usize; 3],
    hi: [usize; 3],
    first: usize,
}

/// George's nested dissection of the `dims[0] × dims[1] × dims[2]` vertex grid, vertex
/// `(i, j, k)` at index `i + nx (j + ny k)`. Returns `perm[new] = old`.
pub(crate) fn grid_nd(dims: [usize; 3]) -> Vec<u32> {
    let [nx, ny, _] = dims;
    let n: usize = dims.iter().product();
    let mut perm = vec![0u32; n];
    let count = |lo: &[usize; 3], hi: &[usize; 3]| (0..3).map(|a| hi[a] - lo[a]).product();
    let mut stack = vec![Task {
        lo: [0; 3],
        hi: dims,
        first: 0,
    }];
    while let Some(Task { lo, hi, first }) = stack.pop() {
        let size: usize = count(&lo, &hi);
        if size == 0 {
            continue;
        }
        // Longest side; ties go to the lowest axis.
        let axis = (0..3).fold(0, |b, a| if hi[a] - lo[a] > hi[b] - lo[b] { a } else { b });
        let len = hi[axis] - lo[axis];
        let (slo, shi) = if len <= 2 {
            (lo, hi) // leaf: the whole box, in natural order
        } else {
            let mid = lo[axis] + len / 2;
            let (mut slo, mut shi) = (lo, hi);
            slo[axis] = mid;
            shi[axis] = mid + 1;
            let mut left_hi = hi;
            left_hi[axis] = mid;
            let mut right_lo = lo;
            right_lo[axis] = mid + 1;
            let left_size = count(&lo, &left_hi);
            stack.push(Task {
                lo,
                hi: left_hi,
                first,
            });
            stack.push(Task {
                lo: right_lo,
                hi,
                first: first + left_size,
            });
            (slo, shi)
        };
        // The separator (or leaf) takes the last new indices of the box's range.
        let mut next = first + size - count(&slo, &shi);
        for k in slo[2]..shi[2] {
            for j in slo[1]..shi[1] {
                for i in slo[0]..shi[0] {
                    perm[next] = (i + nx * (j + ny * k)) as u32;
                    next += 1;
                }
            }
        }
    }
    perm
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_of_seven_is_dissected_in_the_middle() {
        // 0..7 along x: separator 3 last; halves 0..3 → separator 1, then 0, 2.
        let p = grid_nd([7, 1, 1]);
        assert_eq!(p[6], 3);
        assert_eq!(&p[..3], &[0, 2, 1]);
        assert_eq!(&p[3..6], &[4, 6, 5]);
    }
}
