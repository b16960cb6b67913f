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
//! [`crate::linalg::Pcg`] with the settings' preconditioner (block Jacobi by default) or block
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
#[cfg(test)]
mod tests;
pub mod two_level;

use crate::body::{Body, BodyDesc, BodyError};
use crate::clock::Instant;
use crate::constraint::Components;
use crate::fem::material::{CoarseFrameCorotational, ModelKind, ViscosityKind};
use crate::linalg::PcgSettings;
use crate::load::{LoadDesc, LoadKind};
use crate::mesh::{Hierarchy, MeshError};
use crate::time::{
    Integrator, IntegratorError, IntegratorKind, NewtonSettings, StepError, StepStats,
};
use fine::FineLevel;
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

/// A body simulated by the hierarchical corotational method (module notes).
#[derive(Debug)]
pub struct HierarchicalBody {
    pub hierarchy: Hierarchy,
    /// The coarse level (its model from the description, normally St.Venant–Kirchhoff).
    pub coarse: Body,
    /// The fine level: the finest mesh with [`CoarseFrameCorotational`]; its `x`, `v` are the
    /// simulated state.
    pub fine: Body,
    settings: HierarchySettings,
    coarse_integrator: Box<dyn Integrator>,
    level: FineLevel,
    /// The coarse velocities at the start of the step (the first guess of reading (b)).
    coarse_v0: Vec<Vector3<f64>>,
    steps: u64,
    time: f64,
}

impl HierarchicalBody {
    /// Builds both levels from a description of the coarse body: its mesh is octasected
    /// `settings.levels` times; its material, density, mass kind, damping, fixed vertices,
    /// constraints and loads are carried to the fine level (module notes); its model runs on
    /// the coarse level (St.Venant–Kirchhoff is the paper's choice).
    pub fn new(coarse: BodyDesc, settings: HierarchySettings) -> Result<Self, HierarchyError> {
        let setting = |key, value: f64, reason| HierarchyError::Setting { key, value, reason };
        if settings.levels == 0 || settings.levels > 4 {
            return Err(setting(
                "levels",
                settings.levels as f64,
                "must be 1 to 4 (each level has 8× the tets)",
            ));
        }
        if settings.update_every == 0 {
            return Err(setting("update_every", 0.0, "must be at least 1"));
        }
        let order = match settings.scheme {
            Scheme::BackwardEuler => 1,
            Scheme::Bdf { order } if (2..=3).contains(&order) => order,
            Scheme::Bdf { order } => {
                return Err(setting("bdf.order", order as f64, "must be 2 or 3"))
            }
        };
        if !(settings.pcg.tolerance > 0.0 && settings.pcg.tolerance.is_finite()) {
            return Err(setting(
                "pcg.tolerance",
                settings.pcg.tolerance,
                "must be a finite number above 0",
            ));
        }
        if settings.pcg.max_iterations == 0 {
            return Err(setting("pcg.max_iterations", 0.0, "must be at least 1"));
        }
        if coarse.viscosity != ViscosityKind::None {
            return Err(HierarchyError::Viscosity);
        }
        for c in &coarse.constraints {
            if c.components != Components::All {
                return Err(HierarchyError::PartialConstraint {
                    constraint: c.name.clone(),
                });
            }
        }
        let hierarchy = Hierarchy::new(coarse.mesh.clone(), settings.levels)?;
        let fine_desc = fine_description(&coarse, &hierarchy)?;
        let coarse_body = Body::new(coarse).map_err(|source| HierarchyError::Body {
            level: "coarse",
            source,
        })?;
        let mut fine = Body::new(fine_desc).map_err(|source| HierarchyError::Body {
            level: "fine",
            source,
        })?;
        // Frames refreshed on every call: this body decides when to call (`update_every`).
        fine.model = Box::new(CoarseFrameCorotational::new(
            fine.lame,
            &hierarchy,
            &fine.elems,
            1,
        )?);
        let kind = match settings.scheme {
            Scheme::BackwardEuler => IntegratorKind::BackwardEuler {
                newton: settings.newton,
            },
            Scheme::Bdf { order } => IntegratorKind::Bdf {
                order,
                newton: settings.newton,
            },
        };
        let coarse_integrator = kind.build(&coarse_body)?;
        let level = FineLevel::new(&fine, &hierarchy, order, settings.coarse_correction);
        let coarse_n = coarse_body.n_vertices();
        Ok(Self {
            hierarchy,
            coarse: coarse_body,
            fine,
            settings,
            coarse_integrator,
            level,
            coarse_v0: vec![Vector3::zeros(); coarse_n],
            steps: 0,
            time: 0.0,
        })
    }

    pub fn settings(&self) -> &HierarchySettings {
        &self.settings
    }

    /// The simulated time.
    pub fn time(&self) -> f64 {
        self.time
    }

    /// Advances both levels by `dt`: loads and prescribed motions are set for the end of the
    /// step, the coarse level takes its Newton step, the frames are refreshed from the coarse
    /// solution when due, and the fine level takes its linear step in the chosen reading.
    /// On an error the state is unspecified.
    pub fn step(
        &mut self,
        dt: f64,
        gravity: &Vector3<f64>,
    ) -> Result<HierarchyStepStats, StepError> {
        if !(dt > 0.0 && dt.is_finite()) {
            return Err(StepError::NonFinite("time step (or a step ≤ 0)"));
        }
        let t1 = self.time + dt;
        self.coarse.set_time(t1);
        self.fine.set_time(t1);
        let mut stats = HierarchyStepStats::default();

        let t0 = Instant::now();
        self.coarse.model.begin_step();
        self.coarse_v0.copy_from_slice(&self.coarse.v);
        stats.coarse = self.coarse_integrator.step(&mut self.coarse, dt, gravity)?;
        if let Some(why) = self.coarse.check_state() {
            return Err(StepError::Bound {
                what: "coarse level",
                detail: why,
            });
        }
        stats.coarse_s = t0.elapsed().as_secs_f64();

        let t0 = Instant::now();
        stats.frames_updated = self
            .steps
            .is_multiple_of(u64::from(self.settings.update_every));
        if stats.frames_updated {
            self.level.update_frames(&mut self.fine, &self.coarse.x);
        }
        let solve = self.level.step(
            &mut self.fine,
            &self.hierarchy,
            &self.coarse,
            &self.coarse_v0,
            self.settings.reading,
            &self.settings.pcg,
            dt,
            gravity,
        )?;
        stats.fine_iterations = solve.iterations;
        stats.fine_residual = solve.residual;
        stats.fine_converged = solve.converged;
        stats.fine_assembled = solve.assembled;
        stats.fine_s = t0.elapsed().as_secs_f64();
        self.steps += 1;
        self.time = t1;
        Ok(stats)
    }
}

/// The fine level's description: the finest mesh, the coarse material, the coarse vertex
/// sets and faces carried down (module notes).
fn fine_description(coarse: &BodyDesc, h: &Hierarchy) -> Result<BodyDesc, HierarchyError> {
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
