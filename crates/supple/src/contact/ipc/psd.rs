//! Projection of per-stencil Hessians onto the positive semidefinite cone (Li et al. 2020,
//! "Incremental Potential Contact", §4.1: each local barrier/friction Hessian is projected
//! before assembly so that Newton's system stays positive definite).

use nalgebra::{DMatrix, SMatrix, SymmetricEigen};

/// The nearest symmetric positive semidefinite matrix (in the Frobenius norm) to the
/// symmetric part `S = (m + mᵀ)/2` of `m`: `V max(Λ, 0) Vᵀ` with `S = V Λ Vᵀ`
/// (IPC §4.1's per-stencil projection).
///
/// Fast path: when a Cholesky factorization of `S` succeeds (`S` positive definite), `S`
/// is returned unchanged — bit-for-bit `m` when `m` is symmetric. Otherwise the
/// eigendecomposition is nalgebra's `SymmetricEigen` (on a heap copy: its fixed-size form
/// needs typenum bounds a generic `N` cannot state). Input with a non-finite entry is
/// returned unchanged (the NaN/∞ propagates rather than being hidden); if the
/// eigensolver fails to converge (not observed for finite input) the zero matrix is
/// returned, which is PSD.
pub fn project_psd<const N: usize>(m: &SMatrix<f64, N, N>) -> SMatrix<f64, N, N> {
    if m.iter().any(|x| !x.is_finite()) {
        return *m;
    }
    let sym = (m + m.transpose()) * 0.5;
    if sym.cholesky().is_some() {
        return sym;
    }
    let dynamic = DMatrix::from_column_slice(N, N, sym.as_slice());
    let Some(eigen) = SymmetricEigen::try_new(dynamic, f64::EPSILON, 10_000) else {
        return SMatrix::zeros();
    };
    let mut out = SMatrix::<f64, N, N>::zeros();
    for (k, &lambda) in eigen.eigenvalues.iter().enumerate() {
        if lambda > 0.0 {
            let v = eigen.eigenvectors.column(k);
            for j in 0..N {
                for i in 0..N {
                    out[(i, j)] += lambda * v[i] * v[j];
                }
            }
        }
    }
    // Exactly symmetric output.
    (out + out.transpose()) * 0.5
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
    let mut used = [0usize; 4];
    let mut k = 0;
    for a in 0..4 {
        if (3 * a..3 * a + 3).any(|r| sym.row(r).iter().any(|&x| x != 0.0)) {
            used[k] = a;
            k += 1;
        }
    }
    match k {
        0 => sym,
        1 => project_block::<3>(&sym, &used[..1]),
        2 => project_block::<6>(&sym, &used[..2]),
        3 => project_block::<9>(&sym, &used[..3]),
        _ => project_stack12(&sym),
    }
}

/// `V max(Λ, 0) Vᵀ` of the symmetric `sym` (12×12, on the stack); `sym` itself when its
/// Cholesky factorization succeeds.
fn project_stack12(sym: &SMatrix<f64, 12, 12>) -> SMatrix<f64, 12, 12> {
    if sym.cholesky().is_some() {
        return *sym;
    }
    let Some(eigen) = SymmetricEigen::try_new(*sym, f64::EPSILON, 10_000) else {
        return SMatrix::zeros();
    };
    let mut out = SMatrix::<f64, 12, 12>::zeros();
    for (k, &lambda) in eigen.eigenvalues.iter().enumerate() {
        if lambda > 0.0 {
            let v = eigen.eigenvectors.column(k);
            out += lambda * v * v.transpose();
        }
    }
    (out + out.transpose()) * 0.5
}

/// The projection of the rows and columns of the vertex blocks `used` of `sym` (`K = 3 ×
/// used.len()`), the other entries zero.
fn project_block<const K: usize>(sym: &SMatrix<f64, 12, 12>, used: &[usize]) -> SMatrix<f64, 12, 12>
where
    SMatrix<f64, K, K>: ProjectSmall,
{
    let index = |r: usize| 3 * used[r / 3] + r % 3;
    let small = SMatrix::<f64, K, K>::from_fn(|i, j| sym[(index(i), index(j))]);
    let projected = small.project_small();
    let mut out = SMatrix::<f64, 12, 12>::zeros();
    for j in 0..K {
        for i in 0..K {
            out[(index(i), index(j))] = projected[(i, j)];
        }
    }
    out
}

/// The stack eigendecomposition for the sizes [`project_block`] uses (nalgebra's
/// fixed-size `SymmetricEigen` needs bounds a generic `K` cannot state).
trait ProjectSmall {
    fn project_small(&self) -> Self;
}

macro_rules! project_small {
    ($($k:literal),*) => {$(
        impl ProjectSmall for SMatrix<f64, $k, $k> {
            fn project_small(&self) -> Self {
                if self.cholesky().is_some() {
                    return *self;
                }
                let Some(eigen) = SymmetricEigen::try_new(*self, f64::EPSILON, 10_000) else {
                    return Self::zeros();
                };
                let mut out = Self::zeros();
                for (k, &lambda) in eigen.eigenvalues.iter().enumerate() {
                    if lambda > 0.0 {
                        let v = eigen.eigenvectors.column(k);
                        out += lambda * v * v.transpose();
                    }
                }
                (out + out.transpose()) * 0.5
            }
        }
    )*};
}

project_small!(3, 6, 9);

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
