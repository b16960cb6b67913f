//! A scene's keys checked against the generated schema ([`super::schema`]) before it is
//! deserialized: every unknown key (with "did you mean" from the keys allowed there) and
//! every missing required key is reported at once, where serde stops at the first. Values'
//! types are left to serde, which names the key path of the first bad one.

use serde_json::Value as Json;
use toml::Value;

/// One key problem: the key path (`body[0].material.yungs`), where to point in the file (the
/// key itself, or for a missing key the table that lacks it), and what is wrong.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct KeyProblem {
    pub(super) key: String,
    pub(super) at: String,
    pub(super) message: String,
}

/// Every unknown and missing key of `table` against the schema `root`.
pub(super) fn check_keys(table: &toml::Table, root: &Json) -> Vec<KeyProblem> {
    let mut out = Vec::new();
    Walk {
        root,
        out: &mut out,
    }
    .object(table, root, "");
    out
}

struct Walk<'a> {
    root: &'a Json,
    out: &'a mut Vec<KeyProblem>,
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

impl<'a> Walk<'a> {
    /// `s` with its `$ref`s followed and single-element `allOf` wrappers (draft 7's way of
    /// giving a `$ref` a description or default) unwrapped.
    fn resolve(&self, mut s: &'a Json) -> &'a Json {
        for _ in 0..64 {
            if let Some(r) = s.get("$ref").and_then(Json::as_str) {
                match r.strip_prefix('#').and_then(|p| self.root.pointer(p)) {
                    Some(t) => s = t,
                    None => return s,
                }
            } else if let Some([one]) = s.get("allOf").and_then(Json::as_array).map(Vec::as_slice) {
                s = one;
            } else {
                return s;
            }
        }
        s
    }

    /// The alternatives of `s` (`anyOf`/`oneOf`, as `Option`s and enums are written), or
    /// `s` alone.
    fn alternatives(&self, s: &'a Json, out: &mut Vec<&'a Json>) {
        let s = self.resolve(s);
        let mut any = false;
        for k in ["anyOf", "oneOf"] {
            if let Some(a) = s.get(k).and_then(Json::as_array) {
                any = true;
                for v in a {
                    self.alternatives(v, out);
                }
            }
        }
        if !any {
            out.push(s);
        }
    }

    fn value(&mut self, v: &Value, s: &'a Json, path: &str) {
        let mut alts = Vec::new();
        self.alternatives(s, &mut alts);
        match v {
            Value::Table(t) => {
                let objects: Vec<_> = alts.into_iter().filter(|a| is_object(a)).collect();
                match objects.as_slice() {
                    [] => {}
                    [one] => self.object(t, one, path),
                    many => self.variants(t, many, path),
                }
            }
            Value::Array(items) => {
                if let Some(item) = alts
                    .iter()
                    .find_map(|a| a.get("items").filter(|i| i.is_object()))
                {
                    for (i, v) in items.iter().enumerate() {
                        self.value(v, item, &format!("{path}[{i}]"));
                    }
                }
            }
            Value::String(name) => {
                // A unit enum (`model = "corotatonal"`): every alternative but `null` a list
                // of names.
                let names: Option<Vec<&str>> = alts
                    .iter()
                    .filter(|a| a.get("type").and_then(Json::as_str) != Some("null"))
                    .map(|a| names(a))
                    .collect::<Option<Vec<_>>>()
                    .map(|n| n.concat());
                if let Some(names) = names.filter(|n| !n.is_empty()) {
                    if !names.contains(&name.as_str()) {
                        self.out.push(KeyProblem {
                            key: path.to_string(),
                            at: path.to_string(),
                            message: unknown("variant", name, &names),
                        });
                    }
                }
            }
            _ => {}
        }
    }

    fn object(&mut self, t: &toml::Table, s: &'a Json, path: &str) {
        let s = self.resolve(s);
        let props = s.get("properties").and_then(Json::as_object);
        let closed = s.get("additionalProperties") == Some(&Json::Bool(false));
        for (k, v) in t {
            match props.and_then(|p| p.get(k)) {
                Some(ps) => self.value(v, ps, &join(path, k)),
                None if closed => {
                    let keys: Vec<&str> =
                        props.map_or(Vec::new(), |p| p.keys().map(String::as_str).collect());
                    self.out.push(KeyProblem {
                        key: join(path, k),
                        at: join(path, k),
                        message: unknown("field", k, &keys),
                    });
                }
                None => {}
            }
        }
        for r in s
            .get("required")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
        {
            let Some(r) = r.as_str() else { continue };
            if !t.contains_key(r) {
                let hint = props
                    .and_then(|p| p.get(r))
                    .map_or(String::new(), |ps| self.hint(ps));
                self.out.push(KeyProblem {
                    key: join(path, r),
                    at: path.to_string(),
                    message: format!("missing field `{r}`{hint}"),
                });
            }
        }
    }

    /// A table that may be one of several objects: an internally tagged enum (`kind = "box"`)
    /// picks its variant by the tag, an externally tagged one (`{ box = {...} }`) by its one
    /// key; anything else is left to serde.
    fn variants(&mut self, t: &toml::Table, variants: &[&'a Json], path: &str) {
        let props = |v: &'a Json| v.get("properties").and_then(Json::as_object);
        let tag = props(variants[0]).and_then(|p| {
            p.iter().map(|(k, _)| k.as_str()).find(|k| {
                variants.iter().all(|v| {
                    props(v)
                        .and_then(|p| p.get(*k))
                        .and_then(constant)
                        .is_some()
                })
            })
        });
        if let Some(tag) = tag {
            let names: Vec<&str> = variants
                .iter()
                .filter_map(|v| props(v).and_then(|p| p.get(tag)).and_then(constant))
                .collect();
            match t.get(tag) {
                None => self.out.push(KeyProblem {
                    key: join(path, tag),
                    at: path.to_string(),
                    message: format!("missing field `{tag}` (one of {})", quoted(&names)),
                }),
                Some(Value::String(name)) => match names.iter().position(|n| n == name) {
                    Some(i) => self.object(t, variants[i], path),
                    None => self.out.push(KeyProblem {
                        key: join(path, tag),
                        at: join(path, tag),
                        message: unknown("variant", name, &names),
                    }),
                },
                Some(_) => {}
            }
            return;
        }
        let single = |v: &'a Json| match props(v) {
            Some(p) if p.len() == 1 => p.iter().next(),
            _ => None,
        };
        let Some(keyed) = variants
            .iter()
            .map(|v| single(v))
            .collect::<Option<Vec<_>>>()
        else {
            return;
        };
        if t.len() != 1 {
            return;
        }
        let (k, v) = t.iter().next().expect("one key");
        match keyed.iter().find(|(name, _)| *name == k) {
            Some((_, s)) => self.value(v, s, &join(path, k)),
            None => {
                let names: Vec<&str> = keyed.iter().map(|(n, _)| n.as_str()).collect();
                self.out.push(KeyProblem {
                    key: join(path, k),
                    at: join(path, k),
                    message: unknown("variant", k, &names),
                });
            }
        }
    }

    /// What a missing key expects: its allowed values, or the keys its table needs.
    fn hint(&self, s: &'a Json) -> String {
        let mut alts = Vec::new();
        self.alternatives(s, &mut alts);
        let values: Vec<&str> = alts
            .iter()
            .flat_map(|a| match a.get("enum").and_then(Json::as_array) {
                Some(e) => e.iter().filter_map(Json::as_str).collect(),
                None => constant(a).into_iter().collect::<Vec<_>>(),
            })
            .collect();
        if !values.is_empty() && alts.iter().all(|a| !is_object(a)) {
            return format!(" (one of {})", quoted(&values));
        }
        match alts.as_slice() {
            [one] if is_object(one) => {
                let required: Vec<&str> = one
                    .get("required")
                    .and_then(Json::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Json::as_str)
                    .collect();
                if required.is_empty() {
                    String::new()
                } else {
                    format!(" (a table with {})", ticked(&required))
                }
            }
            _ => String::new(),
        }
    }
}

fn is_object(s: &Json) -> bool {
    s.get("properties").is_some()
        || match s.get("type") {
            Some(Json::String(t)) => t == "object",
            Some(Json::Array(ts)) => ts.iter().any(|t| t == "object"),
            _ => false,
        }
}

/// The names a string enum allows (`enum`, or one `const`), if `s` is one.
fn names(s: &Json) -> Option<Vec<&str>> {
    match s.get("enum").and_then(Json::as_array) {
        Some(e) => e.iter().map(Json::as_str).collect(),
        None => constant(s).map(|c| vec![c]),
    }
}

/// The one value a schema allows (`const`, or an `enum` of one), as variant tags are written.
fn constant(s: &Json) -> Option<&str> {
    s.get("const")
        .and_then(Json::as_str)
        .or_else(|| match s.get("enum").and_then(Json::as_array) {
            Some(e) if e.len() == 1 => e[0].as_str(),
            _ => None,
        })
}

fn quoted(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("\"{n}\""))
        .collect::<Vec<_>>()
        .join(", ")
}

