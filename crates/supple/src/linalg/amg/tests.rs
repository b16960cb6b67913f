use super::*;
use crate::linalg::cg::{conjugate_gradient, CgWorkspace};
use crate::linalg::test_support::{bar_mesh, bar_system, random_vectors};
use crate::linalg::{PcgSettings, Preconditioner};

/// The bar system of `cells` with its clamped end (x = 0) fixed, and an AMG built for it.
fn setup(cells: [usize; 3], settings: AmgSettings) -> (BlockCsr, Vec<bool>, Amg) {
    let (a, _) = bar_system(cells);
    let mesh = bar_mesh(cells);
    let fixed: Vec<bool> = mesh.positions.iter().map(|p| p.x == 0.0).collect();
    let mut amg = Amg::new(settings, &a.pattern, Some(&mesh.positions));
    amg.prepare(&a, &fixed, true);
    (a, fixed, amg)
}

/// CG to a relative residual of 1e-10 preconditioned by `amg` on `b` (random, seed 7), from
/// zero: the solution and the solve's report.
fn amg_solve(
    a: &BlockCsr,
    fixed: &[bool],
    amg: &mut Amg,
    max_iterations: usize,
) -> (Vec<Vector3<f64>>, crate::linalg::cg::CgInfo) {
    let n = fixed.len();
    let b = random_vectors(n, 7, fixed);
    let pcg = PcgSettings {
        tolerance: 1e-10,
        max_iterations,
        preconditioner: Preconditioner::Amg,
    };
    let mut ws = CgWorkspace::new(n);
    let mut x = vec![Vector3::zeros(); n];
    let cg = conjugate_gradient(&mut ws, a, &b, fixed, &mut x, &pcg, amg).unwrap();
    assert!(cg.relative_residual <= 1e-10);
    (x, cg)
}

fn small_coarse() -> AmgSettings {
    AmgSettings {
        max_coarse: 100,
        ..Default::default()
    }
}

fn dot(x: &[Vector3<f64>], y: &[Vector3<f64>]) -> f64 {
    x.iter().zip(y).map(|(p, q)| p.dot(q)).sum()
}

fn apply(amg: &mut Amg, a: &BlockCsr, fixed: &[bool], r: &[Vector3<f64>]) -> Vec<Vector3<f64>> {
    let mut z = vec![Vector3::zeros(); r.len()];
    amg.apply(a, fixed, r, &mut z);
    z
}

/// `xᵀ P x > 0` on random vectors and `vᵀ P u = uᵀ P v` to round-off, with at least three
/// levels; fixed vertices get zero.
#[test]
fn the_v_cycle_is_symmetric_positive_definite() {
    let (a, fixed, mut amg) = setup([24, 6, 6], small_coarse());
    let info = amg.info();
    assert!(info.levels.len() >= 3, "{info:?}");
    let n = fixed.len();
    let vectors: Vec<_> = (0..12).map(|s| random_vectors(n, s, &fixed)).collect();
    let images: Vec<_> = vectors
        .iter()
        .map(|u| apply(&mut amg, &a, &fixed, u))
        .collect();
    for (u, pu) in vectors.iter().zip(&images) {
        assert!(dot(u, pu) > 0.0);
        for (i, z) in pu.iter().enumerate() {
            if fixed[i] {
                assert_eq!(*z, Vector3::zeros());
            }
        }
    }
    for i in 0..vectors.len() {
        for j in 0..i {
            let (vpu, upv) = (dot(&vectors[j], &images[i]), dot(&vectors[i], &images[j]));
            let scale = dot(&vectors[i], &images[i]).abs() + dot(&vectors[j], &images[j]).abs();
            assert!((vpu - upv).abs() <= 1e-10 * scale, "{vpu} vs {upv}");
        }
    }
}

