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
//! **Two cores.** A sweep is sequential (every row needs the rows after or before it), so
//! above [`MIN_PART_ROWS`](super::partition::MIN_PART_ROWS)` × 2` rows the loop runs in the order of one level of
//! nested dissection (`partition`, `sweeps`): two parts with no block between them sweep
//! side by side, and a separator between them runs alone. It is the same block SSOR on the
//! matrix with its rows reordered, not a weaker preconditioner (no coupling is dropped).
//! All vectors but `x`, `b` and the true residual live in that order; `x` is copied back
//! before every true residual and at the end. The parts' sums are added in part order and
//! the vector update runs by parts (or, with one part, in chunks summed in chunk order,
//! [`super::par`]): the same bits on any number of threads. Nothing is allocated after the
//! first solve on a matrix size.

use super::cg::{free_norm, residual, CgError, CgInfo};
use super::par::{self, SharedMut};
use super::{BlockCsr, PcgSettings};
use nalgebra::{Matrix3, Vector3};
use rayon::prelude::*;
use sweeps::{PartVectors, Sweeps};

mod sweeps;

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
    /// `w = E⁻¹ U t` of the forward sweep (the separator's rows gather it).
    w: Vec<Vector3<f64>>,
    /// The forward sweep's scattered sums `(L w)ᵢ` (zero between sweeps).
    acc: Vec<Vector3<f64>>,
    partials: Vec<f64>,
    partials2: Vec<(f64, f64)>,
    /// One partial sum per part of the sweeps.
    part_sums: Vec<f64>,
    /// The iterate, `r` and the fixed flags in the sweeps' order (`Sweeps::perm`; every
    /// vector above but `r` is kept in that order too).
    xp: Vec<Vector3<f64>>,
    rp: Vec<Vector3<f64>>,
    fixed_p: Vec<bool>,
    /// The first guess of the last solve, for a caller that retries it.
    x0: Vec<Vector3<f64>>,
    /// The last solve stopped at `p̂ᵀ Â p̂ ≤ 0`.
    broke_down: bool,
}

