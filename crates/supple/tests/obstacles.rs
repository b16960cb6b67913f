//! Velocity-projection contact against rigid obstacles (Zhuang & Canny §6, eq. 10–12):
//! single particles stepped by a hand-written symplectic Euler update followed by
//! `project_obstacles`; validation of obstacles. (Shapes and paths are
//! `tests/obstacle_shapes.rs`.)

mod common;

use supple::contact::obstacle::{Obstacle, ObstacleError, RigidPath, Shape};
use supple::contact::projection::project_obstacles;
use supple::nalgebra::{Isometry3, Vector3};

#[global_allocator]
static GLOBAL: common::Counting = common::Counting;

const G: f64 = 9.81;

fn obstacle(shape: Shape, path: RigidPath, friction: f64) -> Obstacle {
    let o = Obstacle {
        name: "o".into(),
        shape,
        path,
        friction,
    };
    o.validate().expect("valid obstacle");
    o
}
/// One particle stepped by symplectic Euler (`v += g dt; x += v dt`) and then projected.
struct Particle {
    x: [Vector3<f64>; 1],
    v: [Vector3<f64>; 1],
    t: f64,
}

impl Particle {
    fn new(x: Vector3<f64>, v: Vector3<f64>) -> Self {
        Particle {
            x: [x],
            v: [v],
            t: 0.0,
        }
    }
    /// Returns the raw end position (before projection) and the projection's statistics.
    fn step(
        &mut self,
        obstacles: &[Obstacle],
        gravity: Vector3<f64>,
        dt: f64,
        skin: f64,
    ) -> (Vector3<f64>, supple::contact::projection::ObstacleStats) {
        let x0 = self.x;
        self.v[0] += gravity * dt;
        self.x[0] += self.v[0] * dt;
        let raw = self.x[0];
        let s = project_obstacles(
            obstacles,
            self.t,
            dt,
            &[0],
            &[false],
            &x0,
            &mut self.x,
            &mut self.v,
            skin,
        );
        self.t += dt;
        (raw, s)
    }
}

#[test]
fn dropped_vertex_never_ends_below_ground() {
    let g = Vector3::new(0.0, 0.0, -G);
    for skin in [0.0, 1e-3] {
        let ground = [Obstacle::plane("ground", Vector3::zeros(), Vector3::z(), 0.4).unwrap()];
        let mut p = Particle::new(Vector3::new(0.0, 0.0, 0.5), Vector3::new(0.5, 0.0, -10.0));
        let mut deepest = 0.0f64;
        for _ in 0..200 {
            let (raw, s) = p.step(&ground, g, 0.1, skin);
            deepest = deepest.max(-raw.z);
            assert!((s.max_penetration - (-raw.z).max(0.0)).abs() < 1e-12);
            assert!(p.x[0].z >= skin - 1e-15, "ended at z = {}", p.x[0].z);
        }
        assert!(
            deepest > 0.5,
            "the raw steps must penetrate deeply: {deepest}"
        );
        // At rest on the ground (no bounce: eq. 10 removes the approach velocity).
        assert!(
            (p.x[0].z - skin).abs() < 1e-12 && p.v[0].norm() < 1e-12,
            "{:?}",
            p.v[0]
        );
    }
}

