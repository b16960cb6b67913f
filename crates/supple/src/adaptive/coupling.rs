//! The variational (Galerkin) ghost coupling, [`Coupling::Variational`].
//!
//! **Space.** Debunne §3.2 gives a ghost node the value interpolated from its parent or child
//! tet, and a ghost may read other ghosts ("the node will simply use the displacement value
//! stored in the ghost node"). Expanding that chain, every ghost is a fixed linear
//! combination of *terminal* nodes — active or fixed nodes of any level: `d_g = Σ w d_a`, the
//! row of a prolongation `P` (split ghosts and the absent ghosts of their child tet read each
//! other, so the chain can cycle; its gain is small — weights ~1e-3 — and the expansion stops
//! where a remaining weight falls below [`CUT`]). With all levels' tets writing forces on
//! ghosts as well and those forces returned to the terminals with the same weights
//! (`f_a += w f_g`), the coupled force is `−Σ_n P_nᵀ ∇E_n(P_n q)`: the gradient of the one
//! energy `E(q) = Σ_n Σ_{tets of level n with an active node} W_e(P_n q)`, so the linearised
//! stiffness `Σ_n P_nᵀ K_n P_n` is symmetric and positive semi-definite when each `K_n` is.
//! The weights of one row sum to 1 (barycentric), so internal forces keep their zero sum and
//! linear momentum is conserved. Near an interface both levels' tets cover the overlap
//! (§3.2: "the different levels of detail slightly overlap at their interface") and both
//! count in `E`: the overlap is stiffer than the body, a consistency error of the size of
//! the overlap that the paper's coupling has in another form (its active nodes see the
//! whole overlap too). With `share_overlap` (not in the paper) each tet's energy is weighted
//! by its share of active nodes ([`active_share`]): constant weights per active set, so
//! `E` keeps its symmetric positive semi-definite stiffness and the zero sum of forces.
//!
//! **Time.** §4.1 steps level `n` with `dt_frame/2^n` and §4.3 orders one step of a level as
//! pull (ghosts from the finer level), simulate (the active nodes), push (the finer level's
//! ghosts from the new values). Kept: levels step on the finest level's clock, coarser first
//! at a shared instant, each at its own `dt_n`. What makes the multirate stepping keep an
//! energy is the asynchronous variational integrator of Lew, Marsden, Ortiz & West 2003:
//! every node moves on with its velocity between kicks (`d(t) = d + (t − t_n) v`, the same
//! extrapolation the paper coupling uses for ghosts), and each tet kicks its terminals with
//! the impulse `dt f(q(t))` at multiples of its own `dt`. A node of level `n` stored at time
//! `t_n` that gets a kick `Δv` at `t ≤ t_n` has its stored position corrected by
//! `(t_n − t) Δv`, so its trajectory is the one with the kick at `t`. The step of a tet is
//! the `dt` of the finest level among the nodes it pushes on: a coarse tet whose split
//! ghosts spread onto fine nodes kicks at the fine rate (with the coarse rate the coarse
//! stiffness on a fine node's eighth of the mass breaks the explicit bound: the two-level run
//! of `undamped_split_levels_keep_energy_with_the_variational_coupling_only` then diverges in
//! frame 139). This costs time: those interface tets are computed 2^(r−n) times as often
//! as the rest of their level. Gravity
//! kicks each node at its own level's rate. "Pull" is the evaluation of the ghosts a step
//! reads at its instant, "push" the finer level reading the new coarse trajectory at its own
//! instants — linear interpolation in time between the coarse states, as in the paper
//! coupling.

use super::settings::Coupling;
use super::state::{AdaptiveBody, NodeState, Source};

/// A remaining weight below this ends a ghost's expansion (only reached in cycles).
pub(super) const CUT: f64 = 1e-14;

/// The share of a tet's nodes that are active, `#active / 4`: the tet's weight in `E(q)`
/// with [`AdaptiveSettings::share_overlap`](super::AdaptiveSettings::share_overlap) (each node
/// owns a quarter of each of its tets, its barycentric dual cell, so under a uniform strain the
/// weighted energy is the energy density times the active nodes' dual volumes, which tile the
/// body once across levels up to the mismatch of a parent's cell and its children's).
#[inline]
pub(super) fn active_share(status: &[NodeState], nodes: &[u32; 4]) -> f64 {
    nodes
        .iter()
        .filter(|&&i| status[i as usize] == NodeState::Active)
        .count() as f64
        / 4.0
}

