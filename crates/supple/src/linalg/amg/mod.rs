//! Smoothed-aggregation algebraic multigrid (Vaněk, Mandel & Brezina 1996) for 3×3-block
//! elasticity, as a preconditioner of the one CG loop: one symmetric V-cycle per application.
//!
//! **Hierarchy** (`setup`): aggregates of strongly connected vertices, six coarse dofs per
//! aggregate from the rigid-body modes of the rest positions, prolongator smoothed by one
//! damped Jacobi step, Galerkin coarse operators `Pᵀ A P`, down to at most
//! [`AmgSettings::max_coarse`] dofs, which a dense Cholesky factorization solves. The
//! set-up's products are block products (`product`: `3 × 3` and `6 × 6` operator blocks,
//! `3 × 6` and `6 × 6` transfer blocks), parallel over block rows.
//!
//! **V-cycle**: on the finest level, a forward block Gauss–Seidel sweep on the current
//! matrix in natural vertex order (with [`AmgSettings::single_precision_finest`], the
//! default: in two parts side by side and a separator above 4,096 vertices, `finest`),
//! whose residual comes out of the sweep (`smooth`: one read of the lower half of the
//! matrix for both), the coarse correction, and a backward sweep
//! (or, with [`AmgSettings::multicolor_finest`], multicolour sweeps, `linalg::multicolor`,
//! and an explicit residual); coarse levels use block Gauss–Seidel by `6 × 6` blocks the same
//! way (in two parts when large, `coarse`), forward before and backward after, on block storage (`block`, `hierarchy`: `3 × 6`
//! blocks for the finest prolongator, `6 × 6` below, optionally `f32`), each sweep reading
//! only the operator's lower half (`coarse`). Pre- and post-smoother are adjoint and Gauss–Seidel is convergent for any
//! SPD matrix, so the cycle is symmetric positive definite for any SPD coarse solve
//! (Vassilevski, *Multilevel Block Factorization Preconditioners*, 2008, Prop. 5.1). This
//! holds even when the coarse operators are older than the current matrix, which is what
//! makes reuse safe.
//!
//! **Reuse and rebuild.** Building is setup (it allocates). Between builds only the finest
//! level follows the matrix (its diagonal blocks, and the `f32` copy of its lower blocks with
//! [`AmgSettings::single_precision_finest`]); the coarse operators are those of the last
//! build. The hierarchy is rebuilt when (1) there is none or the fixed set changed, (2) a
//! solve needed more than `rebuild_growth ×` the iterations of the first solve after the
//! last build (plus 2), or (3) `rebuild_every > 0` changed matrices have been seen since the
//! last build. With a constant matrix (`matrix_changed: false`) nothing is redone.

mod block;
mod coarse;
mod finest;
mod hierarchy;
mod product;
mod setup;
mod smooth;

pub use setup::{rigid_body_modes, Merge};

use block::Bsr;
use setup::MODES;

use super::cg::Precond;
use super::multicolor::{gauss_seidel_sweep, VertexColoring};
use super::pcg::BlockJacobi;
use super::{BlockCsr, BlockPattern};
use finest::FinestLower;
use hierarchy::Hierarchy;
use nalgebra::{Cholesky, DVector, Dyn, Vector3};
use thiserror::Error;

