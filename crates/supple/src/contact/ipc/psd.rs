//! Projection of per-stencil Hessians onto the positive semidefinite cone (Li et al. 2020,
//! "Incremental Potential Contact", §4.1: each local barrier/friction Hessian is projected
//! before assembly so that Newton's system stays positive definite).

use crate::linalg::small_eigen;
use nalgebra::{Matrix3, SMatrix};

/// The nearest symmetric positive semidefinite matrix (in the Frobenius norm) to the
/// symmetric part `S = (m + mᵀ)/2` of `m`: `V max(Λ, 0) Vᵀ` with `S = V Λ Vᵀ`
/// (IPC §4.1's per-stencil projection).
///
/// Fast path: when a Cholesky factorization of `S` succeeds (`S` positive definite), `S`
/// is returned unchanged — bit-for-bit `m` when `m` is symmetric. Otherwise the
/// eigendecomposition is [`small_eigen`]'s, on the stack. Input with a non-finite entry is
/// returned unchanged (the NaN/∞ propagates rather than being hidden); if the
/// eigensolver fails to converge (not observed for finite input) the zero matrix is
/// returned, which is PSD.
pub fn project_psd<const N: usize>(m: &SMatrix<f64, N, N>) -> SMatrix<f64, N, N> {
    if m.iter().any(|x| !x.is_finite()) {
        return *m;
    }
    let sym = (m + m.transpose()) * 0.5;
    project_symmetric(&sym)
}

/// `V max(Λ, 0) Vᵀ` of the symmetric `sym`; `sym` itself when its Cholesky factorization
/// succeeds; zero if the eigensolver fails.
fn project_symmetric<const N: usize>(sym: &SMatrix<f64, N, N>) -> SMatrix<f64, N, N> {
    if sym.cholesky().is_some() {
        return *sym;
    }
    eigen_projection(sym)
}

/// `V max(Λ, 0) Vᵀ` of the symmetric `sym` by [`small_eigen`]; zero if it fails.
fn eigen_projection<const N: usize>(sym: &SMatrix<f64, N, N>) -> SMatrix<f64, N, N> {
    let rows: [[f64; N]; N] = std::array::from_fn(|i| std::array::from_fn(|j| sym[(i, j)]));
    match small_eigen::project_psd(&rows) {
        Some(p) => SMatrix::from_fn(|i, j| p[i][j]),
        None => SMatrix::zeros(),
    }
}

/// [`project_psd`] for the 12×12 stencils of point–triangle and edge–edge pairs, with the
/// eigendecomposition on the stack (the contact step's steady state allocates nothing).
///
/// A pair whose closest points are a vertex and a vertex, or a vertex and an edge, has
/// whole zero rows for the vertices not involved (the distance's case selection pulls the
/// reduced jet back onto the four vertices), and zero rows and columns are decoupled from
/// the rest: the projection of the 12×12 matrix is the projection of its non-zero 3k×3k
/// block (k the vertices involved), put back. So the eigendecomposition runs on 6×6 or 9×9
/// where it can — in resting face-on-face contact most point–triangle pairs are such pairs.
pub fn project_psd12(m: &SMatrix<f64, 12, 12>) -> SMatrix<f64, 12, 12> {
    if m.iter().any(|x| !x.is_finite()) {
        return *m;
    }
    let sym = (m + m.transpose()) * 0.5;
    let (used, k) = used_vertices(&sym);
    match k {
        0 => sym,
        1 => project_block::<3>(&sym, &used[..1]),
        2 => project_block::<6>(&sym, &used[..2]),
        3 => project_block::<9>(&sym, &used[..3]),
        _ => project_stack12(&sym),
    }
}

/// The vertices (0..4) whose three rows of `sym` are not all zero, in order, and how many.
fn used_vertices(sym: &SMatrix<f64, 12, 12>) -> ([usize; 4], usize) {
    let mut used = [0usize; 4];
    let mut k = 0;
    for a in 0..4 {
        if (3 * a..3 * a + 3).any(|r| sym.row(r).iter().any(|&x| x != 0.0)) {
            used[k] = a;
            k += 1;
        }
    }
    (used, k)
}

