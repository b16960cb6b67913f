//! The one conjugate-gradient loop of Supple, filtered for fixed vertices and written against
//! a preconditioner trait ([`Precond`]).
//!
//! Hestenes & Stiefel's preconditioned CG (Saad, *Iterative Methods for Sparse Linear
//! Systems*, 2nd ed., Alg. 9.1) on the free vertices only: fixed rows and columns are removed
//! from the system as in Baraff & Witkin's modified PCG (1998, §5.3), so `r`, `z` and `p` stay
//! zero on fixed vertices and `x` keeps its prescribed values there. The shape follows faer's
//! `conjugate_gradient(out, precond, mat, …) -> Result<CgInfo, CgError>`: settings in, a small
//! info on success, an error that says why not.
//!
//! Every sum is taken per fixed chunk and added in chunk order ([`par`]), so the iterates do
//! not depend on the number of threads as long as the preconditioner's `apply` does not.

use super::par::{self, SharedMut};
use super::upper::UpperHalf;
use super::{BlockCsr, PcgSettings};
use nalgebra::{Matrix3, Vector3};
use thiserror::Error;

/// A symmetric positive definite approximation `P ≈ A⁻¹` on the free vertices.
///
/// `apply` receives the current matrix (so a preconditioner need not copy it), the fixed
/// mask and a residual that is zero on fixed vertices; it must write `z = P r` with `z` zero
/// on fixed vertices, allocate nothing, and give the same bits for any thread count.
pub trait Precond {
    /// `z = P r`.
    fn apply(&mut self, a: &BlockCsr, fixed: &[bool], r: &[Vector3<f64>], z: &mut [Vector3<f64>]);

    /// The inverse diagonal blocks when `P` is block diagonal: the loop then fuses `z = P r`
    /// with the update of `x` and `r` (one pass over the vectors instead of two).
    fn block_diagonal(&self) -> Option<&[Matrix3<f64>]> {
        None
    }
}

/// What a converged solve did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CgInfo {
    pub iterations: usize,
    /// `‖r‖ / ‖b_F − A_FH x_H‖` on the free vertices (the scale of `free_norm`; 0 when it
    /// is zero).
    pub relative_residual: f64,
}

/// Why a solve did not reach its tolerance.
#[derive(Debug, Clone, Copy, PartialEq, Error)]
pub enum CgError {
    /// `b`, `‖b‖`, an iterate's residual or a CG scalar was NaN or infinite (a non-finite
    /// input or an overflow); the solve stopped there.
    #[error("non-finite value after {iterations} CG iterations")]
    NonFinite { iterations: usize },
    /// The iteration cap was reached, or `pᵀ A p ≤ 0` (the matrix is not positive definite
    /// on the free vertices).
    #[error("CG stopped at relative residual {:e} after {} iterations", .0.relative_residual, .0.iterations)]
    NoConvergence(CgInfo),
}

/// The vectors of the loop, sized once.
#[derive(Debug, Clone)]
pub struct CgWorkspace {
    r: Vec<Vector3<f64>>,
    z: Vec<Vector3<f64>>,
    p: Vec<Vector3<f64>>,
    q: Vec<Vector3<f64>>,
    partials: Vec<f64>,
    partials2: Vec<(f64, f64)>,
    /// The upper half of the matrix, for the product of systems below
    /// [`par::VEC_PAR_MIN`] rows (`linalg::upper`; filled at the first solve).
    upper: UpperHalf,
}

impl CgWorkspace {
    pub fn new(n: usize) -> Self {
        let zero = vec![Vector3::zeros(); n];
        Self {
            r: zero.clone(),
            z: zero.clone(),
            p: zero.clone(),
            q: zero,
            partials: vec![0.0; par::n_chunks(n)],
            partials2: vec![(0.0, 0.0); par::n_chunks(n)],
            upper: UpperHalf::default(),
        }
    }
}

