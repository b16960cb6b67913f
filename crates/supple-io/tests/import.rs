//! Mesh import (issue 19): each format, written by meshio from the TetGen original
//! (tests/data/make_data.py), reads back to the same positions and tets; mixed elements,
//! physical groups, orientation and degenerate tets.

use std::path::{Path, PathBuf};
use supple::mesh::{signed_volume, TetMesh};
use supple_io::import::{read_mesh, ImportedMesh, MeshFormat, Orient};
use supple_io::tetgen::read_tetgen;

fn data(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(name)
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-import-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn original() -> TetMesh {
    read_tetgen(&data("cube")).unwrap()
}

fn same(a: &TetMesh, b: &TetMesh) {
    let bits = |m: &TetMesh| -> Vec<u64> {
        m.positions
            .iter()
            .flat_map(|p| p.iter().map(|c| c.to_bits()))
            .collect()
    };
    assert_eq!(bits(a), bits(b));
    assert_eq!(a.tets, b.tets);
}

#[test]
fn every_format_gives_the_tetgen_original() {
    let cube = original();
    assert_eq!((cube.n_vertices(), cube.n_tets()), (27, 48));
    for (file, format) in [
        ("cube_gmsh22.msh", MeshFormat::Gmsh),
        ("cube_gmsh41.msh", MeshFormat::Gmsh),
        ("cube_gmsh22_bin.msh", MeshFormat::Gmsh),
        ("cube_gmsh41_bin.msh", MeshFormat::Gmsh),
        ("cube_ascii.vtu", MeshFormat::Vtu),
        ("cube_zlib.vtu", MeshFormat::Vtu),
        ("cube.vtk", MeshFormat::VtkLegacy),
        ("cube42.vtk", MeshFormat::VtkLegacy),
        ("cube_bin.vtk", MeshFormat::VtkLegacy),
        ("cube42_bin.vtk", MeshFormat::VtkLegacy),
        ("cube.mesh", MeshFormat::Medit),
        ("cube.node", MeshFormat::Tetgen),
    ] {
        let path = data(file);
        assert_eq!(MeshFormat::from_path(&path), Some(format), "{file}");
        let m = read_mesh(&path, None, Orient::Check).unwrap_or_else(|e| panic!("{file}: {e}"));
        same(&m.mesh, &cube);
        assert_eq!(
            (m.skipped_cells, m.dropped_vertices, m.flipped),
            (0, 0, 0),
            "{file}"
        );
        // The format named explicitly reads the same.
        let again = read_mesh(&path, Some(format), Orient::Check).unwrap();
        assert_eq!(again, m);
    }
}

#[test]
fn gmsh_22_mixed_elements_and_physical_groups() {
    let m = read_mesh(&data("mixed_gmsh22.msh"), None, Orient::Check).unwrap();
    let binary = read_mesh(&data("mixed_gmsh22_bin.msh"), None, Orient::Check).unwrap();
    assert_eq!(binary, m);
    same(&m.mesh, &original());
    // 1 point, 2 lines, 8 triangles skipped; the node at (9, 9, 9) is used by no tet.
    assert_eq!((m.skipped_cells, m.dropped_vertices), (11, 1));
    let on_x0: Vec<u32> = (0..27u32)
        .filter(|&i| m.mesh.positions[i as usize].x == 0.0)
        .collect();
    assert_eq!(m.region("clamp"), Some(on_x0.as_slice()));
    assert_eq!(m.region("body").map(<[u32]>::len), Some(27));
    assert_eq!(m.region("corner"), Some(&[26u32][..]));
}

const GMSH41: &str = r#"$MeshFormat
4.1 0 8
$EndMeshFormat
$PhysicalNames
2
2 7 "top"
3 9 "solid"
$EndPhysicalNames
$Entities
0 0 1 1
5 0 0 1 1 1 1 1 7 0
3 0 0 0 1 1 1 1 9 1 5
$EndEntities
$Nodes
2 5 10 50
3 3 0 4
10
20
30
40
0 0 0
1 0 0
0 1 0
0 0 1
2 5 0 1
50
1 1 1
$EndNodes
$Elements
2 3 1 3
2 5 2 1
1 20 30 40
3 3 4 2
2 10 20 30 40
3 20 40 30 50
$EndElements
"#;

#[test]
fn gmsh_41_entities_give_regions_and_sparse_tags_are_mapped() {
    let dir = scratch("g41");
    let path = dir.join("two.msh");
    std::fs::write(&path, GMSH41).unwrap();
    let m = read_mesh(&path, None, Orient::Fix).unwrap();
    assert_eq!(m.mesh.n_vertices(), 5);
    assert_eq!(m.mesh.tets[0], [0, 1, 2, 3]);
    assert_eq!(m.skipped_cells, 1);
    assert_eq!(m.region("top"), Some(&[1u32, 2, 3][..]));
    assert_eq!(m.region("solid").map(<[u32]>::len), Some(5));
    // The second tet (20 40 30 50) is negatively oriented: fixed and counted.
    assert_eq!(m.flipped, 1);
    let err = read_mesh(&path, None, Orient::Check)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("1 of 2 tets are negatively oriented (first: tet 1"),
        "{err}"
    );
    assert!(err.contains("orient = \"fix\""), "{err}");
}

