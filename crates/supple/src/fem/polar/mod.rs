//! Rotation extraction: the rotation `R` of the polar decomposition `F = R S`.
//!
//! Fast path: Higham's scaled Newton iteration `X ← ½(γX + γ⁻¹X⁻ᵀ)` (Hauth & Straßer 2004,
//! eq. 4.15–4.17), which converges quadratically to the orthogonal polar factor when
//! `det F > 0`. Robust path (inverted, degenerate or ill-conditioned `F`): SVD `F = U Σ Vᵀ`,
//! `R = U Vᵀ`, and when `det(U Vᵀ) < 0` the column of `U` belonging to the smallest singular
//! value is negated, so `R` is always a proper rotation and `S = RᵀF` stays symmetric
//! (Irving et al. 2004). nalgebra's `polar()` may return a reflection, hence this module.

use nalgebra::Matrix3;

mod near;

pub use near::{rotation_near, update_rotations_near};

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

/// The rotation `Q` of the QR decomposition `M = Q T` with `T` upper triangular and a positive
/// diagonal: Gram–Schmidt on the columns of `M` in order (SOFA's "large" rotation when `M`
/// holds an element's edges `[x₁ − x₀, x₂ − x₀, x₃ − x₀]`).
///
/// `q₀ = m₀/|m₀|`, `q₁` the normalized part of `m₁` orthogonal to `q₀` (projected twice, which
/// keeps `q₀·q₁` at round-off even for nearly parallel columns), `q₂ = q₀ × q₁`. The third
/// column is the cross product, not the third Gram–Schmidt vector, so `Q` is a proper rotation
/// for every `M`: it is the Gram–Schmidt `Q` when `det M > 0`, and for an inverted `M` it
/// differs from it by the sign of `q₂` (then `T₂₂ < 0`). For `M = R U` with `U` upper
/// triangular with `U₀₀, U₁₁ > 0`, the result is `R`. Returns `None` when the first two
/// columns are (nearly) parallel or zero: there is no frame to build.
pub fn qr_rotation(m: &Matrix3<f64>) -> Option<Matrix3<f64>> {
    let (m0, m1) = (m.column(0).into_owned(), m.column(1).into_owned());
    let n0 = m0.norm();
    if !(n0 > 0.0 && n0.is_finite()) {
        return None;
    }
    let q0 = m0 / n0;
    let mut u1 = m1 - q0 * q0.dot(&m1);
    u1 -= q0 * q0.dot(&u1);
    let n1 = u1.norm();
    if n1 <= QR_MIN_REL_SINE * m1.norm() || !n1.is_finite() {
        return None;
    }
    let q1 = u1 / n1;
    Some(Matrix3::from_columns(&[q0, q1, q0.cross(&q1)]))
}

/// Smallest sine between the first two columns for which [`qr_rotation`] builds a frame.
const QR_MIN_REL_SINE: f64 = 1e-10;

