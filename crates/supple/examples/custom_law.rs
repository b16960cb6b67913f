//! A hyperelastic law of your own: a compressible neo-Hookean energy (Bonet & Wood,
//! *Nonlinear continuum mechanics for finite element analysis*, eq. 6.27),
//! `Ψ(F) = μ/2 (tr FᵀF − 3) − μ ln J + λ/2 (ln J)²`, written as a
//! [`HyperelasticLaw`](supple::fem::material::HyperelasticLaw): the energy density, its
//! stress `P = ∂Ψ/∂F` and the stress's derivative `dP[dF]`. The engine turns any law into
//! element forces and tangents (`fem::material::Hyperelastic`).
//!
//! A law whose `P` is not the derivative of its `Ψ`, or whose `dP` is not that of its `P`,
//! still runs, but Newton stalls and energy is not conserved; so the example checks both
//! by central differences before it uses the law, then hangs a clamped bar with it beside
//! the built-in St.Venant–Kirchhoff law (the same at small strain).
//! `cargo run --release -p supple --example custom_law`.

use supple::fem::material::{HyperelasticLaw, StVenantKirchhoff};
use supple::nalgebra::Matrix3;
use supple::prelude::*;

/// Compressible neo-Hookean with Lamé parameters `μ`, `λ` (Pa).
#[derive(Debug, Clone, Copy)]
struct NeoHookean {
    mu: f64,
    lambda: f64,
}

impl HyperelasticLaw for NeoHookean {
    fn name(&self) -> &'static str {
        "neo_hookean"
    }

    fn energy_density(&self, f: &Matrix3<f64>) -> f64 {
        let ln_j = f.determinant().ln();
        0.5 * self.mu * (f.norm_squared() - 3.0) - self.mu * ln_j + 0.5 * self.lambda * ln_j * ln_j
    }

    /// `P = μ (F − F⁻ᵀ) + λ ln J F⁻ᵀ`.
    fn pk1(&self, f: &Matrix3<f64>) -> Matrix3<f64> {
        let f_inv_t = inverse(f).transpose();
        self.mu * (f - f_inv_t) + self.lambda * f.determinant().ln() * f_inv_t
    }

    /// `dP = μ dF + (μ − λ ln J) F⁻ᵀ dFᵀ F⁻ᵀ + λ tr(F⁻¹ dF) F⁻ᵀ`, from
    /// `d(F⁻ᵀ) = −F⁻ᵀ dFᵀ F⁻ᵀ` and `d(ln J) = tr(F⁻¹ dF)`.
    fn pk1_differential(&self, f: &Matrix3<f64>, df: &Matrix3<f64>) -> Matrix3<f64> {
        let f_inv = inverse(f);
        let f_inv_t = f_inv.transpose();
        let ln_j = f.determinant().ln();
        self.mu * df
            + (self.mu - self.lambda * ln_j) * f_inv_t * df.transpose() * f_inv_t
            + self.lambda * (f_inv * df).trace() * f_inv_t
    }

    /// `Ψ → ∞` as `J → 0`: the world then refuses steps that invert an element.
    fn is_barrier(&self) -> bool {
        true
    }
}

/// `F⁻¹`, NaN where `F` is singular (the step that gets there fails and is retried).
fn inverse(f: &Matrix3<f64>) -> Matrix3<f64> {
    f.try_inverse().unwrap_or_else(|| Matrix3::repeat(f64::NAN))
}

/// The largest relative errors of `P` against central differences of `Ψ` and of `dP[dF]`
/// against central differences of `P`, at a few deformation gradients.
fn derivative_errors(law: &impl HyperelasticLaw) -> (f64, f64) {
    let h = 1e-6;
    let (mut p_err, mut dp_err) = (0.0f64, 0.0f64);
    for k in 0..4 {
        let s = 0.1 * (k as f64 + 1.0);
        let f = Matrix3::new(
            1.0 + s,
            0.2 * s,
            -0.1,
            0.05,
            1.0 - 0.5 * s,
            0.3 * s,
            -0.2 * s,
            0.1,
            1.0 + 0.2 * s,
        );
        let p = law.pk1(&f);
        let fd_p = Matrix3::from_fn(|i, j| {
            let mut e = Matrix3::zeros();
            e[(i, j)] = h;
            (law.energy_density(&(f + e)) - law.energy_density(&(f - e))) / (2.0 * h)
        });
        p_err = p_err.max((p - fd_p).norm() / p.norm());
        let df = Matrix3::new(0.3, -0.1, 0.2, 0.0, 0.5, -0.4, 0.1, 0.2, -0.3);
        let dp = law.pk1_differential(&f, &df);
        let fd_dp = (law.pk1(&(f + h * df)) - law.pk1(&(f - h * df))) / (2.0 * h);
        dp_err = dp_err.max((dp - fd_dp).norm() / dp.norm());
    }
    (p_err, dp_err)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let law = NeoHookean {
        mu: 1e5,
        lambda: 4e5,
    };
    let (p_err, dp_err) = derivative_errors(&law);
    println!("neo-Hookean: P against dΨ/dF {p_err:.1e}, dP against d(P) {dp_err:.1e}");
    assert!(
        p_err < 1e-6 && dp_err < 1e-6,
        "the law's derivatives are consistent"
    );
    assert!(
        law.pk1(&Matrix3::identity()).norm() < 1e-12,
        "no stress at rest"
    );

    let bar = || {
        let mesh = box_grid(&BoxGrid {
            cells: [4, 1, 1],
            cell_size: Vector3::repeat(0.1),
            origin: Vector3::zeros(),
            split: TetSplit::Five,
        });
        BodyDesc::of(mesh)
            .name("bar")
            .youngs(1e7)
            .poisson(0.3)
            .fix_where(|p| p.x < 1e-9)
    };
    let neo = bar().build_with_law(|l| NeoHookean {
        mu: l.mu,
        lambda: l.lambda,
    })?;
    let stvk = bar().build_with_law(StVenantKirchhoff::new)?;
    let mut tips = Vec::new();
    for body in [neo, stvk] {
        let mut world = World::builder().built_body(body).build()?;
        for _ in 0..10 {
            world.step()?;
        }
        // Vertex 4 starts at the free end's corner (0.4, 0, 0).
        tips.push(world.bodies[0].x[4].y);
    }
    let (neo, stvk) = (tips[0], tips[1]);
    println!("tip after 0.1 s: neo-Hookean {neo:.3e} m, St.Venant–Kirchhoff {stvk:.3e} m");
    assert!(neo < -1e-4, "the bar sags");
    assert!(
        (neo - stvk).abs() < 0.05 * stvk.abs(),
        "as St.Venant–Kirchhoff at small strain"
    );
    Ok(())
}

#[test]
fn runs() {
    main().unwrap();
}
