//! Debunne et al. 2000's elasticity operator: linear elasticity in Lamé form, with the
//! Laplacian and the gradient of divergence discretised per node by the mixed finite-volume /
//! finite-element method (§2.2–2.3, eq. 3–6), Rayleigh-type damping by the same operators on
//! the velocities (§2.5, eq. 7).
//!
//! **The operators.** In a tet with barycentric gradients `α_i = ∇W_i` (`|α_i| = 1/h_i`,
//! orthogonal to the face opposite `i`; eq. 5 in the paper's notation) and rest volume `V`,
//! eq. 5–6 read `Δd_i = −Σ_j (α_i·α_j) d_j` and `∇(∇·d)_i = −Σ_j α_i α_jᵀ d_j`. As printed they
//! lack the factors that make them dimensionally right: the element's volume `V` (the part
//! of node `i`'s Gauss surface inside the tet has area-vector `−V α_i`) and `1/V_i`, the
//! node's dual volume. Multiplied by the node's mass `ρ V_i` (eq. 1 is per unit volume) the
//! dual volume cancels — the paper notes "the volume term indeed vanishes when accelerations
//! are converted into forces" — and the force on node `i` is a sum of element terms
//!
//! `f_i = −Σ_e V_e Σ_j [ μ (α_i·α_j) I + (λ + μ) α_i α_jᵀ ] d_j`   (`boundary = paper`)
//!
//! with `d = x − X` the displacement. Written with the element's displacement gradient
//! `G = Σ_j d_j α_jᵀ` and `div = tr G` this is `f_i = −V (μ G α_i + (λ + μ) div α_i)`: the
//! precomputed per-element weights are `α_i` and `V α_i`.
//!
//! **Against P1 finite elements** (§2.4). The standard linear FE force is
//! `f_i = −V (μ G α_i + μ Gᵀ α_i + λ div α_i)` (`boundary = fe`). The difference,
//! `μ V (α_j α_iᵀ − α_i α_jᵀ)`, is the antisymmetric part the paper finds "cancels out when
//! the contributions of the two elements are summed": summed over all tets around a node pair
//! it vanishes whenever one of the two nodes is interior (tests: to 1e-12). Between two
//! boundary nodes it does not, and the paper drops it ("these extra terms can hence be simply
//! skipped"). Dropping it keeps `K` symmetric (so the undamped motion keeps the energy
//! `½ dᵀK d`), but a rigid rotation no longer lies in its kernel: a free body has 3 zero
//! modes instead of 6, internal forces can have a net torque, and eq. 7 damps some rigid
//! rotations. `boundary = fe` keeps the terms: the same operator on every interior node, and
//! rotation-correct.
//!
//! **Which coefficient multiplies the Laplacian.** Eq. 1 as printed is
//! `ρa = λΔd + (λ + μ)∇(∇·d)`; Navier's equation of linear elasticity is
//! `ρa = μΔd + (λ + μ)∇(∇·d)`. [`LameReading::Navier`] (the default) takes Navier's;
//! [`LameReading::Printed`] takes the paper's letter, which is Navier's equation of the
//! material with `λ` and `μ` exchanged — so it is implemented as that exchange, for the
//! elastic pair `(λ, μ)` and the damping pair `(φ, ψ)` of eq. 7 alike.

use super::force::ElementForce;
use crate::fem::elements::ElementBlocks;
use crate::fem::material::ForceModel;
use crate::fem::ElementSet;
use crate::linalg::BlockCsr;
use crate::mesh::TetMesh;
use nalgebra::{Matrix3, Vector3};
use thiserror::Error;

/// Elements per lane group of [`DebunneOperator`]'s batched force kernel.
const LANES: usize = 4;

/// Which boundary terms the operator keeps (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Boundary {
    /// Debunne §2.4: the antisymmetric boundary terms are skipped.
    #[default]
    Paper,
    /// The terms are kept: exactly P1 linear finite elements.
    Fe,
}

