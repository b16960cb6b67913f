//! A mass–spring network on the tet mesh's edges (Müller et al. 2002, abstract and §3: "the
//! method can be applied to both finite element models and mass-spring systems"), with or
//! without Müller's stiffness warping.
//!
//! Springs: one per mesh edge `(i, j)`, rest length `L = |x⁰_j − x⁰_i|` from the rest mesh and
//! stiffness
//!
//! `k_ij = E · V_ij / L²`, `V_ij = Σ_{tets e ∋ (i, j)} V_e`,
//!
//! Van Gelder's rule (Van Gelder 1998, "Approximate simulation of elastic membranes by
//! triangulated spring meshes", J. Graphics Tools 3(2): stiffness as the element measure next
//! to the edge over the squared edge length; his 2D rule with triangle areas, carried to tets
//! with volumes as his paper's extension to 3D sketches). The constant 1 is derived here,
//! not taken from the paper: under a uniform dilatation `x = (1 + ε) x⁰` every spring
//! stretches by `ε L`, so the network stores `½ Σ_edges k L² ε² = ½ E ε² Σ_e 6 V_e = 3 E V ε²`
//! on any mesh, the energy `(9/2) K V ε²` of a continuum of bulk modulus `K = E / (3(1 − 2ν))`
//! at `ν = ¼`. For edge directions spread isotropically the network is then exactly the linear
//! material of Young's modulus `E` and `ν = ¼`: the spring energy density
//! `½ Σ k L² (n·ε n)²/V` averages to `(E/5)(2 ε:ε + tr(ε)²)`, i.e. `μ = λ = 2E/5`. A central-
//! force network cannot have another Poisson ratio (the Cauchy relations; Golec et al. 2020),
//! and no choice of spring constants reproduces linear elasticity on a general mesh (Van
//! Gelder 1998; Lloyd, Székely & Harders 2007, "Identification of spring parameters for
//! deformable object simulation", IEEE TVCG 13(5)). The model takes `E` from the body's Lamé
//! parameters, `E = μ(3λ + 2μ)/(λ + μ)`, and ignores their Poisson ratio.
//!
//! Three force laws ([`SpringForce`]):
//! - `Hookean`: `f_i = Σ_j k_ij (l − L) u`, `u = (x_j − x_i)/l`, `l = |x_j − x_i|`; energy
//!   `Σ ½ k (l − L)²`; exact tangent, per spring `k [u uᵀ + (1 − L/l)(I − u uᵀ)]` (indefinite
//!   for a compressed spring, as the exact tangents of the other models). Invariant under
//!   rigid motions.
//! - `Linear`: the network linearized at rest, `f = −K⁰ (x − x⁰)` with
//!   `K⁰ = Σ_edges k n nᵀ ⊗ (e_i − e_j)(e_i − e_j)ᵀ`, `n` the rest direction: the Hookean
//!   tangent at rest. Constant tangent, energy `½ uᵀ K⁰ u`. Like linear FEM it is not rotation
//!   invariant: a rotated body grows (Müller §2.3).
//! - `Warped`: `K⁰` warped by the per-vertex rotation field (Müller §3), the [`Warped`]
//!   model's forces and tangent with this `K⁰` in place of the FEM stiffness.
//!
//! Storage: the per-edge data sit on the slots of the body's block pattern (row `i`'s slot of
//! column `j` holds edge `(i, j)`; the diagonal slot holds nothing), so forces and tangent are
//! row loops: row `i` sums its own springs, in parallel and the same bits on any thread count.

use super::warped::Warped;
use super::{ForceModel, Lame, RotationField};
use crate::fem::ElementSet;
use crate::linalg::par;
use crate::linalg::BlockCsr;
use crate::mesh::TetMesh;
use nalgebra::{Matrix3, Vector3};
use std::sync::Arc;

/// How the spring network makes its forces (see the module notes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SpringForce {
    /// Nonlinear Hookean springs on the current edge lengths.
    #[default]
    Hookean,
    /// The network's stiffness linearized at rest, `f = −K⁰(x − x⁰)`.
    Linear,
    /// `K⁰` warped along a per-vertex rotation field (Müller et al. 2002 §3).
    Warped {
        field: RotationField,
        /// Remove the net force and torque of the warped forces (Müller §3).
        ghost_correction: bool,
    },
}

