//! Mass matrices: lumped (diagonal) and consistent (linear shape functions).

use super::ElementSet;
use crate::linalg::{par, BlockCsr};
use nalgebra::{Matrix3, Vector3};

/// Which mass matrix a body uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MassKind {
    /// Each tet gives `ρV/4` to each of its vertices.
    #[default]
    Lumped,
    /// `M_ab = ρV/20 · (1 + δ_ab) · I` per tet (exact for linear shape functions).
    Consistent,
}

/// A body's mass matrix. Both kinds keep the per-vertex lumped masses (row sums), which
/// give gravity forces and momentum.
#[derive(Debug, Clone)]
pub struct Mass {
    pub kind: MassKind,
    /// Row sums of the mass matrix (kg per vertex).
    pub lumped: Vec<f64>,
    /// Consistent mass: one scalar per block slot of the element pattern (`M_ij = m_ij · I`).
    pub consistent: Option<Vec<f64>>,
}

impl Mass {
    pub fn new(elems: &ElementSet, n_vertices: usize, density: f64, kind: MassKind) -> Self {
        let mut lumped = vec![0.0; n_vertices];
        for (t, &v) in elems.tets.iter().zip(&elems.volume) {
            for &i in t {
                lumped[i as usize] += density * v / 4.0;
            }
        }
        let consistent = (kind == MassKind::Consistent).then(|| {
            let mut m = vec![0.0; elems.pattern.n_blocks()];
            for (map, &v) in elems.scatter.iter().zip(&elems.volume) {
                for (k, &slot) in map.iter().enumerate() {
                    let diag = if k / 4 == k % 4 { 2.0 } else { 1.0 };
                    m[slot as usize] += density * v / 20.0 * diag;
                }
            }
            m
        });
        Self {
            kind,
            lumped,
            consistent,
        }
    }

    pub fn total(&self) -> f64 {
        self.lumped.iter().sum()
    }

    /// `out = M v`.
    pub fn mul_vec(&self, elems: &ElementSet, v: &[Vector3<f64>], out: &mut [Vector3<f64>]) {
        match &self.consistent {
            None => par::for_each_mut(out, |i, o| *o = self.lumped[i] * v[i]),
            Some(m) => {
                let p = &*elems.pattern;
                par::for_each_mut(out, |i, o| {
                    let mut acc = Vector3::zeros();
                    for k in p.row_ptr[i] as usize..p.row_ptr[i + 1] as usize {
                        acc += m[k] * v[p.cols[k] as usize];
                    }
                    *o = acc;
                });
            }
        }
    }

    /// `A += scale · M` (A on the element pattern).
    pub fn add_to(&self, a: &mut BlockCsr, scale: f64) {
        match &self.consistent {
            None => {
                for (i, &m) in self.lumped.iter().enumerate() {
                    a.values[a.pattern.diag[i] as usize] +=
                        Matrix3::from_diagonal_element(scale * m);
                }
            }
            Some(m) => {
                for (val, &mk) in a.values.iter_mut().zip(m) {
                    *val += Matrix3::from_diagonal_element(scale * mk);
                }
            }
        }
    }

    /// Kinetic energy `½ vᵀ M v` (`scratch` has one entry per vertex).
    pub fn kinetic_energy(
        &self,
        elems: &ElementSet,
        v: &[Vector3<f64>],
        scratch: &mut [Vector3<f64>],
    ) -> f64 {
        self.mul_vec(elems, v, scratch);
        0.5 * par::sum_auto(v.len(), |i| v[i].dot(&scratch[i]))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mesh::{box_grid, BoxGrid, TetSplit};

    #[test]
    fn both_masses_total_rho_v_and_agree_on_rigid_motion() {
        let m = box_grid(&BoxGrid {
            cells: [2, 3, 2],
            cell_size: Vector3::new(0.1, 0.2, 0.3),
            origin: Vector3::zeros(),
            split: TetSplit::Six,
        });
        let es = ElementSet::new(&m);
        let rho = 1000.0;
        let lumped = Mass::new(&es, m.n_vertices(), rho, MassKind::Lumped);
        let cons = Mass::new(&es, m.n_vertices(), rho, MassKind::Consistent);
        let expected = rho * m.volume();
        assert!((lumped.total() - expected).abs() < 1e-9);
        assert!((cons.total() - expected).abs() < 1e-9);
        // Uniform velocity: both give ½ m |v|²; the consistent row sums equal the lumped masses.
        let v = vec![Vector3::new(1.0, -2.0, 0.5); m.n_vertices()];
        let mut s = vec![Vector3::zeros(); m.n_vertices()];
        let ke = 0.5 * expected * v[0].norm_squared();
        assert!((lumped.kinetic_energy(&es, &v, &mut s) - ke).abs() < 1e-9);
        assert!((cons.kinetic_energy(&es, &v, &mut s) - ke).abs() < 1e-9);
        // The consistent matrix is positive definite: a checkerboard velocity keeps positive KE.
        let w: Vec<_> = (0..m.n_vertices())
            .map(|i| Vector3::x() * if i % 2 == 0 { 1.0 } else { -1.0 })
            .collect();
        assert!(cons.kinetic_energy(&es, &w, &mut s) > 0.0);
    }
}
