//! A deformable body: rest mesh, per-element rest data, force model, mass, fixed vertices,
//! constraints and loads, damping, and the state `(x, v)`.

use crate::constraint::{ConstraintDesc, ConstraintError, Constraints, Reaction};
use crate::fem::material::{build_model, build_viscosity, Dissipation, ModelKind, ViscosityKind};
use crate::fem::{ElementSet, ForceModel, Lame, Mass, MassKind, MaterialError};
use crate::load::{LoadDesc, LoadError, Loads};
use crate::mesh::{bounding_box, MeshError, TetMesh};
use nalgebra::Vector3;
use thiserror::Error;

mod builder;
pub use builder::BuildError;

/// Rayleigh damping `C = α M + β K` (Müller et al. 2002 eq. 2 with a Rayleigh `C`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Rayleigh {
    pub alpha: f64,
    pub beta: f64,
}

/// Everything needed to build a [`Body`].
#[derive(Debug, Clone)]
pub struct BodyDesc {
    pub name: String,
    pub mesh: TetMesh,
    pub model: ModelKind,
    pub youngs: f64,
    pub poisson: f64,
    pub density: f64,
    pub mass: MassKind,
    pub damping: Rayleigh,
    /// Strain-rate damping or viscosity beside the Rayleigh damping.
    pub viscosity: ViscosityKind,
    /// Vertices held at their rest position.
    pub fixed: Vec<u32>,
    pub velocity: Vector3<f64>,
    /// External loads (nodal forces, tractions, pressure; see [`crate::load`]).
    pub loads: Vec<LoadDesc>,
    /// Per-component constraints and prescribed motions (see [`crate::constraint`]).
    pub constraints: Vec<ConstraintDesc>,
}

