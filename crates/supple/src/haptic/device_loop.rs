//! The device-rate loop on its own thread (native targets: `wasm32-unknown-unknown` has no
//! threads, and a page runs its device loop itself with [`LocalModel::force`]).
//!
//! Tick `n` is due at `start + n / rate`. The thread sleeps until `spin` before the deadline
//! and spins the rest (an OS sleep wakes up late by its timer slack, ~50 µs on Linux), so it
//! keeps to an absolute schedule: a late tick does not push the later ones back. A tick
//! found more than one period late (the OS did not run the thread) skips the deadlines that
//! have passed and runs the latest one — a haptic device wants the force now, not the stale
//! ones — and counts them as [`LoopStats::missed`]. Each tick copies the model and the fed
//! position under a mutex held for a copy, evaluates `f₀ + K (p − p₀)`, stores the result and
//! hands it to the [`Device`]: nothing is allocated and the force depends only on the tick's
//! position and model (the device's position is read at the tick's nominal time `n / rate`).

use super::{HapticError, LocalModel};
use crate::clock::Instant;
use nalgebra::Vector3;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

/// The loop's rate and its wake-up policy.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoopSettings {
    /// Ticks per second (Hz), above 0 and at most 100 kHz; 1 kHz by default (a Phantom's
    /// servo rate).
    pub rate_hz: f64,
    /// How long before a deadline the thread stops sleeping and spins; below one period.
    pub spin: Duration,
}

impl Default for LoopSettings {
    fn default() -> Self {
        Self {
            rate_hz: 1000.0,
            spin: Duration::from_micros(50),
        }
    }
}

/// One tick of the loop: when it was due, where the tool was, the force, which model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tick {
    /// Its index `n` (due at `n / rate` after the start).
    pub index: u64,
    /// `n / rate` (s).
    pub t: f64,
    pub position: Vector3<f64>,
    /// The force on the tool (N).
    pub force: Vector3<f64>,
    /// [`LocalModel::step`] of the model it used.
    pub model_step: u64,
}

/// What a device does each tick: say where the tool is, and render the force.
pub trait Device: Send + 'static {
    /// The tool's position at tick `index` (nominal time `t`), or `None` for the position
    /// last fed through [`HapticLoop::feed`].
    fn position(&mut self, index: u64, t: f64) -> Option<Vector3<f64>>;
    /// Renders (or records) a tick's force. Runs on the loop's thread: it must be quick and
    /// should not allocate.
    fn render(&mut self, tick: &Tick);
}

/// What a run of the loop achieved.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LoopStats {
    /// Ticks run.
    pub ticks: u64,
    /// Deadlines skipped because the thread woke more than a period late.
    pub missed: u64,
    /// From the first deadline to the stop (s).
    pub elapsed_s: f64,
    /// `ticks / elapsed_s` (Hz).
    pub rate_hz: f64,
    /// The latest a tick started after its deadline (s): the OS's wake-up delay.
    pub max_late_s: f64,
    /// The longest a tick took from its start to the device's render returning (s): the
    /// loop's own work.
    pub max_busy_s: f64,
}

#[derive(Debug)]
struct Shared {
    model: LocalModel,
    fed: Vector3<f64>,
    last: Option<Tick>,
}

#[derive(Debug)]
struct Inner {
    state: Mutex<Shared>,
    stop: AtomicBool,
}

