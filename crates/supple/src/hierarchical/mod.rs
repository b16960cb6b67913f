//! Hauth & Straßer's hierarchical corotational method (2004, §5.2 and §7.3–7.4): a coarse
//! mesh simulated with Green strain (St.Venant–Kirchhoff, Newton), whose per-element rotations
//! (polar decomposition of the coarse deformation gradient) are carried down to octasected
//! finer levels that are solved corotationally, i.e. linearly, with PCG.
//!
//! **Levels.** [`Hierarchy`] nests the meshes (each tet → 8, e.g. 70 → 560 → 4480 tets). The
//! coarse level is a plain [`Body`] stepped by the crate's Newton integrators (backward Euler
//! or BDF); the fine level is a [`Body`] on the finest mesh whose model is
//! [`CoarseFrameCorotational`]: every fine tet uses the frame `R_c` of the coarse tet it lies in
//! (one frame per 64 fine tets after two octasections, as in the paper's Example 3). The frames
//! are computed from the *coarse solution* (§7.3: "from the configuration of the coarse level,
//! the rotation state is computed by the polar decomposition of the deformation gradient,
//! then propagated to the finer levels"), every `update_every` steps (the paper: every 150 ms
//! at dt = 30 ms).
//!
//! **The fine step.** With the frames kept, the fine elastic force is affine in `x`,
//! `f(x) = f(ξ) − K_R (x − ξ)` with `K_R = Σ_e R_c K_e R_cᵀ`, so the implicit formula
//! `x⁺ = ξ + γ v⁺`, `M (v⁺ − η) = γ (f(x⁺) + M g + f_load)` (backward Euler: `ξ = x`, `η = v`,
//! `γ = h`; BDF(k): the combinations of [`crate::time::Bdf`]) is one linear system
//! `(M + γ² K_R) v⁺ = M η + γ (f(ξ) + M g + f_load(ξ))`, whose matrix only changes with the
//! frames. The paper leaves open how the two levels combine; both readings are here
//! ([`Reading`]):
//! - **(a) [`Reading::Detail`]**: the coarse coefficients are the nonlinear coarse solution
//!   and the fine solve is restricted to the hierarchical detail. In the hierarchical basis
//!   `v = T c` ([`Hierarchy::to_nodal`]) the system is `Tᵀ A T c = Tᵀ b`; its coarse block is
//!   replaced by the coarse solve and PCG solves the detail block `(TᵀAT)_DD c_D =
//!   (Tᵀ(b − A T [c_C; 0]))_D` (see [`detail`]). The fine field's coarse vertices are then
//!   exactly the coarse solution.
//! - **(b) [`Reading::Full`]**: the whole fine field is solved corotationally with the coarse
//!   frames, the PCG warm-started from the prolonged coarse motion (the first guess is the
//!   current fine velocity plus the prolonged change of the coarse velocity over the coarse
//!   step). The coarse level then only supplies rotations and the first guess; the fine
//!   coarse vertices may drift from the coarse solution.
//!
//! **What differs from the paper**, besides the reading: Hauth & Straßer recompute the
//! rotations only for the top level; so do we. Their fine solve is a preconditioned CG on the
//! finer levels without saying which preconditioner; ours is, for (b), the crate's
//! [`crate::linalg::Pcg`] with the settings' preconditioner (Eisenstat-SSOR by default) or block
//! Jacobi plus an exact solve on the coarse level's space ([`two_level`]), and for (a) block
//! Jacobi on the hierarchical matrix. Constraints must hold all
//! three components of a vertex (a coarse vertex set is carried to the fine level with the
//! midpoints of its edges, [`Hierarchy::refine_vertex_set`]); tractions and pressures on
//! coarse faces act on the four-per-refinement fine faces inside them, nodal loads on the
//! coarse vertex they name.
//!
//! ```
//! use supple::body::BodyDesc;
//! use supple::fem::material::ModelKind;
//! use supple::hierarchical::{HierarchicalBody, HierarchySettings, Reading};
//! use supple::mesh::{box_grid, BoxGrid, TetSplit};
//! use supple::nalgebra::Vector3;
//!
//! // A 10-tet bar, octasected twice (640 fine tets), clamped at z = 0, sagging sideways.
//! let coarse = box_grid(&BoxGrid {
//!     cells: [1, 1, 2],
//!     cell_size: Vector3::repeat(0.05),
//!     origin: Vector3::zeros(),
//!     split: TetSplit::Five,
//! });
//! let desc = BodyDesc::new("bar", coarse, ModelKind::Stvk, 2.6e3, 0.3, 1000.0)
//!     .with_fixed_where(|p| p.z < 1e-9);
//! let settings = HierarchySettings { reading: Reading::Full, ..HierarchySettings::default() };
//! let mut body = HierarchicalBody::new(desc, settings)?;
//! assert_eq!(body.fine.elems.len(), 640);
//! for _ in 0..5 {
//!     let stats = body.step(0.03, &Vector3::new(9.81, 0.0, 0.0))?;
//!     assert!(stats.fine_converged);
//! }
//! assert!(body.fine.x.iter().any(|x| x.x > 1e-3));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod detail;
mod fine;
mod stepper;
#[cfg(test)]
mod tests;
pub mod two_level;

