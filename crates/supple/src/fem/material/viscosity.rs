//! Velocity-dependent internal forces: strain-rate damping (Hauth & Straßer 2004 §4.2, eq. 4.18
//! and 5.4) and the Liesenfeld & Stolfi (1997) viscosity (§4.2 eq. 17–23, §5.4).
//!
//! Both are written as a Rayleigh dissipation function `R(x, v)`, quadratic in the vertex
//! velocities `v` at fixed positions `x`, so that
//! `f_d = −∂R/∂v = −D(x) v`, `D(x) = ∂²R/∂v²` (symmetric positive semi-definite) and the
//! dissipated power is `vᵀ D v = 2R`. This is Liesenfeld & Stolfi's eq. 2 / 26: with `W` the
//! power lost to friction, the generalized force is `−½ ∂W/∂v`.
//!
//! Per element, with shape gradients `g_a` (`F = Σ_a x_a ⊗ g_a`):
//! - velocity gradient w.r.t. the rest shape `Ḟ = Σ_a v_a ⊗ g_a`;
//! - Green strain rate `Ė = ½ d/dt(FᵀF − I) = sym(FᵀḞ)`.
//!
//! Both dissipations have the element form `R_e = V_e (m Ė:Ė + l/2 tr(Ė)²)`, whose gradient is
//! the damping second Piola–Kirchhoff stress `S_d = 2m Ė + l tr(Ė) I`, first Piola–Kirchhoff
//! `P_d = F S_d` and nodal forces `f_a = −V_e P_d g_a`. Differentiating `F S_d g_a` w.r.t. `v_b`
//! (with `n_a = F g_a`) gives the 3×3 blocks
//! `D_ab = V_e [m (g_a·g_b) F Fᵀ + m n_b n_aᵀ + l n_a n_bᵀ]`, with `D_ba = D_abᵀ`.
//!
//! Rigid velocity fields `v_a = c + ω × x_a` give `Ḟ = W F` (`W` the cross-product matrix of
//! `ω`, because `Σ_a g_a = 0`), so `FᵀḞ = FᵀWF` is skew and `Ė = 0`: neither dissipation
//! damps a translating or rigidly spinning body, at any deformed `x`.

use super::Dissipation;
use crate::fem::elements::ElementBlocks;
use crate::fem::ElementSet;
use crate::linalg::BlockCsr;
use nalgebra::{Matrix3, Vector3};

/// Strain-rate damping: the visco-elastic correspondence principle of Hauth & Straßer 2004
/// §4.2 — the damping stress is Hooke's law (eq. 4.7) with the damping Lamé parameters `dμ`,
/// `dλ` applied to the strain rate, `D(ε̇) = 2 dμ ε̇ + dλ tr(ε̇) I`, and the damping forces are
/// the virtual work `∫ δε̇ : D(ε̇)` of eq. 4.18 / operator `D μ̇` of eq. 5.4.
///
/// Supple's strain-rate is the Green strain rate `Ė = sym(FᵀḞ)`, for every elastic model:
/// - dissipation `R = V (dμ Ė:Ė + dλ/2 tr(Ė)²)` (rest volume `V`);
/// - `S_d = 2 dμ Ė + dλ tr(Ė) I`, `P_d = F S_d`, `f_a = −V P_d g_a`;
/// - power `vᵀDv = V (2 dμ Ė:Ė + dλ tr(Ė)²)`.
///
/// Near the rest shape this is a Newtonian viscosity with shear viscosity `dμ` and bulk
/// viscosity `dλ + 2dμ/3` (see [`newtonian_viscosities`]).
///
/// Why not the corotated rate for the corotational model: Hauth & Straßer state the principle
/// for a generic `ε` (eq. 4.18) and do not spell out the rate for their corotated strain
/// (eq. 4.12). Its direct transcription, `sym(RᵀḞ)` with the element rotation `R` held fixed
/// (as in the elastic forces), damps rigid rotation of a *deformed* element: with `F = RS`
/// and `Ḟ = WF`, `sym(RᵀḞ) = sym(W̃S)` for the skew `W̃ = RᵀWR`, which vanishes only when `S` is
/// a multiple of `I`. A spinning, centrifugally stretched body would then slow down. The exact
/// rate of the polar stretch, `Ṡ`, is rigid-invariant but is tied to the Green rate by
/// `SṠ + ṠS = 2Ė`, i.e. it agrees with `Ė` to first order in the strain. Supple therefore uses
/// `Ė` for all models: exactly rigid-invariant, linear in `v`, no frames needed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StrainRateDamping {
    /// Damping shear parameter `dμ` (Pa·s).
    pub d_mu: f64,
    /// Damping Lamé parameter `dλ` (Pa·s).
    pub d_lambda: f64,
}

