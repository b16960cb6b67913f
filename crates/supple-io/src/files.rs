//! Where a scene's mesh and force files come from: the file system, or bytes held in memory
//! (a web page has no file system: it fetches the scene and its meshes and hands them over).

use crate::error::IoError;
use std::collections::BTreeMap;
use std::path::{Component, Path};

/// The files a scene may name (mesh files, force files), by path.
#[derive(Debug, Clone, Copy)]
pub enum Files<'a> {
    /// Read from the file system.
    Disk,
    /// Looked up in a map from path to bytes. Keys are paths relative to the scene's folder
    /// with `/` separators (`meshes/tube_solid_1k.node`); a leading `./` and empty or `.`
    /// components are ignored on both sides.
    Memory(&'a BTreeMap<String, Vec<u8>>),
}

impl Files<'_> {
    /// The bytes of `path`.
    pub fn read(&self, path: &Path) -> Result<Vec<u8>, IoError> {
        match self {
            Files::Disk => std::fs::read(path).map_err(|e| IoError::io(path, e)),
            Files::Memory(map) => {
                let key = key(path);
                map.iter()
                    .find(|(k, _)| normalize(k) == key)
                    .map(|(_, v)| v.clone())
                    .ok_or_else(|| {
                        let have = map.keys().cloned().collect::<Vec<_>>().join(", ");
                        IoError::io(
                            path,
                            std::io::Error::new(
                                std::io::ErrorKind::NotFound,
                                format!("not among the files given (they are: {have})"),
                            ),
                        )
                    })
            }
        }
    }

    /// The text of `path` (UTF-8).
    pub fn read_to_string(&self, path: &Path) -> Result<String, IoError> {
        match self {
            Files::Disk => std::fs::read_to_string(path).map_err(|e| IoError::io(path, e)),
            Files::Memory(_) => String::from_utf8(self.read(path)?).map_err(|e| {
                IoError::io(
                    path,
                    std::io::Error::new(std::io::ErrorKind::InvalidData, e.to_string()),
                )
            }),
        }
    }
}

/// `path` as a map key: normal components joined by `/`.
fn key(path: &Path) -> String {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_string_lossy().into_owned()),
            Component::ParentDir => Some("..".into()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("/")
}

fn normalize(k: &str) -> String {
    k.split(['/', '\\'])
        .filter(|c| !c.is_empty() && *c != ".")
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_files_are_found_whatever_the_dots_and_missing_ones_are_named() {
        let mut map = BTreeMap::new();
        map.insert("./meshes/a.node".to_string(), b"1 2".to_vec());
        let files = Files::Memory(&map);
        assert_eq!(
            files.read_to_string(Path::new("meshes/a.node")).unwrap(),
            "1 2"
        );
        assert_eq!(files.read(Path::new("./meshes//a.node")).unwrap(), b"1 2");
        let err = files
            .read(Path::new("meshes/b.ele"))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("meshes/b.ele") && err.contains("./meshes/a.node"),
            "{err}"
        );
    }
}