/// Adds `w` to node `(m, j)`'s entry of `pending` (a new entry if it has none). `pos[m][j]`
/// is the entry's index in `pending` (`u32::MAX`: none): a ghost's expansion pops ~600
/// entries on the poke's levels, and a linear search for each add cost most of a rebuild
/// (EXPERIMENTS.md, issue 15, *The scene's budget*). Same entries, same order, same sums.
fn add(
    pending: &mut Vec<(usize, usize, f64)>,
    pos: &mut [Vec<u32>],
    (m, j, w): (usize, usize, f64),
) {
    match pos[m][j] {
        u32::MAX => {
            pos[m][j] = pending.len() as u32;
            pending.push((m, j, w));
        }
        p => pending[p as usize].2 += w,
    }
}

/// A ghost's expansion kept from the rebuild that computed it. The expansion is a function
/// of the states (active, split, absent) of the nodes it visits and nothing else (the links
/// and weights are the hierarchy's), so it is reused, bit for bit, while each of those nodes
/// is in the state it was in then: a rebuild after a merge of one node re-expands only the
/// ghosts whose chains pass through it.
/// On the poke a full expansion pops ~600 entries per ghost (the non-nested levels' cycles
/// down to [`CUT`]), 4–5 ms for the ~350 ghosts of the peak set, paid in a frame that also
/// steps the peak set (EXPERIMENTS.md, issue 15, *The split/merge step's time*).
#[derive(Debug, Clone)]
pub(super) struct CachedExpansion {
    /// Every node whose state the expansion read, `(level, node)` and that state, the ghost
    /// included.
    deps: Vec<(u32, u32, NodeState)>,
    /// Computed by the current rebuild (its terms are filled in after the merge of repeats).
    fresh: bool,
    terms: Vec<Term>,
    /// The finest level among its non-fixed terminals.
    rate: usize,
}

/// One term of a ghost's expansion: terminal node `node` of level `level`, weight `w`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Term {
    pub level: u32,
    pub node: u32,
    pub w: f64,
}

impl AdaptiveBody {
    fn is_terminal(&self, m: usize, j: usize) -> bool {
        self.levels[m].status[j] == NodeState::Active || self.hierarchy.levels[m].fixed[j]
    }

    /// The level and tet a non-terminal node reads (§3.2): its child tet if split, its
    /// parent tet if absent.
    fn link_of(&self, m: usize, j: usize) -> (usize, &super::TetLink) {
        if self.levels[m].status[j] == NodeState::Split {
            (m + 1, &self.hierarchy.child_tet[m][j])
        } else {
            (m - 1, &self.hierarchy.parent_tet[m][j])
        }
    }

