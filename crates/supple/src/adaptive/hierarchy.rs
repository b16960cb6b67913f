//! The level-of-detail hierarchy of Debunne et al. 2000 §3–4.1: L+1 independent, non-nested
//! meshes of one body, each node linked to the coarser and finer mesh by barycentric
//! coordinates in its *parent tet* and *child tet* (§3.2: the tet that contains it, or the
//! nearest one when it lies outside, one coordinate then negative), and to one *parent node*
//! (§4.2: a finer node belongs to the coarser node whose Voronoi region contains it — its
//! nearest coarser node — so every finer node has exactly one parent and the levels form a
//! tree).
//!
//! **Per-level time steps.** Level `n` takes `2^e_n` steps of `dt_frame / 2^e_n` per frame,
//! `e_n` the smallest exponent that keeps it inside its own explicit stability bound, and at
//! least `e_{n−1}` (a coarser level's instants must be instants of the finer ones: the ghost
//! timing reads them there). §4.1 fixes the ratio instead — `dt_frame/2^n`, halved per level —
//! because eq. 8's Courant bound scales with the edge length. With eq. 7's damping the bound
//! `dt ≤ a²/(16 ν)` scales with its square, so a finer level needs up to 4× the steps of the
//! one above; with the ratio held at 2 the finest level's bound fixes every level's count and
//! the coarser levels step more often than they need (the poke: 32 steps per frame on level 0
//! where 8 are stable). Undamped and Courant-bound, the two rules agree up to the meshes'
//! altitude ratios.

use super::force::ElementForce;
use super::level::Level;
use super::AdaptiveError;
use crate::fem::ElementSet;
use crate::mesh::{Embedding, TetMesh};
use crate::time::COURANT_SAFETY;
use nalgebra::Vector3;

/// How many times `dt_frame` may be halved for level 0 (2^20 steps per frame is absurd).
pub const MAX_HALVINGS: u32 = 20;

/// `ω_max a / c` bound used for the damping limit: a free regular tet with lumped masses has
/// `ω_max ≈ 3.25 c/a` (see [`crate::time::COURANT_SAFETY`]); 4 leaves a margin, so the
/// largest damping rate of `M⁻¹D` is taken as `η ≈ 4² ν / a²` with `ν` the damping
/// diffusivity ([`ElementForce::damping_diffusivity`]).
const OMEGA_ALTITUDE: f64 = 4.0;

/// A link from a node to a tet of a neighbouring level: that tet's nodes and the barycentric
/// coordinates (summing to 1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TetLink {
    pub nodes: [u32; 4],
    pub weights: [f64; 4],
}

impl TetLink {
    /// `Σ w_k u[nodes_k]`: linear interpolation of a nodal field (§3.2).
    #[inline]
    pub fn interpolate(&self, u: &[Vector3<f64>]) -> Vector3<f64> {
        u[self.nodes[0] as usize] * self.weights[0]
            + u[self.nodes[1] as usize] * self.weights[1]
            + u[self.nodes[2] as usize] * self.weights[2]
            + u[self.nodes[3] as usize] * self.weights[3]
    }
}

/// The meshes of one body at L+1 resolutions, coarse (level 0) to fine, and their links.
#[derive(Debug)]
pub struct Hierarchy {
    pub levels: Vec<Level>,
    /// `parent_tet[n][i]`: node `i` of level `n ≥ 1` in level `n − 1` (empty for level 0).
    pub parent_tet: Vec<Vec<TetLink>>,
    /// `child_tet[n][i]`: node `i` of level `n < L` in level `n + 1` (empty for level L).
    pub child_tet: Vec<Vec<TetLink>>,
    /// `parent[n][i]`: the parent node (level `n − 1`) of node `i` of level `n ≥ 1`.
    pub parent: Vec<Vec<u32>>,
    /// Children of node `i` of level `n < L` as CSR: `children[n][child_ptr[n][i]..]`.
    pub child_ptr: Vec<Vec<usize>>,
    pub children: Vec<Vec<u32>>,
    /// Frame period `dt_frame` (s).
    pub dt_frame: f64,
    /// Level `n` takes `2^step_exponents[n]` steps per frame (non-decreasing in `n`).
    pub step_exponents: Vec<u32>,
    pub density: f64,
}