#[test]
fn no_tunnelling_through_thin_box() {
    let g = Vector3::new(0.0, 0.0, -G);
    let h = Vector3::new(1.0, 1.0, 0.001); // 2 mm thick
    let skin = 1e-4;
    let slab = [obstacle(
        Shape::Box { half_extents: h },
        RigidPath::Static(Isometry3::identity()),
        0.0,
    )];
    let mut p = Particle::new(Vector3::new(0.1, 0.0, 0.5), Vector3::new(0.0, 0.0, -10.0));
    let (raw, s) = p.step(&slab, g, 0.1, skin);
    assert!(
        raw.z < -h.z,
        "the raw first step jumps through the slab: {raw:?}"
    );
    assert_eq!(s.contacts, 1);
    for _ in 0..50 {
        p.step(&slab, g, 0.1, skin);
        assert!((p.x[0].z - (h.z + skin)).abs() < 1e-12, "{:?}", p.x[0]);
    }
    // A thin box moving up at 10 m/s sweeps through a vertex at rest (no gravity): checked in
    // the box's frame, the vertex is caught and carried along.
    let lift = [obstacle(
        Shape::Box { half_extents: h },
        RigidPath::Constant {
            start: Isometry3::identity(),
            linear: Vector3::new(0.0, 0.0, 10.0),
            angular: Vector3::zeros(),
        },
        0.0,
    )];
    let mut p = Particle::new(Vector3::new(0.2, -0.3, 0.5), Vector3::zeros());
    for k in 1..=5 {
        let (raw, s) = p.step(&lift, Vector3::zeros(), 0.1, skin);
        let top = 10.0 * 0.1 * k as f64 + h.z;
        // Later steps ride at exactly the skin, where touching is decided by rounding.
        if k == 1 {
            assert!(
                raw.z < 1.0 - h.z && s.contacts == 1,
                "raw {raw:?} is below the box"
            );
        }
        assert!(
            (p.x[0].z - (top + skin)).abs() < 1e-12
                && (p.v[0] - Vector3::new(0.0, 0.0, 10.0)).norm() < 1e-12
        );
    }
}

#[test]
fn rising_box_lifts_resting_vertex() {
    let h = Vector3::new(0.5, 0.5, 0.25);
    let lift = [obstacle(
        Shape::Box { half_extents: h },
        RigidPath::Constant {
            start: Isometry3::translation(0.0, 0.0, -0.25),
            linear: Vector3::new(0.0, 0.0, 1.0),
            angular: Vector3::zeros(),
        },
        0.3,
    )];
    let skin = 1e-3;
    let mut p = Particle::new(Vector3::new(0.1, 0.2, skin), Vector3::zeros());
    let dt = 0.01;
    for _ in 0..100 {
        let (_, s) = p.step(&lift, Vector3::new(0.0, 0.0, -G), dt, skin);
        assert_eq!(s.contacts, 1);
        assert!(
            (p.x[0].z - (p.t + skin)).abs() < 1e-12,
            "t = {}: z = {}",
            p.t,
            p.x[0].z
        );
        assert!(
            (p.v[0] - Vector3::new(0.0, 0.0, 1.0)).norm() < 1e-12,
            "{:?}",
            p.v[0]
        );
        assert!((p.x[0].xy() - Vector3::new(0.1, 0.2, 0.0).xy()).norm() < 1e-12);
    }
}

/// A box sliding at 1 m/s under a vertex at rest: friction accelerates the vertex at μg
/// (the relative velocity is what friction acts on) until it sticks and rides along.
#[test]
fn friction_drags_vertex_along_moving_box() {
    let mu = 0.5;
    let belt = [obstacle(
        Shape::Box {
            half_extents: Vector3::new(5.0, 1.0, 0.5),
        },
        RigidPath::Constant {
            start: Isometry3::translation(0.0, 0.0, -0.5),
            linear: Vector3::new(1.0, 0.0, 0.0),
            angular: Vector3::zeros(),
        },
        mu,
    )];
    let mut p = Particle::new(Vector3::zeros(), Vector3::zeros());
    let dt = 0.01;
    for _ in 0..10 {
        p.step(&belt, Vector3::new(0.0, 0.0, -G), dt, 0.0);
    }
    let slipping = mu * G * p.t;
    assert!(
        (p.v[0].x - slipping).abs() < 1e-9,
        "{} vs {slipping}",
        p.v[0].x
    );
    for _ in 0..40 {
        p.step(&belt, Vector3::new(0.0, 0.0, -G), dt, 0.0);
    }
    let stuck_at = p.x[0].x - p.t;
    for _ in 0..50 {
        p.step(&belt, Vector3::new(0.0, 0.0, -G), dt, 0.0);
        assert!(
            (p.v[0] - Vector3::new(1.0, 0.0, 0.0)).norm() < 1e-12,
            "{:?}",
            p.v[0]
        );
        assert!((p.x[0].x - p.t - stuck_at).abs() < 1e-9 && p.x[0].z.abs() < 1e-12);
    }
}

