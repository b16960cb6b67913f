//! Springs between two points of bodies (Liesenfeld & Stolfi 1997 §3.1's constraint springs and
//! linkages): a point of a body is a vertex or a barycentric point of a tet, the two ends in
//! one body or in two, with a rest length `L`, stiffness `k` and damping `d`. Force on end `a`
//! at positions `P_a`, `P_b` and velocities `V_a`, `V_b`:
//!
//! `f_a = −k (l − L) u + d (V_b − V_a)`, `u = (P_a − P_b)/l`, `l = |P_a − P_b|`; `f_b = −f_a`,
//!
//! with energy `½ k (l − L)²` (the damping acts on the whole relative velocity, as a grab's).
//!
//! How they enter the step: as grab springs do ([`super::interaction`]), each end reaches its
//! body's integrator as a [`PointSpring`] in the step inputs, so its stiffness `k` and damping
//! `d` are in that body's implicit solve. Each end's target is where the spring would be at
//! rest given the other end: `p_a(t) = P_b⁰ + (t − t₀) V_b⁰ + L u⁰`, with the other end's
//! position and velocity and the direction `u⁰` taken at the world step's start `t₀` (the other
//! end moving on with its start velocity), and `ṗ_a = V_b⁰`. At the step's start this is the
//! force above. That is the target at the step's end, where an implicit scheme takes its
//! forces; a scheme that steps explicitly from the start (symplectic Euler, Newmark, RKF45)
//! gets it at the start, `t = t₀`: with one substep per world step both ends then take
//! exactly opposite forces at the start state (with more substeps the other end stays where
//! it was at `t₀` through the world step, a lag of up to `h V`; see
//! [`crate::time::Integrator::explicit`]). The two bodies (or the two ends of one body, whose
//! vertices need not share a block of its pattern) are solved each with the other end lagged:
//! the stiffness in the solve is `k I` (the direction's rotation over a step and the coupling
//! between the ends are left out), so in an implicit step the forces on the two ends are
//! opposite only to first order in the step (the momenta the two bodies gain differ by 3·10⁻⁴
//! of either in `tests/links.rs`' set-up at 1 ms). Every world step these start-of-step data
//! are taken anew.
//!
//! The coupled IPC contact step takes them the same way: each end is a point spring in its
//! body's step inputs there too, with the other end lagged (`World::attempt_ipc`), so a spring
//! is inside the step's minimization (`scenes/snapping_torus_platform.toml` ties two cylinders
//! to a dynamic platform with them).

use super::{World, WorldError};
use crate::body::Body;
pub use crate::constraint::BodyPoint;
use crate::time::PointSpring;
use nalgebra::Vector3;

/// Names a spring between two body points of a [`World`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LinkId(pub u64);

/// A spring end is an exact constraint's [`BodyPoint`] (one vertex, or a tet's four with
/// barycentric weights); its position and velocity in `bodies`.
fn point_state(p: &BodyPoint, bodies: &[Body]) -> (Vector3<f64>, Vector3<f64>) {
    let b = &bodies[p.body];
    (p.eval(&b.x), p.eval(&b.v))
}

/// A spring between two body points (see the module notes).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LinkSpring {
    pub a: BodyPoint,
    pub b: BodyPoint,
    /// `L` (m), ≥ 0.
    pub rest_length: f64,
    /// `k` (N/m), above 0.
    pub stiffness: f64,
    /// `d` (N s/m), ≥ 0.
    pub damping: f64,
}

impl LinkSpring {
    /// The force on end `a` (end `b` takes its opposite) at the bodies' state.
    pub fn force(&self, bodies: &[Body]) -> Vector3<f64> {
        let ((pa, va), (pb, vb)) = (point_state(&self.a, bodies), point_state(&self.b, bodies));
        let d = pa - pb;
        let l = d.norm();
        let elastic = if l > 0.0 {
            -self.stiffness * (l - self.rest_length) / l * d
        } else {
            Vector3::zeros()
        };
        elastic + self.damping * (vb - va)
    }

    /// The distance `l` between the ends at the bodies' state.
    pub fn length(&self, bodies: &[Body]) -> f64 {
        (point_state(&self.a, bodies).0 - point_state(&self.b, bodies).0).norm()
    }

    /// The elastic energy `½ k (l − L)²` at the bodies' state.
    pub fn energy(&self, bodies: &[Body]) -> f64 {
        0.5 * self.stiffness * (self.length(bodies) - self.rest_length).powi(2)
    }
}

/// A live spring and its start-of-step data.
#[derive(Debug, Clone)]
struct Live {
    id: LinkId,
    spring: LinkSpring,
    /// Ends' positions and velocities at the world step's start, and `L u⁰`.
    start: [(Vector3<f64>, Vector3<f64>); 2],
    rest: Vector3<f64>,
    /// Force on end `a` at the end of the last step.
    force: Vector3<f64>,
}

/// The world's springs between body points.
#[derive(Debug, Clone, Default)]
pub(super) struct Links {
    list: Vec<Live>,
    next: u64,
    t0: f64,
}

impl Links {
    /// Appends the point springs of body `b`'s spring ends at time `t` of the current step.
    pub(super) fn springs_for(&self, b: usize, t: f64, out: &mut Vec<PointSpring>) {
        let s = t - self.t0;
        for l in &self.list {
            let ends = [(&l.spring.a, 1, 1.0), (&l.spring.b, 0, -1.0)];
            for (end, other, sign) in ends {
                if end.body != b {
                    continue;
                }
                let (p, v) = l.start[other];
                out.push(PointSpring {
                    vertices: end.vertices,
                    w: end.w,
                    target: p + s * v + sign * l.rest,
                    target_velocity: v,
                    stiffness: l.spring.stiffness,
                    damping: l.spring.damping,
                });
            }
        }
    }

