//! Rigid cores (Müller et al. 2002 §4.3–4.4: the bunny's skull, the dog's bones): a set of a
//! body's vertices — those of the tets tagged as bone — that moves as one rigid body inside
//! the soft skin.
//!
//! A **kinematic** core is a set of held vertices with a rigid prescribed motion (a rotation
//! about an axis, a translation path): the existing held-vertex machinery
//! ([`super::ConstraintDesc`]) moves it, and the skin follows through the shared vertices.
//! A **dynamic** core ([`RigidCore`]) has the mass and inertia of its vertices' lumped
//! masses and is two-way coupled with the skin: within a step its vertices move with the
//! body's own dynamics (skin forces, gravity, grabs, contact act on them), and after the step
//! the core is projected onto the nearest rigid motion in the mass metric — positions onto
//! `c + R (X − C₀)` with `c` the centre of mass and `R` the polar rotation of
//! `A = Σ m (x − c)(X − C₀)ᵀ` (Müller et al. 2005's shape matching, here a projection with
//! the lumped mass as the metric), velocities onto `V + ω × r` with `V = P / M` and
//! `ω = I⁻¹ L` — which keeps the core's linear momentum exactly and its angular momentum
//! about `c` (taken at the projected positions). The core's tets end every step at their rest
//! shape, to round-off.
//!
//! **Exact constraints on a core** (Liesenfeld & Stolfi §3.2–3.3 on Müller's bone): after
//! this projection the core is a rigid body with 6 dofs `(c, R)` and velocity `(V, ω)`, and
//! the exact-constraint projection ([`super::exact`]) moves it as one: an impulse `j` at a
//! core point with arm `r = x − c` changes `V` by `j / M` and `ω` by `I⁻¹ (r × j)`, so in
//! the projection's matrix `N W Nᵀ` a core vertex's `1/m` is replaced by the core's mobility
//! `jᵀ_a (1/M) j_b + (r_a × j_a)ᵀ I⁻¹ (r_b × j_b)` ([`RigidCore::mobility`]) and positions
//! follow as a finite rigid motion, `c += h ΔV`, `R ← exp(h Δω) R` ([`RigidCore::kick`]).
//! A point constraint then removes 3 of the 6 dofs (a pendulum about the point), two point
//! constraints on an axis remove 5 (a hinge; their 6 rows are redundant by one, which the
//! projection's solve allows).

use crate::fem::polar;
use nalgebra::{Matrix3, Rotation3, Vector3};
use thiserror::Error;

#[derive(Debug, Clone, PartialEq, Error)]
pub enum RigidError {
    #[error("a rigid core needs at least 3 vertices not on one line (got {0} vertices)")]
    Degenerate(usize),
    #[error("vertex {vertex} is out of range (the body has {n_vertices})")]
    Vertex { vertex: u32, n_vertices: usize },
    #[error("vertex {0} of a dynamic rigid core is held (fixed or moved): hold the whole core as a kinematic one instead")]
    Held(u32),
    #[error("vertex {0} of a dynamic rigid core has no mass")]
    Massless(u32),
    #[error("vertex {vertex} is already in dynamic rigid core {core} of this world: cores must not share vertices")]
    Shared { vertex: u32, core: usize },
}

/// A dynamic rigid core (see the module notes).
#[derive(Debug, Clone, PartialEq)]
pub struct RigidCore {
    vertices: Vec<u32>,
    /// `m_i` and `X_i − C₀` (rest positions about the rest centre of mass).
    mass: Vec<f64>,
    arm: Vec<Vector3<f64>>,
    total: f64,
    /// `I₀⁻¹`: the inverse inertia tensor of the rest pose about `C₀`.
    inv_inertia_rest: Matrix3<f64>,
    /// Pose after the last projection: centre of mass and rotation from the rest pose.
    center: Vector3<f64>,
    rotation: Matrix3<f64>,
    /// Rigid velocity after the last projection: `V` and `ω` about `center`.
    velocity: Vector3<f64>,
    omega: Vector3<f64>,
}

impl RigidCore {
    /// The core of `vertices` (sorted and deduplicated here) with rest positions `rest`,
    /// lumped masses `lumped` and held flags `held`.
    pub fn new(
        mut vertices: Vec<u32>,
        rest: &[Vector3<f64>],
        lumped: &[f64],
        held: &[bool],
    ) -> Result<Self, RigidError> {
        vertices.sort_unstable();
        vertices.dedup();
        let n = rest.len();
        for &v in &vertices {
            if v as usize >= n {
                return Err(RigidError::Vertex {
                    vertex: v,
                    n_vertices: n,
                });
            }
            if held[v as usize] {
                return Err(RigidError::Held(v));
            }
            if lumped[v as usize] <= 0.0 {
                return Err(RigidError::Massless(v));
            }
        }
        let mass: Vec<f64> = vertices.iter().map(|&v| lumped[v as usize]).collect();
        let total: f64 = mass.iter().sum();
        let c0: Vector3<f64> = (vertices.iter().zip(&mass))
            .map(|(&v, &m)| m * rest[v as usize])
            .sum::<Vector3<f64>>()
            / total.max(f64::MIN_POSITIVE);
        let arm: Vec<Vector3<f64>> = vertices.iter().map(|&v| rest[v as usize] - c0).collect();
        let mut core = Self {
            vertices,
            mass,
            arm,
            total,
            inv_inertia_rest: Matrix3::zeros(),
            center: c0,
            rotation: Matrix3::identity(),
            velocity: Vector3::zeros(),
            omega: Vector3::zeros(),
        };
        // Not on one line: the inertia tensor is invertible.
        let scale = core
            .arm
            .iter()
            .map(|r| r.norm_squared())
            .fold(0.0, f64::max);
        let inertia = core.inertia(&core.arm);
        if core.vertices.len() < 3
            || inertia.determinant().is_nan()
            || inertia.determinant() <= 1e-12 * (core.total * scale).powi(3)
        {
            return Err(RigidError::Degenerate(core.vertices.len()));
        }
        core.inv_inertia_rest = inertia
            .try_inverse()
            .ok_or(RigidError::Degenerate(core.vertices.len()))?;
        Ok(core)
    }

