//! Tests of the TetGen reader/writer and the VTU/PVD writers.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use nalgebra::Vector3;
use std::path::{Path, PathBuf};
use supple::mesh::{box_grid, BoxGrid, TetMesh, TetSplit};
use supple_io::error::IoError;
use supple_io::tetgen::{parse_ele, parse_node, read_tetgen, tetgen_paths, write_tetgen};
use supple_io::vtu::{write_pvd, write_vtu, write_vtu_with, VtuEncoding, VtuFrame};

/// The bundled reference meshes (scenes/meshes/README.md).
const BUNDLED_MESHES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenes/meshes/");

/// A fresh, empty scratch folder unique to this test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("supple_io_test_{}_{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn small_mesh() -> TetMesh {
    let mut m = box_grid(&BoxGrid {
        cells: [2, 1, 1],
        cell_size: Vector3::repeat(0.1),
        origin: Vector3::new(0.3, -1e-7, 12345.678),
        split: TetSplit::Five,
    });
    // Awkward values that must survive the round trip bit for bit.
    m.positions[0].x = 0.3 + 1e-3 / 3.0;
    m.positions[1].y = -1e-300;
    m.positions[2].z = 12345.678 + f64::EPSILON;
    TetMesh::new(m.positions, m.tets).unwrap()
}

fn node(text: &str) -> Result<supple_io::tetgen::NodeFile, String> {
    parse_node(text, Path::new("m.node")).map_err(|e| e.to_string())
}

fn ele(text: &str, first: u64, n: usize) -> Result<Vec<[u32; 4]>, String> {
    parse_ele(text, Path::new("m.ele"), first, n).map_err(|e| e.to_string())
}

const UNIT_NODE_1: &str = "# a comment\n\n4 3 1 1 # header comment\n1 0 0 0 7.5 1\n2 1 0 0 7.5 0\n  3 0 1 0 7.5 1   \n4 0 0 1 7.5 0 # last\n";

