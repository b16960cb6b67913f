//! Stiffness warping (Müller, McMillan, Dorsey, Jagnow & Cutler 2002, §3): the constant linear
//! stiffness `K` of the rest state, warped along a per-vertex rotation field `R_i`.
//!
//! Precomputed once: the global rest stiffness `K` on the body's block pattern (eq. 6–7, the
//! element matrices summed), the rest positions, the rest data of the rotation field and the
//! vertex weights of the ghost correction. Per step: the rotation field, the forces from the
//! stored rows of `K`, and the tangent by rotating the stored blocks. With the default
//! [`WarpedTangent::Rotated`] no element is visited during a step.
//!
//! Forces (eq. 12, with the sign of an internal force):
//! `f_i = −R_i Σ_j K_ij (R_iᵀ x_j − x⁰_j)`, evaluated as
//! `f_i = −R_i Σ_{j≠i} K_ij (R_iᵀ(x_j − x_i) − (x⁰_j − x⁰_i))`, equal to it because every block
//! row of `K` sums to zero (`K` annihilates translations); the edge form is exact under any
//! translation and cancels to round-off at rest. The rest part `c_i = Σ_j K_ij (x⁰_j − x⁰_i)`
//! is stored, so a step evaluates `f_i = −R_i (Σ_j K_ij R_iᵀ(x_j − x_i) − c_i)`.
//!
//! Rotation field (§3.1, [`RotationField`]): edge frames (eq. 16) or least squares over the
//! vertex's edges (eq. 14–15); see `frames.rs`. A rigid motion `x = Q x⁰ + t` gives `R_i = Q`
//! for every vertex, hence zero forces.
//!
//! Ghost forces (§3, end): eq. 12 does not give zero net force and torque. With
//! `ghost_correction`, the net force `F` and torque `T` (about the centre `c` of the vertex
//! weights `w_i`) of the warped forces are removed by subtracting a weighted rigid field:
//! `f_i ← f_i − w_i (a + α × (x_i − c))` with `a = F/W`, `α = I_c⁻¹ T`,
//! `I_c = Σ w_i (|r_i|² I − r_i r_iᵀ)`, `r_i = x_i − c`, `W = Σ w_i`. Then `Σ f_i = 0` and
//! `Σ r_i × f_i = 0` exactly: this is the oblique projection `f ← (I − W Φ (ΦᵀWΦ)⁻¹ Φᵀ) f`,
//! `Φ` the 6 rigid velocity fields at `x`. With weights proportional to the lumped masses the
//! subtracted force is the one that would give the body exactly the rigid acceleration the
//! ghost force gave it. The weights are the vertices' rest volumes (a quarter of each adjacent
//! tet), proportional to the lumped masses of a body of one density. (Müller instead applies
//! Desbrun's correction after each step; the force projection is its per-evaluation form.)
//!
//! Tangent: the frozen-frame Jacobian of eq. 12, `−∂f_i/∂x_j = R_i K_ij R_iᵀ`, is not
//! symmetric (Hauth & Straßer 2004 §5: "a rotation per node breaks symmetry"), and the linear
//! solvers need a symmetric matrix. The model uses the symmetric warped stiffness
//! `K̃ = B K Bᵀ`, `B = diag(R_i)`, block `(i, j)` = `R_i K_ij R_jᵀ` (the matrix of §3.2 with
//! the column's own rotation), positive semi-definite. Two ways to build it ([`WarpedTangent`]):
//! - `Rotated` (default): rotate the stored blocks of `K` (`blocks.rs`), a pass over the
//!   block rows. The ghost correction acts on the forces only: `K̃` has the rigid velocity
//!   fields in its null space only where the rotation field is uniform (at rest, under a rigid
//!   motion). On a deformed free body `Φᵀ K̃ ≠ 0`, so a linearized implicit step, whose
//!   momentum change is `−h² Φᵀ K̃ v⁺`, no longer keeps momentum exactly (measured in
//!   `tests/warped.rs`). A correction that restores the null space would have to be
//!   `P K̃`, dense of rank 6, or be solved for over the whole vertex graph every step.
//!   The linearized backward Euler step does not even rotate the blocks: with lumped mass
//!   its matrix is `B A⁰ Bᵀ` with `A⁰` constant, and it solves in the vertices' frames with
//!   `A⁰` assembled (and factorized or preconditioned) once ([`ForceModel::frame_tangent`],
//!   `time::System::frames`).
//! - `Element`: `Σ_e B_e K_e B_eᵀ` element by element (`element.rs`), the same matrix, and
//!   with `ghost_correction` each element's part projected off the element's rigid fields,
//!   which puts every rigid field of the body in the null space and makes the linearized
//!   implicit step keep both momenta to round-off, at 25–40× the cost of `Rotated`
//!   (EXPERIMENTS.md, "Warping as Müller does it").
//!
//! What either tangent ignores: the derivative of the rotation field, and the exact derivative
//! of the ghost correction. At rest and under a rigid motion the tangent is exact.
//!
//! Energy: none. Each row of eq. 12 uses its own rotation, so the forces are not the gradient
//! of any function of `x` (their Jacobian is not symmetric); `energy` returns `None`.

