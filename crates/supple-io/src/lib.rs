//! File formats and scene files for Supple: TetGen meshes, OBJ surfaces, ParaView VTU/VTP/PVD
//! output, and the TOML scene format.
//!
//! A scene parsed from text, with its mesh given as bytes (no file system needed), built into
//! a world and stepped; errors name the file and the key:
//!
//! ```
//! use std::collections::BTreeMap;
//!
//! let scene = r#"
//! name = "drop"
//! dt = 0.01
//! duration = 0.1
//! [[body]]
//! mesh = { kind = "tetgen", path = "meshes/tet" }
//! material = { model = "corotational", youngs = 1e5, poisson = 0.3, density = 1000.0 }
//! "#;
//! let files = BTreeMap::from([
//!     ("meshes/tet.node".to_string(), b"4 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n".to_vec()),
//!     ("meshes/tet.ele".to_string(), b"1 4 0\n0 0 1 2 3\n".to_vec()),
//! ]);
//! let scene = supple_io::parse_scene_from_memory(scene, "drop.toml", &files)?;
//! assert_eq!((scene.steps(), scene.bodies[0].mesh.n_tets()), (10, 1));
//! let mut world = scene.build_world()?;
//! world.step()?;
//! assert!(world.bodies[0].x.iter().all(|p| p.y < 1.0), "falling");
//!
//! let bad = scene_text_with("poisson = 0.6");
//! let err = supple_io::parse_scene_from_memory(&bad, "drop.toml", &files).unwrap_err();
//! let err = err.to_string();
//! assert!(err.contains("drop.toml") && err.contains("poisson"), "{err}");
//! # fn scene_text_with(material: &str) -> String {
//! #     format!("dt = 0.01\nduration = 0.1\n[[body]]\nmesh = {{ kind = \"tetgen\", path = \"meshes/tet\" }}\n\
//! #              material = {{ model = \"linear\", youngs = 1e5, {material}, density = 1000.0 }}\n")
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod error;
pub mod files;
pub mod import;
pub mod obj;
pub mod output;
pub mod pvd;
pub mod scene;
pub mod snapshot;
pub mod tetgen;
pub mod vtk_data;
pub mod vtp;
pub mod vtu;
pub mod vtu_read;

pub use error::IoError;
pub use files::Files;
pub use scene::{
    load_scene, load_scene_with_overrides, parse_scene, parse_scene_from_memory, parse_scene_with,
    scene_from_table, scene_schema, ColorBy, GivenMesh, OutputSettings, Override, Scene,
    SceneError,
};
