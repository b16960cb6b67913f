//! Boundary conditions beyond the fixed vertex: per-component constraints (any subset of
//! x/y/z, or the normal of a plane: sliding), prescribed motions (an affine map
//! `x = F X + c`, a rotation, a translation, keyframed displacements or a velocity), each
//! scaled in time by a [`TimeFunction`] and released after an optional time; and the
//! reactions they exert.
//!
//! **How they enter the solvers.** A vertex whose three components are held is a fixed vertex
//! of the existing machinery (`Body::fixed`: PCG filtering, identity rows in Cholesky, `u = 0`
//! in Newton): its position is set to the prescription before the step and the step keeps it.
//! A vertex with one or two held directions, spanned by the unit vectors `n_k` of
//! `C = Σ n_k n_kᵀ`, keeps the free part `P = I − C`: unknowns and residuals are projected,
//! `u ← P u`, `r ← P r`, and the Newton matrix `A` becomes
//! `A' = P A P + d C` (`d > 0` any scale; the diagonal's) — the filtered system of Baraff &
//! Witkin 1998 §5.3 made into a matrix. `A'` is symmetric positive definite when `A` is on
//! the free subspace, and `A' δ = P g` gives `C δ = 0` and `P A P δ = P g` exactly, so both
//! the PCG and the Cholesky factorization solve it unchanged (identity rows in a rotated
//! basis).
//!
//! **Reactions.** At equilibrium the constraint balances the out-of-balance force of the held
//! components: `R_i = −C_i (f_el + M g + f_load)_i`; a region's reaction is `Σ R_i` and its
//! torque about a point `p` is `Σ (x_i − p) × R_i`. In a dynamic step this leaves out the
//! held vertices' inertia (exact for vertices at rest under a lumped mass).

pub mod exact;
mod keyframes;
mod motion;
mod projector;
pub mod rigid;

pub use exact::{BodyPoint, ExactConstraint, ExactError, ExactKind, ExactSettings};
pub use keyframes::{Interpolation, Keyframes};
pub use motion::Motion;
pub use rigid::{RigidCore, RigidError};

use crate::linalg::BlockCsr;
use crate::load::TimeFunction;
use nalgebra::{Matrix3, Vector3};
use projector::held_directions;
use thiserror::Error;

/// Which directions of a vertex a constraint holds.
#[derive(Debug, Clone, PartialEq)]
pub enum Components {
    /// All three (a fixed vertex).
    All,
    /// The chosen coordinate axes `[x, y, z]`.
    Axes([bool; 3]),
    /// The normal of a plane (the vertices slide on the plane).
    Normal(Vector3<f64>),
}

/// One constraint on a set of vertices: which components it holds, where it moves them
/// ([`Motion`]) and when ([`TimeFunction`], `release`). A body takes its constraints with
/// [`BodyDesc::constraint`](crate::body::BodyDesc::constraint); its reactions come from
/// [`Body::reactions`](crate::body::Body::reactions). A bar clamped at one end and pulled
/// 1 mm at the other, in static equilibrium: the pull's reaction balances the clamp's.
///
/// ```
/// use supple::constraint::{Components, ConstraintDesc, Motion};
/// use supple::time::NewtonSettings;
/// use supple::prelude::*;
/// let mesh = box_grid(&BoxGrid { cells: [2, 1, 1], cell_size: Vector3::repeat(0.1),
///     origin: Vector3::zeros(), split: TetSplit::Five });
/// let end: Vec<u32> = (0..mesh.n_vertices() as u32)
///     .filter(|&i| mesh.positions[i as usize].x > 0.2 - 1e-9).collect();
/// let pull = ConstraintDesc {
///     components: Components::Axes([true, false, false]),
///     motion: Motion::Translation(Vector3::new(1e-3, 0.0, 0.0)),
///     ..ConstraintDesc::fixed("pull", end)
/// };
/// let bar = BodyDesc::of(mesh).linear().fix_where(|p| p.x < 1e-9).constraint(pull);
/// let mut world = World::builder().body(bar).no_gravity()
///     .integrator(IntegratorKind::Static { load_steps: 1, newton: NewtonSettings::default() })
///     .build()?;
/// world.step()?;
/// let reactions = world.bodies[0].reactions(&Vector3::zeros());
/// let force = |name: &str| reactions.iter().find(|r| r.name == name).map(|r| r.force.x);
/// let (pull, clamp) = (force("pull").ok_or("pull")?, force("fixed").ok_or("fixed")?);
/// assert!(pull > 0.0, "holding the end stretched takes a pull: {pull}");
/// assert!((pull + clamp).abs() < 1e-6 * pull, "the clamp holds it back: {clamp}");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ConstraintDesc {
    pub name: String,
    pub vertices: Vec<u32>,
    pub components: Components,
    /// Where the held components go (see [`Motion`]).
    pub motion: Motion,
    /// The motion's parameter `s(t)` (ignored by [`Motion::Velocity`], [`Motion::Path`] and
    /// [`Motion::Spline`],
    /// whose parameter is the time).
    pub time: TimeFunction,
    /// After this time the vertices are free (they keep the motion's velocity).
    pub release: Option<f64>,
    /// The point the reaction torque is taken about.
    pub torque_point: Vector3<f64>,
}

