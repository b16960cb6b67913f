//! The deformation-velocity scaling of the energy-limited step on two hand-made bodies.

use super::{rigid_velocity, scale_deformation, EnergyLimit};
use crate::body::{Body, BodyDesc};
use crate::fem::material::{CorotationalTangent, ModelKind};
use crate::fem::MassKind;
use crate::mesh::{box_grid, BoxGrid, TetSplit};
use nalgebra::Vector3;

/// A 2×2×2-cell cube of 5 cm cells at `origin`, with the given mass matrix.
fn cube(name: &str, origin: Vector3<f64>, mass: MassKind) -> Body {
    let mesh = box_grid(&BoxGrid {
        cells: [2; 3],
        cell_size: Vector3::repeat(0.05),
        origin,
        split: TetSplit::Five,
    });
    let model = ModelKind::corotational(CorotationalTangent::Rotated);
    Body::new(BodyDesc {
        mass,
        ..BodyDesc::new(name, mesh, model, 1e5, 0.3, 1000.0)
    })
    .unwrap()
}

/// A rigid motion (1 m/s along x, 3 rad/s about z through the origin) plus, scaled by
/// `wobble`, a vertex-by-vertex velocity with no pattern.
fn set_velocities(bodies: &mut [Body], wobble: f64) {
    for (b, body) in bodies.iter_mut().enumerate() {
        for (i, (v, x)) in body.v.iter_mut().zip(&body.x).enumerate() {
            let k = (7 * i + 13 * b) as f64;
            let noise = Vector3::new((1.3 * k).sin(), (2.1 * k + 0.5).cos(), (0.7 * k).sin());
            *v = Vector3::new(1.0, 0.0, 0.0) + Vector3::z().cross(x) * 3.0 + wobble * noise;
        }
    }
}

/// Linear momentum, angular momentum about the origin (lumped masses) and `Σ m |v|`.
fn momenta(bodies: &[Body]) -> (Vector3<f64>, Vector3<f64>, f64) {
    let (mut p, mut l, mut scale) = (Vector3::zeros(), Vector3::zeros(), 0.0);
    for body in bodies {
        for ((x, v), &m) in body.x.iter().zip(&body.v).zip(&body.mass.lumped) {
            p += m * v;
            l += m * x.cross(v);
            scale += m * v.norm() * (1.0 + x.norm());
        }
    }
    (p, l, scale)
}

fn kinetic(bodies: &[Body]) -> f64 {
    bodies.iter().map(|b| b.kinetic_energy()).sum()
}

fn pair(second_mass: MassKind) -> (Vec<Body>, EnergyLimit) {
    let bodies = vec![
        cube("a", Vector3::zeros(), MassKind::Lumped),
        cube("b", Vector3::new(0.1, 0.02, 0.01), second_mass),
    ];
    let mut limit = EnergyLimit::new(true, &bodies);
    limit.join(0, 1);
    (bodies, limit)
}

#[test]
fn scaling_the_deformation_velocity_keeps_a_free_islands_momenta() {
    // One body with the consistent mass matrix: the kinetic energy's cross term is not zero.
    let (mut bodies, mut limit) = pair(MassKind::Consistent);
    set_velocities(&mut bodies, 0.5);
    let (p0, l0, scale) = momenta(&bodies);
    let v0 = bodies[1].v.clone();
    let k1 = kinetic(&bodies);
    let excess = 0.05 * k1;
    let (removed, left) = scale_deformation(&mut limit, &mut bodies, 0, true, k1, excess);
    let (p1, l1, _) = momenta(&bodies);
    let k = kinetic(&bodies);
    assert_eq!(left, 0.0, "a small excess is removed in full");
    assert!(
        (removed - excess).abs() <= 1e-12 * k1,
        "removed {removed} of {excess} J"
    );
    assert!(
        (k - (k1 - excess)).abs() <= 1e-12 * k1,
        "K = {k} J, want {} J",
        k1 - excess
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
    let changed = (bodies[1].v.iter().zip(&v0)).fold(0.0f64, |a, (v, w)| a.max((v - w).norm()));
    assert!(
        changed > 1e-3,
        "the velocities changed by at most {changed} m/s"
    );
}

#[test]
fn an_excess_beyond_the_deformation_energy_leaves_the_rigid_motion() {
    let (mut bodies, mut limit) = pair(MassKind::Lumped);
    set_velocities(&mut bodies, 0.1);
    let (p0, l0, scale) = momenta(&bodies);
    let k1 = kinetic(&bodies);
    let (removed, left) = scale_deformation(&mut limit, &mut bodies, 0, true, k1, k1);
    assert!(
        left > 0.0 && removed > 0.0,
        "removed {removed} J, left {left} J"
    );
    let k = kinetic(&bodies);
    assert!(
        (k - (k1 - removed)).abs() <= 1e-12 * k1,
        "K = {k} J after removing {removed} J of {k1} J"
    );
    // What is left is the rigid velocity of least kinetic energy: nothing more to take out.
    let (a, omega, c) = rigid_velocity(&bodies, &limit.island, 0).unwrap();
    for body in &bodies {
        for (v, x) in body.v.iter().zip(&body.x) {
            let u = a + omega.cross(&(x - c));
            assert!(
                (v - u).norm() <= 1e-12 * (1.0 + u.norm()),
                "{v} is not rigid ({u})"
            );
        }
    }
    let (p1, l1, _) = momenta(&bodies);
    assert!((p1 - p0).norm() <= 1e-12 * scale && (l1 - l0).norm() <= 1e-12 * scale);
}

#[test]
fn a_held_island_scales_all_of_its_velocity() {
    let (mut bodies, mut limit) = pair(MassKind::Consistent);
    bodies[0].fixed[0] = true;
    set_velocities(&mut bodies, 0.5);
    bodies[0].v[0] = Vector3::zeros();
    let v0: Vec<Vec<Vector3<f64>>> = bodies.iter().map(|b| b.v.clone()).collect();
    let k1 = kinetic(&bodies);
    let excess = 0.19 * k1;
    let (removed, left) = scale_deformation(&mut limit, &mut bodies, 0, false, k1, excess);
    assert_eq!(left, 0.0);
    assert!((removed - excess).abs() <= 1e-12 * k1);
    // Every velocity scaled by the same s = √(1 − 0.19) = 0.9.
    for (body, v0) in bodies.iter().zip(&v0) {
        for (v, w) in body.v.iter().zip(v0) {
            assert!(
                (v - 0.9 * w).norm() <= 1e-12 * (1.0 + w.norm()),
                "{v} vs 0.9 × {w}"
            );
        }
    }
}