/// The cube as a Medit file with the tets in `flip` written with two vertices swapped.
fn medit_with(flip: &[usize], degenerate: bool) -> String {
    let cube = original();
    let mut s = String::from("MeshVersionFormatted 2\nDimension 3\nVertices\n");
    s += &format!("{}\n", cube.n_vertices() + usize::from(degenerate));
    for p in &cube.positions {
        s += &format!("{:?} {:?} {:?} 0\n", p.x, p.y, p.z);
    }
    if degenerate {
        s += "0.125 0.0 0.0 0\n";
    }
    s += &format!("Tetrahedra\n{}\n", cube.n_tets() + usize::from(degenerate));
    for (t, tet) in cube.tets.iter().enumerate() {
        let mut tet = *tet;
        if flip.contains(&t) {
            tet.swap(0, 3);
        }
        s += &format!(
            "{} {} {} {} 1\n",
            tet[0] + 1,
            tet[1] + 1,
            tet[2] + 1,
            tet[3] + 1
        );
    }
    if degenerate {
        // Four points on the line y = z = 0.
        s += "1 28 2 3 1\n";
    }
    s + "End\n"
}

fn read_medit(text: &str, name: &str, orient: Orient) -> Result<ImportedMesh, String> {
    let dir = scratch(name);
    let path = dir.join("m.mesh");
    std::fs::write(&path, text).unwrap();
    read_mesh(&path, None, orient).map_err(|e| e.to_string())
}

#[test]
fn negative_tets_are_refused_or_fixed_and_counted() {
    let flip = [3, 10, 47];
    let err = read_medit(&medit_with(&flip, false), "neg", Orient::Check).unwrap_err();
    assert!(
        err.contains("3 of 48 tets are negatively oriented (first: tet 3"),
        "{err}"
    );
    let m = read_medit(&medit_with(&flip, false), "fix", Orient::Fix).unwrap();
    assert_eq!(m.flipped, 3);
    let cube = original();
    for (t, tet) in m.mesh.tets.iter().enumerate() {
        let p = tet.map(|i| m.mesh.positions[i as usize]);
        assert!(signed_volume(&p) > 0.0);
        let mut a = *tet;
        let mut b = cube.tets[t];
        a.sort_unstable();
        b.sort_unstable();
        assert_eq!(a, b, "tet {t} keeps its vertices");
    }
}

#[test]
fn degenerate_tets_are_refused_with_index_and_volume() {
    for orient in [Orient::Check, Orient::Fix] {
        let err = read_medit(&medit_with(&[], true), "degen", orient).unwrap_err();
        assert!(err.contains("tet 48: volume 0e0"), "{err}");
        assert!(err.contains("degenerate"), "{err}");
    }
}

#[test]
fn malformed_files_are_errors_naming_file_and_line() {
    let dir = scratch("bad");
    let cases: [(&str, &str, &str); 8] = [
        (
            "a.msh",
            "$MeshFormat\n4.1 1 8\n\0\0\0\x01\n$EndMeshFormat\n",
            "a.msh:3: big-endian binary Gmsh",
        ),
        (
            "b.msh",
            "$MeshFormat\n3.0 0 8\n$EndMeshFormat\n",
            "b.msh:2: MSH version",
        ),
        (
            "c.msh",
            "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n2\n1 0 0 0\n",
            "c.msh:6: file ends",
        ),
        (
            "d.msh",
            "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n$Nodes\n99999999999\n",
            "d.msh:5: count",
        ),
        (
            "e.mesh",
            "MeshVersionFormatted 2\nDimension 2\n",
            "e.mesh:2: Dimension 2",
        ),
        (
            "f.mesh",
            "MeshVersionFormatted 2\nDimension 3\nVertices\n1\n0 0 x 0\n",
            "f.mesh:5:",
        ),
        (
            "g.vtk",
            "# vtk DataFile Version 5.1\nt\nBINARY\nDATASET POLYDATA\n",
            "g.vtk:4: `DATASET POLYDATA`",
        ),
        ("h.obj", "v 0 0 0\n", "h.obj:1: unknown mesh format"),
    ];
    for (name, text, expected) in cases {
        let path = dir.join(name);
        std::fs::write(&path, text).unwrap();
        let err = read_mesh(&path, None, Orient::Check)
            .unwrap_err()
            .to_string();
        let err = err.replace(&format!("{}/", dir.display()), "");
        assert!(err.starts_with(expected), "{name}: {err}");
    }
}

#[test]
fn truncated_or_damaged_files_are_errors_not_panics() {
    let dir = scratch("cut");
    for file in [
        "cube_gmsh22_bin.msh",
        "cube_gmsh41_bin.msh",
        "mixed_gmsh22_bin.msh",
        "cube_gmsh41.msh",
        "cube.vtk",
        "cube_bin.vtk",
        "cube42_bin.vtk",
        "cube.mesh",
        "cube_zlib.vtu",
    ] {
        let bytes = std::fs::read(data(file)).unwrap();
        let ext = file.rsplit('.').next().unwrap();
        let path = dir.join(format!("x.{ext}"));
        // Every 2nd cut of the first 400 bytes (headers), then every 13th, and single-byte
        // damage every 11 bytes.
        let cuts = (0..bytes.len().min(400))
            .step_by(2)
            .chain((400..bytes.len()).step_by(13));
        for cut in cuts {
            std::fs::write(&path, &bytes[..cut]).unwrap();
            let _ = read_mesh(&path, None, Orient::Fix);
        }
        for at in (0..bytes.len()).step_by(11) {
            let mut b = bytes.clone();
            b[at] = b[at].wrapping_add(0x55);
            std::fs::write(&path, &b).unwrap();
            let _ = read_mesh(&path, None, Orient::Fix);
        }
    }
}