impl Inner {
    /// The state holds plain numbers, consistent after any panic: a poisoned lock is taken.
    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The handle of a running loop: feed it models and positions, read its last tick, stop it.
/// Dropping it stops the loop too.
#[derive(Debug)]
pub struct HapticLoop<D: Device> {
    inner: Arc<Inner>,
    thread: Option<JoinHandle<(LoopStats, D)>>,
}

impl<D: Device> HapticLoop<D> {
    /// Starts the loop on a new thread, rendering [`LocalModel::zero`] until the first
    /// [`update`](Self::update).
    pub fn start(settings: LoopSettings, device: D) -> Result<Self, HapticError> {
        let period = 1.0 / settings.rate_hz;
        if !(settings.rate_hz > 0.0 && settings.rate_hz <= 1e5) {
            return Err(HapticError::Setting {
                key: "rate_hz",
                value: settings.rate_hz,
                reason: "must be above 0 and at most 100000",
            });
        }
        if settings.spin.as_secs_f64() >= period {
            return Err(HapticError::Setting {
                key: "spin",
                value: settings.spin.as_secs_f64(),
                reason: "must be shorter than one period",
            });
        }
        let inner = Arc::new(Inner {
            state: Mutex::new(Shared {
                model: LocalModel::zero(),
                fed: Vector3::zeros(),
                last: None,
            }),
            stop: AtomicBool::new(false),
        });
        let shared = Arc::clone(&inner);
        let thread = std::thread::Builder::new()
            .name("supple-haptic".into())
            .spawn(move || run(&shared, settings, device))
            .map_err(|e| HapticError::Spawn(e.to_string()))?;
        Ok(Self {
            inner,
            thread: Some(thread),
        })
    }

    /// The model the next ticks render (after a simulation step).
    pub fn update(&self, model: LocalModel) {
        self.inner.lock().model = model;
    }

    /// The tool position for a device whose [`Device::position`] returns `None`.
    pub fn feed(&self, position: Vector3<f64>) {
        self.inner.lock().fed = position;
    }

    /// The last tick run (`None` before the first).
    pub fn last(&self) -> Option<Tick> {
        self.inner.lock().last
    }

    /// Stops the loop after its current tick and gives back what it achieved and the device.
    pub fn stop(mut self) -> Result<(LoopStats, D), HapticError> {
        self.inner.stop.store(true, Ordering::Release);
        let thread = self.thread.take().ok_or(HapticError::Panicked)?;
        thread.join().map_err(|_| HapticError::Panicked)
    }
}

impl<D: Device> Drop for HapticLoop<D> {
    fn drop(&mut self) {
        self.inner.stop.store(true, Ordering::Release);
        if let Some(thread) = self.thread.take() {
            // A panic of the loop's thread has nowhere to go from a drop.
            let _ = thread.join();
        }
    }
}

/// Sleeps until `spin` before `deadline`, then spins until it.
fn wait_until(deadline: Instant, spin: Duration) {
    let now = Instant::now();
    if deadline <= now {
        return;
    }
    let left = deadline - now;
    if left > spin {
        std::thread::sleep(left - spin);
    }
    while Instant::now() < deadline {
        std::hint::spin_loop();
    }
}

/// The loop's thread (see the module notes).
fn run<D: Device>(inner: &Inner, settings: LoopSettings, mut device: D) -> (LoopStats, D) {
    let period = 1.0 / settings.rate_hz;
    let mut stats = LoopStats::default();
    let start = Instant::now();
    let mut next: u64 = 0;
    while !inner.stop.load(Ordering::Acquire) {
        let deadline = start + Duration::from_secs_f64(next as f64 * period);
        wait_until(deadline, settings.spin);
        let woke = Instant::now();
        let since = (woke - start).as_secs_f64();
        stats.max_late_s = stats.max_late_s.max((woke - deadline).as_secs_f64());
        // The latest deadline that has passed: run it, skipping those before it.
        let due = (since / period).floor() as u64;
        if due > next {
            stats.missed += due - next;
            next = due;
        }
        let t = next as f64 * period;
        let (model, fed) = {
            let s = inner.lock();
            (s.model, s.fed)
        };
        let position = device.position(next, t).unwrap_or(fed);
        let tick = Tick {
            index: next,
            t,
            position,
            force: model.force(&position),
            model_step: model.step,
        };
        inner.lock().last = Some(tick);
        device.render(&tick);
        stats.ticks += 1;
        stats.max_busy_s = stats.max_busy_s.max(woke.elapsed().as_secs_f64());
        next += 1;
    }
    stats.elapsed_s = start.elapsed().as_secs_f64();
    stats.rate_hz = stats.ticks as f64 / stats.elapsed_s.max(f64::MIN_POSITIVE);
    (stats, device)
}
