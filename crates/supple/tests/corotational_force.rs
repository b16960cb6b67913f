//! The corotational element force against an independent implementation of Vega FEM 4.0's
//! `CorotationalLinearFEM` formulation (issue 21, item 10), written here from the equations,
//! not from Supple's code:
//! - the element stiffness `K = V Bᵀ E B` (12×12, Voigt strain `[e11 e22 e33 2e12 2e23 2e31]`)
//!   with the shape gradients read off the inverse of the 4×4 matrix `[X; 1]`;
//! - the rotation by Higham's scaled Newton iteration on `F = [x; 1] [X; 1]⁻¹` (upper 3×3)
//!   with Vega's scaling and stopping rule (tolerance 1e-6);
//! - the internal force `f_int = R K (Rᵀ x − X)` (Vega's sign: the energy gradient);
//! - the tangent `R K Rᵀ` (Vega's warp = 1) or the exact one (warp = 2; here by central
//!   differences of `f_int`);
//! - Vega's `ImplicitBackwardEulerSparse` with one iteration (its default):
//!   `(M + h² K) Δv = h (f_ext − f_int − h K v)`, `v += Δv`, `x = xₙ + h v`.
//!
//! The bar is `scenes/bench/bar_450.toml`'s (3×3×10 cubes of 0.1 m, 5-tet split, clamped at
//! x = 0, E = 1e5 Pa, ν = 0.33, ρ = 1000 kg/m³, lumped mass ρV/4, gravity −9.81 y, dt = 10 ms,
//! no damping). Solved densely (512 free dofs), so no iterative-solver tolerance enters.

mod common;

use supple::body::Body;
use supple::fem::material::{CorotationalTangent, Lame, ModelKind};
use supple::mesh::TetSplit;
use supple::nalgebra::{DMatrix, DVector, Matrix3, Matrix4, SMatrix, Vector3};

type Mat12 = SMatrix<f64, 12, 12>;
type Vec12 = SMatrix<f64, 12, 1>;

/// Vega's element stiffness `V Bᵀ E B` for rest corners `p`.
fn element_stiffness(p: &[Vector3<f64>; 4], lame: Lame) -> (Mat12, Matrix4<f64>) {
    let mut m = Matrix4::zeros();
    for (k, q) in p.iter().enumerate() {
        for d in 0..3 {
            m[(d, k)] = q[d];
        }
        m[(3, k)] = 1.0;
    }
    let minv = m.try_inverse().expect("non-degenerate rest tet");
    // minv[(k, j)] = ∂N_k/∂X_j for j < 3.
    let mut b = SMatrix::<f64, 6, 12>::zeros();
    for k in 0..4 {
        let (gx, gy, gz) = (minv[(k, 0)], minv[(k, 1)], minv[(k, 2)]);
        let c = 3 * k;
        b[(0, c)] = gx;
        b[(1, c + 1)] = gy;
        b[(2, c + 2)] = gz;
        b[(3, c)] = gy;
        b[(3, c + 1)] = gx;
        b[(4, c + 1)] = gz;
        b[(4, c + 2)] = gy;
        b[(5, c)] = gz;
        b[(5, c + 2)] = gx;
    }
    let (l, mu) = (lame.lambda, lame.mu);
    let mut e = SMatrix::<f64, 6, 6>::zeros();
    for i in 0..3 {
        for j in 0..3 {
            e[(i, j)] = l;
        }
        e[(i, i)] = l + 2.0 * mu;
        e[(i + 3, i + 3)] = mu;
    }
    let volume = (p[1] - p[0]).cross(&(p[2] - p[0])).dot(&(p[3] - p[0])) / 6.0;
    (volume * b.transpose() * e * b, minv)
}

fn one_norm(a: &Matrix3<f64>) -> f64 {
    (0..3).map(|j| a.column(j).abs().sum()).fold(0.0, f64::max)
}

fn inf_norm(a: &Matrix3<f64>) -> f64 {
    (0..3).map(|i| a.row(i).abs().sum()).fold(0.0, f64::max)
}

