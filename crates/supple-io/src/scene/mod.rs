//! Scene files (TOML): what to simulate, with which settings, and what to write.
//!
//! Parsing refuses unknown keys and wrong types with the file, line, column and key path;
//! validation refuses impossible values with the key path and the reason, for example
//! `body[0].material.poisson = 0.5: must be below 0.5`. See the README for the format.

use crate::error::IoError;
use crate::files::Files;
use nalgebra::{Rotation3, Vector3};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use supple::body::{Body, BodyDesc, Rayleigh};
use supple::contact::ContactSettings;
use supple::fem::MassKind;
use supple::linalg::{OrderingKind, PcgSettings, Preconditioner};
use supple::mesh::{box_grid, BoxGrid, TetMesh, TetSplit};
use supple::time::{IntegratorKind, LinearSolverKind, WarmStart};
use supple::world::{ConstraintId, GrabId, StepControl, World};
use thiserror::Error;

mod adaptive;
mod bc;
pub mod budget;
mod contact;
mod exact;
mod file;
mod given;
mod grab;
mod integrator;
mod material;
mod mesh_file;
pub mod names;
mod rigid;
mod surface;

pub use crate::output::{ColorBy, OutputSettings, GIF_AUTO_MAX_FRAMES};
pub use adaptive::SceneAdaptive;
pub use exact::SceneExact;
use file::*;
pub use given::{mesh_from_table, scene_from_table, GivenMesh};
pub use grab::SceneGrab;
pub use rigid::SceneRigid;
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
    pub probes: Vec<Probe>,
    /// Obstacles and surface collisions (`[contact]`, `[[obstacle]]`), if any.
    pub contact: Option<ContactSettings>,
    /// How failed steps are judged and retried (`[step_control]`).
    pub step_control: StepControl,
    /// Scripted grabs (`[[grab]]`).
    pub grabs: Vec<SceneGrab>,
    /// Exact constraints (`[[exact_constraint]]`).
    pub exact: Vec<SceneExact>,
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
        let bodies = self
            .bodies
            .iter()
            .enumerate()
            .map(|(i, d)| Body::new(d.clone()).map_err(|e| self.invalid(format!("body[{i}]: {e}"))))
            .collect::<Result<Vec<_>, _>>()?;
        let world = World::new(bodies, self.gravity, self.dt, self.integrator)
            .and_then(|w| w.with_step_control(self.step_control))
            .map_err(|e| self.invalid(e.to_string()))?;
        let mut world = match &self.contact {
            Some(c) => world
                .with_contact(c.clone())
                .map_err(|e| self.invalid(e.to_string()))?,
            None => world,
        };
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
    let syntax = |err: toml::de::Error, key: String| {
        let (line, column) = err.span().map_or((1, 1), |s| line_col(text, s.start));
        SceneError::Syntax {
            path: path.to_path_buf(),
            line,
            column,
            key,
            message: err.message().to_string(),
        }
    };
    let de = toml::Deserializer::parse(text).map_err(|e| syntax(e, String::new()))?;
    let file: SceneFile = serde_path_to_error::deserialize(de).map_err(|e| {
        let key = e.path().to_string();
        let key = if key == "." {
            String::new()
        } else {
            format!("{key}: ")
        };
        syntax(e.into_inner(), key)
    })?;
    validate(file, path, files, &[])
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
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
    let solver = match file.solver.kind {
        SolverName::Pcg => LinearSolverKind::Pcg(PcgSettings {
            tolerance: file.solver.tolerance,
            max_iterations: file.solver.max_iterations,
            preconditioner: match file.solver.preconditioner {
                PreconditionerName::BlockJacobi => Preconditioner::BlockJacobi,
                PreconditionerName::BlockSsor => Preconditioner::BlockSsor,
                PreconditionerName::MulticolorSsor => Preconditioner::MulticolorSsor,
                PreconditionerName::Amg => Preconditioner::Amg,
            },
        }),
        SolverName::Cholesky => LinearSolverKind::Cholesky { ordering },
    };
    let warm_start = match file.solver.warm_start {
        WarmStartName::Zero => WarmStart::Zero,
        WarmStartName::Velocity => WarmStart::Velocity,
        WarmStartName::Extrapolate => WarmStart::Extrapolate,
    };
    let integrator =
        integrator::integrator(&file.integrator, solver, ordering, warm_start).map_err(invalid)?;
    let contact = contact::contact(file.contact, file.obstacle).map_err(invalid)?;
    let step_control = step_control(&file.step_control).map_err(invalid)?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut bodies = Vec::with_capacity(file.body.len());
    let mut surfaces = Vec::with_capacity(file.body.len());
    let mut notes = Vec::new();
    for (i, b) in file.body.into_iter().enumerate() {
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
    let grabs = grab::grabs(file.grab, &bodies).map_err(invalid)?;
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
        probes,
        contact,
        step_control,
        grabs,
        exact,
        rigid,
        notes,
        adaptive,
    })
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
        contact_splits: section.contact_splits.unwrap_or(d.contact_splits),
    };
    control.validate().map_err(|e| e.to_string())?;
    Ok(control)
}

