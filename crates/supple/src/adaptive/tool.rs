//! Tool interaction (Debunne §5): "surfaces points are pulled out of the tool. The same
//! translation is applied to the closest active node. Then, simulation is applied and results
//! in a larger scale deformation of the object and into a feedback force".
//!
//! The sphere is read once per frame and only pushes surface points out, as in the paper: it
//! is not swept between frames, so a tool that moves deeper than its radius past the surface
//! within one frame ends inside the body. A hold needs the tool's centre on the body's outer
//! side at the node ([`super::AdaptiveSettings::tool_side`]), so such a tool does not hold the
//! surface wrapped over it, nor push out the surface it reaches from inside, until its centre
//! is back outside. With [`super::ToolTiming::Step`] the contact is evaluated at every level
//! step with the tool moved over the frame (still not swept for tunnelling: the step is short,
//! but the same side test applies).

use super::settings::{ToolOrder, ToolSide};
use super::state::{AdaptiveBody, NodeState};
use nalgebra::Vector3;

/// How far outside the sphere (relative to its radius) a node held in the last frame may lie
/// and still count as on it: round-off of the projection onto the sphere, far below any tool
/// motion between frames.
const PERSIST_TOL: f64 = 1e-9;

/// A sphere moved by the user; its position is read once per frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SphereTool {
    pub center: Vector3<f64>,
    pub radius: f64,
}

/// A sphere tool moved along a path: its centre interpolated linearly between keyframes
/// `(time, centre)` with ascending times, held at the first before and at the last after.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolPath {
    pub radius: f64,
    pub keys: Vec<(f64, Vector3<f64>)>,
}

impl ToolPath {
    /// The tool at time `t` (`None` without keyframes).
    pub fn at(&self, t: f64) -> Option<SphereTool> {
        let first = self.keys.first()?;
        let k = self.keys.partition_point(|(tk, _)| *tk <= t);
        let center = if k == 0 {
            first.1
        } else if k == self.keys.len() {
            self.keys[k - 1].1
        } else {
            let ((t0, c0), (t1, c1)) = (self.keys[k - 1], self.keys[k]);
            let s = if t1 > t0 { (t - t0) / (t1 - t0) } else { 1.0 };
            c0 + s * (c1 - c0)
        };
        Some(SphereTool {
            center,
            radius: self.radius,
        })
    }
}

impl AdaptiveBody {
    /// Once per frame, before the steps: every active surface node inside the sphere is
    /// moved to the sphere's surface along the ray from the centre. Here the surface points
    /// *are* the active surface nodes, so the "closest active node" that receives the same
    /// translation is the point itself. The moved nodes are held there for the frame (zero
    /// velocity, not integrated): the tool is a position input read at frame rate. With
    /// [`super::AdaptiveSettings::tool_persistent`] a node held in the last frame that is still
    /// on the sphere and pushed on it then is held again (Signorini: contact while compressive).
    /// With [`super::AdaptiveSettings::tool_side`] a hold (every hold, or only the persistent
    /// ones) needs the centre on the body's outer side at the node, `n · (c − x) > 0`
    /// ([`Self::outward_normal`]): the contact of a tool outside the body.
    /// Returns the held nodes as `(level, node)`.
    pub(super) fn apply_tool(&mut self, tool: &SphereTool) -> Vec<(usize, u32)> {
        let mut held = Vec::new();
        let side = self.settings.tool_side;
        for n in 0..self.levels.len() {
            for k in 0..self.levels[n].active.len() {
                let st = &self.levels[n];
                let level = &self.hierarchy.levels[n];
                let i = st.active[k] as usize;
                if !level.surface[i] || level.fixed[i] || st.status[i] != NodeState::Active {
                    continue;
                }
                let x = level.mesh.positions[i] + st.d[i];
                let r = x - tool.center;
                let dist = r.norm();
                let on_sphere = st.pressing[i] && dist <= tool.radius * (1.0 + PERSIST_TOL);
                if !(dist < tool.radius || on_sphere) {
                    continue;
                }
                let gated = match side {
                    ToolSide::Any => false,
                    ToolSide::Persistent => st.pressing[i],
                    ToolSide::Outside => true,
                };
                if gated && self.outward_normal(n, i).dot(&(tool.center - x)) <= 0.0 {
                    continue;
                }
                let dir = if dist > 1e-12 * tool.radius {
                    r / dist
                } else {
                    Vector3::z()
                };
                let st = &mut self.levels[n];
                st.d[i] += tool.center + tool.radius * dir - x;
                st.v[i] = Vector3::zeros();
                st.held[i] = true;
                held.push((n, i as u32));
            }
        }
        for st in &mut self.levels {
            st.pressing.fill(false);
        }
        held
    }

