//! The built hierarchy in block storage (`block`) and the coarse part of the V-cycle: restrict
//! the finest residual, sweep down the coarse levels, solve the coarsest, sweep up and
//! prolongate. The finest level's smoothing is the caller's (`super::Amg::apply`).

use super::block::{Bsr, Real};
use super::coarse::CoarseLower;
use super::setup::{self, MODES};
use super::smooth;
use nalgebra::{Cholesky, DVector, Dyn};

/// One level below the finest, with its vectors (`6 × 6` blocks: six dofs per aggregate).
#[derive(Debug, Clone)]
pub(super) struct Level<T> {
    /// The operator's lower half, which the sweeps read (`coarse`).
    pub lower: CoarseLower<T>,
    /// Inverse diagonal blocks (`f64`, from the unrounded operator).
    pub d_inv: Vec<[[f64; 6]; 6]>,
    pub x: Vec<f64>,
    pub b: Vec<f64>,
    pub res: Vec<f64>,
}

/// A transfer between two coarse levels: the prolongator and its transpose.
#[derive(Debug, Clone)]
pub(super) struct Transfer<T> {
    pub p: Bsr<6, 6, T>,
    pub r: Bsr<6, 6, T>,
}

/// The hierarchy below the finest level, its values stored as `T`.
#[derive(Debug, Clone)]
pub(super) struct Hierarchy<T> {
    /// The finest level's prolongator (`3 × 6` blocks: vertex × aggregate) and restriction.
    pub p0: Bsr<3, 6, T>,
    pub r0: Bsr<6, 3, T>,
    /// `rest[l]` maps `levels[l + 1]` to `levels[l]`.
    pub rest: Vec<Transfer<T>>,
    /// Levels 1, 2, …; the last is solved by `chol` (its matrix is kept only for `info`).
    pub levels: Vec<Level<T>>,
    pub chol: Cholesky<f64, Dyn>,
    pub rhs: DVector<f64>,
}

impl<T: Real> Hierarchy<T> {
    /// The hierarchy the setup made, its values stored as `T`: the finest level's transfer
    /// `first`, the transfers `rest[l]` from `coarse[l + 1]` to `coarse[l]`, the coarse
    /// operators (every diagonal block stored) and the coarsest factor.
    pub fn new(
        first: &setup::Transfer<3>,
        rest: &[setup::Transfer<MODES>],
        coarse: &[Bsr<MODES, MODES, f64>],
        chol: Cholesky<f64, Dyn>,
    ) -> Self {
        let levels = coarse
            .iter()
            .map(|c| {
                let a = c.cast::<T>();
                let n = MODES * c.n_brows;
                Level {
                    lower: CoarseLower::new(&a, &smooth::diagonal_positions(&a)),
                    d_inv: setup::block_diagonal_inverse(c),
                    x: vec![0.0; n],
                    b: vec![0.0; n],
                    res: vec![0.0; n],
                }
            })
            .collect();
        let nc = chol.l_dirty().nrows();
        Self {
            p0: first.p.cast(),
            r0: first.r.cast(),
            rest: rest
                .iter()
                .map(|t| Transfer {
                    p: t.p.cast(),
                    r: t.r.cast(),
                })
                .collect(),
            levels,
            chol,
            rhs: DVector::zeros(nc),
        }
    }

    /// Bytes of the block matrices, diagonal inverses, vectors and coarsest factor.
    pub fn bytes(&self) -> usize {
        let mut bytes = self.p0.bytes() + self.r0.bytes();
        for t in &self.rest {
            bytes += t.p.bytes() + t.r.bytes();
        }
        for l in &self.levels {
            bytes += l.lower.bytes() + 8 * (36 * l.d_inv.len() + 3 * l.x.len());
        }
        let nc = self.rhs.len();
        bytes + 8 * nc * (nc + 1)
    }

    /// `z += P₀ C R₀ res0`, where `C` is the V-cycle below the finest level: restrict,
    /// forward block Gauss–Seidel from zero (residual from the sweep) down, the direct
    /// coarsest solve, prolongate and backward sweeps up (adjoint pre- and post-smoothers:
    /// `C` is symmetric).
    pub fn coarse_correction(&mut self, res0: &[f64], z: &mut [f64]) {
        self.r0.mul_vec(res0, &mut self.levels[0].b);
        let last = self.levels.len() - 1;
        for l in 0..last {
            let (lo, hi) = self.levels.split_at_mut(l + 1);
            let lv = &mut lo[l];
            lv.lower
                .forward_from_zero(&lv.d_inv, &lv.b, &mut lv.x, &mut lv.res);
            self.rest[l].r.mul_vec(&lv.res, &mut hi[0].b);
        }
        let lv = &mut self.levels[last];
        self.rhs.as_mut_slice().copy_from_slice(&lv.b);
        self.chol.solve_mut(&mut self.rhs);
        lv.x.copy_from_slice(self.rhs.as_slice());
        for l in (0..last).rev() {
            let (lo, hi) = self.levels.split_at_mut(l + 1);
            let lv = &mut lo[l];
            self.rest[l].p.mul_vec_add(&hi[0].x, &mut lv.x);
            lv.lower.backward(&lv.d_inv, &lv.b, &mut lv.x);
        }
        self.p0.mul_vec_add(&self.levels[0].x, z);
    }
}
