//! The raw C-ABI exports the page calls (see the crate documentation for the protocol). On
//! wasm32 they are exported under their own names (`#[no_mangle]`); on other targets they are
//! ordinary functions, so that the host build, its tests and clippy see them too without
//! exporting symbols such as `supple_alloc` from a native library.
//!
//! One simulation per module instance, kept in a thread-local (a wasm instance has one
//! thread).

use crate::overrides::Overrides;
use crate::sim::Sim;
use crate::{ERR_ARGS, ERR_FAILED, ERR_INVALID, ERR_NO_SCENE, OK};
use nalgebra::Vector3;
use std::cell::RefCell;
use std::collections::BTreeMap;

thread_local! {
    static SIM: RefCell<Option<Sim>> = const { RefCell::new(None) };
    /// The last message or JSON handed out ([`supple_message_ptr`]).
    static MESSAGE: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    /// The last pick: body, triangle, three barycentrics, t, hit point.
    static PICK: RefCell<[f64; 9]> = const { RefCell::new([0.0; 9]) };
}

/// Puts `text` where [`supple_message_ptr`] finds it; its length.
pub(crate) fn set_message(text: &str) -> i32 {
    MESSAGE.with(|m| {
        let mut m = m.borrow_mut();
        m.clear();
        m.extend_from_slice(text.as_bytes());
        m.len() as i32
    })
}

/// `code`, with `message` left for the page.
pub(crate) fn fail(code: i32, message: &str) -> i32 {
    set_message(message);
    code
}

/// Runs `f` on the loaded simulation, or returns [`ERR_NO_SCENE`].
pub(crate) fn with_sim(f: impl FnOnce(&mut Sim) -> i32) -> i32 {
    SIM.with(|s| match s.borrow_mut().as_mut() {
        Some(sim) => f(sim),
        None => fail(ERR_NO_SCENE, "no scene loaded"),
    })
}

/// The bytes at `ptr..ptr + len` (empty for a null pointer or zero length).
///
/// # Safety
/// `ptr` must point to `len` readable bytes (memory from [`supple_alloc`]).
pub(crate) unsafe fn bytes<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if ptr.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

/// Decodes the files blob of [`supple_load`]: for each file, a little-endian `u32` name
/// length, the UTF-8 name, a little-endian `u32` data length, the data.
pub fn decode_files(mut blob: &[u8]) -> Result<BTreeMap<String, Vec<u8>>, String> {
    let mut files = BTreeMap::new();
    let take = |blob: &mut &[u8]| -> Result<Vec<u8>, String> {
        let short = || "files blob: truncated".to_string();
        let len = blob.get(..4).ok_or_else(short)?;
        let len = u32::from_le_bytes([len[0], len[1], len[2], len[3]]) as usize;
        let data = blob.get(4..4 + len).ok_or_else(short)?.to_vec();
        *blob = &blob[4 + len..];
        Ok(data)
    };
    while !blob.is_empty() {
        let name = String::from_utf8(take(&mut blob)?)
            .map_err(|_| "files blob: a name is not UTF-8".to_string())?;
        let data = take(&mut blob)?;
        files.insert(name, data);
    }
    Ok(files)
}

/// Reserves `len` bytes in wasm memory for the page to write into; free with
/// [`supple_free`]. May grow the memory (views must then be made again).
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_alloc(len: usize) -> *mut u8 {
    let mut v = Vec::<u8>::with_capacity(len.max(1));
    let ptr = v.as_mut_ptr();
    std::mem::forget(v);
    ptr
}

/// Frees what [`supple_alloc`] reserved.
///
/// # Safety
/// `ptr` and `len` must be exactly what one earlier `supple_alloc(len)` returned and took.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub unsafe extern "C" fn supple_free(ptr: *mut u8, len: usize) {
    if !ptr.is_null() {
        // SAFETY: the caller's contract: this is the allocation of capacity `len.max(1)`.
        drop(unsafe { Vec::from_raw_parts(ptr, 0, len.max(1)) });
    }
}

