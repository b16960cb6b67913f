//! Nested tetrahedral meshes by octasection, and the hierarchical basis on them (Hauth &
//! Straßer 2004, §5.2: "Hierarchical basis": each level refines every tet of the level above
//! into eight, and a nodal field on the finest level is written as the coarse values plus, for
//! every new node, its difference from the linear interpolation of the two nodes whose edge it
//! halves).
//!
//! **Octasection** (Bey's regular refinement): a tet `[v0, v1, v2, v3]` gets a node at the
//! midpoint of each of its six edges (shared between the tets around the edge, so the refined
//! mesh is conforming); the four corner tets `[v0, m01, m02, m03]`, `[m01, v1, m12, m13]`,
//! `[m02, m12, v2, m23]`, `[m03, m13, m23, v3]` are the parent scaled by ½ about a corner (same
//! shape, same orientation); the inner octahedron is cut into four tets around one of its three
//! diagonals (`m01–m23`, `m02–m13`, `m03–m12`), the shortest, which keeps the children's shapes
//! from degrading over the levels (Bey 1995; Hauth & Straßer split "along a diagonal" without
//! saying which). Every child has `1/8` of its parent's volume, so the volumes of each level sum
//! to the same total.
//!
//! **Numbering.** A level keeps the vertices of the level above at their indices and appends
//! its midpoints in the order their edges are first met (tets in order, edges in the order
//! above), so the transform below needs no permutation and the result does not depend on
//! anything but the input order.
//!
//! **Hierarchical basis.** With `p, q` the parents of midpoint `m`, the hierarchical
//! coefficient is `c_m = u_m − ½ (u_p + u_q)`, and `c_v = u_v` on the coarsest level. The
//! transform runs from the finest level to the coarsest (each level's parents are still nodal
//! when it is transformed), its inverse the other way; both in place, O(N). A field that is
//! linear over each coarse tet has zero coefficients on every fine node.

use super::{signed_volume, MeshError, TetMesh};
use nalgebra::Vector3;
use std::collections::HashMap;
use std::ops::{Add, Mul, Sub};

/// One octasection: the fine mesh and its links to the coarse one.
#[derive(Debug, Clone, PartialEq)]
pub struct Octasection {
    /// The refined mesh: the coarse vertices first (same indices), then the midpoints.
    pub mesh: TetMesh,
    /// Vertices of the coarse mesh (the first ones of `mesh`).
    pub coarse_vertices: usize,
    /// For midpoint `coarse_vertices + k`, the two coarse vertices of the edge it halves.
    pub midpoint_parents: Vec<[u32; 2]>,
    /// For each fine tet, the coarse tet it lies in (children `8t .. 8t + 8` of coarse tet `t`).
    pub parent_tet: Vec<u32>,
}

/// Refines every tet of `coarse` into eight (module notes); the result is validated (every
/// child positively oriented, none degenerate).
pub fn octasect(coarse: &TetMesh) -> Result<Octasection, MeshError> {
    coarse.validate()?;
    let n = coarse.positions.len();
    let mut positions = coarse.positions.clone();
    let mut midpoint_parents: Vec<[u32; 2]> = Vec::new();
    let mut midpoint_of: HashMap<(u32, u32), u32> = HashMap::new();
    let mut tets = Vec::with_capacity(8 * coarse.tets.len());
    let mut parent_tet = Vec::with_capacity(8 * coarse.tets.len());
    // Edges of a tet, in the order midpoints are numbered: 01, 02, 03, 12, 13, 23.
    const EDGES: [(usize, usize); 6] = [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)];
    for (t, tet) in coarse.tets.iter().enumerate() {
        let mut m = [0u32; 6];
        for (k, &(a, b)) in EDGES.iter().enumerate() {
            let (p, q) = (tet[a].min(tet[b]), tet[a].max(tet[b]));
            m[k] = *midpoint_of.entry((p, q)).or_insert_with(|| {
                let index = (n + midpoint_parents.len()) as u32;
                midpoint_parents.push([p, q]);
                positions.push(0.5 * (coarse.positions[p as usize] + coarse.positions[q as usize]));
                index
            });
        }
        let [v0, v1, v2, v3] = *tet;
        let [m01, m02, m03, m12, m13, m23] = m;
        let children = children(&positions, [v0, v1, v2, v3], [m01, m02, m03, m12, m13, m23]);
        tets.extend_from_slice(&children);
        parent_tet.extend(std::iter::repeat_n(t as u32, 8));
    }
    let mesh = TetMesh::new(positions, tets)?;
    Ok(Octasection {
        mesh,
        coarse_vertices: n,
        midpoint_parents,
        parent_tet,
    })
}

