//! `[[spring]]`: springs between two body points (a vertex, or a barycentric point of a tet;
//! in one body or two), with rest length, stiffness and damping (see
//! `supple::world::LinkSpring`). Indices are checked here, so a bad one names its key.

use super::names;
use serde::Deserialize;
use supple::body::BodyDesc;
use supple::world::{BodyPoint, LinkSpring};

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct SpringSection {
    /// The spring's name, a metrics column prefix (default spring0, spring1, ...).
    name: Option<String>,
    /// One end and the other.
    a: PointSection,
    b: PointSection,
    /// Stiffness k (N/m), above 0.
    stiffness: f64,
    /// Damping d (N s/m) on the ends' relative velocity, ≥ 0.
    #[serde(default)]
    damping: f64,
    /// Rest length L (m), ≥ 0; default: the distance between the two points at the start.
    rest_length: Option<f64>,
}

/// `{ body = "name", vertex = N }` or `{ body = "name", tet = N, barycentric = [w0, w1, w2,
/// w3] }` (weights of the tet's four vertices, summing to 1).
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct PointSection {
    /// The body's name (optional in a scene of one body).
    body: Option<String>,
    /// A vertex index of the body's mesh.
    vertex: Option<i64>,
    /// A tet index of the body's mesh, with `barycentric`.
    tet: Option<i64>,
    barycentric: Option<[f64; 4]>,
}

/// A validated spring and its name.
#[derive(Debug, Clone, PartialEq)]
pub struct SceneSpring {
    pub name: String,
    pub spring: LinkSpring,
}

fn point(p: &PointSection, bodies: &[BodyDesc], key: &str) -> Result<BodyPoint, String> {
    let body = super::bc::body_index(bodies, &p.body, key)?;
    let mesh = &bodies[body].mesh;
    let bname = &bodies[body].name;
    let index = |k: &str, v: i64, n: usize, what: &str| {
        if v >= 0 && (v as u64) < n as u64 {
            Ok(v as u32)
        } else {
            Err(format!(
                "{key}.{k} = {v}: body `{bname}` has {n} {what} (0 to {})",
                n as i64 - 1
            ))
        }
    };
    match (p.vertex, p.tet, p.barycentric) {
        (Some(v), None, None) => Ok(BodyPoint::vertex(
            body,
            index("vertex", v, mesh.n_vertices(), "vertices")?,
        )),
        (None, Some(t), Some(w)) => {
            let t = index("tet", t, mesh.n_tets(), "tets")?;
            let sum: f64 = w.iter().sum();
            if !w.iter().all(|c| c.is_finite() && *c >= 0.0) || (sum - 1.0).abs() > 1e-9 {
                return Err(format!(
                    "{key}.barycentric = {w:?}: must be four finite weights ≥ 0 summing to 1"
                ));
            }
            Ok(BodyPoint {
                body,
                vertices: mesh.tets[t as usize],
                w,
            })
        }
        (None, Some(_), None) => Err(format!("{key}.barycentric: missing (it goes with tet)")),
        (None, None, Some(_)) => Err(format!("{key}.tet: missing (it goes with barycentric)")),
        (None, None, None) => Err(format!(
            "{key}: give vertex = N, or tet = N with barycentric = [w0, w1, w2, w3]"
        )),
        _ => Err(format!(
            "{key}: give either vertex or tet (with barycentric), not both"
        )),
    }
}

fn position(p: &BodyPoint, bodies: &[BodyDesc]) -> nalgebra::Vector3<f64> {
    let x = &bodies[p.body].mesh.positions;
    (0..4).map(|k| p.w[k] * x[p.vertices[k] as usize]).sum()
}

/// Validates the `[[spring]]` sections against the bodies.
pub(super) fn springs(
    sections: Vec<SpringSection>,
    bodies: &[BodyDesc],
) -> Result<Vec<SceneSpring>, String> {
    let mut out: Vec<SceneSpring> = Vec::with_capacity(sections.len());
    for (i, s) in sections.into_iter().enumerate() {
        let key = format!("spring[{i}]");
        let name = s.name.unwrap_or_else(|| format!("spring{i}"));
        names::check_name(&format!("{key}.name"), &name)?;
        if out.iter().any(|o| o.name == name) {
            return Err(format!(
                "{key}.name = {name:?}: another spring has this name"
            ));
        }
        let a = point(&s.a, bodies, &format!("{key}.a"))?;
        let b = point(&s.b, bodies, &format!("{key}.b"))?;
        if !(s.stiffness > 0.0 && s.stiffness.is_finite()) {
            return Err(format!(
                "{key}.stiffness = {}: must be a finite number above 0",
                s.stiffness
            ));
        }
        if !(s.damping >= 0.0 && s.damping.is_finite()) {
            return Err(format!(
                "{key}.damping = {}: must be a finite number ≥ 0",
                s.damping
            ));
        }
        let rest_length = match s.rest_length {
            Some(l) if !(l >= 0.0 && l.is_finite()) => {
                return Err(format!(
                    "{key}.rest_length = {l}: must be a finite number ≥ 0"
                ))
            }
            Some(l) => l,
            None => (position(&a, bodies) - position(&b, bodies)).norm(),
        };
        out.push(SceneSpring {
            name,
            spring: LinkSpring {
                a,
                b,
                rest_length,
                stiffness: s.stiffness,
                damping: s.damping,
            },
        });
    }
    Ok(out)
}