impl Hierarchy {
    /// Builds the hierarchy of `meshes` (coarse to fine, at least one), with density
    /// `density`, the force of each level from `force(mesh, elements)`, the nodes whose rest
    /// position satisfies `fixed` held, and frame period `dt_frame`.
    pub fn new<F>(
        meshes: Vec<TetMesh>,
        density: f64,
        dt_frame: f64,
        fixed: impl Fn(&Vector3<f64>) -> bool,
        force: F,
    ) -> Result<Self, AdaptiveError>
    where
        F: Fn(&TetMesh, &ElementSet) -> Result<Box<dyn ElementForce>, AdaptiveError>,
    {
        let flags = |_: usize, mesh: &TetMesh| mesh.positions.iter().map(&fixed).collect();
        Self::build(meshes, density, dt_frame, flags, force)
    }

    /// [`Hierarchy::new`] with the held nodes of each level listed: `fixed[n]` holds node
    /// indices of level `n` (one list per level; out-of-range indices are refused). For
    /// selections that are not a function of the rest position alone (a scene's selectors
    /// evaluated on each level's mesh).
    pub fn with_fixed_nodes<F>(
        meshes: Vec<TetMesh>,
        density: f64,
        dt_frame: f64,
        fixed: &[Vec<u32>],
        force: F,
    ) -> Result<Self, AdaptiveError>
    where
        F: Fn(&TetMesh, &ElementSet) -> Result<Box<dyn ElementForce>, AdaptiveError>,
    {
        if fixed.len() != meshes.len() {
            return Err(AdaptiveError::Setting {
                key: "fixed",
                value: fixed.len() as f64,
                reason: "needs one list of held nodes per level",
            });
        }
        for (list, mesh) in fixed.iter().zip(&meshes) {
            if let Some(&i) = list.iter().find(|&&i| i as usize >= mesh.n_vertices()) {
                return Err(AdaptiveError::Setting {
                    key: "fixed",
                    value: f64::from(i),
                    reason: "a held node is out of range on its level",
                });
            }
        }
        let flags = |n: usize, mesh: &TetMesh| {
            let mut f = vec![false; mesh.n_vertices()];
            for &i in &fixed[n] {
                f[i as usize] = true;
            }
            f
        };
        Self::build(meshes, density, dt_frame, flags, force)
    }

    fn build<F>(
        meshes: Vec<TetMesh>,
        density: f64,
        dt_frame: f64,
        fixed: impl Fn(usize, &TetMesh) -> Vec<bool>,
        force: F,
    ) -> Result<Self, AdaptiveError>
    where
        F: Fn(&TetMesh, &ElementSet) -> Result<Box<dyn ElementForce>, AdaptiveError>,
    {
        if meshes.is_empty() {
            return Err(AdaptiveError::NoLevels);
        }
        for (key, value) in [("density", density), ("dt_frame", dt_frame)] {
            if !(value > 0.0 && value.is_finite()) {
                return Err(AdaptiveError::Setting {
                    key,
                    value,
                    reason: "must be a finite number above 0",
                });
            }
        }
        let mut levels = Vec::with_capacity(meshes.len());
        for (n, mesh) in meshes.into_iter().enumerate() {
            mesh.validate()?;
            let elems = ElementSet::new(&mesh);
            let f = force(&mesh, &elems)?;
            let fixed_flags = fixed(n, &mesh);
            levels.push(Level::new(mesh, density, f, fixed_flags));
        }
        let n_levels = levels.len();
        let mut parent_tet = vec![Vec::new(); n_levels];
        let mut child_tet = vec![Vec::new(); n_levels];
        let mut parent = vec![Vec::new(); n_levels];
        let mut child_ptr = vec![Vec::new(); n_levels];
        let mut children = vec![Vec::new(); n_levels];
        for n in 1..n_levels {
            let (coarse, fine) = (&levels[n - 1], &levels[n]);
            parent_tet[n] = links(&coarse.mesh, &fine.mesh.positions)?;
            child_tet[n - 1] = links(&fine.mesh, &coarse.mesh.positions)?;
            parent[n] = fine
                .mesh
                .positions
                .iter()
                .zip(&parent_tet[n])
                .map(|(p, link)| nearest_node(coarse, link, p))
                .collect();
            let (ptr, list) = invert(&parent[n], coarse.n_nodes());
            child_ptr[n - 1] = ptr;
            children[n - 1] = list;
        }
        let mut h = Self {
            levels,
            parent_tet,
            child_tet,
            parent,
            child_ptr,
            children,
            dt_frame,
            step_exponents: Vec::new(),
            density,
        };
        h.step_exponents = h.stable_exponents()?;
        for n in 0..n_levels {
            h.levels[n].dt = dt_frame / f64::from(1u32 << h.step_exponents[n]);
        }
        Ok(h)
    }

