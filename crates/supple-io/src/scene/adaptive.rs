//! `[adaptive]`: the scene's one body simulated with Debunne et al. 2000's adaptive
//! multiresolution method ("Adaptive Simulation of Soft Bodies in Real-Time": non-nested
//! levels §3.1, ghost nodes §3.2, split/merge eq. 9, the frame budget §4.3, the tool §5).
//!
//! The `[[body]]` gives the mesh of level 0 (a box, whose finer levels are generated with
//! the cells doubled per level, or a mesh file, with `adaptive.meshes` naming the finer
//! levels' files), the material (`model = "linear"`: Debunne's operator is linear elasticity
//! in Lamé form, eq. 1), the held nodes (box and plane selectors, applied to every level) and
//! the initial velocity. The scene's `dt` is the frame period `dt_frame` (§4.1); each level
//! takes `2^e_n` explicit steps per frame (the smallest power of two within its stability bound). See the README for the keys.

use super::file::{BodySection, FixedSection, MeshSection, SceneFile};
use super::{budget, finite3, positive, read_mesh, select_fixed, split_count, BodyIssue};
use super::{Scene, SceneError};
use crate::files::Files;
use nalgebra::{Matrix3, Rotation3, Vector3};
use serde::Deserialize;
use std::path::Path;
use supple::adaptive::generate::grid_levels;
use supple::adaptive::{
    debunne_levels, AdaptiveBody, AdaptiveSettings, Boundary, Budget, Coupling, Criterion,
    DebunneParams, Hierarchy, LameReading, ToolOrder, ToolPath, ToolSide, ToolTiming,
};
use supple::body::BodyDesc;
use supple::fem::material::ModelKind;
use supple::mesh::{BoxGrid, TetMesh, TetSplit};

/// Most levels a scene may ask for (the finest has `8^(levels−1)` times level 0's tets).
pub const MAX_LEVELS: usize = 6;
/// Largest interior jitter, in cells (more can invert tets).
pub const MAX_JITTER: f64 = 0.2;

/// `[adaptive]` as written.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct AdaptiveSection {
    /// Box body: number of levels generated (level 0 included).
    levels: Option<usize>,
    /// Mesh body: the finer levels' meshes, coarse to fine.
    #[serde(default)]
    meshes: Vec<MeshSection>,
    /// Box body: interior nodes moved by up to this many cells (non-nested levels, §3.1).
    #[serde(default = "default_jitter")]
    jitter: f64,
    #[serde(default = "default_seed")]
    seed: u64,
    #[serde(default)]
    boundary: BoundaryName,
    #[serde(default)]
    reading: ReadingName,
    /// Eq. 7 damping (Pa·s).
    #[serde(default)]
    phi: f64,
    #[serde(default)]
    psi: f64,
    #[serde(default)]
    coupling: CouplingName,
    #[serde(default)]
    criterion: CriterionName,
    split: f64,
    merge: f64,
    #[serde(default = "default_dwell")]
    dwell: u32,
    #[serde(default = "default_true")]
    adapt: bool,
    /// Split where the tool reaches (beyond the paper's eq. 9; `AdaptiveSettings::tool_refine`).
    #[serde(default = "default_true")]
    tool_refine: bool,
    /// Tool refinement's reach in tool radii (`AdaptiveSettings::tool_reach`).
    #[serde(default = "default_tool_reach")]
    tool_reach: f64,
    /// Tool refinement's order under a budget (`AdaptiveSettings::tool_order`).
    #[serde(default)]
    tool_order: ToolOrderName,
    /// Weight each tet by its share of active nodes (`AdaptiveSettings::share_overlap`).
    #[serde(default = "default_share_overlap")]
    share_overlap: bool,
    /// Tool contact kept while it presses (`AdaptiveSettings::tool_persistent`).
    #[serde(default = "default_true")]
    tool_persistent: bool,
    /// Which tool holds need the tool outside the body at the node
    /// (`AdaptiveSettings::tool_side`).
    #[serde(default)]
    tool_side: ToolSideName,
    /// When the tool's contact is evaluated (`AdaptiveSettings::tool_timing`).
    #[serde(default)]
    tool_timing: ToolTimingName,
    #[serde(default)]
    start_level: usize,
    budget: Option<BudgetSection>,
    tool: Option<ToolSection>,
}

