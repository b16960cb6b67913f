//! Scenes and meshes described by a program rather than a file (the Python module): the keys
//! of a scene file as TOML tables, validated by the same code as scene files.

use super::file::MeshSection;
use super::{read_mesh, validate, BodyIssue, Scene, SceneError};
use crate::files::Files;
use std::path::Path;
use supple::mesh::TetMesh;

/// A tet mesh handed to [`scene_from_table`] in memory, with its named vertex sets (for
/// `fixed = [{ region = "..." }]`).
#[derive(Debug, Clone)]
pub struct GivenMesh {
    pub mesh: TetMesh,
    pub regions: Vec<(String, Vec<u32>)>,
}

/// A scene described by a program rather than a file (the Python module): the keys of a
/// scene file as a TOML table, validated by the same code, where a body's mesh may be
/// `{ kind = "given", index = k }` for `meshes[k]`. `name` stands for the file in errors
/// and anchors relative paths (force files); errors name the key path
/// (`body[0].material.poisson = 0.5: must be below 0.5`).
///
/// ```
/// use supple_io::scene::{scene_from_table, GivenMesh};
/// use supple::mesh::{box_grid, BoxGrid, TetSplit};
/// let mesh = box_grid(&BoxGrid { cells: [2, 1, 1], cell_size: [0.1; 3].into(), origin: Default::default(), split: TetSplit::Five });
/// let table: toml::Table = toml::from_str("dt = 0.01\nduration = 1.0\n[[body]]\nmesh = { kind = \"given\", index = 0 }\n\
///     material = { model = \"linear\", youngs = 1e5, poisson = 0.3, density = 1000.0 }\n").unwrap();
/// let given = [GivenMesh { mesh, regions: Vec::new() }];
/// let scene = scene_from_table(table, "python", &given).unwrap();
/// assert_eq!(scene.bodies[0].mesh.n_tets(), 10);
/// ```
pub fn scene_from_table(
    table: toml::Table,
    name: &str,
    meshes: &[GivenMesh],
) -> Result<Scene, SceneError> {
    let path = Path::new(name);
    let file = super::parse::scene_file_from_table(table, path)?;
    validate(file, path, Files::Disk, meshes)
}

/// The mesh a body's `mesh = { ... }` table describes (a box, a mesh file, a stuffed
/// surface; paths relative to `dir`), with its named regions and what loading changed or
/// left out; validated as in a scene, errors naming `key.mesh...`.
pub fn mesh_from_table(
    table: toml::Table,
    key: &str,
    dir: &Path,
) -> Result<(GivenMesh, Vec<String>), SceneError> {
    let invalid = |message: String| SceneError::Invalid {
        path: dir.to_path_buf(),
        message,
    };
    let section: MeshSection = serde_path_to_error::deserialize(toml::Value::Table(table))
        .map_err(|e| {
            let path = e.path().to_string();
            invalid(format!("{key}.mesh.{path}: {}", e.into_inner().message()))
        })?;
    let mut notes = Vec::new();
    let given =
        read_mesh(section, key, dir, Files::Disk, &[], &mut notes).map_err(|e| match e {
            BodyIssue::Mesh(key, source) => SceneError::Mesh {
                path: dir.to_path_buf(),
                key,
                source,
            },
            BodyIssue::Invalid(m) => invalid(m),
        })?;
    Ok((given, notes))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse_scene;

    const SCENE: &str = r#"
dt = 0.01
duration = 0.5
[[body]]
name = "bar"
mesh = { kind = "box", cells = [4, 1, 1], cell_size = 0.1 }
material = { model = "corotational", youngs = 1e5, poisson = 0.3, density = 1000.0 }
fixed = [{ vertices = [0, 5] }]
"#;

    fn table_with_given_mesh() -> toml::Table {
        let mut t: toml::Table = toml::from_str(SCENE).unwrap();
        let body = t["body"].as_array_mut().unwrap()[0].as_table_mut().unwrap();
        body.insert(
            "mesh".into(),
            toml::Value::Table(toml::from_str("kind = \"given\"\nindex = 0").unwrap()),
        );
        t
    }

    fn box_mesh() -> GivenMesh {
        let table = toml::from_str("kind = \"box\"\ncells = [4, 1, 1]\ncell_size = 0.1").unwrap();
        mesh_from_table(table, "m", Path::new(".")).unwrap().0
    }

    #[test]
    fn a_given_mesh_makes_the_same_scene_as_the_file() {
        let file = parse_scene(SCENE, Path::new("bar.toml")).unwrap();
        let given = scene_from_table(table_with_given_mesh(), "bar", &[box_mesh()]).unwrap();
        let (a, b) = (&file.bodies[0], &given.bodies[0]);
        assert_eq!(a.mesh, b.mesh);
        assert_eq!(a.fixed, b.fixed);
        assert_eq!(
            (a.youngs, a.poisson, a.density),
            (b.youngs, b.poisson, b.density)
        );
        assert_eq!(
            (file.dt, file.duration, file.steps()),
            (given.dt, given.duration, 50)
        );
    }

    #[test]
    fn errors_name_the_key() {
        let mut t = table_with_given_mesh();
        let body = t["body"].as_array_mut().unwrap()[0].as_table_mut().unwrap();
        body["material"]
            .as_table_mut()
            .unwrap()
            .insert("poisson".into(), toml::Value::Float(0.5));
        let e = scene_from_table(t, "py", &[box_mesh()]).unwrap_err();
        assert!(
            e.to_string().contains("body[0].material.poisson = 0.5"),
            "{e}"
        );
        let mut t = table_with_given_mesh();
        t.insert("dt".into(), toml::Value::String("fast".into()));
        let e = scene_from_table(t, "py", &[box_mesh()]).unwrap_err();
        assert!(e.to_string().contains("dt: invalid type"), "{e}");
        let e = scene_from_table(table_with_given_mesh(), "py", &[]).unwrap_err();
        assert!(
            e.to_string().contains("body[0].mesh: kind \"given\""),
            "{e}"
        );
        let table = toml::from_str("kind = \"box\"\ncells = [0, 1, 1]\ncell_size = 0.1").unwrap();
        let e = mesh_from_table(table, "m", Path::new(".")).unwrap_err();
        assert!(e.to_string().contains("m.mesh.cells = [0, 1, 1]"), "{e}");
    }

    #[test]
    fn a_scene_file_cannot_name_a_given_mesh() {
        let text = SCENE.replace(
            "{ kind = \"box\", cells = [4, 1, 1], cell_size = 0.1 }",
            "{ kind = \"given\", index = 0 }",
        );
        let e = parse_scene(&text, Path::new("bar.toml")).unwrap_err();
        assert!(e.to_string().contains("handed over by a program"), "{e}");
    }
}
