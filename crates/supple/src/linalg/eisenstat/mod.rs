//! Block SSOR preconditioned CG with Eisenstat's trick: one backward and one forward block
//! sweep per iteration and no product with `A`.
//!
//! **The preconditioner.** Write `A = L + D + U` on the free vertices (`D` the 3×3 diagonal
//! blocks, `L` the strictly lower blocks, `U = Lᵀ`; fixed rows and columns removed) and
//! `E = D + L`. Symmetric block Gauss–Seidel (SSOR with ω = 1, the preconditioner of
//! `linalg::ssor`) is `M = E D⁻¹ Eᵀ` (Saad, *Iterative Methods for Sparse Linear Systems*,
//! 2nd ed., eq. 10.9).
//!
//! **The transformed system** (S. C. Eisenstat, "Efficient implementation of a class of
//! preconditioned conjugate gradient methods", SIAM J. Sci. Stat. Comput. 2(1), 1981). Since
//! `M⁻¹ = E⁻ᵀ D E⁻¹`, PCG on `A x = b` with `M` is CG on `Â x̂ = r̂₀` with `Â = E⁻¹ A E⁻ᵀ`,
//! `r̂₀ = E⁻¹ r₀` and the block-diagonal preconditioner `D` (`ẑ = D r̂`): with
//! `x = x₀ + E⁻ᵀ x̂`, the residuals are `r̂ = E⁻¹ r`, so `r̂ᵀ D r̂ = rᵀ M⁻¹ r`, and a direction
//! `p̂` of the transformed loop is the direction `d = E⁻ᵀ p̂` of the original one, with
//! `p̂ᵀ Â p̂ = dᵀ A d`. Both loops take the same `α` and `β` and the same iterates in exact
//! arithmetic.
//!
//! **The product.** `E + Eᵀ = A + D`, so `A = E + Eᵀ − D` and, with `t = E⁻ᵀ p̂`,
//! `Â p̂ = E⁻¹ (E + Eᵀ − D) E⁻ᵀ p̂ = t + E⁻¹ (p̂ − D t)` (Eisenstat 1981; with a
//! relaxation ω, `E = D/ω + L`, `E + Eᵀ = A + (2/ω − 1) D`, and `D t` becomes
//! `(2/ω − 1) D t`; ω = 1 here, as in `linalg::ssor`). The backward sweep `(D + U) t = p̂`
//! computes `tᵢ = Dᵢ⁻¹ (p̂ᵢ − (U t)ᵢ)` row by row, so `p̂ − D t = U t` is the sum it has just
//! gathered: the forward sweep solves `(D + L) w = U t` and `Â p̂ = t + w`. Both sweeps read
//! one compact copy of `D⁻¹` and the strict upper half of `A` (stored transposed, see
//! `Sweeps`), so an iteration reads the matrix's upper blocks twice, where SSOR-PCG in the
//! shared loop reads them three times (or the full matrix and the upper half twice, above
//! [`super::par::VEC_PAR_MIN`] rows).
//!
//! **The iterate.** The original direction is `d = t`, so `x` itself is updated, `x += α t`
//! (nothing is mapped back at the end), and `r̂` is kept by its own recurrence
//! `r̂ −= α Â p̂` (`E⁻¹ r` afresh would cost a sweep). An iteration is one 3×3 product per
//! stored block in each sweep and nothing else on the matrix.
//!
//! **The stopping rule** is the shared loop's (`‖r‖ ≤ tolerance` times the norm of the
//! free vertices' right-hand side, `cg::free_norm`) for the true residual `r = b − A x`,
//! which is also the residual reported. The loop does not keep `r` by recurrence
//! (`A t = L t + p̂` would cost a third product per block, a scatter of `L t` in the backward
//! sweep: ~12 % of the CPU time of `contact_10k`); it estimates `‖r‖² ≈ s · r̂ᵀẑ` with the
//! scale `s = ‖r‖² / r̂ᵀẑ` of the last true residual (`r̂ᵀẑ = rᵀ M⁻¹ r`, which CG computes
//! anyway) and takes the true residual (one product with `A`) only when the estimate
//! reaches the tolerance. The estimate was within a factor 0.5–2 of `‖r‖²`: 0.94–1.92 on
//! `contact_10k` (one true residual per solve), 0.57–0.60 on the 20k bench bar (two: the
//! first check comes one iteration early; EXPERIMENTS.md, issue 18, *Session 17*). When
//! that residual is not yet small enough, it replaces the recurrence's: `r̂ = E⁻¹ r` (a
//! forward sweep), the scale is updated, and CG goes on along the same direction (residual
//! replacement: H. A. van der Vorst and Q. Ye, "Residual replacement strategies for Krylov
//! subspace iterative methods for the convergence of true residuals", SIAM J. Sci. Comput.
//! 22(3), 2000). An estimate off by more than [`DRIFT`] means the recurrence drifted from
//! the true residual in rounding; CG then starts again from the true residual, as the
//! shared loop does.
//!
//! **Why a loop of its own** and not the shared loop of `linalg::cg` with a preconditioner
//! behind [`super::Precond`]: that loop runs CG on the system it is given and tests that
//! system's residual. Here CG runs on `Â` while the iterate, the stopping test and the
//! reported residual belong to `A`, and the original-space update needs the product's
//! by-product `t`, which a `Precond::apply` neither sees nor returns.
//!
//! SSOR needs `A` positive definite on the free vertices; when it is not, the loop stops at
//! `p̂ᵀ Â p̂ ≤ 0` and says so ([`EisenstatSsor::breakdown`]), and `linalg::Pcg` runs the solve
//! again with block Jacobi, whose CG may still get through (the Liesenfeld–Stolfi bar under
//! 200 g of `supple-io/tests/impacts.rs` needed it).
//!
//! The sweeps are sequential (every row needs the rows after or before it); the vector
//! update runs in chunks summed in chunk order ([`super::par`]): the same bits on any number
//! of threads. Nothing is allocated after the first solve on a matrix size.