    /// The core's vertices (sorted).
    pub fn vertices(&self) -> &[u32] {
        &self.vertices
    }

    /// Total mass (kg).
    pub fn mass(&self) -> f64 {
        self.total
    }

    /// Centre of mass and rotation (from the rest pose) after the last projection.
    pub fn pose(&self) -> (Vector3<f64>, Matrix3<f64>) {
        (self.center, self.rotation)
    }

    /// Linear and angular velocity `(V, ω)` after the last projection.
    pub fn velocity(&self) -> (Vector3<f64>, Vector3<f64>) {
        (self.velocity, self.omega)
    }

    /// `I⁻¹ = R I₀⁻¹ Rᵀ`: the inverse inertia about the centre of mass in the current pose.
    pub fn inverse_inertia(&self) -> Matrix3<f64> {
        self.rotation * self.inv_inertia_rest * self.rotation.transpose()
    }

    /// The current centre of mass.
    pub fn center(&self) -> Vector3<f64> {
        self.center
    }

    /// `j_aᵀ Δv_b`: how much an impulse `j_b` at arm `r_b` moves a core point at arm `r_a`
    /// along `j_a`, `j_a·j_b / M + (r_a × j_a)ᵀ I⁻¹ (r_b × j_b)` (arms from the centre of
    /// mass; `inv_inertia` from [`inverse_inertia`](Self::inverse_inertia)). The rigid
    /// counterpart of a free vertex's `j_a·j_b / m` in the constraint projection's `N W Nᵀ`
    /// (see the module notes).
    pub fn mobility(
        &self,
        inv_inertia: &Matrix3<f64>,
        (r_a, j_a): (Vector3<f64>, Vector3<f64>),
        (r_b, j_b): (Vector3<f64>, Vector3<f64>),
    ) -> f64 {
        j_a.dot(&j_b) / self.total + r_a.cross(&j_a).dot(&(inv_inertia * r_b.cross(&j_b)))
    }

    /// Applies a total impulse `dp` and angular impulse `dl` (about the centre of mass) to the
    /// core: `V += dp / M`, `ω += I⁻¹ dl`; with `positions = Some(h)` the change also moves
    /// the core over the step as a finite rigid motion, `c += h ΔV`, `R ← exp(h Δω) R` (the
    /// core stays exactly rigid). Rewrites the core's positions and velocities in `x`, `v`.
    /// Only valid after [`project`](Self::project) in the same step.
    pub fn kick(
        &mut self,
        dp: Vector3<f64>,
        dl: Vector3<f64>,
        positions: Option<f64>,
        x: &mut [Vector3<f64>],
        v: &mut [Vector3<f64>],
    ) {
        let dv = dp / self.total;
        let dw = self.inverse_inertia() * dl;
        self.velocity += dv;
        self.omega += dw;
        if let Some(h) = positions {
            self.center += h * dv;
            self.rotation = Rotation3::new(h * dw).into_inner() * self.rotation;
        }
        for (i, &vertex) in self.vertices.iter().enumerate() {
            let arm = self.rotation * self.arm[i];
            x[vertex as usize] = self.center + arm;
            v[vertex as usize] = self.velocity + self.omega.cross(&arm);
        }
    }

    /// `Σ m (|r|² I − r rᵀ)` for arms `r`.
    fn inertia(&self, arm: &[Vector3<f64>]) -> Matrix3<f64> {
        let mut i = Matrix3::zeros();
        for (m, r) in self.mass.iter().zip(arm) {
            i += *m * (Matrix3::from_diagonal_element(r.norm_squared()) - r * r.transpose());
        }
        i
    }

    /// Projects the core's positions and velocities in `x`, `v` onto a rigid motion (see the
    /// module notes).
    pub fn project(&mut self, x: &mut [Vector3<f64>], v: &mut [Vector3<f64>]) {
        let (m, total) = (&self.mass, self.total);
        let at = |i: usize| self.vertices[i] as usize;
        let c: Vector3<f64> = (0..m.len()).map(|i| m[i] * x[at(i)]).sum::<Vector3<f64>>() / total;
        let p: Vector3<f64> = (0..m.len()).map(|i| m[i] * v[at(i)]).sum();
        let mut a = Matrix3::zeros();
        for i in 0..m.len() {
            a += m[i] * (x[at(i)] - c) * self.arm[i].transpose();
        }
        let r = polar::rotation(&a);
        // Angular momentum about c at the projected positions, and the inertia there.
        let mut l = Vector3::zeros();
        let mut inertia = Matrix3::zeros();
        for i in 0..m.len() {
            let arm = r * self.arm[i];
            l += m[i] * arm.cross(&v[at(i)]);
            inertia +=
                m[i] * (Matrix3::from_diagonal_element(arm.norm_squared()) - arm * arm.transpose());
        }
        let omega = inertia
            .try_inverse()
            .map_or_else(Vector3::zeros, |inv| inv * l);
        let vel = p / total;
        for i in 0..m.len() {
            let arm = r * self.arm[i];
            x[at(i)] = c + arm;
            v[at(i)] = vel + omega.cross(&arm);
        }
        self.center = c;
        self.rotation = r;
        self.velocity = vel;
        self.omega = omega;
    }
}