    /// Expands every ghost of every level to terminals, and (variational coupling) sorts the
    /// active tets into the level steps at which they kick. Called by `rebuild`.
    pub(super) fn build_coupling(&mut self) {
        let n_levels = self.levels.len();
        // Weights still to expand, one entry per node (merged, so a cycle costs a few
        // rounds instead of a tree of paths).
        let mut pending: Vec<(usize, usize, f64)> = Vec::new();
        let mut pos: Vec<Vec<u32>> = self
            .levels
            .iter()
            .map(|st| vec![u32::MAX; st.status.len()])
            .collect();
        let mut out: Vec<Term> = Vec::new();
        // `rate[n][k]`: the finest level among ghost k's non-fixed terminals.
        let mut rate: Vec<Vec<usize>> = Vec::with_capacity(n_levels);
        let mut cache = std::mem::take(&mut self.expansions);
        // `seen[m][j] == id`: node (m, j) is already in the deps of the ghost being expanded.
        let mut seen: Vec<Vec<u32>> = self
            .levels
            .iter()
            .map(|st| vec![0; st.status.len()])
            .collect();
        let mut id = 0u32;
        self.expansions_reused = 0;
        for n in 0..n_levels {
            let mut ptr = Vec::with_capacity(self.levels[n].ghosts.len() + 1);
            let mut terms = Vec::new();
            let mut rates = Vec::with_capacity(self.levels[n].ghosts.len());
            ptr.push(0);
            for k in 0..self.levels[n].ghosts.len() {
                let (i, source) = self.levels[n].ghosts[k];
                let i = i as usize;
                out.clear();
                if self.hierarchy.levels[n].fixed[i] {
                    out.push(Term {
                        level: n as u32,
                        node: i as u32,
                        w: 1.0,
                    });
                } else if let Some(c) = cache[n][i].as_ref().filter(|c| {
                    c.deps
                        .iter()
                        .all(|&(m, j, s)| self.levels[m as usize].status[j as usize] == s)
                }) {
                    terms.extend_from_slice(&c.terms);
                    ptr.push(terms.len());
                    rates.push(c.rate);
                    self.expansions_reused += 1;
                    continue;
                } else {
                    id += 1;
                    let mut deps = vec![(n as u32, i as u32, self.levels[n].status[i])];
                    seen[n][i] = id;
                    let link = match source {
                        Source::Child => (n + 1, &self.hierarchy.child_tet[n][i]),
                        Source::Parent => (n - 1, &self.hierarchy.parent_tet[n][i]),
                    };
                    // `pending` is empty here: the loop below drains it, resetting `pos`.
                    for (&j, &w) in link.1.nodes.iter().zip(&link.1.weights) {
                        add(&mut pending, &mut pos, (link.0, j as usize, w));
                    }
                    // Expand the first pending entry until none is left (terminals go out,
                    // remainders below CUT are dropped).
                    while let Some((m, j, w)) = pending.pop() {
                        pos[m][j] = u32::MAX;
                        if seen[m][j] != id {
                            seen[m][j] = id;
                            deps.push((m as u32, j as u32, self.levels[m].status[j]));
                        }
                        if self.is_terminal(m, j) {
                            out.push(Term {
                                level: m as u32,
                                node: j as u32,
                                w,
                            });
                        } else if w.abs() > CUT {
                            let (l, link) = self.link_of(m, j);
                            for (&jj, &ww) in link.nodes.iter().zip(&link.weights) {
                                add(&mut pending, &mut pos, (l, jj as usize, w * ww));
                            }
                        }
                    }
                    out.sort_by_key(|t| (t.level, t.node));
                    cache[n][i] = Some(CachedExpansion {
                        fresh: true,
                        deps,
                        terms: Vec::new(),
                        rate: 0,
                    });
                }
                let mut r = 0;
                let start = terms.len();
                for t in &out {
                    match terms[start..].last_mut() {
                        Some(Term { level, node, w }) if (*level, *node) == (t.level, t.node) => {
                            *w += t.w
                        }
                        _ => terms.push(*t),
                    }
                    if !self.hierarchy.levels[t.level as usize].fixed[t.node as usize] {
                        r = r.max(t.level as usize);
                    }
                }
                ptr.push(terms.len());
                rates.push(r);
                if let Some(c) = cache[n][i].as_mut().filter(|c| c.fresh) {
                    c.fresh = false;
                    c.terms.clear();
                    c.terms.extend_from_slice(&terms[start..]);
                    c.rate = r;
                }
            }
            self.levels[n].term_ptr = ptr;
            self.levels[n].terms = terms;
            rate.push(rates);
        }
        self.expansions = cache;
        for st in &mut self.levels {
            st.fire.clear();
            st.fire_tets.clear();
            st.fire_segments.clear();
            st.fire_ghosts.clear();
            st.touched.clear();
        }
        if self.settings.coupling != Coupling::Variational {
            return;
        }
        // Each active tet kicks at the finest level it pushes on: `fires[r]` lists the tets
        // `(level, tet)` that kick at level r's steps, by level, then tet.
        let mut fires: Vec<Vec<(u32, u32)>> = vec![Vec::new(); n_levels];
        let mut slot: Vec<Vec<u32>> = self
            .levels
            .iter()
            .map(|st| vec![u32::MAX; st.status.len()])
            .collect();
        for (n, st) in self.levels.iter().enumerate() {
            for (k, &(i, _)) in st.ghosts.iter().enumerate() {
                slot[n][i as usize] = k as u32;
            }
        }
        for n in 0..n_levels {
            for q in 0..self.levels[n].active_tets.len() {
                let e = self.levels[n].active_tets[q];
                let mut r = n;
                for &i in &self.hierarchy.levels[n].mesh.tets[e as usize] {
                    let k = slot[n][i as usize];
                    if k != u32::MAX {
                        r = r.max(rate[n][k as usize]);
                    }
                }
                fires[r].push((n as u32, e));
            }
        }
        // What each level's step reads (ghosts) and writes (terminals), each once: a stamp
        // per node (`r + 1` when taken by level r's step).
        let mut stamp: Vec<Vec<usize>> = slot.iter().map(|s| vec![0; s.len()]).collect();
        for (r, fire) in fires.into_iter().enumerate() {
            let (mut ghosts, mut touched) = (Vec::new(), Vec::new());
            let fixed = |m: usize, j: usize| self.hierarchy.levels[m].fixed[j];
            let touch = |m: usize, j: usize, stamp: &mut [Vec<usize>], touched: &mut Vec<_>| {
                if stamp[m][j] != r + 1 && !fixed(m, j) {
                    stamp[m][j] = r + 1;
                    touched.push((m as u32, j as u32));
                }
            };
            for &(n, e) in &fire {
                let n = n as usize;
                for &i in &self.hierarchy.levels[n].mesh.tets[e as usize] {
                    let i = i as usize;
                    let k = slot[n][i];
                    if k == u32::MAX {
                        touch(n, i, &mut stamp, &mut touched);
                    } else if stamp[n][i] != r + 1 {
                        stamp[n][i] = r + 1;
                        ghosts.push((n as u32, k));
                    }
                }
            }
            for &(n, k) in &ghosts {
                let st = &self.levels[n as usize];
                for t in &st.terms[st.term_ptr[k as usize]..st.term_ptr[k as usize + 1]] {
                    touch(t.level as usize, t.node as usize, &mut stamp, &mut touched);
                }
            }
            ghosts.sort_unstable();
            touched.sort_unstable();
            let st = &mut self.levels[r];
            st.fire_ghosts = ghosts;
            st.touched = touched;
            self.store_fired(r, &fire);
        }
        let longest = self.levels.iter().map(|st| st.fire.len()).max();
        self.kernel.resize(longest.unwrap_or(0));
    }

