//! A world's clock and its bodies' positions and velocities, as JSON: what `supple view
//! SCENE --state FILE` hands to the page so that it starts where a script left its world
//! (`supple.view(world)` from Python) rather than at the scene's start.
//!
//! Numbers are written in the shortest form that reads back to the same bits (serde_json
//! writes with `ryu`; the workspace turns on its `float_roundtrip` parsing), so a page that
//! applies a snapshot holds bitwise the positions and velocities the script had. What a
//! snapshot does not carry is said where it is applied ([`Snapshot::apply`]).
//!
//! ```
//! use supple::prelude::*;
//! use supple_io::snapshot::Snapshot;
//! let mesh = box_grid(&BoxGrid { cells: [2, 1, 1], cell_size: Vector3::repeat(0.1),
//!     origin: Vector3::zeros(), split: TetSplit::Five });
//! let mut world = World::builder().body(BodyDesc::of(mesh).youngs(1e5)).dt(0.01).build()?;
//! world.step()?;
//! let json = Snapshot::of(&world).to_json();
//! assert_eq!(Snapshot::from_json(&json, "state.json")?, Snapshot::of(&world), "bitwise");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use serde::{Deserialize, Serialize};
use supple::nalgebra::Vector3;
use supple::world::World;

/// The clock and every body's state (bodies in the world's order).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Snapshot {
    /// The world's simulated time (s).
    pub time: f64,
    /// The steps taken to reach it.
    pub steps: usize,
    pub bodies: Vec<BodySnapshot>,
}

/// One body's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BodySnapshot {
    pub name: String,
    /// The time its loads and prescribed motions were last set for.
    pub time: f64,
    /// Positions (m), one per vertex.
    pub x: Vec<[f64; 3]>,
    /// Velocities (m/s), one per vertex.
    pub v: Vec<[f64; 3]>,
}

fn rows(p: &[Vector3<f64>]) -> Vec<[f64; 3]> {
    p.iter().map(|p| [p.x, p.y, p.z]).collect()
}

impl Snapshot {
    /// The state of `world` now.
    pub fn of(world: &World) -> Self {
        Self {
            time: world.time,
            steps: world.steps,
            bodies: (world.bodies.iter())
                .map(|b| BodySnapshot {
                    name: b.name.clone(),
                    time: b.time,
                    x: rows(&b.x),
                    v: rows(&b.v),
                })
                .collect(),
        }
    }

    /// The JSON text (one line).
    pub fn to_json(&self) -> String {
        // Serializing plain numbers, strings and arrays cannot fail; a non-finite number
        // becomes `null`, which `from_json` refuses.
        serde_json::to_string(self).unwrap_or_default()
    }

    /// Reads the JSON text of [`to_json`](Self::to_json); errors name `source`, the line and
    /// the column.
    pub fn from_json(text: &str, source: &str) -> Result<Self, String> {
        serde_json::from_str(text).map_err(|e| {
            format!(
                "{source}: not a world state (line {}, column {}): {e}",
                e.line(),
                e.column()
            )
        })
    }