/// Settings of the multigrid preconditioner.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AmgSettings {
    /// Strength of connection θ: vertices `i`, `j` are strongly connected when
    /// `‖A_ij‖_F ≥ θ √(‖A_ii‖_F ‖A_jj‖_F)`. 0 keeps every matrix neighbour.
    pub strength_threshold: f64,
    /// Stop coarsening at this many dofs (the dense coarsest solve).
    pub max_coarse: usize,
    pub max_levels: usize,
    /// Rebuild when a solve needs more than this factor times the iterations of the first
    /// solve after the last build (plus 2).
    pub rebuild_growth: f64,
    /// Rebuild after this many changed matrices (0: only on growth or a new fixed set).
    pub rebuild_every: usize,
    /// Smooth the tentative prolongator (smoothed aggregation); false gives plain
    /// aggregation (sparser coarse levels, more iterations).
    pub smoothed: bool,
    /// Smooth the finest level with multicolour block Gauss–Seidel (`linalg::multicolor`,
    /// parallel) instead of natural-order block Gauss–Seidel (`smooth`, sequential, streams
    /// the matrix and gets the pre-smoother's residual from the sweep). Either gives the
    /// same bits on any number of threads.
    pub multicolor_finest: bool,
    /// Whether the finest level's aggregates are merged into larger ones (a sparser first
    /// coarse level and cheaper transfers, more iterations).
    pub first_merge: Merge,
    /// Store the coarse operators and the transfers as `f32` (`block`: the preconditioner
    /// may be inexact; CG's products and vectors stay `f64`). Default: true (fewer CPU ms per
    /// step on the 20k and 160k bars, the same iterations; EXPERIMENTS.md, *Block storage*).
    pub single_precision: bool,
    /// Smooth the finest level on a compact `f32` copy of the matrix's strictly lower blocks,
    /// made when the matrix changes (`finest`: both sweeps read that half only; the diagonal
    /// inverses stay `f64`; CG's products use the matrix itself). Natural order only (not
    /// with `multicolor_finest`). Default: true (measured with `single_precision`).
    pub single_precision_finest: bool,
}

impl Default for AmgSettings {
    fn default() -> Self {
        Self {
            strength_threshold: 0.0,
            max_coarse: 500,
            max_levels: 10,
            rebuild_growth: 1.5,
            rebuild_every: 0,
            smoothed: true,
            multicolor_finest: false,
            first_merge: Merge::None,
            single_precision: true,
            single_precision_finest: true,
        }
    }
}

/// Why a hierarchy could not be built (the preconditioner then falls back to multicolour
/// symmetric Gauss–Seidel until the next build).
#[derive(Debug, Clone, PartialEq, Error)]
pub enum AmgError {
    #[error("the coarsest matrix ({0} dofs) is not positive definite")]
    CoarsestNotPositiveDefinite(usize),
}

/// The built hierarchy in the precision of the settings.
#[derive(Debug, Clone)]
enum Stored {
    F64(Hierarchy<f64>),
    F32(Hierarchy<f32>),
    /// Nothing to coarsen: the coarsest (finest) level solved directly.
    Direct {
        chol: Cholesky<f64, Dyn>,
        rhs: DVector<f64>,
    },
}

/// The built hierarchy and its shape.
#[derive(Debug, Clone)]
struct Built {
    stored: Stored,
    /// `(rows, nonzeros)` of every level on the free vertices, finest first (scalar counts:
    /// the finest matrix's stored entries, the coarse operators' nonzero values).
    shape: Vec<(usize, usize)>,
}

/// What the hierarchy is and how often it was built.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AmgInfo {
    /// `(rows, nonzeros)` of every level, finest first (scalar counts).
    pub levels: Vec<(usize, usize)>,
    /// Σ nonzeros of all levels / nonzeros of the finest.
    pub operator_complexity: f64,
    /// Bytes held by the hierarchy (matrices, factor, vectors).
    pub memory_bytes: usize,
    /// Builds so far.
    pub builds: usize,
    /// Changed matrices seen since the last build.
    pub age: usize,
}

/// The multigrid preconditioner with its hierarchy and workspaces.
#[derive(Debug, Clone)]
pub struct Amg {
    settings: AmgSettings,
    near_null: Vec<f64>,
    coloring: VertexColoring,
    jacobi: BlockJacobi,
    hierarchy: Option<Built>,
    built_fixed: Vec<bool>,
    res0: Vec<Vector3<f64>>,
    /// The finest matrix's lower blocks as `f32`, with `single_precision_finest`.
    finest_lower: Option<FinestLower>,
    builds: usize,
    age: usize,
    baseline: Option<usize>,
    pending: bool,
    /// The error of the last failed build.
    pub last_error: Option<AmgError>,
}

// The finest level's vectors are viewed as flat f64 slices (`linalg::flat`).
use super::{flat, flat_mut};

impl Amg {
    /// A preconditioner for matrices on `pattern`, whose near-null space is the rigid-body
    /// modes of the rest `positions` (translations only without them). Builds nothing yet.
    pub fn new(
        settings: AmgSettings,
        pattern: &BlockPattern,
        positions: Option<&[Vector3<f64>]>,
    ) -> Self {
        let n = pattern.n_rows();
        Self {
            settings,
            near_null: rigid_body_modes(n, positions.filter(|p| p.len() == n)),
            coloring: VertexColoring::greedy(pattern),
            jacobi: BlockJacobi::new(n),
            hierarchy: None,
            built_fixed: Vec::new(),
            res0: vec![Vector3::zeros(); n],
            finest_lower: None,
            builds: 0,
            age: 0,
            baseline: None,
            pending: false,
            last_error: None,
        }
    }

