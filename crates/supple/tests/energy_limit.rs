//! The energy-limited contact step (`ContactSettings::energy_limit`,
//! `contact/pipeline/energy_limit.rs`) in whole worlds: with it no step gains energy where
//! nothing outside does work; without it (the default) nothing changes.

mod common;

use common::{cube_mesh, implicit};
use supple::body::{Body, BodyDesc};
use supple::contact::ContactSettings;
use supple::fem::material::{CorotationalTangent, ModelKind};
use supple::nalgebra::Vector3;
use supple::world::World;

const COROT: ModelKind = ModelKind::corotational(CorotationalTangent::Rotated);

fn energy(w: &mut World) -> f64 {
    let g = w.gravity;
    (w.bodies.iter_mut())
        .map(|b| b.kinetic_energy() + b.elastic_energy().unwrap() + b.potential_energy(&g))
        .sum()
}

/// What a run did: the largest one-step rise of the total energy (J), over all steps and over
/// the steps with contact; per step, the largest rise beyond the excess the limiter reported
/// it could not remove; the steps the limiter acted in, the energy it removed and the rise it
/// left (J).
#[derive(Debug)]
struct Run {
    rise: f64,
    contact_rise: f64,
    unreported: f64,
    limited: usize,
    removed: f64,
    excess: f64,
}

fn run(w: &mut World, steps: usize) -> Run {
    let mut r = Run {
        rise: 0.0,
        contact_rise: 0.0,
        unreported: 0.0,
        limited: 0,
        removed: 0.0,
        excess: 0.0,
    };
    let mut e = energy(w);
    for _ in 0..steps {
        w.step().unwrap();
        let next = energy(w);
        let c = w.contact_stats().unwrap();
        r.rise = r.rise.max(next - e);
        if c.contacts > 0 {
            r.contact_rise = r.contact_rise.max(next - e);
        }
        r.unreported = r.unreported.max(next - e - c.energy_excess);
        e = next;
        r.limited += usize::from(c.energy_limited > 0);
        r.removed += c.energy_removed;
        r.excess += c.energy_excess;
    }
    r
}

/// The landing stack of `tests/contact.rs`
/// (`a_cube_resting_on_another_gains_no_energy_from_the_contact`): a soft cube dropped 5 mm
/// onto another whose base is fixed, dt = 10 ms, gravity, 1 s. Its rises are stored in the
/// positions of a cube at rest (elastic and gravitational energy), more than its kinetic
/// energy: the limit removes what it can and reports the rest.
fn stack(energy_limit: bool) -> World {
    let cube = |name: &str, origin: Vector3<f64>| {
        BodyDesc::new(name, cube_mesh(3, 0.05, origin), COROT, 2e4, 0.3, 1000.0)
    };
    let lower =
        Body::new(cube("lower", Vector3::zeros()).with_fixed_where(|p| p.y < 1e-3)).unwrap();
    let upper = Body::new(cube("upper", Vector3::new(0.0, 0.155, 0.0))).unwrap();
    World::new(
        vec![lower, upper],
        Vector3::new(0.0, -9.81, 0.0),
        0.01,
        implicit(),
    )
    .unwrap()
    .with_contact(ContactSettings {
        friction: 0.5,
        energy_limit,
        ..ContactSettings::default()
    })
    .unwrap()
}

#[test]
fn a_rise_the_limit_cannot_remove_is_reported() {
    let off = run(&mut stack(false), 100);
    let on = run(&mut stack(true), 100);
    eprintln!("landing stack: off {off:?}; on {on:?}");
    assert!(
        off.rise > 0.01,
        "the run no longer gains energy without the limit: {off:?}"
    );
    assert_eq!(
        (off.limited, off.removed),
        (0, 0.0),
        "off by default does nothing"
    );
    assert!(
        on.limited > 0 && on.removed > 0.0,
        "the limit never acted: {on:?}"
    );
    assert!(on.excess > 0.0, "the limit removed every rise: {on:?}");
    assert!(
        on.unreported <= 1e-9,
        "a step gained {} J more than it reported",
        on.unreported
    );
}

