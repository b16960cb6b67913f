//! Boundary surface extraction: the tet faces that belong to exactly one tet.

use std::collections::HashMap;

/// The outward faces of a positively oriented tet `[a, b, c, d]` (normals by the right-hand rule).
pub const TET_FACES: [[usize; 3]; 4] = [[0, 2, 1], [0, 1, 3], [0, 3, 2], [1, 2, 3]];

/// Triangles of the boundary surface, oriented outward (counter-clockwise seen from outside),
/// in a deterministic order: by tet index, then by face in `TET_FACES` order.
/// Requires positively oriented tets (as [`super::TetMesh::validate`] guarantees).
pub fn boundary_faces(tets: &[[u32; 4]]) -> Vec<[u32; 3]> {
    boundary_faces_with_tets(tets)
        .into_iter()
        .map(|(f, _)| f)
        .collect()
}

/// [`boundary_faces`] with, for each triangle, the index of the tet it belongs to (for
/// drawing per-element fields on the surface).
pub fn boundary_faces_with_tets(tets: &[[u32; 4]]) -> Vec<([u32; 3], u32)> {
    let key = |f: [u32; 3]| {
        let mut k = f;
        k.sort_unstable();
        k
    };
    let mut count: HashMap<[u32; 3], u32> = HashMap::with_capacity(tets.len() * 2);
    for t in tets {
        for f in TET_FACES {
            *count.entry(key(f.map(|i| t[i]))).or_insert(0) += 1;
        }
    }
    tets.iter()
        .enumerate()
        .flat_map(|(e, t)| TET_FACES.iter().map(move |f| (f.map(|i| t[i]), e as u32)))
        .filter(|(f, _)| count[&key(*f)] == 1)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{box_grid, BoxGrid, TetSplit};
    use nalgebra::Vector3;

    #[test]
    fn box_boundary_is_closed_outward_and_encloses_the_volume() {
        for split in [TetSplit::Five, TetSplit::Six] {
            let m = box_grid(&BoxGrid {
                cells: [3, 2, 4],
                cell_size: Vector3::new(0.5, 1.0, 0.25),
                origin: Vector3::zeros(),
                split,
            });
            let faces = boundary_faces(&m.tets);
            // Each cube face of the grid surface is cut into 2 triangles.
            assert_eq!(faces.len(), 2 * 2 * (3 * 2 + 2 * 4 + 3 * 4));
            // Divergence theorem: the volume enclosed by outward triangles equals the mesh volume.
            let enclosed: f64 = faces
                .iter()
                .map(|f| {
                    let [a, b, c] = f.map(|i| m.positions[i as usize]);
                    a.dot(&b.cross(&c)) / 6.0
                })
                .sum();
            assert!((enclosed - m.volume()).abs() < 1e-12, "{enclosed}");
            // Every edge is shared by exactly two triangles, in opposite directions.
            let mut edges = HashMap::new();
            for f in &faces {
                for k in 0..3 {
                    *edges.entry((f[k], f[(k + 1) % 3])).or_insert(0) += 1;
                }
            }
            for (&(a, b), &n) in &edges {
                assert_eq!(n, 1);
                assert_eq!(edges.get(&(b, a)), Some(&1));
            }
        }
    }
}