    /// Puts this state into `world`, which must have been built from the same scene: the same
    /// bodies, by name and in order, with the same vertex counts, and finite numbers. Carried:
    /// the clock and each body's positions, velocities and load time. Not carried (they are
    /// the scene's, or start again): grabs and forces a script added, the integrator's history
    /// (BDF's earlier steps) and the contact step's lagged friction, as when the page rebuilds
    /// a world for a new setting. Nothing changes when an error is returned.
    pub fn apply(&self, world: &mut World) -> Result<(), String> {
        if !self.time.is_finite() {
            return Err(format!("time = {}: must be a finite number", self.time));
        }
        if self.bodies.len() != world.bodies.len() {
            return Err(format!(
                "the state has {} bodies, the scene's world {}",
                self.bodies.len(),
                world.bodies.len()
            ));
        }
        for (i, (s, b)) in self.bodies.iter().zip(&world.bodies).enumerate() {
            if s.name != b.name {
                return Err(format!(
                    "bodies[{i}] is \"{}\" in the state, \"{}\" in the scene",
                    s.name, b.name
                ));
            }
            for (what, rows) in [("x", &s.x), ("v", &s.v)] {
                if rows.len() != b.x.len() {
                    return Err(format!(
                        "bodies[{i}] (\"{}\").{what}: {} vertices, the scene's mesh has {}",
                        s.name,
                        rows.len(),
                        b.x.len()
                    ));
                }
                if let Some(k) = rows.iter().position(|r| r.iter().any(|c| !c.is_finite())) {
                    return Err(format!(
                        "bodies[{i}] (\"{}\").{what}[{k}] is not finite",
                        s.name
                    ));
                }
            }
            if !s.time.is_finite() {
                return Err(format!("bodies[{i}] (\"{}\").time is not finite", s.name));
            }
        }
        for (s, b) in self.bodies.iter().zip(&mut world.bodies) {
            for (dst, src) in b.x.iter_mut().zip(&s.x) {
                *dst = Vector3::from(*src);
            }
            for (dst, src) in b.v.iter_mut().zip(&s.v) {
                *dst = Vector3::from(*src);
            }
            b.time = s.time;
        }
        world.time = self.time;
        world.steps = self.steps;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    const SCENE: &str = r#"
name = "pair"
dt = 0.01
[[body]]
name = "a"
mesh = { kind = "box", cells = [2, 1, 1], cell_size = 0.1, split = 5 }
material = { model = "corotational", youngs = 1e5, poisson = 0.3, density = 1000.0 }
fixed = [{ plane = { point = [0, 0, 0], normal = [1, 0, 0] } }]
[[body]]
name = "b"
mesh = { kind = "box", cells = [1, 1, 1], cell_size = 0.1, split = 5 }
transform = { translate = [0.5, 0, 0] }
material = { model = "linear", youngs = 1e5, poisson = 0.3, density = 1000.0 }
"#;

    fn world() -> World {
        let scene = crate::parse_scene_from_memory(SCENE, "pair.toml", &BTreeMap::new()).unwrap();
        scene.build_world().unwrap()
    }

    fn bits(w: &World) -> Vec<u64> {
        (w.bodies.iter())
            .flat_map(|b| b.x.iter().chain(&b.v))
            .flat_map(|p| p.iter().map(|c| c.to_bits()).collect::<Vec<_>>())
            .collect()
    }

    #[test]
    fn a_state_read_back_from_its_json_puts_the_same_bits_into_a_new_world() {
        let mut w = world();
        for _ in 0..7 {
            w.step().unwrap();
        }
        let json = Snapshot::of(&w).to_json();
        let s = Snapshot::from_json(&json, "state.json").unwrap();
        assert_eq!(s, Snapshot::of(&w));
        let mut fresh = world();
        s.apply(&mut fresh).unwrap();
        assert_eq!(bits(&fresh), bits(&w));
        assert_eq!((fresh.time, fresh.steps), (w.time, w.steps));
        assert_eq!(fresh.bodies[1].time.to_bits(), w.bodies[1].time.to_bits());
    }

    #[test]
    fn a_state_of_another_world_is_refused_with_what_differs_and_changes_nothing() {
        let mut w = world();
        w.step().unwrap();
        let good = Snapshot::of(&w);
        let mut fresh = world();
        let before = bits(&fresh);
        let mut s = good.clone();
        s.bodies.pop();
        assert!(s.apply(&mut fresh).unwrap_err().contains("1 bodies"));
        let mut s = good.clone();
        s.bodies[1].name = "c".into();
        assert!(s.apply(&mut fresh).unwrap_err().contains("\"c\""));
        let mut s = good.clone();
        s.bodies[1].v.pop();
        let e = s.apply(&mut fresh).unwrap_err();
        assert!(e.contains("bodies[1]") && e.contains(".v"), "{e}");
        let mut s = good.clone();
        s.bodies[0].x[3][1] = f64::NAN;
        // NaN cannot be written as JSON: `null` is refused when read, and in memory by apply.
        assert!(Snapshot::from_json(&s.to_json(), "s.json")
            .unwrap_err()
            .contains("s.json"));
        assert!(s.apply(&mut fresh).unwrap_err().contains("x[3]"));
        assert_eq!(bits(&fresh), before);
        let e = Snapshot::from_json("{\"time\": 1}", "state.json").unwrap_err();
        assert!(
            e.starts_with("state.json: not a world state (line 1"),
            "{e}"
        );
    }
}
