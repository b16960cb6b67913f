//! Narrow-phase continuous collision detection: the exact cubic-root tests and the
//! Liesenfeld–Stolfi Hermite/Bernstein tests (§6.2–6.3) against configurations built to touch
//! at a known time, against misses, under scaling, and against brute-force sampling.
//!
//! Run with `--nocapture` to see the measured errors.

mod common;

use common::ccd::*;
use supple::contact::ccd::{
    edge_edge_exact, edge_edge_hermite, vertex_face_exact, vertex_face_hermite, Hit,
};

/// Builds 400 crossings with `make`, keeps those whose linear motion has a single coplanarity
/// in the step, and checks that the exact test and the Hermite test (linear velocities, so the
/// same path) both find each at its built time, with its weights and normal, within 1e-6;
/// prints the worst errors.
fn crossings_found_by_both_tests<const N: usize>(
    label: &str,
    seed: u64,
    dt: f64,
    make: impl Fn(&mut Rng, bool) -> Case<N>,
    exact: impl Fn(&[V3; 4], &[V3; 4]) -> Option<Hit>,
    hermite: impl Fn(&[V3; N], &[V3; N], &[V3; N], &[V3; N], f64) -> Option<Hit>,
) {
    let mut rng = Rng(seed);
    let (mut used, mut worst_exact, mut worst_hermite, mut worst_agree) =
        (0, 0.0f64, 0.0f64, 0.0f64);
    let mut worst_w = 0.0f64;
    for i in 0..400 {
        let case = make(&mut rng, i % 2 == 0);
        if sampled_sign_changes(&case.x0, &case.x1, 2000) != 1 {
            continue; // a second coplanarity in the step: t_star need not be the earliest
        }
        used += 1;
        let x0: [V3; 4] = std::array::from_fn(|k| case.x0[k]);
        let x1: [V3; 4] = std::array::from_fn(|k| case.x1[k]);
        let exact = exact(&x0, &x1).expect("exact test finds it");
        let v = linear_velocity(&case.x0, &case.x1, dt);
        let hermite = hermite(&case.x0, &v, &case.x1, &v, dt).expect("Hermite finds it");
        for hit in [&exact, &hermite] {
            let (et, ew, en) = compare(hit, &case);
            assert!(
                et < 1e-6 && ew < 1e-6 && en < 1e-6,
                "{label} case {i}: {et:e} {ew:e} {en:e}"
            );
            worst_w = worst_w.max(ew).max(en);
        }
        worst_exact = worst_exact.max((exact.t - case.t_star).abs());
        worst_hermite = worst_hermite.max((hermite.t - case.t_star).abs());
        worst_agree = worst_agree.max((exact.t - hermite.t).abs());
    }
    println!(
        "{label}: {used} cases, max |t − t*| exact {worst_exact:.1e}, Hermite \
         {worst_hermite:.1e}, |exact − Hermite| {worst_agree:.1e}, max weight/normal error {worst_w:.1e}"
    );
    assert!(used >= 300, "{label}: only {used} usable cases");
    assert!(worst_agree < 1e-6, "{label}: {worst_agree:e}");
}

#[test]
fn vertex_face_crossings_found_by_both_tests_at_the_built_time() {
    crossings_found_by_both_tests(
        "vertex–face",
        7,
        0.01,
        vertex_face_case,
        |x0, x1| vertex_face_exact(x0, x1, 1e-6),
        vertex_face_hermite,
    );
}

#[test]
fn edge_edge_crossings_found_by_both_tests_at_the_built_time() {
    crossings_found_by_both_tests(
        "edge–edge",
        11,
        0.02,
        edge_edge_case,
        |x0, x1| edge_edge_exact(x0, x1, 1e-6),
        edge_edge_hermite,
    );
}

#[test]
fn both_orientations_give_normals_toward_the_start_side() {
    for (z0, expected) in [(1.0, V3::z()), (-1.0, -V3::z())] {
        let (x0, x1) = drop(V3::new(0.2, 0.3, z0), V3::new(0.2, 0.3, -z0));
        let v = linear_velocity(&x0, &x1, 1.0);
        for hit in [
            vertex_face_exact(&x0, &x1, 0.0).unwrap(),
            vertex_face_hermite(&x0, &v, &x1, &v, 1.0).unwrap(),
        ] {
            assert!((hit.t - 0.5).abs() < 1e-15, "{hit:?}");
            assert!((hit.normal - expected).norm() < 1e-15, "{hit:?}");
            let w_expected = [1.0, -0.5, -0.2, -0.3];
            assert!(
                (0..4).all(|k| (hit.w[k] - w_expected[k]).abs() < 1e-15),
                "{hit:?}"
            );
        }
    }
}

