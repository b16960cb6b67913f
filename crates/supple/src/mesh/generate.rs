//! Mesh generators.

use super::{signed_volume, TetMesh};
use nalgebra::Vector3;

/// How each grid cell is cut into tetrahedra.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TetSplit {
    /// 5 tets per cube (one central tet), mirrored on alternate cells so faces conform.
    Five,
    /// 6 tets per cube around the main diagonal (Kuhn/Freudenthal); conforming as is.
    Six,
}

/// A box of `cells[0] × cells[1] × cells[2]` cubes of size `cell_size`, with corner `origin`.
#[derive(Debug, Clone, PartialEq)]
pub struct BoxGrid {
    pub cells: [usize; 3],
    pub cell_size: Vector3<f64>,
    pub origin: Vector3<f64>,
    pub split: TetSplit,
}

/// Builds the tetrahedral box grid. Vertex `(i, j, k)` has index `i + (nx+1)(j + (ny+1)k)`.
/// Every tet is positively oriented. Panics only on zero cells (callers validate counts).
pub fn box_grid(g: &BoxGrid) -> TetMesh {
    let [nx, ny, nz] = g.cells;
    assert!(
        nx > 0 && ny > 0 && nz > 0,
        "box_grid needs at least one cell per axis"
    );
    let (vx, vy) = (nx + 1, ny + 1);
    let idx = |i: usize, j: usize, k: usize| (i + vx * (j + vy * k)) as u32;
    let mut positions = Vec::with_capacity(vx * vy * (nz + 1));
    for k in 0..=nz {
        for j in 0..=ny {
            for i in 0..=nx {
                positions.push(
                    g.origin
                        + Vector3::new(
                            i as f64 * g.cell_size.x,
                            j as f64 * g.cell_size.y,
                            k as f64 * g.cell_size.z,
                        ),
                );
            }
        }
    }
    // Corner c[bits] with bits = dx + 2 dy + 4 dz.
    const FIVE_A: [[usize; 4]; 5] = [
        [1, 2, 4, 7],
        [0, 1, 2, 4],
        [3, 1, 2, 7],
        [5, 1, 4, 7],
        [6, 2, 4, 7],
    ];
    const FIVE_B: [[usize; 4]; 5] = [
        [0, 3, 5, 6],
        [1, 0, 3, 5],
        [2, 0, 3, 6],
        [4, 0, 5, 6],
        [7, 3, 5, 6],
    ];
    const SIX: [[usize; 4]; 6] = [
        [0, 1, 3, 7],
        [0, 1, 5, 7],
        [0, 2, 3, 7],
        [0, 2, 6, 7],
        [0, 4, 5, 7],
        [0, 4, 6, 7],
    ];
    let per_cell = match g.split {
        TetSplit::Five => 5,
        TetSplit::Six => 6,
    };
    let mut tets = Vec::with_capacity(nx * ny * nz * per_cell);
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                let c: [u32; 8] = std::array::from_fn(|b| {
                    idx(i + (b & 1), j + ((b >> 1) & 1), k + ((b >> 2) & 1))
                });
                let pattern: &[[usize; 4]] = match g.split {
                    TetSplit::Five if (i + j + k) % 2 == 0 => &FIVE_A,
                    TetSplit::Five => &FIVE_B,
                    TetSplit::Six => &SIX,
                };
                for t in pattern {
                    let mut tet = t.map(|b| c[b]);
                    if signed_volume(&tet.map(|v| positions[v as usize])) < 0.0 {
                        tet.swap(2, 3);
                    }
                    tets.push(tet);
                }
            }
        }
    }
    TetMesh { positions, tets }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grids_are_valid_and_fill_the_box() {
        for (split, per) in [(TetSplit::Five, 5), (TetSplit::Six, 6)] {
            let g = BoxGrid {
                cells: [3, 3, 10],
                cell_size: Vector3::repeat(0.1),
                origin: Vector3::new(-1.0, 0.0, 2.0),
                split,
            };
            let m = box_grid(&g);
            m.validate().unwrap();
            assert_eq!(m.n_vertices(), 4 * 4 * 11);
            assert_eq!(m.n_tets(), 90 * per);
            assert!((m.volume() - 0.09).abs() < 1e-12);
            assert!(m
                .tets
                .iter()
                .all(|t| signed_volume(&t.map(|v| m.positions[v as usize])) > 0.0));
        }
    }
}
