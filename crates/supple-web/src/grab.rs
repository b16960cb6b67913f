//! Mouse grab: the three exports the page calls while the user drags a point of a body.
//!
//! **Not wired to the engine yet.** The engine's grab spring
//! (`World::grab(body, point, stiffness, damping) -> Result<GrabId, _>`,
//! `World::move_grab(id, target)`, `World::release(id)`) is being added on `main` in
//! parallel; this module is where it gets called. Until then every export checks its
//! arguments, computes what it would hand to the engine, and returns
//! [`ERR_NOT_AVAILABLE`] with a message the page shows. Wiring it
//! means replacing the three `engine_*` functions below; nothing else in the crate or the
//! page changes.
//!
//! The page's side (`www/main.js`): on mouse-down it picks
//! ([`supple_pick`](crate::ffi::supple_pick)) and calls [`supple_grab_start`] with the hit's
//! body, triangle and barycentrics; while the mouse moves it intersects the mouse ray with the
//! plane through the grabbed point facing the camera and calls [`supple_grab_move`] with that
//! point; on mouse-up it calls [`supple_grab_release`].

use crate::ffi::{fail, with_sim};
use crate::{ERR_ARGS, ERR_NOT_AVAILABLE, OK};
use nalgebra::Vector3;
use supple::world::World;

/// Why the engine could not grab, move or release (its message is shown by the page).
type EngineResult<T> = Result<T, (i32, String)>;

const NOT_AVAILABLE: &str = "grab is not available in this build: the engine's grab spring \
                             (World::grab) is not wired into supple-web yet";

/// Grabs body `body` at material point `point` (its current position) with a spring of
/// `stiffness` (N/m) and `damping` (N·s/m); the grab's id.
fn engine_grab(
    _world: &mut World,
    _body: usize,
    _point: Vector3<f64>,
    _stiffness: f64,
    _damping: f64,
) -> EngineResult<u32> {
    // Wire: world.grab(body, point, stiffness, damping) → the id as u32.
    Err((ERR_NOT_AVAILABLE, NOT_AVAILABLE.into()))
}

/// Moves grab `id`'s target to `target`.
fn engine_move(_world: &mut World, _id: u32, _target: Vector3<f64>) -> EngineResult<()> {
    // Wire: world.move_grab(GrabId from id, target).
    Err((ERR_NOT_AVAILABLE, NOT_AVAILABLE.into()))
}

/// Releases grab `id`.
fn engine_release(_world: &mut World, _id: u32) -> EngineResult<()> {
    // Wire: world.release(GrabId from id).
    Err((ERR_NOT_AVAILABLE, NOT_AVAILABLE.into()))
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
        let Some(point) = s.surface_point(body as usize, triangle as usize, [b0, b1, b2]) else {
            return fail(ERR_ARGS, "grab: no such body or triangle");
        };
        match engine_grab(s.world_mut(), body as usize, point, stiffness, damping) {
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
