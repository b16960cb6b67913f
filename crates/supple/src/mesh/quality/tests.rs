//! [`improve`]'s guarantees on a jittered bar, flips that must happen on hand-built pairs and
//! triples, a good mesh left no worse, the same bits twice, and bad input refused.

use super::*;
use crate::adaptive::generate::jittered_grid;
use crate::mesh::{boundary_faces, box_grid, BoxGrid, TetSplit};
use nalgebra::Vector3;

fn bar(split: TetSplit) -> BoxGrid {
    BoxGrid {
        cells: [8, 4, 4],
        cell_size: Vector3::repeat(0.25),
        origin: Vector3::new(-1.0, 0.5, 0.0),
        split,
    }
}

/// A jittered bar: interior vertices moved by up to 0.2 cells per axis (seeded SplitMix64).
fn jittered(split: TetSplit, seed: u64) -> TetMesh {
    jittered_grid(&bar(split), 0.2, seed).unwrap()
}

/// The boundary triangles, each rotated to start at its smallest index (orientation kept),
/// sorted.
fn boundary_set(m: &TetMesh) -> Vec<[u32; 3]> {
    let mut f: Vec<[u32; 3]> = boundary_faces(&m.tets)
        .into_iter()
        .map(|t| {
            let k = (0..3).min_by_key(|&k| t[k]).unwrap();
            [t[k], t[(k + 1) % 3], t[(k + 2) % 3]]
        })
        .collect();
    f.sort_unstable();
    f
}

fn assert_kept(before: &TetMesh, after: &TetMesh) {
    after.validate().unwrap();
    assert_eq!(after.n_vertices(), before.n_vertices());
    let faces = boundary_set(before);
    assert_eq!(boundary_set(after), faces);
    for f in &faces {
        for &v in f {
            let (a, b) = (before.positions[v as usize], after.positions[v as usize]);
            assert_eq!(a.map(f64::to_bits), b.map(f64::to_bits), "vertex {v}");
        }
    }
    let (v0, v1) = (before.volume(), after.volume());
    assert!((v1 - v0).abs() <= 1e-12 * v0, "{v0} → {v1}");
}

#[test]
fn a_jittered_bar_gets_a_larger_smallest_angle_and_keeps_its_boundary() {
    for split in [TetSplit::Five, TetSplit::Six] {
        let m = jittered(split, 7);
        let (out, r) = improve(&m, &ImproveParams::default()).unwrap();
        assert_kept(&m, &out);
        assert_eq!(r.before, DihedralStats::of(&m));
        assert_eq!(r.after, DihedralStats::of(&out));
        eprintln!(
            "{split:?}: min {:.2}° → {:.2}°, tets < 20° {} → {}, {} moves, {} 2-3 and {} 3-2 flips in {} passes",
            r.before.min_deg,
            r.after.min_deg,
            r.before.tets_below(20.0),
            r.after.tets_below(20.0),
            r.moves,
            r.flips_23,
            r.flips_32,
            r.passes
        );
        assert!(r.after.min_deg > r.before.min_deg + 3.0, "{split:?}");
        assert!(r.after.tets_below(25.0) < r.before.tets_below(25.0));
        assert!(r.moves > 0);
    }
}

/// An equilateral triangle `abc` (side 1, centre at the origin, z = 0) and `d`, `e` at heights
/// `±h` on its axis: vertices a, b, c, d, e = 0..5.
fn bipyramid(h: f64) -> Vec<Vector3<f64>> {
    let s = 3f64.sqrt();
    vec![
        Vector3::new(1.0 / s, 0.0, 0.0),
        Vector3::new(-0.5 / s, 0.5, 0.0),
        Vector3::new(-0.5 / s, -0.5, 0.0),
        Vector3::new(0.0, 0.0, h),
        Vector3::new(0.0, 0.0, -h),
    ]
}

#[test]
fn a_flat_pair_is_flipped_into_three_tets() {
    // At h = 0.1 the pair abcd + abce has 19.1° at the edges of abc; the three tets around de
    // have 38.2° at least.
    let m = TetMesh::new(bipyramid(0.1), vec![[0, 1, 2, 3], [1, 0, 2, 4]]).unwrap();
    let (out, r) = improve(&m, &ImproveParams::default()).unwrap();
    assert_kept(&m, &out);
    assert_eq!((r.flips_23, r.flips_32, r.moves), (1, 0, 0));
    assert_eq!(out.n_tets(), 3);
    assert!(out.tets.iter().all(|t| t.contains(&3) && t.contains(&4)));
    assert!(
        (r.before.min_deg - 19.11).abs() < 0.01,
        "{}",
        r.before.min_deg
    );
    assert!(
        (r.after.min_deg - 38.21).abs() < 0.01,
        "{}",
        r.after.min_deg
    );
}

