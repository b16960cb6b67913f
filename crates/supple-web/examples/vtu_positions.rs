//! The last frame of a `supple run` as JSON, for the browser test's comparison of the page's
//! positions with a native run: `vtu_positions RUN_DIR > native.json` prints
//! `{"time", "file", "positions": [x, y, z, ...]}` (every body's vertices in the scene's body
//! order, full `f64` precision: serde_json prints the shortest decimal that reads back to
//! the same bits). `web.sh test` runs it; `browser-test/test.mjs` compares.

use std::path::PathBuf;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .ok_or("usage: vtu_positions RUN_DIR")?,
    );
    let entries = supple_io::vtu_read::read_pvd(&dir.join("scene.pvd"))?;
    let last_time = entries.last().ok_or("scene.pvd lists no frame")?.0;
    // Multi-body runs list one dataset per body at each time, in body order.
    let mut positions = Vec::new();
    let mut files = Vec::new();
    for (_, file) in entries.iter().filter(|(t, _)| *t == last_time) {
        let frame = supple_io::vtu_read::read_vtu(&dir.join(file))?;
        positions.extend(frame.positions.iter().flat_map(|p| [p.x, p.y, p.z]));
        files.push(file.clone());
    }
    let out = serde_json::json!({ "time": last_time, "files": files, "positions": positions });
    println!("{out}");
    Ok(())
}
