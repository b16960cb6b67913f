//! `World.write_frame(out)`: the frames of a world stepped by a script, written by the
//! library's own writers ([`supple_run::frames::FrameWriter`] for the VTU/VTP and PVD
//! files, [`supple_run::record::Recorder`] for `metrics.csv`), so a script that steps and
//! writes a frame every `frame_every` steps leaves the same files as `supple run`. And
//! `supple.read_vtu(path)`: a frame read back by the library's reader.

use crate::mesh::to_array;
use crate::world::{PyWorld, POISONED};
use numpy::ndarray::Array2;
use numpy::IntoPyArray;
use pyo3::exceptions::PyOSError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::path::{Path, PathBuf};
use supple::world::World;
use supple_run::frames::{clear_frames, FrameWriter};
use supple_run::record::Recorder;

/// The frames being written into one folder.
pub(crate) struct Frames {
    out: PathBuf,
    writer: FrameWriter,
    rec: Recorder,
}

impl Frames {
    /// Starts writing into `out` as `supple run` does before its first frame: `frames/`
    /// emptied of earlier frames, `scene.pvd` (and `surface.pvd`) and `metrics.csv` created.
    fn start(w: &PyWorld, world: &mut World, out: &Path) -> anyhow::Result<Self> {
        clear_frames(out)?;
        // The caller asked for frames: they are written whatever the scene's `[output] vtu`.
        let mut scene = w.scene().clone();
        scene.output.vtu = true;
        let csv_path = out.join("metrics.csv");
        let csv = std::fs::File::create(&csv_path)
            .map_err(|e| anyhow::anyhow!("cannot create {}: {e}", csv_path.display()))?;
        let (grabs, exact) = w.ids();
        // The scene's springs went into the world in order (as in `supple_run::run_scene`).
        let springs: Vec<_> = (scene.springs.iter().map(|s| s.name.clone()))
            .zip(world.springs().map(|(id, _)| id))
            .collect();
        let rec = Recorder::new(world, &scene.probes, grabs, &springs, exact, csv)?;
        Ok(Self {
            out: out.to_path_buf(),
            writer: FrameWriter::new(&scene, out)?,
            rec,
        })
    }

    /// The metrics' running extremes after a step (`wall_ms`: its wall time).
    pub fn after_step(&mut self, world: &mut World, wall_ms: f64) {
        self.rec.after_step(world, wall_ms);
    }
}

#[pymethods]
impl PyWorld {
    /// Writes the current state as the next frame into folder `out`, the files `supple run`
    /// writes: `frames/frame_NNNNN.vtu` (`<body>_frame_NNNNN.vtu` with several bodies;
    /// fields `displacement`, `velocity`, `fixed`, `volume_ratio`, `von_mises`) listed in
    /// `scene.pvd`, embedded surfaces as `frames/surface_NNNNN.vtp` in `surface.pvd`, and a
    /// row of `metrics.csv`. The first call for a folder starts it afresh (earlier frames
    /// there are removed); later calls with the same folder add frames, and steps in
    /// between are tracked for the metrics. Returns the frame's number.
    fn write_frame(&self, py: Python<'_>, out: PathBuf) -> PyResult<usize> {
        // Writing happens without the GIL, the world taken there (see `PyWorld::lock`).
        let result = py.detach(|| -> anyhow::Result<usize> {
            let mut guard = (self.live.lock()).map_err(|_| anyhow::anyhow!("{POISONED}"))?;
            let live = &mut *guard;
            if live.frames.as_ref().is_none_or(|f| f.out != out) {
                live.frames = None;
                live.frames = Some(Frames::start(self, &mut live.world, &out)?);
            }
            let frames = live.frames.as_mut().expect("started above");
            frames.rec.write_row(&mut live.world)?;
            frames.writer.write(&mut live.world)?;
            Ok(frames.writer.written() - 1)
        });
        result.map_err(|e| PyOSError::new_err(format!("{e:#}")))
    }
}

/// Reads a `.vtu` frame (what `supple run` and `World.write_frame` write, or a tetrahedral
/// grid from another tool) with the library's reader: a dict of `points` `(n, 3)` float64,
/// `tets` `(m, 4)` int64, `point_data` and `cell_data` (name → array: `(n, 3)` for vector
/// fields, `(n,)` or `(m,)` for scalars). The numbers are the written ones, bit for bit.
#[pyfunction]
pub fn read_vtu(py: Python<'_>, path: PathBuf) -> PyResult<Bound<'_, PyDict>> {
    let data = py
        .detach(|| supple_io::vtu_read::read_vtu(&path))
        .map_err(|e| PyOSError::new_err(e.to_string()))?;
    let d = PyDict::new(py);
    d.set_item("points", to_array(py, &data.positions))?;
    let flat = data.tets.iter().flatten().map(|&i| i64::from(i)).collect();
    let tets = Array2::from_shape_vec((data.tets.len(), 4), flat).expect("4 indices per tet");
    d.set_item("tets", tets.into_pyarray(py))?;
    let points = PyDict::new(py);
    for (name, v) in &data.point_vectors {
        points.set_item(name, to_array(py, v))?;
    }
    for (name, v) in &data.point_scalars {
        points.set_item(name, v.clone().into_pyarray(py))?;
    }
    d.set_item("point_data", points)?;
    let cells = PyDict::new(py);
    for (name, v) in &data.cell_scalars {
        cells.set_item(name, v.clone().into_pyarray(py))?;
    }
    d.set_item("cell_data", cells)?;
    Ok(d)
}
