//! Force models (one file each) and the body-level interface every model implements.
//!
//! The interface follows Vega FEM's `ForceModel` split: a model knows forces and tangents,
//! integrators know only this trait.

mod coarse_frames;
mod corotational;
mod fast_corotated;
mod fixed_corotated;
mod hybrid;
mod hyperelastic;
pub mod invertible;
mod liesenfeld_stolfi;
mod linear;
pub mod mass_spring;
mod stvk;
mod viscosity;
mod warped;

pub use coarse_frames::CoarseFrameCorotational;
pub use corotational::{Corotational, CorotationalTangent};
pub use fast_corotated::{FastCorotatedModel, FastCorotatedSettings};
pub use fixed_corotated::FixedCorotated;
pub use hybrid::Hybrid;
pub use hyperelastic::{Hyperelastic, HyperelasticLaw, Pk1Derivative};
pub use liesenfeld_stolfi::LiesenfeldStolfi;
pub use linear::Linear;
pub use mass_spring::{MassSpring, SpringForce, SpringNetwork};
pub use stvk::StVenantKirchhoff;
pub use viscosity::{newtonian_viscosities, LiesenfeldStolfiViscosity, StrainRateDamping};
pub use warped::{Warped, WarpedTangent};

use super::elements::ElementBlocks;
use super::ElementSet;
use crate::linalg::BlockCsr;
use nalgebra::{Matrix3, Vector3};
use thiserror::Error;

/// An impossible material parameter. Display reads `key = value: reason`, so callers can
/// prefix the path of the key (e.g. `body[0].material.`).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum MaterialError {
    #[error("youngs = {0}: must be a finite number above 0")]
    Youngs(f64),
    #[error("poisson = {0}: must be below 0.5")]
    PoissonTooLarge(f64),
    #[error("poisson = {0}: must be above -1")]
    PoissonTooSmall(f64),
    #[error("density = {0}: must be a finite number above 0")]
    Density(f64),
}

/// Lamé parameters `μ` (shear modulus) and `λ`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Lame {
    pub mu: f64,
    pub lambda: f64,
}

impl Lame {
    /// From Young's modulus `E` and Poisson's ratio `ν`:
    /// `μ = E / (2(1 + ν))`, `λ = E ν / ((1 + ν)(1 − 2ν))`. Refuses `E ≤ 0` and `ν ∉ (−1, ½)`.
    pub fn from_youngs_poisson(youngs: f64, poisson: f64) -> Result<Self, MaterialError> {
        if !(youngs > 0.0 && youngs.is_finite()) {
            return Err(MaterialError::Youngs(youngs));
        }
        if poisson.is_nan() || poisson >= 0.5 {
            return Err(MaterialError::PoissonTooLarge(poisson));
        }
        if poisson <= -1.0 {
            return Err(MaterialError::PoissonTooSmall(poisson));
        }
        Ok(Self {
            mu: youngs / (2.0 * (1.0 + poisson)),
            lambda: youngs * poisson / ((1.0 + poisson) * (1.0 - 2.0 * poisson)),
        })
    }
}

/// A body-level elastic force model.
///
/// Conventions: forces are internal forces `f(x)`; the tangent is the stiffness
/// `K = −∂f/∂x` (symmetric positive semi-definite for the linear model at rest).
pub trait ForceModel: Send + Sync + std::fmt::Debug {
    /// The scene name of the model (`linear`, `corotational`, ...).
    fn name(&self) -> &'static str;

    /// Refreshes per-element or per-vertex frames (rotations) for positions `x`. Forces and
    /// tangents use the frames of the last call. Models without frames do nothing. A model
    /// with an update rate (corotational `update_every`) may keep its frames instead, during
    /// the world steps [`begin_step`](Self::begin_step) marked as not refreshing.
    fn update_frames(&mut self, _elems: &ElementSet, _x: &[Vector3<f64>]) {}

    /// Called by the world once before each time step (integrators may call `update_frames`
    /// many times per step: Newton iterations, Runge–Kutta stages). Models with an update rate
    /// count steps here (Hauth & Straßer §7.2). A model never told about steps refreshes its
    /// frames on every `update_frames`.
    fn begin_step(&mut self) {}