/// Higham's scaled Newton iteration for the polar rotation, with Vega's scaling
/// `γ = ((‖adj‖₁‖adj‖∞) / (‖M‖₁‖M‖∞ det²))^¼` and its stop `‖Mₖ − Mₖ₊₁‖₁ ≤ 1e-6 ‖Mₖ₊₁‖₁`.
fn vega_polar(f: &Matrix3<f64>) -> Matrix3<f64> {
    let mut mk = *f;
    loop {
        let det = mk.determinant();
        assert!(det > 1e-6, "the test keeps elements uninverted");
        // Cofactor matrix = det · M⁻ᵀ.
        let cof = mk.try_inverse().unwrap().transpose() * det;
        let gamma = ((one_norm(&cof) * inf_norm(&cof))
            / (one_norm(&mk) * inf_norm(&mk) * det * det))
            .sqrt()
            .sqrt();
        let next = 0.5 * gamma * mk + (0.5 / (gamma * det)) * cof;
        let change = one_norm(&(mk - next));
        mk = next;
        if change <= one_norm(&mk) * 1e-6 {
            return mk;
        }
    }
}

/// `R K Rᵀ` block-wise and `R K`.
fn warp(k: &Mat12, r: &Matrix3<f64>) -> (Mat12, Mat12) {
    let mut rot = Mat12::zeros();
    for a in 0..4 {
        rot.fixed_view_mut::<3, 3>(3 * a, 3 * a).copy_from(r);
    }
    let rk = rot * k;
    (rk * rot.transpose(), rk)
}

struct VegaElement {
    k: Mat12,
    minv: Matrix4<f64>,
    rest: Vec12,
}

impl VegaElement {
    fn new(p: &[Vector3<f64>; 4], lame: Lame) -> Self {
        let (k, minv) = element_stiffness(p, lame);
        let rest = Vec12::from_iterator(p.iter().flat_map(|q| q.iter().copied()));
        Self { k, minv, rest }
    }

    /// `F` = upper 3×3 of `[x; 1] M⁻¹`.
    fn deformation_gradient(&self, x: &Vec12) -> Matrix3<f64> {
        let mut f = Matrix3::zeros();
        for i in 0..3 {
            for j in 0..3 {
                f[(i, j)] = (0..4).map(|k| x[3 * k + i] * self.minv[(k, j)]).sum();
            }
        }
        f
    }

    /// Vega's internal force `R K (Rᵀ x − X)` and the warp = 1 tangent `R K Rᵀ`, with `R`
    /// the polar rotation of `F(x)`.
    fn force_and_tangent(&self, x: &Vec12) -> (Vec12, Mat12, Matrix3<f64>) {
        let r = vega_polar(&self.deformation_gradient(x));
        let (f, k) = self.force_with(x, &r);
        (f, k, r)
    }

    /// `R K (Rᵀ x − X)` and `R K Rᵀ` for a given rotation `r`.
    fn force_with(&self, x: &Vec12, r: &Matrix3<f64>) -> (Vec12, Mat12) {
        let (rkrt, rk) = warp(&self.k, r);
        let mut z = Vec12::zeros();
        for a in 0..4 {
            let xa = Vector3::new(x[3 * a], x[3 * a + 1], x[3 * a + 2]);
            let za = r.transpose() * xa;
            for d in 0..3 {
                z[3 * a + d] = za[d] - self.rest[3 * a + d];
            }
        }
        (rk * z, rkrt)
    }

    /// The exact tangent (warp = 2), by central differences of the internal force.
    fn exact_tangent(&self, x: &Vec12) -> Mat12 {
        let mut k = Mat12::zeros();
        let h = 1e-6;
        for c in 0..12 {
            let (mut xp, mut xm) = (*x, *x);
            xp[c] += h;
            xm[c] -= h;
            let col = (self.force_and_tangent(&xp).0 - self.force_and_tangent(&xm).0) / (2.0 * h);
            k.set_column(c, &col);
        }
        0.5 * (k + k.transpose())
    }
}

fn element_positions(x: &[Vector3<f64>], tet: &[u32; 4]) -> Vec12 {
    Vec12::from_iterator(tet.iter().flat_map(|&i| x[i as usize].iter().copied()))
}

fn lame() -> Lame {
    Lame::from_youngs_poisson(1e5, 0.33).unwrap()
}