/// The eight children of `[v0, v1, v2, v3]` with edge midpoints `m = [m01, m02, m03, m12, m13,
/// m23]`: four corner tets (the parent's orientation) and the octahedron cut around its
/// shortest diagonal (each of those four oriented by its signed volume).
fn children(positions: &[Vector3<f64>], v: [u32; 4], m: [u32; 6]) -> [[u32; 4]; 8] {
    let [v0, v1, v2, v3] = v;
    let [m01, m02, m03, m12, m13, m23] = m;
    let p = |i: u32| positions[i as usize];
    // Diagonals with the cycle of the other four around each (consecutive ones share an
    // octahedron edge: only opposite midpoints do not).
    let diagonals = [
        ((m01, m23), [m02, m03, m13, m12]),
        ((m02, m13), [m01, m03, m23, m12]),
        ((m03, m12), [m01, m02, m23, m13]),
    ];
    let length = |(a, b): (u32, u32)| (p(a) - p(b)).norm_squared();
    // First of the shortest, so ties (a regular tet) resolve the same way every time.
    let mut best = 0;
    for k in 1..3 {
        if length(diagonals[k].0) < length(diagonals[best].0) {
            best = k;
        }
    }
    let ((a, b), ring) = diagonals[best];
    let mut out = [
        [v0, m01, m02, m03],
        [m01, v1, m12, m13],
        [m02, m12, v2, m23],
        [m03, m13, m23, v3],
        [0; 4],
        [0; 4],
        [0; 4],
        [0; 4],
    ];
    for k in 0..4 {
        let (c, d) = (ring[k], ring[(k + 1) % 4]);
        let tet = [a, b, c, d];
        out[4 + k] = if signed_volume(&tet.map(p)) > 0.0 {
            tet
        } else {
            [a, b, d, c]
        };
    }
    out
}

/// A stack of nested meshes, `levels[0]` the coarsest, each the octasection of the one above.
#[derive(Debug, Clone, PartialEq)]
pub struct Hierarchy {
    pub levels: Vec<TetMesh>,
    /// `refinements[l]` refines `levels[l]` into `levels[l + 1]` (its `mesh` is not kept
    /// twice: `levels[l + 1]` is that mesh).
    refinements: Vec<Links>,
}

/// The links of one octasection, without its mesh.
#[derive(Debug, Clone, PartialEq)]
struct Links {
    coarse_vertices: usize,
    midpoint_parents: Vec<[u32; 2]>,
    parent_tet: Vec<u32>,
}

impl Hierarchy {
    /// `coarse` refined `refinements` times (e.g. 70 → 560 → 4480 tets for two).
    pub fn new(coarse: TetMesh, refinements: usize) -> Result<Self, MeshError> {
        coarse.validate()?;
        let mut levels = vec![coarse];
        let mut links = Vec::with_capacity(refinements);
        for _ in 0..refinements {
            let o = octasect(levels.last().expect("at least the coarse level"))?;
            links.push(Links {
                coarse_vertices: o.coarse_vertices,
                midpoint_parents: o.midpoint_parents,
                parent_tet: o.parent_tet,
            });
            levels.push(o.mesh);
        }
        Ok(Self {
            levels,
            refinements: links,
        })
    }

    /// The finest mesh.
    pub fn finest(&self) -> &TetMesh {
        self.levels.last().expect("at least the coarse level")
    }

    /// The coarsest-level tet that fine tet `t` (of the finest level) lies in.
    pub fn coarse_tet(&self, mut t: usize) -> usize {
        for links in self.refinements.iter().rev() {
            t = links.parent_tet[t] as usize;
        }
        t
    }

    /// Nodal values on the finest level → hierarchical coefficients, in place (module notes).
    /// `u` holds one value per finest-level vertex.
    pub fn to_hierarchical<T>(&self, u: &mut [T])
    where
        T: Copy + Add<Output = T> + Sub<Output = T> + Mul<f64, Output = T>,
    {
        for links in self.refinements.iter().rev() {
            for (k, &[p, q]) in links.midpoint_parents.iter().enumerate() {
                let m = links.coarse_vertices + k;
                u[m] = u[m] - (u[p as usize] + u[q as usize]) * 0.5;
            }
        }
    }

    /// Hierarchical coefficients → nodal values on the finest level, in place (the inverse of
    /// [`to_hierarchical`](Self::to_hierarchical)).
    pub fn to_nodal<T>(&self, c: &mut [T])
    where
        T: Copy + Add<Output = T> + Sub<Output = T> + Mul<f64, Output = T>,
    {
        for links in &self.refinements {
            for (k, &[p, q]) in links.midpoint_parents.iter().enumerate() {
                let m = links.coarse_vertices + k;
                c[m] = c[m] + (c[p as usize] + c[q as usize]) * 0.5;
            }
        }
    }

    /// The transpose `Tᵀ` of [`to_nodal`](Self::to_nodal) (`T` maps hierarchical coefficients
    /// to nodal values), in place: `T` is the product of one elementary map per refinement,
    /// `c_m += ½ (c_p + c_q)` for its midpoints, so `Tᵀ` runs the refinements from the finest
    /// to the coarsest and adds `½ w_m` to both parents of each midpoint. It turns a nodal
    /// residual `b − A u` into the residual of the hierarchical system `Tᵀ A T c = Tᵀ b`.
    pub fn to_nodal_transpose<T>(&self, w: &mut [T])
    where
        T: Copy + Add<Output = T> + Sub<Output = T> + Mul<f64, Output = T>,
    {
        for links in self.refinements.iter().rev() {
            for (k, &[p, q]) in links.midpoint_parents.iter().enumerate() {
                let half = w[links.coarse_vertices + k] * 0.5;
                w[p as usize] = w[p as usize] + half;
                w[q as usize] = w[q as usize] + half;
            }
        }
    }

