//! Box meshes for the level hierarchy: grid levels made non-nested (Debunne §3.1 wants
//! "arbitrary, independently defined meshes") by alternating the cell split and moving the
//! interior nodes by a deterministic jitter.

use crate::mesh::{box_grid, BoxGrid, MeshError, TetMesh, TetSplit};
use nalgebra::Vector3;

/// A deterministic pseudo-random number in `[−1, 1)` (SplitMix64 of `seed` and `k`): the same
/// jitter on every machine and thread count.
fn unit_noise(seed: u64, k: u64) -> f64 {
    let mut z = seed
        .wrapping_add(k.wrapping_mul(0x9E37_79B9_7F4A_7C15))
        .wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 52) as f64 - 1.0
}

/// A box `[origin, origin + size]` of `cells` cubes per axis cut by `split`, with every node
/// strictly inside the box moved by up to `jitter` times the cell size per axis (noise from
/// `seed`). Boundary nodes stay on the box, so every level has the same shape.
///
/// Fails when the jitter inverts or flattens a tet (keep `jitter` below about 0.2).
pub fn jittered_box(
    cells: usize,
    origin: Vector3<f64>,
    size: f64,
    split: TetSplit,
    jitter: f64,
    seed: u64,
) -> Result<TetMesh, MeshError> {
    if cells == 0 {
        return Err(MeshError::NoTets);
    }
    let h = size / cells as f64;
    jittered_grid(
        &BoxGrid {
            cells: [cells; 3],
            cell_size: Vector3::repeat(h),
            origin,
            split,
        },
        jitter,
        seed,
    )
}

/// [`jittered_box`] for any grid: every node strictly inside the box moved by up to `jitter`
/// times the cell size along each axis.
pub fn jittered_grid(grid: &BoxGrid, jitter: f64, seed: u64) -> Result<TetMesh, MeshError> {
    if grid.cells.contains(&0) {
        return Err(MeshError::NoTets);
    }
    let mut mesh = box_grid(grid);
    let size: Vector3<f64> = Vector3::from_fn(|a, _| grid.cells[a] as f64 * grid.cell_size[a]);
    for (k, p) in mesh.positions.iter_mut().enumerate() {
        let rel = *p - grid.origin;
        let interior = (0..3).all(|a| rel[a] > 1e-9 * size[a] && rel[a] < size[a] * (1.0 - 1e-9));
        if interior {
            for a in 0..3 {
                p[a] += jitter * grid.cell_size[a] * unit_noise(seed, 3 * k as u64 + a as u64);
            }
        }
    }
    mesh.validate()?;
    Ok(mesh)
}

/// The `count` levels of a box body whose coarsest level is `base`: level `n` has
/// `base.cells · 2^n` cells of `base.cell_size / 2^n` (edge length halved per level, Debunne
/// §4.1), the split alternating between `base.split` and the other one, and every level
/// jittered with its own seed (non-nested, §3.1). Level 0 is jittered too.
pub fn grid_levels(
    base: &BoxGrid,
    count: usize,
    jitter: f64,
    seed: u64,
) -> Result<Vec<TetMesh>, MeshError> {
    (0..count)
        .map(|n| {
            let split = match (base.split, n % 2) {
                (s, 0) => s,
                (TetSplit::Five, _) => TetSplit::Six,
                (TetSplit::Six, _) => TetSplit::Five,
            };
            let grid = BoxGrid {
                cells: base.cells.map(|c| c << n),
                cell_size: base.cell_size / f64::from(1u32 << n),
                origin: base.origin,
                split,
            };
            jittered_grid(&grid, jitter, seed.wrapping_add(n as u64))
        })
        .collect()
}

/// The levels of a box hierarchy: `cells[n]` cubes per axis on level `n` (e.g. 4, 8, 16:
/// edge length halved per level, Debunne §4.1), the split alternating between 5 and 6 tets
/// per cube and each level jittered with its own seed, so no two levels share their tets and
/// interior nodes (non-nested, §3.1).
pub fn box_levels(
    cells: &[usize],
    origin: Vector3<f64>,
    size: f64,
    jitter: f64,
    seed: u64,
) -> Result<Vec<TetMesh>, MeshError> {
    cells
        .iter()
        .enumerate()
        .map(|(n, &c)| {
            let split = if n % 2 == 0 {
                TetSplit::Five
            } else {
                TetSplit::Six
            };
            jittered_box(c, origin, size, split, jitter, seed.wrapping_add(n as u64))
        })
        .collect()
}
