//! `[[grab]]`: scripted grab springs (Müller et al. 2002 §4.2; see `supple::world::Grab`),
//! taken at `start` at the surface point nearest to `point`, their target following `path`
//! (absolute positions), released at `release`.

use super::{finite3, names};
use serde::Deserialize;
use supple::body::BodyDesc;
use supple::constraint::{Interpolation, Keyframes};
use supple::world::{GrabPath, GrabSettings};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct GrabSection {
    name: Option<String>,
    body: Option<String>,
    /// The grab is taken at the body's surface point nearest to this.
    point: [f64; 3],
    /// Spring stiffness (N/m) and damping (N s/m).
    stiffness: f64,
    #[serde(default)]
    damping: f64,
    /// When the grab is taken (s).
    #[serde(default)]
    start: f64,
    /// `[t, x, y, z]` keyframes of the spring's target (from the grabbed point at `start`).
    #[serde(default)]
    path: Vec<[f64; 4]>,
    #[serde(default)]
    interpolation: InterpolationName,
    release: Option<f64>,
}

/// `interpolation = "linear" | "catmull_rom"` of a keyframed path (grabs, exact constraints).
#[derive(Debug, Deserialize, Default, Clone, Copy, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(super) enum InterpolationName {
    #[default]
    Linear,
    CatmullRom,
}

impl From<InterpolationName> for Interpolation {
    fn from(name: InterpolationName) -> Self {
        match name {
            InterpolationName::Linear => Interpolation::Linear,
            InterpolationName::CatmullRom => Interpolation::CatmullRom,
        }
    }
}

/// A validated scripted grab and its name (a metrics column prefix).
#[derive(Debug, Clone, PartialEq)]
pub struct SceneGrab {
    pub name: String,
    pub script: GrabPath,
}

pub(super) fn grabs(
    sections: Vec<GrabSection>,
    bodies: &[BodyDesc],
) -> Result<Vec<SceneGrab>, String> {
    let mut out: Vec<SceneGrab> = Vec::with_capacity(sections.len());
    for (i, g) in sections.into_iter().enumerate() {
        let key = format!("grab[{i}]");
        let name = g.name.unwrap_or_else(|| format!("grab{i}"));
        names::check_name(&format!("{key}.name"), &name)?;
        if out.iter().any(|o| o.name == name) {
            return Err(format!("{key}.name = {name:?}: another grab has this name"));
        }
        let body = super::bc::body_index(bodies, &g.body, &key)?;
        let point = finite3(&format!("{key}.point"), g.point)?;
        if !(g.stiffness > 0.0 && g.stiffness.is_finite()) {
            return Err(format!(
                "{key}.stiffness = {}: must be a finite number above 0",
                g.stiffness
            ));
        }
        if !(g.damping >= 0.0 && g.damping.is_finite()) {
            return Err(format!(
                "{key}.damping = {}: must be a finite number ≥ 0",
                g.damping
            ));
        }
        if !(g.start >= 0.0 && g.start.is_finite()) {
            return Err(format!(
                "{key}.start = {}: must be a finite number ≥ 0",
                g.start
            ));
        }
        if let Some(r) = g.release {
            if !(r.is_finite() && r > g.start) {
                return Err(format!(
                    "{key}.release = {r}: must be a finite time after start ({})",
                    g.start
                ));
            }
        }
        let interpolation = Interpolation::from(g.interpolation);
        // The grabbed point at `start` is the path's first key (the library prepends it).
        let keys: Vec<_> = g
            .path
            .iter()
            .map(|k| (k[0], nalgebra::Vector3::new(k[1], k[2], k[3])))
            .collect();
        if let Some(k) = keys.iter().position(|(t, _)| *t <= g.start) {
            return Err(format!(
                "{key}.path[{k}]: keyframe times must come after start ({})",
                g.start
            ));
        }
        let mut all = vec![(g.start, point)];
        all.extend(keys);
        let path = Keyframes::new(all, interpolation).map_err(|e| format!("{key}.path: {e}"))?;
        out.push(SceneGrab {
            name,
            script: GrabPath {
                body,
                point,
                settings: GrabSettings {
                    stiffness: g.stiffness,
                    damping: g.damping,
                },
                start: g.start,
                path,
                release: g.release,
            },
        });
    }
    Ok(out)
}
