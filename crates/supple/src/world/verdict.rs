//! The verdict on a run's end state: a run that took all its steps is *valid* only when, at
//! its end,
//! 1. no vertex of a body lies inside another body (judged when the world has body–body
//!    contact, [`ContactSettings::body_collision`](crate::contact::ContactSettings::body_collision);
//!    without it bodies pass through each other by the scene's choice), and no body's boundary
//!    passes through itself (always judged: self-collision is off by default for its cost, not
//!    because a body may cross itself) — both by [`Intersections`];
//! 2. no tet is inverted in a body whose model makes inversion a failure
//!    ([`ForceModel::needs_positive_volume`](crate::fem::ForceModel::needs_positive_volume):
//!    Liesenfeld–Stolfi), and in any other body no more than
//!    [`StepControl::end_inverted_share`] of the tets (default 0);
//! 3. each body's total volume is within [`StepControl::volume_range`] × its rest volume;
//!    (rules 2 and 3 do not judge a linear static answer, [`World::is_linear_static`]: it
//!    is the linear solution however large, and the world notes its range instead)
//! 4. energy was not created: the largest rise of the total energy over one step, relative
//!    to the run's energy scale, is at most [`StepControl::max_energy_rise`] (default 0.05),
//!    counted over the steps in which nothing outside did work on the bodies.
//!
//! **The energy measure.** `E = K + U_el + U_g (+ U_loads)` summed over the bodies (kinetic
//! `½ vᵀMv`, the model's elastic energy, gravity with lumped masses measured from the rest
//! pose, the dead loads' potential), as `energy_rel_drift_max` counts it. The *rise* of a
//! step is `E(tₙ) − E(tₙ₋₁)`; the *scale* is `S = maxₙ (K + U_el + |U_g − U_g(0)|)(tₙ)` over
//! every state of the run (the largest energy of motion and deformation, plus the height
//! energy released or stored since the start); `energy_rise_max = max(0, maxₙ rise) / S`.
//! Both scale alike with the mesh's size, mass and stiffness, so the measure does not
//! depend on units. It tells a spike from a healthy run, which the drift from `E(0)`
//! (`energy_rel_drift_max`) cannot: the StVK tube whose energy jumps from the 31 J it released
//! to 16.7 kJ in one step has a drift of 0.998, below that of healthy damped drops (1.1–1.9,
//! large by design), and a rise of 0.996 of its scale; no healthy bundled scene rises by more
//! than 0.006 (EXPERIMENTS.md).
//!
//! A step is *not counted* when something outside may do work on a body (the world's
//! call): a grab spring acts, external
//! forces were applied for it, the world carries exact-constraint forces, a body has loads or
//! prescribed motions that differ between the step's start and end, a body has a dynamic rigid
//! core or an exact constraint, or an obstacle moves during it; with contact springs
//! (`response = "springs"`, whose stored energy the measure cannot see) or a model without an
//! energy (warped stiffness) no step is counted; nor in a static run.
//!
//! **Cost.** [`RunWatch::after_step`] evaluates the energies once per step (O(tets), the same
//! sums `energy_rel_drift_max` already took; the recorder reuses them) and counts inverted
//! tets; it allocates nothing. The intersection queries run on recorded frames
//! ([`RunWatch::after_frame`]) and once at the end; measured in EXPERIMENTS.md, *Verdicts
//! that never lie*.

use super::{StepControl, World};
use crate::body::Body;
use crate::clock::Instant;
use crate::contact::intersection::{IntersectionReport, Intersections};
use crate::contact::Response;
use crate::mesh::signed_volume;
use nalgebra::Vector3;

/// Why a run's end state is not valid (see the module notes).
#[derive(Debug, Clone, PartialEq)]
pub enum Invalid {
    /// Vertices of `body` lie inside other bodies (`vertex` inside `other`, the first).
    Interpenetration {
        body: String,
        vertices: usize,
        vertex: u32,
        other: String,
    },
    /// Boundary triangles of `body` cross each other (`edge` of one through `triangle`).
    SelfIntersection {
        body: String,
        crossings: usize,
        edge: [u32; 2],
        triangle: [u32; 3],
    },
    /// More inverted tets than allowed (none for a barrier model).
    Inverted {
        body: String,
        model: &'static str,
        inverted: usize,
        tets: usize,
        allowed_share: f64,
        barrier: bool,
    },
    /// Total volume outside `range` × rest.
    Volume {
        body: String,
        ratio: f64,
        range: [f64; 2],
    },
    /// The total energy rose by `rise` × the run's energy scale over step `step`.
    EnergyCreated {
        rise: f64,
        joules: f64,
        scale: f64,
        step: usize,
        time: f64,
        tolerance: f64,
    },
}