    /// Before a world step from `t0`: the ends' start-of-step data.
    pub(super) fn begin(&mut self, bodies: &[Body], t0: f64) {
        self.t0 = t0;
        for l in &mut self.list {
            let (a, b) = (
                point_state(&l.spring.a, bodies),
                point_state(&l.spring.b, bodies),
            );
            let d = a.0 - b.0;
            let n = d.norm();
            l.rest = if n > 0.0 {
                l.spring.rest_length / n * d
            } else {
                Vector3::zeros()
            };
            l.start = [a, b];
        }
    }

    /// After a world step: each spring's force on its end `a`.
    pub(super) fn end(&mut self, bodies: &[Body]) {
        for l in &mut self.list {
            l.force = l.spring.force(bodies);
        }
    }
}

/// Why a spring between body points was refused.
fn setting(key: &'static str, value: f64, reason: &'static str) -> WorldError {
    WorldError::Link(format!("{key} = {value}: {reason}"))
}

impl World {
    /// Adds a spring between two body points (see the module notes); it acts from the next
    /// step. Refuses bodies or vertices that do not exist, weights that are not finite or do
    /// not sum to 1, a point whose vertices share no tet, and impossible settings. With the
    /// coupled IPC contact step each end is a point spring of the coupled solve, its other
    /// end lagged as with the bodies' own solves (the step's inputs, `attempt_ipc`).
    pub fn add_spring(&mut self, spring: LinkSpring) -> Result<LinkId, WorldError> {
        for (end, p) in [("a", &spring.a), ("b", &spring.b)] {
            self.check_point(end, p)?;
        }
        if !(spring.stiffness > 0.0 && spring.stiffness.is_finite()) {
            return Err(setting(
                "stiffness",
                spring.stiffness,
                "must be a finite number above 0",
            ));
        }
        if !(spring.damping >= 0.0 && spring.damping.is_finite()) {
            return Err(setting(
                "damping",
                spring.damping,
                "must be a finite number ≥ 0",
            ));
        }
        if !(spring.rest_length >= 0.0 && spring.rest_length.is_finite()) {
            return Err(setting(
                "rest_length",
                spring.rest_length,
                "must be a finite number ≥ 0",
            ));
        }
        let links = &mut self.interaction.links;
        links.next += 1;
        let id = LinkId(links.next);
        let zero = (Vector3::zeros(), Vector3::zeros());
        links.list.push(Live {
            id,
            spring,
            start: [zero; 2],
            rest: Vector3::zeros(),
            force: spring.force(&self.bodies),
        });
        Ok(id)
    }

    fn check_point(&self, end: &str, p: &BodyPoint) -> Result<(), WorldError> {
        let body = self.bodies.get(p.body).ok_or(WorldError::NoBody {
            body: p.body,
            n_bodies: self.bodies.len(),
        })?;
        let n = body.n_vertices();
        if let Some(v) = (0..4)
            .filter(|&k| p.w[k] != 0.0)
            .map(|k| p.vertices[k])
            .find(|&v| v as usize >= n)
        {
            return Err(WorldError::Link(format!(
                "{end}: vertex {v} is out of range (body `{}` has {n})",
                body.name
            )));
        }
        let sum: f64 = p.w.iter().sum();
        if !p.w.iter().all(|w| w.is_finite()) || (sum - 1.0).abs() > 1e-9 {
            return Err(WorldError::Link(format!(
                "{end}: weights {:?} must be finite and sum to 1",
                p.w
            )));
        }
        let pattern = &body.elems.pattern;
        let used: Vec<usize> = (0..4)
            .filter(|&k| p.w[k] != 0.0)
            .map(|k| p.vertices[k] as usize)
            .collect();
        if used
            .iter()
            .any(|&i| used.iter().any(|&j| pattern.slot(i, j).is_none()))
        {
            return Err(WorldError::Link(format!(
                "{end}: vertices {used:?} share no tet of body `{}`",
                body.name
            )));
        }
        Ok(())
    }

    /// Removes spring `id`.
    pub fn remove_spring(&mut self, id: LinkId) -> Result<(), WorldError> {
        let list = &mut self.interaction.links.list;
        let i = (list.iter().position(|l| l.id == id))
            .ok_or_else(|| WorldError::Link(format!("no spring {id:?}")))?;
        list.remove(i);
        Ok(())
    }

    /// The force spring `id` exerted on its end `a` at the end of the last step (N); end `b`
    /// took its opposite.
    pub fn spring_force(&self, id: LinkId) -> Option<Vector3<f64>> {
        let list = &self.interaction.links.list;
        list.iter().find(|l| l.id == id).map(|l| l.force)
    }

    /// The live springs between body points.
    pub fn springs(&self) -> impl Iterator<Item = (LinkId, &LinkSpring)> {
        self.interaction
            .links
            .list
            .iter()
            .map(|l| (l.id, &l.spring))
    }

    /// The elastic energy of every spring between body points at the current state (J).
    pub fn springs_energy(&self) -> f64 {
        (self.interaction.links.list.iter())
            .map(|l| l.spring.energy(&self.bodies))
            .sum()
    }
}