/// How eq. 1 and eq. 7 are read (see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LameReading {
    /// `ρa = μΔd + (λ + μ)∇(∇·d)` (Navier's equation).
    #[default]
    Navier,
    /// `ρa = λΔd + (λ + μ)∇(∇·d)` (eq. 1 as printed): Navier with `λ ↔ μ`.
    Printed,
}

impl LameReading {
    /// The `(λ, μ)` of Navier's equation that this reading of `(lambda, mu)` amounts to.
    pub fn navier(self, lambda: f64, mu: f64) -> (f64, f64) {
        match self {
            LameReading::Navier => (lambda, mu),
            LameReading::Printed => (mu, lambda),
        }
    }
}

/// Parameters of the Debunne model.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DebunneParams {
    /// Lamé `λ` of eq. 1 (Pa).
    pub lambda: f64,
    /// Lamé `μ` of eq. 1 (Pa).
    pub mu: f64,
    /// `φ` of eq. 7 (Pa·s), the damping counterpart of `λ`.
    pub phi: f64,
    /// `ψ` of eq. 7 (Pa·s), the damping counterpart of `μ`.
    pub psi: f64,
    pub boundary: Boundary,
    pub reading: LameReading,
}

impl DebunneParams {
    /// Undamped, `boundary = paper`, Navier reading.
    pub fn new(lambda: f64, mu: f64) -> Self {
        Self {
            lambda,
            mu,
            phi: 0.0,
            psi: 0.0,
            boundary: Boundary::Paper,
            reading: LameReading::Navier,
        }
    }
}

/// An impossible Debunne parameter.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum DebunneError {
    #[error("{key} = {value}: must be a finite number ≥ 0")]
    Negative { key: &'static str, value: f64 },
    #[error("mu = {0}: must be above 0 (the Laplacian's coefficient)")]
    ZeroShear(f64),
}

/// Debunne's operator on one mesh, with its precomputed per-element weights.
#[derive(Debug, Clone)]
pub struct DebunneOperator {
    params: DebunneParams,
    /// Navier `(λ, μ)` of the elastic term and `(φ, ψ)` of the damping term, after the reading.
    elastic: (f64, f64),
    damping: (f64, f64),
    /// Per element: the barycentric gradients `α_i` (eq. 5).
    alpha: Vec<[Vector3<f64>; 4]>,
    /// Per element: `V α_i`.
    v_alpha: Vec<[Vector3<f64>; 4]>,
    volume: Vec<f64>,
    /// Rest positions (the [`ForceModel`] interface passes positions, not displacements).
    rest: Vec<Vector3<f64>>,
    tets: Vec<[u32; 4]>,
}

impl DebunneOperator {
    /// Precomputes the weights of every element of `mesh` (whose element data is `elems`).
    pub fn new(
        params: DebunneParams,
        mesh: &TetMesh,
        elems: &ElementSet,
    ) -> Result<Self, DebunneError> {
        for (key, value) in [
            ("lambda", params.lambda),
            ("mu", params.mu),
            ("phi", params.phi),
            ("psi", params.psi),
        ] {
            if !(value >= 0.0 && value.is_finite()) {
                return Err(DebunneError::Negative { key, value });
            }
        }
        let elastic = params.reading.navier(params.lambda, params.mu);
        if elastic.1 <= 0.0 {
            return Err(DebunneError::ZeroShear(elastic.1));
        }
        let damping = params.reading.navier(params.phi, params.psi);
        Ok(Self {
            params,
            elastic,
            damping,
            alpha: elems.grad.clone(),
            v_alpha: (0..elems.len())
                .map(|e| elems.grad[e].map(|g| elems.volume[e] * g))
                .collect(),
            volume: elems.volume.clone(),
            rest: mesh.positions.clone(),
            tets: mesh.tets.clone(),
        })
    }

    pub fn params(&self) -> &DebunneParams {
        &self.params
    }

