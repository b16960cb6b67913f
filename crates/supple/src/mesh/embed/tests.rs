//! Embedded points against brute force and exact deformations.

use super::*;
use crate::mesh::{box_grid, BoxGrid, TetSplit};

/// A small deterministic generator (xorshift64*): values in [0, 1).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }

    fn vector(&mut self) -> Vector3<f64> {
        Vector3::new(self.next(), self.next(), self.next())
    }

    /// Random barycentric coordinates (all positive, summing to 1).
    fn barycentric(&mut self) -> [f64; 4] {
        let w = [
            0.05 + self.next(),
            0.05 + self.next(),
            0.05 + self.next(),
            0.05 + self.next(),
        ];
        let s: f64 = w.iter().sum();
        w.map(|v| v / s)
    }
}

/// A 4×3×3-cell box (1.0 × 0.75 × 0.75) with its inner vertices jittered, so tets are not
/// aligned with the grid.
fn jittered_box(split: TetSplit) -> TetMesh {
    let mut m = box_grid(&BoxGrid {
        cells: [4, 3, 3],
        cell_size: Vector3::repeat(0.25),
        origin: Vector3::new(-0.3, 0.1, 0.2),
        split,
    });
    let (lo, hi) = m.bounding_box();
    let mut rng = Rng(7);
    for p in &mut m.positions {
        let inner = (0..3).all(|a| p[a] > lo[a] + 1e-9 && p[a] < hi[a] - 1e-9);
        if inner {
            *p += (rng.vector() - Vector3::repeat(0.5)) * 0.08;
        }
    }
    m.validate().unwrap();
    m
}

fn combine(p: &[Vector3<f64>; 4], w: &[f64; 4]) -> Vector3<f64> {
    p[0] * w[0] + p[1] * w[1] + p[2] * w[2] + p[3] * w[3]
}

/// Points on every vertex, on edges, on faces and inside tets of `m`.
fn points_on(m: &TetMesh, rng: &mut Rng) -> Vec<Vector3<f64>> {
    let mut pts = m.positions.clone();
    for t in 0..m.n_tets() {
        let p = m.tet_positions(t);
        let s = rng.next();
        pts.push(p[0] * s + p[3] * (1.0 - s));
        let w = rng.barycentric();
        let face = (w[0] + w[1] + w[2], [w[0], w[1], w[2]]);
        pts.push((p[0] * face.1[0] + p[1] * face.1[1] + p[2] * face.1[2]) / face.0);
        pts.push(combine(&p, &w));
    }
    pts
}

fn assert_close(a: &Vector3<f64>, b: &Vector3<f64>, tol: f64, what: &str) {
    assert!(
        (a - b).norm() <= tol,
        "{what}: {a:?} vs {b:?} ({:e})",
        (a - b).norm()
    );
}

#[test]
fn embedded_points_reproduce_the_rest_positions() {
    for split in [TetSplit::Five, TetSplit::Six] {
        let m = jittered_box(split);
        let pts = points_on(&m, &mut Rng(11));
        let e = Embedding::new(&m, &pts).unwrap();
        assert_eq!(e.outside(), (0, 0.0));
        let mut out = vec![Vector3::zeros(); pts.len()];
        e.positions(&m.positions, &mut out).unwrap();
        for (k, (o, p)) in out.iter().zip(&pts).enumerate() {
            assert_close(o, p, 1e-14, &format!("point {k}"));
            let w = e.weights(k);
            assert!(
                w.iter()
                    .all(|&l| (-INSIDE_TOLERANCE..=1.0 + INSIDE_TOLERANCE).contains(&l)),
                "{w:?}"
            );
            assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-14);
        }
        // A vertex reproduces itself with one weight 1 (to rounding).
        assert!(e.weights(5).iter().any(|&l| (l - 1.0).abs() < 1e-12));
    }
}

