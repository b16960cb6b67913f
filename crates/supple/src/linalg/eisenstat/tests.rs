//! Eisenstat-SSOR CG against block-SSOR CG, and across thread counts.

use crate::linalg::test_support::{bar_system, free_residual_norms, random_vectors};
use crate::linalg::{BlockCsr, Pcg, PcgSettings, PcgStats, Preconditioner};
use nalgebra::Vector3;

fn solve(
    a: &BlockCsr,
    b: &[Vector3<f64>],
    fixed: &[bool],
    x0: &[Vector3<f64>],
    tolerance: f64,
    max_iterations: usize,
    preconditioner: Preconditioner,
) -> (Vec<Vector3<f64>>, PcgStats) {
    let mut x = x0.to_vec();
    let settings = PcgSettings {
        tolerance,
        max_iterations,
        preconditioner,
    };
    let stats = Pcg::new(a.n_rows()).solve(a, b, fixed, &mut x, &settings);
    (x, stats)
}

fn max_norm(v: &[Vector3<f64>]) -> f64 {
    v.iter().map(|v| v.norm()).fold(0.0, f64::max)
}

/// Eisenstat's trick changes the cost of an iteration, not the iteration: from a zero and
/// from a non-zero first guess, with prescribed vertices, every iterate is plain block-SSOR
/// CG's to rounding, the converged solve takes the same iterations (±1) and reports the
/// true residual, and the fixed vertices keep their values.
#[test]
fn eisenstat_ssor_runs_the_iterates_of_block_ssor_cg() {
    let (a, n) = bar_system([12, 3, 3]);
    let fixed: Vec<bool> = (0..n).map(|i| i % 13 == 0).collect();
    let b = random_vectors(n, 3, &fixed);
    let prescribed: Vec<_> = (0..n)
        .map(|i| {
            if fixed[i] {
                Vector3::new(0.1, -0.2, 0.05 * i as f64)
            } else {
                Vector3::zeros()
            }
        })
        .collect();
    let warm: Vec<_> = random_vectors(n, 4, &fixed)
        .iter()
        .zip(&prescribed)
        .map(|(r, p)| 1e-4 * r + p)
        .collect();
    for x0 in [&prescribed, &warm] {
        // The first iterates, one by one (neither has converged).
        for k in 1..=6 {
            let (xs, ss) = solve(&a, &b, &fixed, x0, 1e-14, k, Preconditioner::BlockSsor);
            let (xe, se) = solve(&a, &b, &fixed, x0, 1e-14, k, Preconditioner::EisenstatSsor);
            assert!(
                !ss.converged && !se.converged && se.iterations == k,
                "{se:?}"
            );
            let scale = max_norm(&xs);
            for i in 0..n {
                assert!(
                    (xs[i] - xe[i]).norm() <= 1e-10 * scale,
                    "k = {k}, vertex {i}"
                );
            }
            let rel = ss.relative_residual;
            assert!(
                (se.relative_residual - rel).abs() <= 1e-6 * rel,
                "{ss:?} {se:?}"
            );
        }
        let (xs, ss) = solve(&a, &b, &fixed, x0, 1e-10, 2000, Preconditioner::BlockSsor);
        let (xe, se) = solve(
            &a,
            &b,
            &fixed,
            x0,
            1e-10,
            2000,
            Preconditioner::EisenstatSsor,
        );
        assert!(ss.converged && se.converged, "{ss:?} {se:?}");
        assert!(
            se.iterations.abs_diff(ss.iterations) <= 1,
            "Eisenstat {} vs SSOR {}",
            se.iterations,
            ss.iterations
        );
        let rel = {
            let (r, scale) = free_residual_norms(&a, &b, &fixed, &xe);
            r / scale
        };
        assert!(
            rel <= 1e-10 && (rel - se.relative_residual).abs() <= 1e-6 * rel,
            "{rel:e} vs {:e}",
            se.relative_residual
        );
        let scale = max_norm(&xs);
        for i in 0..n {
            assert!((xs[i] - xe[i]).norm() <= 1e-8 * scale, "vertex {i}");
            if fixed[i] {
                assert_eq!(xe[i], x0[i]);
            }
        }
    }
}

