//! Linear elasticity (Cauchy strain, constant stiffness): Müller et al. 2002 §2.3, eq. 6–7.
//! `f = −K (x − x₀)`, computed element-wise as `f_a = −V σ(F) g_a` with `σ` the linear stress
//! of the displacement gradient `F − I`. Not rotation invariant: rotated bodies grow.

use super::{add_rotated_linear_blocks, linear_energy_density, linear_stress, ForceModel, Lame};
use crate::fem::ElementSet;
use crate::linalg::{par, BlockCsr};
use nalgebra::{Matrix3, Vector3};

#[derive(Debug, Clone)]
pub struct Linear {
    pub lame: Lame,
}

impl Linear {
    pub fn new(lame: Lame) -> Self {
        Self { lame }
    }
}

impl ForceModel for Linear {
    fn name(&self) -> &'static str {
        "linear"
    }

    fn add_forces(&self, elems: &ElementSet, x: &[Vector3<f64>], f: &mut [Vector3<f64>]) {
        elems.scatter_forces(f, |e| {
            let p = linear_stress(&elems.deformation_gradient(e, x), self.lame);
            elems.stress_forces(e, &p)
        });
    }

    fn add_tangent(&self, elems: &ElementSet, _x: &[Vector3<f64>], scale: f64, k: &mut BlockCsr) {
        let id = Matrix3::identity();
        elems.scatter_blocks(k, |e, sink| {
            add_rotated_linear_blocks(sink, &elems.grad[e], &id, elems.volume[e], self.lame, scale)
        });
    }

    fn energy(&self, elems: &ElementSet, x: &[Vector3<f64>]) -> Option<f64> {
        Some(elems.sum(|e| {
            elems.volume[e] * linear_energy_density(&elems.deformation_gradient(e, x), self.lame)
        }))
    }

    fn tangent_is_constant(&self) -> bool {
        true
    }

    /// Small-strain theory: the Cauchy stress is the linear stress of `F`.
    fn cauchy_stress(
        &self,
        elems: &ElementSet,
        x: &[Vector3<f64>],
        out: &mut [Matrix3<f64>],
    ) -> bool {
        par::for_each_mut(&mut out[..elems.len()], |e, s| {
            *s = linear_stress(&elems.deformation_gradient(e, x), self.lame);
        });
        true
    }
}