use super::cg::{free_norm, residual, CgError, CgInfo};
use super::par::{self, SharedMut};
use super::pcg::invert_block;
use super::{BlockCsr, PcgSettings};
use nalgebra::{Matrix3, Vector3};

/// The matrix halves and vectors of Eisenstat-SSOR CG, sized on the first solve.
#[derive(Debug, Clone)]
pub struct EisenstatSsor {
    sweeps: Sweeps,
    /// Diagonal blocks `D` of the free vertices (zero on fixed ones), contiguous.
    d: Vec<Matrix3<f64>>,
    /// The true residual `b − A x` (at the start and at candidate exits).
    r: Vec<Vector3<f64>>,
    /// Residual of the transformed system, `r̂ = E⁻¹ r` by recurrence.
    rh: Vec<Vector3<f64>>,
    /// `ẑ = D r̂`.
    z: Vec<Vector3<f64>>,
    /// Direction `p̂` of the transformed system.
    p: Vec<Vector3<f64>>,
    /// `t = E⁻ᵀ p̂`, the direction of `x`.
    t: Vec<Vector3<f64>>,
    /// `U t` after the backward sweep, `Â p̂ = t + w` after the forward one.
    q: Vec<Vector3<f64>>,
    /// The forward sweep's scattered sums `(L w)ᵢ` (zero between sweeps).
    acc: Vec<Vector3<f64>>,
    partials: Vec<f64>,
    partials2: Vec<(f64, f64)>,
    /// The first guess of the last solve, for a caller that retries it.
    x0: Vec<Vector3<f64>>,
    /// The last solve stopped at `p̂ᵀ Â p̂ ≤ 0`.
    broke_down: bool,
}

/// What the sweeps read, row by row and contiguous: row `i` holds `Dᵢ⁻¹` (zero on fixed
/// vertices), then the blocks `Aⱼᵢ = Aᵢⱼᵀ` of `L` below the diagonal for every `j > i` of
/// the pattern's row — the strict upper half of `A` stored transposed, so the forward
/// sweeps' scatters (`L w`, `L r̂`) are plain block products and only the backward sweep's
/// gather of `U t` is a transposed one.
#[derive(Debug, Clone, Default)]
struct Sweeps {
    /// Row pointers and diagonal slots of the pattern the offsets were built for.
    row_ptr: Vec<u32>,
    diag: Vec<u32>,
    /// Row `i` owns `blocks[start[i]..start[i + 1]]` and the same range of `cols`.
    start: Vec<u32>,
    cols: Vec<u32>,
    blocks: Vec<Matrix3<f64>>,
    /// Whether the backward sweep asks for the blocks of the rows ahead (blocks larger than
    /// the L2 cache, see [`PREFETCH_MIN_BYTES`]).
    prefetch: bool,
}