/// Loads a scene: its TOML text, its name (for messages, e.g. `tube_drop.toml`) and its
/// files (the blob of [`decode_files`]). [`OK`], or [`ERR_INVALID`] with the message.
///
/// # Safety
/// Each pointer must point to its length in readable bytes.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub unsafe extern "C" fn supple_load(
    text_ptr: *const u8,
    text_len: usize,
    name_ptr: *const u8,
    name_len: usize,
    files_ptr: *const u8,
    files_len: usize,
) -> i32 {
    // SAFETY: the caller's contract.
    let (text, name, blob) = unsafe {
        (
            bytes(text_ptr, text_len),
            bytes(name_ptr, name_len),
            bytes(files_ptr, files_len),
        )
    };
    let (Ok(text), Ok(name)) = (std::str::from_utf8(text), std::str::from_utf8(name)) else {
        return fail(ERR_ARGS, "the scene text or name is not UTF-8");
    };
    let loaded = decode_files(blob).and_then(|files| Sim::load(text, name, files));
    match loaded {
        Ok(sim) => {
            SIM.with(|s| *s.borrow_mut() = Some(sim));
            OK
        }
        Err(e) => fail(ERR_INVALID, &e),
    }
}

fn step_result(r: Result<usize, String>) -> i32 {
    match r {
        Ok(n) => n as i32,
        Err(e) => fail(ERR_FAILED, &e),
    }
}

/// Takes `n` steps, paused or not: `n`, or [`ERR_FAILED`] with the reason.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_step(n: u32) -> i32 {
    with_sim(|s| step_result(s.step(n as usize).map(|()| n as usize)))
}

/// Takes `n` steps unless paused: the steps taken, or [`ERR_FAILED`].
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_frame(n: u32) -> i32 {
    with_sim(|s| step_result(s.frame(n as usize)))
}

/// Pauses (`paused ≠ 0`) or resumes [`supple_frame`].
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_set_paused(paused: i32) -> i32 {
    with_sim(|s| {
        s.paused = paused != 0;
        OK
    })
}

/// Back to the scene's start, keeping the settings.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_reset() -> i32 {
    with_sim(|s| s.reset().map_or_else(|e| fail(ERR_INVALID, &e), |()| OK))
}

/// Starts the loaded scene's world from a world state (the JSON of
/// `supple_io::snapshot::Snapshot`: `supple view --state`), now and on every reset: [`OK`], or
/// [`ERR_INVALID`] with the message (another scene's state, bad JSON; nothing changes).
///
/// # Safety
/// `ptr` must point to `len` readable bytes.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub unsafe extern "C" fn supple_set_start(ptr: *const u8, len: usize) -> i32 {
    // SAFETY: the caller's contract.
    let Ok(text) = std::str::from_utf8(unsafe { bytes(ptr, len) }) else {
        return fail(ERR_ARGS, "the world state is not UTF-8");
    };
    with_sim(|s| {
        s.set_start(text)
            .map_or_else(|e| fail(ERR_INVALID, &e), |()| OK)
    })
}

fn set(change: impl FnOnce(&mut Overrides)) -> i32 {
    with_sim(|s| {
        let mut o = s.overrides().clone();
        change(&mut o);
        s.set_overrides(o)
            .map_or_else(|e| fail(ERR_INVALID, &e), |()| OK)
    })
}

/// Sets Young's modulus (Pa) of every body; rebuilds the world, keeping its state.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_set_youngs(youngs: f64) -> i32 {
    set(|o| o.youngs = Some(youngs))
}

/// Sets Poisson's ratio of every body.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_set_poisson(poisson: f64) -> i32 {
    set(|o| o.poisson = Some(poisson))
}

/// Sets Rayleigh damping (mass-proportional `alpha`, 1/s; stiffness-proportional `beta`, s).
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_set_damping(alpha: f64, beta: f64) -> i32 {
    set(|o| o.damping = Some((alpha, beta)))
}

/// Sets the time step (s).
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_set_dt(dt: f64) -> i32 {
    set(|o| o.dt = Some(dt))
}

/// The UTF-8 string at `ptr`, or the error code.
unsafe fn string(ptr: *const u8, len: usize) -> Result<String, i32> {
    // SAFETY: the caller's contract.
    std::str::from_utf8(unsafe { bytes(ptr, len) })
        .map(str::to_string)
        .map_err(|_| fail(ERR_ARGS, "not UTF-8"))
}

