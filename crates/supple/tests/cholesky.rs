//! The sparse Cholesky solver: exact solves under every ordering, refactoring, and as the linear
//! solver of linearized backward Euler (against PCG; pre-factored for a constant matrix).

mod common;

use std::sync::Arc;
use std::time::Instant;
use supple::body::Body;
use supple::fem::material::ModelKind;
use supple::linalg::ordering::{self, Graph, OrderingInput};
use supple::linalg::{
    BlockCsr, BlockPattern, CholeskyError, FactorKind, OrderingKind, Pcg, PcgSettings,
    SparseCholesky,
};
use supple::mesh::TetSplit;
use supple::nalgebra::{Matrix3, Vector3};
use supple::time::{IntegratorKind, LinearSolverKind, WarmStart};

/// `M + h² K` of the clamped bar's linear model (`cells` cubes of 0.1 m) and the body.
fn system(cells: [usize; 3], h: f64) -> (BlockCsr, Body) {
    let desc = common::bar(cells, 0.1, TetSplit::Five, ModelKind::Linear, true);
    let body = Body::new(desc).expect("valid bar");
    let mut a = BlockCsr::zeros(body.elems.pattern.clone());
    body.model.add_tangent(&body.elems, &body.x, h * h, &mut a);
    body.mass.add_to(&mut a, 1.0);
    (a, body)
}

fn orderings(cells: [usize; 3]) -> Vec<OrderingKind> {
    vec![
        OrderingKind::Natural,
        OrderingKind::Random { seed: 7 },
        OrderingKind::Amd,
        OrderingKind::GridNd {
            dims: [cells[0] + 1, cells[1] + 1, cells[2] + 1],
        },
        OrderingKind::Mnd,
        OrderingKind::Nd,
    ]
}

fn order(kind: OrderingKind, body: &Body) -> Vec<u32> {
    let graph = Graph::from_pattern(&body.elems.pattern);
    let cells: Vec<Vec<u32>> = body.mesh.tets.iter().map(|t| t.to_vec()).collect();
    let input = OrderingInput {
        graph: &graph,
        positions: &body.mesh.positions,
        cells: &cells,
    };
    ordering::compute(kind, &input)
        .expect("ordering")
        .perm()
        .to_vec()
}

fn analyse(kind: OrderingKind, body: &Body) -> SparseCholesky {
    SparseCholesky::new(body.elems.pattern.clone(), Some(&order(kind, body))).expect("analysis")
}

/// A known solution with non-zero prescribed values on the fixed vertices, and `b = A x`.
fn known(a: &BlockCsr, seed: f64) -> (Vec<Vector3<f64>>, Vec<Vector3<f64>>) {
    let n = a.n_rows();
    let x: Vec<_> = (0..n)
        .map(|i| {
            let t = i as f64 + seed;
            Vector3::new((0.7 * t).sin(), (1.3 * t).cos(), 0.01 * t - 0.5)
        })
        .collect();
    let mut b = vec![Vector3::zeros(); n];
    a.mul_vec(&x, &mut b);
    (x, b)
}

fn max_rel_error(x: &[Vector3<f64>], want: &[Vector3<f64>]) -> f64 {
    let scale = want.iter().map(|v| v.amax()).fold(0.0, f64::max);
    x.iter()
        .zip(want)
        .map(|(a, b)| (a - b).amax())
        .fold(0.0, f64::max)
        / scale
}

#[test]
fn factor_and_solve_reproduce_a_known_solution_under_every_ordering() {
    let cells = [6, 3, 3];
    let (a, body) = system(cells, 0.01);
    assert!(body.fixed.iter().filter(|&&f| f).count() == 16);
    let (want, b) = known(&a, 0.0);
    for kind in orderings(cells) {
        let mut chol = analyse(kind, &body);
        chol.factor(&a, &body.fixed).expect("SPD");
        // Start from garbage on the free vertices and the prescribed values on the fixed ones.
        let mut x: Vec<_> = (0..want.len())
            .map(|i| {
                if body.fixed[i] {
                    want[i]
                } else {
                    Vector3::repeat(1e3)
                }
            })
            .collect();
        chol.solve(&b, &body.fixed, &mut x).expect("solve");
        let err = max_rel_error(&x, &want);
        assert!(err < 1e-10, "{kind:?}: relative error {err:e}");
    }
}

