//! The world's exact constraints (Liesenfeld & Stolfi §3.2–3.3; the projection itself is in
//! [`crate::constraint::exact`]): added, released and reported here, projected after the
//! contact phase of every try at a step, so that they have the last word on the state the
//! checks see.

use super::{World, WorldError};
use crate::body::Body;
use crate::constraint::exact::{ProjectedBodies, Projection, Projector};
use crate::constraint::{
    BodyPoint, ExactConstraint, ExactError, ExactKind, ExactSettings, RigidCore,
};
use crate::mesh::Embedding;
use nalgebra::Vector3;

/// Names an exact constraint of a [`World`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ConstraintId(pub u64);

/// The world's exact constraints and the projection's scratch.
#[derive(Debug, Default)]
pub(super) struct Exact {
    ids: Vec<ConstraintId>,
    constraints: Vec<ExactConstraint>,
    /// Each constraint's force on its (first) point over the last step (N).
    forces: Vec<Vector3<f64>>,
    settings: ExactSettings,
    projector: Projector,
    /// Per body, `1/m_i` (0 on held or massless vertices), refreshed per try.
    inv_mass: Vec<Vec<f64>>,
    /// Per body (empty for a body without one), the dynamic rigid core of each vertex
    /// ([`NO_CORE`] outside cores): the projection moves a core vertex with its core.
    core_of: Vec<Vec<u32>>,
    last: Projection,
    next: u64,
    /// Per constraint, the force carried into this world step as a load (its force over the
    /// last step; zero where not carried, see `carried.rs`).
    carried: Vec<Vector3<f64>>,
    /// Per constraint, the world steps begun with it (saturating).
    age: Vec<u32>,
}

impl Exact {
    /// The bodies whose points the live constraints hold (a body once per point).
    pub(super) fn bodies(&self) -> impl Iterator<Item = usize> + '_ {
        (self.constraints.iter()).flat_map(|c| c.points().map(|p| p.body))
    }

    /// The constraints and the forces they carry into this step as loads.
    pub(super) fn carried(&self) -> impl Iterator<Item = (&ExactConstraint, &Vector3<f64>)> {
        self.constraints.iter().zip(&self.carried)
    }

    /// The dynamic rigid core that vertex `v` of body `b` is in, if any.
    pub(super) fn core_of(&self, b: usize, v: u32) -> Option<usize> {
        let k = *self.core_of.get(b)?.get(v as usize)?;
        (k != NO_CORE).then_some(k as usize)
    }
}

/// Marks a vertex outside every dynamic rigid core in `Exact::core_of`.
const NO_CORE: u32 = u32::MAX;

/// `1e-9 dt`: a release within this of a step's end counts as at it.
const TIME_SLACK: f64 = 1e-9;

impl World {
    /// Adds an exact constraint (see [`crate::constraint::exact`]); it is met from the end of
    /// the next step on (a point not on its constraint now is pulled onto it in that step).
    /// A cube hung by the centre of its top face from a fixed point:
    ///
    /// ```
    /// use supple::constraint::{ExactConstraint, ExactKind, Interpolation, Keyframes};
    /// use supple::prelude::*;
    /// let mesh = box_grid(&BoxGrid { cells: [1, 1, 1], cell_size: Vector3::repeat(0.1),
    ///     origin: Vector3::zeros(), split: TetSplit::Five });
    /// let mut world = World::builder().body(BodyDesc::of(mesh)).build()?;
    /// let hook = Vector3::new(0.05, 0.1, 0.05);
    /// let top = world.material_point(0, hook)?;
    /// let id = world.constrain(ExactConstraint {
    ///     point: top,
    ///     kind: ExactKind::Point { path: Keyframes::new(vec![(0.0, hook)], Interpolation::Linear)? },
    ///     release: None,
    /// })?;
    /// for _ in 0..5 {
    ///     world.step()?;
    /// }
    /// assert!((top.eval(&world.bodies[0].x) - hook).norm() < 1e-6, "the point stays");
    /// assert!(world.bodies[0].center_of_mass().y < 0.05, "the cube sags below it");
    /// let pull = world.constraint_force(id).ok_or("a force")?;
    /// assert!(pull.y > 0.0, "the hook holds the weight up: {pull}");
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn constrain(&mut self, c: ExactConstraint) -> Result<ConstraintId, WorldError> {
        let c = self.checked(c).map_err(WorldError::Exact)?;
        let exact = &mut self.exact;
        exact.next += 1;
        let id = ConstraintId(exact.next);
        exact.ids.push(id);
        exact.constraints.push(c);
        exact.forces.push(Vector3::zeros());
        exact.age.push(0);
        self.refresh_step_constraints();
        Ok(id)
    }

