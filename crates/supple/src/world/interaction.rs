//! Grab springs: a user (a mouse, a haptic device, a script) holds a point of a body's
//! surface on a damped spring and moves the spring's other end (Müller et al. 2002 §4.2:
//! the tube picked up by one vertex, Fig. 10).
//!
//! A grab ties the point `P(x) = Σ w_k x_k` of a boundary triangle (barycentric weights
//! `w`, fixed at the grab) to a target `p`. Each world step it reaches the integrator as a
//! [`PointSpring`] in the body's step inputs, so its force `k (p − P) + d (ṗ − P(v))` is in
//! the implicit solve and its stiffness and damping in the matrix (the triangle's vertices
//! share a tet, hence blocks of the body's pattern). Within a world step the target moves
//! linearly from where it was at the step's start to where it was set for the step's end, and
//! `ṗ` is that motion's velocity. After each step the spring's force on the body is kept
//! ([`World::grab_force`]): the force a haptic device would render is its opposite.

use super::{World, WorldError};
use crate::constraint::Keyframes;
use crate::mesh::{boundary_faces, closest_on_triangle};
use crate::time::PointSpring;
use nalgebra::Vector3;
use thiserror::Error;

/// Names a grab of a [`World`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GrabId(pub u64);

/// Stiffness and damping of a grab spring.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GrabSettings {
    /// `k` (N/m), above 0.
    pub stiffness: f64,
    /// `d` (N s/m), ≥ 0.
    pub damping: f64,
}

impl GrabSettings {
    fn check(&self) -> Result<(), InteractionError> {
        if !(self.stiffness > 0.0 && self.stiffness.is_finite()) {
            return Err(InteractionError::Setting {
                key: "stiffness",
                value: self.stiffness,
                reason: "must be a finite number above 0",
            });
        }
        if !(self.damping >= 0.0 && self.damping.is_finite()) {
            return Err(InteractionError::Setting {
                key: "damping",
                value: self.damping,
                reason: "must be a finite number ≥ 0",
            });
        }
        Ok(())
    }
}

/// A scripted grab: taken at time `start` at the surface point nearest to `point`, its target
/// then following `path` (absolute positions; from the grabbed point to the first keyframe
/// before it), released at `release`.
#[derive(Debug, Clone, PartialEq)]
pub struct GrabPath {
    pub body: usize,
    pub point: Vector3<f64>,
    pub settings: GrabSettings,
    pub start: f64,
    pub path: Keyframes,
    pub release: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum InteractionError {
    #[error("there is no body {body} (the world has {n_bodies})")]
    NoBody { body: usize, n_bodies: usize },
    #[error("grab.{key} = {value}: {reason}")]
    Setting {
        key: &'static str,
        value: f64,
        reason: &'static str,
    },
    #[error("a point, target or force has a non-finite coordinate")]
    NonFinite,
    #[error("no grab {0:?} (released, or never made)")]
    UnknownGrab(GrabId),
    #[error("vertex {vertex} is out of range (body `{body}` has {n_vertices})")]
    Vertex {
        body: String,
        vertex: u32,
        n_vertices: usize,
    },
    #[error("grab: barycentric weights must be finite and sum to 1")]
    Weights,
    #[error("apply_forces: {vertices} vertices but {forces} forces")]
    Forces { vertices: usize, forces: usize },
}

/// A live grab.
#[derive(Debug, Clone, PartialEq)]
pub struct Grab {
    pub id: GrabId,
    pub body: usize,
    /// The grabbed point: up to four vertices and their weights (a surface triangle's three,
    /// or one vertex).
    pub vertices: [u32; 4],
    pub w: [f64; 4],
    pub settings: GrabSettings,
    /// Target at the end of the current world step, and at its start.
    pub target: Vector3<f64>,
    start_target: Vector3<f64>,
    /// Scripted grabs: the target path (with the grabbed point as its first key) and the
    /// release time.
    script: Option<(Keyframes, Option<f64>)>,
    /// The spring's force on the body at the end of the last step (N).
    pub force: Vector3<f64>,
}

impl Grab {
    /// The spring of this grab at time `t` of the step `[t0, t0 + dt]`.
    fn spring(&self, t0: f64, dt: f64, t: f64) -> PointSpring {
        let s = ((t - t0) / dt).clamp(0.0, 1.0);
        PointSpring {
            vertices: self.vertices,
            w: self.w,
            target: self.start_target + s * (self.target - self.start_target),
            target_velocity: (self.target - self.start_target) / dt,
            stiffness: self.settings.stiffness,
            damping: self.settings.damping,
        }
    }
}

/// The world's grabs and scripted grabs, and the world step they are set for.
#[derive(Debug, Clone, Default)]
pub(super) struct Interaction {
    grabs: Vec<Grab>,
    pending: Vec<(GrabId, GrabPath)>,
    next: u64,
    /// Start and length of the world step being taken.
    t0: f64,
    dt: f64,
    /// The world step (its index, `World::steps` before it) that the last
    /// [`World::apply_forces`] loaded: something outside did work in it (`verdict.rs`).
    pub(super) forced_step: Option<usize>,
    /// Springs between body points (`links.rs`), which reach the integrators beside the grabs.
    pub(super) links: super::links::Links,
}

impl Interaction {
    /// Writes the point springs of body `b`'s grabs and spring ends at time `t` of the current
    /// step.
    pub(super) fn springs_for(&self, b: usize, t: f64, out: &mut Vec<PointSpring>) {
        out.clear();
        out.extend(
            (self.grabs.iter())
                .filter(|g| g.body == b)
                .map(|g| g.spring(self.t0, self.dt, t)),
        );
        self.links.springs_for(b, t, out);
    }

