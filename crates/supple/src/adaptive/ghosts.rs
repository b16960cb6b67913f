//! Active sets and ghost nodes (Debunne §3.2): which tets a level computes, which of its
//! nodes are ghosts, and the interpolation that gives a ghost its value.
//!
//! A level computes every tet with an active node; the other nodes of those tets are its
//! ghosts. A split ghost is *pulled* from its child tet in the finer level, an absent ghost
//! *pushed* from its parent tet in the coarser level. The nodes those tets read must be
//! current too, so ghost sets are closed: a non-active node read by a ghost is a ghost of
//! its own level ("a ghost node may need to interpolate from nodes which are ghost too ...
//! the node will simply use the displacement value stored in the ghost node").
//!
//! **Time.** Levels step at different rates, so a source level is generally at another time
//! than the reader. A ghost of a level at time `t` reading a source at time `t_s` takes
//! `d = Σ w d_s + (t − t_s) Σ w v_s` and `v = Σ w v_s`: the source's displacement moved on
//! (or back) with its current velocity. Coarser levels step first, so a finer level reads
//! its coarser source *ahead* of it by less than one coarse step, and with symplectic Euler
//! (`d⁺ = d + h v⁺`) this is exactly the linear interpolation in time between the coarse
//! values before and after its step — no extrapolation beyond what the coarse level
//! computed. A coarser level reads its finer source at the same instant (`t = t_s`), when
//! the finer level has not yet stepped from it.

use super::state::{AdaptiveBody, NodeState, Source};

impl AdaptiveBody {
    /// Rebuilds active lists, active tets and the closed ghost sets of every level after the
    /// node states changed.
    pub(super) fn rebuild(&mut self) {
        let n_levels = self.levels.len();
        let mut ghost_mark: Vec<Vec<bool>> = Vec::with_capacity(n_levels);
        let mut work: Vec<(usize, u32)> = Vec::new();
        for n in 0..n_levels {
            let level = &self.hierarchy.levels[n];
            let st = &mut self.levels[n];
            st.active = (0..st.status.len() as u32)
                .filter(|&i| st.status[i as usize] == NodeState::Active)
                .collect();
            let mut tet_mark = vec![false; level.mesh.n_tets()];
            for &i in &st.active {
                for &e in level.tets_of(i as usize) {
                    tet_mark[e as usize] = true;
                }
            }
            st.active_tets = (0..tet_mark.len() as u32)
                .filter(|&e| tet_mark[e as usize])
                .collect();
            let mut mark = vec![false; st.status.len()];
            for &e in &st.active_tets {
                for &i in &level.mesh.tets[e as usize] {
                    if st.status[i as usize] != NodeState::Active && !mark[i as usize] {
                        mark[i as usize] = true;
                        work.push((n, i));
                    }
                }
            }
            ghost_mark.push(mark);
        }
        // Closure: whatever a ghost reads that is not active must be a ghost too.
        while let Some((n, i)) = work.pop() {
            let (m, link) = match self.levels[n].status[i as usize] {
                NodeState::Split => (n + 1, &self.hierarchy.child_tet[n][i as usize]),
                _ => (n - 1, &self.hierarchy.parent_tet[n][i as usize]),
            };
            for &j in &link.nodes {
                if self.levels[m].status[j as usize] != NodeState::Active
                    && !ghost_mark[m][j as usize]
                {
                    ghost_mark[m][j as usize] = true;
                    work.push((m, j));
                }
            }
        }
        for (n, mark) in ghost_mark.into_iter().enumerate() {
            let st = &mut self.levels[n];
            st.ghosts = (0..mark.len() as u32)
                .filter(|&i| mark[i as usize])
                .map(|i| {
                    let source = if st.status[i as usize] == NodeState::Split {
                        Source::Child
                    } else {
                        Source::Parent
                    };
                    (i, source)
                })
                .collect();
        }
        self.build_coupling();
    }

    /// Sets every ghost of level `n` from its source level at level `n`'s time (see the
    /// module documentation).
    pub(super) fn refresh_ghosts(&mut self, n: usize) {
        let (below, rest) = self.levels.split_at_mut(n);
        let (this, above) = rest.split_at_mut(1);
        let st = &mut this[0];
        let fixed = &self.hierarchy.levels[n].fixed;
        for &(i, source) in &st.ghosts {
            if fixed[i as usize] {
                continue;
            }
            let (src, link) = match source {
                Source::Child => (&above[0], &self.hierarchy.child_tet[n][i as usize]),
                Source::Parent => (&below[n - 1], &self.hierarchy.parent_tet[n][i as usize]),
            };
            let v = link.interpolate(&src.v);
            st.d[i as usize] = link.interpolate(&src.d) + (st.t - src.t) * v;
            st.v[i as usize] = v;
        }
    }
}
