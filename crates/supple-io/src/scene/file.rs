//! The scene file as written: serde structures mirroring the TOML, before validation.

use super::OutputSettings;
use crate::import::Orient;
use serde::Deserialize;
use std::path::PathBuf;

/// A Supple scene (TOML): what to simulate, with which settings, and what to write. Every
/// key has a default except each body's `mesh` and `material.model`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(title = "Supple scene")]
pub(super) struct SceneFile {
    /// The scene's name (output folder, pictures); default: the file's stem.
    pub(super) name: Option<String>,
    /// Time step (s); adaptive scenes: the frame period.
    #[serde(default = "default_dt")]
    pub(super) dt: f64,
    /// Simulated time (s).
    #[serde(default = "default_duration")]
    pub(super) duration: f64,
    /// Gravity (m/s²).
    #[serde(default = "default_gravity")]
    pub(super) gravity: [f64; 3],
    #[serde(default)]
    pub(super) integrator: IntegratorSection,
    #[serde(default)]
    pub(super) solver: SolverSection,
    #[serde(default)]
    pub(super) output: OutputSection,
    #[serde(default)]
    pub(super) body: Vec<BodySection>,
    #[serde(default)]
    pub(super) probe: Vec<ProbeSection>,
    pub(super) contact: Option<super::contact::ContactSection>,
    #[serde(default)]
    pub(super) obstacle: Vec<super::contact::ObstacleSection>,
    #[serde(default)]
    pub(super) step_control: StepControlSection,
    #[serde(default)]
    pub(super) load: Vec<super::bc::LoadSection>,
    #[serde(default)]
    pub(super) constraint: Vec<super::bc::ConstraintSection>,
    #[serde(default)]
    pub(super) grab: Vec<super::grab::GrabSection>,
    #[serde(default)]
    pub(super) spring: Vec<super::link::SpringSection>,
    #[serde(default)]
    pub(super) exact_constraint: Vec<super::exact::ExactSection>,
    #[serde(default)]
    pub(super) exact: super::exact::ExactSettingsSection,
    #[serde(default)]
    pub(super) rigid_core: Vec<super::rigid::RigidSection>,
    pub(super) adaptive: Option<super::adaptive::AdaptiveSection>,
}

/// `[step_control]`: how failed steps are judged and retried (absent keys keep the library's
/// defaults, see `supple::world::StepControl`).
#[derive(Debug, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct StepControlSection {
    pub(super) max_halvings: Option<u32>,
    pub(super) unconverged_halvings: Option<u32>,
    pub(super) volume_range: Option<[f64; 2]>,
    pub(super) max_inverted_share: Option<f64>,
    pub(super) max_unconverged_share: Option<f64>,
    pub(super) end_inverted_share: Option<f64>,
    pub(super) max_energy_rise: Option<f64>,
    pub(super) contact_splits: Option<u32>,
}

pub(super) fn default_gravity() -> [f64; 3] {
    [0.0, -9.81, 0.0]
}

/// The defaults of keys a minimal scene leaves out, the same as the Python module's
/// (`supple.World(dt=0.01, duration=1.0)`, `supple.Body(density=1000.0)`): a scene needs only
/// a body's mesh and material model.
pub(super) fn default_dt() -> f64 {
    0.01
}

pub(super) fn default_duration() -> f64 {
    1.0
}

pub(super) fn default_density() -> f64 {
    1000.0
}

/// Young's modulus (Pa) and Poisson's ratio when a material gives no elastic pair (the
/// bundled bar's: a soft rubber); either alone takes the other from here.
pub(super) const DEFAULT_YOUNGS: f64 = 1e5;
pub(super) const DEFAULT_POISSON: f64 = 0.33;

