//! The hierarchical method as an [`Integrator`] of its fine body, so a world can hold a
//! hierarchical body beside plain ones (module notes of [`super`]).
//!
//! The world sees the *fine* body (the finest mesh, the simulated `x`, `v`); the
//! [`HierarchicalStepper`] owns everything else: the octasection hierarchy, the coarse body
//! and its Newton integrator, the fine level's workspaces. One [`Integrator::step_with`] is
//! one step of [`super::HierarchicalBody`].
//!
//! **What the world may change between steps.** The world's phases after the integrator
//! (contact projection, exact constraints, rigid cores) move the fine body; a retried step
//! restores it. The coarse level follows: at the start of each step the change of the fine
//! state at the coarse vertices since this stepper's last step (the first vertices of the
//! fine mesh are the coarse ones) is added to the coarse state, so an untouched state adds
//! exactly zero, and in reading (a), where the fine coarse vertices are the coarse solution,
//! the coarse level stays equal to them. After a restart (a retried step) the coarse state is
//! set to the fine state at its vertices; in reading (b), where the two legitimately differ,
//! this is a small perturbation taken only on retries.
//!
//! **Step inputs.** External forces ([`StepInputs::external`]) act on the fine level and,
//! restricted to the coarse level by the transpose of the hierarchical basis (the coarse
//! generalized force `(Tᵀ f)_C`, the virtual work of `f` on the coarse modes), on the coarse
//! level. Grab springs ([`StepInputs::springs`]) act on both levels: on the fine one as given,
//! on the coarse one attached at the same rest point by its weights in the coarse tet that
//! holds it (`coarse_spring`). The held set must be the body's own (fixed vertices and
//! prescribed motions, carried to the fine level with [`super::fine_description`]): contact
//! springs, moving holds and extra held vertices are refused with an error, since the coarse
//! level would not see them (the world uses them only with other integrators: contact reaches
//! a hierarchical body by the projection after the step, which the coarse level follows).

use super::fine::FineLevel;
use super::{
    fine_description, HierarchyError, HierarchySettings, HierarchyStepStats, Reading, Scheme,
};
use crate::body::{Body, BodyDesc, BodyError};
use crate::clock::Instant;
use crate::constraint::Components;
use crate::fem::material::{CoarseFrameCorotational, ViscosityKind};
use crate::mesh::Hierarchy;
use crate::time::{
    BodyInputs, Integrator, IntegratorKind, PointSpring, StepError, StepInputs, StepStats,
};
use nalgebra::{Matrix3, Vector3};

/// The coarse level, the hierarchy and the fine level's workspaces of one hierarchical body
/// (module notes).
#[derive(Debug)]
pub struct HierarchicalStepper {
    pub hierarchy: Hierarchy,
    /// The coarse level (its model from the description, normally St.Venant–Kirchhoff).
    pub coarse: Body,
    settings: HierarchySettings,
    coarse_integrator: Box<dyn Integrator>,
    coarse_inputs: BodyInputs,
    level: FineLevel,
    /// The coarse velocities at the start of the step (the first guess of reading (b)).
    coarse_v0: Vec<Vector3<f64>>,
    /// The fine state at the coarse vertices as the last step left it (see module notes).
    left_x: Vec<Vector3<f64>>,
    left_v: Vec<Vector3<f64>>,
    /// Set the coarse state from the fine one at the next step (after a restart).
    resync: bool,
    /// Scratch of the external force's restriction (fine length).
    restricted: Vec<Vector3<f64>>,
    steps: u64,
    last: HierarchyStepStats,
    totals: Totals,
}

/// Run counters (see [`Integrator::counters`]).
#[derive(Debug, Clone, Copy, Default)]
struct Totals {
    frame_updates: u64,
    fine_assemblies: u64,
    fine_iterations: u64,
    coarse_newton: u64,
    coarse_s: f64,
    fine_s: f64,
}

