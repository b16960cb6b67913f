//! The body-centred cubic (BCC) lattice of Labelle & Shewchuk 2007 §2, in doubled integer
//! coordinates: a vertex `(i, j, k)` sits at `origin + (h/2)(i, j, k)`. **Black** vertices
//! (the cube corners) have three even coordinates, **red** vertices (the cube centres) three
//! odd ones. *Long* edges join two vertices of one colour along an axis (length `h`, offset
//! ±2 in one coordinate); *short* edges join a black and a red vertex (length `√3 h/2`, offset
//! ±1 in every coordinate). Every BCC tetrahedron has one red and one black long edge, opposite
//! each other, and four short edges.

use nalgebra::Vector3;

/// The seven edge directions stored at their lower endpoint: three long, four short.
pub(super) const POSITIVE_DIRS: [[i64; 3]; 7] = [
    [2, 0, 0],
    [0, 2, 0],
    [0, 0, 2],
    [1, 1, 1],
    [1, 1, -1],
    [1, -1, 1],
    [1, -1, -1],
];

/// A finite BCC lattice: `n[a]` cubes of side `h` along axis `a`.
#[derive(Debug, Clone)]
pub(super) struct Lattice {
    pub n: [usize; 3],
    pub origin: Vector3<f64>,
    pub h: f64,
    n_black: usize,
    n_red: usize,
}

impl Lattice {
    /// The lattice whose cubes of side `h` cover `[lo, hi]` with at least one cube of margin on
    /// every side, centred on the box. `None` when it would have more than `max_vertices`
    /// vertices.
    pub fn covering(
        lo: &Vector3<f64>,
        hi: &Vector3<f64>,
        h: f64,
        max_vertices: usize,
    ) -> Result<Self, usize> {
        let mut n = [0usize; 3];
        for a in 0..3 {
            // ≥ 1 cube of margin on both sides: the outermost vertices are outside the box.
            let cubes = ((hi[a] - lo[a]) / h).ceil() + 2.0;
            if !(cubes.is_finite() && cubes < 1e7) {
                return Err(usize::MAX);
            }
            n[a] = cubes as usize;
        }
        // Up to 10⁷ cubes a side: the products can pass usize (a debug build panicked on
        // `--spacing 1e-6`), so they saturate and are refused below.
        let n_black = (n[0] + 1).saturating_mul(n[1] + 1).saturating_mul(n[2] + 1);
        let n_red = n[0].saturating_mul(n[1]).saturating_mul(n[2]);
        let total = n_black.saturating_add(n_red);
        if total > max_vertices || total > u32::MAX as usize {
            return Err(total);
        }
        let centre = (lo + hi) * 0.5;
        let origin = centre - Vector3::new(n[0] as f64, n[1] as f64, n[2] as f64) * (h * 0.5);
        Ok(Self {
            n,
            origin,
            h,
            n_black,
            n_red,
        })
    }

    pub fn len(&self) -> usize {
        self.n_black + self.n_red
    }

    pub fn n_black(&self) -> usize {
        self.n_black
    }

    /// The id of the vertex at doubled coordinates `c`, if it is a lattice vertex.
    pub fn id(&self, c: [i64; 3]) -> Option<u32> {
        let odd = c[0].rem_euclid(2);
        if c[1].rem_euclid(2) != odd || c[2].rem_euclid(2) != odd {
            return None;
        }
        let [nx, ny, nz] = self.n.map(|v| v as i64);
        if odd == 0 {
            let [i, j, k] = c.map(|v| v / 2);
            if c.iter().any(|&v| v < 0) || i > nx || j > ny || k > nz {
                return None;
            }
            Some(((k * (ny + 1) + j) * (nx + 1) + i) as u32)
        } else {
            if c.iter().any(|&v| v < 1) {
                return None;
            }
            let [i, j, k] = c.map(|v| (v - 1) / 2);
            if i >= nx || j >= ny || k >= nz {
                return None;
            }
            Some((self.n_black as i64 + (k * ny + j) * nx + i) as u32)
        }
    }

    /// Doubled coordinates of vertex `id`.
    pub fn coords(&self, id: u32) -> [i64; 3] {
        let id = id as usize;
        if id < self.n_black {
            let (nx, ny) = (self.n[0] + 1, self.n[1] + 1);
            let (i, j, k) = (id % nx, (id / nx) % ny, id / (nx * ny));
            [2 * i as i64, 2 * j as i64, 2 * k as i64]
        } else {
            let r = id - self.n_black;
            let (nx, ny) = (self.n[0], self.n[1]);
            let (i, j, k) = (r % nx, (r / nx) % ny, r / (nx * ny));
            [2 * i as i64 + 1, 2 * j as i64 + 1, 2 * k as i64 + 1]
        }
    }

    /// Unwarped position of the vertex at doubled coordinates `c`.
    pub fn position(&self, c: [i64; 3]) -> Vector3<f64> {
        self.origin + Vector3::new(c[0] as f64, c[1] as f64, c[2] as f64) * (0.5 * self.h)
    }
}

/// Whether the edge `a`–`b` (doubled coordinates) is long.
pub(super) fn is_long(a: [i64; 3], b: [i64; 3]) -> bool {
    (0..3).any(|k| (a[k] - b[k]).abs() == 2)
}

/// The key of the lattice edge `a`–`b` (ids `ia`, `ib`): the lower endpoint's id times 8 plus
/// the index of the direction in [`POSITIVE_DIRS`].
pub(super) fn edge_key(a: [i64; 3], ia: u32, b: [i64; 3], ib: u32) -> u64 {
    let d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
    if let Some(dir) = POSITIVE_DIRS.iter().position(|&p| p == d) {
        ia as u64 * 8 + dir as u64
    } else {
        let m = d.map(|v| -v);
        let dir = POSITIVE_DIRS
            .iter()
            .position(|&p| p == m)
            .expect("edge_key: not a lattice edge");
        ib as u64 * 8 + dir as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_and_coordinates_round_trip() {
        let l = Lattice::covering(
            &Vector3::zeros(),
            &Vector3::new(1.0, 2.0, 0.5),
            0.3,
            usize::MAX,
        )
        .unwrap();
        for id in 0..l.len() as u32 {
            assert_eq!(l.id(l.coords(id)), Some(id));
        }
        assert_eq!(l.id([1, 2, 1]), None, "mixed parity is no lattice vertex");
        assert_eq!(l.id([-2, 0, 0]), None);
        assert_eq!(l.id([2 * l.n[0] as i64 + 1, 1, 1]), None);
    }

    #[test]
    fn covering_refuses_huge_lattices() {
        let e = Lattice::covering(&Vector3::zeros(), &Vector3::repeat(1.0), 1e-3, 1_000_000);
        assert!(matches!(e, Err(n) if n > 1_000_000_000));
    }
}