impl Invalid {
    /// A short name of the rule (`interpenetration`, `self_intersection`, `inverted_tets`,
    /// `volume`, `energy_created`).
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Interpenetration { .. } => "interpenetration",
            Self::SelfIntersection { .. } => "self_intersection",
            Self::Inverted { .. } => "inverted_tets",
            Self::Volume { .. } => "volume",
            Self::EnergyCreated { .. } => "energy_created",
        }
    }
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Interpenetration {
                body,
                vertices,
                vertex,
                other,
            } => write!(
                f,
                "interpenetration: {vertices} vertices of body `{body}` end inside another body (e.g. vertex {vertex} inside `{other}`)"
            ),
            Self::SelfIntersection {
                body,
                crossings,
                edge,
                triangle,
            } => write!(
                f,
                "self-intersection: the surface of body `{body}` ends passing through itself ({crossings} crossing pairs of boundary triangles, e.g. edge {edge:?} through triangle {triangle:?})"
            ),
            Self::Inverted {
                body,
                model,
                inverted,
                tets,
                allowed_share,
                barrier,
            } => {
                let share = 100.0 * *inverted as f64 / (*tets).max(1) as f64;
                if *barrier {
                    write!(
                        f,
                        "inverted tets: body `{body}` ends with {inverted} of {tets} tets inverted ({share:.2} %); the {model} model allows none"
                    )
                } else {
                    write!(
                        f,
                        "inverted tets: body `{body}` ends with {inverted} of {tets} tets inverted ({share:.2} %, more than step_control.end_inverted_share = {:.2} %)",
                        100.0 * allowed_share
                    )
                }
            }
            Self::Volume { body, ratio, range } => write!(
                f,
                "volume: body `{body}` ends at {ratio:.3e} × its rest volume, outside step_control.volume_range [{}, {}]",
                range[0], range[1]
            ),
            Self::EnergyCreated {
                rise,
                joules,
                scale,
                step,
                time,
                tolerance,
            } => write!(
                f,
                "energy created: the total energy rose by {joules:.3e} J over step {step} (t = {time:.4} s), {:.1} % of the run's energy scale {scale:.3e} J (more than step_control.max_energy_rise = {:.1} %)",
                100.0 * rise,
                100.0 * tolerance
            ),
        }
    }
}

/// Energies of one state, all bodies (J).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Energies {
    /// `K + U_el + U_g + U_loads`.
    pub total: f64,
    /// `K + U_el`.
    pub motion: f64,
    /// `U_g`, from the rest pose.
    pub gravity: f64,
}

/// The energy side of a [`RunWatch`].
#[derive(Debug, Clone)]
struct EnergyWatch {
    /// `None` when some model has no energy (or a load no potential), or the run is static.
    last: Option<Energies>,
    gravity0: f64,
    scale: f64,
    /// Largest rise (J) over a counted step, its step and time.
    rise: f64,
    rise_step: usize,
    rise_time: f64,
    counted_steps: usize,
    /// Why steps were not counted, the first reason (e.g. "a grab spring acts").
    skipped: Option<&'static str>,
    skipped_steps: usize,
    scratch: Vec<Vector3<f64>>,
}

/// Per-frame and per-step measurements of a run for its verdict: the energy rise per step,
/// inverted tets per step, and the intersection counts on recorded frames (their worst
/// values over the run). Make it before the first step, call [`after_step`](Self::after_step)
/// after every step and [`after_frame`](Self::after_frame) where wanted (`supple run`: on
/// every recorded frame), then ask [`World::end_verdict`].
#[derive(Debug)]
pub struct RunWatch {
    intersections: Intersections,
    energy: EnergyWatch,
    /// Per body: the most inverted tets after any step, and at the last step.
    inverted_max: Vec<usize>,
    inverted_last: Vec<usize>,
    /// Per body: the most vertices inside another body / self-crossings on any frame.
    inside_max: Vec<usize>,
    crossings_max: Vec<usize>,
    /// The same, all bodies together.
    inverted_total_max: usize,
    inside_total_max: usize,
    crossings_total_max: usize,
    /// Intersection queries run, and their total wall time (ms).
    queries: usize,
    query_ms: f64,
}