/// CG with the V-cycle converges on the clamped bar to the block-Jacobi solution, in far
/// fewer iterations.
#[test]
fn cg_with_amg_converges_on_the_box_bar() {
    let (a, fixed, mut amg) = setup([32, 8, 8], AmgSettings::default());
    let n = fixed.len();
    let b = random_vectors(n, 7, &fixed);
    let settings = PcgSettings {
        tolerance: 1e-10,
        max_iterations: 2000,
        preconditioner: Preconditioner::Amg,
    };
    let mut ws = CgWorkspace::new(n);
    let mut x = vec![Vector3::zeros(); n];
    let info = conjugate_gradient(&mut ws, &a, &b, &fixed, &mut x, &settings, &mut amg).unwrap();
    let mut jacobi = BlockJacobi::new(n);
    jacobi.refresh(&a, &fixed);
    let mut xj = vec![Vector3::zeros(); n];
    let ij = conjugate_gradient(&mut ws, &a, &b, &fixed, &mut xj, &settings, &mut jacobi).unwrap();
    assert!(info.relative_residual <= 1e-10);
    assert!(
        info.iterations * 4 < ij.iterations,
        "AMG {} vs Jacobi {}",
        info.iterations,
        ij.iterations
    );
    let scale = xj.iter().map(|v| v.norm()).fold(0.0, f64::max);
    for i in 0..n {
        assert!((x[i] - xj[i]).norm() <= 1e-7 * scale, "vertex {i}");
    }
}

/// Iterations to 1e-8 from zero on the bar at three resolutions (each refinement halves the
/// cell size, 8× the tets): with AMG they grow by less than 1.5× per refinement, while block
/// Jacobi's grow by more (the reason for the multigrid).
#[test]
fn amg_iterations_stay_nearly_flat_under_refinement() {
    let mut its = Vec::new();
    for cells in [[8, 2, 2], [16, 4, 4], [32, 8, 8]] {
        let (a, fixed, mut amg) = setup(cells, small_coarse());
        assert!(amg.info().levels.len() >= 2);
        let n = fixed.len();
        let b = random_vectors(n, 3, &fixed);
        let settings = PcgSettings {
            tolerance: 1e-8,
            max_iterations: 5000,
            preconditioner: Preconditioner::Amg,
        };
        let mut ws = CgWorkspace::new(n);
        let mut x = vec![Vector3::zeros(); n];
        let ia = conjugate_gradient(&mut ws, &a, &b, &fixed, &mut x, &settings, &mut amg).unwrap();
        let mut jacobi = BlockJacobi::new(n);
        jacobi.refresh(&a, &fixed);
        x.fill(Vector3::zeros());
        let ij =
            conjugate_gradient(&mut ws, &a, &b, &fixed, &mut x, &settings, &mut jacobi).unwrap();
        its.push((ia.iterations, ij.iterations));
        eprintln!(
            "cells {cells:?}: AMG {} / block Jacobi {} iterations",
            ia.iterations, ij.iterations
        );
    }
    for w in its.windows(2) {
        let (amg0, jac0) = w[0];
        let (amg1, jac1) = w[1];
        assert!((amg1 as f64) < 1.5 * amg0 as f64, "{its:?}");
        assert!(jac1 as f64 > 1.5 * jac0 as f64, "{its:?}");
    }
}

/// One thread or two: the same bits, through the parallel sweeps and products (and the
/// `f32`-stored hierarchy's).
#[test]
fn the_v_cycle_is_thread_count_independent() {
    let cells = [80, 16, 16];
    for (multicolor_finest, single_precision, single_precision_finest) in [
        (false, false, false),
        (true, false, false),
        (false, true, true),
    ] {
        let settings = AmgSettings {
            multicolor_finest,
            single_precision,
            single_precision_finest,
            ..Default::default()
        };
        let run = |threads: usize| {
            crate::linalg::test_support::on_threads(threads, || {
                let (a, fixed, mut amg) = setup(cells, settings);
                let r = random_vectors(fixed.len(), 5, &fixed);
                (apply(&mut amg, &a, &fixed, &r), amg.info())
            })
        };
        let (z1, info1) = run(1);
        let (z2, info2) = run(2);
        assert_eq!(info1, info2);
        assert!(z1
            .iter()
            .zip(&z2)
            .all(|(p, q)| p.map(f64::to_bits) == q.map(f64::to_bits)));
    }
}