pub use stepper::HierarchicalStepper;

use crate::body::{Body, BodyDesc, BodyError};
#[cfg(doc)]
use crate::fem::material::CoarseFrameCorotational;
use crate::fem::material::ModelKind;
use crate::linalg::PcgSettings;
use crate::load::{LoadDesc, LoadKind};
use crate::mesh::{Hierarchy, MeshError};
use crate::time::{IntegratorError, NewtonSettings, StepError, StepStats};
use nalgebra::Vector3;
use thiserror::Error;

/// How the coarse and fine levels combine (module notes; the paper admits both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reading {
    /// (a) Coarse coefficients from the nonlinear coarse solve, the fine solve restricted to
    /// the hierarchical detail.
    #[default]
    Detail,
    /// (b) The whole fine field solved corotationally with the coarse rotations, warm-started
    /// from the prolonged coarse motion.
    Full,
}

/// The time-stepping formula of both levels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Scheme {
    #[default]
    BackwardEuler,
    /// BDF of order 2 or 3 (Hauth & Straßer §7.4 run the liver with BDF(3)). The coarse level
    /// starts as [`crate::time::Bdf`] does (BDF3: a Richardson-extrapolated backward Euler
    /// step); the fine level starts with backward Euler, then BDF2, then the full order.
    Bdf { order: u8 },
}

/// Settings of a [`HierarchicalBody`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HierarchySettings {
    /// Octasections from the coarse to the fine mesh (≥ 1; the paper uses two for the bar and
    /// one for the liver).
    pub levels: usize,
    pub reading: Reading,
    /// Refresh the frames every this many steps (≥ 1; 150 ms / 30 ms = 5 in Example 3).
    pub update_every: u32,
    pub scheme: Scheme,
    /// The coarse level's Newton iteration (its linear solver included).
    pub newton: NewtonSettings,
    /// The fine level's PCG: stopping rule, and the preconditioner of reading (b) (reading (a)
    /// always uses block Jacobi on the hierarchical matrix, [`detail`]).
    pub pcg: PcgSettings,
    /// Reading (b): precondition with block Jacobi plus an exact solve on the coarse level's
    /// space ([`two_level`]) instead of `pcg.preconditioner`. Fewer iterations always; faster
    /// only while the coarse level is small (its dense factor is applied every iteration).
    pub coarse_correction: bool,
}

impl Default for HierarchySettings {
    fn default() -> Self {
        Self {
            levels: 2,
            reading: Reading::Detail,
            update_every: 5,
            scheme: Scheme::BackwardEuler,
            newton: NewtonSettings::default(),
            pcg: PcgSettings::default(),
            coarse_correction: false,
        }
    }
}

/// Why a hierarchical body could not be built.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum HierarchyError {
    #[error(transparent)]
    Mesh(#[from] MeshError),
    #[error("{level} level: {source}")]
    Body {
        level: &'static str,
        source: BodyError,
    },
    #[error(transparent)]
    Integrator(#[from] IntegratorError),
    #[error("hierarchy.{key} = {value}: {reason}")]
    Setting {
        key: &'static str,
        value: f64,
        reason: &'static str,
    },
    #[error("load `{load}`: a face is not a face of the coarse mesh")]
    Face { load: String },
    #[error(
        "the hierarchical body has Rayleigh damping only (no strain-rate damping or viscosity)"
    )]
    Viscosity,
    #[error("constraint `{constraint}`: the hierarchical body holds only all three components of a vertex")]
    PartialConstraint { constraint: String },
}

