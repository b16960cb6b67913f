//! Settings of the adaptive simulation: split/merge criterion and thresholds (Debunne §4.2),
//! frame budget (§4.3).

use super::AdaptiveError;
use nalgebra::Vector3;

/// Which Laplacian eq. 9 measures (`δ_i = ĥ_i² ‖(Δd)_i‖`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Criterion {
    /// Eq. 9 literally, with the operator's Laplacian (eq. 5). At a surface node the dual
    /// cell's boundary flux is missing, so a uniform stretch — a linear field the mesh
    /// represents exactly — gives `δ ≠ 0` on the whole surface.
    Paper,
    /// Only the jumps of the gradient across interior faces: the boundary part of the dual
    /// cell's surface is closed with each boundary tet's own gradient
    /// (`Σ_faces A_f/3 · G_e n_f`), so any linear field gives `δ = 0` at every node.
    #[default]
    Interior,
}

/// How the levels exchange forces through ghost nodes (Debunne §3.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Coupling {
    /// The paper's ghost nodes: a level's tets read interpolated ghost values and only the
    /// forces on the level's own active nodes are kept; the forces on ghosts are dropped.
    /// The coupled operator `M⁻¹K` then has `K` non-symmetric (‖K − Kᵀ‖/‖K‖ = 0.18 on the
    /// 2/4-cell cube) with complex eigenvalues, and an undamped run gains energy without
    /// bound (`energy_tests.rs`).
    Paper,
    /// Galerkin (variational) coupling: every ghost is a fixed linear combination `P` of
    /// active nodes (its interpolation chain expanded), the forces the tets compute on ghosts
    /// go back to those nodes with the same weights (`f_src += w f_ghost`), so the coupled
    /// stiffness is `Σ_n P_nᵀ K_n P_n`, symmetric and positive semi-definite, and the coupled
    /// system has the energy [`super::AdaptiveBody::coupled_energy`]. Stepped as an
    /// asynchronous variational integrator (Lew et al. 2003): each tet kicks at the rate of
    /// the finest level it pushes on, every node moves on with its velocity between kicks.
    #[default]
    Variational,
}

/// In which order tool refinement ([`AdaptiveSettings::tool_refine`]) takes the nodes the tool
/// reaches, which decides where the refinement goes when a predictive budget cannot pay for
/// all of them (without a budget every reached node splits and the order does not matter).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolOrder {
    /// Largest eq. 9 criterion first, and the children a split creates that the tool
    /// reaches right after it (depth first: the first node's region goes to the finest level
    /// before the next node is looked at). The rule before `Distance` became the default.
    Criterion,
    /// Nearest first: by the distance of the node's dual cell from the tool's centre,
    /// `‖x_i − c‖ − ĥ_i/2` (what [`AdaptiveSettings::tool_reach`] bounds), children queued
    /// with the rest. Under a budget the refined region is a ball around the tool, as
    /// deep as the budget pays for at its centre, and the reach bounds it only where the
    /// budget does not bind (EXPERIMENTS.md, issue 15). The default before `Graded`.
    Distance,
    /// Graded: by the gap between the node and the sphere in the node's own spacing,
    /// `(‖x_i − c‖ − r) / ĥ_i`, children queued with the rest. A level-`n` node at a gap
    /// `g` splits before a level-`n+1` node at a gap above `g/2`, so under a budget the
    /// spacing grows with the distance from the tool (a graded mesh: the finest level on
    /// the contact, coarser levels in rings around it) instead of the finest level meeting
    /// the coarsest. The default: on the poke under a 20,000-update budget (the scene's then), over
    /// five levels' seeds, the top face is 6.2 ± 1.0 % off finest-only against 9.2 ± 1.5 %
    /// with `Distance` and 14.1 ± 5.3 % with `Criterion` (EXPERIMENTS.md, issue 15, fourth
    /// round; at 40,000 the two are equal).
    #[default]
    Graded,
}

/// Which tool holds must be made from outside the body ([`AdaptiveSettings::tool_side`]): a
/// node of level `n` is on the tool's outer side when `n_i · (c − x_i) > 0`, `n_i` the
/// area-weighted outward normal of the level's boundary faces around it in the deformed state
/// and `c` the sphere's centre.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolSide {
    /// Every node inside the sphere is held, wherever the centre is (§5 as read; with
    /// [`AdaptiveSettings::tool_persistent`] the rule before the side test).
    Any,
    /// Only a node held in the last frame ([`AdaptiveSettings::tool_persistent`]) must have
    /// the centre on its outer side to stay held; fresh holds as [`ToolSide::Any`].
    Persistent,
    /// Every hold, fresh or persistent, needs the centre on the node's outer side: a sphere
    /// that tunnelled into the body neither keeps the nodes wrapped over it nor pushes out
    /// the nodes it reaches from inside.
    #[default]
    Outside,
}

