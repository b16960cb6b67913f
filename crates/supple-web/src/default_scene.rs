//! A scene for a bare mesh file (`supple view cube.msh`, or a mesh dropped on the page
//! without a scene): the body dropped on a ground plane, so that a user sees their own object
//! fall, land and can be grabbed (the page's mouse grab works on any body). Written here, in
//! Rust, so the page (wasm) and the host tests build the same text; the CLI only checks that
//! the file reads and hands it to the page, which asks the engine for this scene.
//!
//! Tet meshes (every format `supple_io::import` reads: `.msh`, `.vtu`, `.vtk`, `.mesh`,
//! `.node` + `.ele`) become `mesh = { kind = "file" }` with `orient = "fix"` (a mesh from
//! another tool may wind its tets either way); closed OBJ/STL surfaces are stuffed with tets
//! (`kind = "surface"`) at a spacing of 1/8 of the bounding box's diagonal (a cube gets 1,800
//! tets, a few ms per step in the page; 1/12 gave it 4,704, as many as the bundled bunny,
//! which runs far below real time there: EXPERIMENTS.md). +y is up; the body is centred over
//! the origin with its lowest point a quarter of its size above the ground. The file's units
//! are taken as metres; Young's modulus grows with the body's size (10⁵ Pa for a body of
//! 0.5 m diagonal; the strain of its own weight, ρ g L / E, is then the same at any size), so
//! that a mesh drawn in millimetres does not flatten into a puddle and a small one is not
//! rigid.

use nalgebra::Vector3;
use std::collections::BTreeMap;
use std::path::Path;
use supple::mesh::bounding_box;
use supple_io::files::Files;
use supple_io::import::surface::read_surface_from;
use supple_io::import::{read_mesh_from, MeshFormat, Orient};

/// Lattice spacing of a stuffed surface, as a fraction of its bounding box's diagonal.
const SURFACE_SPACING: f64 = 1.0 / 8.0;
/// The drop height: the body's lowest point starts this fraction of its diagonal above ground.
const DROP: f64 = 0.25;
/// Young's modulus (Pa) of a body of diagonal [`REFERENCE_SIZE`] (m); it scales with the size.
const REFERENCE_YOUNGS: f64 = 1e5;
const REFERENCE_SIZE: f64 = 0.5;

/// Whether `name` is a file this module makes a scene for (by extension).
pub fn is_mesh_file(name: &str) -> bool {
    let p = Path::new(name);
    MeshFormat::from_path(p).is_some() || is_surface(p)
}

fn is_surface(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("obj") || e.eq_ignore_ascii_case("stl"))
}

/// The scene's TOML text for the mesh file `name` among `files` (a TetGen mesh needs both
/// `.node` and `.ele`); an error names the file and the problem.
pub fn scene_for_mesh(name: &str, files: &BTreeMap<String, Vec<u8>>) -> Result<String, String> {
    let path = Path::new(name);
    let stem = path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("body")
        .to_string();
    let (points, mesh_line) = if is_surface(path) {
        let s = read_surface_from(Files::Memory(files), path).map_err(|e| e.to_string())?;
        let (lo, hi) = bounding_box(&s.vertices);
        let spacing = SURFACE_SPACING * (hi - lo).norm();
        let line = format!(
            "mesh = {{ kind = \"surface\", path = {name:?}, spacing = {:?} }}",
            round3(spacing)
        );
        (s.vertices, line)
    } else if MeshFormat::from_path(path).is_some() {
        let m = read_mesh_from(Files::Memory(files), path, None, Orient::Fix)
            .map_err(|e| e.to_string())?;
        let line = format!("mesh = {{ kind = \"file\", path = {name:?}, orient = \"fix\" }}");
        (m.mesh.positions, line)
    } else {
        return Err(format!(
            "{name}: not a mesh file (.msh, .vtu, .vtk, .mesh, .node/.ele, or a closed .obj/.stl surface) and not a scene (.toml)"
        ));
    };
    let (lo, hi) = bounding_box(&points);
    let size = (hi - lo).norm();
    if !(size.is_finite() && size > 0.0) {
        return Err(format!("{name}: the mesh has no extent"));
    }
    let centre = 0.5 * (lo + hi);
    let t = Vector3::new(-centre.x, DROP * size - lo.y, -centre.z);
    let youngs = round3(REFERENCE_YOUNGS * size / REFERENCE_SIZE);
    Ok(format!(
        r#"# `{name}` dropped on the ground (the default scene of a bare mesh file).
name = {stem:?}
dt = 0.01
duration = 10.0
gravity = [0.0, -9.81, 0.0]

[integrator]
kind = "backward_euler_linearized"

[[body]]
name = {stem:?}
{mesh_line}
transform = {{ translate = [{:?}, {:?}, {:?}] }}
material = {{ model = "corotational", youngs = {youngs:e}, poisson = 0.33, density = 1000.0 }}
damping = {{ alpha = 0.5, beta = 0.0 }}

[[obstacle]]
name = "ground"
shape = "plane"
point = [0.0, 0.0, 0.0]
normal = [0.0, 1.0, 0.0]
friction = 0.5
"#,
        t.x, t.y, t.z
    ))
}

