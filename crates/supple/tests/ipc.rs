//! The coupled IPC contact step (`contact::ipc`) in whole worlds: bodies banged together,
//! stacked, dropped and crushed at real-time steps, checked for what IPC promises (no state
//! intersecting, no inverted tet for invertible models, equal and opposite reactions) and for
//! the physics (momentum, friction on a slope, resting stacks).

mod common;

use common::{cube_mesh, implicit};
use supple::body::{Body, BodyDesc};
use supple::contact::ipc::IpcSettings;
use supple::contact::{ContactSettings, ContactSurface, Obstacle, Response};
use supple::fem::material::{CorotationalTangent, ModelKind};
use supple::nalgebra::{Rotation3, Vector3};
use supple::world::World;

const COROT: ModelKind = ModelKind::corotational(CorotationalTangent::Rotated);

fn ipc() -> ContactSettings {
    ContactSettings {
        response: Response::Ipc(IpcSettings::default()),
        ..ContactSettings::default()
    }
}

fn world(bodies: Vec<BodyDesc>, g: Vector3<f64>, dt: f64, contact: ContactSettings) -> World {
    let bodies = bodies.into_iter().map(|d| Body::new(d).unwrap()).collect();
    World::new(bodies, g, dt, implicit())
        .unwrap()
        .with_contact(contact)
        .unwrap()
}

/// Vertices of any body inside another body (winding number).
fn inside_count(w: &World) -> usize {
    let surfaces: Vec<ContactSurface> = w
        .bodies
        .iter()
        .map(|b| ContactSurface::new(&b.mesh.positions, &b.mesh.tets))
        .collect();
    let mut n = 0;
    for (a, body) in w.bodies.iter().enumerate() {
        for (b, other) in w.bodies.iter().enumerate() {
            if a != b {
                n += body
                    .x
                    .iter()
                    .filter(|p| surfaces[b].contains(&other.x, p))
                    .count();
            }
        }
    }
    n
}

fn inverted(w: &World) -> usize {
    w.bodies
        .iter()
        .map(|b| b.volume_ratios().iter().filter(|&&r| r <= 0.0).count())
        .sum()
}

/// `Σ m x × (v − v_before)`: backward Euler does not keep `Σ m x × v` (it changes by
/// `−h² Σ v × f`), but forces from potentials of relative positions have no net torque at the
/// state they act in, so the torque of the step's impulses about the end positions is zero.
fn impulse_torque(w: &World, v_before: &[Vec<Vector3<f64>>]) -> Vector3<f64> {
    w.bodies
        .iter()
        .zip(v_before)
        .map(|(b, v0)| {
            (b.x.iter().zip(&b.v).zip(v0).zip(&b.mass.lumped))
                .map(|(((x, v), v0), m)| *m * x.cross(&(v - v0)))
                .sum::<Vector3<f64>>()
        })
        .sum()
}

/// Two cubes of `cells`³ cells of 5 cm meeting head-on at ±`speed`, no gravity.
fn head_on(speed: f64, dt: f64, model: ModelKind) -> World {
    let a = BodyDesc {
        velocity: Vector3::new(speed, 0.0, 0.0),
        ..BodyDesc::new(
            "a",
            cube_mesh(3, 0.05, Vector3::new(-0.17, 0.0, 0.0)),
            model,
            1e5,
            0.3,
            1000.0,
        )
    };
    let b = BodyDesc {
        velocity: Vector3::new(-speed, 0.0, 0.0),
        // Offset sideways so the crash is not symmetric (angular momentum is tested too).
        ..BodyDesc::new(
            "b",
            cube_mesh(3, 0.05, Vector3::new(0.02, 0.04, 0.01)),
            model,
            1e5,
            0.3,
            1000.0,
        )
    };
    // Momentum "to solver tolerance": tight Newton tolerances (the residual is the step's
    // momentum imbalance, so Δp per step is at most `tolerance` × the momentum scale; the
    // defaults leave 10⁻⁶ of it per step, which 30 steps add up past this test's bound).
    let contact = ContactSettings {
        response: Response::Ipc(IpcSettings {
            tolerance: 1e-9,
            velocity_tolerance: 1e-7,

            ..IpcSettings::default()
        }),
        ..ContactSettings::default()
    };
    world(vec![a, b], Vector3::zeros(), dt, contact)
}