    /// [`super::ToolTiming::Step`]: after a step of level `n`, its active free surface nodes inside
    /// the sphere at the level's time (the centre moved linearly from `from` at the frame's
    /// start to `to` at its end), and on the side [`super::AdaptiveSettings::tool_side`] asks
    /// for, are projected onto the sphere along the ray from the centre and lose their normal
    /// velocity towards it relative to the tool. The momentum removed, over the frame period,
    /// is added to the node's reaction (the body's force on the tool); the first time in the
    /// frame a node is touched it is added to `contacts` (`pressing` marks it meanwhile).
    pub(super) fn project_on_tool(
        &mut self,
        n: usize,
        from: &SphereTool,
        to: &SphereTool,
        contacts: &mut Vec<(usize, u32)>,
    ) {
        let dt_frame = self.hierarchy.dt_frame;
        let s = (self.levels[n].t / dt_frame).clamp(0.0, 1.0);
        let center = from.center + s * (to.center - from.center);
        let radius = from.radius + s * (to.radius - from.radius);
        let v_tool = (to.center - from.center) / dt_frame;
        let gated = self.settings.tool_side != ToolSide::Any;
        for k in 0..self.levels[n].active.len() {
            let st = &self.levels[n];
            let level = &self.hierarchy.levels[n];
            let i = st.active[k] as usize;
            if !level.surface[i] || level.fixed[i] {
                continue;
            }
            let x = level.mesh.positions[i] + st.d[i];
            let r = x - center;
            let dist = r.norm();
            if dist >= radius || (gated && self.outward_normal(n, i).dot(&(center - x)) <= 0.0) {
                continue;
            }
            let dir = if dist > 1e-12 * radius {
                r / dist
            } else {
                Vector3::z()
            };
            let mass = level.mass[i];
            let st = &mut self.levels[n];
            st.d[i] += center + radius * dir - x;
            let approach = (st.v[i] - v_tool).dot(&dir);
            if !st.pressing[i] {
                st.pressing[i] = true;
                st.reaction[i] = Vector3::zeros();
                contacts.push((n, i as u32));
            }
            if approach < 0.0 {
                st.v[i] -= approach * dir;
                st.reaction[i] += (mass * approach / dt_frame) * dir;
            }
        }
    }

    /// The outward normal (area-weighted, not normalised) of level `n`'s boundary faces
    /// around its active node `i`, in the deformed state at the level's time (between frames
    /// for [`Self::apply_tool`], after the level's step for [`Self::project_on_tool`]; a ghost
    /// is read at the level's time too). A face around an
    /// active node belongs to an active tet, so its other nodes are active or ghosts; a
    /// ghost's stored value may date from before the last split/merge (the steps refresh it,
    /// `refresh_hidden` skips it), so it is read from its expansion ([`Self::ghost_at`]), the
    /// value the coupling gives it now.
    pub(super) fn outward_normal(&self, n: usize, i: usize) -> Vector3<f64> {
        let level = &self.hierarchy.levels[n];
        let st = &self.levels[n];
        let x = |j: u32| {
            let j = j as usize;
            let d = if st.status[j] == NodeState::Active || level.fixed[j] {
                st.d[j]
            } else {
                match st.ghosts.binary_search_by_key(&(j as u32), |g| g.0) {
                    Ok(k) => self.ghost_at(n, k, st.t).0,
                    Err(_) => st.d[j],
                }
            };
            level.mesh.positions[j] + d
        };
        level
            .faces_of(i)
            .iter()
            .map(|f| {
                let [a, b, c] = f.map(x);
                (b - a).cross(&(c - a))
            })
            .sum()
    }

    /// Tool-driven refinement ([`super::AdaptiveSettings::tool_refine`], beyond the paper):
    /// stamps every active node the tool reaches ([`Self::tool_reaches`]) with `frame + 1`.
    pub(super) fn mark_tool_reach(&mut self, tool: &SphereTool) {
        let stamp = self.frame + 1;
        for n in 0..self.levels.len() {
            for k in 0..self.levels[n].active.len() {
                let i = self.levels[n].active[k] as usize;
                if self.tool_reaches(tool, n, i) {
                    self.levels[n].tool_seen[i] = stamp;
                }
            }
        }
    }

    /// Tool refinement's priority of active node `i` of level `n` (smaller first) under
    /// [`ToolOrder::Distance`] (`(‖x_i − c‖ − ĥ_i/2) / r`, in tool radii) or
    /// [`ToolOrder::Graded`] (`(‖x_i − c‖ − r) / ĥ_i`, in the node's spacing); 0 for
    /// [`ToolOrder::Criterion`], which orders by eq. 9 instead.
    pub(super) fn tool_priority(&self, tool: &SphereTool, n: usize, i: usize) -> f64 {
        let level = &self.hierarchy.levels[n];
        let dist = (level.mesh.positions[i] + self.levels[n].d[i] - tool.center).norm();
        match self.settings.tool_order {
            ToolOrder::Criterion => 0.0,
            ToolOrder::Distance => (dist - 0.5 * level.h_hat[i]) / tool.radius,
            ToolOrder::Graded => (dist - tool.radius) / level.h_hat[i],
        }
    }

    /// Whether the sphere, its radius widened by `tool_reach`, reaches the dual cell of node
    /// `i` of level `n`: `‖x_i − c‖ < tool_reach · r + ĥ_i/2`, `x_i` the deformed position (a
    /// held node lies on the sphere).
    pub(super) fn tool_reaches(&self, tool: &SphereTool, n: usize, i: usize) -> bool {
        let level = &self.hierarchy.levels[n];
        let x = level.mesh.positions[i] + self.levels[n].d[i];
        (x - tool.center).norm() < self.settings.tool_reach * tool.radius + 0.5 * level.h_hat[i]
    }
}