#[test]
fn tetgen_round_trip_is_bit_exact() {
    let dir = scratch("round_trip");
    let mesh = small_mesh();
    assert_eq!(mesh.n_tets(), 10);
    write_tetgen(&dir.join("box"), &mesh).unwrap();
    for base in ["box", "box.node", "box.ele"] {
        let back = read_tetgen(&dir.join(base)).unwrap();
        assert_eq!(back.tets, mesh.tets);
        let bits = |m: &TetMesh| -> Vec<u64> {
            m.positions
                .iter()
                .flat_map(|p| p.iter().map(|c| c.to_bits()))
                .collect()
        };
        assert_eq!(bits(&back), bits(&mesh));
    }
    let text = std::fs::read_to_string(dir.join("box.node")).unwrap();
    assert!(text.starts_with('#'));
    assert!(
        text.lines().nth(2).unwrap().starts_with("0 "),
        "0-based: {text}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn paths_strip_extension_only_when_node_or_ele() {
    let (n, e) = tetgen_paths(Path::new("dir/mesh.v2"));
    assert_eq!(
        (n.as_path(), e.as_path()),
        (Path::new("dir/mesh.v2.node"), Path::new("dir/mesh.v2.ele"))
    );
    let (n, e) = tetgen_paths(Path::new("dir/mesh.ele"));
    assert_eq!(
        (n.as_path(), e.as_path()),
        (Path::new("dir/mesh.node"), Path::new("dir/mesh.ele"))
    );
}

#[test]
fn one_based_with_comments_attributes_and_markers() {
    let nodes = node(UNIT_NODE_1).unwrap();
    assert_eq!(nodes.first_index, 1);
    assert_eq!(nodes.positions[3], Vector3::z());
    let tets = ele("1 4 1\n# c\n1 1 2 3 4 -3.5 # region\n", 1, 4).unwrap();
    assert_eq!(tets, vec![[0, 1, 2, 3]]);
    // Minimal headers use the TetGen defaults (dim 3, 4 nodes per tet).
    assert_eq!(
        node("1\n0 1 2 3\n").unwrap().positions,
        vec![Vector3::new(1.0, 2.0, 3.0)]
    );
    assert_eq!(ele("1\n0 3 2 1 0\n", 0, 4).unwrap(), vec![[3, 2, 1, 0]]);
}

#[test]
fn ten_node_tets_keep_the_corners() {
    let tets = ele("1 10 0\n0 0 1 2 3 4 5 6 7 8 9\n", 0, 10).unwrap();
    assert_eq!(tets, vec![[0, 1, 2, 3]]);
    assert_eq!(
        ele("1 10 0\n0 0 1 2 3 4 5\n", 0, 10).unwrap_err(),
        "m.ele:2: expected at least 11 fields in the tet line (index and 10 vertices), found 7"
    );
}

#[test]
fn node_errors_name_file_and_line() {
    let cases: &[(&str, &str)] = &[
        ("", "m.node:1: the file is empty: expected a header `<#points> <dimension> <#attributes> <boundary marker>`"),
        ("# only\n#comments\n", "m.node:2: the file is empty"),
        ("4 2 0 0\n", "m.node:1: dimension must be 3, found 2"),
        ("4 3 0 0 9\n", "m.node:1: expected 1 to 4 fields in the header, found 5"),
        ("-4 3 0 0\n", "m.node:1: expected a non-negative integer, found `-4`"),
        ("0 3 0 0\n", "m.node:1: the header declares 0 points"),
        ("2 3 0 0\n0 1 2 3\n1 1 abc 3\n", "m.node:3: expected a number, found `abc`"),
        ("2 3 0 0\n0 1 2 3\n1 1 2\n", "m.node:3: expected at least 4 fields in the point line (index x y z), found 3"),
        ("2 3 0 0\n0 1 2 3\n1 1 nan 3\n", "m.node:3: coordinate `nan` is not a finite number"),
        ("2 3 0 0\n0 1 2 3\n1 1 2 inf\n", "m.node:3: coordinate `inf` is not a finite number"),
        ("3 3 0 0\n0 1 2 3\n2 1 2 3\n", "m.node:3: point index 2 is out of sequence: expected 1"),
        ("3 3 0 0\n0 1 2 3\n\n1 1 2 3\n# end\n", "m.node:5: unexpected end of file: the header declares 3 points, found 2"),
        ("1 3 0 0\n0 1 2 3\n1 1 2 3\n", "m.node:3: unexpected extra line: the header declares 1 points"),
        ("1 3 0 0\nx 1 2 3\n", "m.node:2: expected a non-negative integer index, found `x`"),
        ("18446744073709551615 3 0 0\n18446744073709551615 1 2 3\n", "m.node:2: unexpected end of file"),
    ];
    for (text, expected) in cases {
        let err = node(text).unwrap_err();
        assert!(
            err.starts_with(expected),
            "input {text:?}\n got: {err}\nwant: {expected}"
        );
    }
}

#[test]
fn ele_errors_name_file_and_line() {
    let cases: &[(&str, &str)] = &[
        ("", "m.ele:1: the file is empty"),
        ("1 8 0\n", "m.ele:1: nodes per tet must be 4 or 10, found 8"),
        (
            "1 4 0 1\n",
            "m.ele:1: expected 1 to 3 fields in the header, found 4",
        ),
        (
            "2 4 0\n0 0 1 2 3\n",
            "m.ele:2: unexpected end of file: the header declares 2 tets, found 1",
        ),
        (
            "1 4 0\n0 0 1 2\n",
            "m.ele:2: expected at least 5 fields in the tet line (index and 4 vertices), found 4",
        ),
        (
            "1 4 0\n0 0 1 2 9\n",
            "m.ele:2: vertex 9 is out of range: the .node file has points 0..=3",
        ),
        (
            "1 4 0\n\n1 0 1 2 3\n",
            "m.ele:3: vertex 0 is out of range: the .node file has points 1..=4",
        ),
        (
            "1 4 0\n0 0 1 2 -1\n",
            "m.ele:2: expected a non-negative integer index, found `-1`",
        ),
        (
            "1 4 0\n0 0 1 2 3.0\n",
            "m.ele:2: expected a non-negative integer index, found `3.0`",
        ),
        (
            "2 4 0\n0 0 1 2 3\n5 0 1 2 3\n",
            "m.ele:3: tet index 5 is out of sequence: expected 1",
        ),
    ];
    for (i, (text, expected)) in cases.iter().enumerate() {
        let first = if i == 6 { 1 } else { 0 };
        let err = ele(text, first, 4).unwrap_err();
        assert!(
            err.starts_with(expected),
            "input {text:?}\n got: {err}\nwant: {expected}"
        );
    }
    // A u32-overflowing reference is an error, not a wrap-around.
    let err = ele("1 4 0\n0 0 1 2 4294967296\n", 0, 4).unwrap_err();
    assert!(
        err.starts_with("m.ele:2: vertex 4294967296 is out of range"),
        "{err}"
    );
}

#[test]
fn invalid_mesh_is_reported_against_the_ele_file() {
    let dir = scratch("inverted");
    std::fs::write(dir.join("bar.node"), UNIT_NODE_1).unwrap();
    std::fs::write(dir.join("bar.ele"), "2 4 0\n1 1 2 3 4\n2 1 3 2 4\n").unwrap();
    let err = read_tetgen(&dir.join("bar")).unwrap_err();
    assert!(matches!(err, IoError::Mesh { .. }), "{err:?}");
    let msg = err.to_string();
    let expected = format!("{}: tet 1: rest volume", dir.join("bar.ele").display());
    assert!(msg.starts_with(&expected), "{msg}");
    assert!(msg.contains("is negative (inverted)"), "{msg}");

    // Parse errors from read_tetgen carry the full path.
    std::fs::write(dir.join("bar.ele"), "1 4 0\n1 1 2 3 x\n").unwrap();
    let msg = read_tetgen(&dir.join("bar.node")).unwrap_err().to_string();
    assert_eq!(
        msg,
        format!(
            "{}:2: expected a non-negative integer index, found `x`",
            dir.join("bar.ele").display()
        )
    );

    let err = read_tetgen(&dir.join("missing")).unwrap_err();
    assert!(matches!(err, IoError::Io { .. }), "{err:?}");
    assert!(err
        .to_string()
        .starts_with(&format!("{}: ", dir.join("missing.node").display())));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn reads_the_bundled_meshes() {
    let dir = Path::new(BUNDLED_MESHES);
    for (name, nv, nt) in [("torus_ls480", 180, 480), ("tube_solid_1k", 326, 1034)] {
        let mesh = read_tetgen(&dir.join(name)).unwrap();
        assert_eq!((mesh.n_vertices(), mesh.n_tets()), (nv, nt), "{name}");
        assert!(mesh.volume() > 0.0);
    }
}

// ---------------------------------------------------------------- VTU / PVD

/// Attribute `name="..."` of the first tag in `tag`.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let start = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    Some(&tag[start..start + tag[start..].find('"')?])
}

/// Decodes the binary DataArray whose opening tag contains `key`: the bytes after the
/// UInt64 length header, checked against it.
fn array_bytes(xml: &str, key: &str) -> Vec<u8> {
    let at = xml.find(key).unwrap_or_else(|| panic!("no {key}"));
    let open = xml[..at + key.len()].rfind("<DataArray").unwrap();
    let body_start = open + xml[open..].find('>').unwrap() + 1;
    let body_end = body_start + xml[body_start..].find("</DataArray>").unwrap();
    let raw = STANDARD.decode(xml[body_start..body_end].trim()).unwrap();
    let len = u64::from_le_bytes(raw[..8].try_into().unwrap()) as usize;
    assert_eq!(len, raw.len() - 8);
    raw[8..].to_vec()
}

fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

#[test]
fn vtu_round_trips_points_cells_and_fields() {
    let dir = scratch("vtu");
    let mesh = small_mesh();
    let velocity: Vec<Vector3<f64>> = (0..mesh.n_vertices())
        .map(|i| Vector3::new(i as f64, -0.5, 1e-310))
        .collect();
    let mass: Vec<f64> = (0..mesh.n_vertices()).map(|i| 0.1 * i as f64).collect();
    let stress: Vec<f64> = (0..mesh.n_tets()).map(|t| t as f64 * 1e5).collect();
    let frame = VtuFrame {
        point_vectors: vec![("velocity", &velocity)],
        point_scalars: vec![("mass", &mass)],
        cell_scalars: vec![("von Mises <Pa>", &stress)],
        ..VtuFrame::new(&mesh.positions, &mesh.tets)
    };
    let path = dir.join("frame_0000.vtu");
    write_vtu_with(&path, &frame, VtuEncoding::Raw).unwrap();
    let xml = std::fs::read_to_string(&path).unwrap();
    assert!(!xml.contains("compressor"));

    assert!(xml.starts_with("<?xml"));
    assert!(xml.trim_end().ends_with("</VTKFile>"));
    for tag in [
        "VTKFile",
        "UnstructuredGrid",
        "Piece",
        "PointData",
        "CellData",
        "Points",
        "Cells",
    ] {
        assert_eq!(xml.matches(&format!("<{tag}")).count(), 1, "{tag}");
        assert_eq!(xml.matches(&format!("</{tag}>")).count(), 1, "{tag}");
    }
    assert_eq!(
        xml.matches("<DataArray").count(),
        xml.matches("</DataArray>").count()
    );
    let piece = &xml[xml.find("<Piece").unwrap()..];
    assert_eq!(attr(piece, "NumberOfPoints"), Some("12"));
    assert_eq!(attr(piece, "NumberOfCells"), Some("10"));
    assert!(xml.contains(r#"Name="von Mises &lt;Pa&gt;""#));

    let points_tag = &xml[xml.find("<Points>").unwrap()..];
    let points = f64s(&array_bytes(points_tag, "<DataArray"));
    let expected: Vec<f64> = mesh
        .positions
        .iter()
        .flat_map(|p| [p.x, p.y, p.z])
        .collect();
    assert_eq!(
        points.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
        expected.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
    );
    let vel = f64s(&array_bytes(&xml, r#"Name="velocity""#));
    assert_eq!(vel[3 * 5..3 * 6], [5.0, -0.5, 1e-310]);
    assert_eq!(f64s(&array_bytes(&xml, r#"Name="mass""#)), mass);
    assert_eq!(f64s(&array_bytes(&xml, "Name=\"von Mises")), stress);

    // Int32 connectivity and offsets: the indices fit.
    assert!(xml.contains(r#"<DataArray type="Int32" Name="connectivity""#));
    let conn: Vec<i32> = array_bytes(&xml, r#"Name="connectivity""#)
        .chunks_exact(4)
        .map(|c| i32::from_le_bytes(c.try_into().unwrap()))
        .collect();
    let tets: Vec<i32> = mesh.tets.iter().flatten().map(|&i| i as i32).collect();
    assert_eq!(conn, tets);
    let offsets = array_bytes(&xml, r#"Name="offsets""#);
    assert_eq!(
        i32::from_le_bytes(offsets[offsets.len() - 4..].try_into().unwrap()),
        40
    );
    assert_eq!(array_bytes(&xml, r#"Name="types""#), vec![10u8; 10]);

    // Our own reader gives everything back, bit for bit.
    let back = supple_io::vtu_read::read_vtu(&path).unwrap();
    assert_eq!(back.positions, mesh.positions);
    assert_eq!(back.tets, mesh.tets);
    assert_eq!(back.point_vector("velocity"), Some(velocity.as_slice()));
    assert_eq!(back.point_scalars, vec![("mass".to_string(), mass.clone())]);
    assert_eq!(back.cell_scalar("von Mises <Pa>"), Some(stress.as_slice()));
    let truncated = xml.replace("</DataArray>\n      </Points>", "");
    let err = supple_io::vtu_read::parse_vtu(&truncated, Path::new("t.vtu")).unwrap_err();
    assert!(err.to_string().starts_with("t.vtu:"), "{err}");

    check_with_meshio(&path, &mesh);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Reads the file with Python's meshio when it is installed (skipped otherwise).
fn check_with_meshio(path: &Path, mesh: &TetMesh) {
    let probe = std::process::Command::new("python3")
        .args(["-c", "import meshio"])
        .output();
    if !matches!(probe, Ok(ref o) if o.status.success()) {
        eprintln!("skipping the meshio check: python3 with meshio is not available");
        return;
    }
    let script = "import sys, meshio\n\
        m = meshio.read(sys.argv[1])\n\
        c = m.cells_dict['tetra']\n\
        print(len(m.points), len(c), int(c[-1][3]), repr(float(m.points[0][0])), \
        sorted(m.point_data), sorted(m.cell_data))\n";
    let out = std::process::Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "meshio failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let expected = format!(
        "{} {} {} {:?} ['mass', 'velocity'] ['von Mises <Pa>']",
        mesh.n_vertices(),
        mesh.n_tets(),
        mesh.tets[mesh.n_tets() - 1][3],
        mesh.positions[0].x
    );
    assert_eq!(stdout.trim(), expected);
}

#[test]
fn vtu_refuses_mismatched_fields() {
    let dir = scratch("vtu_bad");
    let mesh = small_mesh();
    let short = vec![0.0; 3];
    let frame = VtuFrame {
        cell_scalars: vec![("energy", &short)],
        ..VtuFrame::new(&mesh.positions, &mesh.tets)
    };
    let path = dir.join("bad.vtu");
    let msg = write_vtu(&path, &frame).unwrap_err().to_string();
    assert!(
        msg.ends_with("cell field `energy` has 3 values, expected 10 (one per tet)"),
        "{msg}"
    );
    assert!(!path.exists());
    let tets = [[0, 1, 2, 99]];
    let msg = write_vtu(&path, &VtuFrame::new(&mesh.positions, &tets))
        .unwrap_err()
        .to_string();
    assert!(
        msg.ends_with("tet 0: vertex index 99 is out of range (the frame has 12 points)"),
        "{msg}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn pvd_lists_the_frames() {
    let dir = scratch("pvd");
    let path = dir.join("run.pvd");
    let entries = vec![
        (0.0, "run/frame_0000.vtu".to_string()),
        (0.0125, "run/a&b.vtu".to_string()),
    ];
    write_pvd(&path, &entries).unwrap();
    let xml = std::fs::read_to_string(&path).unwrap();
    assert!(xml.contains(r#"<VTKFile type="Collection""#));
    assert!(
        xml.contains(r#"<DataSet timestep="0.0" group="" part="0" file="run/frame_0000.vtu"/>"#)
    );
    assert!(
        xml.contains(r#"<DataSet timestep="0.0125" group="" part="0" file="run/a&amp;b.vtu"/>"#)
    );
    assert_eq!(supple_io::vtu_read::read_pvd(&path).unwrap(), entries);
    assert!(xml.trim_end().ends_with("</VTKFile>"));
    assert!(write_pvd(&path, &[(f64::NAN, "x.vtu".into())]).is_err());
    let _ = std::fs::remove_dir_all(&dir);
}