/// What a run's end state measured (the counts behind [`World::end_verdict`]'s reasons).
#[derive(Debug, Clone, PartialEq)]
pub struct EndState {
    pub intersections: IntersectionReport,
    /// Per body: inverted tets (volume ≤ 0) and the volume ratio to rest.
    pub inverted: Vec<usize>,
    pub volume_ratio: Vec<f64>,
}

impl RunWatch {
    /// Starts watching `world` from its current state.
    pub fn new(world: &mut World) -> Self {
        let n_max = world.bodies.iter().map(Body::n_vertices).max().unwrap_or(0);
        let mut scratch = vec![Vector3::zeros(); n_max];
        let last = if world.integrator_name() == "static" {
            None
        } else {
            energies(&mut world.bodies, &world.gravity, &mut scratch)
        };
        let unavailable = if world.integrator_name() == "static" {
            Some("a static run")
        } else if last.is_none() {
            Some("a model has no energy (warped) or a load no potential")
        } else {
            None
        };
        let inverted: Vec<usize> = world.bodies.iter().map(inverted_tets).collect();
        let n = world.bodies.len();
        Self {
            intersections: Intersections::for_bodies(&world.bodies),
            energy: EnergyWatch {
                gravity0: last.map_or(0.0, |e| e.gravity),
                scale: last.map_or(0.0, |e| e.motion),
                last,
                rise: 0.0,
                rise_step: 0,
                rise_time: 0.0,
                counted_steps: 0,
                skipped: unavailable,
                skipped_steps: 0,
                scratch,
            },
            inverted_total_max: inverted.iter().sum(),
            inside_total_max: 0,
            crossings_total_max: 0,
            inverted_max: inverted.clone(),
            inverted_last: inverted,
            inside_max: vec![0; n],
            crossings_max: vec![0; n],
            queries: 0,
            query_ms: 0.0,
        }
    }

    /// Measures the step just taken: the energies (and the rise, if the step counts) and the
    /// inverted tets. O(tets); allocates nothing.
    pub fn after_step(&mut self, world: &mut World) {
        for ((b, last), max) in (world.bodies.iter())
            .zip(&mut self.inverted_last)
            .zip(&mut self.inverted_max)
        {
            *last = inverted_tets(b);
            *max = (*max).max(*last);
        }
        self.inverted_total_max = (self.inverted_total_max).max(self.inverted_last.iter().sum());
        let e = &mut self.energy;
        let Some(before) = e.last else {
            e.skipped_steps += 1;
            return;
        };
        let outside = world.outside_work();
        let Some(now) = energies(&mut world.bodies, &world.gravity, &mut e.scratch) else {
            e.last = None;
            e.skipped_steps += 1;
            e.skipped.get_or_insert("a load has no potential");
            return;
        };
        e.scale = e.scale.max(now.motion + (now.gravity - e.gravity0).abs());
        match outside {
            None => {
                e.counted_steps += 1;
                let rise = now.total - before.total;
                if rise > e.rise {
                    e.rise = rise;
                    e.rise_step = world.steps;
                    e.rise_time = world.time;
                }
            }
            Some(why) => {
                e.skipped_steps += 1;
                e.skipped.get_or_insert(why);
            }
        }
        e.last = Some(now);
    }

    /// Runs the intersection queries on the current state and keeps their worst counts.
    pub fn after_frame(&mut self, world: &World) -> &IntersectionReport {
        let started = Instant::now();
        let r = self.intersections.update_bodies(&world.bodies);
        self.query_ms += started.elapsed().as_secs_f64() * 1e3;
        self.queries += 1;
        for (m, &c) in self.inside_max.iter_mut().zip(&r.inside) {
            *m = (*m).max(c);
        }
        for (m, &c) in self.crossings_max.iter_mut().zip(&r.self_crossings) {
            *m = (*m).max(c);
        }
        self.inside_total_max = self.inside_total_max.max(r.inside_total());
        self.crossings_total_max = self.crossings_total_max.max(r.self_crossings_total());
        r
    }

