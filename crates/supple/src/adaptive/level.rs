//! One level of detail: a mesh of the body with its rest data, lumped masses, fixed flags,
//! node-to-element adjacency, surface, and the geometric quantities of eq. 8–9.

use super::force::ElementForce;
use crate::fem::ElementSet;
use crate::mesh::{boundary_faces_with_tets, TetMesh};
use nalgebra::Vector3;

/// One mesh of the hierarchy (Debunne §3.1: "a quasi-uniform sampling of the 3D shape").
#[derive(Debug)]
pub struct Level {
    pub mesh: TetMesh,
    /// The explicit per-element force of this level.
    pub force: Box<dyn ElementForce>,
    /// Rest volumes and barycentric gradients `α_i` of each tet (the criterion's Laplacian).
    pub volume: Vec<f64>,
    pub alpha: Vec<[Vector3<f64>; 4]>,
    /// Lumped mass `m_i = ρ Σ_e V_e / 4` (the paper's node mass `ρ Volume(V_i)` with the
    /// barycentric dual cell for the Voronoi region).
    pub mass: Vec<f64>,
    /// Dual volume `Σ_e V_e / 4` of each node.
    pub dual_volume: Vec<f64>,
    pub fixed: Vec<bool>,
    /// Whether the node lies on the mesh boundary (a "surface point", §5).
    pub surface: Vec<bool>,
    /// Node → tets, as CSR: tets of node `i` are `node_tets[node_ptr[i]..node_ptr[i + 1]]`.
    pub node_ptr: Vec<usize>,
    pub node_tets: Vec<u32>,
    /// Boundary faces: nodes, owning tet and outward area vector `A n`.
    pub faces: Vec<([u32; 3], u32, Vector3<f64>)>,
    /// The boundary faces around each surface node as CSR, each face's nodes ordered so that
    /// `(x_b − x_a) × (x_c − x_a)` is its outward area vector (×2) at rest: faces of node `i`
    /// are `node_faces[node_face_ptr[i]..node_face_ptr[i + 1]]` (the tool's outward normal,
    /// [`super::AdaptiveSettings::tool_side`]).
    pub node_face_ptr: Vec<usize>,
    pub node_faces: Vec<[u32; 3]>,
    /// `ĥ_i`: the mean distance from node `i` to its 1-ring neighbours (eq. 9).
    pub h_hat: Vec<f64>,
    /// Smallest tet altitude (the `h` of the Courant bound, see [`crate::time::CourantBound`]).
    pub min_altitude: f64,
    /// The level's time step (set by the hierarchy: `dt_frame / 2^e_n`).
    pub dt: f64,
}

impl Level {
    /// Builds the level's rest data. `mesh` must be valid and `fixed` one flag per node.
    pub fn new(
        mesh: TetMesh,
        density: f64,
        force: Box<dyn ElementForce>,
        fixed: Vec<bool>,
    ) -> Self {
        let elems = ElementSet::new(&mesh);
        let n = mesh.n_vertices();
        let mut dual_volume = vec![0.0; n];
        let mut count = vec![0usize; n + 1];
        for (e, t) in mesh.tets.iter().enumerate() {
            for &i in t {
                dual_volume[i as usize] += elems.volume[e] / 4.0;
                count[i as usize + 1] += 1;
            }
        }
        let mut node_ptr = count;
        for i in 0..n {
            node_ptr[i + 1] += node_ptr[i];
        }
        let mut fill = node_ptr.clone();
        let mut node_tets = vec![0u32; node_ptr[n]];
        for (e, t) in mesh.tets.iter().enumerate() {
            for &i in t {
                node_tets[fill[i as usize]] = e as u32;
                fill[i as usize] += 1;
            }
        }
        let mut surface = vec![false; n];
        let faces: Vec<_> = boundary_faces_with_tets(&mesh.tets)
            .into_iter()
            .map(|(f, t)| {
                for &i in &f {
                    surface[i as usize] = true;
                }
                let [a, b, c] = f.map(|i| mesh.positions[i as usize]);
                let mut an = 0.5 * (b - a).cross(&(c - a));
                // Outward: away from the owning tet's fourth vertex.
                let centroid = mesh.tet_positions(t as usize).iter().sum::<Vector3<f64>>() / 4.0;
                if an.dot(&(a - centroid)) < 0.0 {
                    an = -an;
                }
                (f, t, an)
            })
            .collect();
        let (node_face_ptr, node_faces) = node_faces(&mesh.positions, &faces);
        let h_hat = (0..n)
            .map(|i| {
                let mut nbrs: Vec<u32> = node_tets[node_ptr[i]..node_ptr[i + 1]]
                    .iter()
                    .flat_map(|&e| mesh.tets[e as usize])
                    .filter(|&j| j as usize != i)
                    .collect();
                nbrs.sort_unstable();
                nbrs.dedup();
                let sum: f64 = nbrs
                    .iter()
                    .map(|&j| (mesh.positions[j as usize] - mesh.positions[i]).norm())
                    .sum();
                sum / nbrs.len().max(1) as f64
            })
            .collect();
        let g_max = elems
            .grad
            .iter()
            .flat_map(|g| g.iter().map(|ga| ga.norm()))
            .fold(0.0_f64, f64::max);
        Self {
            mass: dual_volume.iter().map(|v| density * v).collect(),
            dual_volume,
            fixed,
            surface,
            node_ptr,
            node_tets,
            faces,
            node_face_ptr,
            node_faces,
            h_hat,
            min_altitude: 1.0 / g_max,
            volume: elems.volume,
            alpha: elems.grad,
            force,
            mesh,
            dt: 0.0,
        }
    }

    pub fn n_nodes(&self) -> usize {
        self.mesh.n_vertices()
    }

    /// The tets around node `i`.
    pub fn tets_of(&self, i: usize) -> &[u32] {
        &self.node_tets[self.node_ptr[i]..self.node_ptr[i + 1]]
    }

    /// The outward boundary faces around node `i` (empty off the surface), nodes ordered
    /// outward (see [`Self::node_faces`]).
    pub fn faces_of(&self, i: usize) -> &[[u32; 3]] {
        &self.node_faces[self.node_face_ptr[i]..self.node_face_ptr[i + 1]]
    }

    /// Rest positions of tet `e`'s nodes.
    #[inline]
    pub fn rest(&self, e: usize) -> [Vector3<f64>; 4] {
        self.mesh.tets[e].map(|i| self.mesh.positions[i as usize])
    }
}

/// Node → boundary faces as CSR, each face's nodes ordered outward (two swapped where the
/// listed order's normal points into the body).
fn node_faces(
    positions: &[Vector3<f64>],
    faces: &[([u32; 3], u32, Vector3<f64>)],
) -> (Vec<usize>, Vec<[u32; 3]>) {
    let n = positions.len();
    let mut ptr = vec![0usize; n + 1];
    for (f, _, _) in faces {
        for &i in f {
            ptr[i as usize + 1] += 1;
        }
    }
    for i in 0..n {
        ptr[i + 1] += ptr[i];
    }
    let mut fill = ptr.clone();
    let mut out = vec![[0u32; 3]; ptr[n]];
    for (f, _, an) in faces {
        let [a, b, c] = f.map(|i| positions[i as usize]);
        let f = if (b - a).cross(&(c - a)).dot(an) < 0.0 {
            [f[0], f[2], f[1]]
        } else {
            *f
        };
        for &i in &f {
            out[fill[i as usize]] = f;
            fill[i as usize] += 1;
        }
    }
    (ptr, out)
}