/// One element, turned by 2.3 rad about a skew axis after a stretch of 1.6 / 0.7 / 1.2 and
/// shears of 0.35 and −0.25: Supple's force `−V P gₐ` with `P = R σ(sym(RᵀF) − I)` equals
/// Vega's `−R K (Rᵀx − X)` and Genesis's `P = 2μ(F − R) + λ tr(RᵀF − I) R` to rounding.
#[test]
fn element_force_matches_vega_and_genesis_in_a_rotated_strained_state() {
    let rest = [
        Vector3::new(0.0, 0.0, 0.0),
        Vector3::new(0.1, 0.0, 0.0),
        Vector3::new(0.0, 0.1, 0.0),
        Vector3::new(0.0, 0.0, 0.1),
    ];
    // A general (non-right-angled) rest tet too, to exercise every entry of B.
    let skew_rest = [
        Vector3::new(0.01, -0.02, 0.0),
        Vector3::new(0.13, 0.01, 0.02),
        Vector3::new(0.03, 0.11, -0.01),
        Vector3::new(-0.02, 0.04, 0.09),
    ];
    let lame = lame();
    for rest in [rest, skew_rest] {
        let strain = Matrix3::new(1.6, 0.35, 0.0, 0.0, 0.7, -0.25, 0.1, 0.0, 1.2);
        let axis = Vector3::new(1.0, -2.0, 0.5).normalize();
        let turn = supple::nalgebra::Rotation3::from_axis_angle(
            &supple::nalgebra::Unit::new_normalize(axis),
            2.3,
        )
        .into_inner();
        let shift = Vector3::new(0.4, -1.0, 0.25);
        let x: Vec<_> = rest.iter().map(|p| turn * strain * p + shift).collect();

        let mesh = supple::mesh::TetMesh::new(rest.to_vec(), vec![[0, 1, 2, 3]]).unwrap();
        let mut body = Body::new(supple::body::BodyDesc::new(
            "tet",
            mesh,
            ModelKind::corotational(CorotationalTangent::Rotated),
            1e5,
            0.33,
            1000.0,
        ))
        .unwrap();
        body.model.update_frames(&body.elems, &x);
        let mut f = vec![Vector3::zeros(); 4];
        body.model.add_forces(&body.elems, &x, &mut f);

        let vega = VegaElement::new(&rest, lame);
        let xe = element_positions(&x, &[0, 1, 2, 3]);
        let (f_int, _, r) = vega.force_and_tangent(&xe);

        // Genesis's linear_corotated stress on the same element.
        let fgrad = vega.deformation_gradient(&xe);
        let p =
            2.0 * lame.mu * (fgrad - r) + lame.lambda * ((r.transpose() * fgrad).trace() - 3.0) * r;
        let vol = (rest[1] - rest[0])
            .cross(&(rest[2] - rest[0]))
            .dot(&(rest[3] - rest[0]))
            / 6.0;

        let scale = f_int.norm();
        let mut err_vega: f64 = 0.0;
        let mut err_genesis: f64 = 0.0;
        for a in 0..4 {
            let fv = -Vector3::new(f_int[3 * a], f_int[3 * a + 1], f_int[3 * a + 2]);
            let grad_a = Vector3::new(vega.minv[(a, 0)], vega.minv[(a, 1)], vega.minv[(a, 2)]);
            let fg = -vol * (p * grad_a);
            println!(
                "vertex {a}: Supple {:?}  Vega {:?}",
                f[a].as_slice(),
                fv.as_slice()
            );
            err_vega = err_vega.max((f[a] - fv).norm() / scale);
            err_genesis = err_genesis.max((f[a] - fg).norm() / scale);
        }
        println!("|f| = {scale:.6e} N; max |Supple − Vega| / |f| = {err_vega:.2e}, Genesis {err_genesis:.2e}");
        assert!(scale > 1e2, "a strongly strained state: {scale}");
        assert!(err_vega < 1e-9, "{err_vega:e}");
        assert!(err_genesis < 1e-9, "{err_genesis:e}");
    }
}

/// Mean y-displacement of the x = 1 m vertices after `steps` steps of the Vega formulation
/// (`tangent`: None = linear, Some(false) = warp 1, Some(true) = warp 2), densely solved.
fn vega_bar(body: &Body, tangent: Option<bool>, steps: usize) -> f64 {
    vega_bar_variant(body, tangent, steps, 1, false)
}

