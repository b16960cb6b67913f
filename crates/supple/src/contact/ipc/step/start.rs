//! The coupled step's start (`step.rs`): a feasible first iterate against moving and
//! touched obstacles, the messages for an infeasible start, and the test switch's check.

use super::{IpcFailure, IpcStep};
use crate::contact::ipc::potential::{Obstacles, Pair, PairKind};

impl IpcStep {
    /// Writes into `x_t` a feasible start for Newton: every free surface vertex that a moving
    /// obstacle reaches within `d̂` at its end-of-step pose carried by the obstacle's motion
    /// over the step, and any vertex closer than `d̂/100` to an obstacle (touching it, as a
    /// body placed on the ground at `y = 0`) pushed out along the normal to `d̂/2`. Returns
    /// whether any vertex was moved. `x_t` holds `x⁰` on entry. (The step's velocities are
    /// still measured from `x⁰`: this moves Newton's first iterate, not the state.)
    ///
    /// A vertex deeper than `d̂` inside an obstacle at the step's start (after the carry,
    /// which keeps a vertex's distance to a moving obstacle) is refused with
    /// [`IpcFailure::Inside`]: the body starts inside the obstacle, which no feasible state is
    /// near; pushing it out would move it by the obstacle's size (a sphere of radius 1e9 m
    /// around a scene pushed every vertex 1e9 m, and the failure was then reported as two
    /// bodies crossing; issue 45 item 4).
    pub(super) fn carry_with_obstacles(
        &mut self,
        obstacles: &Obstacles,
    ) -> Result<bool, IpcFailure> {
        let mut carried = false;
        for o in obstacles.list {
            let (p0, p1) = (o.path.pose(obstacles.start), o.path.pose(obstacles.time));
            let motion = (p0 != p1).then(|| p1 * p0.inverse());
            for &v in &self.mesh.vertices {
                let i = v as usize;
                if self.fixed[i] {
                    continue;
                }
                let p = self.x_t[i];
                let d = o.proximity(obstacles.time, &p).distance;
                let mut q = match motion {
                    Some(m) if d < self.dhat => {
                        m.transform_point(&nalgebra::Point3::from(p)).coords
                    }
                    _ if d < 0.01 * self.dhat => p,
                    _ => continue,
                };
                let prox = o.proximity(obstacles.time, &q);
                if prox.distance.is_nan() || prox.distance < -self.dhat {
                    let b = self.mesh.owner[i] as usize;
                    return Err(IpcFailure::Inside {
                        body: b,
                        reason: format!(
                            "vertex {} is {:.3e} m inside obstacle `{}` at the step's start: IPC needs every body outside the obstacles (within d̂ = {:.3e} m is pushed out); move the body out of it",
                            i - self.mesh.offsets[b],
                            -prox.distance,
                            o.name,
                            self.dhat
                        ),
                    });
                }
                if prox.distance < 0.5 * self.dhat {
                    q += (0.5 * self.dhat - prox.distance) * prox.normal;
                }
                self.x_t[i] = q;
                carried = true;
            }
        }
        Ok(carried)
    }

    /// Names the bodies and vertices of an infeasible pair for the user.
    pub(super) fn describe(&self, p: &Pair) -> String {
        let body = |v: u32| self.mesh.owner[v as usize] as usize;
        let local = |v: u32| v as usize - self.mesh.offsets[body(v)];
        match p.kind {
            PairKind::PointObstacle => format!(
                "vertex {} of body {} is inside obstacle {} at the step's start",
                local(p.v[0]),
                body(p.v[0]),
                p.obstacle
            ),
            PairKind::CoreTriangle | PairKind::CoreEdge => format!(
                "a {} of body {} (vertex {}) touches or crosses obstacle {} at the step's start",
                if p.kind == PairKind::CoreTriangle { "face" } else { "edge" },
                body(p.v[3]),
                local(p.v[3]),
                p.obstacle
            ),
            kind => format!(
                "the surfaces of bodies {} and {} touch or cross at the step's start ({kind:?} pair, vertices {} and {}): IPC needs every pair apart (by more than d̂ = {:.3e} m is best): move them apart, or set [contact] response = \"projection\"",
                body(p.v[0]),
                body(p.v[3]),
                local(p.v[0]),
                local(p.v[3]),
                self.dhat
            ),
        }
    }

    /// True when a surface vertex of one body lies inside another at `self.x`: the surfaces
    /// cross. (An interior vertex outside its own body's surface is an inverted tet, which
    /// the barrier does not see; the inversion cap and the invertible models handle that.)
    pub(super) fn intersecting(&self, n_bodies: usize) -> bool {
        let o = &self.mesh.offsets;
        self.mesh.vertices.iter().any(|&v| {
            let (v, a) = (v as usize, self.mesh.owner[v as usize] as usize);
            (0..n_bodies)
                .any(|b| b != a && self.surfaces[b].contains(&self.x[o[b]..o[b + 1]], &self.x[v]))
        })
    }
}