/// Smallest compact copy (bytes of blocks) whose backward sweep prefetches. The sweep walks
/// the rows from the last to the first, each row's blocks upwards in memory, and on the 20k
/// bench bar (a copy of 2.3 MB) `perf annotate` put a fifth of the solve's samples on its
/// first block load: it waited for memory. Below ~1 MiB the copy stays in the caches, so
/// the threshold is the tangent scatter's (`fem::elements`), not measured again here
/// (EXPERIMENTS.md, issue 18, *The rotations four at a time*).
const PREFETCH_MIN_BYTES: usize = 1 << 20;

/// A failed candidate exit whose true `‖r‖²` is more than this many times the estimate
/// restarts CG from the true residual (see [`EisenstatSsor::solve`]); on the bench bars the
/// estimate stayed within a factor 2.
const DRIFT: f64 = 10.0;

/// How many rows ahead of the one it solves the backward sweep asks for the blocks.
const BACKWARD_PREFETCH_ROWS: usize = 3;

impl Sweeps {
    /// Copies `D⁻¹` and the transposed upper blocks of `a` (the offsets are made again only
    /// when the pattern's rows differ from the last one's: once per body).
    fn load(&mut self, a: &BlockCsr, fixed: &[bool]) {
        let p = &*a.pattern;
        if self.start.is_empty() || self.row_ptr != p.row_ptr || self.diag != p.diag {
            self.start.clear();
            self.cols.clear();
            self.start.push(0);
            for i in 0..p.n_rows() {
                let (s, e) = (p.diag[i] as usize, p.row_ptr[i + 1] as usize);
                self.cols.extend_from_slice(&p.cols[s..e]);
                self.start.push(self.cols.len() as u32);
            }
            self.blocks = vec![Matrix3::zeros(); self.cols.len()];
            self.prefetch =
                self.blocks.len() * std::mem::size_of::<Matrix3<f64>>() >= PREFETCH_MIN_BYTES;
            self.row_ptr.clone_from(&p.row_ptr);
            self.diag.clone_from(&p.diag);
        }
        for (i, &fixed_i) in fixed.iter().enumerate().take(p.n_rows()) {
            let (s, e) = (p.diag[i] as usize, p.row_ptr[i + 1] as usize);
            let o = self.start[i] as usize;
            self.blocks[o] = if fixed_i {
                Matrix3::zeros()
            } else {
                invert_block(&a.values[s])
            };
            for (dst, src) in self.blocks[o + 1..o + e - s]
                .iter_mut()
                .zip(&a.values[s + 1..e])
            {
                *dst = src.transpose();
            }
        }
    }

    /// A hint to load the cache lines of row `i`'s blocks; no effect on results.
    #[inline(always)]
    fn prefetch_row(&self, i: usize) {
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let (s, e) = (self.start[i] as usize, self.start[i + 1] as usize);
            let first = self.blocks[s..e].as_ptr().cast::<i8>();
            let bytes = (e - s) * std::mem::size_of::<Matrix3<f64>>();
            let mut offset = 0;
            while offset < bytes {
                // SAFETY: SSE is part of the x86-64 baseline, and a prefetch reads nothing
                // and never faults, whatever the address.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(offset)) };
                offset += 64;
            }
            // The last line, which the 64-byte steps miss when the row starts mid-line.
            // SAFETY: as above.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(bytes - 1)) };
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = i;
    }

    /// Row `i`: `Dᵢ⁻¹`, the blocks `Aⱼᵢ` (`j > i`) and their `j`.
    #[inline(always)]
    fn row(&self, i: usize) -> (&Matrix3<f64>, &[Matrix3<f64>], &[u32]) {
        let (s, e) = (self.start[i] as usize, self.start[i + 1] as usize);
        (
            &self.blocks[s],
            &self.blocks[s + 1..e],
            &self.cols[s + 1..e],
        )
    }
}

impl EisenstatSsor {
    pub fn new(n: usize) -> Self {
        let zero = vec![Vector3::zeros(); n];
        Self {
            sweeps: Sweeps::default(),
            d: vec![Matrix3::zeros(); n],
            r: zero.clone(),
            rh: zero.clone(),
            z: zero.clone(),
            p: zero.clone(),
            t: zero.clone(),
            q: zero.clone(),
            acc: zero.clone(),
            x0: zero,
            broke_down: false,
            partials: vec![0.0; par::n_chunks(n)],
            partials2: vec![(0.0, 0.0); par::n_chunks(n)],
        }
    }