#[test]
fn refactoring_new_values_on_the_same_pattern_gives_the_new_solution() {
    let cells = [5, 2, 2];
    let (a1, body) = system(cells, 0.01);
    let (a2, _) = system(cells, 0.05);
    let mut chol = analyse(OrderingKind::Amd, &body);
    for (a, seed) in [(&a1, 0.0), (&a2, 3.0), (&a1, 5.0)] {
        let (want, b) = known(a, seed);
        chol.factor(a, &body.fixed).expect("SPD");
        let mut x: Vec<_> = (0..want.len())
            .map(|i| {
                if body.fixed[i] {
                    want[i]
                } else {
                    Vector3::zeros()
                }
            })
            .collect();
        chol.solve(&b, &body.fixed, &mut x).expect("solve");
        assert!(max_rel_error(&x, &want) < 1e-10);
    }
    assert_eq!(chol.stats().factorizations, 3);
    assert_eq!(chol.stats().solves, 3);
}

#[test]
fn the_bar_stepped_with_cholesky_matches_pcg() {
    let run = |solver| {
        let desc = common::bar([10, 3, 3], 0.1, TetSplit::Five, ModelKind::Linear, true);
        let mut w = common::world_with(desc, 9.81, 0.01, solver);
        let mut factorizations = 0;
        for _ in 0..100 {
            w.step().expect("stable");
            let s = w.last_stats()[0];
            assert!(s.solver_converged, "{s:?}");
            factorizations += usize::from(s.factorized);
        }
        (w.bodies[0].x.clone(), w.last_stats()[0], factorizations)
    };
    let (x_pcg, _, _) = run(LinearSolverKind::Pcg(common::pcg(1e-12)));
    let (x_chol, stats, factorizations) = run(LinearSolverKind::Cholesky {
        ordering: OrderingKind::Nd,
    });
    // Linear model, constant dt: the matrix is factored once (Zhuang & Canny §4).
    assert_eq!(factorizations, 1);
    assert_eq!(stats.solver_iterations, 0);
    assert!(stats.solver_residual < 1e-12, "{stats:?}");
    let diff = max_rel_error(&x_chol, &x_pcg);
    assert!(diff < 1e-8, "max relative difference {diff:e}");
}

#[test]
fn a_changing_matrix_is_refactored_every_step() {
    let desc = common::bar([6, 2, 2], 0.1, TetSplit::Five, common::COROTATIONAL, true);
    let mut w = common::world_with(
        desc,
        9.81,
        0.01,
        LinearSolverKind::Cholesky {
            ordering: OrderingKind::Amd,
        },
    );
    for _ in 0..5 {
        w.step().expect("stable");
        let s = w.last_stats()[0];
        assert!(s.factorized && s.solver_converged, "{s:?}");
    }
}

#[test]
fn a_mismatched_grid_ordering_is_an_error_value() {
    let desc = common::bar([4, 2, 2], 0.1, TetSplit::Five, ModelKind::Linear, true);
    let body = Body::new(desc).unwrap();
    let kind = IntegratorKind::BackwardEulerLinearized {
        solver: LinearSolverKind::Cholesky {
            ordering: OrderingKind::GridNd { dims: [2, 2, 2] },
        },
        warm_start: WarmStart::Zero,
    };
    let err = kind.build(&body).unwrap_err().to_string();
    assert!(err.contains("bar") && err.contains("nd_grid"), "{err}");
}