/// [`project_psd12`] for the stencil of a function of its vertices' *differences* alone (a
/// body–body pair's barrier: `b(d²)` and the mollifier do not change when all four points
/// translate together), at the cost of an eigendecomposition three sizes smaller.
///
/// Such a Hessian `H` maps every rigid translation `1 ⊗ t` of the vertices it involves to
/// zero. With `Q` (k × (k−1)) an orthonormal basis of the complement of `1` in `ℝᵏ`, `H = (Q ⊗
/// I₃) H' (Q ⊗ I₃)ᵀ` for `H' = (Q ⊗ I₃)ᵀ H (Q ⊗ I₃)`, and because `Q ⊗ I₃` has orthonormal
/// columns, `H'`'s eigenvectors mapped back are `H`'s (the translations are the rest, at
/// eigenvalue 0). So the Frobenius-nearest PSD matrix of `H` is `(Q ⊗ I₃) proj(H') (Q ⊗ I₃)ᵀ`:
/// the same matrix as [`project_psd12`]'s, up to rounding, from a 9×9 eigendecomposition
/// instead of 12×12 for four vertices (6×6 for three, 3×3 for two). An orthonormal `Q`
/// matters: positions relative to one vertex (not orthonormal) give another, stiffer matrix
/// (see `BarrierHessian::Projected`). Any part of `m` that does not vanish on translations
/// (round-off only, for the stencils it is used on) is dropped.
pub fn project_psd12_translation_invariant(m: &SMatrix<f64, 12, 12>) -> SMatrix<f64, 12, 12> {
    if m.iter().any(|x| !x.is_finite()) {
        return *m;
    }
    let sym = (m + m.transpose()) * 0.5;
    let (used, k) = used_vertices(&sym);
    match k {
        0 => sym,
        // A function of one point that is translation invariant is constant: what is there
        // is not of that kind, so it is projected as it is.
        1 => project_block::<3>(&sym, &used[..1]),
        2 => project_relative::<3>(&sym, &used[..2], &COMPLEMENT_2),
        3 => project_relative::<6>(&sym, &used[..3], &COMPLEMENT_3),
        _ => project_relative::<9>(&sym, &used[..4], &COMPLEMENT_4),
    }
}

const H: f64 = 0.5;
/// Orthonormal bases `Q` of the complement of `(1, …, 1)` in `ℝᵏ`, row `a` for vertex `a`
/// (unused columns zero): `(1, −1)/√2`; two Helmert columns for three; the last three columns
/// of the 4×4 Hadamard matrix / 2 for four.
const COMPLEMENT_2: [[f64; 3]; 4] = [
    [std::f64::consts::FRAC_1_SQRT_2, 0.0, 0.0],
    [-std::f64::consts::FRAC_1_SQRT_2, 0.0, 0.0],
    [0.0; 3],
    [0.0; 3],
];
const COMPLEMENT_3: [[f64; 3]; 4] = [
    [std::f64::consts::FRAC_1_SQRT_2, 0.408_248_290_463_863, 0.0],
    [-std::f64::consts::FRAC_1_SQRT_2, 0.408_248_290_463_863, 0.0],
    [0.0, -0.816_496_580_927_726, 0.0],
    [0.0; 3],
];
const COMPLEMENT_4: [[f64; 3]; 4] = [[H, H, H], [H, -H, -H], [-H, H, -H], [-H, -H, H]];