impl HierarchicalStepper {
    /// Builds both levels from a description of the coarse body (see
    /// [`super::HierarchicalBody::new`]) and returns the stepper with the fine body it steps,
    /// named as the description.
    pub fn new(
        coarse: BodyDesc,
        settings: HierarchySettings,
    ) -> Result<(Self, Body), HierarchyError> {
        check_settings(&coarse, &settings)?;
        let order = match settings.scheme {
            Scheme::BackwardEuler => 1,
            Scheme::Bdf { order } => order,
        };
        let hierarchy = Hierarchy::new(coarse.mesh.clone(), settings.levels)?;
        let mut fine_desc = fine_description(&coarse, &hierarchy)?;
        fine_desc.name.clone_from(&coarse.name);
        let level_error = |level| move |source: BodyError| HierarchyError::Body { level, source };
        let coarse_body = Body::new(coarse).map_err(level_error("coarse"))?;
        let mut fine = Body::new(fine_desc).map_err(level_error("fine"))?;
        // Frames refreshed on every call: the stepper decides when to call (`update_every`).
        fine.model = Box::new(CoarseFrameCorotational::new(
            fine.lame,
            &hierarchy,
            &fine.elems,
            1,
        )?);
        let kind = match settings.scheme {
            Scheme::BackwardEuler => IntegratorKind::BackwardEuler {
                newton: settings.newton,
            },
            Scheme::Bdf { order } => IntegratorKind::Bdf {
                order,
                newton: settings.newton,
            },
        };
        let coarse_integrator = kind.build(&coarse_body)?;
        let level = FineLevel::new(&fine, &hierarchy, order, settings.coarse_correction);
        let nc = coarse_body.n_vertices();
        let stepper = Self {
            coarse_inputs: BodyInputs::new(nc),
            coarse_v0: vec![Vector3::zeros(); nc],
            left_x: fine.x[..nc].to_vec(),
            left_v: fine.v[..nc].to_vec(),
            resync: false,
            restricted: vec![Vector3::zeros(); fine.n_vertices()],
            hierarchy,
            coarse: coarse_body,
            settings,
            coarse_integrator,
            level,
            steps: 0,
            last: HierarchyStepStats::default(),
            totals: Totals::default(),
        };
        Ok((stepper, fine))
    }

    /// Refuses settings and coarse descriptions the method cannot run (what
    /// [`new`](Self::new) checks first), without building anything.
    pub fn check(coarse: &BodyDesc, settings: &HierarchySettings) -> Result<(), HierarchyError> {
        check_settings(coarse, settings)
    }

    pub fn settings(&self) -> &HierarchySettings {
        &self.settings
    }

    /// What the last step did, in the hierarchy's own terms.
    pub fn last_step(&self) -> &HierarchyStepStats {
        &self.last
    }

    /// Advances both levels of `fine` from `t0` by `dt` (`fine` with its loads and prescribed
    /// motions already set for `t0 + dt`, [`Body::set_time`]): the coarse level's are set,
    /// it takes its Newton step, the frames are refreshed from the coarse solution when due,
    /// and the fine level takes its linear step in the chosen reading. `external`: forces on the fine vertices for this step. On an
    /// error the state is unspecified.
    pub fn advance(
        &mut self,
        fine: &mut Body,
        external: Option<&[Vector3<f64>]>,
        springs: &[PointSpring],
        t0: f64,
        dt: f64,
        gravity: &Vector3<f64>,
    ) -> Result<HierarchyStepStats, StepError> {
        if !(dt > 0.0 && dt.is_finite()) {
            return Err(StepError::NonFinite("time step (or a step ≤ 0)"));
        }
        // The fine body's time is already set (by the world, or by the body's own step).
        self.coarse.set_time(t0 + dt);
        self.follow_fine(fine);
        let mut stats = HierarchyStepStats::default();

        let clock = Instant::now();
        self.coarse.model.begin_step();
        self.coarse_v0.copy_from_slice(&self.coarse.v);
        let inputs = &mut self.coarse_inputs;
        inputs.fixed.copy_from_slice(&self.coarse.fixed);
        inputs.time = t0;
        inputs.has_external = external.is_some();
        if let Some(f) = external {
            // The coarse generalized force (Tᵀ f)_C (module notes).
            self.restricted.copy_from_slice(f);
            self.hierarchy.to_nodal_transpose(&mut self.restricted);
            let nc = inputs.external.len();
            inputs.external.copy_from_slice(&self.restricted[..nc]);
        }
        inputs.springs.clear();
        for spring in springs {
            inputs
                .springs
                .push(coarse_spring(spring, fine, &self.coarse));
        }
        stats.coarse =
            self.coarse_integrator
                .step_with(&mut self.coarse, &inputs.view(), dt, gravity)?;
        if let Some(why) = self.coarse.check_state() {
            return Err(StepError::Bound {
                what: "coarse level",
                detail: why,
            });
        }
        stats.coarse_s = clock.elapsed().as_secs_f64();

        let clock = Instant::now();
        stats.frames_updated = self
            .steps
            .is_multiple_of(u64::from(self.settings.update_every));
        if stats.frames_updated {
            self.level.update_frames(fine, &self.coarse.x);
        }
        let solve = self.level.step(
            fine,
            &self.hierarchy,
            &self.coarse,
            &self.coarse_v0,
            self.settings.reading,
            &self.settings.pcg,
            external,
            springs,
            dt,
            gravity,
        )?;
        stats.fine_iterations = solve.iterations;
        stats.fine_residual = solve.residual;
        stats.fine_converged = solve.converged;
        stats.fine_assembled = solve.assembled;
        stats.fine_s = clock.elapsed().as_secs_f64();
        self.steps += 1;
        let nc = self.left_x.len();
        self.left_x.copy_from_slice(&fine.x[..nc]);
        self.left_v.copy_from_slice(&fine.v[..nc]);
        self.last = stats;
        let t = &mut self.totals;
        t.frame_updates += u64::from(stats.frames_updated);
        t.fine_assemblies += u64::from(stats.fine_assembled);
        t.fine_iterations += stats.fine_iterations as u64;
        t.coarse_newton += stats.coarse.newton_iterations as u64;
        t.coarse_s += stats.coarse_s;
        t.fine_s += stats.fine_s;
        Ok(stats)
    }

