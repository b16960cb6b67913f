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

/// The torus thrown over the post, with the projection response (every vertex is projected
/// out of the obstacles) and with the default, IPC, whose obstacles meet the surface's
/// vertices, edges and faces (`contact/ipc/potential/obstacle_core.rs`; with vertex pairs
/// alone the 2 cm post pressed into the torus's 2 cm triangles and put interior vertices
/// 2.55 mm inside it): no vertex, surface or interior, ends a step inside the post or below
/// the ground.
#[test]
fn torus_never_ends_a_step_inside_the_post_or_below_the_ground() {
    for projection in [true, false] {
        let mut s = scene("torus_post");
        if projection {
            s.contact.as_mut().unwrap().response = supple::contact::Response::Projection;
        }
        let mut w = s.build_world().unwrap();
        let obstacles = w.contact().unwrap().settings().obstacles.clone();
        let (mut touched, mut deepest) = (false, 0.0_f64);
        for _ in 0..250 {
            w.step().unwrap();
            let t = w.time;
            for o in &obstacles {
                for (i, p) in w.bodies[0].x.iter().enumerate() {
                    let d = o.proximity(t, p).distance;
                    assert!(
                        d > -1e-9,
                        "projection {projection}, t = {t}: vertex {i} is {d} m inside `{}`",
                        o.name
                    );
                    deepest = deepest.max(-d);
                }
            }
            touched |= match w.ipc() {
                Some(ipc) => ipc.last.pairs > 0,
                None => w.contact_stats().unwrap().contacts > 0,
            };
        }
        eprintln!("projection {projection}: deepest vertex {deepest:.3e} m inside an obstacle");
        assert!(touched, "the torus never reached the post or the ground");
    }
}
