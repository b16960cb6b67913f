//! Exact constraints (Liesenfeld & Stolfi 1997 §3.2–3.3): equations `Φ_r(q, t) = 0` on
//! material points of the bodies, held exactly by constraint forces along their gradients
//! (`G = Nᵀ`, frictionless joints), instead of by springs that let them be violated.
//!
//! Kinds (each on a material point `P(x) = Σ_k w_k x_{v_k}` of a body):
//! - **point**: `P(x) − p(t) = 0` (3 rows) — fixed in space, or dragged along a keyframed path;
//! - **plane**: `n·(P(x) − o) = 0` (1 row) — slides on a plane;
//! - **sphere**: `|P(x) − c| − r = 0` (1 row) — slides on a sphere;
//! - **link**: `P_a(x) − P_b(x) = 0` (3 rows) — a ball joint between two bodies, or between
//!   two points of one body.
//!
//! **How they are held: projection (post-stabilization).** After each integrator step the
//! end state is projected onto the constraint manifold in the metric of the lumped mass `M`:
//! positions by Gauss–Newton, `x ← x + W Nᵀ μ` with `(N W Nᵀ) μ = −Φ(x)` (`W = M⁻¹`, zero on
//! held vertices), repeated until `max |Φ| ≤` [`ExactSettings::tolerance`]; then velocities,
//! `v ← v + W Nᵀ λ` with `(N W Nᵀ) λ = −(N v + ∂Φ/∂t)`, which is eq. 8's
//! `N M⁻¹ G λ = …` of §3.3 taken at the velocity level over one step. The projection is the
//! M-orthogonal one, so it changes no linear momentum except through constraints to the
//! world (a link's impulses on its two points are equal and opposite), and the velocity
//! projection only removes kinetic energy (the position correction, a velocity change along
//! the same constraint gradients, is removed with it up to the change of those gradients
//! within the step). It works unchanged with every integrator, explicit or implicit, because it
//! acts on the step's result; the price is that within a step an implicit integrator does not
//! see the constraint (first order in the step near the constrained points; RKF45 does see it,
//! [`Projector::project_accelerations`]), and that the matrix `N W Nᵀ` is dense `k × k`
//! (k rows; tens of constraints, not thousands). The constraint's force over the step is
//! `Nᵀ λ / h` (reported per constraint).
//!
//! This is the projection variant of drift stabilization (Ascher & Petzold's
//! post-stabilization, Cline & Pai 2003), chosen over Baumgarte's `ḧ + 2αḣ + β²h = 0`
//! because it meets a residual of `1e-10` whatever the step, which Baumgarte's damping of
//! the drift cannot promise.

mod solve;
mod stage;

pub use stage::{StageBodies, StageBody};

use super::{Keyframes, RigidCore};
use nalgebra::{DMatrix, DVector, Vector3};
use thiserror::Error;

/// A material point of a body, `P(x) = Σ_k w_k x_{v_k}` (a vertex, a point of a tet or of a
/// surface triangle). Unused slots have weight 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BodyPoint {
    pub body: usize,
    pub vertices: [u32; 4],
    pub w: [f64; 4],
}

impl BodyPoint {
    /// The vertex `v` of body `body`.
    pub fn vertex(body: usize, v: u32) -> Self {
        Self {
            body,
            vertices: [v; 4],
            w: [1.0, 0.0, 0.0, 0.0],
        }
    }

    /// `Σ w_k y_{v_k}` over `y` (positions or velocities of the point's body).
    pub fn eval(&self, y: &[Vector3<f64>]) -> Vector3<f64> {
        (0..4)
            .filter(|&k| self.w[k] != 0.0)
            .map(|k| self.w[k] * y[self.vertices[k] as usize])
            .sum()
    }
}

/// What an exact constraint holds its point to.
#[derive(Debug, Clone, PartialEq)]
pub enum ExactKind {
    /// `P − p(t) = 0`: one keyframe holds the point fixed in space; more drag it.
    Point { path: Keyframes },
    /// `n·(P − o) = 0` (`n` is normalized when built).
    Plane {
        origin: Vector3<f64>,
        normal: Vector3<f64>,
    },
    /// `|P − c| − r = 0`.
    Sphere { center: Vector3<f64>, radius: f64 },
    /// `P − P_other = 0`.
    Link { other: BodyPoint },
}

/// One exact constraint: its point, its kind, and an optional release time (s).
#[derive(Debug, Clone, PartialEq)]
pub struct ExactConstraint {
    pub point: BodyPoint,
    pub kind: ExactKind,
    pub release: Option<f64>,
}

