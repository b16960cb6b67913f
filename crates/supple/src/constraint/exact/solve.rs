//! The projection's dense solve `(N W Nᵀ) y = rhs` (Liesenfeld & Stolfi eq. 8's
//! `N M⁻¹ G λ = …` with `G = Nᵀ`), where `W` is a free vertex's `1/m` or, on a dynamic rigid
//! core, the core's mobility ([`RigidCore::mobility`]).
//!
//! Cholesky first. Redundant rows make the matrix singular without making the constraints
//! contradictory — two point constraints on a rigid core's axis (a hinge) are 6 rows for the
//! 5 dofs they remove — so a singular matrix whose every row can move is solved in the least-
//! squares, minimum-norm sense (the pseudo-inverse from its eigen-decomposition, eigenvalues
//! below `1e-10` of the largest dropped): consistent redundant constraints are met exactly, and
//! contradictory ones leave a residual that the Gauss–Newton loop reports
//! ([`ExactError::Unconverged`]). A row that moves nothing (all its points held or massless) is
//! refused ([`ExactError::Singular`]).

use super::{ExactError, ProjectedBodies, Projector, Row};
use nalgebra::{DMatrix, SymmetricEigen};

/// Pivots (Cholesky) and eigenvalues (pseudo-inverse) below this share of the largest
/// diagonal entry count as zero.
const PIVOT_TOL: f64 = 1e-12;
const EIGEN_TOL: f64 = 1e-10;

impl Projector {
    /// Solves `(N W Nᵀ) y = rhs` in place (see the module notes).
    pub(super) fn solve(
        &mut self,
        bodies: &(impl ProjectedBodies + ?Sized),
    ) -> Result<(), ExactError> {
        let k = self.rows.len();
        self.fill_matrix(bodies);
        let scale = (0..k).map(|r| self.a[(r, r)]).fold(0.0, f64::max);
        // A row with (almost) nothing free to move.
        if (0..k).any(|r| self.a[(r, r)].is_nan() || self.a[(r, r)] <= PIVOT_TOL * scale) {
            return Err(ExactError::Singular);
        }
        // The matrix's storage goes through the factorization and comes back as its factor
        // (no allocation per step).
        let a = std::mem::replace(&mut self.a, DMatrix::zeros(0, 0));
        if let Some(chol) = a.cholesky() {
            let l = chol.l_dirty();
            let min_pivot = (0..k)
                .map(|r| l[(r, r)] * l[(r, r)])
                .fold(f64::INFINITY, f64::min);
            let regular = min_pivot > PIVOT_TOL * scale;
            if regular {
                chol.solve_mut(&mut self.rhs);
            }
            self.a = chol.unpack_dirty();
            if regular {
                return Ok(());
            }
        } else {
            self.a = DMatrix::zeros(k, k);
        }
        self.fill_matrix(bodies);
        // Redundant rows: the pseudo-inverse.
        let eig = SymmetricEigen::new(self.a.clone());
        let top = eig.eigenvalues.amax();
        let proj = eig.eigenvectors.transpose() * &self.rhs;
        self.rhs.fill(0.0);
        for i in 0..k {
            let lambda = eig.eigenvalues[i];
            if lambda > EIGEN_TOL * top {
                self.rhs
                    .axpy(proj[i] / lambda, &eig.eigenvectors.column(i), 1.0);
            }
        }
        Ok(())
    }

    /// Writes `N W Nᵀ` into `a`.
    fn fill_matrix(&mut self, bodies: &(impl ProjectedBodies + ?Sized)) {
        let k = self.rows.len();
        for r in 0..k {
            for s in r..k {
                let sum = coupling(bodies, &self.rows[r], &self.rows[s]);
                self.a[(r, s)] = sum;
                self.a[(s, r)] = sum;
            }
        }
    }
}

/// `(N W Nᵀ)_{rs}`: the terms of rows `r` and `s` on the same free vertex (`1/m`) or on the
/// same rigid core (its mobility, with arms from its centre of mass).
fn coupling(bodies: &(impl ProjectedBodies + ?Sized), r: &Row, s: &Row) -> f64 {
    let mut sum = 0.0;
    for (br, vr, cr) in r.terms() {
        let core_r = bodies.core_of(br, vr);
        for (bs, vs, cs) in s.terms() {
            match (core_r, bodies.core_of(bs, vs)) {
                (None, None) if br == bs && vr == vs => {
                    sum += bodies.inv_mass(br)[vr as usize] * cr.dot(&cs);
                }
                (Some((kr, core)), Some((ks, _))) if kr == ks => {
                    let c = core.center();
                    let arm_r = bodies.x(br)[vr as usize] - c;
                    let arm_s = bodies.x(bs)[vs as usize] - c;
                    sum += core.mobility(&core.inverse_inertia(), (arm_r, cr), (arm_s, cs));
                }
                _ => {}
            }
        }
    }
    sum
}
