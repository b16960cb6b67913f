//! Narrow-phase continuous collision detection, robustness: random motions against
//! brute-force sampling, Hermite's curved paths and eq. 31's side condition, coplanar and
//! grazing motions, starts and ends in the plane, closest points, bad input, no allocation.
//!
//! Run with `--nocapture` to see the measured errors.

mod common;

use common::ccd::*;
use supple::contact::ccd::{
    edge_edge_exact, edge_edge_hermite, point_triangle, segment_segment, vertex_face_exact,
    vertex_face_hermite,
};

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

#[test]
fn random_vertex_face_motions_against_sampling() {
    let mut rng = Rng(101);
    let eta = 1e-3;
    let margin = 1e-3;
    let (mut crossings, mut hits, mut both) = (0, 0, 0);
    for trial in 0..4000 {
        let tri0 = [rng.vec3(), rng.vec3(), rng.vec3()];
        let x0 = [rng.vec3(), tri0[0], tri0[1], tri0[2]];
        let x1 = [
            rng.vec3(),
            tri0[0] + 0.3 * rng.vec3(),
            tri0[1] + 0.3 * rng.vec3(),
            tri0[2] + 0.3 * rng.vec3(),
        ];
        let exact = vertex_face_exact(&x0, &x1, eta);
        let exact0 = vertex_face_exact(&x0, &x1, 0.0);
        let v = linear_velocity(&x0, &x1, 1.0);
        let hermite = vertex_face_hermite(&x0, &v, &x1, &v, 1.0);
        if let Some(h) = exact {
            hits += 1;
            let p = lerp(&x0, &x1, h.t);
            let (d, _) = point_triangle(&p[0], &p[1], &p[2], &p[3]);
            assert!(
                d <= eta * (1.0 + 1e-6),
                "trial {trial}: distance {d} at {h:?}"
            );
            let n = (p[2] - p[1]).cross(&(p[3] - p[1]));
            assert!(
                det4(&p).abs() / n.norm() < 1e-9,
                "trial {trial}: not coplanar at {h:?}"
            );
        }
        // Both tests see the same cubic on a linear path: same answer without tolerance.
        assert_eq!(
            exact0.is_some(),
            hermite.is_some(),
            "trial {trial}: {exact0:?} {hermite:?}"
        );
        if let (Some(a), Some(b)) = (exact0, hermite) {
            both += 1;
            assert!((a.t - b.t).abs() < 1e-9, "trial {trial}: {a:?} {b:?}");
        }
        // First sampled sign change of the gap with the vertex inside the triangle.
        let inside = |s: f64| {
            let p = lerp(&x0, &x1, s);
            projected_barycentric(&p[0], &p[1], &p[2], &p[3])
                .iter()
                .all(|&b| b > margin)
        };
        let n = 1000;
        let first = (1..=n).map(|i| i as f64 / n as f64).find(|&s| {
            let s0 = s - 1.0 / n as f64;
            det4(&lerp(&x0, &x1, s0)) * det4(&lerp(&x0, &x1, s)) < 0.0 && inside(s0) && inside(s)
        });
        if let Some(s) = first {
            crossings += 1;
            for (name, hit) in [
                ("exact", exact),
                ("exact η=0", exact0),
                ("Hermite", hermite),
            ] {
                let hit =
                    hit.unwrap_or_else(|| panic!("trial {trial}: {name} missed a crossing at {s}"));
                assert!(
                    hit.t <= s + 1e-3,
                    "trial {trial}: {name} {hit:?} later than {s}"
                );
            }
        }
    }
    println!("random vertex–face: {crossings} sampled crossings, {hits} exact hits, {both} agreeing pairs");
    assert!(crossings >= 200, "only {crossings} crossings sampled");
}

