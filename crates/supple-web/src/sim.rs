//! The simulation a page drives: a scene (its TOML text and files, as bytes), the page's
//! settings over it, the world built from both, and the buffers the page draws from. Plain
//! Rust, with no wasm in it, so that it is tested on the host.

use crate::overrides::Overrides;
use crate::pick::{pick, Hit};
use nalgebra::Vector3;
use serde_json::json;
use std::collections::BTreeMap;
use supple::mesh::boundary_faces;
use supple::world::World;
use supple_io::snapshot::Snapshot;
use supple_io::{parse_scene_from_memory, Scene};

/// A scene being simulated, with its draw buffers.
#[derive(Debug)]
pub struct Sim {
    text: String,
    name: String,
    files: BTreeMap<String, Vec<u8>>,
    overrides: Overrides,
    scene: Scene,
    world: World,
    surfaces: Vec<Vec<[u32; 3]>>,
    vertex_offsets: Vec<usize>,
    triangle_offsets: Vec<usize>,
    positions: Vec<f32>,
    triangles: Vec<u32>,
    /// Set by the page; [`Sim::frame`] steps only while this is false.
    pub paused: bool,
    /// Why the last step failed (the world is stopped until a reset or a new setting).
    failure: Option<String>,
    /// The state the world starts from instead of the scene's start (a script's world handed
    /// over by `supple view --state`), kept for resets.
    start: Option<Snapshot>,
}

impl Sim {
    /// Parses the scene `text` (named `name` in messages) whose files are in `files` (paths
    /// relative to the scene, as [`supple_io::parse_scene_from_memory`] takes them), and
    /// builds its world.
    pub fn load(text: &str, name: &str, files: BTreeMap<String, Vec<u8>>) -> Result<Self, String> {
        let (scene, world) = build(text, name, &files, &Overrides::default())?;
        let surfaces: Vec<Vec<[u32; 3]>> = world
            .bodies
            .iter()
            .map(|b| boundary_faces(&b.mesh.tets))
            .collect();
        let (mut vertex_offsets, mut triangle_offsets) = (vec![0], vec![0]);
        let mut triangles = Vec::new();
        for (b, s) in world.bodies.iter().zip(&surfaces) {
            let base = *vertex_offsets.last().unwrap_or(&0) as u32;
            triangles.extend(s.iter().flatten().map(|&i| base + i));
            vertex_offsets.push(vertex_offsets.last().unwrap_or(&0) + b.x.len());
            triangle_offsets.push(triangle_offsets.last().unwrap_or(&0) + s.len());
        }
        let mut sim = Self {
            text: text.to_string(),
            name: name.to_string(),
            files,
            overrides: Overrides::default(),
            scene,
            world,
            surfaces,
            positions: vec![0.0; 3 * vertex_offsets.last().unwrap_or(&0)],
            vertex_offsets,
            triangle_offsets,
            triangles,
            paused: false,
            failure: None,
            start: None,
        };
        sim.sync();
        Ok(sim)
    }

    /// Applies new settings: the world is rebuilt with them and keeps the current positions,
    /// velocities and time, unless the world has failed or its state is invalid (a diverged
    /// world: stepping on from it would fail again at once): then it starts again from the
    /// scene's start with the new settings. On an invalid setting nothing changes and the
    /// scene's message is returned.
    pub fn set_overrides(&mut self, overrides: Overrides) -> Result<(), String> {
        let (scene, mut world) = build(&self.text, &self.name, &self.files, &overrides)?;
        let restart = self.failure.is_some() || crate::field::invalid(self).is_some();
        if restart {
            self.start_from(&mut world)?;
        } else {
            for (new, old) in world.bodies.iter_mut().zip(&self.world.bodies) {
                new.x.clone_from(&old.x);
                new.v.clone_from(&old.v);
                new.time = old.time;
            }
            world.time = self.world.time;
            world.steps = self.world.steps;
        }
        self.scene = scene;
        self.world = world;
        self.overrides = overrides;
        self.failure = None;
        self.sync();
        Ok(())
    }