/// `[integrator]`: the scheme and its own settings (each key belongs to some kinds only; the
/// linear solver of implicit kinds is `[solver]`).
#[derive(Debug, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct IntegratorSection {
    #[serde(default)]
    pub(super) kind: IntegratorName,
    /// Newton (backward_euler, bdf2, bdf3, static): relative residual tolerance.
    pub(super) newton_tolerance: Option<f64>,
    pub(super) newton_max_iterations: Option<u32>,
    pub(super) line_search: Option<bool>,
    /// static: load increments.
    pub(super) load_steps: Option<u32>,
    /// symplectic_euler (0: from the Courant bound) and rkf45 (0: adaptive).
    pub(super) substeps: Option<u32>,
    /// newmark: the step ladder's depth m (steps dt/2^i, i = 0..m).
    pub(super) levels: Option<u32>,
    /// rkf45 tolerances.
    pub(super) rtol: Option<f64>,
    pub(super) atol: Option<f64>,
}

#[derive(
    Debug, Deserialize, Default, Clone, Copy, PartialEq, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub(super) enum IntegratorName {
    #[default]
    BackwardEulerLinearized,
    BackwardEuler,
    Bdf2,
    Bdf3,
    Static,
    SymplecticEuler,
    Newmark,
    Rkf45,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(super) struct SolverSection {
    pub(super) kind: SolverName,
    pub(super) tolerance: f64,
    pub(super) max_iterations: usize,
    pub(super) warm_start: WarmStartName,
    pub(super) preconditioner: PreconditionerName,
    pub(super) ordering: OrderingName,
    pub(super) seed: u64,
}

impl Default for SolverSection {
    fn default() -> Self {
        Self {
            kind: SolverName::Pcg,
            tolerance: 1e-6,
            max_iterations: 1000,
            warm_start: WarmStartName::Adaptive,
            preconditioner: PreconditionerName::Auto,
            ordering: OrderingName::Nd,
            seed: 1,
        }
    }
}

#[derive(Debug, Deserialize, Clone, Copy, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum PreconditionerName {
    BlockJacobi,
    BlockSsor,
    EisenstatSsor,
    MulticolorSsor,
    Amg,
    Auto,
}

#[derive(Debug, Deserialize, Clone, Copy, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum WarmStartName {
    Zero,
    Velocity,
    Extrapolate,
    Adaptive,
}

#[derive(Debug, Deserialize, Clone, Copy, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum SolverName {
    Pcg,
    Cholesky,
}

#[derive(Debug, Deserialize, Clone, Copy, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum OrderingName {
    Natural,
    Random,
    Amd,
    Mnd,
    Nd,
}