/// [`vega_bar`] with `iterations` passes of Vega's Newton loop per step and, when `lagged`,
/// rotations taken from the previous step's positions.
fn vega_bar_variant(
    body: &Body,
    tangent: Option<bool>,
    steps: usize,
    iterations: usize,
    lagged: bool,
) -> f64 {
    let (h, g) = (0.01, -9.81);
    let lame = lame();
    let rest = &body.mesh.positions;
    let n = rest.len();
    let elems: Vec<_> = body
        .elems
        .tets
        .iter()
        .map(|t| VegaElement::new(&t.map(|i| rest[i as usize]), lame))
        .collect();
    // Lumped mass ρV/4 per element corner.
    let mut mass = vec![0.0; n];
    for t in &body.elems.tets {
        let p = t.map(|i| rest[i as usize]);
        let v = (p[1] - p[0]).cross(&(p[2] - p[0])).dot(&(p[3] - p[0])) / 6.0;
        for &i in t {
            mass[i as usize] += 1000.0 * v / 4.0;
        }
    }
    for (a, b) in mass.iter().zip(&body.mass.lumped) {
        assert!(
            (a - b).abs() <= 1e-15 * b,
            "lumped mass {a} vs Supple's {b}"
        );
    }
    let free: Vec<usize> = (0..n).filter(|&i| !body.fixed[i]).collect();
    let mut dof = vec![usize::MAX; 3 * n];
    for (k, &i) in free.iter().enumerate() {
        for d in 0..3 {
            dof[3 * i + d] = 3 * k + d;
        }
    }
    let nf = 3 * free.len();
    let mut x: Vec<Vector3<f64>> = rest.clone();
    let mut v = vec![Vector3::<f64>::zeros(); n];
    let mut kept = vec![Matrix3::<f64>::identity(); elems.len()];
    let mut mdiag = DVector::<f64>::zeros(nf);
    let mut fext = DVector::<f64>::zeros(nf);
    for (k, &i) in free.iter().enumerate() {
        for d in 0..3 {
            mdiag[3 * k + d] = mass[i];
        }
        fext[3 * k + 1] = mass[i] * g;
    }
    let gather = |y: &[Vector3<f64>]| {
        DVector::<f64>::from_iterator(nf, free.iter().flat_map(|&i| y[i].iter().copied()))
    };
    for _ in 0..steps {
        let (x1, v1) = (gather(&x), gather(&v));
        let x_start = x.clone();
        for iteration in 0..iterations {
            let mut kmat = DMatrix::<f64>::zeros(nf, nf);
            let mut fint = DVector::<f64>::zeros(nf);
            for (el, (e, t)) in elems.iter().zip(&body.elems.tets).enumerate() {
                let xe = element_positions(&x, t);
                let (fe, ke) = match tangent {
                    None => (e.k * (xe - e.rest), e.k),
                    Some(_) if lagged => e.force_with(&xe, &kept[el]),
                    Some(exact) => {
                        let (fe, rkrt, _) = e.force_and_tangent(&xe);
                        (fe, if exact { e.exact_tangent(&xe) } else { rkrt })
                    }
                };
                for a in 0..12 {
                    let ra = dof[3 * t[a / 3] as usize + a % 3];
                    if ra == usize::MAX {
                        continue;
                    }
                    fint[ra] += fe[a];
                    for b in 0..12 {
                        let cb = dof[3 * t[b / 3] as usize + b % 3];
                        if cb != usize::MAX {
                            kmat[(ra, cb)] += ke[(a, b)];
                        }
                    }
                }
            }
            let (xf, vf) = (gather(&x), gather(&v));
            // Vega's residual: −h (K (q₁ − q) + h K v + f_int − f_ext) + M (v₁ − v); the
            // first iteration is (M + h² K) Δv = h (f_ext − f_int − h K v).
            let mut res = h * (&kmat * &vf) + &fint - &fext;
            if iteration > 0 {
                res += &kmat * (&x1 - &xf);
            }
            res *= -h;
            if iteration > 0 {
                res += mdiag.component_mul(&(&v1 - &vf));
            }
            let mut a = h * h * kmat;
            for k in 0..nf {
                a[(k, k)] += mdiag[k];
            }
            let dv = a.cholesky().expect("SPD system").solve(&res);
            for (k, &i) in free.iter().enumerate() {
                for d in 0..3 {
                    v[i][d] += dv[3 * k + d];
                    x[i][d] = x1[3 * k + d] + h * v[i][d];
                }
            }
        }
        if lagged {
            for (el, (e, t)) in elems.iter().zip(&body.elems.tets).enumerate() {
                kept[el] = vega_polar(&e.deformation_gradient(&element_positions(&x_start, t)));
            }
        }
    }
    tip_mean_dy(rest, &x)
}

