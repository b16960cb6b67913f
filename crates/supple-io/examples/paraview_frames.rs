//! Write ParaView frames from your own step loop: one VTU per frame (positions, velocity
//! and von Mises stress) and a PVD collection that ParaView opens as an animation. The
//! collection is a [`PvdWriter`], valid after every frame: a loop stopped at any point
//! leaves one ParaView reads. (`supple_run::frames::FrameWriter` writes the frames of a
//! scene, with `supple run`'s fields; this is the way for a world you set up yourself.)
//! `cargo run --release -p supple-io --example paraview_frames -- OUT_DIR` (default: a
//! folder under the system's temporary directory).

use std::path::{Path, PathBuf};
use supple::prelude::*;
use supple_io::pvd::{PvdEntry, PvdWriter};
use supple_io::vtu::{write_vtu, VtuFrame};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args().nth(1).map_or_else(
        || std::env::temp_dir().join(format!("supple-paraview-{}", std::process::id())),
        PathBuf::from,
    );
    write_frames(&out)
}

/// Steps a clamped bar for 0.2 s and writes a frame every 2 steps into `out`.
fn write_frames(out: &Path) -> Result<(), Box<dyn std::error::Error>> {
    std::fs::create_dir_all(out.join("frames"))?;
    let mesh = box_grid(&BoxGrid {
        cells: [4, 1, 1],
        cell_size: Vector3::repeat(0.1),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    });
    let bar = BodyDesc::of(mesh).name("bar").fix_where(|p| p.x < 1e-9);
    let mut world = World::builder().body(bar).dt(0.01).build()?;
    let mut pvd = PvdWriter::create(&out.join("bar.pvd"))?;
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
        pvd.push(&PvdEntry {
            time: world.time,
            part: 0,
            name: None,
            file: name,
        })?;
    }
    println!("open {} in ParaView", out.join("bar.pvd").display());
    assert!(std::fs::read_to_string(out.join("bar.pvd"))?.contains("bar_0010.vtu"));
    Ok(())
}

#[test]
fn runs() {
    let out = std::env::temp_dir().join(format!("supple-paraview-test-{}", std::process::id()));
    write_frames(&out).unwrap();
    std::fs::remove_dir_all(&out).unwrap();
}