/// The forward sweep from zero gives the residual of its iterate, `b − A x`, as the explicit
/// product does (to round-off), on the block matrix and on a coarse level (`6 × 6` blocks); fixed
/// vertices get zero.
#[test]
fn the_fused_forward_sweep_returns_the_true_residual() {
    let settings = AmgSettings {
        single_precision: false,
        ..small_coarse()
    };
    let (a, fixed, amg) = setup([24, 6, 6], settings);
    let n = fixed.len();
    let b = random_vectors(n, 3, &fixed);
    let d_inv = amg.jacobi.block_diagonal().expect("block diagonal");
    let (mut x, mut res, mut ax) = (
        vec![Vector3::zeros(); n],
        vec![Vector3::zeros(); n],
        vec![Vector3::zeros(); n],
    );
    smooth::block_forward_from_zero(&a.pattern, &a.values, &fixed, d_inv, &b, &mut x, &mut res);
    a.mul_vec(&x, &mut ax);
    let scale = b.iter().map(|v| v.norm()).fold(0.0, f64::max);
    for i in 0..n {
        let want = if fixed[i] {
            Vector3::zeros()
        } else {
            b[i] - ax[i]
        };
        assert!(
            (res[i] - want).norm() <= 1e-12 * scale,
            "{i}: {} vs {}",
            res[i],
            want
        );
    }
    let Some(Built {
        stored: Stored::F64(h),
        ..
    }) = amg.hierarchy.as_ref()
    else {
        panic!("an f64 hierarchy");
    };
    let lv = &h.levels[0];
    let m = lv.x.len();
    let bc: Vec<f64> = (0..m)
        .map(|i| {
            if lv.d_inv[i / 6][i % 6][i % 6] == 0.0 {
                0.0
            } else {
                ((i * 37) % 11) as f64 - 5.0
            }
        })
        .collect();
    let (mut xc, mut rc, mut axc) = (vec![0.0; m], vec![0.0; m], vec![0.0; m]);
    lv.lower.forward_from_zero(&lv.d_inv, &bc, &mut xc, &mut rc);
    lv.lower.mul_vec(&xc, &mut axc);
    // Round-off of row i: its terms' magnitudes, |b_i| + (|A| |x|)_i.
    let mut terms = vec![0.0; m];
    let xabs: Vec<f64> = xc.iter().map(|v| v.abs()).collect();
    lv.lower.abs().mul_vec(&xabs, &mut terms);
    for i in 0..m {
        let t = bc[i].abs() + terms[i];
        assert!(
            (rc[i] - (bc[i] - axc[i])).abs() <= 1e-12 * t.max(f64::MIN_POSITIVE),
            "{i}: {} vs {}",
            rc[i],
            bc[i] - axc[i]
        );
    }
}

/// What triggers a rebuild: a new fixed set and iteration growth; a constant matrix or a
/// solve within the growth bound does not.
#[test]
fn the_hierarchy_is_rebuilt_only_when_needed() {
    let (a, fixed, mut amg) = setup([16, 4, 4], small_coarse());
    assert_eq!(amg.info().builds, 1);
    amg.observe(10);
    for _ in 0..5 {
        amg.prepare(&a, &fixed, false);
        amg.observe(12);
    }
    amg.prepare(&a, &fixed, true);
    assert_eq!(amg.info().builds, 1);
    assert_eq!(amg.info().age, 1);
    amg.observe(23); // > 1.5 · 10 + 2
    amg.prepare(&a, &fixed, true);
    assert_eq!(amg.info().builds, 2);
    let mut other = fixed.clone();
    other[fixed.len() - 1] = true;
    amg.prepare(&a, &other, false);
    assert_eq!(amg.info().builds, 3);
    let mut every = Amg::new(
        AmgSettings {
            rebuild_every: 3,
            ..small_coarse()
        },
        &a.pattern,
        None,
    );
    for _ in 0..7 {
        every.prepare(&a, &fixed, true);
    }
    // Built at the first call, then after 3 changed matrices twice.
    assert_eq!(every.info().builds, 3);
}

