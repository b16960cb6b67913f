//! Sliding holds inside a linear velocity solve: vertices whose velocity along a unit normal
//! `n` is prescribed, `n·v⁺ = w`, while the tangential part is an unknown (an obstacle
//! contact without friction, [`super::MovingHolds`]).
//!
//! The constrained system is solved in the filtered form of Baraff & Witkin (1998, §5.3,
//! "Physically based modeling: constraints", the filter `S = I − n nᵀ`), written as a change
//! of unknown so that every linear solver (PCG with any preconditioner, Cholesky) takes it
//! unchanged: with `p` the prescribed part (`p_i = w_i n_i` on sliding vertices, zero
//! elsewhere) and `v⁺ = p + y`,
//!
//! `(S A S + d nnᵀ) y = S (b − A p)`,
//!
//! the held directions cut out of the matrix and given a scaled identity (`d` the mean of the
//! vertex's diagonal; [`crate::constraint::filter_partial`], the same filter as the body's
//! partial constraints), so `n·y = 0` on every sliding vertex and `y` is the tangential
//! correction.

use super::MovingHolds;
use crate::constraint::filter_partial;
use crate::linalg::BlockCsr;
use nalgebra::{Matrix3, Vector3};

/// Workspace of the sliding filter (kept by an integrator; no allocation once warm).
#[derive(Debug, Clone, Default)]
pub struct Sliding {
    /// `(vertex, S = I − nnᵀ, C = nnᵀ)` of the step's sliding vertices.
    partial: Vec<(u32, Matrix3<f64>, Matrix3<f64>)>,
    /// Every vertex of [`MovingHolds`] that is on (sliding or held), for the reactions.
    captured: Vec<u32>,
    /// The prescribed part `p` (zero off the sliding vertices).
    prescribed: Vec<Vector3<f64>>,
    /// `A p`.
    product: Vec<Vector3<f64>>,
    /// The captured vertices' rows of the unfiltered matrix (blocks, in pattern order) and
    /// right-hand sides.
    rows: Vec<Matrix3<f64>>,
    rhs: Vec<Vector3<f64>>,
    /// The constraint impulse on each captured vertex in the last solve (zero on the others),
    /// see [`reactions`](Self::reactions).
    reaction: Vec<Vector3<f64>>,
}

impl Sliding {
    /// Collects the vertices of `moving` that are on: sliding ones (not in `fixed`, with a
    /// nonzero normal) and held ones; returns true when there are any.
    pub fn prepare(&mut self, moving: Option<&MovingHolds>, fixed: &[bool]) -> bool {
        for (i, _, _) in &self.partial {
            self.prescribed[*i as usize] = Vector3::zeros();
        }
        for i in &self.captured {
            self.reaction[*i as usize] = Vector3::zeros();
        }
        self.partial.clear();
        self.captured.clear();
        let Some(m) = moving else {
            return false;
        };
        let n = fixed.len();
        if self.prescribed.len() != n {
            self.prescribed = vec![Vector3::zeros(); n];
            self.product = vec![Vector3::zeros(); n];
            self.reaction = vec![Vector3::zeros(); n];
        }
        for (i, &held) in fixed.iter().enumerate().take(m.on.len()) {
            if !m.on[i] {
                continue;
            }
            let normal = m.normal[i];
            let norm = normal.norm();
            if held || norm.is_nan() || norm <= 0.0 {
                if held {
                    self.captured.push(i as u32);
                }
                continue;
            }
            let u = normal / norm;
            let c = u * u.transpose();
            self.partial.push((i as u32, Matrix3::identity() - c, c));
            self.captured.push(i as u32);
            self.prescribed[i] = u * u.dot(&m.velocity[i]);
        }
        !self.captured.is_empty()
    }

    /// True when the last [`prepare`](Self::prepare) found sliding vertices (the matrix is
    /// then filtered).
    pub fn has_sliding(&self) -> bool {
        !self.partial.is_empty()
    }

    /// Keeps the captured rows of `A v = b`, then turns the system with first guess `guess`
    /// into the filtered one for `y = v − p` (module notes). With sliding vertices `a` is
    /// changed: a kept matrix must be assembled again afterwards.
    pub fn filter(&mut self, a: &mut BlockCsr, b: &mut [Vector3<f64>], guess: &mut [Vector3<f64>]) {
        self.rows.clear();
        self.rhs.clear();
        for i in &self.captured {
            let i = *i as usize;
            let (s, e) = (
                a.pattern.row_ptr[i] as usize,
                a.pattern.row_ptr[i + 1] as usize,
            );
            self.rows.extend_from_slice(&a.values[s..e]);
            self.rhs.push(b[i]);
        }
        if self.partial.is_empty() {
            return;
        }
        a.mul_vec(&self.prescribed, &mut self.product);
        for (bi, ap) in b.iter_mut().zip(&self.product) {
            *bi -= ap;
        }
        filter_partial(a, &self.partial);
        for (i, s, _) in &self.partial {
            let i = *i as usize;
            b[i] = s * b[i];
            guess[i] = s * (guess[i] - self.prescribed[i]);
        }
        // Off the sliding vertices `p` is zero, so the guess there is already `y`.
    }

