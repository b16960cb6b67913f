//! A uniform grid over the tets' bounding boxes: the spatial index behind
//! [`super::Embedding`]. Each cell lists, in increasing order, the tets whose box overlaps it
//! (compressed rows), so a point query visits a few tets instead of all of them.

use nalgebra::Vector3;

/// Tets binned by bounding box in a uniform grid.
#[derive(Debug, Clone)]
pub(super) struct TetGrid {
    lo: Vector3<f64>,
    cell: Vector3<f64>,
    dims: [usize; 3],
    /// `start[c]..start[c + 1]` indexes `items` for cell `c` (x fastest).
    start: Vec<u32>,
    items: Vec<u32>,
}

/// Cells per tet aimed at: about one cell per tet keeps the lists short (a tet's box overlaps
/// a few cells) without spending memory on empty space.
const CELLS_PER_TET: f64 = 1.0;
/// Upper bound on cells along one axis (flat meshes would otherwise get enormous counts).
const MAX_DIM: usize = 1024;

impl TetGrid {
    /// Bins the tets (`boxes[t]` is tet `t`'s `(min, max)`).
    pub(super) fn new(boxes: &[(Vector3<f64>, Vector3<f64>)]) -> Self {
        let mut lo = Vector3::repeat(f64::INFINITY);
        let mut hi = Vector3::repeat(f64::NEG_INFINITY);
        for (a, b) in boxes {
            lo = lo.inf(a);
            hi = hi.sup(b);
        }
        let extent = hi - lo;
        // A cube cell of the volume the box gives each tet; flat axes get one cell.
        let diag = extent.norm().max(f64::MIN_POSITIVE);
        let thick = extent.map(|e| e.max(1e-9 * diag));
        let volume = thick.x * thick.y * thick.z;
        let h = (volume / (CELLS_PER_TET * boxes.len().max(1) as f64)).cbrt();
        let dims = [0, 1, 2].map(|a| ((thick[a] / h).ceil() as usize).clamp(1, MAX_DIM));
        let cell = Vector3::from_fn(|a, _| thick[a] / dims[a] as f64);
        let mut grid = Self {
            lo,
            cell,
            dims,
            start: vec![0; dims[0] * dims[1] * dims[2] + 1],
            items: Vec::new(),
        };
        // Two passes (count, then fill): each cell's list comes out in increasing tet order.
        for (a, b) in boxes {
            for c in grid.cells_of(a, b) {
                grid.start[c + 1] += 1;
            }
        }
        for c in 0..grid.start.len() - 1 {
            grid.start[c + 1] += grid.start[c];
        }
        let mut fill = grid.start.clone();
        grid.items = vec![0; grid.start[grid.start.len() - 1] as usize];
        for (t, (a, b)) in boxes.iter().enumerate() {
            for c in grid.cells_of(a, b) {
                grid.items[fill[c] as usize] = t as u32;
                fill[c] += 1;
            }
        }
        grid
    }

    /// Indices of the cells overlapping the box `(a, b)`.
    fn cells_of(&self, a: &Vector3<f64>, b: &Vector3<f64>) -> impl Iterator<Item = usize> {
        let (c0, c1) = (self.clamped(a), self.clamped(b));
        let [nx, ny, _] = self.dims;
        (c0[2]..=c1[2]).flat_map(move |z| {
            (c0[1]..=c1[1]).flat_map(move |y| (c0[0]..=c1[0]).map(move |x| x + nx * (y + ny * z)))
        })
    }

    fn index(&self, [x, y, z]: [usize; 3]) -> usize {
        x + self.dims[0] * (y + self.dims[1] * z)
    }

    /// The cell holding `p`, clamped into the grid.
    pub(super) fn clamped(&self, p: &Vector3<f64>) -> [usize; 3] {
        [0, 1, 2].map(|a| {
            let f = ((p[a] - self.lo[a]) / self.cell[a]).floor();
            if f.is_nan() || f < 0.0 {
                0
            } else {
                (f as usize).min(self.dims[a] - 1)
            }
        })
    }

    /// Distance from `q` to cell `c`'s box (0 inside it).
    pub(super) fn cell_gap(&self, c: [usize; 3], q: &Vector3<f64>) -> f64 {
        let lo = self.lo + Vector3::from_fn(|a, _| c[a] as f64 * self.cell[a]);
        let hi = lo + self.cell;
        (lo - q).sup(&(q - hi)).sup(&Vector3::zeros()).norm()
    }

    /// The tets listed in cell `c`.
    pub(super) fn cell_tets(&self, c: [usize; 3]) -> &[u32] {
        let i = self.index(c);
        &self.items[self.start[i] as usize..self.start[i + 1] as usize]
    }

    /// The grid's cells per axis.
    pub(super) fn dims(&self) -> [usize; 3] {
        self.dims
    }

    /// The shortest cell edge: cells `r` rings away from a point's (clamped) cell are at least
    /// `(r − 1) · min_cell` away from it.
    pub(super) fn min_cell(&self) -> f64 {
        self.cell.min()
    }

    /// Calls `f` for every cell at Chebyshev distance exactly `r` from `c` (inside the grid).
    pub(super) fn ring(&self, c: [usize; 3], r: usize, mut f: impl FnMut([usize; 3])) {
        let span = |a: usize| {
            let lo = c[a].saturating_sub(r);
            let hi = (c[a] + r).min(self.dims[a] - 1);
            (lo, hi)
        };
        let ((x0, x1), (y0, y1), (z0, z1)) = (span(0), span(1), span(2));
        for z in z0..=z1 {
            let dz = z.abs_diff(c[2]);
            for y in y0..=y1 {
                let dyz = dz.max(y.abs_diff(c[1]));
                if dyz == r {
                    for x in x0..=x1 {
                        f([x, y, z]);
                    }
                } else {
                    // Only the two x-ends lie on the ring.
                    if c[0] >= r {
                        f([c[0] - r, y, z]);
                    }
                    if r > 0 && c[0] + r < self.dims[0] {
                        f([c[0] + r, y, z]);
                    }
                }
            }
        }
    }
}
