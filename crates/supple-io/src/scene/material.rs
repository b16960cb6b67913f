//! Validation of `[body.material]` and `[body.viscosity]`: which model, its options, and the
//! elastic constants in whichever pair the user gave.

use super::file::*;
use supple::fem::material::{
    CorotationalSettings, CorotationalTangent, FastCorotatedSettings, ModelKind, RotationField,
    RotationMethod, SpringForce, ViscosityKind, WarpedTangent,
};

/// The validated material of one body: the model and Young's modulus and Poisson's ratio
/// (every model derives its own parameters from them).
pub(super) struct Material {
    pub(super) model: ModelKind,
    pub(super) youngs: f64,
    pub(super) poisson: f64,
    /// A note for the run (a given constant the model does not use).
    pub(super) note: Option<String>,
}

/// The most `iterations` and `volume_sweeps` of `fast_corotated` (bounded work per step:
/// past a few hundred the step has long converged).
const MAX_FAST_ITERATIONS: u32 = 1000;

/// Young's modulus and Poisson's ratio from Lamé parameters:
/// `E = μ(3λ + 2μ)/(λ + μ)`, `ν = λ / (2(λ + μ))`.
fn from_lame(mu: f64, lambda: f64) -> (f64, f64) {
    (
        mu * (3.0 * lambda + 2.0 * mu) / (lambda + mu),
        lambda / (2.0 * (lambda + mu)),
    )
}

/// Validates `m` (`mkey` is its key path, e.g. `body[0].material`).
pub(super) fn material(m: &MaterialSection, mkey: &str) -> Result<Material, String> {
    let pairs = [
        ("youngs", m.youngs, "poisson", m.poisson),
        ("mu", m.mu, "lambda", m.lambda),
        ("alpha", m.alpha, "beta", m.beta),
    ];
    let mut given = pairs
        .iter()
        .filter(|(_, a, _, b)| a.is_some() || b.is_some());
    let (youngs, poisson) = match (given.next(), given.next()) {
        (None, _) => (DEFAULT_YOUNGS, DEFAULT_POISSON),
        (Some(a), Some(b)) => {
            return Err(format!(
                "{mkey}: give the elastic constants once: both {}/{} and {}/{} are set",
                a.0, a.2, b.0, b.2
            ))
        }
        (Some(&(ka, a, kb, b)), None) => {
            let (a, b) = match (a, b) {
                (Some(a), Some(b)) => (a, b),
                // Either of E and ν alone takes the other's default; the other pairs are
                // whole alternatives, with no default for half of one.
                (Some(e), None) if ka == "youngs" => (e, DEFAULT_POISSON),
                (None, Some(nu)) if ka == "youngs" => (DEFAULT_YOUNGS, nu),
                (None, _) => return Err(format!("{mkey}.{ka}: missing (it goes with {kb})")),
                (_, None) => return Err(format!("{mkey}.{kb}: missing (it goes with {ka})")),
            };
            match ka {
                "youngs" => (a, b),
                "mu" => {
                    if !(a > 0.0 && a.is_finite()) {
                        return Err(format!("{mkey}.mu = {a}: must be a finite number above 0"));
                    }
                    if !(b.is_finite() && b > -2.0 / 3.0 * a) {
                        return Err(format!(
                            "{mkey}.lambda = {b}: must be finite and above −2μ/3 = {} (a positive bulk modulus)",
                            -2.0 / 3.0 * a
                        ));
                    }
                    from_lame(a, b)
                }
                _ => {
                    // Liesenfeld & Stolfi: α is the bulk modulus K = λ + 2μ/3, β = μ.
                    if !(a > 0.0 && a.is_finite()) {
                        return Err(format!(
                            "{mkey}.alpha = {a}: must be a finite number above 0 (the bulk modulus)"
                        ));
                    }
                    if !(b > 0.0 && b.is_finite()) {
                        return Err(format!(
                            "{mkey}.beta = {b}: must be a finite number above 0 (the shear modulus)"
                        ));
                    }
                    from_lame(b, a - 2.0 / 3.0 * b)
                }
            }
        }
    };
    supple::fem::Lame::from_youngs_poisson(youngs, poisson).map_err(|e| format!("{mkey}.{e}"))?;
    if !(m.density > 0.0 && m.density.is_finite()) {
        return Err(format!(
            "{mkey}.density = {}: must be a finite number above 0",
            m.density
        ));
    }
    let only = |set: bool, key: &str, model: &str| {
        if set && m.model.name() != model {
            Err(format!(
                "{mkey}.{key}: only the {model} model has this option"
            ))
        } else {
            Ok(())
        }
    };
    if m.model != ModelName::Warped {
        only(m.tangent.is_some(), "tangent", "corotational")?;
    }
    only(m.rotation.is_some(), "rotation", "corotational")?;
    only(m.update_every.is_some(), "update_every", "corotational")?;
    let warped_springs = m.model == ModelName::MassSpring && m.springs == Some(SpringsName::Warped);
    if !warped_springs {
        only(m.rotation_field.is_some(), "rotation_field", "warped")?;
        only(m.ghost_correction.is_some(), "ghost_correction", "warped")?;
    }
    only(m.springs.is_some(), "springs", "mass_spring")?;
    only(m.iterations.is_some(), "iterations", "fast_corotated")?;
    only(m.volume_sweeps.is_some(), "volume_sweeps", "fast_corotated")?;
    let field = match m.rotation_field.unwrap_or(RotationFieldName::LeastSquares) {
        RotationFieldName::EdgeFrame => RotationField::EdgeFrame,
        RotationFieldName::LeastSquares => RotationField::LeastSquares,
    };
    let model = match m.model {
        ModelName::Linear => ModelKind::Linear,
        ModelName::Corotational => {
            let update_every = m.update_every.unwrap_or(1);
            if update_every == 0 {
                return Err(format!("{mkey}.update_every = 0: must be at least 1"));
            }
            let tangent = match m.tangent.unwrap_or_default() {
                TangentName::Rotated => CorotationalTangent::Rotated,
                TangentName::Exact => CorotationalTangent::Exact,
                TangentName::Element => {
                    return Err(format!(
                        "{mkey}.tangent = \"element\": a warped-model tangent; the corotational model's are \"rotated\" and \"exact\""
                    ))
                }
            };
            let rotation = match m.rotation.unwrap_or(RotationName::Polar) {
                RotationName::Polar => RotationMethod::Polar,
                RotationName::Svd => RotationMethod::Svd,
                RotationName::SvdInvertible => RotationMethod::SvdInvertible,
                RotationName::Qr => RotationMethod::Qr,
            };
            if rotation == RotationMethod::Qr && tangent == CorotationalTangent::Exact {
                return Err(format!(
                    "{mkey}.tangent = \"exact\": the exact tangent needs the polar rotation (rotation = \"polar\" or \"svd\"); QR rotations have no energy to differentiate"
                ));
            }
            ModelKind::Corotational(CorotationalSettings {
                tangent,
                rotation,
                update_every,
            })
        }
        ModelName::Warped => ModelKind::Warped {
            field,
            ghost_correction: m.ghost_correction.unwrap_or(true),
            tangent: match m.tangent.unwrap_or_default() {
                TangentName::Rotated => WarpedTangent::Rotated,
                TangentName::Element => WarpedTangent::Element,
                TangentName::Exact => {
                    return Err(format!(
                        "{mkey}.tangent = \"exact\": the warped model has no energy to differentiate; its tangents are \"rotated\" (Müller's R_i K_ij R_jᵀ, default) and \"element\" (projected per element: exact momentum)"
                    ))
                }
            },
        },
        ModelName::Stvk => ModelKind::Stvk,
        ModelName::Hybrid => ModelKind::Hybrid,
        ModelName::LiesenfeldStolfi => ModelKind::LiesenfeldStolfi,
        ModelName::FixedCorotated => ModelKind::FixedCorotated,
        ModelName::FastCorotated => {
            let defaults = FastCorotatedSettings::default();
            let iterations = m.iterations.unwrap_or(defaults.iterations);
            if !(1..=MAX_FAST_ITERATIONS).contains(&iterations) {
                return Err(format!(
                    "{mkey}.iterations = {iterations}: must be 1 to {MAX_FAST_ITERATIONS}"
                ));
            }
            let volume_sweeps = m.volume_sweeps.unwrap_or(defaults.volume_sweeps);
            if volume_sweeps > MAX_FAST_ITERATIONS {
                return Err(format!(
                    "{mkey}.volume_sweeps = {volume_sweeps}: must be at most {MAX_FAST_ITERATIONS}"
                ));
            }
            ModelKind::FastCorotated(FastCorotatedSettings {
                iterations,
                volume_sweeps,
            })
        }
        ModelName::MassSpring => ModelKind::MassSpring(match m.springs {
            None | Some(SpringsName::Hookean) => SpringForce::Hookean,
            Some(SpringsName::Linear) => SpringForce::Linear,
            Some(SpringsName::Warped) => SpringForce::Warped {
                field,
                ghost_correction: m.ghost_correction.unwrap_or(true),
            },
        }),
    };
    // A central-force network has ν = ¼ whatever is asked (`material::mass_spring`).
    let given = m.poisson.is_some() || m.mu.is_some() || m.alpha.is_some();
    let note = (m.model == ModelName::MassSpring && given && (poisson - 0.25).abs() > 1e-12).then(|| {
        format!(
            "{mkey}: the mass_spring model uses only Young's modulus (E = {youngs}); a spring network has Poisson's ratio 1/4, not {poisson}"
        )
    });
    Ok(Material {
        model,
        youngs,
        poisson,
        note,
    })
}

