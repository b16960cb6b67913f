//! Hand-written bad inputs that the mutations did not find (issue 45, the abuse campaign):
//! each must be refused with a message naming its file and saying what is wrong. Readers
//! once accepted them: a tet repeated (in every format), `NumberOfComponents` of 0, 2 or
//! 2⁴⁰ on VTU points, `POINTS n quaternion`, VTK 5.1 offsets not starting at 0, NaN or
//! infinite coordinates (reported as a degenerate tet); a 1e155 cube panicked in stuffing.

use super::FileMap;
use std::path::Path;
use supple::mesh::stuffing::{stuff, StuffingParams, TriangleSurface};
use supple_io::files::Files;
use supple_io::import::{read_mesh_from, surface, Orient};

/// One tet's corners, and two tets on them: `[0, 1, 2, 3]` and the same set reordered.
const XYZ: [&str; 4] = ["0 0 0", "1 0 0", "0 1 0", "0 0 1"];
const DUPLICATE: [[usize; 4]; 2] = [[0, 1, 2, 3], [1, 0, 3, 2]];

fn tetgen(tets: &[[usize; 4]]) -> FileMap {
    let mut node = "4 3 0 0\n".to_string();
    for (i, p) in XYZ.iter().enumerate() {
        node += &format!("{} {p}\n", i + 1);
    }
    let mut ele = format!("{} 4 0\n", tets.len());
    for (t, k) in tets.iter().enumerate() {
        ele += &format!(
            "{} {} {} {} {}\n",
            t + 1,
            k[0] + 1,
            k[1] + 1,
            k[2] + 1,
            k[3] + 1
        );
    }
    [
        ("m.node".into(), node.into_bytes()),
        ("m.ele".into(), ele.into_bytes()),
    ]
    .into()
}

fn gmsh22(tets: &[[usize; 4]]) -> String {
    let mut s = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n4\n".to_string();
    for (i, p) in XYZ.iter().enumerate() {
        s += &format!("{} {p}\n", i + 1);
    }
    s += &format!("$EndNodes\n$Elements\n{}\n", tets.len());
    for (t, k) in tets.iter().enumerate() {
        s += &format!(
            "{} 4 2 0 1 {} {} {} {}\n",
            t + 1,
            k[0] + 1,
            k[1] + 1,
            k[2] + 1,
            k[3] + 1
        );
    }
    s + "$EndElements\n"
}

fn gmsh41(tets: &[[usize; 4]]) -> String {
    let mut s =
        "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 4 1 4\n3 1 0 4\n1\n2\n3\n4\n".to_string();
    for p in XYZ {
        s += &format!("{p}\n");
    }
    s += &format!(
        "$EndNodes\n$Elements\n1 {n} 1 {n}\n3 1 4 {n}\n",
        n = tets.len()
    );
    for (t, k) in tets.iter().enumerate() {
        s += &format!(
            "{} {} {} {} {}\n",
            t + 1,
            k[0] + 1,
            k[1] + 1,
            k[2] + 1,
            k[3] + 1
        );
    }
    s + "$EndElements\n"
}

fn medit(tets: &[[usize; 4]]) -> String {
    let mut s = "MeshVersionFormatted 2\nDimension 3\nVertices\n4\n".to_string();
    for p in XYZ {
        s += &format!("{p} 0\n");
    }
    s += &format!("Tetrahedra\n{}\n", tets.len());
    for k in tets {
        s += &format!("{} {} {} {} 0\n", k[0] + 1, k[1] + 1, k[2] + 1, k[3] + 1);
    }
    s + "End\n"
}

/// An ASCII VTU of `points` (`NumberOfComponents` = `components`) and `tets` of cell type 10.
pub fn vtu(points: &str, components: &str, tets: &[&[usize]], types: &str) -> String {
    let conn: Vec<String> = tets
        .iter()
        .flat_map(|t| t.iter())
        .map(|i| i.to_string())
        .collect();
    let mut end = 0;
    let offsets: Vec<String> = tets
        .iter()
        .map(|t| {
            end += t.len();
            end.to_string()
        })
        .collect();
    let n = points.split_whitespace().count() / 3;
    format!(
        "<?xml version=\"1.0\"?>\n<VTKFile type=\"UnstructuredGrid\" version=\"1.0\" byte_order=\"LittleEndian\" header_type=\"UInt64\">\n\
         <UnstructuredGrid>\n<Piece NumberOfPoints=\"{n}\" NumberOfCells=\"{}\">\n\
         <Points>\n<DataArray type=\"Float64\" NumberOfComponents=\"{components}\" format=\"ascii\">{points}</DataArray>\n</Points>\n\
         <Cells>\n<DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">{}</DataArray>\n\
         <DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">{}</DataArray>\n\
         <DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">{types}</DataArray>\n</Cells>\n\
         </Piece>\n</UnstructuredGrid>\n</VTKFile>\n",
        tets.len(),
        conn.join(" "),
        offsets.join(" ")
    )
}

