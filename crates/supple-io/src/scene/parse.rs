//! Scene text to [`SceneFile`]: TOML syntax, `--set` overrides, every unknown and missing key
//! at once (checked against the generated schema), then serde for the values' types; each
//! problem named by file, line, column and key path.

use super::file::SceneFile;
use super::keys::{check_keys, KeyProblem};
use super::overrides::{apply_overrides, under, Override};
use super::schema::scene_schema;
use super::SceneError;
use std::collections::BTreeMap;
use std::path::Path;
use toml::de::{DeTable, DeValue};

/// Parses `text` (the scene at `path`) with `overrides` applied.
pub(super) fn scene_file(
    text: &str,
    path: &Path,
    overrides: &[Override],
) -> Result<SceneFile, SceneError> {
    let mut table: toml::Table = toml::from_str(text).map_err(|e| {
        let (line, column) = e.span().map_or((1, 1), |s| line_col(text, s.start));
        SceneError::Syntax {
            path: path.to_path_buf(),
            line,
            column,
            key: String::new(),
            // toml's own words for an integer past i64 name no limit.
            message: match e.message() {
                "u64 value was too large" => {
                    "integer too large: it overflows TOML's integers (at most 2⁶³ − 1)".into()
                }
                m => m.to_string(),
            },
        }
    })?;
    apply_overrides(&mut table, overrides).map_err(|message| SceneError::Invalid {
        path: path.to_path_buf(),
        message,
    })?;
    let spans = Spans::new(text);
    // A problem at or under a set key, or at a table the set key created, is the override's.
    let place = |key: &str, at: &str| match overrides
        .iter()
        .find(|o| under(key, &o.key) || under(&o.key, key) && !key.is_empty())
    {
        Some(o) => format!("{}: --set {}", path.display(), o.key),
        None => {
            let (line, column) = spans.line_col(text, at);
            format!("{}:{line}:{column}", path.display())
        }
    };
    let problems = check_keys(&table, scene_schema());
    if !problems.is_empty() {
        return Err(SceneError::Keys {
            path: path.to_path_buf(),
            problems: problems
                .iter()
                .map(|KeyProblem { key, at, message }| {
                    format!("{}: {key}: {message}", place(key, at))
                })
                .collect(),
        });
    }
    serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
        let key = e.path().to_string();
        let message = e.into_inner().message().to_string();
        if key == "." {
            return SceneError::Invalid {
                path: path.to_path_buf(),
                message,
            };
        }
        SceneError::Keys {
            path: path.to_path_buf(),
            problems: vec![format!("{}: {key}: {message}", place(&key, &key))],
        }
    })
}

/// [`scene_file`] for a table made by a program (no text, no lines): problems name the key.
pub(super) fn scene_file_from_table(
    table: toml::Table,
    path: &Path,
) -> Result<SceneFile, SceneError> {
    let invalid = |message: String| SceneError::Invalid {
        path: path.to_path_buf(),
        message,
    };
    let problems = check_keys(&table, scene_schema());
    if !problems.is_empty() {
        let lines: Vec<String> = problems
            .into_iter()
            .map(|p| format!("{}: {}", p.key, p.message))
            .collect();
        return Err(invalid(lines.join("; ")));
    }
    serde_path_to_error::deserialize(toml::Value::Table(table)).map_err(|e| {
        let key = e.path().to_string();
        let message = e.into_inner().message().to_string();
        invalid(if key == "." {
            message
        } else {
            format!("{key}: {message}")
        })
    })
}

pub(super) fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    (line, column)
}

/// Where each key path of a scene's text starts (`body[0].material.youngs` → the offset of
/// `youngs`; `body[0]` → its `[[body]]`), for messages about a table built from the text.
struct Spans(BTreeMap<String, usize>);

impl Spans {
    fn new(text: &str) -> Self {
        let mut map = BTreeMap::new();
        if let Ok(root) = DeTable::parse(text) {
            walk(root.get_ref(), "", &mut map);
        }
        Self(map)
    }

    /// The line and column of `key`, or of the nearest enclosing key the text has (a key
    /// path set by no line: the table it would go in); the file's start for the root.
    fn line_col(&self, text: &str, key: &str) -> (usize, usize) {
        let mut k = key;
        loop {
            if let Some(&offset) = self.0.get(k) {
                return line_col(text, offset);
            }
            match k.rfind(['.', '[']) {
                Some(i) => k = &k[..i],
                None => return (1, 1),
            }
        }
    }
}

fn walk(table: &DeTable<'_>, path: &str, map: &mut BTreeMap<String, usize>) {
    for (k, v) in table {
        let key = if path.is_empty() {
            k.get_ref().to_string()
        } else {
            format!("{path}.{}", k.get_ref())
        };
        map.insert(key.clone(), k.span().start);
        value(v.get_ref(), &key, map);
    }
}

fn value(v: &DeValue<'_>, key: &str, map: &mut BTreeMap<String, usize>) {
    match v {
        DeValue::Table(t) => walk(t, key, map),
        DeValue::Array(a) => {
            for (i, item) in a.iter().enumerate() {
                let k = format!("{key}[{i}]");
                map.insert(k.clone(), item.span().start);
                value(item.get_ref(), &k, map);
            }
        }
        _ => {}
    }
}
