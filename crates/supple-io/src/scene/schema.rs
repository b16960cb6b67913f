//! The scene format as a JSON Schema, generated from the types the parser deserializes
//! (`file.rs` and the section types beside it), so the reference cannot drift from the
//! parser: `supple schema` prints it, editors that read JSON Schema for TOML (taplo) complete
//! and check scene files with it, and [`super::keys`] checks a scene's keys against it before
//! deserializing (all unknown and missing keys at once, with "did you mean").

use super::file::SceneFile;
use schemars::generate::SchemaSettings;
use std::sync::OnceLock;

/// The scene format's JSON Schema (draft 7, which taplo and most editors read): every key
/// with its type, default, allowed values and what it does (from the doc comments).
pub fn scene_schema() -> &'static serde_json::Value {
    static SCHEMA: OnceLock<serde_json::Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let schema = SchemaSettings::draft07()
            .into_generator()
            .into_root_schema_for::<SceneFile>();
        schema.to_value()
    })
}

/// [`scene_schema`] as pretty-printed JSON.
pub fn scene_schema_json() -> String {
    serde_json::to_string_pretty(scene_schema()).expect("a JSON value always serializes")
}
