use super::*;
use crate::mesh::{boundary_faces, box_grid, BoxGrid, TetSplit};
use std::collections::HashMap;

fn bar(split: TetSplit) -> TetMesh {
    // Hauth & Straßer's Example 3 bar, 0.1 × 0.1 × 0.3 m (here 2 × 2 × 6 cells).
    box_grid(&BoxGrid {
        cells: [2, 2, 6],
        cell_size: Vector3::new(0.05, 0.05, 0.05),
        origin: Vector3::zeros(),
        split,
    })
}

/// Face → number of tets having it.
fn face_counts(tets: &[[u32; 4]]) -> HashMap<[u32; 3], usize> {
    let mut count = HashMap::new();
    for t in tets {
        for skip in 0..4 {
            let mut f = [0u32; 3];
            let mut k = 0;
            for (i, &v) in t.iter().enumerate() {
                if i != skip {
                    f[k] = v;
                    k += 1;
                }
            }
            f.sort_unstable();
            *count.entry(f).or_insert(0) += 1;
        }
    }
    count
}

fn area(mesh: &TetMesh, faces: &[[u32; 3]]) -> f64 {
    let p = |i: u32| mesh.positions[i as usize];
    faces
        .iter()
        .map(|f| 0.5 * (p(f[1]) - p(f[0])).cross(&(p(f[2]) - p(f[0]))).norm())
        .sum()
}

#[test]
fn one_tet_gives_eight_children_of_an_eighth_of_its_volume() {
    let coarse = TetMesh::new(
        vec![
            Vector3::new(0.0, 0.0, 0.0),
            Vector3::new(1.0, 0.1, 0.0),
            Vector3::new(0.2, 1.3, 0.0),
            Vector3::new(0.3, 0.2, 0.9),
        ],
        vec![[0, 1, 2, 3]],
    )
    .unwrap();
    let o = octasect(&coarse).unwrap();
    assert_eq!(o.mesh.n_tets(), 8);
    assert_eq!(o.mesh.n_vertices(), 10);
    assert_eq!(o.coarse_vertices, 4);
    assert_eq!(o.parent_tet, vec![0; 8]);
    let v = coarse.volume();
    for t in 0..8 {
        let vt = signed_volume(&o.mesh.tet_positions(t));
        assert!(
            (vt - v / 8.0).abs() < 1e-15 * v,
            "child {t}: {vt} vs {}",
            v / 8.0
        );
    }
    // Midpoints are at the middle of their parents.
    for (k, &[p, q]) in o.midpoint_parents.iter().enumerate() {
        let m = o.mesh.positions[4 + k];
        let mid = 0.5 * (coarse.positions[p as usize] + coarse.positions[q as usize]);
        assert_eq!(m, mid);
    }
}

#[test]
fn two_octasections_of_the_bar_are_nested_conforming_and_keep_volume_and_surface() {
    for split in [TetSplit::Five, TetSplit::Six] {
        let coarse = bar(split);
        let h = Hierarchy::new(coarse.clone(), 2).unwrap();
        assert_eq!(h.levels.len(), 3);
        let (v0, a0) = (
            coarse.volume(),
            area(&coarse, &boundary_faces(&coarse.tets)),
        );
        let b0 = boundary_faces(&coarse.tets).len();
        for (l, mesh) in h.levels.iter().enumerate() {
            let scale = 8usize.pow(l as u32);
            assert_eq!(mesh.n_tets(), coarse.n_tets() * scale);
            // Every face is shared by at most two tets, and the boundary is the coarse
            // boundary with each face cut in four: the refinement is conforming.
            let counts = face_counts(&mesh.tets);
            assert!(counts.values().all(|&c| c <= 2), "{split:?} level {l}");
            let boundary = boundary_faces(&mesh.tets);
            assert_eq!(
                boundary.len(),
                b0 * 4usize.pow(l as u32),
                "{split:?} level {l}"
            );
            let (v, a) = (mesh.volume(), area(mesh, &boundary));
            // (Summing thousands of tets: rounding only; each child is checked below.)
            assert!(
                (v - v0).abs() < 1e-12 * v0,
                "{split:?} level {l}: volume {v} vs {v0}"
            );
            assert!(
                (a - a0).abs() < 1e-13 * a0,
                "{split:?} level {l}: area {a} vs {a0}"
            );
        }
        // Every child has an eighth of its parent's volume.
        for l in 0..2 {
            let o = octasect(&h.levels[l]).unwrap();
            assert_eq!(&o.mesh, &h.levels[l + 1]);
            for (t, &c) in o.parent_tet.iter().enumerate() {
                let vc = signed_volume(&h.levels[l].tet_positions(c as usize)) / 8.0;
                let vt = signed_volume(&o.mesh.tet_positions(t));
                assert!(
                    (vt - vc).abs() < 1e-13 * vc,
                    "level {l} tet {t}: {vt} vs {vc}"
                );
            }
        }
        // Euler characteristic of a ball: V − E + F − T = 1 on every level.
        for mesh in &h.levels {
            let faces = face_counts(&mesh.tets).len() as i64;
            let mut edges = std::collections::HashSet::new();
            for t in &mesh.tets {
                for i in 0..4 {
                    for j in i + 1..4 {
                        edges.insert((t[i].min(t[j]), t[i].max(t[j])));
                    }
                }
            }
            let chi = mesh.n_vertices() as i64 - edges.len() as i64 + faces - mesh.n_tets() as i64;
            assert_eq!(chi, 1, "{split:?}");
        }
        let (lo0, hi0) = dihedral_range_deg(&coarse);
        let (lo2, hi2) = dihedral_range_deg(h.finest());
        eprintln!(
            "{split:?}: {} → {} tets; dihedral angles {lo0:.1}°–{hi0:.1}° → {lo2:.1}°–{hi2:.1}° after two octasections",
            coarse.n_tets(),
            h.finest().n_tets()
        );
        // The shortest-diagonal cut keeps the children's shapes (Bey: finitely many classes).
        assert!(
            lo2 >= 0.5 * lo0 && hi2 <= 180.0 - 0.5 * (180.0 - hi0),
            "{lo2} {hi2}"
        );
    }
}