    /// Carries what the world did to the fine state since the last step into the coarse
    /// state (module notes); held coarse vertices keep what their prescription set.
    fn follow_fine(&mut self, fine: &Body) {
        let resync = std::mem::take(&mut self.resync);
        let c = &mut self.coarse;
        for i in (0..self.left_x.len()).filter(|&i| !c.fixed[i]) {
            if resync {
                c.x[i] = fine.x[i];
                c.v[i] = fine.v[i];
            } else {
                c.x[i] += fine.x[i] - self.left_x[i];
                c.v[i] += fine.v[i] - self.left_v[i];
            }
        }
    }
}

impl Integrator for HierarchicalStepper {
    fn name(&self) -> &'static str {
        match self.settings.scheme {
            Scheme::BackwardEuler => "hierarchical (backward Euler)",
            Scheme::Bdf { order: 2 } => "hierarchical (BDF2)",
            Scheme::Bdf { .. } => "hierarchical (BDF3)",
        }
    }

    /// One step of the hierarchy; the statistics are the coarse Newton step's, with the fine
    /// PCG's iterations added to the linear-solver iterations and its residual and
    /// convergence as the linear solve's (both levels must converge).
    fn step_with(
        &mut self,
        body: &mut Body,
        inputs: &StepInputs,
        dt: f64,
        gravity: &Vector3<f64>,
    ) -> Result<StepStats, StepError> {
        let refuse = |what| StepError::Bound {
            what: "hierarchical body",
            detail: format!("{what} are not supported (the coarse level would not see them)"),
        };
        if inputs.anchors.is_some() {
            return Err(refuse("contact springs"));
        }
        if inputs.moving.is_some() {
            return Err(refuse("moving holds"));
        }
        if inputs.fixed != body.fixed.as_slice() {
            return Err(refuse("holds beyond the body's own fixed vertices"));
        }
        let s = self.advance(
            body,
            inputs.external,
            inputs.springs,
            inputs.time,
            dt,
            gravity,
        )?;
        let mut stats = s.coarse;
        stats.solver_iterations += s.fine_iterations;
        stats.solver_residual = s.fine_residual;
        stats.solver_converged &= s.fine_converged;
        stats.solve_s += s.fine_s;
        stats.substeps = 1;
        Ok(stats)
    }

    fn notes(&self) -> Vec<String> {
        let (coarse, fine) = (self.hierarchy.levels.first(), self.hierarchy.levels.last());
        let tets = |m: Option<&crate::mesh::TetMesh>| m.map_or(0, |m| m.n_tets());
        vec![format!(
            "hierarchical body `{}`: {} → {} tets ({} octasection(s)), coarse {} with Newton, fine corotational with PCG, reading {}, frames every {} step(s)",
            self.coarse.name,
            tets(coarse),
            tets(fine),
            self.settings.levels,
            self.coarse.model.name(),
            match self.settings.reading {
                Reading::Detail => "(a) detail",
                Reading::Full => "(b) full",
            },
            self.settings.update_every
        )]
    }

    fn counters(&self) -> Vec<(String, f64)> {
        let t = &self.totals;
        let mut out = vec![
            ("frame_updates".to_string(), t.frame_updates as f64),
            ("fine_assemblies".to_string(), t.fine_assemblies as f64),
            ("fine_pcg_iterations".to_string(), t.fine_iterations as f64),
            (
                "coarse_newton_iterations".to_string(),
                t.coarse_newton as f64,
            ),
            ("coarse_seconds".to_string(), t.coarse_s),
            ("fine_seconds".to_string(), t.fine_s),
        ];
        out.extend(
            (self.coarse_integrator.counters().into_iter())
                .map(|(name, value)| (format!("coarse_{name}"), value)),
        );
        out
    }

    /// The world restored the fine state: the coarse level restarts from it (module notes),
    /// both levels forget their BDF history.
    fn restart(&mut self) {
        self.resync = true;
        self.coarse_integrator.restart();
        self.level.restart();
    }
}

