//! What a run records: per-frame metrics rows (metrics.csv) and the run summary (summary.json).

mod columns;

use columns::{shortest, CONTACT_COLUMNS, REACTION_COLUMNS};
use std::io::Write;
use supple::nalgebra::Vector3;
use supple::world::verdict::{EndState, Invalid, RunWatch};
use supple::world::World;
use supple_io::scene::Probe;

pub use crate::summary::{
    median, BodySummary, ContactSummary, ProbeSummary, ReactionSummary, Summary,
};

/// The run's verdict on its end state, for the summary ([`World::end_verdict`]).
pub struct Verdict {
    pub end: EndState,
    pub invalid: Vec<Invalid>,
}

/// Running extremes of one body over the run.
struct BodyTrack {
    volume_rest: f64,
    volume_max_rel_change: f64,
    min_tet_volume_ratio: f64,
    iterations_sum: usize,
    iterations_max: usize,
    unconverged_steps: usize,
    newton_sum: usize,
    newton_max: usize,
    substeps: usize,
    rejected_steps: usize,
}

/// Total energy (kinetic + elastic + gravitational, all bodies) over the run, tracked after
/// every step while every body's model has an energy.
struct EnergyTrack {
    initial: f64,
    last: f64,
    /// Largest `|E(t) − E(0)|`.
    drift_max: f64,
    /// Largest kinetic + elastic energy seen.
    motion_max: f64,
}

impl EnergyTrack {
    /// `max |E(t) − E(0)| / scale` with `scale = max(|E(0)|, max_t (kinetic + elastic))`: the
    /// issue's `|E(0)|`, except that a body released from rest has `E(0) = 0` (gravitational
    /// energy is measured from the rest pose), and then the energy of the motion is the scale.
    fn rel_drift_max(&self) -> f64 {
        let scale = self.initial.abs().max(self.motion_max);
        if scale > 0.0 {
            self.drift_max / scale
        } else {
            0.0
        }
    }
}

/// Running contact statistics (when the world has contact).
#[derive(Default)]
struct ContactTrack {
    pairs_tested_sum: usize,
    contacts_max: usize,
    frozen: usize,
    unresolved: usize,
    /// Steps with a second solve for held surface contacts.
    resolved_steps: usize,
    /// Deepest penetration since the last metrics row.
    row_penetration: f64,
    body_penetration: Vec<f64>,
    ms: Vec<f64>,
    /// The IPC step's totals: most pairs, closest distance, largest κ, CCD cuts and
    /// backtracks.
    ipc_pairs_max: usize,
    ipc_min_distance: f64,
    ipc_kappa_max: f64,
    ipc_cuts: usize,
    ipc_backtracks: usize,
    ipc_projection_cuts: usize,
}

struct ProbeTrack {
    min: Vector3<f64>,
    max: Vector3<f64>,
}

/// Tracks the run and writes metrics rows.
pub struct Recorder {
    /// Reactions of each body at the last metrics row (empty for bodies without loads or
    /// constraints; see `has_reactions`).
    reactions: Vec<Vec<supple::constraint::Reaction>>,
    /// Steps in which a Newton solve ended above its tolerance.
    newton_unconverged: usize,
    /// The run is a static solve (no energy drift; the last equilibrium must converge).
    static_run: bool,
    bodies: Vec<BodyTrack>,
    probes: Vec<(Probe, ProbeTrack)>,
    energy: Option<EnergyTrack>,
    /// The verdict's measurements: energy rise per step, inverted tets per step,
    /// intersections on every metrics row (supple::world::verdict).
    watch: RunWatch,
    contact: Option<ContactTrack>,
    pub wall_ms: Vec<f64>,
    /// Scripted grabs by name: their spring force on the body is a metrics column.
    grabs: Vec<(String, supple::world::GrabId)>,
    /// Springs between body points by name: their force on end `a` and length are columns.
    springs: Vec<(String, supple::world::LinkId)>,
    /// Exact constraints by name: their force is a metrics column; the largest residual
    /// after any step goes to the summary.
    exact: Vec<(String, supple::world::ConstraintId)>,
    constraint_residual_max: f64,
    csv: std::io::BufWriter<std::fs::File>,
}

