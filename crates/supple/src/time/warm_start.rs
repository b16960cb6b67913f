//! The first guess of an implicit step's linear solve from the velocities of the last steps:
//! polynomial extrapolation, of the order that predicted the last step best.
//!
//! The order-`k` extrapolation through the `k + 1` equally spaced velocities
//! `vₙ, vₙ₋₁, …, vₙ₋ₖ` is `Σⱼ (−1)ʲ C(k+1, j+1) vₙ₋ⱼ` (Newton's backward differences:
//! `vₙ₊₁ = vₙ + ∇vₙ + … + ∇ᵏvₙ + O(hᵏ⁺¹)`): order 0 is `vₙ`, order 1 `2vₙ − vₙ₋₁`, order 2
//! `3vₙ − 3vₙ₋₁ + vₙ₋₂`, order 3 `4vₙ − 6vₙ₋₁ + 4vₙ₋₂ − vₙ₋₃`. Smooth motion (a swinging
//! bar) is predicted better the higher the order; a velocity that jumps (an impact, a
//! contact that holds or lets go) is predicted worse, since the coefficients amplify the
//! jump. So the order is chosen each step: at the first solve of step `n + 1` the history
//! still holds what step `n` extrapolated from, and `vₙ₊₁` (the velocity the step ended with,
//! after its contact holds and retries) tells which order would have been closest, in the
//! Euclidean norm over all vertices; that order is used for the new guess. The result of the
//! solve does not depend on the guess beyond the solver's tolerance; the iteration count
//! does (EXPERIMENTS.md, issue 18, *The warm start's order*).

use crate::linalg::flat;
use nalgebra::Vector3;

/// Highest extrapolation order (`MAX_ORDER + 1` past velocities are kept).
pub const MAX_ORDER: usize = 6;

/// `COEFFICIENTS[k][j] = (−1)ʲ C(k+1, j+1)`: the weight of `vₙ₋ⱼ` in the order-`k`
/// extrapolation.
const COEFFICIENTS: [[f64; MAX_ORDER + 1]; MAX_ORDER + 1] = {
    let mut c = [[0.0; MAX_ORDER + 1]; MAX_ORDER + 1];
    let mut k = 0;
    while k <= MAX_ORDER {
        // C(k+1, j+1) by the row recurrence C(n, r+1) = C(n, r) (n − r) / (r + 1).
        let n = k + 1;
        let mut binom = n as f64; // C(n, 1)
        let mut j = 0;
        while j <= k {
            c[k][j] = if j % 2 == 0 { binom } else { -binom };
            binom = binom * (n - j - 1) as f64 / (j + 2) as f64;
            j += 1;
        }
        k += 1;
    }
    c
};

/// The velocities at the starts of the last steps, newest first, and the order chosen for
/// the current step.
#[derive(Debug, Clone)]
pub struct VelocityHistory {
    /// A ring of `MAX_ORDER + 1` velocity arrays; `past[(head + j) % len]` is the `j`-th
    /// newest. Allocated once.
    past: Vec<Vec<Vector3<f64>>>,
    head: usize,
    /// How many of `past` hold a velocity of this run of equal steps.
    filled: usize,
    /// Time and step of the newest entry (to tell a retried step and a changed step).
    newest_at: Option<(f64, f64)>,
    order: usize,
}

impl VelocityHistory {
    /// An empty history for `n` vertices.
    pub fn new(n: usize) -> Self {
        Self {
            past: (0..=MAX_ORDER).map(|_| vec![Vector3::zeros(); n]).collect(),
            head: 0,
            filled: 0,
            newest_at: None,
            order: 0,
        }
    }

    /// The `j`-th newest stored velocity.
    fn past(&self, j: usize) -> &[Vector3<f64>] {
        &self.past[(self.head + j) % self.past.len()]
    }

    /// The order used by the last [`Self::begin_step`].
    pub fn order(&self) -> usize {
        self.order
    }

