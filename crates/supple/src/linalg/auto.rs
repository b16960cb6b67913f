//! [`Preconditioner::Auto`]: the preconditioner chosen from a trial on the body's own system.
//!
//! Which preconditioner is cheapest moves with the system, not with its size alone: Eisenstat
//! SSOR beats the multigrid on a soft 160k-tet bar and loses on a stiff one, because the
//! crossover follows `stiffness · dt² / mass` (how far the system is from its mass matrix) as
//! much as the mesh. So `Auto` solves the first system with each candidate from the same first
//! guess, counts the iterations each needed, and keeps the one whose modelled cost
//! ([`Cost`]) is lowest. The solution returned is the chosen candidate's.
//!
//! **The cost model** is in units of one product `A x` with the system matrix, so that the
//! choice is the same on every machine and for every thread count: a choice made from
//! wall-clock times would change with the machine's load, and the results with it. Per solve,
//! a candidate costs its refresh (inverting or copying blocks when the matrix changed) plus
//! its iterations times the cost of one iteration, plus, for the multigrid, its set-up spread
//! over [`AMG_SETUP_HORIZON`] solves. One thing of the machine enters, as a fixed constant:
//! whether the system fits in cache ([`CACHE_BYTES`]). It moves the multigrid's iteration
//! cost relative to the sweeps' by half (its `f32` storage pays only when products stream
//! from memory), and no model without it chooses right on both the 20k and the 160k bars.
//! The constants come from the solve phase of the six bench bars
//! (docs/experiments/performance.md, *The choice of `auto`*).
//!
//! **What the trial sees.** It runs on the body's first system, whose first guess has no
//! history yet: the single-level sweeps then need relatively more iterations than on later,
//! warm-started steps (on the stiff 20k bar Eisenstat SSOR takes 90 iterations to the
//! multigrid's 13 on the first system, 42 to 9 on average over the bench steps), which
//! favours the multigrid. The in-cache iteration cost (`1.5 + 3.5 oc`, 8.5 products at the
//! 20k bar's `oc`) sits at the top of what is measured there; even so, with the set-up priced
//! as measured since it is made of block products (300 products), the stiff 20k bar's trial
//! goes to the multigrid (133.8 against 137.5 products), which measures 1.07–1.11× Eisenstat
//! SSOR's time per step there. A trial on a later, warm-started system is the cleaner design;
//! it was not built.
//!
//! **Saving the trial's cost.** Eisenstat SSOR runs first; a candidate that cannot beat the
//! best so far is stopped at the iteration where it would pass it (block Jacobi, the
//! multigrid), and the multigrid is not even built when its cheapest possible solve (one
//! iteration) costs more than the best so far — a small or mass-dominated body never builds a
//! hierarchy.
//!
//! **A new trial** is made when the number of free vertices moved by more than
//! [`RETRIAL_FREE_CHANGE`] since the last one, or when the chosen candidate's iterations left
//! `[n / g − 2, g n + 2]` around the trial's `n` (`g` = [`RETRIAL_GROWTH`]): the matrix has
//! then changed enough that another candidate may have become cheaper. Trials are at least
//! [`RETRIAL_MIN_SOLVES`] solves apart. A trial allocates nothing of its own once the first
//! one has sized its buffers; a multigrid that a later trial builds for the first time
//! allocates its hierarchy, as a rebuild does.

use super::{BlockCsr, Pcg, PcgSettings, PcgStats, Preconditioner};
use crate::linalg::amg::Amg;
use nalgebra::Vector3;

/// The per-solve cost model of a candidate, in products with the system matrix.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cost {
    /// The refresh when the matrix changed (block inverses, sweep copies).
    pub refresh: f64,
    /// One iteration (the product `A p` where the loop makes one, the preconditioner, the
    /// vector updates).
    pub per_iteration: f64,
    /// The set-up (multigrid hierarchy) spread over `AMG_SETUP_HORIZON` (100) solves.
    pub setup_per_solve: f64,
}

impl Cost {
    /// The modelled cost of a solve that took `iterations`.
    pub fn of(&self, iterations: usize) -> f64 {
        self.refresh + self.per_iteration * iterations as f64 + self.setup_per_solve
    }

    /// The most iterations a solve can take and still cost less than `bound`.
    fn iterations_below(&self, bound: f64) -> usize {
        let room = (bound - self.refresh - self.setup_per_solve) / self.per_iteration;
        if room.is_finite() {
            room.max(0.0).ceil() as usize
        } else {
            usize::MAX
        }
    }
}