    /// The energies of the last state measured (`None` when the run has no energy measure).
    pub fn energies(&self) -> Option<Energies> {
        self.energy.last
    }

    /// The largest rise of the total energy over one counted step, relative to the run's
    /// energy scale (see the module notes); `None` when no step was counted.
    pub fn energy_rise_max(&self) -> Option<f64> {
        let e = &self.energy;
        (e.counted_steps > 0).then(|| if e.scale > 0.0 { e.rise / e.scale } else { 0.0 })
    }

    /// The run's energy scale `S` (J, see the module notes).
    pub fn energy_scale(&self) -> f64 {
        self.energy.scale
    }

    /// Steps counted for the energy rule, steps not counted and the first reason why.
    pub fn energy_steps(&self) -> (usize, usize, Option<&'static str>) {
        let e = &self.energy;
        (e.counted_steps, e.skipped_steps, e.skipped)
    }

    /// Per body: inverted tets after the last step.
    pub fn inverted_last(&self) -> &[usize] {
        &self.inverted_last
    }

    /// The most inverted tets (all bodies) after any step, the most vertices inside another
    /// body and the most self-crossings (all bodies) on any queried frame.
    pub fn totals_max(&self) -> (usize, usize, usize) {
        (
            self.inverted_total_max,
            self.inside_total_max,
            self.crossings_total_max,
        )
    }

    /// The step of the largest counted energy rise.
    pub fn energy_rise_step(&self) -> Option<usize> {
        (self.energy.counted_steps > 0 && self.energy.rise > 0.0).then_some(self.energy.rise_step)
    }

    /// Per body: the most inverted tets after any step.
    pub fn inverted_max(&self) -> &[usize] {
        &self.inverted_max
    }

    /// Per body: the most vertices inside another body on any queried frame.
    pub fn inside_max(&self) -> &[usize] {
        &self.inside_max
    }

    /// Per body: the most self-crossings on any queried frame.
    pub fn self_crossings_max(&self) -> &[usize] {
        &self.crossings_max
    }

    /// Intersection queries run so far and their mean wall time (ms).
    pub fn query_cost(&self) -> (usize, f64) {
        (self.queries, self.query_ms / self.queries.max(1) as f64)
    }
}

/// Tets with volume ≤ 0.
pub(super) fn inverted_tets(b: &Body) -> usize {
    (b.elems.tets.iter())
        .filter(|t| signed_volume(&t.map(|i| b.x[i as usize])) <= 0.0)
        .count()
}

/// The energies of all bodies, or `None` when a model has no energy or a load no potential.
fn energies(
    bodies: &mut [Body],
    gravity: &Vector3<f64>,
    scratch: &mut [Vector3<f64>],
) -> Option<Energies> {
    let mut e = Energies {
        total: 0.0,
        motion: 0.0,
        gravity: 0.0,
    };
    for b in bodies {
        let n = b.n_vertices();
        let kinetic = b.mass.kinetic_energy(&b.elems, &b.v, &mut scratch[..n]);
        let motion = b.elastic_energy()? + kinetic;
        let loads = b.loads.potential(&b.x, &b.mesh.positions)?;
        let g = b.potential_energy(gravity);
        e.motion += motion;
        e.gravity += g;
        e.total += motion + g + loads;
    }
    Some(e)
}

