//! `[[load]]` and `[[constraint]]`: loads, per-component constraints and prescribed motions
//! (issue 13), parsed here and resolved onto the bodies' vertices and boundary faces.

use super::finite3;
use crate::files::Files;
use nalgebra::{Matrix3, Vector3};
use serde::Deserialize;
use std::path::Path;
use supple::body::BodyDesc;
use supple::constraint::{Components, ConstraintDesc, Interpolation, Keyframes, Motion};
use supple::load::{LoadDesc, LoadKind, TimeFunction};
use supple::mesh::{boundary_faces, TetMesh};

/// Which vertices (and boundary faces: those with all three vertices selected) a load or
/// constraint applies to.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub(super) enum RegionSection {
    /// Vertices within `tolerance` of the plane (default 1e-9 of the mesh's diagonal).
    Plane {
        point: [f64; 3],
        normal: [f64; 3],
        tolerance: Option<f64>,
    },
    /// Vertices inside the axis-aligned box (bounds included).
    Box { min: [f64; 3], max: [f64; 3] },
    /// Vertices inside the ball (boundary included).
    Sphere { center: [f64; 3], radius: f64 },
    /// The vertices of the tets whose centroid lies inside the box (a rigid core tagged by
    /// region, Müller et al. 2002 §4.3).
    TetsInBox { min: [f64; 3], max: [f64; 3] },
    /// The vertices of the tets whose centroid lies inside the ball.
    TetsInSphere { center: [f64; 3], radius: f64 },
    /// Vertices by index.
    Vertices(Vec<u32>),
    /// Faces by their three vertex indices (must be boundary faces).
    Faces(Vec<[u32; 3]>),
}

/// The time function keys shared by loads and constraints (at most one), written inline in
/// both sections (not `#[serde(flatten)]`ed: serde's `deny_unknown_fields` does not work
/// through a flattened struct, and the schema test needs serde's list of keys).
#[derive(Debug, Default)]
pub(super) struct TimeKeys<'a> {
    scale: Option<f64>,
    ramp: Option<[f64; 2]>,
    keyframes: Option<&'a [[f64; 2]]>,
}

/// `[[load]]`: a force, traction or pressure on a region, file or vertices, scaled in time.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct LoadSection {
    name: Option<String>,
    body: Option<String>,
    region: Option<RegionSection>,
    /// Total force, shared equally by the region's vertices.
    force: Option<[f64; 3]>,
    /// A file of `i fx fy fz` lines (relative to the scene).
    file: Option<std::path::PathBuf>,
    traction: Option<[f64; 3]>,
    pressure: Option<f64>,
    #[serde(default)]
    follower: bool,
    /// The time function: a constant factor, ...
    scale: Option<f64>,
    /// ... or a linear ramp from 0 at `ramp[0]` to 1 at `ramp[1]` (s), ...
    ramp: Option<[f64; 2]>,
    /// ... or `[t, factor]` keyframes, linearly interpolated.
    keyframes: Option<Vec<[f64; 2]>>,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct AffineSection {
    matrix: [[f64; 3]; 3],
    #[serde(default)]
    offset: [f64; 3],
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RotationSection {
    axis: [f64; 3],
    #[serde(default)]
    center: [f64; 3],
    degrees: f64,
}

/// `[[constraint]]`: some components of a region's vertices held, displaced or moved.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ConstraintSection {
    name: Option<String>,
    body: Option<String>,
    region: RegionSection,
    /// Any of "x", "y", "z", or "normal" alone (default: all three).
    components: Option<Vec<String>>,
    /// The sliding normal when the region is not a plane.
    normal: Option<[f64; 3]>,
    displacement: Option<[f64; 3]>,
    affine: Option<AffineSection>,
    rotation: Option<RotationSection>,
    velocity: Option<[f64; 3]>,
    /// `[t, dx, dy, dz]` keyframes of the displacement.
    path: Option<Vec<[f64; 4]>>,
    /// How `path` is interpolated: "linear" (default) or "catmull_rom".
    interpolation: Option<String>,
    release: Option<f64>,
    torque_point: Option<[f64; 3]>,
    /// The time function: a constant factor, ...
    scale: Option<f64>,
    /// ... or a linear ramp from 0 at `ramp[0]` to 1 at `ramp[1]` (s), ...
    ramp: Option<[f64; 2]>,
    /// ... or `[t, factor]` keyframes, linearly interpolated.
    keyframes: Option<Vec<[f64; 2]>>,
}