    /// Takes `D`, `D⁻¹` (zero on fixed vertices) and the upper half of `a`.
    pub fn refresh(&mut self, a: &BlockCsr, fixed: &[bool]) {
        let n = a.n_rows();
        if self.r.len() != n {
            *self = Self::new(n);
        }
        self.sweeps.load(a, fixed);
        let (values, diag) = (&a.values, &a.pattern.diag);
        par::for_each_mut(&mut self.d, |i, d| {
            *d = if fixed[i] {
                Matrix3::zeros()
            } else {
                values[diag[i] as usize]
            };
        });
    }

    /// Solves `A x = b` on the free vertices by SSOR-preconditioned CG with Eisenstat's trick;
    /// the contract, stopping rule and errors of [`super::conjugate_gradient`]. Call
    /// [`EisenstatSsor::refresh`] with `a` and `fixed` first.
    pub fn solve(
        &mut self,
        a: &BlockCsr,
        b: &[Vector3<f64>],
        fixed: &[bool],
        x: &mut [Vector3<f64>],
        settings: &PcgSettings,
    ) -> Result<CgInfo, CgError> {
        self.broke_down = false;
        self.x0.copy_from_slice(x);
        let Some(b_norm) = free_norm(a, b, fixed, x, &mut self.q, &mut self.partials)? else {
            return Ok(CgInfo::default());
        };
        // The sweeps read `t` on fixed vertices (zero there) and scatter into `acc` there
        // (reset by the passes that read it).
        for (ti, &f) in self.t.iter_mut().zip(fixed) {
            if f {
                *ti = Vector3::zeros();
            }
        }
        self.acc.fill(Vector3::zeros());
        let target = settings.tolerance * b_norm;
        let mut iterations = 0;
        let (rr, _) = self.true_residual(a, b, fixed, x);
        if !rr.is_finite() {
            return Err(CgError::NonFinite { iterations });
        }
        let mut relative_residual = rr.sqrt() / b_norm;
        if rr.sqrt() <= target {
            return Ok(CgInfo {
                iterations,
                relative_residual,
            });
        }
        let mut rz = self.replace_residual(fixed);
        if !rz.is_finite() {
            return Err(CgError::NonFinite { iterations });
        }
        self.p.copy_from_slice(&self.z);
        // ‖r‖² ≈ scale · r̂ᵀẑ between true residuals (see the module doc, *The stopping rule*).
        let mut scale = rr / rz;
        let mut beta = 0.0;
        while iterations < settings.max_iterations {
            // p̂ = ẑ + β p̂, t = E⁻ᵀ p̂ and U t; then Â p̂ = t + E⁻¹ U t and p̂ᵀ Â p̂.
            self.backward(fixed, beta);
            let pq = self.forward(fixed);
            if !pq.is_finite() {
                return Err(CgError::NonFinite { iterations });
            }
            if pq <= 0.0 {
                // Not positive definite (or breakdown): report non-convergence.
                self.broke_down = true;
                break;
            }
            let alpha = rz / pq;
            let mut rz_new = self.update(fixed, x, alpha);
            iterations += 1;
            if !rz_new.is_finite() {
                return Err(CgError::NonFinite { iterations });
            }
            if scale * rz_new <= target * target {
                // A candidate exit: the true residual decides.
                let (rr_true, _) = self.true_residual(a, b, fixed, x);
                if !rr_true.is_finite() {
                    return Err(CgError::NonFinite { iterations });
                }
                relative_residual = rr_true.sqrt() / b_norm;
                if rr_true.sqrt() <= target {
                    return Ok(CgInfo {
                        iterations,
                        relative_residual,
                    });
                }
                // Not yet: the recurrence's r̂ is replaced by E⁻¹ of the true residual (which
                // also undoes its drift in rounding), and the loop goes on along the same
                // direction, unless the estimate was off by more than DRIFT: then the
                // recurrence had drifted away from the true residual and CG starts again
                // from it (as the shared loop does).
                let drifted = scale * rz_new * DRIFT < rr_true;
                rz_new = self.replace_residual(fixed);
                if !rz_new.is_finite() {
                    return Err(CgError::NonFinite { iterations });
                }
                scale = rr_true / rz_new;
                if drifted {
                    self.p.copy_from_slice(&self.z);
                    rz = rz_new;
                    beta = 0.0;
                    continue;
                }
            }
            beta = rz_new / rz;
            rz = rz_new;
        }
        // Out of iterations or broken down: the true residual is the one reported.
        let (rr_true, _) = self.true_residual(a, b, fixed, x);
        if rr_true.is_finite() {
            relative_residual = rr_true.sqrt() / b_norm;
        }
        Err(CgError::NoConvergence(CgInfo {
            iterations,
            relative_residual,
        }))
    }

