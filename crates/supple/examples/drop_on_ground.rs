//! Drop a soft cube on the ground: a box mesh (a Gmsh or TetGen file read with
//! `supple_io::import::read_mesh` works the same), a ground plane obstacle, and the world's
//! step loop. `cargo run --release -p supple --example drop_on_ground`.

use supple::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mesh = box_grid(&BoxGrid {
        cells: [3, 3, 3],
        cell_size: Vector3::repeat(0.1),
        origin: Vector3::new(-0.15, 0.2, -0.15),
        split: TetSplit::Five,
    });
    let cube = BodyDesc::of(mesh)
        .name("cube")
        .corotational()
        .youngs(5e4)
        .poisson(0.3);
    let ground = Obstacle::plane("ground", Vector3::zeros(), Vector3::y(), 0.5)?;
    // Gravity along −y, dt = 0.01 s and linearized backward Euler are the builder's defaults
    // (those of a scene file); named here to show where they go.
    let mut world = World::builder()
        .body(cube)
        .obstacle(ground)
        .gravity(Vector3::new(0.0, -9.81, 0.0))
        .dt(0.01)
        .build()?;
    // 0.4 s: the cube falls 0.2 m (about 0.2 s) and lands.
    for _ in 0..40 {
        world.step()?;
    }
    let lowest = world.bodies[0]
        .x
        .iter()
        .map(|p| p.y)
        .fold(f64::INFINITY, f64::min);
    println!(
        "after {:.2} s the cube's lowest point is at y = {lowest:.4} m",
        world.time
    );
    assert!(lowest < 0.19, "it fell");
    assert!(lowest > -0.01, "and the ground held it");
    Ok(())
}

#[test]
fn runs() {
    main().unwrap();
}
