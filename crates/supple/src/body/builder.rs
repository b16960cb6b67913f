//! The named setters of [`BodyDesc`] and their checked end, [`BodyDesc::build`].
//!
//! Why a builder: [`BodyDesc::new`] takes Young's modulus, Poisson's ratio and the density as
//! three bare positional numbers, which are easy to swap (issue 41); here each is set by its
//! name, everything else has the scene format's defaults, and [`BodyDesc::build`] says which
//! body and which setting is wrong.

use super::{Body, BodyDesc, BodyError, Rayleigh};
use crate::constraint::ConstraintDesc;
use crate::fem::material::{
    CorotationalTangent, Hyperelastic, HyperelasticLaw, ModelKind, ViscosityKind,
};
use crate::fem::{Lame, MassKind};
use crate::load::LoadDesc;
use crate::mesh::TetMesh;
use nalgebra::Vector3;
use thiserror::Error;

/// A body or world the builders refused, naming the body and the setting (see
/// [`BodyDesc::build`] and [`WorldBuilder::build`](crate::world::WorldBuilder::build)).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum BuildError {
    /// A body's description is impossible: its name, then the setting and why (e.g.
    /// ``body `bar`: poisson = 0.5: must be below 0.5``).
    #[error("body `{name}`: {source}")]
    Body { name: String, source: BodyError },
    #[error("the world has no body: add one with `WorldBuilder::body`")]
    NoBodies,
    #[error(transparent)]
    World(#[from] crate::world::WorldError),
}

impl BodyDesc {
    /// A body of `mesh` with the scene format's defaults (named `body`, corotational with the
    /// rotated tangent, E = 1e5 Pa, ν = 0.33, ρ = 1000 kg/m³, as a scene that gives only a
    /// mesh and a model), the rest set by name, so E and ν cannot be swapped as positional
    /// numbers can:
    ///
    /// ```
    /// use supple::prelude::*;
    /// let mesh = box_grid(&BoxGrid { cells: [4, 1, 1], cell_size: Vector3::repeat(0.1),
    ///     origin: Vector3::zeros(), split: TetSplit::Five });
    /// let bar = BodyDesc::of(mesh).name("bar").stvk().youngs(2e5).poisson(0.3).density(1100.0)
    ///     .fix_where(|p| p.x < 1e-9);
    /// assert_eq!((bar.youngs, bar.poisson, bar.density, bar.fixed.len()), (2e5, 0.3, 1100.0, 4));
    /// ```
    pub fn of(mesh: TetMesh) -> Self {
        let model = ModelKind::corotational(CorotationalTangent::Rotated);
        Self::new("body", mesh, model, 1e5, 0.33, 1000.0)
    }

    /// Checks the description and builds the body ([`Body::new`]); the error names the body
    /// and the setting:
    ///
    /// ```
    /// use supple::prelude::*;
    /// let mesh = || box_grid(&BoxGrid { cells: [2, 1, 1], cell_size: Vector3::repeat(0.1),
    ///     origin: Vector3::zeros(), split: TetSplit::Five });
    /// let body = BodyDesc::of(mesh()).name("bar").linear().youngs(1e5).poisson(0.3).build()?;
    /// assert_eq!((body.name.as_str(), body.model.name()), ("bar", "linear"));
    ///
    /// // E and ν swapped: ν = 1e5 is refused, and the message says where.
    /// let err = BodyDesc::of(mesh()).name("bar").youngs(0.3).poisson(1e5).build().unwrap_err();
    /// assert_eq!(err.to_string(), "body `bar`: poisson = 100000: must be below 0.5");
    /// # Ok::<(), supple::body::BuildError>(())
    /// ```
    pub fn build(self) -> Result<Body, BuildError> {
        let name = self.name.clone();
        Body::new(self).map_err(|source| BuildError::Body { name, source })
    }

