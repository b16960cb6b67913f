//! Exact constraints (Liesenfeld & Stolfi 1997 §3.2–3.3) on points of a dynamic rigid core
//! (Müller et al. 2002 §4.3): a core pinned at one point swings as a compound pendulum about
//! it (residual, rigidity, energy, period), a core on a hinge (two points of its axis) only
//! turns about that axis, a core point on a plane or linked to another body stays there.
//! Residuals are measured here from the bodies' positions, not taken from the world.

mod common;

use supple::body::{Body, BodyDesc};
use supple::constraint::{
    BodyPoint, ExactConstraint, ExactKind, ExactSettings, Interpolation, Keyframes,
};
use supple::fem::material::{CorotationalTangent, ModelKind};
use supple::mesh::{box_grid, BoxGrid, TetSplit};
use supple::nalgebra::{Matrix3, Vector3};
use supple::time::{IntegratorKind, LinearSolverKind, NewtonSettings, WarmStart};
use supple::world::World;

const COROT: ModelKind = ModelKind::corotational(CorotationalTangent::Rotated);

fn linearized() -> IntegratorKind {
    IntegratorKind::BackwardEulerLinearized {
        solver: LinearSolverKind::Pcg(common::pcg(1e-12)),
        warm_start: WarmStart::Extrapolate,
    }
}

fn integrators() -> Vec<(&'static str, IntegratorKind)> {
    vec![
        ("backward_euler_linearized", linearized()),
        (
            "backward_euler",
            IntegratorKind::BackwardEuler {
                newton: NewtonSettings::default(),
            },
        ),
        (
            "rkf45",
            IntegratorKind::Rkf45 {
                rtol: 1e-4,
                atol: 1e-7,
                substeps: 0,
            },
        ),
    ]
}

/// A 40 × 10 × 10 cm bar (5 cm cells) at `origin`, and its vertices with `x − origin.x ≤ bone`.
fn bar(name: &str, origin: Vector3<f64>, youngs: f64, bone: f64) -> (Body, Vec<u32>) {
    let mesh = box_grid(&BoxGrid {
        cells: [8, 2, 2],
        cell_size: Vector3::repeat(0.05),
        origin,
        split: TetSplit::Five,
    });
    let body = Body::new(BodyDesc::new(name, mesh, COROT, youngs, 0.3, 1000.0)).unwrap();
    let core = (0..body.n_vertices() as u32)
        .filter(|&v| body.mesh.positions[v as usize].x - origin.x <= bone + 1e-9)
        .collect();
    (body, core)
}

/// Largest change of a pairwise distance within the core from its rest value.
/// The [`bar`] alone under gravity (−z, dt = 10 ms, linearized backward Euler), its bone a
/// dynamic core; returns the world and the core's vertices.
fn falling_bar_with_core() -> (World, Vec<u32>) {
    let (body, core) = bar("bar", Vector3::zeros(), 2e5, 0.1);
    let mut w = World::new(
        vec![body],
        Vector3::new(0.0, 0.0, -9.81),
        0.01,
        linearized(),
    )
    .unwrap();
    w.add_rigid_core(0, core.clone()).unwrap();
    (w, core)
}

fn shape_error(body: &Body, core: &[u32]) -> f64 {
    let mut worst: f64 = 0.0;
    for (k, &a) in core.iter().enumerate() {
        for &b in &core[k + 1..] {
            let (a, b) = (a as usize, b as usize);
            let d = (body.x[a] - body.x[b]).norm();
            let d0 = (body.mesh.positions[a] - body.mesh.positions[b]).norm();
            worst = worst.max((d - d0).abs());
        }
    }
    worst
}

fn fixed_at(w: &World, body: usize, at: Vector3<f64>) -> (BodyPoint, ExactConstraint) {
    let point = w.material_point(body, at).unwrap();
    let path = Keyframes::new(vec![(0.0, at)], Interpolation::Linear).unwrap();
    let c = ExactConstraint {
        point,
        kind: ExactKind::Point { path },
        release: None,
    };
    (point, c)
}

fn energy(w: &mut World) -> f64 {
    let g = w.gravity;
    w.bodies
        .iter_mut()
        .map(|b| b.kinetic_energy() + b.elastic_energy().unwrap() + b.potential_energy(&g))
        .sum()
}

