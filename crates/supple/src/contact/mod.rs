//! Contact: rigid obstacles, broad phase (sweep-and-prune, BVH), continuous collision
//! detection (exact cubic roots and Liesenfeld–Stolfi's Hermite/Bernstein tests), and the
//! responses.
//!
//! With backward Euler (the default integrator) contact is part of the step: the coupled IPC
//! step ([`ipc`], [`Response::Ipc`], the default through [`Response::Auto`]) minimizes all
//! bodies' incremental potential with barrier contact and lagged friction, so no iterate
//! intersects and reactions are equal and opposite.
//!
//! Otherwise (the explicit integrators, BDF, static, or `response = "projection"`),
//! [`Contact`] runs after every integrator step (see [`crate::world::World::step`]): it sees
//! each body's start-of-step state `(x⁰, v⁰)` and the integrator's end state `(x¹, v¹)`,
//! corrects `x¹` and `v¹` (velocity projection against obstacles; projection with impulses or
//! sticky contact springs between deformable surfaces), and leaves the next step a state
//! without interpenetration.

pub mod broad;
pub mod ccd;
mod detect;
pub mod impact_time;
pub mod intersection;
pub mod ipc;
pub mod obstacle;
pub mod path;
mod pipeline;
pub mod projection;
pub mod rounded;
pub mod slide;
pub mod springs;
pub mod surface;
pub mod uncrush;

pub use broad::{Aabb, BroadPhase, BroadPhaseKind, BroadStats};
pub use obstacle::{Obstacle, RigidPath, Shape};
pub use pipeline::{Contact, ContactStats, Inside, PairHit, SkipChecks};
pub use springs::{Anchors, ContactSprings, Spring, VertexRef};
pub use surface::ContactSurface;

use thiserror::Error;

/// Which continuous test decides whether a vertex–face or edge–edge pair met during a step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NarrowPhase {
    /// Linear trajectories `x⁰ → x¹`, roots of the cubic coplanarity condition, then the
    /// distance at each root (no contact between steps is missed).
    #[default]
    Exact,
    /// Liesenfeld & Stolfi eq. 27–31: cubic Hermite interpolation of the indicator
    /// functions from `(x⁰, v⁰, x¹, v¹)`, Bernstein–Bézier sign tests.
    Hermite,
}

/// What happens when two deformable surfaces meet.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Response {
    /// The default: [`Ipc`](Self::Ipc) with these settings when every body of the world
    /// steps with a one-step implicit integrator (backward Euler, full or linearized: the
    /// coupled step is backward Euler), [`Projection`](Self::Projection) otherwise (the
    /// explicit integrators, BDF, static solves, a mix). [`crate::world::World::with_contact`]
    /// resolves it, so a world's contact phase never sees `Auto`
    /// ([`Response::resolve`]).
    Auto(ipc::IpcSettings),
    /// Move the end positions apart along the contact normal (mass-weighted, with
    /// friction) until no pair crosses during the step, with a fail-safe that returns the
    /// involved vertices to their start-of-step positions; velocities follow the
    /// correction. No pair crosses during a step it resolves, but the bodies are solved one
    /// at a time, so reactions are not equal and opposite: fast crashes end interpenetrated
    /// or inverted and stacks gain energy (EXPERIMENTS.md, *Contact as one minimization*).
    /// The response of the explicit integrators.
    Projection,
    /// Liesenfeld & Stolfi §7: sticky zero-rest-length springs added at contact and removed
    /// when they start pulling. `stiffness` (N/m) defaults to `¼ m / dt²` (m the lightest
    /// surface vertex mass; see [`springs`] for why). Does not prevent penetration.
    Springs { stiffness: Option<f64> },
    /// Incremental Potential Contact ([`ipc`]): every body of the world takes one coupled
    /// backward-Euler step, contact a barrier potential and friction a lagged potential in
    /// one minimization, with a CCD-filtered line search (no state is ever intersecting).
    /// Replaces the bodies' own implicit integrators and the obstacle response.
    Ipc(ipc::IpcSettings),
}

impl Default for Response {
    fn default() -> Self {
        Self::Auto(ipc::IpcSettings::default())
    }
}

impl Response {
    /// The response a world uses: [`Auto`](Self::Auto) becomes IPC when
    /// `all_backward_euler` (every body's integrator is a one-step implicit one, see
    /// [`couples`]), projection otherwise; the others stay as they are.
    pub fn resolve(self, all_backward_euler: bool) -> Self {
        match self {
            Self::Auto(ipc) if all_backward_euler => Self::Ipc(ipc),
            Self::Auto(_) => Self::Projection,
            other => other,
        }
    }

