//! `supple mesh`: a surface stuffed into tets, written as TetGen and VTU and read back; a tet
//! mesh and a stuffed surface improved with `--improve`; bad input refused with status 1.

use std::path::{Path, PathBuf};
use std::process::Command;

fn supple() -> Command {
    Command::new(env!("CARGO_BIN_EXE_supple"))
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn temp_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("supple-mesh-test-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn the_bunny_is_stuffed_into_valid_tetgen_and_vtu_files() {
    let dir = temp_dir("bunny");
    let obj = repo().join("scenes/meshes/bunny.obj");
    let out = supple()
        .args(["mesh", obj.to_str().unwrap(), "--spacing", "1.2", "--out"])
        .arg(dir.join("bunny"))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(line.contains("tets; dihedral angles"), "{line}");
    let mesh = supple_io::tetgen::read_tetgen(&dir.join("bunny")).unwrap();
    mesh.validate().unwrap();
    assert!(line.contains(&format!("{} tets", mesh.n_tets())), "{line}");
    let (lo, hi) = supple::mesh::octasection::dihedral_range_deg(&mesh);
    assert!(lo >= 10.7 && hi <= 164.9, "{lo}–{hi}");

    let out = supple()
        .args([
            "mesh",
            obj.to_str().unwrap(),
            "--spacing",
            "1.2",
            "--format",
            "vtu",
            "--out",
        ])
        .arg(dir.join("bunny"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let vtu = supple_io::import::read_mesh(
        &dir.join("bunny.vtu"),
        None,
        supple_io::import::Orient::Check,
    )
    .unwrap();
    assert_eq!(vtu.mesh.tets, mesh.tets);
}

#[test]
fn bad_surfaces_and_spacings_are_refused() {
    let dir = temp_dir("bad");
    let open = dir.join("open.obj");
    std::fs::write(&open, "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n").unwrap();
    let out = supple()
        .args([
            "mesh",
            open.to_str().unwrap(),
            "--spacing",
            "0.1",
            "--out",
            "x",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("open.obj:4: face vertex 4 is out of range"),
        "{err}"
    );

    let obj = repo().join("scenes/meshes/bunny.obj");
    for spacing in [
        "--spacing=0",
        "--spacing=-1",
        "--spacing=1e-6",
        "--spacing=nan",
    ] {
        let out = supple()
            .args(["mesh", obj.to_str().unwrap(), spacing, "--out"])
            .arg(dir.join("b"))
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "spacing {spacing}");
    }
    let out = supple().args(["mesh", "--spacing", "1"]).output().unwrap();
    assert_eq!(out.status.code(), Some(64));
}

/// Issue 45's fuzz run: a cube stuffed at a spacing whose lattice was within the vertex limit
/// but whose arrays and output were not within `ulimit -v 2097152` ran for two minutes and
/// aborted in an allocation (SIGABRT). The memory is now estimated first and compared with
/// what the process may use: under a 1 GiB address-space limit the fine cube is refused at
/// once, naming the file and the limit, and a coarse one is still stuffed.
#[test]
fn a_stuffing_beyond_the_address_space_limit_is_refused_before_it_starts() {
    let dir = temp_dir("ulimit");
    let mut obj = String::new();
    for i in 0..8 {
        obj += &format!("v {} {} {}\n", i & 1, (i >> 1) & 1, (i >> 2) & 1);
    }
    // Corners numbered by the bits x, y, z; two triangles per face.
    for f in [
        [1, 3, 4, 2],
        [5, 6, 8, 7],
        [1, 2, 6, 5],
        [3, 7, 8, 4],
        [1, 5, 7, 3],
        [2, 4, 8, 6],
    ] {
        obj += &format!(
            "f {} {} {}\nf {} {} {}\n",
            f[0], f[1], f[2], f[0], f[2], f[3]
        );
    }
    std::fs::write(dir.join("cube.obj"), obj).unwrap();
    let under_limit = |spacing: &str| {
        let start = std::time::Instant::now();
        let o = Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 1048576 && exec \"$0\" --threads 1 mesh \"$1\" --spacing \"$2\" --out \"$3\"")
            .arg(env!("CARGO_BIN_EXE_supple"))
            .arg(dir.join("cube.obj"))
            .arg(spacing)
            .arg(dir.join("filled"))
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr).to_string();
        (o.status.code(), err, start.elapsed())
    };
    // 4·10⁷ lattice vertices (under the default limit) and about 10⁸ tets.
    let (code, err, took) = under_limit("0.00373");
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("cube.obj") && err.contains("ulimit -v") && err.contains("GB"),
        "{err}"
    );
    assert!(took < std::time::Duration::from_secs(10), "{took:?}");
    let (code, err, _) = under_limit("0.25");
    assert_eq!(code, Some(0), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The same fuzz run, shrunk: two triangles in the plane x = 0 (an open STL) enclose no
/// volume, so the first estimate passes, but ray parity puts a slab of the lattice inside and
/// the fill made 3 tets per lattice vertex; under `ulimit -v` it aborted in an allocation.
/// Once the signs are known the inside count is judged against the same limit.
#[test]
fn a_flat_surface_whose_fill_exceeds_the_address_space_limit_is_refused() {
    let dir = temp_dir("flat");
    let stl = "solid flat\n facet normal 0 0 0\n  outer loop\n   vertex 0 0 0\n   vertex 0 0 1\n   vertex 0 1 1\n  endloop\n endfacet\n facet normal 0 0 0\n  outer loop\n   vertex 0 0 0\n   vertex 0 1 1\n   vertex 0 1 0\n  endloop\n endfacet\nendsolid flat\n";
    std::fs::write(dir.join("flat.stl"), stl).unwrap();
    let o = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 524288 && exec \"$0\" --threads 1 mesh \"$1\" --spacing 2e-3 --out \"$2\"")
        .arg(env!("CARGO_BIN_EXE_supple"))
        .arg(dir.join("flat.stl"))
        .arg(dir.join("filled"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("flat.stl") && err.contains("inside the surface") && err.contains("ulimit -v"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// The boundary triangles of a mesh as sorted vertex triples, sorted.
fn boundary(m: &supple::mesh::TetMesh) -> Vec<[u32; 3]> {
    let mut f: Vec<[u32; 3]> = supple::mesh::boundary_faces(&m.tets)
        .into_iter()
        .map(|mut t| {
            t.sort_unstable();
            t
        })
        .collect();
    f.sort_unstable();
    f
}

#[test]
fn a_tet_mesh_is_improved_keeping_its_boundary_and_vertex_indices() {
    let dir = temp_dir("improve");
    let input = repo().join("scenes/meshes/tube_solid_1k.node");
    let out = supple()
        .args(["mesh", input.to_str().unwrap(), "--improve", "--out"])
        .arg(dir.join("tube"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{}{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    for want in [
        "tube_solid_1k.node: 326 vertices",
        "dihedral angles        before      after",
        "  smallest ",
        "  tets below  10° ",
        "  tets below  20° ",
        "histogram (all six angles of each tet, 10° bins)",
    ] {
        assert!(text.contains(want), "{want:?} in\n{text}");
    }
    let before = supple_io::tetgen::read_tetgen(&input).unwrap();
    let after = supple_io::tetgen::read_tetgen(&dir.join("tube")).unwrap();
    after.validate().unwrap();
    assert_eq!(after.n_vertices(), before.n_vertices());
    assert_eq!(boundary(&after), boundary(&before));
    for f in boundary(&before) {
        for v in f {
            assert_eq!(before.positions[v as usize], after.positions[v as usize]);
        }
    }
    assert!((after.volume() - before.volume()).abs() < 1e-12 * before.volume());
    let (lo0, _) = supple::mesh::octasection::dihedral_range_deg(&before);
    let (lo1, _) = supple::mesh::octasection::dihedral_range_deg(&after);
    assert!(lo1 > lo0, "{lo0} → {lo1}");
    let smallest = text
        .lines()
        .find(|l| l.starts_with("  smallest"))
        .unwrap()
        .to_string();
    assert!(
        smallest.contains(&format!("{lo0:.2}°")) && smallest.contains(&format!("{lo1:.2}°")),
        "{smallest}"
    );

    // A stuffed surface improved before it is written.
    let obj = repo().join("scenes/meshes/bunny.obj");
    let out = supple()
        .args([
            "mesh",
            obj.to_str().unwrap(),
            "--spacing",
            "2",
            "--improve",
            "--passes",
            "2",
            "--out",
        ])
        .arg(dir.join("bunny"))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.contains("tets; dihedral angles") && text.contains("improved in "),
        "{text}"
    );
    supple_io::tetgen::read_tetgen(&dir.join("bunny"))
        .unwrap()
        .validate()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn improve_arguments_that_do_not_fit_are_refused() {
    let dir = temp_dir("improve-bad");
    let node = repo().join("scenes/meshes/tube_solid_1k.node");
    let obj = repo().join("scenes/meshes/bunny.obj");
    let run = |args: &[&str]| {
        let o = supple()
            .arg("mesh")
            .args(args)
            .arg("--out")
            .arg(dir.join("x"))
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    let (code, err) = run(&[node.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("tube_solid_1k.node: a tet mesh is read to be improved: add --improve"),
        "{err}"
    );
    let (code, err) = run(&[node.to_str().unwrap(), "--improve", "--spacing", "1"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("--spacing is for stuffing a surface"), "{err}");
    let (code, err) = run(&[obj.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("bunny.obj: a surface is stuffed at a lattice spacing: add --spacing"),
        "{err}"
    );
    let (code, err) = run(&[node.to_str().unwrap(), "--improve", "--passes", "1000"]);
    assert_eq!(code, Some(1));
    assert!(
        err.contains("tube_solid_1k.node: --improve: passes = 1000: at most 100"),
        "{err}"
    );
    // --passes without --improve is a usage error.
    let (code, _) = run(&[node.to_str().unwrap(), "--passes", "2"]);
    assert_eq!(code, Some(64));
    let _ = std::fs::remove_dir_all(&dir);
}
