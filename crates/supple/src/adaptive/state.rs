//! The adaptive body: per-level state and the frame loop of Debunne et al. 2000 §4.3.
//!
//! Per frame: the tool rule (§5), then the levels' explicit steps — level `n` takes
//! `2^e_n` steps of `dt_frame / 2^e_n` (`hierarchy.rs`), interleaved on the finest level's clock, coarser
//! levels first at instants where several step — each step being: refresh the level's ghost
//! nodes (pull from the finer level where it is split, push from the coarser level where it
//! is absent: steps 1 and 3 of §4.3, done by the level that reads them), move the active
//! nodes (symplectic Euler, §2.6); then at the frame's end split/merge (step 4, `refine.rs`).

use super::coupling::Term;
use super::fired::{Fired, KernelScratch};
use super::hierarchy::Hierarchy;
use super::settings::{AdaptiveSettings, Budget, Coupling, ToolTiming, REACTIVE_FRACTION};
use super::tool::SphereTool;
use super::AdaptiveError;
use crate::clock::Instant;
use nalgebra::Vector3;

/// A node of a level is absent (its region is simulated coarser), active, or split (its
/// region is simulated finer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeState {
    Absent,
    Active,
    Split,
}

/// A ghost node and where its value comes from (§3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Source {
    /// The node is split: pulled from its child tet (level `n + 1`).
    Child,
    /// The node is absent: pushed from its parent tet (level `n − 1`).
    Parent,
}

/// The state of one level.
#[derive(Debug, Clone)]
pub struct LevelState {
    /// Displacements `d = x − X` and velocities of every node (meaningful for active and
    /// ghost nodes).
    pub d: Vec<Vector3<f64>>,
    pub v: Vec<Vector3<f64>>,
    pub status: Vec<NodeState>,
    /// Frame of each node's last split or merge (for the dwell time).
    pub(super) changed: Vec<u64>,
    /// Active nodes, ascending.
    pub active: Vec<u32>,
    /// Tets with at least one active node, ascending.
    pub(super) active_tets: Vec<u32>,
    /// Ghost nodes and their source, ascending.
    pub(super) ghosts: Vec<(u32, Source)>,
    /// Held this frame by the tool (not integrated).
    pub(super) held: Vec<bool>,
    /// Held in the last frame and pushing on the tool then
    /// ([`AdaptiveSettings::tool_persistent`]).
    pub(super) pressing: Vec<bool>,
    /// Tool-driven refinement: `frame + 1` of the last frame the tool reached the node's
    /// dual cell (0: never; see [`AdaptiveSettings::tool_refine`]).
    pub(super) tool_seen: Vec<u64>,
    /// Force scratch (valid on active nodes after a step).
    pub(super) f: Vec<Vector3<f64>>,
    /// Time within the frame that the stored values represent (s).
    pub(super) t: f64,
    /// Eq. 9 discontinuity `δ/ĥ` of active nodes (after `refine`).
    pub delta: Vec<f64>,
    /// Each ghost's interpolation chain expanded to terminal nodes (active or fixed, any
    /// level): ghost `k` of `ghosts` is `Σ w d` over `terms[term_ptr[k]..term_ptr[k + 1]]`
    /// (the row of `P`; see `coupling.rs`).
    pub(super) term_ptr: Vec<usize>,
    pub(super) terms: Vec<Term>,
    /// Variational coupling: the tets (of this or coarser levels) that kick at this level's
    /// steps (`fire_tets`, with what the step needs in `fire`, and `(level, start, end)` of
    /// each source level's run in `fire_segments`), the ghosts they read and the terminal
    /// nodes they push on.
    pub(super) fire: Vec<Fired>,
    pub(super) fire_tets: Vec<u32>,
    pub(super) fire_segments: Vec<(u32, u32, u32)>,
    pub(super) fire_ghosts: Vec<(u32, u32)>,
    pub(super) touched: Vec<(u32, u32)>,
    /// Variational coupling: the frame-averaged force on held nodes (the tool's reaction).
    pub(super) reaction: Vec<Vector3<f64>>,
}