impl ConstraintDesc {
    /// Holds `vertices` at their rest positions in all components, never released.
    pub fn fixed(name: impl Into<String>, vertices: Vec<u32>) -> Self {
        Self {
            name: name.into(),
            vertices,
            components: Components::All,
            motion: Motion::Rest,
            time: TimeFunction::One,
            release: None,
            torque_point: Vector3::zeros(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum ConstraintError {
    #[error("constraint `{name}`: holds no vertex")]
    Empty { name: String },
    #[error(
        "constraint `{name}`: vertex {vertex} is out of range (the mesh has {n_vertices} vertices)"
    )]
    VertexOutOfRange {
        name: String,
        vertex: u32,
        n_vertices: usize,
    },
    #[error("constraint `{name}`: {reason}")]
    Invalid { name: String, reason: String },
}

/// The force and torque one constraint exerts on the body.
#[derive(Debug, Clone, PartialEq)]
pub struct Reaction {
    pub name: String,
    pub force: Vector3<f64>,
    /// About the constraint's `torque_point`.
    pub torque: Vector3<f64>,
    pub point: Vector3<f64>,
}

#[derive(Debug)]
struct Entry {
    desc: ConstraintDesc,
    /// `C`: the projector on the held directions.
    held: Matrix3<f64>,
    /// Holds all three components.
    full: bool,
    active: bool,
}

/// Marks "no partial constraint" in [`Constraints::partial_of`].
const NONE: u32 = u32::MAX;

/// A body's constraints, ready to apply; applying them allocates nothing.
#[derive(Debug, Default)]
pub struct Constraints {
    entries: Vec<Entry>,
    /// The body's own fixed vertices (held at rest, never released).
    base_fixed: Vec<bool>,
    /// Partially held vertices and their `(P, C)` (free and held projectors).
    partial: Vec<(u32, Matrix3<f64>, Matrix3<f64>)>,
    partial_of: Vec<u32>,
}

impl Constraints {
    /// Checks `descs` on a mesh of `n_vertices` whose own fixed vertices are `fixed`.
    pub fn new(
        n_vertices: usize,
        fixed: &[bool],
        descs: &[ConstraintDesc],
    ) -> Result<Self, ConstraintError> {
        let mut entries = Vec::with_capacity(descs.len());
        for d in descs {
            let name = d.name.clone();
            if d.vertices.is_empty() {
                return Err(ConstraintError::Empty { name });
            }
            if let Some(&vertex) = d.vertices.iter().find(|&&v| v as usize >= n_vertices) {
                return Err(ConstraintError::VertexOutOfRange {
                    name,
                    vertex,
                    n_vertices,
                });
            }
            let invalid = |reason: String| ConstraintError::Invalid {
                name: d.name.clone(),
                reason,
            };
            d.time.check().map_err(|r| invalid(format!("time: {r}")))?;
            d.motion.check().map_err(invalid)?;
            if d.release.is_some_and(|t| !t.is_finite()) {
                return Err(invalid("release must be a finite time".into()));
            }
            if !d.torque_point.iter().all(|c| c.is_finite()) {
                return Err(invalid("torque_point must be finite".into()));
            }
            let dirs = match &d.components {
                Components::All => vec![Vector3::x(), Vector3::y(), Vector3::z()],
                Components::Axes(a) => {
                    let dirs: Vec<_> = (0..3)
                        .filter(|&c| a[c])
                        .map(|c| Vector3::ith(c, 1.0))
                        .collect();
                    if dirs.is_empty() {
                        return Err(invalid("components: holds no component".into()));
                    }
                    dirs
                }
                Components::Normal(n) => vec![n
                    .try_normalize(0.0)
                    .filter(|n| n.iter().all(|c| c.is_finite()))
                    .ok_or_else(|| {
                        invalid("the plane normal must be finite and not zero".into())
                    })?],
            };
            let (held, rank) = held_directions(&dirs);
            entries.push(Entry {
                desc: d.clone(),
                held,
                full: rank == 3,
                active: false,
            });
        }
        let mut c = Self {
            entries,
            base_fixed: fixed.to_vec(),
            partial: Vec::new(),
            partial_of: vec![NONE; n_vertices],
        };
        c.partial
            .reserve(n_vertices.min(c.entries.iter().map(|e| e.desc.vertices.len()).sum()));
        Ok(c)
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// True when some active constraint holds a vertex in one or two directions only.
    pub fn has_partial(&self) -> bool {
        !self.partial.is_empty()
    }

    /// True when some constraint is ever partial (whatever the time).
    pub fn any_partial(&self) -> bool {
        self.entries.iter().any(|e| !e.full)
    }

    /// True when some constraint has a release time.
    pub fn any_release(&self) -> bool {
        self.entries.iter().any(|e| e.desc.release.is_some())
    }

    /// Activates the constraints not yet released at `t` and sets `fixed` (the body's own
    /// fixed vertices and the fully held ones). A vertex released here (active before, not
    /// now) gets the velocity its motion had, in the directions that were held. Returns true
    /// when the active set changed.
    pub fn set_time(
        &mut self,
        t: f64,
        fixed: &mut [bool],
        rest: &[Vector3<f64>],
        v: &mut [Vector3<f64>],
    ) -> bool {
        let mut changed = false;
        for e in &mut self.entries {
            let active = e.desc.release.is_none_or(|r| t <= r);
            if e.active && !active {
                let r = e.desc.release.unwrap_or(t);
                for &i in &e.desc.vertices {
                    let i = i as usize;
                    let w = e.desc.motion.velocity(&e.desc.time, &rest[i], r);
                    v[i] += e.held * (w - v[i]);
                }
            }
            changed |= e.active != active;
            e.active = active;
        }
        if changed {
            self.rebuild(fixed);
        }
        changed
    }

    /// Recomputes the fixed flags and the partial projectors from the active entries.
    fn rebuild(&mut self, fixed: &mut [bool]) {
        fixed.copy_from_slice(&self.base_fixed);
        for p in &self.partial {
            self.partial_of[p.0 as usize] = NONE;
        }
        self.partial.clear();
        // Union of the held directions per vertex (entries in order; deterministic).
        let mut acc: Vec<(u32, Matrix3<f64>)> = Vec::new();
        for e in self.entries.iter().filter(|e| e.active) {
            for &i in &e.desc.vertices {
                if e.full {
                    fixed[i as usize] = true;
                    continue;
                }
                match self.partial_of[i as usize] {
                    NONE => {
                        self.partial_of[i as usize] = acc.len() as u32;
                        acc.push((i, e.held));
                    }
                    k => acc[k as usize].1 += e.held,
                }
            }
        }
        for (i, _) in &acc {
            self.partial_of[*i as usize] = NONE;
        }
        for (i, sum) in acc {
            if fixed[i as usize] {
                continue;
            }
            let (c, rank) = projector::range_projector(&sum);
            if rank == 3 {
                fixed[i as usize] = true;
            } else {
                self.partial_of[i as usize] = self.partial.len() as u32;
                self.partial.push((i, Matrix3::identity() - c, c));
            }
        }
    }

    /// Moves the held components of the active constraints' vertices to their motion at
    /// time `t`: `x_i ← x_i + C (target_i − x_i)`.
    pub fn place_at(&self, t: f64, rest: &[Vector3<f64>], x: &mut [Vector3<f64>]) {
        self.place_path(Some(t), t, 1.0, rest, x);
    }

    /// Like [`place_at`](Self::place_at) with the motion parameter on the path between the
    /// times `from` and `to`: `p = p(from) + mix (p(to) − p(from))`, `p(from) = 0` (rest)
    /// when `from` is `None` (a static load step).
    pub fn place_path(
        &self,
        from: Option<f64>,
        to: f64,
        mix: f64,
        rest: &[Vector3<f64>],
        x: &mut [Vector3<f64>],
    ) {
        for e in self.entries.iter().filter(|e| e.active) {
            let m = &e.desc.motion;
            let a = from.map_or(0.0, |t| m.parameter(&e.desc.time, t));
            let p = a + mix * (m.parameter(&e.desc.time, to) - a);
            let map = m.map_at(p);
            for &i in &e.desc.vertices {
                let i = i as usize;
                let target = match map {
                    Some((f, c)) => f * rest[i] + c,
                    None => m.target(&rest[i], p),
                };
                x[i] += e.held * (target - x[i]);
            }
        }
    }

    /// True when every motion has the same parameter at `t1` and `t2` (and the same active
    /// set), so a static equilibrium at one holds at the other.
    pub fn same_at(&self, t1: f64, t2: f64) -> bool {
        self.entries.iter().all(|e| {
            let m = &e.desc.motion;
            let active = |t: f64| e.desc.release.is_none_or(|r| t <= r);
            active(t1) == active(t2)
                && m.parameter(&e.desc.time, t1) == m.parameter(&e.desc.time, t2)
        })
    }

    /// Adds partial holds `(vertex, P, C)` for one solve (a Newton fallback holding the
    /// contact's sliding vertices along their normals); vertices that already have a
    /// partial constraint are skipped. Returns how many were added, for
    /// [`pop_temporary`](Self::pop_temporary).
    pub fn push_temporary(
        &mut self,
        items: impl Iterator<Item = (u32, Matrix3<f64>, Matrix3<f64>)>,
    ) -> usize {
        let before = self.partial.len();
        for item in items {
            if self.partial_of.get(item.0 as usize) == Some(&NONE) {
                self.partial.push(item);
            }
        }
        self.partial.len() - before
    }

    /// Removes the last `count` holds added by [`push_temporary`](Self::push_temporary).
    pub fn pop_temporary(&mut self, count: usize) {
        let keep = self.partial.len().saturating_sub(count);
        self.partial.truncate(keep);
    }

    /// `v_i ← P_i v_i` on the partially held vertices (fixed ones are the caller's).
    pub fn project(&self, v: &mut [Vector3<f64>]) {
        for (i, p, _) in &self.partial {
            v[*i as usize] = p * v[*i as usize];
        }
    }

    /// `A ← P A P + d C` on the partially held vertices (see the module notes), `d` the mean
    /// of the diagonal block's diagonal (1 where that is not positive).
    pub fn filter_matrix(&self, a: &mut BlockCsr) {
        filter_partial(a, &self.partial);
    }

    /// The reactions of each constraint (see the module notes) from the total force `f`
    /// (internal + gravity + loads) at positions `x`; the body's own fixed vertices, when
    /// `fixed_name` is given and there are any, as one more entry (torque about the origin).
    pub fn reactions(
        &self,
        f: &[Vector3<f64>],
        x: &[Vector3<f64>],
        fixed_name: Option<&str>,
    ) -> Vec<Reaction> {
        let mut out = Vec::with_capacity(self.entries.len() + 1);
        if let Some(name) = fixed_name.filter(|_| self.base_fixed.iter().any(|&b| b)) {
            let mut r = Reaction {
                name: name.to_string(),
                force: Vector3::zeros(),
                torque: Vector3::zeros(),
                point: Vector3::zeros(),
            };
            for i in (0..f.len()).filter(|&i| self.base_fixed[i]) {
                r.force -= f[i];
                r.torque -= x[i].cross(&f[i]);
            }
            out.push(r);
        }
        for e in &self.entries {
            let p = e.desc.torque_point;
            let mut r = Reaction {
                name: e.desc.name.clone(),
                force: Vector3::zeros(),
                torque: Vector3::zeros(),
                point: p,
            };
            if e.active {
                for &i in &e.desc.vertices {
                    let i = i as usize;
                    let ri = -(e.held * f[i]);
                    r.force += ri;
                    r.torque += (x[i] - p).cross(&ri);
                }
            }
            out.push(r);
        }
        out
    }
}

/// `A ← P A P + d C` on the vertices of `partial` (`(vertex, P, C)`: the free and held
/// projectors, `P + C = I`), `d` the mean of the vertex's diagonal block's diagonal (1 where
/// that is not positive): the held directions are cut out of the system and left with a
/// well-scaled identity, so a solve keeps them at their value in the first guess only if
/// the caller zeroes them there (see [`Constraints::project`]).
pub fn filter_partial(a: &mut BlockCsr, partial: &[(u32, Matrix3<f64>, Matrix3<f64>)]) {
    if partial.is_empty() {
        return;
    }
    let pattern = a.pattern.clone();
    let scale_of = |a: &BlockCsr, i: usize| {
        let d = a.values[pattern.diag[i] as usize].trace() / 3.0;
        if d > 0.0 && d.is_finite() {
            d
        } else {
            1.0
        }
    };
    // Rows first, then columns: P_i A_ij P_j whether one or both ends are partial.
    for (i, p, _) in partial {
        let i = *i as usize;
        for s in pattern.row_ptr[i] as usize..pattern.row_ptr[i + 1] as usize {
            a.values[s] = p * a.values[s];
        }
    }
    for (i, p, _) in partial {
        let i = *i as usize;
        for s in pattern.row_ptr[i] as usize..pattern.row_ptr[i + 1] as usize {
            let j = pattern.cols[s] as usize;
            let t = pattern.slot(j, i).expect("symmetric pattern");
            a.values[t] *= p;
        }
    }
    for (i, _, c) in partial {
        let i = *i as usize;
        let d = scale_of(a, i);
        a.values[pattern.diag[i] as usize] += d * c;
    }
}