    /// The material point of body `body` at rest position `rest` (in the rest tet that holds
    /// it, else the nearest), for building constraints.
    pub fn material_point(&self, body: usize, rest: Vector3<f64>) -> Result<BodyPoint, WorldError> {
        let b = self
            .bodies
            .get(body)
            .ok_or(WorldError::Exact(ExactError::NoBody {
                body,
                n_bodies: self.bodies.len(),
            }))?;
        if !rest.iter().all(|c| c.is_finite()) {
            return Err(WorldError::Exact(ExactError::NonFinite("point")));
        }
        let embedding = Embedding::new(&b.mesh, &[rest])
            .map_err(|_| WorldError::Exact(ExactError::NonFinite("point")))?;
        let tet = b.mesh.tets[embedding.tet(0)];
        Ok(BodyPoint {
            body,
            vertices: tet,
            w: embedding.weights(0),
        })
    }

    /// Removes an exact constraint.
    pub fn release_constraint(&mut self, id: ConstraintId) -> Result<(), WorldError> {
        let exact = &mut self.exact;
        let i =
            (exact.ids.iter().position(|&c| c == id)).ok_or(WorldError::UnknownConstraint(id))?;
        exact.ids.remove(i);
        exact.constraints.remove(i);
        exact.forces.remove(i);
        exact.age.remove(i);
        self.refresh_step_constraints();
        Ok(())
    }

    /// The live exact constraints.
    pub fn exact_constraints(&self) -> impl Iterator<Item = (ConstraintId, &ExactConstraint)> {
        self.exact.ids.iter().copied().zip(&self.exact.constraints)
    }

    /// The force constraint `id` exerted on its (first) point over the last step, `Nᵀλ/h`
    /// (N), RKF45's stage multipliers included (their impulse `h Σ b_s λ_s` over the step's
    /// substeps, `linked.rs`); a link exerts the opposite on its second point.
    pub fn constraint_force(&self, id: ConstraintId) -> Option<Vector3<f64>> {
        let i = self.exact.ids.iter().position(|&c| c == id)?;
        Some(self.exact.forces[i])
    }

    /// `max |Φ_r|` over the exact constraints at the end of the last step (m; 0 without any).
    pub fn constraint_residual(&self) -> f64 {
        self.exact.last.residual
    }

    /// Gauss–Newton iterations of the last step's position projection.
    pub fn constraint_iterations(&self) -> usize {
        self.exact.last.iterations
    }

    /// Replaces the projection's settings.
    pub fn with_exact_settings(mut self, settings: ExactSettings) -> Result<Self, WorldError> {
        if !(settings.tolerance > 0.0 && settings.tolerance.is_finite()) {
            return Err(WorldError::Exact(ExactError::NonFinite("tolerance")));
        }
        self.exact.settings = settings;
        Ok(self)
    }

    /// Drops the constraints released by `t` (before a world step that ends after it).
    pub(super) fn release_due_constraints(&mut self, t: f64) {
        let slack = TIME_SLACK * self.dt;
        let exact = &mut self.exact;
        let n = exact.constraints.len();
        let mut i = 0;
        while i < exact.constraints.len() {
            if exact.constraints[i].release.is_some_and(|r| r <= t + slack) {
                exact.ids.remove(i);
                exact.constraints.remove(i);
                exact.forces.remove(i);
                exact.age.remove(i);
            } else {
                i += 1;
            }
        }
        if exact.constraints.len() != n {
            self.refresh_step_constraints();
        }
    }