enum BodyIssue {
    /// The mesh file at the key could not be read.
    Mesh(String, IoError),
    Invalid(String),
}

impl From<String> for BodyIssue {
    fn from(s: String) -> Self {
        BodyIssue::Invalid(s)
    }
}

fn body_desc(
    b: BodySection,
    i: usize,
    dir: &Path,
    files: Files<'_>,
    given: &[GivenMesh],
    notes: &mut Vec<String>,
) -> Result<(BodyDesc, Option<SceneSurface>), BodyIssue> {
    let key = format!("body[{i}]");
    if let Some(name) = &b.name {
        names::check_name(&format!("{key}.name"), name)?;
    }
    let GivenMesh { mut mesh, regions } = read_mesh(b.mesh, &key, dir, files, given, notes)?;
    let t = &b.transform;
    positive(&format!("{key}.transform.scale"), t.scale)?;
    let angles =
        finite3(&format!("{key}.transform.rotate_deg"), t.rotate_deg)?.map(f64::to_radians);
    let rotation = Rotation3::from_euler_angles(angles.x, angles.y, angles.z).into_inner();
    let translation = finite3(&format!("{key}.transform.translate"), t.translate)?;
    mesh.transform(t.scale, &rotation, &translation);
    let surface = match b.surface {
        Some(file) => Some(surface::read(
            file,
            &key,
            dir,
            files,
            &mesh,
            |s| s.transform(t.scale, &rotation, &translation),
            notes,
        )?),
        None => None,
    };
    let mut fixed = Vec::new();
    for (k, region) in b.fixed.iter().enumerate() {
        let before = fixed.len();
        let fixed_key = format!("{key}.fixed[{k}]");
        select_fixed(&mesh, &regions, region, &fixed_key, &mut fixed)?;
        if fixed.len() == before {
            return Err(format!("{key}.fixed[{k}]: selects no vertex").into());
        }
    }
    fixed.sort_unstable();
    fixed.dedup();
    let material = material::material(&b.material, &format!("{key}.material"))?;
    let viscosity = material::viscosity(b.viscosity.as_ref(), &key)?;
    for (k, v) in [("alpha", b.damping.alpha), ("beta", b.damping.beta)] {
        if !(v >= 0.0 && v.is_finite()) {
            return Err(format!("{key}.damping.{k} = {v}: must be a finite number ≥ 0").into());
        }
    }
    let body = BodyDesc {
        name: b.name.unwrap_or_else(|| format!("body{i}")),
        velocity: finite3(&format!("{key}.velocity"), b.velocity)?,
        mesh,
        model: material.model,
        youngs: material.youngs,
        poisson: material.poisson,
        density: b.material.density,
        mass: match b.mass {
            MassName::Lumped => MassKind::Lumped,
            MassName::Consistent => MassKind::Consistent,
        },
        damping: Rayleigh {
            alpha: b.damping.alpha,
            beta: b.damping.beta,
        },
        viscosity,
        fixed,
        loads: Vec::new(),
        constraints: Vec::new(),
    };
    Ok((body, surface))
}

