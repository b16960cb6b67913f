//! `supple bench`'s block for the coupled IPC contact step: Newton and CG iterations per
//! step and where the step's time goes (medians over the timed steps).

use serde::Serialize;
use supple::contact::ipc::IpcStats;
use supple_run::record::median;

/// The IPC step's figures (scenes whose contact response resolved to IPC).
#[derive(Serialize)]
pub struct IpcBench {
    pub newton_per_step_median: f64,
    pub newton_per_step_mean: f64,
    pub cg_per_step_median: f64,
    /// Phase medians (ms): residuals and merit (forces, barrier and friction gradients,
    /// energies), Jacobians (bodies' matrices and projected contact Hessians), the PCG
    /// solves, contact set updates (broad phase and distances), CCD with the inversion cap.
    pub ms_median: IpcPhases,
    pub pairs_median: f64,
    pub ccd_cuts_mean: f64,
    pub backtracks_mean: f64,
}

#[derive(Serialize)]
pub struct IpcPhases {
    pub residual: f64,
    pub jacobian: f64,
    pub solve: f64,
    pub pairs: f64,
    pub ccd: f64,
}

/// The timed steps' IPC statistics, one per step.
#[derive(Default)]
pub struct IpcSamples(Vec<IpcStats>);

impl IpcSamples {
    pub fn with_capacity(n: usize) -> Self {
        Self(Vec::with_capacity(n))
    }

    pub fn push(&mut self, s: IpcStats) {
        self.0.push(s);
    }

    /// The block, or `None` when no step took the IPC path.
    pub fn report(&self) -> Option<IpcBench> {
        if self.0.is_empty() {
            return None;
        }
        let col = |f: &dyn Fn(&IpcStats) -> f64| -> Vec<f64> { self.0.iter().map(f).collect() };
        let mean = |v: Vec<f64>| v.iter().sum::<f64>() / v.len() as f64;
        Some(IpcBench {
            newton_per_step_median: median(&col(&|s| s.newton_iterations as f64)),
            newton_per_step_mean: mean(col(&|s| s.newton_iterations as f64)),
            cg_per_step_median: median(&col(&|s| s.cg_iterations as f64)),
            ms_median: IpcPhases {
                residual: median(&col(&|s| s.times.residual_s * 1e3)),
                jacobian: median(&col(&|s| s.times.jacobian_s * 1e3)),
                solve: median(&col(&|s| s.times.solve_s * 1e3)),
                pairs: median(&col(&|s| s.times.pairs_s * 1e3)),
                ccd: median(&col(&|s| s.times.ccd_s * 1e3)),
            },
            pairs_median: median(&col(&|s| s.pairs as f64)),
            ccd_cuts_mean: mean(col(&|s| s.ccd_cuts as f64)),
            backtracks_mean: mean(col(&|s| s.backtracks as f64)),
        })
    }
}
