//! The user guide's code is real: every TOML block in `docs/**/*.md` is a scene the loader
//! accepts, every recipe scene in `scenes/guide/` loads, builds and steps, and every Rust
//! snippet in `docs/snippets/` (which the guide includes) compiles and runs here.

use std::path::{Path, PathBuf};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The Markdown files under `dir`, sorted.
fn markdown_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            markdown_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "md") {
            out.push(p);
        }
    }
}

/// The fenced blocks of `text` whose info string starts with `lang`: (first line, whether
/// it is marked `ignore`, body).
fn fenced_blocks(text: &str, lang: &str) -> Vec<(usize, bool, String)> {
    let mut blocks = Vec::new();
    let mut current: Option<(usize, bool, String)> = None;
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        match &mut current {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    let mut words = info.split(',').map(str::trim);
                    if words.next() == Some(lang) {
                        current = Some((i + 1, words.any(|w| w == "ignore"), String::new()));
                    }
                }
            }
            Some((_, _, body)) => {
                if trimmed.starts_with("```") {
                    blocks.push(current.take().unwrap());
                } else {
                    body.push_str(line);
                    body.push('\n');
                }
            }
        }
    }
    assert!(current.is_none(), "an unclosed ```{lang} block");
    blocks
}

/// `{{#include PATH}}` alone in a block: the file it names, relative to the page.
fn included(page: &Path, body: &str) -> Option<PathBuf> {
    let inner = body
        .trim()
        .strip_prefix("{{#include ")?
        .strip_suffix("}}")?;
    Some(page.parent().unwrap().join(inner.trim()))
}

#[test]
fn every_toml_block_of_the_guide_is_a_scene_the_loader_accepts() {
    let mut pages = Vec::new();
    markdown_files(&repo().join("docs"), &mut pages);
    let mut inline = 0;
    let mut includes = 0;
    let mut failures = Vec::new();
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        for (line, ignore, body) in fenced_blocks(&text, "toml") {
            // `toml,ignore` marks TOML that is not a scene (a Cargo.toml, a pyproject).
            if ignore {
                assert!(
                    !body.contains("[[body]]") && !body.contains("dt ="),
                    "{}:{line}: a scene marked ignore: scenes in the guide must load",
                    page.display()
                );
                continue;
            }
            // Inline blocks name their meshes as the bundled scenes do (`meshes/...`).
            let (text, path) = match included(page, &body) {
                Some(file) => {
                    includes += 1;
                    let text = std::fs::read_to_string(&file).unwrap_or_else(|e| {
                        panic!("{}:{line}: {}: {e}", page.display(), file.display())
                    });
                    (text, file)
                }
                None => {
                    inline += 1;
                    (body, repo().join("scenes/guide_snippet.toml"))
                }
            };
            if let Err(e) = supple_io::parse_scene(&text, &path) {
                failures.push(format!("{}:{line}: {e}", page.display()));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(
        inline >= 5 && includes >= 7,
        "{inline} inline blocks, {includes} included"
    );
}

#[test]
fn every_recipe_scene_loads_builds_and_steps() {
    let dir = repo().join("scenes/guide");
    let mut scenes: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .collect();
    scenes.sort();
    assert!(scenes.len() >= 7, "{scenes:?}");
    for path in scenes {
        let scene = supple_io::load_scene(&path).unwrap_or_else(|e| panic!("{e}"));
        let mut world = scene
            .build_world()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        for _ in 0..scene.steps().min(3) {
            world
                .step()
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        }
    }
}

/// Each snippet is a whole program; its `main` is run as a test.
macro_rules! snippet {
    ($name:ident, $file:literal) => {
        mod $name {
            include!(concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../../docs/snippets/",
                $file
            ));

            #[test]
            fn runs() {
                main().unwrap();
            }
        }
    };
}

snippet!(first_world, "first_world.rs");
snippet!(builders, "builders.rs");
snippet!(run_scene_snippet, "run_scene.rs");
snippet!(read_stresses, "read_stresses.rs");
snippet!(grab_drag, "grab_drag.rs");
snippet!(interrupt, "interrupt.rs");

#[test]
fn every_snippet_is_tested() {
    let mut files: Vec<String> = std::fs::read_dir(repo().join("docs/snippets"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    let tested = [
        "builders.rs",
        "first_world.rs",
        "grab_drag.rs",
        "interrupt.rs",
        "read_stresses.rs",
        "run_scene.rs",
    ];
    assert_eq!(files, tested, "add a snippet! line for each new snippet");
}
