//! Write ParaView frames from your own step loop: one VTU per frame (positions, velocity
//! and von Mises stress) and a PVD collection that ParaView opens as an animation.
//! `cargo run --release -p supple-io --example paraview_frames -- OUT_DIR` (default: a
//! folder under the system's temporary directory).

use std::path::PathBuf;
use supple::prelude::*;
use supple_io::vtu::{write_pvd, write_vtu, VtuFrame};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args().nth(1).map_or_else(
        || std::env::temp_dir().join(format!("supple-paraview-{}", std::process::id())),
        PathBuf::from,
    );
    std::fs::create_dir_all(out.join("frames"))?;
    let mesh = box_grid(&BoxGrid {
        cells: [4, 1, 1],
        cell_size: Vector3::repeat(0.1),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    });
    let bar = BodyDesc::of(mesh).name("bar").fix_where(|p| p.x < 1e-9);
    let integrator = IntegratorKind::BackwardEulerLinearized {
        solver: LinearSolverKind::Pcg(PcgSettings::default()),
        warm_start: WarmStart::Extrapolate,
    };
    let gravity = Vector3::new(0.0, -9.81, 0.0);
    let mut world = World::new(vec![Body::new(bar)?], gravity, 0.01, integrator)?;
    let mut entries = Vec::new();
    for frame in 0..=10 {
        if frame > 0 {
            for _ in 0..2 {
                world.step()?;
            }
        }
        let body = &mut world.bodies[0];
        let stress = body.von_mises_stress().unwrap_or_default();
        let mut vtu = VtuFrame::new(&body.x, &body.mesh.tets);
        vtu.point_vectors.push(("velocity", &body.v));
        vtu.cell_scalars.push(("von_mises", &stress));
        let name = format!("frames/bar_{frame:04}.vtu");
        write_vtu(&out.join(&name), &vtu)?;
        entries.push((world.time, name));
    }
    write_pvd(&out.join("bar.pvd"), &entries)?;
    println!("open {} in ParaView", out.join("bar.pvd").display());
    assert!(std::fs::read_to_string(out.join("bar.pvd"))?.contains("bar_0010.vtu"));
    Ok(())
}

#[test]
fn runs() {
    main().unwrap();
}
