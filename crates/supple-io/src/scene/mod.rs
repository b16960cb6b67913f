//! Scene files (TOML): what to simulate, with which settings, and what to write.
//!
//! Parsing refuses unknown keys and wrong types with the file, line, column and key path;
//! validation refuses impossible values with the key path and the reason, for example
//! `body[0].material.poisson = 0.5: must be below 0.5`. See the README for the format.

use crate::error::IoError;
use crate::files::Files;
use nalgebra::Vector3;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use supple::body::{Body, BodyDesc};
use supple::constraint::ExactSettings;
use supple::contact::ContactSettings;
use supple::fem::material::ModelKind;
use supple::hierarchical::HierarchicalStepper;
use supple::linalg::{OrderingKind, PcgSettings, Preconditioner};
use supple::time::{Integrator, IntegratorKind, LinearSolverKind, WarmStart};
use supple::world::{ConstraintId, GrabId, StepControl, World};
use thiserror::Error;

mod adaptive;
mod bc;
mod body;
pub mod budget;
mod contact;
mod exact;
mod file;
mod given;
mod grab;
mod hierarchy;
mod integrator;
mod keys;
mod link;
mod material;
mod mesh_file;
pub mod names;
mod overrides;
mod parse;
mod rigid;
mod schema;
#[cfg(test)]
mod schema_tests;
mod surface;

pub use crate::output::{ColorBy, OutputSettings, GIF_AUTO_MAX_FRAMES};
pub use adaptive::SceneAdaptive;
use body::{body_desc, read_mesh, select_fixed, split_count, BodyIssue};
pub use exact::SceneExact;
use file::*;
pub use given::{mesh_from_table, scene_from_table, GivenMesh};
pub use grab::SceneGrab;
pub use hierarchy::SceneHierarchy;
pub use link::SceneSpring;
pub use overrides::{apply_overrides, Override};
pub use rigid::SceneRigid;
pub use schema::{scene_schema, scene_schema_json};
pub use surface::SceneSurface;

/// A scene that could not be read, parsed or validated.
#[derive(Debug, Error)]
pub enum SceneError {
    #[error(transparent)]
    Io(#[from] IoError),
    #[error("{path}:{line}:{column}: {key}{message}")]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        /// `"body[0].material: "` style prefix, or empty.
        key: String,
        message: String,
    },
    #[error("{path}: {message}")]
    Invalid { path: PathBuf, message: String },
    /// Unknown keys, missing keys or a value of the wrong type, all that were found, one per
    /// line (`bar.toml:5:12: body[0].material.yungs: unknown field `yungs` (did you mean
    /// `youngs`?)`).
    #[error("{}", .problems.join("\n"))]
    Keys {
        path: PathBuf,
        problems: Vec<String>,
    },
    /// A mesh file named at `key` (for example `body[0].mesh.path`) could not be read.
    #[error("{path}: {key}: {source}")]
    Mesh {
        path: PathBuf,
        key: String,
        #[source]
        source: IoError,
    },
}

// ---- the validated scene ----

/// A named point whose trajectory is reported: the vertex nearest to the given point.
#[derive(Debug, Clone, PartialEq)]
pub struct Probe {
    pub name: String,
    pub body: usize,
    pub vertex: usize,
}

