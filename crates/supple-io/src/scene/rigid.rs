//! `[[rigid_core]]`: dynamic rigid cores (Müller et al. 2002 §4.3–4.4; see
//! `supple::constraint::rigid`): the vertices of a region (typically `tets_in_box` or
//! `tets_in_sphere`: the tets tagged as bone) move as one rigid body, two-way coupled with the
//! skin. A kinematic core is a `[[constraint]]` on the same region with a rotation or a path.

use super::{bc, names};
use serde::Deserialize;
use supple::body::BodyDesc;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RigidSection {
    name: Option<String>,
    body: Option<String>,
    region: bc::RegionSection,
}

/// A validated rigid core: its name, body index and vertices.
#[derive(Debug, Clone, PartialEq)]
pub struct SceneRigid {
    pub name: String,
    pub body: usize,
    pub vertices: Vec<u32>,
}

pub(super) fn rigid_cores(
    sections: Vec<RigidSection>,
    bodies: &[BodyDesc],
) -> Result<Vec<SceneRigid>, String> {
    let mut out: Vec<SceneRigid> = Vec::with_capacity(sections.len());
    for (i, s) in sections.into_iter().enumerate() {
        let key = format!("rigid_core[{i}]");
        let name = s.name.unwrap_or_else(|| format!("core{i}"));
        names::check_name(&format!("{key}.name"), &name)?;
        if out.iter().any(|o| o.name == name) {
            return Err(format!(
                "{key}.name = {name:?}: another rigid core has this name"
            ));
        }
        let body = bc::body_index(bodies, &s.body, &key)?;
        let (vertices, _) = bc::select(&bodies[body].mesh, &s.region, &format!("{key}.region"))?;
        if vertices.is_empty() {
            return Err(format!("{key}.region: selects no vertex"));
        }
        out.push(SceneRigid {
            name,
            body,
            vertices,
        });
    }
    Ok(out)
}
