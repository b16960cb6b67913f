//! The smoothers' two-part order (`finest`, `coarse`; issue 43, *two cores that pay*): the
//! sweeps are exactly block Gauss–Seidel in the order of the partition, on the finest level
//! and on a coarse one, checked against reference sweeps over whole rows in that order.

use super::block::Bsr;
use super::coarse::CoarseLower;
use super::finest::FinestLower;
use super::{setup, smooth, Amg, AmgSettings, Merge};
use crate::linalg::cg::Precond;
use crate::linalg::test_support::{bar_mesh, bar_system, random_vectors};
use nalgebra::Vector3;

/// The groups of an order: two parts and a separator, none empty, every row once.
fn assert_two_parts(perm: &[u32], bounds: &[usize]) {
    let n = perm.len();
    assert_eq!(bounds.len(), 4, "{bounds:?}");
    assert!(bounds[0] == 0 && bounds[1] > 0 && bounds[2] > bounds[1] && bounds[3] == n);
    assert!(bounds[3] > bounds[2], "a separator");
    let mut seen = vec![false; n];
    for &i in perm {
        assert!(!std::mem::replace(&mut seen[i as usize], true));
    }
}

/// Finest level, two parts: the forward sweep from zero is Gauss–Seidel in the parts' order
/// and returns the true residual `b − A x`; the backward sweep from any start is its reverse
/// (twice: the scattered sums are left at zero); fixed vertices stay zero. The copy is `f32`,
/// hence the tolerance; a sweep in another order misses by O(1).
#[test]
fn the_finest_two_part_sweeps_are_gauss_seidel_in_the_parts_order() {
    let cells = [24, 6, 6];
    let (a, _) = bar_system(cells);
    let mesh = bar_mesh(cells);
    let fixed: Vec<bool> = mesh.positions.iter().map(|p| p.x == 0.0).collect();
    let n = fixed.len();
    let mut amg = Amg::new(AmgSettings::default(), &a.pattern, Some(&mesh.positions));
    amg.prepare(&a, &fixed, true);
    let d_inv = amg.jacobi.block_diagonal().expect("block diagonal");
    let mut lower = FinestLower::with_parts(&a, 2);
    let perm = lower.order().0.to_vec();
    assert_two_parts(&perm, lower.order().1);
    let p = &*a.pattern;
    let row = |i: usize| p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize;
    let b = random_vectors(n, 4, &fixed);
    // Reference forward sweep from zero in `perm`'s order, whole rows (rows not yet swept
    // hold zero), and the explicit residual.
    let mut want = vec![Vector3::zeros(); n];
    for &i in &perm {
        let i = i as usize;
        if fixed[i] {
            continue;
        }
        let mut s = b[i];
        for k in row(i).filter(|&k| p.cols[k] as usize != i) {
            s -= a.values[k] * want[p.cols[k] as usize];
        }
        want[i] = d_inv[i] * s;
    }
    let mut ax = vec![Vector3::zeros(); n];
    a.mul_vec(&want, &mut ax);
    let want_res: Vec<Vector3<f64>> = (0..n)
        .map(|i| {
            if fixed[i] {
                Vector3::zeros()
            } else {
                b[i] - ax[i]
            }
        })
        .collect();
    let close = |u: &[Vector3<f64>], v: &[Vector3<f64>]| {
        let scale = u.iter().map(|p| p.norm()).fold(0.0, f64::max);
        u.iter().zip(v).all(|(p, q)| (p - q).norm() <= 1e-5 * scale)
    };
    let (mut x, mut res) = (vec![Vector3::zeros(); n], vec![Vector3::zeros(); n]);
    lower.forward_from_zero(&fixed, d_inv, &b, &mut x, &mut res);
    assert!(close(&want, &x) && close(&want_res, &res));
    // Reference backward sweep from `x`, in the reverse order.
    let mut back = x.clone();
    for &i in perm.iter().rev() {
        let i = i as usize;
        if fixed[i] {
            continue;
        }
        let mut s = b[i];
        for k in row(i).filter(|&k| p.cols[k] as usize != i) {
            s -= a.values[k] * back[p.cols[k] as usize];
        }
        back[i] = d_inv[i] * s;
    }
    for _ in 0..2 {
        let mut got = x.clone();
        lower.backward(&fixed, d_inv, &b, &mut got);
        assert!(close(&back, &got));
        assert!(fixed
            .iter()
            .zip(&got)
            .all(|(&f, v)| !f || *v == Vector3::zeros()));
    }
    // The order differs from the natural one (the test would be blind otherwise).
    assert!(perm.windows(2).any(|w| w[0] > w[1]));
}