impl CgWorkspace {
    /// Sizes what the loop would size at its first solve of `a` (the upper half below
    /// [`par::VEC_PAR_MIN`] rows), so that a later first use allocates nothing: for a caller
    /// that runs this loop only as a fallback (`linalg::Pcg`'s Eisenstat SSOR).
    pub fn prepare(&mut self, a: &BlockCsr) {
        if a.n_rows() < par::VEC_PAR_MIN {
            self.upper.load(a);
        }
    }
}

/// Solves `A x = b` on the free vertices with preconditioner `precond`; `x` holds the first
/// guess (warm start) on entry and its fixed entries are left untouched. Stops when
/// `‖b − A x‖ ≤ tolerance · ‖b_F − A_FH x_H‖` on the free vertices (the right-hand side of
/// the free vertices' system, see `free_norm`) or after `max_iterations`. `A` must be
/// symmetric: below [`par::VEC_PAR_MIN`] rows the products `A p` read its upper half only.
///
/// Block-diagonal preconditioners run the fused loop: three passes per iteration (`q = A p`
/// with `p·q`; `x`, `r`, `z = P r` with `r·r` and `r·z`; `p = z + β p`) and the recurrence
/// residual is reported. Others take one more pass for `z = P r`, and convergence of the
/// recurrence residual is confirmed with the true residual (one product with `A`); when the
/// two disagree CG restarts from the true residual.
pub fn conjugate_gradient<P: Precond + ?Sized>(
    ws: &mut CgWorkspace,
    a: &BlockCsr,
    b: &[Vector3<f64>],
    fixed: &[bool],
    x: &mut [Vector3<f64>],
    settings: &PcgSettings,
    precond: &mut P,
) -> Result<CgInfo, CgError> {
    let n = a.n_rows();
    let par_min = par::VEC_PAR_MIN;
    let CgWorkspace {
        r,
        z,
        p,
        q,
        partials,
        partials2,
        upper,
    } = ws;
    let pattern = &*a.pattern;
    // Below the size where the vector passes go parallel, `A p` runs on one thread from the
    // matrix's upper half (half the bytes; `linalg::upper`).
    let half = n < par_min;
    let Some(b_norm) = free_norm(a, b, fixed, x, q, partials)? else {
        return Ok(CgInfo::default());
    };
    if half {
        upper.load(a);
    }
    let diag = precond.block_diagonal().map(|d| d as *const [Matrix3<f64>]);
    // SAFETY: the slice lives in `precond`, which is not mutated while `diag` is used (the
    // block-diagonal path never calls `apply`).
    let diag: Option<&[Matrix3<f64>]> = diag.map(|d| unsafe { &*d });
    let target = settings.tolerance * b_norm;
    let mut iterations = 0;
    // (Re)start: r = b − A x on free rows, z = P r, p = z.
    let (mut rr, mut rz) = residual(a, b, fixed, x, r, z, q, partials2, diag);
    if diag.is_none() {
        precond.apply(a, fixed, r, z);
        rz = par::sum(n, partials, |i| r[i].dot(&z[i]));
    }
    if !(rr.is_finite() && rz.is_finite()) {
        return Err(CgError::NonFinite { iterations: 0 });
    }
    p.copy_from_slice(z);
    let mut relative_residual = rr.sqrt() / b_norm;
    if rr.sqrt() <= target {
        return Ok(CgInfo {
            iterations,
            relative_residual,
        });
    }
    while iterations < settings.max_iterations {
        // q = A p and p·q over free rows (p is zero on fixed rows).
        let pr = &*p;
        let pq = if half {
            upper.mul_dot(pattern, pr, q, fixed, partials)
        } else {
            full_product(a, pr, q, fixed, partials)
        };
        if !pq.is_finite() {
            return Err(CgError::NonFinite { iterations });
        }
        if pq <= 0.0 {
            break; // not positive definite (or breakdown): report non-convergence
        }
        let alpha = rz / pq;
        // x += α p, r −= α q (and z = D⁻¹ r when block diagonal), with r·r and r·z.
        {
            let qr = &*q;
            let (xp, rp, zp) = (
                SharedMut(x.as_mut_ptr()),
                SharedMut(r.as_mut_ptr()),
                SharedMut(z.as_mut_ptr()),
            );
            par::chunked(n, par_min, partials2, |range| {
                let (mut rr, mut rz) = (0.0, 0.0);
                for i in range {
                    if fixed[i] {
                        continue;
                    }
                    // SAFETY: disjoint chunks; `i < n`; p and q are only read here.
                    unsafe {
                        *xp.ptr().add(i) += alpha * pr[i];
                        let ri = &mut *rp.ptr().add(i);
                        *ri -= alpha * qr[i];
                        rr += ri.norm_squared();
                        if let Some(inv) = diag {
                            let zi = inv[i] * *ri;
                            *zp.ptr().add(i) = zi;
                            rz += ri.dot(&zi);
                        }
                    }
                }
                (rr, rz)
            });
        }
        let (rr_new, mut rz_new) = sum2(partials2, n);
        iterations += 1;
        rr = rr_new;
        if !rr.is_finite() {
            return Err(CgError::NonFinite { iterations });
        }
        relative_residual = rr.sqrt() / b_norm;
        if diag.is_none() {
            if rr.sqrt() <= target {
                // Confirm with the true residual; restart from it when they disagree.
                let (rr_true, _) = residual(a, b, fixed, x, r, z, q, partials2, None);
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
                precond.apply(a, fixed, r, z);
                rz = par::sum(n, partials, |i| r[i].dot(&z[i]));
                if !rz.is_finite() {
                    return Err(CgError::NonFinite { iterations });
                }
                p.copy_from_slice(z);
                continue;
            }
            precond.apply(a, fixed, r, z);
            rz_new = par::sum(n, partials, |i| r[i].dot(&z[i]));
        }
        if !rz_new.is_finite() {
            return Err(CgError::NonFinite { iterations });
        }
        if diag.is_some() && rr.sqrt() <= target {
            return Ok(CgInfo {
                iterations,
                relative_residual,
            });
        }
        let beta = rz_new / rz;
        rz = rz_new;
        let (zr, pp) = (&*z, SharedMut(p.as_mut_ptr()));
        par::chunked(n, par_min, partials, |range| {
            for i in range {
                // SAFETY: disjoint chunks; `i < n`.
                unsafe {
                    let pi = &mut *pp.ptr().add(i);
                    *pi = zr[i] + beta * *pi;
                }
            }
            0.0
        });
    }
    Err(CgError::NoConvergence(CgInfo {
        iterations,
        relative_residual,
    }))
}

