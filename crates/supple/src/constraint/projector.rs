//! Projectors on spans of directions (the held subspace of a partially constrained vertex).

use nalgebra::{Matrix3, Vector3};

/// Relative eigenvalue below which a direction counts as not spanned.
const RANK_TOL: f64 = 1e-9;

/// The orthogonal projector on the span of `dirs` and its rank.
pub(super) fn held_directions(dirs: &[Vector3<f64>]) -> (Matrix3<f64>, usize) {
    let sum: Matrix3<f64> = dirs.iter().map(|d| d * d.transpose()).sum();
    range_projector(&sum)
}

/// The orthogonal projector on the range of the symmetric positive semi-definite `s` (a sum
/// of `n nᵀ` terms) and its rank, from its eigenvectors with eigenvalues above `10⁻⁹` of
/// the largest.
pub(super) fn range_projector(s: &Matrix3<f64>) -> (Matrix3<f64>, usize) {
    let eig = s.symmetric_eigen();
    let top = eig.eigenvalues.max();
    let mut c = Matrix3::zeros();
    let mut rank = 0;
    for k in 0..3 {
        if eig.eigenvalues[k] > RANK_TOL * top {
            let e = eig.eigenvectors.column(k);
            c += e * e.transpose();
            rank += 1;
        }
    }
    if rank == 3 {
        c = Matrix3::identity();
    }
    (c, rank)
}
