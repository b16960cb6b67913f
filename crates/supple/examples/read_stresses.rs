//! Read stresses: a cantilever sags under gravity and the per-element von Mises stress
//! (`Body::von_mises_stress`, Pa) is largest at the clamp, as beam theory says.
//! `cargo run --release -p supple --example read_stresses`.

use supple::prelude::*;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mesh = box_grid(&BoxGrid {
        cells: [8, 1, 1],
        cell_size: Vector3::repeat(0.05),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    });
    let beam = BodyDesc::of(mesh)
        .name("beam")
        .youngs(2e5)
        .poisson(0.3)
        .fix_where(|p| p.x < 1e-9);
    let mut world = World::builder().body(beam).build()?;
    for _ in 0..20 {
        world.step()?;
    }
    let body = &mut world.bodies[0];
    let stress = body
        .von_mises_stress()
        .ok_or("the corotational model has a stress")?;
    // Mean stress of the tets in the first and the last cell along x.
    let centroid_x = |t: &[u32; 4]| {
        t.iter()
            .map(|&v| body.mesh.positions[v as usize].x)
            .sum::<f64>()
            / 4.0
    };
    let mean_where = |keep: &dyn Fn(f64) -> bool| {
        let s: Vec<f64> = body
            .mesh
            .tets
            .iter()
            .zip(&stress)
            .filter(|(t, _)| keep(centroid_x(t)))
            .map(|(_, s)| *s)
            .collect();
        s.iter().sum::<f64>() / s.len() as f64
    };
    let (clamp, tip) = (mean_where(&|x| x < 0.05), mean_where(&|x| x > 0.35));
    println!("von Mises stress: {clamp:.1} Pa at the clamp, {tip:.1} Pa at the tip");
    assert!(
        clamp > 3.0 * tip,
        "the bending moment is largest at the clamp"
    );
    Ok(())
}

#[test]
fn runs() {
    main().unwrap();
}