/// A spinning box pushes a vertex: after each step the vertex is outside by the skin and its
/// normal velocity equals that of the box's material point under it.
#[test]
fn rotating_box_pushes_vertex() {
    let h = Vector3::new(0.5, 0.5, 0.5);
    let omega = 2.0;
    let spinner = [obstacle(
        Shape::Box { half_extents: h },
        RigidPath::Constant {
            start: Isometry3::identity(),
            linear: Vector3::zeros(),
            angular: Vector3::new(0.0, 0.0, omega),
        },
        0.0,
    )];
    let skin = 1e-3;
    let mut p = Particle::new(Vector3::new(0.5 + skin, -0.3, 0.0), Vector3::zeros());
    let dt = 0.01;
    let mut pushed = 0;
    for _ in 0..20 {
        let (_, s) = p.step(&spinner, Vector3::zeros(), dt, skin);
        let q = spinner[0].proximity(p.t, &p.x[0]);
        assert!(q.distance > skin - 1e-12, "t = {}: {q:?}", p.t);
        if s.contacts == 1 {
            pushed += 1;
            let u = spinner[0].path.point_velocity(p.t, &p.x[0]);
            assert!(((p.v[0] - u).dot(&q.normal)).abs() < 1e-12);
            assert!((q.distance - skin).abs() < 1e-12);
        }
    }
    assert!(pushed >= 10, "pushed in {pushed} steps");
    assert!(
        p.v[0].norm() > 0.5,
        "the box set the vertex moving: {:?}",
        p.v[0]
    );
}

/// A particle resting on a slope through the origin with normal n (angle θ to vertical).
fn slope_run(theta: f64, mu: f64, steps: usize, dt: f64) -> (f64, f64) {
    let n = Vector3::new(-theta.sin(), 0.0, theta.cos());
    let slope = [Obstacle::plane("slope", Vector3::zeros(), n, mu).unwrap()];
    let skin = 1e-4;
    let start = n * skin;
    let mut p = Particle::new(start, Vector3::zeros());
    for _ in 0..steps {
        p.step(&slope, Vector3::new(0.0, 0.0, -G), dt, skin);
        assert!((p.x[0].dot(&n) - skin).abs() < 1e-12);
    }
    let down = Vector3::new(-theta.cos(), 0.0, -theta.sin());
    ((p.x[0] - start).dot(&down), p.v[0].dot(&down))
}

#[test]
fn slope_friction_sticks_and_slides() {
    let theta = 20f64.to_radians();
    let (dt, steps) = (0.01, 100);
    let t = dt * steps as f64;
    // μ = 0.5 > tan 20° = 0.364: held exactly, no creep through the position projection.
    let (s, v) = slope_run(theta, 0.5, steps, dt);
    assert!(s.abs() < 1e-12 && v.abs() < 1e-12, "crept {s} m at {v} m/s");
    // μ = 0.1: slides with a = g (sin θ − μ cos θ).
    for mu in [0.1, 0.0] {
        let a = G * (theta.sin() - mu * theta.cos());
        let (s, v) = slope_run(theta, mu, steps, dt);
        let (a_v, a_s) = (v / t, 2.0 * s / (t * t));
        eprintln!("slope 20°, μ = {mu}: a = {a:.5}, from v: {a_v:.5}, from s: {a_s:.5} m/s²");
        assert!(
            (a_v / a - 1.0).abs() < 0.01,
            "μ = {mu}: a from v = {a_v}, expected {a}"
        );
        assert!(
            (a_s / a - 1.0).abs() < 0.03,
            "μ = {mu}: a from s = {a_s}, expected {a}"
        );
    }
    // The threshold is tan θ = μ exactly.
    let (s, _) = slope_run(theta, theta.tan() * (1.0 + 1e-6), steps, dt);
    assert!(s.abs() < 1e-12);
    let (s, _) = slope_run(theta, theta.tan() * (1.0 - 1e-3), steps, dt);
    assert!(s > 1e-5, "just below the threshold it slides: {s}");
}

