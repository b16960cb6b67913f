//! Stuffing spheres and tori, analytic and as triangle surfaces.
//!
//! Angle bounds checked on the sphere and torus tests: every dihedral angle in [10.7°, 164.9°].
//! The paper (Labelle & Shewchuk 2007, abstract and §4) states [10.7°, 164.8°], rounded to
//! 0.1°, for exact cut points; ours are found by regula falsi to ~1e-13 of the edge length, and
//! the upper bound is given 0.1° of room for the rounding of the paper's figure. Random
//! placements of thin tori (tube radius 1.3–5 spacings) are checked against the weaker envelope
//! we measured, [9.9°, 164.9°] (`random_tori_stay_within_the_measured_envelope`).

use super::*;
use crate::mesh::boundary_faces;
use std::f64::consts::PI;

const MIN_DEG: f64 = 10.7;
const MAX_DEG: f64 = 164.9;

/// Checks what every stuffed mesh must satisfy and returns it.
fn check(domain: &dyn ImplicitDomain, h: f64) -> Stuffed {
    let out = stuff(domain, &StuffingParams::new(h)).unwrap();
    out.mesh.validate().unwrap();
    let s = out.stats;
    assert!(
        s.min_dihedral_deg >= MIN_DEG && s.max_dihedral_deg <= MAX_DEG,
        "h = {h}: dihedral angles {:.3}°–{:.3}°",
        s.min_dihedral_deg,
        s.max_dihedral_deg
    );
    // Conformity: the boundary is a closed 2-manifold (each edge in exactly two boundary
    // triangles) enclosing exactly the tets' volume — no overlaps, no gaps, no hanging faces.
    let faces = boundary_faces(&out.mesh.tets);
    let mut edges: Vec<(u32, u32)> = faces
        .iter()
        .flat_map(|f| [(f[0], f[1]), (f[1], f[2]), (f[2], f[0])])
        .collect();
    for e in &mut edges {
        *e = (e.0.min(e.1), e.0.max(e.1));
    }
    edges.sort_unstable();
    for run in edges.chunk_by(|a, b| a == b) {
        assert_eq!(run.len(), 2, "h = {h}: boundary edge {:?}", run[0]);
    }
    let p = &out.mesh.positions;
    let enclosed: f64 = faces
        .iter()
        .map(|f| {
            let [a, b, c] = f.map(|i| p[i as usize]);
            a.dot(&b.cross(&c)) / 6.0
        })
        .sum();
    let v = out.mesh.volume();
    assert!((enclosed - v).abs() < 1e-10 * v, "{enclosed} vs {v}");
    out
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b
}

#[test]
fn sphere_meshes_have_bounded_angles_and_converge_in_volume() {
    let sphere = Sphere {
        center: Vector3::new(0.013, -0.021, 0.007),
        radius: 1.0,
    };
    let exact = 4.0 / 3.0 * PI;
    let mut last = f64::INFINITY;
    for h in [0.4, 0.2, 0.1] {
        let out = check(&sphere, h);
        let e = rel(out.mesh.volume(), exact);
        // Tolerance: the inscribed polyhedron loses O(h²/R) of the volume; 1.5 h² at R = 1.
        assert!(e < 1.5 * h * h, "h = {h}: volume error {e}");
        assert!(e < last, "h = {h}: the volume error must fall with h");
        last = e;
        assert!(out.stats.warped_vertices > 0 && out.stats.cut_points > 0);
        // Every vertex on or inside the sphere (up to the root finder's tolerance).
        for q in &out.mesh.positions {
            assert!(sphere.eval(q, 1.0) < 1e-9, "{q:?}");
        }
    }
    assert!(last < 0.005);
}

#[test]
fn torus_meshes_have_bounded_angles_and_volume() {
    let torus = Torus {
        center: Vector3::new(0.0, 0.011, -0.017),
        major: 1.0,
        minor: 0.35,
    };
    let exact = 2.0 * PI * PI * 1.0 * 0.35 * 0.35;
    for (h, tol) in [(0.12, 0.04), (0.06, 0.012)] {
        let out = check(&torus, h);
        let e = rel(out.mesh.volume(), exact);
        assert!(e < tol, "h = {h}: volume error {e}");
    }
}

#[test]
fn many_placements_exercise_every_stencil_within_the_bounds() {
    // Spheres of assorted radii at assorted offsets from the lattice, small enough against h
    // that every sign pattern and warp occurs; the angle bounds must hold for every one.
    let mut seed = 0x5eed_u64;
    let mut rnd = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    for _ in 0..60 {
        let sphere = Sphere {
            center: Vector3::new(rnd(), rnd(), rnd()),
            radius: 0.6 + 2.0 * rnd(),
        };
        check(&sphere, 0.5);
    }
    for _ in 0..20 {
        let torus = Torus {
            center: Vector3::new(rnd(), rnd(), rnd()),
            major: 1.0 + rnd(),
            minor: 0.3 + 0.4 * rnd(),
        };
        check(&torus, 0.3);
    }
}