impl Recorder {
    pub fn new(
        world: &mut World,
        probes: &[Probe],
        grabs: &[(String, supple::world::GrabId)],
        springs: &[(String, supple::world::LinkId)],
        exact: &[(String, supple::world::ConstraintId)],
        csv: std::fs::File,
    ) -> std::io::Result<Self> {
        let static_run = world.integrator_name() == "static";
        // The watch measures the energies (none in a static run); the drift reuses them.
        let watch = RunWatch::new(world);
        let energy = watch.energies().map(|e| EnergyTrack {
            initial: e.total,
            last: e.total,
            drift_max: 0.0,
            motion_max: e.motion,
        });
        let bodies = world
            .bodies
            .iter()
            .map(|b| BodyTrack {
                volume_rest: b.mesh.volume(),
                volume_max_rel_change: 0.0,
                min_tet_volume_ratio: b.min_volume_ratio(),
                iterations_sum: 0,
                iterations_max: 0,
                unconverged_steps: 0,
                newton_sum: 0,
                newton_max: 0,
                substeps: 0,
                rejected_steps: 0,
            })
            .collect();
        let tracks: Vec<(Probe, ProbeTrack)> = probes
            .iter()
            .map(|p| {
                let x = world.bodies[p.body].x[p.vertex];
                (p.clone(), ProbeTrack { min: x, max: x })
            })
            .collect();
        let mut csv = std::io::BufWriter::new(csv);
        let mut header = vec![
            "step".to_string(),
            "time".into(),
            "wall_ms_step".into(),
            "retried_steps".into(),
            "dt_min".into(),
        ];
        for b in &world.bodies {
            for col in [
                "volume",
                "kinetic_energy",
                "elastic_energy",
                "potential_energy",
                "momentum_x",
                "momentum_y",
                "momentum_z",
                "solver_iterations",
                "solver_residual",
                "newton_iterations",
                "newton_residual",
                "substeps",
                "rejected_steps",
                "dt_level",
                "inverted_tets",
                "inside_vertices",
                "self_crossings",
            ] {
                header.push(format!("{}.{col}", b.name));
            }
        }
        let gravity = world.gravity;
        let reactions: Vec<_> = world
            .bodies
            .iter_mut()
            .map(|b| body_reactions(b, &gravity))
            .collect();
        for (b, rs) in world.bodies.iter().zip(&reactions) {
            for r in rs {
                for col in REACTION_COLUMNS {
                    header.push(format!("{}.{}.{col}", b.name, r.name));
                }
            }
        }
        let contact = world.contact().map(|_| ContactTrack {
            body_penetration: vec![0.0; world.bodies.len()],
            ipc_min_distance: f64::INFINITY,
            ..ContactTrack::default()
        });
        if contact.is_some() {
            for col in CONTACT_COLUMNS {
                header.push(format!("contact.{col}"));
            }
        }
        for p in probes.iter().map(|p| &p.name) {
            for c in ["x", "y", "z"] {
                header.push(format!("{p}.{c}"));
            }
        }
        for (name, _) in grabs {
            for c in ["fx", "fy", "fz"] {
                header.push(format!("grab.{name}.{c}"));
            }
        }
        for (name, _) in springs {
            for c in ["fx", "fy", "fz", "length"] {
                header.push(format!("spring.{name}.{c}"));
            }
        }
        if !exact.is_empty() {
            header.push("constraint_residual".into());
        }
        for (name, _) in exact {
            for c in ["fx", "fy", "fz"] {
                header.push(format!("constraint.{name}.{c}"));
            }
        }
        writeln!(csv, "{}", header.join(","))?;
        csv.flush()?;
        Ok(Self {
            reactions,
            newton_unconverged: 0,
            static_run,
            bodies,
            probes: tracks,
            energy,
            watch,
            contact,
            wall_ms: Vec::new(),
            grabs: grabs.to_vec(),
            springs: springs.to_vec(),
            exact: exact.to_vec(),
            constraint_residual_max: 0.0,
            csv,
        })
    }