/// A legacy ASCII VTK 4.2 file (`CELLS` with a count before each cell).
pub fn vtk42(points: &str, ty: &str, cells: &[&[usize]], types: &str) -> String {
    let size: usize = cells.iter().map(|c| c.len() + 1).sum();
    let mut s = format!(
        "# vtk DataFile Version 4.2\nt\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS {} {ty}\n{points}\nCELLS {} {size}\n",
        points.split_whitespace().count() / 3,
        cells.len()
    );
    for c in cells {
        let ids: Vec<String> = c.iter().map(|i| i.to_string()).collect();
        s += &format!("{} {}\n", c.len(), ids.join(" "));
    }
    s + &format!("CELL_TYPES {}\n{types}\n", cells.len())
}

/// A legacy ASCII VTK 5.1 file with `OFFSETS` and `CONNECTIVITY` as given.
fn vtk51(offsets: &str, connectivity: &str, types: &str) -> String {
    let n = offsets.split_whitespace().count();
    format!(
        "# vtk DataFile Version 5.1\nt\nASCII\nDATASET UNSTRUCTURED_GRID\nPOINTS 4 double\n{}\n\
         CELLS {n} {}\nOFFSETS vtktypeint64\n{offsets}\nCONNECTIVITY vtktypeint64\n{connectivity}\n\
         CELL_TYPES {}\n{types}\n",
        XYZ.join(" "),
        connectivity.split_whitespace().count(),
        n - 1
    )
}

fn one(name: &str, text: String) -> FileMap {
    [(name.to_string(), text.into_bytes())].into()
}

/// `(path to read, files, what the message must say)`.
fn cases() -> Vec<(&'static str, FileMap, &'static str)> {
    let dup: Vec<&[usize]> = DUPLICATE.iter().map(|t| t.as_slice()).collect();
    let pts = XYZ.join(" ");
    let tet: &[&[usize]] = &[&[0, 1, 2, 3]];
    let same = "the same four vertices";
    let mut c = vec![
        ("m.ele", tetgen(&DUPLICATE), same),
        ("m.msh", one("m.msh", gmsh22(&DUPLICATE)), same),
        ("m41.msh", one("m41.msh", gmsh41(&DUPLICATE)), same),
        ("m.mesh", one("m.mesh", medit(&DUPLICATE)), same),
        ("m.vtu", one("m.vtu", vtu(&pts, "3", &dup, "10 10")), same),
        (
            "m.vtk",
            one("m.vtk", vtk42(&pts, "double", &dup, "10 10")),
            same,
        ),
        (
            "m51.vtk",
            one("m51.vtk", vtk51("0 4 8", "0 1 2 3 1 0 3 2", "10 10")),
            same,
        ),
        (
            "p.vtk",
            one("p.vtk", vtk42(&pts, "quaternion", tet, "10")),
            "unknown data type",
        ),
        (
            "o.vtk",
            one("o.vtk", vtk51("5 9", "7 7 7 7 7 0 1 2 3", "10")),
            "first offset must be 0",
        ),
        (
            "nan.vtu",
            one(
                "nan.vtu",
                vtu(&pts.replacen("1 0 0", "nan 0 0", 1), "3", tet, "10"),
            ),
            "vertex 1 (of tet 0) has a non-finite coordinate",
        ),
        (
            "inf.vtk",
            one(
                "inf.vtk",
                vtk42("0 0 0 1 0 0 0 1 0 0 0 -inf", "double", tet, "10"),
            ),
            "vertex 3 (of tet 0) has a non-finite coordinate",
        ),
    ];
    for n in ["0", "2", "1099511627776"] {
        c.push((
            "c.vtu",
            one("c.vtu", vtu(&pts, n, tet, "10")),
            "NumberOfComponents",
        ));
    }
    c
}