#[test]
fn three_tets_around_a_long_edge_are_flipped_into_two() {
    // At h = 0.8 the three tets around de have 35.5°; the pair abcd + abce has 70.2°.
    let m = TetMesh::new(
        bipyramid(0.8),
        vec![[0, 1, 4, 3], [1, 2, 4, 3], [2, 0, 4, 3]],
    )
    .unwrap();
    let (out, r) = improve(&m, &ImproveParams::default()).unwrap();
    assert_kept(&m, &out);
    assert_eq!((r.flips_23, r.flips_32), (0, 1));
    assert_eq!(out.n_tets(), 2);
    assert!(out
        .tets
        .iter()
        .all(|t| [0, 1, 2].iter().all(|v| t.contains(v))));
    assert!(
        (r.after.min_deg - 70.16).abs() < 0.01,
        "{}",
        r.after.min_deg
    );
    // And the good pair is left alone.
    let (again, r) = improve(&out, &ImproveParams::default()).unwrap();
    assert_eq!((again, r.flips_23, r.flips_32), (out, 0, 0));
}

#[test]
fn a_good_mesh_is_not_made_worse() {
    for split in [TetSplit::Five, TetSplit::Six] {
        let m = box_grid(&bar(split));
        let (out, r) = improve(&m, &ImproveParams::default()).unwrap();
        assert_kept(&m, &out);
        assert!(r.after.min_deg >= r.before.min_deg, "{split:?}: {r:?}");
    }
    // The improved mesh of a jittered bar, improved again, stays at least as good.
    let (once, r1) = improve(&jittered(TetSplit::Five, 3), &ImproveParams::default()).unwrap();
    let (_, r2) = improve(&once, &ImproveParams::default()).unwrap();
    assert!(r2.after.min_deg >= r1.after.min_deg);
}

#[test]
fn the_same_mesh_gives_the_same_bits() {
    let m = jittered(TetSplit::Five, 11);
    let (a, ra) = improve(&m, &ImproveParams::default()).unwrap();
    let (b, rb) = improve(&m.clone(), &ImproveParams::default()).unwrap();
    assert_eq!(a.tets, b.tets);
    let bits = |m: &TetMesh| -> Vec<u64> {
        m.positions
            .iter()
            .flat_map(|p| p.iter().map(|c| c.to_bits()))
            .collect()
    };
    assert_eq!(bits(&a), bits(&b));
    assert_eq!(ra, rb);
}

#[test]
fn smoothing_or_flips_alone_keep_the_guarantees() {
    let m = jittered(TetSplit::Six, 5);
    for (smooth, flip) in [(true, false), (false, true), (false, false)] {
        let p = ImproveParams {
            passes: 3,
            smooth,
            flip,
        };
        let (out, r) = improve(&m, &p).unwrap();
        assert_kept(&m, &out);
        assert!(r.after.min_deg >= r.before.min_deg);
        if !flip {
            assert_eq!(out.tets, m.tets);
        }
        if !smooth {
            assert_eq!(out.positions, m.positions);
        }
    }
}

#[test]
fn bad_meshes_and_settings_are_refused() {
    let p = ImproveParams::default();
    let mut inverted = TetMesh {
        positions: bipyramid(0.3),
        tets: vec![[0, 1, 2, 3], [0, 1, 2, 4]],
    };
    let e = improve(&inverted, &p).unwrap_err();
    assert!(
        matches!(e, QualityError::Mesh(MeshError::Inverted { tet: 1, .. })),
        "{e}"
    );
    inverted.tets.clear();
    assert_eq!(
        improve(&inverted, &p).unwrap_err(),
        QualityError::Mesh(MeshError::NoTets)
    );
    // Three tets on one face: abc with d above and two copies below (e and a point near it).
    let mut pos = bipyramid(0.3);
    pos.push(Vector3::new(0.05, 0.0, -0.4));
    let m = TetMesh::new(pos, vec![[0, 1, 2, 3], [1, 0, 2, 4], [1, 0, 2, 5]]).unwrap();
    let e = improve(&m, &p).unwrap_err();
    assert_eq!(
        e.to_string(),
        "face (0, 1, 2) is shared by 3 tets (at most two share a face)"
    );
    let e = improve(
        &box_grid(&bar(TetSplit::Five)),
        &ImproveParams { passes: 1000, ..p },
    )
    .unwrap_err();
    assert_eq!(e.to_string(), "passes = 1000: at most 100");
}