/// What one frame did.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FrameStats {
    /// Node updates this frame: `Σ_n active_n · 2^e_n` (level `n` steps `2^e_n` times).
    pub node_updates: u64,
    pub active_per_level: Vec<usize>,
    pub splits: usize,
    pub merges: usize,
    /// Splits refused by the budget (predictive) or forbidden (reactive).
    pub splits_refused: usize,
    /// Reactive budget: the frame took more than 95 % of its period; splitting is forbidden
    /// for the next frame (the paper's warning to the user).
    pub overrun_warning: bool,
    /// Wall time of the frame's computation (s).
    pub wall_seconds: f64,
    /// Wall time (s) of the frame's split/merge step (§4.3 step 4: the criterion, the
    /// decisions and, when the active set changed, the rebuild of its ghosts, their
    /// expansions and the fired tets), part of [`Self::wall_seconds`]. The node-update budget
    /// bounds the steps, not this: it is reported so a frame's overrun can be told apart.
    pub refine_seconds: f64,
    /// Force of the body on the tool (N), and the number of nodes it holds.
    pub tool_force: Vector3<f64>,
    pub tool_contacts: usize,
}

/// A body simulated on a [`Hierarchy`] with on-the-fly level of detail.
#[derive(Debug)]
pub struct AdaptiveBody {
    pub hierarchy: Hierarchy,
    pub settings: AdaptiveSettings,
    pub levels: Vec<LevelState>,
    /// Frames done.
    pub frame: u64,
    /// Splitting is forbidden this frame (reactive budget overran last frame).
    pub(super) forbid_split: bool,
    /// The tool of the frame being stepped (tool refinement reads it at split/merge).
    pub(super) tool_now: Option<SphereTool>,
    /// The tool of the last frame ([`ToolTiming::Step`] moves it from there to this frame's).
    pub(super) tool_last: Option<SphereTool>,
    pub(super) merged_now: Vec<Vec<bool>>,
    /// Each node's ghost expansion from an earlier rebuild, per level (`coupling.rs`).
    pub(super) expansions: Vec<Vec<Option<super::coupling::CachedExpansion>>>,
    /// Ghosts whose kept expansion the last rebuild reused.
    pub(super) expansions_reused: usize,
    /// Gathered values of the variational step's element forces (`fired.rs`).
    pub(super) kernel: KernelScratch,
}

impl AdaptiveBody {
    /// The body at rest with every node at `settings.start_level` active.
    pub fn new(hierarchy: Hierarchy, settings: AdaptiveSettings) -> Result<Self, AdaptiveError> {
        settings.validate(hierarchy.levels.len())?;
        let levels: Vec<LevelState> = (0..hierarchy.levels.len())
            .map(|n| {
                let nn = hierarchy.levels[n].n_nodes();
                let status = if n < settings.start_level {
                    NodeState::Split
                } else if n == settings.start_level {
                    NodeState::Active
                } else {
                    NodeState::Absent
                };
                LevelState {
                    d: vec![Vector3::zeros(); nn],
                    v: vec![Vector3::zeros(); nn],
                    status: vec![status; nn],
                    changed: vec![0; nn],
                    active: Vec::new(),
                    active_tets: Vec::new(),
                    ghosts: Vec::new(),
                    held: vec![false; nn],
                    pressing: vec![false; nn],
                    tool_seen: vec![0; nn],
                    f: vec![Vector3::zeros(); nn],
                    t: 0.0,
                    delta: vec![0.0; nn],
                    term_ptr: Vec::new(),
                    terms: Vec::new(),
                    fire: Vec::new(),
                    fire_tets: Vec::new(),
                    fire_segments: Vec::new(),
                    fire_ghosts: Vec::new(),
                    touched: Vec::new(),
                    reaction: vec![Vector3::zeros(); nn],
                }
            })
            .collect();
        let merged_now = levels.iter().map(|l| vec![false; l.d.len()]).collect();
        let expansions = levels.iter().map(|l| vec![None; l.d.len()]).collect();
        let mut body = Self {
            hierarchy,
            settings,
            levels,
            frame: 0,
            forbid_split: false,
            tool_now: None,
            tool_last: None,
            merged_now,
            expansions,
            expansions_reused: 0,
            kernel: KernelScratch::default(),
        };
        // A split node without children cannot be split: it stays active.
        for n in 0..body.settings.start_level {
            for i in 0..body.levels[n].status.len() {
                if body.hierarchy.children_of(n, i).is_empty() {
                    body.levels[n].status[i] = NodeState::Active;
                }
            }
        }
        body.rebuild();
        if let Budget::Predictive {
            node_updates_per_frame,
        } = settings.budget
        {
            if body.node_updates_per_frame() > node_updates_per_frame {
                return Err(AdaptiveError::Setting {
                    key: "node_updates_per_frame",
                    value: node_updates_per_frame as f64,
                    reason: "below the cost of the start state",
                });
            }
        }
        Ok(body)
    }

    /// Node updates one frame of the current active set costs: `Σ_n active_n · 2^e_n`.
    pub fn node_updates_per_frame(&self) -> u64 {
        (0..self.levels.len())
            .map(|n| self.levels[n].active.len() as u64 * self.hierarchy.steps_per_frame(n))
            .sum()
    }