/// Liesenfeld & Stolfi 1997 viscosity (§4.2, §5.4).
///
/// The paper's formulas: with `D = CᵀC` the metric tensor of the strain `C = J f (J g)⁻¹`
/// (eq. 11, here `C = F`) and `D' = C'ᵀC + CᵀC'` its time derivative, the viscous power per
/// unit volume is (eq. 17) `Ω(ξ₁, ξ₂, ξ₃) = η₁ H + η₂ J` over the eigenvalues `ξᵢ` of `D'`,
/// computed from the characteristic coefficients `d₂' = Σ D'ᵢᵢ` (eq. 22) and
/// `d₁' = Σᵢ D'⁽²⁾ᵢᵢ` (sum of the principal 2×2 minors, eq. 21) as (eq. 18, 19, 23)
///
/// `ω = η₁/2 (d₂')² + 2η₂/3 ((d₂')² − 3 d₁')`,
///
/// and an element loses `W_e = V_cur ω` with `V_cur = V |det F|` its *current* volume (§5.4).
/// The force is `−½ ∂W/∂v` (eq. 26), so `R_e = ½ V_cur ω`.
///
/// In terms of `Ė`: `D' = 2Ė`, `d₂' = 2 tr Ė`, `(d₂')² − 3d₁' = 3/2 |dev D'|² = 6 |dev Ė|²`,
/// hence `ω = 2η₁ tr(Ė)² + 4η₂ |dev Ė|²` and the damping stress is
/// `S_d = 4η₂ dev Ė + 2η₁ tr(Ė) I`, `f_a = −V_cur F S_d g_a` (the common kernel with `m = 2η₂`,
/// `l = 2η₁ − 4η₂/3`). Near the rest shape this is a Newtonian viscosity with shear viscosity
/// `2η₂` and bulk viscosity `2η₁` (see [`newtonian_viscosities`]).
///
/// Notes on the paper's text:
/// - Eq. 19 (`J = 2/3((d₂')² − 3d₁')`) is twice eq. 17's definition
///   `J = ⅓(ξ₁² + ξ₂² + ξ₃² − ξ₁ξ₂ − ξ₁ξ₃ − ξ₂ξ₃)`. Supple follows eq. 19/23, the formula §5.4
///   says the simulator evaluates; it is also the reading in which `η₁` and `η₂` carry the same
///   factor (2) to the Newtonian bulk and shear viscosities.
/// - §5.3 builds `B` from rows of edge vectors, which would make `C = Fᵀ` and `D = FFᵀ`; that
///   `D'` is not zero for a rigid rotation of a deformed element. Supple uses §4's
///   `D = CᵀC = FᵀF`, for which the paper's own argument (rigid motions lose nothing) holds.
/// - An inverted element (`det F < 0`) is weighted by its unsigned volume, so `D` stays
///   positive semi-definite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LiesenfeldStolfiViscosity {
    /// `η₁` (Pa·s): resistance to uniform expansion or contraction.
    pub eta1: f64,
    /// `η₂` (Pa·s): resistance to shearing flows.
    pub eta2: f64,
}

