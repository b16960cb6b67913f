//! External loads: nodal forces, surface tractions and pressure on boundary faces, each
//! scaled by a [`TimeFunction`].
//!
//! Surface loads become consistent P1 nodal loads: on a flat triangle of area `A` a constant
//! traction `t` has the work-equivalent nodal forces `∫ N_a t dA = A t / 3` (`N_a` the linear
//! hat function of vertex `a`, `∫ N_a dA = A/3`). A pressure `p` is the traction `−p n`
//! (`n` the outward unit normal), so with `n₂ = (x₂ − x₁) × (x₃ − x₁) = 2 A n` every vertex
//! gets `f_a = −p n₂ / 6`:
//! - **dead** (the default): `n₂` of the rest face, computed once;
//! - **follower**: `n₂` of the current face, so the load turns with the surface. Its stiffness
//!   `K_ab = −∂f_a/∂x_b = (p/6) [e_b]×` with `e₁ = x₃ − x₂`, `e₂ = x₁ − x₃`, `e₃ = x₂ − x₁`
//!   (from `∂n₂/∂x₁ = [x₃ − x₂]×` and its cyclic shifts) is not symmetric; the Newton matrix
//!   gets its symmetric part `(p/12) [e_b − e_a]×` (the skew part cancels over a closed surface
//!   under uniform pressure, Simo & Taylor 1991 §2; otherwise Newton converges linearly).
//!
//! Everything is precomputed at build time; evaluating the loads allocates nothing.

mod time_function;

pub use time_function::{interpolate, TimeFunction};

use crate::linalg::BlockCsr;
use crate::mesh::{boundary_faces, TetMesh};
use nalgebra::Vector3;
use std::collections::HashMap;
use thiserror::Error;

/// What a load applies.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadKind {
    /// Forces on vertices, `(vertex, force)`.
    Nodal(Vec<(u32, Vector3<f64>)>),
    /// A constant traction (force per area, N/m²) on boundary faces.
    Traction {
        faces: Vec<[u32; 3]>,
        traction: Vector3<f64>,
    },
    /// A pressure (Pa, positive pushes into the body) on boundary faces.
    Pressure {
        faces: Vec<[u32; 3]>,
        pressure: f64,
        /// The normal follows the deformed face (else the rest normal is used).
        follower: bool,
    },
}

/// One load of a body, as described by the user.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadDesc {
    pub name: String,
    pub kind: LoadKind,
    /// The factor `s(t)` of the load (dynamic runs) or of its final value (static runs
    /// ramp from the last equilibrium to it).
    pub time: TimeFunction,
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum LoadError {
    #[error("load `{load}`: vertex {vertex} is out of range (the mesh has {n_vertices} vertices)")]
    VertexOutOfRange {
        load: String,
        vertex: u32,
        n_vertices: usize,
    },
    #[error("load `{load}`: face {face:?} is not a boundary face of the mesh")]
    NotBoundary { load: String, face: [u32; 3] },
    #[error("load `{load}`: applies to no vertex or face")]
    Empty { load: String },
    #[error("load `{load}`: the force, traction or pressure must be finite")]
    NonFinite { load: String },
    #[error("load `{load}`: time function: {reason}")]
    Time { load: String, reason: String },
}

#[derive(Debug)]
enum Applied {
    /// Nodal forces at `s = 1` (surface dead loads already lumped).
    Dead(Vec<(u32, Vector3<f64>)>),
    /// Outward faces, pressure at `s = 1`, and the matrix slots of each face's 3×3 blocks
    /// (`slots[3a + b]` for block `(a, b)`).
    Follower {
        faces: Vec<[u32; 3]>,
        pressure: f64,
        slots: Vec<[u32; 9]>,
    },
}

#[derive(Debug)]
struct Load {
    name: String,
    time: TimeFunction,
    applied: Applied,
    /// The current factor.
    scale: f64,
}

/// A body's loads, ready to evaluate.
#[derive(Debug, Default)]
pub struct Loads {
    loads: Vec<Load>,
}

