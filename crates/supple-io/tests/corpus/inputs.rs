//! The valid inputs the corpus mutates: the bundled scenes with their meshes, small inline
//! scenes (box meshes and every mesh format), the mesh files under `tests/data/`, and meshes
//! and surfaces generated in memory.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::path::Path;
use supple::mesh::{boundary_faces, box_grid, BoxGrid, TetSplit};

pub type FileMap = BTreeMap<String, Vec<u8>>;

/// A scene as text, named `name`, with the files it refers to.
pub struct SceneInput {
    pub name: String,
    pub text: String,
    pub files: FileMap,
}

/// A mesh or surface file (with its companion, for TetGen) to read as `path`.
pub struct MeshInput {
    pub path: String,
    pub files: FileMap,
}

fn manifest() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const MATERIAL: &str =
    r#"material = { model = "corotational", youngs = 1e5, poisson = 0.33, density = 1000.0 }"#;

/// A small scene around one body table `body`.
fn inline(body: &str, extra: &str) -> String {
    format!(
        "name = \"inline\"\ndt = 0.01\nduration = 0.05\ngravity = [0.0, -9.81, 0.0]\n\n\
         [integrator]\nkind = \"backward_euler_linearized\"\n\n\
         [solver]\nkind = \"pcg\"\ntolerance = 1e-6\nmax_iterations = 200\n\n\
         [output]\nframe_every = 1\nvtu = true\n\n\
         [[body]]\nname = \"b\"\n{body}\n{MATERIAL}\n\n{extra}"
    )
}

/// Every bundled scene with the mesh and surface files it names, and the inline scenes.
pub fn scenes() -> Vec<SceneInput> {
    let dir = manifest().join("../../scenes");
    let mut meshes = FileMap::new();
    for entry in std::fs::read_dir(dir.join("meshes")).expect("scenes/meshes") {
        let path = entry.expect("entry").path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        meshes.insert(format!("meshes/{name}"), read(&path));
    }
    let mut out = Vec::new();
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .expect("scenes")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    names.sort();
    for path in names {
        let text = String::from_utf8(read(&path)).expect("UTF-8 scene");
        let files = meshes
            .iter()
            .filter(|(k, _)| {
                let stem = k.rsplit_once('.').map_or(k.as_str(), |(s, _)| s);
                text.contains(&format!("\"{stem}\"")) || text.contains(&format!("\"{k}\""))
            })
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        out.push(SceneInput {
            name: path.file_name().unwrap().to_string_lossy().into_owned(),
            text,
            files,
        });
    }
    let data = manifest().join("tests/data");
    let file = |name: &str| (format!("data/{name}"), read(&data.join(name)));
    let fixed_plane =
        r#"fixed = [{ plane = { point = [0.0, 0.0, 0.0], normal = [-1.0, 0.0, 0.0] } }]"#;
    let probe = "[[probe]]\nname = \"tip\"\npoint = [0.3, 0.2, 0.2]\n";
    let mut add = |name: &str, text: String, files: Vec<(String, Vec<u8>)>| {
        out.push(SceneInput {
            name: name.into(),
            text,
            files: files.into_iter().collect(),
        })
    };
    add(
        "inline_box.toml",
        inline(
            &format!("mesh = {{ kind = \"box\", cells = [3, 2, 2], cell_size = 0.1, split = 5 }}\n{fixed_plane}"),
            probe,
        ),
        vec![],
    );
    add(
        "inline_box_newton.toml",
        inline(
            "mesh = { kind = \"box\", cells = [2, 2, 2], cell_size = [0.1, 0.05, 0.1], origin = [0.0, 1.0, 0.0] }\n\
             transform = { scale = 2.0, rotate_deg = [0.0, 30.0, 0.0], translate = [0.0, 1.0, 0.0] }",
            "[step_control]\nmax_halvings = 4\n",
        )
        .replace("backward_euler_linearized", "backward_euler")
        .replace("[solver]\nkind = \"pcg\"", "[solver]\nkind = \"cholesky\""),
        vec![],
    );
    add(
        "inline_tetgen.toml",
        inline(
            &format!("mesh = {{ kind = \"tetgen\", path = \"data/cube\" }}\n{fixed_plane}"),
            probe,
        ),
        vec![file("cube.node"), file("cube.ele")],
    );
    for (kind, name) in [
        ("gmsh", "mixed_gmsh22.msh"),
        ("gmsh", "mixed_gmsh22_bin.msh"),
        ("gmsh", "cube_gmsh41.msh"),
        ("vtu", "cube_zlib.vtu"),
        ("vtu", "cube_ascii.vtu"),
        ("vtk", "cube.vtk"),
        ("vtk", "cube42_bin.vtk"),
        ("medit", "cube.mesh"),
        ("file", "cube_gmsh22.msh"),
    ] {
        let fixed = if name.starts_with("mixed") {
            "fixed = [{ region = \"clamp\" }]"
        } else {
            fixed_plane
        };
        add(
            &format!("inline_{}.toml", name.replace('.', "_")),
            inline(
                &format!("mesh = {{ kind = \"{kind}\", path = \"data/{name}\", orient = \"fix\" }}\n{fixed}"),
                probe,
            ),
            vec![file(name)],
        );
    }
    add(
        "inline_surface.toml",
        inline(
            "mesh = { kind = \"surface\", path = \"cube.obj\", spacing = 0.25 }",
            "",
        ),
        vec![("cube.obj".into(), cube_obj().into_bytes())],
    );
    add(
        "inline_skin.toml",
        inline(
            "mesh = { kind = \"box\", cells = [2, 2, 2], cell_size = 0.5 }\nsurface = \"cube.obj\"",
            "",
        ),
        vec![("cube.obj".into(), cube_obj().into_bytes())],
    );
    out
}