#[test]
fn misses_are_not_reported() {
    let eta = 1e-3;
    // Vertex crossing the triangle's plane beside the triangle (x + y = 1.3 > 1).
    let (x0, x1) = drop(V3::new(0.65, 0.65, 1.0), V3::new(0.65, 0.65, -1.0));
    let v = linear_velocity(&x0, &x1, 1.0);
    assert_eq!(vertex_face_exact(&x0, &x1, eta), None);
    assert_eq!(vertex_face_hermite(&x0, &v, &x1, &v, 1.0), None);
    // Separating: above the triangle and moving up.
    let (x0, x1) = drop(V3::new(0.2, 0.2, 0.1), V3::new(0.2, 0.2, 0.5));
    let v = linear_velocity(&x0, &x1, 1.0);
    assert_eq!(vertex_face_exact(&x0, &x1, eta), None);
    assert_eq!(vertex_face_hermite(&x0, &v, &x1, &v, 1.0), None);
    // Parallel edges in one plane approaching to 0.2 apart: coplanar throughout.
    let a = [V3::zeros(), V3::x()];
    let x0 = [a[0], a[1], V3::new(0.3, 0.6, 0.0), V3::new(1.3, 0.6, 0.0)];
    let x1 = [a[0], a[1], V3::new(0.3, 0.2, 0.0), V3::new(1.3, 0.2, 0.0)];
    assert_eq!(edge_edge_exact(&x0, &x1, eta), None);
    let tets = [V3::new(0.5, -0.5, 0.5), V3::new(0.8, 1.0, -0.5)];
    let x0h = [x0[0], x0[1], x0[2], x0[3], tets[0], tets[1]];
    let x1h = [
        x1[0],
        x1[1],
        x1[2],
        x1[3],
        tets[0],
        tets[1] - V3::new(0.0, 0.4, 0.0),
    ];
    let v = linear_velocity(&x0h, &x1h, 1.0);
    assert_eq!(edge_edge_hermite(&x0h, &v, &x1h, &v, 1.0), None);
    // Skew edges whose lines become coplanar, but the segments pass beside each other.
    let x0 = [
        V3::new(-1.0, 0.0, 1.0),
        V3::new(1.0, 0.0, 1.0),
        V3::new(2.0, -1.0, 0.0),
        V3::new(2.0, 1.0, 0.0),
    ];
    let x1 = [
        V3::new(-1.0, 0.0, -1.0),
        V3::new(1.0, 0.0, -1.0),
        x0[2],
        x0[3],
    ];
    assert_eq!(edge_edge_exact(&x0, &x1, eta), None);
    let x0h = [
        x0[0],
        x0[1],
        x0[2],
        x0[3],
        V3::new(0.0, 0.0, 2.0),
        V3::new(2.0, 0.0, -1.0),
    ];
    let x1h = [
        x1[0],
        x1[1],
        x1[2],
        x1[3],
        V3::new(0.0, 0.0, 0.0),
        V3::new(2.0, 0.0, -1.0),
    ];
    let v = linear_velocity(&x0h, &x1h, 1.0);
    assert_eq!(edge_edge_hermite(&x0h, &v, &x1h, &v, 1.0), None);
    // The same edges moved to cross (x = 0.5): both report it at t = 0.5.
    let shift = |x: &[V3; 6]| -> [V3; 6] {
        std::array::from_fn(|k| {
            if k == 2 || k == 3 || k == 5 {
                x[k] - 1.5 * V3::x()
            } else {
                x[k]
            }
        })
    };
    let (y0, y1) = (shift(&x0h), shift(&x1h));
    let v = linear_velocity(&y0, &y1, 1.0);
    let hit = edge_edge_hermite(&y0, &v, &y1, &v, 1.0).unwrap();
    assert!(
        (hit.t - 0.5).abs() < 1e-15 && (hit.normal - V3::z()).norm() < 1e-15,
        "{hit:?}"
    );
    let y04: [V3; 4] = std::array::from_fn(|k| y0[k]);
    let y14: [V3; 4] = std::array::from_fn(|k| y1[k]);
    assert!((edge_edge_exact(&y04, &y14, eta).unwrap().t - 0.5).abs() < 1e-15);
}

#[test]
fn times_do_not_change_with_scale_or_position() {
    let mut rng = Rng(23);
    let mut worst = 0.0f64;
    for i in 0..100 {
        let case = edge_edge_case(&mut rng, i % 2 == 0);
        let vf = vertex_face_case(&mut rng, i % 2 == 1);
        for (k, (scale, offset)) in [
            (0.01, V3::zeros()),
            (0.01, V3::new(3.0, -7.0, 11.0)),
            (1.0, V3::new(400.0, 0.0, -300.0)),
        ]
        .into_iter()
        .enumerate()
        {
            let map6 = |x: &[V3; 6]| -> [V3; 6] { std::array::from_fn(|j| scale * x[j] + offset) };
            let map4 = |x: &[V3; 4]| -> [V3; 4] { std::array::from_fn(|j| scale * x[j] + offset) };
            let first4 = |x: &[V3; 6]| -> [V3; 4] { std::array::from_fn(|j| x[j]) };
            let dt = 0.01;
            let times = |x0: &[V3; 6], x1: &[V3; 6], y0: &[V3; 4], y1: &[V3; 4], eta: f64| {
                let v = linear_velocity(x0, x1, dt);
                let u = linear_velocity(y0, y1, dt);
                [
                    edge_edge_exact(&first4(x0), &first4(x1), eta).map(|h| h.t),
                    edge_edge_hermite(x0, &v, x1, &v, dt).map(|h| h.t),
                    vertex_face_exact(y0, y1, eta).map(|h| h.t),
                    vertex_face_hermite(y0, &u, y1, &u, dt).map(|h| h.t),
                ]
            };
            let base = times(&case.x0, &case.x1, &vf.x0, &vf.x1, 1e-3);
            let mapped = times(
                &map6(&case.x0),
                &map6(&case.x1),
                &map4(&vf.x0),
                &map4(&vf.x1),
                1e-3 * scale,
            );
            for (a, b) in base.iter().zip(mapped.iter()) {
                assert_eq!(
                    a.is_some(),
                    b.is_some(),
                    "case {i}, map {k}: {base:?} vs {mapped:?}"
                );
                if let (Some(a), Some(b)) = (a, b) {
                    worst = worst.max((a - b).abs());
                }
            }
        }
    }
    println!("scaled ×0.01 / translated: max |Δt| = {worst:.1e}");
    assert!(worst < 1e-9, "{worst:e}");
}
