// The same kind of bar set up by name: `BodyDesc::of` and `World::builder` start from the
// scene format's defaults (corotational, E = 100 kPa, ν = 0.33, ρ = 1000 kg/m³; gravity
// along −y, dt = 0.01 s, linearized backward Euler), and `build` says what is wrong.
use supple::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mesh = box_grid(&BoxGrid {
        cells: [4, 1, 1],
        cell_size: Vector3::repeat(0.1),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    });
    let bar = BodyDesc::of(mesh.clone())
        .name("bar")
        .corotational()
        .youngs(1e5)
        .poisson(0.33)
        .density(1000.0)
        .fix_where(|p| p.x < 1e-9);
    let ground = Obstacle::plane("ground", Vector3::new(0.0, -0.5, 0.0), Vector3::y(), 0.5)?;
    let mut world = World::builder().body(bar).obstacle(ground).dt(0.01).build()?;
    for _ in 0..20 {
        world.step()?;
    }
    let tip = world.body("bar").ok_or("a body named bar")?.x[4];
    println!("the tip after 0.2 s: {tip:?}");
    assert!(tip.y < -1e-3, "the free end sags");

    // Young's modulus and Poisson's ratio swapped: refused, naming the body and the key.
    let swapped = BodyDesc::of(mesh).name("bar").youngs(0.33).poisson(1e5);
    let err = World::builder().body(swapped).build().unwrap_err();
    assert_eq!(err.to_string(), "body `bar`: poisson = 100000: must be below 0.5");
    Ok(())
}