    /// Forms the linked groups ([`super::linked`]) and hands each other body's integrator the
    /// exact constraints on that body alone, re-indexed to body 0
    /// ([`crate::time::StepInputs::exact`]); a linked group holds its members' constraints
    /// itself.
    fn refresh_step_constraints(&mut self) {
        self.linked
            .rebuild(&self.exact.constraints, &self.integrators);
        for (b, input) in self.inputs.iter_mut().enumerate() {
            input.exact.clear();
            if self.linked.is_linked(b) {
                continue;
            }
            for c in &self.exact.constraints {
                if c.points().all(|p| p.body == b) {
                    let mut c = c.clone();
                    c.point.body = 0;
                    if let ExactKind::Link { other } = &mut c.kind {
                        other.body = 0;
                    }
                    input.exact.push(c);
                }
            }
        }
    }

    /// The dynamic rigid core that vertex `v` of body `b` is in, if any.
    pub(super) fn core_of_vertex(&self, b: usize, v: u32) -> Option<usize> {
        self.exact.core_of(b, v)
    }

    /// At a world step's start: the force over the last step of each constraint whose points
    /// all lie on dynamic rigid cores becomes the load it carries into this one
    /// (`carried.rs`), once the constraint has been held through a whole step that began on
    /// it (its third step: the first steps' force includes the impulse that brought an
    /// inconsistent start onto the constraint, which is no force to repeat), when
    /// [`ExactSettings::carry_core_forces`] is on. Constraints held in the stages of a linked
    /// RKF45 group carry nothing.
    pub(super) fn carry_constraint_forces(&mut self) {
        let exact = &mut self.exact;
        exact.carried.clear();
        let core_of = &exact.core_of;
        let in_core = |b: usize, v: u32| {
            (core_of.get(b).and_then(|c| c.get(v as usize))).is_some_and(|&k| k != NO_CORE)
        };
        for ((c, f), age) in (exact.constraints.iter().zip(&exact.forces)).zip(&mut exact.age) {
            let on_cores = c.points().all(|p| {
                !self.linked.is_linked(p.body)
                    && (0..4).all(|k| p.w[k] == 0.0 || in_core(p.body, p.vertices[k]))
            });
            let carry = exact.settings.carry_core_forces && on_cores && *age >= 2;
            exact
                .carried
                .push(if carry { *f } else { Vector3::zeros() });
            *age = age.saturating_add(1);
        }
    }

    /// Records that `vertices` of body `b` (of `n` vertices) form dynamic core `k`.
    pub(super) fn mark_core(&mut self, b: usize, n: usize, vertices: &[u32], k: usize) {
        let core_of = &mut self.exact.core_of;
        core_of.resize_with(core_of.len().max(b + 1), Vec::new);
        core_of[b].resize(n, NO_CORE);
        for &v in vertices {
            core_of[b][v as usize] = k as u32;
        }
    }

    /// Projects the bodies onto the exact constraints at `t` after a try of length `h`, the
    /// dynamic rigid cores moving as rigid bodies (their mobility in the projection, see
    /// [`crate::constraint::rigid`]); call it after [`project_rigid_cores`](Self::project_rigid_cores)
    /// so that a constrained core ends the step both rigid and on its constraints.
    /// On failure returns the first constrained body and the reason.
    pub(super) fn project_constraints(&mut self, t: f64, h: f64) -> Result<(), (usize, String)> {
        let exact = &mut self.exact;
        if exact.constraints.is_empty() {
            exact.last = Projection::default();
            return Ok(());
        }
        exact.inv_mass.resize_with(self.bodies.len(), Vec::new);
        for (w, b) in exact.inv_mass.iter_mut().zip(&self.bodies) {
            w.clear();
            w.extend((b.mass.lumped.iter().zip(&b.fixed)).map(|(&m, &held)| {
                if held || m <= 0.0 {
                    0.0
                } else {
                    1.0 / m
                }
            }));
        }
        let mut views = WorldBodies {
            bodies: &mut self.bodies,
            inv_mass: &exact.inv_mass,
            cores: &mut self.rigid,
            core_of: &exact.core_of,
        };
        let result = exact.projector.project(
            &exact.constraints,
            &mut views,
            t,
            h,
            &exact.settings,
            &mut exact.forces,
        );
        match result {
            Ok(p) => {
                exact.last = p;
                // RKF45's linked groups held their constraints in every stage too, and the
                // carried loads acted through the step.
                self.linked.add_stage_forces(h, &mut exact.forces);
                for (f, c) in exact.forces.iter_mut().zip(&exact.carried) {
                    *f += c;
                }
                Ok(())
            }
            Err(e) => Err((exact.constraints[0].point.body, e.to_string())),
        }
    }