/// Merging the finest level's aggregates makes the first coarse level smaller and sparser
/// (lower operator complexity, neighbourhoods more than pairs); the V-cycle stays a
/// preconditioner CG converges with, to the same solution.
#[test]
fn merged_aggregates_give_a_sparser_hierarchy_that_still_converges() {
    let mut complexity = Vec::new();
    let mut solutions = Vec::new();
    for first_merge in [Merge::None, Merge::Pairs, Merge::Neighbourhoods] {
        let settings = AmgSettings {
            first_merge,
            max_coarse: 100,
            ..Default::default()
        };
        let (a, fixed, mut amg) = setup([32, 8, 8], settings);
        let info = amg.info();
        complexity.push(info.operator_complexity);
        let (x, _) = amg_solve(&a, &fixed, &mut amg, 500);
        solutions.push(x);
    }
    assert!(
        complexity[0] > complexity[1] && complexity[1] > complexity[2],
        "{complexity:?}"
    );
    let scale = solutions[0].iter().map(|v| v.norm()).fold(0.0, f64::max);
    for s in &solutions[1..] {
        assert!(s
            .iter()
            .zip(&solutions[0])
            .all(|(p, q)| (p - q).norm() <= 1e-7 * scale));
    }
}

/// The `f32`-stored hierarchy and finest smoother: the V-cycle stays symmetric positive definite, and CG with it
/// reaches the same tolerance and solution as with the `f64` one, in about as many
/// iterations; it holds fewer bytes.
#[test]
fn the_single_precision_hierarchy_is_a_preconditioner_as_good() {
    let mut its = Vec::new();
    let mut bytes = Vec::new();
    let mut solutions = Vec::new();
    for single_precision in [false, true] {
        let settings = AmgSettings {
            single_precision,
            single_precision_finest: single_precision,
            max_coarse: 100,
            ..Default::default()
        };
        let (a, fixed, mut amg) = setup([32, 8, 8], settings);
        bytes.push(amg.info().memory_bytes);
        let n = fixed.len();
        let (u, v) = (random_vectors(n, 1, &fixed), random_vectors(n, 2, &fixed));
        let (pu, pv) = (
            apply(&mut amg, &a, &fixed, &u),
            apply(&mut amg, &a, &fixed, &v),
        );
        assert!(dot(&u, &pu) > 0.0 && dot(&v, &pv) > 0.0);
        let (vpu, upv) = (dot(&v, &pu), dot(&u, &pv));
        assert!((vpu - upv).abs() <= 1e-10 * (dot(&u, &pu) + dot(&v, &pv)));
        let (x, cg) = amg_solve(&a, &fixed, &mut amg, 500);
        its.push(cg.iterations);
        solutions.push(x);
    }
    assert!(its[1] <= its[0] + 2, "{its:?}");
    assert!(bytes[1] < bytes[0], "{bytes:?}");
    let scale = solutions[0].iter().map(|v| v.norm()).fold(0.0, f64::max);
    assert!(solutions[1]
        .iter()
        .zip(&solutions[0])
        .all(|(p, q)| (p - q).norm() <= 1e-7 * scale));
}

/// The compact `f32` lower-half sweeps of the finest level are the block sweeps of `smooth`
/// to `f32` rounding: the forward one with its residual, the backward one from any start.
#[test]
fn the_compact_finest_sweeps_match_the_full_ones() {
    let (a, fixed, amg) = setup([24, 6, 6], small_coarse());
    let n = fixed.len();
    let d_inv = amg.jacobi.block_diagonal().expect("block diagonal");
    let lower = FinestLower::new(&a);
    let b = random_vectors(n, 4, &fixed);
    let zero = vec![Vector3::zeros(); n];
    let (mut x1, mut r1, mut x2, mut r2) = (zero.clone(), zero.clone(), zero.clone(), zero.clone());
    smooth::block_forward_from_zero(&a.pattern, &a.values, &fixed, d_inv, &b, &mut x1, &mut r1);
    lower.forward_from_zero(&fixed, d_inv, &b, &mut x2, &mut r2);
    let close = |u: &[Vector3<f64>], v: &[Vector3<f64>]| {
        let scale = u.iter().map(|p| p.norm()).fold(0.0, f64::max);
        u.iter().zip(v).all(|(p, q)| (p - q).norm() <= 1e-5 * scale)
    };
    assert!(close(&x1, &x2) && close(&r1, &r2));
    let mut lower = lower;
    for _ in 0..2 {
        // Twice: the scattered sums must be left at zero.
        let (mut y1, mut y2) = (x1.clone(), x1.clone());
        smooth::block_backward(&a.pattern, &a.values, &fixed, d_inv, &b, &mut y1);
        lower.backward(&fixed, d_inv, &b, &mut y2);
        assert!(close(&y1, &y2));
        assert!(fixed
            .iter()
            .zip(&y2)
            .all(|(&f, v)| !f || *v == Vector3::zeros()));
    }
}