/// A parsed and validated scene, ready to build a [`World`].
#[derive(Debug, Clone)]
pub struct Scene {
    pub name: String,
    pub path: PathBuf,
    pub dt: f64,
    pub duration: f64,
    pub gravity: Vector3<f64>,
    pub integrator: IntegratorKind,
    pub output: OutputSettings,
    pub bodies: Vec<BodyDesc>,
    /// Per body (same order), its embedded surface (`surface = "skin.obj"`), if any.
    pub surfaces: Vec<Option<SceneSurface>>,
    /// Per body (same order), its hierarchy (`[body.hierarchy]`), if any: then `bodies[i]`
    /// is the fine level, the one simulated and written, and this holds the coarse level.
    pub hierarchies: Vec<Option<SceneHierarchy>>,
    pub probes: Vec<Probe>,
    /// Obstacles and surface collisions (`[contact]`, `[[obstacle]]`), if any.
    pub contact: Option<ContactSettings>,
    /// How failed steps are judged and retried (`[step_control]`).
    pub step_control: StepControl,
    /// Scripted grabs (`[[grab]]`).
    pub grabs: Vec<SceneGrab>,
    /// Springs between body points (`[[spring]]`), added to the world in this order.
    pub springs: Vec<SceneSpring>,
    /// Exact constraints (`[[exact_constraint]]`).
    pub exact: Vec<SceneExact>,
    /// The projection of the exact constraints (`[exact]`).
    pub exact_settings: ExactSettings,
    /// Dynamic rigid cores (`[[rigid_core]]`).
    pub rigid: Vec<SceneRigid>,
    /// What loading changed or left out (`body[0].mesh: 12 non-tet cells skipped`, ...).
    pub notes: Vec<String>,
    /// The body simulated adaptively (`[adaptive]`, Debunne et al. 2000), if any: such a
    /// scene is run by [`Scene::build_adaptive`], not by [`Scene::build_world`].
    pub adaptive: Option<SceneAdaptive>,
}

impl Scene {
    /// Number of steps to cover `duration` (the last step may end slightly past it).
    pub fn steps(&self) -> usize {
        (self.duration / self.dt - 1e-9).ceil().max(0.0) as usize
    }

    /// Builds the world (per-element precomputation happens here), with the scene's grabs
    /// scheduled.
    pub fn build_world(&self) -> Result<World, SceneError> {
        self.build_world_and_grabs().map(|(w, _)| w)
    }

    /// [`build_world`](Self::build_world), also returning each scripted grab's name and id.
    pub fn build_world_and_grabs(&self) -> Result<(World, Vec<(String, GrabId)>), SceneError> {
        self.build_world_with_ids().map(|(w, g, _)| (w, g))
    }

    /// [`build_world`](Self::build_world), also returning the names and ids of the scripted
    /// grabs and of the exact constraints.
    #[allow(clippy::type_complexity)]
    pub fn build_world_with_ids(
        &self,
    ) -> Result<(World, Vec<(String, GrabId)>, Vec<(String, ConstraintId)>), SceneError> {
        if self.adaptive.is_some() {
            return Err(self.invalid(
                "[adaptive]: the body is simulated adaptively (`supple run`, Scene::build_adaptive), not as a world".into(),
            ));
        }
        let mut bodies = Vec::with_capacity(self.bodies.len());
        let mut integrators = Vec::with_capacity(self.bodies.len());
        for (i, (d, h)) in self.bodies.iter().zip(&self.hierarchies).enumerate() {
            let invalid = |e: &dyn std::fmt::Display| self.invalid(format!("body[{i}]: {e}"));
            let (body, integrator): (Body, Box<dyn Integrator>) = match h {
                Some(h) => {
                    let (stepper, fine) = HierarchicalStepper::new(h.coarse.clone(), h.settings)
                        .map_err(|e| invalid(&e))?;
                    (fine, Box::new(stepper))
                }
                None => {
                    let body = Body::new(d.clone()).map_err(|e| invalid(&e))?;
                    let integrator =
                        (self.integrator.build(&body)).map_err(|e| self.invalid(e.to_string()))?;
                    (body, integrator)
                }
            };
            bodies.push(body);
            integrators.push(integrator);
        }
        let world = World::with_integrators(bodies, integrators, self.gravity, self.dt)
            .and_then(|w| w.with_step_control(self.step_control))
            .and_then(|w| w.with_exact_settings(self.exact_settings))
            .map_err(|e| self.invalid(e.to_string()))?;
        let mut world = match &self.contact {
            Some(c) => world
                .with_contact(c.clone())
                .map_err(|e| self.invalid(e.to_string()))?,
            None => world,
        };
        for (i, s) in self.springs.iter().enumerate() {
            world
                .add_spring(s.spring)
                .map_err(|e| self.invalid(format!("spring[{i}] ({}): {e}", s.name)))?;
        }
        let mut ids = Vec::with_capacity(self.grabs.len());
        for (i, g) in self.grabs.iter().enumerate() {
            let id = world
                .script_grab(g.script.clone())
                .map_err(|e| self.invalid(format!("grab[{i}]: {e}")))?;
            ids.push((g.name.clone(), id));
        }
        let mut exact = Vec::with_capacity(self.exact.len());
        for (i, c) in self.exact.iter().enumerate() {
            let id = world
                .constrain(c.constraint.clone())
                .map_err(|e| self.invalid(format!("exact_constraint[{i}]: {e}")))?;
            exact.push((c.name.clone(), id));
        }
        for (i, r) in self.rigid.iter().enumerate() {
            world
                .add_rigid_core(r.body, r.vertices.clone())
                .map_err(|e| self.invalid(format!("rigid_core[{i}] ({}): {e}", r.name)))?;
        }
        Ok((world, ids, exact))
    }

