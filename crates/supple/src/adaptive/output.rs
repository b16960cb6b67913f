//! What an adaptive body looks like now, for files and pictures: the active mesh with each
//! tet's level (the level-coloured picture of Debunne et al. 2000, Fig. 8).

use super::state::{AdaptiveBody, NodeState};
use super::AdaptiveError;
use crate::mesh::Embedding;
use nalgebra::Vector3;

/// Points of the body at rest bound once to every level's mesh (the tet that contains each
/// point, else the nearest, and its barycentric weights), so the displacement the simulation
/// represents there can be read every frame without a search
/// ([`AdaptiveBody::sample_displacements`]).
#[derive(Debug, Clone, PartialEq)]
pub struct RestPoints {
    /// `links[n][k]`: point `k`'s tet in level `n` and its weights.
    links: Vec<Vec<(u32, [f64; 4])>>,
}

impl RestPoints {
    pub fn len(&self) -> usize {
        self.links.first().map_or(0, Vec::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

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
    /// Binds `points` (rest positions) to every level (see [`RestPoints`]).
    pub fn rest_points(&self, points: &[Vector3<f64>]) -> Result<RestPoints, AdaptiveError> {
        let links = self
            .hierarchy
            .levels
            .iter()
            .map(|level| {
                let emb = Embedding::new(&level.mesh, points)?;
                Ok((0..points.len())
                    .map(|k| (emb.tet(k) as u32, emb.weights(k)))
                    .collect())
            })
            .collect::<Result<_, AdaptiveError>>()?;
        Ok(RestPoints { links })
    }

    /// The current displacement at each of `points` as the simulation represents it: from
    /// the finest level at which the point's tet has an active node, by linear interpolation
    /// there (ghost values as stored: current between frames). `out` gets one value per point;
    /// zero for a point whose tet has no active node on any level (not met in practice: level
    /// 0 has no absent nodes, so its tet is active or split into finer active nodes).
    pub fn sample_displacements(&self, points: &RestPoints, out: &mut Vec<Vector3<f64>>) {
        out.clear();
        for k in 0..points.len() {
            let mut d = Vector3::zeros();
            for n in (0..self.levels.len()).rev() {
                let (e, w) = points.links[n][k];
                let t = self.hierarchy.levels[n].mesh.tets[e as usize];
                let st = &self.levels[n];
                if t.iter()
                    .any(|&i| st.status[i as usize] == NodeState::Active)
                {
                    d = (0..4).map(|j| w[j] * st.d[t[j] as usize]).sum();
                    break;
                }
            }
            out.push(d);
        }
    }

    /// The level each of `points` is read from by [`Self::sample_displacements`] (the finest
    /// level at which the point's tet has an active node; 0 when none).
    pub fn sample_levels(&self, points: &RestPoints, out: &mut Vec<usize>) {
        out.clear();
        for k in 0..points.len() {
            let level = (0..self.levels.len()).rev().find(|&n| {
                let (e, _) = points.links[n][k];
                let st = &self.levels[n];
                self.hierarchy.levels[n].mesh.tets[e as usize]
                    .iter()
                    .any(|&i| st.status[i as usize] == NodeState::Active)
            });
            out.push(level.unwrap_or(0));
        }
    }

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
