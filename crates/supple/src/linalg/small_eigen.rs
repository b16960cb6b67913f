//! Eigendecomposition of small dense symmetric matrices (N ≤ 12) on the stack: Householder
//! reduction to tridiagonal form with the transformations accumulated, then the implicit QL
//! iteration with Wilkinson-type shifts (Golub & Van Loan, *Matrix Computations*, §8.3;
//! the classic `tred2`/`tql2` pair of EISPACK, Bowdler, Martin, Reinsch & Wilkinson 1968).
//!
//! Written here rather than taken from nalgebra because the contact step projects thousands
//! of 6×6 and 9×9 pair Hessians per Newton iteration (IPC §4.1): nalgebra's
//! `SymmetricEigen`, generic over storage and dimension, spends about three times as long
//! on a 9×9 matrix as these loops over fixed-size arrays (`benches/small_eigen.rs`), and
//! the projections were a quarter of a resting contact step.

/// Eigenvalues `d` and orthonormal eigenvectors (`z[k][j]`: component `k` of the vector of
/// `d[j]`) of the symmetric `a` (only its lower triangle is read). `None` when the QL
/// iteration does not converge in `30 N` sweeps (not observed for finite input) or an entry
/// is not finite.
pub fn symmetric_eigen<const N: usize>(a: &[[f64; N]; N]) -> Option<([f64; N], [[f64; N]; N])> {
    if a.iter().flatten().any(|x| !x.is_finite()) {
        return None;
    }
    let mut z = *a;
    let mut d = [0.0; N];
    let mut e = [0.0; N];
    tridiagonalize(&mut z, &mut d, &mut e);
    // The QL rotations combine two eigenvectors at a time: stored as rows, each rotation
    // runs over two contiguous arrays.
    let mut vt = transpose(&z);
    ql_implicit(&mut vt, &mut d, &mut e)?;
    Some((d, transpose(&vt)))
}

fn transpose<const N: usize>(a: &[[f64; N]; N]) -> [[f64; N]; N] {
    std::array::from_fn(|i| std::array::from_fn(|j| a[j][i]))
}

/// `√(f² + g²)` without `hypot`'s cost (a library call per QL rotation was most of the
/// iteration's time), falling back to it where the squares would overflow or underflow.
#[inline]
fn pythag(f: f64, g: f64) -> f64 {
    let r = (f * f + g * g).sqrt();
    if r > 1e-150 && r < 1e150 {
        r
    } else {
        f.hypot(g)
    }
}

/// Householder reduction of the symmetric `z` (lower triangle) to tridiagonal form: on
/// return `d` is the diagonal, `e[1..]` the subdiagonal (`e[0] = 0`), and `z` the orthogonal
/// matrix `Q` with `A = Q T Qᵀ`.
#[allow(clippy::needless_range_loop)]
fn tridiagonalize<const N: usize>(z: &mut [[f64; N]; N], d: &mut [f64; N], e: &mut [f64; N]) {
    // Row i is reduced against its first i entries, last row first; the Householder vector
    // is kept in row i (scaled) and u/H in column i, for the accumulation below.
    for i in (1..N).rev() {
        let l = i - 1;
        let mut h = 0.0;
        if l > 0 {
            let scale: f64 = (0..=l).map(|k| z[i][k].abs()).sum();
            if scale == 0.0 {
                e[i] = z[i][l];
            } else {
                for k in 0..=l {
                    z[i][k] /= scale;
                    h += z[i][k] * z[i][k];
                }
                let f = z[i][l];
                let g = if f >= 0.0 { -h.sqrt() } else { h.sqrt() };
                e[i] = scale * g;
                h -= f * g;
                z[i][l] = f - g;
                let mut f = 0.0;
                for j in 0..=l {
                    z[j][i] = z[i][j] / h;
                    let mut g = 0.0;
                    for k in 0..=j {
                        g += z[j][k] * z[i][k];
                    }
                    for k in j + 1..=l {
                        g += z[k][j] * z[i][k];
                    }
                    e[j] = g / h;
                    f += e[j] * z[i][j];
                }
                let hh = f / (h + h);
                for j in 0..=l {
                    let f = z[i][j];
                    let g = e[j] - hh * f;
                    e[j] = g;
                    for k in 0..=j {
                        z[j][k] -= f * e[k] + g * z[i][k];
                    }
                }
            }
        } else {
            e[i] = z[i][l];
        }
        d[i] = h;
    }
    d[0] = 0.0;
    e[0] = 0.0;
    // Accumulate Q = P₁ P₂ … in place, first rows first.
    for i in 0..N {
        if d[i] != 0.0 {
            for j in 0..i {
                let mut g = 0.0;
                for k in 0..i {
                    g += z[i][k] * z[k][j];
                }
                for k in 0..i {
                    z[k][j] -= g * z[k][i];
                }
            }
        }
        d[i] = z[i][i];
        z[i][i] = 1.0;
        for j in 0..i {
            z[j][i] = 0.0;
            z[i][j] = 0.0;
        }
    }
}