/// Above `par::VEC_PAR_MIN` rows the vector update runs in parallel chunks: one thread or
/// two give the same bits.
#[test]
fn eisenstat_ssor_is_thread_count_independent() {
    let (a, n) = bar_system([80, 20, 20]);
    assert!(n >= crate::linalg::par::VEC_PAR_MIN);
    let fixed: Vec<bool> = (0..n).map(|i| i % 21 == 0).collect();
    let b = random_vectors(n, 5, &fixed);
    let x0 = vec![Vector3::zeros(); n];
    let run = |threads: usize| {
        crate::linalg::test_support::on_threads(threads, || {
            solve(
                &a,
                &b,
                &fixed,
                &x0,
                1e-8,
                500,
                Preconditioner::EisenstatSsor,
            )
        })
    };
    let ((x1, s1), (x2, s2)) = (run(1), run(2));
    assert!(s1.converged && s1 == s2, "{s1:?} {s2:?}");
    assert!(x1.iter().zip(&x2).all(|(p, q)| p
        .iter()
        .zip(q.iter())
        .all(|(s, t)| s.to_bits() == t.to_bits())));
}

/// The backward sweep's prefetch is a hint: forced on for a matrix below its size threshold,
/// the solve gives the bits it gives without it.
#[test]
fn the_backward_prefetch_changes_no_value() {
    use super::EisenstatSsor;
    let (a, n) = bar_system([12, 3, 3]);
    let fixed: Vec<bool> = (0..n).map(|i| i % 13 == 0).collect();
    let b = random_vectors(n, 3, &fixed);
    let settings = PcgSettings {
        tolerance: 1e-10,
        max_iterations: 500,
        preconditioner: Preconditioner::EisenstatSsor,
    };
    let run = |prefetch: bool| {
        let mut es = EisenstatSsor::new(n);
        es.refresh(&a, &fixed);
        assert!(
            !es.sweeps.prefetch,
            "a small matrix does not prefetch by itself"
        );
        es.sweeps.prefetch = prefetch;
        let mut x = vec![Vector3::zeros(); n];
        let info = es.solve(&a, &b, &fixed, &mut x, &settings).unwrap();
        (x, info.iterations)
    };
    let ((x0, it0), (x1, it1)) = (run(false), run(true));
    assert_eq!(it0, it1);
    assert!(x0.iter().zip(&x1).all(|(u, v)| u == v));
}

/// `a` with its rows and columns in the order `perm` (position `ii` is row `perm[ii]`).
fn reordered(a: &BlockCsr, perm: &[u32]) -> BlockCsr {
    use crate::linalg::BlockPattern;
    let p = &*a.pattern;
    let mut inv = vec![0_u32; perm.len()];
    for (ii, &i) in perm.iter().enumerate() {
        inv[i as usize] = ii as u32;
    }
    let (mut row_ptr, mut cols, mut diag, mut values) = (vec![0_u32], vec![], vec![], vec![]);
    for (ii, &i) in perm.iter().enumerate() {
        let slots = p.row_ptr[i as usize] as usize..p.row_ptr[i as usize + 1] as usize;
        let mut row: Vec<_> = slots
            .map(|s| (inv[p.cols[s] as usize], a.values[s]))
            .collect();
        row.sort_by_key(|e| e.0);
        for (j, v) in row {
            if j as usize == ii {
                diag.push(cols.len() as u32);
            }
            cols.push(j);
            values.push(v);
        }
        row_ptr.push(cols.len() as u32);
    }
    let pattern = BlockPattern {
        row_ptr,
        cols,
        diag,
    };
    BlockCsr {
        pattern: std::sync::Arc::new(pattern),
        values,
    }
}