    /// Whether the last solve stopped because `p̂ᵀ Â p̂ ≤ 0` (a matrix that is not positive
    /// definite on the free vertices, where SSOR's `M` need not be either), and the first
    /// guess it started from.
    pub fn breakdown(&self) -> (bool, &[Vector3<f64>]) {
        (self.broke_down, &self.x0)
    }

    /// `r = b − A x` on the free vertices (zero on fixed ones); returns `(r·r, 0)`. Uses `z`
    /// and `q` as scratch.
    fn true_residual(
        &mut self,
        a: &BlockCsr,
        b: &[Vector3<f64>],
        fixed: &[bool],
        x: &[Vector3<f64>],
    ) -> (f64, f64) {
        let s = self;
        residual(
            a,
            b,
            fixed,
            x,
            &mut s.r,
            &mut s.z,
            &mut s.q,
            &mut s.partials2,
            None,
        )
    }

    /// `r̂ = E⁻¹ r` from the true residual `r` (a forward sweep) and `ẑ = D r̂`; returns
    /// `r̂ᵀ ẑ`. `p̂` is left as it is.
    fn replace_residual(&mut self, fixed: &[bool]) -> f64 {
        replace_residual_isa(self, fixed)
    }

    /// The loop of [`Self::replace_residual`], compiled for the baseline and for AVX2
    /// ([`crate::isa`]).
    #[inline(always)]
    fn replace_residual_loop(&mut self, fixed: &[bool]) -> f64 {
        let n = self.r.len();
        let (r, rh, z, acc) = (&self.r, &mut self.rh, &mut self.z, &mut self.acc);
        let mut rz = 0.0;
        for i in 0..n {
            if fixed[i] {
                acc[i] = Vector3::zeros();
                rh[i] = Vector3::zeros();
                z[i] = Vector3::zeros();
                continue;
            }
            let (d_inv, blocks, cols) = self.sweeps.row(i);
            let yi = d_inv * (r[i] - acc[i]);
            acc[i] = Vector3::zeros();
            rh[i] = yi;
            let zi = self.d[i] * yi;
            z[i] = zi;
            rz += yi.dot(&zi);
            for (block, &j) in blocks.iter().zip(cols) {
                acc[j as usize] += block * yi;
            }
        }
        rz
    }

    /// The backward sweep: `p̂ = ẑ + β p̂`, then `(D + U) t = p̂` from the last row up, keeping
    /// each row's gathered `(U t)ᵢ` in `q`.
    fn backward(&mut self, fixed: &[bool], beta: f64) {
        backward_isa(self, fixed, beta)
    }

    /// The loop of [`Self::backward`], compiled for the baseline and for AVX2 ([`crate::isa`]).
    #[inline(always)]
    fn backward_loop(&mut self, fixed: &[bool], beta: f64) {
        let n = self.r.len();
        let (z, p, t, q) = (&self.z, &mut self.p, &mut self.t, &mut self.q);
        let prefetch = self.sweeps.prefetch;
        for i in (0..n).rev() {
            if prefetch && i >= BACKWARD_PREFETCH_ROWS {
                self.sweeps.prefetch_row(i - BACKWARD_PREFETCH_ROWS);
            }
            if fixed[i] {
                continue;
            }
            let pi = z[i] + beta * p[i];
            p[i] = pi;
            let (d_inv, blocks, cols) = self.sweeps.row(i);
            let mut ut = Vector3::zeros();
            for (block, &j) in blocks.iter().zip(cols) {
                ut += block.tr_mul(&t[j as usize]);
            }
            t[i] = d_inv * (pi - ut);
            q[i] = ut;
        }
    }

    /// The forward sweep: `(D + L) w = U t` from the first row down (the sums `(L w)ᵢ`
    /// scattered into `acc`), `q = Â p̂ = t + w`; returns `p̂ᵀ Â p̂`.
    fn forward(&mut self, fixed: &[bool]) -> f64 {
        forward_isa(self, fixed)
    }