/// Eisenstat SSOR: two sweeps over the upper blocks per iteration and no product with `A`
/// (1.5–1.6 products measured per iteration on the 20k and 160k bars).
pub const EISENSTAT_COST: Cost = Cost {
    refresh: 7.0,
    per_iteration: 1.45,
    setup_per_solve: 0.0,
};

/// Block Jacobi: one product and a 3×3 block per vertex (1.0–1.3 measured per iteration,
/// priced as Eisenstat SSOR's: it is chosen only where its cheaper refresh outweighs its
/// extra iterations, the small mass-dominated bodies).
pub const JACOBI_COST: Cost = Cost {
    refresh: 3.0,
    per_iteration: 1.45,
    setup_per_solve: 0.0,
};

/// The multigrid's set-up in products with the finest matrix (about 300 measured on the 20k
/// bars, 210 on the 160k bars, one thread: its block products, `amg::product`).
pub const AMG_SETUP_PRODUCTS: f64 = 300.0;

/// Solves over which a multigrid set-up is counted (the hierarchy is kept while the solves'
/// iterations stay within its rebuild factor; the bench bars rebuild it less often than this).
pub const AMG_SETUP_HORIZON: f64 = 100.0;

/// The system matrix's bytes above which a product with it streams from main memory (half
/// the 32 MiB last-level cache of the machine the model was measured on: the vectors and the
/// preconditioner share the cache). A fixed constant, not the machine's, so that the choice
/// is the same on every machine.
pub const CACHE_BYTES: usize = 16 << 20;

/// The bytes of `a` a product reads: its 3×3 `f64` blocks and their column indices.
pub fn system_bytes(a: &BlockCsr) -> usize {
    a.values.len() * (9 * 8 + 4)
}

/// The multigrid: the V-cycle's per-iteration cost grows with the operator complexity `oc`,
/// and depends on where the system lives.
/// - In cache (`in_cache`), the cost is arithmetic: the coarse levels' 6×6 blocks cost as
///   their `f64` products would, `1.5 + 3.5 oc` (8.2 products measured per iteration at
///   `oc` = 2.01 on the 20k bars).
/// - Beyond it, the cost is bytes: the finest level's `f32` lower copy and the coarse levels'
///   `f32` operators stream at half a product's bytes, `2.5 + oc` (4.5–5.7 measured at
///   `oc` = 2.20 on the 160k bars), while Eisenstat SSOR's `f64` sweeps cost what they cost
///   in cache.
///
/// Plus a refresh of the finest level's `f32` copy and diagonal inverses.
pub fn amg_cost(operator_complexity: f64, in_cache: bool) -> Cost {
    let per_iteration = if in_cache {
        1.5 + 3.5 * operator_complexity
    } else {
        2.5 + operator_complexity
    };
    Cost {
        refresh: 20.0,
        per_iteration,
        setup_per_solve: AMG_SETUP_PRODUCTS / AMG_SETUP_HORIZON,
    }
}

/// A new trial when the free vertices changed by more than this fraction of the trial's.
pub const RETRIAL_FREE_CHANGE: f64 = 0.1;
/// A new trial when the chosen candidate's iterations leave `[n / g − 2, g n + 2]`.
pub const RETRIAL_GROWTH: f64 = 1.5;
/// A new trial when the chosen multigrid was rebuilt this many times since the trial (its
/// set-up is then paid more often than [`AMG_SETUP_HORIZON`] assumed: the next trial counts
/// it at the rate seen).
pub const RETRIAL_AMG_REBUILDS: usize = 3;
/// Solves between two trials, at least.
pub const RETRIAL_MIN_SOLVES: usize = 50;

/// The candidates, in the order they are tried.
const CANDIDATES: [Preconditioner; 3] = [
    Preconditioner::EisenstatSsor,
    Preconditioner::BlockJacobi,
    Preconditioner::Amg,
];

/// What a trial found for one candidate.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    pub preconditioner: Preconditioner,
    /// Iterations of its trial solve (0 when it was not run).
    pub iterations: usize,
    /// It reached the tolerance.
    pub converged: bool,
    /// It was not run (`skipped`) or was stopped (`stopped`) because it could not beat the best
    /// candidate before it.
    pub skipped: bool,
    pub stopped: bool,
    /// The cost model and the modelled cost of its solve (products with `A`; infinite when it
    /// did not converge).
    pub model: Cost,
    pub cost: f64,
}