/// The coarse levels' lower-half sweeps (`coarse`) are block Gauss–Seidel on the level's
/// operator: the backward sweep from any start matches a dense reference sweep by `6 × 6`
/// blocks (upper blocks from the rows already updated, lower ones from the start) to
/// round-off, twice in a row (its scatter buffer is left at zero), and after the
/// forward sweep from zero the pair is the symmetric smoother: `vᵀ S u = uᵀ S v`.
#[test]
fn the_coarse_lower_half_sweeps_are_block_gauss_seidel() {
    let settings = AmgSettings {
        single_precision: false,
        ..small_coarse()
    };
    let (_, _, mut amg) = setup([24, 6, 6], settings);
    let Some(Built {
        stored: Stored::F64(h),
        ..
    }) = amg.hierarchy.as_mut()
    else {
        panic!("an f64 hierarchy");
    };
    let lv = &mut h.levels[0];
    let m = lv.x.len();
    // The dense operator, column by column.
    let mut dense = vec![vec![0.0; m]; m];
    let mut e = vec![0.0; m];
    let mut col = vec![0.0; m];
    for j in 0..m {
        e[j] = 1.0;
        lv.lower.mul_vec(&e, &mut col);
        for i in 0..m {
            dense[i][j] = col[i];
        }
        e[j] = 0.0;
    }
    let vec_of = |seed: usize| -> Vec<f64> {
        (0..m)
            .map(|i| ((i * 37 + seed * 11) % 13) as f64 - 6.0)
            .collect()
    };
    let (b, x0) = (vec_of(1), vec_of(2));
    // Reference backward sweep by blocks.
    let mut want = x0.clone();
    for bi in (0..m / 6).rev() {
        let mut s = [0.0; 6];
        for (r, sr) in s.iter_mut().enumerate() {
            let i = 6 * bi + r;
            *sr = b[i]
                - (0..m)
                    .filter(|j| j / 6 != bi)
                    .map(|j| dense[i][j] * want[j])
                    .sum::<f64>();
        }
        for r in 0..6 {
            want[6 * bi + r] = (0..6).map(|c| lv.d_inv[bi][r][c] * s[c]).sum();
        }
    }
    let scale = want.iter().map(|v| v.abs()).fold(0.0, f64::max);
    for _ in 0..2 {
        let mut got = x0.clone();
        lv.lower.backward(&lv.d_inv, &b, &mut got);
        assert!(
            got.iter()
                .zip(&want)
                .all(|(p, q)| (p - q).abs() <= 1e-10 * scale),
            "{got:?} vs {want:?}"
        );
    }
    // The symmetric smoother S = forward from zero, then backward.
    let mut smooth = |rhs: &[f64]| {
        let (mut x, mut res) = (vec![0.0; m], vec![0.0; m]);
        lv.lower.forward_from_zero(&lv.d_inv, rhs, &mut x, &mut res);
        lv.lower.backward(&lv.d_inv, rhs, &mut x);
        x
    };
    let (u, v) = (vec_of(3), vec_of(4));
    let (su, sv) = (smooth(&u), smooth(&v));
    let vsu: f64 = v.iter().zip(&su).map(|(p, q)| p * q).sum();
    let usv: f64 = u.iter().zip(&sv).map(|(p, q)| p * q).sum();
    assert!(
        (vsu - usv).abs() <= 1e-10 * vsu.abs().max(usv.abs()),
        "{vsu} vs {usv}"
    );
}
