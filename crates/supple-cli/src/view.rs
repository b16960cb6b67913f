//! `supple view SCENE.toml | MESH`: the browser page of `crates/supple-web` served on
//! 127.0.0.1 with the scene and the files it names preloaded (the engine runs in the page, as
//! wasm, so the machine that serves needs no GPU and no windowing). A bare mesh file is handed
//! to the page, whose engine makes its default scene (the body dropped on a ground plane;
//! `supple_web::default_scene`).
//!
//! The page is served from its built folder on disk (`crates/supple-web/www`, with the wasm in
//! `www/pkg/` from `bash crates/supple-web/web.sh build`), not embedded in the binary: the wasm
//! is built by a separate cargo invocation for another target, so embedding it would make
//! every build of this program run a nested wasm32 build (minutes, the target installed, a
//! second cargo on the same target folder), and the crate's package could not carry files
//! from outside it. The folder is found from `--www`, `$SUPPLE_WEB_DIR`, next to the program
//! (`target/release/supple` → `crates/supple-web/www` of the same tree), or the source tree
//! this program was built from; an unbuilt page is an error that names the command to run.
//!
//! Preloading: the page opened at `index.html?view` fetches `view/manifest.json` (`{"scene",
//! "text", "mesh", "files": [{"path", "url"}]}`) and the files under `view/file/N`, held in
//! memory here from the start (an edit on disk needs a restart of `supple view`).

use crate::view_http::{serve, Site};
use anyhow::{bail, Context, Result};
use clap::Args;
use serde_json::json;
use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use supple_io::import::surface::read_surface;
use supple_io::import::{read_mesh, MeshFormat, Orient};

#[derive(Args)]
pub struct ViewArgs {
    /// A scene (`.toml`), or a mesh file (`.msh`, `.vtu`, `.vtk`, `.mesh`, `.node`/`.ele`, or a
    /// closed `.obj`/`.stl` surface to fill with tets), which is dropped on a ground plane.
    pub input: PathBuf,
    /// Do not open a browser (print the address only).
    #[arg(long)]
    pub no_open: bool,
    /// The port on 127.0.0.1 (0: a free one, printed).
    #[arg(long, default_value_t = 0)]
    pub port: u16,
    /// The page's folder (`crates/supple-web/www`, built by `web.sh build`).
    #[arg(long)]
    pub www: Option<PathBuf>,
    /// Start from this world state (JSON: the clock and every body's positions and velocities,
    /// as `supple.view(world)` writes it for a script's world) instead of the scene's start;
    /// Reset in the page returns to it. Needs a scene file built into the same bodies.
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
}

/// What the page preloads: the manifest and the files' bytes.
struct Preload {
    manifest: serde_json::Value,
    files: Vec<(String, Vec<u8>)>,
    /// The world state to start from (`--state`), checked against the scene's world.
    state: Option<String>,
}

pub fn view(args: ViewArgs) -> Result<i32> {
    let www = find_www(args.www.as_deref())?;
    let mut preload = preload(&args.input)?;
    if let Some(state) = &args.state {
        preload.state = Some(read_state(&args.input, state)?);
        preload.manifest["state"] = json!("view/state");
    }
    let listener = TcpListener::bind(("127.0.0.1", args.port))
        .with_context(|| format!("cannot listen on 127.0.0.1:{}", args.port))?;
    let port = listener.local_addr()?.port();
    let mut memory = BTreeMap::new();
    memory.insert(
        "/view/manifest.json".to_string(),
        (
            preload.manifest.to_string().into_bytes(),
            "application/json",
        ),
    );
    if let Some(state) = preload.state {
        memory.insert(
            "/view/state".to_string(),
            (state.into_bytes(), "application/json"),
        );
    }
    for (i, (_, bytes)) in preload.files.into_iter().enumerate() {
        memory.insert(
            format!("/view/file/{i}"),
            (bytes, "application/octet-stream"),
        );
    }
    let url = format!("http://127.0.0.1:{port}/index.html?view");
    // The first line is what scripts wait for (the same as `web.sh`'s static server).
    println!("serving http://127.0.0.1:{port}/");
    println!(
        "supple view: {} at {url} (Ctrl-C stops)",
        args.input.display()
    );
    // Ctrl-C (or SIGTERM) is how a viewer ends: say so and succeed.
    ctrlc::set_handler(|| {
        eprintln!("supple view: stopped");
        std::process::exit(0);
    })
    .context("cannot watch for Ctrl-C")?;
    if !args.no_open {
        open_browser(&url);
    }
    serve(listener, Site { root: www, memory });
    Ok(0)
}

