//! The world's dynamic rigid cores ([`crate::constraint::rigid`]): added here and projected
//! in every try at a step before the exact constraints, whose projection then moves each
//! core as one rigid body (so a core can be pinned, hinged, slid on a plane or linked).

use super::{World, WorldError};
use crate::constraint::{RigidCore, RigidError};

impl World {
    /// Makes `vertices` of body `body` a dynamic rigid core (see
    /// [`crate::constraint::rigid`]); returns its index in [`rigid_cores`](Self::rigid_cores).
    /// The core is projected from the end of the next step on.
    pub fn add_rigid_core(&mut self, body: usize, vertices: Vec<u32>) -> Result<usize, WorldError> {
        let b = self.bodies.get(body).ok_or(WorldError::NoBody {
            body,
            n_bodies: self.bodies.len(),
        })?;
        let core =
            RigidCore::new(vertices, &b.mesh.positions, &b.mass.lumped, &b.fixed).map_err(|e| {
                WorldError::Rigid {
                    body: b.name.clone(),
                    source: e,
                }
            })?;
        if let Some((vertex, k)) =
            (core.vertices().iter()).find_map(|&v| self.core_of_vertex(body, v).map(|k| (v, k)))
        {
            return Err(WorldError::Rigid {
                body: b.name.clone(),
                source: RigidError::Shared { vertex, core: k },
            });
        }
        if let Some(ipc) = self.ipc.as_mut() {
            ipc.add_core(b, body, core.vertices());
        }
        let n = b.n_vertices();
        self.mark_core(body, n, core.vertices(), self.rigid.len());
        self.rigid.push((body, core));
        Ok(self.rigid.len() - 1)
    }

    /// The dynamic rigid cores and their bodies.
    pub fn rigid_cores(&self) -> &[(usize, RigidCore)] {
        &self.rigid
    }

    /// Projects every dynamic core onto a rigid motion.
    pub(super) fn project_rigid_cores(&mut self) {
        for (b, core) in &mut self.rigid {
            let body = &mut self.bodies[*b];
            core.project(&mut body.x, &mut body.v);
        }
    }
}
