//! Split and merge (Debunne §4.2, eq. 9) under the frame budget (§4.3).

use super::settings::{Budget, Criterion, ToolOrder};
use super::state::{AdaptiveBody, FrameStats, NodeState};
use nalgebra::{Matrix3, Vector3};
use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;

/// A split candidate, taken smallest first: the tool's before eq. 9's (`eq9_only` false
/// sorts first), then by `key` (eq. 9's `−δ/ĥ`, or the tool priority of
/// [`AdaptiveBody::tool_priority`]), coarser level, lower index.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Candidate {
    eq9_only: bool,
    key: f64,
    n: usize,
    i: usize,
}

impl Eq for Candidate {}

impl Ord for Candidate {
    fn cmp(&self, other: &Self) -> Ordering {
        self.eq9_only
            .cmp(&other.eq9_only)
            .then(self.key.total_cmp(&other.key))
            .then(self.n.cmp(&other.n))
            .then(self.i.cmp(&other.i))
    }
}

impl PartialOrd for Candidate {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

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
        // Splits: nodes the tool reached this frame first (tool refinement, in the order of
        // `tool_order`), then the largest criterion first (ties: coarser level, lower index).
        let order = self.settings.tool_order;
        let tool = self.tool_now.filter(|_| tool_refine);
        let mut queue: BinaryHeap<Reverse<Candidate>> = BinaryHeap::new();
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
                    let key = match (by_tool, tool, order) {
                        (true, Some(t), ToolOrder::Distance | ToolOrder::Graded) => {
                            self.tool_priority(&t, n, i)
                        }
                        _ => -st.delta[i],
                    };
                    queue.push(Reverse(Candidate {
                        eq9_only: !by_tool,
                        key,
                        n,
                        i,
                    }));
                }
            }
        }
        if !queue.is_empty() {
            self.refresh_hidden();
        }
        let mut cost = self.node_updates_per_frame();
        // Tool refinement cascades: children that a tool split creates and the tool reaches
        // split on in the same frame, down to the finest level (each a state change of its
        // own node only once this frame, so no flicker): right after their parent
        // (`ToolOrder::Criterion`) or queued by their priority.
        let mut cascade: Vec<(usize, usize)> = Vec::new();
        loop {
            let (n, i) = match cascade.pop() {
                Some(c) => c,
                None => match queue.pop() {
                    Some(Reverse(c)) => (c.n, c.i),
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
            // The children already hold the field's values: ghosts from the frame's end,
            // the others from `refresh_hidden`.
            self.split(n, i, false);
            stats.splits += 1;
            if let Some(tool) = tool {
                if n + 2 < n_levels && self.tool_reaches(&tool, n, i) {
                    for &c in self.hierarchy.children_of(n, i) {
                        let c = c as usize;
                        if !self.hierarchy.children_of(n + 1, c).is_empty()
                            && self.tool_reaches(&tool, n + 1, c)
                        {
                            self.levels[n + 1].tool_seen[c] = frame;
                            if order == ToolOrder::Criterion {
                                cascade.push((n + 1, c));
                            } else {
                                queue.push(Reverse(Candidate {
                                    eq9_only: false,
                                    key: self.tool_priority(&tool, n + 1, c),
                                    n: n + 1,
                                    i: c,
                                }));
                            }
                        }
                    }
                }
            }
        }
        if stats.splits + stats.merges > 0 {
            self.rebuild();
        }
    }

    /// Gives every hidden node (split or absent, not a ghost, not fixed) the value of the
    /// field the levels represent there, so that the children a split creates start from it
    /// (§4.2: "interpolated displacement and velocity"): a child's parent tet may hold nodes
    /// that are neither active nor ghosts — a neighbour whose own parent has not split yet,
    /// or an interior split node — whose stored values date from their last change of state
    /// (zero before the first). Split nodes first, from their child tets (finest first), then
    /// absent nodes from their parent tets (coarsest first); in the rare cycles (a split
    /// node's child tet reads absent nodes of its own neighbourhood) the values are one
    /// round of that interpolation. With every hidden node refreshed, a split reads the same
    /// values whichever splits came before it in the frame, so the order of the splits
    /// ([`ToolOrder`]) matters only where the budget refuses some.
    fn refresh_hidden(&mut self) {
        let n_levels = self.levels.len();
        let hidden = |st: &super::LevelState, fixed: &[bool], i: usize, state: NodeState| {
            st.status[i] == state
                && !fixed[i]
                && st
                    .ghosts
                    .binary_search_by_key(&(i as u32), |g| g.0)
                    .is_err()
        };
        for n in (0..n_levels.saturating_sub(1)).rev() {
            let (coarse, fine) = self.levels.split_at_mut(n + 1);
            let (coarse, fine) = (&mut coarse[n], &fine[0]);
            let fixed = &self.hierarchy.levels[n].fixed;
            for i in 0..coarse.status.len() {
                if hidden(coarse, fixed, i, NodeState::Split) {
                    let link = &self.hierarchy.child_tet[n][i];
                    coarse.d[i] = link.interpolate(&fine.d);
                    coarse.v[i] = link.interpolate(&fine.v);
                }
            }
        }
        for n in 1..n_levels {
            let (coarse, fine) = self.levels.split_at_mut(n);
            let (coarse, fine) = (&coarse[n - 1], &mut fine[0]);
            let fixed = &self.hierarchy.levels[n].fixed;
            for i in 0..fine.status.len() {
                if hidden(fine, fixed, i, NodeState::Absent) {
                    let link = &self.hierarchy.parent_tet[n][i];
                    fine.d[i] = link.interpolate(&coarse.d);
                    fine.v[i] = link.interpolate(&coarse.v);
                }
            }
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
        self.split(n, p, true);
        self.rebuild();
        Ok(())
    }

    /// Node `p` of level `n` is replaced by its children, which start with the displacement
    /// and velocity interpolated from their parent tets (§4.2), here (`interpolate`) or
    /// before: by the ghost expansion at the frame's end for a child that was a ghost, by
    /// [`Self::refresh_hidden`] for the others. Not interpolating here keeps every value
    /// fixed during `refine`'s splits, so a child's start does not depend on which splits
    /// came before it in the frame (a child that was a ghost would otherwise be overwritten
    /// by its parent tet's interpolation, which differs from its expansion where the tet
    /// holds ghosts, and a later split reading it would see one or the other).
    fn split(&mut self, n: usize, p: usize, interpolate: bool) {
        let (coarse, fine) = self.levels.split_at_mut(n + 1);
        let (coarse, fine) = (&mut coarse[n], &mut fine[0]);
        coarse.status[p] = NodeState::Split;
        coarse.changed[p] = self.frame;
        for &c in self.hierarchy.children_of(n, p) {
            let c = c as usize;
            let link = &self.hierarchy.parent_tet[n + 1][c];
            if interpolate && !self.hierarchy.levels[n + 1].fixed[c] {
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