/// The bar's first 10 cm are bone; it is pinned at the centre of its end face (a core point)
/// and let go horizontally under gravity: it swings down and back about the pin (0.6 s).
/// Energy (kinetic + elastic + gravitational) does not grow at dt = 2 ms; at 10 ms it does
/// (by up to 1.8 J of the 8 J swing, at the bottom, linearized backward Euler): the skin does
/// not see the pin's impulse within the step, only the core moved by the projection after it,
/// and the strain that leaves in the skin is energy no force did work for (first order in dt).
#[test]
fn a_core_pinned_at_one_point_swings_as_a_pendulum_about_it() {
    for (name, integrator) in integrators() {
        let (body, core) = bar("bar", Vector3::zeros(), 2e5, 0.1);
        // 2 ms: at 10 ms the skin gains energy (see the note above).
        let mut w =
            World::new(vec![body], Vector3::new(0.0, 0.0, -9.81), 0.002, integrator).unwrap();
        w.add_rigid_core(0, core.clone()).unwrap();
        let pin = Vector3::new(0.0, 0.05, 0.05);
        let (point, c) = fixed_at(&w, 0, pin);
        w.constrain(c).unwrap();
        let e0 = energy(&mut w);
        let (mut residual, mut rigid, mut gain, mut lowest): (f64, f64, f64, f64) =
            (0.0, 0.0, 0.0, 0.0);
        for _ in 0..300 {
            w.step().unwrap();
            residual = residual.max((point.eval(&w.bodies[0].x) - pin).norm());
            rigid = rigid.max(shape_error(&w.bodies[0], &core));
            gain = gain.max(energy(&mut w) - e0);
            lowest = lowest.min(w.bodies[0].x.iter().map(|p| p.z).fold(0.0, f64::min));
        }
        assert!(residual <= 1e-8, "{name}: pin residual {residual:e} m");
        assert!(
            w.constraint_residual() <= 1e-8,
            "{name}: reported {:e}",
            w.constraint_residual()
        );
        assert!(rigid <= 1e-10, "{name}: core shape error {rigid:e} m");
        // M g L ≈ 4 kg · 9.81 · 0.2 m ≈ 8 J: the swing trades that much. Backward Euler gains
        // none; RKF45, which damps nothing, 1.7 mJ (2e-4 of it) from the projections.
        assert!(gain <= 1e-3 * 8.0, "{name}: energy gained {gain:e} J");
        // It did swing: the far end came down by most of the bar's length.
        assert!(lowest < -0.25, "{name}: lowest point {lowest}");
    }
}

/// A body that is all bone, pinned at one point and hanging under gravity (+x here, so the
/// bar hangs along +x from its pin), nudged: a compound pendulum, period
/// `T = 2π √(I_p / (M g d))` with `I_p` its moment of inertia about the pin's axis and `d` the
/// pin's distance to the centre of mass (lumped masses).
#[test]
fn an_all_bone_body_on_a_pin_has_the_compound_pendulum_period() {
    let (mut body, core) = bar("bar", Vector3::zeros(), 2e5, 1.0);
    let pin = Vector3::new(0.0, 0.05, 0.05);
    let omega0 = Vector3::new(0.0, 0.5, 0.0);
    for (v, x) in body.v.iter_mut().zip(&body.mesh.positions) {
        *v = omega0.cross(&(x - pin));
    }
    let m = &body.mass.lumped;
    let total: f64 = m.iter().sum();
    let com: Vector3<f64> = (m.iter().zip(&body.mesh.positions))
        .map(|(m, x)| *m * x)
        .sum::<Vector3<f64>>()
        / total;
    let i_p: f64 = (m.iter().zip(&body.mesh.positions))
        .map(|(m, x)| {
            let r = x - pin;
            m * (r.x * r.x + r.z * r.z)
        })
        .sum();
    let g = 9.81;
    let d = (com - pin).norm();
    let period = 2.0 * std::f64::consts::PI * (i_p / (total * g * d)).sqrt();
    let dt = 0.002;
    let mut w = World::new(vec![body], Vector3::new(g, 0.0, 0.0), dt, linearized()).unwrap();
    w.add_rigid_core(0, core.clone()).unwrap();
    let (_, c) = fixed_at(&w, 0, pin);
    w.constrain(c).unwrap();
    // Upward crossings of the swing angle (the centre of mass's z about the pin).
    let mut crossings = Vec::new();
    let mut last = 0.0;
    let mut rigid: f64 = 0.0;
    for _ in 0..((3.5 * period / dt) as usize) {
        w.step().unwrap();
        let (c, _) = w.rigid_cores()[0].1.pose();
        let z = c.z - pin.z;
        if last < 0.0 && z >= 0.0 {
            crossings.push(w.time - dt * z / (z - last));
        }
        last = z;
        rigid = rigid.max(shape_error(&w.bodies[0], &core));
    }
    assert!(rigid <= 1e-10, "shape error {rigid:e}");
    assert!(crossings.len() >= 3, "{crossings:?} (period {period})");
    let measured = (crossings[crossings.len() - 1] - crossings[0]) / (crossings.len() - 1) as f64;
    assert!(
        (measured - period).abs() <= 0.01 * period,
        "period {measured} s against {period} s"
    );
}

