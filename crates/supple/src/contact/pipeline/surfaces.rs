//! Step 2 of the contact phase: the surface response (projection passes and the fail-safe,
//! or contact springs) and the detection passes it runs (see the module doc of
//! [`super`]).

use super::{Contact, ContactStats, PairHit, GROWTH_LIMIT};
use crate::body::Body;
use crate::clock::Instant;
use crate::contact::detect::{gap, PassStats, Paths};
use crate::contact::springs::Spring;
use crate::contact::Response;
use nalgebra::Vector3;

impl Contact {
    /// Projection passes, then the fail-safe (module doc, step 2).
    pub(super) fn project_surfaces(
        &mut self,
        bodies: &mut [Body],
        dt: f64,
        stats: &mut ContactStats,
    ) {
        let delta = self.thickness;
        let mu = self.settings.friction;
        let mut first = 0;
        self.pushed.clear();
        for m in &mut self.surface_moved {
            m.fill(false);
        }
        self.surface_moves = 0;
        for (b, root) in self.island.iter_mut().enumerate() {
            *root = b;
        }
        // After the second solves, the first pass tests only the pairs whose paths changed
        // since the first contact phase ended without a meeting pair (`skips.rs`).
        let resume = self.mark_changed_since_clean(bodies);
        for pass in 0..self.settings.max_iterations {
            self.detect(bodies, dt, stats, pass > 0 || resume);
            if pass == 0 {
                first = self.hits.len();
            } else if self.hits.len() > GROWTH_LIMIT * first.max(16) {
                // The pushes are making more contacts than they resolve (a body swept
                // through another: a mutated snapping torus went from 311 to 800,000 pairs
                // in 16 passes, 10 s a try): straight to the fail-safe.
                stats.bounded_out += 1;
                break;
            }
            if pass == 0 {
                stats.contacts += self.hits.len();
                for h in &self.hits {
                    let depth = -gap(bodies, h);
                    for &(b, _) in &h.vertices {
                        let p = &mut stats.body_penetration[b as usize];
                        *p = p.max(depth);
                    }
                }
            }
            if self.hits.is_empty() {
                self.note_clean(bodies);
                return;
            }
            stats.iterations += 1;
            let t = Instant::now();
            for m in &mut self.moved {
                m.fill(false);
            }
            for i in 0..self.hits.len() {
                let h = self.hits[i];
                self.push_apart(bodies, &h, delta, mu);
            }
            stats.response_s += t.elapsed().as_secs_f64();
        }
        // Fail-safe: every vertex of a pair that still meets goes back to x⁰ (where no pair
        // met), and is immovable from then on. Each round freezes at least one more surface
        // vertex or ends (a vertex is frozen once: it then sits at x⁰ with no inverse mass),
        // so it ends within one round more than there are surface vertices; that count is
        // also the loop's explicit bound.
        let max_rounds = 1 + self
            .surfaces
            .iter()
            .map(|s| s.vertices.len())
            .sum::<usize>();
        for _ in 0..max_rounds {
            self.detect(bodies, dt, stats, true);
            if self.hits.is_empty() {
                self.note_clean(bodies);
                return;
            }
            let t = Instant::now();
            let mut froze = 0;
            for m in &mut self.moved {
                m.fill(false);
            }
            for h in &self.hits {
                for k in 0..4 {
                    let (b, v) = (h.vertices[k].0 as usize, h.vertices[k].1 as usize);
                    if h.hit.w[k] != 0.0 {
                        // Its pairs are tested again (even when nothing here can move).
                        self.moved[b][v] = true;
                    }
                    if h.hit.w[k] != 0.0 && !bodies[b].fixed[v] && self.inv_mass[b][v] != 0.0 {
                        self.inv_mass[b][v] = 0.0;
                        bodies[b].x[v] = self.x0[b][v];
                        mark(&mut self.surface_moved, &mut self.surface_moves, b, v);
                        froze += 1;
                    } else if h.hit.w[k] != 0.0
                        && bodies[b].x[v] != self.x0[b][v]
                        && !bodies[b].fixed[v]
                    {
                        // Pinned by an obstacle this step: its start position met nothing.
                        bodies[b].x[v] = self.x0[b][v];
                        mark(&mut self.surface_moved, &mut self.surface_moves, b, v);
                        froze += 1;
                    }
                }
            }
            stats.frozen += froze;
            stats.response_s += t.elapsed().as_secs_f64();
            if froze == 0 {
                stats.unresolved = self.hits.len();
                return;
            }
        }
        stats.bounded_out += 1;
        stats.unresolved = self.hits.len();
    }