#[test]
fn affine_deformations_are_reproduced_exactly() {
    let m = jittered_box(TetSplit::Five);
    let pts = points_on(&m, &mut Rng(3));
    let e = Embedding::new(&m, &pts).unwrap();
    let a = Matrix3::new(1.3, 0.2, -0.4, 0.1, 0.7, 0.3, -0.2, 0.5, 1.1);
    let b = Vector3::new(0.5, -2.0, 3.0);
    let x: Vec<_> = m.positions.iter().map(|p| a * p + b).collect();
    let mut out = vec![Vector3::zeros(); pts.len()];
    e.positions(&x, &mut out).unwrap();
    for (k, (o, p)) in out.iter().zip(&pts).enumerate() {
        assert_close(o, &(a * p + b), 1e-12, &format!("point {k}"));
    }
}

#[test]
fn points_keep_their_barycentrics_under_any_deformation() {
    let m = jittered_box(TetSplit::Six);
    let mut rng = Rng(5);
    let pts = points_on(&m, &mut rng);
    let e = Embedding::new(&m, &pts).unwrap();
    // A nonlinear deformation: every vertex moved independently.
    let x: Vec<_> = m
        .positions
        .iter()
        .map(|p| {
            p + (rng.vector() - Vector3::repeat(0.5)) * 0.05 + Vector3::new(0.0, p.x * p.x, 0.0)
        })
        .collect();
    let mut out = vec![Vector3::zeros(); pts.len()];
    e.positions(&x, &mut out).unwrap();
    for (k, o) in out.iter().enumerate() {
        let t = e.tet(k);
        let deformed = RestTet::new(&m.tets[t].map(|i| x[i as usize]));
        let l = deformed.barycentric(o);
        let w = e.weights(k);
        for i in 0..4 {
            assert!((l[i] - w[i]).abs() < 1e-10, "point {k}: {l:?} vs {w:?}");
        }
    }
}

#[test]
fn the_containing_tet_is_found_for_random_points() {
    let m = jittered_box(TetSplit::Five);
    let (lo, hi) = m.bounding_box();
    let mut rng = Rng(17);
    let pts: Vec<_> = (0..2000)
        .map(|_| lo + (hi - lo).component_mul(&rng.vector()))
        .collect();
    let e = Embedding::new(&m, &pts).unwrap();
    for (k, p) in pts.iter().enumerate() {
        let l = RestTet::new(&m.tet_positions(e.tet(k))).barycentric(p);
        assert!(
            l.iter().all(|&v| v >= -INSIDE_TOLERANCE),
            "point {k}: {l:?}"
        );
        assert_eq!(e.distance(k), 0.0);
        // Brute force: some tet contains it, so none is missed.
        assert!((0..m.n_tets()).any(|t| RestTet::new(&m.tet_positions(t))
            .barycentric(p)
            .iter()
            .all(|&v| v >= -1e-9)));
    }
}

#[test]
fn points_outside_get_the_nearest_tet() {
    let m = jittered_box(TetSplit::Five);
    let (lo, hi) = m.bounding_box();
    let c = (lo + hi) / 2.0;
    let mut rng = Rng(23);
    // Points around the box, from just outside to a box size away.
    let pts: Vec<_> = (0..300)
        .map(|k| {
            let dir = (rng.vector() - Vector3::repeat(0.5)).normalize();
            let scale = if k % 3 == 0 {
                0.52
            } else {
                0.6 + 1.5 * rng.next()
            };
            c + dir.component_mul(&(hi - lo)) * scale * 1.8
        })
        .filter(|p| (0..3).any(|a| p[a] < lo[a] || p[a] > hi[a]))
        .collect();
    assert!(pts.len() > 200);
    let e = Embedding::new(&m, &pts).unwrap();
    let rest: Vec<_> = (0..m.n_tets())
        .map(|t| RestTet::new(&m.tet_positions(t)))
        .collect();
    let (outside, max) = e.outside();
    assert_eq!(outside, pts.len());
    assert!(max > 0.5);
    let mut out = vec![Vector3::zeros(); pts.len()];
    e.positions(&m.positions, &mut out).unwrap();
    for (k, p) in pts.iter().enumerate() {
        let brute = rest
            .iter()
            .map(|r| r.distance(p))
            .fold(f64::INFINITY, f64::min);
        assert!(brute > 0.0);
        assert_eq!(e.distance(k), brute, "point {k}");
        assert_eq!(rest[e.tet(k)].distance(p), brute);
        let w = e.weights(k);
        assert!(w.iter().any(|&l| l < 0.0), "{w:?}");
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        // Even outside, the rest position is reproduced (the tet's affine map extended).
        assert_close(&out[k], p, 1e-12, &format!("point {k}"));
    }
}