/// Young's modulus of Lamé parameters, `E = μ(3λ + 2μ)/(λ + μ)`.
pub fn youngs_of(lame: Lame) -> f64 {
    lame.mu * (3.0 * lame.lambda + 2.0 * lame.mu) / (lame.lambda + lame.mu)
}

/// The rest data of the network, on the slots of the body's pattern.
#[derive(Debug, Clone)]
pub struct SpringNetwork {
    /// `k` of the edge in each slot (0 on the diagonal).
    pub stiffness: Vec<f64>,
    /// Rest length `L` of each slot's edge (0 on the diagonal).
    pub rest_length: Vec<f64>,
    /// Rest direction `n = (x⁰_j − x⁰_i)/L` of slot `(i, j)` (zero on the diagonal).
    pub rest_direction: Vec<Vector3<f64>>,
}

impl SpringNetwork {
    /// The springs of `mesh`'s edges for Young's modulus `youngs` (`k = E V_ij / L²`).
    pub fn new(youngs: f64, mesh: &TetMesh, elems: &ElementSet) -> Self {
        let p = &*elems.pattern;
        let x0 = &mesh.positions;
        let mut volume = vec![0.0; p.n_blocks()];
        for (e, map) in elems.scatter.iter().enumerate() {
            // Each of the tet's 6 edges, both slots (a, b) and (b, a).
            for a in 0..4 {
                for b in 0..4 {
                    if a != b {
                        volume[map[4 * a + b] as usize] += elems.volume[e];
                    }
                }
            }
        }
        let n_slots = p.n_blocks();
        let (mut stiffness, mut rest_length) = (vec![0.0; n_slots], vec![0.0; n_slots]);
        let mut rest_direction = vec![Vector3::zeros(); n_slots];
        for i in 0..p.n_rows() {
            for s in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
                let j = p.cols[s] as usize;
                if j == i {
                    continue;
                }
                let d = x0[j] - x0[i];
                let l = d.norm();
                rest_length[s] = l;
                rest_direction[s] = d / l;
                stiffness[s] = youngs * volume[s] / (l * l);
            }
        }
        Self {
            stiffness,
            rest_length,
            rest_direction,
        }
    }

    /// The rest stiffness `K⁰` on `pattern` (the Hookean tangent at rest).
    pub fn rest_stiffness(&self, pattern: &Arc<crate::linalg::BlockPattern>) -> BlockCsr {
        let mut k = BlockCsr::zeros(Arc::clone(pattern));
        let p = &**pattern;
        for i in 0..p.n_rows() {
            let d = p.diag[i] as usize;
            for s in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
                if s == d {
                    continue;
                }
                let n = self.rest_direction[s];
                let block = self.stiffness[s] * n * n.transpose();
                k.values[s] -= block;
                k.values[d] += block;
            }
        }
        k
    }
}

/// The unwarped spring network (`Hookean` or `Linear`). Build it with [`MassSpring::new`];
/// the warped one is a [`Warped`] on the network's `K⁰` ([`build`]).
#[derive(Debug)]
pub struct MassSpring {
    net: SpringNetwork,
    /// `Linear`: `K⁰` and the rest positions.
    linear: Option<(BlockCsr, Vec<Vector3<f64>>)>,
}

impl MassSpring {
    /// Hookean springs (`linear = false`) or their linearization at rest (`linear = true`) on
    /// the edges of `mesh`, for Young's modulus `youngs`.
    pub fn new(youngs: f64, linear: bool, mesh: &TetMesh, elems: &ElementSet) -> Self {
        let net = SpringNetwork::new(youngs, mesh, elems);
        let linear = linear.then(|| (net.rest_stiffness(&elems.pattern), mesh.positions.clone()));
        Self { net, linear }
    }

    /// The network's rest data.
    pub fn network(&self) -> &SpringNetwork {
        &self.net
    }

