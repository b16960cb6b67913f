//! Invertible corotational elements (Irving, Teran & Fedkiw 2004, "Invertible finite elements
//! for robust simulation of large deformation"; the definite tangent of Teran, Sifakis, Irving
//! & Fedkiw 2005, "Robust quasistatic finite elements and flesh simulation", §4–5).
//!
//! **Diagonalization** (Irving §4): `F = U F̂ Vᵀ` with `U`, `V` proper rotations and `F̂`
//! diagonal; when `det F < 0` the entry of smallest magnitude is negative (the SVD's column of
//! `U` or `V` with a negative determinant is negated together with that singular value). The
//! element's rotation is `R = U Vᵀ` and `RᵀF = V F̂ Vᵀ`, so an inverted element is a proper
//! rotation of a *reflected* stretch, not a rotation that turned it inside out: the linear
//! stress of `F̂ − I` then pushes the negative entry back through zero.
//!
//! **Stress**: for the corotational energy `Ψ = μ ‖F̂ − I‖² + λ/2 tr(F̂ − I)²` the diagonal
//! stress is `P̂ = 2μ (F̂ − I) + λ tr(F̂ − I) I` and `P = U P̂ Vᵀ` (the same as `R σ(RᵀF)` of
//! `super::corotational`). Irving §5 clamps `F̂` at a compression threshold and extends
//! `P̂` linearly beyond it, to bound laws whose stress blows up as `F̂ᵢ → 0`; this `P̂` is
//! already affine in `F̂`, so its linear extension is itself and nothing needs clamping.
//!
//! **Tangent** (Teran et al. 2005 eq. 4–6): in the diagonal frame `dP̂ = Uᵀ dP V` depends on
//! `dF̂ = Uᵀ dF V` through the 3×3 block `∂P̂ᵢ/∂F̂ⱼ = 2μ δᵢⱼ + λ` on the diagonal entries and,
//! for each pair `i < j`, a 2×2 block on `(dF̂ᵢⱼ, dF̂ⱼᵢ)` whose eigenvalues are
//! `(P̂ᵢ − P̂ⱼ)/(F̂ᵢ − F̂ⱼ) = 2μ` (symmetric mode) and `(P̂ᵢ + P̂ⱼ)/(F̂ᵢ + F̂ⱼ)` (rotation
//! mode, eigenvectors `(1, ±1)/√2`). The rotation-mode eigenvalue is singular as
//! `F̂ᵢ + F̂ⱼ → 0` and negative under strong compression or inversion; clamping it at 0 (with
//! the denominator kept away from 0) makes every block positive semi-definite, so the element
//! stiffness is too. Where it is not clamped the tangent is the exact `dP/dF` (tested against
//! finite differences).

use super::Lame;
use nalgebra::{Matrix3, Vector3};

/// `F = U diag(f̂) Vᵀ` with `U`, `V` proper rotations and `f̂` sorted as the SVD gives it, the
/// entry of smallest magnitude negative when `det F < 0` (Irving et al. 2004 §4).
pub fn signed_svd(f: &Matrix3<f64>) -> (Matrix3<f64>, Vector3<f64>, Matrix3<f64>) {
    let svd = f.svd(true, true);
    let (Some(mut u), Some(v_t)) = (svd.u, svd.v_t) else {
        return (
            Matrix3::identity(),
            Vector3::repeat(1.0),
            Matrix3::identity(),
        );
    };
    let mut v = v_t.transpose();
    let mut s = svd.singular_values;
    let k = s.imin();
    if u.determinant() < 0.0 {
        u.column_mut(k).neg_mut();
        s[k] = -s[k];
    }
    if v.determinant() < 0.0 {
        v.column_mut(k).neg_mut();
        s[k] = -s[k];
    }
    (u, s, v)
}

/// The diagonal stress `P̂ = 2μ (f̂ − 1) + λ Σ(f̂ − 1)` of the corotational energy.
pub fn diagonal_stress(s: &Vector3<f64>, lame: Lame) -> Vector3<f64> {
    let e = s - Vector3::repeat(1.0);
    2.0 * lame.mu * e + Vector3::repeat(lame.lambda * e.sum())
}

/// Smallest `|F̂ᵢ + F̂ⱼ|` used in the rotation-mode eigenvalue (relative to the stretches).
pub(crate) const MIN_PAIR_SUM: f64 = 1e-6;

/// The definite tangent `dP[dF]` at `F = U diag(s) Vᵀ` (see the module notes): exact where
/// every rotation-mode eigenvalue is positive, positive semi-definite everywhere.
pub fn definite_differential(
    u: &Matrix3<f64>,
    s: &Vector3<f64>,
    v: &Matrix3<f64>,
    lame: Lame,
    df: &Matrix3<f64>,
) -> Matrix3<f64> {
    let p = diagonal_stress(s, lame);
    let dfh = u.transpose() * df * v;
    let diag = Vector3::new(dfh[(0, 0)], dfh[(1, 1)], dfh[(2, 2)]);
    let ddiag = 2.0 * lame.mu * diag + Vector3::repeat(lame.lambda * diag.sum());
    let mut dph = Matrix3::from_diagonal(&ddiag);
    let scale = s.abs().max().max(1.0);
    for (i, j) in [(0, 1), (0, 2), (1, 2)] {
        let sym = 2.0 * lame.mu;
        let sum = s[i] + s[j];
        let denom = if sum.abs() < MIN_PAIR_SUM * scale {
            MIN_PAIR_SUM * scale
        } else {
            sum
        };
        let rot = ((p[i] + p[j]) / denom).max(0.0);
        add_pair_block(&mut dph, &dfh, i, j, sym, rot);
    }
    u * dph * v.transpose()
}