impl Loads {
    /// Checks and precomputes `descs` on `mesh` (faces must be boundary faces; they are
    /// oriented outward whatever their vertex order). Factors start at `s(0)`.
    pub fn new(
        mesh: &TetMesh,
        pattern: &crate::linalg::BlockPattern,
        descs: &[LoadDesc],
    ) -> Result<Self, LoadError> {
        let n = mesh.n_vertices();
        let mut outward: Option<HashMap<[u32; 3], [u32; 3]>> = None;
        let mut loads = Vec::with_capacity(descs.len());
        for d in descs {
            let load = d.name.clone();
            d.time.check().map_err(|reason| LoadError::Time {
                load: load.clone(),
                reason,
            })?;
            let mut orient = |faces: &[[u32; 3]]| -> Result<Vec<[u32; 3]>, LoadError> {
                let map = outward.get_or_insert_with(|| {
                    boundary_faces(&mesh.tets)
                        .into_iter()
                        .map(|f| (sorted(f), f))
                        .collect()
                });
                faces
                    .iter()
                    .map(|f| {
                        map.get(&sorted(*f)).copied().ok_or(LoadError::NotBoundary {
                            load: load.clone(),
                            face: *f,
                        })
                    })
                    .collect()
            };
            let (applied, finite, empty) = match &d.kind {
                LoadKind::Nodal(list) => {
                    if let Some(&(vertex, _)) = list.iter().find(|(v, _)| *v as usize >= n) {
                        return Err(LoadError::VertexOutOfRange {
                            load,
                            vertex,
                            n_vertices: n,
                        });
                    }
                    let finite = list.iter().all(|(_, f)| f.iter().all(|c| c.is_finite()));
                    (Applied::Dead(list.clone()), finite, list.is_empty())
                }
                LoadKind::Traction { faces, traction } => {
                    let faces = orient(faces)?;
                    let nodal = lump(&faces, &mesh.positions, |_| *traction);
                    let finite = traction.iter().all(|c| c.is_finite());
                    (Applied::Dead(nodal), finite, faces.is_empty())
                }
                LoadKind::Pressure {
                    faces,
                    pressure,
                    follower,
                } => {
                    let faces = orient(faces)?;
                    let empty = faces.is_empty();
                    let applied = if *follower {
                        let slots = faces
                            .iter()
                            .map(|f| {
                                std::array::from_fn(|k| {
                                    pattern
                                        .slot(f[k / 3] as usize, f[k % 3] as usize)
                                        .expect("a boundary face lies in one tet")
                                        as u32
                                })
                            })
                            .collect();
                        Applied::Follower {
                            faces,
                            pressure: *pressure,
                            slots,
                        }
                    } else {
                        // t = −p n with n₂ = 2 A n: A t / 3 = −p n₂ / 6.
                        let x = &mesh.positions;
                        Applied::Dead(lump(&faces, x, |n2| -*pressure * n2 / n2.norm()))
                    };
                    (applied, pressure.is_finite(), empty)
                }
            };
            if !finite {
                return Err(LoadError::NonFinite { load });
            }
            if empty {
                return Err(LoadError::Empty { load });
            }
            loads.push(Load {
                name: d.name.clone(),
                scale: d.time.at(0.0),
                time: d.time.clone(),
                applied,
            });
        }
        Ok(Self { loads })
    }

    pub fn is_empty(&self) -> bool {
        self.loads.is_empty()
    }