/// A coarse level (`6 × 6` blocks), two parts: the forward sweep from zero and the backward
/// sweep are block Gauss–Seidel in the parts' order against a dense reference, the forward
/// one returning the true residual, and the pair is a symmetric smoother.
#[test]
fn the_coarse_two_part_sweeps_are_gauss_seidel_in_the_parts_order() {
    let cells = [24, 6, 6];
    let (a, _) = bar_system(cells);
    let mesh = bar_mesh(cells);
    let fixed: Vec<bool> = mesh.positions.iter().map(|p| p.x == 0.0).collect();
    let near_null = setup::rigid_body_modes(fixed.len(), Some(&mesh.positions));
    let fine = Bsr::from_block_csr(&a, &fixed);
    let (_, bsr, _) =
        setup::coarsen(&fine, &near_null, 0.0, true, Merge::None).expect("a coarse level");
    let diag = smooth::diagonal_positions(&bsr);
    let d_inv = setup::block_diagonal_inverse(&bsr);
    let mut lower = CoarseLower::with_parts(&bsr, &diag, 2);
    let perm = lower.order().0.to_vec();
    assert_two_parts(&perm, lower.order().1);
    let dense = bsr.to_dense();
    let m = 6 * bsr.n_brows;
    let vec_of = |seed: usize| -> Vec<f64> {
        (0..m)
            .map(|i| ((i * 37 + seed * 11) % 13) as f64 - 6.0)
            .collect()
    };
    // One block row of Gauss–Seidel on `x` (its own block excluded from the sum).
    let relax = |x: &mut Vec<f64>, b: &[f64], bi: usize| {
        let mut s = [0.0; 6];
        for (r, sr) in s.iter_mut().enumerate() {
            let i = 6 * bi + r;
            *sr = b[i]
                - (0..m)
                    .filter(|j| j / 6 != bi)
                    .map(|j| dense[(i, j)] * x[j])
                    .sum::<f64>();
        }
        for r in 0..6 {
            x[6 * bi + r] = (0..6).map(|c| d_inv[bi][r][c] * s[c]).sum();
        }
    };
    let close = |u: &[f64], v: &[f64]| {
        let scale = u.iter().map(|v| v.abs()).fold(0.0, f64::max);
        u.iter().zip(v).all(|(p, q)| (p - q).abs() <= 1e-10 * scale)
    };
    let b = vec_of(1);
    let mut want = vec![0.0; m];
    for &bi in &perm {
        relax(&mut want, &b, bi as usize);
    }
    let (mut x, mut res) = (vec![0.0; m], vec![0.0; m]);
    lower.forward_from_zero(&d_inv, &b, &mut x, &mut res);
    assert!(close(&want, &x));
    let ax = &dense * nalgebra::DVector::from_column_slice(&x);
    let want_res: Vec<f64> = (0..m).map(|i| b[i] - ax[i]).collect();
    assert!(close(&want_res, &res));
    let x0 = vec_of(2);
    let mut back = x0.clone();
    for &bi in perm.iter().rev() {
        relax(&mut back, &b, bi as usize);
    }
    for _ in 0..2 {
        let mut got = x0.clone();
        lower.backward(&d_inv, &b, &mut got);
        assert!(close(&back, &got));
    }
    let mut smooth = |rhs: &[f64]| {
        let (mut x, mut res) = (vec![0.0; m], vec![0.0; m]);
        lower.forward_from_zero(&d_inv, rhs, &mut x, &mut res);
        lower.backward(&d_inv, rhs, &mut x);
        x
    };
    let (u, v) = (vec_of(3), vec_of(4));
    let (su, sv) = (smooth(&u), smooth(&v));
    let vsu: f64 = v.iter().zip(&su).map(|(p, q)| p * q).sum();
    let usv: f64 = u.iter().zip(&sv).map(|(p, q)| p * q).sum();
    assert!(
        (vsu - usv).abs() <= 1e-10 * vsu.abs().max(usv.abs()),
        "{vsu} {usv}"
    );
    assert!(perm.windows(2).any(|w| w[0] > w[1]));
}