/// Two free soft cubes thrown at each other in zero gravity, off centre (E = 20 kPa,
/// 2 m/s each, dt = 10 ms): the step in which they meet gains energy without the limit.
fn throw(energy_limit: bool) -> World {
    let cube = |name: &str, origin: Vector3<f64>, v: f64| BodyDesc {
        velocity: Vector3::new(v, 0.0, 0.0),
        ..BodyDesc::new(name, cube_mesh(3, 0.05, origin), COROT, 2e4, 0.3, 1000.0)
    };
    let bodies = vec![
        Body::new(cube("a", Vector3::new(-0.16, 0.0, 0.0), 2.0)).unwrap(),
        Body::new(cube("b", Vector3::new(0.005, 0.05, 0.02), -2.0)).unwrap(),
    ];
    World::new(bodies, Vector3::zeros(), 0.01, implicit())
        .unwrap()
        .with_contact(ContactSettings {
            energy_limit,
            ..ContactSettings::default()
        })
        .unwrap()
}

#[test]
fn with_the_energy_limit_no_contact_step_gains_energy() {
    let mut off = throw(false);
    let e0 = energy(&mut off);
    let off = run(&mut off, 40);
    let on = run(&mut throw(true), 40);
    eprintln!("thrown cubes (E0 = {e0:.4} J): off {off:?}; on {on:?}");
    assert!(off.contact_rise > 0.01 * e0, "no gain to remove: {off:?}");
    assert_eq!(
        (off.limited, off.removed),
        (0, 0.0),
        "off by default does nothing"
    );
    assert!(on.limited > 0, "the limit never acted: {on:?}");
    assert!(
        on.contact_rise <= 1e-12 * e0,
        "a contact step gained {} J",
        on.contact_rise
    );
    assert_eq!(on.excess, 0.0, "a rise was left: {on:?}");
}

/// Linear momentum, angular momentum about the origin (lumped masses), and `Σ m |v| (1 + |x|)`
/// (their scale).
fn momenta(w: &World) -> (Vector3<f64>, Vector3<f64>, f64) {
    let (mut p, mut l, mut scale) = (Vector3::zeros(), Vector3::zeros(), 0.0);
    for body in &w.bodies {
        for ((x, v), &m) in body.x.iter().zip(&body.v).zip(&body.mass.lumped) {
            p += m * v;
            l += m * x.cross(v);
            scale += m * v.norm() * (1.0 + x.norm());
        }
    }
    (p, l, scale)
}

/// The limit is the last phase of a step: up to the first step it acts in, the worlds with
/// and without it are the same bit for bit, and after it they differ only in the velocities
/// it scaled — by the deformation velocity alone, so the free island's momenta are equal.
#[test]
fn the_energy_limit_keeps_a_free_islands_momentum() {
    let (mut off, mut on) = (throw(false), throw(true));
    for step in 0..40 {
        off.step().unwrap();
        on.step().unwrap();
        for (a, b) in off.bodies.iter().zip(&on.bodies) {
            assert_eq!(a.x, b.x, "step {step}: positions differ");
        }
        let c = on.contact_stats().unwrap();
        if c.energy_limited == 0 {
            for (a, b) in off.bodies.iter().zip(&on.bodies) {
                assert_eq!(
                    a.v, b.v,
                    "step {step}: velocities differ without the limit acting"
                );
            }
            continue;
        }
        let ((p0, l0, scale), (p1, l1, _)) = (momenta(&off), momenta(&on));
        let dv = (off.bodies.iter().zip(&on.bodies))
            .flat_map(|(a, b)| a.v.iter().zip(&b.v).map(|(u, v)| (u - v).norm()))
            .fold(0.0f64, f64::max);
        eprintln!(
            "step {step}: removed {:.4} J, |Δv| ≤ {dv:.3e} m/s, |Δp| {:.3e}, |ΔL| {:.3e}",
            c.energy_removed,
            (p1 - p0).norm(),
            (l1 - l0).norm()
        );
        assert!(
            c.energy_removed > 0.0 && dv > 1e-3,
            "the limit changed nothing"
        );
        assert!(
            (p1 - p0).norm() <= 1e-12 * scale,
            "Δp = {}",
            (p1 - p0).norm()
        );
        assert!(
            (l1 - l0).norm() <= 1e-12 * scale,
            "ΔL = {}",
            (l1 - l0).norm()
        );
        return;
    }
    panic!("the limit never acted");
}
