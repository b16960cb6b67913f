//! The bundled contact scenes keep their promises over their first part: the head-on tubes
//! never have a vertex inside the other tube (winding number) and bounce apart; the torus on
//! the post never ends a step inside the post or below the ground.

use std::path::PathBuf;
use supple_io::load_scene;

fn scene(name: &str) -> supple_io::Scene {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../../scenes/{name}.toml"));
    load_scene(&path).unwrap()
}

#[test]
fn head_on_tubes_never_interpenetrate_and_bounce_apart() {
    let mut w = scene("head_on").build_world().unwrap();
    let surfaces = w.contact().unwrap().surfaces().to_vec();
    let mut worst = 0.0f64;
    for step in 0..150 {
        w.step().unwrap();
        if step % 5 == 4 {
            for (a, b) in [(0, 1), (1, 0)] {
                for p in &w.bodies[a].x {
                    worst = worst.max(surfaces[b].winding_number(&w.bodies[b].x, p));
                }
            }
        }
    }
    assert!(
        worst < 0.5,
        "a vertex ended inside the other tube (winding {worst})"
    );
    let v = |i: usize| w.bodies[i].momentum().x / w.bodies[i].mass.total();
    assert!(v(0) < -1.0 && v(1) > 1.0, "no rebound: {} {}", v(0), v(1));
    assert_eq!(w.contact_stats().unwrap().unresolved, 0);
}

#[test]
fn torus_never_ends_a_step_inside_the_post_or_below_the_ground() {
    let mut w = scene("torus_post").build_world().unwrap();
    let obstacles = w.contact().unwrap().settings().obstacles.clone();
    let mut touched = false;
    for _ in 0..250 {
        w.step().unwrap();
        let t = w.time;
        for o in &obstacles {
            for p in &w.bodies[0].x {
                let d = o.proximity(t, p).distance;
                assert!(d > -1e-9, "t = {t}: a vertex is {d} m inside `{}`", o.name);
            }
        }
        touched |= w.contact_stats().unwrap().contacts > 0;
    }
    assert!(touched, "the torus never reached the post or the ground");
}