impl LoadSection {
    fn time_keys(&self) -> TimeKeys<'_> {
        TimeKeys {
            scale: self.scale,
            ramp: self.ramp,
            keyframes: self.keyframes.as_deref(),
        }
    }
}

impl ConstraintSection {
    fn time_keys(&self) -> TimeKeys<'_> {
        TimeKeys {
            scale: self.scale,
            ramp: self.ramp,
            keyframes: self.keyframes.as_deref(),
        }
    }
}

fn time_function(t: &TimeKeys, key: &str) -> Result<TimeFunction, String> {
    let f = match (t.scale, t.ramp, &t.keyframes) {
        (None, None, None) => TimeFunction::One,
        (Some(s), None, None) => TimeFunction::Constant(s),
        (None, Some([t0, t1]), None) => TimeFunction::Ramp { t0, t1 },
        (None, None, Some(k)) => TimeFunction::Keyframes(k.iter().map(|p| (p[0], p[1])).collect()),
        _ => return Err(format!("{key}: give at most one of scale, ramp, keyframes")),
    };
    f.check().map_err(|e| format!("{key}.{e}"))?;
    Ok(f)
}

pub(super) fn body_index(
    bodies: &[BodyDesc],
    name: &Option<String>,
    key: &str,
) -> Result<usize, String> {
    match name {
        Some(n) => bodies
            .iter()
            .position(|b| &b.name == n)
            .ok_or_else(|| format!("{key}.body = {n:?}: no body has this name")),
        None if bodies.len() == 1 => Ok(0),
        None => Err(format!(
            "{key}.body: required when the scene has several bodies"
        )),
    }
}

/// A ball's centre and radius, checked.
fn ball(
    key: &str,
    kind: &str,
    center: &[f64; 3],
    radius: f64,
) -> Result<(nalgebra::Vector3<f64>, f64), String> {
    let c = finite3(&format!("{key}.{kind}.center"), *center)?;
    if !(radius > 0.0 && radius.is_finite()) {
        return Err(format!(
            "{key}.{kind}.radius = {radius}: must be a finite number above 0"
        ));
    }
    Ok((c, radius))
}

/// Marks the vertices of the tets whose centroid passes `test`.
fn mark_tets(mesh: &TetMesh, inside: &mut [bool], test: impl Fn(&nalgebra::Vector3<f64>) -> bool) {
    for tet in &mesh.tets {
        let c = tet
            .iter()
            .map(|&v| mesh.positions[v as usize])
            .sum::<nalgebra::Vector3<f64>>()
            / 4.0;
        if test(&c) {
            for &v in tet {
                inside[v as usize] = true;
            }
        }
    }
}