/// What one step of a hierarchical body did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct HierarchyStepStats {
    /// The coarse Newton step (Newton and coarse linear-solver iterations).
    pub coarse: StepStats,
    /// PCG iterations of the fine solve.
    pub fine_iterations: usize,
    /// Its final relative residual, and whether it met the tolerance.
    pub fine_residual: f64,
    pub fine_converged: bool,
    /// The frames were refreshed in this step, and the fine matrix (with its preconditioner)
    /// assembled.
    pub frames_updated: bool,
    pub fine_assembled: bool,
    /// Wall seconds of the coarse step and of the fine level (frames, assembly, solve).
    pub coarse_s: f64,
    pub fine_s: f64,
}

/// A body simulated by the hierarchical corotational method on its own (module notes); in a
/// [`crate::world::World`] the same method is the fine body's integrator,
/// [`HierarchicalStepper`].
#[derive(Debug)]
pub struct HierarchicalBody {
    /// The fine level: the finest mesh with [`CoarseFrameCorotational`]; its `x`, `v` are the
    /// simulated state.
    pub fine: Body,
    /// The hierarchy, the coarse level and the fine level's workspaces.
    pub stepper: HierarchicalStepper,
    time: f64,
}

impl HierarchicalBody {
    /// Builds both levels from a description of the coarse body: its mesh is octasected
    /// `settings.levels` times; its material, density, mass kind, damping, fixed vertices,
    /// constraints and loads are carried to the fine level (module notes); its model runs on
    /// the coarse level (St.Venant–Kirchhoff is the paper's choice).
    pub fn new(coarse: BodyDesc, settings: HierarchySettings) -> Result<Self, HierarchyError> {
        let (stepper, fine) = HierarchicalStepper::new(coarse, settings)?;
        Ok(Self {
            fine,
            stepper,
            time: 0.0,
        })
    }

    pub fn settings(&self) -> &HierarchySettings {
        self.stepper.settings()
    }

    /// The octasection hierarchy (coarse mesh first).
    pub fn hierarchy(&self) -> &Hierarchy {
        &self.stepper.hierarchy
    }

    /// The coarse level.
    pub fn coarse(&self) -> &Body {
        &self.stepper.coarse
    }

    /// The simulated time.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Advances both levels by `dt` (see [`HierarchicalStepper::advance`]). On an error the
    /// state is unspecified.
    pub fn step(
        &mut self,
        dt: f64,
        gravity: &Vector3<f64>,
    ) -> Result<HierarchyStepStats, StepError> {
        if !(dt > 0.0 && dt.is_finite()) {
            return Err(StepError::NonFinite("time step (or a step ≤ 0)"));
        }
        let t1 = self.time + dt;
        self.fine.set_time(t1);
        let stats = self
            .stepper
            .advance(&mut self.fine, None, &[], self.time, dt, gravity)?;
        self.time = t1;
        Ok(stats)
    }
}

/// The fine level's description: the finest mesh `h.finest()`, the coarse material, the
/// coarse vertex sets and faces carried down (module notes). Its model is a placeholder that
/// [`HierarchicalStepper`] replaces with [`CoarseFrameCorotational`].
pub fn fine_description(coarse: &BodyDesc, h: &Hierarchy) -> Result<BodyDesc, HierarchyError> {
    let mut fine = coarse.clone();
    fine.name = format!("{} (fine)", coarse.name);
    fine.mesh = h.finest().clone();
    // A placeholder the hierarchical body replaces with the coarse-frame model.
    fine.model = ModelKind::Linear;
    fine.fixed = h.refine_vertex_set(&coarse.fixed);
    for c in &mut fine.constraints {
        c.vertices = h.refine_vertex_set(&c.vertices);
    }
    fine.loads = coarse
        .loads
        .iter()
        .map(|load| -> Result<LoadDesc, HierarchyError> {
            let refine = |faces: &[[u32; 3]]| {
                h.refine_faces(faces).ok_or_else(|| HierarchyError::Face {
                    load: load.name.clone(),
                })
            };
            let kind = match &load.kind {
                LoadKind::Nodal(forces) => LoadKind::Nodal(forces.clone()),
                LoadKind::Traction { faces, traction } => LoadKind::Traction {
                    faces: refine(faces)?,
                    traction: *traction,
                },
                LoadKind::Pressure {
                    faces,
                    pressure,
                    follower,
                } => LoadKind::Pressure {
                    faces: refine(faces)?,
                    pressure: *pressure,
                    follower: *follower,
                },
            };
            Ok(LoadDesc {
                kind,
                ..load.clone()
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(fine)
}