    /// Sets every ghost of every level to its expansion (`d = Σ w d_a`, `v = Σ w v_a`): at the
    /// end of a frame, when all levels are at the same time, for the criterion, split/merge,
    /// output and [`Self::coupled_energy`].
    pub(super) fn sync_ghosts(&mut self) {
        for n in 0..self.levels.len() {
            for k in 0..self.levels[n].ghosts.len() {
                let t = self.levels[n].t;
                let (d, v) = self.ghost_at(n, k, t);
                let st = &mut self.levels[n];
                let i = st.ghosts[k].0 as usize;
                if !self.hierarchy.levels[n].fixed[i] {
                    st.d[i] = d;
                    st.v[i] = v;
                }
            }
        }
    }

    /// The energy the variational coupling conserves: kinetic energy `½ m v²` of the active
    /// nodes (their own level's lumped masses), the elastic energy of **every** tet with an
    /// active node with its ghosts from their expansion (`E(q)` of the module documentation:
    /// at full weight, the overlap counted by both levels, or with
    /// [`AdaptiveSettings::share_overlap`](super::AdaptiveSettings::share_overlap) weighted
    /// by its share of active nodes) and the gravitational `−Σ m g·d`.
    /// Meaningful between frames, when every level is at the same time. For the paper
    /// coupling it is the same functional of the active state (the paper's scheme has none
    /// that it conserves).
    pub fn coupled_energy(&self) -> f64 {
        let mut e = self.active_node_energy();
        for (n, st) in self.levels.iter().enumerate() {
            let level = &self.hierarchy.levels[n];
            for &t in &st.active_tets {
                let t = t as usize;
                let nodes = level.mesh.tets[t];
                let d = nodes.map(|i| match st.ghosts.binary_search_by_key(&i, |g| g.0) {
                    Ok(k) => self.ghost_at(n, k, st.t).0,
                    Err(_) => st.d[i as usize],
                });
                let w = if self.settings.share_overlap {
                    active_share(&st.status, &nodes)
                } else {
                    1.0
                };
                e += w * level.force.element_energy(t, &d).unwrap_or(0.0);
            }
        }
        e
    }
}