    fn invalid(&self, message: String) -> SceneError {
        SceneError::Invalid {
            path: self.path.clone(),
            message,
        }
    }
}

/// Reads, parses and validates a scene file. Mesh paths are relative to the scene's folder.
pub fn load_scene(path: &Path) -> Result<Scene, SceneError> {
    let text = std::fs::read_to_string(path).map_err(|e| IoError::io(path, e))?;
    parse_scene(&text, path)
}

/// Parses and validates scene text; `path` names the file in errors and anchors mesh paths.
pub fn parse_scene(text: &str, path: &Path) -> Result<Scene, SceneError> {
    parse_scene_with(text, path, Files::Disk)
}

/// Parses and validates a scene whose mesh and force files are given as bytes (no file
/// system, as in a web page): `name` names the scene in errors (`tube_drop.toml`), and `files`
/// maps each path the scene names, relative to the scene, to its bytes. TetGen meshes need
/// both files: `meshes/tube_solid_1k.node` and `meshes/tube_solid_1k.ele`.
///
/// ```
/// use std::collections::BTreeMap;
/// let text = "dt = 0.01\nduration = 1.0\n[[body]]\nmesh = { kind = \"box\", cells = [2, 1, 1], cell_size = 0.1 }\n\
///             material = { model = \"linear\", youngs = 1e5, poisson = 0.3, density = 1000.0 }\n";
/// let scene = supple_io::parse_scene_from_memory(text, "box.toml", &BTreeMap::new()).unwrap();
/// assert_eq!(scene.bodies.len(), 1);
/// ```
pub fn parse_scene_from_memory(
    text: &str,
    name: &str,
    files: &BTreeMap<String, Vec<u8>>,
) -> Result<Scene, SceneError> {
    parse_scene_with(text, Path::new(name), Files::Memory(files))
}

/// [`parse_scene`] reading the files the scene names from `files`.
pub fn parse_scene_with(text: &str, path: &Path, files: Files<'_>) -> Result<Scene, SceneError> {
    parse_scene_with_overrides(text, path, files, &[])
}

/// [`load_scene`] with `--set KEY=VALUE` overrides applied to the file's keys before they
/// are checked and validated.
///
/// ```
/// use supple_io::scene::{parse_scene_with_overrides, Override};
/// let text = "[[body]]\nmesh = { kind = \"box\", cells = [2, 1, 1], cell_size = 0.1 }\n\
///             material = { model = \"linear\" }\n";
/// let set: Vec<Override> = ["body[0].material.youngs=2e5", "dt=0.005"]
///     .iter().map(|s| s.parse().unwrap()).collect();
/// let files = supple_io::files::Files::Disk;
/// let scene = parse_scene_with_overrides(text, "bar.toml".as_ref(), files, &set).unwrap();
/// assert_eq!((scene.dt, scene.bodies[0].youngs), (0.005, 2e5));
/// ```
pub fn load_scene_with_overrides(path: &Path, overrides: &[Override]) -> Result<Scene, SceneError> {
    let text = std::fs::read_to_string(path).map_err(|e| IoError::io(path, e))?;
    parse_scene_with_overrides(&text, path, Files::Disk, overrides)
}