    /// Measures the exact constraints' residual at the bodies' positions now (after the
    /// coupled IPC step kept only part of the projection).
    pub(super) fn refresh_constraint_residual(&mut self, t: f64) {
        let exact = &mut self.exact;
        if exact.constraints.is_empty() {
            return;
        }
        let views = WorldBodies {
            bodies: &mut self.bodies,
            inv_mass: &exact.inv_mass,
            cores: &mut self.rigid,
            core_of: &exact.core_of,
        };
        exact.last.residual = Projector::residual_now(&exact.constraints, &views, t);
    }

    /// Validates a constraint against the bodies and normalizes a plane's normal.
    fn checked(&self, mut c: ExactConstraint) -> Result<ExactConstraint, ExactError> {
        for p in c.points() {
            let b = self.bodies.get(p.body).ok_or(ExactError::NoBody {
                body: p.body,
                n_bodies: self.bodies.len(),
            })?;
            let n = b.n_vertices();
            let sum: f64 = p.w.iter().sum();
            if !p.w.iter().all(|w| w.is_finite()) || (sum - 1.0).abs() > 1e-9 {
                return Err(ExactError::Weights);
            }
            for k in 0..4 {
                if p.vertices[k] as usize >= n {
                    return Err(ExactError::Vertex {
                        body: p.body,
                        vertex: p.vertices[k],
                        n_vertices: n,
                    });
                }
            }
        }
        if let Some(r) = c.release {
            if !r.is_finite() {
                return Err(ExactError::NonFinite("release"));
            }
        }
        match &mut c.kind {
            ExactKind::Point { .. } => {}
            ExactKind::Plane { origin, normal } => {
                if !(origin.iter().chain(normal.iter())).all(|v| v.is_finite()) {
                    return Err(ExactError::NonFinite("plane"));
                }
                let n = normal.norm();
                if n.is_nan() || n <= 0.0 {
                    return Err(ExactError::Normal);
                }
                *normal /= n;
            }
            ExactKind::Sphere { center, radius } => {
                if !center.iter().all(|v| v.is_finite()) {
                    return Err(ExactError::NonFinite("sphere centre"));
                }
                if !(*radius > 0.0 && radius.is_finite()) {
                    return Err(ExactError::Radius(*radius));
                }
            }
            ExactKind::Link { other } => {
                if *other == c.point {
                    return Err(ExactError::SelfLink);
                }
            }
        }
        Ok(c)
    }
}

/// The world's bodies as the projection sees them (no per-step list of views).
struct WorldBodies<'a> {
    bodies: &'a mut [Body],
    inv_mass: &'a [Vec<f64>],
    cores: &'a mut [(usize, RigidCore)],
    core_of: &'a [Vec<u32>],
}

impl ProjectedBodies for WorldBodies<'_> {
    fn x(&self, b: usize) -> &[Vector3<f64>] {
        &self.bodies[b].x
    }
    fn v(&self, b: usize) -> &[Vector3<f64>] {
        &self.bodies[b].v
    }
    fn inv_mass(&self, b: usize) -> &[f64] {
        &self.inv_mass[b]
    }
    fn state_mut(&mut self, b: usize) -> (&mut [Vector3<f64>], &mut [Vector3<f64>]) {
        let body = &mut self.bodies[b];
        (&mut body.x, &mut body.v)
    }
    fn core_of(&self, b: usize, v: u32) -> Option<(usize, &RigidCore)> {
        let k = *self.core_of.get(b)?.get(v as usize)?;
        (k != NO_CORE).then(|| (k as usize, &self.cores[k as usize].1))
    }
    fn kick_core(&mut self, k: usize, dp: Vector3<f64>, dl: Vector3<f64>, positions: Option<f64>) {
        let (b, core) = &mut self.cores[k];
        let body = &mut self.bodies[*b];
        core.kick(dp, dl, positions, &mut body.x, &mut body.v);
    }
}