fn tip_mean_dy(rest: &[Vector3<f64>], x: &[Vector3<f64>]) -> f64 {
    let tip: Vec<usize> = (0..rest.len())
        .filter(|&i| (rest[i].x - 1.0).abs() < 1e-9)
        .collect();
    assert_eq!(tip.len(), 16);
    tip.iter().map(|&i| x[i].y - rest[i].y).sum::<f64>() / tip.len() as f64
}

fn supple_bar(model: ModelKind, steps: usize) -> (Body, f64) {
    let desc = common::bar([10, 3, 3], 0.1, TetSplit::Five, model, true);
    let mut w = common::world(desc, 9.81, 0.01, common::pcg(1e-12));
    for _ in 0..steps {
        w.step().unwrap();
    }
    let body = w.bodies.remove(0);
    let dy = tip_mean_dy(&body.mesh.positions, &body.x);
    (body, dy)
}

/// `scenes/bench/bar_450.toml` for 30 steps (t = 0.3 s): Supple against the Vega
/// formulation above, linear, R K Rᵀ (warp 1) and exact (warp 2) tangents.
#[test]
fn bar_450_after_30_steps_matches_the_vega_formulation() {
    let cases = [
        ("linear", ModelKind::Linear, None),
        (
            "corotational, R K Rᵀ",
            ModelKind::corotational(CorotationalTangent::Rotated),
            Some(false),
        ),
        (
            "corotational, exact",
            ModelKind::corotational(CorotationalTangent::Exact),
            Some(true),
        ),
    ];
    for (name, model, tangent) in cases {
        let (body, ours) = supple_bar(model, 30);
        let vega = vega_bar(&body, tangent, 30);
        println!("{name}: Supple {ours:.6} m, Vega formulation {vega:.6} m");
        assert!((ours - vega).abs() < 1e-5, "{name}: {ours} vs {vega}");
    }
}

/// What the Vega formulation gives when it is run differently from Supple's scheme: more
/// Newton passes per step (Vega's `maxIterations`), or rotations one step old. Prints only.
#[test]
#[ignore = "exploration for EXPERIMENTS.md (issue 21, item 10); prints numbers"]
fn bar_450_variants_of_the_vega_scheme() {
    let (body, _) = supple_bar(ModelKind::Linear, 0);
    for (name, tangent) in [("warp 1", Some(false)), ("warp 2", Some(true))] {
        for iterations in [1, 2, 3, 10] {
            let dy = vega_bar_variant(&body, tangent, 30, iterations, false);
            println!("{name}, {iterations} Newton pass(es): {dy:.6} m");
        }
    }
    let dy = vega_bar_variant(&body, Some(false), 30, 1, true);
    println!("warp 1, rotations one step old: {dy:.6} m");
    // After one step every corotational variant equals the linear model (R = I at rest) and
    // they part slowly: reference values for comparing another engine step by step.
    for steps in [2, 10, 20] {
        let (_, lin) = supple_bar(ModelKind::Linear, steps);
        let (_, rot) = supple_bar(ModelKind::corotational(CorotationalTangent::Rotated), steps);
        let (_, exact) = supple_bar(ModelKind::corotational(CorotationalTangent::Exact), steps);
        println!(
            "Supple after {steps} steps: linear {lin:.9} m, corotational R K Rᵀ {rot:.9} m, \
             exact {exact:.9} m"
        );
    }
    for steps in [29, 31] {
        let dy = vega_bar_variant(&body, Some(false), steps, 1, false);
        println!("warp 1, {steps} steps: {dy:.6} m");
    }
}
