//! zlib-compressed VTU frames (issue 19): the layout VTK documents, bit-exact reading back,
//! smaller than uncompressed, and readable by meshio when it is installed.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use nalgebra::Vector3;
use std::io::Read;
use std::path::{Path, PathBuf};
use supple::mesh::{box_grid, BoxGrid, TetSplit};
use supple_io::vtu::{write_vtu, write_vtu_with, VtuEncoding, VtuFrame};
use supple_io::vtu_read::read_vtu;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-zlib-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn bits(v: &[Vector3<f64>]) -> Vec<u64> {
    v.iter()
        .flat_map(|p| p.iter().map(|c| c.to_bits()))
        .collect()
}

/// Decodes a compressed inline array by the format's description alone: a base64 header
/// `[blocks, block size, last partial size, compressed sizes...]` (UInt64), then the base64
/// of the zlib blocks.
fn inflate_array(text: &str) -> Vec<u8> {
    let first = STANDARD.decode(&text[..32]).unwrap();
    let n = u64::from_le_bytes(first[..8].try_into().unwrap()) as usize;
    let header_chars = (8 * (3 + n)).div_ceil(3) * 4;
    let header: Vec<u64> = STANDARD
        .decode(&text[..header_chars])
        .unwrap()
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let data = STANDARD.decode(&text[header_chars..]).unwrap();
    let mut out = Vec::new();
    let mut at = 0;
    for (k, &size) in header[3..].iter().enumerate() {
        let mut block = Vec::new();
        flate2::read::ZlibDecoder::new(&data[at..at + size as usize])
            .read_to_end(&mut block)
            .unwrap();
        let full = k + 1 < n || header[2] == 0;
        assert_eq!(block.len() as u64, if full { header[1] } else { header[2] });
        out.extend(block);
        at += size as usize;
    }
    assert_eq!(at, data.len());
    out
}

