//! Rotation extraction: the rotation `R` of the polar decomposition `F = R S`.
//!
//! Fast path: Higham's scaled Newton iteration `X ← ½(γX + γ⁻¹X⁻ᵀ)` (Hauth & Straßer 2004,
//! eq. 4.15–4.17), which converges quadratically to the orthogonal polar factor when
//! `det F > 0`. Robust path (inverted, degenerate or ill-conditioned `F`): SVD `F = U Σ Vᵀ`,
//! `R = U Vᵀ`, and when `det(U Vᵀ) < 0` the column of `U` belonging to the smallest singular
//! value is negated, so `R` is always a proper rotation and `S = RᵀF` stays symmetric
//! (Irving et al. 2004). nalgebra's `polar()` may return a reflection, hence this module.

use nalgebra::Matrix3;

/// Smallest `det F / ‖F‖³` for which the Newton iteration is used.
const NEWTON_MIN_REL_DET: f64 = 1e-3;
const NEWTON_MAX_ITERS: usize = 20;
const NEWTON_TOL: f64 = 1e-13;

/// The proper rotation of the polar decomposition of `f` (robust to inversion).
pub fn rotation(f: &Matrix3<f64>) -> Matrix3<f64> {
    let scale = f.norm();
    if scale <= 0.0 || !scale.is_finite() {
        return Matrix3::identity();
    }
    let det = f.determinant();
    if det > NEWTON_MIN_REL_DET * scale.powi(3) {
        if let Some(r) = newton_polar(f) {
            return r;
        }
    }
    svd_rotation(f)
}

/// Scaled Newton iteration for the orthogonal polar factor (`det f > 0` assumed).
/// `X⁻ᵀ` comes from cofactors: for `X = [x₀ x₁ x₂]`, `X⁻ᵀ = [x₁×x₂, x₂×x₀, x₀×x₁] / det X`.
/// Frobenius scaling is used while the iterate is far from orthogonal; once the change is
/// below 1e-7, quadratic convergence makes one more iteration reach round-off.
fn newton_polar(f: &Matrix3<f64>) -> Option<Matrix3<f64>> {
    let mut x = *f;
    let mut scaled = true;
    for _ in 0..NEWTON_MAX_ITERS {
        let (c0, c1, c2) = (x.column(0), x.column(1), x.column(2));
        let cof = Matrix3::from_columns(&[c1.cross(&c2), c2.cross(&c0), c0.cross(&c1)]);
        let det = c0.dot(&cof.column(0));
        if det <= 0.0 || !det.is_finite() {
            return None;
        }
        let inv_t = cof / det;
        let gamma = if scaled {
            (inv_t.norm_squared() / x.norm_squared()).sqrt().sqrt()
        } else {
            1.0
        };
        let next = 0.5 * (gamma * x + inv_t / gamma);
        let change = (next - x).norm();
        x = next;
        if change <= NEWTON_TOL {
            return Some(x);
        }
        if change < 1e-7 {
            let (c0, c1, c2) = (x.column(0), x.column(1), x.column(2));
            let cof = Matrix3::from_columns(&[c1.cross(&c2), c2.cross(&c0), c0.cross(&c1)]);
            let det = c0.dot(&cof.column(0));
            return Some(0.5 * (x + cof / det));
        }
        scaled = change > 1e-2;
    }
    None
}

/// Rotation from the SVD with the sign fix for reflections.
pub fn svd_rotation(f: &Matrix3<f64>) -> Matrix3<f64> {
    let svd = f.svd(true, true);
    let (Some(mut u), Some(v_t)) = (svd.u, svd.v_t) else {
        return Matrix3::identity();
    };
    if (u * v_t).determinant() < 0.0 {
        let smallest = svd.singular_values.imin();
        let mut col = u.column_mut(smallest);
        col *= -1.0;
    }
    u * v_t
}

#[cfg(test)]
mod tests {
    use super::*;
    use nalgebra::Rotation3;

    fn is_rotation(r: &Matrix3<f64>) -> bool {
        (r.transpose() * r - Matrix3::identity()).norm() < 1e-10
            && (r.determinant() - 1.0).abs() < 1e-10
    }

    fn sym_err(m: &Matrix3<f64>) -> f64 {
        (m - m.transpose()).norm()
    }

    #[test]
    fn recovers_the_rotation_of_rotated_stretches() {
        let q = Rotation3::from_euler_angles(0.7, -0.4, 2.5).into_inner();
        let s = Matrix3::new(1.3, 0.1, -0.2, 0.1, 0.8, 0.05, -0.2, 0.05, 1.1);
        let r = rotation(&(q * s));
        assert!((r - q).norm() < 1e-10);
        assert!((svd_rotation(&(q * s)) - q).norm() < 1e-10);
    }

    #[test]
    fn inverted_and_degenerate_inputs_give_proper_rotations() {
        let q = Rotation3::from_euler_angles(-1.2, 0.3, 0.9).into_inner();
        let cases = [
            q * Matrix3::from_diagonal(&nalgebra::Vector3::new(1.0, 1.0, -0.5)), // inverted
            q * Matrix3::from_diagonal(&nalgebra::Vector3::new(1.0, 0.5, 0.0)),  // flat
            q * Matrix3::from_diagonal(&nalgebra::Vector3::new(2.0, 0.0, 0.0)), // collapsed to a line
            -Matrix3::identity(),                                               // point reflection
            Matrix3::zeros(),
        ];
        for f in cases {
            let r = rotation(&f);
            assert!(is_rotation(&r), "{f}: {r}");
            assert!(sym_err(&(r.transpose() * f)) < 1e-9, "{f}");
        }
        // For an inversion along one axis of q, R keeps the other two axes.
        let r = rotation(&cases[0]);
        assert!((r - q).norm() < 1e-9);
    }

    #[test]
    fn agrees_with_svd_on_random_matrices() {
        let mut seed = 12345u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((seed >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        };
        for _ in 0..200 {
            let f = Matrix3::identity() + 0.6 * Matrix3::from_fn(|_, _| rnd());
            let (a, b) = (rotation(&f), svd_rotation(&f));
            assert!(is_rotation(&a));
            assert!((a - b).norm() < 1e-8, "{f}");
        }
    }
}