    /// Moves the pair's end positions apart along its normal until the gap is `delta`,
    /// mass-weighted (`Δx_k = m_k⁻¹ w_k λ n`), and applies Coulomb friction to the pair's
    /// relative tangential displacement over the step (at most μ times the normal push).
    fn push_apart(&mut self, bodies: &mut [Body], h: &PairHit, delta: f64, mu: f64) {
        let n = h.hit.normal;
        let g = gap(bodies, h);
        if g >= delta {
            return;
        }
        // Marked whether or not they move: a pair nothing can move must be tested again,
        // so that the fail-safe sees it.
        for &(b, v) in &h.vertices {
            self.moved[b as usize][v as usize] = true;
        }
        let inv_mass = &self.inv_mass;
        let inv = |k: usize| {
            let (b, v) = h.vertices[k];
            inv_mass[b as usize][v as usize]
        };
        let denom: f64 = (0..4).map(|k| h.hit.w[k] * h.hit.w[k] * inv(k)).sum();
        if denom <= 0.0 {
            return;
        }
        let push = delta - g;
        let mut correction = (push / denom) * n;
        if mu > 0.0 {
            let dr: Vector3<f64> = (0..4)
                .map(|k| {
                    let (b, v) = (h.vertices[k].0 as usize, h.vertices[k].1 as usize);
                    h.hit.w[k] * (bodies[b].x[v] - self.x0[b][v])
                })
                .sum();
            let dr_t = dr - dr.dot(&n) * n;
            let len = dr_t.norm();
            if len > 0.0 {
                let cut = (mu * push).min(len);
                correction -= (cut / len / denom) * dr_t;
            }
        }
        for k in 0..4 {
            let (b, v) = (h.vertices[k].0 as usize, h.vertices[k].1 as usize);
            let scale = inv(k) * h.hit.w[k];
            if scale != 0.0 {
                bodies[b].x[v] += scale * correction;
                mark(&mut self.surface_moved, &mut self.surface_moves, b, v);
            }
        }
        let (a, b) = (h.vertices[0].0 as usize, h.vertices[3].0 as usize);
        self.join_islands(a, b);
        self.pushed.push(*h);
    }

    /// Springs mode: remove the springs that pull, add one per pair that met.
    pub(super) fn update_springs(
        &mut self,
        bodies: &mut [Body],
        dt: f64,
        stats: &mut ContactStats,
    ) {
        self.springs.prune(|b, v| bodies[b].x[v]);
        self.detect(bodies, dt, stats, false);
        stats.contacts += self.hits.len();
        // Only entering pairs get a spring: one leaving through a face is a vertex that an
        // earlier spring let in, and a spring there would hold it inside (the failure
        // Liesenfeld & Stolfi report in §9).
        for h in self.hits.iter().filter(|h| h.entering) {
            self.springs.add(Spring {
                vertices: h.vertices,
                w: h.hit.w,
                normal: h.hit.normal,
                stiffness: self.spring_stiffness,
            });
        }
        stats.springs = self.springs.springs.len();
        for s in &self.springs.springs {
            let depth = -s.separation(|b, v| bodies[b].x[v]).dot(&s.normal);
            for &(b, _) in &s.vertices {
                let p = &mut stats.body_penetration[b as usize];
                *p = p.max(depth);
            }
        }
    }

    /// One detection pass into `self.hits` (all pairs, or with `only_moved` only those with
    /// a vertex the last pass moved).
    fn detect(&mut self, bodies: &[Body], dt: f64, stats: &mut ContactStats, only_moved: bool) {
        let Some(det) = self.detector.as_mut() else {
            self.hits.clear();
            return;
        };
        let paths = Paths {
            x0: &self.x0,
            v0: &self.v0,
            bodies,
            dt,
            moved: only_moved.then_some(&self.moved[..]),
            prune: true,
        };
        let mut pass = PassStats {
            broad_pairs: stats.broad_pairs,
            ..PassStats::default()
        };
        let all_hits = matches!(self.settings.response, Response::Springs { .. });
        det.detect(
            &self.settings,
            &self.surfaces,
            &paths,
            self.thickness,
            all_hits,
            &mut pass,
        );
        if self.check_skips && only_moved {
            // The same pass in full: it must find exactly the pruned pass's pairs.
            self.check_hits.clear();
            self.check_hits.extend_from_slice(&det.hits);
            let full = Paths {
                moved: None,
                prune: false,
                ..paths
            };
            let mut unused = PassStats::default();
            det.detect(
                &self.settings,
                &self.surfaces,
                &full,
                self.thickness,
                all_hits,
                &mut unused,
            );
            assert_eq!(
                det.hits, self.check_hits,
                "a pair skipped by a pruned detection pass meets"
            );
            self.skips_checked.passes += 1;
            if self.again && stats.iterations == 0 {
                // The first pass after the second solves.
                self.skips_checked.after_solves += 1;
                self.skips_checked.found_after_solves += det.hits.len();
            }
        }
        stats.broad_pairs = pass.broad_pairs;
        stats.broad_work += pass.broad_work;
        stats.pairs_tested += pass.pairs_tested;
        stats.bounded_out += pass.bounded_out;
        stats.broad_s += pass.broad_s;
        stats.narrow_s += pass.narrow_s;
        std::mem::swap(&mut self.hits, &mut det.hits);
    }
}

/// Marks vertex `v` of body `b` in `moved` (the vertices the surface response moved, for
/// `pipeline/surface_hold.rs`), counting it in `count` once.
fn mark(moved: &mut [Vec<bool>], count: &mut usize, b: usize, v: usize) {
    if !moved[b][v] {
        moved[b][v] = true;
        *count += 1;
    }
}
