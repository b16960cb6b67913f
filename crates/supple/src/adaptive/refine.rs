//! Split and merge (Debunne §4.2, eq. 9) under the frame budget (§4.3).

use super::settings::{Budget, Criterion};
use super::state::{AdaptiveBody, FrameStats, NodeState};
use nalgebra::{Matrix3, Vector3};

impl AdaptiveBody {
    /// Eq. 9 at every active node of level `n`, stored in `delta` as the dimensionless
    /// `δ_i / ĥ_i = ĥ_i ‖(Δd)_i‖` with `(Δd)_i = −(1/V_i) Σ_e V_e Σ_j (α_i·α_j) d_j` (eq. 5
    /// with its volume factors) and, for [`Criterion::Interior`], the boundary flux
    /// `(1/V_i) Σ_{faces ∋ i} (A_f/3) G_e n_f` added.
    pub fn compute_criterion(&mut self, n: usize) {
        let level = &self.hierarchy.levels[n];
        let st = &mut self.levels[n];
        for &i in &st.active {
            st.f[i as usize] = Vector3::zeros();
        }
        let grad = |e: usize, d: &[Vector3<f64>]| -> Matrix3<f64> {
            let t = level.mesh.tets[e];
            (0..4)
                .map(|j| d[t[j] as usize] * level.alpha[e][j].transpose())
                .sum()
        };
        for &e in &st.active_tets {
            let e = e as usize;
            let g = grad(e, &st.d);
            for (k, &i) in level.mesh.tets[e].iter().enumerate() {
                if st.status[i as usize] == NodeState::Active {
                    st.f[i as usize] -= level.volume[e] * (g * level.alpha[e][k]);
                }
            }
        }
        if self.settings.criterion == Criterion::Interior {
            for (face, e, an) in &level.faces {
                if face
                    .iter()
                    .all(|&i| st.status[i as usize] != NodeState::Active)
                {
                    continue;
                }
                let flux = grad(*e as usize, &st.d) * an / 3.0;
                for &i in face {
                    if st.status[i as usize] == NodeState::Active {
                        st.f[i as usize] += flux;
                    }
                }
            }
        }
        for &i in &st.active {
            let i = i as usize;
            st.delta[i] = level.h_hat[i] * st.f[i].norm() / level.dual_volume[i];
        }
    }

