//! `World._view_files(dir)`: what `supple.view(world)` hands to `supple view` for a script's
//! world (python/supple/view.py): a scene file the page can build the same bodies from, and
//! the world's state now (`supple_io::snapshot`), which the page starts from instead of the
//! scene's start.
//!
//! A world loaded from a scene file is served from that file. A world built by `World(...)`
//! has no file: its scene table is written out with each body's mesh as a TetGen pair (the
//! rest mesh as built, transform applied, coordinates bit-exact) and its fixed vertices by
//! index, so that no mesh region or transform has to be resolved again in the page.
//! `supple view --state` then rebuilds the scene's world and checks that the state fits it.

use crate::world::PyWorld;
use pyo3::exceptions::{PyOSError, PyValueError};
use pyo3::prelude::*;
use std::path::{Path, PathBuf};
use supple_io::snapshot::Snapshot;
use toml::{Table, Value};

#[pymethods]
impl PyWorld {
    /// Writes the world's state now (`state.json`) into the folder `dir`, and for a world
    /// built by `World(...)` its scene (`scene.toml`, with `bodyN.node`/`.ele` meshes);
    /// returns `(scene, state)`, the paths `supple view SCENE --state STATE` takes. Raises
    /// `ValueError` for a state with non-finite numbers (a diverged step).
    fn _view_files(&self, dir: PathBuf) -> PyResult<(PathBuf, PathBuf)> {
        let snapshot = Snapshot::of(&self.lock()?.world);
        let finite = (snapshot.bodies.iter())
            .flat_map(|b| b.x.iter().chain(&b.v))
            .all(|r| r.iter().all(|c| c.is_finite()));
        if !finite {
            return Err(PyValueError::new_err(
                "the world's state is not finite (a step diverged): reset() or set_state() it before viewing",
            ));
        }
        let state = dir.join("state.json");
        write(&state, snapshot.to_json())?;
        let scene = match &self.table {
            None => std::path::absolute(&self.scene().path)?,
            Some(table) => {
                let scene = dir.join("scene.toml");
                write(&scene, self.scene_text(table, &dir)?)?;
                scene
            }
        };
        Ok((scene, state))
    }
}

impl PyWorld {
    /// The scene table with every body's mesh a TetGen pair written into `dir` and its fixed
    /// vertices listed, as TOML text.
    fn scene_text(&self, table: &Table, dir: &Path) -> PyResult<String> {
        let mut table = table.clone();
        let descs = &self.scene().bodies;
        if let Some(Value::Array(bodies)) = table.get_mut("body") {
            for (i, (section, desc)) in bodies.iter_mut().zip(descs).enumerate() {
                let Value::Table(section) = section else {
                    continue;
                };
                let base = format!("body{i}");
                supple_io::tetgen::write_tetgen(&dir.join(&base), &desc.mesh)
                    .map_err(|e| PyOSError::new_err(e.to_string()))?;
                let mesh = Table::from_iter([
                    ("kind".to_string(), Value::String("tetgen".into())),
                    ("path".to_string(), Value::String(base)),
                ]);
                section.insert("mesh".into(), Value::Table(mesh));
                // The mesh written is the transformed one, and its regions are not in a
                // TetGen file: the fixed vertices go by index.
                section.remove("transform");
                section.remove("fixed");
                if !desc.fixed.is_empty() {
                    let vertices = desc.fixed.iter().map(|&v| Value::Integer(v.into()));
                    let region = Table::from_iter([(
                        "vertices".to_string(),
                        Value::Array(vertices.collect()),
                    )]);
                    section.insert("fixed".into(), Value::Array(vec![Value::Table(region)]));
                }
            }
        }
        toml::to_string(&table).map_err(|e| PyValueError::new_err(format!("scene.toml: {e}")))
    }
}

fn write(path: &Path, text: String) -> PyResult<()> {
    std::fs::write(path, text)
        .map_err(|e| PyOSError::new_err(format!("{}: cannot write: {e}", path.display())))
}
