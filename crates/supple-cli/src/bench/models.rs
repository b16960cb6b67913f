//! `supple bench --model`: every body's material model replaced (same parameters).

use clap::ValueEnum;
use supple::fem::material::{CorotationalTangent, FastCorotatedSettings, ModelKind};

#[derive(Clone, Copy, ValueEnum)]
pub enum BenchModel {
    Linear,
    Corotational,
    /// Corotational with SVD rotations.
    CorotationalSvd,
    /// Corotational with QR rotations.
    CorotationalQr,
    Warped,
    /// Warped with the element-by-element tangent projected off each element's rigid modes
    /// (the earlier path: exact momentum in a linearized implicit step).
    WarpedElement,
    Stvk,
    Hybrid,
    LiesenfeldStolfi,
    /// Fixed corotated (Stomakhin et al. 2012) on the invertible diagonalization.
    FixedCorotated,
    /// The corotational energy stepped by operator splitting (Kugelstadt et al. 2018), its
    /// default settings (one local-global iteration, two volume sweeps).
    FastCorotated,
}

impl BenchModel {
    /// The model this names.
    pub fn kind(self) -> ModelKind {
        let m = self;
        match m {
            BenchModel::Linear => ModelKind::Linear,
            BenchModel::Corotational => ModelKind::corotational(CorotationalTangent::Rotated),
            BenchModel::CorotationalSvd | BenchModel::CorotationalQr => {
                ModelKind::Corotational(supple::fem::material::CorotationalSettings {
                    rotation: if matches!(m, BenchModel::CorotationalSvd) {
                        supple::fem::material::RotationMethod::Svd
                    } else {
                        supple::fem::material::RotationMethod::Qr
                    },
                    ..Default::default()
                })
            }
            BenchModel::Warped => ModelKind::Warped {
                field: supple::fem::material::RotationField::LeastSquares,
                ghost_correction: true,
                tangent: supple::fem::material::WarpedTangent::Rotated,
            },
            BenchModel::WarpedElement => ModelKind::Warped {
                field: supple::fem::material::RotationField::LeastSquares,
                ghost_correction: true,
                tangent: supple::fem::material::WarpedTangent::Element,
            },
            BenchModel::Stvk => ModelKind::Stvk,
            BenchModel::Hybrid => ModelKind::Hybrid,
            BenchModel::LiesenfeldStolfi => ModelKind::LiesenfeldStolfi,
            BenchModel::FixedCorotated => ModelKind::FixedCorotated,
            BenchModel::FastCorotated => ModelKind::FastCorotated(FastCorotatedSettings::default()),
        }
    }
}