    /// `f_i = −V (μ G α_i + [μ Gᵀ α_i] + (λ + μ or λ) tr G α_i)` of element `e` for the nodal
    /// field `u` (displacements, or velocities with the damping pair): eq. 5–6 summed with
    /// their Lamé weights, the bracket only for `boundary = fe`.
    #[inline]
    fn apply(
        &self,
        e: usize,
        u: &[Vector3<f64>; 4],
        (lambda, mu): (f64, f64),
    ) -> [Vector3<f64>; 4] {
        let a = &self.alpha[e];
        let g: Matrix3<f64> = (0..4).map(|j| u[j] * a[j].transpose()).sum();
        let div = g.trace();
        let va = &self.v_alpha[e];
        match self.params.boundary {
            Boundary::Paper => va.map(|w| -(mu * (g * w) + (lambda + mu) * div * w)),
            Boundary::Fe => {
                let s = g + g.transpose();
                va.map(|w| -(mu * (s * w) + lambda * div * w))
            }
        }
    }

    /// The 3×3 block `K^e_ij` of element `e` (force on `i` is `−K^e_ij d_j`), written out
    /// from eq. 5–6: `V [μ (α_i·α_j) I + (λ+μ) α_i α_jᵀ]` (paper) or
    /// `V [μ (α_i·α_j) I + μ α_j α_iᵀ + λ α_i α_jᵀ]` (fe).
    pub fn block(&self, e: usize, i: usize, j: usize) -> Matrix3<f64> {
        let (lambda, mu) = self.elastic;
        self.block_with(e, i, j, lambda, mu)
    }

    fn block_with(&self, e: usize, i: usize, j: usize, lambda: f64, mu: f64) -> Matrix3<f64> {
        let (ai, aj) = (self.alpha[e][i], self.v_alpha[e][j]);
        let lap = Matrix3::from_diagonal_element(mu * ai.dot(&aj));
        match self.params.boundary {
            Boundary::Paper => lap + (lambda + mu) * ai * aj.transpose(),
            Boundary::Fe => lap + mu * aj * ai.transpose() + lambda * ai * aj.transpose(),
        }
    }

    /// Elastic energy `½ dᵀ K d` of element `e` for displacements `d`:
    /// `½ V (μ G:G + (λ+μ) (tr G)²)` (paper) or `½ V (μ G:G + μ G:Gᵀ + λ (tr G)²)` (fe).
    fn element_energy(&self, e: usize, d: &[Vector3<f64>; 4]) -> f64 {
        let (lambda, mu) = self.elastic;
        let a = &self.alpha[e];
        let g: Matrix3<f64> = (0..4).map(|j| d[j] * a[j].transpose()).sum();
        let vol = self.volume[e];
        let tr = g.trace();
        0.5 * vol
            * match self.params.boundary {
                Boundary::Paper => mu * g.norm_squared() + (lambda + mu) * tr * tr,
                Boundary::Fe => mu * (g.norm_squared() + g.dot(&g.transpose())) + lambda * tr * tr,
            }
    }

    fn displacements(&self, e: usize, x: &[Vector3<f64>]) -> [Vector3<f64>; 4] {
        self.tets[e].map(|i| x[i as usize] - self.rest[i as usize])
    }
}

