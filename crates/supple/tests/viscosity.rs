//! Strain-rate damping and Liesenfeld–Stolfi viscosity in a simulation: a free cube's
//! deformation dies out while its momentum is kept, and a rigidly spinning cube keeps its
//! angular velocity (Rayleigh mass damping `α M` does not).

mod common;

use common::Lcg;

use supple::body::{Body, BodyDesc};
use supple::fem::material::ViscosityKind;
use supple::mesh::{box_grid, BoxGrid, TetSplit};
use supple::nalgebra::{Matrix3, Vector3};

/// Damping shear parameter of the tests: about 5 % of the shear modulus (3.76e4 Pa) per second.
const D_MU: f64 = 2000.0;
const STRAIN_RATE: ViscosityKind = ViscosityKind::StrainRate {
    d_mu: D_MU,
    d_lambda: 1000.0,
};
/// The same small-strain shear viscosity (`2η₂ = dμ`) for Liesenfeld–Stolfi.
const LS: ViscosityKind = ViscosityKind::LiesenfeldStolfi {
    eta1: 500.0,
    eta2: 0.5 * D_MU,
};
const DT: f64 = 4e-3;
const STEPS: usize = 250;

/// A free 1 m cube of 4×4×4 cells (E = 1e5 Pa, ν = 0.33, ρ = 1000 kg/m³), corotational.
fn cube() -> BodyDesc {
    let mesh = box_grid(&BoxGrid {
        cells: [4, 4, 4],
        cell_size: Vector3::repeat(0.25),
        origin: Vector3::zeros(),
        split: TetSplit::Six,
    });
    BodyDesc::new("cube", mesh, common::COROTATIONAL, 1e5, 0.33, 1000.0)
}

/// The rigid part of a velocity field (lumped masses): centre of mass `c`, its velocity, and
/// the angular velocity `ω = I⁻¹ L` about `c`.
struct Rigid {
    c: Vector3<f64>,
    v_c: Vector3<f64>,
    omega: Vector3<f64>,
    angular_momentum: Vector3<f64>,
}

fn rigid_part(b: &Body) -> Rigid {
    let m = &b.mass.lumped;
    let total: f64 = m.iter().sum();
    let c =
        b.x.iter()
            .zip(m)
            .map(|(x, &mi)| mi * x)
            .sum::<Vector3<f64>>()
            / total;
    let v_c =
        b.v.iter()
            .zip(m)
            .map(|(v, &mi)| mi * v)
            .sum::<Vector3<f64>>()
            / total;
    let (mut l, mut inertia) = (Vector3::zeros(), Matrix3::zeros());
    for ((x, v), &mi) in b.x.iter().zip(&b.v).zip(m) {
        let r = x - c;
        l += mi * r.cross(&(v - v_c));
        inertia += mi * (Matrix3::from_diagonal_element(r.norm_squared()) - r * r.transpose());
    }
    let omega = inertia.try_inverse().expect("a solid body") * l;
    Rigid {
        c,
        v_c,
        omega,
        angular_momentum: l,
    }
}

/// Kinetic energy of the motion relative to the rigid part, `½ Σ m |v − v_c − ω × (x − c)|²`.
fn deformation_kinetic_energy(b: &Body) -> f64 {
    let r = rigid_part(b);
    b.x.iter()
        .zip(&b.v)
        .zip(&b.mass.lumped)
        .map(|((x, v), mi)| 0.5 * mi * (v - r.v_c - r.omega.cross(&(x - r.c))).norm_squared())
        .sum()
}

/// Runs `desc` from the velocity field `v0(x)` and returns the world's body at the end plus
/// the body's rigid part at the start.
fn run(desc: BodyDesc, v0: impl Fn(usize, &Vector3<f64>) -> Vector3<f64>) -> (Body, Rigid, f64) {
    let mut w = common::world(desc, 0.0, DT, common::pcg(1e-12));
    let b = &mut w.bodies[0];
    for (i, (v, x)) in b.v.iter_mut().zip(&b.x).enumerate() {
        *v = v0(i, x);
    }
    let start = rigid_part(&w.bodies[0]);
    let ke0 = deformation_kinetic_energy(&w.bodies[0]);
    for _ in 0..STEPS {
        w.step().unwrap();
        assert!(w.last_stats()[0].solver_converged);
    }
    (w.bodies.remove(0), start, ke0)
}