/// The choice of `Auto` and the trial it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct AutoChoice {
    pub chosen: Preconditioner,
    pub candidates: Vec<Candidate>,
    /// Free vertices of the trial's system.
    pub free: usize,
    /// Trials made so far (1 for a choice never revisited).
    pub trials: usize,
    /// The solve number (from 0) of the last trial.
    pub trial_solve: usize,
}

impl AutoChoice {
    /// One line: the chosen candidate, its modelled cost, and the others'.
    pub fn reason(&self) -> String {
        let mut parts = Vec::new();
        for c in &self.candidates {
            let what = if c.skipped {
                "not run: its one-iteration floor costs more".to_string()
            } else if c.stopped {
                format!("stopped at {} iterations", c.iterations)
            } else if !c.converged {
                format!("unconverged after {} iterations", c.iterations)
            } else {
                format!("{:.1} (its {})", c.cost, c.iterations)
            };
            parts.push(format!("{} {what}", c.preconditioner.name()));
        }
        format!(
            "{}: the lowest modelled cost per solve, in products with the system matrix, of a \
             trial on {} free vertices: {}",
            self.chosen.name(),
            self.free,
            parts.join(", ")
        )
    }
}

/// The state of `Auto` inside a [`Pcg`].
#[derive(Debug, Default)]
pub(super) struct AutoState {
    pub choice: Option<AutoChoice>,
    /// Solves made with `Auto` so far.
    solves: usize,
    /// A retrial is due (the chosen candidate's iterations left their band).
    due: bool,
    /// The first guess of the trial, and the best candidate's solution so far.
    x0: Vec<Vector3<f64>>,
    best: Vec<Vector3<f64>>,
    /// Multigrid builds when the last trial ended (its rebuild rate since then prices its
    /// set-up in the next trial).
    amg_builds_at_trial: usize,
}

impl Pcg {
    /// The choice of `Auto`, once a solve has made one.
    pub fn auto_choice(&self) -> Option<&AutoChoice> {
        self.auto.choice.as_ref()
    }

    /// [`Pcg::solve_changed`] with `Auto`: a trial when one is due, else the chosen candidate.
    pub(super) fn solve_auto(
        &mut self,
        a: &BlockCsr,
        matrix_changed: bool,
        b: &[Vector3<f64>],
        fixed: &[bool],
        x: &mut [Vector3<f64>],
        settings: &PcgSettings,
    ) -> PcgStats {
        let free = fixed.iter().filter(|&&f| !f).count();
        let solve = self.auto.solves;
        self.auto.solves += 1;
        let trial = match &self.auto.choice {
            None => true,
            Some(c) => {
                let moved = free.abs_diff(c.free) as f64 > RETRIAL_FREE_CHANGE * c.free as f64;
                (moved || self.auto.due) && solve >= c.trial_solve + RETRIAL_MIN_SOLVES
            }
        };
        if !trial {
            let c = self.auto.choice.as_ref().expect("a choice");
            let (chosen, n) = (c.chosen, c.chosen_iterations() as f64);
            let stats = self.solve_with(chosen, a, matrix_changed, b, fixed, x, settings, true);
            let its = stats.iterations as f64;
            let rebuilt = self
                .amg_builds()
                .saturating_sub(self.auto.amg_builds_at_trial);
            if its > RETRIAL_GROWTH * n + 2.0
                || its < n / RETRIAL_GROWTH - 2.0
                || (chosen == Preconditioner::Amg && rebuilt >= RETRIAL_AMG_REBUILDS)
            {
                self.auto.due = true;
            }
            return stats;
        }
        self.trial(solve, free, a, matrix_changed, b, fixed, x, settings)
    }

    /// Multigrid builds so far.
    fn amg_builds(&self) -> usize {
        self.amg.as_ref().map_or(0, |amg| amg.builds())
    }