    /// Index of the finest level (`L`).
    pub fn finest(&self) -> usize {
        self.levels.len() - 1
    }

    /// Steps level `n` takes per frame: `2^e_n`.
    pub fn steps_per_frame(&self, n: usize) -> u64 {
        1u64 << self.step_exponents[n]
    }

    /// Children (nodes of level `n + 1`) of node `i` of level `n`.
    pub fn children_of(&self, n: usize, i: usize) -> &[u32] {
        if n + 1 >= self.levels.len() {
            return &[];
        }
        &self.children[n][self.child_ptr[n][i]..self.child_ptr[n][i + 1]]
    }

    /// The largest stable step of level `n`: the product's Courant bound
    /// `COURANT_SAFETY · a_min / c` (Debunne eq. 8 with the smallest altitude, see
    /// [`crate::time::CourantBound`]) and, when damped, `dt ≤ 1/η_max` with
    /// `η_max ≈ 16 ν / a²`: symplectic Euler on `ẍ + ηẋ + ω²x = 0` is stable iff `hη < 2` and
    /// `h²ω² < 4 − 2hη`, which `hη ≤ 1` and the Courant part (`h ω ≲ 1`) both keep.
    pub fn stable_dt(&self, n: usize) -> f64 {
        let l = &self.levels[n];
        let a = l.min_altitude;
        let c = l.force.wave_speed(self.density);
        let courant = COURANT_SAFETY * a / c;
        let nu = l.force.damping_diffusivity(self.density);
        if nu > 0.0 {
            courant.min(a * a / (OMEGA_ALTITUDE * OMEGA_ALTITUDE * nu))
        } else {
            courant
        }
    }

    /// Per level, the smallest `e_n ≥ e_{n−1}` with `dt_frame / 2^e_n ≤ stable_dt(n)`.
    fn stable_exponents(&self) -> Result<Vec<u32>, AdaptiveError> {
        let mut out: Vec<u32> = Vec::with_capacity(self.levels.len());
        for n in 0..self.levels.len() {
            let bound = self.stable_dt(n);
            let mut e = out.last().copied().unwrap_or(0);
            while self.dt_frame / f64::from(1u32 << e) > bound {
                e += 1;
                if e > MAX_HALVINGS {
                    return Err(AdaptiveError::Setting {
                        key: "dt_frame",
                        value: self.dt_frame,
                        reason: "needs more than 2^20 explicit steps per frame on some level",
                    });
                }
            }
            out.push(e);
        }
        Ok(out)
    }
}

/// Each point's tet in `mesh` (containing, else nearest) and barycentric coordinates.
fn links(mesh: &TetMesh, points: &[Vector3<f64>]) -> Result<Vec<TetLink>, AdaptiveError> {
    let emb = Embedding::new(mesh, points)?;
    Ok((0..points.len())
        .map(|k| TetLink {
            nodes: mesh.tets[emb.tet(k)],
            weights: emb.weights(k),
        })
        .collect())
}

/// The coarse node nearest to `p` (its Voronoi owner, §4.2), searched among the vertices of
/// `p`'s parent tet and their tets' vertices: exact for quasi-uniform meshes, where the
/// Voronoi owner is never farther. Ties go to the lower index.
fn nearest_node(coarse: &Level, link: &TetLink, p: &Vector3<f64>) -> u32 {
    let mut best = (f64::INFINITY, u32::MAX);
    for &v in &link.nodes {
        for &e in coarse.tets_of(v as usize) {
            for &c in &coarse.mesh.tets[e as usize] {
                let d = (coarse.mesh.positions[c as usize] - p).norm_squared();
                if d < best.0 || (d == best.0 && c < best.1) {
                    best = (d, c);
                }
            }
        }
    }
    best.1
}

/// Inverts a child → parent map into CSR lists of children per parent (ascending).
fn invert(parent: &[u32], n_parents: usize) -> (Vec<usize>, Vec<u32>) {
    let mut ptr = vec![0usize; n_parents + 1];
    for &p in parent {
        ptr[p as usize + 1] += 1;
    }
    for i in 0..n_parents {
        ptr[i + 1] += ptr[i];
    }
    let mut fill = ptr.clone();
    let mut list = vec![0u32; parent.len()];
    for (c, &p) in parent.iter().enumerate() {
        list[fill[p as usize]] = c as u32;
        fill[p as usize] += 1;
    }
    (ptr, list)
}