    /// Starts the step at `time` with step `h` from the velocity `v`: chooses the order from
    /// how well each order predicted `v` from the history, writes the guess into `guess`, and
    /// stores `v` as the newest entry. A step taken again from the same `time` (the world's
    /// retry after a failed step) first drops the entry its failed try stored; a different
    /// `h` starts a new history (the extrapolation assumes equal steps).
    pub fn begin_step(
        &mut self,
        time: f64,
        h: f64,
        v: &[Vector3<f64>],
        guess: &mut [Vector3<f64>],
    ) {
        if let Some((t, hh)) = self.newest_at {
            if t == time && self.filled > 0 {
                // A retry of the step whose start is the newest entry.
                self.head = (self.head + 1) % self.past.len();
                self.filled -= 1;
            }
            if hh != h {
                self.filled = 0;
            }
        }
        self.order = self.best_order(v);
        self.extrapolate(self.order, v, 0, guess);
        // Store v as the newest.
        self.head = (self.head + self.past.len() - 1) % self.past.len();
        let slot = self.head;
        self.past[slot].copy_from_slice(v);
        self.filled = (self.filled + 1).min(self.past.len());
        self.newest_at = Some((time, h));
    }

    /// The guess of a solve of the current step again (after [`Self::begin_step`] stored its
    /// start `v`): the same order from the same velocities.
    pub fn again(&self, v: &[Vector3<f64>], guess: &mut [Vector3<f64>]) {
        self.extrapolate(self.order, v, 1, guess);
    }

    /// `guess = c₀ v + Σ_{j≥1} cⱼ past(skip + j − 1)` for the order-`k` coefficients.
    fn extrapolate(&self, k: usize, v: &[Vector3<f64>], skip: usize, guess: &mut [Vector3<f64>]) {
        let c = &COEFFICIENTS[k];
        guess.copy_from_slice(v);
        if k == 0 {
            return;
        }
        for g in guess.iter_mut() {
            *g *= c[0];
        }
        for (j, &cj) in c.iter().enumerate().take(k + 1).skip(1) {
            let p = self.past(skip + j - 1);
            for (g, pj) in guess.iter_mut().zip(p) {
                *g += cj * pj;
            }
        }
    }

    /// The order (at most what the history allows) whose extrapolation from the stored
    /// velocities came closest to `v`, preferring the lowest order within a factor
    /// [`TIE`] of the closest (after a jump every order misses by about the jump, and the
    /// low orders amplify it least in the next guess). Order 0 when nothing is stored.
    fn best_order(&self, v: &[Vector3<f64>]) -> usize {
        if self.filled == 0 {
            return 0;
        }
        // The order-k prediction of v uses past(0..=k): needs filled ≥ k + 1.
        let top = (self.filled - 1).min(MAX_ORDER);
        let p: [&[Vector3<f64>]; MAX_ORDER + 1] = std::array::from_fn(|j| self.past(j));
        // One specialised loop per top order: with the order a constant, the differencing is
        // straight-line code without bounds checks (the generic loop cost ~140 cycles per
        // component, 12 % of the 450-tet bar's step; EXPERIMENTS.md, issue 18).
        let err = errors(top, &p, v);
        let mut best = 0;
        for k in 1..=top {
            if err[k] < err[best] {
                best = k;
            }
        }
        (0..=best)
            .find(|&k| err[k] <= TIE * err[best])
            .unwrap_or(best)
    }
}

crate::isa::avx2_or_baseline! {
    /// [`order_errors`] for the orders up to `top`, compiled for the baseline and for AVX2,
    /// chosen at run time ([`crate::isa`]; the same bits).
    fn errors(
        top: usize,
        p: &[&[Vector3<f64>]; MAX_ORDER + 1],
        v: &[Vector3<f64>],
    ) -> [f64; MAX_ORDER + 1] {
        match top {
            0 => order_errors::<0>(p, v),
            1 => order_errors::<1>(p, v),
            2 => order_errors::<2>(p, v),
            3 => order_errors::<3>(p, v),
            4 => order_errors::<4>(p, v),
            5 => order_errors::<5>(p, v),
            _ => order_errors::<6>(p, v),
        }
    }
}

