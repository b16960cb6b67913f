//! Incremental Potential Contact (Li et al. 2020, "Incremental Potential Contact:
//! Intersection- and Inversion-free, Large-Deformation Dynamics", SIGGRAPH; IPC below): the
//! bodies of a contact island take one backward-Euler step together as one minimization,
//! with contact as a barrier potential and friction as a lagged dissipative potential, and a
//! CCD-filtered line search so that no iterate, and so no state, is ever intersecting.
//!
//! The pieces, each a file:
//! - geometry of the pairs: squared distances with gradients and Hessians ([`distance`]),
//!   the log barrier and its adaptive stiffness ([`barrier`]), the edge–edge mollifier
//!   ([`mollifier`]), the per-stencil PSD projection ([`psd`]), friction's smoothing
//!   ([`friction`]), additive CCD ([`accd`]; Li et al. 2021);
//! - the island as one surface ([`mesh`]), its barrier potential over the active pairs
//!   ([`potential`]), lagged friction ([`friction_potential`]);
//! - the coupled matrix pattern ([`pattern`]) and the step itself ([`step`]).
//!
//! Geometry queries (broad phase, distances, CCD) stay in `contact/`; the step asks them
//! "which pairs are within d̂" and "how far may this step go".

pub mod accd;
pub mod barrier;
pub mod distance;
pub mod friction;
pub mod friction_potential;
pub mod mesh;
pub mod mollifier;
pub mod pattern;
pub mod potential;
pub mod psd;
pub mod step;
pub mod stiff_core;

pub use potential::BarrierHessian;
pub use step::{IpcFailure, IpcStats, IpcStep, IpcTimes};

use crate::linalg::{PcgSettings, Preconditioner};

/// Settings of the IPC contact step (scene `[contact]` keys `dhat`, `kappa`, `eps_v`,
/// `ipc_tolerance`, `ipc_velocity_tolerance`, `ipc_max_iterations`, `ipc_hessian`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IpcSettings {
    /// Barrier activation distance `d̂` (m); `None`: 10⁻³ × the island's rest bounding-box
    /// diagonal (IPC §8's default).
    pub dhat: Option<f64>,
    /// Barrier stiffness κ (IPC units); `None`: adaptive (IPC §4.3).
    pub kappa: Option<f64>,
    /// Friction's static-to-dynamic velocity `ε_v` (m/s); `None`: 10⁻³ × the island's
    /// bounding-box diagonal per second (IPC §5).
    pub eps_v: Option<f64>,
    /// Coulomb friction between bodies (obstacles have their own).
    pub friction: f64,
    /// Newton stops when `‖r‖ ≤ tolerance (‖M vⁿ‖ + h ‖M g‖)` (the residual is a momentum) ...
    pub tolerance: f64,
    /// ... or when the Newton direction changes no vertex's velocity by more than this
    /// times the island's bounding-box diagonal (1/s): IPC's termination test
    /// `‖p‖∞ / h < ε_d` on the position step `p = h δ`, with `ε_d` relative to the
    /// scene's size so that the same scene at 1 m and at 1 cm stops alike.
    pub velocity_tolerance: f64,
    /// Newton iterations per step at most.
    pub max_iterations: u32,
    /// The linear solver of each Newton iteration (to its tolerance, or tighter where the
    /// residual test needs it). 10⁻³ halves the CG iterations of the resting 10k-tet
    /// stack at the same Newton count, but the ±30 m/s tube crash then crawls (one impact
    /// step took 28 s, against 347 ms per step at 10⁻⁶; EXPERIMENTS.md), so the default
    /// stays 10⁻⁶. Preconditioner: Eisenstat's SSOR (the same iterations as block SSOR at
    /// about half the cost of each).
    pub solver: PcgSettings,
    /// How each contact pair's barrier Hessian is made positive semidefinite for Newton's
    /// matrix ([`BarrierHessian`]; the residual and the line search are exact either way).
    /// Default [`BarrierHessian::Projected`]. [`BarrierHessian::GaussNewton`] takes the
    /// same Newton iterations on the resting 10k-tet stack at about 30 % less CPU, but on
    /// the ±10 m/s tube crash at dt 5 ms it misses Newton's tolerance on 4 of the first 5
    /// steps after every halving, the projection on 1 (EXPERIMENTS.md, *IPC*).
    pub hessian: BarrierHessian,
}

impl Default for IpcSettings {
    fn default() -> Self {
        Self {
            dhat: None,
            kappa: None,
            eps_v: None,
            friction: 0.0,
            tolerance: 1e-6,
            velocity_tolerance: 1e-2,
            max_iterations: 100,
            solver: PcgSettings {
                tolerance: 1e-6,
                max_iterations: 2000,
                preconditioner: Preconditioner::EisenstatSsor,
            },
            hessian: BarrierHessian::Projected,
        }
    }
}