/// Rotation of the core about the unit `axis` (the angle of `R` about it), with `R a = a`
/// checked by the caller.
fn angle_about(r: &Matrix3<f64>, axis: &Vector3<f64>) -> f64 {
    let u = if axis.x.abs() < 0.9 {
        axis.cross(&Vector3::x()).normalize()
    } else {
        axis.cross(&Vector3::y()).normalize()
    };
    let ru = r * u;
    ru.cross(&u).dot(axis).atan2(ru.dot(&u)).abs()
}

/// A hinge: two points on the core's axis held in space. Thrown with a spin about all three
/// axes, the core keeps only its turn about the hinge, and gravity swings it about it.
#[test]
fn a_core_on_a_hinge_only_turns_about_the_hinge_axis() {
    for (name, integrator) in integrators() {
        let (mut body, core) = bar("bar", Vector3::zeros(), 2e5, 0.1);
        let (a, b) = (Vector3::new(0.05, 0.0, 0.05), Vector3::new(0.05, 0.1, 0.05));
        let omega = Vector3::new(3.0, 1.0, 2.0);
        for (v, x) in body.v.iter_mut().zip(&body.mesh.positions) {
            *v = omega.cross(&(x - a));
        }
        let mut w =
            World::new(vec![body], Vector3::new(0.0, 0.0, -9.81), 0.01, integrator).unwrap();
        w.add_rigid_core(0, core.clone()).unwrap();
        let (pa, ca) = fixed_at(&w, 0, a);
        let (pb, cb) = fixed_at(&w, 0, b);
        w.constrain(ca).unwrap();
        w.constrain(cb).unwrap();
        let axis = (b - a).normalize();
        let (mut residual, mut rigid, mut off_axis, mut turned): (f64, f64, f64, f64) =
            (0.0, 0.0, 0.0, 0.0);
        for _ in 0..100 {
            w.step().unwrap();
            let x = &w.bodies[0].x;
            residual = residual
                .max((pa.eval(x) - a).norm())
                .max((pb.eval(x) - b).norm());
            rigid = rigid.max(shape_error(&w.bodies[0], &core));
            let (_, r) = w.rigid_cores()[0].1.pose();
            off_axis = off_axis.max((r * axis - axis).norm());
            turned = turned.max(angle_about(&r, &axis));
        }
        assert!(residual <= 1e-8, "{name}: hinge residual {residual:e} m");
        assert!(rigid <= 1e-10, "{name}: core shape error {rigid:e} m");
        assert!(off_axis <= 1e-8, "{name}: axis moved by {off_axis:e}");
        assert!(turned > 0.5, "{name}: turned only {turned} rad");
    }
}