    /// Adds the internal elastic forces at `x` into `f`.
    fn add_forces(&self, elems: &ElementSet, x: &[Vector3<f64>], f: &mut [Vector3<f64>]);

    /// Adds `scale · K(x)` into `k` (a matrix on `elems.pattern`).
    fn add_tangent(&self, elems: &ElementSet, x: &[Vector3<f64>], scale: f64, k: &mut BlockCsr);

    /// Elastic energy at `x`, where the model has one. It must not depend on when frames were
    /// last refreshed, except for a model that keeps frames on purpose (update rate).
    fn energy(&self, elems: &ElementSet, x: &[Vector3<f64>]) -> Option<f64>;

    /// True when `K` does not depend on `x` (lets integrators keep an assembled matrix).
    fn tangent_is_constant(&self) -> bool {
        false
    }

    /// A version of the tangent: `Some(v)` when [`add_tangent`](Self::add_tangent) gives the
    /// same matrix for every `x` (at the same `scale`) as long as `v` does not change, `None`
    /// when it depends on `x`. A constant tangent is `Some(0)`; a tangent set by frames that
    /// are kept through world steps (corotational `update_every > 1`, Hauth & Straßer §7.2)
    /// changes its version when the frames are refreshed. Lets integrators keep an assembled
    /// matrix, and its factor or preconditioner, through the steps that keep the frames.
    fn tangent_version(&self) -> Option<u64> {
        self.tangent_is_constant().then_some(0)
    }

    /// The tangent as a constant matrix seen in per-vertex frames, where the model's is one:
    /// `K(x) = B K⁰ Bᵀ` with `B = diag(R_i)` (frames as last refreshed) and `K⁰` independent
    /// of `x` (the warped model, Müller et al. 2002 §3.2). Lets an integrator keep `K⁰`'s
    /// matrix, with its factor or preconditioner, and solve in the vertices' frames.
    fn frame_tangent(&self) -> Option<FrameTangent<'_>> {
        None
    }

    /// True for a barrier model, whose energy grows without bound as an element's volume
    /// goes to zero (Liesenfeld–Stolfi): its states must keep every element volume positive,
    /// so implicit steps cap their length at the first zero-volume crossing and a step that
    /// would end with an element at volume ≤ 0 fails (see [`crate::fem::feasible`]).
    fn needs_positive_volume(&self) -> bool {
        false
    }

    /// Writes the Cauchy stress of every element at `x` into `out` (one per element) and
    /// returns true, or returns false (leaving `out` alone) when the model defines none.
    /// Models with frames use those of the last [`update_frames`](Self::update_frames).
    fn cauchy_stress(
        &self,
        _elems: &ElementSet,
        _x: &[Vector3<f64>],
        _out: &mut [Matrix3<f64>],
    ) -> bool {
        false
    }

    /// `Some` for a model that must be stepped by the operator-splitting corotated step
    /// (`fast_corotated`, [`crate::time::FastCorotatedStep`]) rather than by the world's
    /// integrator itself; the settings of that step.
    fn splitting(&self) -> Option<FastCorotatedSettings> {
        None
    }
}

/// A tangent `K(x) = B K⁰ Bᵀ` ([`ForceModel::frame_tangent`]).
#[derive(Debug, Clone, Copy)]
pub struct FrameTangent<'a> {
    /// The rotations `R_i`, one per vertex.
    pub rotations: &'a [Matrix3<f64>],
    /// `K⁰`, on the body's pattern.
    pub rest: &'a BlockCsr,
}

/// Von Mises equivalent stress `√(3/2 s:s)` of a stress `σ`, with `s = σ − tr(σ)/3 · I` its
/// deviatoric part (equal to `|σ_xx|` under uniaxial stress).
pub fn von_mises(sigma: &Matrix3<f64>) -> f64 {
    let s = sigma - Matrix3::from_diagonal_element(sigma.trace() / 3.0);
    (1.5 * s.norm_squared()).sqrt()
}

