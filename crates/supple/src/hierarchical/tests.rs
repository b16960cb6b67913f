use super::*;
use crate::constraint::Components;
use crate::fem::material::{CorotationalSettings, CorotationalTangent};
use crate::fem::ForceModel;
use crate::linalg::{conjugate_gradient, BlockCsr, BlockJacobi, CgWorkspace};
use crate::mesh::{box_grid, BoxGrid, TetMesh, TetSplit};
use crate::time::{BackwardEuler, Integrator};
use nalgebra::{Rotation3, Vector3};

/// A 0.05 × 0.05 × 0.1 m bar of 10 tets (640 after two octasections), clamped at z = 0.
fn coarse_bar() -> TetMesh {
    box_grid(&BoxGrid {
        cells: [1, 1, 2],
        cell_size: Vector3::repeat(0.05),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    })
}

fn desc(model: ModelKind, mesh: TetMesh) -> BodyDesc {
    BodyDesc::new("bar", mesh, model, 2.6e3, 0.3, 1000.0)
}

fn settings(reading: Reading) -> HierarchySettings {
    HierarchySettings {
        reading,
        pcg: PcgSettings {
            tolerance: 1e-12,
            max_iterations: 2000,
            ..PcgSettings::default()
        },
        ..HierarchySettings::default()
    }
}

fn norm(v: &[Vector3<f64>]) -> f64 {
    v.iter().map(|x| x.norm_squared()).sum::<f64>().sqrt()
}

fn pseudo_random(n: usize, seed: f64) -> Vec<Vector3<f64>> {
    (0..n)
        .map(|i| {
            let t = seed + i as f64;
            Vector3::new(
                (1.3 * t).sin(),
                (2.1 * t + 0.4).cos(),
                (0.7 * t - 1.0).sin(),
            )
        })
        .collect()
}

#[test]
fn the_transpose_transform_is_the_adjoint_and_basis_functions_are_columns_of_t() {
    let h = Hierarchy::new(coarse_bar(), 2).unwrap();
    let n = h.finest().n_vertices();
    let c = pseudo_random(n, 0.3);
    let w = pseudo_random(n, 7.1);
    let mut tc = c.clone();
    h.to_nodal(&mut tc);
    let mut tw = w.clone();
    h.to_nodal_transpose(&mut tw);
    let lhs: f64 = tc.iter().zip(&w).map(|(a, b)| a.dot(b)).sum();
    let rhs: f64 = c.iter().zip(&tw).map(|(a, b)| a.dot(b)).sum();
    assert!(
        (lhs - rhs).abs() < 1e-12 * lhs.abs().max(1.0),
        "{lhs} vs {rhs}"
    );
    // Round trip of the transform itself.
    let mut back = tc.clone();
    h.to_hierarchical(&mut back);
    let err: f64 = back
        .iter()
        .zip(&c)
        .map(|(a, b)| (a - b).norm())
        .fold(0.0, f64::max);
    assert!(err < 1e-14, "{err}");

    let detail = detail::DetailCg::new(&h);
    let nc = h.coarse_vertices();
    for j in [nc, nc + 7, n - 1] {
        let mut e = vec![0.0; n];
        e[j] = 1.0;
        h.to_nodal(&mut e);
        let mut from_hat = vec![0.0; n];
        for &(v, w) in detail.basis_function(j).unwrap() {
            from_hat[v as usize] = w;
        }
        assert_eq!(e, from_hat, "basis function of vertex {j}");
    }
    assert!(detail.basis_function(0).is_none());
    assert!(detail.basis_function(n).is_none());
}

#[test]
fn refined_faces_keep_the_area_and_refined_sets_keep_the_held_plane() {
    let coarse = coarse_bar();
    let h = Hierarchy::new(coarse.clone(), 2).unwrap();
    let top: Vec<[u32; 3]> = crate::mesh::boundary_faces(&coarse.tets)
        .into_iter()
        .filter(|f| {
            f.iter()
                .all(|&v| coarse.positions[v as usize].z > 0.1 - 1e-9)
        })
        .collect();
    let fine = h.refine_faces(&top).unwrap();
    assert_eq!(fine.len(), 16 * top.len());
    let area = |mesh: &TetMesh, faces: &[[u32; 3]]| -> f64 {
        faces
            .iter()
            .map(|f| {
                let p = f.map(|v| mesh.positions[v as usize]);
                0.5 * (p[1] - p[0]).cross(&(p[2] - p[0])).norm()
            })
            .sum()
    };
    assert!((area(h.finest(), &fine) - area(&coarse, &top)).abs() < 1e-15);
    assert!(h.refine_faces(&[[0, 1, 1000]]).is_none());
    let bottom: Vec<u32> = (0..coarse.n_vertices() as u32)
        .filter(|&v| coarse.positions[v as usize].z < 1e-9)
        .collect();
    let held = h.refine_vertex_set(&bottom);
    let expected: Vec<u32> = (0..h.finest().n_vertices() as u32)
        .filter(|&v| h.finest().positions[v as usize].z < 1e-9)
        .collect();
    assert_eq!(held, expected);
}