/// A core point kept on a plane, and a core point linked to a point of a second, clamped
/// body: both hold and the core stays rigid; the link's forces on the two bodies are equal
/// and opposite (the hanging bar's momentum change is the link's impulse plus its weight).
#[test]
fn plane_and_link_constraints_on_core_points_hold() {
    // Plane: the end face's centre slides down a plane tilted 45° while the bar falls and
    // turns.
    let (mut w, core) = falling_bar_with_core();
    let point = w.material_point(0, Vector3::new(0.0, 0.05, 0.05)).unwrap();
    w.constrain(ExactConstraint {
        point,
        kind: ExactKind::Plane {
            origin: Vector3::new(0.0, 0.05, 0.05),
            normal: Vector3::new(1.0, 0.0, 1.0),
        },
        release: None,
    })
    .unwrap();
    let (mut residual, mut rigid): (f64, f64) = (0.0, 0.0);
    for _ in 0..50 {
        w.step().unwrap();
        let p = point.eval(&w.bodies[0].x);
        residual = residual.max((p.x + p.z - 0.05).abs() / 2f64.sqrt());
        rigid = rigid.max(shape_error(&w.bodies[0], &core));
    }
    assert!(residual <= 1e-8, "plane residual {residual:e}");
    assert!(rigid <= 1e-10, "plane: core shape error {rigid:e}");
    assert!(w.bodies[0].x.iter().any(|p| p.z < -0.05), "it fell");

    // Link: the bar's core hangs by one top point from the bottom of a clamped cube.
    let (bar_body, core) = bar("bar", Vector3::zeros(), 2e5, 0.1);
    let cube = box_grid(&BoxGrid {
        cells: [2; 3],
        cell_size: Vector3::repeat(0.05),
        origin: Vector3::new(-0.05, 0.0, 0.1),
        split: TetSplit::Five,
    });
    let cube = Body::new(
        BodyDesc::new("cube", cube, COROT, 1e6, 0.3, 1000.0)
            .with_fixed_where(|p| p.z >= 0.2 - 1e-9),
    )
    .unwrap();
    let gravity = Vector3::new(0.0, 0.0, -9.81);
    let dt = 0.01;
    let mut w = World::new(vec![bar_body, cube], gravity, dt, linearized()).unwrap();
    w.add_rigid_core(0, core.clone()).unwrap();
    let at = Vector3::new(0.0, 0.05, 0.1);
    let pa = w.material_point(0, at).unwrap();
    let pb = w.material_point(1, at).unwrap();
    let id = w
        .constrain(ExactConstraint {
            point: pa,
            kind: ExactKind::Link { other: pb },
            release: None,
        })
        .unwrap();
    let m = w.bodies[0].mass.total();
    let p0 = w.bodies[0].momentum();
    let mut impulse = Vector3::zeros();
    let (mut residual, mut rigid): (f64, f64) = (0.0, 0.0);
    for _ in 0..100 {
        w.step().unwrap();
        residual = residual.max((pa.eval(&w.bodies[0].x) - pb.eval(&w.bodies[1].x)).norm());
        rigid = rigid.max(shape_error(&w.bodies[0], &core));
        impulse += w.constraint_force(id).unwrap() * dt;
    }
    assert!(residual <= 1e-8, "link residual {residual:e}");
    assert!(rigid <= 1e-10, "link: core shape error {rigid:e}");
    let dp = w.bodies[0].momentum() - p0;
    let expected = impulse + m * gravity * w.time;
    assert!(
        (dp - expected).norm() <= 1e-6 * (m * 9.81 * w.time),
        "Δp {dp} against the link's impulse + weight {expected}"
    );
    // The cube carried the bar: its bottom moved down.
    assert!(pb.eval(&w.bodies[1].x).z < at.z - 1e-4);
}

/// Two points of one core held farther apart than they are cannot both be met: the step
/// stops with the projection's Gauss–Newton loop named, instead of a bent core. Two cores
/// sharing a vertex are refused.
#[test]
fn contradictory_core_constraints_and_shared_cores_are_refused() {
    let (mut w, core) = falling_bar_with_core();
    assert!(w.add_rigid_core(0, core[..4].to_vec()).is_err());
    let (a, b) = (Vector3::new(0.05, 0.0, 0.05), Vector3::new(0.05, 0.1, 0.05));
    let (_, ca) = fixed_at(&w, 0, a);
    let (_, mut cb) = fixed_at(&w, 0, b);
    cb.kind = ExactKind::Point {
        path: Keyframes::new(
            vec![(0.0, b + Vector3::new(0.0, 0.01, 0.0))],
            Interpolation::Linear,
        )
        .unwrap(),
    };
    w.constrain(ca).unwrap();
    w.constrain(cb).unwrap();
    let e = w.step().unwrap_err();
    assert!(e.reason.contains("Gauss–Newton"), "{e}");
}

