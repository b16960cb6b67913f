//! The wall clock the step path times its phases with (the `*_s` fields of the step
//! statistics), portable to `wasm32-unknown-unknown`.
//!
//! On native targets [`Instant`] is [`std::time::Instant`] itself. On wasm32 without WASI,
//! `std::time::Instant::now()` panics (there is no clock the standard library can reach), so
//! there [`Instant`] is a stand-in with the same methods the engine uses — [`Instant::now`],
//! [`Instant::elapsed`], [`Instant::duration_since`] and `later - earlier` — whose durations are
//! all zero. The physics never reads the clock (results do not depend on it); only the timing
//! statistics do, and a page measures its own wall time around `step` calls instead
//! (`performance.now()`). Keeping the stand-in clock-less keeps the library free of global
//! state and of imports the host would have to provide.
//!
//! ```
//! use supple::clock::Instant;
//! let t = Instant::now();
//! let _seconds = t.elapsed().as_secs_f64();
//! ```

#[cfg(not(target_arch = "wasm32"))]
pub use std::time::Instant;

#[cfg(target_arch = "wasm32")]
pub use wasm::Instant;

#[cfg(target_arch = "wasm32")]
mod wasm {
    use std::ops::Sub;
    use std::time::Duration;

    /// A point in time that measures nothing: every duration between two of them is zero.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub struct Instant;

    impl Instant {
        /// Now (no clock is read).
        pub fn now() -> Self {
            Instant
        }

        /// Zero.
        pub fn elapsed(&self) -> Duration {
            Duration::ZERO
        }

        /// Zero.
        pub fn duration_since(&self, _earlier: Instant) -> Duration {
            Duration::ZERO
        }
    }

    impl Sub for Instant {
        type Output = Duration;
        fn sub(self, _earlier: Instant) -> Duration {
            Duration::ZERO
        }
    }
}