#[test]
fn settings_and_descriptions_are_checked() {
    let bad = |s: HierarchySettings| HierarchicalBody::new(desc(ModelKind::Stvk, coarse_bar()), s);
    for s in [
        HierarchySettings {
            levels: 0,
            ..HierarchySettings::default()
        },
        HierarchySettings {
            update_every: 0,
            ..HierarchySettings::default()
        },
        HierarchySettings {
            scheme: Scheme::Bdf { order: 4 },
            ..HierarchySettings::default()
        },
    ] {
        assert!(matches!(bad(s), Err(HierarchyError::Setting { .. })));
    }
    let mut d = desc(ModelKind::Stvk, coarse_bar());
    d.constraints.push(crate::constraint::ConstraintDesc {
        components: Components::Axes([true, false, false]),
        ..crate::constraint::ConstraintDesc::fixed("slide", vec![0])
    });
    assert!(matches!(
        HierarchicalBody::new(d, HierarchySettings::default()),
        Err(HierarchyError::PartialConstraint { .. })
    ));
    let mut body = HierarchicalBody::new(
        desc(ModelKind::Stvk, coarse_bar()),
        HierarchySettings::default(),
    )
    .unwrap();
    assert!(body.step(-0.01, &Vector3::zeros()).is_err());
}

/// Positions `Q X + t` of the fine level, at rest (the coarse level follows the fine state
/// at its first step: stepper notes).
fn rigidly_moved(body: &mut HierarchicalBody, q: &nalgebra::Matrix3<f64>, t: &Vector3<f64>) {
    let fine = &mut body.fine;
    let moved: Vec<_> = fine.mesh.positions.iter().map(|p| q * p + t).collect();
    fine.x.copy_from_slice(&moved);
    fine.v.fill(Vector3::zeros());
}

#[test]
fn a_rigidly_rotated_hierarchy_has_no_elastic_force_in_either_reading() {
    let q = Rotation3::from_euler_angles(0.7, -1.1, 2.3).into_inner();
    let t = Vector3::new(0.3, -0.2, 1.0);
    for reading in [Reading::Detail, Reading::Full] {
        for (scheme, coarse_correction) in [
            (Scheme::BackwardEuler, false),
            (Scheme::Bdf { order: 3 }, false),
            (Scheme::BackwardEuler, true),
        ] {
            let s = HierarchySettings {
                scheme,
                coarse_correction,
                ..settings(reading)
            };
            let mut body = HierarchicalBody::new(desc(ModelKind::Stvk, coarse_bar()), s).unwrap();
            rigidly_moved(&mut body, &q, &t);
            let start = body.fine.x.clone();
            for _ in 0..3 {
                let stats = body.step(0.03, &Vector3::zeros()).unwrap();
                assert!(stats.fine_converged);
            }
            // The coarse level followed the fine one (to round-off of the added change).
            let coarse = body.coarse();
            for (i, p) in coarse.mesh.positions.iter().enumerate() {
                assert!(
                    (coarse.x[i] - (q * p + t)).norm() < 1e-12,
                    "coarse vertex {i}"
                );
            }
            // The fine model's forces at the rotated state, with the coarse frames: zero.
            let mut f = vec![Vector3::zeros(); body.fine.n_vertices()];
            body.fine
                .model
                .add_forces(&body.fine.elems, &body.fine.x, &mut f);
            // Scale: the forces of a 1 % stretch.
            let stretched: Vec<_> = body.fine.mesh.positions.iter().map(|p| 1.01 * p).collect();
            let mut f_s = vec![Vector3::zeros(); body.fine.n_vertices()];
            let mut plain = crate::fem::material::Linear::new(body.fine.lame);
            plain.update_frames(&body.fine.elems, &stretched);
            plain.add_forces(&body.fine.elems, &stretched, &mut f_s);
            assert!(
                norm(&f) < 1e-9 * norm(&f_s),
                "{reading:?} {scheme:?}: {}",
                norm(&f)
            );
            let moved = body
                .fine
                .x
                .iter()
                .zip(&start)
                .map(|(a, b)| (a - b).norm())
                .fold(0.0, f64::max);
            assert!(
                moved < 1e-12,
                "{reading:?} {scheme:?}: a rigid state moved {moved} m"
            );
        }
    }
}