/// The squared prediction errors `err[k] = Σ |v − Pₖ|²` of the orders `k ≤ TOP` (zero above).
/// Predictions by Newton's backward differences: `P₀ = q₀, Pₖ = Pₖ₋₁ + ∇ᵏq₀`, the
/// differences by repeated differencing in place, `qⱼ` the `j`-th newest stored velocity
/// `p[j]`. The velocity components are taken [`LANES`] at a time (component `i` summed into
/// lane `i mod LANES`, the lanes added in order at the end), so that the arithmetic runs in
/// vector registers: the same bits on any thread count, O(n K²) next to a solve's
/// O(nnz × iterations), yet ~8 % of the 450-tet bar's step when summed one component at a
/// time (EXPERIMENTS.md, issue 18).
#[allow(clippy::needless_range_loop)] // lane and order indices tie several arrays together
#[inline(always)]
fn order_errors<const TOP: usize>(
    p: &[&[Vector3<f64>]; MAX_ORDER + 1],
    v: &[Vector3<f64>],
) -> [f64; MAX_ORDER + 1] {
    const LANES: usize = 4;
    let m = 3 * v.len();
    let vf = flat(v);
    let pf: [&[f64]; MAX_ORDER + 1] = std::array::from_fn(|j| &flat(p[j])[..m]);
    let mut acc = [[0.0f64; LANES]; MAX_ORDER + 1];
    let full = m / LANES * LANES;
    for base in (0..full).step_by(LANES) {
        lanes::<TOP, LANES>(vf, &pf, base, LANES, &mut acc);
    }
    if full < m {
        // The unused lanes of the last group see zeros everywhere: they add exact zeros.
        lanes::<TOP, LANES>(vf, &pf, full, m - full, &mut acc);
    }
    std::array::from_fn(|k| acc[k].iter().sum())
}

/// One group of [`order_errors`]: components `base..base + width` into the lanes of `acc`
/// (a function, not a closure, so that it is inlined into the AVX2 copy).
#[inline(always)]
#[allow(clippy::needless_range_loop)] // lane and order indices tie several arrays together
fn lanes<const TOP: usize, const LANES: usize>(
    vf: &[f64],
    pf: &[&[f64]; MAX_ORDER + 1],
    base: usize,
    width: usize,
    acc: &mut [[f64; LANES]; MAX_ORDER + 1],
) {
    let mut d = [[0.0f64; LANES]; MAX_ORDER + 1];
    let mut q = [0.0f64; LANES];
    for l in 0..width {
        q[l] = vf[base + l];
        for j in 0..=TOP {
            d[j][l] = pf[j][base + l];
        }
    }
    let mut pred = d[0];
    for l in 0..LANES {
        let e = q[l] - pred[l];
        acc[0][l] += e * e;
    }
    for k in 1..=TOP {
        for j in 0..=TOP - k {
            for l in 0..LANES {
                d[j][l] -= d[j + 1][l];
            }
        }
        for l in 0..LANES {
            pred[l] += d[0][l];
            let e = q[l] - pred[l];
            acc[k][l] += e * e;
        }
    }
}

/// An order is taken in place of a higher one whose squared prediction error is at most
/// this factor smaller.
const TIE: f64 = 2.0;

#[cfg(test)]
mod tests {
    use super::*;

    fn field(n: usize, t: f64, p: impl Fn(f64) -> f64) -> Vec<Vector3<f64>> {
        (0..n)
            .map(|i| {
                let s = 1.0 + i as f64;
                Vector3::new(s * p(t), -p(t), 0.5 * s * p(t))
            })
            .collect()
    }

    /// Each order reproduces polynomials of its degree exactly, and the history picks the
    /// lowest order that does once enough steps are stored. (Integer times and coefficients:
    /// every value is exact in `f64`, so the exact orders have zero error.)
    #[test]
    fn extrapolation_is_exact_for_polynomials_of_its_order() {
        let n = 5;
        let h = 1.0;
        for degree in 0..=MAX_ORDER {
            let p = |t: f64| {
                (0..=degree)
                    .map(|d| (1.0 + d as f64) * t.powi(d as i32))
                    .sum()
            };
            let mut hist = VelocityHistory::new(n);
            let mut guess = vec![Vector3::zeros(); n];
            let mut checked = 0;
            for step in 0..MAX_ORDER + 6 {
                let t = step as f64 * h;
                let v = field(n, t, p);
                hist.begin_step(t, h, &v, &mut guess);
                if step > degree {
                    assert_eq!(hist.order(), degree, "degree {degree}, step {step}");
                    assert_eq!(guess, field(n, t + h, p), "degree {degree}, step {step}");
                    checked += 1;
                } else {
                    assert!(hist.order() < degree.max(1), "degree {degree}, step {step}");
                }
            }
            assert!(checked >= 5);
        }
    }