/// Sets every body's elastic model by its scene-file name (`corotational`, ...).
///
/// # Safety
/// `ptr` must point to `len` readable bytes.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub unsafe extern "C" fn supple_set_model(ptr: *const u8, len: usize) -> i32 {
    // SAFETY: the caller's contract.
    match unsafe { string(ptr, len) } {
        Ok(name) => set(|o| o.model = Some(name)),
        Err(code) => code,
    }
}

/// Sets the integrator by its scene-file name (`backward_euler_linearized`, ...).
///
/// # Safety
/// `ptr` must point to `len` readable bytes.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub unsafe extern "C" fn supple_set_integrator(ptr: *const u8, len: usize) -> i32 {
    // SAFETY: the caller's contract.
    match unsafe { string(ptr, len) } {
        Ok(name) => set(|o| o.integrator = Some(name)),
        Err(code) => code,
    }
}

/// Number of bodies (0 without a scene).
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_body_count() -> u32 {
    with_sim(|s| s.world().bodies.len() as i32).max(0) as u32
}

/// Start of the positions (`f32`, `x y z` per vertex, all bodies), null without a scene.
/// Stable until the next [`supple_load`]; updated in place by every step, reset and setting.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_positions_ptr() -> *const f32 {
    SIM.with(|s| {
        s.borrow()
            .as_ref()
            .map_or(std::ptr::null(), |s| s.positions().as_ptr())
    })
}

/// Number of `f32` in the positions (3 per vertex).
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_positions_len() -> u32 {
    SIM.with(|s| {
        s.borrow()
            .as_ref()
            .map_or(0, |s| s.positions().len() as u32)
    })
}

/// Start of the surface triangles (`u32` vertex indices into the positions, 3 per triangle).
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_triangles_ptr() -> *const u32 {
    SIM.with(|s| {
        s.borrow()
            .as_ref()
            .map_or(std::ptr::null(), |s| s.triangles().as_ptr())
    })
}

/// Number of `u32` in the triangles (3 per triangle).
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_triangles_len() -> u32 {
    SIM.with(|s| {
        s.borrow()
            .as_ref()
            .map_or(0, |s| s.triangles().len() as u32)
    })
}

/// Where body `body`'s vertices start in the positions, in vertices (`body` = the body
/// count gives the total).
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_body_vertex_offset(body: u32) -> i32 {
    with_sim(|s| {
        s.vertex_offsets()
            .get(body as usize)
            .map_or(ERR_ARGS, |&o| o as i32)
    })
}

/// Where body `body`'s triangles start in the triangles, in triangles.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_body_triangle_offset(body: u32) -> i32 {
    with_sim(|s| {
        s.triangle_offsets()
            .get(body as usize)
            .map_or(ERR_ARGS, |&o| o as i32)
    })
}

/// Casts the ray `origin + t · direction`: 1 on a hit (read it at [`supple_pick_ptr`]),
/// 0 on a miss.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_pick(ox: f64, oy: f64, oz: f64, dx: f64, dy: f64, dz: f64) -> i32 {
    with_sim(
        |s| match s.pick(Vector3::new(ox, oy, oz), Vector3::new(dx, dy, dz)) {
            Some(h) => {
                let [b0, b1, b2] = h.barycentric;
                let p = h.point;
                let row = [
                    h.body as f64,
                    h.triangle as f64,
                    b0,
                    b1,
                    b2,
                    h.t,
                    p.x,
                    p.y,
                    p.z,
                ];
                PICK.with(|r| *r.borrow_mut() = row);
                1
            }
            None => 0,
        },
    )
}

/// The last hit of [`supple_pick`]: 9 `f64`: body, triangle (in the body's surface), the
/// barycentrics of its three vertices, the ray parameter t, the hit point x y z.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_pick_ptr() -> *const f64 {
    PICK.with(|r| r.as_ptr() as *const f64)
}

/// Writes the state and last step's statistics as JSON to the message buffer; its length.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_stats() -> i32 {
    with_sim(|s| set_message(&s.stats_json()))
}

/// Start of the message buffer: the last error message, or the last JSON asked for.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_message_ptr() -> *const u8 {
    MESSAGE.with(|m| m.borrow().as_ptr())
}

