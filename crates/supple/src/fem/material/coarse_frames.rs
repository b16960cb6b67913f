//! Corotational elasticity with rotations from a coarser mesh: the fine level of Hauth &
//! Straßer's hierarchical method (2004, §5.2 and §7.3).
//!
//! The fine mesh is nested in a coarse one by octasection ([`crate::mesh::Hierarchy`]): the
//! coarse vertices are the first vertices of the fine mesh, and every fine tet lies in one
//! coarse tet. Each coarse tet `c` gets the polar rotation `R_c` of its deformation gradient
//! `F_c = D_s(x) D_m⁻¹`, taken from the fine positions of its four vertices; every fine tet
//! inside it uses that rotation: `P = R_c σ(R_cᵀ F)` with `σ` the linear stress (one frame per
//! 64 fine tets after two octasections, as in the paper's Example 3). The paper takes `F_c`
//! from the coarse nonlinear solve; here the frame source is the coarse vertices of the field
//! being solved, which coincide with the coarse solution when the levels agree (the way the
//! levels are combined is the hierarchical body's business, not this model's).
//!
//! With the frames fixed, `P` is the exact gradient of `Ψ = Σ V_e Ψ_lin(R_cᵀF_e)` and the
//! exact Hessian is `R_c K_e R_cᵀ`, which is what [`add_tangent`](ForceModel::add_tangent)
//! assembles (the frames' own derivative is left out: they follow the coarse level, not the
//! fine unknowns; Hauth & Straßer solve the fine level with exactly this matrix and PCG). The
//! frames are refreshed by [`update_frames`](ForceModel::update_frames) during every
//! `update_every`-th world step (the paper updates them every 150 ms at dt = 30 ms) and kept
//! in between; the energy always uses the kept frames.
//!
//! A rigid motion `x = Q X + t` of the whole hierarchy gives `F_c = Q`, `R_c = Q`, and every
//! fine element's `R_cᵀ F_e = I`: no force, no energy.

use super::corotational::stress;
use super::{linear_energy_density, ForceModel, Lame};
use crate::fem::gathered::RotatedLinearBlocks;
use crate::fem::{polar, ElementSet};
use crate::linalg::{par, BlockCsr};
use crate::mesh::{Hierarchy, MeshError};
use nalgebra::{Matrix3, Vector3};

/// Fine-level corotational model with one frame per coarse tet (module notes).
#[derive(Debug, Clone)]
pub struct CoarseFrameCorotational {
    pub lame: Lame,
    /// Coarse tets, by vertex index (coarse vertices keep their index in the fine mesh).
    coarse_tets: Vec<[u32; 4]>,
    /// `D_m⁻¹` of each coarse tet at rest.
    coarse_dm_inv: Vec<Matrix3<f64>>,
    /// For each fine element, its coarse tet.
    coarse_of: Vec<u32>,
    /// The kept rotation of each coarse tet.
    frames: Vec<Matrix3<f64>>,
    update_every: u32,
    steps: u64,
    frozen: bool,
    /// Refreshes of `frames` so far: the version of the tangent.
    refreshes: u64,
    /// The tangent's assembler (slot by slot, `fem::gathered`).
    blocks: RotatedLinearBlocks,
}

impl CoarseFrameCorotational {
    /// The model for the finest level of `hierarchy` (whose elements `elems` describes),
    /// refreshing its frames every `update_every` world steps (0 is taken as 1).
    pub fn new(
        lame: Lame,
        hierarchy: &Hierarchy,
        elems: &ElementSet,
        update_every: u32,
    ) -> Result<Self, MeshError> {
        let coarse = &hierarchy.levels[0];
        let coarse_elems = ElementSet::new(coarse);
        let coarse_of = (0..elems.len())
            .map(|t| hierarchy.coarse_tet(t) as u32)
            .collect();
        Ok(Self {
            lame,
            coarse_tets: coarse.tets.clone(),
            coarse_dm_inv: coarse_elems.dm_inv.clone(),
            coarse_of,
            frames: vec![Matrix3::identity(); coarse.tets.len()],
            update_every: update_every.max(1),
            steps: 0,
            frozen: false,
            refreshes: 0,
            blocks: RotatedLinearBlocks::new(elems),
        })
    }