    /// Sets the velocity of every node (all levels) from `field(rest position)`.
    pub fn set_velocity(&mut self, field: impl Fn(&Vector3<f64>) -> Vector3<f64>) {
        for (n, l) in self.levels.iter_mut().enumerate() {
            let level = &self.hierarchy.levels[n];
            for (i, v) in l.v.iter_mut().enumerate() {
                *v = if level.fixed[i] {
                    Vector3::zeros()
                } else {
                    field(&level.mesh.positions[i])
                };
            }
        }
    }

    /// Advances one frame (`dt_frame`), with the tool (if any) at its position for this frame.
    /// The frame's computation time (for [`Budget::Reactive`] and
    /// [`FrameStats::wall_seconds`]) is read from the wall clock.
    pub fn step_frame(&mut self, tool: Option<&SphereTool>) -> Result<FrameStats, AdaptiveError> {
        let start = Instant::now();
        self.step_frame_timed(tool, || start.elapsed().as_secs_f64())
    }

    /// [`step_frame`](Self::step_frame) with the frame's computation time given by `seconds`,
    /// called once when the frame's work (steps and split/merge) is done. The reactive rule of
    /// Debunne et al. 2000 §4.3 (more than 95 % of the frame period: no splitting next frame,
    /// and a warning) reads only this number, so a test or a host with its own clock can
    /// drive it deterministically.
    pub fn step_frame_timed(
        &mut self,
        tool: Option<&SphereTool>,
        seconds: impl FnOnce() -> f64,
    ) -> Result<FrameStats, AdaptiveError> {
        let mut stats = FrameStats {
            node_updates: self.node_updates_per_frame(),
            active_per_level: self.levels.iter().map(|l| l.active.len()).collect(),
            ..FrameStats::default()
        };
        let by_step = self.settings.tool_timing == ToolTiming::Step;
        // Per step: the tool swept from the last frame's position to this one's.
        let sweep = tool
            .filter(|_| by_step)
            .map(|t| (self.tool_last.unwrap_or(*t), *t));
        let mut contacts = match tool {
            Some(t) if !by_step => self.apply_tool(t),
            _ => Vec::new(),
        };
        for &(n, i) in &contacts {
            self.levels[n].reaction[i as usize] = Vector3::zeros();
        }
        for l in &mut self.levels {
            l.t = 0.0;
        }
        let finest = self.hierarchy.finest();
        let ticks = self.hierarchy.steps_per_frame(finest);
        for s in 0..ticks {
            for n in 0..=finest {
                if s % (ticks / self.hierarchy.steps_per_frame(n)) == 0 {
                    match self.settings.coupling {
                        Coupling::Paper => self.step_level(n),
                        Coupling::Variational => self.step_level_variational(n),
                    }
                    if let Some((from, to)) = sweep {
                        self.project_on_tool(n, &from, &to, &mut contacts);
                    }
                }
            }
        }
        self.tool_last = tool.copied();
        if self.settings.coupling == Coupling::Variational {
            self.sync_ghosts();
        }
        if !self.is_finite() {
            return Err(AdaptiveError::Diverged { frame: self.frame });
        }
        for &(n, i) in &contacts {
            let i = i as usize;
            let reaction = match self.settings.coupling {
                _ if by_step => self.levels[n].reaction[i],
                Coupling::Paper => self.levels[n].f[i],
                Coupling::Variational => self.levels[n].reaction[i],
            };
            stats.tool_force += reaction;
            let st = &mut self.levels[n];
            st.held[i] = false;
            if by_step {
                st.pressing[i] = false;
            } else if let (Some(t), true) = (tool, self.settings.tool_persistent) {
                let x = self.hierarchy.levels[n].mesh.positions[i] + st.d[i];
                st.pressing[i] = reaction.dot(&(t.center - x)) > 0.0;
            }
        }
        stats.tool_contacts = contacts.len();
        // Tool refinement acts in frames where the tool holds part of the body.
        self.tool_now = tool.copied().filter(|_| !contacts.is_empty());
        if let (Some(t), true) = (self.tool_now, self.settings.tool_refine) {
            self.mark_tool_reach(&t);
        }
        self.frame += 1;
        let refine_start = Instant::now();
        self.refine(&mut stats);
        stats.refine_seconds = refine_start.elapsed().as_secs_f64();
        stats.wall_seconds = seconds();
        if let Budget::Reactive { frame_seconds } = self.settings.budget {
            stats.overrun_warning = stats.wall_seconds > REACTIVE_FRACTION * frame_seconds;
            self.forbid_split = stats.overrun_warning;
        }
        Ok(stats)
    }

