//! What a run will need, estimated from the scene before the first step: memory (meshes,
//! per-element data, the matrix, sparse factors, the pictures' recording) and output size
//! (VTU frames, metrics rows, GIF and PNG pictures). A run whose memory estimate exceeds the
//! memory it may use ([`limits::memory_limit`]: available memory, `ulimit -v`, the control
//! group's limit, whichever is smallest) is refused; one whose output estimate exceeds
//! [`OUTPUT_LIMIT`] is refused unless `--force` is given.
//!
//! The per-element constants are calibrated on measured runs (EXPERIMENTS.md, "Bounded
//! resources"); estimates are meant to catch scenes off by orders of magnitude, not to
//! predict a run's footprint to the megabyte.

pub mod limits;

use anyhow::{bail, Result};
use supple::time::IntegratorKind;
use supple_io::scene::budget::{human_bytes, RUN_BYTES_PER_TET, RUN_BYTES_PER_VERTEX};
use supple_io::Scene;

/// Output size above which `supple run` asks for `--force`.
pub const OUTPUT_LIMIT: f64 = 5e9;

/// Sparse Cholesky factor of a 3D tet mesh under nested dissection: nnz(L) grows as
/// V^(4/3); this many bytes per V^(4/3). Measured (resident memory over the PCG run of the
/// same scene): 380 on the 20k-tet bar, 470 on the 160k-tet bar.
const FACTOR_BYTES_PER_V43: f64 = 500.0;
/// Peak memory of the smoothed-aggregation multigrid's set-up, per vertex of a body it runs on
/// (the hierarchy and the Galerkin products' temporaries): measured as the resident memory of
/// a run with the multigrid over the same run with Eisenstat SSOR, 8.3 KB on the 20k-tet bar
/// and 11.5 KB on the 160k-tet bar (EXPERIMENTS.md, "Bounded resources", session 20).
const AMG_BYTES_PER_VERTEX: f64 = 12_000.0;
/// VTU bytes per vertex (positions, displacement, velocity: 3 × f64 each; fixed: f64) and
/// per tet (Int32 connectivity and offset, UInt8 type, volume_ratio and von_mises), times
/// 4/3 for base64.
const VTU_BYTES_PER_VERTEX: f64 = 80.0 * 4.0 / 3.0;
const VTU_BYTES_PER_TET: f64 = 37.0 * 4.0 / 3.0;
/// Compressed over uncompressed frame size, as measured on the 160k-tet bar (0.43), rounded up.
const ZLIB_RATIO: f64 = 0.5;
/// metrics.csv bytes per body and per probe in one row (floats in shortest round-trip form,
/// at most 24 characters: 9 per body, 3 per probe).
const CSV_BYTES_PER_BODY: f64 = 320.0;
const CSV_BYTES_PER_PROBE: f64 = 75.0;
/// Recording for the pictures: per surface vertex and frame (f32 position and a field).
const RECORDING_BYTES_PER_SURFACE_VERTEX: f64 = 16.0;

/// Estimates of a run.
#[derive(Debug, Clone)]
pub struct Estimate {
    pub memory: f64,
    pub output: f64,
    /// `what: size` lines behind the totals.
    pub parts: Vec<String>,
}