    /// Starts the world from `snapshot` (the JSON of [`supple_io::snapshot::Snapshot`], from a
    /// world built from the same scene), now and on every reset or restart after a failure.
    /// On an error (another scene's state, bad JSON) nothing changes.
    pub fn set_start(&mut self, snapshot: &str) -> Result<(), String> {
        let start = Snapshot::from_json(snapshot, "the world state")?;
        let mut world = self.scene.build_world().map_err(|e| e.to_string())?;
        start.apply(&mut world)?;
        self.world = world;
        self.start = Some(start);
        self.failure = None;
        self.sync();
        Ok(())
    }

    /// Puts the start state, if there is one, into a world just built from the scene.
    fn start_from(&self, world: &mut World) -> Result<(), String> {
        self.start.as_ref().map_or(Ok(()), |s| s.apply(world))
    }

    /// The scene's TOML text as loaded (before the page's settings).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The settings in force.
    pub fn overrides(&self) -> &Overrides {
        &self.overrides
    }

    /// Back to the scene's start, or to the state given to [`set_start`](Self::set_start)
    /// (the settings in force are kept).
    pub fn reset(&mut self) -> Result<(), String> {
        let mut world = self.scene.build_world().map_err(|e| e.to_string())?;
        self.start_from(&mut world)?;
        self.world = world;
        self.failure = None;
        self.sync();
        Ok(())
    }

    /// Takes `n` steps (whether paused or not); stops at the first failure, which later calls
    /// return until a reset or a new setting.
    pub fn step(&mut self, n: usize) -> Result<(), String> {
        if let Some(f) = &self.failure {
            return Err(f.clone());
        }
        let mut result = Ok(());
        for _ in 0..n {
            if let Err(e) = self.world.step() {
                self.failure = Some(e.to_string());
                result = Err(e.to_string());
                break;
            }
        }
        self.sync();
        result
    }

    /// [`step`](Self::step) unless paused; the number of steps taken.
    pub fn frame(&mut self, n: usize) -> Result<usize, String> {
        if self.paused {
            return Ok(0);
        }
        self.step(n).map(|()| n)
    }

    /// The world.
    pub fn world(&self) -> &World {
        &self.world
    }

    /// The world, for interaction (grabs).
    pub fn world_mut(&mut self) -> &mut World {
        &mut self.world
    }

    /// Every body's positions, `x y z` per vertex, bodies one after another, as `f32`.
    pub fn positions(&self) -> &[f32] {
        &self.positions
    }

    /// Every body's surface triangles as vertex indices into [`positions`](Self::positions)
    /// (three per triangle, counter-clockwise seen from outside).
    pub fn triangles(&self) -> &[u32] {
        &self.triangles
    }

    /// Where body `b`'s vertices start in [`positions`](Self::positions) (in vertices), with
    /// one entry past the last body.
    pub fn vertex_offsets(&self) -> &[usize] {
        &self.vertex_offsets
    }

    /// Where body `b`'s triangles start in [`triangles`](Self::triangles) (in triangles).
    pub fn triangle_offsets(&self) -> &[usize] {
        &self.triangle_offsets
    }

    /// Body `body`'s surface triangles (indices into its own vertices).
    pub fn surface(&self, body: usize) -> Option<&[[u32; 3]]> {
        self.surfaces.get(body).map(Vec::as_slice)
    }

    /// The nearest surface point on the ray `origin + t · direction`.
    pub fn pick(&self, origin: Vector3<f64>, direction: Vector3<f64>) -> Option<Hit> {
        let x: Vec<&[Vector3<f64>]> = self.world.bodies.iter().map(|b| b.x.as_slice()).collect();
        pick(&origin, &direction, &x, &self.surfaces)
    }

    /// The vertices of triangle `triangle` of body `body`'s surface.
    pub fn surface_triangle(&self, body: usize, triangle: usize) -> Option<[u32; 3]> {
        self.surfaces.get(body)?.get(triangle).copied()
    }