#[test]
fn hand_written_bad_meshes_are_refused_naming_the_file() {
    for (path, files, says) in cases() {
        let r = read_mesh_from(Files::Memory(&files), Path::new(path), None, Orient::Fix);
        let e = match r {
            Ok(m) => panic!(
                "{path}: accepted ({} tets), expected `{says}`",
                m.mesh.n_tets()
            ),
            Err(e) => e.to_string(),
        };
        assert!(e.contains(says), "{path}: {e}");
        assert!(
            files.keys().any(|k| e.contains(k.as_str())),
            "{path}: names no file: {e}"
        );
    }
}

/// The same tets once each read (the cases above differ from valid files only in what
/// they test).
#[test]
fn the_hand_written_meshes_are_valid_without_their_fault() {
    let single = [DUPLICATE[0]];
    let pts = XYZ.join(" ");
    let tet: &[&[usize]] = &[&[0, 1, 2, 3]];
    let valid = [
        ("m.ele", tetgen(&single)),
        ("m.msh", one("m.msh", gmsh22(&single))),
        ("m41.msh", one("m41.msh", gmsh41(&single))),
        ("m.mesh", one("m.mesh", medit(&single))),
        ("m.vtu", one("m.vtu", vtu(&pts, "3", tet, "10"))),
        ("m.vtk", one("m.vtk", vtk42(&pts, "double", tet, "10"))),
        ("m51.vtk", one("m51.vtk", vtk51("0 4", "0 1 2 3", "10"))),
    ];
    for (path, files) in valid {
        let m = read_mesh_from(Files::Memory(&files), Path::new(path), None, Orient::Fix)
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!(m.mesh.n_tets(), 1, "{path}");
    }
}

/// A 12-triangle cube of side 1e155 (stuffing once panicked on it) is refused by stuffing.
#[test]
fn a_huge_surface_is_refused_by_stuffing() {
    let mut obj = String::new();
    for k in 0..8 {
        let c = |b: usize| if k & b != 0 { "1e155" } else { "0" };
        obj += &format!("v {} {} {}\n", c(1), c(2), c(4));
    }
    for f in [
        "1 3 4", "1 4 2", "5 6 8", "5 8 7", "1 2 6", "1 6 5", "3 7 8", "3 8 4", "1 5 7", "1 7 3",
        "2 4 8", "2 8 6",
    ] {
        obj += &format!("f {f}\n");
    }
    let files = one("huge.obj", obj);
    let f = surface::read_surface_from(Files::Memory(&files), Path::new("huge.obj")).unwrap();
    let s = TriangleSurface::new(&f.vertices, &f.triangles).unwrap();
    let e = stuff(&s, &StuffingParams::new(3e154))
        .unwrap_err()
        .to_string();
    assert!(e.contains("at most 1e100"), "{e}");
}

/// Second-order (10-node, VTK type 24) tets in VTU and legacy VTK keep their 4 corners, as
/// Gmsh's 10-node tets do; the 6 edge nodes are dropped as unused. They were skipped, and
/// the mesh refused as having no vertices.
#[test]
fn ten_node_tets_keep_their_corners() {
    let mut pts = XYZ.join(" ");
    for (a, b) in [(0, 1), (1, 2), (0, 2), (0, 3), (1, 3), (2, 3)] {
        let p = |i: usize| -> Vec<f64> { XYZ[i].split(' ').map(|w| w.parse().unwrap()).collect() };
        let (pa, pb) = (p(a), p(b));
        pts += &format!(
            " {} {} {}",
            (pa[0] + pb[0]) / 2.0,
            (pa[1] + pb[1]) / 2.0,
            (pa[2] + pb[2]) / 2.0
        );
    }
    let tet10: &[&[usize]] = &[&[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]];
    for (path, files) in [
        ("q.vtu", one("q.vtu", vtu(&pts, "3", tet10, "24"))),
        ("q.vtk", one("q.vtk", vtk42(&pts, "double", tet10, "24"))),
    ] {
        let m = read_mesh_from(Files::Memory(&files), Path::new(path), None, Orient::Check)
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        assert_eq!((m.mesh.n_tets(), m.mesh.n_vertices()), (1, 4), "{path}");
        assert_eq!((m.dropped_vertices, m.skipped_cells), (6, 0), "{path}");
        assert!((m.mesh.volume() - 1.0 / 6.0).abs() < 1e-15, "{path}");
    }
    // A type-24 cell with another number of nodes is refused, saying how many it has.
    let files = one("q.vtu", vtu(&pts, "3", &[&[0, 1, 2, 3]], "24"));
    let e = read_mesh_from(
        Files::Memory(&files),
        Path::new("q.vtu"),
        None,
        Orient::Check,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains("q.vtu") && e.contains("type 24 with 4 vertices (expected 10)"),
        "{e}"
    );
}