#[test]
fn every_fine_tet_lies_in_its_coarse_tet() {
    let coarse = bar(TetSplit::Five);
    let h = Hierarchy::new(coarse.clone(), 2).unwrap();
    let fine = h.finest();
    for t in 0..fine.n_tets() {
        let c = h.coarse_tet(t);
        let centroid = fine.tet_positions(t).iter().sum::<Vector3<f64>>() / 4.0;
        let p = coarse.tet_positions(c);
        // Barycentric coordinates of the centroid in the coarse tet are all positive.
        let v = signed_volume(&p);
        for k in 0..4 {
            let mut q = p;
            q[k] = centroid;
            let lambda = signed_volume(&q) / v;
            assert!(
                lambda > 1e-3,
                "fine tet {t}: barycentric {lambda} in coarse tet {c}"
            );
        }
    }
}

#[test]
fn hierarchical_transform_round_trips_and_has_no_detail_for_a_linear_field() {
    let h = Hierarchy::new(bar(TetSplit::Six), 2).unwrap();
    let fine = h.finest();
    let n = fine.n_vertices();
    // A deterministic "random" field.
    let u: Vec<Vector3<f64>> = (0..n)
        .map(|i| {
            let s = (i as f64 * 12.9898).sin() * 43758.5453;
            Vector3::new(s.fract(), (s * 1.7).fract(), (s * 2.3).fract())
        })
        .collect();
    let mut c = u.clone();
    h.to_hierarchical(&mut c);
    assert!(c != u);
    h.to_nodal(&mut c);
    let err = u
        .iter()
        .zip(&c)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    assert!(err < 1e-14, "round trip error {err}");
    // A field affine in x: every hierarchical detail vanishes and the coarse values are kept.
    let a = nalgebra::Matrix3::new(0.3, -1.0, 0.2, 0.5, 0.1, 2.0, -0.7, 0.4, 1.1);
    let b = Vector3::new(0.1, 0.2, -0.3);
    let affine: Vec<Vector3<f64>> = fine.positions.iter().map(|x| a * x + b).collect();
    let mut c = affine.clone();
    h.to_hierarchical(&mut c);
    let nc = h.levels[0].n_vertices();
    assert_eq!(&c[..nc], &affine[..nc]);
    let detail = c[nc..].iter().map(|d| d.norm()).fold(0.0, f64::max);
    assert!(detail < 1e-14, "largest detail of an affine field {detail}");
    // Prolongation of the coarse values gives the affine field everywhere.
    let mut p = vec![Vector3::zeros(); n];
    h.prolong(&affine[..nc], &mut p);
    let err = p
        .iter()
        .zip(&affine)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    assert!(err < 1e-14, "prolongation error {err}");
    // Scalars work too.
    let mut s: Vec<f64> = fine.positions.iter().map(|x| x.x * x.y).collect();
    let s0 = s.clone();
    h.to_hierarchical(&mut s);
    h.to_nodal(&mut s);
    assert!(s.iter().zip(&s0).all(|(a, b)| (a - b).abs() < 1e-15));
}

#[test]
fn refinement_is_deterministic_and_refuses_bad_input() {
    let coarse = bar(TetSplit::Five);
    assert_eq!(octasect(&coarse).unwrap(), octasect(&coarse).unwrap());
    let inverted = TetMesh {
        positions: coarse.positions.clone(),
        tets: vec![[0, 2, 1, 3]],
    };
    assert!(octasect(&inverted).is_err());
}

#[test]
fn dihedral_angles_of_a_regular_tet() {
    let p = [
        Vector3::new(1.0, 1.0, 1.0),
        Vector3::new(1.0, -1.0, -1.0),
        Vector3::new(-1.0, 1.0, -1.0),
        Vector3::new(-1.0, -1.0, 1.0),
    ];
    let expected = (1.0f64 / 3.0).acos().to_degrees();
    for a in dihedral_angles_deg(&p) {
        assert!((a - expected).abs() < 1e-12, "{a}");
    }
}
