//! What a step takes besides the body: the vertices held during the step, springs to points
//! outside the body (contact anchors, grab springs), and external forces.
//!
//! These are inputs of one step, set by the world's phases (contact, interaction) and handed
//! to the integrator explicitly — never written into the [`crate::body::Body`] — in the manner
//! of Vega FEM's `IntegratorBaseSparse` (constrained DOFs and external forces given to the
//! integrator, `SetExternalForces`). [`super::System`] turns them into forces and matrix terms,
//! so every integrator sees them the same way.

use crate::constraint::ExactConstraint;
use crate::linalg::BlockCsr;
use nalgebra::{Matrix3, Vector3};

/// Per-vertex linear springs to fixed anchor points, `f_i = c_i − κ_i x_i`.
///
/// Liesenfeld & Stolfi's contact springs (§7) reach the integrators this way: each vertex's
/// share of a spring with the other vertices' positions lagged at the step start (see
/// [`crate::contact::springs`]), which keeps every body's matrix on its own pattern.
#[derive(Debug, Clone, Default)]
pub struct Anchors {
    /// `κ_i` (N/m); empty when the body has no anchor springs.
    pub kappa: Vec<f64>,
    /// `c_i` (N).
    pub offset: Vec<Vector3<f64>>,
}

impl Anchors {
    /// Zeroed anchors for `n` vertices.
    pub fn zeros(n: usize) -> Self {
        Self {
            kappa: vec![0.0; n],
            offset: vec![Vector3::zeros(); n],
        }
    }

    /// True when the body can have anchor springs (its matrix then changes between steps).
    pub fn enabled(&self) -> bool {
        !self.kappa.is_empty()
    }

    pub fn clear(&mut self) {
        self.kappa.fill(0.0);
        self.offset.fill(Vector3::zeros());
    }

    /// `out += c − κ x`.
    pub fn add_forces(&self, x: &[Vector3<f64>], out: &mut [Vector3<f64>]) {
        for (i, o) in out.iter_mut().enumerate().take(self.kappa.len()) {
            *o += self.offset[i] - self.kappa[i] * x[i];
        }
    }

    /// `A += scale · diag(κ) ⊗ I` (the anchors' stiffness `−∂f/∂x`).
    pub fn add_to(&self, a: &mut BlockCsr, scale: f64) {
        for (i, &k) in self.kappa.iter().enumerate() {
            if k != 0.0 {
                a.values[a.pattern.diag[i] as usize] += Matrix3::from_diagonal_element(scale * k);
            }
        }
    }
}

/// A damped zero-rest-length spring from a point of the body, `P(x) = Σ_k w_k x_{v_k}`, to a
/// target point moving with velocity `target_velocity` (Müller et al. 2002 §4.2: the user's
/// mouse spring). Its force on the body is
/// `f = k (p − P(x)) + d (ṗ − P(v))`, shared as `f_k = w_k f`; its stiffness
/// `−∂f_k/∂x_l = k w_k w_l I` and damping matrix `d w_k w_l I` couple vertices of one tet or
/// one surface triangle, which share blocks of the body's pattern.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PointSpring {
    /// Up to four vertices (unused slots have weight 0).
    pub vertices: [u32; 4],
    /// Barycentric weights (summing to 1 for a point of the body).
    pub w: [f64; 4],
    /// Where the spring pulls the point to, at the step's end.
    pub target: Vector3<f64>,
    /// Velocity of the target over the step.
    pub target_velocity: Vector3<f64>,
    /// `k` (N/m).
    pub stiffness: f64,
    /// `d` (N s/m).
    pub damping: f64,
}

impl PointSpring {
    /// `P = Σ w_k x_{v_k}`.
    pub fn point(&self, x: &[Vector3<f64>]) -> Vector3<f64> {
        (0..4)
            .filter(|&k| self.w[k] != 0.0)
            .map(|k| self.w[k] * x[self.vertices[k] as usize])
            .sum()
    }

    /// The spring's force on the body at `(x, v)` (before it is shared out to the vertices):
    /// `k (p − P(x)) + d (ṗ − P(v))`.
    pub fn force(&self, x: &[Vector3<f64>], v: &[Vector3<f64>]) -> Vector3<f64> {
        self.stiffness * (self.target - self.point(x))
            + self.damping * (self.target_velocity - self.point(v))
    }