/// Writes [`scene_for_mesh`] of the mesh file `name` among `files` (the blob of
/// [`decode_files`](crate::ffi::decode_files)) to the message buffer: its length, or
/// [`ERR_INVALID`](crate::ERR_INVALID) with the reason.
///
/// # Safety
/// Each pointer must point to its length in readable bytes.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub unsafe extern "C" fn supple_default_scene(
    name_ptr: *const u8,
    name_len: usize,
    files_ptr: *const u8,
    files_len: usize,
) -> i32 {
    use crate::ffi::{bytes, decode_files, fail, set_message};
    // SAFETY: the caller's contract.
    let (name, blob) = unsafe { (bytes(name_ptr, name_len), bytes(files_ptr, files_len)) };
    let Ok(name) = std::str::from_utf8(name) else {
        return fail(crate::ERR_ARGS, "the mesh file's name is not UTF-8");
    };
    match decode_files(blob).and_then(|files| scene_for_mesh(name, &files)) {
        Ok(text) => set_message(&text),
        Err(e) => fail(crate::ERR_INVALID, &e),
    }
}

/// `v` to three significant digits (a spacing that reads well in the scene text).
fn round3(v: f64) -> f64 {
    let scale = 10f64.powi(2 - v.abs().log10().floor() as i32);
    (v * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Sim;

    fn read(path: &str) -> Vec<u8> {
        let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenes/meshes/");
        std::fs::read(format!("{root}{path}")).unwrap()
    }

    #[test]
    fn a_gmsh_mesh_becomes_a_body_above_the_ground_that_falls() {
        let files = BTreeMap::from([("cube.msh".to_string(), read("cube.msh"))]);
        let text = scene_for_mesh("cube.msh", &files).unwrap();
        let mut sim = Sim::load(&text, "cube.toml", files).unwrap();
        let b = &sim.world().bodies[0];
        let low = b.x.iter().map(|p| p.y).fold(f64::INFINITY, f64::min);
        assert!(low > 0.0, "starts above the ground: {low}");
        // The cube's diagonal is 0.5 √3 m: E = 10⁵ Pa × √3.
        let e = sim.world().bodies[0].lame;
        let youngs = e.mu * (3.0 * e.lambda + 2.0 * e.mu) / (e.lambda + e.mu);
        assert!(
            (youngs / (1e5 * 3f64.sqrt()) - 1.0).abs() < 1e-2,
            "{youngs}"
        );
        sim.step(5).unwrap();
        let low2 = sim.world().bodies[0]
            .x
            .iter()
            .map(|p| p.y)
            .fold(f64::INFINITY, f64::min);
        assert!(low2 < low, "falls: {low} → {low2}");
    }

    #[test]
    fn a_surface_is_stuffed_and_a_tetgen_mesh_needs_both_files() {
        let cube = "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nv 1 0 1\nv 1 1 1\nv 0 1 1\n\
                    f 1 4 3 2\nf 5 6 7 8\nf 1 2 6 5\nf 2 3 7 6\nf 3 4 8 7\nf 4 1 5 8\n";
        let files = BTreeMap::from([("box.obj".to_string(), cube.as_bytes().to_vec())]);
        let text = scene_for_mesh("box.obj", &files).unwrap();
        assert!(text.contains("kind = \"surface\""), "{text}");
        let sim = Sim::load(&text, "box.toml", files).unwrap();
        assert!(sim.world().bodies[0].mesh.n_tets() > 100);
        let node = BTreeMap::from([("t.node".to_string(), read("tube_solid_1k.node"))]);
        let err = scene_for_mesh("t.node", &node).unwrap_err();
        assert!(err.contains("t.ele"), "{err}");
        assert!(scene_for_mesh("notes.txt", &node)
            .unwrap_err()
            .contains("not a mesh"));
    }
}