    /// Updates the running extremes after a step (`wall_ms` is that step's wall time).
    pub fn after_step(&mut self, world: &mut World, wall_ms: f64) {
        self.watch.after_step(world);
        if let (Some(track), Some(e)) = (&mut self.energy, self.watch.energies()) {
            track.last = e.total;
            track.drift_max = track.drift_max.max((e.total - track.initial).abs());
            track.motion_max = track.motion_max.max(e.motion);
        }
        self.wall_ms.push(wall_ms);
        self.constraint_residual_max = self
            .constraint_residual_max
            .max(world.constraint_residual());
        self.newton_unconverged += usize::from(
            world
                .last_stats()
                .iter()
                .any(|s| newton_failed(s, self.static_run)),
        );
        for ((t, b), s) in self
            .bodies
            .iter_mut()
            .zip(&world.bodies)
            .zip(world.last_stats())
        {
            t.volume_max_rel_change = t
                .volume_max_rel_change
                .max((b.volume() / t.volume_rest - 1.0).abs());
            t.min_tet_volume_ratio = t.min_tet_volume_ratio.min(b.min_volume_ratio());
            t.iterations_sum += s.solver_iterations;
            t.iterations_max = t.iterations_max.max(s.solver_iterations);
            t.unconverged_steps += usize::from(s.solve_failed());
            t.newton_sum += s.newton_iterations;
            t.newton_max = t.newton_max.max(s.newton_iterations);
            t.substeps += s.substeps;
            t.rejected_steps += s.rejected_steps;
        }
        if let (Some(t), Some(c)) = (&mut self.contact, world.contact_stats()) {
            t.pairs_tested_sum += c.pairs_tested;
            t.contacts_max = t.contacts_max.max(c.contacts);
            t.frozen += c.frozen;
            t.unresolved += c.unresolved;
            t.resolved_steps += usize::from(c.surface_resolves > 0);
            t.row_penetration = t.row_penetration.max(c.max_penetration);
            for (m, &p) in t.body_penetration.iter_mut().zip(&c.body_penetration) {
                *m = m.max(p);
            }
            t.ms.push(1e3 * (c.broad_s + c.narrow_s + c.response_s));
            if let Some(ipc) = world.ipc() {
                let l = &ipc.last;
                t.ipc_pairs_max = t.ipc_pairs_max.max(l.pairs);
                t.ipc_min_distance = t.ipc_min_distance.min(l.min_distance);
                t.ipc_kappa_max = t.ipc_kappa_max.max(l.kappa);
                t.ipc_cuts += l.ccd_cuts;
                t.ipc_backtracks += l.backtracks;
                t.ipc_projection_cuts += usize::from(l.projection_fraction < 1.0);
            }
        }
        for (p, t) in &mut self.probes {
            let x = world.bodies[p.body].x[p.vertex];
            t.min = t.min.inf(&x);
            t.max = t.max.sup(&x);
        }
    }