mod blocks;
mod element;
mod frames;

use super::{linear_stress, ForceModel, FrameTangent, Lame, RotationField};
use crate::fem::polar;
use crate::fem::ElementSet;
use crate::linalg::par::{self, SharedMut};
use crate::linalg::BlockCsr;
use crate::mesh::TetMesh;
use frames::RotationFieldData;
use nalgebra::{Matrix3, Vector3};
use std::sync::Mutex;

/// How the warped model builds its tangent (see the module notes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WarpedTangent {
    /// Rotate the stored blocks of the rest stiffness: `R_i K_ij R_jᵀ` (Müller et al. 2002
    /// §3.2). Fast; the ghost correction acts on the forces only.
    #[default]
    Rotated,
    /// Assemble `R_a K_e,ab R_bᵀ` element by element, projected off each element's rigid
    /// fields with the ghost correction (exact momentum in a linearized implicit step).
    Element,
}

/// The warped-stiffness model. Build it with [`Warped::new`].
#[derive(Debug)]
pub struct Warped {
    /// The FEM material whose rest stiffness is warped; `None` for another `K⁰` (the spring
    /// network of [`super::mass_spring`]), which has no element tangent and no stress.
    lame: Option<Lame>,
    ghost_correction: bool,
    tangent: WarpedTangent,
    /// Rest stiffness `K` on the body's pattern, assembled once.
    k0: BlockCsr,
    /// For each slot of `k0`'s pattern, the slot of the transposed block (`blocks.rs`).
    transpose: Vec<u32>,
    /// The rest part of each vertex's force sum, `c_i = Σ_j K_ij (x⁰_j − x⁰_i)`.
    rest_force: Vec<Vector3<f64>>,
    /// Per-vertex rotations `R_i` from the last `update_frames`.
    rotations: Vec<Matrix3<f64>>,
    /// Rest data of the rotation field (§3.1).
    field: RotationFieldData,
    /// Ghost correction: vertex weights (rest volumes) and their sum.
    weights: Vec<f64>,
    total_weight: f64,
    /// Per-chunk partial moments of the force pass (a workspace behind `&self`).
    partials: Mutex<Vec<Moments>>,
}

/// Sums over a chunk of vertices, relative to a reference point `p`: net force, torque about
/// `p`, `Σ w r` and `Σ w r rᵀ` with `r = x − p`.
#[derive(Debug, Clone, Copy, Default)]
struct Moments {
    force: Vector3<f64>,
    torque: Vector3<f64>,
    first: Vector3<f64>,
    second: Matrix3<f64>,
}

impl Warped {
    /// The model for the body with rest `mesh` and element data `elems` (built from it):
    /// assembles the rest stiffness and the per-vertex rest data once.
    pub fn new(
        lame: Lame,
        field: RotationField,
        ghost_correction: bool,
        mesh: &TetMesh,
        elems: &ElementSet,
    ) -> Self {
        let mut k0 = BlockCsr::zeros(elems.pattern.clone());
        elems.scatter_blocks(&mut k0, |e, sink| {
            for a in 0..4 {
                for b in a..4 {
                    let k = element::linear_block(&elems.grad[e], elems.volume[e], lame, a, b);
                    sink.add_symmetric(a, b, &k);
                }
            }
        });
        Self::with_rest_stiffness(k0, Some(lame), field, ghost_correction, mesh, elems)
    }

