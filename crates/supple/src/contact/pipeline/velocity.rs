//! Step 3 of the contact phase: the velocities after the surface response.
//!
//! The projection passes move a pair's end positions apart until its gap is the contact
//! thickness `δ`. Letting velocities follow those corrections (`v¹ += Δx / dt`) sends a pair
//! that began the step closer than `δ` (pressed together, or left interpenetrated by an
//! earlier step) apart at `(δ − g⁰) / dt` — at dt = 2.5 ms a 1 mm deficit is 0.4 m/s —
//! and gives every vertex of a pushed face the velocity of its own push: energy from
//! nowhere (two cubes touching at 0.1 m/s left at 0.3 m/s with twice the kinetic energy;
//! the snapping torus, `scenes/snapping_torus.toml`, gained up to 8.4 J after its release).
//!
//! So the position correction stays a position correction, and the velocities get impulses
//! instead: for each pair the response pushed, a normal impulse `λ ≥ 0` along `n`,
//! mass-weighted over the pair's weights `w_k` (`Δv_k = m_k⁻¹ w_k λ n`; the weights of a
//! pair sum to zero, so it is equal and opposite and momentum is kept), that stops the pair
//! approaching — its relative normal velocity `u = n · Σ w_k v_k` ends ≥ 0 (inelastic), a
//! separating pair is left alone — by projected Gauss–Seidel sweeps over the pairs with
//! accumulated impulses; then Coulomb friction, a tangential impulse of at most `μ λ`
//! against the pair's relative tangential velocity. Vertices the fail-safe put back at their
//! start positions keep `v¹ += Δx / dt` (for backward Euler that is `v = 0`: they did not
//! move over the step).

use super::Contact;
use crate::body::Body;
use nalgebra::Vector3;

/// Gauss–Seidel sweeps of the normal impulses.
const SWEEPS: usize = 4;

impl Contact {
    /// The velocities after the surface response (module notes).
    pub(super) fn update_velocities(&mut self, bodies: &mut [Body], dt: f64) {
        for (b, body) in bodies.iter_mut().enumerate() {
            let (before, inv_mass) = (&self.x_before[b], &self.inv_mass[b]);
            for (i, ((v, x), xb)) in body.v.iter_mut().zip(&body.x).zip(before).enumerate() {
                if x != xb && inv_mass[i] == 0.0 && !body.fixed[i] {
                    *v += (x - xb) / dt;
                }
            }
        }
        let mu = self.settings.friction;
        let inv_mass = &self.inv_mass;
        let relative = |bodies: &[Body], h: &super::PairHit| -> Vector3<f64> {
            (0..4)
                .filter(|&k| h.hit.w[k] != 0.0)
                .map(|k| {
                    let (b, v) = h.vertices[k];
                    h.hit.w[k] * bodies[b as usize].v[v as usize]
                })
                .sum()
        };
        let inv = |h: &super::PairHit, k: usize| {
            let (b, v) = h.vertices[k];
            inv_mass[b as usize][v as usize]
        };
        let apply = |bodies: &mut [Body], h: &super::PairHit, impulse: Vector3<f64>| {
            for k in 0..4 {
                let (b, v) = (h.vertices[k].0 as usize, h.vertices[k].1 as usize);
                bodies[b].v[v] += inv(h, k) * h.hit.w[k] * impulse;
            }
        };
        // Accumulated normal impulses, one per pushed pair.
        self.pushed_u.clear();
        self.pushed_u.resize(self.pushed.len(), 0.0);
        for _ in 0..SWEEPS {
            for (h, total) in self.pushed.iter().zip(&mut self.pushed_u) {
                let denom: f64 = (0..4).map(|k| h.hit.w[k] * h.hit.w[k] * inv(h, k)).sum();
                if denom <= 0.0 {
                    continue;
                }
                let u = h.hit.normal.dot(&relative(bodies, h));
                // λ ≥ 0 overall: the pair may only be pushed apart.
                let next = (*total - u / denom).max(0.0);
                let step = next - *total;
                *total = next;
                if step != 0.0 {
                    apply(bodies, h, step * h.hit.normal);
                }
            }
        }
        if mu > 0.0 {
            for (h, &lambda) in self.pushed.iter().zip(&self.pushed_u) {
                let denom: f64 = (0..4).map(|k| h.hit.w[k] * h.hit.w[k] * inv(h, k)).sum();
                if denom <= 0.0 || lambda <= 0.0 {
                    continue;
                }
                let r = relative(bodies, h);
                let vt = r - h.hit.normal.dot(&r) * h.hit.normal;
                let len = vt.norm();
                if len > 0.0 {
                    // Sticking when μλ covers the impulse that stops the sliding.
                    let cut = (mu * lambda).min(len / denom);
                    apply(bodies, h, -(cut / len) * vt);
                }
            }
        }
        self.pushed.clear();
    }
}