/// [`parse_scene_with`] with `overrides` applied (see [`load_scene_with_overrides`]).
pub fn parse_scene_with_overrides(
    text: &str,
    path: &Path,
    files: Files<'_>,
    overrides: &[Override],
) -> Result<Scene, SceneError> {
    let file = parse::scene_file(text, path, overrides)?;
    validate(file, path, files, &[])
}

fn positive(key: &str, value: f64) -> Result<(), String> {
    if value > 0.0 && value.is_finite() {
        Ok(())
    } else {
        Err(format!("{key} = {value}: must be a finite number above 0"))
    }
}

fn finite3(key: &str, v: [f64; 3]) -> Result<Vector3<f64>, String> {
    if v.iter().all(|c| c.is_finite()) {
        Ok(Vector3::from(v))
    } else {
        Err(format!("{key} = {v:?}: every component must be finite"))
    }
}

fn validate(
    mut file: SceneFile,
    path: &Path,
    files: Files<'_>,
    given: &[GivenMesh],
) -> Result<Scene, SceneError> {
    let invalid = |message: String| SceneError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    positive("dt", file.dt).map_err(invalid)?;
    let adaptive = adaptive::take(&mut file).map_err(invalid)?;
    if !(file.duration >= 0.0 && file.duration.is_finite()) {
        return Err(invalid(format!(
            "duration = {}: must be a finite number ≥ 0",
            file.duration
        )));
    }
    let gravity = finite3("gravity", file.gravity).map_err(invalid)?;
    positive("solver.tolerance", file.solver.tolerance).map_err(invalid)?;
    if file.solver.max_iterations == 0 || file.solver.max_iterations > budget::MAX_SOLVER_ITERATIONS
    {
        return Err(invalid(format!(
            "solver.max_iterations = {}: must be 1 to {}",
            file.solver.max_iterations,
            budget::MAX_SOLVER_ITERATIONS
        )));
    }
    file.output.validate().map_err(invalid)?;
    if file.body.is_empty() {
        return Err(invalid("the scene has no [[body]]".into()));
    }
    // Zhuang & Canny's pre-factored solves (Cholesky, explicit Newmark); `nd_grid` needs grid
    // dimensions, so it is a `supple order` study option only.
    let ordering = match file.solver.ordering {
        OrderingName::Natural => OrderingKind::Natural,
        OrderingName::Random => OrderingKind::Random {
            seed: file.solver.seed,
        },
        OrderingName::Amd => OrderingKind::Amd,
        OrderingName::Mnd => OrderingKind::Mnd,
        OrderingName::Nd => OrderingKind::Nd,
    };
    let pcg = PcgSettings {
        tolerance: file.solver.tolerance,
        max_iterations: file.solver.max_iterations,
        preconditioner: match file.solver.preconditioner {
            PreconditionerName::BlockJacobi => Preconditioner::BlockJacobi,
            PreconditionerName::BlockSsor => Preconditioner::BlockSsor,
            PreconditionerName::EisenstatSsor => Preconditioner::EisenstatSsor,
            PreconditionerName::MulticolorSsor => Preconditioner::MulticolorSsor,
            PreconditionerName::Amg => Preconditioner::Amg,
            PreconditionerName::Auto => Preconditioner::Auto,
        },
    };
    let solver = match file.solver.kind {
        SolverName::Pcg => LinearSolverKind::Pcg(pcg),
        SolverName::Cholesky => LinearSolverKind::Cholesky { ordering },
    };
    let warm_start = match file.solver.warm_start {
        WarmStartName::Zero => WarmStart::Zero,
        WarmStartName::Velocity => WarmStart::Velocity,
        WarmStartName::Extrapolate => WarmStart::Extrapolate,
        WarmStartName::Adaptive => WarmStart::Adaptive,
    };
    let integrator =
        integrator::integrator(&file.integrator, solver, ordering, warm_start).map_err(invalid)?;
    let contact = contact::contact(file.contact, file.obstacle).map_err(invalid)?;
    let step_control = step_control(&file.step_control).map_err(invalid)?;
    let exact_settings = exact::exact_settings(&file.exact).map_err(invalid)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut bodies = Vec::with_capacity(file.body.len());
    let mut surfaces = Vec::with_capacity(file.body.len());
    let mut notes = Vec::new();
    let mut hierarchy_sections = Vec::with_capacity(file.body.len());
    for (i, mut b) in file.body.into_iter().enumerate() {
        hierarchy_sections.push(b.hierarchy.take());
        let (body, surface) =
            body_desc(b, i, dir, files, given, &mut notes).map_err(|e| match e {
                BodyIssue::Mesh(key, source) => SceneError::Mesh {
                    path: path.to_path_buf(),
                    key,
                    source,
                },
                BodyIssue::Invalid(m) => invalid(m),
            })?;
        bodies.push(body);
        surfaces.push(surface);
    }
    fast_corotated_support(
        &bodies,
        &hierarchy_sections,
        adaptive.is_some(),
        &integrator,
        contact.as_ref(),
    )
    .map_err(invalid)?;
    if adaptive.is_some() && hierarchy_sections.iter().any(Option::is_some) {
        return Err(invalid(
            "[adaptive] and body[0].hierarchy: a body is either adaptive (Debunne) or hierarchical (Hauth & Straßer), not both".into(),
        ));
    }
    let adaptive = match adaptive {
        Some(a) => Some(adaptive::finish(
            a,
            &bodies[0],
            (file.dt, gravity),
            path,
            files,
            &mut notes,
        )?),
        None => None,
    };
    bc::add_loads(file.load, &mut bodies, dir, files).map_err(invalid)?;
    bc::add_constraints(file.constraint, &mut bodies).map_err(invalid)?;
    // Before anything names vertices: grabs, exact constraints, rigid cores and probes see
    // the fine level of a hierarchical body.
    let hierarchies = hierarchy::apply(
        hierarchy_sections,
        &mut bodies,
        &mut surfaces,
        &integrator,
        pcg,
    )
    .map_err(invalid)?;
    let grabs = grab::grabs(file.grab, &bodies).map_err(invalid)?;
    let springs = link::springs(file.spring, &bodies).map_err(invalid)?;
    let exact = exact::exact_constraints(file.exact_constraint, &bodies).map_err(invalid)?;
    let rigid = rigid::rigid_cores(file.rigid_core, &bodies).map_err(invalid)?;
    for (i, b) in bodies.iter().enumerate() {
        if bodies[..i].iter().any(|o| o.name == b.name) {
            return Err(invalid(format!(
                "body[{i}].name = {:?}: another body has this name",
                b.name
            )));
        }
    }
    let mut probes = Vec::with_capacity(file.probe.len());
    for (i, p) in file.probe.into_iter().enumerate() {
        names::check_name(&format!("probe[{i}].name"), &p.name).map_err(invalid)?;
        let point = finite3(&format!("probe[{i}].point"), p.point).map_err(invalid)?;
        let body = match &p.body {
            Some(name) => bodies.iter().position(|b| &b.name == name).ok_or_else(|| {
                invalid(format!("probe[{i}].body = {name:?}: no body has this name"))
            })?,
            None if bodies.len() == 1 => 0,
            None => {
                return Err(invalid(format!(
                    "probe[{i}].body: required when the scene has several bodies"
                )))
            }
        };
        let vertex = nearest_vertex(&bodies[body].mesh.positions, &point);
        if probes.iter().any(|q: &Probe| q.name == p.name) {
            return Err(invalid(format!(
                "probe[{i}].name = {:?}: another probe has this name",
                p.name
            )));
        }
        probes.push(Probe {
            name: p.name,
            body,
            vertex,
        });
    }
    let name = match file.name {
        Some(name) => {
            names::check_name("name", &name).map_err(invalid)?;
            name
        }
        None => names::name_from_stem(
            &path
                .file_stem()
                .map_or_else(String::new, |s| s.to_string_lossy().into_owned()),
        ),
    };
    Ok(Scene {
        name,
        path: path.to_path_buf(),
        dt: file.dt,
        duration: file.duration,
        gravity,
        integrator,
        output: file.output,
        bodies,
        surfaces,
        hierarchies,
        probes,
        contact,
        step_control,
        grabs,
        springs,
        exact,
        exact_settings,
        rigid,
        notes,
        adaptive,
    })
}

