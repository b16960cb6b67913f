//! `[[exact_constraint]]`: exact constraints on material points (Liesenfeld & Stolfi §3.2–3.3;
//! see `supple::constraint::exact`): a point fixed in space or dragged along a path, kept on
//! a plane or a sphere, or linked to a point of another (or the same) body.

use super::grab::InterpolationName;
use super::{bc, finite3, names};
use nalgebra::Vector3;
use serde::Deserialize;
use supple::body::BodyDesc;
use supple::constraint::{
    BodyPoint, ExactConstraint, ExactKind, ExactSettings, Interpolation, Keyframes,
};
use supple::mesh::Embedding;

#[derive(Debug, Deserialize, Clone, Copy, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum KindName {
    Point,
    Plane,
    Sphere,
    Link,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ExactSection {
    name: Option<String>,
    kind: KindName,
    body: Option<String>,
    /// The material point: its rest position (bound to the rest tet holding it, else the
    /// nearest).
    point: [f64; 3],
    /// `point`: `[t, x, y, z]` keyframes (absent: fixed where the point is at rest).
    #[serde(default)]
    path: Vec<[f64; 4]>,
    #[serde(default)]
    interpolation: InterpolationName,
    /// `plane`: its normal and a point on it (default: `point`).
    normal: Option<[f64; 3]>,
    origin: Option<[f64; 3]>,
    /// `sphere`: centre and radius (default: the point's rest distance to the centre).
    center: Option<[f64; 3]>,
    radius: Option<f64>,
    /// `link`: the other body (default: the same) and its point's rest position (default:
    /// `point`).
    other_body: Option<String>,
    other_point: Option<[f64; 3]>,
    /// When the constraint lets go (s).
    release: Option<f64>,
}

/// A validated exact constraint and its name (a metrics column prefix).
#[derive(Debug, Clone, PartialEq)]
pub struct SceneExact {
    pub name: String,
    pub constraint: ExactConstraint,
}