    /// Writes one metrics row for the current state.
    pub fn write_row(&mut self, world: &mut World) -> std::io::Result<()> {
        let wall = self.wall_ms.last().copied().unwrap_or(0.0);
        let mut row = vec![
            world.steps.to_string(),
            // Shortest round-trip form: steps of 2e-7 s stay distinct.
            shortest(world.time),
            format!("{wall:.4}"),
            world.totals().retried_steps.to_string(),
            shortest(world.last_step().min_dt),
        ];
        let stats = world.last_stats().to_vec();
        let gravity = world.gravity;
        let found = self.watch.after_frame(world).clone();
        let inverted = self.watch.inverted_last().to_vec();
        for (i, (b, s)) in world.bodies.iter_mut().zip(&stats).enumerate() {
            let p = b.momentum();
            let elastic = b.elastic_energy().map_or_else(String::new, shortest);
            row.extend([
                shortest(b.volume()),
                shortest(b.kinetic_energy()),
                elastic,
                shortest(b.potential_energy(&gravity)),
                shortest(p.x),
                shortest(p.y),
                shortest(p.z),
                s.solver_iterations.to_string(),
                shortest(s.solver_residual),
                s.newton_iterations.to_string(),
                shortest(s.newton_residual),
                s.substeps.to_string(),
                s.rejected_steps.to_string(),
                s.dt_level.to_string(),
                inverted[i].to_string(),
                found.inside[i].to_string(),
                found.self_crossings[i].to_string(),
            ]);
        }
        for (b, r) in world.bodies.iter_mut().zip(&mut self.reactions) {
            if r.is_empty() {
                continue;
            }
            *r = body_reactions(b, &gravity);
            for r in r.iter() {
                row.extend(r.force.iter().chain(r.torque.iter()).map(|&c| shortest(c)));
            }
        }
        if let (Some(t), Some(c)) = (&mut self.contact, world.contact_stats()) {
            row.extend([
                c.broad_pairs.to_string(),
                c.pairs_tested.to_string(),
                c.contacts.to_string(),
                c.iterations.to_string(),
                c.frozen.to_string(),
                c.springs.to_string(),
                c.surface_holds.to_string(),
                shortest(t.row_penetration.max(c.max_penetration)),
                format!("{:.4}", t.ms.last().copied().unwrap_or(0.0)),
            ]);
            t.row_penetration = 0.0;
        }
        for (p, _) in &self.probes {
            let x = world.bodies[p.body].x[p.vertex];
            row.extend(x.iter().map(|&c| shortest(c)));
        }
        for (_, id) in &self.grabs {
            // The spring's force on the body (zero before the grab is taken and after its
            // release: no spring then).
            let f = world.grab_force(*id).unwrap_or_default();
            row.extend(f.iter().map(|&c| shortest(c)));
        }
        for (_, id) in &self.springs {
            // The spring's force on its end `a` (end `b` takes the opposite), and its length.
            let f = world.spring_force(*id).unwrap_or_default();
            let length = (world.springs().find(|(i, _)| i == id))
                .map_or(0.0, |(_, s)| s.length(&world.bodies));
            row.extend(f.iter().chain([&length]).map(|&c| shortest(c)));
        }
        if !self.exact.is_empty() {
            row.push(shortest(world.constraint_residual()));
        }
        for (_, id) in &self.exact {
            // Zero after the constraint's release.
            let f = world.constraint_force(*id).unwrap_or_default();
            row.extend(f.iter().map(|&c| shortest(c)));
        }
        writeln!(self.csv, "{}", row.join(","))?;
        // Every row on disk as soon as it is written: a stopped run keeps its metrics.
        self.csv.flush()
    }

    /// A static run whose last equilibrium did not converge: the Newton residual it ended at.
    pub fn static_unconverged(&self, world: &World) -> Option<f64> {
        let stats = world.last_stats();
        (self.static_run && world.steps > 0 && stats.iter().any(|s| newton_failed(s, true)))
            .then(|| stats.iter().map(|s| s.newton_residual).fold(0.0, f64::max))
    }

    /// The verdict on the world's end state (its intersections measured once more, at the
    /// end; see [`World::end_verdict`]).
    pub fn verdict(&mut self, world: &World) -> Verdict {
        let (end, invalid) = world.end_verdict(&mut self.watch);
        Verdict { end, invalid }
    }