/// The scale of every CG stopping test here: `‖b_F − A_FH x_H‖`, the norm of the
/// right-hand side of the system the free vertices `F` solve, `A_FF x_F = b_F − A_FH x_H`,
/// with the held vertices `H` at their values in `x` (`‖b_F‖` when those are all zero).
/// Scaled by `‖b_F‖` alone, the test asked for the impossible when held vertices moved a
/// body whose own `b` was at rounding level (a cube at rest without gravity, pushed by a
/// contact hold: its residual cannot go below the rounding of `A_FH x_H`), and a `b_F` of
/// exactly zero took `x_F = 0` whatever the held vertices did. `None` when the right-hand
/// side is zero: then `x_F = 0` is the solution, written, and the solve is done. A
/// non-finite one is an error before any iteration. `c` is scratch (`A_FH x_H`); `A` must
/// be symmetric (the sum runs over the held rows, `A_ij = A_jiᵀ`).
pub(super) fn free_norm(
    a: &BlockCsr,
    b: &[Vector3<f64>],
    fixed: &[bool],
    x: &mut [Vector3<f64>],
    c: &mut [Vector3<f64>],
    partials: &mut [f64],
) -> Result<Option<f64>, CgError> {
    let p = &*a.pattern;
    let mut held_moves = false;
    for j in (0..x.len()).filter(|&j| fixed[j] && x[j] != Vector3::zeros()) {
        if !held_moves {
            c.fill(Vector3::zeros());
            held_moves = true;
        }
        let (s, e) = (p.row_ptr[j] as usize, p.row_ptr[j + 1] as usize);
        for (block, &i) in a.values[s..e].iter().zip(&p.cols[s..e]) {
            if !fixed[i as usize] {
                c[i as usize] += block.tr_mul(&x[j]);
            }
        }
    }
    let c = &*c;
    let b_norm = par::sum(b.len(), partials, |i| {
        if fixed[i] {
            0.0
        } else if held_moves {
            (b[i] - c[i]).norm_squared()
        } else {
            b[i].norm_squared()
        }
    })
    .sqrt();
    if !b_norm.is_finite() {
        return Err(CgError::NonFinite { iterations: 0 });
    }
    if b_norm == 0.0 {
        for (xi, &f) in x.iter_mut().zip(fixed) {
            if !f {
                *xi = Vector3::zeros();
            }
        }
        return Ok(None);
    }
    Ok(Some(b_norm))
}

