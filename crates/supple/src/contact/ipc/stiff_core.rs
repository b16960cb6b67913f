//! Dynamic rigid cores (Müller et al. 2002 §4.3; [`crate::constraint::rigid`]) inside the
//! coupled step: a core is made rigid by the world's projection *after* the step, and that
//! projection knows nothing of contact. Left soft in the minimization, a core pressed on the
//! ground deformed there by centimetres, and making it rigid again either drove vertices into
//! the ground (`scenes/guide/rigid_core.toml` stopped at step 24) or, cut back to the free
//! part of its path, left the core bent. So the minimization itself holds each core close to
//! a rigid motion, with a stiff as-rigid-as-possible potential on its tets,
//!
//! `Ψ_core(x) = Σ_t μ_c V_t ‖F_t − R(F_t)‖²_F`, `F_t = Σ_a x_a ⊗ ∇N_a`, `R` = polar(F),
//!
//! (the ARAP energy; Sorkine & Alexa 2007, in the FEM form of Chao et al. 2010 "A Simple
//! Geometric Model for Elastic Deformations" eq. 4), with `μ_c = CORE_STIFFNESS · μ` of the
//! body. Its gradient is exact without the rotation's derivative (R minimizes ‖F − R‖, the
//! envelope theorem): `∂Ψ/∂x_a = 2 μ_c V (F − R) ∇N_a`. The Hessian taken is the one with R
//! held, `2 μ_c V (∇N_a · ∇N_b) I`: a constant, positive semi-definite Laplacian (the
//! local–global / projective-dynamics Hessian), so Newton stays a descent method. The
//! potential is invariant under rigid motions, so it changes neither momentum nor the core's
//! rigid motion: only its deformation, which the projection then removes by micrometres.

use crate::body::Body;
use crate::fem::polar;
use crate::linalg::BlockCsr;
use nalgebra::{Matrix3, Vector3};

/// `μ_c / μ`: the core's tets are this much stiffer than the body's material in the
/// minimization. Measured on the tilted soft bar landing on the ground (`tests/rigid.rs`,
/// E = 2·10⁴ Pa, dt 10 ms, 100 steps): the projection's path was cut in 21 / 23 / 1 steps
/// and the core's worst shape error was 2.8 mm / 0.46 mm / 36 µm at 10² / 10³ / 10⁴, and
/// the guide's rigid-core scene took 4.6 Newton iterations a step at 10³, 2.4 at 10⁴.
pub const CORE_STIFFNESS: f64 = 1e4;

/// One core tet: its vertices in the island's numbering, shape gradients and `μ_c V`.
#[derive(Debug, Clone)]
struct CoreTet {
    v: [usize; 4],
    grad: [Vector3<f64>; 4],
    weight: f64,
}

/// The ARAP potential of every dynamic core of the island.
#[derive(Debug, Clone, Default)]
pub struct StiffCores {
    tets: Vec<CoreTet>,
}