/// The implicit QL iteration on the tridiagonal `(d, e)` (`e[1..]` the subdiagonal), with
/// the rotations applied to the rows of `vt` (the eigenvectors, one per row). `None` when an eigenvalue takes more than
/// `30 N` iterations.
#[allow(clippy::needless_range_loop)]
fn ql_implicit<const N: usize>(
    vt: &mut [[f64; N]; N],
    d: &mut [f64; N],
    e: &mut [f64; N],
) -> Option<()> {
    if N < 2 {
        return Some(());
    }
    for i in 1..N {
        e[i - 1] = e[i];
    }
    e[N - 1] = 0.0;
    for l in 0..N {
        let mut iterations = 0;
        loop {
            // The first negligible subdiagonal entry at or after l splits the matrix.
            let mut m = l;
            while m < N - 1 {
                let dd = d[m].abs() + d[m + 1].abs();
                if e[m].abs() <= f64::EPSILON * dd {
                    break;
                }
                m += 1;
            }
            if m == l {
                break;
            }
            iterations += 1;
            if iterations > 30 * N {
                return None;
            }
            // Shift from the leading 2×2 block's eigenvalue nearer d[l].
            let mut g = (d[l + 1] - d[l]) / (2.0 * e[l]);
            let mut r = pythag(g, 1.0);
            g = d[m] - d[l] + e[l] / (g + r.copysign(g));
            let (mut s, mut c, mut p) = (1.0, 1.0, 0.0);
            let mut underflow = false;
            for i in (l..m).rev() {
                let f = s * e[i];
                let b = c * e[i];
                r = pythag(f, g);
                e[i + 1] = r;
                if r == 0.0 {
                    // Deflate: recover from underflow and restart at l.
                    d[i + 1] -= p;
                    e[m] = 0.0;
                    underflow = true;
                    break;
                }
                let inv = 1.0 / r;
                s = f * inv;
                c = g * inv;
                g = d[i + 1] - p;
                r = (d[i] - g) * s + 2.0 * c * b;
                p = s * r;
                d[i + 1] = g + p;
                g = c * r - b;
                let (lo, hi) = vt.split_at_mut(i + 1);
                let (vi, vj) = (&mut lo[i], &mut hi[0]);
                for k in 0..N {
                    let f = vj[k];
                    vj[k] = s * vi[k] + c * f;
                    vi[k] = c * vi[k] - s * f;
                }
            }
            if underflow {
                continue;
            }
            d[l] -= p;
            e[l] = g;
            e[m] = 0.0;
        }
    }
    Some(())
}

/// `V max(Λ, 0) Vᵀ` of the symmetric `a` (`a = V Λ Vᵀ`): its Frobenius-nearest positive
/// semidefinite matrix, exactly symmetric. `None` where [`symmetric_eigen`] gives none.
#[allow(clippy::needless_range_loop)]
pub fn project_psd<const N: usize>(a: &[[f64; N]; N]) -> Option<[[f64; N]; N]> {
    let (d, z) = symmetric_eigen(a)?;
    let mut out = [[0.0; N]; N];
    for (k, &lambda) in d.iter().enumerate() {
        if lambda <= 0.0 {
            continue;
        }
        let mut v = [0.0; N];
        for i in 0..N {
            v[i] = z[i][k];
        }
        for i in 0..N {
            let li = lambda * v[i];
            for j in 0..=i {
                out[i][j] += li * v[j];
            }
        }
    }
    for i in 0..N {
        for j in 0..i {
            out[j][i] = out[i][j];
        }
    }
    Some(out)
}