    /// The loop of [`Self::forward`], compiled for the baseline and for AVX2 ([`crate::isa`]).
    #[inline(always)]
    fn forward_loop(&mut self, fixed: &[bool]) -> f64 {
        let n = self.r.len();
        let (p, t, q, acc) = (&self.p, &self.t, &mut self.q, &mut self.acc);
        let mut pq = 0.0;
        for i in 0..n {
            if fixed[i] {
                acc[i] = Vector3::zeros();
                continue;
            }
            let (d_inv, blocks, cols) = self.sweeps.row(i);
            let wi = d_inv * (q[i] - acc[i]);
            acc[i] = Vector3::zeros();
            let qi = t[i] + wi;
            q[i] = qi;
            pq += p[i].dot(&qi);
            for (block, &j) in blocks.iter().zip(cols) {
                acc[j as usize] += block * wi;
            }
        }
        pq
    }

    /// `x += α t`, `r̂ −= α Â p̂` and `ẑ = D r̂`; returns `r̂ᵀ ẑ`, summed per chunk in chunk
    /// order.
    fn update(&mut self, fixed: &[bool], x: &mut [Vector3<f64>], alpha: f64) -> f64 {
        let n = self.rh.len();
        // The chunks' slices of `x` below are cut from its pointer.
        assert_eq!(x.len(), n, "the solution has one entry per row");
        let (d, t, q) = (&self.d, &self.t, &self.q);
        let ptrs = (
            SharedMut(x.as_mut_ptr()),
            SharedMut(self.rh.as_mut_ptr()),
            SharedMut(self.z.as_mut_ptr()),
        );
        par::chunked(n, par::VEC_PAR_MIN, &mut self.partials, |range| {
            let (xp, rhp, zp) = &ptrs;
            let (start, len) = (range.start, range.len());
            // SAFETY: the chunks are disjoint ranges of `0..n`, and `n` is the length of
            // `x`, `r̂` and `ẑ`: each chunk's slices are its own.
            let (x, rh, z) = unsafe {
                (
                    std::slice::from_raw_parts_mut(xp.ptr().add(start), len),
                    std::slice::from_raw_parts_mut(rhp.ptr().add(start), len),
                    std::slice::from_raw_parts_mut(zp.ptr().add(start), len),
                )
            };
            update_rows(
                &fixed[range.clone()],
                alpha,
                [&t[range.clone()], &q[range.clone()]],
                &d[range],
                x,
                rh,
                z,
            )
        });
        self.partials[..par::n_chunks(n)].iter().sum()
    }
}

crate::isa::avx2_or_baseline! {
    /// [`EisenstatSsor::update`] on a chunk of rows: `x += α t`, `r̂ −= α q`, `ẑ = D r̂`;
    /// returns `r̂ᵀ ẑ`, summed in two partial sums (even and odd rows, added at the end).
    fn update_rows(
        fixed: &[bool],
        alpha: f64,
        tq: [&[Vector3<f64>]; 2],
        d: &[Matrix3<f64>],
        x: &mut [Vector3<f64>],
        rh: &mut [Vector3<f64>],
        z: &mut [Vector3<f64>],
    ) -> f64 {
        let n = x.len();
        // (Every slice cut to `n`, so that the loop's indexing needs no bounds checks.)
        let (fixed, t, q, d) = (&fixed[..n], &tq[0][..n], &tq[1][..n], &d[..n]);
        let (rh, z) = (&mut rh[..n], &mut z[..n]);
        let mut rz = [0.0; 2];
        for i in 0..n {
            if fixed[i] {
                continue;
            }
            x[i] += alpha * t[i];
            let rhi = rh[i] - alpha * q[i];
            rh[i] = rhi;
            let zi = d[i] * rhi;
            z[i] = zi;
            rz[i & 1] += rhi.dot(&zi);
        }
        rz[0] + rz[1]
    }
}

crate::isa::avx2_or_baseline! {
    /// [`EisenstatSsor::replace_residual`]'s loop for the baseline or AVX2 ([`crate::isa`]).
    fn replace_residual_isa(s: &mut EisenstatSsor, fixed: &[bool]) -> f64 => EisenstatSsor::replace_residual_loop
}

crate::isa::avx2_or_baseline! {
    /// [`EisenstatSsor::backward`]'s loop for the baseline or AVX2 ([`crate::isa`]).
    fn backward_isa(s: &mut EisenstatSsor, fixed: &[bool], beta: f64) => EisenstatSsor::backward_loop
}

crate::isa::avx2_or_baseline! {
    /// [`EisenstatSsor::forward`]'s loop for the baseline or AVX2 ([`crate::isa`]).
    fn forward_isa(s: &mut EisenstatSsor, fixed: &[bool]) -> f64 => EisenstatSsor::forward_loop
}

#[cfg(test)]
mod tests;