/// `(Q ⊗ I₃) proj((Q ⊗ I₃)ᵀ S (Q ⊗ I₃)) (Q ⊗ I₃)ᵀ` on the vertex blocks `used` of `sym`
/// (`R = 3 (used.len() − 1)`), the other entries zero. (Index loops: the same indices run
/// over `q`, the blocks and the reduced matrix.)
#[allow(clippy::needless_range_loop)]
fn project_relative<const R: usize>(
    sym: &SMatrix<f64, 12, 12>,
    used: &[usize],
    q: &[[f64; 3]; 4],
) -> SMatrix<f64, 12, 12> {
    let (k, r) = (used.len(), R / 3);
    let block = |m: &SMatrix<f64, 12, 12>, a: usize, b: usize| -> Matrix3<f64> {
        m.fixed_view::<3, 3>(3 * a, 3 * b).into_owned()
    };
    // T = S (Q ⊗ I): block (a, j) = Σ_b q[b][j] S_ab, then H' = (Q ⊗ I)ᵀ T.
    let mut t = [[Matrix3::<f64>::zeros(); 3]; 4];
    for a in 0..k {
        for b in 0..k {
            let s_ab = block(sym, used[a], used[b]);
            for j in 0..r {
                t[a][j] += q[b][j] * s_ab;
            }
        }
    }
    let mut reduced = SMatrix::<f64, R, R>::zeros();
    for i in 0..r {
        for j in 0..r {
            let mut h = Matrix3::zeros();
            for (a, row) in t.iter().enumerate().take(k) {
                h += q[a][i] * row[j];
            }
            reduced.fixed_view_mut::<3, 3>(3 * i, 3 * j).copy_from(&h);
        }
    }
    // Exactly symmetric before the eigendecomposition.
    let reduced = (reduced + reduced.transpose()) * 0.5;
    // No Cholesky test first: a pair's barrier Hessian is indefinite on the rotations of
    // its points (the distance is invariant under them, its second derivative along them is
    // not zero), and on `contact_10k` not one of 266,000 reduced Hessians was definite.
    let projected = eigen_projection(&reduced);
    // Back: U = proj (Q ⊗ I)ᵀ, block (i, b) = Σ_j q[b][j] P_ij; out_ab = Σ_i q[a][i] U_ib.
    let mut u = [[Matrix3::<f64>::zeros(); 4]; 3];
    for (i, row) in u.iter_mut().enumerate().take(r) {
        for (b, ub) in row.iter_mut().enumerate().take(k) {
            for j in 0..r {
                *ub += q[b][j] * projected.fixed_view::<3, 3>(3 * i, 3 * j);
            }
        }
    }
    let mut out = SMatrix::<f64, 12, 12>::zeros();
    for a in 0..k {
        for b in 0..k {
            let mut h = Matrix3::zeros();
            for (i, row) in u.iter().enumerate().take(r) {
                h += q[a][i] * row[b];
            }
            out.fixed_view_mut::<3, 3>(3 * used[a], 3 * used[b])
                .copy_from(&h);
        }
    }
    (out + out.transpose()) * 0.5
}

/// `V max(Λ, 0) Vᵀ` of the symmetric `sym` (12×12, on the stack); `sym` itself when its
/// Cholesky factorization succeeds.
fn project_stack12(sym: &SMatrix<f64, 12, 12>) -> SMatrix<f64, 12, 12> {
    project_symmetric(sym)
}