#[test]
fn random_edge_edge_motions_against_sampling() {
    let mut rng = Rng(202);
    let eta = 1e-3;
    let margin = 1e-3;
    let (mut crossings, mut hits) = (0, 0);
    for trial in 0..4000 {
        let x0 = [rng.vec3(), rng.vec3(), rng.vec3(), rng.vec3()];
        let x1: [V3; 4] = std::array::from_fn(|k| x0[k] + 0.8 * rng.vec3());
        let exact = edge_edge_exact(&x0, &x1, eta);
        if let Some(h) = exact {
            hits += 1;
            let p = lerp(&x0, &x1, h.t);
            let (d, s, u) = segment_segment(&p[0], &p[1], &p[2], &p[3]);
            assert!(
                d <= eta * (1.0 + 1e-6),
                "trial {trial}: distance {d} at {h:?}"
            );
            let sep: V3 = (0..4).map(|k| h.w[k] * p[k]).sum();
            assert!(sep.norm() <= eta * (1.0 + 1e-6) && (sep.norm() - d).abs() < 1e-9 + 1e-6 * d);
            assert!((0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&u));
        }
        let crossing = |s: f64| {
            line_parameters(&lerp(&x0, &x1, s)).is_some_and(|(a, b)| {
                a > margin && a < 1.0 - margin && b > margin && b < 1.0 - margin
            })
        };
        let n = 1000;
        let first = (1..=n).map(|i| i as f64 / n as f64).find(|&s| {
            let s0 = s - 1.0 / n as f64;
            det4(&lerp(&x0, &x1, s0)) * det4(&lerp(&x0, &x1, s)) < 0.0
                && crossing(s0)
                && crossing(s)
        });
        if let Some(s) = first {
            crossings += 1;
            let hit = exact.unwrap_or_else(|| panic!("trial {trial}: missed a crossing at {s}"));
            assert!(hit.t <= s + 1e-3, "trial {trial}: {hit:?} later than {s}");
        }
    }
    println!("random edge–edge: {crossings} sampled crossings, {hits} exact hits");
    assert!(crossings >= 200, "only {crossings} crossings sampled");
}

#[test]
fn hermite_sees_a_dip_inside_the_step_that_linear_motion_cannot() {
    // Vertex at height h at both ends, leaving downwards and arriving upwards: the Hermite
    // path is z(s) = h − V dt s (1 − s), which crosses z = 0 at s = (1 − √(1 − 4h/(V dt)))/2.
    let (h, speed, dt) = (0.1, 50.0, 0.02);
    let (x0, x1) = drop(V3::new(0.3, 0.3, h), V3::new(0.3, 0.3, h));
    let mut v0 = [V3::zeros(); 4];
    let mut v1 = [V3::zeros(); 4];
    v0[0] = -speed * V3::z();
    v1[0] = speed * V3::z();
    let expected = (1.0 - (1.0 - 4.0 * h / (speed * dt)).sqrt()) / 2.0;
    let hit = vertex_face_hermite(&x0, &v0, &x1, &v1, dt).unwrap();
    assert!((hit.t - expected).abs() < 1e-12, "{hit:?} vs {expected}");
    assert!((hit.normal - V3::z()).norm() < 1e-12);
    assert_eq!(vertex_face_exact(&x0, &x1, 1e-3), None);
    // Too slow to dip through: no contact.
    v0[0] = -15.0 * V3::z();
    v1[0] = 15.0 * V3::z();
    assert_eq!(vertex_face_hermite(&x0, &v0, &x1, &v1, dt), None);
}

#[test]
fn hermite_edge_edge_needs_the_tets_on_opposite_sides() {
    // Eq. 31: with p and q on the same side of the contact the indicator signs are mixed.
    let x0 = [
        V3::new(-1.0, 0.0, 1.0),
        V3::new(1.0, 0.0, 1.0),
        V3::new(0.2, -1.0, 0.0),
        V3::new(0.2, 1.0, 0.0),
        V3::new(0.0, 0.0, 2.0),
        V3::new(0.2, 0.0, 1.0),
    ];
    let mut x1 = x0;
    for p in x1.iter_mut().take(2) {
        *p -= 2.0 * V3::z();
    }
    x1[4] -= 2.0 * V3::z();
    let v = linear_velocity(&x0, &x1, 1.0);
    assert_eq!(edge_edge_hermite(&x0, &v, &x1, &v, 1.0), None);
    let x04: [V3; 4] = std::array::from_fn(|k| x0[k]);
    let x14: [V3; 4] = std::array::from_fn(|k| x1[k]);
    assert!((edge_edge_exact(&x04, &x14, 0.0).unwrap().t - 0.5).abs() < 1e-15);
    // q below edge b: a contact at t = 0.5.
    let (mut y0, mut y1) = (x0, x1);
    y0[5] = V3::new(0.2, 0.0, -1.0);
    y1[5] = y0[5];
    let v = linear_velocity(&y0, &y1, 1.0);
    assert!((edge_edge_hermite(&y0, &v, &y1, &v, 1.0).unwrap().t - 0.5).abs() < 1e-15);
}