    /// The point of body `body`'s triangle `triangle` at barycentrics `bary`, now.
    pub fn surface_point(
        &self,
        body: usize,
        triangle: usize,
        bary: [f64; 3],
    ) -> Option<Vector3<f64>> {
        let tri = self.surfaces.get(body)?.get(triangle)?;
        let x = &self.world.bodies[body].x;
        Some((0..3).map(|k| x[tri[k] as usize] * bary[k]).sum())
    }

    /// The state and the last step's statistics, as JSON (see the crate documentation).
    pub fn stats_json(&self) -> String {
        let w = &self.world;
        let bodies: Vec<_> = (w.bodies.iter().zip(w.last_stats()))
            .map(|(b, s)| {
                let max_speed = b.v.iter().map(|v| v.norm()).fold(0.0, f64::max);
                let (lo, hi) = b.x.iter().fold(
                    (
                        Vector3::repeat(f64::INFINITY),
                        Vector3::repeat(f64::NEG_INFINITY),
                    ),
                    |(lo, hi), p| (lo.inf(p), hi.sup(p)),
                );
                json!({
                    "name": b.name,
                    "vertices": b.x.len(),
                    "tets": b.mesh.n_tets(),
                    "mass": b.mass.lumped.iter().sum::<f64>(),
                    "kinetic_energy": b.kinetic_energy(),
                    "max_speed": max_speed,
                    "min": [lo.x, lo.y, lo.z],
                    "max": [hi.x, hi.y, hi.z],
                    "solver_iterations": s.solver_iterations,
                    "solver_residual": s.solver_residual,
                    "newton_iterations": s.newton_iterations,
                    "substeps": s.substeps,
                })
            })
            .collect();
        // The live grabs: the spring's target and its force on the body after the last step.
        let grabs: Vec<_> = (w.grabs().iter())
            .map(|g| {
                let (t, f) = (g.target, g.force);
                json!({ "id": g.id.0, "body": g.body, "target": [t.x, t.y, t.z], "force": [f.x, f.y, f.z] })
            })
            .collect();
        let desc = self.scene.bodies.first();
        json!({
            "scene": self.scene.name,
            "time": w.time,
            "steps": w.steps,
            "dt": w.dt,
            "integrator": w.integrator_name(),
            "model": self.overrides.model.clone().or_else(|| self.model_name()),
            "youngs": desc.map(|d| d.youngs),
            "poisson": desc.map(|d| d.poisson),
            "damping": desc.map(|d| [d.damping.alpha, d.damping.beta]),
            "paused": self.paused,
            "retries": w.last_step().retries,
            "min_dt": w.last_step().min_dt,
            "failure": self.failure,
            "invalid": crate::field::invalid(self),
            "bodies": bodies,
            "grabs": grabs,
        })
        .to_string()
    }

    /// The first body's model name as the scene file gives it.
    fn model_name(&self) -> Option<String> {
        let doc: toml::Table = self.text.parse().ok()?;
        let model = doc.get("body")?.get(0)?.get("material")?.get("model")?;
        model.as_str().map(str::to_string)
    }

    /// Copies the bodies' positions into the `f32` draw buffer.
    fn sync(&mut self) {
        for (b, &off) in self.world.bodies.iter().zip(&self.vertex_offsets) {
            for (i, p) in b.x.iter().enumerate() {
                for c in 0..3 {
                    self.positions[3 * (off + i) + c] = p[c] as f32;
                }
            }
        }
    }
}

fn build(
    text: &str,
    name: &str,
    files: &BTreeMap<String, Vec<u8>>,
    overrides: &Overrides,
) -> Result<(Scene, World), String> {
    let text = overrides.apply(text)?;
    let scene = parse_scene_from_memory(&text, name, files).map_err(|e| e.to_string())?;
    let world = scene.build_world().map_err(|e| e.to_string())?;
    Ok((scene, world))
}
