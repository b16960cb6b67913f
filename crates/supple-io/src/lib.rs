//! File formats and scene files for Supple: TetGen meshes, OBJ surfaces, ParaView VTU/VTP/PVD
//! output, and the TOML scene format.

pub mod error;
pub mod files;
pub mod import;
pub mod obj;
pub mod output;
pub mod pvd;
pub mod scene;
pub mod tetgen;
pub mod vtk_data;
pub mod vtp;
pub mod vtu;
pub mod vtu_read;

pub use error::IoError;
pub use files::Files;
pub use scene::{
    load_scene, parse_scene, parse_scene_from_memory, parse_scene_with, scene_from_table, ColorBy,
    GivenMesh, OutputSettings, Scene, SceneError,
};