/// Runs the head-on crash for `steps` steps, checking every step: no vertex inside the other
/// cube, linear momentum kept, and (on steps not retried as half steps) no net torque of
/// the step's impulses. Every Newton iterate is checked for intersection too.
fn run_head_on(speed: f64, dt: f64, model: ModelKind, steps: usize) -> World {
    let mut w = head_on(speed, dt, model);
    w.ipc_mut().unwrap().check_iterates = true;
    let p0 = w.bodies.iter().map(|b| b.momentum()).sum::<Vector3<f64>>();
    let scale = w.bodies[0].momentum().norm();
    for step in 0..steps {
        let v_before: Vec<_> = w.bodies.iter().map(|b| b.v.clone()).collect();
        w.step().unwrap();
        let s = w.ipc().unwrap().last;
        assert_eq!(
            s.intersecting_iterates, 0,
            "step {step}: an iterate was intersecting"
        );
        let inside = inside_count(&w);
        assert_eq!(
            inside, 0,
            "step {step}: {inside} vertices inside the other cube"
        );
        let p = w.bodies.iter().map(|b| b.momentum()).sum::<Vector3<f64>>();
        assert!(
            (p - p0).norm() < 1e-6 * scale,
            "step {step}: Δp = {:e}",
            (p - p0).norm()
        );
        if w.last_step().retries == 0 {
            // Lever: the cubes are 15 cm.
            let torque = impulse_torque(&w, &v_before).norm();
            assert!(
                torque < 1e-5 * scale * 0.15,
                "step {step}: impulse torque {torque:e}"
            );
        }
    }
    w
}

#[test]
fn head_on_cubes_at_2_and_10_m_s_never_intersect_keep_momentum_and_bounce() {
    for (speed, model) in [
        (2.0, COROT),
        (10.0, COROT),
        (10.0, ModelKind::FixedCorotated),
    ] {
        let w = run_head_on(speed, 0.01, model, 30);
        eprintln!(
            "head-on {speed} m/s ({}): inverted at the end {}, {:?}",
            w.bodies[0].model.name(),
            inverted(&w),
            w.totals()
        );
        assert_eq!(inverted(&w), 0, "{speed} m/s: tets inverted at the end");
        // At 2 m/s they bounce; at 10 m/s the offset cubes crush and glance off each other.
        let pa = w.bodies[0].momentum().x;
        if speed < 5.0 {
            assert!(
                pa < 0.0,
                "{speed} m/s: cube a still moves towards b: p = {pa}"
            );
        }
    }
}

#[test]
fn the_coupled_step_gives_the_same_bits_on_one_and_two_threads() {
    let run = |threads| {
        rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap()
            .install(|| {
                let mut w = head_on(4.0, 0.01, COROT);
                for _ in 0..12 {
                    w.step().unwrap();
                }
                w.bodies
                    .iter()
                    .flat_map(|b| b.x.clone())
                    .collect::<Vec<_>>()
            })
    };
    assert_eq!(run(1), run(2));
}

/// Undamped elastic cubes meeting head-on, no gravity: total energy (kinetic + elastic, the
/// barrier's share counted) never rises over a step by more than 1 % of the initial energy.
#[test]
fn energy_never_rises_over_a_contact_step() {
    let mut w = head_on(3.0, 0.01, ModelKind::FixedCorotated);
    let energy = |w: &mut World| -> f64 {
        w.bodies
            .iter_mut()
            .map(|b| b.kinetic_energy() + b.elastic_energy().unwrap())
            .sum::<f64>()
    };
    let e0 = energy(&mut w);
    let mut last = e0;
    let mut worst: f64 = 0.0;
    for _ in 0..40 {
        w.step().unwrap();
        let e = energy(&mut w);
        worst = worst.max((e - last) / e0);
        last = e;
    }
    eprintln!(
        "energy: largest rise over a step {:.3e} of E₀; end {:.3}",
        worst,
        last / e0
    );
    assert!(worst < 0.01, "energy rose by {worst} of E₀ over one step");
    assert!(last < e0, "backward Euler gained energy over the crash");
}

