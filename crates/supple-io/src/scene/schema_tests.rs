//! The generated schema against the parser: at every table the schema describes, the keys it
//! lists are the keys serde accepts there. serde's own list comes from its unknown-key error
//! (`unknown field `zzz`, expected one of `dt`, ...`), raised by the derived code, so neither
//! side is written by hand.

use super::file::SceneFile;
use super::schema::scene_schema;
use serde_json::Value as Json;
use std::collections::BTreeSet;
use toml::Value;

const PROBE: &str = "zzz_not_a_key";

/// How the document reaching a table is built, outside in.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Item,
    /// An internally tagged variant: `kind = "box"` beside the probe.
    Tag(String, String),
}

fn props(o: &Json) -> &serde_json::Map<String, Json> {
    o["properties"].as_object().expect("properties")
}

fn resolve<'a>(root: &'a Json, mut s: &'a Json) -> &'a Json {
    loop {
        if let Some(r) = s.get("$ref").and_then(Json::as_str) {
            s = root.pointer(&r[1..]).expect("refs resolve");
        } else if let Some([one]) = s.get("allOf").and_then(Json::as_array).map(Vec::as_slice) {
            s = one;
        } else {
            return s;
        }
    }
}

fn alternatives<'a>(root: &'a Json, s: &'a Json) -> Vec<&'a Json> {
    let s = resolve(root, s);
    let mut out = Vec::new();
    for k in ["anyOf", "oneOf"] {
        for v in s.get(k).and_then(Json::as_array).into_iter().flatten() {
            out.extend(alternatives(root, v));
        }
    }
    if out.is_empty() {
        out.push(s);
    }
    out
}

/// The document that reaches the table at `steps` and puts `inner` there.
fn document(steps: &[Step], inner: toml::Table) -> Value {
    let mut v = Value::Table(inner);
    for step in steps.iter().rev() {
        v = match step {
            Step::Key(k) => Value::Table(toml::Table::from_iter([(k.clone(), v)])),
            Step::Item => Value::Array(vec![v]),
            Step::Tag(k, name) => {
                let Value::Table(mut t) = v else {
                    unreachable!("a tag goes in a table")
                };
                t.insert(k.clone(), Value::String(name.clone()));
                Value::Table(t)
            }
        };
    }
    v
}

/// The names serde lists in its unknown-key error for the document, if it lists them.
fn parser_names(doc: Value) -> Option<(String, BTreeSet<String>)> {
    let e = serde_path_to_error::deserialize::<_, SceneFile>(doc).err()?;
    let message = e.into_inner().message().to_string();
    let (_, list) = message.split_once(&format!("`{PROBE}`"))?;
    let names = list
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect();
    Some((message, names))
}

struct Walk<'a> {
    root: &'a Json,
    checked: usize,
    failures: Vec<String>,
}

impl<'a> Walk<'a> {
    fn value(&mut self, s: &'a Json, steps: Vec<Step>) {
        let alts = alternatives(self.root, s);
        let objects: Vec<&'a Json> = alts
            .iter()
            .copied()
            .filter(|a| a.get("properties").is_some())
            .collect();
        let tag = objects.first().and_then(|first| {
            props(first).keys().find(|k| {
                objects.len() > 1
                    && objects
                        .iter()
                        .all(|o| props(o).get(*k).and_then(|p| p.get("const")).is_some())
            })
        });
        let external = objects.len() > 1 && objects.iter().all(|o| props(o).len() == 1);
        if external {
            // `{ box = {...} }`: the variants' names are the keys.
            let schema: BTreeSet<String> = objects
                .iter()
                .flat_map(|o| props(o).keys().cloned())
                .collect();
            self.compare(
                &steps,
                toml::Table::from_iter([(PROBE.into(), Value::Integer(1))]),
                schema,
            );
            for o in &objects {
                let (k, v) = props(o).iter().next().expect("one key");
                let mut next = steps.clone();
                next.push(Step::Key(k.clone()));
                self.value(v, next);
            }
        } else {
            for o in &objects {
                let mut here = steps.clone();
                let mut schema: BTreeSet<String> = props(o).keys().cloned().collect();
                if let Some(tag) = tag {
                    let name = props(o)[tag]["const"].as_str().expect("a string tag");
                    here.push(Step::Tag(tag.clone(), name.to_string()));
                    schema.remove(tag);
                }
                self.compare(
                    &here,
                    toml::Table::from_iter([(PROBE.into(), Value::Integer(1))]),
                    schema,
                );
                for (k, v) in props(o) {
                    let mut next = here.clone();
                    next.push(Step::Key(k.clone()));
                    self.value(v, next);
                }
            }
        }
        for a in &alts {
            if let Some(items) = a.get("items").filter(|i| i.is_object()) {
                let mut next = steps.clone();
                next.push(Step::Item);
                self.value(items, next);
            }
        }
    }

    fn compare(&mut self, steps: &[Step], inner: toml::Table, schema: BTreeSet<String>) {
        let doc = document(steps, inner);
        match parser_names(doc.clone()) {
            Some((_, parser)) if parser == schema => self.checked += 1,
            Some((message, _)) => self
                .failures
                .push(format!("{steps:?}: schema {schema:?}, parser: {message}")),
            None => self.failures.push(format!(
                "{steps:?}: the parser did not refuse {PROBE} in {doc}"
            )),
        }
    }
}

#[test]
fn the_schema_lists_every_key_the_parser_accepts_and_no_other() {
    let root = scene_schema();
    let mut walk = Walk {
        root,
        checked: 0,
        failures: Vec::new(),
    };
    walk.value(root, Vec::new());
    assert!(
        walk.failures.is_empty(),
        "{} tables agree, these do not:\n{}",
        walk.checked,
        walk.failures.join("\n")
    );
    // Every section of the format was reached (the scene, bodies, meshes, materials, ...).
    assert!(walk.checked > 40, "only {} tables checked", walk.checked);
}
