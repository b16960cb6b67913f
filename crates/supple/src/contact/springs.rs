//! Liesenfeld & Stolfi's sticky contact springs (§7) and the per-vertex anchor springs
//! through which they reach every integrator.
//!
//! A contact spring ties two surface points, each a weighted sum of up to four vertices
//! (`P(x) = Σ_k w_k x_k`, the same weights as a [`super::ccd::Hit`]: vertex side positive,
//! face side negative), with zero rest length and energy `½ k |P|²`, so
//! `f_k = −k w_k P`. It is added when a collision is detected and removed when it starts
//! pulling the bodies together (`P · n > 0`: the points have separated along the contact
//! normal `n`).
//!
//! Integrators see the springs only through [`Anchors`], one of a step's inputs
//! ([`crate::time::StepInputs`]): each vertex's share with the other
//! vertices' positions lagged at the step start, `f_i = c_i − κ_i x_i` with
//! `κ_i = Σ_s k w_{s,i}²` and `c_i = −Σ_s k w_{s,i} (P_s − w_{s,i} x_i)`. That keeps every
//! body's matrix on its own fixed pattern (a spring may join two bodies, or two vertices
//! of one body that share no tet) while the stiff diagonal part stays implicit.

pub use crate::time::Anchors;
use nalgebra::Vector3;

/// A vertex of the world: `(body, vertex)`.
pub type VertexRef = (u32, u32);

/// One sticky zero-rest-length contact spring (Liesenfeld & Stolfi §7).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spring {
    pub vertices: [VertexRef; 4],
    pub w: [f64; 4],
    /// Contact normal at creation: the spring pushes while `P · n < 0`.
    pub normal: Vector3<f64>,
    pub stiffness: f64,
}

impl Spring {
    /// `P = Σ w_k x_k`, with `pos(body, vertex)` the current positions.
    pub fn separation(&self, pos: impl Fn(usize, usize) -> Vector3<f64>) -> Vector3<f64> {
        (0..4)
            .map(|k| {
                let (b, v) = self.vertices[k];
                self.w[k] * pos(b as usize, v as usize)
            })
            .sum()
    }

    /// Vertex `k`'s anchor share `(κ, c)` given `P` and the vertex position `x_k` (module
    /// doc): `κ = k w_k²`, `c = −k w_k (P − w_k x_k)`.
    pub fn share(&self, k: usize, p: &Vector3<f64>, x_k: &Vector3<f64>) -> (f64, Vector3<f64>) {
        let w = self.w[k];
        (self.stiffness * w * w, -self.stiffness * w * (p - w * x_k))
    }
}

/// The set of live contact springs.
#[derive(Debug, Clone, Default)]
pub struct ContactSprings {
    pub springs: Vec<Spring>,
}

impl ContactSprings {
    /// Removes the springs that would pull (`P · n > 0`); returns how many were removed.
    pub fn prune(&mut self, pos: impl Fn(usize, usize) -> Vector3<f64>) -> usize {
        let before = self.springs.len();
        self.springs
            .retain(|s| s.separation(&pos).dot(&s.normal) <= 0.0);
        before - self.springs.len()
    }

    /// Adds a spring unless one already joins the same four vertices.
    pub fn add(&mut self, spring: Spring) -> bool {
        if self.springs.iter().any(|s| s.vertices == spring.vertices) {
            return false;
        }
        self.springs.push(spring);
        true
    }

    /// Deepest penetration of a live spring, `max(−P · n, 0)` (m).
    pub fn max_penetration(&self, pos: impl Fn(usize, usize) -> Vector3<f64>) -> f64 {
        self.springs
            .iter()
            .map(|s| -s.separation(&pos).dot(&s.normal))
            .fold(0.0, f64::max)
    }

    /// Stored energy `Σ ½ k |P|²`.
    pub fn energy(&self, pos: impl Fn(usize, usize) -> Vector3<f64>) -> f64 {
        self.springs
            .iter()
            .map(|s| 0.5 * s.stiffness * s.separation(&pos).norm_squared())
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spring() -> Spring {
        Spring {
            vertices: [(0, 0), (1, 0), (1, 1), (1, 2)],
            w: [1.0, -0.2, -0.3, -0.5],
            normal: Vector3::z(),
            stiffness: 100.0,
        }
    }

    #[test]
    fn anchors_reproduce_the_spring_force_at_the_lagged_state() {
        let a = vec![Vector3::new(0.3, 0.1, -0.05)];
        let b = vec![
            Vector3::new(0.0, 0.0, 0.0),
            Vector3::new(1.0, 0.0, 0.01),
            Vector3::new(0.0, 1.0, 0.0),
        ];
        let mut set = ContactSprings::default();
        assert!(set.add(spring()));
        assert!(!set.add(spring()));
        let x: Vec<&Vec<Vector3<f64>>> = vec![&a, &b];
        let pos = |bi: usize, v: usize| x[bi][v];
        let mut anchors = [Anchors::zeros(1), Anchors::zeros(3)];
        let s = spring();
        let p = s.separation(pos);
        for k in 0..4 {
            let (bi, v) = (s.vertices[k].0 as usize, s.vertices[k].1 as usize);
            let (kappa, c) = s.share(k, &p, &x[bi][v]);
            anchors[bi].kappa[v] += kappa;
            anchors[bi].offset[v] += c;
        }
        // f_k = −k w_k P, and the forces on the two sides sum to zero.
        let mut f0 = vec![Vector3::zeros(); 1];
        let mut f1 = vec![Vector3::zeros(); 3];
        anchors[0].add_forces(&a, &mut f0);
        anchors[1].add_forces(&b, &mut f1);
        assert!((f0[0] + s.stiffness * p).norm() < 1e-12);
        for k in 1..4 {
            assert!((f1[k - 1] + s.stiffness * s.w[k] * p).norm() < 1e-12);
        }
        let net: Vector3<f64> = f0.iter().chain(&f1).sum();
        assert!(net.norm() < 1e-12);
        assert!((set.energy(pos) - 0.5 * 100.0 * p.norm_squared()).abs() < 1e-12);
        // The vertex is below the face (P·n < 0): the spring pushes and stays.
        assert!(p.dot(&Vector3::z()) < 0.0);
        assert_eq!(set.prune(pos), 0);
        // P_z = −0.05 − 0.3 · 0.01 (the tilted face).
        assert!((set.max_penetration(pos) - 0.053).abs() < 1e-12);
        // Once the vertex is above the face it would pull: removed.
        let a_up = vec![Vector3::new(0.3, 0.1, 0.2)];
        let x_up: Vec<&Vec<Vector3<f64>>> = vec![&a_up, &b];
        assert_eq!(set.prune(|bi: usize, v: usize| x_up[bi][v]), 1);
        assert!(set.springs.is_empty());
    }
}
