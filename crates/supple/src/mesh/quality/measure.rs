//! The quality measure the improvement maximizes: a tet's smallest dihedral angle, from its
//! four outward face normals (the dihedral angle at an edge is π minus the angle between the
//! outward normals of the two faces through it).

use crate::mesh::DEGENERATE_REL;
use nalgebra::Vector3;

/// What [`min_dihedral`] returns for an inverted or degenerate tet: below every real angle,
/// so a move or flip that makes one is never accepted.
pub(super) const INVALID: f64 = -1.0;

/// The smallest dihedral angle of a tet (radians), or [`INVALID`] when the tet is inverted or
/// degenerate by the rule of [`crate::mesh::TetMesh::validate`] (`6V <= DEGENERATE_REL · L³`,
/// `L` the longest edge): every tet this module accepts passes validation.
pub(super) fn min_dihedral(p: &[Vector3<f64>; 4]) -> f64 {
    let (e01, e02, e03) = (p[1] - p[0], p[2] - p[0], p[3] - p[0]);
    let (e12, e13) = (p[2] - p[1], p[3] - p[1]);
    let six_v = e01.cross(&e02).dot(&e03);
    let longest2 = [e01, e02, e03, e12, e13, p[3] - p[2]]
        .iter()
        .map(|e| e.norm_squared())
        .fold(0.0, f64::max);
    // Also refuses NaN.
    if six_v.is_nan() || six_v <= DEGENERATE_REL * longest2 * longest2.sqrt() {
        return INVALID;
    }
    // Outward normals of the faces opposite vertices 0..3 for a positively oriented tet (the
    // faces of `boundary::TET_FACES`).
    let n = [
        e12.cross(&e13),
        e03.cross(&e02),
        e01.cross(&e03),
        e02.cross(&e01),
    ]
    .map(|v| v / v.norm());
    // The edge (i, j) lies on the faces opposite its two other vertices k, l:
    // cos θ_ij = −n̂_k · n̂_l, and the smallest angle has the largest cosine.
    let mut cos_max = f64::NEG_INFINITY;
    for (k, l) in [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)] {
        cos_max = cos_max.max(-n[k].dot(&n[l]));
    }
    cos_max.clamp(-1.0, 1.0).acos()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::octasection::dihedral_angles_deg;

    #[test]
    fn agrees_with_the_projected_angle_formula_and_refuses_inverted_tets() {
        let tets = [
            [Vector3::zeros(), Vector3::x(), Vector3::y(), Vector3::z()],
            [
                Vector3::new(0.1, -0.2, 0.0),
                Vector3::new(2.0, 0.3, 0.1),
                Vector3::new(0.4, 1.1, -0.2),
                Vector3::new(0.5, 0.4, 0.05),
            ],
        ];
        for p in tets {
            let want = dihedral_angles_deg(&p)
                .into_iter()
                .fold(f64::INFINITY, f64::min);
            let got = min_dihedral(&p).to_degrees();
            assert!((got - want).abs() < 1e-9, "{got} against {want}");
            let inverted = [p[0], p[2], p[1], p[3]];
            assert_eq!(min_dihedral(&inverted), INVALID);
        }
        let flat = [
            Vector3::zeros(),
            Vector3::x(),
            Vector3::y(),
            Vector3::new(0.3, 0.3, 0.0),
        ];
        assert_eq!(min_dihedral(&flat), INVALID);
    }
}