/// Writes the 2×2 block of the pair `(i, j)` into the diagonal-frame differential `dph`:
/// `(dP̂ᵢⱼ, dP̂ⱼᵢ)` from `(dF̂ᵢⱼ, dF̂ⱼᵢ)` with eigenvalue `sym` on `(1, 1)/√2` and `rot` on
/// `(1, −1)/√2` (Teran et al. 2005 eq. 6).
fn add_pair_block(
    dph: &mut Matrix3<f64>,
    dfh: &Matrix3<f64>,
    i: usize,
    j: usize,
    sym: f64,
    rot: f64,
) {
    let (a, b) = (0.5 * (sym + rot), 0.5 * (sym - rot));
    dph[(i, j)] = a * dfh[(i, j)] + b * dfh[(j, i)];
    dph[(j, i)] = b * dfh[(i, j)] + a * dfh[(j, i)];
}

/// The three pair blocks, pairs `(0, 1)`, `(0, 2)`, `(1, 2)` in that order, with their
/// symmetric- and rotation-mode eigenvalues (see `add_pair_block`).
pub(crate) fn add_pair_blocks(
    dph: &mut Matrix3<f64>,
    dfh: &Matrix3<f64>,
    sym: &[f64; 3],
    rot: &[f64; 3],
) {
    for (q, (i, j)) in [(0, 1), (0, 2), (1, 2)].into_iter().enumerate() {
        add_pair_block(dph, dfh, i, j, sym[q], rot[q]);
    }
}

#[cfg(test)]
mod tests {
    use super::super::corotational::stress;
    use super::super::hyperelastic::checks::random_f;
    use super::super::test_support::{lame, Lcg};
    use super::*;
    use crate::fem::polar::svd_rotation;

    fn stress_of(f: &Matrix3<f64>) -> Matrix3<f64> {
        let (u, s, v) = signed_svd(f);
        u * Matrix3::from_diagonal(&diagonal_stress(&s, lame())) * v.transpose()
    }

    #[test]
    fn signed_svd_reconstructs_f_with_proper_rotations() {
        let mut rng = Lcg(5);
        let mut n_inverted = 0;
        for k in 0..200 {
            let mut f = random_f(&mut rng, 0.3);
            if k % 2 == 1 {
                // Reflect: an inverted element.
                f.column_mut(0).neg_mut();
            }
            let (u, s, v) = signed_svd(&f);
            assert!((u.determinant() - 1.0).abs() < 1e-10 && (v.determinant() - 1.0).abs() < 1e-10);
            let back = u * Matrix3::from_diagonal(&s) * v.transpose();
            assert!((back - f).norm() < 1e-10 * f.norm());
            let inverted = usize::from(f.determinant() < 0.0);
            assert_eq!(s.iter().filter(|x| **x < 0.0).count(), inverted);
            n_inverted += inverted;
            // The stress is the corotational one with the SVD rotation.
            let p = stress(&f, &svd_rotation(&f), lame());
            assert!((stress_of(&f) - p).norm() < 1e-9 * p.norm().max(1.0));
        }
        assert!(n_inverted >= 90, "{n_inverted} inverted cases");
    }

    #[test]
    fn tangent_is_exact_where_not_clamped_and_definite_everywhere() {
        let mut rng = Lcg(11);
        let (mut checked, mut clamped) = (0, 0);
        for k in 0..200 {
            let mut f = random_f(&mut rng, 0.4);
            if k % 3 == 0 {
                f.column_mut(1).neg_mut();
            }
            let (u, s, v) = signed_svd(&f);
            let p = diagonal_stress(&s, lame());
            let exact = [(0, 1), (0, 2), (1, 2)]
                .iter()
                .all(|&(i, j)| (p[i] + p[j]) / (s[i] + s[j]) > 0.0);
            // Definite: dF : dP[dF] ≥ 0 for random dF.
            for _ in 0..5 {
                let df = Matrix3::from_fn(|_, _| rng.uniform());
                let dp = definite_differential(&u, &s, &v, lame(), &df);
                assert!(df.dot(&dp) >= -1e-9 * dp.norm() * df.norm());
            }
            if exact {
                checked += 1;
                let df = Matrix3::from_fn(|_, _| rng.uniform());
                let h = 1e-6;
                let fd = (stress_of(&(f + h * df)) - stress_of(&(f - h * df))) / (2.0 * h);
                let dp = definite_differential(&u, &s, &v, lame(), &df);
                assert!(
                    (dp - fd).norm() <= 1e-5 * fd.norm().max(1.0),
                    "{dp} vs {fd}"
                );
            } else {
                clamped += 1;
            }
        }
        assert!(
            checked > 50 && clamped > 10,
            "{checked} exact, {clamped} clamped"
        );
    }
}