#[test]
fn coplanar_throughout_motion() {
    // A vertex sliding in the triangle's plane, reaching the edge x = 0 at s = 0.5.
    let eta = 1e-3;
    let (x0, x1) = drop(V3::new(-1.0, 0.25, 0.0), V3::new(1.0, 0.25, 0.0));
    let hit = vertex_face_exact(&x0, &x1, eta).unwrap();
    let expected = 0.5 - eta / 2.0;
    assert!((hit.t - expected).abs() < 1e-9, "{hit:?}");
    assert!(
        (hit.normal.z.abs() - 1.0).abs() < 1e-12,
        "the face normal: {hit:?}"
    );
    let v = linear_velocity(&x0, &x1, 1.0);
    // The Hermite test samples the inside test over a span where g3 ≡ 0: a coarser time.
    let hit = vertex_face_hermite(&x0, &v, &x1, &v, 1.0).unwrap();
    assert!(hit.t >= 0.5 - 1e-12 && hit.t <= 0.5 + 1.0 / 16.0, "{hit:?}");
    // Parallel edges in one plane sliding into each other (b from y = 0.5 to y = −0.5).
    let x0 = [
        V3::zeros(),
        V3::x(),
        V3::new(0.5, 0.5, 0.0),
        V3::new(1.5, 0.5, 0.0),
    ];
    let x1 = [
        x0[0],
        x0[1],
        V3::new(0.5, -0.5, 0.0),
        V3::new(1.5, -0.5, 0.0),
    ];
    let hit = edge_edge_exact(&x0, &x1, eta).unwrap();
    assert!((hit.t - (0.5 - eta)).abs() < 1e-9, "{hit:?}");
    assert!((hit.normal + V3::y()).norm() < 1e-9, "{hit:?}");
    assert!(
        (hit.w[1] - 0.75).abs() < 1e-9 && (hit.w[3] + 0.25).abs() < 1e-9,
        "{hit:?}"
    );
}

#[test]
fn start_in_plane_is_reported_at_zero_and_end_in_plane_at_one() {
    let (x0, x1) = drop(V3::new(0.2, 0.2, 0.0), V3::new(0.2, 0.2, -0.5));
    let hit = vertex_face_exact(&x0, &x1, 0.0).unwrap();
    assert_eq!(hit.t, 0.0);
    assert!(
        (hit.normal - V3::z()).norm() < 1e-15,
        "against the motion: {hit:?}"
    );
    let v = linear_velocity(&x0, &x1, 1.0);
    assert_eq!(vertex_face_hermite(&x0, &v, &x1, &v, 1.0).unwrap().t, 0.0);
    let (x0, x1) = drop(V3::new(0.2, 0.2, 0.5), V3::new(0.2, 0.2, 0.0));
    assert_eq!(vertex_face_exact(&x0, &x1, 0.0).unwrap().t, 1.0);
    let v = linear_velocity(&x0, &x1, 1.0);
    assert_eq!(vertex_face_hermite(&x0, &v, &x1, &v, 1.0).unwrap().t, 1.0);
    // Within eta at the start, but not coplanar during the step: not a contact.
    let (x0, x1) = drop(V3::new(0.2, 0.2, 1e-4), V3::new(0.2, 0.2, 0.5));
    assert_eq!(vertex_face_exact(&x0, &x1, 1e-3), None);
}

