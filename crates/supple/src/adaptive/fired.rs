//! The inner loop of the variational coupling (`coupling.rs`): one level step, with what it
//! would otherwise recompute at each of its `2^e_n` steps per frame precomputed once per
//! active set.
//!
//! A level step of [`Coupling::Variational`](super::Coupling::Variational) evaluates its
//! ghosts (pull), computes the forces of the tets that kick at its rate, returns the ghosts'
//! forces to their terminals and kicks (see `coupling.rs` for the scheme, after Lew et al.
//! 2003). Between two rebuilds (split/merge) the active set is fixed, so per kicking tet
//! ([`Fired`]) the node indices, the `share_overlap` weight `#active/4`, which nodes move on
//! with their velocity when a coarser tet is evaluated at a finer instant (the lag), and which
//! nodes receive forces (not fixed) are fixed too: [`AdaptiveBody::build_coupling`] stores
//! them, and the step reads them instead of the node states. The tets of one source level are
//! evaluated by one call of [`ElementForce::element_forces_batch`](super::ElementForce) on
//! gathered displacements and velocities, so a model can evaluate a whole run of tets in a
//! tight loop (the Debunne operator does, `operator.rs`); the default loops over
//! `element_forces`, so any per-element model still plugs in. Every sum is taken in the
//! order of the per-tet loop it replaces, so the results are the same bit for bit.

use super::coupling::active_share;
use super::state::{AdaptiveBody, NodeState};
use nalgebra::Vector3;

/// A tet that kicks at a level's steps, with what the step needs of the active set.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Fired {
    /// The tet's nodes (of its own level).
    pub nodes: [u32; 4],
    /// Its weight in `E(q)`: `#active/4` with `share_overlap`, else 1.
    pub w: f64,
    /// Bit k: node k is a terminal (active or fixed) and moves on with its velocity when the
    /// tet is evaluated ahead of its level's time.
    pub lag: u8,
    /// Bit k: node k is not fixed and receives the tet's force.
    pub free: u8,
}

/// Gathered nodal values and forces of one level step's tets (sized at each rebuild, so the
/// step allocates nothing).
#[derive(Debug, Clone, Default)]
pub(super) struct KernelScratch {
    d: Vec<[Vector3<f64>; 4]>,
    v: Vec<[Vector3<f64>; 4]>,
    f: Vec<[Vector3<f64>; 4]>,
}

impl KernelScratch {
    pub(super) fn resize(&mut self, len: usize) {
        let zero = [Vector3::zeros(); 4];
        self.d.resize(len, zero);
        self.v.resize(len, zero);
        self.f.resize(len, zero);
    }
}

impl AdaptiveBody {
    /// Stores `fire` (`(level, tet)` pairs sorted by level) as level `r`'s kicking tets:
    /// [`Fired`] records, their tet numbers and one segment per source level.
    pub(super) fn store_fired(&mut self, r: usize, fire: &[(u32, u32)]) {
        let share = self.settings.share_overlap;
        let (mut out, mut tets, mut segments) = (
            std::mem::take(&mut self.levels[r].fire),
            std::mem::take(&mut self.levels[r].fire_tets),
            std::mem::take(&mut self.levels[r].fire_segments),
        );
        for &(n, e) in fire {
            let nu = n as usize;
            let (level, st) = (&self.hierarchy.levels[nu], &self.levels[nu]);
            let nodes = level.mesh.tets[e as usize];
            let (mut lag, mut free) = (0u8, 0u8);
            for (k, &i) in nodes.iter().enumerate() {
                let i = i as usize;
                if st.status[i] == NodeState::Active || level.fixed[i] {
                    lag |= 1 << k;
                }
                if !level.fixed[i] {
                    free |= 1 << k;
                }
            }
            let w = if share {
                active_share(&st.status, &nodes)
            } else {
                1.0
            };
            match segments.last_mut() {
                Some((m, _, end)) if *m == n => *end += 1,
                _ => segments.push((n, out.len() as u32, out.len() as u32 + 1)),
            }
            out.push(Fired {
                nodes,
                w,
                lag,
                free,
            });
            tets.push(e);
        }
        let st = &mut self.levels[r];
        (st.fire, st.fire_tets, st.fire_segments) = (out, tets, segments);
    }

    /// `(Σ w (d_a + (t − t_a) v_a), Σ w v_a)` over ghost `k` of level `n`'s terms: its value
    /// at time `t` (every terminal moving on with its velocity).
    #[inline]
    pub(super) fn ghost_at(&self, n: usize, k: usize, t: f64) -> (Vector3<f64>, Vector3<f64>) {
        let st = &self.levels[n];
        let (mut d, mut v) = (Vector3::zeros(), Vector3::zeros());
        for term in &st.terms[st.term_ptr[k]..st.term_ptr[k + 1]] {
            let src = &self.levels[term.level as usize];
            let j = term.node as usize;
            d += term.w * (src.d[j] + (t - src.t) * src.v[j]);
            v += term.w * src.v[j];
        }
        (d, v)
    }