    /// Builds the body with a hyperelastic law of your own in place of [`model`](Self::model):
    /// `law` receives the Lamé parameters of [`youngs`](Self::youngs) and
    /// [`poisson`](Self::poisson), checked, so the law's small-strain stiffness is the one the
    /// rest of the engine assumes (the explicit integrators' Courant bound, contact
    /// stiffness). `crates/supple/examples/custom_law.rs` writes a neo-Hookean law:
    ///
    /// ```
    /// use supple::fem::material::StVenantKirchhoff;
    /// use supple::prelude::*;
    /// let mesh = box_grid(&BoxGrid { cells: [2, 1, 1], cell_size: Vector3::repeat(0.1),
    ///     origin: Vector3::zeros(), split: TetSplit::Five });
    /// let body = BodyDesc::of(mesh).youngs(1e5).poisson(0.4).build_with_law(StVenantKirchhoff::new)?;
    /// assert_eq!(body.model.name(), "stvk");
    /// # Ok::<(), supple::body::BuildError>(())
    /// ```
    pub fn build_with_law<L: HyperelasticLaw + 'static>(
        self,
        law: impl FnOnce(Lame) -> L,
    ) -> Result<Body, BuildError> {
        let name = self.name.clone();
        let refused = |source: BodyError| BuildError::Body {
            name: name.clone(),
            source,
        };
        let lame =
            Lame::from_youngs_poisson(self.youngs, self.poisson).map_err(|e| refused(e.into()))?;
        // The linear model costs nothing to build; the law replaces it.
        let mut body = Body::new(self.linear()).map_err(refused)?;
        body.model = Box::new(Hyperelastic::new(law(lame)));
        Ok(body)
    }

    /// The body's name (output files, [`World::body`](crate::world::World::body)).
    pub fn name(mut self, name: impl Into<String>) -> Self {
        self.name = name.into();
        self
    }

    /// The elastic model (see [`ModelKind`]; [`linear`](Self::linear),
    /// [`corotational`](Self::corotational), [`stvk`](Self::stvk) and
    /// [`fixed_corotated`](Self::fixed_corotated) name the common ones).
    pub fn model(mut self, model: ModelKind) -> Self {
        self.model = model;
        self
    }

    /// Linear elasticity (small displacements only: rotations inflate it).
    pub fn linear(self) -> Self {
        self.model(ModelKind::Linear)
    }

    /// Corotational linear elasticity (Müller et al. 2002), polar rotations every step.
    pub fn corotational(self) -> Self {
        self.model(ModelKind::corotational(CorotationalTangent::Rotated))
    }

    /// St.Venant–Kirchhoff (hyperelastic; softens under strong compression).
    pub fn stvk(self) -> Self {
        self.model(ModelKind::Stvk)
    }

    /// Fixed corotated hyperelasticity (Stomakhin et al. 2012; robust to inversion).
    pub fn fixed_corotated(self) -> Self {
        self.model(ModelKind::FixedCorotated)
    }

    /// Young's modulus E (Pa).
    pub fn youngs(mut self, youngs: f64) -> Self {
        self.youngs = youngs;
        self
    }

    /// Poisson's ratio ν, in (−1, 0.5).
    pub fn poisson(mut self, poisson: f64) -> Self {
        self.poisson = poisson;
        self
    }

    /// Mass density ρ (kg/m³).
    pub fn density(mut self, density: f64) -> Self {
        self.density = density;
        self
    }

    /// Initial velocity of every vertex (m/s).
    pub fn velocity(mut self, velocity: Vector3<f64>) -> Self {
        self.velocity = velocity;
        self
    }

    /// [`with_fixed_where`](Self::with_fixed_where) by its builder name.
    pub fn fix_where(self, select: impl Fn(&Vector3<f64>) -> bool) -> Self {
        self.with_fixed_where(select)
    }

    /// Also fixes every vertex whose rest position satisfies `select`.
    pub fn with_fixed_where(mut self, select: impl Fn(&Vector3<f64>) -> bool) -> Self {
        let mesh = &self.mesh;
        self.fixed
            .extend((0..mesh.n_vertices() as u32).filter(|&i| select(&mesh.positions[i as usize])));
        self
    }

    /// Also fixes these vertices (indices into the mesh; checked by [`build`](Self::build)).
    pub fn fix(mut self, vertices: impl IntoIterator<Item = u32>) -> Self {
        self.fixed.extend(vertices);
        self
    }

    /// Lumped (the default) or consistent mass.
    pub fn mass(self, mass: MassKind) -> Self {
        self.with_mass(mass)
    }

    /// Rayleigh damping `C = α M + β K` (both ≥ 0).
    pub fn damping(self, alpha: f64, beta: f64) -> Self {
        self.with_damping(alpha, beta)
    }

    /// Strain-rate damping or viscosity beside the Rayleigh damping.
    pub fn viscosity(self, viscosity: ViscosityKind) -> Self {
        self.with_viscosity(viscosity)
    }

    /// Adds an external load (see [`crate::load`]).
    pub fn load(mut self, load: LoadDesc) -> Self {
        self.loads.push(load);
        self
    }

    /// Adds a constraint or prescribed motion (see [`crate::constraint`]).
    pub fn constraint(mut self, constraint: ConstraintDesc) -> Self {
        self.constraints.push(constraint);
        self
    }

    pub fn with_mass(mut self, mass: MassKind) -> Self {
        self.mass = mass;
        self
    }

    pub fn with_damping(mut self, alpha: f64, beta: f64) -> Self {
        self.damping = Rayleigh { alpha, beta };
        self
    }

    pub fn with_viscosity(mut self, viscosity: ViscosityKind) -> Self {
        self.viscosity = viscosity;
        self
    }
}