fn ticked(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// serde's wording (`unknown field `yungs``), then the nearest allowed name or, when none is
/// near, every allowed name.
fn unknown(what: &str, name: &str, allowed: &[&str]) -> String {
    match did_you_mean(name, allowed) {
        Some(near) => format!("unknown {what} `{name}` (did you mean `{near}`?)"),
        None if allowed.is_empty() => format!("unknown {what} `{name}`: this table takes no keys"),
        None => format!(
            "unknown {what} `{name}`, expected one of {}",
            ticked(allowed)
        ),
    }
}

/// The allowed name nearest to `name` by edit distance (transpositions count one), if near
/// enough to be a typo: at most 2 edits, or a third of the name, or one name a prefix of the
/// other (`youngs_modulus` → `youngs`).
pub(super) fn did_you_mean<'n>(name: &str, allowed: &[&'n str]) -> Option<&'n str> {
    let lower = name.to_lowercase();
    let (best, d) = allowed
        .iter()
        .map(|a| (*a, strsim::damerau_levenshtein(&lower, a)))
        .min_by_key(|&(a, d)| (d, a.len()))?;
    if d <= 2.max(name.len() / 3) && d < name.len().max(best.len()) {
        return Some(best);
    }
    allowed
        .iter()
        .filter(|a| a.len() >= 3 && (lower.starts_with(*a) || a.starts_with(lower.as_str())))
        .max_by_key(|a| a.len())
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_names_are_suggested_and_far_ones_are_not() {
        let keys = ["youngs", "poisson", "density", "model"];
        assert_eq!(did_you_mean("yungs", &keys), Some("youngs"));
        assert_eq!(did_you_mean("Youngs", &keys), Some("youngs"));
        assert_eq!(did_you_mean("poison", &keys), Some("poisson"));
        assert_eq!(did_you_mean("desnity", &keys), Some("density"));
        assert_eq!(did_you_mean("youngs_modulus", &keys), Some("youngs"));
        assert_eq!(did_you_mean("viscosity", &keys), None);
        assert_eq!(did_you_mean("x", &keys), None);
    }
}