pub(super) type OutputSection = OutputSettings;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct BodySection {
    pub(super) name: Option<String>,
    pub(super) mesh: MeshSection,
    #[serde(default)]
    pub(super) transform: TransformSection,
    pub(super) material: MaterialSection,
    #[serde(default)]
    pub(super) mass: MassName,
    #[serde(default)]
    pub(super) damping: DampingSection,
    pub(super) viscosity: Option<ViscositySection>,
    #[serde(default)]
    pub(super) fixed: Vec<FixedSection>,
    #[serde(default)]
    pub(super) velocity: [f64; 3],
    /// An OBJ surface embedded in the tets (path relative to the scene file).
    pub(super) surface: Option<PathBuf>,
    /// Hauth & Straßer's hierarchy (`[body.hierarchy]`, see `hierarchy.rs`).
    pub(super) hierarchy: Option<super::hierarchy::HierarchySection>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum MeshSection {
    Box {
        cells: [usize; 3],
        cell_size: CellSize,
        #[serde(default)]
        origin: [f64; 3],
        #[serde(default = "default_split")]
        split: u8,
    },
    Tetgen {
        path: PathBuf,
        #[serde(default)]
        orient: Orient,
        /// Raise the mesh's smallest dihedral angles at load time (interior-vertex smoothing
        /// and 2-3/3-2 flips; boundary, vertex indices and volume kept), with the angles
        /// before and after as a note.
        #[serde(default, deserialize_with = "improve_flag")]
        #[schemars(with = "bool")]
        improve: bool,
    },
    /// Gmsh `.msh` 2.2 or 4.1 (ASCII).
    Gmsh {
        path: PathBuf,
        #[serde(default)]
        orient: Orient,
        /// Raise the mesh's smallest dihedral angles at load time (interior-vertex smoothing
        /// and 2-3/3-2 flips; boundary, vertex indices and volume kept), with the angles
        /// before and after as a note.
        #[serde(default, deserialize_with = "improve_flag")]
        #[schemars(with = "bool")]
        improve: bool,
    },
    /// VTK XML unstructured grid.
    Vtu {
        path: PathBuf,
        #[serde(default)]
        orient: Orient,
        /// Raise the mesh's smallest dihedral angles at load time (interior-vertex smoothing
        /// and 2-3/3-2 flips; boundary, vertex indices and volume kept), with the angles
        /// before and after as a note.
        #[serde(default, deserialize_with = "improve_flag")]
        #[schemars(with = "bool")]
        improve: bool,
    },
    /// Legacy VTK (ASCII).
    Vtk {
        path: PathBuf,
        #[serde(default)]
        orient: Orient,
        /// Raise the mesh's smallest dihedral angles at load time (interior-vertex smoothing
        /// and 2-3/3-2 flips; boundary, vertex indices and volume kept), with the angles
        /// before and after as a note.
        #[serde(default, deserialize_with = "improve_flag")]
        #[schemars(with = "bool")]
        improve: bool,
    },
    /// Medit `.mesh`.
    Medit {
        path: PathBuf,
        #[serde(default)]
        orient: Orient,
        /// Raise the mesh's smallest dihedral angles at load time (interior-vertex smoothing
        /// and 2-3/3-2 flips; boundary, vertex indices and volume kept), with the angles
        /// before and after as a note.
        #[serde(default, deserialize_with = "improve_flag")]
        #[schemars(with = "bool")]
        improve: bool,
    },
    /// A closed triangle surface (`.obj`, `.stl`) filled with tetrahedra by isosurface
    /// stuffing at lattice `spacing` (scene units).
    Surface {
        path: PathBuf,
        spacing: f64,
        /// Raise the stuffed mesh's smallest dihedral angles (as for a mesh file).
        #[serde(default, deserialize_with = "improve_flag")]
        #[schemars(with = "bool")]
        improve: bool,
    },
    /// Any of the above, chosen by the file's extension.
    File {
        path: PathBuf,
        #[serde(default)]
        orient: Orient,
        /// Raise the mesh's smallest dihedral angles at load time (interior-vertex smoothing
        /// and 2-3/3-2 flips; boundary, vertex indices and volume kept), with the angles
        /// before and after as a note.
        #[serde(default, deserialize_with = "improve_flag")]
        #[schemars(with = "bool")]
        improve: bool,
    },
    /// A mesh handed over in memory by a program (the Python module), by its index among
    /// the meshes given to [`super::scene_from_table`]; a scene file has none to name.
    Given { index: usize },
}

/// `improve = true | false`; a value of another type is reported as `improve: ...`, since
/// serde's path stops at the internally tagged `mesh` table.
fn improve_flag<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    use serde::de::Error;
    <bool as Deserialize>::deserialize(d).map_err(|e| D::Error::custom(format!("improve: {e}")))
}

pub(super) fn default_split() -> u8 {
    5
}