/// The mesh of `mesh = { ... }` at `key` (`body[0]`) and its named regions: generated,
/// given, or read from a file relative to `dir`.
fn read_mesh(
    section: MeshSection,
    key: &str,
    dir: &Path,
    files: Files<'_>,
    given: &[GivenMesh],
    notes: &mut Vec<String>,
) -> Result<GivenMesh, BodyIssue> {
    let mut regions = Vec::new();
    let mesh = match section {
        MeshSection::Box {
            cells,
            cell_size,
            origin,
            split,
        } => {
            if cells.contains(&0) {
                return Err(format!(
                    "{key}.mesh.cells = {cells:?}: every count must be at least 1"
                )
                .into());
            }
            let size = match cell_size {
                CellSize::Uniform(h) => [h; 3],
                CellSize::PerAxis(h) => h,
            };
            if !size.iter().all(|h| *h > 0.0 && h.is_finite()) {
                return Err(
                    format!("{key}.mesh.cell_size = {size:?}: must be finite and above 0").into(),
                );
            }
            let split = match split {
                5 => TetSplit::Five,
                6 => TetSplit::Six,
                s => return Err(format!("{key}.mesh.split = {s}: must be 5 or 6").into()),
            };
            // Before allocating: counts that overflow or cannot be held are refused here.
            let cells_key = format!("{key}.mesh.cells = {cells:?}");
            let (vertices, tets) = budget::box_counts(cells, u64::from(split_count(split)))
                .ok_or_else(|| format!("{cells_key}: the vertex or tet count overflows"))?;
            budget::check_mesh_size(&cells_key, vertices, tets, "tets")?;
            box_grid(&BoxGrid {
                cells,
                cell_size: Vector3::from(size),
                origin: finite3(&format!("{key}.mesh.origin"), origin)?,
                split,
            })
        }
        MeshSection::Given { index } => {
            let g = given.get(index).ok_or_else(|| match given.len() {
                0 => format!(
                    "{key}.mesh: kind \"given\" is a mesh handed over by a program (the Python module); a scene file names a mesh file or a box"
                ),
                n => format!("{key}.mesh.index = {index}: out of range ({n} mesh(es) given)"),
            })?;
            regions.clone_from(&g.regions);
            g.mesh.clone()
        }
        file => {
            let m = mesh_file::read(file, key, dir, files)?;
            notes.extend(m.notes);
            regions = m.regions;
            m.mesh
        }
    };
    Ok(GivenMesh { mesh, regions })
}

fn split_count(split: TetSplit) -> u8 {
    match split {
        TetSplit::Five => 5,
        TetSplit::Six => 6,
    }
}

fn select_fixed(
    mesh: &TetMesh,
    regions: &[(String, Vec<u32>)],
    region: &FixedSection,
    key: &str,
    out: &mut Vec<u32>,
) -> Result<(), String> {
    let (lo, hi) = mesh.bounding_box();
    let eps = 1e-9 * (hi - lo).norm();
    match region {
        FixedSection::Box { min, max } => {
            let (min, max) = (
                finite3(&format!("{key}.box.min"), *min)?,
                finite3(&format!("{key}.box.max"), *max)?,
            );
            for (i, p) in mesh.positions.iter().enumerate() {
                if (0..3).all(|c| p[c] >= min[c] - eps && p[c] <= max[c] + eps) {
                    out.push(i as u32);
                }
            }
        }
        FixedSection::Plane { point, normal } => {
            let point = finite3(&format!("{key}.plane.point"), *point)?;
            let normal = finite3(&format!("{key}.plane.normal"), *normal)?;
            let n = normal.try_normalize(0.0).ok_or_else(|| {
                format!(
                    "{key}.plane.normal = {:?}: must not be zero",
                    normal.as_slice()
                )
            })?;
            for (i, p) in mesh.positions.iter().enumerate() {
                if (p - point).dot(&n) >= -eps {
                    out.push(i as u32);
                }
            }
        }
        FixedSection::Region(name) => {
            out.extend_from_slice(mesh_file::region(regions, name, &format!("{key}.region"))?);
        }
        FixedSection::Vertices(list) => {
            for &v in list {
                if v as usize >= mesh.n_vertices() {
                    return Err(format!(
                        "{key}.vertices: vertex {v} is out of range (the mesh has {} vertices)",
                        mesh.n_vertices()
                    ));
                }
                out.push(v);
            }
        }
    }
    Ok(())
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
