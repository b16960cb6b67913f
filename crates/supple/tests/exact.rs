//! Exact constraints (Liesenfeld & Stolfi 1997 §3.2–3.3) held by projection: residuals over
//! 10 s of RKF45 and of backward Euler, a link's equal and opposite forces, a hanging body's
//! weight carried by a link, dragged and released points, and refused constraints.

mod common;

use supple::body::{Body, BodyDesc};
use supple::constraint::{BodyPoint, ExactConstraint, ExactKind, Interpolation, Keyframes};
use supple::fem::material::{CorotationalTangent, ModelKind};
use supple::mesh::{box_grid, BoxGrid, TetMesh, TetSplit};
use supple::nalgebra::Vector3;
use supple::time::{IntegratorKind, LinearSolverKind, NewtonSettings, WarmStart};
use supple::world::{World, WorldError};

const COROT: ModelKind = ModelKind::corotational(CorotationalTangent::Rotated);
const G: f64 = 9.81;

fn cube(origin: Vector3<f64>) -> TetMesh {
    box_grid(&BoxGrid {
        cells: [2; 3],
        cell_size: Vector3::repeat(0.05),
        origin,
        split: TetSplit::Five,
    })
}

fn body(name: &str, origin: Vector3<f64>, alpha: f64) -> Body {
    Body::new(BodyDesc::new(name, cube(origin), COROT, 1e6, 0.3, 1000.0).with_damping(alpha, 0.0))
        .unwrap()
}

fn integrators() -> Vec<(&'static str, IntegratorKind)> {
    vec![
        (
            "rkf45",
            IntegratorKind::Rkf45 {
                rtol: 1e-4,
                atol: 1e-7,
                substeps: 0,
            },
        ),
        (
            "backward_euler_linearized",
            IntegratorKind::BackwardEulerLinearized {
                // 1e-12: the pair's momentum drifts by the sum of the solve's residual, which
                // at 1e-10 reached 2e-9 × its norm over 100 steps with Eisenstat SSOR.
                solver: LinearSolverKind::Pcg(common::pcg(1e-12)),
                warm_start: WarmStart::Extrapolate,
            },
        ),
        (
            "backward_euler",
            // Newton to 1e-10 with PCG to 1e-12, for the same reason.
            IntegratorKind::BackwardEuler {
                newton: NewtonSettings {
                    tolerance: 1e-10,
                    solver: LinearSolverKind::Pcg(common::pcg(1e-12)),
                    ..NewtonSettings::default()
                },
            },
        ),
    ]
}

fn gravity() -> Vector3<f64> {
    Vector3::new(0.0, 0.0, -G)
}

fn mass(b: &Body) -> f64 {
    b.mass.lumped.iter().sum()
}

#[test]
fn a_point_fixed_in_space_holds_to_1e_8_over_10_s_of_rkf45_and_backward_euler() {
    for (name, integrator) in integrators() {
        let mut w = World::new(
            vec![body("cube", Vector3::zeros(), 0.0)],
            gravity(),
            0.02,
            integrator,
        )
        .unwrap();
        // A top edge's midpoint: the cube swings about it like a pendulum.
        let at = Vector3::new(0.05, 0.0, 0.1);
        let point = w.material_point(0, at).unwrap();
        let path = Keyframes::new(vec![(0.0, at)], Interpolation::Linear).unwrap();
        let id = (w.constrain(ExactConstraint {
            point,
            kind: ExactKind::Point { path },
            release: None,
        }))
        .unwrap();
        let mut worst: f64 = 0.0;
        let mut lowest = f64::INFINITY;
        let (p0, m) = (w.bodies[0].momentum(), mass(&w.bodies[0]));
        let mut impulse = Vector3::zeros();
        for _ in 0..500 {
            w.step().unwrap_or_else(|e| panic!("{name}: {e}"));
            impulse += w.constraint_force(id).unwrap() * w.dt;
            worst = worst.max(w.constraint_residual());
            let p = point.eval(&w.bodies[0].x);
            worst = worst.max((p - at).amax());
            lowest = lowest.min(
                w.bodies[0]
                    .x
                    .iter()
                    .map(|x| x.z)
                    .fold(f64::INFINITY, f64::min),
            );
        }
        assert!(worst <= 1e-8, "{name}: residual {worst:e}");
        // The body really swung below its point (it was not simply left in place).
        assert!(lowest < -0.01, "{name}: lowest z {lowest}");
        // The reported force is all the point's constraint did (for RKF45 the stage
        // multipliers' impulse with the projection's): the momentum changes by it and the
        // weight alone (internal forces sum to zero).
        let weight = gravity() * m * w.time;
        let dp = w.bodies[0].momentum() - p0;
        assert!(
            (dp - impulse - weight).norm() <= 1e-6 * weight.norm(),
            "{name}: momentum change {dp} vs {}",
            impulse + weight
        );
    }
}