    /// Makes the preconditioner ready for `a` (see the module notes for what is rebuilt).
    pub fn prepare(&mut self, a: &BlockCsr, fixed: &[bool], matrix_changed: bool) {
        if matrix_changed {
            self.age += 1;
        }
        let every = self.settings.rebuild_every;
        let rebuild = self.hierarchy.is_none()
            || self.built_fixed != fixed
            || self.pending
            || (every > 0 && self.age >= every);
        if matrix_changed || rebuild {
            self.jacobi.refresh(a, fixed);
            if self.settings.single_precision_finest && !self.settings.multicolor_finest {
                match &mut self.finest_lower {
                    Some(f) if f.fits(a) => f.load(a),
                    _ => self.finest_lower = Some(FinestLower::new(a)),
                }
            }
        }
        if rebuild {
            self.build(a, fixed);
        }
    }

    /// Reports the iterations of a solve with this preconditioner (the growth trigger).
    pub fn observe(&mut self, iterations: usize) {
        match self.baseline {
            None => self.baseline = Some(iterations),
            Some(b) => {
                if iterations as f64 > self.settings.rebuild_growth * b as f64 + 2.0 {
                    self.pending = true;
                }
            }
        }
    }

    /// Builds the hierarchy for `a` on the free vertices now.
    pub fn build(&mut self, a: &BlockCsr, fixed: &[bool]) {
        self.jacobi.refresh(a, fixed);
        self.builds += 1;
        self.age = 0;
        self.baseline = None;
        self.pending = false;
        self.built_fixed.clear();
        self.built_fixed.extend_from_slice(fixed);
        self.hierarchy = None;
        let s = self.settings;
        let fine = Bsr::from_block_csr(a, fixed);
        let mut shape = vec![(3 * fine.n_brows, fine.n_scalars())];
        let mut b = self.near_null.clone();
        let mut first = None;
        let mut rest = Vec::new();
        let mut coarse_levels: Vec<Bsr<MODES, MODES, f64>> = Vec::new();
        let levels = s.max_levels.max(1);
        if 3 * fine.n_brows > s.max_coarse && levels > 1 {
            if let Some((t, coarse, b_coarse)) =
                setup::coarsen(&fine, &b, s.strength_threshold, s.smoothed, s.first_merge)
            {
                first = Some(t);
                shape.push((MODES * coarse.n_brows, coarse.n_nonzeros()));
                coarse_levels.push(coarse);
                b = b_coarse;
            }
        }
        while let Some(current) = coarse_levels.last() {
            if MODES * current.n_brows <= s.max_coarse || rest.len() + 2 >= levels {
                break;
            }
            let Some((t, coarse, b_coarse)) =
                setup::coarsen(current, &b, s.strength_threshold, s.smoothed, Merge::None)
            else {
                break;
            };
            rest.push(t);
            shape.push((MODES * coarse.n_brows, coarse.n_nonzeros()));
            coarse_levels.push(coarse);
            b = b_coarse;
        }
        let mut dense = match coarse_levels.last() {
            Some(c) => c.to_dense(),
            None => fine.to_dense(),
        };
        let n = dense.nrows();
        let scale = dense.diagonal().amax().max(f64::MIN_POSITIVE);
        for i in 0..n {
            if dense[(i, i)] <= 0.0 && dense.row(i).amax() == 0.0 {
                dense[(i, i)] = scale; // a decoupled zero dof (fixed, or a dropped mode)
            }
        }
        let Some(chol) = Cholesky::new(dense) else {
            self.last_error = Some(AmgError::CoarsestNotPositiveDefinite(n));
            return;
        };
        self.last_error = None;
        let stored = match &first {
            None => Stored::Direct {
                chol,
                rhs: DVector::zeros(n),
            },
            Some(t) if s.single_precision => {
                Stored::F32(Hierarchy::new(t, &rest, &coarse_levels, chol))
            }
            Some(t) => Stored::F64(Hierarchy::new(t, &rest, &coarse_levels, chol)),
        };
        self.hierarchy = Some(Built { stored, shape });
    }

