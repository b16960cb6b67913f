//! The IPC log barrier and its adaptive stiffness (Li et al. 2020, "Incremental Potential
//! Contact", eq. 6 and §4.3 with the supplement's stiffness rules).
//!
//! All barrier functions take **squared** quantities: `d` is a squared distance (as
//! returned by [`super::distance`]) and `dhat` is the squared activation distance `d̂²`.
//! [`initial_barrier_stiffness`] takes the **unsquared** `d̂` (and squares it itself).

/// IPC eq. 6 on squared distances: `b(d; d̂) = −(d − d̂)² ln(d / d̂)` for `0 < d < d̂`,
/// `0` for `d ≥ d̂`, `+∞` for `d ≤ 0` (call with `d = dist²`, `dhat = d̂²`).
///
/// `b` is C² at `d = d̂` (value, first and second derivative vanish there), positive,
/// decreasing and convex on `(0, d̂)`.
pub fn barrier(d: f64, dhat: f64) -> f64 {
    if d <= 0.0 {
        return f64::INFINITY;
    }
    if d >= dhat {
        return 0.0;
    }
    let r = d - dhat;
    -r * r * (d / dhat).ln()
}

/// `∂b/∂d = −2(d − d̂) ln(d/d̂) − (d − d̂)²/d` on `(0, d̂)`, `0` for `d ≥ d̂`, `−∞` (the
/// limit) for `d ≤ 0`.
pub fn barrier_first_derivative(d: f64, dhat: f64) -> f64 {
    if d <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if d >= dhat {
        return 0.0;
    }
    let r = d - dhat;
    -2.0 * r * (d / dhat).ln() - r * r / d
}

/// `∂²b/∂d² = −2 ln(d/d̂) − 4(d − d̂)/d + (d − d̂)²/d²` on `(0, d̂)`, `0` for `d ≥ d̂`, `+∞`
/// (the limit) for `d ≤ 0`.
pub fn barrier_second_derivative(d: f64, dhat: f64) -> f64 {
    if d <= 0.0 {
        return f64::INFINITY;
    }
    if d >= dhat {
        return 0.0;
    }
    let r = d - dhat;
    let q = r / d;
    -2.0 * (d / dhat).ln() - 4.0 * q + q * q
}

/// The initial adaptive barrier stiffness κ and its upper bound κ_max (IPC §4.3 and
/// supplement; the rule of IPC Toolkit's `initial_barrier_stiffness` without the
/// codimensional offset `d_min`):
///
/// * `d₀ = (10⁻⁸ · bbox_diagonal)²` (replaced by `d̂²/2` if that is not below `d̂²`);
/// * `κ_min = min_barrier_stiffness_scale · average_mass / (4 d₀ b''(d₀; d̂²))` — the
///   stiffness at which the barrier's curvature along a distance of `10⁻⁸ · bbox` matches
///   `scale ×` the average nodal mass (IPC uses `scale = 10¹¹`);
/// * `κ_max = 100 κ_min`;
/// * `κ = −(∇B·∇E) / ‖∇B‖²` (the κ that minimizes `‖∇E + κ∇B‖²`), or `1` if `∇B = 0`,
///   then clamped to `[κ_min, κ_max]`.
///
/// `grad_energy` is ∇E of the incremental potential without contact (inertia +
/// elasticity + external), `grad_barrier` is ∇B of the *unscaled* barrier sum
/// `B = Σₖ b(dₖ; d̂²)`, both at the same configuration and of equal length (extra entries
/// of the longer one are ignored). `dhat` is the unsquared activation distance.
///
/// Returns `(κ, κ_max)`.
pub fn initial_barrier_stiffness(
    bbox_diagonal: f64,
    dhat: f64,
    average_mass: f64,
    grad_energy: &[f64],
    grad_barrier: &[f64],
    min_barrier_stiffness_scale: f64,
) -> (f64, f64) {
    debug_assert_eq!(grad_energy.len(), grad_barrier.len());
    let dhat2 = dhat * dhat;
    let mut d0 = 1e-8 * bbox_diagonal;
    d0 *= d0;
    if d0 >= dhat2 {
        d0 = 0.5 * dhat2;
    }
    let kappa_min = min_barrier_stiffness_scale * average_mass
        / (4.0 * d0 * barrier_second_derivative(d0, dhat2));
    let kappa_max = 100.0 * kappa_min;
    let gb2: f64 = grad_barrier.iter().map(|g| g * g).sum();
    let kappa = if gb2 > 0.0 {
        let dot: f64 = grad_barrier
            .iter()
            .zip(grad_energy)
            .map(|(b, e)| b * e)
            .sum();
        -dot / gb2
    } else {
        1.0
    };
    // Not f64::clamp: it panics on NaN bounds.
    (kappa.max(kappa_min).min(kappa_max), kappa_max)
}