fn default_jitter() -> f64 {
    0.12
}
fn default_seed() -> u64 {
    3
}
fn default_tool_reach() -> f64 {
    AdaptiveSettings::default().tool_reach
}

fn default_share_overlap() -> bool {
    AdaptiveSettings::default().share_overlap
}

fn default_dwell() -> u32 {
    10
}
fn default_true() -> bool {
    true
}

#[derive(Debug, Deserialize, Default, Clone, Copy, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum BoundaryName {
    #[default]
    Paper,
    Fe,
}

#[derive(Debug, Deserialize, Default, Clone, Copy, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ReadingName {
    #[default]
    Navier,
    Printed,
}

#[derive(Debug, Deserialize, Default, Clone, Copy, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum CouplingName {
    Paper,
    #[default]
    Variational,
}

#[derive(Debug, Deserialize, Default, Clone, Copy, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ToolOrderName {
    Criterion,
    Distance,
    #[default]
    Graded,
}

#[derive(Debug, Deserialize, Default, Clone, Copy, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ToolSideName {
    Any,
    Persistent,
    #[default]
    Outside,
}

#[derive(Debug, Deserialize, Default, Clone, Copy, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ToolTimingName {
    Frame,
    #[default]
    Step,
}

#[derive(Debug, Deserialize, Default, Clone, Copy, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum CriterionName {
    Paper,
    #[default]
    Interior,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
