//! Grab a clamped bar's free end with a spring and drag it up, as a mouse would: `grab`
//! takes the surface point nearest to a position, `move_grab` moves the spring's target each
//! step, `grab_force` reads what the spring pulls with. `cargo run --release -p supple
//! --example grab_and_drag`.

use supple::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mesh = box_grid(&BoxGrid {
        cells: [6, 1, 1],
        cell_size: Vector3::repeat(0.1),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    });
    let bar = BodyDesc::of(mesh)
        .name("bar")
        .youngs(1e5)
        .poisson(0.33)
        .fix_where(|p| p.x < 1e-9);
    let mut world = World::builder().body(bar).no_gravity().build()?;
    let end = Vector3::new(0.6, 0.05, 0.05);
    let spring = GrabSettings {
        stiffness: 200.0,
        damping: 1.0,
    };
    let grab = world.grab(0, end, spring)?;
    for step in 1..=30 {
        // The target rises 1 cm per step: 0.3 m in all.
        world.move_grab(grab, end + Vector3::new(0.0, 0.01 * step as f64, 0.0))?;
        world.step()?;
    }
    let tip = world.bodies[0]
        .x
        .iter()
        .map(|p| p.y)
        .fold(f64::NEG_INFINITY, f64::max);
    let force = world.grab_force(grab).ok_or("the grab is held")?;
    println!(
        "tip at y = {tip:.3} m, the spring pulls with {:.2} N",
        force.norm()
    );
    assert!(tip > 0.1, "the free end follows the grab");
    world.release(grab)?;
    Ok(())
}

#[test]
fn runs() {
    main().unwrap();
}
