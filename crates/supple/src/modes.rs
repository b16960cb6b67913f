//! Vibration modes: the lowest eigenpairs of `K φ = ω² M φ` at the rest state, over the free
//! degrees of freedom (fixed vertices removed, partially held vertices filtered as in
//! [`crate::constraint`]).
//!
//! Method: **shift-invert subspace iteration with Rayleigh–Ritz** (Bathe & Wilson 1973;
//! Bathe, *Finite Element Procedures*, §11.6) on the existing sparse Cholesky factorization:
//! with `A = K − σ M` factored once (`σ < 0` slightly below zero, so that a free body's
//! singular `K` still gives a positive definite `A`), each iteration takes `Y = A⁻¹ M X` for a
//! block of `p = max(2N, N + 8)` vectors, then solves the projected problem
//! `(Yᵀ K Y) z = λ (Yᵀ M Y) z` and sets `X = Y Z`. Mode `j` converges like
//! `((λ_j − σ)/(λ_{p+1} − σ))^k`. A block method (rather than single-vector Lanczos) finds
//! repeated eigenvalues — the six rigid modes of a free body, the two bending modes of a
//! square beam — with their full multiplicity. Iterations stop when every wanted eigenvalue
//! changed by less than `tolerance · |λ| + 10⁻¹² r` (`r` the mean `K_ii / M_ii`, `σ = −10⁻⁸ r`;
//! the second term is the round-off level of a rigid mode's `λ ≈ 0`); the true residuals
//! `‖K φ − λ M φ‖ / (‖K φ‖ + |λ| ‖M φ‖ + |σ| ‖M φ‖)` are reported.

use crate::body::Body;
use crate::fem::{Mass, MassKind};
use crate::linalg::{BlockCsr, CholeskyError, OrderingKind, SolverError, SparseCholesky};
use nalgebra::{DMatrix, Vector3};
use thiserror::Error;

/// What to compute.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ModeSettings {
    /// How many of the lowest modes.
    pub count: usize,
    pub mass: MassKind,
    /// Relative change of the eigenvalues between iterations that counts as converged.
    pub tolerance: f64,
    pub max_iterations: usize,
}

impl Default for ModeSettings {
    fn default() -> Self {
        Self {
            count: 10,
            mass: MassKind::Lumped,
            tolerance: 1e-12,
            max_iterations: 200,
        }
    }
}

/// The computed modes, lowest first.
#[derive(Debug, Clone)]
pub struct Modes {
    /// Eigenvalues `ω²` (rad²/s²; a rigid mode's is ≈ 0 and may be slightly negative).
    pub omega2: Vec<f64>,
    /// Mode shapes, `M`-orthonormal (`φᵀ M φ = 1`), zero on fixed vertices.
    pub shapes: Vec<Vec<Vector3<f64>>>,
    /// True relative residual of each pair (see the module notes).
    pub residuals: Vec<f64>,
    pub iterations: usize,
    pub converged: bool,
    /// The shift `σ` (rad²/s²).
    pub shift: f64,
    /// Free degrees of freedom.
    pub free_dofs: usize,
}

