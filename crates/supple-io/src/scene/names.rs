//! Names that become file names and CSV column prefixes: bodies, probes and the scene.
//!
//! A body's name is part of its frame files (`frames/<body>_frame_NNNNN.vtu`) and of its
//! metrics columns (`<body>.volume`), a probe's of its columns, the scene's of the default
//! output folder (`out/<scene>`). Restricting them to `[A-Za-z0-9_-]`, 1 to
//! [`MAX_NAME_LEN`] characters, keeps every such path inside the output folder and every
//! CSV header unquoted.

/// The longest accepted name, in characters.
pub const MAX_NAME_LEN: usize = 64;

fn allowed(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Checks a name given in the scene at `key` (for example `body[1].name`).
pub fn check_name(key: &str, name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err(format!("{key} = \"\": a name must not be empty"));
    }
    let len = name.chars().count();
    if len > MAX_NAME_LEN {
        return Err(format!(
            "{key}: a name of {len} characters is too long (at most {MAX_NAME_LEN})"
        ));
    }
    if let Some(c) = name.chars().find(|&c| !allowed(c)) {
        return Err(format!(
            "{key} = {name:?}: the character {c:?} is not allowed (use letters, digits, `_` and `-`)"
        ));
    }
    Ok(())
}

/// A safe name made from a file stem (the scene's default name): characters outside the
/// allowed set become `_`, the result is cut to [`MAX_NAME_LEN`] characters, and an empty
/// stem gives `scene`.
pub fn name_from_stem(stem: &str) -> String {
    let name: String = stem
        .chars()
        .map(|c| if allowed(c) { c } else { '_' })
        .take(MAX_NAME_LEN)
        .collect();
    if name.is_empty() {
        "scene".into()
    } else {
        name
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_separators_commas_dots_and_empty_names() {
        for bad in ["", "a/b", "..", "../../x", "a,b", "a.b", "a b", "é", "a\\b"] {
            let e = check_name("body[0].name", bad).unwrap_err();
            assert!(e.starts_with("body[0].name"), "{e}");
        }
        assert!(check_name("k", &"x".repeat(MAX_NAME_LEN + 1))
            .unwrap_err()
            .contains("too long"));
        for good in ["bar", "Bar_2", "left-tip", &"x".repeat(MAX_NAME_LEN)] {
            check_name("k", good).unwrap();
        }
    }

    #[test]
    fn stems_become_safe_names() {
        assert_eq!(name_from_stem("my scene.v2"), "my_scene_v2");
        assert_eq!(name_from_stem(""), "scene");
        assert_eq!(name_from_stem(&"y".repeat(100)).len(), MAX_NAME_LEN);
        check_name("name", &name_from_stem("../é,x")).unwrap();
    }
}