/// Small-strain Newtonian equivalents `(shear viscosity, bulk viscosity)` in Pa·s of a
/// dissipation: near the rest shape its Cauchy damping stress is
/// `σ = 2 η_s dev(ε̇) + ζ tr(ε̇) I`. `StrainRate`: `(dμ, dλ + 2dμ/3)`; `LiesenfeldStolfi`:
/// `(2η₂, 2η₁)`; `None`: zeros. Use it to report or compare viscosity settings.
pub fn newtonian_viscosities(kind: super::ViscosityKind) -> (f64, f64) {
    match kind {
        super::ViscosityKind::None => (0.0, 0.0),
        super::ViscosityKind::StrainRate { d_mu, d_lambda } => (d_mu, d_lambda + 2.0 * d_mu / 3.0),
        super::ViscosityKind::LiesenfeldStolfi { eta1, eta2 } => (2.0 * eta2, 2.0 * eta1),
    }
}

/// The element kernel `R_e = w_e V_e (m Ė:Ė + l/2 tr(Ė)²)` shared by both dissipations, with
/// `w_e = 1` or, for the current volume, `w_e = |det F|`.
#[derive(Debug, Clone, Copy)]
struct Kernel {
    m: f64,
    l: f64,
    current_volume: bool,
}

/// `Ḟ = Σ_a v_a ⊗ g_a` of element `e`.
#[inline]
fn velocity_gradient(elems: &ElementSet, e: usize, v: &[Vector3<f64>]) -> Matrix3<f64> {
    let g = &elems.grad[e];
    let t = &elems.tets[e];
    let mut f_dot = Matrix3::zeros();
    for a in 0..4 {
        f_dot += v[t[a] as usize] * g[a].transpose();
    }
    f_dot
}

/// Green strain rate `Ė = sym(FᵀḞ)`.
#[inline]
fn green_strain_rate(f: &Matrix3<f64>, f_dot: &Matrix3<f64>) -> Matrix3<f64> {
    let a = f.transpose() * f_dot;
    0.5 * (a + a.transpose())
}

impl Kernel {
    /// Volume weight of element `e`: `V` or `V |det F|`.
    #[inline]
    fn weight(&self, elems: &ElementSet, e: usize, f: &Matrix3<f64>) -> f64 {
        if self.current_volume {
            elems.volume[e] * f.determinant().abs()
        } else {
            elems.volume[e]
        }
    }

    fn add_forces(
        &self,
        elems: &ElementSet,
        x: &[Vector3<f64>],
        v: &[Vector3<f64>],
        out: &mut [Vector3<f64>],
    ) {
        elems.scatter_forces(out, |e| {
            let f = elems.deformation_gradient(e, x);
            let e_dot = green_strain_rate(&f, &velocity_gradient(elems, e, v));
            let s = 2.0 * self.m * e_dot + Matrix3::from_diagonal_element(self.l * e_dot.trace());
            // `stress_forces` multiplies by the rest volume; fold the rest of the weight in.
            let w = self.weight(elems, e, &f) / elems.volume[e];
            elems.stress_forces(e, &(w * f * s))
        });
    }

    fn add_matrix(&self, elems: &ElementSet, x: &[Vector3<f64>], scale: f64, d: &mut BlockCsr) {
        elems.scatter_blocks(d, |e, sink: &mut ElementBlocks| {
            let f = elems.deformation_gradient(e, x);
            let g = &elems.grad[e];
            let n = g.map(|ga| f * ga);
            let fft = f * f.transpose();
            let s = scale * self.weight(elems, e, &f);
            let (sm, sl) = (s * self.m, s * self.l);
            for a in 0..4 {
                for b in a..4 {
                    let block = (sm * g[a].dot(&g[b])) * fft
                        + (sm * n[b]) * n[a].transpose()
                        + (sl * n[a]) * n[b].transpose();
                    sink.add_symmetric(a, b, &block);
                }
            }
        });
    }
}

impl StrainRateDamping {
    pub fn new(d_mu: f64, d_lambda: f64) -> Self {
        Self { d_mu, d_lambda }
    }

    fn kernel(&self) -> Kernel {
        Kernel {
            m: self.d_mu,
            l: self.d_lambda,
            current_volume: false,
        }
    }
}