    /// The force of row `i`'s springs on vertex `i`.
    #[inline]
    fn vertex_force(
        &self,
        p: &crate::linalg::BlockPattern,
        i: usize,
        x: &[Vector3<f64>],
    ) -> Vector3<f64> {
        let net = &self.net;
        let mut f = Vector3::zeros();
        for s in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
            let j = p.cols[s] as usize;
            if j == i {
                continue;
            }
            let d = x[j] - x[i];
            if self.linear.is_some() {
                let n = net.rest_direction[s];
                f += net.stiffness[s] * n.dot(&d) * n - net.stiffness[s] * net.rest_length[s] * n;
            } else {
                let l = d.norm();
                if l > 0.0 {
                    f += net.stiffness[s] * (1.0 - net.rest_length[s] / l) * d;
                }
            }
        }
        f
    }
}

impl ForceModel for MassSpring {
    fn name(&self) -> &'static str {
        "mass_spring"
    }

    fn add_forces(&self, elems: &ElementSet, x: &[Vector3<f64>], f: &mut [Vector3<f64>]) {
        let p = &*elems.pattern;
        par::for_each_mut(&mut f[..p.n_rows()], |i, fi| {
            *fi += self.vertex_force(p, i, x)
        });
    }

    fn add_tangent(&self, elems: &ElementSet, x: &[Vector3<f64>], scale: f64, k: &mut BlockCsr) {
        let p = &*elems.pattern;
        let same = Arc::ptr_eq(&k.pattern, &elems.pattern) || *k.pattern == *p;
        let kp = Arc::clone(&k.pattern);
        let slot = |s: usize, i: usize, j: usize| {
            if same {
                s
            } else {
                kp.slot(i, j)
                    .expect("the matrix's pattern holds the body's blocks")
            }
        };
        let net = &self.net;
        for i in 0..p.n_rows() {
            let d = p.diag[i] as usize;
            let mut diag = Matrix3::zeros();
            for s in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
                let j = p.cols[s] as usize;
                if s == d {
                    continue;
                }
                let h = if let Some((k0, _)) = &self.linear {
                    -k0.values[s]
                } else {
                    let e = x[j] - x[i];
                    let l = e.norm();
                    if l == 0.0 {
                        continue;
                    }
                    let u = e / l;
                    let uu = u * u.transpose();
                    net.stiffness[s]
                        * (uu + (1.0 - net.rest_length[s] / l) * (Matrix3::identity() - uu))
                };
                k.values[slot(s, i, j)] -= scale * h;
                diag += h;
            }
            k.values[slot(d, i, i)] += scale * diag;
        }
    }

    fn energy(&self, elems: &ElementSet, x: &[Vector3<f64>]) -> Option<f64> {
        let p = &*elems.pattern;
        let net = &self.net;
        Some(par::sum_auto(p.n_rows(), |i| {
            // Each spring once: from its lower-indexed end (slots right of the diagonal).
            (p.diag[i] as usize + 1..p.row_ptr[i + 1] as usize)
                .map(|s| {
                    let j = p.cols[s] as usize;
                    let d = x[j] - x[i];
                    let stretch = match &self.linear {
                        Some((_, x0)) => net.rest_direction[s].dot(&(d - (x0[j] - x0[i]))),
                        None => d.norm() - net.rest_length[s],
                    };
                    0.5 * net.stiffness[s] * stretch * stretch
                })
                .sum::<f64>()
        }))
    }

    fn tangent_is_constant(&self) -> bool {
        self.linear.is_some()
    }
}

/// The spring-network model of `law` for Lamé parameters `lame` (only their `E` is used).
pub fn build(
    law: SpringForce,
    lame: Lame,
    mesh: &TetMesh,
    elems: &ElementSet,
) -> Box<dyn ForceModel> {
    let youngs = youngs_of(lame);
    match law {
        SpringForce::Hookean => Box::new(MassSpring::new(youngs, false, mesh, elems)),
        SpringForce::Linear => Box::new(MassSpring::new(youngs, true, mesh, elems)),
        SpringForce::Warped {
            field,
            ghost_correction,
        } => {
            let k0 = SpringNetwork::new(youngs, mesh, elems).rest_stiffness(&elems.pattern);
            Box::new(Warped::with_rest_stiffness(
                k0,
                None,
                field,
                ghost_correction,
                mesh,
                elems,
            ))
        }
    }
}

#[cfg(test)]
mod tests;