#[test]
fn compressed_frames_read_back_bit_exactly_and_are_smaller() {
    let dir = scratch("round");
    let mesh = box_grid(&BoxGrid {
        cells: [20, 10, 10],
        cell_size: Vector3::new(0.1, 0.07, 0.03),
        origin: Vector3::new(-1.0, 0.5, 1e-3),
        split: TetSplit::Five,
    });
    // Awkward values: subnormals, negative zero, the extremes, irrational fractions.
    let x: Vec<Vector3<f64>> = (mesh.positions.iter().enumerate())
        .map(|(i, p)| p + Vector3::new((i as f64).sqrt() * 1e-7, -0.0, 1e-310 * i as f64))
        .collect();
    let v: Vec<Vector3<f64>> = (0..x.len())
        .map(|i| {
            Vector3::new(
                f64::MAX / (i + 1) as f64,
                f64::MIN_POSITIVE,
                (i as f64).sin(),
            )
        })
        .collect();
    let s: Vec<f64> = (0..x.len()).map(|i| (i as f64).ln_1p() / 3.0).collect();
    let c: Vec<f64> = (0..mesh.tets.len()).map(|i| 1.0 / (i + 3) as f64).collect();
    let frame = VtuFrame {
        point_vectors: vec![("velocity", &v)],
        point_scalars: vec![("s", &s)],
        cell_scalars: vec![("c", &c)],
        ..VtuFrame::new(&x, &mesh.tets)
    };
    let (zipped, raw) = (dir.join("z.vtu"), dir.join("raw.vtu"));
    write_vtu(&zipped, &frame).unwrap();
    write_vtu_with(&raw, &frame, VtuEncoding::Raw).unwrap();
    for path in [&zipped, &raw] {
        let back = read_vtu(path).unwrap();
        assert_eq!(bits(&back.positions), bits(&x));
        assert_eq!(back.tets, mesh.tets);
        assert_eq!(bits(back.point_vector("velocity").unwrap()), bits(&v));
        let bits1 = |v: &[f64]| v.iter().map(|c| c.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits1(&back.point_scalars[0].1), bits1(&s));
        assert_eq!(bits1(back.cell_scalar("c").unwrap()), bits1(&c));
        assert_eq!(back.skipped_cells, 0);
    }
    let (z_len, raw_len) = (
        std::fs::metadata(&zipped).unwrap().len(),
        std::fs::metadata(&raw).unwrap().len(),
    );
    assert!(z_len < raw_len, "{z_len} vs {raw_len}");

    // The layout, decoded independently: the points array spans several 32 KiB blocks.
    let xml = std::fs::read_to_string(&zipped).unwrap();
    assert!(xml.contains(r#"compressor="vtkZLibDataCompressor""#));
    let points = &xml[xml.find("<Points>").unwrap()..];
    let open =
        points.find('>').unwrap() + points[points.find('>').unwrap() + 1..].find('>').unwrap() + 2;
    let text = &points[open..open + points[open..].find("</DataArray>").unwrap()];
    let bytes = inflate_array(text);
    assert!(bytes.len() > 32768, "one block only");
    let decoded: Vec<u64> = bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect();
    assert_eq!(decoded, bits(&x));
    check_with_meshio(&zipped, x.len(), mesh.tets.len());
    check_with_vtk(&zipped, &x, &c);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn damaged_compressed_frames_are_errors_naming_the_file() {
    let dir = scratch("damaged");
    let mesh = box_grid(&BoxGrid {
        cells: [3, 2, 2],
        cell_size: Vector3::repeat(0.1),
        origin: Vector3::zeros(),
        split: TetSplit::Six,
    });
    let path = dir.join("f.vtu");
    write_vtu(&path, &VtuFrame::new(&mesh.positions, &mesh.tets)).unwrap();
    let xml = std::fs::read_to_string(&path).unwrap();
    let at = xml.find("<Points>").unwrap() + 120;
    for damaged in [
        format!("{}{}", &xml[..at], &xml[at + 8..]),
        xml.replacen("format=\"binary\">", "format=\"binary\">AAAA", 1),
        xml.replace("vtkZLibDataCompressor", "vtkLZ4DataCompressor"),
    ] {
        let err = supple_io::vtu_read::parse_vtu(&damaged, Path::new("f.vtu")).unwrap_err();
        assert!(err.to_string().starts_with("f.vtu:"), "{err}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Reads the file with Python's meshio when it is installed (skipped otherwise).
fn check_with_meshio(path: &Path, points: usize, tets: usize) {
    let probe = std::process::Command::new("python3")
        .args(["-c", "import meshio"])
        .output();
    if !matches!(probe, Ok(ref o) if o.status.success()) {
        eprintln!("skipping the meshio check: python3 with meshio is not available");
        return;
    }
    let script = "import sys, meshio\n\
        m = meshio.read(sys.argv[1])\n\
        print(len(m.points), len(m.cells_dict['tetra']), sorted(m.point_data), sorted(m.cell_data))\n";
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "meshio failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("{points} {tets} ['s', 'velocity'] ['c']")
    );
}

/// Reads the file with VTK's own XML reader (Python `vtk`, skipped when not installed) and
/// compares the points and a cell array bit for bit.
fn check_with_vtk(path: &Path, x: &[Vector3<f64>], cell: &[f64]) {
    let probe = std::process::Command::new("python3")
        .args(["-c", "import vtk"])
        .output();
    if !matches!(probe, Ok(ref o) if o.status.success()) {
        eprintln!("skipping the VTK check: python3 with vtk is not available");
        return;
    }
    let script = "import sys, struct, vtk\n\
        from vtk.util.numpy_support import vtk_to_numpy\n\
        r = vtk.vtkXMLUnstructuredGridReader()\n\
        r.SetFileName(sys.argv[1]); r.Update()\n\
        g = r.GetOutput()\n\
        bits = lambda a: ' '.join(str(struct.unpack('<Q', struct.pack('<d', float(v)))[0]) for v in a.ravel())\n\
        print(g.GetNumberOfCells(), g.GetCellType(0))\n\
        print(bits(vtk_to_numpy(g.GetPoints().GetData())))\n\
        print(bits(vtk_to_numpy(g.GetCellData().GetArray('c'))))\n";
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "VTK failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], format!("{} 10", cell.len()));
    let join = |v: Vec<u64>| v.iter().map(u64::to_string).collect::<Vec<_>>().join(" ");
    assert_eq!(lines[1], join(bits(x)));
    assert_eq!(lines[2], join(cell.iter().map(|c| c.to_bits()).collect()));
}