    /// The model warping the rest stiffness `k0` (on `elems.pattern`, symmetric, every block
    /// row summing to zero): the FEM one of material `lame` ([`Warped::new`]) or, with
    /// `lame = None`, another, such as a spring network's (Müller §3 warps any constant
    /// stiffness). Without `lame` the tangent is always [`WarpedTangent::Rotated`] and the
    /// model reports no stress.
    pub fn with_rest_stiffness(
        k0: BlockCsr,
        lame: Option<Lame>,
        field: RotationField,
        ghost_correction: bool,
        mesh: &TetMesh,
        elems: &ElementSet,
    ) -> Self {
        let n = mesh.n_vertices();
        let x0 = &mesh.positions;
        let mut weights = vec![0.0; n];
        for (t, &v) in elems.tets.iter().zip(&elems.volume) {
            for &i in t {
                weights[i as usize] += 0.25 * v;
            }
        }
        let total_weight = weights.iter().sum();
        let p = &*elems.pattern;
        let rest_force = (0..n)
            .map(|i| {
                (p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize)
                    .map(|s| k0.values[s] * (x0[p.cols[s] as usize] - x0[i]))
                    .sum()
            })
            .collect();
        Self {
            lame,
            ghost_correction,
            tangent: WarpedTangent::default(),
            field: RotationFieldData::new(field, x0, p),
            transpose: blocks::transpose_slots(p),
            k0,
            rest_force,
            rotations: vec![Matrix3::identity(); n],
            weights,
            total_weight,
            partials: Mutex::new(vec![Moments::default(); par::n_chunks(n)]),
        }
    }

    /// The model with tangent `tangent` instead of the default [`WarpedTangent::Rotated`]
    /// (ignored without a FEM material: the element tangent needs one).
    pub fn with_tangent(mut self, tangent: WarpedTangent) -> Self {
        if self.lame.is_some() {
            self.tangent = tangent;
        }
        self
    }

    /// The FEM material, when the warped stiffness is a FEM one.
    pub fn lame(&self) -> Option<Lame> {
        self.lame
    }

    /// How the tangent is built.
    pub fn tangent(&self) -> WarpedTangent {
        self.tangent
    }

    /// Per-vertex rotations of the last `update_frames`.
    pub fn rotations(&self) -> &[Matrix3<f64>] {
        &self.rotations
    }

    /// The warped force of vertex `i` (eq. 12), `−R_i (Σ_j K_ij R_iᵀ(x_j − x_i) − c_i)` (the
    /// diagonal slot adds `K_ii · 0`).
    #[inline]
    fn vertex_force(&self, i: usize, x: &[Vector3<f64>]) -> Vector3<f64> {
        let p = &*self.k0.pattern;
        let r = &self.rotations[i];
        let xi = x[i];
        let mut acc = Vector3::zeros();
        for s in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
            let j = p.cols[s] as usize;
            acc += self.k0.values[s] * r.tr_mul(&(x[j] - xi));
        }
        r * (self.rest_force[i] - acc)
    }

    /// Removes the net force and torque of the warped forces (already added into `f`), given
    /// their moments about `p`: `f_i −= w_i (a + α × (x_i − c))` (see the module notes).
    fn remove_rigid_part(
        &self,
        m: &Moments,
        p: &Vector3<f64>,
        x: &[Vector3<f64>],
        f: &mut [Vector3<f64>],
    ) {
        let w = self.total_weight;
        if w <= 0.0 {
            return;
        }
        let d = m.first / w; // c − p
        let c = p + d;
        let torque = m.torque - d.cross(&m.force);
        let inertia = Matrix3::from_diagonal_element(m.second.trace())
            - m.second
            - w * (Matrix3::from_diagonal_element(d.norm_squared()) - d * d.transpose());
        let a = m.force / w;
        // A body squeezed onto a line has no inertia about it: leave its torque alone.
        let alpha = inertia
            .try_inverse()
            .map_or_else(Vector3::zeros, |inv| inv * torque);
        let weights = &self.weights;
        par::for_each_mut(f, |i, fi| {
            *fi -= weights[i] * (a + alpha.cross(&(x[i] - c)))
        });
    }
}