/// When the tool's contact is evaluated ([`AdaptiveSettings::tool_timing`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ToolTiming {
    /// Once per frame, before the steps (§5 as read): the nodes inside the sphere are put on
    /// it and held, fixed, for the whole frame. A withdrawing tool releases them for a frame
    /// in which the compressed body springs into the space the receding sphere will occupy.
    Frame,
    /// At every level step: the sphere moves linearly over the frame from the last frame's
    /// position to this frame's (an interactive tool is read once per frame, so it lags its
    /// reading by one frame; without a last position it rests), and after each step of level
    /// `n` the level's active surface nodes inside the sphere at the step's time are projected
    /// onto it along the ray from the centre and lose their velocity towards it relative to the
    /// tool (frictionless; the tool force is the momentum this removes, averaged over the
    /// frame). Nothing is held: a node the body pulls away from the tool leaves it at the next
    /// step (Signorini), one it pushes on stays on the receding sphere.
    /// [`AdaptiveSettings::tool_persistent`] has no effect, and [`ToolSide::Persistent`] acts
    /// as [`ToolSide::Outside`].
    #[default]
    Step,
}

/// How the frame's cost is limited (Debunne §4.3).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub enum Budget {
    /// No limit.
    #[default]
    None,
    /// Deterministic: splits are accepted (largest criterion first) only while the node
    /// updates of the next frame, `Σ_n active_n · 2^e_n`, stay within the budget. A frame
    /// never exceeds it once the start state is within it.
    Predictive { node_updates_per_frame: u64 },
    /// The paper's rule: when a frame's computation took more than 95 % of `frame_seconds`
    /// of wall time, splitting is forbidden for the next frame (merging still runs) and the
    /// frame is flagged with a warning. Depends on the machine, so not deterministic.
    Reactive { frame_seconds: f64 },
}

/// The fraction of the frame period above which [`Budget::Reactive`] forbids splitting.
pub const REACTIVE_FRACTION: f64 = 0.95;

/// Settings of an [`super::AdaptiveBody`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AdaptiveSettings {
    pub coupling: Coupling,
    pub criterion: Criterion,
    /// A node splits when its dimensionless discontinuity `δ_i / ĥ_i = ĥ_i ‖(Δd)_i‖` (eq. 9
    /// over the node spacing: a jump of displacement gradient, a strain) exceeds this.
    pub split_threshold: f64,
    /// A split node merges when every child's `δ/ĥ` is below this (< `split_threshold`:
    /// hysteresis, §4.2).
    pub merge_threshold: f64,
    /// A node that split or merged cannot change again for this many frames (hysteresis in
    /// time against flicker).
    pub min_dwell_frames: u32,
    /// Whether split/merge runs at all (off: a fixed-resolution run at `start_level`).
    pub adapt: bool,
    /// Tool-driven refinement (beyond the paper, whose §4.2 splits on eq. 9 only): at the end
    /// of a frame in which the tool holds surface nodes, every active node whose dual cell the
    /// sphere reaches (`‖x_i − c‖ < r + ĥ_i/2`, `r` widened by [`Self::tool_reach`]; the held
    /// nodes among them) is a split candidate ahead of the eq. 9 candidates, within the
    /// budget; the children of such a split that the tool reaches split on in the same frame
    /// (down to the finest level at once), a node that never changed needs no dwell, and a
    /// split node does not merge while the tool has reached one of its children within the
    /// last `min_dwell_frames` frames. A tool on a coarse node is where eq. 9's Laplacian is
    /// large (a point load), but eq. 9 sees it only once the coarse dent has formed, the dwell
    /// paces the descent one level per `min_dwell_frames`, and meanwhile the held coarse node
    /// drags its whole dual cell down (EXPERIMENTS.md, issue 15: the tool force 2.6–3.2× the
    /// finest-only one).
    pub tool_refine: bool,
    /// Tool refinement's reach, in tool radii: a node is reached when
    /// `‖x_i − c‖ < tool_reach · r + ĥ_i/2` (1: the sphere itself touches the node's dual
    /// cell). Above 1 the finest region extends past the contact, which keeps the interface
    /// (where the coarser level constrains the finer one) away from the tool.
    pub tool_reach: f64,
    /// The order in which tool refinement splits the reached nodes (matters under a budget).
    pub tool_order: ToolOrder,
    /// Tool contact that persists while it presses (not in the paper; Signorini's condition:
    /// in contact while the contact force is compressive): a node the tool held in the last
    /// frame that still lies on the sphere (outside it by at most `1e-9 r`, i.e. the tool did
    /// not move away from it) stays held when its reaction pushed on the tool. Off, a node is
    /// held only when it is strictly inside the sphere at the frame's start (§5: "surface
    /// points are pulled out of the tool"): once the tool stops, a node the last frame left
    /// exactly on the sphere is held or released on round-off, and a released node is pushed
    /// into the tool by the compressed body for a whole frame (up to 80 mm in 20 ms on the
    /// poke) before the next frame pulls it out again (EXPERIMENTS.md, issue 15, fourth round).
    /// A sphere that tunnelled into the body (a yank faster than its radius per frame) would
    /// hold the surface nodes wrapped over it the same way, and the body would stay hooked on
    /// the tool after it rises (EXPERIMENTS.md, issue 15, "The hard case": ~6.5 kN and
    /// 1.5e3 J for good): with [`Self::tool_side`] (default [`ToolSide::Outside`]) a hold
    /// needs the tool's centre on the body's outer side at the node, which those nodes are
    /// not, and they are released ("The tunnelled tool lets go"). Only with
    /// [`ToolTiming::Frame`]: per step nothing is held, so nothing persists.
    pub tool_persistent: bool,
    /// Which holds need the tool on the body's outer side at the node (see [`ToolSide`];
    /// not in the paper). Default [`ToolSide::Outside`]: on the yank it frees the body (and,
    /// unlike [`ToolSide::Persistent`], the sphere inside the body pushes nothing out through
    /// the surface), and on the poke's normal press the runs are the same as without it, bit
    /// for bit, the finest-only runs included (EXPERIMENTS.md, issue 15, "The tunnelled tool
    /// lets go").
    pub tool_side: ToolSide,
    /// When the tool's contact is evaluated (see [`ToolTiming`]; [`ToolTiming::Frame`] is the
    /// paper's rule). Default [`ToolTiming::Step`]: on the poke over five levels' seeds (each
    /// against a finest-only run with the same rule) the top face's per-frame difference over
    /// the withdrawal falls from 42.6 ± 2.9 % to 7.5 ± 0.9 %, the time-averaged one (b) from
    /// 3.4 ± 0.4 % to 2.7 ± 0.1 % (6.4 ± 0.4 to 6.2 ± 0.5 % under the scene's 16,000 budget),
    /// node updates from 3.64 to 2.99 % of finest-only (66–71 splits a seed against 108–119),
    /// no flicker, every node back at level 0; the undamped 10 s after
    /// release, seed 3, rises from max E / E at release 1.088 to 1.152 (EXPERIMENTS.md, issue
    /// 15, "Contact while the tool withdraws"). A tool swept fast through the body drags the
    /// nodes in its way at its own velocity (the yank's scene: up to 6.1e3 J, where `Frame`
    /// reached 7.6e2 J).
    pub tool_timing: ToolTiming,
    /// Variational coupling: weight each tet's elastic energy (and forces) by its share of
    /// active nodes, `#active / 4` (not in the paper). Off, every tet with an active node
    /// counts fully, so where levels overlap at an interface both count and the overlap is
    /// stiffer than the body; on, each node's barycentric dual cell counts once, on the
    /// level where the node is active. No effect with [`Coupling::Paper`].
    pub share_overlap: bool,
    /// Every node starts at this level (0 = coarsest).
    pub start_level: usize,
    pub budget: Budget,
    /// Gravity (m/s²).
    pub gravity: Vector3<f64>,
}