/// A failed candidate exit whose true `‖r‖²` is more than this many times the estimate
/// restarts CG from the true residual (see [`EisenstatSsor::solve`]); on the bench bars the
/// estimate stayed within a factor 2.
const DRIFT: f64 = 10.0;

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
            w: zero.clone(),
            acc: zero.clone(),
            x0: zero.clone(),
            broke_down: false,
            partials: vec![0.0; par::n_chunks(n)],
            partials2: vec![(0.0, 0.0); par::n_chunks(n)],
            part_sums: vec![0.0; super::partition::MAX_PARTS],
            xp: zero.clone(),
            rp: zero,
            fixed_p: vec![false; n],
        }
    }

    /// [`Self::new`] with `parts` parts instead of [`parts_for`](super::partition::parts_for)'s (tests).
    #[cfg(test)]
    pub(crate) fn with_parts(n: usize, parts: usize) -> Self {
        let mut es = Self::new(n);
        es.sweeps.parts = Some(parts);
        es
    }

    /// The row at each position of the sweeps' order (after a refresh).
    #[cfg(test)]
    pub(crate) fn order(&self) -> &[u32] {
        self.sweeps.perm()
    }

    /// Takes `D`, `D⁻¹` (zero on fixed vertices) and the upper half of `a`.
    pub fn refresh(&mut self, a: &BlockCsr, fixed: &[bool]) {
        let n = a.n_rows();
        if self.r.len() != n {
            *self = Self::new(n);
        }
        self.sweeps.load(a, fixed);
        let (values, diag, perm) = (&a.values, &a.pattern.diag, self.sweeps.perm());
        par::for_each_mut(&mut self.d, |ii, d| {
            let i = perm[ii] as usize;
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
        let perm = self.sweeps.perm();
        for ((xp, fp), &i) in self.xp.iter_mut().zip(&mut self.fixed_p).zip(perm) {
            *xp = x[i as usize];
            *fp = fixed[i as usize];
        }
        let result = self.iterate(a, b, fixed, x, settings, b_norm);
        self.put_back(x);
        result
    }

    /// The iterations of [`Self::solve`], on `xp`; `x` is brought up to date before each
    /// true residual.
    fn iterate(
        &mut self,
        a: &BlockCsr,
        b: &[Vector3<f64>],
        fixed: &[bool],
        x: &mut [Vector3<f64>],
        settings: &PcgSettings,
        b_norm: f64,
    ) -> Result<CgInfo, CgError> {
        // The sweeps read `t` on fixed vertices (zero there) and scatter into `acc` there
        // (reset by the passes that read it).
        for (ti, &f) in self.t.iter_mut().zip(&self.fixed_p) {
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
        let mut rz = self.replace_residual();
        if !rz.is_finite() {
            return Err(CgError::NonFinite { iterations });
        }
        self.p.copy_from_slice(&self.z);
        // ‖r‖² ≈ scale · r̂ᵀẑ between true residuals (see the module doc, *The stopping rule*).
        let mut scale = rr / rz;
        let mut beta = 0.0;
        while iterations < settings.max_iterations {
            // p̂ = ẑ + β p̂, t = E⁻ᵀ p̂ and U t; then Â p̂ = t + E⁻¹ U t and p̂ᵀ Â p̂.
            self.backward(beta);
            let pq = self.forward();
            if !pq.is_finite() {
                return Err(CgError::NonFinite { iterations });
            }
            if pq <= 0.0 {
                // Not positive definite (or breakdown): report non-convergence.
                self.broke_down = true;
                break;
            }
            let alpha = rz / pq;
            let mut rz_new = self.update(alpha);
            iterations += 1;
            if !rz_new.is_finite() {
                return Err(CgError::NonFinite { iterations });
            }
            if scale * rz_new <= target * target {
                // A candidate exit: the true residual decides.
                self.put_back(x);
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
                rz_new = self.replace_residual();
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
        self.put_back(x);
        let (rr_true, _) = self.true_residual(a, b, fixed, x);
        if rr_true.is_finite() {
            relative_residual = rr_true.sqrt() / b_norm;
        }
        Err(CgError::NoConvergence(CgInfo {
            iterations,
            relative_residual,
        }))
    }

    /// `x` from the iterate in the sweeps' order.
    fn put_back(&self, x: &mut [Vector3<f64>]) {
        for (xp, &i) in self.xp.iter().zip(self.sweeps.perm()) {
            x[i as usize] = *xp;
        }
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

    /// Raw pointers to the vectors the parts write, each part its own rows of them.
    fn shared(&mut self) -> Shared {
        Shared {
            rh: SharedMut(self.rh.as_mut_ptr()),
            z: SharedMut(self.z.as_mut_ptr()),
            p: SharedMut(self.p.as_mut_ptr()),
            t: SharedMut(self.t.as_mut_ptr()),
            q: SharedMut(self.q.as_mut_ptr()),
            w: SharedMut(self.w.as_mut_ptr()),
            acc: SharedMut(self.acc.as_mut_ptr()),
        }
    }

    /// `r̂ = E⁻¹ r` from the true residual `r` (a forward sweep: the parts side by side, then
    /// the separator) and `ẑ = D r̂`; returns `r̂ᵀ ẑ`. `p̂` is left as it is.
    fn replace_residual(&mut self) -> f64 {
        for (rp, &i) in self.rp.iter_mut().zip(self.sweeps.perm()) {
            *rp = self.r[i as usize];
        }
        let sh = self.shared();
        let (sw, d, r, fixed) = (&self.sweeps, &self.d, &self.rp, &self.fixed_p);
        let parts = for_parts(sw, &mut self.part_sums, |k| {
            // SAFETY: the parts are disjoint ranges of the positions, and every vector has
            // one entry per position: each part's slices are its own.
            let v = unsafe { sh.part(sw.part(k), fixed, d, r) };
            sweeps::replace(sw, sw.part(k), v)
        });
        if sw.separator().is_empty() {
            return parts;
        }
        parts + sweeps::replace_separator(sw, fixed, d, r, &mut self.rh, &mut self.z)
    }

    /// The backward sweep: `p̂ = ẑ + β p̂`, then `(D + U) t = p̂`, the separator's rows first,
    /// then the parts side by side, keeping each row's gathered `(U t)ᵢ` in `q`.
    fn backward(&mut self, beta: f64) {
        let sh = self.shared();
        let (sw, d, r, fixed) = (&self.sweeps, &self.d, &self.rp, &self.fixed_p);
        let sep = sw.separator();
        if !sep.is_empty() {
            // SAFETY: nothing else refers to the vectors during this call.
            let v = unsafe { sh.part(sep.clone(), fixed, d, r) };
            sweeps::backward(sw, sep.clone(), v, None, beta);
        }
        // SAFETY: the separator's `t` is only read from here on, and the parts write
        // positions before it.
        let t_sep = unsafe { std::slice::from_raw_parts(sh.t.ptr().add(sep.start), sep.len()) };
        for_parts(sw, &mut self.part_sums, |k| {
            // SAFETY: as in `replace_residual`; the separator's positions are not in a part.
            let v = unsafe { sh.part(sw.part(k), fixed, d, r) };
            sweeps::backward(sw, sw.part(k), v, Some(t_sep), beta);
            0.0
        });
    }

    /// The forward sweep: `(D + L) w = U t`, the parts side by side, then the separator,
    /// `q = Â p̂ = t + w`; returns `p̂ᵀ Â p̂`, summed in part order, the separator last.
    fn forward(&mut self) -> f64 {
        let sh = self.shared();
        let (sw, d, r, fixed) = (&self.sweeps, &self.d, &self.rp, &self.fixed_p);
        let parts = for_parts(sw, &mut self.part_sums, |k| {
            // SAFETY: as in `replace_residual`.
            let v = unsafe { sh.part(sw.part(k), fixed, d, r) };
            sweeps::forward(sw, sw.part(k), v)
        });
        let sep = sw.separator();
        if sep.is_empty() {
            return parts;
        }
        let q = &mut self.q[sep];
        parts + sweeps::forward_separator(sw, fixed, &self.p, &self.t, q, &mut self.w)
    }

    /// `x += α t`, `r̂ −= α Â p̂` and `ẑ = D r̂`; returns `r̂ᵀ ẑ`, summed per chunk in chunk
    /// order.
    fn update(&mut self, alpha: f64) -> f64 {
        let n = self.rh.len();
        let (d, t, q, fixed) = (&self.d, &self.t, &self.q, &self.fixed_p);
        let ptrs = (
            SharedMut(self.xp.as_mut_ptr()),
            SharedMut(self.rh.as_mut_ptr()),
            SharedMut(self.z.as_mut_ptr()),
        );
        let rows = |range: std::ops::Range<usize>| {
            let (xp, rhp, zp) = &ptrs;
            let (start, len) = (range.start, range.len());
            // SAFETY: the ranges below (parts or chunks) are disjoint ranges of `0..n`, and
            // `n` is the length of `x`, `r̂` and `ẑ`: each range's slices are its own.
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
        };
        if self.sweeps.n_parts() > 1 {
            // One range per part (the last with the separator), on the threads the sweeps
            // ran on.
            let sw = &self.sweeps;
            let last = sw.n_parts() - 1;
            return for_parts(sw, &mut self.part_sums, |k| {
                let part = sw.part(k);
                rows(if k == last { part.start..n } else { part })
            });
        }
        par::chunked(n, par::VEC_PAR_MIN, &mut self.partials, rows);
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

/// Raw pointers to the vectors of [`EisenstatSsor`] that the parts write.
struct Shared {
    rh: SharedMut<Vector3<f64>>,
    z: SharedMut<Vector3<f64>>,
    p: SharedMut<Vector3<f64>>,
    t: SharedMut<Vector3<f64>>,
    q: SharedMut<Vector3<f64>>,
    w: SharedMut<Vector3<f64>>,
    acc: SharedMut<Vector3<f64>>,
}

impl Shared {
    /// The slices of the rows `rows` of every vector.
    ///
    /// # Safety
    /// Every pointer must hold at least `rows.end` entries, and no other reference to these
    /// rows may be alive while the result is.
    unsafe fn part<'a>(
        &self,
        rows: std::ops::Range<usize>,
        fixed: &'a [bool],
        d: &'a [Matrix3<f64>],
        r: &'a [Vector3<f64>],
    ) -> PartVectors<'a> {
        let (start, len) = (rows.start, rows.len());
        let cut = |v: &SharedMut<Vector3<f64>>| {
            // SAFETY: the caller's contract.
            unsafe { std::slice::from_raw_parts_mut(v.ptr().add(start), len) }
        };
        PartVectors {
            fixed: &fixed[rows.clone()],
            d: &d[rows.clone()],
            r: &r[rows],
            rh: cut(&self.rh),
            z: cut(&self.z),
            p: cut(&self.p),
            t: cut(&self.t),
            q: cut(&self.q),
            w: cut(&self.w),
            acc: cut(&self.acc),
        }
    }
}

/// Runs `body(k)` for every part `k` of `sw`, side by side when there are several, and
/// returns the sum of the results in part order (the same bits on any number of threads).
/// `sums` holds one entry per part.
fn for_parts(sw: &Sweeps, sums: &mut [f64], body: impl Fn(usize) -> f64 + Sync + Send) -> f64 {
    let sums = &mut sums[..sw.n_parts()];
    if let [only] = sums {
        *only = body(0);
        return *only;
    }
    sums.par_iter_mut()
        .enumerate()
        .for_each(|(k, s)| *s = body(k));
    sums.iter().sum()
}

#[cfg(test)]
mod tests;