/// Fixed and unlisted vertices are left alone; the projection allocates nothing.
#[test]
fn skips_fixed_and_unlisted_without_allocating() {
    let mut obstacles =
        vec![Obstacle::plane("ground", Vector3::zeros(), Vector3::z(), 0.5).unwrap()];
    for k in 0..20 {
        obstacles.push(obstacle(
            Shape::Capsule {
                radius: 0.1,
                half_length: 0.2,
            },
            RigidPath::Keyframes(vec![
                (0.0, Isometry3::translation(3.0 + k as f64, 0.0, 0.0)),
                (1.0, Isometry3::translation(3.0 + k as f64, 0.0, 1.0)),
            ]),
            0.2,
        ));
    }
    let x0 = vec![Vector3::new(0.0, 0.0, 0.1); 3];
    let mut x = vec![Vector3::new(0.0, 0.0, -0.3); 3];
    let mut v = vec![Vector3::new(0.0, 0.0, -4.0); 3];
    let before = common::allocations();
    let s = project_obstacles(
        &obstacles,
        0.0,
        0.1,
        &[0, 1, 7],
        &[false, true, false],
        &x0,
        &mut x,
        &mut v,
        0.0,
    );
    assert_eq!(common::allocations(), before, "project_obstacles allocated");
    assert_eq!(s.contacts, 1);
    assert!((s.max_penetration - 0.3).abs() < 1e-12);
    assert!(x[0].z.abs() < 1e-12 && v[0].z.abs() < 1e-12);
    assert_eq!(
        (x[1], x[2]),
        (Vector3::new(0.0, 0.0, -0.3), Vector3::new(0.0, 0.0, -0.3))
    );
}

#[test]
fn validation_names_obstacle_and_field() {
    let id = RigidPath::Static(Isometry3::identity());
    let keys =
        |t: &[f64]| RigidPath::Keyframes(t.iter().map(|&t| (t, Isometry3::identity())).collect());
    let nan_spin = RigidPath::Constant {
        start: Isometry3::identity(),
        linear: Vector3::zeros(),
        angular: Vector3::new(0.0, f64::NAN, 0.0),
    };
    let capsule = |radius, half_length| Shape::Capsule {
        radius,
        half_length,
    };
    let flat = Shape::Box {
        half_extents: Vector3::new(1.0, 0.0, 1.0),
    };
    let nan_pose = RigidPath::Static(Isometry3::translation(f64::NAN, 0.0, 0.0));
    // (shape, path, μ, the field the message must name)
    let cases = [
        (
            Shape::Sphere { radius: -1.0 },
            id.clone(),
            0.0,
            "radius = -1",
        ),
        (capsule(f64::NAN, 1.0), id.clone(), 0.0, "radius = NaN"),
        (capsule(0.1, -1.0), id.clone(), 0.0, "half_length = -1"),
        (flat, id.clone(), 0.0, "half_extents.y = 0"),
        (Shape::HalfSpace, id.clone(), -0.1, "friction = -0.1"),
        (
            Shape::HalfSpace,
            keys(&[0.0, 1.0, 1.0]),
            0.0,
            "keyframe 2 has time 1",
        ),
        (
            Shape::HalfSpace,
            keys(&[0.0, f64::INFINITY]),
            0.0,
            "keyframe 1 has time inf",
        ),
        (Shape::HalfSpace, keys(&[]), 0.0, "at least one keyframe"),
        (Shape::HalfSpace, nan_pose, 0.0, "pose must be finite"),
        (Shape::HalfSpace, nan_spin, 0.0, "angular must be finite"),
    ];
    for (shape, path, friction, field) in cases {
        let o = Obstacle {
            name: "crate".into(),
            shape,
            path,
            friction,
        };
        let msg = o.validate().expect_err(field).to_string();
        assert!(
            msg.starts_with("obstacle `crate`") && msg.contains(field),
            "{msg}"
        );
    }
    let err = Obstacle::plane("p", Vector3::zeros(), Vector3::new(0.0, f64::NAN, 1.0), 0.0);
    assert!(matches!(err, Err(ObstacleError::Normal { .. })), "{err:?}");
    // A capsule of zero length (a ball) is valid.
    let ball = Obstacle {
        name: "b".into(),
        shape: capsule(0.1, 0.0),
        path: id,
        friction: 0.0,
    };
    assert!(ball.validate().is_ok());
}