/// A cube of `model` on the ground crushed by a plate coming down at 0.3 m/s to 35 % of its
/// height: the smallest tet volume ratio over every step.
fn crush(model: ModelKind) -> f64 {
    let cube = BodyDesc::new(
        "cube",
        cube_mesh(3, 0.05, Vector3::new(-0.075, 0.0005, -0.075)),
        model,
        1e5,
        0.3,
        1000.0,
    );
    let top = 0.151;
    let plate = Obstacle {
        name: "plate".into(),
        shape: supple::contact::Shape::Box {
            half_extents: Vector3::new(0.3, 0.05, 0.3),
        },
        path: supple::contact::RigidPath::Constant {
            start: supple::nalgebra::Isometry3::translation(0.0, top + 0.05, 0.0),
            linear: Vector3::new(0.0, -0.3, 0.0),
            angular: Vector3::zeros(),
        },
        friction: 0.3,
    };
    let contact = ContactSettings {
        obstacles: vec![
            Obstacle::plane("ground", Vector3::zeros(), Vector3::y(), 0.3).unwrap(),
            plate,
        ],
        ..ipc()
    };
    let mut w = world(vec![cube], Vector3::new(0.0, -9.81, 0.0), 0.01, contact);
    let mut worst = f64::INFINITY;
    let steps = (0.65 * 0.15 / 0.3 / 0.01) as usize;
    for step in 0..steps {
        w.step().unwrap_or_else(|e| panic!("step {step}: {e}"));
        worst = worst.min(w.bodies[0].min_volume_ratio());
    }
    let height = w.bodies[0]
        .x
        .iter()
        .map(|x| x.y)
        .fold(f64::NEG_INFINITY, f64::max);
    eprintln!(
        "crush ({}): smallest volume ratio {worst:.3}, height {height:.4} m",
        w.bodies[0].model.name()
    );
    assert!(
        height < 0.06,
        "the plate did not crush the cube: height {height}"
    );
    worst
}

#[test]
fn liesenfeld_stolfi_and_fixed_corotated_cubes_crushed_between_plates_never_invert() {
    for model in [ModelKind::LiesenfeldStolfi, ModelKind::FixedCorotated] {
        let worst = crush(model);
        assert!(worst > 0.0, "a tet inverted: smallest volume ratio {worst}");
    }
}

#[test]
fn a_cube_dropped_on_the_ground_rests_on_it() {
    let cube = BodyDesc::new(
        "cube",
        cube_mesh(3, 0.05, Vector3::new(-0.075, 0.01, -0.075)),
        COROT,
        1e5,
        0.3,
        1000.0,
    );
    let contact = ContactSettings {
        obstacles: vec![Obstacle::plane("ground", Vector3::zeros(), Vector3::y(), 0.5).unwrap()],
        ..ipc()
    };
    let mut w = world(vec![cube], Vector3::new(0.0, -9.81, 0.0), 0.01, contact);
    for step in 0..100 {
        w.step().unwrap();
        let lowest = w.bodies[0]
            .x
            .iter()
            .map(|x| x.y)
            .fold(f64::INFINITY, f64::min);
        assert!(lowest > 0.0, "step {step}: a vertex at y = {lowest}");
    }
    let v = w.bodies[0].v.iter().map(|v| v.norm()).fold(0.0, f64::max);
    let lowest = w.bodies[0]
        .x
        .iter()
        .map(|x| x.y)
        .fold(f64::INFINITY, f64::min);
    eprintln!(
        "cube at rest: max |v| = {v:.3e}, lowest y = {lowest:.3e}; {:?}",
        w.ipc().unwrap().last
    );
    assert!(v < 1e-2, "still moving at {v} m/s");
    assert!(lowest < 2.0 * w.ipc().unwrap().dhat);
}