/// The detail solve is the nodal system with the coarse vertices held at the given coarse
/// solution: both give the same field.
#[test]
fn the_detail_solve_equals_the_nodal_solve_with_coarse_vertices_held() {
    let h = Hierarchy::new(coarse_bar(), 2).unwrap();
    let body = Body::new(desc(
        ModelKind::corotational(CorotationalTangent::Rotated),
        h.finest().clone(),
    ))
    .unwrap();
    let n = body.n_vertices();
    let mut a = BlockCsr::zeros(body.elems.pattern.clone());
    body.model
        .add_tangent(&body.elems, &body.x, 0.03 * 0.03, &mut a);
    body.mass.add_to(&mut a, 1.0);
    let fixed: Vec<bool> = (0..n).map(|i| body.mesh.positions[i].z < 1e-9).collect();
    let mut b = pseudo_random(n, 2.0);
    crate::time::system::zero_fixed(&fixed, &mut b);
    let nc = h.coarse_vertices();
    let coarse_v = pseudo_random(nc, 5.0);
    // First guess: the coarse solution prolonged, nothing else.
    let mut u = vec![Vector3::zeros(); n];
    h.prolong(&coarse_v, &mut u);
    crate::time::system::zero_fixed(&fixed, &mut u);
    let mut detail = detail::DetailCg::new(&h);
    detail.refresh(&a, &fixed);
    let tight = PcgSettings {
        tolerance: 1e-13,
        max_iterations: 5000,
        ..PcgSettings::default()
    };
    let mut from_detail = u.clone();
    let info = detail
        .solve(&h, &a, &b, &fixed, &mut from_detail, &tight)
        .unwrap();
    // Nodal: the coarse vertices held at the prolonged guess's values.
    let mut held = fixed.clone();
    held[..nc].fill(true);
    let mut nodal = u.clone();
    let mut b_held = b.clone();
    // Held entries keep their values; the loop filters their rows and columns, so move their
    // contribution to the right-hand side: b_free −= A_free,held u_held.
    let mut au = vec![Vector3::zeros(); n];
    let mut only_held = u.clone();
    for (i, v) in only_held.iter_mut().enumerate() {
        if !held[i] {
            *v = Vector3::zeros();
        }
    }
    a.mul_vec(&only_held, &mut au);
    for i in 0..n {
        b_held[i] -= au[i];
    }
    let mut jac = BlockJacobi::new(n);
    jac.refresh(&a, &held);
    let mut dx = vec![Vector3::zeros(); n];
    for i in 0..n {
        if held[i] {
            dx[i] = Vector3::zeros();
        }
    }
    conjugate_gradient(
        &mut CgWorkspace::new(n),
        &a,
        &b_held,
        &held,
        &mut dx,
        &tight,
        &mut jac,
    )
    .unwrap();
    for i in 0..n {
        if !held[i] {
            nodal[i] = dx[i];
        }
    }
    let diff: Vec<_> = from_detail.iter().zip(&nodal).map(|(a, b)| a - b).collect();
    let rel = norm(&diff) / norm(&nodal);
    assert!(
        rel < 1e-9,
        "relative difference {rel} after {} iterations",
        info.iterations
    );
    // The coarse vertices are the coarse solution.
    for i in 0..nc {
        if !fixed[i] {
            assert!((from_detail[i] - coarse_v[i]).norm() < 1e-14);
        }
    }
}