/// The pinned bar of [`a_core_pinned_at_one_point_swings_as_a_pendulum_about_it`] swung for
/// 0.6 s at a step `dt`, the pin's force carried into the next step as a load on the core or
/// not ([`ExactSettings::carry_core_forces`]): the largest energy (kinetic + elastic +
/// gravitational) above the start's.
fn pinned_swing_gain(integrator: IntegratorKind, dt: f64, carry: bool) -> f64 {
    let (body, core) = bar("bar", Vector3::zeros(), 2e5, 0.1);
    let settings = ExactSettings {
        carry_core_forces: carry,
        ..ExactSettings::default()
    };
    let mut w = World::new(vec![body], Vector3::new(0.0, 0.0, -9.81), dt, integrator)
        .unwrap()
        .with_exact_settings(settings)
        .unwrap();
    w.add_rigid_core(0, core).unwrap();
    let pin = Vector3::new(0.0, 0.05, 0.05);
    let (point, c) = fixed_at(&w, 0, pin);
    let id = w.constrain(c).unwrap();
    let e0 = energy(&mut w);
    let (p0, m) = (w.bodies[0].momentum(), w.bodies[0].mass.total());
    let (mut gain, mut residual, mut impulse): (f64, f64, _) = (0.0, 0.0, Vector3::zeros());
    for _ in 0..(0.6 / dt).round() as usize {
        w.step().unwrap();
        gain = gain.max(energy(&mut w) - e0);
        residual = residual.max((point.eval(&w.bodies[0].x) - pin).norm());
        impulse += w.constraint_force(id).unwrap() * dt;
    }
    assert!(
        residual <= 1e-8,
        "dt = {dt}, carry {carry}: pin residual {residual:e}"
    );
    // The reported force (the carried load plus the projection's correction) is all the
    // pin did: the momentum changes by it and the weight.
    let weight = w.gravity * m * w.time;
    let dp = w.bodies[0].momentum() - p0;
    assert!(
        (dp - impulse - weight).norm() <= 1e-6 * weight.norm(),
        "dt = {dt}, carry {carry}: Δp {dp} vs {}",
        impulse + weight
    );
    gain
}

/// Energy of the pinned bar at large steps (Liesenfeld & Stolfi §3.3's constraint force
/// `C = −Gλ` acting within the step): projected alone, the pin acts only after each
/// implicit step, the skin is strained by the core's jump back and the swing gains energy
/// no force did work for — at dt = 10 / 5 / 2 ms, linearized backward Euler 1.82 / 0.073 /
/// 0 J, backward Euler 0.65 / 0 / 0 J, of an 8 J swing. With the last step's pin force
/// carried as a rigid load on the core, 0.153 / 0.051 / 0 J and 0 / 0 / 0 J. The bounds
/// below sit between the two: at 10 ms both, and the linearized one at 5 ms, fail without
/// the carried force.
#[test]
fn a_carried_pin_force_keeps_the_swing_from_gaining_energy_at_large_steps() {
    let (linearized, full) = (integrators()[0].1, integrators()[1].1);
    let cases = [
        ("backward_euler_linearized", linearized, 0.01, 0.3),
        ("backward_euler", full, 0.01, 0.05),
        ("backward_euler_linearized", linearized, 0.005, 0.06),
        ("backward_euler", full, 0.005, 0.01),
        ("backward_euler_linearized", linearized, 0.002, 0.01),
        ("backward_euler", full, 0.002, 0.01),
    ];
    for (name, integrator, dt, bound) in cases {
        let gain = pinned_swing_gain(integrator, dt, true);
        assert!(gain <= bound, "{name} dt = {dt}: energy gained {gain:e} J");
    }
    // Without it the swing at 10 ms gains more than the bound (the state before the carry).
    assert!(pinned_swing_gain(linearized, 0.01, false) > 1.0);
}