    /// Builds so far (without the allocation of [`Amg::info`]).
    pub fn builds(&self) -> usize {
        self.builds
    }

    /// Whether a hierarchy is built.
    pub fn is_built(&self) -> bool {
        self.hierarchy.is_some()
    }

    /// Σ nonzeros of all levels / nonzeros of the finest (1 when no hierarchy is built), as
    /// in [`AmgInfo`], without allocating.
    pub fn operator_complexity(&self) -> f64 {
        let Some(h) = &self.hierarchy else {
            return 1.0;
        };
        let total: usize = h.shape.iter().map(|l| l.1).sum();
        total as f64 / h.shape[0].1.max(1) as f64
    }

    /// The hierarchy's shape and build count.
    pub fn info(&self) -> AmgInfo {
        let mut info = AmgInfo {
            builds: self.builds,
            age: self.age,
            ..Default::default()
        };
        let Some(h) = &self.hierarchy else {
            return info;
        };
        info.levels = h.shape.clone();
        let bytes = match &h.stored {
            Stored::F64(h) => h.bytes(),
            Stored::F32(h) => h.bytes(),
            Stored::Direct { rhs, .. } => 8 * rhs.len() * (rhs.len() + 1),
        };
        info.memory_bytes = bytes + 24 * self.res0.len();
        let total: usize = info.levels.iter().map(|l| l.1).sum();
        info.operator_complexity = total as f64 / h.shape[0].1.max(1) as f64;
        info
    }
}

impl Precond for Amg {
    fn apply(&mut self, a: &BlockCsr, fixed: &[bool], r: &[Vector3<f64>], z: &mut [Vector3<f64>]) {
        let d_inv = self.jacobi.block_diagonal().expect("block diagonal");
        let Some(h) = &mut self.hierarchy else {
            // No hierarchy (a failed build): symmetric multicolour Gauss–Seidel alone.
            z.fill(Vector3::zeros());
            gauss_seidel_sweep(a, fixed, d_inv, &self.coloring, r, z, true);
            gauss_seidel_sweep(a, fixed, d_inv, &self.coloring, r, z, false);
            return;
        };
        if let Stored::Direct { chol, rhs } = &mut h.stored {
            rhs.as_mut_slice().copy_from_slice(flat(r));
            chol.solve_mut(rhs);
            flat_mut(z).copy_from_slice(rhs.as_slice());
            for (zi, &f) in z.iter_mut().zip(fixed) {
                if f {
                    *zi = Vector3::zeros();
                }
            }
            return;
        }
        // Finest level: pre-smooth, residual.
        let multicolor = self.settings.multicolor_finest;
        if multicolor {
            z.fill(Vector3::zeros());
            gauss_seidel_sweep(a, fixed, d_inv, &self.coloring, r, z, true);
            a.mul_vec(z, &mut self.res0);
            for ((ri, bi), &f) in self.res0.iter_mut().zip(r).zip(fixed) {
                *ri = if f { Vector3::zeros() } else { bi - *ri };
            }
        } else {
            let (p, res) = (&*a.pattern, &mut self.res0);
            match &self.finest_lower {
                Some(f) => f.forward_from_zero(fixed, d_inv, r, z, res),
                None => smooth::block_forward_from_zero(p, &a.values, fixed, d_inv, r, z, res),
            }
        }
        // The coarse levels' correction.
        match &mut h.stored {
            Stored::F64(h) => h.coarse_correction(flat(&self.res0), flat_mut(z)),
            Stored::F32(h) => h.coarse_correction(flat(&self.res0), flat_mut(z)),
            Stored::Direct { .. } => unreachable!("handled above"),
        }
        // Post-smooth.
        if multicolor {
            gauss_seidel_sweep(a, fixed, d_inv, &self.coloring, r, z, false);
        } else {
            match &mut self.finest_lower {
                Some(f) => f.backward(fixed, d_inv, r, z),
                None => smooth::block_backward(&a.pattern, &a.values, fixed, d_inv, r, z),
            }
        }
    }
}

#[cfg(test)]
mod parts_tests;
#[cfg(test)]
mod tests;