#[test]
fn free_cube_deformation_decays_and_momentum_is_kept() {
    // Rigid drift and spin plus a random velocity per vertex.
    let mut rng = Lcg(42);
    let noise: Vec<_> = (0..125).map(|_| 0.2 * rng.vec3()).collect();
    let v0 = |i: usize, x: &Vector3<f64>| {
        Vector3::new(0.3, -0.1, 0.2)
            + Vector3::new(0.2, 0.5, -0.3).cross(&(x - Vector3::repeat(0.5)))
            + noise[i]
    };
    let mut ratios = Vec::new();
    for kind in [ViscosityKind::None, STRAIN_RATE, LS] {
        let (b, start, ke0) = run(cube().with_viscosity(kind), v0);
        let p0: Vector3<f64> = start.v_c * b.mass.lumped.iter().sum::<f64>();
        let p1 = b.momentum();
        let ratio = deformation_kinetic_energy(&b) / ke0;
        let end = rigid_part(&b);
        println!(
            "{kind:?}: deformation KE {ke0:.4e} J -> ratio {ratio:.3e} after {:.1} s; \
             |Δp|/|p| {:.1e}; |ΔL|/|L| {:.2e}",
            DT * STEPS as f64,
            (p1 - p0).norm() / p0.norm(),
            (end.angular_momentum - start.angular_momentum).norm() / start.angular_momentum.norm(),
        );
        assert!(
            (p1 - p0).norm() <= 1e-10 * p0.norm(),
            "{kind:?}: {p0} -> {p1}"
        );
        ratios.push(ratio);
    }
    // Backward Euler damps on its own; the viscosity must do much more.
    let [none, sr, ls] = ratios[..] else {
        unreachable!()
    };
    for (name, r) in [("strain rate", sr), ("liesenfeld-stolfi", ls)] {
        assert!(r < 1e-3, "{name}: deformation energy ratio {r:e}");
        assert!(
            r < 1e-2 * none,
            "{name}: {r:e} vs without viscosity {none:e}"
        );
    }
}

#[test]
fn rigid_spin_is_not_damped_by_viscosity_but_by_mass_damping() {
    let omega0 = Vector3::new(0.3, -0.4, 1.2);
    let centre = Vector3::repeat(0.5);
    let spin = |_: usize, x: &Vector3<f64>| omega0.cross(&(x - centre));
    let t = DT * STEPS as f64;
    let mut kept = Vec::new();
    for (name, desc) in [
        ("none", cube()),
        ("strain rate", cube().with_viscosity(STRAIN_RATE)),
        ("liesenfeld-stolfi", cube().with_viscosity(LS)),
        ("rayleigh alpha 1/s", cube().with_damping(1.0, 0.0)),
    ] {
        let (b, start, _) = run(desc, spin);
        let end = rigid_part(&b);
        let ratio = end.omega.norm() / start.omega.norm();
        let l_ratio = end.angular_momentum.norm() / start.angular_momentum.norm();
        println!(
            "{name}: |ω| {:.4} -> {:.4} rad/s (ratio {ratio:.5}), |L| ratio {l_ratio:.7} \
             after {t:.1} s",
            start.omega.norm(),
            end.omega.norm()
        );
        kept.push((ratio, l_ratio));
    }
    let (none, alpha) = (kept[0], kept[3]);
    for (ratio, l_ratio) in &kept[1..3] {
        // Viscosity changes the spin no more than 0.1 % of it beyond what the undamped
        // cube does (centrifugal stretch and the integrator's own drift).
        assert!(
            (ratio - none.0).abs() <= 1e-3,
            "{ratio} vs undamped {}",
            none.0
        );
        assert!(
            (l_ratio - 1.0).abs() <= 1e-4,
            "angular momentum ratio {l_ratio}"
        );
        assert!(*ratio > 0.98, "{ratio}");
    }
    // α M damps every velocity, rigid ones included: |ω| ≈ (1 + α h)^(−n) ≈ e^(−α t).
    let expected = (1.0 + DT).powi(-(STEPS as i32));
    assert!(
        (alpha.0 - expected).abs() <= 0.02,
        "rayleigh: {} vs {expected}",
        alpha.0
    );
}
