//! The fine level's linear step (module notes of [`super`]): the implicit formula
//! `x⁺ = ξ + γ v⁺` with the frames kept is the linear system
//! `((1 + γα) M + (γ² + γβ) K_R) v⁺ = M η + γ (f(ξ) + M g + f_load(ξ))`
//! (`α`, `β` the body's Rayleigh damping; external forces and grab springs, when the step
//! has them, add their force to the right side and a spring `γ(γk + d) w wᵀ` to the matrix), solved by PCG over the whole field (reading b, with the settings' preconditioner) or
//! over the hierarchical detail (reading a, [`super::detail`]). The matrix is reassembled
//! only when the frames or `γ` change (or a follower load, a released constraint or a grab
//! spring asks for it).

use super::detail::DetailCg;
use super::two_level::TwoLevel;
use super::Reading;
use crate::body::Body;
use crate::linalg::{
    conjugate_gradient, par, BlockCsr, CgError, CgInfo, CgWorkspace, Pcg, PcgSettings,
};
use crate::mesh::Hierarchy;
use crate::time::system::zero_fixed;
use crate::time::{bdf, PointSpring, StepError};
use nalgebra::Vector3;

/// What one fine solve did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub(super) struct FineSolve {
    pub iterations: usize,
    pub residual: f64,
    pub converged: bool,
    pub assembled: bool,
}

impl FineSolve {
    /// Takes a CG loop's outcome: iterations and residual, converged or not; a non-finite
    /// solve fails the step.
    fn record(&mut self, result: Result<CgInfo, CgError>) -> Result<(), StepError> {
        let info = match result {
            Ok(info) => {
                self.converged = true;
                info
            }
            Err(CgError::NoConvergence(info)) => info,
            Err(CgError::NonFinite { .. }) => return Err(StepError::NonFinite("fine-level PCG")),
        };
        self.iterations = info.iterations;
        self.residual = info.relative_residual;
        Ok(())
    }
}

/// The fine level's workspaces (allocated once; a step allocates nothing).
#[derive(Debug)]
pub(super) struct FineLevel {
    order: usize,
    a: BlockCsr,
    /// `γ` of the assembled matrix (`None`: stale, the frames changed).
    kept_gamma: Option<f64>,
    /// Reading (b): the crate's PCG with the settings' preconditioner, or the CG loop with
    /// the two-level preconditioner.
    pcg: Pcg,
    two_level: Option<(TwoLevel, CgWorkspace)>,
    detail: DetailCg,
    /// Positions whose coarse vertices are the coarse solution (the frames' source).
    frame_x: Vec<Vector3<f64>>,
    xi: Vec<Vector3<f64>>,
    eta: Vec<Vector3<f64>>,
    rhs: Vec<Vector3<f64>>,
    f: Vec<Vector3<f64>>,
    u: Vec<Vector3<f64>>,
    past_x: [Vec<Vector3<f64>>; 2],
    past_v: [Vec<Vector3<f64>>; 2],
    history: usize,
    dt: f64,
    /// The last step had grab springs in its matrix.
    had_springs: bool,
}

impl FineLevel {
    pub fn new(fine: &Body, hierarchy: &Hierarchy, order: u8, coarse_correction: bool) -> Self {
        let n = fine.n_vertices();
        let zero = vec![Vector3::zeros(); n];
        let past = if order > 1 { n } else { 0 };
        Self {
            order: order as usize,
            a: BlockCsr::zeros(fine.elems.pattern.clone()),
            kept_gamma: None,
            pcg: Pcg::with_positions(n, &fine.mesh.positions),
            two_level: coarse_correction.then(|| (TwoLevel::new(hierarchy), CgWorkspace::new(n))),
            detail: DetailCg::new(hierarchy),
            frame_x: fine.mesh.positions.clone(),
            xi: zero.clone(),
            eta: zero.clone(),
            rhs: zero.clone(),
            f: zero.clone(),
            u: zero,
            past_x: [vec![Vector3::zeros(); past], vec![Vector3::zeros(); past]],
            past_v: [vec![Vector3::zeros(); past], vec![Vector3::zeros(); past]],
            history: 0,
            dt: f64::NAN,
            had_springs: false,
        }
    }

    /// Refreshes the fine model's frames from the coarse positions `coarse_x` (the first
    /// vertices of the fine mesh are the coarse ones).
    pub fn update_frames(&mut self, fine: &mut Body, coarse_x: &[Vector3<f64>]) {
        self.frame_x[..coarse_x.len()].copy_from_slice(coarse_x);
        fine.model.update_frames(&fine.elems, &self.frame_x);
        self.kept_gamma = None;
    }

