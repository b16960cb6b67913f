//! A haptic-rate force loop: a device asks "what force is on the tool at position `p`?"
//! about a thousand times a second while the simulation steps at 20–100 Hz. Zhuang & Canny
//! (§7: "interfacing our system to haptic devices, such as a Phantom") and Debunne et al.
//! (§6: "interfacing the simulator with a force feedback device") name this as their next
//! step and describe no method; the local model below is the usual one of haptic rendering,
//! built from Supple's implicit step.
//!
//! Between two simulation steps the device is answered from a **local model** of the grab,
//! the linearized response of the last step (Zhuang-style):
//!
//! `f(p) ≈ f₀ + K (p − p₀)`,
//!
//! with `p₀` the grab's target at the end of the last step, `f₀` the force on the tool there
//! (the opposite of [`World::grab_force`](crate::world::World::grab_force): the spring pulls
//! the tool toward the grabbed point), and `K` the 3×3 stiffness of the tool
//! ([`LocalModel`]). `K` is the grab spring **in series with the body's condensed dynamic
//! stiffness at the grabbed point** ([`GrabResponse`] derives and computes it): the force
//! the next backward-Euler step would return, differentiated with respect to that step's
//! target. A simpler choice, the spring alone (`K = −(k + d/h) I`, the body held still over
//! the step), is [`LocalModel::spring_only`]; it is stiffer than the body can push back.
//!
//! The loop itself ([`HapticLoop`], native targets only: `wasm32-unknown-unknown` has no
//! threads) runs on its own thread at a fixed rate, reads the device position each tick
//! ([`Device`], or positions fed through the handle), evaluates the local model — a few
//! multiply-adds, no allocation, no lock held beyond copying 20 numbers — and hands the force
//! back. The force of a tick is a pure function of its position and the model it used, both
//! recorded, so a run's trace can be replayed bit for bit.

#[cfg(not(target_arch = "wasm32"))]
mod device_loop;
mod response;

#[cfg(not(target_arch = "wasm32"))]
pub use device_loop::{Device, HapticLoop, LoopSettings, LoopStats, Tick};
pub use response::{effective_spring, GrabResponse};

use nalgebra::{Matrix3, Vector3};
use thiserror::Error;

/// The local model of a grab the loop renders: `f(p) = f₀ + K (p − p₀)`, valid from the end
/// of simulation step `step` (world time `time`) until the next model arrives.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LocalModel {
    /// The world step (its count, [`World::steps`](crate::world::World::steps)) this model
    /// linearizes; 0 for "no step yet" (the zero model).
    pub step: u64,
    /// World time at that step's end (s).
    pub time: f64,
    /// `p₀`: the grab's target at the step's end (m).
    pub p0: Vector3<f64>,
    /// `f₀`: the force on the tool at `p₀` (N), the opposite of the spring's force on the
    /// body.
    pub f0: Vector3<f64>,
    /// `K = ∂f/∂p` (N/m), symmetric negative semi-definite for a stable body.
    pub k: Matrix3<f64>,
}

impl LocalModel {
    /// No force anywhere (before the first step).
    pub fn zero() -> Self {
        Self {
            step: 0,
            time: 0.0,
            p0: Vector3::zeros(),
            f0: Vector3::zeros(),
            k: Matrix3::zeros(),
        }
    }

    /// The force on the tool at `p`: `f₀ + K (p − p₀)`.
    #[inline]
    pub fn force(&self, p: &Vector3<f64>) -> Vector3<f64> {
        self.f0 + self.k * (p - self.p0)
    }

    /// The same model with the spring-only stiffness `K = −k_e I`, `k_e = k + d/h` (the body
    /// does not move in response; a stated simpler choice, stiffer than the grab really is).
    pub fn spring_only(&self, k_e: f64) -> Self {
        Self {
            k: Matrix3::from_diagonal_element(-k_e),
            ..*self
        }
    }
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum HapticError {
    #[error("haptic: no grab {0:?} (released, or never made)")]
    UnknownGrab(crate::world::GrabId),
    #[error("haptic: {key} = {value}: {reason}")]
    Setting {
        key: &'static str,
        value: f64,
        reason: &'static str,
    },
    #[error("haptic: the condensed-stiffness solve {axis} did not converge (relative residual {residual:e})")]
    Solve { axis: usize, residual: f64 },
    #[error("haptic: the loop thread could not start: {0}")]
    Spawn(String),
    #[error("haptic: the loop thread panicked")]
    Panicked,
}