    /// The summary; `verdict` is the end state's ([`Recorder::verdict`]), judged only for a
    /// run that did not diverge (its end-state counts are reported either way).
    pub fn summary(
        &mut self,
        world: &World,
        scene: &str,
        diverged: Option<&supple::world::Diverged>,
        interrupted: bool,
        verdict: &Verdict,
    ) -> std::io::Result<Summary> {
        self.csv.flush()?;
        let steps = world.steps.max(1) as f64;
        let totals = world.totals();
        let invalid: &[Invalid] = match diverged {
            None => &verdict.invalid,
            Some(_) => &[],
        };
        let end = &verdict.end;
        let (inverted_max, inside_max, crossings_max) = self.watch.totals_max();
        let (counted, skipped, not_counted) = self.watch.energy_steps();
        let rise = self.watch.energy_rise_max();
        Ok(Summary {
            invalid: !invalid.is_empty(),
            invalid_reason: (!invalid.is_empty()).then(|| {
                (invalid.iter())
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join("; ")
            }),
            invalid_rules: {
                let mut kinds: Vec<&'static str> = invalid.iter().map(Invalid::kind).collect();
                kinds.dedup();
                kinds
            },
            interpenetrating_vertices_end: end.intersections.inside_total(),
            interpenetrating_vertices_max: inside_max,
            self_intersections_end: end.intersections.self_crossings_total(),
            self_intersections_max: crossings_max,
            inverted_tets_end: end.inverted.iter().sum(),
            inverted_tets_max: inverted_max,
            energy_rise_max: rise,
            energy_rise_step: self.watch.energy_rise_step(),
            energy_scale: rise.map(|_| self.watch.energy_scale()),
            energy_rise_steps: counted,
            energy_rise_skipped_steps: skipped,
            energy_rise_not_counted: not_counted,
            intersection_ms_per_query: self.watch.query_cost().1,
            scene: scene.to_string(),
            steps: world.steps,
            sim_time: world.time,
            dt: world.dt,
            diverged: diverged.is_some(),
            interrupted,
            mesh_notes: Vec::new(),
            diverged_step: diverged.map(|d| d.step),
            diverged_body: diverged.map(|d| d.body.clone()),
            diverged_reason: diverged.map(|d| d.reason.clone()),
            retried_steps: totals.retried_steps,
            retries: totals.retries,
            dt_min: if totals.min_dt.is_finite() {
                totals.min_dt
            } else {
                world.dt
            },
            unconverged_steps: totals.unconverged_steps,
            contact_splits: totals.contact_splits,
            newton_unconverged_steps: self.newton_unconverged,
            wall_ms_per_step_median: median(&self.wall_ms),
            wall_ms_per_step_min: self.wall_ms.iter().copied().reduce(f64::min).unwrap_or(0.0),
            threads: rayon::current_num_threads(),
            integrator: world.integrator_name().to_string(),
            integrator_notes: (world.integrator_notes().into_iter())
                .flat_map(|(b, notes)| notes.into_iter().map(move |n| format!("{b}: {n}")))
                .collect(),
            integrator_counters: (world.integrator_counters().into_iter())
                .flat_map(|(b, c)| c.into_iter().map(move |(k, v)| (format!("{b}.{k}"), v)))
                .collect(),
            preconditioner: (world.preconditioner_choices().iter())
                .map(|(b, c)| (b.to_string(), c.into()))
                .collect(),
            energy_total_initial: self.energy.as_ref().map(|e| e.initial),
            energy_total_final: self.energy.as_ref().map(|e| e.last),
            energy_rel_drift_max: self.energy.as_ref().map(EnergyTrack::rel_drift_max),
            constraint_residual_max: (!self.exact.is_empty())
                .then_some(self.constraint_residual_max),
            contact: self.contact.as_ref().zip(world.contact()).map(|(t, c)| {
                let s = c.settings();
                ContactSummary {
                    obstacles: s.obstacles.iter().map(|o| o.name.clone()).collect(),
                    self_collision: s.self_collision,
                    body_collision: s.body_collision,
                    broad_phase: format!("{:?}", s.broad_phase),
                    narrow_phase: format!("{:?}", s.narrow_phase),
                    response: s.response.name().to_string(),
                    thickness: c.thickness(),
                    pairs_tested_mean: t.pairs_tested_sum as f64 / steps,
                    contacts_max: t.contacts_max,
                    frozen_vertices: t.frozen,
                    unresolved_pairs: t.unresolved,
                    surface_resolved_steps: t.resolved_steps,
                    max_penetration: t.body_penetration.iter().copied().fold(0.0, f64::max),
                    contact_ms_per_step_median: median(&t.ms),
                    ipc: world.ipc().map(|_| crate::summary::IpcSummary {
                        pairs_max: t.ipc_pairs_max,
                        min_distance: t.ipc_min_distance.is_finite().then_some(t.ipc_min_distance),
                        kappa_max: t.ipc_kappa_max,
                        ccd_cuts_per_step: t.ipc_cuts as f64 / steps,
                        backtracks_per_step: t.ipc_backtracks as f64 / steps,
                        projection_cuts: t.ipc_projection_cuts,
                    }),
                }
            }),
            bodies: world
                .bodies
                .iter()
                .zip(&self.bodies)
                .enumerate()
                .map(|(i, (b, t))| BodySummary {
                    name: b.name.clone(),
                    model: b.model.name().to_string(),
                    vertices: b.n_vertices(),
                    tets: b.elems.len(),
                    fixed_vertices: b.fixed.iter().filter(|&&f| f).count(),
                    mass: b.mass.total(),
                    volume_rest: t.volume_rest,
                    volume_final: b.volume(),
                    volume_max_rel_change: t.volume_max_rel_change,
                    min_tet_volume_ratio: t.min_tet_volume_ratio,
                    min_tet_volume_ratio_final: b.min_volume_ratio(),
                    inverted_tets_final: end.inverted[i],
                    inverted_tets_max: self.watch.inverted_max()[i],
                    interpenetrating_vertices_end: end.intersections.inside[i],
                    interpenetrating_vertices_max: self.watch.inside_max()[i],
                    self_intersections_end: end.intersections.self_crossings[i],
                    self_intersections_max: self.watch.self_crossings_max()[i],
                    solver_iterations_mean: t.iterations_sum as f64 / steps,
                    solver_iterations_max: t.iterations_max,
                    solver_unconverged_steps: t.unconverged_steps,
                    newton_iterations_mean: t.newton_sum as f64 / steps,
                    newton_iterations_max: t.newton_max,
                    substeps: t.substeps,
                    rejected_steps: t.rejected_steps,
                    max_penetration: self.contact.as_ref().map(|c| c.body_penetration[i]),
                    reactions: self.reactions[i]
                        .iter()
                        .map(|r| ReactionSummary {
                            name: r.name.clone(),
                            force: r.force.into(),
                            torque: r.torque.into(),
                            point: r.point.into(),
                        })
                        .collect(),
                })
                .collect(),
            probes: self
                .probes
                .iter()
                .map(|(p, t)| ProbeSummary {
                    name: p.name.clone(),
                    body: world.bodies[p.body].name.clone(),
                    vertex: p.vertex,
                    rest: world.bodies[p.body].mesh.positions[p.vertex].into(),
                    final_position: world.bodies[p.body].x[p.vertex].into(),
                    min: t.min.into(),
                    max: t.max.into(),
                })
                .collect(),
        })
    }
}

/// The reactions of a body with loads or constraints (its own fixed vertices included, as
/// `fixed`); none for other bodies (their metrics keep their columns).
fn body_reactions(
    b: &mut supple::body::Body,
    gravity: &Vector3<f64>,
) -> Vec<supple::constraint::Reaction> {
    if b.loads.is_empty() && b.constraints.is_empty() {
        return Vec::new();
    }
    b.reactions(gravity)
}

/// A Newton solve of this step ended above its tolerance (a static step always runs Newton).
fn newton_failed(s: &supple::time::StepStats, static_run: bool) -> bool {
    !s.newton_converged && (s.newton_iterations > 0 || static_run)
}
