// A bar of 4 × 1 × 1 cubes, clamped at x = 0, sags under gravity: the engine alone,
// no scene file (the supple crate; nalgebra comes re-exported as supple::nalgebra).
use supple::body::{Body, BodyDesc};
use supple::fem::material::{CorotationalTangent, ModelKind};
use supple::linalg::PcgSettings;
use supple::mesh::{box_grid, BoxGrid, TetSplit};
use supple::nalgebra::Vector3;
use supple::time::{IntegratorKind, LinearSolverKind, WarmStart};
use supple::world::World;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mesh = box_grid(&BoxGrid {
        cells: [4, 1, 1],
        cell_size: Vector3::repeat(0.1),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    });
    let model = ModelKind::corotational(CorotationalTangent::Rotated);
    // Young's modulus 100 kPa, Poisson's ratio 0.33, density 1000 kg/m³.
    let desc =
        BodyDesc::new("bar", mesh, model, 1e5, 0.33, 1000.0).with_fixed_where(|p| p.x < 1e-9);
    let integrator = IntegratorKind::BackwardEulerLinearized {
        solver: LinearSolverKind::Pcg(PcgSettings::default()),
        warm_start: WarmStart::Extrapolate,
    };
    let gravity = Vector3::new(0.0, -9.81, 0.0);
    let mut world = World::new(vec![Body::new(desc)?], gravity, 0.01, integrator)?;
    for _ in 0..50 {
        world.step()?;
    }
    let bar = &world.bodies[0];
    // Vertex 4 starts at the free end's corner (0.4, 0, 0).
    println!("the tip after 0.5 s: {:?}", bar.x[4]);
    assert!(bar.x[4].y < -1e-3, "the free end sags");
    Ok(())
}