/// The selected vertices (sorted) and boundary faces of a region.
pub(super) fn select(
    mesh: &TetMesh,
    region: &RegionSection,
    key: &str,
) -> Result<(Vec<u32>, Vec<[u32; 3]>), String> {
    let (lo, hi) = mesh.bounding_box();
    let eps = 1e-9 * (hi - lo).norm();
    let n = mesh.n_vertices();
    let mut inside = vec![false; n];
    let mut explicit_faces = None;
    match region {
        RegionSection::Plane {
            point,
            normal,
            tolerance,
        } => {
            let point = finite3(&format!("{key}.plane.point"), *point)?;
            let normal = finite3(&format!("{key}.plane.normal"), *normal)?;
            let nn = normal.try_normalize(0.0).ok_or_else(|| {
                format!(
                    "{key}.plane.normal = {:?}: must not be zero",
                    normal.as_slice()
                )
            })?;
            let tol = tolerance.unwrap_or(eps);
            if !(tol >= 0.0 && tol.is_finite()) {
                return Err(format!(
                    "{key}.plane.tolerance = {tol}: must be a finite number ≥ 0"
                ));
            }
            for (i, p) in mesh.positions.iter().enumerate() {
                inside[i] = (p - point).dot(&nn).abs() <= tol;
            }
        }
        RegionSection::Box { min, max } => {
            let (min, max) = (
                finite3(&format!("{key}.box.min"), *min)?,
                finite3(&format!("{key}.box.max"), *max)?,
            );
            for (i, p) in mesh.positions.iter().enumerate() {
                inside[i] = (0..3).all(|c| p[c] >= min[c] - eps && p[c] <= max[c] + eps);
            }
        }
        RegionSection::Sphere { center, radius } => {
            let (c, r) = ball(key, "sphere", center, *radius)?;
            for (i, p) in mesh.positions.iter().enumerate() {
                inside[i] = (p - c).norm() <= r + eps;
            }
        }
        RegionSection::TetsInBox { min, max } => {
            let (min, max) = (
                finite3(&format!("{key}.tets_in_box.min"), *min)?,
                finite3(&format!("{key}.tets_in_box.max"), *max)?,
            );
            mark_tets(mesh, &mut inside, |c| {
                (0..3).all(|k| c[k] >= min[k] - eps && c[k] <= max[k] + eps)
            });
        }
        RegionSection::TetsInSphere { center, radius } => {
            let (c, r) = ball(key, "tets_in_sphere", center, *radius)?;
            mark_tets(mesh, &mut inside, |p| (p - c).norm() <= r + eps);
        }
        RegionSection::Vertices(list) => {
            for &v in list {
                *inside.get_mut(v as usize).ok_or_else(|| {
                    format!(
                        "{key}.vertices: vertex {v} is out of range (the mesh has {n} vertices)"
                    )
                })? = true;
            }
        }
        RegionSection::Faces(faces) => {
            for f in faces {
                for &v in f {
                    *inside.get_mut(v as usize).ok_or_else(|| {
                        format!(
                            "{key}.faces: vertex {v} is out of range (the mesh has {n} vertices)"
                        )
                    })? = true;
                }
            }
            let mut boundary: Vec<[u32; 3]> = boundary_faces(&mesh.tets)
                .into_iter()
                .map(|mut f| {
                    f.sort_unstable();
                    f
                })
                .collect();
            boundary.sort_unstable();
            for f in faces {
                let mut k = *f;
                k.sort_unstable();
                if boundary.binary_search(&k).is_err() {
                    return Err(format!(
                        "{key}.faces: {f:?} is not a boundary face of the mesh"
                    ));
                }
            }
            explicit_faces = Some(faces.clone());
        }
    }
    let vertices: Vec<u32> = (0..n as u32).filter(|&i| inside[i as usize]).collect();
    if vertices.is_empty() {
        return Err(format!("{key}: selects no vertex"));
    }
    let faces = explicit_faces.unwrap_or_else(|| {
        boundary_faces(&mesh.tets)
            .into_iter()
            .filter(|f| f.iter().all(|&i| inside[i as usize]))
            .collect()
    });
    Ok((vertices, faces))
}

fn read_force_file(
    path: &Path,
    key: &str,
    files: Files<'_>,
) -> Result<Vec<(u32, Vector3<f64>)>, String> {
    let text = files
        .read_to_string(path)
        .map_err(|e| format!("{key}.file = {:?}: {e}", path.display()))?;
    let mut out = Vec::new();
    for (l, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let parts: Vec<&str> = line.split_whitespace().collect();
        let bad = || format!("{}:{}: expected `i fx fy fz`", path.display(), l + 1);
        if parts.len() != 4 {
            return Err(bad());
        }
        let i: u32 = parts[0].parse().map_err(|_| bad())?;
        let mut f = [0.0; 3];
        for c in 0..3 {
            f[c] = parts[c + 1].parse().map_err(|_| bad())?;
        }
        out.push((i, Vector3::from(f)));
    }
    if out.is_empty() {
        return Err(format!("{key}.file = {:?}: holds no force", path.display()));
    }
    Ok(out)
}