pub(super) fn exact_constraints(
    sections: Vec<ExactSection>,
    bodies: &[BodyDesc],
) -> Result<Vec<SceneExact>, String> {
    let mut out: Vec<SceneExact> = Vec::with_capacity(sections.len());
    for (i, c) in sections.into_iter().enumerate() {
        let key = format!("exact_constraint[{i}]");
        let name = c.name.clone().unwrap_or_else(|| format!("constraint{i}"));
        names::check_name(&format!("{key}.name"), &name)?;
        if out.iter().any(|o| o.name == name) {
            return Err(format!(
                "{key}.name = {name:?}: another exact constraint has this name"
            ));
        }
        let body = bc::body_index(bodies, &c.body, &key)?;
        let at = finite3(&format!("{key}.point"), c.point)?;
        let point = material_point(&format!("{key}.point"), bodies, body, at)?;
        let unused = |k: &str, set: bool| {
            if set {
                Err(format!("{key}.{k}: not a key of kind {:?}", c.kind))
            } else {
                Ok(())
            }
        };
        let kind = match c.kind {
            KindName::Point => {
                for (k, set) in [
                    ("normal", c.normal.is_some()),
                    ("origin", c.origin.is_some()),
                    ("center", c.center.is_some()),
                    ("radius", c.radius.is_some()),
                    ("other_body", c.other_body.is_some()),
                    ("other_point", c.other_point.is_some()),
                ] {
                    unused(k, set)?;
                }
                let keys = if c.path.is_empty() {
                    vec![(0.0, at)]
                } else {
                    c.path
                        .iter()
                        .map(|k| (k[0], Vector3::new(k[1], k[2], k[3])))
                        .collect()
                };
                let path = Keyframes::new(keys, Interpolation::from(c.interpolation))
                    .map_err(|e| format!("{key}.path: {e}"))?;
                ExactKind::Point { path }
            }
            KindName::Plane => {
                for (k, set) in [
                    ("path", !c.path.is_empty()),
                    ("center", c.center.is_some()),
                    ("radius", c.radius.is_some()),
                    ("other_body", c.other_body.is_some()),
                    ("other_point", c.other_point.is_some()),
                ] {
                    unused(k, set)?;
                }
                let normal = c
                    .normal
                    .ok_or_else(|| format!("{key}.normal: required for a plane"))?;
                let normal = finite3(&format!("{key}.normal"), normal)?;
                if normal.norm() == 0.0 {
                    return Err(format!("{key}.normal: must not be zero"));
                }
                let origin = match c.origin {
                    Some(o) => finite3(&format!("{key}.origin"), o)?,
                    None => at,
                };
                ExactKind::Plane {
                    origin,
                    normal: normal.normalize(),
                }
            }
            KindName::Sphere => {
                for (k, set) in [
                    ("path", !c.path.is_empty()),
                    ("normal", c.normal.is_some()),
                    ("origin", c.origin.is_some()),
                    ("other_body", c.other_body.is_some()),
                    ("other_point", c.other_point.is_some()),
                ] {
                    unused(k, set)?;
                }
                let center = c
                    .center
                    .ok_or_else(|| format!("{key}.center: required for a sphere"))?;
                let center = finite3(&format!("{key}.center"), center)?;
                let radius = c.radius.unwrap_or_else(|| (at - center).norm());
                if !(radius > 0.0 && radius.is_finite()) {
                    return Err(format!(
                        "{key}.radius = {radius}: must be a finite number above 0"
                    ));
                }
                ExactKind::Sphere { center, radius }
            }
            KindName::Link => {
                for (k, set) in [
                    ("path", !c.path.is_empty()),
                    ("normal", c.normal.is_some()),
                    ("origin", c.origin.is_some()),
                    ("center", c.center.is_some()),
                    ("radius", c.radius.is_some()),
                ] {
                    unused(k, set)?;
                }
                let other_body = match &c.other_body {
                    Some(n) => (bodies.iter().position(|b| &b.name == n)).ok_or_else(|| {
                        format!("{key}.other_body = {n:?}: no body has this name")
                    })?,
                    None => body,
                };
                let other_at = match c.other_point {
                    Some(p) => finite3(&format!("{key}.other_point"), p)?,
                    None => at,
                };
                let other =
                    material_point(&format!("{key}.other_point"), bodies, other_body, other_at)?;
                if other == point {
                    return Err(format!("{key}: a link joins a point to itself"));
                }
                ExactKind::Link { other }
            }
        };
        if let Some(r) = c.release {
            if !(r.is_finite() && r >= 0.0) {
                return Err(format!("{key}.release = {r}: must be a finite time ≥ 0"));
            }
        }
        out.push(SceneExact {
            name,
            constraint: ExactConstraint {
                point,
                kind,
                release: c.release,
            },
        });
    }
    Ok(out)
}

fn material_point(
    key: &str,
    bodies: &[BodyDesc],
    body: usize,
    at: Vector3<f64>,
) -> Result<BodyPoint, String> {
    let mesh = &bodies[body].mesh;
    let e = Embedding::new(mesh, &[at]).map_err(|e| format!("{key}: {e}"))?;
    Ok(BodyPoint {
        body,
        vertices: mesh.tets[e.tet(0)],
        w: e.weights(0),
    })
}

/// `[exact]`: the projection of the exact constraints (absent keys keep the library's
/// defaults, see `supple::constraint::ExactSettings`).
#[derive(Debug, Deserialize, Default, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ExactSettingsSection {
    tolerance: Option<f64>,
    max_iterations: Option<usize>,
    carry_core_forces: Option<bool>,
}

/// The `[exact]` section over the library's defaults; refuses a tolerance that is not a
/// finite number above 0 and zero iterations.
pub(super) fn exact_settings(section: &ExactSettingsSection) -> Result<ExactSettings, String> {
    let d = ExactSettings::default();
    let settings = ExactSettings {
        tolerance: section.tolerance.unwrap_or(d.tolerance),
        max_iterations: section.max_iterations.unwrap_or(d.max_iterations),
        carry_core_forces: section.carry_core_forces.unwrap_or(d.carry_core_forces),
    };
    let t = settings.tolerance;
    if !(t > 0.0 && t.is_finite()) {
        return Err(format!(
            "exact.tolerance = {t}: must be a finite number above 0"
        ));
    }
    if settings.max_iterations == 0 {
        return Err("exact.max_iterations = 0: must be at least 1".into());
    }
    Ok(settings)
}
