//! After the coupled step (`step.rs`): the world projects its rigid cores (Müller et al. 2002
//! §4.3) and exact constraints (Liesenfeld & Stolfi 1997 §3.3) onto the accepted state, and
//! those projections know nothing of contact. A soft core squeezed against the ground in the
//! minimization and then made rigid again moved a bottom vertex 4.5 mm into the ground
//! (`scenes/guide/rigid_core.toml` stopped at step 24). So the projection's displacement is
//! itself put through the line search's question: the path from the accepted state to the
//! projected one is checked by the same additive CCD and inversion cap as a Newton step
//! (IPC §4.2), and the projection is taken only as far as that path is free.

use super::IpcStep;
use crate::body::Body;
use crate::contact::ipc::potential::Obstacles;
use nalgebra::Vector3;

impl IpcStep {
    /// `bodies` hold the accepted state of the last [`step`](Self::step) moved by the
    /// world's projections. Keeps each body's projected positions where the straight path to
    /// them from the accepted state meets no contact pair, obstacle or inverting element;
    /// otherwise stops every vertex at the largest free fraction of its path (the velocities
    /// keep the projection's). Returns that fraction (1: the projection kept whole). The
    /// contact set is left at the final state.
    pub fn keep_projection_feasible(&mut self, bodies: &mut [Body], obstacles: &Obstacles) -> f64 {
        let mut moved = false;
        for (b, body) in bodies.iter().enumerate() {
            let r = self.mesh.offsets[b]..self.mesh.offsets[b + 1];
            for ((dx, x), p) in self.dx[r.clone()].iter_mut().zip(&self.x[r]).zip(&body.x) {
                *dx = p - x;
                moved |= *dx != Vector3::zeros();
            }
        }
        if !moved {
            self.last.projection_fraction = 1.0;
            return 1.0;
        }
        let t = self.max_fraction(bodies, false, obstacles).min(1.0);
        if t < 1.0 {
            for (b, body) in bodies.iter_mut().enumerate() {
                let r = self.mesh.offsets[b]..self.mesh.offsets[b + 1];
                for ((p, x), dx) in body.x.iter_mut().zip(&self.x[r.clone()]).zip(&self.dx[r]) {
                    *p = x + t * dx;
                }
            }
        }
        for (b, body) in bodies.iter().enumerate() {
            let r = self.mesh.offsets[b]..self.mesh.offsets[b + 1];
            self.x[r].copy_from_slice(&body.x);
        }
        // The set at the state the world keeps (its pairs and closest distance are reported);
        // the path to it is free, so it has no pair at distance 0.
        let _ = self.update_set(true, obstacles);
        self.last.projection_fraction = t;
        self.last.min_distance = self.set.min_distance;
        self.last.pairs = self.set.pairs.len();
        t
    }
}