enum BudgetSection {
    /// (A struct variant, so that `deny_unknown_fields` refuses keys beside `kind`.)
    None {},
    Predictive {
        node_updates: u64,
    },
    Reactive {
        frame_seconds: Option<f64>,
    },
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct ToolSection {
    radius: f64,
    /// Keyframes `[t, x, y, z]`, times ascending.
    path: Vec<[f64; 4]>,
}

/// The validated adaptive body of a scene.
#[derive(Debug, Clone)]
pub struct SceneAdaptive {
    /// Level meshes, coarse to fine (transformed like the body).
    pub meshes: Vec<TetMesh>,
    /// Held nodes of each level.
    pub fixed: Vec<Vec<u32>>,
    pub density: f64,
    pub params: DebunneParams,
    pub settings: AdaptiveSettings,
    pub tool: Option<ToolPath>,
    pub velocity: Vector3<f64>,
}

/// What `[adaptive]` needs of the rest of the file, taken before the body is consumed.
pub(super) struct Pending {
    section: AdaptiveSection,
    base: Option<BoxGrid>,
    scale: f64,
    rotation: Matrix3<f64>,
    translation: Vector3<f64>,
    fixed: Vec<FixedSection>,
    lame: Option<(f64, f64)>,
}

/// Takes `[adaptive]` out of `file` and refuses what an adaptive scene cannot hold.
pub(super) fn take(file: &mut SceneFile) -> Result<Option<Pending>, String> {
    let Some(section) = file.adaptive.take() else {
        return Ok(None);
    };
    let others = [
        ("[contact]", file.contact.is_some()),
        ("[[obstacle]]", !file.obstacle.is_empty()),
        ("[[load]]", !file.load.is_empty()),
        ("[[constraint]]", !file.constraint.is_empty()),
        ("[[grab]]", !file.grab.is_empty()),
        ("[[spring]]", !file.spring.is_empty()),
        ("[[exact_constraint]]", !file.exact_constraint.is_empty()),
        ("[[rigid_core]]", !file.rigid_core.is_empty()),
        ("[[probe]]", !file.probe.is_empty()),
    ];
    if let Some((name, _)) = others.iter().find(|(_, set)| *set) {
        return Err(format!(
            "{name}: not available with [adaptive] (the adaptive body has its own tool, adaptive.tool)"
        ));
    }
    if file.body.len() != 1 {
        return Err(format!(
            "[adaptive]: needs exactly one [[body]] (the scene has {})",
            file.body.len()
        ));
    }
    let b: &BodySection = &file.body[0];
    let refused = [
        ("surface", b.surface.is_some()),
        ("viscosity", b.viscosity.is_some()),
        ("damping", b.damping.alpha != 0.0 || b.damping.beta != 0.0),
        ("mass", !matches!(b.mass, super::file::MassName::Lumped)),
    ];
    if let Some((key, _)) = refused.iter().find(|(_, set)| *set) {
        return Err(format!(
            "body[0].{key}: not available with [adaptive] (damping is adaptive.phi and adaptive.psi, eq. 7; masses are lumped)"
        ));
    }
    let base = match &b.mesh {
        MeshSection::Box {
            cells,
            cell_size,
            origin,
            split,
        } => Some(BoxGrid {
            cells: *cells,
            cell_size: Vector3::from(match cell_size {
                super::file::CellSize::Uniform(h) => [*h; 3],
                super::file::CellSize::PerAxis(h) => *h,
            }),
            origin: Vector3::from(*origin),
            split: if *split == 6 {
                TetSplit::Six
            } else {
                TetSplit::Five
            },
        }),
        _ => None,
    };
    let mut fixed = Vec::with_capacity(b.fixed.len());
    for (k, f) in b.fixed.iter().enumerate() {
        fixed.push(match f {
            FixedSection::Box { min, max } => FixedSection::Box {
                min: *min,
                max: *max,
            },
            FixedSection::Plane { point, normal } => FixedSection::Plane {
                point: *point,
                normal: *normal,
            },
            _ => {
                return Err(format!(
                    "body[0].fixed[{k}]: an adaptive body holds nodes on every level, so only box and plane selectors apply"
                ))
            }
        });
    }
    let t = &b.transform;
    let angles = Vector3::from(t.rotate_deg).map(f64::to_radians);
    Ok(Some(Pending {
        section,
        base,
        scale: t.scale,
        rotation: Rotation3::from_euler_angles(angles.x, angles.y, angles.z).into_inner(),
        translation: Vector3::from(t.translate),
        fixed,
        lame: b.material.lambda.zip(b.material.mu),
    }))
}

/// Validates `[adaptive]` against the body built from `[[body]]` (`body`, already checked),
/// with the scene's `dt` (the frame period) and gravity.
pub(super) fn finish(
    p: Pending,
    body: &BodyDesc,
    (dt, gravity): (f64, Vector3<f64>),
    path: &Path,
    files: Files<'_>,
    notes: &mut Vec<String>,
) -> Result<SceneAdaptive, SceneError> {
    let invalid = |message: String| SceneError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let a = p.section;
    if !matches!(body.model, ModelKind::Linear) {
        return Err(invalid(format!(
            "body[0].material.model = {:?}: [adaptive] runs Debunne's linear operator; use \"linear\"",
            body.model.name()
        )));
    }
    let (lambda, mu) = p.lame.unwrap_or_else(|| {
        let (e, nu) = (body.youngs, body.poisson);
        (
            e * nu / ((1.0 + nu) * (1.0 - 2.0 * nu)),
            e / (2.0 * (1.0 + nu)),
        )
    });
    for (key, v) in [("phi", a.phi), ("psi", a.psi)] {
        if !(v >= 0.0 && v.is_finite()) {
            return Err(invalid(format!(
                "adaptive.{key} = {v}: must be a finite number ≥ 0"
            )));
        }
    }
    if !(a.merge >= 0.0 && a.merge.is_finite()) {
        return Err(invalid(format!(
            "adaptive.merge = {}: must be a finite number ≥ 0",
            a.merge
        )));
    }
    if !(a.split > a.merge && a.split.is_finite()) {
        return Err(invalid(format!(
            "adaptive.split = {}: must be finite and above adaptive.merge = {} (hysteresis, §4.2)",
            a.split, a.merge
        )));
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let meshes = match (p.base, a.levels) {
        (Some(_), _) if !a.meshes.is_empty() => {
            return Err(invalid(
                "adaptive.meshes: the body is a box, whose levels are generated (adaptive.levels)"
                    .into(),
            ))
        }
        (Some(base), levels) => {
            let levels = levels.ok_or_else(|| {
                invalid("adaptive.levels: missing (the number of box levels, level 0 included)".into())
            })?;
            if !(1..=MAX_LEVELS).contains(&levels) {
                return Err(invalid(format!(
                    "adaptive.levels = {levels}: must be 1 to {MAX_LEVELS}"
                )));
            }
            if !(0.0..=MAX_JITTER).contains(&a.jitter) {
                return Err(invalid(format!(
                    "adaptive.jitter = {}: must be 0 to {MAX_JITTER} (cells)",
                    a.jitter
                )));
            }
            let finest = base.cells.map(|c| c.checked_shl(levels as u32 - 1).unwrap_or(usize::MAX));
            let key = format!("adaptive.levels = {levels} (finest cells {finest:?})");
            let (v, t) = budget::box_counts(finest, u64::from(split_count(base.split)))
                .ok_or_else(|| invalid(format!("{key}: the vertex or tet count overflows")))?;
            budget::check_mesh_size(&key, v, t, "tets").map_err(invalid)?;
            let mut meshes = grid_levels(&base, levels, a.jitter, a.seed)
                .map_err(|e| invalid(format!("adaptive.jitter = {}: {e}", a.jitter)))?;
            for m in &mut meshes {
                m.transform(p.scale, &p.rotation, &p.translation);
            }
            meshes
        }
        (None, Some(_)) => {
            return Err(invalid(
                "adaptive.levels: only for a box body; a mesh body lists its finer levels in adaptive.meshes".into(),
            ))
        }
        (None, None) => {
            if a.meshes.len() + 1 > MAX_LEVELS {
                return Err(invalid(format!(
                    "adaptive.meshes: {} levels, at most {MAX_LEVELS}",
                    a.meshes.len() + 1
                )));
            }
            let mut meshes = vec![body.mesh.clone()];
            for (k, m) in a.meshes.into_iter().enumerate() {
                let key = format!("adaptive.meshes[{k}]");
                let mut mesh = read_mesh(m, &key, dir, files, &[], notes)
                    .map_err(|e| match e {
                        BodyIssue::Mesh(key, source) => SceneError::Mesh {
                            path: path.to_path_buf(),
                            key,
                            source,
                        },
                        BodyIssue::Invalid(m) => invalid(m),
                    })?
                    .mesh;
                mesh.transform(p.scale, &p.rotation, &p.translation);
                meshes.push(mesh);
            }
            meshes
        }
    };
    let mut fixed = Vec::with_capacity(meshes.len());
    for (n, mesh) in meshes.iter().enumerate() {
        let mut list = Vec::new();
        for (k, f) in p.fixed.iter().enumerate() {
            select_fixed(mesh, &[], f, &format!("body[0].fixed[{k}]"), &mut list)
                .map_err(invalid)?;
        }
        list.sort_unstable();
        list.dedup();
        fixed.push(list);
        if n > 0 && !p.fixed.is_empty() && fixed[n].is_empty() {
            return Err(invalid(format!(
                "body[0].fixed: selects no node of level {n}"
            )));
        }
    }
    if a.start_level >= meshes.len() {
        return Err(invalid(format!(
            "adaptive.start_level = {}: the body has {} level(s)",
            a.start_level,
            meshes.len()
        )));
    }
    let budget = match a.budget {
        None | Some(BudgetSection::None {}) => Budget::None,
        Some(BudgetSection::Predictive { node_updates }) if node_updates > 0 => {
            Budget::Predictive {
                node_updates_per_frame: node_updates,
            }
        }
        Some(BudgetSection::Predictive { .. }) => {
            return Err(invalid(
                "adaptive.budget.node_updates = 0: must be at least 1".into(),
            ))
        }
        Some(BudgetSection::Reactive { frame_seconds }) => {
            // By default the frame period is the scene's dt (checked above 0).
            let frame_seconds = frame_seconds.unwrap_or(dt);
            positive("adaptive.budget.frame_seconds", frame_seconds).map_err(invalid)?;
            Budget::Reactive { frame_seconds }
        }
    };
    let tool = match a.tool {
        None => None,
        Some(t) => {
            positive("adaptive.tool.radius", t.radius).map_err(invalid)?;
            if t.path.is_empty() {
                return Err(invalid(
                    "adaptive.tool.path: needs at least one keyframe [t, x, y, z]".into(),
                ));
            }
            let mut keys: Vec<(f64, Vector3<f64>)> = Vec::with_capacity(t.path.len());
            for (k, [time, x, y, z]) in t.path.into_iter().enumerate() {
                let key = format!("adaptive.tool.path[{k}]");
                let c = finite3(&key, [x, y, z]).map_err(invalid)?;
                if !time.is_finite() || keys.last().is_some_and(|(t0, _)| time < *t0) {
                    return Err(invalid(format!(
                        "{key}: time {time} must be finite and not before the previous keyframe"
                    )));
                }
                keys.push((time, c));
            }
            Some(ToolPath {
                radius: t.radius,
                keys,
            })
        }
    };
    let params = DebunneParams {
        lambda,
        mu,
        phi: a.phi,
        psi: a.psi,
        boundary: match a.boundary {
            BoundaryName::Paper => Boundary::Paper,
            BoundaryName::Fe => Boundary::Fe,
        },
        reading: match a.reading {
            ReadingName::Navier => LameReading::Navier,
            ReadingName::Printed => LameReading::Printed,
        },
    };
    let settings = AdaptiveSettings {
        coupling: match a.coupling {
            CouplingName::Paper => Coupling::Paper,
            CouplingName::Variational => Coupling::Variational,
        },
        criterion: match a.criterion {
            CriterionName::Paper => Criterion::Paper,
            CriterionName::Interior => Criterion::Interior,
        },
        split_threshold: a.split,
        merge_threshold: a.merge,
        min_dwell_frames: a.dwell,
        adapt: a.adapt,
        tool_refine: a.tool_refine,
        tool_reach: a.tool_reach,
        tool_order: match a.tool_order {
            ToolOrderName::Criterion => ToolOrder::Criterion,
            ToolOrderName::Distance => ToolOrder::Distance,
            ToolOrderName::Graded => ToolOrder::Graded,
        },
        share_overlap: a.share_overlap,
        tool_persistent: a.tool_persistent,
        tool_side: match a.tool_side {
            ToolSideName::Any => ToolSide::Any,
            ToolSideName::Persistent => ToolSide::Persistent,
            ToolSideName::Outside => ToolSide::Outside,
        },
        tool_timing: match a.tool_timing {
            ToolTimingName::Frame => ToolTiming::Frame,
            ToolTimingName::Step => ToolTiming::Step,
        },
        start_level: a.start_level,
        budget,
        gravity,
    };
    Ok(SceneAdaptive {
        meshes,
        fixed,
        density: body.density,
        params,
        settings,
        tool,
        velocity: body.velocity,
    })
}

impl Scene {
    /// Builds the scene's adaptive body (`[adaptive]`): the level hierarchy with its
    /// precomputation and the body at rest at `adaptive.start_level`, moving with the body's
    /// `velocity`. Fails when the scene has no `[adaptive]`.
    pub fn build_adaptive(&self) -> Result<AdaptiveBody, SceneError> {
        let invalid = |message: String| SceneError::Invalid {
            path: self.path.clone(),
            message,
        };
        let a = self
            .adaptive
            .as_ref()
            .ok_or_else(|| invalid("the scene has no [adaptive] section".into()))?;
        let h = Hierarchy::with_fixed_nodes(
            a.meshes.clone(),
            a.density,
            self.dt,
            &a.fixed,
            debunne_levels(a.params),
        )
        .map_err(|e| invalid(format!("[adaptive]: {}", scene_keys(&e.to_string()))))?;
        let mut body = AdaptiveBody::new(h, a.settings)
            .map_err(|e| invalid(format!("[adaptive]: {}", scene_keys(&e.to_string()))))?;
        let v = a.velocity;
        if v != Vector3::zeros() {
            body.set_velocity(|_| v);
        }
        Ok(body)
    }
}

/// The library's setting names in an error, as the scene spells them.
fn scene_keys(message: &str) -> String {
    [
        ("node_updates_per_frame", "adaptive.budget.node_updates"),
        ("dt_frame", "dt"),
        ("split_threshold", "adaptive.split"),
        ("merge_threshold", "adaptive.merge"),
        ("tool_reach", "adaptive.tool_reach"),
        ("density", "body[0].material.density"),
    ]
    .iter()
    .fold(message.to_string(), |m, (lib, scene)| m.replace(lib, scene))
}
