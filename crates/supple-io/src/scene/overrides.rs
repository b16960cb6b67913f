//! `--set KEY=VALUE`: a scene key replaced from the command line
//! (`--set body[0].material.youngs=2e5 --set dt=0.005`), applied to the parsed TOML before
//! the keys are checked and the scene deserialized, so a set value is validated exactly as
//! one written in the file.

use std::fmt;
use std::str::FromStr;
use toml::Value;

/// One `KEY=VALUE` override: a key path (`body[0].material.youngs`, `solver.kind`) and a
/// TOML value (`2e5`, `true`, `[0.0, -9.81, 0.0]`, `"bdf2"`; a word that is no TOML value,
/// such as `bdf2`, is taken as a string).
#[derive(Debug, Clone, PartialEq)]
pub struct Override {
    /// The key path as written.
    pub key: String,
    segments: Vec<Segment>,
    pub value: Value,
}

#[derive(Debug, Clone, PartialEq)]
enum Segment {
    Key(String),
    Index(usize),
}

impl fmt::Display for Override {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.key, self.value)
    }
}

impl FromStr for Override {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let Some((key, value)) = s.split_once('=') else {
            return Err(format!(
                "`{s}`: expected KEY=VALUE (for example body[0].material.youngs=2e5)"
            ));
        };
        let key = key.trim();
        let segments = segments(key).map_err(|e| format!("`{s}`: {e}"))?;
        let value = value.trim();
        let value = match toml::from_str::<toml::Table>(&format!("v = {value}")) {
            Ok(mut t) => t.remove("v").expect("the key just written"),
            Err(_) if !value.is_empty() => Value::String(value.to_string()),
            Err(_) => return Err(format!("`{s}`: no value after `=`")),
        };
        Ok(Self {
            key: key.to_string(),
            segments,
            value,
        })
    }
}

/// `body[0].material.youngs` → `body`, `[0]`, `material`, `youngs`.
fn segments(key: &str) -> Result<Vec<Segment>, String> {
    let mut out = Vec::new();
    for part in key.split('.') {
        let (name, mut rest) = part.split_at(part.find('[').unwrap_or(part.len()));
        let valid = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
        if name.is_empty() || !name.chars().all(valid) {
            return Err(format!(
                "`{part}` is not a key (letters, digits, `_`, then optional [index])"
            ));
        }
        out.push(Segment::Key(name.to_string()));
        while !rest.is_empty() {
            let index = rest
                .strip_prefix('[')
                .and_then(|r| r.split_once(']'))
                .and_then(|(i, r)| i.parse::<usize>().ok().map(|i| (i, r)));
            let Some((i, r)) = index else {
                return Err(format!("`{part}`: an index is written [N], N from 0"));
            };
            out.push(Segment::Index(i));
            rest = r;
        }
    }
    Ok(out)
}

/// Applies `overrides` in order; a path through something that is not there or not a table
/// (an index past the last `[[body]]`, a key under a number) is refused with the override
/// and the reason. Missing tables on the way are created (`--set solver.kind=cholesky` in a
/// scene without `[solver]`).
pub fn apply_overrides(table: &mut toml::Table, overrides: &[Override]) -> Result<(), String> {
    for o in overrides {
        apply(table, o).map_err(|e| format!("--set {}: {e}", o.key))?;
    }
    Ok(())
}

fn apply(root: &mut toml::Table, o: &Override) -> Result<(), String> {
    let mut v = Value::Table(std::mem::take(root));
    let result = descend(&mut v, &o.segments, "", &o.value);
    if let Value::Table(t) = v {
        *root = t;
    }
    result
}

/// Sets `value` at the path `rest` below `v` (reached at key path `here`).
fn descend(v: &mut Value, rest: &[Segment], here: &str, value: &Value) -> Result<(), String> {
    let mut v = v;
    let mut here = here.to_string();
    for (n, seg) in rest.iter().enumerate() {
        let last = n + 1 == rest.len();
        match seg {
            Segment::Index(i) => {
                let Value::Array(a) = v else {
                    return Err(format!("`{here}` is a {}, not an array", v.type_str()));
                };
                let len = a.len();
                let Some(item) = a.get_mut(*i) else {
                    return Err(format!(
                        "`{here}[{i}]`: the scene has {len} ({})",
                        if len == 0 {
                            "none".to_string()
                        } else {
                            format!("{here}[0] to {here}[{}]", len - 1)
                        }
                    ));
                };
                here = format!("{here}[{i}]");
                if last {
                    *item = value.clone();
                    return Ok(());
                }
                v = item;
            }
            Segment::Key(k) => {
                let Value::Table(t) = v else {
                    return Err(format!("`{here}` is a {}, not a table", v.type_str()));
                };
                here = join(&here, k);
                if last {
                    t.insert(k.clone(), value.clone());
                    return Ok(());
                }
                let next_is_index = matches!(rest[n + 1], Segment::Index(_));
                if next_is_index && !t.contains_key(k.as_str()) {
                    return Err(format!("the scene has no `{here}`"));
                }
                v = t
                    .entry(k.clone())
                    .or_insert_with(|| Value::Table(toml::Table::new()));
            }
        }
    }
    Ok(())
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Whether `path` (a problem's key path) is `key` or lies under it.
pub(super) fn under(path: &str, key: &str) -> bool {
    path.strip_prefix(key)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('.') || rest.starts_with('['))
}