/// The adaptive update of κ after a Newton iteration / time step (IPC §4.3 and supplement;
/// IPC Toolkit's documented `update_barrier_stiffness` rule): with
/// `ε = (dmin_frac · bbox_diagonal)²` (IPC: `dmin_frac = 10⁻⁹`), κ doubles, capped at
/// `max_kappa`, when the barrier is struggling to keep the surfaces apart, i.e. when the
/// previous and the current minimum **squared** distances are both below `ε` and the
/// distance is still shrinking (`min_distance2 < prev_min_distance2`). Otherwise κ is
/// returned unchanged.
pub fn update_barrier_stiffness(
    prev_min_distance2: f64,
    min_distance2: f64,
    max_kappa: f64,
    kappa: f64,
    bbox_diagonal: f64,
    dmin_frac: f64,
) -> f64 {
    let mut eps = dmin_frac * bbox_diagonal;
    eps *= eps;
    if prev_min_distance2 < eps && min_distance2 < eps && min_distance2 < prev_min_distance2 {
        (2.0 * kappa).min(max_kappa)
    } else {
        kappa
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn central(f: impl Fn(f64) -> f64, x: f64, h: f64) -> f64 {
        (f(x + h) - f(x - h)) / (2.0 * h)
    }

    #[test]
    fn vanishes_smoothly_at_dhat() {
        for dhat in [1e-8, 1e-4, 1.0, 7.0] {
            assert_eq!(barrier(dhat, dhat), 0.0);
            assert_eq!(barrier_first_derivative(dhat, dhat), 0.0);
            assert_eq!(barrier_second_derivative(dhat, dhat), 0.0);
            // The left limits vanish too (C²).
            let d = dhat * (1.0 - 1e-6);
            assert!(barrier(d, dhat) < 1e-17 * dhat * dhat);
            assert!(barrier_first_derivative(d, dhat).abs() < 1e-11 * dhat);
            assert!(barrier_second_derivative(d, dhat).abs() < 1e-5);
            for d in [dhat, 1.5 * dhat, 1e3 * dhat] {
                assert_eq!(barrier(d, dhat), 0.0);
                assert_eq!(barrier_first_derivative(d, dhat), 0.0);
                assert_eq!(barrier_second_derivative(d, dhat), 0.0);
            }
        }
    }

    #[test]
    fn blows_up_at_contact() {
        let dhat = 1e-4;
        let mut prev = 0.0;
        for k in 1..30 {
            let d = dhat * 10f64.powi(-k);
            let b = barrier(d, dhat);
            assert!(b > prev, "not increasing towards 0 at {d}");
            prev = b;
        }
        assert!(barrier(1e-300, dhat) > 1e-6);
        assert_eq!(barrier(0.0, dhat), f64::INFINITY);
        assert_eq!(barrier(-1.0, dhat), f64::INFINITY);
        assert_eq!(barrier_first_derivative(0.0, dhat), f64::NEG_INFINITY);
        assert_eq!(barrier_second_derivative(-1.0, dhat), f64::INFINITY);
        assert!(barrier_first_derivative(1e-300, dhat) < -1e290);
    }

    #[test]
    fn derivatives_against_finite_differences() {
        for dhat in [1e-6, 1e-2, 1.0] {
            for k in 1..50 {
                let d = dhat * k as f64 / 50.0;
                let h = 1e-6 * d;
                let (b1, b2) = (
                    barrier_first_derivative(d, dhat),
                    barrier_second_derivative(d, dhat),
                );
                let fd1 = central(|x| barrier(x, dhat), d, h);
                let fd2 = central(|x| barrier_first_derivative(x, dhat), d, h);
                let scale1 = b1.abs().max(dhat * 1e-3);
                assert!(
                    (b1 - fd1).abs() < 1e-6 * scale1,
                    "b' at {d}/{dhat}: {b1} vs {fd1}"
                );
                assert!(
                    (b2 - fd2).abs() < 1e-6 * b2.abs().max(1e-3),
                    "b'' at {d}: {b2} vs {fd2}"
                );
                // Positive, decreasing, convex on (0, d̂).
                assert!(barrier(d, dhat) > 0.0 && b1 < 0.0 && b2 > 0.0);
            }
        }
    }

    #[test]
    fn initial_stiffness() {
        let (bbox, dhat, mass, scale) = (2.0, 1e-3 * 2.0, 0.01, 1e11);
        let d0 = (1e-8 * bbox) * (1e-8 * bbox);
        let kmin = scale * mass / (4.0 * d0 * barrier_second_derivative(d0, dhat * dhat));
        assert!(kmin.is_finite() && kmin > 0.0);
        // No barrier gradient: κ = 1 clamped into [κ_min, κ_max].
        let (k, kmax) =
            initial_barrier_stiffness(bbox, dhat, mass, &[1.0, 2.0], &[0.0, 0.0], scale);
        assert!((kmax - 100.0 * kmin).abs() < 1e-12 * kmax);
        assert_eq!(k, 1f64.max(kmin).min(kmax));
        // The least-squares κ inside the bounds is returned as is.
        let target = 3.0 * kmin;
        let gb = [1.0, -2.0, 0.5];
        let ge: Vec<f64> = gb.iter().map(|g| -target * g).collect();
        let (k, _) = initial_barrier_stiffness(bbox, dhat, mass, &ge, &gb, scale);
        assert!((k - target).abs() < 1e-12 * target);
        // Clamped from above and below.
        let ge: Vec<f64> = gb.iter().map(|g| -1e3 * kmax * g).collect();
        assert_eq!(
            initial_barrier_stiffness(bbox, dhat, mass, &ge, &gb, scale).0,
            kmax
        );
        let ge: Vec<f64> = gb.iter().map(|g| 1e3 * kmax * g).collect();
        assert_eq!(
            initial_barrier_stiffness(bbox, dhat, mass, &ge, &gb, scale).0,
            kmin
        );
        // d₀ ≥ d̂²: d₀ = d̂²/2.
        let tiny_dhat = 1e-9 * bbox;
        let d0 = 0.5 * tiny_dhat * tiny_dhat;
        let kmin = scale * mass / (4.0 * d0 * barrier_second_derivative(d0, tiny_dhat * tiny_dhat));
        let (_, kmax) = initial_barrier_stiffness(bbox, tiny_dhat, mass, &[0.0], &[0.0], scale);
        assert!((kmax - 100.0 * kmin).abs() < 1e-12 * kmax);
    }

    #[test]
    fn stiffness_update() {
        let (bbox, frac, kmax) = (1.0, 1e-9, 100.0);
        let eps = 1e-18;
        // Both below ε and shrinking: doubles.
        assert_eq!(
            update_barrier_stiffness(0.5 * eps, 0.25 * eps, kmax, 3.0, bbox, frac),
            6.0
        );
        // Capped.
        assert_eq!(
            update_barrier_stiffness(0.5 * eps, 0.25 * eps, kmax, 60.0, bbox, frac),
            kmax
        );
        // Growing distance, or above ε: unchanged.
        assert_eq!(
            update_barrier_stiffness(0.25 * eps, 0.5 * eps, kmax, 3.0, bbox, frac),
            3.0
        );
        assert_eq!(
            update_barrier_stiffness(2.0 * eps, 0.5 * eps, kmax, 3.0, bbox, frac),
            3.0
        );
        assert_eq!(
            update_barrier_stiffness(4.0 * eps, 2.0 * eps, kmax, 3.0, bbox, frac),
            3.0
        );
        // ε scales with the bounding box.
        assert_eq!(
            update_barrier_stiffness(3.0 * eps, 2.0 * eps, kmax, 3.0, 2.0, frac),
            6.0
        );
    }
}