/// A fine-scale wiggle on a rigidly rotated bar whose coarse vertices are exactly rigid: the
/// coarse level does not deform, so one coarse frame is as good as each fine tet's own. Reading
/// (b) then takes the plain corotational step, reading (a) the plain corotational step with
/// the coarse vertices held (its coarse coefficients are the coarse solution, at rest), both
/// up to the size of the strain.
#[test]
fn agrees_with_plain_corotational_when_the_coarse_level_barely_deforms() {
    let q = Rotation3::from_euler_angles(1.0, 0.2, -0.6).into_inner();
    let dt = 0.01;
    for eps in [1e-2, 1e-3] {
        let mut rel = [0.0; 2];
        for (k, reading) in [Reading::Detail, Reading::Full].into_iter().enumerate() {
            let mut body =
                HierarchicalBody::new(desc(ModelKind::Stvk, coarse_bar()), settings(reading))
                    .unwrap();
            rigidly_moved(&mut body, &q, &Vector3::zeros());
            let nc = body.hierarchy().coarse_vertices();
            let wiggled: Vec<_> = body
                .fine
                .mesh
                .positions
                .iter()
                .enumerate()
                .map(|(i, p)| {
                    let w =
                        Vector3::new((80.0 * p.z).sin(), (70.0 * p.x).cos(), (90.0 * p.y).sin());
                    q * (p + if i < nc {
                        Vector3::zeros()
                    } else {
                        eps * 0.01 * w
                    })
                })
                .collect();
            body.fine.x.copy_from_slice(&wiggled);
            body.step(dt, &Vector3::zeros()).unwrap();

            let model = ModelKind::Corotational(CorotationalSettings {
                tangent: CorotationalTangent::Rotated,
                ..CorotationalSettings::default()
            });
            let mut d = desc(model, body.fine.mesh.clone());
            if reading == Reading::Detail {
                d.fixed = (0..nc as u32).collect();
            }
            let mut plain = Body::new(d).unwrap();
            plain.x.copy_from_slice(&wiggled);
            let mut be = BackwardEuler::new(
                &plain,
                NewtonSettings {
                    tolerance: 1e-10,
                    ..NewtonSettings::default()
                },
            )
            .unwrap();
            be.step(&mut plain, dt, &Vector3::zeros()).unwrap();
            let step_h: Vec<_> = body
                .fine
                .x
                .iter()
                .zip(&wiggled)
                .map(|(a, b)| a - b)
                .collect();
            let step_p: Vec<_> = plain.x.iter().zip(&wiggled).map(|(a, b)| a - b).collect();
            let diff: Vec<_> = step_h.iter().zip(&step_p).map(|(a, b)| a - b).collect();
            rel[k] = norm(&diff) / norm(&step_p);
        }
        eprintln!(
            "strain scale {eps:e}: relative step difference (a) {:.3e}, (b) {:.3e}",
            rel[0], rel[1]
        );
        for r in rel {
            assert!(r < 5.0 * eps, "{r} at {eps}");
        }
    }
}

/// Reading (b)'s two-level preconditioner changes the PCG's path, not the solution, and
/// takes fewer iterations than block Jacobi on a bent, loaded bar.
#[test]
fn the_coarse_correction_changes_the_iterations_not_the_solution() {
    let mut runs = Vec::new();
    for coarse_correction in [false, true] {
        let mut d = desc(ModelKind::Stvk, coarse_bar());
        let base: Vec<u32> = (0..d.mesh.n_vertices() as u32)
            .filter(|&v| d.mesh.positions[v as usize].z < 1e-9)
            .collect();
        let top: Vec<[u32; 3]> = crate::mesh::boundary_faces(&d.mesh.tets)
            .into_iter()
            .filter(|f| {
                f.iter()
                    .all(|&v| d.mesh.positions[v as usize].z > 0.1 - 1e-9)
            })
            .collect();
        d.constraints
            .push(crate::constraint::ConstraintDesc::fixed("base", base));
        d.loads.push(crate::load::LoadDesc {
            name: "shear".into(),
            kind: LoadKind::Traction {
                faces: top,
                traction: Vector3::new(30.0, 10.0, 0.0),
            },
            time: crate::load::TimeFunction::One,
        });
        // Block Jacobi, the preconditioner the coarse correction is added to (the default is
        // Eisenstat SSOR since issue 18).
        let base = settings(Reading::Full);
        let s = HierarchySettings {
            coarse_correction,
            pcg: PcgSettings {
                preconditioner: crate::linalg::Preconditioner::BlockJacobi,
                ..base.pcg
            },
            ..base
        };
        let mut body = HierarchicalBody::new(d, s).unwrap();
        let mut iterations = 0;
        for _ in 0..8 {
            let st = body.step(0.03, &Vector3::zeros()).unwrap();
            assert!(st.fine_converged);
            iterations += st.fine_iterations;
        }
        runs.push((
            body.fine.x.clone(),
            iterations,
            body.fine.mesh.positions.clone(),
        ));
    }
    let (x0, it0, rest) = &runs[0];
    let (x1, it1, _) = &runs[1];
    let disp: Vec<_> = x0.iter().zip(rest).map(|(a, b)| a - b).collect();
    let diff: Vec<_> = x0.iter().zip(x1).map(|(a, b)| a - b).collect();
    assert!(norm(&disp) > 1e-3, "the bar should bend");
    assert!(
        norm(&diff) < 1e-8 * norm(&disp),
        "{} vs {}",
        norm(&diff),
        norm(&disp)
    );
    assert!(
        it1 < it0,
        "two-level {it1} vs block Jacobi {it0} iterations"
    );
    eprintln!("PCG iterations in 8 steps: block Jacobi {it0}, two-level {it1}");
}