impl Modes {
    /// `f = sign(ω²) √|ω²| / 2π` in Hz.
    pub fn frequencies_hz(&self) -> Vec<f64> {
        self.omega2
            .iter()
            .map(|w| w.signum() * w.abs().sqrt() / (2.0 * std::f64::consts::PI))
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Error)]
pub enum ModesError {
    #[error("count = 0: ask for at least one mode")]
    NoCount,
    #[error("count = {count}: the body has only {free} free degrees of freedom")]
    TooMany { count: usize, free: usize },
    #[error("factorization of K − σM failed: {0}")]
    Factor(#[from] CholeskyError),
    #[error(transparent)]
    Ordering(#[from] SolverError),
    #[error("the projected mass matrix is not positive definite (the start block lost rank)")]
    Projected,
}

/// The `settings.count` lowest modes of `body` at its rest shape (see the module notes).
pub fn vibration_modes(body: &mut Body, settings: &ModeSettings) -> Result<Modes, ModesError> {
    let n = body.n_vertices();
    let rest = body.mesh.positions.clone();
    let fixed = body.fixed.clone();
    let free = 3 * fixed.iter().filter(|f| !**f).count();
    let wanted = settings.count;
    if wanted == 0 {
        return Err(ModesError::NoCount);
    }
    if wanted > free {
        return Err(ModesError::TooMany {
            count: wanted,
            free,
        });
    }
    let p = (2 * wanted).max(wanted + 8).min(free);
    let mass = Mass::new(&body.elems, n, body.density, settings.mass);
    let pattern = body.elems.pattern.clone();
    body.model.update_frames(&body.elems, &rest);
    let mut k = BlockCsr::zeros(pattern.clone());
    body.model.add_tangent(&body.elems, &rest, 1.0, &mut k);
    body.constraints.filter_matrix(&mut k);
    // σ: 10⁻⁸ of the mean diagonal ratio K_ii / M_ii, below zero.
    let ratio: f64 = (0..n)
        .filter(|&i| !fixed[i])
        .map(|i| k.values[pattern.diag[i] as usize].trace() / (3.0 * mass.lumped[i]))
        .sum::<f64>()
        / (free / 3) as f64;
    let shift = -1e-8 * ratio;
    // Round-off floor of an eigenvalue (a rigid mode's λ ≈ 0 flickers at this level).
    let floor = 1e-12 * ratio;
    let mut a = k.clone();
    mass.add_to(&mut a, -shift);
    body.constraints.filter_matrix(&mut a);
    let perm =
        crate::linalg::solver::mesh_ordering(OrderingKind::Amd, &pattern, &rest, &body.mesh.tets)?;
    let mut chol = SparseCholesky::new(pattern.clone(), Some(perm.perm()))?;
    chol.factor(&a, &fixed)?;

    let restrict = |v: &mut [Vector3<f64>]| {
        for (vi, f) in v.iter_mut().zip(&fixed) {
            if *f {
                *vi = Vector3::zeros();
            }
        }
        body.constraints.project(v);
    };
    // Start block: deterministic pseudo-random vectors.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut rand = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    };
    let mut x: Vec<Vec<Vector3<f64>>> = (0..p)
        .map(|_| {
            (0..n)
                .map(|_| Vector3::new(rand(), rand(), rand()))
                .collect()
        })
        .collect();
    for v in &mut x {
        restrict(v);
    }
    let mut mx = vec![Vector3::zeros(); n];
    let mut kx: Vec<Vec<Vector3<f64>>> = vec![vec![Vector3::zeros(); n]; p];
    let mut mxs: Vec<Vec<Vector3<f64>>> = vec![vec![Vector3::zeros(); n]; p];
    let mut lambda_old = vec![f64::INFINITY; wanted];
    let mut omega2 = vec![0.0; wanted];
    let mut iterations = 0;
    let mut converged = false;
    while iterations < settings.max_iterations {
        iterations += 1;
        // Y = A⁻¹ M X.
        for v in &mut x {
            mass.mul_vec(&body.elems, v, &mut mx);
            restrict(&mut mx);
            v.fill(Vector3::zeros());
            chol.solve(&mx, &fixed, v)?;
            restrict(v);
        }
        // Rayleigh–Ritz: K̂ z = λ M̂ z.
        for j in 0..p {
            k.mul_vec(&x[j], &mut kx[j]);
            restrict(&mut kx[j]);
            mass.mul_vec(&body.elems, &x[j], &mut mxs[j]);
            restrict(&mut mxs[j]);
        }
        let dot = |a: &[Vector3<f64>], b: &[Vector3<f64>]| -> f64 {
            a.iter().zip(b).map(|(u, v)| u.dot(v)).sum()
        };
        let kh = DMatrix::from_fn(p, p, |i, j| 0.5 * (dot(&x[i], &kx[j]) + dot(&x[j], &kx[i])));
        let mh = DMatrix::from_fn(p, p, |i, j| {
            0.5 * (dot(&x[i], &mxs[j]) + dot(&x[j], &mxs[i]))
        });
        let l = mh.cholesky().ok_or(ModesError::Projected)?;
        let linv = l.l().try_inverse().ok_or(ModesError::Projected)?;
        let c = &linv * kh * linv.transpose();
        let eig = nalgebra::SymmetricEigen::new(0.5 * (&c + c.transpose()));
        let mut order: Vec<usize> = (0..p).collect();
        order.sort_by(|&a, &b| eig.eigenvalues[a].total_cmp(&eig.eigenvalues[b]));
        // X ← Y Z with Z = L⁻ᵀ W (M-orthonormal Ritz vectors), lowest first.
        let z = linv.transpose() * &eig.eigenvectors;
        let new: Vec<Vec<Vector3<f64>>> = order
            .iter()
            .map(|&c| {
                let mut v = vec![Vector3::zeros(); n];
                for (j, xj) in x.iter().enumerate() {
                    let w = z[(j, c)];
                    for (vi, xi) in v.iter_mut().zip(xj) {
                        *vi += w * xi;
                    }
                }
                v
            })
            .collect();
        x = new;
        for (j, &c) in order.iter().take(wanted).enumerate() {
            omega2[j] = eig.eigenvalues[c];
        }
        converged = omega2
            .iter()
            .zip(&lambda_old)
            .all(|(l, o)| (l - o).abs() <= settings.tolerance * l.abs() + floor);
        lambda_old.copy_from_slice(&omega2);
        if converged {
            break;
        }
    }
    // True residuals of the wanted pairs.
    let mut residuals = Vec::with_capacity(wanted);
    for j in 0..wanted {
        k.mul_vec(&x[j], &mut kx[0]);
        restrict(&mut kx[0]);
        mass.mul_vec(&body.elems, &x[j], &mut mx);
        restrict(&mut mx);
        let norm = |v: &[Vector3<f64>]| v.iter().map(|u| u.norm_squared()).sum::<f64>().sqrt();
        let r: Vec<Vector3<f64>> = kx[0]
            .iter()
            .zip(&mx)
            .map(|(a, b)| a - omega2[j] * b)
            .collect();
        let scale = norm(&kx[0]) + (omega2[j].abs() + shift.abs()) * norm(&mx);
        residuals.push(norm(&r) / scale);
    }
    x.truncate(wanted);
    Ok(Modes {
        omega2,
        shapes: x,
        residuals,
        iterations,
        converged,
        shift,
        free_dofs: free,
    })
}