/// The projection of the rows and columns of the vertex blocks `used` of `sym` (`K = 3 ×
/// used.len()`), the other entries zero.
fn project_block<const K: usize>(
    sym: &SMatrix<f64, 12, 12>,
    used: &[usize],
) -> SMatrix<f64, 12, 12> {
    let index = |r: usize| 3 * used[r / 3] + r % 3;
    let small = SMatrix::<f64, K, K>::from_fn(|i, j| sym[(index(i), index(j))]);
    let projected = project_symmetric(&small);
    let mut out = SMatrix::<f64, 12, 12>::zeros();
    for j in 0..K {
        for i in 0..K {
            out[(index(i), index(j))] = projected[(i, j)];
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stack_projection_equals_the_generic_one() {
        let mut rng = Rng(99);
        for _ in 0..20 {
            let m: SMatrix<f64, 12, 12> = rng.symmetric();
            let (a, b) = (project_psd(&m), project_psd12(&m));
            assert!(
                (a - b).norm() <= 1e-12 * (1.0 + a.norm()),
                "{}",
                (a - b).norm()
            );
        }
    }

    struct Rng(u64);
    impl Rng {
        fn uniform(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
        }
        fn matrix<const R: usize, const C: usize>(&mut self) -> SMatrix<f64, R, C> {
            SMatrix::from_fn(|_, _| 2.0 * self.uniform() - 1.0)
        }
        fn symmetric<const N: usize>(&mut self) -> SMatrix<f64, N, N> {
            let a = self.matrix::<N, N>();
            a + a.transpose()
        }
    }

    #[test]
    fn stencils_with_unused_vertices_project_their_block() {
        // Zero rows and columns for the vertices a pair's distance does not involve (its
        // point–point or point–edge case), anywhere among the four: the reduced projection
        // equals the full one, and the unused rows stay exactly zero.
        let mut rng = Rng(0x5151_a0a0_c3c3_0f0f);
        for used in [
            vec![0, 2],
            vec![1, 3],
            vec![0, 1, 3],
            vec![2],
            vec![0, 1, 2, 3],
        ] {
            let mut m: SMatrix<f64, 12, 12> = rng.symmetric();
            for a in (0..4).filter(|a| !used.contains(a)) {
                for r in 3 * a..3 * a + 3 {
                    m.row_mut(r).fill(0.0);
                    m.column_mut(r).fill(0.0);
                }
            }
            let (full, reduced) = (project_psd(&m), project_psd12(&m));
            assert!(
                (full - reduced).norm() <= 1e-12 * (1.0 + full.norm()),
                "{used:?}"
            );
            for a in (0..4).filter(|a| !used.contains(a)) {
                assert!(reduced.row(3 * a).iter().all(|&x| x == 0.0));
            }
        }
        assert_eq!(
            project_psd12(&SMatrix::zeros()),
            SMatrix::<f64, 12, 12>::zeros()
        );
    }

    /// `C A C` with `C = (I − 11ᵀ/k) ⊗ I₃` on the vertices `used` (the others zero): a
    /// symmetric matrix that maps every translation of those vertices to zero.
    fn translation_invariant(rng: &mut Rng, used: &[usize]) -> SMatrix<f64, 12, 12> {
        let a: SMatrix<f64, 12, 12> = rng.symmetric();
        let k = used.len() as f64;
        let mut c = SMatrix::<f64, 12, 12>::zeros();
        for &i in used {
            for &j in used {
                let w = if i == j { 1.0 - 1.0 / k } else { -1.0 / k };
                for r in 0..3 {
                    c[(3 * i + r, 3 * j + r)] = w;
                }
            }
        }
        c * a * c
    }

    #[test]
    fn the_translation_invariant_projection_equals_the_full_one() {
        let mut rng = Rng(0x0dd5_eed5_1234_9876);
        for used in [
            vec![0, 1, 2, 3],
            vec![0, 1, 2, 3],
            vec![0, 1, 2, 3],
            vec![0, 2, 3],
            vec![1, 2, 3],
            vec![0, 3],
            vec![1, 2],
        ] {
            for _ in 0..5 {
                let m = translation_invariant(&mut rng, &used);
                let (full, reduced) = (project_psd12(&m), project_psd12_translation_invariant(&m));
                assert!(
                    (full - reduced).norm() <= 1e-12 * (1.0 + full.norm()),
                    "{used:?}: {}",
                    (full - reduced).norm()
                );
                assert_eq!(reduced, reduced.transpose());
                for a in (0..4).filter(|a| !used.contains(a)) {
                    assert!(reduced.row(3 * a).iter().all(|&x| x == 0.0));
                }
            }
        }
        // Positive semidefinite input (a Gram matrix of differences) comes back unchanged.
        let b = rng.matrix::<12, 12>();
        let m = {
            let g = b * b.transpose();
            // The centring (I − 11ᵀ/4) ⊗ I₃.
            let k = SMatrix::<f64, 12, 12>::from_fn(|i, j| {
                if i % 3 == j % 3 {
                    if i / 3 == j / 3 {
                        0.75
                    } else {
                        -0.25
                    }
                } else {
                    0.0
                }
            });
            k * g * k
        };
        assert!((project_psd12_translation_invariant(&m) - m).norm() <= 1e-12 * m.norm());
    }

    #[test]
    fn barrier_hessians_of_pairs_project_alike_both_ways() {
        use crate::contact::ipc::distance::{
            edge_edge_distance2_gradient, edge_edge_distance2_hessian,
            point_triangle_distance2_gradient, point_triangle_distance2_hessian,
        };
        use nalgebra::Vector3;
        let mut rng = Rng(0x7a7a_5c5c_0101_2323);
        let point = |rng: &mut Rng| {
            Vector3::new(rng.uniform(), rng.uniform(), rng.uniform()) * 2.0
                - Vector3::new(1.0, 1.0, 1.0)
        };
        for case in 0..200 {
            let p = [
                point(&mut rng),
                point(&mut rng),
                point(&mut rng),
                point(&mut rng),
            ];
            // b' < 0 < b'': the barrier's signs near contact.
            let (db, d2b) = (-1.0 - rng.uniform(), 1.0 + 10.0 * rng.uniform());
            let (g, h) = if case % 2 == 0 {
                (
                    point_triangle_distance2_gradient(&p[0], &p[1], &p[2], &p[3]),
                    point_triangle_distance2_hessian(&p[0], &p[1], &p[2], &p[3]),
                )
            } else {
                (
                    edge_edge_distance2_gradient(&p[0], &p[1], &p[2], &p[3]),
                    edge_edge_distance2_hessian(&p[0], &p[1], &p[2], &p[3]),
                )
            };
            let m = d2b * g * g.transpose() + db * h;
            let (full, reduced) = (project_psd12(&m), project_psd12_translation_invariant(&m));
            assert!(
                (full - reduced).norm() <= 1e-11 * (1.0 + full.norm()),
                "case {case}: {} of {}",
                (full - reduced).norm(),
                full.norm()
            );
        }
    }

    fn min_eigenvalue(m: &SMatrix<f64, 12, 12>) -> f64 {
        m.symmetric_eigenvalues().min()
    }

    #[test]
    fn result_is_psd_and_the_clamped_decomposition() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for _ in 0..50 {
            let m = rng.symmetric::<12>();
            let p = project_psd(&m);
            let scale = m.norm();
            assert!(min_eigenvalue(&p) > -1e-12 * scale);
            assert_eq!(p, p.transpose());
            // Against the fixed-size eigendecomposition.
            let e = m.symmetric_eigen();
            let clamped = e.eigenvalues.map(|l| l.max(0.0));
            let expected =
                e.eigenvectors * SMatrix::from_diagonal(&clamped) * e.eigenvectors.transpose();
            assert!((p - expected).norm() < 1e-12 * scale);
            // Independent characterization of the projection: P ⪰ 0, P − M ⪰ 0, P (P − M) = 0.
            let r = p - m;
            assert!(min_eigenvalue(&r) > -1e-12 * scale);
            assert!((p * r).norm() < 1e-12 * scale * scale);
        }
    }

    #[test]
    fn identity_on_psd_input() {
        let mut rng = Rng(0x1234_4321_abcd_dcba);
        for _ in 0..20 {
            // Positive definite: the fast path returns the very same matrix.
            let b = rng.matrix::<12, 12>();
            let pd = b * b.transpose() + SMatrix::<f64, 12, 12>::identity() * 1e-3;
            assert_eq!(project_psd(&pd), pd);
            // Rank-deficient PSD: equal up to rounding.
            let b = rng.matrix::<12, 5>();
            let psd = b * b.transpose();
            assert!((project_psd(&psd) - psd).norm() < 1e-12 * psd.norm());
        }
        let z = SMatrix::<f64, 6, 6>::zeros();
        assert_eq!(project_psd(&z), z);
    }

    #[test]
    fn small_sizes_and_special_input() {
        let m = SMatrix::<f64, 1, 1>::new(-3.0);
        assert_eq!(project_psd(&m)[(0, 0)], 0.0);
        let m = SMatrix::<f64, 2, 2>::new(1.0, 2.0, 2.0, 1.0); // eigenvalues 3, −1
        let p = project_psd(&m);
        let expected = SMatrix::<f64, 2, 2>::new(1.5, 1.5, 1.5, 1.5);
        assert!((p - expected).norm() < 1e-14);
        // Negative definite: zero.
        let mut rng = Rng(0x7777_1111_2222_3333);
        let b = rng.matrix::<9, 9>();
        let nd = -(b * b.transpose()) - SMatrix::<f64, 9, 9>::identity();
        assert!(project_psd(&nd).norm() < 1e-12);
        // The symmetric part of a non-symmetric matrix is projected.
        let a = rng.matrix::<3, 3>();
        let sym = (a + a.transpose()) * 0.5;
        assert!((project_psd(&a) - project_psd(&sym)).norm() < 1e-15);
        // Non-finite input comes back as is, without hanging.
        let mut bad = SMatrix::<f64, 3, 3>::identity();
        bad[(1, 2)] = f64::NAN;
        assert!(project_psd(&bad)[(1, 2)].is_nan());
    }
}