/// Reading (a): the fine field's coarse vertices are the coarse solution after every step,
/// and its details are not all zero once the bar bends (the fine level adds detail).
#[test]
fn in_reading_a_the_coarse_vertices_are_the_coarse_solution() {
    let mut d = desc(ModelKind::Stvk, coarse_bar());
    let base: Vec<u32> = (0..d.mesh.n_vertices() as u32)
        .filter(|&v| d.mesh.positions[v as usize].z < 1e-9)
        .collect();
    d.constraints
        .push(crate::constraint::ConstraintDesc::fixed("base", base));
    let mut body = HierarchicalBody::new(d, settings(Reading::Detail)).unwrap();
    let g = Vector3::new(9.81, 0.0, 0.0);
    for _ in 0..6 {
        body.step(0.03, &g).unwrap();
        let nc = body.hierarchy().coarse_vertices();
        assert_eq!(&body.fine.x[..nc], &body.coarse().x[..]);
        assert_eq!(&body.fine.v[..nc], &body.coarse().v[..]);
    }
    let mut detail: Vec<_> = body
        .fine
        .x
        .iter()
        .zip(&body.fine.mesh.positions)
        .map(|(x, p)| x - p)
        .collect();
    body.hierarchy().to_hierarchical(&mut detail);
    let nc = body.hierarchy().coarse_vertices();
    assert!(
        norm(&detail[nc..]) > 1e-3 * norm(&detail[..nc]),
        "no detail"
    );
}

/// What the world does on a failed step: restore the fine state from before it, restart the
/// integrator, take it again. The coarse level restarts from the restored fine state (in
/// reading (a) that is the coarse state itself), so the retried step repeats the first.
#[test]
fn a_restored_state_and_a_restart_repeat_the_step() {
    let g = Vector3::new(9.81, 0.0, 0.0);
    let mut body = HierarchicalBody::new(
        desc(ModelKind::Stvk, coarse_bar()),
        HierarchySettings::default(),
    )
    .unwrap();
    for _ in 0..3 {
        body.step(0.03, &g).unwrap();
    }
    let (x0, v0) = (body.fine.x.clone(), body.fine.v.clone());
    body.step(0.03, &g).unwrap();
    let first = body.fine.x.clone();
    // A push the world's contact phase might have made, then the restore and the restart.
    for x in &mut body.fine.x {
        x.y += 0.01;
    }
    body.fine.x.copy_from_slice(&x0);
    body.fine.v.copy_from_slice(&v0);
    body.stepper.restart();
    let t = body.time();
    body.fine.set_time(t);
    body.stepper
        .advance(&mut body.fine, None, &[], t - 0.03, 0.03, &g)
        .unwrap();
    let scale = norm(
        &first
            .iter()
            .zip(&x0)
            .map(|(a, b)| a - b)
            .collect::<Vec<_>>(),
    );
    let diff = norm(
        &body
            .fine
            .x
            .iter()
            .zip(&first)
            .map(|(a, b)| a - b)
            .collect::<Vec<_>>(),
    );
    assert!(
        diff < 1e-9 * scale,
        "retried step off by {diff} (step {scale})"
    );
    let nc = body.hierarchy().coarse_vertices();
    assert_eq!(&body.fine.x[..nc], &body.coarse().x[..]);
}