impl StiffCores {
    /// Adds the tets of `body` (its vertices from `offset` in the island) whose four vertices
    /// are all in `core`.
    pub fn add(&mut self, body: &Body, offset: usize, core: &[u32]) {
        let mut inside = vec![false; body.n_vertices()];
        for &v in core {
            inside[v as usize] = true;
        }
        let elems = &body.elems;
        for (t, tet) in elems.tets.iter().enumerate() {
            if tet.iter().all(|&v| inside[v as usize]) {
                self.tets.push(CoreTet {
                    v: tet.map(|v| offset + v as usize),
                    grad: elems.grad[t],
                    weight: CORE_STIFFNESS * body.lame.mu * elems.volume[t],
                });
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.tets.is_empty()
    }

    /// `F − R(F)` of a tet at `x`.
    fn deviation(t: &CoreTet, x: &[Vector3<f64>]) -> Matrix3<f64> {
        let f: Matrix3<f64> = (0..4).map(|a| x[t.v[a]] * t.grad[a].transpose()).sum();
        f - polar::rotation(&f)
    }

    /// `Ψ_core(x)`.
    pub fn energy(&self, x: &[Vector3<f64>]) -> f64 {
        (self.tets.iter())
            .map(|t| t.weight * Self::deviation(t, x).norm_squared())
            .sum()
    }

    /// `g += scale · ∇Ψ_core(x)`.
    pub fn add_gradient(&self, x: &[Vector3<f64>], scale: f64, g: &mut [Vector3<f64>]) {
        for t in &self.tets {
            let d = Self::deviation(t, x);
            for a in 0..4 {
                g[t.v[a]] += scale * 2.0 * t.weight * (d * t.grad[a]);
            }
        }
    }

    /// `a += scale · H`, `H` the rotation-held Hessian (see the module notes); every block
    /// is in the body's element pattern, which the coupled one contains.
    pub fn add_hessian(&self, scale: f64, a: &mut BlockCsr) {
        for t in &self.tets {
            for i in 0..4 {
                for j in 0..4 {
                    let slot = (a.pattern.slot(t.v[i], t.v[j]))
                        .expect("a core tet's blocks are in its body's pattern");
                    let k = scale * 2.0 * t.weight * t.grad[i].dot(&t.grad[j]);
                    a.values[slot] += Matrix3::from_diagonal_element(k);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::BodyDesc;
    use crate::fem::material::{CorotationalTangent, ModelKind};
    use crate::mesh::{box_grid, BoxGrid, TetSplit};

    fn cube() -> (Body, StiffCores) {
        let mesh = box_grid(&BoxGrid {
            cells: [2, 2, 2],
            cell_size: Vector3::repeat(0.1),
            origin: Vector3::zeros(),
            split: TetSplit::Five,
        });
        let model = ModelKind::corotational(CorotationalTangent::Rotated);
        let body = Body::new(BodyDesc::new("cube", mesh, model, 1e4, 0.3, 1000.0)).unwrap();
        let mut cores = StiffCores::default();
        let all: Vec<u32> = (0..body.n_vertices() as u32).collect();
        cores.add(&body, 0, &all);
        (body, cores)
    }

    fn deformed(body: &Body) -> Vec<Vector3<f64>> {
        let r = nalgebra::Rotation3::from_euler_angles(0.4, -0.3, 1.1);
        (body.mesh.positions.iter().enumerate())
            .map(|(i, p)| {
                let k = i as f64;
                r * p + 0.01 * Vector3::new((1.3 * k).sin(), (0.7 * k).cos(), (2.1 * k).sin())
            })
            .collect()
    }

    #[test]
    fn zero_and_force_free_for_rigid_motions() {
        let (body, cores) = cube();
        let r = nalgebra::Rotation3::from_euler_angles(0.4, -0.3, 1.1);
        let x: Vec<_> = (body.mesh.positions.iter())
            .map(|p| r * p + Vector3::new(1.0, -2.0, 0.5))
            .collect();
        assert!(cores.energy(&x) < 1e-20);
        let mut g = vec![Vector3::zeros(); x.len()];
        cores.add_gradient(&x, 1.0, &mut g);
        assert!(g.iter().all(|g| g.norm() < 1e-6));
    }

    #[test]
    fn gradient_is_the_energys_and_keeps_momentum() {
        let (body, cores) = cube();
        let x = deformed(&body);
        let mut g = vec![Vector3::zeros(); x.len()];
        cores.add_gradient(&x, 1.0, &mut g);
        let scale = g.iter().map(|g| g.norm()).fold(0.0, f64::max);
        let eps = 1e-6;
        for i in [0, 7, 13, 26] {
            for k in 0..3 {
                let (mut xp, mut xm) = (x.clone(), x.clone());
                xp[i][k] += eps;
                xm[i][k] -= eps;
                let fd = (cores.energy(&xp) - cores.energy(&xm)) / (2.0 * eps);
                assert!(
                    (fd - g[i][k]).abs() <= 1e-5 * scale,
                    "{i},{k}: {fd} vs {}",
                    g[i][k]
                );
            }
        }
        let (f, torque): (Vector3<f64>, Vector3<f64>) = (
            g.iter().sum(),
            x.iter().zip(&g).map(|(x, g)| x.cross(g)).sum(),
        );
        assert!(f.norm() <= 1e-9 * scale && torque.norm() <= 1e-9 * scale);
    }

    #[test]
    fn hessian_is_positive_semi_definite_and_blind_to_translation() {
        let (body, cores) = cube();
        let mut a = BlockCsr::zeros(body.elems.pattern.clone());
        cores.add_hessian(1.0, &mut a);
        let n = body.n_vertices();
        let t = vec![Vector3::new(0.3, -1.0, 2.0); n];
        let mut y = vec![Vector3::zeros(); n];
        a.mul_vec(&t, &mut y);
        assert!(y.iter().all(|y| y.norm() < 1e-6));
        let x = deformed(&body);
        a.mul_vec(&x, &mut y);
        let q: f64 = x.iter().zip(&y).map(|(x, y)| x.dot(y)).sum();
        assert!(q > 0.0);
    }
}