#[test]
fn closest_points_match_brute_force_sampling() {
    let mut rng = Rng(5);
    let mut worst = f64::NEG_INFINITY;
    for i in 0..60 {
        let (a, b, c) = (rng.vec3(), rng.vec3(), rng.vec3());
        let p = if i % 3 == 0 {
            0.3 * rng.vec3() + (a + b + c) / 3.0
        } else {
            2.0 * rng.vec3()
        };
        let (d, w) = point_triangle(&p, &a, &b, &c);
        assert!(w.iter().all(|&wi| wi >= 0.0) && (w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!(((w[0] * a + w[1] * b + w[2] * c - p).norm() - d).abs() < 1e-12);
        let m = 300;
        let mut brute = f64::INFINITY;
        for j in 0..=m {
            for k in 0..=(m - j) {
                let (u, v) = (j as f64 / m as f64, k as f64 / m as f64);
                brute = brute.min((a + u * (b - a) + v * (c - a) - p).norm());
            }
        }
        let grid = ((b - a).norm() + (c - a).norm()) / m as f64;
        assert!(
            d <= brute + 1e-12 && brute <= d + grid,
            "triangle {i}: {d} vs {brute}"
        );
        worst = worst.max(d - brute);
    }
    for i in 0..60 {
        let (p0, p1, q0) = (rng.vec3(), rng.vec3(), rng.vec3());
        let q1 = match i % 3 {
            0 => q0 + (p1 - p0) * rng.range(-1.5, 1.5), // parallel
            1 => q0 + (p1 - p0) * rng.range(0.5, 1.5) + 1e-9 * rng.vec3(), // nearly
            _ => rng.vec3(),
        };
        let (d, s, u) = segment_segment(&p0, &p1, &q0, &q1);
        assert!((0.0..=1.0).contains(&s) && (0.0..=1.0).contains(&u));
        assert!((((p0 + s * (p1 - p0)) - (q0 + u * (q1 - q0))).norm() - d).abs() < 1e-12);
        let m = 400;
        let mut brute = f64::INFINITY;
        for j in 0..=m {
            let x = p0 + (j as f64 / m as f64) * (p1 - p0);
            for k in 0..=m {
                brute = brute.min((x - (q0 + (k as f64 / m as f64) * (q1 - q0))).norm());
            }
        }
        let grid = ((p1 - p0).norm() + (q1 - q0).norm()) / m as f64;
        assert!(
            d <= brute + 1e-12 && brute <= d + grid,
            "segments {i}: {d} vs {brute}"
        );
        worst = worst.max(d - brute);
    }
    println!("closest points: max (computed − brute-force) distance {worst:.1e} (≤ 0: never worse than sampling)");
}

#[test]
fn bad_input_gives_none_and_degenerate_input_does_not_panic() {
    let (x0, x1) = drop(V3::new(0.2, 0.3, 1.0), V3::new(0.2, 0.3, -1.0));
    let v = linear_velocity(&x0, &x1, 1.0);
    let mut nan = x0;
    nan[2].y = f64::NAN;
    assert_eq!(vertex_face_exact(&nan, &x1, 0.0), None);
    assert_eq!(vertex_face_hermite(&nan, &v, &x1, &v, 1.0), None);
    assert_eq!(vertex_face_hermite(&x0, &v, &x1, &v, -1.0), None);
    assert_eq!(vertex_face_hermite(&x0, &v, &x1, &v, f64::INFINITY), None);
    // A negative or NaN eta counts as zero.
    assert_eq!(vertex_face_exact(&x0, &x1, -1.0).map(|h| h.t), Some(0.5));
    assert_eq!(
        vertex_face_exact(&x0, &x1, f64::NAN).map(|h| h.t),
        Some(0.5)
    );
    // Collapsed triangle, all points in one place: answers, but no panic.
    let line = [V3::new(0.5, 0.0, 1.0), V3::zeros(), V3::x(), 2.0 * V3::x()];
    let line1 = [V3::new(0.5, 0.0, -1.0), line[1], line[2], line[3]];
    let hit = vertex_face_exact(&line, &line1, 1e-6).expect("passes through the segment");
    assert!((hit.t - 0.5).abs() < 1e-6 && (hit.normal.norm() - 1.0).abs() < 1e-12);
    let z = [V3::zeros(); 4];
    let _ = vertex_face_exact(&z, &z, 0.0);
    let _ = edge_edge_exact(&z, &z, 0.0);
    let z6 = [V3::zeros(); 6];
    let _ = vertex_face_hermite(&z, &z, &z, &z, 1.0);
    let _ = edge_edge_hermite(&z6, &z6, &z6, &z6, 1.0);
}

#[test]
fn narrow_phase_allocates_nothing() {
    let mut rng = Rng(3);
    let vf = vertex_face_case(&mut rng, true);
    let ee = edge_edge_case(&mut rng, false);
    let v4 = linear_velocity(&vf.x0, &vf.x1, 0.01);
    let v6 = linear_velocity(&ee.x0, &ee.x1, 0.01);
    let ee0: [V3; 4] = std::array::from_fn(|k| ee.x0[k]);
    let ee1: [V3; 4] = std::array::from_fn(|k| ee.x1[k]);
    let parallel0 = [
        V3::zeros(),
        V3::x(),
        V3::new(0.0, 0.5, 0.0),
        V3::new(1.0, 0.5, 0.0),
    ];
    let parallel1 = [
        V3::zeros(),
        V3::x(),
        V3::new(0.0, -0.5, 0.0),
        V3::new(1.0, -0.5, 0.0),
    ];
    let before = common::allocations();
    let mut found = 0;
    for _ in 0..10 {
        found += usize::from(vertex_face_exact(&vf.x0, &vf.x1, 1e-6).is_some());
        found += usize::from(vertex_face_hermite(&vf.x0, &v4, &vf.x1, &v4, 0.01).is_some());
        found += usize::from(edge_edge_exact(&ee0, &ee1, 1e-6).is_some());
        found += usize::from(edge_edge_hermite(&ee.x0, &v6, &ee.x1, &v6, 0.01).is_some());
        found += usize::from(edge_edge_exact(&parallel0, &parallel1, 1e-6).is_some());
    }
    assert_eq!(common::allocations() - before, 0);
    assert!(found >= 40);
}

/// A tilting triangle and a moving vertex with gap `−((s − 0.4)² + lift)` below the plane
/// (the triangle `(−1,−1) (2,−1) (−1,2)` in xy, the vertex at `(0, s − 0.5, 0)`; the
/// heights of the triangle's corners are linear in s and chosen so the gap is that
/// quadratic): a double root at s = 0.4 for `lift = 0`.
fn graze(lift: f64) -> ([V3; 4], [V3; 4]) {
    let z1 = |s: f64| 0.16 + lift - 1.3 * s;
    let z3 = |s: f64| z1(s) + 3.0 * s;
    let at = |s: f64| {
        [
            V3::new(0.0, s - 0.5, 0.0),
            V3::new(-1.0, -1.0, z1(s)),
            V3::new(2.0, -1.0, z1(s)),
            V3::new(-1.0, 2.0, z3(s)),
        ]
    };
    (at(0.0), at(1.0))
}

#[test]
fn grazing_contacts_near_double_roots() {
    // Check the construction independently: the gap is the quadratic.
    let (x0, x1) = graze(0.0);
    for i in 0..=10 {
        let s = i as f64 / 10.0;
        let p = lerp(&x0, &x1, s);
        let n = (p[2] - p[1]).cross(&(p[3] - p[1])).normalize();
        let height = n.dot(&(p[0] - p[1])) / n.z; // vertical gap to the plane
        assert!(
            (height + (s - 0.4) * (s - 0.4)).abs() < 1e-12,
            "{s}: {height}"
        );
    }
    let hermite = |x0: &[V3; 4], x1: &[V3; 4]| {
        let v = linear_velocity(x0, x1, 1.0);
        vertex_face_hermite(x0, &v, x1, &v, 1.0)
    };
    // Touching: found at the double root, to the √ε accuracy a double root allows.
    let exact = vertex_face_exact(&x0, &x1, 0.0).expect("touch");
    let herm = hermite(&x0, &x1).expect("touch");
    assert!(
        (exact.t - 0.4).abs() < 1e-6 && (herm.t - 0.4).abs() < 1e-6,
        "{exact:?} {herm:?}"
    );
    println!(
        "touch: exact t − 0.4 = {:.1e}, Hermite t − 0.4 = {:.1e}",
        exact.t - 0.4,
        herm.t - 0.4
    );
    // Dipping 10⁻⁶ through: the first of two close roots, 0.4 − 10⁻³.
    let (x0, x1) = graze(-1e-6);
    let exact = vertex_face_exact(&x0, &x1, 0.0).expect("dip");
    let herm = hermite(&x0, &x1).expect("dip");
    assert!(
        (exact.t - 0.399).abs() < 1e-9 && (herm.t - 0.399).abs() < 1e-9,
        "{exact:?} {herm:?}"
    );
    assert!(exact.normal.z < -0.9, "starts below the plane: {exact:?}");
    // Missing by 10⁻⁶: never coplanar, no contact (even with eta > 10⁻⁶).
    let (x0, x1) = graze(1e-6);
    assert_eq!(vertex_face_exact(&x0, &x1, 1e-3), None);
    assert_eq!(hermite(&x0, &x1), None);
}