    fn is_finite(&self) -> bool {
        self.levels.iter().all(|l| {
            l.active.iter().all(|&i| {
                l.d[i as usize]
                    .iter()
                    .chain(l.v[i as usize].iter())
                    .all(|c| c.is_finite())
            })
        })
    }

    /// One explicit step of level `n`: refresh its ghosts at its time, then symplectic Euler
    /// (§2.6) on its active, free, unheld nodes: `v += dt (f/m + g)`, `d += dt v`.
    fn step_level(&mut self, n: usize) {
        self.refresh_ghosts(n);
        let level = &self.hierarchy.levels[n];
        let dt = level.dt;
        let g = self.settings.gravity;
        let st = &mut self.levels[n];
        for &i in &st.active {
            st.f[i as usize] = Vector3::zeros();
        }
        for &e in &st.active_tets {
            let e = e as usize;
            let t = level.mesh.tets[e];
            let d = t.map(|i| st.d[i as usize]);
            let v = t.map(|i| st.v[i as usize]);
            let fe = level.force.element_forces(e, &d, &v);
            for k in 0..4 {
                if st.status[t[k] as usize] == NodeState::Active {
                    st.f[t[k] as usize] += fe[k];
                }
            }
        }
        for &i in &st.active {
            let i = i as usize;
            if level.fixed[i] || st.held[i] {
                continue;
            }
            st.v[i] += dt * (st.f[i] / level.mass[i] + g);
            st.d[i] += dt * st.v[i];
        }
        // Ghosts move on with their (source's) velocity, so every stored value of the level
        // represents its time.
        for &(i, _) in &st.ghosts {
            let v = st.v[i as usize];
            st.d[i as usize] += dt * v;
        }
        st.t += dt;
    }

    /// Total energy of the active representation. Variational coupling: the energy it
    /// conserves, [`Self::coupled_energy`]. Paper coupling: kinetic energy of the active
    /// nodes, the elastic energy of each active tet weighted by its share of active nodes
    /// (each node owns a quarter of its tets), and the gravitational energy `−Σ m g·d`.
    pub fn energy(&self) -> f64 {
        if self.settings.coupling == Coupling::Variational {
            return self.coupled_energy();
        }
        let mut e = self.active_node_energy();
        for (n, st) in self.levels.iter().enumerate() {
            let level = &self.hierarchy.levels[n];
            for &t in &st.active_tets {
                let t = t as usize;
                let nodes = level.mesh.tets[t];
                let share = nodes
                    .iter()
                    .filter(|&&i| st.status[i as usize] == NodeState::Active)
                    .count() as f64
                    / 4.0;
                let d = nodes.map(|i| st.d[i as usize]);
                e += share * level.force.element_energy(t, &d).unwrap_or(0.0);
            }
        }
        e
    }

    /// Kinetic energy `½ m v²` and gravitational energy `−m g·d` of the active nodes (their own
    /// level's lumped masses): the node part of [`Self::energy`] in either coupling.
    pub(super) fn active_node_energy(&self) -> f64 {
        let mut e = 0.0;
        for (n, st) in self.levels.iter().enumerate() {
            let mass = &self.hierarchy.levels[n].mass;
            for &i in &st.active {
                let i = i as usize;
                e += mass[i] * (0.5 * st.v[i].norm_squared() - self.settings.gravity.dot(&st.d[i]));
            }
        }
        e
    }

    /// Mass and momentum of the active nodes.
    pub fn active_mass_momentum(&self) -> (f64, Vector3<f64>) {
        let mut m = 0.0;
        let mut p = Vector3::zeros();
        for (n, st) in self.levels.iter().enumerate() {
            for &i in &st.active {
                let mi = self.hierarchy.levels[n].mass[i as usize];
                m += mi;
                p += mi * st.v[i as usize];
            }
        }
        (m, p)
    }

    /// The current displacement at rest point `p` as the simulation represents it: from the
    /// finest level at which `p`'s tet has an active node, by linear interpolation there
    /// (one point of [`Self::sample_displacements`]; bind the points once with
    /// [`Self::rest_points`] to read many points every frame).
    pub fn displacement_at(&self, p: &Vector3<f64>) -> Result<Vector3<f64>, AdaptiveError> {
        let points = self.rest_points(std::slice::from_ref(p))?;
        let mut out = Vec::with_capacity(1);
        self.sample_displacements(&points, &mut out);
        Ok(out[0])
    }
}