impl BodyDesc {
    /// A body of `mesh` with the given model and material, lumped mass, no damping, nothing
    /// fixed and at rest; adjust the public fields or use the `with_*` methods for the rest.
    pub fn new(
        name: impl Into<String>,
        mesh: TetMesh,
        model: ModelKind,
        youngs: f64,
        poisson: f64,
        density: f64,
    ) -> Self {
        Self {
            name: name.into(),
            mesh,
            model,
            youngs,
            poisson,
            density,
            mass: MassKind::Lumped,
            damping: Rayleigh::default(),
            viscosity: ViscosityKind::None,
            fixed: Vec::new(),
            velocity: Vector3::zeros(),
            loads: Vec::new(),
            constraints: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum BodyError {
    #[error(transparent)]
    Mesh(#[from] MeshError),
    #[error(transparent)]
    Material(#[from] MaterialError),
    #[error("fixed vertex {vertex} is out of range (the mesh has {n_vertices} vertices)")]
    FixedOutOfRange { vertex: u32, n_vertices: usize },
    #[error("damping.{key} = {value}: must be a finite number ≥ 0")]
    Damping { key: &'static str, value: f64 },
    #[error("viscosity.{key} = {value}: must be a finite number ≥ 0")]
    Viscosity { key: &'static str, value: f64 },
    #[error("velocity has a non-finite component")]
    Velocity,
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Constraint(#[from] ConstraintError),
}

/// A simulated body: built from a [`BodyDesc`] ([`BodyDesc::build`] or [`Body::new`]), then
/// stepped by a [`World`](crate::world::World), which owns it (`world.bodies[i]`). Its state
/// is public (`x` positions, `v` velocities, in the mesh's vertex order) and it answers the
/// usual questions about it:
///
/// ```
/// use supple::prelude::*;
/// let mesh = box_grid(&BoxGrid { cells: [1, 1, 1], cell_size: Vector3::repeat(0.1),
///     origin: Vector3::zeros(), split: TetSplit::Five });
/// let body = BodyDesc::of(mesh).name("cube").density(500.0)
///     .velocity(Vector3::new(2.0, 0.0, 0.0)).build()?;
/// // 0.1 m cube of 500 kg/m³: 0.5 kg, moving at 2 m/s.
/// assert!((body.mass.total() - 0.5).abs() < 1e-12);
/// assert!((body.volume() - 1e-3).abs() < 1e-15);
/// assert!((body.kinetic_energy() - 1.0).abs() < 1e-12);
/// assert!((body.momentum() - Vector3::new(1.0, 0.0, 0.0)).norm() < 1e-12);
/// assert!((body.center_of_mass() - Vector3::repeat(0.05)).norm() < 1e-15);
/// assert_eq!(body.check_state(), None, "a usable state");
/// # Ok::<(), BuildError>(())
/// ```
#[derive(Debug)]
pub struct Body {
    pub name: String,
    pub mesh: TetMesh,
    pub elems: ElementSet,
    pub model: Box<dyn ForceModel>,
    pub lame: Lame,
    pub density: f64,
    pub mass: Mass,
    pub damping: Rayleigh,
    /// Strain-rate damping or viscosity (`f_d = −D(x) v`), if any.
    pub viscosity: Option<Box<dyn Dissipation>>,
    /// `fixed[i]`: vertex `i` is held in place.
    pub fixed: Vec<bool>,
    pub x: Vec<Vector3<f64>>,
    pub v: Vec<Vector3<f64>>,
    /// External loads, scaled for [`time`](Self::time).
    pub loads: Loads,
    /// Constraints and prescribed motions (their fully held vertices are in `fixed`).
    pub constraints: Constraints,
    /// The time the loads and prescribed motions were last set for (the end of the step
    /// being taken; see [`set_time`](Self::set_time)).
    pub time: f64,
    pub(crate) rest_diagonal: f64,
}

impl Body {
    pub fn new(desc: BodyDesc) -> Result<Self, BodyError> {
        desc.mesh.validate()?;
        let lame = Lame::from_youngs_poisson(desc.youngs, desc.poisson)?;
        if !(desc.density > 0.0 && desc.density.is_finite()) {
            return Err(MaterialError::Density(desc.density).into());
        }
        for (key, value) in [("alpha", desc.damping.alpha), ("beta", desc.damping.beta)] {
            if !(value >= 0.0 && value.is_finite()) {
                return Err(BodyError::Damping { key, value });
            }
        }
        let viscous = match desc.viscosity {
            ViscosityKind::None => vec![],
            ViscosityKind::StrainRate { d_mu, d_lambda } => {
                vec![("d_mu", d_mu), ("d_lambda", d_lambda)]
            }
            ViscosityKind::LiesenfeldStolfi { eta1, eta2 } => vec![("eta1", eta1), ("eta2", eta2)],
        };
        for (key, value) in viscous {
            if !(value >= 0.0 && value.is_finite()) {
                return Err(BodyError::Viscosity { key, value });
            }
        }
        if !desc.velocity.iter().all(|c| c.is_finite()) {
            return Err(BodyError::Velocity);
        }
        let n = desc.mesh.n_vertices();
        let mut fixed = vec![false; n];
        for &i in &desc.fixed {
            *fixed
                .get_mut(i as usize)
                .ok_or(BodyError::FixedOutOfRange {
                    vertex: i,
                    n_vertices: n,
                })? = true;
        }
        let elems = ElementSet::new(&desc.mesh);
        let loads = Loads::new(&desc.mesh, &elems.pattern, &desc.loads)?;
        let mut constraints = Constraints::new(n, &fixed, &desc.constraints)?;
        let mut v0 = vec![Vector3::zeros(); n];
        constraints.set_time(0.0, &mut fixed, &desc.mesh.positions, &mut v0);
        let mass = Mass::new(&elems, n, desc.density, desc.mass);
        let model = build_model(desc.model, lame, &desc.mesh, &elems);
        let viscosity = build_viscosity(desc.viscosity, &elems);
        let (lo, hi) = desc.mesh.bounding_box();
        // The body starts at rest; the world places prescribed vertices at each step's end.
        let x = desc.mesh.positions.clone();
        let v = (0..n)
            .map(|i| {
                if fixed[i] {
                    Vector3::zeros()
                } else {
                    desc.velocity
                }
            })
            .collect();
        Ok(Self {
            name: desc.name,
            x,
            v,
            rest_diagonal: (hi - lo).norm(),
            mesh: desc.mesh,
            elems,
            model,
            lame,
            density: desc.density,
            mass,
            damping: desc.damping,
            viscosity,
            fixed,
            loads,
            constraints,
            time: 0.0,
        })
    }

    /// Sets the loads and prescribed motions for time `t` (the world calls this with the end
    /// time of each step before the integrator runs): load factors `s(t)`, the active
    /// constraints (released vertices become free with their motion's velocity) and the held
    /// components of `x` at their targets.
    pub fn set_time(&mut self, t: f64) {
        self.time = t;
        self.loads.set_time(t);
        if !self.constraints.is_empty() {
            let rest = &self.mesh.positions;
            self.constraints
                .set_time(t, &mut self.fixed, rest, &mut self.v);
            self.constraints.place_at(t, rest, &mut self.x);
        }
    }

    /// Sets the loads and the held components of `x` on the path from time `from` (`None`:
    /// from no load and the rest position) to [`time`](Self::time), at fraction `mix` (the
    /// load steps of a static solve).
    pub fn set_path(&mut self, from: Option<f64>, mix: f64) {
        self.loads.set_path(from, self.time, mix);
        self.constraints
            .place_path(from, self.time, mix, &self.mesh.positions, &mut self.x);
    }

    /// True when the loads and prescribed motions are the same at `t1` and `t2`.
    pub fn same_inputs(&self, t1: f64, t2: f64) -> bool {
        self.loads.same_at(t1, t2) && self.constraints.same_at(t1, t2)
    }

    /// The total force `f_el(x) + M g + f_load(x)` at the current positions (refreshes the
    /// model's frames at `x`), written into `out`.
    pub fn total_force(&mut self, gravity: &Vector3<f64>, out: &mut [Vector3<f64>]) {
        self.model.update_frames(&self.elems, &self.x);
        for (o, m) in out.iter_mut().zip(&self.mass.lumped) {
            *o = *m * gravity;
        }
        self.model.add_forces(&self.elems, &self.x, out);
        self.loads.add_forces(&self.x, out);
    }

    /// The reaction force and torque of each constraint (and of the body's own fixed
    /// vertices, named `fixed`), from the total force at the current positions (see
    /// [`crate::constraint`]). Refreshes the model's frames at `x`.
    pub fn reactions(&mut self, gravity: &Vector3<f64>) -> Vec<Reaction> {
        let mut f = vec![Vector3::zeros(); self.n_vertices()];
        self.total_force(gravity, &mut f);
        self.constraints.reactions(&f, &self.x, Some("fixed"))
    }

    pub fn n_vertices(&self) -> usize {
        self.x.len()
    }

    /// Current volume (sum of signed tet volumes).
    pub fn volume(&self) -> f64 {
        self.elems
            .sum(|e| crate::mesh::signed_volume(&self.elems.tets[e].map(|i| self.x[i as usize])))
    }

    /// Smallest current/rest volume ratio over the tets (negative when a tet is inverted).
    pub fn min_volume_ratio(&self) -> f64 {
        (0..self.elems.len())
            .map(|e| {
                crate::mesh::signed_volume(&self.elems.tets[e].map(|i| self.x[i as usize]))
                    / self.elems.volume[e]
            })
            .fold(f64::INFINITY, f64::min)
    }

    /// Per-tet current/rest volume ratio (an output field).
    pub fn volume_ratios(&self) -> Vec<f64> {
        (0..self.elems.len())
            .map(|e| {
                crate::mesh::signed_volume(&self.elems.tets[e].map(|i| self.x[i as usize]))
                    / self.elems.volume[e]
            })
            .collect()
    }

    pub fn kinetic_energy(&self) -> f64 {
        let mut scratch = vec![Vector3::zeros(); self.n_vertices()];
        self.mass.kinetic_energy(&self.elems, &self.v, &mut scratch)
    }

    /// Elastic energy at `x`, where the model has one. Frames are not refreshed (output must
    /// not change the simulation): models evaluate their energy at `x` itself.
    pub fn elastic_energy(&mut self) -> Option<f64> {
        self.model.energy(&self.elems, &self.x)
    }

    /// Per-element von Mises stress (Pa) at `x`, where the model defines a stress (frames
    /// are not refreshed, like [`elastic_energy`](Self::elastic_energy)).
    pub fn von_mises_stress(&mut self) -> Option<Vec<f64>> {
        let mut sigma = vec![nalgebra::Matrix3::zeros(); self.elems.len()];
        self.model
            .cauchy_stress(&self.elems, &self.x, &mut sigma)
            .then(|| sigma.iter().map(crate::fem::material::von_mises).collect())
    }

    /// Gravitational potential energy relative to the rest positions,
    /// `Σ m_i (−g · (x_i − x⁰_i))` (lumped masses).
    pub fn potential_energy(&self, gravity: &Vector3<f64>) -> f64 {
        self.mass
            .lumped
            .iter()
            .zip(self.x.iter().zip(&self.mesh.positions))
            .map(|(m, (x, x0))| -m * gravity.dot(&(x - x0)))
            .sum()
    }

    /// Linear momentum `Σ m_i v_i` (lumped masses; equal to `1ᵀ M v` for both mass kinds).
    pub fn momentum(&self) -> Vector3<f64> {
        self.mass
            .lumped
            .iter()
            .zip(&self.v)
            .map(|(m, v)| *m * v)
            .sum()
    }

    pub fn center_of_mass(&self) -> Vector3<f64> {
        let c: Vector3<f64> = self
            .mass
            .lumped
            .iter()
            .zip(&self.x)
            .map(|(m, x)| *m * x)
            .sum();
        c / self.mass.total()
    }

    /// Why the state is unusable, if it is: a non-finite position or velocity, or a vertex
    /// farther than [`EXPLOSION_FACTOR`] rest bounding-box diagonals from the centre of mass.
    pub fn check_state(&self) -> Option<String> {
        if let Some(i) = self.x.iter().position(|p| !p.iter().all(|c| c.is_finite())) {
            return Some(format!("vertex {i} has a non-finite position"));
        }
        if let Some(i) = self.v.iter().position(|p| !p.iter().all(|c| c.is_finite())) {
            return Some(format!("vertex {i} has a non-finite velocity"));
        }
        let c = self.center_of_mass();
        let limit = EXPLOSION_FACTOR * self.rest_diagonal;
        if let Some(i) = self.x.iter().position(|p| (p - c).norm() > limit) {
            return Some(format!(
                "vertex {i} is {:.3e} m from the centre of mass, more than {EXPLOSION_FACTOR} rest diagonals ({limit:.3e} m)",
                (self.x[i] - c).norm()
            ));
        }
        None
    }

    /// Bounding box of the current positions.
    pub fn bounding_box(&self) -> (Vector3<f64>, Vector3<f64>) {
        bounding_box(&self.x)
    }
}

/// A body has exploded when a vertex is this many rest bounding-box diagonals away from
/// its centre of mass (a deformation no material here survives).
pub const EXPLOSION_FACTOR: f64 = 100.0;