    /// The specialised lane loops give the errors of the plain generic loop they replaced (a
    /// dynamic top order, one component at a time) up to the order of the sums.
    #[test]
    #[allow(clippy::needless_range_loop)]
    fn specialised_errors_match_the_generic_loop() {
        let n = 37;
        let mut seed = 7u64;
        let mut rnd = move || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
        };
        let past: Vec<Vec<Vector3<f64>>> = (0..=MAX_ORDER)
            .map(|_| (0..n).map(|_| Vector3::new(rnd(), rnd(), rnd())).collect())
            .collect();
        let v: Vec<Vector3<f64>> = (0..n).map(|_| Vector3::new(rnd(), rnd(), rnd())).collect();
        let p: [&[Vector3<f64>]; MAX_ORDER + 1] = std::array::from_fn(|j| &past[j][..]);
        for top in 0..=MAX_ORDER {
            let mut expected = [0.0f64; MAX_ORDER + 1];
            let mut d = [0.0f64; MAX_ORDER + 1];
            for (i, vi) in v.iter().enumerate() {
                for c in 0..3 {
                    for (j, dj) in d.iter_mut().enumerate().take(top + 1) {
                        *dj = p[j][i][c];
                    }
                    let mut pred = d[0];
                    expected[0] += (vi[c] - pred) * (vi[c] - pred);
                    for k in 1..=top {
                        for j in 0..=top - k {
                            d[j] -= d[j + 1];
                        }
                        pred += d[0];
                        expected[k] += (vi[c] - pred) * (vi[c] - pred);
                    }
                }
            }
            let got = match top {
                0 => order_errors::<0>(&p, &v),
                1 => order_errors::<1>(&p, &v),
                2 => order_errors::<2>(&p, &v),
                3 => order_errors::<3>(&p, &v),
                4 => order_errors::<4>(&p, &v),
                5 => order_errors::<5>(&p, &v),
                _ => order_errors::<6>(&p, &v),
            };
            for k in 0..=MAX_ORDER {
                let tol = 1e-13 * expected[k].abs();
                assert!((got[k] - expected[k]).abs() <= tol, "top {top}, order {k}");
                assert_eq!(got[k] == 0.0, k > top, "top {top}, order {k}");
            }
        }
    }

    /// A jump (an impact) makes the low orders the better predictors.
    #[test]
    fn a_jump_in_velocity_selects_a_low_order() {
        let n = 3;
        let h = 0.01;
        let mut hist = VelocityHistory::new(n);
        let mut guess = vec![Vector3::zeros(); n];
        // Constant velocity, then a reversal, then constant again.
        let vs = [1.0, 1.0, 1.0, 1.0, 1.0, -1.0, -1.0];
        for (step, &s) in vs.iter().enumerate() {
            let v = vec![Vector3::new(s, 0.0, 0.0); n];
            hist.begin_step(step as f64 * h, h, &v, &mut guess);
        }
        // After the jump order 0 (v itself) predicted −1 from −1 exactly.
        assert_eq!(hist.order(), 0);
        assert_eq!(guess[0], Vector3::new(-1.0, 0.0, 0.0));
    }

    /// A retried step (same start time) replaces its entry instead of adding one, and a new
    /// step size starts over.
    #[test]
    fn retries_and_step_changes_keep_the_history_consistent() {
        let n = 2;
        let h = 1.0;
        let lin = |t: f64| 2.0 + 3.0 * t;
        let mut hist = VelocityHistory::new(n);
        let mut guess = vec![Vector3::zeros(); n];
        for step in 0..5 {
            let t = step as f64 * h;
            hist.begin_step(t, h, &field(n, t, lin), &mut guess);
        }
        // The step at t = 4h retried: the same guess again.
        let first = guess.clone();
        let t = 4.0 * h;
        hist.begin_step(t, h, &field(n, t, lin), &mut guess);
        assert_eq!(guess, first);
        assert_eq!(hist.order(), 1);
        // Retried with h/2: no history of that spacing, order 0.
        hist.begin_step(t, h / 2.0, &field(n, t, lin), &mut guess);
        assert_eq!(hist.order(), 0);
        assert_eq!(guess, field(n, t, lin));
    }
}