/// Resolves the `[[load]]` sections onto `bodies`.
pub(super) fn add_loads(
    sections: Vec<LoadSection>,
    bodies: &mut [BodyDesc],
    dir: &Path,
    files: Files<'_>,
) -> Result<(), String> {
    for (k, s) in sections.into_iter().enumerate() {
        let key = format!("load[{k}]");
        if let Some(name) = &s.name {
            super::names::check_name(&format!("{key}.name"), name)?;
        }
        let b = body_index(bodies, &s.body, &key)?;
        let time = time_function(&s.time_keys(), &key)?;
        let mesh = &bodies[b].mesh;
        let region = |s: &LoadSection| -> Result<(Vec<u32>, Vec<[u32; 3]>), String> {
            let r = s.region.as_ref().ok_or_else(|| {
                format!("{key}.region: required with force, traction or pressure")
            })?;
            select(mesh, r, &format!("{key}.region"))
        };
        let given = [
            s.force.is_some(),
            s.file.is_some(),
            s.traction.is_some(),
            s.pressure.is_some(),
        ];
        if given.iter().filter(|g| **g).count() != 1 {
            return Err(format!(
                "{key}: give exactly one of force, file, traction, pressure"
            ));
        }
        if s.follower && s.pressure.is_none() {
            return Err(format!(
                "{key}.follower: only a pressure can follow the surface"
            ));
        }
        let faces_of = |faces: Vec<[u32; 3]>| {
            if faces.is_empty() {
                Err(format!("{key}.region: holds no boundary face (a surface load needs faces on the boundary)"))
            } else {
                Ok(faces)
            }
        };
        let kind = if let Some(f) = s.force {
            let f = finite3(&format!("{key}.force"), f)?;
            let (vertices, _) = region(&s)?;
            let share = f / vertices.len() as f64;
            LoadKind::Nodal(vertices.into_iter().map(|i| (i, share)).collect())
        } else if let Some(file) = &s.file {
            if s.region.is_some() {
                return Err(format!(
                    "{key}: a force file names its vertices; remove region"
                ));
            }
            LoadKind::Nodal(read_force_file(&dir.join(file), &key, files)?)
        } else if let Some(t) = s.traction {
            let traction = finite3(&format!("{key}.traction"), t)?;
            let (_, faces) = region(&s)?;
            LoadKind::Traction {
                faces: faces_of(faces)?,
                traction,
            }
        } else {
            let pressure = s.pressure.unwrap_or(0.0);
            if !pressure.is_finite() {
                return Err(format!("{key}.pressure = {pressure}: must be finite"));
            }
            let (_, faces) = region(&s)?;
            LoadKind::Pressure {
                faces: faces_of(faces)?,
                pressure,
                follower: s.follower,
            }
        };
        bodies[b].loads.push(LoadDesc {
            name: s.name.unwrap_or_else(|| format!("load{k}")),
            kind,
            time,
        });
    }
    Ok(())
}