    /// Solves with each candidate from the first guess in `x` and keeps the cheapest.
    #[allow(clippy::too_many_arguments)]
    fn trial(
        &mut self,
        solve: usize,
        free: usize,
        a: &BlockCsr,
        matrix_changed: bool,
        b: &[Vector3<f64>],
        fixed: &[bool],
        x: &mut [Vector3<f64>],
        settings: &PcgSettings,
    ) -> PcgStats {
        let mut x0 = std::mem::take(&mut self.auto.x0);
        let mut best_x = std::mem::take(&mut self.auto.best);
        x0.clear();
        x0.extend_from_slice(x);
        best_x.clear();
        best_x.extend_from_slice(x);
        // Set-ups per solve since the last trial when the multigrid was running; at least one
        // per horizon.
        let amg_rate = match &self.auto.choice {
            Some(c) if c.chosen == Preconditioner::Amg && solve > c.trial_solve => {
                let rebuilt = self
                    .amg_builds()
                    .saturating_sub(self.auto.amg_builds_at_trial);
                rebuilt as f64 / (solve - c.trial_solve) as f64
            }
            _ => 0.0,
        }
        .max(1.0 / AMG_SETUP_HORIZON);
        let in_cache = system_bytes(a) <= CACHE_BYTES;
        let amg_model = |oc: f64| Cost {
            setup_per_solve: AMG_SETUP_PRODUCTS * amg_rate,
            ..amg_cost(oc, in_cache)
        };
        // The last trial's list, reused: a trial in the step loop allocates nothing of its own.
        let (mut candidates, trials) = match self.auto.choice.take() {
            Some(c) => (c.candidates, c.trials),
            None => (Vec::with_capacity(CANDIDATES.len()), 0),
        };
        candidates.clear();
        // The best so far: its index among the candidates, modelled cost and statistics.
        let mut best: Option<(usize, f64, PcgStats)> = None;
        // Among unconverged candidates (when none converges): the smallest residual.
        let mut least_bad: Option<(usize, PcgStats)> = None;
        for (k, &p) in CANDIDATES.iter().enumerate() {
            let bound = best.map_or(f64::INFINITY, |(_, c, _)| c);
            let floor = match p {
                Preconditioner::Amg => match self.amg.as_ref() {
                    Some(amg) if amg.is_built() => amg_model(complexity(amg)),
                    _ => amg_model(1.0),
                },
                Preconditioner::BlockJacobi => JACOBI_COST,
                _ => EISENSTAT_COST,
            };
            let cap = floor.iterations_below(bound);
            if cap == 0 || floor.of(1) >= bound {
                candidates.push(Candidate {
                    preconditioner: p,
                    iterations: 0,
                    converged: false,
                    skipped: true,
                    stopped: false,
                    model: floor,
                    cost: f64::INFINITY,
                });
                continue;
            }
            x.copy_from_slice(&x0);
            let capped = PcgSettings {
                max_iterations: settings.max_iterations.min(cap),
                ..*settings
            };
            let uncapped = capped.max_iterations == settings.max_iterations;
            let stats = self.solve_with(p, a, matrix_changed, b, fixed, x, &capped, uncapped);
            let model = match p {
                Preconditioner::Amg => self
                    .amg
                    .as_ref()
                    .map(|amg| amg_model(complexity(amg)))
                    .unwrap_or(floor),
                _ => floor,
            };
            let stopped = !stats.converged && !uncapped;
            let cost = if stats.converged {
                model.of(stats.iterations)
            } else {
                f64::INFINITY
            };
            candidates.push(Candidate {
                preconditioner: p,
                iterations: stats.iterations,
                converged: stats.converged,
                skipped: false,
                stopped,
                model,
                cost,
            });
            if stats.converged && cost < bound {
                best = Some((k, cost, stats));
                best_x.copy_from_slice(x);
            } else if best.is_none()
                && !stopped
                && least_bad.is_none_or(|(_, s)| {
                    stats.relative_residual < s.relative_residual || s.relative_residual.is_nan()
                })
            {
                least_bad = Some((k, stats));
                best_x.copy_from_slice(x);
            }
        }
        let (k, stats) = match (best, least_bad) {
            (Some((k, _, s)), _) => (k, s),
            (None, Some((k, s))) => (k, s),
            // Nothing ran to its cap: Eisenstat SSOR's result (it always runs uncapped).
            (None, None) => (0, PcgStats::non_finite(0)),
        };
        x.copy_from_slice(&best_x);
        self.auto.choice = Some(AutoChoice {
            chosen: CANDIDATES[k],
            candidates,
            free,
            trials: trials + 1,
            trial_solve: solve,
        });
        self.auto.due = false;
        self.auto.amg_builds_at_trial = self.amg_builds();
        self.auto.x0 = x0;
        self.auto.best = best_x;
        stats
    }
}

impl AutoChoice {
    /// The chosen candidate's iterations in the trial.
    fn chosen_iterations(&self) -> usize {
        self.candidates
            .iter()
            .find(|c| c.preconditioner == self.chosen)
            .map_or(0, |c| c.iterations)
    }
}

/// The operator complexity of a built hierarchy (1 for a direct coarsest solve).
fn complexity(amg: &Amg) -> f64 {
    let oc = amg.operator_complexity();
    if oc.is_finite() && oc >= 1.0 {
        oc
    } else {
        1.0
    }
}

#[cfg(test)]
#[path = "auto_tests.rs"]
mod tests;
