//! What an adaptive body looks like now, for files and pictures: the active mesh with each
//! tet's level (the level-coloured picture of Debunne et al. 2000, Fig. 8).

use super::state::{AdaptiveBody, NodeState};
use nalgebra::Vector3;

/// The tets the simulation computes (each level's tets with an active node), their nodes
/// renumbered across levels, and the body's boundary faces seen from the active levels.
///
/// At an interface a coarse tet and the finer tets of its split nodes overlap: both are in
/// the mesh (that is where the ghost coupling acts, §3.2); `tet_active` tells them apart.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ActiveMesh {
    /// Current positions `X + d` (ghost nodes included).
    pub positions: Vec<Vector3<f64>>,
    pub displacement: Vec<Vector3<f64>>,
    /// Level of each node, and whether it is active (1) or a ghost (0).
    pub node_level: Vec<f64>,
    pub node_active: Vec<f64>,
    pub tets: Vec<[u32; 4]>,
    /// Level of each tet.
    pub tet_level: Vec<f64>,
    /// Active nodes of each tet (1 to 4).
    pub tet_active: Vec<f64>,
    /// Boundary triangles of each level with at least one active node, wound so that
    /// `(b − a) × (c − a)` points out of the body.
    pub surface: Vec<[u32; 3]>,
    /// Level of each boundary triangle.
    pub surface_level: Vec<usize>,
}

impl AdaptiveBody {
    /// The active mesh now (see [`ActiveMesh`]).
    pub fn active_mesh(&self) -> ActiveMesh {
        let mut out = ActiveMesh::default();
        for (n, st) in self.levels.iter().enumerate() {
            let level = &self.hierarchy.levels[n];
            let mut index = vec![u32::MAX; st.d.len()];
            let mut node = |i: u32, out: &mut ActiveMesh| -> u32 {
                let i = i as usize;
                if index[i] == u32::MAX {
                    index[i] = out.positions.len() as u32;
                    out.positions.push(level.mesh.positions[i] + st.d[i]);
                    out.displacement.push(st.d[i]);
                    out.node_level.push(n as f64);
                    let active = st.status[i] == NodeState::Active;
                    out.node_active.push(if active { 1.0 } else { 0.0 });
                }
                index[i]
            };
            for &e in &st.active_tets {
                let t = level.mesh.tets[e as usize];
                let active = t
                    .iter()
                    .filter(|&&i| st.status[i as usize] == NodeState::Active)
                    .count();
                let tet = t.map(|i| node(i, &mut out));
                out.tets.push(tet);
                out.tet_level.push(n as f64);
                out.tet_active.push(active as f64);
            }
            for (face, _, area) in &level.faces {
                if face
                    .iter()
                    .all(|&i| st.status[i as usize] != NodeState::Active)
                {
                    continue;
                }
                let p = face.map(|i| level.mesh.positions[i as usize]);
                let mut f = face.map(|i| node(i, &mut out));
                if (p[1] - p[0]).cross(&(p[2] - p[0])).dot(area) < 0.0 {
                    f.swap(1, 2);
                }
                out.surface.push(f);
                out.surface_level.push(n);
            }
        }
        out
    }
}