/// The 20×20×80-cell bar of `scenes/bench/bar_160k.toml` (35,721 vertices): symbolic analysis,
/// numeric factorization and one solve under each ordering, against one PCG solve to 1e-6, on
/// `M + h² K` of the linear model. `cargo test --release --test cholesky -- --ignored
/// --nocapture` (set `CHOLESKY_ORDERINGS=amd,nd` to choose).
#[test]
#[ignore = "timing study, minutes"]
fn timing_bar_160k() {
    let cells = [80, 20, 20];
    let desc = common::bar(cells, 1.0 / 80.0, TetSplit::Five, ModelKind::Linear, true);
    let body = Body::new(desc).unwrap();
    let mut a = BlockCsr::zeros(body.elems.pattern.clone());
    body.model.add_tangent(&body.elems, &body.x, 1e-4, &mut a);
    body.mass.add_to(&mut a, 1.0);
    let n = a.n_rows();
    let b: Vec<_> = (0..n).map(|_| Vector3::new(0.0, -9.81e-2, 0.0)).collect();
    let mut x_pcg = vec![Vector3::zeros(); n];
    let t = Instant::now();
    let s = Pcg::new(n).solve(&a, &b, &body.fixed, &mut x_pcg, &PcgSettings::default());
    let pcg_s = t.elapsed().as_secs_f64();
    println!("vertices {n}, blocks {}", a.pattern.n_blocks());
    println!(
        "pcg (block Jacobi, 1e-6): {pcg_s:.3} s, {} iterations",
        s.iterations
    );
    let wanted = std::env::var("CHOLESKY_ORDERINGS").unwrap_or_else(|_| "amd,nd,mnd,grid".into());
    for kind in orderings(cells) {
        let name = kind.name();
        if !wanted.split(',').any(|w| name.starts_with(w.trim())) {
            continue;
        }
        let t = Instant::now();
        let perm = order(kind, &body);
        let ord_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        let mut chol = SparseCholesky::new(a.pattern.clone(), Some(&perm)).unwrap();
        let sym_s = t.elapsed().as_secs_f64();
        let t = Instant::now();
        chol.factor(&a, &body.fixed).expect("SPD");
        let fac_s = t.elapsed().as_secs_f64();
        let mut x = vec![Vector3::zeros(); n];
        let t = Instant::now();
        chol.solve(&b, &body.fixed, &mut x).unwrap();
        let sol_s = t.elapsed().as_secs_f64();
        chol.parallel = true;
        let t = Instant::now();
        chol.factor(&a, &body.fixed).unwrap();
        let fac_par_s = t.elapsed().as_secs_f64();
        let mut x_par = vec![Vector3::zeros(); n];
        let t = Instant::now();
        chol.solve(&b, &body.fixed, &mut x_par).unwrap();
        let sol_par_s = t.elapsed().as_secs_f64();
        println!(
            "{name:>8}: ordering {ord_s:.3} s, symbolic {sym_s:.3} s, factor {fac_s:.3} s, solve {sol_s:.4} s, \
             nnz(L) {:.1} M, supernodal {}, |x - x_pcg|/|x| {:.1e}; parallel ({} threads): \
             factor {fac_par_s:.3} s, solve {sol_par_s:.4} s, same bits {}",
            chol.nnz_l() as f64 / 1e6,
            chol.is_supernodal(),
            max_rel_error(&x_pcg, &x),
            rayon::current_num_threads(),
            x == x_par
        );
    }
}

// Small systems: the contract and the error values.
/// `A = L ⊗ S + shift·I` on a tet strip (L: the element graph Laplacian), SPD for
/// `shift > 0` and indefinite for a negative shift between its eigenvalues.
fn matrix(shift: f64) -> BlockCsr {
    let tets = [[0, 1, 2, 3], [1, 2, 3, 4], [2, 3, 4, 5], [3, 4, 5, 6]];
    let (p, scatter) = BlockPattern::from_tets(7, &tets);
    let mut a = BlockCsr::zeros(Arc::new(p));
    let s = Matrix3::new(2.0, 0.3, 0.0, 0.3, 1.5, 0.2, 0.0, 0.2, 1.0);
    for map in &scatter {
        for (k, &slot) in map.iter().enumerate() {
            a.values[slot as usize] += if k / 4 == k % 4 { 3.0 * s } else { -s };
        }
    }
    for i in 0..7 {
        a.values[a.pattern.diag[i] as usize] += Matrix3::identity() * shift;
    }
    a
}

