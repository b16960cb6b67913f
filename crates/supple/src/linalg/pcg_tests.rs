//! Tests of [`Pcg`](super::Pcg): solves with fixed and held vertices under every
//! preconditioner, the kept preconditioner, non-finite input, the iteration cap, and `Auto`.

use super::*;
use crate::linalg::BlockPattern;
use std::sync::Arc;

/// Every preconditioner a solve can be given (not `Auto`, which picks one of them).
const EVERY: [Preconditioner; 5] = [
    Preconditioner::BlockJacobi,
    Preconditioner::BlockSsor,
    Preconditioner::EisenstatSsor,
    Preconditioner::MulticolorSsor,
    Preconditioner::Amg,
];

/// An SPD block matrix on a small tet strip: A = L + shift·I with L a graph Laplacian ⊗ S.
fn spd_matrix() -> BlockCsr {
    let tets = [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5]];
    let (p, scatter) = BlockPattern::from_tets(6, &tets);
    let mut a = BlockCsr::zeros(Arc::new(p));
    let s = Matrix3::new(2.0, 0.3, 0.0, 0.3, 1.5, 0.2, 0.0, 0.2, 1.0);
    for map in &scatter {
        for (k, &slot) in map.iter().enumerate() {
            a.values[slot as usize] += if k / 4 == k % 4 { 3.0 * s } else { -s };
        }
    }
    for i in 0..6 {
        let d = a.pattern.diag[i] as usize;
        a.values[d] += Matrix3::identity() * 0.5;
    }
    a
}

#[test]
fn solves_an_spd_system_with_fixed_vertices() {
    let a = spd_matrix();
    let fixed = [true, false, false, false, false, true];
    let mut x_true: Vec<_> = (0..6)
        .map(|i| Vector3::new(1.0 + i as f64, -(i as f64), 0.5))
        .collect();
    x_true[0] = Vector3::new(0.1, 0.2, 0.3);
    x_true[5] = Vector3::zeros();
    let mut b = vec![Vector3::zeros(); 6];
    a.mul_vec(&x_true, &mut b);
    // Start from the prescribed values on fixed vertices, zero elsewhere.
    let mut x = vec![Vector3::zeros(); 6];
    x[0] = x_true[0];
    let mut pcg = Pcg::new(6);
    let stats = pcg.solve(
        &a,
        &b,
        &fixed,
        &mut x,
        &PcgSettings {
            tolerance: 1e-12,
            max_iterations: 100,
            ..Default::default()
        },
    );
    assert!(stats.converged, "{stats:?}");
    assert!(stats.iterations <= 12, "{stats:?}");
    for i in 0..6 {
        assert!(
            (x[i] - x_true[i]).norm() < 1e-9,
            "{i}: {} vs {}",
            x[i],
            x_true[i]
        );
    }
    // A converged warm start takes no iteration.
    let again = pcg.solve(
        &a,
        &b,
        &fixed,
        &mut x,
        &PcgSettings {
            tolerance: 1e-6,
            max_iterations: 100,
            ..Default::default()
        },
    );
    assert_eq!(again.iterations, 0);
}

#[test]
fn ssor_solves_the_same_system_in_fewer_iterations() {
    let a = spd_matrix();
    let fixed = [true, false, false, false, false, false];
    let b: Vec<_> = (0..6)
        .map(|i| Vector3::new(1.0, -(i as f64), 0.3 * i as f64))
        .collect();
    let solve = |preconditioner| {
        let mut x = vec![Vector3::zeros(); 6];
        let s = Pcg::new(6).solve(
            &a,
            &b,
            &fixed,
            &mut x,
            &PcgSettings {
                tolerance: 1e-12,
                max_iterations: 100,
                preconditioner,
            },
        );
        assert!(s.converged, "{preconditioner:?}: {s:?}");
        (x, s.iterations)
    };
    let (xj, nj) = solve(Preconditioner::BlockJacobi);
    let (xs, ns) = solve(Preconditioner::BlockSsor);
    assert!(ns <= nj, "SSOR {ns} vs Jacobi {nj}");
    for i in 0..6 {
        assert!((xj[i] - xs[i]).norm() < 1e-9);
    }
    assert_eq!(xs[0], Vector3::zeros());
}