    /// `out_k += w_k k (p − P(x))`, the elastic part of the force.
    pub fn add_position_forces(&self, x: &[Vector3<f64>], out: &mut [Vector3<f64>]) {
        let f = self.stiffness * (self.target - self.point(x));
        self.share(f, out);
    }

    /// `out_k += w_k d (ṗ − P(v))`, the damping part of the force.
    pub fn add_velocity_forces(&self, v: &[Vector3<f64>], out: &mut [Vector3<f64>]) {
        let f = self.damping * (self.target_velocity - self.point(v));
        self.share(f, out);
    }

    /// `out_k += w_k d ṗ`: the damping force's constant part, for a scheme that takes
    /// `−d P(v)` through its matrix (linearized backward Euler).
    pub fn add_target_damping(&self, out: &mut [Vector3<f64>]) {
        let f = self.damping * self.target_velocity;
        self.share(f, out);
    }

    fn share(&self, f: Vector3<f64>, out: &mut [Vector3<f64>]) {
        for k in 0..4 {
            if self.w[k] != 0.0 {
                out[self.vertices[k] as usize] += self.w[k] * f;
            }
        }
    }

    /// `A += (ck k + cd d) w wᵀ ⊗ I` (stiffness scaled by `ck`, damping by `cd`). The
    /// vertices must share blocks of `a`'s pattern (one tet or one boundary triangle).
    pub fn add_to(&self, a: &mut BlockCsr, ck: f64, cd: f64) {
        let s = ck * self.stiffness + cd * self.damping;
        if s == 0.0 {
            return;
        }
        for k in 0..4 {
            for l in 0..4 {
                let w = self.w[k] * self.w[l];
                if w == 0.0 {
                    continue;
                }
                let (i, j) = (self.vertices[k] as usize, self.vertices[l] as usize);
                if let Some(slot) = a.pattern.slot(i, j) {
                    a.values[slot] += Matrix3::from_diagonal_element(s * w);
                }
            }
        }
    }
}

/// One step's inputs for one body (see the module notes). Borrowed, so a step allocates
/// nothing to receive them.
#[derive(Debug, Clone, Copy)]
pub struct StepInputs<'a> {
    /// `fixed[i]`: vertex `i` is held during the step (the body's fixed vertices and the
    /// step's holds); its position is set before the step and the step keeps it.
    pub fixed: &'a [bool],
    /// Anchor springs (contact), if any.
    pub anchors: Option<&'a Anchors>,
    /// Point springs (grabs).
    pub springs: &'a [PointSpring],
    /// External forces per vertex for this step, if any.
    pub external: Option<&'a [Vector3<f64>]>,
    /// Exact constraints on this body alone (their points' body index is 0), for
    /// integrators that hold them inside the step (RKF45, at the acceleration level); the
    /// world projects every exact constraint after the step in any case. Empty for a body of
    /// a linked group (RKF45 bodies joined by constraints), whose group holds them.
    pub exact: &'a [ExactConstraint],
    /// Time at the step's start (s).
    pub time: f64,
    /// Held vertices that move over the step with a prescribed velocity from their start
    /// position, for integrators that take them ([`super::Integrator::moves_held_vertices`]);
    /// the others get them already placed at the step's end.
    pub moving: Option<&'a MovingHolds>,
    /// This solve is the same step of the body again, from the same start state and with
    /// the same forces, springs, anchors and loads as its last solve; only the held set
    /// (`fixed`, `moving`) differs (the contact holds' second solves). An integrator may
    /// then keep what it computed from the start state (forces, matrix) instead of
    /// computing it again.
    pub again: bool,
}

/// Vertices with a prescribed velocity over the step (the contact hold), for integrators
/// that linearize at the step's start: they then see the prescribed motion as a boundary
/// condition of their solve, instead of a start state in which these vertices have already
/// moved and their neighbours have not. Vertex `i` with `on[i]` starts the step where it is
/// and
/// - when it is held in [`StepInputs::fixed`], ends it at `x + h velocity[i]`;
/// - otherwise it *slides*: only its velocity along the unit `normal[i]` is prescribed,
///   `n·v⁺ = n·velocity[i]`, and the solve finds the tangential part (an obstacle contact
///   without friction; the caller applies friction after the step).
#[derive(Debug, Clone, Default)]
pub struct MovingHolds {
    pub on: Vec<bool>,
    pub velocity: Vec<Vector3<f64>>,
    pub normal: Vec<Vector3<f64>>,
}