/// How a corotational model extracts each element's rotation from `F`
/// (Hauth & Straßer 2004 §4.3, SOFA's `impl/rotations/`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RotationMethod {
    /// Polar decomposition: Newton on the rotation warm-started from the last step, Higham's
    /// scaled iteration (eq. 4.15–4.17) and SVD as fallbacks.
    #[default]
    Polar,
    /// Polar rotation from the SVD with the sign fix (robust to inversion).
    Svd,
    /// Irving et al. 2004's invertible element: the SVD rotation with the sign fix (as
    /// `Svd`), and with the `Exact` tangent the definite tangent of Teran et al. 2005
    /// (exact except where its rotation modes would be indefinite, clamped there), so Newton
    /// and PCG stay well posed while inverted elements push themselves back out (see
    /// `material::invertible`).
    SvdInvertible,
    /// The Q of the QR decomposition of `F` (SOFA's "large"): not the polar rotation, depends
    /// on the element's vertex order.
    Qr,
}

/// Settings of the corotational model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CorotationalSettings {
    pub tangent: CorotationalTangent,
    pub rotation: RotationMethod,
    /// Rotations (and the tangent with them) are refreshed every `update_every` calls of
    /// `update_frames` (Hauth's update rate); 1 refreshes every step.
    pub update_every: u32,
}

impl Default for CorotationalSettings {
    fn default() -> Self {
        Self {
            tangent: CorotationalTangent::Rotated,
            rotation: RotationMethod::Polar,
            update_every: 1,
        }
    }
}

/// How the warped-stiffness model estimates its per-vertex rotation field (Müller et al. 2002
/// §3.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RotationField {
    /// `R = N′Nᵀ` from a frame built on two deterministically chosen edges of the vertex.
    EdgeFrame,
    /// Least squares over all the vertex's edges: the rotation of the SVD of the edge
    /// correlation matrix (eq. 14–15).
    #[default]
    LeastSquares,
}

/// Which model a body uses, with its parameters. Elastic constants come separately as Lamé
/// parameters (every model derives its own from them).
///
/// One of each family (linear, rotation-based, hyperelastic, hybrid, spring network), chosen
/// with [`BodyDesc::model`](crate::body::BodyDesc::model); every one pulls a stretched body
/// back:
///
/// ```
/// use supple::fem::material::{RotationField, SpringForce, WarpedTangent};
/// use supple::fem::ForceModel;
/// use supple::prelude::*;
/// let mesh = box_grid(&BoxGrid { cells: [1, 1, 1], cell_size: Vector3::repeat(0.1),
///     origin: Vector3::zeros(), split: TetSplit::Five });
/// let families = [
///     ModelKind::Linear,
///     ModelKind::corotational(CorotationalTangent::Rotated),
///     ModelKind::Warped { field: RotationField::LeastSquares, ghost_correction: true,
///         tangent: WarpedTangent::default() },
///     ModelKind::Stvk,
///     ModelKind::FixedCorotated,
///     ModelKind::LiesenfeldStolfi,
///     ModelKind::Hybrid,
///     ModelKind::MassSpring(SpringForce::Hookean),
/// ];
/// for model in families {
///     let mut body = BodyDesc::of(mesh.clone()).model(model).build()?;
///     assert_eq!(body.model.name(), model.name());
///     // Stretched 1 % along x, the forces point back: Σ x_i f_i,x < 0.
///     let x: Vec<_> = body.mesh.positions.iter().map(|p| Vector3::new(1.01 * p.x, p.y, p.z)).collect();
///     body.model.update_frames(&body.elems, &x);
///     let mut f = vec![Vector3::zeros(); x.len()];
///     body.model.add_forces(&body.elems, &x, &mut f);
///     let virial: f64 = x.iter().zip(&f).map(|(p, f)| p.x * f.x).sum();
///     assert!(virial < 0.0, "{}: {virial}", model.name());
/// }
/// # Ok::<(), supple::body::BuildError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ModelKind {
    Linear,
    Corotational(CorotationalSettings),
    Warped {
        field: RotationField,
        /// Remove the net force and torque the warped forces put on the body (Müller §3.2).
        ghost_correction: bool,
        /// How the tangent is built ([`WarpedTangent`]).
        tangent: WarpedTangent,
    },
    /// St.Venant–Kirchhoff (Green strain).
    Stvk,
    /// Hauth & Straßer §7.1: Green-strain volumetric part, corotated Cauchy shear part.
    Hybrid,
    /// Liesenfeld & Stolfi eq. 11–16 with `α` = bulk modulus, `β` = shear modulus.
    LiesenfeldStolfi,
    /// Stomakhin et al. 2012's fixed corotated law `μ ‖F − R‖² + λ/2 (J − 1)²` on Irving et
    /// al.'s invertible diagonalization with a definite tangent (`material::fixed_corotated`):
    /// the corotated model with a volume term that resists crushing and inversion.
    FixedCorotated,
    /// A spring network on the mesh's edges, Hookean, linearized or warped
    /// (`material::mass_spring`; Müller et al. 2002 §3 warp spring networks as FEM).
    MassSpring(SpringForce),
    /// The corotational energy stepped by operator splitting (Kugelstadt et al. 2018;
    /// `material::fast_corotated`, [`crate::time::FastCorotatedStep`]).
    FastCorotated(FastCorotatedSettings),
}