impl Dissipation for StrainRateDamping {
    fn name(&self) -> &'static str {
        "strain_rate"
    }

    fn add_forces(
        &self,
        elems: &ElementSet,
        x: &[Vector3<f64>],
        v: &[Vector3<f64>],
        f: &mut [Vector3<f64>],
    ) {
        self.kernel().add_forces(elems, x, v, f);
    }

    fn add_matrix(&self, elems: &ElementSet, x: &[Vector3<f64>], scale: f64, d: &mut BlockCsr) {
        self.kernel().add_matrix(elems, x, scale, d);
    }

    /// `Σ_e V_e (2 dμ Ė:Ė + dλ tr(Ė)²)`.
    fn power(&self, elems: &ElementSet, x: &[Vector3<f64>], v: &[Vector3<f64>]) -> f64 {
        elems.sum(|e| {
            let f = elems.deformation_gradient(e, x);
            let e_dot = green_strain_rate(&f, &velocity_gradient(elems, e, v));
            elems.volume[e]
                * (2.0 * self.d_mu * e_dot.norm_squared() + self.d_lambda * e_dot.trace().powi(2))
        })
    }
}

impl LiesenfeldStolfiViscosity {
    pub fn new(eta1: f64, eta2: f64) -> Self {
        Self { eta1, eta2 }
    }

    fn kernel(&self) -> Kernel {
        Kernel {
            m: 2.0 * self.eta2,
            l: 2.0 * self.eta1 - 4.0 * self.eta2 / 3.0,
            current_volume: true,
        }
    }

    /// Viscous power density `ω` of eq. 23 from `C = F` and `C' = Ḟ`, evaluated literally:
    /// `D' = C'ᵀC + CᵀC'`, `d₂' = tr D'` (eq. 22), `d₁'` the sum of the principal 2×2 minors
    /// of `D'` (eq. 21).
    pub(crate) fn power_density(&self, f: &Matrix3<f64>, f_dot: &Matrix3<f64>) -> f64 {
        let dp = f_dot.transpose() * f + f.transpose() * f_dot;
        let d2 = dp.trace();
        let minor = |i: usize, j: usize| dp[(i, i)] * dp[(j, j)] - dp[(i, j)] * dp[(j, i)];
        let d1 = minor(0, 1) + minor(0, 2) + minor(1, 2);
        0.5 * self.eta1 * d2 * d2 + 2.0 * self.eta2 / 3.0 * (d2 * d2 - 3.0 * d1)
    }
}