impl ElementForce for DebunneOperator {
    fn name(&self) -> &'static str {
        match self.params.boundary {
            Boundary::Paper => "debunne",
            Boundary::Fe => "debunne_fe",
        }
    }

    fn n_elements(&self) -> usize {
        self.alpha.len()
    }

    /// Eq. 1 on the displacements plus eq. 7 on the velocities, in one pass: the operator is
    /// linear, so with `u_j = μ d_j + ψ v_j` and `w_j = c d_j + c' v_j` (`c = λ + μ`,
    /// `c' = φ + ψ` for `paper`; `λ`, `φ` for `fe`) the element's force is
    /// `f_i = −V (H α_i + [Hᵀ α_i] + s α_i)` with `H = Σ_j u_j α_jᵀ` and `s = Σ_j α_j·w_j`:
    /// one 3×3 gradient instead of one per field (this call is the frame loop's inner loop).
    #[inline]
    fn element_forces(
        &self,
        e: usize,
        d: &[Vector3<f64>; 4],
        v: &[Vector3<f64>; 4],
    ) -> [Vector3<f64>; 4] {
        let (lambda, mu) = self.elastic;
        let (phi, psi) = self.damping;
        let (c, c_v) = match self.params.boundary {
            Boundary::Paper => (lambda + mu, phi + psi),
            Boundary::Fe => (lambda, phi),
        };
        let a = &self.alpha[e];
        let mut h = [[0.0; 3]; 3];
        let mut s = 0.0;
        for j in 0..4 {
            let (dj, vj, aj) = (&d[j], &v[j], &a[j]);
            let u = [
                mu * dj.x + psi * vj.x,
                mu * dj.y + psi * vj.y,
                mu * dj.z + psi * vj.z,
            ];
            for r in 0..3 {
                h[r][0] += u[r] * aj.x;
                h[r][1] += u[r] * aj.y;
                h[r][2] += u[r] * aj.z;
            }
            s += aj.x * (c * dj.x + c_v * vj.x)
                + aj.y * (c * dj.y + c_v * vj.y)
                + aj.z * (c * dj.z + c_v * vj.z);
        }
        if self.params.boundary == Boundary::Fe {
            // H + Hᵀ.
            let (xy, xz, yz) = (h[0][1] + h[1][0], h[0][2] + h[2][0], h[1][2] + h[2][1]);
            h = [
                [2.0 * h[0][0], xy, xz],
                [xy, 2.0 * h[1][1], yz],
                [xz, yz, 2.0 * h[2][2]],
            ];
        }
        for (r, row) in h.iter_mut().enumerate() {
            row[r] += s;
        }
        // A plain loop, not `array::map`: the map's closure was not inlined and its calls
        // cost more than the arithmetic (profiled on the adaptive poke).
        let va = &self.v_alpha[e];
        let mut f = [Vector3::zeros(); 4];
        for i in 0..4 {
            let w = &va[i];
            f[i] = Vector3::new(
                -(h[0][0] * w.x + h[0][1] * w.y + h[0][2] * w.z),
                -(h[1][0] * w.x + h[1][1] * w.y + h[1][2] * w.z),
                -(h[2][0] * w.x + h[2][1] * w.y + h[2][2] * w.z),
            );
        }
        f
    }

    /// [`Self::element_forces`] of `LANES` (4) elements at a time, each lane the same arithmetic
    /// in the same order (so the same bits), laid out lane-wise (`[f64; LANES]` per quantity)
    /// for the compiler to evaluate several elements per instruction; the remainder one by one.
    #[allow(clippy::needless_range_loop)] // lane loops index several lane arrays at once
    fn element_forces_batch(
        &self,
        tets: &[u32],
        d: &[[Vector3<f64>; 4]],
        v: &[[Vector3<f64>; 4]],
        f: &mut [[Vector3<f64>; 4]],
    ) {
        let (lambda, mu) = self.elastic;
        let (phi, psi) = self.damping;
        let (c, c_v) = match self.params.boundary {
            Boundary::Paper => (lambda + mu, phi + psi),
            Boundary::Fe => (lambda, phi),
        };
        let mut q0 = 0;
        while q0 + LANES <= tets.len() {
            let e: [usize; LANES] = std::array::from_fn(|l| tets[q0 + l] as usize);
            let mut h = [[[0.0; LANES]; 3]; 3];
            let mut s = [0.0; LANES];
            for j in 0..4 {
                let (mut a, mut dd, mut vv) =
                    ([[0.0; LANES]; 3], [[0.0; LANES]; 3], [[0.0; LANES]; 3]);
                for l in 0..LANES {
                    let (aj, dj, vj) = (&self.alpha[e[l]][j], &d[q0 + l][j], &v[q0 + l][j]);
                    for x in 0..3 {
                        (a[x][l], dd[x][l], vv[x][l]) = (aj[x], dj[x], vj[x]);
                    }
                }
                for l in 0..LANES {
                    let u = [
                        mu * dd[0][l] + psi * vv[0][l],
                        mu * dd[1][l] + psi * vv[1][l],
                        mu * dd[2][l] + psi * vv[2][l],
                    ];
                    for r in 0..3 {
                        for x in 0..3 {
                            h[r][x][l] += u[r] * a[x][l];
                        }
                    }
                    s[l] += a[0][l] * (c * dd[0][l] + c_v * vv[0][l])
                        + a[1][l] * (c * dd[1][l] + c_v * vv[1][l])
                        + a[2][l] * (c * dd[2][l] + c_v * vv[2][l]);
                }
            }
            for l in 0..LANES {
                if self.params.boundary == Boundary::Fe {
                    let xy = h[0][1][l] + h[1][0][l];
                    let xz = h[0][2][l] + h[2][0][l];
                    let yz = h[1][2][l] + h[2][1][l];
                    (h[0][1][l], h[1][0][l]) = (xy, xy);
                    (h[0][2][l], h[2][0][l]) = (xz, xz);
                    (h[1][2][l], h[2][1][l]) = (yz, yz);
                    for r in 0..3 {
                        h[r][r][l] *= 2.0;
                    }
                }
                for r in 0..3 {
                    h[r][r][l] += s[l];
                }
            }
            for i in 0..4 {
                let mut w = [[0.0; LANES]; 3];
                for l in 0..LANES {
                    let wi = &self.v_alpha[e[l]][i];
                    (w[0][l], w[1][l], w[2][l]) = (wi.x, wi.y, wi.z);
                }
                for l in 0..LANES {
                    f[q0 + l][i] = Vector3::new(
                        -(h[0][0][l] * w[0][l] + h[0][1][l] * w[1][l] + h[0][2][l] * w[2][l]),
                        -(h[1][0][l] * w[0][l] + h[1][1][l] * w[1][l] + h[1][2][l] * w[2][l]),
                        -(h[2][0][l] * w[0][l] + h[2][1][l] * w[1][l] + h[2][2][l] * w[2][l]),
                    );
                }
            }
            q0 += LANES;
        }
        for q in q0..tets.len() {
            f[q] = self.element_forces(tets[q] as usize, &d[q], &v[q]);
        }
    }

    fn element_energy(&self, e: usize, d: &[Vector3<f64>; 4]) -> Option<f64> {
        Some(DebunneOperator::element_energy(self, e, d))
    }

    fn wave_speed(&self, density: f64) -> f64 {
        let (lambda, mu) = self.elastic;
        ((lambda + 2.0 * mu) / density).sqrt()
    }

    fn damping_diffusivity(&self, density: f64) -> f64 {
        let (phi, psi) = self.damping;
        (phi + 2.0 * psi) / density
    }
}

/// The elastic part as a body-level [`ForceModel`], so the rest of the library (static
/// equilibrium, vibration modes, implicit integrators) can run the Debunne operator.
impl ForceModel for DebunneOperator {
    fn name(&self) -> &'static str {
        ElementForce::name(self)
    }

    fn add_forces(&self, elems: &ElementSet, x: &[Vector3<f64>], f: &mut [Vector3<f64>]) {
        elems.scatter_forces(f, |e| {
            self.apply(e, &self.displacements(e, x), self.elastic)
        });
    }

    fn add_tangent(&self, elems: &ElementSet, _x: &[Vector3<f64>], scale: f64, k: &mut BlockCsr) {
        elems.scatter_blocks(k, |e, sink: &mut ElementBlocks| {
            for i in 0..4 {
                for j in 0..4 {
                    sink.add(i, j, &(scale * self.block(e, i, j)));
                }
            }
        });
    }

    fn energy(&self, elems: &ElementSet, x: &[Vector3<f64>]) -> Option<f64> {
        Some(elems.sum(|e| self.element_energy(e, &self.displacements(e, x))))
    }

    fn tangent_is_constant(&self) -> bool {
        true
    }
}