#[test]
fn points_on_a_plane_and_a_sphere_keep_their_residual_and_move_along_them() {
    for (name, integrator) in integrators() {
        let mut w = World::new(
            vec![body("cube", Vector3::zeros(), 0.0)],
            gravity(),
            0.02,
            integrator,
        )
        .unwrap();
        let a = w.material_point(0, Vector3::new(0.0, 0.0, 0.1)).unwrap();
        let b = w.material_point(0, Vector3::new(0.1, 0.1, 0.1)).unwrap();
        // The corner (0, 0, 0.1) slides on the tilted plane through it; the opposite top
        // corner on a sphere of radius 0.2 about a point above and beside it.
        let normal = Vector3::new(1.0, 0.0, 1.0);
        let center = Vector3::new(0.1, 0.1 - 0.2, 0.1);
        for (point, kind) in [
            (
                a,
                ExactKind::Plane {
                    origin: Vector3::new(0.0, 0.0, 0.1),
                    normal,
                },
            ),
            (
                b,
                ExactKind::Sphere {
                    center,
                    radius: 0.2,
                },
            ),
        ] {
            w.constrain(ExactConstraint {
                point,
                kind,
                release: None,
            })
            .unwrap();
        }
        let mut worst: f64 = 0.0;
        for _ in 0..500 {
            w.step().unwrap_or_else(|e| panic!("{name}: {e}"));
            let x = &w.bodies[0].x;
            let on_plane = normal
                .normalize()
                .dot(&(a.eval(x) - Vector3::new(0.0, 0.0, 0.1)));
            let on_sphere = (b.eval(x) - center).norm() - 0.2;
            worst = worst.max(on_plane.abs()).max(on_sphere.abs());
        }
        assert!(worst <= 1e-8, "{name}: residual {worst:e}");
        // Both points moved (they slide, they are not pinned).
        let x = &w.bodies[0].x;
        assert!(
            (a.eval(x) - Vector3::new(0.0, 0.0, 0.1)).norm() > 1e-3,
            "{name}"
        );
        assert!(
            (b.eval(x) - Vector3::new(0.1, 0.1, 0.1)).norm() > 1e-3,
            "{name}"
        );
    }
}

