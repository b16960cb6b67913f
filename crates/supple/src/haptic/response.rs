//! The tool stiffness `K` of a grab: how the force of the next simulation step changes with
//! that step's target.
//!
//! A grab is a spring `f = k (p − P(x)) + d (ṗ − P(v))` from the grabbed point
//! `P(x) = Σ w_i x_i = Wᵀ x` to the target `p` ([`crate::world::Grab`]). Within one backward
//! Euler step of length `h` the target moves linearly, so `ṗ = (p − p_start) / h` and
//! `v⁺ = (x⁺ − x) / h`: a change `δp` of the step's target changes the spring's force on the
//! body at the step's end by `k_e (δp − δP)`, with the **effective spring stiffness**
//! `k_e = k + d / h`. The step's own response is `A δv⁺ = h k_e W δp`, with
//! `A = M + h D + h² K_T + h² k_e W Wᵀ` the step's matrix (mass, damping, the model's tangent
//! and the grab springs; [`System::assemble`] with `cm = 1, cd = h, ck = h²`), hence
//! `δP = k_e C δp` with the 3×3 `C = h² Wᵀ A⁻¹ W`. The force on the tool is the opposite of
//! the force on the body, so
//!
//! `K = ∂f_tool/∂p = −k_e (I − k_e C)`.
//!
//! By the Sherman–Morrison–Woodbury identity this is `K = −(k_e⁻¹ I + C_b)⁻¹` with
//! `C_b = h² Wᵀ A_b⁻¹ W` from the matrix `A_b` without this grab's spring: the spring in
//! series with the body's condensed dynamic stiffness `C_b⁻¹` at the grabbed point (the
//! Schur complement of `A_b / h²` onto that point). A stiff body gives `K → −k_e I`; a soft
//! or free one a much smaller `K` (a free body's inertia `m/h²` in series with the spring).
//!
//! What `K` leaves out: contact (the holds and springs of [`crate::contact`] are not in
//! `A`, so a grab pressing a body into the ground reads softer than it is), held vertices
//! other than the body's own fixed ones, and the change of the model's tangent over the step
//! (the frames are those last refreshed). It is exact for the linearized backward Euler step
//! of a body without contact (up to those frames), and the linearization of the others.
//! Three CG solves with `A` per model (to relative residual 1e-10), nothing allocated after
//! the first.

use super::{HapticError, LocalModel};
use crate::linalg::{BlockCsr, Pcg, PcgSettings};
use crate::time::{PointSpring, StepInputs, System};
use crate::world::{GrabId, World};
use nalgebra::{Matrix3, Vector3};

/// Workspace that computes a grab's [`LocalModel`] after each world step (the step matrix,
/// three right-hand sides and CG's workspace, allocated for the grabbed body once).
#[derive(Debug)]
pub struct GrabResponse {
    body: Option<usize>,
    system: Option<System>,
    a: Option<BlockCsr>,
    pcg: Option<Pcg>,
    rhs: Vec<Vector3<f64>>,
    z: Vec<Vector3<f64>>,
    springs: Vec<PointSpring>,
    settings: PcgSettings,
}

impl Default for GrabResponse {
    fn default() -> Self {
        Self::new()
    }
}

impl GrabResponse {
    /// An empty workspace (sized on the first [`model`](Self::model)).
    pub fn new() -> Self {
        Self {
            body: None,
            system: None,
            a: None,
            pcg: None,
            rhs: Vec::new(),
            z: Vec::new(),
            springs: Vec::new(),
            settings: PcgSettings {
                tolerance: 1e-10,
                max_iterations: 10_000,
                ..PcgSettings::default()
            },
        }
    }

    /// The local model of grab `id` after the world's last step: `p₀` its target, `f₀` the
    /// opposite of its force on the body, `K` as in the module notes.
    pub fn model(&mut self, world: &World, id: GrabId) -> Result<LocalModel, HapticError> {
        let g = (world.grabs().iter())
            .find(|g| g.id == id)
            .ok_or(HapticError::UnknownGrab(id))?;
        let body = &world.bodies[g.body];
        let n = body.n_vertices();
        if self.body != Some(g.body) || self.rhs.len() != n {
            self.body = Some(g.body);
            self.system = Some(System::new(body));
            self.a = Some(BlockCsr::zeros(body.elems.pattern.clone()));
            self.pcg = Some(Pcg::with_positions(n, &body.mesh.positions));
            self.rhs = vec![Vector3::zeros(); n];
            self.z = vec![Vector3::zeros(); n];
        }
        let (Some(system), Some(a), Some(pcg)) = (&self.system, &mut self.a, &mut self.pcg) else {
            unreachable!("set above")
        };
        // Every grab of the body is in the step's matrix (their targets do not enter it).
        self.springs.clear();
        for other in world.grabs().iter().filter(|o| o.body == g.body) {
            self.springs.push(PointSpring {
                vertices: other.vertices,
                w: other.w,
                target: other.target,
                target_velocity: Vector3::zeros(),
                stiffness: other.settings.stiffness,
                damping: other.settings.damping,
            });
        }
        let h = world.dt;
        let mut inputs = StepInputs::new(&body.fixed);
        inputs.springs = &self.springs;
        system.assemble(body, &inputs, &body.x, 1.0, h, h * h, a);
        let mut c = Matrix3::zeros();
        for axis in 0..3 {
            self.rhs.fill(Vector3::zeros());
            for k in 0..4 {
                if g.w[k] != 0.0 {
                    self.rhs[g.vertices[k] as usize][axis] += g.w[k];
                }
            }
            for (r, &f) in self.rhs.iter_mut().zip(&body.fixed) {
                if f {
                    *r = Vector3::zeros();
                }
            }
            body.constraints.project(&mut self.rhs);
            self.z.fill(Vector3::zeros());
            let stats = pcg.solve_changed(
                a,
                axis == 0,
                &self.rhs,
                &body.fixed,
                &mut self.z,
                &self.settings,
            );
            if !stats.converged {
                return Err(HapticError::Solve {
                    axis,
                    residual: stats.relative_residual,
                });
            }
            let dp: Vector3<f64> = (0..4)
                .filter(|&k| g.w[k] != 0.0)
                .map(|k| g.w[k] * self.z[g.vertices[k] as usize])
                .sum();
            c.set_column(axis, &(h * h * dp));
        }
        let k_e = g.settings.stiffness + g.settings.damping / h;
        let k = -k_e * (Matrix3::identity() - k_e * c);
        Ok(LocalModel {
            step: world.steps as u64,
            time: world.time,
            p0: g.target,
            f0: -g.force,
            // C is symmetric in exact arithmetic (A is); CG leaves a trace of asymmetry.
            k: 0.5 * (k + k.transpose()),
        })
    }
}

/// `k + d / h` of grab `id`: the stiffness of [`LocalModel::spring_only`].
pub fn effective_spring(world: &World, id: GrabId) -> Result<f64, HapticError> {
    let g = (world.grabs().iter())
        .find(|g| g.id == id)
        .ok_or(HapticError::UnknownGrab(id))?;
    Ok(g.settings.stiffness + g.settings.damping / world.dt)
}