    /// [`springs_for`](Self::springs_for) for a try at `[t0, t0 + h]` by body `b`'s
    /// integrator: grabs at the end; the ends of springs between body points at the end for
    /// a scheme that takes its forces there (implicit), at the start for one that steps
    /// explicitly from there (`explicit`; see `links.rs`).
    pub(super) fn springs_for_step(
        &self,
        b: usize,
        t0: f64,
        h: f64,
        explicit: bool,
        out: &mut Vec<PointSpring>,
    ) {
        out.clear();
        out.extend(
            (self.grabs.iter())
                .filter(|g| g.body == b)
                .map(|g| g.spring(self.t0, self.dt, t0 + h)),
        );
        let t = if explicit { t0 } else { t0 + h };
        self.links.springs_for(b, t, out);
    }

    fn new_id(&mut self) -> GrabId {
        self.next += 1;
        GrabId(self.next)
    }
}

/// A point of a body as up to four vertices, their weights, and its position.
type SurfacePoint = ([u32; 4], [f64; 4], Vector3<f64>);

/// `1e-9 dt`: a scripted time within this of a step boundary counts as on it.
const TIME_SLACK: f64 = 1e-9;

impl World {
    /// Grabs body `body` at the point of its surface nearest to `point` (current positions)
    /// with a spring of the given settings, its target at that point (no force until the
    /// target moves; see [`move_grab`](Self::move_grab)). A mouse drag is `grab`, then
    /// `move_grab` before each step, [`grab_force`](Self::grab_force) to read the pull, and
    /// [`release`](Self::release):
    ///
    /// ```
    /// use supple::prelude::*;
    /// let mesh = box_grid(&BoxGrid { cells: [2, 1, 1], cell_size: Vector3::repeat(0.1),
    ///     origin: Vector3::zeros(), split: TetSplit::Five });
    /// let bar = BodyDesc::of(mesh).youngs(1e5).fix_where(|p| p.x < 1e-9);
    /// let mut world = World::builder().body(bar).no_gravity().build()?;
    /// let end = Vector3::new(0.2, 0.05, 0.05);
    /// let grab = world.grab(0, end, GrabSettings { stiffness: 100.0, damping: 1.0 })?;
    /// for step in 1..=5 {
    ///     world.move_grab(grab, end + Vector3::new(0.0, 0.01 * step as f64, 0.0))?;
    ///     world.step()?;
    /// }
    /// let pull = world.grab_force(grab).ok_or("the grab is held")?;
    /// assert!(pull.y > 0.0, "the spring pulls the end up: {pull}");
    /// assert!(world.bodies[0].x.iter().any(|p| p.y > 0.1), "and the end follows");
    /// world.release(grab)?;
    /// assert!(world.grab_force(grab).is_none());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn grab(
        &mut self,
        body: usize,
        point: Vector3<f64>,
        settings: GrabSettings,
    ) -> Result<GrabId, WorldError> {
        let (vertices, w, at) = self.nearest_surface_point(body, &point, &settings)?;
        let id = self.interaction.new_id();
        self.attach(id, body, vertices, w, at, settings, None);
        Ok(id)
    }