#[derive(Debug, Deserialize, Clone, Copy, schemars::JsonSchema)]
#[serde(untagged)]
pub(super) enum CellSize {
    Uniform(f64),
    PerAxis([f64; 3]),
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(super) struct TransformSection {
    pub(super) scale: f64,
    /// Rotation as roll, pitch, yaw in degrees (about x, then y, then z).
    pub(super) rotate_deg: [f64; 3],
    pub(super) translate: [f64; 3],
}

impl Default for TransformSection {
    fn default() -> Self {
        Self {
            scale: 1.0,
            rotate_deg: [0.0; 3],
            translate: [0.0; 3],
        }
    }
}

/// `[body.material]`: the model, its elastic constants as at most one of the pairs
/// (`youngs`, `poisson`), (`mu`, `lambda`) or (`alpha`, `beta`) (bulk and shear modulus,
/// Liesenfeld & Stolfi's native parameters; none: E = 1e5 Pa, ν = 0.33), and the model's
/// options.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct MaterialSection {
    /// The elastic model (required).
    pub(super) model: ModelName,
    /// Young's modulus E (Pa); default 1e5 when no other pair is given.
    #[schemars(extend("default" = DEFAULT_YOUNGS))]
    pub(super) youngs: Option<f64>,
    /// Poisson's ratio ν, in (−1, 0.5); default 0.33 when no other pair is given.
    #[schemars(extend("default" = DEFAULT_POISSON))]
    pub(super) poisson: Option<f64>,
    /// Lamé's shear modulus μ (Pa), with `lambda`.
    pub(super) mu: Option<f64>,
    /// Lamé's first parameter λ (Pa), with `mu`.
    pub(super) lambda: Option<f64>,
    /// Liesenfeld & Stolfi's bulk modulus (Pa), with `beta`.
    pub(super) alpha: Option<f64>,
    /// Liesenfeld & Stolfi's shear modulus (Pa), with `alpha`.
    pub(super) beta: Option<f64>,
    /// Mass density (kg/m³).
    #[serde(default = "default_density")]
    pub(super) density: f64,
    /// Corotational ("rotated" | "exact") and warped ("rotated" | "element").
    pub(super) tangent: Option<TangentName>,
    /// Corotational only.
    pub(super) rotation: Option<RotationName>,
    /// Corotational only.
    pub(super) update_every: Option<u32>,
    /// Warped (and mass_spring with `springs = "warped"`) only.
    pub(super) rotation_field: Option<RotationFieldName>,
    /// Warped (and mass_spring with `springs = "warped"`) only.
    pub(super) ghost_correction: Option<bool>,
    /// mass_spring only: "hookean" (default) | "linear" | "warped".
    pub(super) springs: Option<SpringsName>,
    /// fast_corotated only: local–global iterations per step (default 1, the paper's step).
    pub(super) iterations: Option<u32>,
    /// fast_corotated only: Gauss–Seidel sweeps of the volume constraints per iteration
    /// (default 2).
    pub(super) volume_sweeps: Option<u32>,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum SpringsName {
    Hookean,
    Linear,
    Warped,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum ModelName {
    Linear,
    Corotational,
    Warped,
    Stvk,
    Hybrid,
    LiesenfeldStolfi,
    FixedCorotated,
    MassSpring,
    FastCorotated,
}

#[derive(
    Debug, Deserialize, Clone, Copy, Default, PartialEq, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub(super) enum TangentName {
    #[default]
    Rotated,
    Exact,
    /// Warped only: the element-projected tangent.
    Element,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum RotationName {
    Polar,
    Svd,
    SvdInvertible,
    Qr,
}

#[derive(Debug, Deserialize, Clone, Copy, PartialEq, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum RotationFieldName {
    EdgeFrame,
    LeastSquares,
}

/// `[body.viscosity]`: dissipation beside Rayleigh damping.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum ViscositySection {
    StrainRate { d_mu: f64, d_lambda: f64 },
    LiesenfeldStolfi { eta1: f64, eta2: f64 },
}

#[derive(Debug, Deserialize, Clone, Copy, Default, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum MassName {
    #[default]
    Lumped,
    Consistent,
}

#[derive(Debug, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(super) struct DampingSection {
    pub(super) alpha: f64,
    pub(super) beta: f64,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum FixedSection {
    /// Vertices inside the axis-aligned box (bounds included).
    Box { min: [f64; 3], max: [f64; 3] },
    /// Vertices on the plane or on the side its normal points to.
    Plane { point: [f64; 3], normal: [f64; 3] },
    /// Vertices by index.
    Vertices(Vec<u32>),
    /// The vertices of a named region of the mesh file (a Gmsh physical group).
    Region(String),
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ProbeSection {
    pub(super) name: String,
    pub(super) body: Option<String>,
    pub(super) point: [f64; 3],
}