/// Held vertices that move a body whose own `b` is zero (or at rounding level) on the
/// free vertices: the free vertices follow them, `A_FF x_F = −A_FH x_H`, and the stopping
/// rule is scaled by that right-hand side. Scaled by `‖b_F‖`, a zero `b_F` returned
/// `x_F = 0` at once and one at rounding level asked for a residual below rounding.
#[test]
fn held_vertices_move_a_body_at_rest() {
    let a = spd_matrix();
    let fixed = [true, false, false, false, false, true];
    let held = Vector3::new(0.1, 0.2, -0.3);
    for b_free in [0.0, 1e-19] {
        let mut b = vec![Vector3::zeros(); 6];
        b[2].x = b_free;
        for preconditioner in EVERY {
            let mut x = vec![Vector3::zeros(); 6];
            x[0] = held;
            let settings = PcgSettings {
                tolerance: 1e-10,
                max_iterations: 100,
                preconditioner,
            };
            let stats = Pcg::new(6).solve(&a, &b, &fixed, &mut x, &settings);
            assert!(
                stats.converged,
                "{preconditioner:?}, b_F {b_free}: {stats:?}"
            );
            assert_eq!((x[0], x[5]), (held, Vector3::zeros()));
            // The residual, and the free vertices' right-hand side −A_FH x_H (+ b_F).
            let (r, f) = crate::linalg::test_support::free_residual_norms(&a, &b, &fixed, &x);
            assert!(f > 1e-2, "the held vertex must load the free ones: {f}");
            assert!(r <= 1e-10 * f, "{preconditioner:?}: residual {r} of {f}");
            assert!(x[1..5].iter().all(|v| v.norm() > 0.0), "{x:?}");
        }
    }
}

/// A solve told that the matrix did not change keeps the preconditioner of the last one:
/// the same bits as a solve that refreshes it, and a refresh after all when the fixed
/// set changed (a released vertex's inverted block would still be zero) or the matrix
/// did.
#[test]
fn an_unchanged_matrix_keeps_its_preconditioner_until_the_fixed_set_changes() {
    let (a, n) = crate::linalg::test_support::bar_system([6, 2, 2]);
    let mut fixed = vec![false; n];
    fixed[..9].fill(true);
    let mut other = fixed.clone();
    other[n - 1] = true;
    let mut scaled = a.clone();
    for v in &mut scaled.values {
        *v *= 2.0;
    }
    let b = crate::linalg::test_support::random_vectors(n, 7, &vec![false; n]);
    let settings = |preconditioner| PcgSettings {
        tolerance: 1e-10,
        max_iterations: 1000,
        preconditioner,
    };
    for preconditioner in EVERY {
        let settings = settings(preconditioner);
        let mut kept = Pcg::new(n);
        let solve = |pcg: &mut Pcg, a: &BlockCsr, changed: bool, fixed: &[bool]| {
            let mut x = vec![Vector3::zeros(); n];
            let s = pcg.solve_changed(a, changed, &b, fixed, &mut x, &settings);
            assert!(s.converged, "{preconditioner:?}: {s:?}");
            let (r, f) = crate::linalg::test_support::free_residual_norms(a, &b, fixed, &x);
            assert!(r <= 1e-10 * f, "{preconditioner:?}: residual {r} of {f}");
            x
        };
        solve(&mut kept, &a, true, &fixed);
        let again = solve(&mut kept, &a, false, &fixed);
        assert!(
            again == solve(&mut Pcg::new(n), &a, true, &fixed),
            "{preconditioner:?}"
        );
        let held = solve(&mut kept, &a, false, &other);
        assert!(
            held == solve(&mut Pcg::new(n), &a, true, &other),
            "{preconditioner:?}"
        );
        // A vertex released: its inverted block is zero in a preconditioner made with it held.
        solve(&mut kept, &a, true, &other);
        let released = solve(&mut kept, &a, false, &fixed);
        assert!(
            released == solve(&mut Pcg::new(n), &a, true, &fixed),
            "{preconditioner:?}"
        );
        let stiffer = solve(&mut kept, &scaled, true, &other);
        // (The multigrid may keep its hierarchy for a changed matrix: `Amg::prepare`.)
        if preconditioner != Preconditioner::Amg {
            let fresh = solve(&mut Pcg::new(n), &scaled, true, &other);
            assert!(stiffer == fresh, "{preconditioner:?}");
        }
    }
}

