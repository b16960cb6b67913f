//! The one interface between the level-of-detail machinery and a material: an explicit
//! per-element force.
//!
//! Debunne et al. 2000 compute "local forces on each point using its neighbors' information"
//! (§2.4): a node's force is a sum over its tets, each tet reading only its own four nodes.
//! That is all the hierarchy needs, so any model that can give the forces of one tet from the
//! displacements and velocities of its four nodes plugs in — the Debunne operator
//! ([`super::DebunneOperator`]), or any hyperelastic law ([`LawElements`]:
//! St.Venant–Kirchhoff, Liesenfeld–Stolfi).
//!
//! **Displacements, not positions.** The paper's unknowns are the displacements `d = x − X`
//! (eq. 1) and the hierarchy stores them; a model reads what it needs of the rest shape from
//! its own precomputation (the barycentric gradients `α_a`, with which `Σ_a X_a α_aᵀ = I`, so
//! the deformation gradient is `F = I + Σ_a d_a α_aᵀ`). The interface therefore takes `d`: the
//! frame loop's innermost call (one per tet and level step) never gathers rest positions
//! only for the model to subtract them again.

use crate::fem::material::HyperelasticLaw;
use crate::fem::ElementSet;
use nalgebra::{Matrix3, Vector3};

/// Internal forces of one tetrahedron, for explicit time stepping.
pub trait ElementForce: Send + Sync + std::fmt::Debug {
    /// The model's name (for reports).
    fn name(&self) -> &'static str;

    /// Number of elements the model was built for.
    fn n_elements(&self) -> usize;

    /// Forces on the four nodes of element `e` (internal elastic plus internal damping) from
    /// the nodes' displacements `d = x − X` and velocities `v`.
    fn element_forces(
        &self,
        e: usize,
        d: &[Vector3<f64>; 4],
        v: &[Vector3<f64>; 4],
    ) -> [Vector3<f64>; 4];

    /// [`Self::element_forces`] of every element of `tets` into `f`: `f[q]` the forces of
    /// element `tets[q]` from `d[q]`, `v[q]` (slices of one length). The adaptive step calls
    /// this once per level and run of tets, so a model can evaluate many elements in one
    /// tight loop; an override must give what `element_forces` gives. The default loops over
    /// `element_forces`.
    fn element_forces_batch(
        &self,
        tets: &[u32],
        d: &[[Vector3<f64>; 4]],
        v: &[[Vector3<f64>; 4]],
        f: &mut [[Vector3<f64>; 4]],
    ) {
        for (q, &e) in tets.iter().enumerate() {
            f[q] = self.element_forces(e as usize, &d[q], &v[q]);
        }
    }

    /// Elastic energy of element `e` at displacements `d`, where the model has one.
    fn element_energy(&self, _e: usize, _d: &[Vector3<f64>; 4]) -> Option<f64> {
        None
    }

    /// Dilatational wave speed `c = √((λ + 2μ)/ρ)` of the material at density `density`:
    /// the speed in Debunne's Courant condition (eq. 8).
    fn wave_speed(&self, density: f64) -> f64;

    /// Largest damping rate scale `η` such that the damping matrix of an element is bounded
    /// by `η` times its stiffness-like operator over `ρ`: the Gershgorin-type bound of the
    /// damping term used for the explicit step limit (see `Level::stable_dt`). Return 0 for
    /// an undamped model.
    fn damping_diffusivity(&self, density: f64) -> f64;
}

/// Any hyperelastic law of the library as an explicit element force:
/// `f_a = −V P(F) ∇N_a` (the first Piola–Kirchhoff stress on the rest gradients), undamped,
/// with `F = I + Σ_a d_a ∇N_aᵀ`.
#[derive(Debug, Clone)]
pub struct LawElements<L: HyperelasticLaw> {
    law: L,
    volume: Vec<f64>,
    grad: Vec<[Vector3<f64>; 4]>,
    /// `(λ, μ)` for the wave speed.
    lambda_mu: (f64, f64),
}

impl<L: HyperelasticLaw> LawElements<L> {
    /// Wraps `law` on the elements `elems`; `lambda`, `mu` give the small-strain wave speed.
    pub fn new(law: L, elems: &ElementSet, lambda: f64, mu: f64) -> Self {
        Self {
            law,
            volume: elems.volume.clone(),
            grad: elems.grad.clone(),
            lambda_mu: (lambda, mu),
        }
    }
}

impl<L: HyperelasticLaw> ElementForce for LawElements<L> {
    fn name(&self) -> &'static str {
        self.law.name()
    }

    fn n_elements(&self) -> usize {
        self.volume.len()
    }

    fn element_forces(
        &self,
        e: usize,
        d: &[Vector3<f64>; 4],
        _v: &[Vector3<f64>; 4],
    ) -> [Vector3<f64>; 4] {
        let g = &self.grad[e];
        let p = self.law.pk1(&deformation_gradient(g, d));
        g.map(|ga| -self.volume[e] * (p * ga))
    }

    fn element_energy(&self, e: usize, d: &[Vector3<f64>; 4]) -> Option<f64> {
        let f = deformation_gradient(&self.grad[e], d);
        Some(self.volume[e] * self.law.energy_density(&f))
    }

    fn wave_speed(&self, density: f64) -> f64 {
        let (lambda, mu) = self.lambda_mu;
        ((lambda + 2.0 * mu) / density).sqrt()
    }

    fn damping_diffusivity(&self, _density: f64) -> f64 {
        0.0
    }
}

/// `F = I + Σ_a d_a g_aᵀ`: the deformation gradient of a linear tet from its nodes'
/// displacements and barycentric gradients (`Σ_a X_a g_aᵀ = I`).
fn deformation_gradient(g: &[Vector3<f64>; 4], d: &[Vector3<f64>; 4]) -> Matrix3<f64> {
    let mut f = Matrix3::identity();
    for a in 0..4 {
        f += d[a] * g[a].transpose();
    }
    f
}