/// The page's folder, built (see the module documentation for where it is looked for).
fn find_www(given: Option<&Path>) -> Result<PathBuf> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(dir) = given {
        candidates.push(dir.to_path_buf());
    } else {
        if let Some(dir) = std::env::var_os("SUPPLE_WEB_DIR") {
            candidates.push(dir.into());
        }
        if let Ok(exe) = std::env::current_exe() {
            // target/<profile>/supple (or target/<profile>/deps/…) in a source tree.
            for up in exe.ancestors().skip(1).take(4) {
                candidates.push(up.join("crates/supple-web/www"));
            }
        }
        candidates.push(Path::new(env!("CARGO_MANIFEST_DIR")).join("../supple-web/www"));
    }
    let Some(dir) = candidates.iter().find(|d| d.join("index.html").is_file()) else {
        bail!(
            "the viewer's page was not found (looked in {}): pass --www DIR or set SUPPLE_WEB_DIR to crates/supple-web/www of a Supple source tree",
            candidates.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
        );
    };
    let wasm = dir.join("pkg/supple_web.wasm");
    if !wasm.is_file() {
        bail!(
            "the viewer's page is not built ({} is missing): run `bash crates/supple-web/web.sh build` in the source tree",
            wasm.display()
        );
    }
    Ok(dir.clone())
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).with_context(|| format!("{}: cannot read", path.display()))
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map_or_else(|| "scene".into(), |n| n.to_string_lossy().into_owned())
}

/// The manifest and files of `input` (a scene, or a mesh file), checked here first so that a
/// bad file is an error on the command line (file, line, problem), not only in the page.
fn preload(input: &Path) -> Result<Preload> {
    let is_toml = input.extension().is_some_and(|e| e == "toml");
    if is_toml {
        return preload_scene(input);
    }
    let name = file_name(input);
    let mut files = vec![(name.clone(), read(input)?)];
    match MeshFormat::from_path(input) {
        Some(MeshFormat::Tetgen) => {
            read_mesh(input, None, Orient::Fix)?;
            // The page needs both halves of a TetGen mesh.
            let (node, ele) = supple_io::tetgen::tetgen_paths(input);
            files = [node, ele]
                .iter()
                .map(|p| Ok((file_name(p), read(p)?)))
                .collect::<Result<_>>()?;
        }
        Some(_) => {
            read_mesh(input, None, Orient::Fix)?;
        }
        None if input
            .extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| e.eq_ignore_ascii_case("obj") || e.eq_ignore_ascii_case("stl")) =>
        {
            read_surface(input)?;
        }
        None => bail!(
            "{}: not a scene (.toml) or a mesh file (.msh, .vtu, .vtk, .mesh, .node/.ele, or a closed .obj/.stl surface)",
            input.display()
        ),
    }
    Ok(Preload {
        manifest: manifest(None, None, Some(&name), &files),
        files,
        state: None,
    })
}

fn manifest(
    scene: Option<&str>,
    text: Option<&str>,
    mesh: Option<&str>,
    files: &[(String, Vec<u8>)],
) -> serde_json::Value {
    let list: Vec<_> = (files.iter().enumerate())
        .map(|(i, (path, _))| json!({ "path": path, "url": format!("view/file/{i}") }))
        .collect();
    json!({ "scene": scene, "text": text, "mesh": mesh, "files": list })
}