impl ExactConstraint {
    /// Number of scalar equations.
    pub fn rows(&self) -> usize {
        match self.kind {
            ExactKind::Point { .. } | ExactKind::Link { .. } => 3,
            ExactKind::Plane { .. } | ExactKind::Sphere { .. } => 1,
        }
    }

    /// The points it involves (one, or two for a link).
    pub fn points(&self) -> impl Iterator<Item = &BodyPoint> {
        let other = match &self.kind {
            ExactKind::Link { other } => Some(other),
            _ => None,
        };
        std::iter::once(&self.point).chain(other)
    }
}

/// Settings of the projection.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ExactSettings {
    /// Positions are projected until every `|Φ_r| ≤ tolerance` (m).
    pub tolerance: f64,
    /// At most this many Gauss–Newton iterations per step.
    pub max_iterations: usize,
    /// Carry each constraint on dynamic rigid cores into the next step as a load (its force
    /// over the last step), so that an implicit step moves the core as the constraint drives
    /// it and the projection only corrects the force's change (the world's `carried.rs`).
    /// Off by default: a lagged force is out of phase with fast skin vibration and can pump
    /// energy into it (a thrown core on a hinge diverged within two steps of it being carried).
    pub carry_core_forces: bool,
}

impl Default for ExactSettings {
    fn default() -> Self {
        Self {
            tolerance: 1e-11,
            max_iterations: 20,
            carry_core_forces: false,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum ExactError {
    #[error("there is no body {body} (the world has {n_bodies})")]
    NoBody { body: usize, n_bodies: usize },
    #[error("vertex {vertex} is out of range (body {body} has {n_vertices})")]
    Vertex {
        body: usize,
        vertex: u32,
        n_vertices: usize,
    },
    #[error("weights must be finite and sum to 1")]
    Weights,
    #[error("{0}: must be finite")]
    NonFinite(&'static str),
    #[error("plane normal has zero length")]
    Normal,
    #[error("sphere radius = {0}: must be a finite number above 0")]
    Radius(f64),
    #[error("a link joins a point to itself")]
    SelfLink,
    #[error("the constraints cannot be met together: a constraint acts only on held (or massless) vertices")]
    Singular,
    #[error("the constraints could not be met: residual {residual:.3e} m after {iterations} Gauss–Newton iterations of the position projection (tolerance {tolerance:.1e} m); constraints that contradict each other (two points of one rigid core held farther apart than they are, two targets for one point) end here")]
    Unconverged {
        residual: f64,
        iterations: usize,
        tolerance: f64,
    },
}

/// One scalar row `Φ_r`'s gradient: `g · P_a − g · P_b` (`b` only for links).
#[derive(Debug, Clone, Copy)]
struct Row {
    a: BodyPoint,
    b: Option<BodyPoint>,
    g: Vector3<f64>,
    /// Which constraint (index into the active list) the row belongs to.
    owner: usize,
}

impl Row {
    /// The row's terms: (body, vertex, coefficient vector).
    fn terms(&self) -> impl Iterator<Item = (usize, u32, Vector3<f64>)> {
        let g = self.g;
        let side = move |p: BodyPoint, s: f64| {
            (0..4)
                .filter(move |&k| p.w[k] != 0.0)
                .map(move |k| (p.body, p.vertices[k], s * p.w[k] * g))
        };
        side(self.a, 1.0).chain(self.b.into_iter().flat_map(move |b| side(b, -1.0)))
    }
}

/// What the projection needs of one body: positions, velocities, inverse lumped masses (0 on
/// held vertices).
pub struct ProjectedBody<'a> {
    pub x: &'a mut [Vector3<f64>],
    pub v: &'a mut [Vector3<f64>],
    pub inv_mass: &'a [f64],
}

/// What the projection reads and moves, by body index: positions, velocities, and inverse
/// lumped masses (0 on held vertices). The world implements it over its bodies directly, so a
/// step builds no list of views.
pub trait ProjectedBodies {
    fn x(&self, b: usize) -> &[Vector3<f64>];
    fn v(&self, b: usize) -> &[Vector3<f64>];
    fn inv_mass(&self, b: usize) -> &[f64];
    /// Positions and velocities of body `b`, to be moved.
    fn state_mut(&mut self, b: usize) -> (&mut [Vector3<f64>], &mut [Vector3<f64>]);
    /// The dynamic rigid core (its index and itself) that vertex `v` of body `b` moves with,
    /// if any: its mobility replaces the vertex's own `1/m` (see [`super::rigid`]). None by
    /// default.
    fn core_of(&self, _b: usize, _v: u32) -> Option<(usize, &RigidCore)> {
        None
    }
    /// Moves core `k` by the impulse `dp` and angular impulse `dl` ([`RigidCore::kick`]).
    fn kick_core(
        &mut self,
        _k: usize,
        _dp: Vector3<f64>,
        _dl: Vector3<f64>,
        _positions: Option<f64>,
    ) {
    }
}

impl ProjectedBodies for [ProjectedBody<'_>] {
    fn x(&self, b: usize) -> &[Vector3<f64>] {
        self[b].x
    }
    fn v(&self, b: usize) -> &[Vector3<f64>] {
        self[b].v
    }
    fn inv_mass(&self, b: usize) -> &[f64] {
        self[b].inv_mass
    }
    fn state_mut(&mut self, b: usize) -> (&mut [Vector3<f64>], &mut [Vector3<f64>]) {
        let body = &mut self[b];
        (&mut *body.x, &mut *body.v)
    }
}

/// The projection's scratch (rows, the dense `N W Nᵀ`, right-hand sides), kept between
/// steps so a step allocates nothing once the number of rows stops growing.
#[derive(Debug, Default)]
pub struct Projector {
    rows: Vec<Row>,
    a: DMatrix<f64>,
    rhs: DVector<f64>,
    /// Per touched rigid core: its index, `Δp` and `ΔL` (about its centre of mass).
    kicks: Vec<(usize, Vector3<f64>, Vector3<f64>)>,
}

/// What a projection did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Projection {
    /// `max_r |Φ_r|` after the position projection (m).
    pub residual: f64,
    /// Gauss–Newton iterations.
    pub iterations: usize,
}

/// `Φ` of one constraint at the bodies' positions, into `out` (`c.rows()` values).
fn constraint_values(
    c: &ExactConstraint,
    bodies: &(impl ProjectedBodies + ?Sized),
    t: f64,
    out: &mut [f64],
) {
    let p = c.point.eval(bodies.x(c.point.body));
    match &c.kind {
        ExactKind::Point { path } => out.copy_from_slice((p - path.at(t)).as_slice()),
        ExactKind::Plane { origin, normal } => out[0] = normal.dot(&(p - origin)),
        ExactKind::Sphere { center, radius } => out[0] = (p - center).norm() - radius,
        ExactKind::Link { other } => {
            out.copy_from_slice((p - other.eval(bodies.x(other.body))).as_slice())
        }
    }
}

impl Projector {
    /// Projects `bodies` onto the constraints `active` (with `t` the step's end, `h` its
    /// length) and writes each constraint's force over the step, `Nᵀλ/h` on its first point,
    /// into `forces` (same order as `active`).
    pub fn project(
        &mut self,
        active: &[ExactConstraint],
        bodies: &mut (impl ProjectedBodies + ?Sized),
        t: f64,
        h: f64,
        settings: &ExactSettings,
        forces: &mut [Vector3<f64>],
    ) -> Result<Projection, ExactError> {
        forces.iter_mut().for_each(|f| *f = Vector3::zeros());
        let h_inv = 1.0 / h;
        let k: usize = active.iter().map(|c| c.rows()).sum();
        if k == 0 {
            return Ok(Projection::default());
        }
        if self.a.nrows() != k {
            self.a = DMatrix::zeros(k, k);
            self.rhs = DVector::zeros(k);
        }
        // Positions: Gauss–Newton on Φ(x) = 0 in the metric W.
        let mut iterations = 0;
        let residual = loop {
            let residual = self.residuals(active, bodies, t);
            if residual <= settings.tolerance {
                break residual;
            }
            if iterations == settings.max_iterations {
                return Err(ExactError::Unconverged {
                    residual,
                    iterations,
                    tolerance: settings.tolerance,
                });
            }
            // Solved as a velocity change: h W Nᵀ μ = −Φ to first order.
            self.rhs.scale_mut(-1.0 / h);
            self.build_rows(active, bodies);
            self.solve(bodies)?;
            self.apply(bodies, Some(h));
            self.add_forces(h_inv, forces);
            iterations += 1;
        };
        // Velocities: N v + ∂Φ/∂t = 0 at the projected positions.
        self.build_rows(active, bodies);
        self.velocity_rhs(active, bodies, t, h);
        self.solve(bodies)?;
        self.apply(bodies, None);
        self.add_forces(h_inv, forces);
        Ok(Projection {
            residual,
            iterations,
        })
    }

    /// `forces[owner] += λ_r g_r · scale` (the last solve's multipliers as forces on the
    /// constraints' first points: after [`project_accelerations`](Self::project_accelerations)
    /// `λ_r g_r` is the stage's constraint force).
    pub fn add_forces(&self, scale: f64, forces: &mut [Vector3<f64>]) {
        for (r, row) in self.rows.iter().enumerate() {
            forces[row.owner] += self.rhs[r] * row.g * scale;
        }
    }

    /// Writes `Φ(x)` into `rhs` and returns `max |Φ_r|`.
    fn residuals(
        &mut self,
        active: &[ExactConstraint],
        bodies: &(impl ProjectedBodies + ?Sized),
        t: f64,
    ) -> f64 {
        let mut r = 0;
        for c in active {
            constraint_values(c, bodies, t, &mut self.rhs.as_mut_slice()[r..r + c.rows()]);
            r += c.rows();
        }
        self.rhs.amax()
    }

    /// `max_r |Φ_r|` of `active` at the bodies' positions now (the state may have moved since
    /// the last projection, as the coupled IPC step's feasibility cut moves it).
    pub fn residual_now(
        active: &[ExactConstraint],
        bodies: &(impl ProjectedBodies + ?Sized),
        t: f64,
    ) -> f64 {
        let mut out = [0.0; 3];
        let mut worst: f64 = 0.0;
        for c in active {
            let rows = &mut out[..c.rows()];
            constraint_values(c, bodies, t, rows);
            worst = rows.iter().fold(worst, |w, r| w.max(r.abs()));
        }
        worst
    }

    /// The rows' gradients at the current positions.
    fn build_rows(&mut self, active: &[ExactConstraint], bodies: &(impl ProjectedBodies + ?Sized)) {
        self.rows.clear();
        for (owner, c) in active.iter().enumerate() {
            let a = c.point;
            let row = |g, b| Row { a, b, g, owner };
            match &c.kind {
                ExactKind::Point { .. } => {
                    self.rows
                        .extend((0..3).map(|i| row(Vector3::ith(i, 1.0), None)));
                }
                ExactKind::Link { other } => {
                    self.rows
                        .extend((0..3).map(|i| row(Vector3::ith(i, 1.0), Some(*other))));
                }
                ExactKind::Plane { normal, .. } => self.rows.push(row(*normal, None)),
                ExactKind::Sphere { center, .. } => {
                    let d = a.eval(bodies.x(a.body)) - center;
                    let n = d.norm();
                    // At the centre every direction is a gradient; any one will do.
                    let g = if n > 0.0 { d / n } else { Vector3::x() };
                    self.rows.push(row(g, None));
                }
            }
        }
    }

    /// `rhs = −(N v + ∂Φ/∂t)`, with a path's `∂Φ/∂t = −ṗ` its mean velocity over the step.
    fn velocity_rhs(
        &mut self,
        active: &[ExactConstraint],
        bodies: &(impl ProjectedBodies + ?Sized),
        t: f64,
        h: f64,
    ) {
        for (r, row) in self.rows.iter().enumerate() {
            let mut nv = 0.0;
            for (b, v, coeff) in row.terms() {
                nv += coeff.dot(&bodies.v(b)[v as usize]);
            }
            if let ExactKind::Point { path } = &active[row.owner].kind {
                nv -= row.g.dot(&((path.at(t) - path.at(t - h)) / h));
            }
            self.rhs[r] = -nv;
        }
    }

    /// `v += W Nᵀ rhs`, and with `positions = Some(h)` also `x += h W Nᵀ rhs` (a position
    /// correction is a velocity change over the step, `x₁ = x₀ + h v₁`, so no energy is
    /// stored in a displacement the velocities do not know of). On a dynamic rigid core the
    /// impulses are summed into the core's `(Δp, ΔL)` first (arms at the positions before
    /// the change) and the core then moves as one ([`RigidCore::kick`]).
    fn apply(&mut self, bodies: &mut (impl ProjectedBodies + ?Sized), positions: Option<f64>) {
        self.kicks.clear();
        for (r, row) in self.rows.iter().enumerate() {
            let lambda = self.rhs[r];
            for (b, v, coeff) in row.terms() {
                let j = lambda * coeff;
                if let Some((k, core)) = bodies.core_of(b, v) {
                    let arm = bodies.x(b)[v as usize] - core.center();
                    match self.kicks.iter_mut().find(|(c, ..)| *c == k) {
                        Some((_, dp, dl)) => {
                            *dp += j;
                            *dl += arm.cross(&j);
                        }
                        None => self.kicks.push((k, j, arm.cross(&j))),
                    }
                    continue;
                }
                let dv = bodies.inv_mass(b)[v as usize] * j;
                let (x, vel) = bodies.state_mut(b);
                vel[v as usize] += dv;
                if let Some(h) = positions {
                    x[v as usize] += h * dv;
                }
            }
        }
        for &(k, dp, dl) in &self.kicks {
            bodies.kick_core(k, dp, dl, positions);
        }
    }
}