/// Resolves the `[[constraint]]` sections onto `bodies`.
pub(super) fn add_constraints(
    sections: Vec<ConstraintSection>,
    bodies: &mut [BodyDesc],
) -> Result<(), String> {
    for (k, s) in sections.into_iter().enumerate() {
        let key = format!("constraint[{k}]");
        // Constraint names become metrics.csv columns (`body.constraint.reaction_fx`).
        if let Some(name) = &s.name {
            super::names::check_name(&format!("{key}.name"), name)?;
        }
        let b = body_index(bodies, &s.body, &key)?;
        let time = time_function(&s.time_keys(), &key)?;
        let (vertices, _) = select(&bodies[b].mesh, &s.region, &format!("{key}.region"))?;
        let components = match &s.components {
            None => Components::All,
            Some(list) if list.iter().any(|c| c == "normal") => {
                if list.len() != 1 {
                    return Err(format!("{key}.components: \"normal\" stands alone"));
                }
                let n = match (&s.normal, &s.region) {
                    (Some(n), _) => finite3(&format!("{key}.normal"), *n)?,
                    (None, RegionSection::Plane { normal, .. }) => Vector3::from(*normal),
                    (None, _) => {
                        return Err(format!(
                            "{key}.normal: required for \"normal\" when the region is not a plane"
                        ))
                    }
                };
                Components::Normal(n)
            }
            Some(list) => {
                let mut axes = [false; 3];
                for (j, c) in list.iter().enumerate() {
                    let a = match c.as_str() {
                        "x" => 0,
                        "y" => 1,
                        "z" => 2,
                        _ => {
                            return Err(format!(
                                "{key}.components[{j}] = {c:?}: must be \"x\", \"y\", \"z\" or \"normal\""
                            ))
                        }
                    };
                    axes[a] = true;
                }
                if axes.iter().all(|a| !a) {
                    return Err(format!("{key}.components: holds no component"));
                }
                if axes.iter().all(|a| *a) {
                    Components::All
                } else {
                    Components::Axes(axes)
                }
            }
        };
        if s.normal.is_some() && !matches!(components, Components::Normal(_)) {
            return Err(format!("{key}.normal: only with components = [\"normal\"]"));
        }
        let motions = [
            s.displacement.is_some(),
            s.affine.is_some(),
            s.rotation.is_some(),
            s.velocity.is_some(),
            s.path.is_some(),
        ];
        if motions.iter().filter(|m| **m).count() > 1 {
            return Err(format!(
                "{key}: give at most one of displacement, affine, rotation, velocity, path"
            ));
        }
        let mut torque_point = Vector3::zeros();
        if s.interpolation.is_some() && s.path.is_none() {
            return Err(format!("{key}.interpolation: only a path is interpolated"));
        }
        let motion = if let Some(d) = s.displacement {
            Motion::Translation(finite3(&format!("{key}.displacement"), d)?)
        } else if let Some(a) = &s.affine {
            let m = a.matrix;
            if !m.iter().flatten().all(|c| c.is_finite()) {
                return Err(format!("{key}.affine.matrix: every entry must be finite"));
            }
            Motion::Affine {
                f: Matrix3::from_fn(|i, j| m[i][j]),
                c: finite3(&format!("{key}.affine.offset"), a.offset)?,
            }
        } else if let Some(r) = &s.rotation {
            let axis = finite3(&format!("{key}.rotation.axis"), r.axis)?;
            if axis.norm() == 0.0 {
                return Err(format!("{key}.rotation.axis: must not be zero"));
            }
            let center = finite3(&format!("{key}.rotation.center"), r.center)?;
            if !r.degrees.is_finite() {
                return Err(format!(
                    "{key}.rotation.degrees = {}: must be finite",
                    r.degrees
                ));
            }
            torque_point = center;
            Motion::Rotation {
                center,
                axis,
                angle: r.degrees.to_radians(),
            }
        } else if let Some(v) = s.velocity {
            Motion::Velocity(finite3(&format!("{key}.velocity"), v)?)
        } else if let Some(p) = &s.path {
            let keys: Vec<_> = p
                .iter()
                .map(|k| (k[0], Vector3::new(k[1], k[2], k[3])))
                .collect();
            match s.interpolation.as_deref() {
                None | Some("linear") => Motion::Path(keys),
                Some("catmull_rom") => Motion::Spline(
                    Keyframes::new(keys, Interpolation::CatmullRom)
                        .map_err(|e| format!("{key}.path: {e}"))?,
                ),
                Some(other) => {
                    return Err(format!(
                        "{key}.interpolation = {other:?}: must be \"linear\" or \"catmull_rom\""
                    ))
                }
            }
        } else {
            Motion::Rest
        };
        if let Some(p) = s.torque_point {
            torque_point = finite3(&format!("{key}.torque_point"), p)?;
        }
        if let Some(r) = s.release {
            if !r.is_finite() {
                return Err(format!("{key}.release = {r}: must be finite"));
            }
        }
        let desc = ConstraintDesc {
            name: s.name.unwrap_or_else(|| format!("constraint{k}")),
            vertices,
            components,
            motion,
            time,
            release: s.release,
            torque_point,
        };
        // The library's own checks (keyframe order, motion values), with the key path.
        supple::constraint::Constraints::new(
            bodies[b].mesh.n_vertices(),
            &[],
            std::slice::from_ref(&desc),
        )
        .map_err(|e| format!("{key}: {e}"))?;
        bodies[b].constraints.push(desc);
    }
    Ok(())
}