impl Default for AdaptiveSettings {
    fn default() -> Self {
        Self {
            coupling: Coupling::Variational,
            criterion: Criterion::Interior,
            split_threshold: 2e-3,
            merge_threshold: 5e-4,
            min_dwell_frames: 10,
            adapt: true,
            tool_refine: true,
            tool_reach: 2.0,
            tool_order: ToolOrder::Graded,
            share_overlap: true,
            tool_persistent: true,
            tool_side: ToolSide::Outside,
            tool_timing: ToolTiming::Step,
            start_level: 0,
            budget: Budget::None,
            gravity: Vector3::zeros(),
        }
    }
}

impl AdaptiveSettings {
    /// Refuses thresholds without hysteresis and impossible numbers.
    pub fn validate(&self, n_levels: usize) -> Result<(), AdaptiveError> {
        let bad = |key, value, reason| Err(AdaptiveError::Setting { key, value, reason });
        if !(self.merge_threshold >= 0.0 && self.merge_threshold.is_finite()) {
            return bad("merge_threshold", self.merge_threshold, "must be ≥ 0");
        }
        if !(self.split_threshold > self.merge_threshold && self.split_threshold.is_finite()) {
            return bad(
                "split_threshold",
                self.split_threshold,
                "must be finite and above merge_threshold (hysteresis)",
            );
        }
        if !(self.tool_reach >= 1.0 && self.tool_reach.is_finite()) {
            return bad("tool_reach", self.tool_reach, "must be finite and ≥ 1");
        }
        if self.start_level >= n_levels {
            return bad("start_level", self.start_level as f64, "no such level");
        }
        if !self.gravity.iter().all(|g| g.is_finite()) {
            return bad("gravity", f64::NAN, "must be finite");
        }
        if let Budget::Reactive { frame_seconds } = self.budget {
            if !(frame_seconds > 0.0 && frame_seconds.is_finite()) {
                return bad("frame_seconds", frame_seconds, "must be above 0");
            }
        }
        Ok(())
    }
}