/// A closed unit cube (0.05 to 0.95) as OBJ, with a quad, a comment and `vt`/`vn` lines.
pub fn cube_obj() -> String {
    let mut s = String::from("# cube\no cube\n");
    for k in 0..8 {
        let c = |b: usize| if k & b != 0 { 0.95 } else { 0.05 };
        writeln!(s, "v {} {} {}", c(1), c(2), c(4)).unwrap();
    }
    s.push_str("vt 0 0\nvn 0 0 1\n");
    // Faces wound outwards: -z, +z, -y, +y, -x, +x.
    s.push_str("f 1 3 4 2\nf 5/1 6/1 8/1\nf 5//1 8//1 7//1\nf 1 2 6\nf 1 6 5\nf 3 7 8\nf 3 8 4\n");
    s.push_str("f 1 5 7\nf 1 7 3\nf -7 -4 -8\nf 4 8 6\n");
    s
}

/// The cube of [`cube_obj`] as ASCII STL.
fn cube_stl() -> String {
    let obj = supple_io::import::surface::parse_obj(&cube_obj(), Path::new("cube.obj"))
        .expect("cube.obj parses");
    let mut s = String::from("solid cube\n");
    for t in &obj.triangles {
        s.push_str(" facet normal 0 0 0\n  outer loop\n");
        for &i in t {
            let p = obj.vertices[i as usize];
            writeln!(s, "   vertex {} {} {}", p.x, p.y, p.z).unwrap();
        }
        s.push_str("  endloop\n endfacet\n");
    }
    s.push_str("endsolid cube\n");
    s
}

/// A generated 2×2×1 box as TetGen text, and its boundary as OBJ.
fn generated_box() -> (String, String, String) {
    let mesh = box_grid(&BoxGrid {
        cells: [2, 2, 1],
        cell_size: nalgebra::Vector3::new(0.1, 0.1, 0.1),
        origin: nalgebra::Vector3::zeros(),
        split: TetSplit::Five,
    });
    let mut node = format!("# generated\n{} 3 0 0\n", mesh.n_vertices());
    let mut obj = String::new();
    for (i, p) in mesh.positions.iter().enumerate() {
        writeln!(node, "{} {} {} {}", i + 1, p.x, p.y, p.z).unwrap();
        writeln!(obj, "v {} {} {}", p.x, p.y, p.z).unwrap();
    }
    let mut ele = format!("{} 4 0\n", mesh.n_tets());
    for (t, tet) in mesh.tets.iter().enumerate() {
        writeln!(
            ele,
            "{} {} {} {} {}",
            t + 1,
            tet[0] + 1,
            tet[1] + 1,
            tet[2] + 1,
            tet[3] + 1
        )
        .unwrap();
    }
    for f in boundary_faces(&mesh.tets) {
        writeln!(obj, "f {} {} {}", f[0] + 1, f[1] + 1, f[2] + 1).unwrap();
    }
    (node, ele, obj)
}

/// Every mesh file under `tests/data/`, a generated box (TetGen), and surfaces (OBJ, STL).
pub fn meshes() -> Vec<MeshInput> {
    let data = manifest().join("tests/data");
    let mut names: Vec<String> = std::fs::read_dir(&data)
        .expect("tests/data")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| !n.ends_with(".md") && !n.ends_with(".py") && !n.ends_with(".node"))
        .collect();
    names.sort();
    let mut out = Vec::new();
    for name in names {
        let mut files = FileMap::new();
        if let Some(stem) = name.strip_suffix(".ele") {
            files.insert(
                format!("{stem}.node"),
                read(&data.join(format!("{stem}.node"))),
            );
        }
        files.insert(name.clone(), read(&data.join(&name)));
        out.push(MeshInput { path: name, files });
    }
    let (node, ele, obj) = generated_box();
    let one = |path: &str, bytes: Vec<u8>| MeshInput {
        path: path.into(),
        files: [(path.to_string(), bytes)].into_iter().collect(),
    };
    out.push(MeshInput {
        path: "gen.node".into(),
        files: [
            ("gen.node".into(), node.into_bytes()),
            ("gen.ele".into(), ele.into_bytes()),
        ]
        .into_iter()
        .collect(),
    });
    out.push(one("gen.obj", obj.into_bytes()));
    out.push(one("cube.obj", cube_obj().into_bytes()));
    out.push(one("cube.stl", cube_stl().into_bytes()));
    out
}
