// Grab a body by a surface point and drag it, as a mouse or a haptic device would: the
// spring is inside the implicit solve, and its force is what a device would render.
use std::path::Path;
use supple::nalgebra::Vector3;
use supple::world::GrabSettings;

const SCENE: &str = r#"
dt = 0.01
duration = 1.0
[[body]]
name = "bar"
mesh = { kind = "box", cells = [6, 2, 2], cell_size = 0.05 }
material = { model = "corotational", youngs = 1e5, poisson = 0.33, density = 1000.0 }
damping = { alpha = 0.5, beta = 0.0 }
fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }]
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scene = supple_io::parse_scene(SCENE, Path::new("drag.toml"))?;
    let mut world = scene.build_world()?;
    // The surface point nearest to the free end's top edge, on a 2 kN/m spring.
    let settings = GrabSettings {
        stiffness: 2000.0,
        damping: 20.0,
    };
    let hand = world.grab(0, Vector3::new(0.3, 0.1, 0.05), settings)?;
    for step in 0..50 {
        // Lift the spring's other end 4 mm a step, then hold it.
        let lift = 0.004 * (step.min(25) as f64);
        world.move_grab(hand, Vector3::new(0.3, 0.1 + lift, 0.05))?;
        world.step()?;
    }
    let force = world.grab_force(hand).expect("the grab is live");
    println!("the spring pulls with {force:?} N");
    assert!(force.y > 0.0, "it pulls up");
    world.release(hand)?;
    world.step()?;
    Ok(())
}