/// Downhill distance in 0.5 s of a cube resting on a 30° slope with friction μ.
fn slide_on_slope(mu: f64) -> f64 {
    let theta = 30f64.to_radians();
    let normal = Vector3::new(theta.sin(), theta.cos(), 0.0);
    let downhill = Vector3::new(theta.cos(), -theta.sin(), 0.0);
    let mut mesh = cube_mesh(2, 0.05, Vector3::new(-0.05, 0.0005, -0.05));
    mesh.transform(
        1.0,
        &Rotation3::from_axis_angle(&Vector3::z_axis(), -theta).into_inner(),
        &Vector3::zeros(),
    );
    let body = BodyDesc::new("cube", mesh, COROT, 1e6, 0.3, 1000.0);
    let contact = ContactSettings {
        obstacles: vec![Obstacle::plane("slope", Vector3::zeros(), normal, mu).unwrap()],
        ..ipc()
    };
    let mut w = world(vec![body], Vector3::new(0.0, -9.81, 0.0), 0.01, contact);
    // Settle 0.1 s, then measure over 0.5 s.
    for _ in 0..10 {
        w.step().unwrap();
    }
    let c0 = w.bodies[0].center_of_mass();
    for _ in 0..50 {
        w.step().unwrap();
    }
    (w.bodies[0].center_of_mass() - c0).dot(&downhill)
}

#[test]
fn a_cube_on_a_30_degree_slope_sticks_at_mu_0_7_and_slides_at_mu_0_3() {
    let held = slide_on_slope(0.7);
    let slid = slide_on_slope(0.3);
    let theta = 30f64.to_radians();
    let a = 9.81 * (theta.sin() - 0.3 * theta.cos());
    eprintln!("slope: μ = 0.7 moved {held:.3e} m, μ = 0.3 slid {slid:.4} m (a = {a:.3} m/s²)");
    assert!(held.abs() < 1e-3, "μ = 0.7: moved {held} m");
    // From the settled state: speed v₀ = a·0.1 s at the start of the window.
    let expected = a * 0.1 * 0.5 + 0.5 * a * 0.25;
    assert!(
        (slid - expected).abs() < 0.1 * expected,
        "μ = 0.3: slid {slid} m, expected {expected}"
    );
}

/// A stack of `n` 15 cm corotational cubes (3×3×3 cells of 5 cm) on the ground, the top one
/// dropped 1 cm: the top cube's sideways drift over `seconds`.
fn stack_drift(n: usize, dt: f64, seconds: f64) -> (f64, World) {
    let bodies: Vec<BodyDesc> = (0..n)
        .map(|k| {
            let y = 0.0005 + k as f64 * 0.1505 + if k + 1 == n && k > 0 { 0.01 } else { 0.0 };
            BodyDesc::new(
                format!("cube{k}"),
                cube_mesh(3, 0.05, Vector3::new(-0.075, y, -0.075)),
                COROT,
                1e5,
                0.3,
                1000.0,
            )
        })
        .collect();
    let contact = ContactSettings {
        obstacles: vec![Obstacle::plane("ground", Vector3::zeros(), Vector3::y(), 0.5).unwrap()],
        friction: 0.5,
        ..ipc()
    };
    let mut w = world(bodies, Vector3::new(0.0, -9.81, 0.0), dt, contact);
    let top = n - 1;
    let c0 = w.bodies[top].center_of_mass();
    let steps = (seconds / dt).round() as usize;
    let mut drift: f64 = 0.0;
    for step in 0..steps {
        w.step().unwrap();
        let c = w.bodies[top].center_of_mass();
        drift = drift.max(((c - c0).x.powi(2) + (c - c0).z.powi(2)).sqrt());
        let inside = inside_count(&w);
        assert_eq!(
            inside, 0,
            "step {step}: {inside} vertices inside another cube"
        );
    }
    (drift, w)
}

#[test]
fn two_stacked_cubes_stay_put() {
    let (drift, w) = stack_drift(2, 0.01, 2.0);
    eprintln!(
        "2-cube stack: drift {drift:.3e} m; {:?}",
        w.ipc().unwrap().last
    );
    assert!(drift < 1e-3, "the top cube moved {drift} m sideways");
}
