//! The verdict on a run's end state (`supple::world::verdict`): bodies inside each other, a
//! surface through itself, inverted tets, volume out of range and energy created each fail
//! it, with a reason; a healthy run has none; the per-step measurements allocate nothing.

use supple::body::{Body, BodyDesc};
use supple::contact::ContactSettings;
use supple::fem::material::ModelKind;
use supple::nalgebra::Vector3;
use supple::world::verdict::{Invalid, RunWatch};
use supple::world::{StepControl, World};

mod common;

use common::{cube_mesh, implicit, COROTATIONAL};

#[global_allocator]
static ALLOC: common::Counting = common::Counting;

/// Two 2×2×2-cell cubes of 10 cm, the second at `origin`, in zero gravity.
fn two_cubes(origin: Vector3<f64>, contact: bool) -> World {
    let bodies = vec![
        Body::new(BodyDesc::new(
            "a",
            cube_mesh(2, 0.05, Vector3::zeros()),
            COROTATIONAL,
            1e5,
            0.3,
            1000.0,
        ))
        .unwrap(),
        Body::new(BodyDesc::new(
            "b",
            cube_mesh(2, 0.05, origin),
            COROTATIONAL,
            1e5,
            0.3,
            1000.0,
        ))
        .unwrap(),
    ];
    let w = World::new(bodies, Vector3::zeros(), 0.01, implicit()).unwrap();
    if contact {
        w.with_contact(ContactSettings::default()).unwrap()
    } else {
        w
    }
}

fn one_cube(model: ModelKind, velocity: Vector3<f64>) -> World {
    let desc = BodyDesc {
        velocity,
        ..BodyDesc::new(
            "cube",
            cube_mesh(2, 0.05, Vector3::zeros()),
            model,
            1e5,
            0.3,
            1000.0,
        )
    };
    World::new(
        vec![Body::new(desc).unwrap()],
        Vector3::zeros(),
        0.01,
        implicit(),
    )
    .unwrap()
}

fn kinds(invalid: &[Invalid]) -> Vec<&'static str> {
    invalid.iter().map(Invalid::kind).collect()
}

#[test]
fn bodies_inside_each_other_fail_where_they_should_collide() {
    // b's corner region overlaps a's: a's vertices at x = 0.1, y, z ∈ {0.05, 0.1} are inside
    // b, and b's at x = 0.06, y, z ∈ {0.01, 0.06} inside a.
    let origin = Vector3::new(0.06, 0.01, 0.01);
    let mut w = two_cubes(origin, true);
    let mut watch = RunWatch::new(&mut w);
    let (end, invalid) = w.end_verdict(&mut watch);
    assert_eq!(end.intersections.inside, vec![4, 4]);
    assert_eq!(kinds(&invalid), ["interpenetration", "interpenetration"]);
    let text = invalid[0].to_string();
    assert!(
        text.contains("4 vertices of body `a`") && text.contains("inside `b`"),
        "{text}"
    );
    // Without body–body contact the bodies pass through each other by the scene's choice:
    // counted, not judged.
    let mut w = two_cubes(origin, false);
    let mut watch = RunWatch::new(&mut w);
    let (end, invalid) = w.end_verdict(&mut watch);
    assert_eq!(end.intersections.inside_total(), 8);
    assert!(invalid.is_empty(), "{invalid:?}");
    // Apart, or face to face: nothing.
    for origin in [Vector3::new(0.2, 0.0, 0.0), Vector3::new(0.1, 0.0, 0.0)] {
        let mut w = two_cubes(origin, true);
        let mut watch = RunWatch::new(&mut w);
        assert_eq!(w.end_verdict(&mut watch).1, vec![]);
    }
}

#[test]
fn a_surface_through_itself_fails_whatever_the_contact_settings() {
    let mut w = one_cube(COROTATIONAL, Vector3::zeros());
    // Drag the corner at the origin through the cube and out past the opposite corner.
    w.bodies[0].x[0] = Vector3::new(0.14, 0.13, 0.12);
    let mut watch = RunWatch::new(&mut w);
    let (end, invalid) = w.end_verdict(&mut watch);
    assert!(end.intersections.self_crossings[0] > 0);
    assert!(
        kinds(&invalid).contains(&"self_intersection"),
        "{invalid:?}"
    );
    assert!(kinds(&invalid).contains(&"inverted_tets"), "{invalid:?}");
}