    /// One step of level `r` with the variational coupling (see `coupling.rs`): evaluate the
    /// ghosts its tets read at `t_r` (pull), kick every terminal those tets push on with
    /// `dt_r f`, ghost forces returned with the expansion weights (`f_a += w f_g`), then
    /// gravity and the drift `d += dt_r v` of level `r`'s active nodes (symplectic Euler,
    /// §2.6). Finer levels read the new trajectory at their own steps (push).
    #[allow(clippy::needless_range_loop)] // a tet's four nodes index several arrays
    pub(super) fn step_level_variational(&mut self, r: usize) {
        let dt = self.hierarchy.levels[r].dt;
        let t = self.levels[r].t;
        let fire = std::mem::take(&mut self.levels[r].fire);
        let fire_tets = std::mem::take(&mut self.levels[r].fire_tets);
        let segments = std::mem::take(&mut self.levels[r].fire_segments);
        let ghosts = std::mem::take(&mut self.levels[r].fire_ghosts);
        let touched = std::mem::take(&mut self.levels[r].touched);
        let mut kernel = std::mem::take(&mut self.kernel);
        for &(n, k) in &ghosts {
            let (n, k) = (n as usize, k as usize);
            let (d, v) = self.ghost_at(n, k, t);
            let st = &mut self.levels[n];
            let i = st.ghosts[k].0 as usize;
            st.d[i] = d;
            st.v[i] = v;
            st.f[i] = Vector3::zeros();
        }
        for &(n, i) in &touched {
            self.levels[n as usize].f[i as usize] = Vector3::zeros();
        }
        for &(n, a, b) in &segments {
            let (n, a, b) = (n as usize, a as usize, b as usize);
            let st = &mut self.levels[n];
            // Terminals at time t (ghosts were evaluated there above). A level's own tets are
            // at its time (lag 0); only coarser tets fired at a finer rate lag.
            let lag = t - st.t;
            for q in a..b {
                let fired = &fire[q];
                let (d, v) = (&mut kernel.d[q], &mut kernel.v[q]);
                for k in 0..4 {
                    let i = fired.nodes[k] as usize;
                    d[k] = st.d[i];
                    v[k] = st.v[i];
                }
                if lag != 0.0 {
                    for k in 0..4 {
                        if fired.lag & (1 << k) != 0 {
                            d[k] += lag * v[k];
                        }
                    }
                }
            }
            self.hierarchy.levels[n].force.element_forces_batch(
                &fire_tets[a..b],
                &kernel.d[a..b],
                &kernel.v[a..b],
                &mut kernel.f[a..b],
            );
            for q in a..b {
                let (fired, fe) = (&fire[q], &kernel.f[q]);
                for k in 0..4 {
                    if fired.free & (1 << k) != 0 {
                        st.f[fired.nodes[k] as usize] += fired.w * fe[k];
                    }
                }
            }
        }
        for &(n, k) in &ghosts {
            let (n, k) = (n as usize, k as usize);
            let i = self.levels[n].ghosts[k].0 as usize;
            let f = self.levels[n].f[i];
            for q in self.levels[n].term_ptr[k]..self.levels[n].term_ptr[k + 1] {
                let term = self.levels[n].terms[q];
                let (m, j) = (term.level as usize, term.node as usize);
                if !self.hierarchy.levels[m].fixed[j] {
                    self.levels[m].f[j] += term.w * f;
                }
            }
        }
        let share = dt / self.hierarchy.dt_frame;
        for &(n, i) in &touched {
            let (n, i) = (n as usize, i as usize);
            let mass = self.hierarchy.levels[n].mass[i];
            let st = &mut self.levels[n];
            if st.held[i] {
                st.reaction[i] += share * st.f[i];
                continue;
            }
            let dv = (dt / mass) * st.f[i];
            st.v[i] += dv;
            st.d[i] += (st.t - t) * dv;
        }
        let g = self.settings.gravity;
        let level = &self.hierarchy.levels[r];
        let st = &mut self.levels[r];
        for &i in &st.active {
            let i = i as usize;
            if level.fixed[i] || st.held[i] {
                continue;
            }
            st.v[i] += dt * g;
            st.d[i] += dt * st.v[i];
        }
        st.t += dt;
        st.fire = fire;
        st.fire_tets = fire_tets;
        st.fire_segments = segments;
        st.fire_ghosts = ghosts;
        st.touched = touched;
        self.kernel = kernel;
    }
}