impl ModelName {
    fn name(self) -> &'static str {
        match self {
            ModelName::Linear => "linear",
            ModelName::Corotational => "corotational",
            ModelName::Warped => "warped",
            ModelName::Stvk => "stvk",
            ModelName::Hybrid => "hybrid",
            ModelName::LiesenfeldStolfi => "liesenfeld_stolfi",
            ModelName::FixedCorotated => "fixed_corotated",
            ModelName::MassSpring => "mass_spring",
            ModelName::FastCorotated => "fast_corotated",
        }
    }
}

/// Validates `[body.viscosity]` (`key` is the body's key path).
pub(super) fn viscosity(v: Option<&ViscositySection>, key: &str) -> Result<ViscosityKind, String> {
    let check = |k: &str, value: f64| {
        if value >= 0.0 && value.is_finite() {
            Ok(value)
        } else {
            Err(format!(
                "{key}.viscosity.{k} = {value}: must be a finite number ≥ 0"
            ))
        }
    };
    Ok(match v {
        None => ViscosityKind::None,
        Some(ViscositySection::StrainRate { d_mu, d_lambda }) => ViscosityKind::StrainRate {
            d_mu: check("d_mu", *d_mu)?,
            d_lambda: check("d_lambda", *d_lambda)?,
        },
        Some(ViscositySection::LiesenfeldStolfi { eta1, eta2 }) => {
            ViscosityKind::LiesenfeldStolfi {
                eta1: check("eta1", *eta1)?,
                eta2: check("eta2", *eta2)?,
            }
        }
    })
}
