use super::*;
use crate::linalg::BlockPattern;
use crate::mesh::{box_grid, BoxGrid, TetSplit};
use std::sync::Arc;

fn cube() -> (TetMesh, Arc<BlockPattern>) {
    let mesh = box_grid(&BoxGrid {
        cells: [2, 2, 2],
        cell_size: Vector3::repeat(0.5),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    });
    let (p, _) = BlockPattern::from_tets(mesh.n_vertices(), &mesh.tets);
    (mesh, Arc::new(p))
}

fn faces_on(mesh: &TetMesh, on: impl Fn(&Vector3<f64>) -> bool) -> Vec<[u32; 3]> {
    boundary_faces(&mesh.tets)
        .into_iter()
        .filter(|f| f.iter().all(|&i| on(&mesh.positions[i as usize])))
        .collect()
}

fn desc(kind: LoadKind) -> LoadDesc {
    LoadDesc {
        name: "l".into(),
        kind,
        time: TimeFunction::One,
    }
}

#[test]
fn a_traction_sums_to_area_times_traction_and_a_closed_pressure_to_zero() {
    let (mesh, pattern) = cube();
    let top = faces_on(&mesh, |p| (p.z - 1.0).abs() < 1e-12);
    let t = Vector3::new(3.0, -1.0, 2.0);
    let loads = Loads::new(
        &mesh,
        &pattern,
        &[desc(LoadKind::Traction {
            faces: top.clone(),
            traction: t,
        })],
    )
    .unwrap();
    let total = loads.resultant(&mesh.positions);
    assert!((total - t).norm() < 1e-12, "{total}");
    // Pressure on the top face pushes down (into the body), whatever the given face order.
    let flipped: Vec<_> = top.iter().map(|f| [f[0], f[2], f[1]]).collect();
    let p = Loads::new(
        &mesh,
        &pattern,
        &[desc(LoadKind::Pressure {
            faces: flipped,
            pressure: 5.0,
            follower: false,
        })],
    )
    .unwrap();
    assert!((p.resultant(&mesh.positions) - Vector3::new(0.0, 0.0, -5.0)).norm() < 1e-12);
    // Uniform pressure on the whole closed surface has no resultant, dead or follower.
    for follower in [false, true] {
        let all = Loads::new(
            &mesh,
            &pattern,
            &[desc(LoadKind::Pressure {
                faces: boundary_faces(&mesh.tets),
                pressure: 7.0,
                follower,
            })],
        )
        .unwrap();
        assert!(all.resultant(&mesh.positions).norm() < 1e-12);
    }
}

#[test]
fn interior_faces_and_bad_vertices_are_refused() {
    let (mesh, pattern) = cube();
    let t = mesh.tets[0];
    let interior = (0..mesh.n_tets())
        .flat_map(|e| {
            let t = mesh.tets[e];
            [
                [t[0], t[1], t[2]],
                [t[0], t[1], t[3]],
                [t[0], t[2], t[3]],
                [t[1], t[2], t[3]],
            ]
        })
        .find(|f| {
            !boundary_faces(&mesh.tets)
                .iter()
                .any(|b| sorted(*b) == sorted(*f))
        })
        .unwrap();
    let err = Loads::new(
        &mesh,
        &pattern,
        &[desc(LoadKind::Traction {
            faces: vec![interior],
            traction: Vector3::x(),
        })],
    )
    .unwrap_err();
    assert!(matches!(err, LoadError::NotBoundary { .. }), "{err}");
    let err = Loads::new(
        &mesh,
        &pattern,
        &[desc(LoadKind::Nodal(vec![
            (t[0], Vector3::x()),
            (999, Vector3::x()),
        ]))],
    )
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "load `l`: vertex 999 is out of range (the mesh has 27 vertices)"
    );
}

/// The follower-pressure tangent equals central differences of its forces.
#[test]
fn follower_tangent_matches_finite_differences() {
    let (mesh, pattern) = cube();
    let faces = faces_on(&mesh, |p| p.x > 0.99 || p.y < 0.01);
    let loads = Loads::new(
        &mesh,
        &pattern,
        &[desc(LoadKind::Pressure {
            faces,
            pressure: 3.0,
            follower: true,
        })],
    )
    .unwrap();
    // A deformed state.
    let x: Vec<_> = mesh
        .positions
        .iter()
        .map(|p| p + 0.1 * Vector3::new(p.y * p.z, (p.x * 3.0).sin(), p.x * p.x))
        .collect();
    let mut k = BlockCsr::zeros(pattern.clone());
    loads.add_tangent(&x, 1.0, false, &mut k);
    let n = x.len();
    let eps = 1e-6;
    let mut worst: f64 = 0.0;
    for j in 0..n {
        for c in 0..3 {
            let mut xp = x.clone();
            let mut xm = x.clone();
            xp[j][c] += eps;
            xm[j][c] -= eps;
            let (mut fp, mut fm) = (vec![Vector3::zeros(); n], vec![Vector3::zeros(); n]);
            loads.add_forces(&xp, &mut fp);
            loads.add_forces(&xm, &mut fm);
            for i in 0..n {
                let fd = -(fp[i] - fm[i]) / (2.0 * eps);
                let col = match pattern.slot(i, j) {
                    Some(s) => k.values[s].column(c).into_owned(),
                    None => Vector3::zeros(),
                };
                worst = worst.max((fd - col).norm());
            }
        }
    }
    assert!(worst < 1e-8, "largest tangent error {worst:.3e}");
    // The symmetric part is symmetric.
    let mut ks = BlockCsr::zeros(pattern.clone());
    loads.add_tangent(&x, 1.0, true, &mut ks);
    for i in 0..n {
        for j in 0..n {
            if let (Some(a), Some(b)) = (pattern.slot(i, j), pattern.slot(j, i)) {
                assert!((ks.values[a] - ks.values[b].transpose()).norm() < 1e-14);
            }
        }
    }
}