/// Length of the message buffer in bytes.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_message_len() -> u32 {
    MESSAGE.with(|m| m.borrow().len() as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn blob(files: &[(&str, &[u8])]) -> Vec<u8> {
        let mut out = Vec::new();
        for (name, data) in files {
            for part in [name.as_bytes(), data] {
                out.extend_from_slice(&(part.len() as u32).to_le_bytes());
                out.extend_from_slice(part);
            }
        }
        out
    }

    #[test]
    fn the_files_blob_round_trips_and_truncation_is_refused() {
        let b = blob(&[("meshes/a.node", b"12"), ("b", b"")]);
        let files = decode_files(&b).unwrap();
        assert_eq!(files["meshes/a.node"], b"12");
        assert_eq!(files["b"], b"");
        assert!(decode_files(&b[..b.len() - 1]).is_err());
        assert!(decode_files(&[]).unwrap().is_empty());
    }

    #[test]
    fn exports_load_step_pick_and_report_through_the_abi() {
        let text = "dt = 0.01\nduration = 1.0\n[[body]]\nmesh = { kind = \"box\", cells = [4, 1, 1], cell_size = 0.1 }\n\
                    material = { model = \"corotational\", youngs = 1e5, poisson = 0.3, density = 1000.0 }\n\
                    fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }]\n";
        assert_eq!(supple_step(1), ERR_NO_SCENE);
        let name = "bar.toml";
        let code = unsafe {
            supple_load(
                text.as_ptr(),
                text.len(),
                name.as_ptr(),
                name.len(),
                std::ptr::null(),
                0,
            )
        };
        assert_eq!(code, OK);
        assert_eq!(supple_body_count(), 1);
        let n = supple_positions_len() as usize;
        let before = unsafe { std::slice::from_raw_parts(supple_positions_ptr(), n) }.to_vec();
        assert_eq!(supple_step(3), 3);
        let after = unsafe { std::slice::from_raw_parts(supple_positions_ptr(), n) };
        assert_ne!(before, after);
        let exact = unsafe { std::slice::from_raw_parts(crate::view::supple_positions_f64(), n) };
        assert!(exact.iter().zip(after).all(|(&d, &f)| d as f32 == f));
        // A ray down onto the free end hits the top face.
        assert_eq!(supple_pick(0.35, 1.0, 0.05, 0.0, -1.0, 0.0), 1);
        let hit = unsafe { std::slice::from_raw_parts(supple_pick_ptr(), 9) };
        assert_eq!(hit[0], 0.0);
        assert!((hit[2] + hit[3] + hit[4] - 1.0).abs() < 1e-12);
        assert!(hit[7] < 0.1 + 1e-9 && hit[7] > 0.09, "{hit:?}");
        assert_eq!(supple_pick(0.35, 1.0, 0.05, 0.0, 1.0, 0.0), 0);
        // Settings go through the scene's validation.
        assert_eq!(supple_set_poisson(0.5), ERR_INVALID);
        let msg = unsafe {
            std::slice::from_raw_parts(supple_message_ptr(), supple_message_len() as usize)
        };
        assert!(std::str::from_utf8(msg).unwrap().contains("poisson"));
        assert_eq!(supple_set_youngs(2e5), OK);
        let model = "linear";
        assert_eq!(unsafe { supple_set_model(model.as_ptr(), model.len()) }, OK);
        assert_eq!(supple_set_paused(1), OK);
        assert_eq!(supple_frame(2), 0);
        let len = supple_stats() as usize;
        let json = unsafe { std::slice::from_raw_parts(supple_message_ptr(), len) };
        let v: serde_json::Value = serde_json::from_slice(json).unwrap();
        assert_eq!(v["steps"], 3);
        assert_eq!(v["youngs"], 2e5);
        assert_eq!(v["model"], "linear");
        assert_eq!(v["paused"], true);
        assert_eq!(supple_reset(), OK);
        let len = supple_stats() as usize;
        let json = unsafe { std::slice::from_raw_parts(supple_message_ptr(), len) };
        let v: serde_json::Value = serde_json::from_slice(json).unwrap();
        assert_eq!(v["steps"], 0);
        let p = supple_alloc(10);
        unsafe { supple_free(p, 10) };
    }
}