    /// Grabs the point `Σ w_k x_{v_k}` of body `body` (e.g. a picked triangle and its
    /// barycentric coordinates; the vertices should share a tet), its target at that point.
    pub fn grab_point(
        &mut self,
        body: usize,
        vertices: &[u32],
        w: &[f64],
        settings: GrabSettings,
    ) -> Result<GrabId, WorldError> {
        settings.check()?;
        let b = self.body_index(body)?;
        let n = b.n_vertices();
        let sum: f64 = w.iter().sum();
        if vertices.is_empty()
            || vertices.len() > 4
            || vertices.len() != w.len()
            || !w.iter().all(|c| c.is_finite())
            || (sum - 1.0).abs() > 1e-9
        {
            return Err(InteractionError::Weights.into());
        }
        if let Some(&vertex) = vertices.iter().find(|&&v| v as usize >= n) {
            return Err(InteractionError::Vertex {
                body: b.name.clone(),
                vertex,
                n_vertices: n,
            }
            .into());
        }
        let mut vs = [vertices[0]; 4];
        let mut ws = [0.0; 4];
        vs[..vertices.len()].copy_from_slice(vertices);
        ws[..w.len()].copy_from_slice(w);
        let at = (0..vertices.len())
            .map(|k| ws[k] * b.x[vs[k] as usize])
            .sum();
        let id = self.interaction.new_id();
        self.attach(id, body, vs, ws, at, settings, None);
        Ok(id)
    }

    /// Schedules a grab that is taken at `script.start`, follows `script.path` and is
    /// released at `script.release`; its id is live from `start` to `release`.
    pub fn script_grab(&mut self, script: GrabPath) -> Result<GrabId, WorldError> {
        script.settings.check()?;
        self.body_index(script.body)?;
        if !script.point.iter().all(|c| c.is_finite()) {
            return Err(InteractionError::NonFinite.into());
        }
        let id = self.interaction.new_id();
        self.interaction.pending.push((id, script));
        Ok(id)
    }

    /// Moves a grab's target to `target`, reached at the end of the next step.
    pub fn move_grab(&mut self, id: GrabId, target: Vector3<f64>) -> Result<(), WorldError> {
        if !target.iter().all(|c| c.is_finite()) {
            return Err(InteractionError::NonFinite.into());
        }
        self.grab_mut(id)?.target = target;
        Ok(())
    }

    /// Lets go of a grab (a scripted grab not yet taken is cancelled).
    pub fn release(&mut self, id: GrabId) -> Result<(), WorldError> {
        let grabs = &mut self.interaction.grabs;
        if let Some(i) = grabs.iter().position(|g| g.id == id) {
            grabs.remove(i);
            return Ok(());
        }
        let pending = &mut self.interaction.pending;
        let i = (pending.iter().position(|(p, _)| *p == id))
            .ok_or(InteractionError::UnknownGrab(id))?;
        pending.remove(i);
        Ok(())
    }

    /// Adds external forces (N) on vertices of body `body` for the next step only (they
    /// enter the implicit solve as dead loads; calls before one step add up).
    pub fn apply_forces(
        &mut self,
        body: usize,
        vertices: &[u32],
        forces: &[Vector3<f64>],
    ) -> Result<(), WorldError> {
        let b = self.body_index(body)?;
        let n = b.n_vertices();
        if vertices.len() != forces.len() {
            return Err(InteractionError::Forces {
                vertices: vertices.len(),
                forces: forces.len(),
            }
            .into());
        }
        if let Some(&vertex) = vertices.iter().find(|&&v| v as usize >= n) {
            return Err(InteractionError::Vertex {
                body: b.name.clone(),
                vertex,
                n_vertices: n,
            }
            .into());
        }
        if !forces.iter().all(|f| f.iter().all(|c| c.is_finite())) {
            return Err(InteractionError::NonFinite.into());
        }
        let input = &mut self.inputs[body];
        for (&v, f) in vertices.iter().zip(forces) {
            input.external[v as usize] += f;
        }
        input.has_external = true;
        self.interaction.forced_step = Some(self.steps);
        Ok(())
    }

    /// The live grabs.
    pub fn grabs(&self) -> &[Grab] {
        &self.interaction.grabs
    }