    /// The scene name of the response (`"ipc"`, `"projection"`, `"springs"`; `"auto"`
    /// before [`resolve`](Self::resolve)).
    pub fn name(&self) -> &'static str {
        match self {
            Self::Auto(_) => "auto",
            Self::Projection => "projection",
            Self::Springs { .. } => "springs",
            Self::Ipc(_) => "ipc",
        }
    }
}

/// True for the integrators the coupled IPC step can replace: the one-step implicit ones
/// (`backward_euler`, `backward_euler_linearized`), whose step is the backward-Euler step
/// IPC minimizes.
pub fn couples(integrator: &str) -> bool {
    matches!(integrator, "backward_euler" | "backward_euler_linearized")
}

/// Contact settings of a world.
#[derive(Debug, Clone, PartialEq)]
pub struct ContactSettings {
    pub obstacles: Vec<Obstacle>,
    /// Collisions of a body with itself (non-adjacent surface primitives).
    pub self_collision: bool,
    /// Collisions between different bodies.
    pub body_collision: bool,
    pub broad_phase: BroadPhaseKind,
    pub narrow_phase: NarrowPhase,
    pub response: Response,
    /// Coulomb friction between deformable surfaces.
    pub friction: f64,
    /// Separation (m) the projection response leaves between surfaces that met; `None`:
    /// 1 % of the mean surface edge length.
    pub thickness: Option<f64>,
    /// Projection passes before the fail-safe.
    pub max_iterations: usize,
    /// Distance (m) vertices are left above an obstacle's surface after projection.
    pub skin: f64,
    /// With a one-step implicit integrator, a step whose end state touched an obstacle is
    /// solved again with the touching vertices held on their projected velocity (the
    /// approach removed, friction applied; see `Contact::hold_obstacle_contacts`), so the
    /// whole body answers the contact within the step (otherwise only the touching surface
    /// vertices are moved, which at large steps crushes the tets under them).
    pub hold_contacts: bool,
    /// With a one-step integrator that moves held vertices itself (linearized backward
    /// Euler), a step whose surfaces met (body–body or self contact, projection response) is
    /// solved again with the vertices the surface response moved held where it put them, so
    /// the whole body answers the contact within the step (see
    /// `contact/pipeline/surface_hold.rs`); otherwise only those vertices are moved.
    pub hold_surfaces: bool,
}

impl Default for ContactSettings {
    fn default() -> Self {
        Self {
            obstacles: Vec::new(),
            self_collision: false,
            body_collision: true,
            // Sweep-and-prune (Liesenfeld & Stolfi §6.4) swaps endpoints by the hundreds
            // per box on flat, axis-aligned surfaces; the refitted BVH does not
            // (EXPERIMENTS.md), so it is the default.
            broad_phase: BroadPhaseKind::Bvh,
            narrow_phase: NarrowPhase::Exact,
            response: Response::default(),
            friction: 0.0,
            thickness: None,
            max_iterations: 16,
            skin: 0.0,
            hold_contacts: true,
            hold_surfaces: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum ContactError {
    #[error(transparent)]
    Obstacle(#[from] obstacle::ObstacleError),
    #[error("contact.{key} = {value}: {why}")]
    Setting {
        key: &'static str,
        value: f64,
        why: &'static str,
    },
    #[error("two obstacles are named `{0}`: obstacle names must be unique")]
    DuplicateObstacle(String),
}

impl ContactSettings {
    pub fn validate(&self) -> Result<(), ContactError> {
        for (i, o) in self.obstacles.iter().enumerate() {
            o.validate()?;
            if self.obstacles[..i].iter().any(|p| p.name == o.name) {
                return Err(ContactError::DuplicateObstacle(o.name.clone()));
            }
        }
        let finite_nonneg = |key, value: f64| {
            if value >= 0.0 && value.is_finite() {
                Ok(())
            } else {
                Err(ContactError::Setting {
                    key,
                    value,
                    why: "must be a finite number ≥ 0",
                })
            }
        };
        finite_nonneg("friction", self.friction)?;
        finite_nonneg("skin", self.skin)?;
        if let Some(t) = self.thickness {
            if !(t > 0.0 && t.is_finite()) {
                return Err(ContactError::Setting {
                    key: "thickness",
                    value: t,
                    why: "must be a finite number above 0",
                });
            }
        }
        if let Response::Springs { stiffness: Some(k) } = self.response {
            if !(k > 0.0 && k.is_finite()) {
                return Err(ContactError::Setting {
                    key: "spring_stiffness",
                    value: k,
                    why: "must be a finite number above 0",
                });
            }
        }
        if self.max_iterations == 0 {
            return Err(ContactError::Setting {
                key: "max_iterations",
                value: 0.0,
                why: "must be at least 1",
            });
        }
        Ok(())
    }
}