/// Two free cubes side by side, no gravity, linked at their shared face's centre; one is
/// thrown sideways. Each cube's momentum changes; the pair's is conserved (the link's
/// impulses are equal and opposite) and the link holds. RKF45 steps the two cubes as one
/// linked group (eq. 8 across both bodies in every stage); the implicit integrators step
/// them apart and rely on the projection after the step.
#[test]
fn a_link_between_two_bodies_pulls_both_equally_and_oppositely() {
    for (name, integrator) in integrators() {
        let left = body("left", Vector3::zeros(), 0.0);
        let mut right = body("right", Vector3::new(0.1, 0.0, 0.0), 0.0);
        right.v.fill(Vector3::new(0.0, 0.5, 0.2));
        let p0 = right.momentum();
        let mut w = World::new(vec![left, right], Vector3::zeros(), 0.01, integrator).unwrap();
        let joint = Vector3::new(0.1, 0.05, 0.05);
        let a = w.material_point(0, joint).unwrap();
        let b = w.material_point(1, joint).unwrap();
        let id = (w.constrain(ExactConstraint {
            point: a,
            kind: ExactKind::Link { other: b },
            release: None,
        }))
        .unwrap();
        for _ in 0..100 {
            w.step().unwrap_or_else(|e| panic!("{name}: {e}"));
            let (l, r) = (&w.bodies[0], &w.bodies[1]);
            assert!((a.eval(&l.x) - b.eval(&r.x)).amax() <= 1e-8, "{name}");
            let total = l.momentum() + r.momentum();
            assert!(
                (total - p0).amax() <= 1e-9 * p0.norm(),
                "{name}: momentum {total} vs {p0}"
            );
        }
        // The left cube was dragged along: it carries a good share of the momentum.
        let pl = w.bodies[0].momentum();
        assert!(pl.dot(&p0) > 0.2 * p0.norm_squared(), "{name}: {pl}");
        assert!(w.constraint_force(id).unwrap().norm() > 0.0, "{name}");
    }
}

/// A cube hangs under a clamped one by a link, at a 10 ms world step, for 8 s: the link
/// carries the hanging cube's weight on average, and the reported force is exactly what the
/// link gave it. Linearized backward Euler: stiffness-proportional damping settles the cube
/// (mass-proportional damping would carry part of the weight). RKF45 steps the pair as one
/// linked group and reports the stage multipliers' force with the projection's; it runs
/// undamped (`β K v` with `β = 0.2` s would make the explicit scheme take ~1e-5 s steps), so
/// the cube keeps vibrating and the mean force is the weight up to that vibration's momentum
/// over the window. Before linked groups RKF45 diverged here: the hanging cube fell freely
/// for a whole world step before the projection yanked it back.
#[test]
fn a_link_carries_the_weight_of_the_body_hanging_from_it() {
    let implicit = IntegratorKind::BackwardEulerLinearized {
        solver: LinearSolverKind::Pcg(common::pcg(1e-12)),
        warm_start: WarmStart::Extrapolate,
    };
    let rkf45 = IntegratorKind::Rkf45 {
        rtol: 1e-4,
        atol: 1e-7,
        substeps: 0,
    };
    for (name, integrator, beta) in [
        ("backward_euler_linearized", implicit, 0.2),
        ("rkf45", rkf45, 0.0),
    ] {
        let top = Body::new(
            BodyDesc::new("top", cube(Vector3::zeros()), COROT, 1e6, 0.3, 1000.0)
                .with_damping(0.0, beta)
                .with_fixed_where(|x| x.z > 0.099),
        )
        .unwrap();
        let mut hanging = body("hanging", Vector3::new(0.0, 0.0, -0.1), 0.0);
        hanging.damping.beta = beta;
        let m = mass(&hanging);
        let mut w = World::new(vec![hanging, top], gravity(), 0.01, integrator).unwrap();
        let joint = Vector3::new(0.05, 0.05, 0.0);
        let a = w.material_point(0, joint).unwrap();
        let b = w.material_point(1, joint).unwrap();
        let id = (w.constrain(ExactConstraint {
            point: a,
            kind: ExactKind::Link { other: b },
            release: None,
        }))
        .unwrap();
        for _ in 0..300 {
            w.step().unwrap_or_else(|e| panic!("{name}: {e}"));
        }
        // Over a window, the hanging cube's momentum changes by its weight's impulse and the
        // link's: the reported force must be exactly what the link gave it, and on average its
        // weight (the cube still bounces slowly; its momentum change over the window is small).
        let (p0, steps) = (w.bodies[0].momentum(), 500);
        let mut impulse = Vector3::zeros();
        let mut residual = 0.0_f64;
        for _ in 0..steps {
            w.step().unwrap_or_else(|e| panic!("{name}: {e}"));
            impulse += w.constraint_force(id).unwrap() * w.dt;
            residual = residual.max(w.constraint_residual());
        }
        assert!(residual <= 1e-8, "{name}: residual {residual:e}");
        let span = steps as f64 * w.dt;
        let dp = w.bodies[0].momentum() - p0;
        let weight = Vector3::new(0.0, 0.0, -m * G);
        assert!(
            (dp - (impulse + weight * span)).norm() <= 1e-6 * m * G * span,
            "{name}: momentum change {dp} vs impulses {}",
            impulse + weight * span
        );
        let mean = impulse / span;
        assert!(
            (mean + weight).norm() <= 0.01 * m * G,
            "{name}: mean link force {mean} vs weight {}",
            m * G
        );
    }
}