    /// Step 4 of §4.3: merges (finest first), then splits (largest criterion first) within
    /// the budget; rebuilds the ghost sets if anything changed. With
    /// [`AdaptiveSettings::tool_refine`](super::AdaptiveSettings::tool_refine) (not in the
    /// paper) the nodes the tool reached this frame are split first, and a node whose
    /// children the tool reached within the dwell does not merge.
    pub(super) fn refine(&mut self, stats: &mut FrameStats) {
        if !self.settings.adapt {
            return;
        }
        let n_levels = self.levels.len();
        for n in 0..n_levels {
            self.compute_criterion(n);
            self.merged_now[n].iter_mut().for_each(|m| *m = false);
        }
        let dwell = u64::from(self.settings.min_dwell_frames);
        let frame = self.frame;
        let tool_refine = self.settings.tool_refine;
        // Merges: a split node whose children are all active and continuous enough, and (tool
        // refinement) none of them reached by the tool within the dwell.
        for n in (0..n_levels.saturating_sub(1)).rev() {
            for p in 0..self.levels[n].status.len() {
                if self.levels[n].status[p] != NodeState::Split
                    || frame < self.levels[n].changed[p] + dwell
                {
                    continue;
                }
                let kids = self.hierarchy.children_of(n, p);
                let fine = &self.levels[n + 1];
                let ok = kids.iter().all(|&c| {
                    let seen = fine.tool_seen[c as usize];
                    fine.status[c as usize] == NodeState::Active
                        && !self.merged_now[n + 1][c as usize]
                        && frame >= fine.changed[c as usize] + dwell
                        && fine.delta[c as usize] < self.settings.merge_threshold
                        && (!tool_refine || seen == 0 || frame >= seen + dwell)
                });
                if ok && !kids.is_empty() {
                    self.merge(n, p);
                    stats.merges += 1;
                }
            }
        }
        // Splits: nodes the tool reached this frame first (tool refinement), then the largest
        // criterion first (ties: coarser level, lower index).
        let mut candidates: Vec<(bool, f64, usize, usize)> = Vec::new();
        for n in 0..n_levels.saturating_sub(1) {
            let st = &self.levels[n];
            for &i in &st.active {
                let i = i as usize;
                let by_tool = tool_refine && st.tool_seen[i] == frame;
                // A node that never changed (`changed == 0`: refine runs from frame 1) cannot
                // flicker: the tool splits it without waiting for the dwell.
                let rested = frame >= st.changed[i] + dwell || (by_tool && st.changed[i] == 0);
                if (by_tool || st.delta[i] > self.settings.split_threshold)
                    && !self.merged_now[n][i]
                    && rested
                    && !self.hierarchy.children_of(n, i).is_empty()
                {
                    candidates.push((by_tool, st.delta[i], n, i));
                }
            }
        }
        candidates.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then(b.1.total_cmp(&a.1))
                .then(a.2.cmp(&b.2))
                .then(a.3.cmp(&b.3))
        });
        let mut cost = self.node_updates_per_frame();
        // Tool refinement cascades: children that a tool split creates and the tool reaches
        // split on in the same frame, down to the finest level (each a state change of its
        // own node only once this frame, so no flicker).
        let mut cascade: Vec<(usize, usize)> = Vec::new();
        let mut queue = candidates.into_iter().map(|(_, _, n, i)| (n, i));
        loop {
            let (n, i) = match cascade.pop() {
                Some(c) => c,
                None => match queue.next() {
                    Some(c) => c,
                    None => break,
                },
            };
            if self.levels[n].status[i] != NodeState::Active {
                continue;
            }
            if self.forbid_split {
                stats.splits_refused += 1;
                continue;
            }
            let kids = self.hierarchy.children_of(n, i).len() as u64;
            let added = kids * self.hierarchy.steps_per_frame(n + 1);
            let removed = self.hierarchy.steps_per_frame(n);
            if let Budget::Predictive {
                node_updates_per_frame,
            } = self.settings.budget
            {
                if cost + added - removed > node_updates_per_frame {
                    stats.splits_refused += 1;
                    continue;
                }
            }
            cost = cost + added - removed;
            self.split(n, i);
            stats.splits += 1;
            if let (true, Some(tool)) = (tool_refine, self.tool_now) {
                if n + 2 < n_levels && self.tool_reaches(&tool, n, i) {
                    for &c in self.hierarchy.children_of(n, i) {
                        let c = c as usize;
                        if !self.hierarchy.children_of(n + 1, c).is_empty()
                            && self.tool_reaches(&tool, n + 1, c)
                        {
                            self.levels[n + 1].tool_seen[c] = frame;
                            cascade.push((n + 1, c));
                        }
                    }
                }
            }
        }
        if stats.splits + stats.merges > 0 {
            self.rebuild();
        }
    }

    /// Splits active node `p` of level `n` now (outside the criterion: for prescribed
    /// resolutions and tests) and rebuilds the ghost sets.
    pub fn force_split(&mut self, n: usize, p: usize) -> Result<(), super::AdaptiveError> {
        let ok = n + 1 < self.levels.len()
            && p < self.levels[n].status.len()
            && self.levels[n].status[p] == NodeState::Active
            && !self.hierarchy.children_of(n, p).is_empty();
        if !ok {
            return Err(super::AdaptiveError::Setting {
                key: "split node",
                value: p as f64,
                reason: "not an active node with children",
            });
        }
        self.split(n, p);
        self.rebuild();
        Ok(())
    }

    /// Node `p` of level `n` is replaced by its children, which start with the displacement
    /// and velocity interpolated from their parent tets (§4.2).
    fn split(&mut self, n: usize, p: usize) {
        let (coarse, fine) = self.levels.split_at_mut(n + 1);
        let (coarse, fine) = (&mut coarse[n], &mut fine[0]);
        coarse.status[p] = NodeState::Split;
        coarse.changed[p] = self.frame;
        for &c in self.hierarchy.children_of(n, p) {
            let c = c as usize;
            let link = &self.hierarchy.parent_tet[n + 1][c];
            if !self.hierarchy.levels[n + 1].fixed[c] {
                fine.d[c] = link.interpolate(&coarse.d);
                fine.v[c] = link.interpolate(&coarse.v);
            }
            fine.status[c] = NodeState::Active;
            fine.changed[c] = self.frame;
        }
    }

    /// The children of node `p` of level `n` are dropped and `p` takes the values
    /// interpolated from its child tet.
    fn merge(&mut self, n: usize, p: usize) {
        let (coarse, fine) = self.levels.split_at_mut(n + 1);
        let (coarse, fine) = (&mut coarse[n], &mut fine[0]);
        if !self.hierarchy.levels[n].fixed[p] {
            let link = &self.hierarchy.child_tet[n][p];
            coarse.d[p] = link.interpolate(&fine.d);
            coarse.v[p] = link.interpolate(&fine.v);
        }
        coarse.status[p] = NodeState::Active;
        coarse.changed[p] = self.frame;
        self.merged_now[n][p] = true;
        for &c in self.hierarchy.children_of(n, p) {
            fine.status[c as usize] = NodeState::Absent;
            fine.changed[c as usize] = self.frame;
        }
    }
}