fn check_solve(chol: &mut SparseCholesky, a: &BlockCsr, fixed: &[bool]) {
    let want: Vec<_> = (0..7)
        .map(|i| Vector3::new(1.0 + i as f64, -(i as f64), 0.5))
        .collect();
    let mut b = vec![Vector3::zeros(); 7];
    a.mul_vec(&want, &mut b);
    let mut x: Vec<_> = (0..7)
        .map(|i| if fixed[i] { want[i] } else { Vector3::zeros() })
        .collect();
    chol.solve(&b, fixed, &mut x).unwrap();
    for i in 0..7 {
        assert!(
            (x[i] - want[i]).norm() < 1e-10,
            "{i}: {} vs {}",
            x[i],
            want[i]
        );
    }
}

#[test]
fn solves_under_a_permutation_with_fixed_vertices() {
    let a = matrix(0.5);
    let fixed = [true, false, false, true, false, false, false];
    for perm in [None, Some(&[6, 0, 5, 1, 4, 2, 3][..])] {
        let mut chol = SparseCholesky::new(a.pattern.clone(), perm).unwrap();
        assert_eq!(
            chol.solve(&[], &fixed, &mut []),
            Err(CholeskyError::NotFactored)
        );
        assert_eq!(chol.factor(&a, &fixed), Ok(FactorKind::Llt));
        check_solve(&mut chol, &a, &fixed);
        let other = [false; 7];
        let mut x = vec![Vector3::zeros(); 7];
        let b = x.clone();
        assert_eq!(
            chol.solve(&b, &other, &mut x),
            Err(CholeskyError::FixedMismatch)
        );
    }
}

#[test]
fn rejects_bad_permutations_and_patterns() {
    let a = matrix(0.5);
    for perm in [
        &[0, 1, 2][..],
        &[0, 1, 2, 3, 4, 5, 5],
        &[0, 1, 2, 3, 4, 5, 7],
    ] {
        let e = SparseCholesky::new(a.pattern.clone(), Some(perm)).unwrap_err();
        assert!(
            matches!(e, CholeskyError::Permutation { expected: 7, .. }),
            "{e}"
        );
    }
    let mut chol = SparseCholesky::new(a.pattern.clone(), None).unwrap();
    let (other, _) = BlockPattern::from_tets(7, &[[0, 1, 2, 3], [3, 4, 5, 6]]);
    let b = BlockCsr::zeros(Arc::new(other));
    assert_eq!(
        chol.factor(&b, &[false; 7]),
        Err(CholeskyError::PatternMismatch)
    );
}

#[test]
fn an_indefinite_matrix_is_an_error_or_an_ldlt_factor() {
    // The Laplacian ⊗ S has a zero eigenvalue (constant vectors) and larger ones; a small
    // negative shift makes A indefinite but nonsingular.
    let a = matrix(-0.05);
    let fixed = [false; 7];
    let mut chol = SparseCholesky::new(a.pattern.clone(), None).unwrap();
    let e = chol.factor(&a, &fixed).unwrap_err();
    assert!(
        matches!(e, CholeskyError::NotPositiveDefinite { .. }),
        "{e}"
    );
    assert_eq!(chol.factored(), None);
    chol.ldlt_fallback = true;
    assert_eq!(chol.factor(&a, &fixed), Ok(FactorKind::Ldlt));
    check_solve(&mut chol, &a, &fixed);
    assert_eq!(chol.stats().ldlt_fallbacks, 1);
    // A positive definite matrix on the same analysis is factored by LLᵀ again.
    assert!(chol.factor(&matrix(0.5), &fixed).is_ok());
    assert_eq!(chol.factored(), Some(FactorKind::Llt));
}
