//! Mouse grab: the three exports the page calls while the user drags a point of a body,
//! calling the engine's grab spring (`World::grab_point`, `move_grab`, `release`; Müller et
//! al. 2002 §4.2): the picked triangle's point is held on a damped spring whose force and
//! stiffness are in the implicit solve.
//!
//! The page's side (`www/main.js`): on mouse-down it picks
//! ([`supple_pick`](crate::ffi::supple_pick)) and calls [`supple_grab_start`] with the hit's
//! body, triangle and barycentrics; while the mouse moves it intersects the mouse ray with the
//! plane through the grabbed point facing the camera and calls [`supple_grab_move`] with that
//! point; on mouse-up it calls [`supple_grab_release`]. A grab lives in the world: a setting
//! that rebuilds the world, or a reset, ends it (a later move or release answers
//! [`ERR_ARGS`] with the engine's message).

use crate::ffi::{fail, with_sim};
use crate::{ERR_ARGS, OK};
use nalgebra::Vector3;
use supple::world::{GrabId, GrabSettings, World};

/// Why the engine could not grab, move or release (its message is shown by the page).
type EngineResult<T> = Result<T, (i32, String)>;

/// Grabs the point `Σ bary_k x_{tri_k}` of body `body` with a spring of `stiffness` (N/m)
/// and `damping` (N·s/m); the grab's id.
fn engine_grab(
    world: &mut World,
    body: usize,
    tri: [u32; 3],
    bary: [f64; 3],
    stiffness: f64,
    damping: f64,
) -> EngineResult<u32> {
    let settings = GrabSettings { stiffness, damping };
    let id = world
        .grab_point(body, &tri, &bary, settings)
        .map_err(|e| (ERR_ARGS, e.to_string()))?;
    u32::try_from(id.0).map_err(|_| (ERR_ARGS, "grab: too many grabs in this world".into()))
}

/// Moves grab `id`'s target to `target`.
fn engine_move(world: &mut World, id: u32, target: Vector3<f64>) -> EngineResult<()> {
    world
        .move_grab(GrabId(u64::from(id)), target)
        .map_err(|e| (ERR_ARGS, e.to_string()))
}

/// Releases grab `id`.
fn engine_release(world: &mut World, id: u32) -> EngineResult<()> {
    world
        .release(GrabId(u64::from(id)))
        .map_err(|e| (ERR_ARGS, e.to_string()))
}

fn finite(values: &[f64]) -> bool {
    values.iter().all(|v| v.is_finite())
}

/// Starts a grab at the point with barycentrics `(b0, b1, b2)` on triangle `triangle` of body
/// `body`'s surface (as [`supple_pick`](crate::ffi::supple_pick) returns them): the grab's id
/// (≥ 0), or a negative code with a message.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_grab_start(
    body: u32,
    triangle: u32,
    b0: f64,
    b1: f64,
    b2: f64,
    stiffness: f64,
    damping: f64,
) -> i32 {
    with_sim(|s| {
        let valid = finite(&[b0, b1, b2, stiffness, damping]) && stiffness > 0.0 && damping >= 0.0;
        if !valid {
            return fail(
                ERR_ARGS,
                "grab: barycentrics, stiffness > 0 and damping ≥ 0 must be finite",
            );
        }
        let Some(tri) = s.surface_triangle(body as usize, triangle as usize) else {
            return fail(ERR_ARGS, "grab: no such body or triangle");
        };
        // Barycentrics from a pick sum to 1 up to round-off; the engine wants them exact.
        let sum = b0 + b1 + b2;
        let bary = [b0 / sum, b1 / sum, b2 / sum];
        match engine_grab(s.world_mut(), body as usize, tri, bary, stiffness, damping) {
            Ok(id) => id as i32,
            Err((code, message)) => fail(code, &message),
        }
    })
}

/// Moves grab `id`'s target to `(x, y, z)`.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_grab_move(id: u32, x: f64, y: f64, z: f64) -> i32 {
    with_sim(|s| {
        if !finite(&[x, y, z]) {
            return fail(ERR_ARGS, "grab: the target must be finite");
        }
        engine_move(s.world_mut(), id, Vector3::new(x, y, z))
            .map_or_else(|(code, m)| fail(code, &m), |()| OK)
    })
}

/// Releases grab `id`.
#[cfg_attr(target_arch = "wasm32", no_mangle)]
pub extern "C" fn supple_grab_release(id: u32) -> i32 {
    with_sim(|s| engine_release(s.world_mut(), id).map_or_else(|(code, m)| fail(code, &m), |()| OK))
}