/// A grab spring of the fine level restricted to the coarse level, attached at the rest point
/// `Σ w_k X_{v_k}` by its barycentric weights in the coarse tet that holds it (the most inside
/// one). The coarse field prolonged to the fine mesh is linear in each coarse tet, so on the
/// coarse modes the coarse spring's point is the fine spring's point (a Galerkin restriction,
/// as for the external forces). The fine detail moves the fine point off the coarse one (the
/// detail solve pulls the grabbed vertices towards the target too); the coarse spring's target
/// is shifted by that offset at the step's start, so the coarse level is pulled by the force
/// the fine point feels, `k (p − P_fine)`, and the body hangs on the force that is reported
/// (without the shift, reading (a)'s coarse level carried a 19.6 N bar on a spring whose fine
/// point reported 13.1 N).
fn coarse_spring(spring: &PointSpring, fine: &Body, coarse: &Body) -> PointSpring {
    let rest = spring.point(&fine.mesh.positions);
    let mut best = ([0u32; 4], [0.0; 4], f64::NEG_INFINITY);
    for tet in &coarse.mesh.tets {
        let p = tet.map(|v| coarse.mesh.positions[v as usize]);
        let dm = Matrix3::from_columns(&[p[1] - p[0], p[2] - p[0], p[3] - p[0]]);
        // Validated rest tets are not degenerate.
        let Some(inv) = dm.try_inverse() else {
            continue;
        };
        let l = inv * (rest - p[0]);
        let w = [1.0 - l.x - l.y - l.z, l.x, l.y, l.z];
        let inside = w.iter().copied().fold(f64::INFINITY, f64::min);
        if inside > best.2 {
            best = (*tet, w, inside);
        }
    }
    let mut coarse_spring = PointSpring {
        vertices: best.0,
        w: best.1,
        ..*spring
    };
    let detail = spring.point(&fine.x) - coarse_spring.point(&coarse.x);
    coarse_spring.target -= detail;
    coarse_spring
}

/// Refuses settings and descriptions the method cannot run.
fn check_settings(coarse: &BodyDesc, settings: &HierarchySettings) -> Result<(), HierarchyError> {
    let setting = |key, value: f64, reason| HierarchyError::Setting { key, value, reason };
    if settings.levels == 0 || settings.levels > 4 {
        return Err(setting(
            "levels",
            settings.levels as f64,
            "must be 1 to 4 (each level has 8× the tets)",
        ));
    }
    if settings.update_every == 0 {
        return Err(setting("update_every", 0.0, "must be at least 1"));
    }
    if let Scheme::Bdf { order } = settings.scheme {
        if !(2..=3).contains(&order) {
            return Err(setting("bdf.order", order as f64, "must be 2 or 3"));
        }
    }
    if !(settings.pcg.tolerance > 0.0 && settings.pcg.tolerance.is_finite()) {
        return Err(setting(
            "pcg.tolerance",
            settings.pcg.tolerance,
            "must be a finite number above 0",
        ));
    }
    if settings.pcg.max_iterations == 0 {
        return Err(setting("pcg.max_iterations", 0.0, "must be at least 1"));
    }
    if coarse.viscosity != ViscosityKind::None {
        return Err(HierarchyError::Viscosity);
    }
    for c in &coarse.constraints {
        if c.components != Components::All {
            return Err(HierarchyError::PartialConstraint {
                constraint: c.name.clone(),
            });
        }
    }
    Ok(())
}