/// Estimates what running `scene` needs.
pub fn estimate(scene: &Scene) -> Estimate {
    let steps = (scene.duration / scene.dt).ceil().max(0.0);
    let o = &scene.output;
    let frames = (steps / o.frame_every as f64).floor() + 2.0;
    let factors = match scene.integrator {
        IntegratorKind::BackwardEulerLinearized {
            solver: supple::time::LinearSolverKind::Cholesky { .. },
            ..
        } => 1.0,
        IntegratorKind::Newmark { levels, .. } => f64::from(levels) + 1.0,
        _ => 0.0,
    };
    let (mut memory, mut frame, mut surface) = (0.0, 0.0, 0.0);
    for b in &scene.bodies {
        let (v, t) = (b.mesh.n_vertices() as f64, b.mesh.n_tets() as f64);
        memory += RUN_BYTES_PER_TET * t + RUN_BYTES_PER_VERTEX * v;
        memory += factors * FACTOR_BYTES_PER_V43 * v.powf(4.0 / 3.0);
        if uses_amg(&scene.integrator) {
            memory += AMG_BYTES_PER_VERTEX * v;
        }
        frame += VTU_BYTES_PER_VERTEX * v + VTU_BYTES_PER_TET * t;
        // A box's surface holds about 6 V^(2/3) vertices; a mesh cannot have more than V.
        surface += (6.0 * v.powf(2.0 / 3.0)).min(v);
    }
    if o.compress {
        frame *= ZLIB_RATIO;
    }
    let recording = frames * surface * RECORDING_BYTES_PER_SURFACE_VERTEX;
    memory += recording;
    let vtu = if o.vtu { frames * frame } else { 0.0 };
    let row = CSV_BYTES_PER_BODY * scene.bodies.len() as f64
        + CSV_BYTES_PER_PROBE * scene.probes.len() as f64;
    let csv = frames * row;
    let gif_on = o
        .gif
        .unwrap_or(frames < supple_io::scene::GIF_AUTO_MAX_FRAMES as f64);
    let gif_pixels = f64::from(o.gif_size[0]) * f64::from(o.gif_size[1]);
    // One byte per pixel per GIF frame (indexed colour before LZW): an upper bound.
    let gif_frames = (scene.duration * o.gif_fps).ceil().max(1.0);
    let gif = if gif_on { gif_frames * gif_pixels } else { 0.0 };
    let png_pixels = f64::from(o.image_size[0]) * f64::from(o.image_size[1]);
    let pngs = if o.png_every > 0 {
        (frames / o.png_every as f64).ceil()
    } else {
        1.0
    };
    // RGB, before PNG compression: an upper bound.
    let png = pngs * png_pixels * 3.0;
    // The pictures are drawn after the steps, the PNGs then the GIF, each on every worker
    // thread at once: a picture being drawn is RGBA + depth (12 bytes a pixel) and its RGB
    // result (3); the GIF keeps a batch of up to 64 frames (RGB, then indexed: 4 bytes a
    // pixel) while each worker quantizes one (an RGBA copy: 4 more).
    let workers = rayon::current_num_threads() as f64;
    let png_memory = if o.png_every > 0 {
        15.0 * workers * png_pixels
    } else {
        15.0 * png_pixels
    };
    let gif_memory = if gif_on {
        let batch = gif_frames.min(64.0);
        4.0 * batch * gif_pixels + 19.0 * workers.min(batch) * gif_pixels
    } else {
        0.0
    };
    memory += png_memory.max(gif_memory);
    let output = vtu + csv + gif + png;
    let h = human_bytes;
    let parts = vec![
        format!("{steps:.0} steps, {frames:.0} output frames"),
        format!(
            "frames/*.vtu: {} ({} per frame)",
            h(vtu),
            h(if o.vtu { frame } else { 0.0 })
        ),
        format!("metrics.csv: {}", h(csv)),
        format!("animation.gif: up to {}", h(gif)),
        format!("PNG pictures: up to {}", h(png)),
        format!("recording for the pictures: {}", h(recording)),
        format!(
            "drawing the pictures: {} (GIF {}, PNG {})",
            h(png_memory.max(gif_memory)),
            h(gif_memory),
            h(png_memory)
        ),
    ];
    Estimate {
        memory,
        output,
        parts,
    }
}

/// Whether the linear solves of `integrator` may build the multigrid (`amg`, or `auto`, whose
/// trial tries the multigrid on a system whose other candidates are slow; counted as used,
/// which can only overestimate).
pub fn uses_amg(integrator: &IntegratorKind) -> bool {
    use supple::time::{IntegratorKind as I, LinearSolverKind as L};
    let solver = match integrator {
        I::BackwardEulerLinearized { solver, .. } => solver,
        I::BackwardEuler { newton } | I::Bdf { newton, .. } | I::Static { newton, .. } => {
            &newton.solver
        }
        _ => return false,
    };
    matches!(solver, L::Pcg(p) if p.preconditioner.may_use_amg())
}

/// Refuses a run that cannot fit: memory above what the system has available, output above
/// [`OUTPUT_LIMIT`] unless `force`.
pub fn check(scene: &Scene, force: bool) -> Result<Estimate> {
    let steps = scene.duration / scene.dt;
    if !steps.is_finite() {
        bail!(
            "{}: duration = {:?} with dt = {:?} is {steps} steps; lengthen dt",
            scene.path.display(),
            scene.duration,
            scene.dt
        );
    }
    let e = estimate(scene);
    let details = e.parts.join("; ");
    if let Some(limit) = limits::memory_limit() {
        if e.memory > limit.bytes {
            bail!(
                "{}: the run needs about {} of memory and {} is {} ({details}); use fewer or coarser bodies (body[*].mesh), fewer output frames (duration / dt / output.frame_every) or smaller pictures (output.gif_size, output.image_size)",
                scene.path.display(),
                human_bytes(e.memory),
                human_bytes(limit.bytes),
                limit.from
            );
        }
    }
    if e.output > OUTPUT_LIMIT && !force {
        bail!(
            "{}: the run would write about {} ({details}), more than the {} limit; raise output.frame_every, lengthen dt, shorten duration, set output.vtu = false or output.gif = false, or pass --force",
            scene.path.display(),
            human_bytes(e.output),
            human_bytes(OUTPUT_LIMIT)
        );
    }
    Ok(e)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// The 160k-tet bench bar: the default preconditioner runs the multigrid there (35,721
    /// vertices), whose set-up the estimate counts; Eisenstat SSOR does not add it.
    #[test]
    fn the_multigrid_adds_its_set_up_memory() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenes/bench/bar_160k.toml");
        let text = std::fs::read_to_string(&path).unwrap();
        let auto = supple_io::parse_scene(&text, &path).unwrap();
        let ssor_text = text.replace(
            "max_iterations = 2000",
            "max_iterations = 2000\npreconditioner = \"eisenstat_ssor\"",
        );
        let ssor = supple_io::parse_scene(&ssor_text, &path).unwrap();
        let extra = estimate(&auto).memory - estimate(&ssor).memory;
        let expected = AMG_BYTES_PER_VERTEX * 35_721.0;
        assert!(
            (extra - expected).abs() <= 1e-6 * expected,
            "{extra} vs {expected}"
        );
    }
}