impl World {
    /// Why something outside may have done work on the bodies in the step just taken, if
    /// it may (see the module notes); `None` when the step counts for the energy rule.
    fn outside_work(&self) -> Option<&'static str> {
        let t1 = self.time;
        let t0 = t1 - self.dt;
        if let Some(c) = &self.contact {
            if matches!(c.settings().response, Response::Springs { .. }) {
                return Some("contact springs store energy the measure does not see");
            }
            if (c.settings().obstacles.iter()).any(|o| o.path.pose(t0) != o.path.pose(t1)) {
                return Some("an obstacle moves");
            }
        }
        if self.steps > 0 && self.interaction.forced_step == Some(self.steps - 1) {
            return Some("external forces were applied");
        }
        if !self.grabs().is_empty() || self.inputs.iter().any(|i| !i.springs.is_empty()) {
            return Some("a grab spring acts");
        }
        if self.inputs.iter().any(|i| i.has_loads) || self.exact.bodies().next().is_some() {
            return Some("an exact constraint acts");
        }
        if !self.rigid.is_empty() {
            return Some("a body has a dynamic rigid core");
        }
        for b in &self.bodies {
            if !b.loads.is_empty() {
                return Some("a body has loads");
            }
            if !b.constraints.same_at(t0, t1) {
                return Some("prescribed vertices move");
            }
        }
        None
    }

    /// Measures the end state: the intersection queries (through `watch`'s workspaces),
    /// inverted tets and volumes.
    pub fn end_state(&self, watch: &mut RunWatch) -> EndState {
        let intersections = watch.after_frame(self).clone();
        EndState {
            intersections,
            inverted: self.bodies.iter().map(inverted_tets).collect(),
            volume_ratio: (self.bodies.iter())
                .map(|b| b.volume() / b.elems.volume.iter().sum::<f64>())
                .collect(),
        }
    }

    /// The run's verdict on its end state (the module notes): every rule it breaks, in the
    /// order interpenetration, self-intersection, inverted tets, volume (per body), energy;
    /// empty when the end state is valid. `watch` must have seen every step
    /// ([`RunWatch::after_step`]). Beside [`World::verdict`] (unconverged solves), which
    /// counts as divergence.
    pub fn end_verdict(&self, watch: &mut RunWatch) -> (EndState, Vec<Invalid>) {
        let end = self.end_state(watch);
        let c: &StepControl = &self.control;
        let mut out = Vec::new();
        let judge_bodies = self
            .contact
            .as_ref()
            .is_some_and(|c| c.settings().body_collision);
        let r = &end.intersections;
        for (b, body) in self.bodies.iter().enumerate() {
            if judge_bodies && r.inside[b] > 0 {
                let e = (r.inside_examples.iter()).find(|e| e.body == b);
                out.push(Invalid::Interpenetration {
                    body: body.name.clone(),
                    vertices: r.inside[b],
                    vertex: e.map_or(0, |e| e.vertex),
                    other: e.map_or_else(String::new, |e| self.bodies[e.other].name.clone()),
                });
            }
        }
        for (b, body) in self.bodies.iter().enumerate() {
            if r.self_crossings[b] > 0 {
                let e = (r.crossing_examples.iter()).find(|e| e.body == b);
                out.push(Invalid::SelfIntersection {
                    body: body.name.clone(),
                    crossings: r.self_crossings[b],
                    edge: e.map_or([0; 2], |e| e.edge),
                    triangle: e.map_or([0; 3], |e| e.triangle),
                });
            }
        }
        for (b, body) in self.bodies.iter().enumerate() {
            if self.is_linear_static(b) {
                // The linear solution however large (`World::is_linear_static`); noted.
                continue;
            }
            let inverted = end.inverted[b];
            let tets = body.elems.len();
            let barrier = body.model.needs_positive_volume();
            let allowed = if barrier { 0.0 } else { c.end_inverted_share };
            if inverted as f64 > allowed * tets as f64 {
                out.push(Invalid::Inverted {
                    body: body.name.clone(),
                    model: body.model.name(),
                    inverted,
                    tets,
                    allowed_share: allowed,
                    barrier,
                });
            }
        }
        for (b, body) in self.bodies.iter().enumerate() {
            if self.is_linear_static(b) {
                continue;
            }
            let ratio = end.volume_ratio[b];
            let [lo, hi] = c.volume_range;
            if !(ratio >= lo && ratio <= hi) {
                out.push(Invalid::Volume {
                    body: body.name.clone(),
                    ratio,
                    range: c.volume_range,
                });
            }
        }
        if let Some(rise) = watch.energy_rise_max() {
            if rise > c.max_energy_rise {
                let e = &watch.energy;
                out.push(Invalid::EnergyCreated {
                    rise,
                    joules: e.rise,
                    scale: e.scale,
                    step: e.rise_step,
                    time: e.rise_time,
                    tolerance: c.max_energy_rise,
                });
            }
        }
        (end, out)
    }
}