    /// Names of the loads, in order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.loads.iter().map(|l| l.name.as_str())
    }

    /// Sets every factor to `s(t)`.
    pub fn set_time(&mut self, t: f64) {
        for l in &mut self.loads {
            l.scale = l.time.at(t);
        }
    }

    /// Sets every factor to `s(from) + mix (s(to) − s(from))`, with `s(from) = 0` when
    /// `from` is `None` (a static load step on the path between two equilibria).
    pub fn set_path(&mut self, from: Option<f64>, to: f64, mix: f64) {
        for l in &mut self.loads {
            let a = from.map_or(0.0, |t| l.time.at(t));
            l.scale = a + mix * (l.time.at(to) - a);
        }
    }

    /// True when every factor is the same at `t1` and `t2`.
    pub fn same_at(&self, t1: f64, t2: f64) -> bool {
        self.loads.iter().all(|l| l.time.at(t1) == l.time.at(t2))
    }

    /// True when some load follows the deformed surface (its force depends on `x` and has a
    /// stiffness; it has no potential).
    pub fn has_follower(&self) -> bool {
        self.loads
            .iter()
            .any(|l| matches!(l.applied, Applied::Follower { .. }))
    }

    /// Adds the current loads at positions `x` to `f`.
    pub fn add_forces(&self, x: &[Vector3<f64>], f: &mut [Vector3<f64>]) {
        for l in &self.loads {
            let s = l.scale;
            if s == 0.0 {
                continue;
            }
            match &l.applied {
                Applied::Dead(list) => {
                    for (i, fi) in list {
                        f[*i as usize] += s * fi;
                    }
                }
                Applied::Follower {
                    faces, pressure, ..
                } => {
                    for t in faces {
                        let [a, b, c] = t.map(|i| x[i as usize]);
                        let fa = -s * pressure / 6.0 * (b - a).cross(&(c - a));
                        for &i in t {
                            f[i as usize] += fa;
                        }
                    }
                }
            }
        }
    }

    /// Adds `scale · K_load` to `k`, `K_load = −∂f_load/∂x` of the follower pressures: its
    /// symmetric part when `symmetric` (the Newton matrix), else the full tangent.
    pub fn add_tangent(&self, x: &[Vector3<f64>], scale: f64, symmetric: bool, k: &mut BlockCsr) {
        for l in &self.loads {
            let Applied::Follower {
                faces,
                pressure,
                slots,
            } = &l.applied
            else {
                continue;
            };
            let c = scale * l.scale * pressure / 6.0;
            if c == 0.0 {
                continue;
            }
            for (t, slot) in faces.iter().zip(slots) {
                let p = t.map(|i| x[i as usize]);
                let e = [p[2] - p[1], p[0] - p[2], p[1] - p[0]];
                for a in 0..3 {
                    for b in 0..3 {
                        let m = if symmetric {
                            0.5 * (e[b] - e[a]).cross_matrix()
                        } else {
                            e[b].cross_matrix()
                        };
                        k.values[slot[3 * a + b] as usize] += c * m;
                    }
                }
            }
        }
    }

    /// Potential energy `−Σ s f·(x − X)` of the dead loads (`X` the rest positions); `None`
    /// with a follower load (not conservative).
    pub fn potential(&self, x: &[Vector3<f64>], rest: &[Vector3<f64>]) -> Option<f64> {
        let mut e = 0.0;
        for l in &self.loads {
            match &l.applied {
                Applied::Dead(list) => {
                    for (i, fi) in list {
                        let i = *i as usize;
                        e -= l.scale * fi.dot(&(x[i] - rest[i]));
                    }
                }
                Applied::Follower { .. } => return None,
            }
        }
        Some(e)
    }

    /// The current total force of each load at `x` (summed over its vertices).
    pub fn resultant(&self, x: &[Vector3<f64>]) -> Vector3<f64> {
        let mut total = Vector3::zeros();
        for l in &self.loads {
            match &l.applied {
                Applied::Dead(list) => {
                    total += l.scale * list.iter().map(|p| p.1).sum::<Vector3<f64>>()
                }
                Applied::Follower {
                    faces, pressure, ..
                } => {
                    for t in faces {
                        let [a, b, c] = t.map(|i| x[i as usize]);
                        total -= l.scale * pressure / 2.0 * (b - a).cross(&(c - a));
                    }
                }
            }
        }
        total
    }
}

fn sorted(mut f: [u32; 3]) -> [u32; 3] {
    f.sort_unstable();
    f
}

/// The nodal loads `A t / 3` of a traction `t(n₂)` (given the face's `n₂ = 2 A n`), summed
/// per vertex in first-seen order.
fn lump(
    faces: &[[u32; 3]],
    x: &[Vector3<f64>],
    traction: impl Fn(&Vector3<f64>) -> Vector3<f64>,
) -> Vec<(u32, Vector3<f64>)> {
    let mut at: HashMap<u32, usize> = HashMap::new();
    let mut out: Vec<(u32, Vector3<f64>)> = Vec::new();
    for f in faces {
        let [a, b, c] = f.map(|i| x[i as usize]);
        let n2 = (b - a).cross(&(c - a));
        let share = traction(&n2) * (0.5 * n2.norm() / 3.0);
        for &i in f {
            let k = *at.entry(i).or_insert_with(|| {
                out.push((i, Vector3::zeros()));
                out.len() - 1
            });
            out[k].1 += share;
        }
    }
    out
}

#[cfg(test)]
mod tests;
