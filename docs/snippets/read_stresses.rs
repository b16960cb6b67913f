// The von Mises stress of every tet: from the engine directly, and from a run's last VTU
// frame (the cell field `von_mises`, in Pa).
use std::path::Path;
use supple_io::vtu_read::{read_pvd, read_vtu};
use supple_run::{run_scene, RunOptions, Silent};

const SCENE: &str = r#"
dt = 0.01
duration = 0.3
[output]
gif = false
plots = false
color = "von_mises"
[[body]]
name = "bar"
mesh = { kind = "box", cells = [6, 2, 2], cell_size = 0.05 }
material = { model = "corotational", youngs = 1e5, poisson = 0.33, density = 1000.0 }
fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }]
"#;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scene = supple_io::parse_scene(SCENE, Path::new("stress.toml"))?;

    // 1. From the engine: step the world and ask the body.
    let mut world = scene.build_world()?;
    for _ in 0..scene.steps() {
        world.step()?;
    }
    let stress = world.bodies[0]
        .von_mises_stress()
        .expect("corotational has a stress");
    let (worst, max) = stress
        .iter()
        .enumerate()
        .fold((0, 0.0), |a, (i, &s)| if s > a.1 { (i, s) } else { a });
    println!("engine: largest von Mises stress {max:.1} Pa in tet {worst}");

    // 2. From the files of a run: the .pvd lists the frames, the last is the end state.
    let out = std::env::temp_dir().join("supple-guide-stresses");
    let opts = RunOptions {
        out: Some(out.clone()),
        quiet: true,
        force: false,
    };
    run_scene(&scene, &opts, &mut Silent)?;
    let frames = read_pvd(&out.join("scene.pvd"))?;
    let (time, file) = frames.last().expect("at least one frame");
    let frame = read_vtu(&out.join(file))?;
    let from_file = frame.cell_scalar("von_mises").expect("a von_mises field");
    let file_max = from_file.iter().cloned().fold(0.0, f64::max);
    println!("file at t = {time} s: largest von Mises stress {file_max:.1} Pa");
    assert!(max > 0.0 && (file_max - max).abs() <= 1e-6 * max);
    Ok(())
}