    /// One step of the fine level (module notes); `coarse` has already taken its step.
    #[allow(clippy::too_many_arguments)]
    pub fn step(
        &mut self,
        fine: &mut Body,
        hierarchy: &Hierarchy,
        coarse: &Body,
        coarse_v0: &[Vector3<f64>],
        reading: Reading,
        pcg: &PcgSettings,
        external: Option<&[Vector3<f64>]>,
        springs: &[PointSpring],
        h: f64,
        gravity: &Vector3<f64>,
    ) -> Result<FineSolve, StepError> {
        if h != self.dt {
            self.history = 0;
            self.dt = h;
        }
        let k = (self.history + 1).min(self.order);
        let gamma = bdf::B[k - 1] * h;
        self.combine_history(fine, k);
        if self.order > 1 {
            self.past_x.swap(0, 1);
            self.past_v.swap(0, 1);
            self.past_x[0].copy_from_slice(&fine.x);
            self.past_v[0].copy_from_slice(&fine.v);
        }
        self.history += 1;

        let mut out = FineSolve::default();
        let (alpha, beta) = (fine.damping.alpha, fine.damping.beta);
        // Grab springs change the matrix while they act, and once more when they go.
        let with_springs = !springs.is_empty();
        let stale = fine.loads.has_follower()
            || fine.constraints.any_release()
            || with_springs
            || std::mem::replace(&mut self.had_springs, with_springs);
        if self.kept_gamma != Some(gamma) || stale {
            self.a.set_zero();
            fine.model.add_tangent(
                &fine.elems,
                &self.xi,
                gamma * gamma + gamma * beta,
                &mut self.a,
            );
            fine.mass.add_to(&mut self.a, 1.0 + gamma * alpha);
            fine.loads
                .add_tangent(&self.xi, gamma * gamma, true, &mut self.a);
            // A spring's force at x⁺ = ξ + γ v⁺: γ (γ k + d) w wᵀ on v⁺.
            for s in springs {
                s.add_to(&mut self.a, gamma * gamma, gamma);
            }
            match (reading, &mut self.two_level) {
                (Reading::Detail, _) => self.detail.refresh(&self.a, &fine.fixed),
                (Reading::Full, Some((two_level, _))) => two_level.refresh(&self.a, &fine.fixed),
                (Reading::Full, None) => {}
            }
            self.kept_gamma = Some(gamma);
            out.assembled = true;
        }

        // b = M η + γ (f(ξ) + M g + f_load(ξ) + f_ext + f_springs(ξ)).
        let lumped = &fine.mass.lumped;
        match external {
            Some(ext) => par::for_each_mut(&mut self.f, |i, f| *f = lumped[i] * gravity + ext[i]),
            None => par::for_each_mut(&mut self.f, |i, f| *f = lumped[i] * gravity),
        }
        fine.model.add_forces(&fine.elems, &self.xi, &mut self.f);
        fine.loads.add_forces(&self.xi, &mut self.f);
        for s in springs {
            s.add_position_forces(&self.xi, &mut self.f);
            s.add_target_damping(&mut self.f);
        }
        fine.mass.mul_vec(&fine.elems, &self.eta, &mut self.rhs);
        let f = &self.f;
        par::for_each_mut(&mut self.rhs, |i, b| *b += gamma * f[i]);
        zero_fixed(&fine.fixed, &mut self.rhs);

        // First guess. (a): the coarse solution's velocities as coarse coefficients, the
        // current fine velocity's details. (b): the current fine velocity plus the prolonged
        // change of the coarse velocity over the coarse step (the fine field's own coarse
        // coefficients drift from the coarse solution in this reading, so the coarse
        // *motion* is prolonged, not the coarse state).
        let nc = hierarchy.coarse_vertices();
        match reading {
            Reading::Detail => {
                self.u.copy_from_slice(&fine.v);
                hierarchy.to_hierarchical(&mut self.u);
                self.u[..nc].copy_from_slice(&coarse.v);
                hierarchy.to_nodal(&mut self.u);
            }
            Reading::Full => {
                for (i, c) in self.u[..nc].iter_mut().enumerate() {
                    *c = coarse.v[i] - coarse_v0[i];
                }
                self.u[nc..].fill(Vector3::zeros());
                hierarchy.to_nodal(&mut self.u);
                let v = &fine.v;
                par::for_each_mut(&mut self.u, |i, u| *u += v[i]);
            }
        }
        zero_fixed(&fine.fixed, &mut self.u);

        match (reading, &mut self.two_level) {
            (Reading::Full, Some((two_level, ws))) => {
                let result = conjugate_gradient(
                    ws,
                    &self.a,
                    &self.rhs,
                    &fine.fixed,
                    &mut self.u,
                    pcg,
                    two_level,
                );
                out.record(result)?;
            }
            (Reading::Full, None) => {
                let st = self.pcg.solve_changed(
                    &self.a,
                    out.assembled,
                    &self.rhs,
                    &fine.fixed,
                    &mut self.u,
                    pcg,
                );
                if !st.relative_residual.is_finite() {
                    return Err(StepError::NonFinite("fine-level PCG"));
                }
                out.iterations = st.iterations;
                out.residual = st.relative_residual;
                out.converged = st.converged;
            }
            (Reading::Detail, _) => {
                out.record(self.detail.solve(
                    hierarchy,
                    &self.a,
                    &self.rhs,
                    &fine.fixed,
                    &mut self.u,
                    pcg,
                ))?;
            }
        }

        // x⁺ = ξ + γ v⁺ (held vertices stay where the prescription put them, v = 0 there).
        let (xi, u, fixed) = (&self.xi, &self.u, &fine.fixed);
        par::for_each_mut(&mut fine.x, |i, x| {
            if !fixed[i] {
                *x = xi[i] + gamma * u[i];
            }
        });
        fine.v.copy_from_slice(&self.u);
        if reading == Reading::Detail {
            // The coarse coefficients are the coarse solution (equal up to round-off for
            // backward Euler; the start-up steps of BDF differ between the levels).
            fine.x[..nc].copy_from_slice(&coarse.x);
            fine.v[..nc].copy_from_slice(&coarse.v);
        }
        if let Some(why) = fine.check_state() {
            return Err(StepError::Bound {
                what: "fine level",
                detail: why,
            });
        }
        Ok(out)
    }

    /// Forgets the BDF history (the state was restored from outside): the next step starts
    /// with backward Euler.
    pub fn restart(&mut self) {
        self.history = 0;
    }

    /// `ξ`, `η` of BDF(`k`) ([`bdf::combine`]; held vertices: `x_n` and 0).
    fn combine_history(&mut self, fine: &Body, k: usize) {
        let past = (&self.past_x, &self.past_v);
        bdf::combine(
            k,
            (&fine.x, &fine.v),
            past,
            &fine.fixed,
            &mut self.xi,
            &mut self.eta,
        );
    }
}
