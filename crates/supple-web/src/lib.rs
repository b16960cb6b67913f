//! # Supple in the browser
//!
//! This crate builds to a WebAssembly module (`wasm32-unknown-unknown`, `cdylib`) with raw
//! C-ABI exports, loaded by the static page in `www/` with `WebAssembly.instantiateStreaming`
//! and no generated glue, inside a Web Worker (`www/worker.js`; the page's main thread draws
//! with three.js and sends the worker commands). On the host it builds as an ordinary library whose exports are
//! plain functions ([`ffi`]), so it is tested, linted and documented with the workspace.
//!
//! ## Protocol
//! - **Bytes in**: `supple_alloc(len)` reserves `len` bytes in wasm memory; the page writes
//!   into them and frees them with `supple_free(ptr, len)`.
//! - **Load**: `supple_load(text, text_len, name, name_len, files, files_len)`: the scene's
//!   TOML, its name, and its files as one blob ([`ffi::decode_files`]: per file a `u32` name
//!   length, the name, a `u32` data length, the data; little-endian). Mesh paths are relative
//!   to the scene, as on disk (`meshes/tube_solid_1k.node` and `.ele`).
//! - **Step**: `supple_step(n)` (always), `supple_frame(n)` (unless paused),
//!   `supple_set_paused(0|1)`, `supple_reset()`.
//! - **Draw**: `supple_positions_ptr()`/`_len()` (`f32`, 3 per vertex, all bodies),
//!   `supple_triangles_ptr()`/`_len()` (`u32` indices into them), per-body offsets. The page
//!   views them as `new Float32Array(memory.buffer, ptr, len)`. **Views are detached when
//!   the wasm memory grows** (any allocation may grow it: a load, a setting, a step that
//!   allocates), so make them again from `memory.buffer` after every call into the module, or
//!   at least whenever `memory.buffer` is no longer the buffer the view was made on. The
//!   pointers themselves stay valid until the next `supple_load`.
//! - **Pick**: `supple_pick(ox, oy, oz, dx, dy, dz)` → 1 on a hit, read at `supple_pick_ptr()`
//!   as 9 `f64`: body, triangle, barycentrics (3), ray parameter t, point (3).
//! - **Settings**: `supple_set_youngs(E)`, `supple_set_poisson(ν)`,
//!   `supple_set_damping(α, β)`, `supple_set_dt(dt)`, `supple_set_model(name)`,
//!   `supple_set_integrator(name)` (names as in scene files, passed as bytes). Each rebuilds
//!   the world through the scene's own validation ([`overrides`]) and keeps positions,
//!   velocities and time, except after a failure or from an invalid state, where the world
//!   starts again from the scene's start with the new setting.
//! - **Statistics**: `supple_stats()` writes JSON (time, steps, dt, integrator, model, E, ν,
//!   damping, per body: mass, kinetic energy, bounding box, solver and Newton iterations; the live grabs
//!   with their targets and spring forces) to the
//!   message buffer and returns its length; read it at `supple_message_ptr()`.
//! - **Grab**: `supple_grab_start/_move/_release` ([`grab`]): the engine's grab spring on a
//!   picked surface point.
//! - **Colours and validity** ([`field`]): `supple_field(kind)` (0 displacement, 1 von
//!   Mises, 2 volume ratio) → per-vertex `f32` values; the statistics carry `invalid` (the
//!   reason, or null) and `failure` (why the last step failed).
//! - **A bare mesh** ([`default_scene`]): `supple_default_scene(name, name_len, files,
//!   files_len)` writes the TOML of a default scene for the mesh file `name` (the body
//!   dropped on a ground plane) to the message buffer and returns its length.
//! - **Obstacles and exact positions** ([`view`]): `supple_obstacles()` writes the scene's
//!   rigid obstacles with their poses now as JSON to the message buffer (its length);
//!   `supple_positions_f64()` copies the positions in `f64` (for comparing with a native run).
//!
//! Return codes: [`OK`] (0) or a count ≥ 0 on success; negative on failure, with a message at
//! `supple_message_ptr()`/`supple_message_len()`.
//!
//! ## Time and threads on wasm32
//! The engine's phase timings read [`supple::clock::Instant`], which measures zero on wasm32;
//! the worker times `supple_step` itself with `performance.now()`. rayon has no threads there:
//! its global pool falls back to running every parallel loop on the calling thread, which
//! gives the same bits as any thread count (the engine's loops are deterministic).

pub mod default_scene;
pub mod ffi;
pub mod field;
pub mod grab;
pub mod overrides;
pub mod pick;
pub mod sim;
pub mod view;

pub use sim::Sim;

/// Success.
pub const OK: i32 = 0;
/// No scene is loaded.
pub const ERR_NO_SCENE: i32 = -1;
/// The scene or a setting was refused (the message says why).
pub const ERR_INVALID: i32 = -2;
/// A step failed (diverged); the world stays stopped until a reset or a new setting.
pub const ERR_FAILED: i32 = -3;
/// The feature is not available in this build (mouse grab, until the engine's grab spring
/// is wired in).
pub const ERR_NOT_AVAILABLE: i32 = -4;
/// Bad arguments (not UTF-8, out of range, not finite).
pub const ERR_ARGS: i32 = -5;
