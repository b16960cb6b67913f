//! The run summary (summary.json): what a finished run reports, per body, per probe and for
//! contact; written by the recorder in `record.rs`.

use serde::Serialize;

/// The median of `values` (0 for none).
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        0.5 * (v[n / 2 - 1] + v[n / 2])
    }
}

#[derive(Serialize)]
pub struct Summary {
    pub scene: String,
    pub steps: usize,
    pub sim_time: f64,
    pub dt: f64,
    pub diverged: bool,
    /// The run was stopped by Ctrl-C (SIGINT/SIGTERM) after `steps` steps.
    pub interrupted: bool,
    /// What loading the scene's meshes left out or changed (skipped cells, dropped
    /// vertices, swapped tets).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub mesh_notes: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diverged_step: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diverged_body: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diverged_reason: Option<String>,
    /// The run took its steps but its end state fails the verdict
    /// (`supple::world::verdict`): `invalid_reason` says every rule it breaks (`; `
    /// between them), `invalid_rules` names them (`interpenetration`, `self_intersection`,
    /// `inverted_tets`, `volume`, `energy_created`). Judged for runs that did not diverge.
    pub invalid: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub invalid_reason: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub invalid_rules: Vec<&'static str>,
    /// Vertices of a body inside another body (all bodies): at the end, and on the worst
    /// metrics row (frame).
    pub interpenetrating_vertices_end: usize,
    pub interpenetrating_vertices_max: usize,
    /// Crossing pairs of a body's own boundary triangles (all bodies): end, worst frame.
    pub self_intersections_end: usize,
    pub self_intersections_max: usize,
    /// Inverted tets (volume ≤ 0, all bodies): end, worst step.
    pub inverted_tets_end: usize,
    pub inverted_tets_max: usize,
    /// The largest rise of the total energy over one step in which nothing outside did work,
    /// relative to the run's energy scale `energy_scale` (J; max over the run of kinetic +
    /// elastic + |gravitational − initial gravitational|), at step `energy_rise_step`;
    /// absent when no step counted (a model without energy, a static run, every step driven:
    /// `energy_rise_not_counted` says why).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_rise_max: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_rise_step: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_scale: Option<f64>,
    /// Steps counted for `energy_rise_max`, steps not counted and the first reason why.
    pub energy_rise_steps: usize,
    pub energy_rise_skipped_steps: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_rise_not_counted: Option<&'static str>,
    /// Mean wall time (ms) of the intersection queries, run on every metrics row and at the end.
    pub intersection_ms_per_query: f64,
    /// World steps that the step control retried with shorter steps, the failed tries in
    /// all, the shortest step taken, and the steps kept with unconverged solves.
    pub retried_steps: usize,
    pub retries: usize,
    pub dt_min: f64,
    pub unconverged_steps: usize,
    /// Steps split at the start of an obstacle contact (`[step_control] contact_splits`),
    /// summed over the run.
    pub contact_splits: usize,
    /// Steps in which a Newton solve (implicit integrators, static load steps) ended above
    /// its tolerance.
    pub newton_unconverged_steps: usize,
    pub wall_ms_per_step_median: f64,
    pub wall_ms_per_step_min: f64,
    pub threads: usize,
    pub integrator: String,
    /// Start-up notes of the integrator (e.g. the Courant bound), `body: note`.
    pub integrator_notes: Vec<String>,
    /// End-of-run counters of the integrator (`body.counter`: factorizations, ladder level
    /// usage, accepted/rejected steps).
    pub integrator_counters: std::collections::BTreeMap<String, f64>,
    /// What `preconditioner = "auto"` chose for each body's linear solves and why, by body
    /// name (bodies whose solves ran PCG with `auto`).
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub preconditioner: std::collections::BTreeMap<String, PreconditionerSummary>,
    /// Total energy (kinetic + elastic + gravitational) at the start and end, and the largest
    /// `|E(t) − E(0)|` over all steps relative to `max(|E(0)|, max_t (kinetic + elastic))`;
    /// absent when a model has no energy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_total_initial: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_total_final: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub energy_rel_drift_max: Option<f64>,
    /// With exact constraints: the largest `max |Φ|` after any step (m).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub constraint_residual_max: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contact: Option<ContactSummary>,
    pub bodies: Vec<BodySummary>,
    pub probes: Vec<ProbeSummary>,
}

/// The choice of `preconditioner = "auto"` (`supple::linalg::AutoChoice`).
#[derive(Serialize, Clone, Debug)]
pub struct PreconditionerSummary {
    pub chosen: &'static str,
    /// One line: why (the candidates' modelled costs).
    pub reason: String,
    /// Trials made (the choice is revisited when the system changed enough).
    pub trials: usize,
    /// Free vertices of the last trial's system.
    pub free_vertices: usize,
    pub candidates: Vec<CandidateSummary>,
}