/// A latitude–longitude sphere, outward triangles.
fn sphere_surface(r: f64, n_lat: usize, n_lon: usize) -> TriangleSurface {
    let mut v = vec![Vector3::new(0.0, 0.0, r)];
    for i in 1..n_lat {
        let th = PI * i as f64 / n_lat as f64;
        for j in 0..n_lon {
            let ph = 2.0 * PI * j as f64 / n_lon as f64;
            v.push(r * Vector3::new(th.sin() * ph.cos(), th.sin() * ph.sin(), th.cos()));
        }
    }
    v.push(Vector3::new(0.0, 0.0, -r));
    let south = (v.len() - 1) as u32;
    let at = |i: usize, j: usize| (1 + (i - 1) * n_lon + j % n_lon) as u32;
    let mut t = Vec::new();
    for j in 0..n_lon {
        t.push([0, at(1, j), at(1, j + 1)]);
        t.push([south, at(n_lat - 1, j + 1), at(n_lat - 1, j)]);
        for i in 1..n_lat - 1 {
            t.push([at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
            t.push([at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
        }
    }
    TriangleSurface::new(&v, &t).unwrap()
}

/// A torus around z, `n_u` × `n_v` quads split in two, outward.
fn torus_surface(big: f64, small: f64, n_u: usize, n_v: usize) -> TriangleSurface {
    let mut v = Vec::new();
    for i in 0..n_u {
        let u = 2.0 * PI * i as f64 / n_u as f64;
        for j in 0..n_v {
            let w = 2.0 * PI * j as f64 / n_v as f64;
            let rr = big + small * w.cos();
            v.push(Vector3::new(rr * u.cos(), rr * u.sin(), small * w.sin()));
        }
    }
    let at = |i: usize, j: usize| ((i % n_u) * n_v + j % n_v) as u32;
    let mut t = Vec::new();
    for i in 0..n_u {
        for j in 0..n_v {
            t.push([at(i, j), at(i + 1, j), at(i + 1, j + 1)]);
            t.push([at(i, j), at(i + 1, j + 1), at(i, j + 1)]);
        }
    }
    TriangleSurface::new(&v, &t).unwrap()
}

#[test]
fn triangle_sphere_and_torus_match_their_surfaces() {
    let s = sphere_surface(1.0, 32, 64);
    assert_eq!(s.open_edges(), 0);
    let out = check(&s, 0.1);
    let e = rel(out.mesh.volume(), s.volume());
    assert!(e < 0.015, "sphere: volume error {e}");

    let t = torus_surface(1.0, 0.35, 96, 32);
    assert_eq!(t.open_edges(), 0);
    let out = check(&t, 0.06);
    let e = rel(out.mesh.volume(), t.volume());
    assert!(e < 0.012, "torus: volume error {e}");
}

#[test]
fn triangle_surface_and_analytic_sphere_agree() {
    // The same lattice over a finely triangulated sphere and the exact one: same tet count
    // within a few per cent (the polyhedron is slightly inside the sphere).
    let tri = stuff(&sphere_surface(1.0, 64, 128), &StuffingParams::new(0.2)).unwrap();
    let exact = stuff(
        &Sphere {
            center: Vector3::zeros(),
            radius: 1.0,
        },
        &StuffingParams::new(0.2),
    )
    .unwrap();
    let (a, b) = (tri.mesh.n_tets() as f64, exact.mesh.n_tets() as f64);
    assert!(rel(a, b) < 0.03, "{a} vs {b} tets");
    assert!(rel(tri.mesh.volume(), exact.mesh.volume()) < 0.01);
}

#[test]
fn output_is_deterministic_across_runs_and_thread_counts() {
    let t = torus_surface(1.0, 0.35, 48, 16);
    let run = |threads: usize| {
        crate::linalg::test_support::on_threads(threads, || {
            stuff(&t, &StuffingParams::new(0.1)).unwrap().mesh
        })
    };
    let one = run(1);
    assert_eq!(one, run(2));
    assert_eq!(one, run(2));
}

#[test]
fn bad_settings_are_refused() {
    let s = Sphere {
        center: Vector3::zeros(),
        radius: 1.0,
    };
    for h in [0.0, -1.0, f64::NAN, f64::INFINITY] {
        assert!(matches!(
            stuff(&s, &StuffingParams::new(h)),
            Err(StuffingError::BadSpacing(_))
        ));
    }
    let mut p = StuffingParams::new(0.5);
    p.alpha_long = 0.5;
    assert!(matches!(stuff(&s, &p), Err(StuffingError::BadAlpha { .. })));
    assert!(matches!(
        stuff(&s, &StuffingParams::new(1e-5)),
        Err(StuffingError::TooLarge { .. })
    ));
    // A sphere much smaller than the lattice: its one inside vertex (the lattice is centred
    // on the box, so a red vertex sits at the centre) is warped onto the surface; no tet.
    let tiny = Sphere {
        center: Vector3::new(0.31, 0.27, 0.23),
        radius: 1e-3,
    };
    assert_eq!(
        stuff(&tiny, &StuffingParams::new(1.0)).unwrap_err(),
        StuffingError::Empty
    );
}

/// Tori with tube radii of 1.3 to 5 spacings at random placements: the measured envelope of
/// our implementation, which is **not** the paper's everywhere. Below 10.7°: whole BCC tets
/// (`−000`) whose three warped vertices moved apart — 10.26° here, 9.99° in a sample of 150
/// tori with tube radius 0.4–0.6 at h = 0.3; see the module docs.
#[test]
fn random_tori_stay_within_the_measured_envelope() {
    let mut seed = 0x1234_u64;
    let mut rnd = || {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (seed >> 11) as f64 / (1u64 << 53) as f64
    };
    let (mut lo, mut hi) = (180.0f64, 0.0f64);
    for _ in 0..160 {
        let torus = Torus {
            center: Vector3::new(rnd(), rnd(), rnd()),
            major: 1.5 + rnd(),
            minor: 0.4 + 1.1 * rnd(),
        };
        let out = stuff(&torus, &StuffingParams::new(0.3)).unwrap();
        out.mesh.validate().unwrap();
        lo = lo.min(out.stats.min_dihedral_deg);
        hi = hi.max(out.stats.max_dihedral_deg);
    }
    eprintln!("random tori at h = 0.3: dihedral angles {lo:.3}°–{hi:.3}°");
    assert!(lo >= 9.9 && hi <= MAX_DEG, "{lo}°–{hi}°");
}

/// A 12-triangle cube of side `side` (the unit cube scaled).
fn cube_of_side(side: f64) -> TriangleSurface {
    let (v, t) = super::surface::tests::cube();
    let v: Vec<_> = v.into_iter().map(|p| p * side).collect();
    TriangleSurface::new(&v, &t).unwrap()
}

/// Issue 45 item 5: a cube of side 1e155 once panicked in regula falsi (`min > max, or either
/// was NaN`: squared distances overflowed to ∞ and `∞/∞` made `t` NaN). Coordinates past
/// [`MAX_COORDINATE`] are refused, from the surface's side or from the spacing's.
#[test]
fn huge_coordinates_are_refused_not_panicked_on() {
    for (side, h) in [(1e155, 3e154), (1e155, 1e154), (1e200, 3e199), (1.0, 1e299)] {
        let err = stuff(&cube_of_side(side), &StuffingParams::new(h)).unwrap_err();
        assert!(
            matches!(err, StuffingError::OutOfRange { extent, .. } if extent > MAX_COORDINATE),
            "side {side}, h {h}: {err}"
        );
        assert!(err.to_string().contains("at most 1e100"), "{err}");
    }
    // Just inside the bound, the same cube stuffs (to a valid mesh of the expected volume).
    let out = stuff(&cube_of_side(1e99), &StuffingParams::new(2.5e98)).unwrap();
    out.mesh.validate().unwrap();
    assert!(rel(out.mesh.volume(), 1e297) < 0.5, "{}", out.mesh.volume());
}

/// A domain whose function is NaN or infinite somewhere is refused, naming the point.
#[test]
fn non_finite_domain_values_are_refused_with_the_point() {
    struct Bad(f64);
    impl ImplicitDomain for Bad {
        fn bounds(&self) -> (Vector3<f64>, Vector3<f64>) {
            (Vector3::repeat(-1.0), Vector3::repeat(1.0))
        }
        fn eval(&self, p: &Vector3<f64>, _limit: f64) -> f64 {
            let f = p.norm() - 0.7;
            // Not finite inside the ball of radius 0.7 (NaN: caught at the lattice's signs;
            // -inf: a valid sign, caught by the cut point search), finite outside.
            if f < 0.0 {
                self.0
            } else {
                f
            }
        }
    }
    for (value, shown) in [(f64::NAN, "NaN"), (f64::NEG_INFINITY, "-inf")] {
        let err = stuff(&Bad(value), &StuffingParams::new(0.5)).unwrap_err();
        assert!(
            matches!(err, StuffingError::NonFinite { point, .. }
                if Vector3::from(point).norm() < 0.7),
            "{err}"
        );
        assert!(err.to_string().contains(shown), "{err}");
    }
}