impl ModelKind {
    /// The corotational model with tangent `tangent`, polar rotations refreshed every step.
    pub const fn corotational(tangent: CorotationalTangent) -> Self {
        ModelKind::Corotational(CorotationalSettings {
            tangent,
            rotation: RotationMethod::Polar,
            update_every: 1,
        })
    }

    /// The scene name of the model.
    pub fn name(&self) -> &'static str {
        match self {
            ModelKind::Linear => "linear",
            ModelKind::Corotational(_) => "corotational",
            ModelKind::Warped { .. } => "warped",
            ModelKind::Stvk => "stvk",
            ModelKind::Hybrid => "hybrid",
            ModelKind::LiesenfeldStolfi => "liesenfeld_stolfi",
            ModelKind::FixedCorotated => "fixed_corotated",
            ModelKind::MassSpring(_) => "mass_spring",
            ModelKind::FastCorotated(_) => "fast_corotated",
        }
    }
}

/// Builds the force model for `kind` with Lamé parameters `lame`, for a body of `mesh`
/// (rest shape) with element data `elems`.
pub fn build_model(
    kind: ModelKind,
    lame: Lame,
    mesh: &crate::mesh::TetMesh,
    elems: &ElementSet,
) -> Box<dyn ForceModel> {
    match kind {
        ModelKind::Linear => Box::new(Linear::new(lame)),
        ModelKind::Corotational(settings) => Box::new(Corotational::new(lame, settings, elems)),
        ModelKind::Stvk => Box::new(Hyperelastic::new(StVenantKirchhoff::new(lame))),
        ModelKind::Hybrid => Box::new(Hybrid::new(lame, elems.len())),
        ModelKind::LiesenfeldStolfi => {
            Box::new(Hyperelastic::new(LiesenfeldStolfi::from_lame(lame)))
        }
        ModelKind::FixedCorotated => Box::new(Hyperelastic::new(FixedCorotated::new(lame))),
        ModelKind::MassSpring(law) => mass_spring::build(law, lame, mesh, elems),
        ModelKind::FastCorotated(settings) => {
            Box::new(FastCorotatedModel::new(lame, settings, elems))
        }
        ModelKind::Warped {
            field,
            ghost_correction,
            tangent,
        } => {
            Box::new(Warped::new(lame, field, ghost_correction, mesh, elems).with_tangent(tangent))
        }
    }
}