#[cfg(test)]
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;

    fn random_symmetric<const N: usize>(seed: u64) -> [[f64; N]; N] {
        let mut state = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let mut next = || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((state >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        let mut a = [[0.0; N]; N];
        for i in 0..N {
            for j in 0..=i {
                let x = next();
                a[i][j] = x;
                a[j][i] = x;
            }
        }
        a
    }

    /// ‖A V − V Λ‖, ‖Vᵀ V − I‖ (max entries).
    fn residuals<const N: usize>(a: &[[f64; N]; N], d: &[f64; N], z: &[[f64; N]; N]) -> (f64, f64) {
        let (mut r, mut o) = (0.0f64, 0.0f64);
        for j in 0..N {
            for i in 0..N {
                let av: f64 = (0..N).map(|k| a[i][k] * z[k][j]).sum();
                r = r.max((av - d[j] * z[i][j]).abs());
                let vv: f64 = (0..N).map(|k| z[k][i] * z[k][j]).sum();
                o = o.max((vv - if i == j { 1.0 } else { 0.0 }).abs());
            }
        }
        (r, o)
    }

    fn check<const N: usize>(a: &[[f64; N]; N]) {
        let scale = a
            .iter()
            .flatten()
            .fold(0.0f64, |m, x| m.max(x.abs()))
            .max(1e-300);
        let (d, z) = symmetric_eigen(a).expect("converges");
        let (r, o) = residuals(a, &d, &z);
        assert!(
            r <= 1e-13 * scale * N as f64,
            "residual {r} (scale {scale})"
        );
        assert!(o <= 1e-13 * N as f64, "orthogonality {o}");
        // The eigenvalues equal nalgebra's (sorted).
        let m = nalgebra::DMatrix::from_fn(N, N, |i, j| a[i][j]);
        let mut theirs: Vec<f64> = m.symmetric_eigenvalues().iter().copied().collect();
        let mut ours = d.to_vec();
        theirs.sort_by(f64::total_cmp);
        ours.sort_by(f64::total_cmp);
        for (x, y) in ours.iter().zip(&theirs) {
            assert!((x - y).abs() <= 1e-12 * scale * N as f64, "{x} vs {y}");
        }
    }

    #[test]
    fn random_matrices_of_every_size_used_decompose() {
        for seed in 0..200 {
            check(&random_symmetric::<1>(seed));
            check(&random_symmetric::<2>(seed));
            check(&random_symmetric::<3>(seed));
            check(&random_symmetric::<6>(seed));
            check(&random_symmetric::<9>(seed));
            check(&random_symmetric::<12>(seed));
        }
    }

    #[test]
    fn degenerate_matrices_decompose() {
        // Zero, identity, diagonal, repeated eigenvalues, rank one, already tridiagonal,
        // entries of very different scales.
        check(&[[0.0; 9]; 9]);
        let mut eye = [[0.0; 9]; 9];
        for (i, row) in eye.iter_mut().enumerate() {
            row[i] = 1.0;
        }
        check(&eye);
        let mut diag = [[0.0; 9]; 9];
        for (i, row) in diag.iter_mut().enumerate() {
            row[i] = (i as f64 - 4.0) * 1e3;
        }
        check(&diag);
        let v: [f64; 9] = std::array::from_fn(|i| (i as f64 + 1.0).sqrt());
        let rank_one: [[f64; 9]; 9] = std::array::from_fn(|i| std::array::from_fn(|j| v[i] * v[j]));
        check(&rank_one);
        let mut tri = [[0.0; 6]; 6];
        for i in 0..6 {
            tri[i][i] = 2.0;
            if i > 0 {
                tri[i][i - 1] = -1.0;
                tri[i - 1][i] = -1.0;
            }
        }
        check(&tri);
        let mut scaled = random_symmetric::<9>(7);
        for (i, row) in scaled.iter_mut().enumerate() {
            for (j, x) in row.iter_mut().enumerate() {
                *x *= 10f64.powi(i as i32 - 4) * 10f64.powi(j as i32 - 4);
            }
        }
        let (d, z) = symmetric_eigen(&scaled).expect("converges");
        let (r, _) = residuals(&scaled, &d, &z);
        assert!(r <= 1e-12 * 1e8, "graded matrix residual {r}");
    }

    #[test]
    fn the_projection_is_the_nearest_psd_matrix() {
        for seed in 0..100 {
            let a = random_symmetric::<9>(seed);
            let p = project_psd(&a).expect("converges");
            // PSD: its eigenvalues are ≥ −round-off; A − P is negative semidefinite (the
            // clipped part), and P commutes with A (same eigenvectors).
            let (dp, _) = symmetric_eigen(&p).expect("converges");
            assert!(dp.iter().all(|&l| l >= -1e-13), "{dp:?}");
            let diff: [[f64; 9]; 9] =
                std::array::from_fn(|i| std::array::from_fn(|j| a[i][j] - p[i][j]));
            let (dd, _) = symmetric_eigen(&diff).expect("converges");
            assert!(dd.iter().all(|&l| l <= 1e-13), "{dd:?}");
            for i in 0..9 {
                for j in 0..9 {
                    assert_eq!(p[i][j], p[j][i]);
                    let ap: f64 = (0..9).map(|k| a[i][k] * p[k][j]).sum();
                    let pa: f64 = (0..9).map(|k| p[i][k] * a[k][j]).sum();
                    assert!((ap - pa).abs() < 1e-12, "{ap} vs {pa}");
                }
            }
        }
        let mut pd = random_symmetric::<6>(3);
        for (i, row) in pd.iter_mut().enumerate() {
            row[i] += 10.0;
        }
        let p = project_psd(&pd).expect("converges");
        for i in 0..6 {
            for j in 0..6 {
                assert!((p[i][j] - pd[i][j]).abs() < 1e-13);
            }
        }
    }

    #[test]
    fn non_finite_input_gives_none() {
        let mut a = random_symmetric::<3>(1);
        a[2][1] = f64::NAN;
        assert!(symmetric_eigen(&a).is_none());
    }
}