impl MovingHolds {
    /// Nothing moving, for `n` vertices.
    pub fn new(n: usize) -> Self {
        Self {
            on: vec![false; n],
            velocity: vec![Vector3::zeros(); n],
            normal: vec![Vector3::zeros(); n],
        }
    }

    /// The prescribed velocity of vertex `i`, if it moves.
    pub fn of(&self, i: usize) -> Option<Vector3<f64>> {
        self.on
            .get(i)
            .copied()
            .unwrap_or(false)
            .then(|| self.velocity[i])
    }
}

impl<'a> StepInputs<'a> {
    /// Nothing but the held vertices `fixed`.
    pub fn new(fixed: &'a [bool]) -> Self {
        Self {
            fixed,
            anchors: None,
            springs: &[],
            external: None,
            exact: &[],
            time: 0.0,
            moving: None,
            again: false,
        }
    }

    /// The anchors, when they can act.
    pub fn active_anchors(&self) -> Option<&'a Anchors> {
        self.anchors.filter(|a| a.enabled())
    }

    /// True when the inputs add terms that change the matrix from step to step (anchors or
    /// springs).
    pub fn changes_matrix(&self) -> bool {
        self.active_anchors().is_some() || !self.springs.is_empty()
    }

    /// True when the inputs add non-conservative or moving terms (anchors, springs), so an
    /// incremental potential of the step is not known.
    pub fn has_springs(&self) -> bool {
        self.changes_matrix()
    }
}

/// The step inputs of one body, owned (the world keeps one per body and fills it each step).
#[derive(Debug, Clone, Default)]
pub struct BodyInputs {
    /// The body's fixed vertices and the step's holds.
    pub fixed: Vec<bool>,
    pub anchors: Anchors,
    pub springs: Vec<PointSpring>,
    /// External forces per vertex (all zero unless set).
    pub external: Vec<Vector3<f64>>,
    /// True when `external` holds forces for the next step.
    pub has_external: bool,
    /// `external` plus the loads the world carries into the step (the exact constraints'
    /// forces of the last step, see `world/carried.rs`); what the integrator sees as the
    /// external forces while `has_loads`.
    pub loads: Vec<Vector3<f64>>,
    pub has_loads: bool,
    /// Exact constraints on this body alone, re-indexed to body 0 (see
    /// [`StepInputs::exact`]); rebuilt when the world's constraints change.
    pub exact: Vec<ExactConstraint>,
    /// Time at the step's start (s).
    pub time: f64,
    /// Held vertices moving with a prescribed velocity (see [`StepInputs::moving`]).
    pub moving: MovingHolds,
    /// True while some vertex of `moving` is on.
    pub has_moving: bool,
    /// The solve is the same step again (see [`StepInputs::again`]); set by the world's
    /// contact holds.
    pub again: bool,
}

impl BodyInputs {
    /// Inputs for a body of `n` vertices with nothing held.
    pub fn new(n: usize) -> Self {
        Self {
            fixed: vec![false; n],
            anchors: Anchors::default(),
            springs: Vec::new(),
            external: vec![Vector3::zeros(); n],
            has_external: false,
            loads: vec![Vector3::zeros(); n],
            has_loads: false,
            exact: Vec::new(),
            time: 0.0,
            moving: MovingHolds::new(n),
            has_moving: false,
            again: false,
        }
    }

    /// The borrowed view an integrator takes.
    pub fn view(&self) -> StepInputs<'_> {
        StepInputs {
            fixed: &self.fixed,
            anchors: self.anchors.enabled().then_some(&self.anchors),
            springs: &self.springs,
            external: if self.has_loads {
                Some(self.loads.as_slice())
            } else {
                self.has_external.then_some(self.external.as_slice())
            },
            exact: &self.exact,
            time: self.time,
            moving: self.has_moving.then_some(&self.moving),
            again: self.again,
        }
    }
}