/// `fast_corotated` bodies step by their own operator-splitting backward Euler
/// (`supple::time::FastCorotatedStep`): refuses what that step cannot take part in — other
/// integrators, the coupled IPC contact step, hierarchical and adaptive bodies.
fn fast_corotated_support<T>(
    bodies: &[BodyDesc],
    hierarchies: &[Option<T>],
    adaptive: bool,
    integrator: &IntegratorKind,
    contact: Option<&ContactSettings>,
) -> Result<(), String> {
    let Some(i) = bodies
        .iter()
        .position(|b| matches!(b.model, ModelKind::FastCorotated(_)))
    else {
        return Ok(());
    };
    let key = format!("body[{i}].material.model = \"fast_corotated\"");
    if !matches!(
        integrator,
        IntegratorKind::BackwardEulerLinearized { .. } | IntegratorKind::BackwardEuler { .. }
    ) {
        return Err(format!(
            "{key}: the model is stepped by its own operator-splitting backward Euler; integrator.kind must be \"backward_euler_linearized\" or \"backward_euler\""
        ));
    }
    if contact.is_some_and(|c| matches!(c.response, supple::contact::Response::Ipc(_))) {
        return Err(format!(
            "{key}: contact.response = \"ipc\" is not supported (the coupled IPC step cannot take an operator-splitting body); use \"projection\" or \"springs\""
        ));
    }
    if let Some(j) = bodies
        .iter()
        .zip(hierarchies)
        .position(|(b, h)| h.is_some() && matches!(b.model, ModelKind::FastCorotated(_)))
    {
        return Err(format!(
            "body[{j}].hierarchy: not supported with model fast_corotated"
        ));
    }
    if adaptive {
        return Err(format!(
            "{key}: [adaptive] is not supported with this model"
        ));
    }
    Ok(())
}