/// A scene and every file it names (mesh paths, embedded surfaces, force files: the string
/// values of `path`, `surface` and `file` keys, with both halves of a TetGen mesh), checked by
/// parsing the scene once from disk and once from the collected bytes (as the page will).
fn preload_scene(path: &Path) -> Result<Preload> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("{}: cannot read", path.display()))?;
    supple_io::scene::parse_scene(&text, path)?;
    let doc: toml::Table = text
        .parse()
        .with_context(|| format!("{}: not TOML", path.display()))?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut named = Vec::new();
    collect_paths(&toml::Value::Table(doc), &mut named);
    let mut map = BTreeMap::new();
    for rel in named {
        let mut paths = vec![rel.clone()];
        let ext = Path::new(&rel).extension().and_then(|e| e.to_str());
        if matches!(ext, None | Some("node") | Some("ele")) {
            let (n, e) = supple_io::tetgen::tetgen_paths(Path::new(&rel));
            paths = vec![n.display().to_string(), e.display().to_string()];
        }
        for p in paths {
            let full = dir.join(&p);
            if full.is_file() && !map.contains_key(&p) {
                map.insert(p, read(&full)?);
            }
        }
    }
    let name = file_name(path);
    supple_io::parse_scene_from_memory(&text, &name, &map).with_context(|| {
        format!(
            "{}: the files this scene names could not all be gathered for the page",
            path.display()
        )
    })?;
    let files: Vec<(String, Vec<u8>)> = map.into_iter().collect();
    Ok(Preload {
        manifest: manifest(Some(&name), Some(&text), None, &files),
        files,
        state: None,
    })
}

/// The world state `state` for the scene `scene`, checked by putting it into the scene's
/// world here (as the page will), so that a state of another scene is an error on the command
/// line.
fn read_state(scene: &Path, state: &Path) -> Result<String> {
    if scene.extension().is_none_or(|e| e != "toml") {
        bail!(
            "--state {}: a world state needs the scene it was built from (a .toml), not a mesh file",
            state.display()
        );
    }
    let text = std::fs::read_to_string(state)
        .with_context(|| format!("{}: cannot read", state.display()))?;
    let snapshot = supple_io::snapshot::Snapshot::from_json(&text, &state.display().to_string())
        .map_err(anyhow::Error::msg)?;
    let mut world = supple_io::load_scene(scene)?.build_world()?;
    snapshot.apply(&mut world).map_err(|e| {
        anyhow::anyhow!(
            "{}: not a state of {}'s world: {e}",
            state.display(),
            scene.display()
        )
    })?;
    Ok(text)
}

/// The string values of the keys that name files, anywhere in the scene.
fn collect_paths(v: &toml::Value, out: &mut Vec<String>) {
    match v {
        toml::Value::Table(t) => {
            for (k, v) in t {
                match v {
                    toml::Value::String(s) if matches!(k.as_str(), "path" | "surface" | "file") => {
                        out.push(s.clone())
                    }
                    _ => collect_paths(v, out),
                }
            }
        }
        toml::Value::Array(a) => a.iter().for_each(|v| collect_paths(v, out)),
        _ => {}
    }
}

/// Opens `url` in a browser: `$BROWSER`, else the desktop's opener; a note when there is none
/// (a server, a container): the address is printed either way.
fn open_browser(url: &str) {
    let opener: Vec<String> = match std::env::var("BROWSER") {
        Ok(b) if !b.trim().is_empty() => vec![b],
        _ if cfg!(target_os = "macos") => vec!["open".into()],
        _ if cfg!(windows) => vec!["cmd".into(), "/C".into(), "start".into(), String::new()],
        _ => vec!["xdg-open".into()],
    };
    let mut cmd = std::process::Command::new(&opener[0]);
    cmd.args(&opener[1..])
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    match cmd.spawn() {
        // Reaped on a thread so that it leaves no zombie behind.
        Ok(mut child) => {
            std::thread::spawn(move || {
                if child.wait().is_ok_and(|s| !s.success()) {
                    eprintln!(
                        "note: {} could not open a browser: open the address above yourself",
                        opener[0]
                    );
                }
            });
        }
        Err(_) => eprintln!(
            "note: no browser to open ({} not found): open the address above yourself",
            opener[0]
        ),
    }
}