/// `q = A p` and `p·q` over the free rows (`p` zero on fixed rows), in parallel chunks of rows
/// summed in chunk order.
fn full_product(
    a: &BlockCsr,
    p: &[Vector3<f64>],
    q: &mut [Vector3<f64>],
    fixed: &[bool],
    partials: &mut [f64],
) -> f64 {
    let n = a.n_rows();
    let pattern = &*a.pattern;
    let qp = SharedMut(q.as_mut_ptr());
    par::chunked(n, par::VEC_PAR_MIN, partials, |range| {
        let mut pq = 0.0;
        for i in range {
            let (s, e) = (pattern.row_ptr[i] as usize, pattern.row_ptr[i + 1] as usize);
            let mut acc = Vector3::zeros();
            for k in s..e {
                acc += a.values[k] * p[pattern.cols[k] as usize];
            }
            // SAFETY: disjoint chunks; `i < n`.
            unsafe { *qp.ptr().add(i) = acc };
            if !fixed[i] {
                pq += p[i].dot(&acc);
            }
        }
        pq
    });
    partials[..par::n_chunks(n)].iter().sum()
}

/// `r = b − A x` on free rows (zero on fixed rows), and `z = D⁻¹ r` when `diag` is given;
/// returns `(r·r, r·z)` (`r·z = 0` without `diag`). `q` is scratch.
#[allow(clippy::too_many_arguments)]
pub(super) fn residual(
    a: &BlockCsr,
    b: &[Vector3<f64>],
    fixed: &[bool],
    x: &[Vector3<f64>],
    r: &mut [Vector3<f64>],
    z: &mut [Vector3<f64>],
    q: &mut [Vector3<f64>],
    partials2: &mut [(f64, f64)],
    diag: Option<&[Matrix3<f64>]>,
) -> (f64, f64) {
    let n = a.n_rows();
    a.mul_vec(x, q);
    let (rp, zp) = (SharedMut(r.as_mut_ptr()), SharedMut(z.as_mut_ptr()));
    let qr = &*q;
    par::chunked(n, par::VEC_PAR_MIN, partials2, |range| {
        let (mut rr, mut rz) = (0.0, 0.0);
        for i in range {
            let ri = if fixed[i] {
                Vector3::zeros()
            } else {
                b[i] - qr[i]
            };
            // SAFETY: chunks are disjoint and `i < n` = the length of r and z.
            unsafe { *rp.ptr().add(i) = ri };
            if let Some(inv) = diag {
                let zi = inv[i] * ri;
                // SAFETY: as above.
                unsafe { *zp.ptr().add(i) = zi };
                rz += ri.dot(&zi);
            }
            rr += ri.norm_squared();
        }
        (rr, rz)
    });
    sum2(partials2, n)
}

pub(super) fn sum2(partials: &[(f64, f64)], n: usize) -> (f64, f64) {
    partials[..par::n_chunks(n)]
        .iter()
        .fold((0.0, 0.0), |acc, p| (acc.0 + p.0, acc.1 + p.1))
}