#[test]
fn closest_point_on_a_triangle_matches_sampling() {
    let (a, b, c) = (
        Vector3::new(0.0, 0.0, 0.0),
        Vector3::new(1.0, 0.2, 0.0),
        Vector3::new(0.3, 0.9, 0.4),
    );
    let mut rng = Rng(29);
    for _ in 0..200 {
        let p = (rng.vector() - Vector3::repeat(0.3)) * 3.0;
        let q = closest_on_triangle(&p, &a, &b, &c).0;
        let d = (q - p).norm();
        let n = 60;
        for i in 0..=n {
            for j in 0..=n - i {
                let (u, v) = (i as f64 / n as f64, j as f64 / n as f64);
                let s = a + (b - a) * u + (c - a) * v;
                assert!((s - p).norm() >= d - 1e-12, "{p:?}");
            }
        }
    }
}

#[test]
fn refusals_are_values() {
    let empty = TetMesh {
        positions: Vec::new(),
        tets: Vec::new(),
    };
    assert_eq!(
        Embedding::new(&empty, &[Vector3::zeros()]).unwrap_err(),
        EmbedError::Mesh(MeshError::NoVertices)
    );
    let m = jittered_box(TetSplit::Five);
    let pts = [
        Vector3::zeros(),
        Vector3::x(),
        Vector3::new(0.0, f64::NAN, 0.0),
    ];
    let err = Embedding::new(&m, &pts).unwrap_err();
    assert_eq!(err, EmbedError::NonFinitePoint { point: 2 });
    assert_eq!(err.to_string(), "point 2 has a non-finite coordinate");
    let e = Embedding::new(&m, &pts[..2]).unwrap();
    let mut out = vec![Vector3::zeros(); 3];
    assert!(matches!(
        e.positions(&m.positions, &mut out),
        Err(EmbedError::Length {
            points: 2,
            got_out: 3,
            ..
        })
    ));
    assert!(e.positions(&m.positions[1..], &mut out[..2]).is_err());
    let none = Embedding::new(&m, &[]).unwrap();
    assert!(none.is_empty());
    none.positions(&m.positions, &mut []).unwrap();
}

#[test]
fn the_same_bits_on_one_and_two_threads() {
    let m = jittered_box(TetSplit::Six);
    let (lo, hi) = m.bounding_box();
    let mut rng = Rng(31);
    let pts: Vec<_> = (0..3 * CHUNK + 17)
        .map(|_| {
            lo - Vector3::repeat(0.1)
                + (hi - lo + Vector3::repeat(0.2)).component_mul(&rng.vector())
        })
        .collect();
    let x: Vec<_> = m
        .positions
        .iter()
        .map(|p| p + Vector3::new(p.y * 0.3, 0.0, p.x * p.z))
        .collect();
    let run = |threads: usize| {
        crate::linalg::test_support::on_threads(threads, || {
            let e = Embedding::new(&m, &pts).unwrap();
            let mut out = vec![Vector3::zeros(); pts.len()];
            e.positions(&x, &mut out).unwrap();
            (e, out)
        })
    };
    let (e1, o1) = run(1);
    let (e2, o2) = run(2);
    assert_eq!(e1, e2);
    assert!(o1.iter().zip(&o2).all(|(a, b)| a
        .iter()
        .zip(b.iter())
        .all(|(p, q)| p.to_bits() == q.to_bits())));
}
