//! Size and write time of one output frame of the 160k-tet bar (scenes/bench/bar_160k.toml:
//! 80×20×20 cells, 5 tets each), with the fields `supple run` writes.
//!
//! `cargo run --release -p supple-io --example vtu_frame_cost [-- OUT_DIR]` (RAYON_NUM_THREADS
//! sets the threads that compress blocks).

use std::time::Instant;
use supple::mesh::{box_grid, BoxGrid, TetSplit};
use supple::nalgebra::Vector3;
use supple_io::vtu::{write_vtu_with, VtuEncoding, VtuFrame};
use supple_io::vtu_read::read_vtu;

fn main() {
    let dir = std::env::args()
        .nth(1)
        .map_or_else(std::env::temp_dir, Into::into);
    let mesh = box_grid(&BoxGrid {
        cells: [80, 20, 20],
        cell_size: Vector3::repeat(0.0125),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    });
    // A deformed state: smooth but not trivially compressible fields.
    let x: Vec<Vector3<f64>> = (mesh.positions.iter())
        .map(|p| p + Vector3::new(0.0, -0.1 * (p.x * 1.7).sin() * p.x, 0.01 * p.y * p.z))
        .collect();
    let disp: Vec<Vector3<f64>> = x.iter().zip(&mesh.positions).map(|(a, b)| a - b).collect();
    let v: Vec<Vector3<f64>> = disp.iter().map(|d| d * 3.1).collect();
    let fixed: Vec<f64> = (mesh.positions.iter())
        .map(|p| f64::from(u8::from(p.x == 0.0)))
        .collect();
    let ratios: Vec<f64> = (0..mesh.tets.len())
        .map(|i| 1.0 + 1e-3 * (i as f64).sin())
        .collect();
    let vm: Vec<f64> = ratios.iter().map(|r| 1e4 * (r - 1.0).abs()).collect();
    let frame = VtuFrame {
        point_vectors: vec![("displacement", &disp), ("velocity", &v)],
        point_scalars: vec![("fixed", &fixed)],
        cell_scalars: vec![("volume_ratio", &ratios), ("von_mises", &vm)],
        ..VtuFrame::new(&x, &mesh.tets)
    };
    for (label, encoding) in [("raw", VtuEncoding::Raw), ("zlib", VtuEncoding::Zlib)] {
        let path = dir.join(format!("vtu_frame_cost_{label}.vtu"));
        let mut times = Vec::new();
        for _ in 0..7 {
            let t = Instant::now();
            write_vtu_with(&path, &frame, encoding).expect("write");
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
        times.sort_by(f64::total_cmp);
        let bytes = std::fs::metadata(&path).expect("size").len();
        let t = Instant::now();
        let back = read_vtu(&path).expect("read");
        let read_ms = t.elapsed().as_secs_f64() * 1e3;
        assert_eq!(back.tets, mesh.tets);
        println!(
            "{label}: {} points, {} tets: {bytes} bytes ({:.2} MB), write median {:.1} ms (min {:.1}) over 7, read {read_ms:.1} ms, {} threads",
            x.len(),
            mesh.tets.len(),
            bytes as f64 / 1e6,
            times[3],
            times[0],
            rayon::current_num_threads()
        );
    }
}