/// The `[step_control]` section over the library's defaults, validated.
fn step_control(section: &file::StepControlSection) -> Result<StepControl, String> {
    let d = StepControl::default();
    let control = StepControl {
        max_halvings: section.max_halvings.unwrap_or(d.max_halvings),
        unconverged_halvings: section
            .unconverged_halvings
            .unwrap_or(d.unconverged_halvings),
        volume_range: section.volume_range.unwrap_or(d.volume_range),
        max_inverted_share: section.max_inverted_share.unwrap_or(d.max_inverted_share),
        max_unconverged_share: section
            .max_unconverged_share
            .unwrap_or(d.max_unconverged_share),
        end_inverted_share: section.end_inverted_share.unwrap_or(d.end_inverted_share),
        max_energy_rise: section.max_energy_rise.unwrap_or(d.max_energy_rise),
        contact_splits: section.contact_splits.unwrap_or(d.contact_splits),
    };
    control.validate().map_err(|e| e.to_string())?;
    Ok(control)
}

fn nearest_vertex(positions: &[Vector3<f64>], point: &Vector3<f64>) -> usize {
    positions
        .iter()
        .enumerate()
        .min_by(|a, b| {
            (a.1 - point)
                .norm_squared()
                .total_cmp(&(b.1 - point).norm_squared())
        })
        .map_or(0, |(i, _)| i)
}