/// One candidate of the last trial.
#[derive(Serialize, Clone, Debug)]
pub struct CandidateSummary {
    pub preconditioner: &'static str,
    pub iterations: usize,
    pub converged: bool,
    /// Not run, or stopped early, because it could not beat a candidate before it.
    pub skipped: bool,
    pub stopped: bool,
    /// Modelled cost of its solve in products with the system matrix (absent when infinite).
    pub modelled_cost: Option<f64>,
    pub cost_per_iteration: f64,
}

impl From<&supple::linalg::AutoChoice> for PreconditionerSummary {
    fn from(c: &supple::linalg::AutoChoice) -> Self {
        Self {
            chosen: c.chosen.name(),
            reason: c.reason(),
            trials: c.trials,
            free_vertices: c.free,
            candidates: c
                .candidates
                .iter()
                .map(|k| CandidateSummary {
                    preconditioner: k.preconditioner.name(),
                    iterations: k.iterations,
                    converged: k.converged,
                    skipped: k.skipped,
                    stopped: k.stopped,
                    modelled_cost: k.cost.is_finite().then_some(k.cost),
                    cost_per_iteration: k.model.per_iteration,
                })
                .collect(),
        }
    }
}

/// One reaction in summary.json: force (N) and torque (N·m) about `point`.
#[derive(Serialize)]
pub struct ReactionSummary {
    pub name: String,
    pub force: [f64; 3],
    pub torque: [f64; 3],
    pub point: [f64; 3],
}

#[derive(Serialize)]
pub struct BodySummary {
    pub name: String,
    pub model: String,
    pub vertices: usize,
    pub tets: usize,
    pub fixed_vertices: usize,
    pub mass: f64,
    pub volume_rest: f64,
    pub volume_final: f64,
    pub volume_max_rel_change: f64,
    /// Smallest current/rest tet volume ratio over the run, and at its end with the number
    /// of tets inverted (volume ≤ 0) at the end.
    pub min_tet_volume_ratio: f64,
    pub min_tet_volume_ratio_final: f64,
    pub inverted_tets_final: usize,
    /// The most tets inverted after any step.
    pub inverted_tets_max: usize,
    /// Vertices inside another body and self-crossings, at the end and on the worst row.
    pub interpenetrating_vertices_end: usize,
    pub interpenetrating_vertices_max: usize,
    pub self_intersections_end: usize,
    pub self_intersections_max: usize,
    pub solver_iterations_mean: f64,
    pub solver_iterations_max: usize,
    pub solver_unconverged_steps: usize,
    pub newton_iterations_mean: f64,
    pub newton_iterations_max: usize,
    /// Internal steps taken (adaptive integrators and the step ladder take several per step).
    pub substeps: usize,
    pub rejected_steps: usize,
    /// Deepest penetration (m) any step produced before the contact response (present when
    /// the scene has contact; see `ContactStats::max_penetration`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_penetration: Option<f64>,
    /// Reaction force and torque of each constraint at the end (bodies with loads or
    /// constraints; the body's own fixed vertices as `fixed`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub reactions: Vec<ReactionSummary>,
}

/// Contact settings and totals of a run.
#[derive(Serialize)]
pub struct ContactSummary {
    pub obstacles: Vec<String>,
    pub self_collision: bool,
    pub body_collision: bool,
    pub broad_phase: String,
    pub narrow_phase: String,
    pub response: String,
    pub thickness: f64,
    pub pairs_tested_mean: f64,
    pub contacts_max: usize,
    pub frozen_vertices: usize,
    pub unresolved_pairs: usize,
    /// Steps solved again with surface contacts held (`[contact] hold_surfaces`).
    pub surface_resolved_steps: usize,
    pub max_penetration: f64,
    pub contact_ms_per_step_median: f64,
    /// The coupled IPC step's totals, when the response is IPC (its Newton and CG
    /// iterations are each body's `newton_iterations` / `solver_iterations` columns).
    pub ipc: Option<IpcSummary>,
}

/// What the coupled IPC step did over a run.
#[derive(Serialize)]
pub struct IpcSummary {
    /// Most barrier pairs active at the end of a step.
    pub pairs_max: usize,
    /// Closest distance between surfaces or to an obstacle at the end of any step (m;
    /// `null` when no pair ever came within d̂).
    pub min_distance: Option<f64>,
    /// Largest barrier stiffness κ any step used.
    pub kappa_max: f64,
    /// Newton steps cut by CCD or the inversion cap, and line-search halvings, per step.
    pub ccd_cuts_per_step: f64,
    pub backtracks_per_step: f64,
    /// Steps in which the world's projections (rigid cores, exact constraints) after the
    /// coupled step were kept only in part, so that no pair crossed on their path
    /// (`IpcStep::keep_projection_feasible`).
    pub projection_cuts: usize,
}

#[derive(Serialize)]
pub struct ProbeSummary {
    pub name: String,
    pub body: String,
    pub vertex: usize,
    pub rest: [f64; 3],
    #[serde(rename = "final")]
    pub final_position: [f64; 3],
    pub min: [f64; 3],
    pub max: [f64; 3],
}