impl Dissipation for LiesenfeldStolfiViscosity {
    fn name(&self) -> &'static str {
        "liesenfeld_stolfi"
    }

    fn add_forces(
        &self,
        elems: &ElementSet,
        x: &[Vector3<f64>],
        v: &[Vector3<f64>],
        f: &mut [Vector3<f64>],
    ) {
        self.kernel().add_forces(elems, x, v, f);
    }

    fn add_matrix(&self, elems: &ElementSet, x: &[Vector3<f64>], scale: f64, d: &mut BlockCsr) {
        self.kernel().add_matrix(elems, x, scale, d);
    }

    /// `Σ_e V_e |det F| ω` with `ω` from eq. 23 (§5.4).
    fn power(&self, elems: &ElementSet, x: &[Vector3<f64>], v: &[Vector3<f64>]) -> f64 {
        elems.sum(|e| {
            let f = elems.deformation_gradient(e, x);
            let f_dot = velocity_gradient(elems, e, v);
            elems.volume[e] * f.determinant().abs() * self.power_density(&f, &f_dot)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{deform, small_mesh, Lcg};
    use super::super::{build_viscosity, ViscosityKind};
    use super::*;
    use crate::mesh::{box_grid, BoxGrid, TetMesh, TetSplit};

    const STRAIN_RATE: ViscosityKind = ViscosityKind::StrainRate {
        d_mu: 3.0,
        d_lambda: 5.0,
    };
    const LS: ViscosityKind = ViscosityKind::LiesenfeldStolfi {
        eta1: 2.0,
        eta2: 0.7,
    };

    fn both(es: &ElementSet) -> [Box<dyn Dissipation>; 2] {
        [STRAIN_RATE, LS].map(|k| build_viscosity(k, es).expect("a dissipation"))
    }

    fn forces(
        d: &dyn Dissipation,
        es: &ElementSet,
        x: &[Vector3<f64>],
        v: &[Vector3<f64>],
    ) -> Vec<Vector3<f64>> {
        let mut f = vec![Vector3::zeros(); x.len()];
        d.add_forces(es, x, v, &mut f);
        f
    }

    fn matrix(d: &dyn Dissipation, es: &ElementSet, x: &[Vector3<f64>]) -> BlockCsr {
        let mut m = BlockCsr::zeros(es.pattern.clone());
        d.add_matrix(es, x, 1.0, &mut m);
        m
    }

    fn norm(v: &[Vector3<f64>]) -> f64 {
        v.iter().map(|p| p.norm_squared()).sum::<f64>().sqrt()
    }

    fn dist(a: &[Vector3<f64>], b: &[Vector3<f64>]) -> f64 {
        a.iter()
            .zip(b)
            .map(|(p, q)| (p - q).norm_squared())
            .sum::<f64>()
            .sqrt()
    }

    fn random_v(n: usize, rng: &mut Lcg) -> Vec<Vector3<f64>> {
        (0..n).map(|_| rng.vec3()).collect()
    }

    #[test]
    fn built_kinds_have_their_names() {
        let mut rng = Lcg(1);
        let es = ElementSet::new(&small_mesh(&mut rng));
        assert!(build_viscosity(ViscosityKind::None, &es).is_none());
        let [sr, ls] = both(&es);
        assert_eq!((sr.name(), ls.name()), ("strain_rate", "liesenfeld_stolfi"));
        assert_eq!(newtonian_viscosities(STRAIN_RATE), (3.0, 5.0 + 2.0));
        assert_eq!(newtonian_viscosities(LS), (1.4, 4.0));
    }

    #[test]
    fn forces_are_minus_d_v_and_d_is_symmetric_psd_with_power_vtdv() {
        let mut rng = Lcg(21);
        let m = small_mesh(&mut rng);
        let es = ElementSet::new(&m);
        for d in both(&es) {
            for _ in 0..3 {
                let x = deform(&m, &mut rng);
                let v = random_v(x.len(), &mut rng);
                let f = forces(d.as_ref(), &es, &x, &v);
                let dm = matrix(d.as_ref(), &es, &x);
                let mut dv = vec![Vector3::zeros(); x.len()];
                dm.mul_vec(&v, &mut dv);
                let minus_dv: Vec<_> = dv.iter().map(|p| -p).collect();
                let err = dist(&f, &minus_dv) / norm(&f);
                assert!(err <= 1e-12, "{}: f vs -Dv {err:e}", d.name());

                let dense = dm.to_dense();
                let asym = (&dense - dense.transpose()).norm() / dense.norm();
                assert!(asym <= 1e-13, "{}: asymmetry {asym:e}", d.name());
                let eig = dense.clone().symmetric_eigen().eigenvalues;
                let (lo, hi) = (eig.min(), eig.max());
                assert!(lo >= -1e-12 * hi, "{}: eigenvalues {lo:e} {hi:e}", d.name());

                // `power` is computed from the stress (strain rate) or from eq. 23 (LS),
                // independently of the assembled matrix.
                let p = d.power(&es, &x, &v);
                let vdv: f64 = v.iter().zip(&dv).map(|(a, b)| a.dot(b)).sum();
                assert!(p > 0.0, "{}: power {p}", d.name());
                assert!((p - vdv).abs() <= 1e-12 * p, "{}: {p} vs {vdv}", d.name());
            }
        }
    }

    #[test]
    fn force_is_minus_half_the_velocity_gradient_of_the_power() {
        // Liesenfeld & Stolfi eq. 26: F = −½ ∂W/∂v. The power is quadratic in v, so central
        // differences are exact up to rounding.
        let mut rng = Lcg(4);
        let m = small_mesh(&mut rng);
        let es = ElementSet::new(&m);
        let x = deform(&m, &mut rng);
        let v = random_v(x.len(), &mut rng);
        for d in both(&es) {
            let f = forces(d.as_ref(), &es, &x, &v);
            let h = 1e-3;
            let mut vp = v.clone();
            let mut fd = vec![Vector3::zeros(); x.len()];
            for j in 0..3 * x.len() {
                let orig = vp[j / 3][j % 3];
                vp[j / 3][j % 3] = orig + h;
                let pp = d.power(&es, &x, &vp);
                vp[j / 3][j % 3] = orig - h;
                let pm = d.power(&es, &x, &vp);
                vp[j / 3][j % 3] = orig;
                fd[j / 3][j % 3] = -0.5 * (pp - pm) / (2.0 * h);
            }
            let err = dist(&f, &fd) / norm(&f);
            assert!(err <= 1e-9, "{}: force vs −½∇W {err:e}", d.name());
        }
    }

    #[test]
    fn rigid_velocity_fields_are_not_damped() {
        let mut rng = Lcg(8);
        let m = small_mesh(&mut rng);
        let es = ElementSet::new(&m);
        let x = deform(&m, &mut rng);
        let (c, omega, centre) = (rng.vec3(), 3.0 * rng.vec3(), x[5]);
        let rigid: Vec<_> = x.iter().map(|p| c + omega.cross(&(p - centre))).collect();
        // Scale: the force of a deforming field of the same magnitude.
        let v = random_v(x.len(), &mut rng);
        let v: Vec<_> = v.iter().map(|p| p * (norm(&rigid) / norm(&v))).collect();
        for d in both(&es) {
            let scale = norm(&forces(d.as_ref(), &es, &x, &v));
            let f = norm(&forces(d.as_ref(), &es, &x, &rigid));
            assert!(f <= 1e-12 * scale, "{}: {f:e} vs {scale:e}", d.name());
            let p = d.power(&es, &x, &rigid);
            assert!(
                p.abs() <= 1e-12 * d.power(&es, &x, &v),
                "{}: {p:e}",
                d.name()
            );
        }
    }

    #[test]
    fn force_is_linear_in_velocity() {
        let mut rng = Lcg(13);
        let m = small_mesh(&mut rng);
        let es = ElementSet::new(&m);
        let x = deform(&m, &mut rng);
        let (v1, v2) = (random_v(x.len(), &mut rng), random_v(x.len(), &mut rng));
        let sum: Vec<_> = v1.iter().zip(&v2).map(|(a, b)| a + 2.0 * b).collect();
        for d in both(&es) {
            let f1 = forces(d.as_ref(), &es, &x, &v1);
            let f2 = forces(d.as_ref(), &es, &x, &v2);
            let expected: Vec<_> = f1.iter().zip(&f2).map(|(a, b)| a + 2.0 * b).collect();
            let f = forces(d.as_ref(), &es, &x, &sum);
            assert!(dist(&f, &expected) <= 1e-13 * norm(&f), "{}", d.name());
            let twice: Vec<_> = v1.iter().map(|p| 2.0 * p).collect();
            let f1x2: Vec<_> = f1.iter().map(|p| 2.0 * p).collect();
            let f = forces(d.as_ref(), &es, &x, &twice);
            assert!(dist(&f, &f1x2) <= 1e-13 * norm(&f), "{}", d.name());
        }
    }

    /// A unit cube of 3×3×3 cells at the origin.
    fn unit_cube() -> TetMesh {
        box_grid(&BoxGrid {
            cells: [3, 3, 3],
            cell_size: Vector3::repeat(1.0 / 3.0),
            origin: Vector3::zeros(),
            split: TetSplit::Five,
        })
    }

    /// Net force on the vertices with `axis` coordinate 1 (a face of the unit cube): for a
    /// uniform stress `σ` it is `−σ e_axis` (the face's traction on the rest of the body,
    /// area 1), by the divergence theorem on the face's hat functions.
    fn face_force(m: &TetMesh, f: &[Vector3<f64>], axis: usize) -> Vector3<f64> {
        (0..m.n_vertices())
            .filter(|&i| m.positions[i][axis] > 1.0 - 1e-9)
            .map(|i| f[i])
            .sum()
    }

    #[test]
    fn uniform_rates_of_the_rest_shape_give_the_newtonian_stress() {
        let m = unit_cube();
        let es = ElementSet::new(&m);
        let x = m.positions.clone();
        // Simple shear `v = γ̇ y e_x`: `σ_xy = η_s γ̇`. Uniform expansion `v = r (X − c)`:
        // `σ = 3ζ r I`. StrainRate (dμ 3, dλ 5): η_s = 3, ζ = 7; LS (η₁ 2, η₂ 0.7): η_s = 1.4,
        // ζ = 4.
        let (gamma, r) = (0.01, 0.002);
        let shear: Vec<_> = x.iter().map(|p| Vector3::x() * gamma * p.y).collect();
        let centre = Vector3::repeat(0.5);
        let expand: Vec<_> = x.iter().map(|p| r * (p - centre)).collect();
        for (d, eta_s, zeta) in [(STRAIN_RATE, 3.0, 7.0), (LS, 1.4, 4.0)] {
            let d = build_viscosity(d, &es).unwrap();
            let f = forces(d.as_ref(), &es, &x, &shear);
            let top = face_force(&m, &f, 1);
            let expected = -eta_s * gamma;
            assert!((top.x - expected).abs() <= 1e-12, "{}: {top}", d.name());
            assert!(top.y.abs() <= 1e-12 && top.z.abs() <= 1e-12, "{}", d.name());
            let total: Vector3<f64> = f.iter().sum();
            assert!(total.norm() <= 1e-14, "{}", d.name());

            let f = forces(d.as_ref(), &es, &x, &expand);
            let side = face_force(&m, &f, 0);
            let expected = -3.0 * zeta * r;
            assert!((side.x - expected).abs() <= 1e-12, "{}: {side}", d.name());
            assert!(
                side.y.abs() <= 1e-12 && side.z.abs() <= 1e-12,
                "{}",
                d.name()
            );
            // The power of the homogeneous flows: σ:ε̇ times the volume 1.
            let p = d.power(&es, &x, &shear);
            assert!(
                (p - eta_s * gamma * gamma).abs() <= 1e-12 * p,
                "{}",
                d.name()
            );
            let p = d.power(&es, &x, &expand);
            assert!((p - 9.0 * zeta * r * r).abs() <= 1e-12 * p, "{}", d.name());
        }
    }

    #[test]
    fn liesenfeld_stolfi_weights_by_the_current_volume() {
        // At x = sX with the same vertex velocities, Ḟ is unchanged, Ė = s sym(Ḟ) and
        // P = F S_d scales by s²; LS multiplies by det F = s³ more (current volume).
        let mut rng = Lcg(17);
        let m = small_mesh(&mut rng);
        let es = ElementSet::new(&m);
        let v = random_v(m.n_vertices(), &mut rng);
        let s: f64 = 1.3;
        let scaled: Vec<_> = m.positions.iter().map(|p| s * p).collect();
        let [sr, ls] = both(&es);
        for (d, exponent) in [(sr, 2), (ls, 5)] {
            let f0 = forces(d.as_ref(), &es, &m.positions, &v);
            let f1 = forces(d.as_ref(), &es, &scaled, &v);
            let expected: Vec<_> = f0.iter().map(|p| s.powi(exponent) * p).collect();
            assert!(dist(&f1, &expected) <= 1e-12 * norm(&f1), "{}", d.name());
        }
    }

    #[test]
    fn inverted_elements_stay_dissipative() {
        let mut rng = Lcg(29);
        let m = small_mesh(&mut rng);
        let es = ElementSet::new(&m);
        // Mirrored: every element has det F = −1.
        let x: Vec<_> = m
            .positions
            .iter()
            .map(|p| Vector3::new(-p.x, p.y, p.z))
            .collect();
        for d in both(&es) {
            for _ in 0..5 {
                let v = random_v(x.len(), &mut rng);
                let p = d.power(&es, &x, &v);
                assert!(p > 0.0, "{}: {p}", d.name());
                let f = forces(d.as_ref(), &es, &x, &v);
                let fv: f64 = f.iter().zip(&v).map(|(a, b)| a.dot(b)).sum();
                assert!(
                    (fv + p).abs() <= 1e-12 * p,
                    "{}: f·v {fv} vs −{p}",
                    d.name()
                );
            }
        }
    }
}