/// Velocity-dependent internal forces of a body beside its elastic model: strain-rate
/// damping (Hauth & Straßer §4.2) or Liesenfeld–Stolfi viscosity (eq. 17–23).
///
/// Convention: the damping force is linear in the velocity, `f_d = −D(x) v`, with `D`
/// symmetric positive semi-definite and `D(x) v = 0` for every rigid velocity field of `x`.
pub trait Dissipation: Send + Sync + std::fmt::Debug {
    /// The scene name (`strain_rate`, `liesenfeld_stolfi`).
    fn name(&self) -> &'static str;
    /// Adds `f_d = −D(x) v` into `f`.
    fn add_forces(
        &self,
        elems: &ElementSet,
        x: &[Vector3<f64>],
        v: &[Vector3<f64>],
        f: &mut [Vector3<f64>],
    );
    /// Adds `scale · D(x)` into `d` (a matrix on `elems.pattern`).
    fn add_matrix(&self, elems: &ElementSet, x: &[Vector3<f64>], scale: f64, d: &mut BlockCsr);
    /// Dissipated power `vᵀ D(x) v ≥ 0`.
    fn power(&self, elems: &ElementSet, x: &[Vector3<f64>], v: &[Vector3<f64>]) -> f64;
}

/// Which dissipation a body has beside its Rayleigh damping.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum ViscosityKind {
    #[default]
    None,
    /// Strain-rate damping with damping Lamé parameters `dμ`, `dλ` (Pa·s): damping stress
    /// `2 dμ Ė + dλ tr(Ė) I` of the Green strain rate (Hauth & Straßer §4.2).
    StrainRate { d_mu: f64, d_lambda: f64 },
    /// Liesenfeld & Stolfi viscous power with `η₁`, `η₂` (Pa·s), eq. 17–23.
    LiesenfeldStolfi { eta1: f64, eta2: f64 },
}

/// Builds the dissipation of `kind`, or `None`.
pub fn build_viscosity(kind: ViscosityKind, elems: &ElementSet) -> Option<Box<dyn Dissipation>> {
    let _ = elems;
    match kind {
        ViscosityKind::None => None,
        ViscosityKind::StrainRate { d_mu, d_lambda } => {
            Some(Box::new(StrainRateDamping::new(d_mu, d_lambda)))
        }
        ViscosityKind::LiesenfeldStolfi { eta1, eta2 } => {
            Some(Box::new(LiesenfeldStolfiViscosity::new(eta1, eta2)))
        } // VISCOSITY-ARMS: one arm per dissipation below this line.
    }
}

/// Linear (Cauchy-strain) stress `σ(G) = 2μ(sym G − I) + λ tr(G − I) I` of a displacement
/// gradient `G − I` (Müller et al. 2002 §2.3; the corotated model applies it to `RᵀF`).
#[inline(always)]
pub(crate) fn linear_stress(g: &Matrix3<f64>, lame: Lame) -> Matrix3<f64> {
    let eps = 0.5 * (g + g.transpose()) - Matrix3::identity();
    2.0 * lame.mu * eps + Matrix3::from_diagonal_element(lame.lambda * eps.trace())
}

/// Linear energy density `Ψ = μ ε:ε + λ/2 tr(ε)²`, `ε = sym G − I`.
#[inline]
pub(crate) fn linear_energy_density(g: &Matrix3<f64>, lame: Lame) -> f64 {
    let eps = 0.5 * (g + g.transpose()) - Matrix3::identity();
    lame.mu * eps.norm_squared() + 0.5 * lame.lambda * eps.trace().powi(2)
}