impl ForceModel for Warped {
    fn name(&self) -> &'static str {
        if self.lame.is_some() {
            "warped"
        } else {
            "mass_spring"
        }
    }

    /// Refreshes the vertex rotations (§3.1) at `x` (see `frames.rs`).
    fn update_frames(&mut self, _elems: &ElementSet, x: &[Vector3<f64>]) {
        self.field.update(&self.k0.pattern, x, &mut self.rotations);
    }

    fn add_forces(&self, _elems: &ElementSet, x: &[Vector3<f64>], f: &mut [Vector3<f64>]) {
        if !self.ghost_correction {
            par::for_each_mut(f, |i, fi| *fi += self.vertex_force(i, x));
            return;
        }
        let n = x.len();
        if n == 0 {
            return;
        }
        // One pass adds the forces and gathers their moments about p = x₀ (a point of the
        // body, so the second moments do not cancel catastrophically far from the origin).
        let p = x[0];
        let out = SharedMut(f.as_mut_ptr());
        let mut partials = self.partials.lock().unwrap_or_else(|e| e.into_inner());
        par::chunked(n, par::PAR_MIN, &mut partials[..], |range| {
            let mut m = Moments::default();
            for i in range {
                let fw = self.vertex_force(i, x);
                // SAFETY: chunks are disjoint ranges of 0..n and `f` has n entries.
                unsafe { *out.ptr().add(i) += fw };
                let r = x[i] - p;
                let wr = self.weights[i] * r;
                m.force += fw;
                m.torque += r.cross(&fw);
                m.first += wr;
                m.second += wr * r.transpose();
            }
            m
        });
        let total = partials[..par::n_chunks(n)]
            .iter()
            .fold(Moments::default(), |acc, m| Moments {
                force: acc.force + m.force,
                torque: acc.torque + m.torque,
                first: acc.first + m.first,
                second: acc.second + m.second,
            });
        drop(partials);
        self.remove_rigid_part(&total, &p, x, f);
    }

    /// `B K Bᵀ`: the stored blocks rotated (`Rotated`), or assembled element by element and
    /// projected off each element's rigid fields with the ghost correction (`Element`); see
    /// the module notes.
    fn add_tangent(&self, elems: &ElementSet, x: &[Vector3<f64>], scale: f64, k: &mut BlockCsr) {
        match (self.tangent, self.lame) {
            (WarpedTangent::Element, Some(lame)) => element::add_element_tangent(
                elems,
                lame,
                &self.rotations,
                self.ghost_correction,
                x,
                scale,
                k,
            ),
            _ => blocks::add_rotated_blocks(&self.k0, &self.transpose, &self.rotations, scale, k),
        }
    }

    /// `Rotated`: `B K Bᵀ` with the stored rest stiffness `K`. (`Element` projects each
    /// element's part off its rigid fields, which no per-vertex frame undoes.)
    fn frame_tangent(&self) -> Option<FrameTangent<'_>> {
        (self.tangent == WarpedTangent::Rotated).then_some(FrameTangent {
            rotations: &self.rotations,
            rest: &self.k0,
        })
    }

    /// None: the warped forces are not the gradient of an energy (see the module notes).
    fn energy(&self, _elems: &ElementSet, _x: &[Vector3<f64>]) -> Option<f64> {
        None
    }

    /// The rotated linear stress `R_e σ_lin(R_eᵀF) R_eᵀ` of each element, with `R_e` the
    /// rotation nearest to the mean of its vertex rotations (the polar rotation of their sum):
    /// a small-strain stress, as the model is.
    fn cauchy_stress(
        &self,
        elems: &ElementSet,
        x: &[Vector3<f64>],
        out: &mut [Matrix3<f64>],
    ) -> bool {
        let Some(lame) = self.lame else {
            return false;
        };
        par::for_each_mut(&mut out[..elems.len()], |e, s| {
            let sum: Matrix3<f64> = elems.tets[e]
                .iter()
                .map(|&i| self.rotations[i as usize])
                .sum();
            let r = polar::rotation(&sum);
            let f = elems.deformation_gradient(e, x);
            *s = r * linear_stress(&(r.transpose() * f), lame) * r.transpose();
        });
        true
    }
}

#[cfg(test)]
mod tests;
