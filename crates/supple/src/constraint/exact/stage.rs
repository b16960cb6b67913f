//! Exact constraints at the acceleration level (Liesenfeld & Stolfi 1997 §3.3, eq. 6–8 with
//! `G = Nᵀ`): `a ← a + W Nᵀ λ` with `(N W Nᵀ) λ = −(N a + ψ)`, so that `Φ̈ = 0` at the
//! state `(x, v, t)` of one explicit stage. `ψ` holds the velocity and time terms of eq. 7
//! (a path's `−p̈(t)`, a sphere's curvature term; planes and links have none).
//!
//! The bodies a stage sees are given by index ([`StageBodies`]): one body for the constraints
//! within it ([`StageBody`]), or every body of a group joined by links, whose stages are
//! evaluated together so that one multiplier sees both ends' accelerations (eq. 8 is one
//! system over all the bodies' coordinates: a body stepped alone cannot form a link's row,
//! which needs the other end's acceleration in the same stage).

use super::{ExactConstraint, ExactError, ExactKind, ProjectedBodies, Projector};
use nalgebra::{DMatrix, DVector, Vector3};

/// The state of one stage, by body index: positions, velocities, inverse lumped masses (0 on
/// held vertices) from [`ProjectedBodies`], and the stage's accelerations to be corrected.
pub trait StageBodies: ProjectedBodies {
    fn a(&self, b: usize) -> &[Vector3<f64>];
    fn a_mut(&mut self, b: usize) -> &mut [Vector3<f64>];
}

/// One body's stage (its constraints' points have body index 0).
pub struct StageBody<'a> {
    pub x: &'a mut [Vector3<f64>],
    pub v: &'a mut [Vector3<f64>],
    pub inv_mass: &'a [f64],
    pub a: &'a mut [Vector3<f64>],
}

impl ProjectedBodies for StageBody<'_> {
    fn x(&self, _b: usize) -> &[Vector3<f64>] {
        self.x
    }
    fn v(&self, _b: usize) -> &[Vector3<f64>] {
        self.v
    }
    fn inv_mass(&self, _b: usize) -> &[f64] {
        self.inv_mass
    }
    fn state_mut(&mut self, _b: usize) -> (&mut [Vector3<f64>], &mut [Vector3<f64>]) {
        (&mut *self.x, &mut *self.v)
    }
}

impl StageBodies for StageBody<'_> {
    fn a(&self, _b: usize) -> &[Vector3<f64>] {
        self.a
    }
    fn a_mut(&mut self, _b: usize) -> &mut [Vector3<f64>] {
        self.a
    }
}

impl Projector {
    /// Eq. 6–8 of §3.2–3.3 with `G = Nᵀ` (see the module notes) on the stage `bodies` at
    /// time `t`. RKF45 calls this in every stage, per body or for a linked group.
    pub fn project_accelerations(
        &mut self,
        active: &[ExactConstraint],
        bodies: &mut (impl StageBodies + ?Sized),
        t: f64,
    ) -> Result<(), ExactError> {
        let k: usize = active.iter().map(|c| c.rows()).sum();
        if k == 0 {
            return Ok(());
        }
        if self.a.nrows() != k {
            self.a = DMatrix::zeros(k, k);
            self.rhs = DVector::zeros(k);
        }
        self.build_rows(active, bodies);
        for (r, row) in self.rows.iter().enumerate() {
            let mut na = 0.0;
            for (b, v, coeff) in row.terms() {
                na += coeff.dot(&bodies.a(b)[v as usize]);
            }
            let psi = match &active[row.owner].kind {
                ExactKind::Point { path } => {
                    // p̈ by central differences (exact for linear pieces away from keys).
                    let d = 1e-4;
                    -row.g
                        .dot(&((path.at(t + d) - 2.0 * path.at(t) + path.at(t - d)) / (d * d)))
                }
                ExactKind::Sphere { center, .. } => {
                    // Φ = |d| − r: Φ̈ = g·d̈ + (|ḋ|² − (g·ḋ)²) / |d|.
                    let p = row.a;
                    let d = p.eval(bodies.x(p.body)) - center;
                    let dd = p.eval(bodies.v(p.body));
                    let n = d.norm();
                    if n > 0.0 {
                        (dd.norm_squared() - row.g.dot(&dd).powi(2)) / n
                    } else {
                        0.0
                    }
                }
                ExactKind::Plane { .. } | ExactKind::Link { .. } => 0.0,
            };
            self.rhs[r] = -(na + psi);
        }
        self.solve(bodies)?;
        for (r, row) in self.rows.iter().enumerate() {
            let lambda = self.rhs[r];
            for (b, v, coeff) in row.terms() {
                let w = bodies.inv_mass(b)[v as usize];
                bodies.a_mut(b)[v as usize] += w * lambda * coeff;
            }
        }
        Ok(())
    }
}