    /// Vertices of the coarsest level (the first vertices of every level).
    pub fn coarse_vertices(&self) -> usize {
        self.levels[0].positions.len()
    }

    /// Every midpoint of every refinement as `(vertex, [parent, parent])`, coarsest
    /// refinement first (vertex indices are those of the finest level, which keeps them).
    pub fn midpoints(&self) -> impl Iterator<Item = (usize, [u32; 2])> + '_ {
        self.refinements.iter().flat_map(|links| {
            links
                .midpoint_parents
                .iter()
                .enumerate()
                .map(move |(k, &pq)| (links.coarse_vertices + k, pq))
        })
    }

    /// A vertex set of the coarsest level carried to the finest: with every midpoint whose
    /// two parents are in the set (the edges between held vertices stay held), sorted.
    pub fn refine_vertex_set(&self, coarse: &[u32]) -> Vec<u32> {
        let mut member = vec![false; self.finest().positions.len()];
        for &v in coarse {
            if let Some(m) = member.get_mut(v as usize) {
                *m = true;
            }
        }
        for (m, [p, q]) in self.midpoints() {
            member[m] = member[p as usize] && member[q as usize];
        }
        (0..member.len() as u32)
            .filter(|&v| member[v as usize])
            .collect()
    }

    /// Triangles of the coarsest level carried to the finest: each is split into four at its
    /// edge midpoints per refinement, keeping its orientation. `None` when a triangle's edge
    /// is not an edge of the mesh (so not a face of it).
    pub fn refine_faces(&self, faces: &[[u32; 3]]) -> Option<Vec<[u32; 3]>> {
        let mut faces = faces.to_vec();
        for links in &self.refinements {
            let mid: HashMap<(u32, u32), u32> = links
                .midpoint_parents
                .iter()
                .enumerate()
                .map(|(k, &[p, q])| ((p.min(q), p.max(q)), (links.coarse_vertices + k) as u32))
                .collect();
            let m = |a: u32, b: u32| mid.get(&(a.min(b), a.max(b))).copied();
            let mut next = Vec::with_capacity(4 * faces.len());
            for &[a, b, c] in &faces {
                let (ab, bc, ca) = (m(a, b)?, m(b, c)?, m(c, a)?);
                next.extend([[a, ab, ca], [ab, b, bc], [ca, bc, c], [ab, bc, ca]]);
            }
            faces = next;
        }
        Some(faces)
    }

    /// Linear interpolation of coarsest-level values to every finest-level vertex (the nodal
    /// field whose hierarchical details are all zero): `coarse` has one value per coarse
    /// vertex, `fine` one per finest vertex.
    pub fn prolong<T>(&self, coarse: &[T], fine: &mut [T])
    where
        T: Copy + Add<Output = T> + Sub<Output = T> + Mul<f64, Output = T>,
    {
        let nc = self.levels[0].positions.len();
        fine[..nc].copy_from_slice(&coarse[..nc]);
        for v in &mut fine[nc..] {
            *v = coarse[0] * 0.0;
        }
        self.to_nodal(fine);
    }
}

/// The smallest and largest dihedral angle (degrees) over all tets of `mesh`.
pub fn dihedral_range_deg(mesh: &TetMesh) -> (f64, f64) {
    let mut range = (f64::INFINITY, f64::NEG_INFINITY);
    for t in 0..mesh.n_tets() {
        for angle in dihedral_angles_deg(&mesh.tet_positions(t)) {
            range = (range.0.min(angle), range.1.max(angle));
        }
    }
    range
}

/// The six dihedral angles (degrees) of a tet: at edge `ij`, the angle between the two faces
/// through it, measured between the other two vertices projected onto the plane normal to it.
pub fn dihedral_angles_deg(p: &[Vector3<f64>; 4]) -> [f64; 6] {
    const EDGES: [(usize, usize, usize, usize); 6] = [
        (0, 1, 2, 3),
        (0, 2, 1, 3),
        (0, 3, 1, 2),
        (1, 2, 0, 3),
        (1, 3, 0, 2),
        (2, 3, 0, 1),
    ];
    EDGES.map(|(i, j, k, l)| {
        let e = (p[j] - p[i]).normalize();
        let off = |x: Vector3<f64>| x - e * e.dot(&x);
        let (a, b) = (off(p[k] - p[i]), off(p[l] - p[i]));
        (a.dot(&b) / (a.norm() * b.norm()))
            .clamp(-1.0, 1.0)
            .acos()
            .to_degrees()
    })
}

#[cfg(test)]
mod tests;