crate::isa::avx2_or_baseline! {
    /// Adds the stiffness blocks of the linear element with shape gradients rotated by `R`
    /// (identity for the linear model), `scale ·` `K_ab = V [μ (g_a·g_b) I + μ h_b h_aᵀ + λ h_a h_bᵀ]`
    /// with `h = R g`. This is `R K_e Rᵀ` of Müller et al. 2002 eq. 9 without forming the 12×12
    /// matrix; `K_ba = K_abᵀ`, so only 10 of the 16 blocks are computed. Compiled for the
    /// baseline and for AVX2, chosen at run time ([`crate::isa`]; the same bits).
    pub fn add_rotated_linear_blocks(
        sink: &mut ElementBlocks,
        grad: &[Vector3<f64>; 4],
        r: &Matrix3<f64>,
        volume: f64,
        lame: Lame,
        scale: f64,
    ) {
        // Written out, not `grad.map(..)`: `map` is not inlined into the AVX2 copy.
        let h = [r * grad[0], r * grad[1], r * grad[2], r * grad[3]];
        let s = scale * volume;
        let (smu, slambda) = (s * lame.mu, s * lame.lambda);
        for a in 0..4 {
            for b in a..4 {
                let mut k = (smu * h[b]) * h[a].transpose() + (slambda * h[a]) * h[b].transpose();
                let iso = smu * grad[a].dot(&grad[b]);
                k[(0, 0)] += iso;
                k[(1, 1)] += iso;
                k[(2, 2)] += iso;
                sink.add_symmetric(a, b, &k);
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod test_support;

#[cfg(test)]
mod stress_tests {
    use super::*;
    use crate::mesh::TetMesh;

    fn unit_tet() -> (TetMesh, ElementSet, Vec<Vector3<f64>>) {
        let x = vec![Vector3::zeros(), Vector3::x(), Vector3::y(), Vector3::z()];
        let mesh = TetMesh::new(x.clone(), vec![[0, 1, 2, 3]]).unwrap();
        let elems = ElementSet::new(&mesh);
        (mesh, elems, x)
    }

    #[test]
    fn uniaxial_stress_has_von_mises_equal_to_its_magnitude() {
        let sigma = Matrix3::from_diagonal(&Vector3::new(-250.0, 0.0, 0.0));
        assert!((von_mises(&sigma) - 250.0).abs() < 1e-9);
        // Hydrostatic stress has none.
        assert!(von_mises(&Matrix3::from_diagonal_element(7.0)).abs() < 1e-9);
    }

    #[test]
    fn linear_and_corotational_stress_of_a_uniaxial_stretch() {
        // Stretch along x with the lateral contraction of uniaxial stress: σ = E ε e_x e_xᵀ.
        let (e_mod, nu, eps) = (1e5, 0.3, 1e-3);
        let lame = Lame::from_youngs_poisson(e_mod, nu).unwrap();
        let (mesh, elems, x0) = unit_tet();
        let f = Matrix3::from_diagonal(&Vector3::new(1.0 + eps, 1.0 - nu * eps, 1.0 - nu * eps));
        let x: Vec<_> = x0.iter().map(|p| f * p).collect();
        let mut out = [Matrix3::zeros()];
        let linear = build_model(ModelKind::Linear, lame, &mesh, &elems);
        assert!(linear.cauchy_stress(&elems, &x, &mut out));
        assert!((out[0][(0, 0)] - e_mod * eps).abs() < 1e-9 * e_mod);
        assert!((von_mises(&out[0]) - e_mod * eps).abs() < 1e-9 * e_mod);
        // Rotated by 90° about z, the corotational stress turns with the body (σ_yy) and
        // keeps its von Mises value; the linear one does not.
        let r =
            nalgebra::Rotation3::from_axis_angle(&Vector3::z_axis(), 0.5 * std::f64::consts::PI);
        let xr: Vec<_> = x.iter().map(|p| r * p).collect();
        let mut corot = build_model(
            ModelKind::corotational(CorotationalTangent::Rotated),
            lame,
            &mesh,
            &elems,
        );
        corot.update_frames(&elems, &xr);
        assert!(corot.cauchy_stress(&elems, &xr, &mut out));
        // σ = R σ_lin(S) S Rᵀ / det S with S the stretch: (1 + ε) E ε / det S along y.
        let expected = e_mod * eps * (1.0 + eps) / ((1.0 + eps) * (1.0 - nu * eps).powi(2));
        assert!((out[0][(1, 1)] - expected).abs() < 1e-9 * e_mod * eps);
        assert!((von_mises(&out[0]) - expected).abs() < 1e-9 * e_mod * eps);
        assert!(linear.cauchy_stress(&elems, &xr, &mut out));
        assert!((von_mises(&out[0]) - e_mod * eps).abs() > 0.1 * e_mod * eps);
    }
}
