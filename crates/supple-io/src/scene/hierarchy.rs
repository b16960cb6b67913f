//! `[body.hierarchy]`: a body simulated by Hauth & Straßer's hierarchical corotational method
//! ([`supple::hierarchical`]): the body's mesh is the coarse level (run with its material's
//! model, St.Venant–Kirchhoff in the paper, by the scene's Newton integrator), octasected
//! `levels` times into the fine level that the world simulates and the output shows.
//!
//! ```toml
//! [integrator]
//! kind = "bdf3"             # backward_euler, bdf2 or bdf3: the scheme of both levels
//! [[body]]
//! material = { model = "stvk", youngs = 2.6e3, poisson = 0.3, density = 1000.0 }
//! [body.hierarchy]
//! levels = 2                # octasections (1 to 4), 70 → 4480 tets for two
//! reading = "detail"        # "detail" (a) or "full" (b)
//! update_every = 5          # frames refreshed every this many steps
//! coarse_correction = false # reading (b): two-level preconditioner
//! ```
//! The fine level's PCG takes `[solver]`'s tolerance, iteration limit and preconditioner.

use super::budget;
use super::surface::SceneSurface;
use serde::Deserialize;
use supple::body::BodyDesc;
use supple::hierarchical::{
    fine_description, HierarchicalStepper, HierarchySettings, Reading, Scheme,
};
use supple::linalg::PcgSettings;
use supple::mesh::{Embedding, Hierarchy};
use supple::time::IntegratorKind;

/// The `[body.hierarchy]` table.
#[derive(Debug, Deserialize, Clone, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct HierarchySection {
    #[serde(default = "default_levels")]
    levels: usize,
    #[serde(default)]
    reading: ReadingName,
    #[serde(default = "default_update_every")]
    update_every: u32,
    #[serde(default)]
    coarse_correction: bool,
}

fn default_levels() -> usize {
    HierarchySettings::default().levels
}

fn default_update_every() -> u32 {
    HierarchySettings::default().update_every
}

#[derive(Debug, Deserialize, Default, Clone, Copy, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum ReadingName {
    #[default]
    Detail,
    Full,
}

/// A hierarchical body of a scene: its coarse description and settings. The scene's body
/// at the same index is the fine level's description ([`fine_description`]).
#[derive(Debug, Clone)]
pub struct SceneHierarchy {
    pub coarse: BodyDesc,
    pub settings: HierarchySettings,
}

/// Turns each body with a `[body.hierarchy]` into its fine level (mesh, fixed vertices,
/// constraints and loads carried down; its embedded surface bound to the fine tets) and
/// returns the coarse descriptions with their settings, per body.
pub(super) fn apply(
    sections: Vec<Option<HierarchySection>>,
    bodies: &mut [BodyDesc],
    surfaces: &mut [Option<SceneSurface>],
    integrator: &IntegratorKind,
    pcg: PcgSettings,
) -> Result<Vec<Option<SceneHierarchy>>, String> {
    let mut out = Vec::with_capacity(sections.len());
    for (i, section) in sections.into_iter().enumerate() {
        let Some(section) = section else {
            out.push(None);
            continue;
        };
        let key = format!("body[{i}].hierarchy");
        let (scheme, newton) = match *integrator {
            IntegratorKind::BackwardEuler { newton } => (Scheme::BackwardEuler, newton),
            IntegratorKind::Bdf { order, newton } => (Scheme::Bdf { order }, newton),
            _ => {
                return Err(format!(
                    "{key}: needs integrator.kind = \"backward_euler\", \"bdf2\" or \"bdf3\" (the coarse level's Newton step and the fine level's formula)"
                ))
            }
        };
        let settings = HierarchySettings {
            levels: section.levels,
            reading: match section.reading {
                ReadingName::Detail => Reading::Detail,
                ReadingName::Full => Reading::Full,
            },
            update_every: section.update_every,
            scheme,
            newton,
            pcg,
            coarse_correction: section.coarse_correction,
        };
        let coarse = bodies[i].clone();
        HierarchicalStepper::check(&coarse, &settings).map_err(|e| format!("{key}: {e}"))?;
        // Each octasection has 8× the tets (and about as many more vertices): refused before
        // the fine mesh is built when it could not be simulated.
        let grow = 8u64.pow(settings.levels as u32);
        budget::check_mesh_size(
            &format!("{key}.levels = {}", settings.levels),
            coarse.mesh.n_vertices() as u64 * grow,
            coarse.mesh.n_tets() as u64 * grow,
            "tets",
        )?;
        let hierarchy = Hierarchy::new(coarse.mesh.clone(), settings.levels)
            .map_err(|e| format!("{key}: {e}"))?;
        let mut fine = fine_description(&coarse, &hierarchy).map_err(|e| format!("{key}: {e}"))?;
        fine.name.clone_from(&coarse.name);
        if let Some(s) = &mut surfaces[i] {
            s.embedding = Embedding::new(&fine.mesh, &s.surface.positions)
                .map_err(|e| format!("body[{i}].surface on the fine level: {e}"))?;
        }
        bodies[i] = fine;
        out.push(Some(SceneHierarchy { coarse, settings }));
    }
    Ok(out)
}
