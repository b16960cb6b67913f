//! Dihedral-angle statistics of a tet mesh: the range, a histogram in fixed 10° bins and the
//! tets whose smallest angle is below a threshold.
//!
//! The bins are fixed (0–10°, 10–20°, …, 170–180°) so that histograms of two meshes, or of
//! one mesh before and after [`super::improve`], can be compared bin by bin. Angles are those
//! of [`crate::mesh::octasection::dihedral_angles_deg`], the ones every other quality report
//! of Supple (stuffing, octasection) prints.

use crate::mesh::octasection::dihedral_angles_deg;
use crate::mesh::TetMesh;

/// Width of a histogram bin, degrees.
pub const BIN_DEG: f64 = 10.0;
/// Number of bins: 0–10°, …, 170–180°.
pub const BINS: usize = 18;

/// Dihedral angles of a mesh.
#[derive(Debug, Clone, PartialEq)]
pub struct DihedralStats {
    /// Smallest and largest dihedral angle over all tets, degrees.
    pub min_deg: f64,
    pub max_deg: f64,
    /// All six angles of every tet: bin `k` counts the angles in `[10k°, 10k° + 10°)`
    /// (180° falls in the last bin). The counts sum to `6 · n_tets`.
    pub histogram: [usize; BINS],
    /// Each tet's smallest angle, sorted ascending (for [`DihedralStats::tets_below`]).
    pub tet_min_deg: Vec<f64>,
}

impl DihedralStats {
    /// The statistics of `mesh` (an empty mesh has `min_deg = +∞`, `max_deg = −∞`).
    pub fn of(mesh: &TetMesh) -> Self {
        let mut histogram = [0; BINS];
        let (mut min_deg, mut max_deg) = (f64::INFINITY, f64::NEG_INFINITY);
        let mut tet_min_deg = Vec::with_capacity(mesh.n_tets());
        for t in 0..mesh.n_tets() {
            let mut lo = f64::INFINITY;
            for a in dihedral_angles_deg(&mesh.tet_positions(t)) {
                histogram[bin(a)] += 1;
                lo = lo.min(a);
                max_deg = max_deg.max(a);
            }
            min_deg = min_deg.min(lo);
            tet_min_deg.push(lo);
        }
        tet_min_deg.sort_by(f64::total_cmp);
        Self {
            min_deg,
            max_deg,
            histogram,
            tet_min_deg,
        }
    }

    /// Number of tets.
    pub fn n_tets(&self) -> usize {
        self.tet_min_deg.len()
    }

    /// The number of tets whose smallest dihedral angle is below `deg` degrees.
    pub fn tets_below(&self, deg: f64) -> usize {
        self.tet_min_deg.partition_point(|&a| a < deg)
    }

    /// The lower edge of bin `k`, degrees.
    pub fn bin_start_deg(k: usize) -> f64 {
        k as f64 * BIN_DEG
    }
}

/// The bin of an angle in degrees (NaN and negatives in the first, 180° in the last).
fn bin(deg: f64) -> usize {
    let k = (deg / BIN_DEG).floor();
    if k >= 0.0 {
        (k as usize).min(BINS - 1)
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{box_grid, BoxGrid, TetSplit};
    use nalgebra::Vector3;

    #[test]
    fn a_regular_tet_has_all_six_angles_in_the_70_degree_bin() {
        let s = 8f64.sqrt();
        let m = TetMesh::new(
            vec![
                Vector3::new(s / 3.0, 0.0, -1.0 / 3.0),
                Vector3::new(-s / 6.0, (2.0f64 / 3.0).sqrt(), -1.0 / 3.0),
                Vector3::new(-s / 6.0, -(2.0f64 / 3.0).sqrt(), -1.0 / 3.0),
                Vector3::new(0.0, 0.0, 1.0),
            ],
            vec![[0, 1, 2, 3]],
        )
        .unwrap();
        let st = DihedralStats::of(&m);
        // arccos(1/3) = 70.53°.
        assert!((st.min_deg - 70.528_779).abs() < 1e-5, "{}", st.min_deg);
        assert_eq!(st.histogram[7], 6);
        assert_eq!(st.histogram.iter().sum::<usize>(), 6);
        assert_eq!((st.tets_below(70.0), st.tets_below(71.0)), (0, 1));
    }

    #[test]
    fn a_kuhn_cube_grid_has_45_60_and_90_degree_angles() {
        let m = box_grid(&BoxGrid {
            cells: [2, 2, 2],
            cell_size: Vector3::repeat(1.0),
            origin: Vector3::zeros(),
            split: TetSplit::Six,
        });
        let st = DihedralStats::of(&m);
        assert_eq!(st.n_tets(), 48);
        assert_eq!(st.histogram.iter().sum::<usize>(), 6 * 48);
        // Each Kuhn tet has two angles of 45°, one of 60° and three of 90°; round-off may put
        // 60° and 90° just below their bin's lower edge.
        assert!((st.min_deg - 45.0).abs() < 1e-9 && (st.max_deg - 90.0).abs() < 1e-9);
        assert_eq!(st.histogram[4], 2 * 48);
        assert_eq!(st.histogram[5] + st.histogram[6], 48);
        assert_eq!(st.histogram[8] + st.histogram[9], 3 * 48);
        assert_eq!(st.tets_below(45.0 + 1e-6), 48);
        assert_eq!(bin(180.0), BINS - 1);
        assert_eq!(bin(f64::NAN), 0);
    }
}