    /// The force grab `id`'s spring exerted on its body at the end of the last step (N); a
    /// haptic device renders its opposite.
    pub fn grab_force(&self, id: GrabId) -> Option<Vector3<f64>> {
        self.interaction
            .grabs
            .iter()
            .find(|g| g.id == id)
            .map(|g| g.force)
    }

    fn grab_mut(&mut self, id: GrabId) -> Result<&mut Grab, InteractionError> {
        (self.interaction.grabs.iter_mut())
            .find(|g| g.id == id)
            .ok_or(InteractionError::UnknownGrab(id))
    }

    fn body_index(&self, body: usize) -> Result<&crate::body::Body, InteractionError> {
        self.bodies.get(body).ok_or(InteractionError::NoBody {
            body,
            n_bodies: self.bodies.len(),
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn attach(
        &mut self,
        id: GrabId,
        body: usize,
        vertices: [u32; 4],
        w: [f64; 4],
        at: Vector3<f64>,
        settings: GrabSettings,
        script: Option<(Keyframes, Option<f64>)>,
    ) {
        self.interaction.grabs.push(Grab {
            id,
            body,
            vertices,
            w,
            settings,
            target: at,
            start_target: at,
            script,
            force: Vector3::zeros(),
        });
    }

    /// The boundary triangle point of body `body` nearest to `point`, as vertices, weights
    /// and position.
    fn nearest_surface_point(
        &self,
        body: usize,
        point: &Vector3<f64>,
        settings: &GrabSettings,
    ) -> Result<SurfacePoint, InteractionError> {
        settings.check()?;
        if !point.iter().all(|c| c.is_finite()) {
            return Err(InteractionError::NonFinite);
        }
        let b = self.body_index(body)?;
        let mut best = (f64::INFINITY, [0u32; 4], [1.0, 0.0, 0.0, 0.0], b.x[0]);
        for f in boundary_faces(&b.mesh.tets) {
            let [a, bb, c] = f.map(|i| b.x[i as usize]);
            let (q, l) = closest_on_triangle(point, &a, &bb, &c);
            let d = (q - point).norm_squared();
            if d < best.0 {
                best = (d, [f[0], f[1], f[2], f[0]], [l[0], l[1], l[2], 0.0], q);
            }
        }
        Ok((best.1, best.2, best.3))
    }

    /// Before a world step from `t0`: attaches the scripted grabs whose start has come,
    /// releases those whose release has, and sets each grab's target for the step's end.
    pub(super) fn begin_interaction(&mut self, t0: f64) {
        let dt = self.dt;
        let t1 = t0 + dt;
        let slack = TIME_SLACK * dt;
        let due: Vec<usize> = (0..self.interaction.pending.len())
            .filter(|&i| self.interaction.pending[i].1.start <= t0 + slack)
            .collect();
        for &i in due.iter().rev() {
            let (id, s) = self.interaction.pending.remove(i);
            // Checked when scheduled: the body exists, the settings and point are valid.
            if let Ok((vertices, w, at)) = self.nearest_surface_point(s.body, &s.point, &s.settings)
            {
                let path = s.path.starting_at(t0, at);
                self.attach(
                    id,
                    s.body,
                    vertices,
                    w,
                    at,
                    s.settings,
                    Some((path, s.release)),
                );
            }
        }
        self.interaction
            .grabs
            .retain(|g| !matches!(g.script, Some((_, Some(r))) if r <= t0 + slack));
        // `start_target` is where the last step left the target (a move since then is the
        // target of this step's end).
        for g in &mut self.interaction.grabs {
            if let Some((path, _)) = &g.script {
                g.target = path.at(t1);
            }
        }
        self.interaction.t0 = t0;
        self.interaction.dt = dt;
        self.interaction.links.begin(&self.bodies, t0);
    }

    /// After a world step: each grab's force on its body at the step's end.
    pub(super) fn end_interaction(&mut self) {
        let (t0, dt) = (self.interaction.t0, self.interaction.dt);
        for g in &mut self.interaction.grabs {
            let body = &self.bodies[g.body];
            g.force = g.spring(t0, dt, t0 + dt).force(&body.x, &body.v);
            g.start_target = g.target;
        }
        self.interaction.links.end(&self.bodies);
        // External forces act for one step.
        for input in &mut self.inputs {
            if input.has_external {
                input.external.fill(Vector3::zeros());
                input.has_external = false;
            }
        }
    }
}