#[test]
fn a_dragged_point_follows_its_path_exactly_and_is_free_after_release() {
    let mut w = World::new(
        vec![body("cube", Vector3::zeros(), 0.0)],
        Vector3::zeros(),
        0.01,
        IntegratorKind::Rkf45 {
            rtol: 1e-5,
            atol: 1e-8,
            substeps: 0,
        },
    )
    .unwrap();
    let at = Vector3::new(0.05, 0.05, 0.05);
    let point = w.material_point(0, at).unwrap();
    let path = Keyframes::new(
        vec![
            (0.0, at),
            (0.5, at + Vector3::new(0.1, 0.0, 0.0)),
            (1.0, at + Vector3::new(0.1, 0.1, 0.0)),
        ],
        Interpolation::CatmullRom,
    )
    .unwrap();
    w.constrain(ExactConstraint {
        point,
        kind: ExactKind::Point { path: path.clone() },
        release: Some(1.0),
    })
    .unwrap();
    for _ in 0..100 {
        w.step().unwrap();
        let p = point.eval(&w.bodies[0].x);
        assert!((p - path.at(w.time)).amax() <= 1e-10, "t = {}", w.time);
    }
    assert_eq!(w.exact_constraints().count(), 1);
    w.step().unwrap();
    assert_eq!(w.exact_constraints().count(), 0);
    // Free: with no gravity, the body coasts with the momentum the drag gave it.
    let p = w.bodies[0].momentum();
    assert!(p.norm() > 1e-3);
    for _ in 0..20 {
        w.step().unwrap();
    }
    assert!((w.bodies[0].momentum() - p).amax() <= 1e-9 * p.norm());
}

#[test]
fn impossible_constraints_are_refused() {
    let mut held = body("cube", Vector3::zeros(), 0.0);
    held.fixed.fill(true);
    let mut w = World::new(vec![held], gravity(), 0.01, integrators().remove(1).1).unwrap();
    let fixed_vertex = BodyPoint::vertex(0, 0);
    let plane = |normal| ExactKind::Plane {
        origin: Vector3::zeros(),
        normal,
    };
    let err = |w: &mut World, point, kind| {
        w.constrain(ExactConstraint {
            point,
            kind,
            release: None,
        })
    };
    assert!(matches!(
        err(&mut w, fixed_vertex, plane(Vector3::zeros())),
        Err(WorldError::Exact(_))
    ));
    assert!(matches!(
        err(&mut w, BodyPoint::vertex(0, 1000), plane(Vector3::z())),
        Err(WorldError::Exact(_))
    ));
    assert!(matches!(
        err(&mut w, BodyPoint::vertex(3, 0), plane(Vector3::z())),
        Err(WorldError::Exact(_))
    ));
    // On a held vertex a constraint that is not met cannot be met: the step says so.
    err(
        &mut w,
        fixed_vertex,
        plane(Vector3::new(1.0, 0.0, 0.0)).clone(),
    )
    .unwrap();
    w.constrain(ExactConstraint {
        point: fixed_vertex,
        kind: ExactKind::Plane {
            origin: Vector3::new(0.5, 0.0, 0.0),
            normal: Vector3::x(),
        },
        release: None,
    })
    .unwrap();
    let e = w.step().unwrap_err();
    assert!(e.reason.contains("cannot be met"), "{e}");
}