    /// `v = y + p`: the velocities of the original unknown; then the constraint impulse on
    /// each captured vertex, `Rᵢ = (A v − b)ᵢ` with the unfiltered `A` and `b` (the system
    /// is `A v = b + R`): for a sliding vertex `Rᵢ = Jᵢ nᵢ`, `Jᵢ > 0` pushing it off its
    /// obstacle and `Jᵢ < 0` holding it against it (an adhesive hold, which contact
    /// releases); a held vertex's `R` also has the tangential part that friction must supply.
    pub fn restore(&mut self, a: &BlockCsr, v: &mut [Vector3<f64>]) {
        for (i, _, _) in &self.partial {
            let i = *i as usize;
            v[i] += self.prescribed[i];
        }
        let mut k = 0;
        for (j, i) in self.captured.iter().enumerate() {
            let i = *i as usize;
            let (s, e) = (
                a.pattern.row_ptr[i] as usize,
                a.pattern.row_ptr[i + 1] as usize,
            );
            let mut av = Vector3::zeros();
            for slot in s..e {
                av += self.rows[k] * v[a.pattern.cols[slot] as usize];
                k += 1;
            }
            self.reaction[i] = av - self.rhs[j];
        }
    }

    /// Per vertex, the constraint impulse of the last solve (N·s; zero off the captured
    /// vertices).
    pub fn reactions(&self) -> &[Vector3<f64>] {
        &self.reaction
    }

    /// The sliding vertices of the last [`prepare`](Self::prepare) as partial holds
    /// `(vertex, S, C)` (see [`crate::constraint::Constraints::push_temporary`]).
    pub fn partial_holds(&self) -> impl Iterator<Item = (u32, Matrix3<f64>, Matrix3<f64>)> + '_ {
        self.partial.iter().copied()
    }

    /// The prescribed normal velocity `p_i` of vertex `i` (zero off the sliding vertices).
    pub fn prescribed(&self, i: usize) -> Vector3<f64> {
        self.prescribed
            .get(i)
            .copied()
            .unwrap_or_else(Vector3::zeros)
    }

    /// The sliding vertices of the last [`prepare`](Self::prepare).
    pub fn vertices(&self) -> impl Iterator<Item = usize> + '_ {
        self.partial.iter().map(|(i, _, _)| *i as usize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::linalg::test_support::bar_system;

    /// The filtered solve meets the prescribed normal velocity exactly and leaves a residual
    /// `A v − b` with no tangential part on the sliding vertex (the constraint force is
    /// normal: no friction) and none at all elsewhere.
    #[test]
    fn filtered_solve_meets_the_normal_velocity_and_pushes_only_along_the_normal() {
        let (a0, n) = bar_system([2, 1, 1]);
        let b0: Vec<Vector3<f64>> = (0..n)
            .map(|i| Vector3::new(1.0 + i as f64, -0.5 * i as f64, 0.25))
            .collect();
        let mut moving = MovingHolds::new(n);
        let normal = Vector3::new(1.0, 2.0, -0.5).normalize();
        moving.on[2] = true;
        moving.normal[2] = normal * 3.0; // any length
        moving.velocity[2] = Vector3::new(0.3, -0.7, 0.2);
        let fixed = vec![false; n];
        let mut sliding = Sliding::default();
        assert!(sliding.prepare(Some(&moving), &fixed));
        let (mut a, mut b, mut v) = (a0.clone(), b0.clone(), vec![Vector3::zeros(); n]);
        sliding.filter(&mut a, &mut b, &mut v);
        // Dense solve of the filtered system.
        let dense = a.to_dense();
        let rhs = nalgebra::DVector::from_iterator(3 * n, b.iter().flat_map(|x| x.iter().copied()));
        let y = dense.lu().solve(&rhs).unwrap();
        for (i, vi) in v.iter_mut().enumerate() {
            *vi = Vector3::new(y[3 * i], y[3 * i + 1], y[3 * i + 2]);
        }
        sliding.restore(&a, &mut v);
        assert!((v[2].dot(&normal) - moving.velocity[2].dot(&normal)).abs() < 1e-12);
        let mut av = vec![Vector3::zeros(); n];
        a0.mul_vec(&v, &mut av);
        for i in 0..n {
            let r = av[i] - b0[i];
            if i == 2 {
                let tangential = r - normal * r.dot(&normal);
                assert!(tangential.norm() < 1e-10, "{tangential:?}");
                assert!(r.dot(&normal).abs() > 1e-6, "the constraint pushes");
                // The impulse it reports is that push.
                assert!((sliding.reactions()[2] - r).norm() < 1e-9);
            } else {
                assert!(r.norm() < 1e-10, "row {i}: {r:?}");
                assert_eq!(sliding.reactions()[i], Vector3::zeros());
            }
        }
        // Taken again with nothing sliding, the workspace forgets the last set.
        assert!(!sliding.prepare(None, &fixed));
        assert_eq!(sliding.vertices().count(), 0);
    }
}