/// Hauth & Straßer 2004 §4.5 / Higham: the polar rotation by a QR decomposition `F = Q T`
/// followed by the scaled Newton iteration (eq. 4.16–4.17) on `T`: `R = Q · polar(T)`
/// (`det F > 0` assumed; `None` where the iteration fails).
///
/// Kept for measurement only (the `rotation` path does not use it): the scaled iteration is
/// equivariant, `X → QX` maps its iterates one to one (`(QX)⁻ᵀ = QX⁻ᵀ`, and the Frobenius
/// scaling `γ` is unchanged), so starting from `T` takes exactly the iterations that
/// starting from `F` takes, and the QR costs extra. Singular `F`, the case the paper adds the
/// QR for, goes to the SVD path here.
#[cfg(test)]
fn newton_polar_qr(f: &Matrix3<f64>) -> Option<Matrix3<f64>> {
    let q = qr_rotation(f)?;
    Some(q * newton_polar(&q.tr_mul(f))?)
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
    use crate::fem::material::test_support::Lcg;
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
    fn warm_started_newton_agrees_with_the_polar_rotation() {
        let mut lcg = Lcg(99);
        let mut rnd = || lcg.uniform();
        for k in 0..400 {
            let q =
                Rotation3::from_euler_angles(3.0 * rnd(), 3.0 * rnd(), 3.0 * rnd()).into_inner();
            let s = Matrix3::identity() + 0.4 * Matrix3::from_fn(|_, _| rnd());
            let f = q * (s + s.transpose()) * 0.5;
            // Warm starts from near (one step's turn) to far (opposite) rotations.
            let spread = [0.02, 0.3, 1.5, 3.1][k % 4];
            let r0 =
                q * Rotation3::from_euler_angles(spread * rnd(), spread * rnd(), spread * rnd())
                    .into_inner();
            let (a, b) = (rotation_near(&f, &r0), rotation(&f));
            assert!(is_rotation(&a));
            assert!((a - b).norm() < 1e-12, "{k}: {}", (a - b).norm());
        }
        // Inverted and degenerate inputs fall back to the robust path.
        for f in [
            Matrix3::from_diagonal(&nalgebra::Vector3::new(1.0, 1.0, -0.3)),
            Matrix3::from_diagonal(&nalgebra::Vector3::new(1.0, 0.0, 0.0)),
            Matrix3::zeros(),
        ] {
            let a = rotation_near(&f, &Matrix3::identity());
            assert!(is_rotation(&a) && (a - rotation(&f)).norm() < 1e-12, "{f}");
        }
    }

    /// A rotation times an upper triangular matrix with a positive diagonal.
    fn rotated_triangular(rnd: &mut impl FnMut() -> f64) -> (Matrix3<f64>, Matrix3<f64>) {
        let q = Rotation3::from_euler_angles(3.0 * rnd(), 3.0 * rnd(), 3.0 * rnd()).into_inner();
        let mut u = Matrix3::from_fn(|i, j| if i < j { 0.5 * rnd() } else { 0.0 });
        for k in 0..3 {
            u[(k, k)] = 1.0 + 0.5 * rnd();
        }
        (q, u)
    }

    #[test]
    fn qr_rotation_is_the_rotation_of_rotated_triangular_matrices() {
        let mut lcg = Lcg(31);
        let mut rnd = || lcg.uniform();
        for _ in 0..200 {
            let (q, u) = rotated_triangular(&mut rnd);
            let r = qr_rotation(&(q * u)).unwrap();
            assert!(is_rotation(&r));
            assert!((r - q).norm() < 1e-12, "{}", (r - q).norm());
            // Qᵀ F is upper triangular with a positive diagonal.
            let t = r.tr_mul(&(q * u));
            assert!(t[(1, 0)].abs() + t[(2, 0)].abs() + t[(2, 1)].abs() < 1e-12);
            assert!((0..3).all(|k| t[(k, k)] > 0.0));
            // Not the polar rotation unless U is diagonal...
            let d = Matrix3::from_diagonal(&u.diagonal());
            assert!((rotation(&(q * u)) - q).norm() > 1e-6);
            // ...where the two agree.
            assert!((qr_rotation(&(q * d)).unwrap() - rotation(&(q * d))).norm() < 1e-12);
        }
        // Inverted: still a proper rotation, with q₀, q₁ from the first two columns.
        let f = Matrix3::from_diagonal(&nalgebra::Vector3::new(1.0, 2.0, -0.5));
        let r = qr_rotation(&f).unwrap();
        assert!(is_rotation(&r) && (r - Matrix3::identity()).norm() < 1e-15);
        // Parallel or zero leading columns have no frame.
        assert!(qr_rotation(&Matrix3::new(1.0, 2.0, 0.0, 1.0, 2.0, 0.0, 0.0, 0.0, 1.0)).is_none());
        assert!(qr_rotation(&Matrix3::zeros()).is_none());
    }

    #[test]
    fn every_method_gives_a_proper_rotation_and_svd_agrees_with_polar() {
        let mut lcg = Lcg(77);
        let mut rnd = || lcg.uniform();
        for k in 0..300 {
            let q =
                Rotation3::from_euler_angles(3.0 * rnd(), 3.0 * rnd(), 3.0 * rnd()).into_inner();
            let f = q * (Matrix3::identity() + 0.3 * Matrix3::from_fn(|_, _| rnd()));
            let r0 = Rotation3::from_euler_angles(rnd(), rnd(), rnd()).into_inner();
            let (p, w, s) = (rotation(&f), rotation_near(&f, &r0), svd_rotation(&f));
            let qr = qr_rotation(&f).unwrap();
            for r in [p, w, s, qr] {
                assert!(is_rotation(&r), "{k}: {r}");
            }
            assert!((p - s).norm() < 1e-10 && (w - s).norm() < 1e-10, "{k}");
            // With the QR pre-step (Hauth & Straßer §4.5) the iteration reaches the same R.
            assert!((newton_polar_qr(&f).unwrap() - p).norm() < 1e-12, "{k}");
        }
    }

    /// Times the cold Higham iteration with and without the QR pre-step of Hauth & Straßer
    /// §4.5. Run with `cargo test --release -p supple --lib polar -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn time_higham_with_and_without_qr_prestep() {
        let mut lcg = Lcg(5);
        let mut rnd = || lcg.uniform();
        for stretch in [0.05, 0.3, 0.8] {
            let fs: Vec<_> = (0..200_000)
                .map(|_| {
                    let q = Rotation3::from_euler_angles(3.0 * rnd(), 3.0 * rnd(), 3.0 * rnd())
                        .into_inner();
                    let s = Matrix3::identity() + stretch * Matrix3::from_fn(|_, _| rnd());
                    q * (s + s.transpose()) * 0.5
                })
                .filter(|f| f.determinant() > 0.1)
                .collect();
            let time = |g: &dyn Fn(&Matrix3<f64>) -> Option<Matrix3<f64>>| {
                let t = std::time::Instant::now();
                let mut acc = 0.0;
                for f in &fs {
                    acc += g(f).map_or(0.0, |r| r[(0, 0)]);
                }
                (t.elapsed().as_secs_f64() * 1e9 / fs.len() as f64, acc)
            };
            for _ in 0..2 {
                let (plain, a) = time(&|f| newton_polar(f));
                let (qr, b) = time(&|f| newton_polar_qr(f));
                println!(
                    "stretch {stretch}: Higham {plain:.1} ns, QR + Higham {qr:.1} ns ({} F, sums {a:.6} {b:.6})",
                    fs.len()
                );
            }
        }
    }

    #[test]
    fn agrees_with_svd_on_random_matrices() {
        let mut lcg = Lcg(12345);
        let mut rnd = || lcg.uniform();
        for _ in 0..200 {
            let f = Matrix3::identity() + 0.6 * Matrix3::from_fn(|_, _| rnd());
            let (a, b) = (rotation(&f), svd_rotation(&f));
            assert!(is_rotation(&a));
            assert!((a - b).norm() < 1e-8, "{f}");
        }
    }
}
