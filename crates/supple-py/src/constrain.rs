//! `World.constrain(...)`: an exact constraint from the call's arguments. The arguments are
//! kept as they were given ([`ConstrainArgs`]), with the bodies as indices, so that a saved
//! state can add the same constraint again ([`crate::state`]).

use crate::errors::value_error;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use supple::constraint::{ExactConstraint, ExactKind, Interpolation, Keyframes};
use supple::world::{ConstraintId, World};

/// The arguments of `World.constrain`, bodies by index.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ConstrainArgs {
    pub body: u32,
    pub point: [f64; 3],
    pub kind: String,
    pub path: Option<Vec<[f64; 4]>>,
    pub normal: Option<[f64; 3]>,
    pub origin: Option<[f64; 3]>,
    pub center: Option<[f64; 3]>,
    pub radius: Option<f64>,
    /// The other body of a link (index; the constrained body when None).
    pub other: Option<u32>,
    pub other_point: Option<[f64; 3]>,
    pub release: Option<f64>,
}

/// Adds the constraint `a` describes to `w` (see `World.constrain` for the keys).
pub(crate) fn constrain(w: &mut World, a: &ConstrainArgs) -> PyResult<ConstraintId> {
    let i = a.body as usize;
    let at = a.point.into();
    let p = w.material_point(i, at).map_err(value_error)?;
    let given = [
        ("path", a.path.as_ref().is_some_and(|p| !p.is_empty())),
        ("normal", a.normal.is_some()),
        ("origin", a.origin.is_some()),
        ("center", a.center.is_some()),
        ("radius", a.radius.is_some()),
        ("other", a.other.is_some()),
        ("other_point", a.other_point.is_some()),
    ];
    let kind = a.kind.as_str();
    let allowed: &[&str] = match kind {
        "point" => &["path"],
        "plane" => &["normal", "origin"],
        "sphere" => &["center", "radius"],
        "link" => &["other", "other_point"],
        _ => &[],
    };
    if let Some((key, _)) = given.iter().find(|(k, set)| *set && !allowed.contains(k)) {
        return Err(PyValueError::new_err(format!(
            "{key}: not a key of kind {kind:?}"
        )));
    }
    let kind = match kind {
        "point" => {
            let keys = match &a.path {
                Some(k) if !k.is_empty() => k
                    .iter()
                    .map(|k| (k[0], [k[1], k[2], k[3]].into()))
                    .collect(),
                _ => vec![(0.0, at)],
            };
            let path = Keyframes::new(keys, Interpolation::Linear)
                .map_err(|e| PyValueError::new_err(format!("path: {e}")))?;
            ExactKind::Point { path }
        }
        "plane" => {
            let normal = a
                .normal
                .ok_or_else(|| PyValueError::new_err("normal: required"))?;
            ExactKind::Plane {
                origin: a.origin.map_or(at, Into::into),
                normal: normal.into(),
            }
        }
        "sphere" => {
            let center = a
                .center
                .ok_or_else(|| PyValueError::new_err("center: required"))?
                .into();
            ExactKind::Sphere {
                center,
                radius: a.radius.unwrap_or_else(|| (at - center).norm()),
            }
        }
        "link" => {
            let j = a.other.map_or(i, |o| o as usize);
            let other = w
                .material_point(j, a.other_point.map_or(at, Into::into))
                .map_err(value_error)?;
            ExactKind::Link { other }
        }
        k => {
            return Err(PyValueError::new_err(format!(
                "kind = {k:?}: must be \"point\", \"plane\", \"sphere\" or \"link\""
            )))
        }
    };
    w.constrain(ExactConstraint {
        point: p,
        kind,
        release: a.release,
    })
    .map_err(value_error)
}