#[test]
fn inverted_tets_fail_a_barrier_model_always_and_others_beyond_their_share() {
    // The centre vertex of the 3×3×3 lattice pushed 1.4 cells along x, past the face x = 0.1:
    // the tets around it on that side invert; the boundary does not move (no self-crossing,
    // the same enclosed volume).
    let centre = 13;
    for (model, share, fails) in [
        (ModelKind::LiesenfeldStolfi, 1.0, true),
        (COROTATIONAL, 0.0, true),
        (COROTATIONAL, 0.5, false),
    ] {
        let mut w = one_cube(model, Vector3::zeros())
            .with_step_control(StepControl {
                end_inverted_share: share,
                ..StepControl::default()
            })
            .unwrap();
        assert_eq!(w.bodies[0].x[centre], Vector3::repeat(0.05));
        w.bodies[0].x[centre].x = 0.12;
        let mut watch = RunWatch::new(&mut w);
        let (end, invalid) = w.end_verdict(&mut watch);
        assert!(end.inverted[0] > 0);
        assert_eq!(end.intersections.self_crossings, vec![0]);
        assert_eq!(
            kinds(&invalid) == ["inverted_tets"],
            fails,
            "{model:?}: {invalid:?}"
        );
        if let [Invalid::Inverted { barrier, .. }] = invalid.as_slice() {
            assert_eq!(*barrier, model == ModelKind::LiesenfeldStolfi);
        }
    }
}

#[test]
fn a_crushed_body_fails_the_volume_range() {
    let mut w = one_cube(COROTATIONAL, Vector3::zeros());
    for x in &mut w.bodies[0].x {
        x.y *= 0.05;
    }
    let mut watch = RunWatch::new(&mut w);
    let (end, invalid) = w.end_verdict(&mut watch);
    assert!((end.volume_ratio[0] - 0.05).abs() < 1e-9);
    assert_eq!(kinds(&invalid), ["volume"]);
}

#[test]
fn energy_put_in_over_a_step_is_seen_unless_something_outside_did_work() {
    for driven in [false, true] {
        let mut w = one_cube(COROTATIONAL, Vector3::new(1.0, 0.0, 0.0));
        let mut watch = RunWatch::new(&mut w);
        for step in 0..10 {
            if step == 5 {
                // Energy from nowhere: the body suddenly 20 % faster (K × 1.44).
                for v in &mut w.bodies[0].v {
                    *v *= 1.2;
                }
                if driven {
                    w.apply_forces(0, &[0], &[Vector3::new(0.0, 1e-3, 0.0)])
                        .unwrap();
                }
            }
            w.step().unwrap();
            watch.after_step(&mut w);
        }
        let (counted, skipped, why) = watch.energy_steps();
        let rise = watch.energy_rise_max().unwrap();
        let (_, invalid) = w.end_verdict(&mut watch);
        if driven {
            assert_eq!((counted, skipped), (9, 1));
            assert_eq!(why, Some("external forces were applied"));
            // Nothing created: what is left is the solves' error (their tolerance is 1e-6;
            // 3.7e-9 measured with `auto`'s choice on this cube, below 1e-9 with Eisenstat
            // SSOR).
            assert!(rise < 1e-7, "{rise}");
            assert!(invalid.is_empty(), "{invalid:?}");
        } else {
            assert_eq!((counted, skipped, why), (10, 0, None));
            // ΔK = 0.44 K₀ over the step, the scale is the largest K = 1.44 K₀.
            assert!((rise - 0.44 / 1.44).abs() < 1e-6, "{rise}");
            assert_eq!(kinds(&invalid), ["energy_created"]);
            assert!(matches!(invalid[0], Invalid::EnergyCreated { step: 6, .. }));
        }
    }
}

#[test]
fn a_healthy_run_is_valid_and_its_measurements_allocate_nothing() {
    let desc = common::bar(
        [6, 2, 2],
        0.1,
        supple::mesh::TetSplit::Five,
        COROTATIONAL,
        true,
    )
    .with_damping(1.0, 0.0);
    let mut w = common::world(desc, 9.81, 0.01, common::pcg(1e-10));
    let mut watch = RunWatch::new(&mut w);
    for step in 0..40 {
        w.step().unwrap();
        let before = common::allocations();
        watch.after_step(&mut w);
        let made = common::allocations() - before;
        assert_eq!(made, 0, "step {step}: after_step allocated");
        if step % 4 == 0 {
            watch.after_frame(&w);
        }
    }
    // The queries' workspaces only grow when a query meets more overlapping boxes than any
    // before (the first builds the trees); on a state already seen they allocate nothing.
    watch.after_frame(&w);
    for _ in 0..3 {
        let before = common::allocations();
        watch.after_frame(&w);
        assert_eq!(common::allocations() - before, 0, "after_frame allocated");
    }
    let rise = watch.energy_rise_max().unwrap();
    assert!((0.0..1e-3).contains(&rise), "{rise}");
    assert!(watch.energy_scale() > 0.0);
    let (end, invalid) = w.end_verdict(&mut watch);
    assert!(invalid.is_empty(), "{invalid:?}");
    assert_eq!(end.inverted, vec![0]);
    assert_eq!(watch.inside_max(), &[0]);
}

#[test]
fn the_verdict_settings_are_checked() {
    for control in [
        StepControl {
            max_energy_rise: f64::NAN,
            ..StepControl::default()
        },
        StepControl {
            end_inverted_share: 1.5,
            ..StepControl::default()
        },
    ] {
        assert!(control.validate().is_err(), "{control:?}");
    }
    let off = StepControl {
        max_energy_rise: f64::INFINITY,
        ..StepControl::default()
    };
    assert!(off.validate().is_ok());
}