/// Issue 12: `∞ ≤ tol · ∞` is true in IEEE arithmetic, so an overflowing `‖b‖` (gravity
/// `−1e160`) was reported as converged with a NaN residual. Every non-finite case must
/// report `converged = false` with a NaN residual, under both preconditioners.
#[test]
fn a_non_finite_right_hand_side_or_iterate_is_never_converged() {
    let a = spd_matrix();
    let fixed = [true, false, false, false, false, false];
    let finite: Vec<_> = (0..6)
        .map(|i| Vector3::new(1.0, -(i as f64), 0.5))
        .collect();
    let mut nan_b = finite.clone();
    nan_b[3].y = f64::NAN;
    let mut inf_b = finite.clone();
    inf_b[2].x = f64::NEG_INFINITY;
    // Finite entries whose squares overflow: ‖b‖ = ∞.
    let huge_b: Vec<_> = finite.iter().map(|v| v * 1e160).collect();
    let mut nan_a = spd_matrix();
    // Block (2, 1): both vertices free.
    let row = nan_a.pattern.row_ptr[2] as usize..nan_a.pattern.row_ptr[3] as usize;
    let off = row.clone().find(|&k| nan_a.pattern.cols[k] == 1).unwrap();
    nan_a.values[off][(0, 1)] = f64::NAN;
    let mut nan_x0 = vec![Vector3::zeros(); 6];
    nan_x0[4].z = f64::NAN;
    let zero = vec![Vector3::zeros(); 6];
    // (what, A, b, first guess)
    type Case<'a> = (
        &'a str,
        &'a BlockCsr,
        &'a [Vector3<f64>],
        &'a [Vector3<f64>],
    );
    let cases: [Case; 5] = [
        ("NaN in b", &a, &nan_b, &zero),
        ("∞ in b", &a, &inf_b, &zero),
        ("‖b‖ overflows", &a, &huge_b, &zero),
        ("NaN in A", &nan_a, &finite, &zero),
        ("NaN in the first guess", &a, &finite, &nan_x0),
    ];
    for preconditioner in EVERY {
        for (what, a, b, x0) in cases {
            let mut x = x0.to_vec();
            let stats = Pcg::new(6).solve(
                a,
                b,
                &fixed,
                &mut x,
                &PcgSettings {
                    preconditioner,
                    ..Default::default()
                },
            );
            assert!(
                !stats.converged && stats.relative_residual.is_nan(),
                "{preconditioner:?}, {what}: {stats:?}"
            );
            // It stops at the first non-finite value instead of running to the cap.
            assert!(
                stats.iterations <= 1,
                "{preconditioner:?}, {what}: {stats:?}"
            );
        }
        // The same solve with finite data converges (the cases above differ only there).
        let mut x = zero.clone();
        let settings = PcgSettings {
            preconditioner,
            ..Default::default()
        };
        let stats = Pcg::new(6).solve(&a, &finite, &fixed, &mut x, &settings);
        assert!(stats.converged && stats.relative_residual.is_finite());
    }
}

#[test]
fn reports_non_convergence_at_the_cap() {
    let a = spd_matrix();
    let b = vec![Vector3::new(1.0, 2.0, 3.0); 6];
    // Not `Amg` (nor `Auto`, which chooses it here): on six vertices its coarsest level is
    // the whole system, solved directly, so one iteration converges. `linalg::auto`'s tests
    // cap `Auto` on a larger system.
    for preconditioner in EVERY.into_iter().filter(|p| *p != Preconditioner::Amg) {
        let mut x = vec![Vector3::zeros(); 6];
        let stats = Pcg::new(6).solve(
            &a,
            &b,
            &[false; 6],
            &mut x,
            &PcgSettings {
                tolerance: 1e-14,
                max_iterations: 2,
                preconditioner,
            },
        );
        assert!(stats.iterations <= 2, "{preconditioner:?}: {stats:?}");
        assert!(!stats.converged, "{preconditioner:?}: {stats:?}");
        assert!(
            stats.relative_residual > 1e-14,
            "{preconditioner:?}: {stats:?}"
        );
    }
}

/// A solve with `Auto` on a small system is the chosen candidate's (Eisenstat SSOR here),
/// bit for bit; `linalg::auto`'s tests cover the choice itself.
#[test]
fn auto_is_the_default_and_solves_as_its_choice() {
    let auto = Preconditioner::Auto;
    assert_eq!(PcgSettings::default().preconditioner, auto);
    assert!(auto.may_use_amg() && Preconditioner::Amg.may_use_amg());
    assert!(!Preconditioner::BlockJacobi.may_use_amg());
    let a = spd_matrix();
    let b: Vec<Vector3<f64>> = (0..6)
        .map(|i| Vector3::new(1.0, i as f64, -0.5 * i as f64))
        .collect();
    let fixed = [true, false, false, false, false, false];
    let solve = |preconditioner| {
        let mut x = vec![Vector3::zeros(); 6];
        let settings = PcgSettings {
            tolerance: 1e-12,
            preconditioner,
            ..Default::default()
        };
        let mut pcg = Pcg::new(6);
        let stats = pcg.solve(&a, &b, &fixed, &mut x, &settings);
        (x, stats, pcg.auto_choice().map(|c| c.chosen))
    };
    let (x, stats, chosen) = solve(auto);
    let chosen = chosen.expect("a choice");
    let (y, s, _) = solve(chosen);
    assert_eq!((x, stats), (y, s));
}