/// Two parts and a separator are block SSOR on the matrix reordered part after part: every
/// iterate of two-part Eisenstat CG on `A` is one-part Eisenstat CG's on `P A Pᵀ`, to
/// rounding, and the two parts converge in the iterations of one part in the natural order
/// (±15 %) to the same solution.
#[test]
fn two_parts_run_the_iterates_of_one_part_on_the_reordered_matrix() {
    use super::EisenstatSsor;
    let (a, n) = bar_system([24, 4, 4]);
    let fixed: Vec<bool> = (0..n).map(|i| i % 17 == 0).collect();
    let b = random_vectors(n, 7, &fixed);
    let settings = |tolerance, max_iterations| PcgSettings {
        tolerance,
        max_iterations,
        preconditioner: Preconditioner::EisenstatSsor,
    };
    let run = |a: &BlockCsr, b: &[Vector3<f64>], fixed: &[bool], parts, s: &PcgSettings| {
        let mut es = EisenstatSsor::with_parts(n, parts);
        es.refresh(a, fixed);
        let mut x = vec![Vector3::zeros(); n];
        let info = es.solve(a, b, fixed, &mut x, s);
        (x, info, es.order().to_vec())
    };
    let (_, _, perm) = run(&a, &b, &fixed, 2, &settings(1e-14, 1));
    assert!(perm.iter().enumerate().any(|(ii, &i)| ii != i as usize));
    let ap = reordered(&a, &perm);
    let bp: Vec<_> = perm.iter().map(|&i| b[i as usize]).collect();
    let fp: Vec<_> = perm.iter().map(|&i| fixed[i as usize]).collect();
    for k in [1, 3, 8] {
        let (x2, i2, _) = run(&a, &b, &fixed, 2, &settings(1e-14, k));
        let (xp, ip, _) = run(&ap, &bp, &fp, 1, &settings(1e-14, k));
        assert!(i2.is_err() && ip.is_err(), "{i2:?} {ip:?}");
        let scale = max_norm(&xp);
        for (ii, &i) in perm.iter().enumerate() {
            assert!(
                (x2[i as usize] - xp[ii]).norm() <= 1e-11 * scale,
                "iteration {k}, row {i}"
            );
        }
    }
    let (x2, i2, _) = run(&a, &b, &fixed, 2, &settings(1e-9, 500));
    let (x1, i1, _) = run(&a, &b, &fixed, 1, &settings(1e-9, 500));
    let (i2, i1) = (i2.unwrap(), i1.unwrap());
    assert!(
        (i2.iterations as f64 - i1.iterations as f64).abs() <= 0.15 * i1.iterations as f64,
        "two parts {i2:?}, one part {i1:?}"
    );
    let diff: Vec<_> = x1.iter().zip(&x2).map(|(p, q)| p - q).collect();
    assert!(max_norm(&diff) <= 1e-6 * max_norm(&x1));
}

/// On a matrix that is not positive definite, the two-part solve ends in an error (here: out
/// of iterations; a `p̂ᵀ Â p̂ ≤ 0` breakdown is the other way out), keeps its first guess in
/// the caller's order (for `Pcg`'s block-Jacobi retry), and leaves no non-finite value in
/// `x`; `Pcg` reports the solve as not converged instead of panicking.
#[test]
fn two_parts_break_down_cleanly_on_an_indefinite_matrix() {
    use super::EisenstatSsor;
    let (mut a, n) = bar_system([24, 4, 4]);
    // Shift the diagonal by a multiple of the largest diagonal entry: D stays invertible,
    // A has negative eigenvalues.
    let shift = (0..n)
        .map(|i| a.values[a.pattern.diag[i] as usize].abs().max())
        .fold(0.0, f64::max);
    for i in 0..n {
        let d = a.pattern.diag[i] as usize;
        a.values[d] -= nalgebra::Matrix3::identity() * (0.6 * shift);
    }
    let fixed = vec![false; n];
    let b = random_vectors(n, 9, &fixed);
    let x0: Vec<_> = random_vectors(n, 10, &fixed)
        .iter()
        .map(|v| 1e-3 * v)
        .collect();
    let settings = PcgSettings {
        tolerance: 1e-10,
        max_iterations: 200,
        preconditioner: Preconditioner::EisenstatSsor,
    };
    let mut es = EisenstatSsor::with_parts(n, 2);
    es.refresh(&a, &fixed);
    let mut x = x0.clone();
    let result = es.solve(&a, &b, &fixed, &mut x, &settings);
    assert!(result.is_err(), "{result:?}");
    let (_, first_guess) = es.breakdown();
    assert_eq!(first_guess, &x0[..]);
    assert!(x.iter().all(|v| v.iter().all(|c| c.is_finite())));
    let (_, stats) = solve(
        &a,
        &b,
        &fixed,
        &x0,
        1e-10,
        200,
        Preconditioner::EisenstatSsor,
    );
    assert!(!stats.converged, "{stats:?}");
}