    /// The kept rotation of each coarse tet.
    pub fn frames(&self) -> &[Matrix3<f64>] {
        &self.frames
    }

    fn frame(&self, e: usize) -> &Matrix3<f64> {
        &self.frames[self.coarse_of[e] as usize]
    }
}

impl ForceModel for CoarseFrameCorotational {
    fn name(&self) -> &'static str {
        "coarse_frame_corotational"
    }

    fn begin_step(&mut self) {
        self.frozen = !self.steps.is_multiple_of(u64::from(self.update_every));
        self.steps += 1;
    }

    fn update_frames(&mut self, _elems: &ElementSet, x: &[Vector3<f64>]) {
        if self.frozen {
            return;
        }
        self.refreshes += 1;
        let (tets, dm_inv) = (&self.coarse_tets, &self.coarse_dm_inv);
        // Warm-started polar rotation, as the corotational model's (a frame turns little in
        // one step).
        par::for_each_mut(&mut self.frames, |c, r| {
            let [a, b, cc, d] = tets[c].map(|i| x[i as usize]);
            let f = Matrix3::from_columns(&[b - a, cc - a, d - a]) * dm_inv[c];
            *r = polar::rotation_near(&f, r);
        });
    }

    fn add_forces(&self, elems: &ElementSet, x: &[Vector3<f64>], f: &mut [Vector3<f64>]) {
        elems.scatter_forces(f, |e| {
            let p = stress(&elems.deformation_gradient(e, x), self.frame(e), self.lame);
            elems.stress_forces(e, &p)
        });
    }

    /// `R_c K_e R_cᵀ` depends on the frames alone: kept with them.
    fn tangent_version(&self) -> Option<u64> {
        Some(self.refreshes)
    }

    fn add_tangent(&self, elems: &ElementSet, _x: &[Vector3<f64>], scale: f64, k: &mut BlockCsr) {
        (self.blocks).add(elems, |e| *self.frame(e), self.lame, scale, k);
    }

    /// `Σ V_e Ψ_lin(R_cᵀ F_e)` with the kept frames (a model that keeps frames on purpose).
    fn energy(&self, elems: &ElementSet, x: &[Vector3<f64>]) -> Option<f64> {
        Some(elems.sum(|e| {
            let g = self.frame(e).transpose() * elems.deformation_gradient(e, x);
            elems.volume[e] * linear_energy_density(&g, self.lame)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fem::material::test_support::{force_vs_energy_error, tangent_vs_force_error};
    use crate::fem::material::{Corotational, CorotationalSettings};
    use crate::mesh::{box_grid, BoxGrid, TetSplit};

    fn hierarchy(levels: usize) -> Hierarchy {
        let coarse = box_grid(&BoxGrid {
            cells: [1, 1, 2],
            cell_size: Vector3::new(0.05, 0.05, 0.05),
            origin: Vector3::zeros(),
            split: TetSplit::Five,
        });
        Hierarchy::new(coarse, levels).unwrap()
    }

    fn lame() -> Lame {
        Lame::from_youngs_poisson(1e4, 0.3).unwrap()
    }

    fn forces(
        model: &mut dyn ForceModel,
        es: &ElementSet,
        x: &[Vector3<f64>],
    ) -> Vec<Vector3<f64>> {
        model.update_frames(es, x);
        let mut f = vec![Vector3::zeros(); x.len()];
        model.add_forces(es, x, &mut f);
        f
    }

    fn norm(f: &[Vector3<f64>]) -> f64 {
        f.iter().map(|v| v.norm_squared()).sum::<f64>().sqrt()
    }

    #[test]
    fn a_rigidly_moved_hierarchy_has_no_elastic_force_or_energy() {
        let h = hierarchy(2);
        let fine = h.finest();
        let es = ElementSet::new(fine);
        let mut model = CoarseFrameCorotational::new(lame(), &h, &es, 1).unwrap();
        let q = nalgebra::Rotation3::from_euler_angles(0.7, -1.1, 2.3).into_inner();
        let t = Vector3::new(0.3, -0.2, 1.0);
        let x: Vec<Vector3<f64>> = fine.positions.iter().map(|p| q * p + t).collect();
        // Scale: the forces of a 1 % stretch of the same mesh.
        let stretched: Vec<Vector3<f64>> = fine.positions.iter().map(|p| 1.01 * p).collect();
        let scale = norm(&forces(&mut model, &es, &stretched));
        let f = forces(&mut model, &es, &x);
        assert!(norm(&f) < 1e-10 * scale, "{} vs {scale}", norm(&f));
        let e = model.energy(&es, &x).unwrap();
        assert!(e.abs() < 1e-18, "{e}");
        for r in model.frames() {
            assert!((r - q).norm() < 1e-12);
        }
    }

    #[test]
    fn with_kept_frames_forces_are_the_energy_gradient_and_the_tangent_their_derivative() {
        let h = hierarchy(1);
        let fine = h.finest();
        let es = ElementSet::new(fine);
        let mut model = CoarseFrameCorotational::new(lame(), &h, &es, 2).unwrap();
        let q = nalgebra::Rotation3::from_euler_angles(0.3, 0.5, -0.4).into_inner();
        let x: Vec<Vector3<f64>> = fine
            .positions
            .iter()
            .enumerate()
            .map(|(i, p)| {
                q * (p + 0.004 * Vector3::new((i as f64).sin(), (2.0 * i as f64).cos(), 0.5))
            })
            .collect();
        // Refresh at x, then keep the frames (update_every = 2: the second step keeps them).
        model.update_frames(&es, &x);
        model.begin_step();
        model.begin_step();
        let fe = force_vs_energy_error(&mut model, &es, &x);
        let kf = tangent_vs_force_error(&mut model, &es, &x);
        assert!(fe < 1e-7, "force vs energy {fe}");
        assert!(kf < 1e-7, "tangent vs force {kf}");
    }

    /// When the coarse level barely deforms, one frame per coarse tet is as good as each fine
    /// tet's own: the forces agree with the plain corotational model's up to the small strain.
    #[test]
    fn agrees_with_plain_corotational_when_the_coarse_level_barely_deforms() {
        let h = hierarchy(2);
        let fine = h.finest();
        let es = ElementSet::new(fine);
        let mut coarse_frames = CoarseFrameCorotational::new(lame(), &h, &es, 1).unwrap();
        let mut plain = Corotational::new(lame(), CorotationalSettings::default(), &es);
        let q = nalgebra::Rotation3::from_euler_angles(1.0, 0.2, -0.6).into_inner();
        for eps in [1e-2, 1e-3] {
            // A rotated small fine-scale wiggle: the coarse level stays (nearly) rigid.
            let x: Vec<Vector3<f64>> = fine
                .positions
                .iter()
                .map(|p| {
                    let w =
                        Vector3::new((80.0 * p.z).sin(), (70.0 * p.x).cos(), (90.0 * p.y).sin());
                    q * (p + eps * 0.01 * w)
                })
                .collect();
            let a = forces(&mut coarse_frames, &es, &x);
            let b = forces(&mut plain, &es, &x);
            let diff: Vec<Vector3<f64>> = a.iter().zip(&b).map(|(a, b)| a - b).collect();
            let rel = norm(&diff) / norm(&b);
            eprintln!("strain scale {eps:e}: relative force difference {rel:.3e}");
            assert!(rel < 5.0 * eps, "{rel} at {eps}");
        }
    }
}
