//! `supple view`: the server starts with --no-open, answers HTTP on 127.0.0.1 with the page's
//! files and the preloaded scene, and stops on Ctrl-C (SIGINT) with status 0. The page here is
//! a stand-in folder (the wasm is built by `web.sh build`, after the cargo tests in CI); the
//! real page is driven in chromium by crates/supple-web/browser-test/test.mjs.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A stand-in for the built page: index.html and pkg/supple_web.wasm.
fn fake_www(name: &str, built: bool) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("supple-cli-view-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("pkg")).unwrap();
    std::fs::write(
        dir.join("index.html"),
        "<!doctype html><title>stand-in</title>",
    )
    .unwrap();
    if built {
        std::fs::write(dir.join("pkg/supple_web.wasm"), b"\0asm\x01\0\0\0").unwrap();
    }
    dir
}

/// Starts `supple view INPUT --no-open --www WWW`; the child and its port.
fn start(input: &Path, www: &Path) -> (Child, u16) {
    start_with(input, www, &[])
}

/// [`start`] with more arguments.
fn start_with(input: &Path, www: &Path, more: &[&std::ffi::OsStr]) -> (Child, u16) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_supple"))
        .arg("view")
        .arg(input)
        .args(["--no-open", "--www"])
        .arg(www)
        .args(more)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.as_mut().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .strip_prefix("serving http://127.0.0.1:")
        .and_then(|s| s.strip_suffix('/'))
        .unwrap_or_else(|| panic!("first line: {line:?}"))
        .parse()
        .unwrap();
    (child, port)
}

/// GET `path`: status, headers, body.
fn get(port: u16, path: &str) -> (u16, String, Vec<u8>) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(s, "GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").unwrap();
    let mut all = Vec::new();
    s.read_to_end(&mut all).unwrap();
    let split = all.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8(all[..split].to_vec()).unwrap();
    let status = head[9..12].parse().unwrap();
    (status, head, all[split + 4..].to_vec())
}

/// Ctrl-C: the server says so, exits 0, and no longer answers.
fn stop(mut child: Child, port: u16) {
    let status = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let out = child.wait().unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    assert!(out.success(), "{out:?}: {err}");
    assert!(err.contains("stopped"), "{err}");
    assert!(TcpStream::connect(("127.0.0.1", port)).is_err());
}

#[test]
fn view_serves_the_page_and_a_gmsh_mesh_then_stops() {
    let www = fake_www("mesh", true);
    let mesh = repo().join("scenes/meshes/cube.msh");
    let (child, port) = start(&mesh, &www);
    let (status, head, body) = get(port, "/index.html?view");
    assert_eq!(status, 200);
    assert!(head.contains("text/html"), "{head}");
    assert!(String::from_utf8_lossy(&body).contains("stand-in"));
    assert_eq!(get(port, "/").2, body, "/ is index.html");
    let (_, head, _) = get(port, "/pkg/supple_web.wasm");
    assert!(head.contains("application/wasm"), "{head}");
    let (status, _, manifest) = get(port, "/view/manifest.json");
    assert_eq!(status, 200);
    let m: serde_json::Value = serde_json::from_slice(&manifest).unwrap();
    assert_eq!(m["mesh"], "cube.msh");
    assert_eq!(m["files"][0]["path"], "cube.msh");
    let url = m["files"][0]["url"].as_str().unwrap();
    assert_eq!(
        get(port, &format!("/{url}")).2,
        std::fs::read(&mesh).unwrap()
    );
    assert_eq!(get(port, "/../Cargo.toml").0, 404);
    assert_eq!(get(port, "/nothing.js").0, 404);
    stop(child, port);
    let _ = std::fs::remove_dir_all(www);
}

#[test]
fn view_preloads_a_scene_with_both_halves_of_its_tetgen_mesh() {
    let www = fake_www("scene", true);
    let (child, port) = start(&repo().join("scenes/tube_drop.toml"), &www);
    let m: serde_json::Value = serde_json::from_slice(&get(port, "/view/manifest.json").2).unwrap();
    assert_eq!(m["scene"], "tube_drop.toml");
    assert!(m["text"].as_str().unwrap().contains("tube_solid_1k"));
    let paths: Vec<&str> = (m["files"].as_array().unwrap().iter())
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    assert_eq!(
        paths,
        ["meshes/tube_solid_1k.ele", "meshes/tube_solid_1k.node"]
    );
    stop(child, port);
    let _ = std::fs::remove_dir_all(www);
}

#[test]
fn view_hands_the_page_a_world_state_of_its_scene_and_refuses_another_scenes() {
    let www = fake_www("state", true);
    let bar = repo().join("scenes/bar.toml");
    let mut world = supple_io::load_scene(&bar).unwrap().build_world().unwrap();
    for _ in 0..4 {
        world.step().unwrap();
    }
    let json = supple_io::snapshot::Snapshot::of(&world).to_json();
    let state = www.join("state.json");
    std::fs::write(&state, &json).unwrap();
    let (child, port) = start_with(&bar, &www, &["--state".as_ref(), state.as_os_str()]);
    let m: serde_json::Value = serde_json::from_slice(&get(port, "/view/manifest.json").2).unwrap();
    assert_eq!(m["state"], "view/state");
    let (status, _, body) = get(port, "/view/state");
    assert_eq!(
        (status, body),
        (200, json.into_bytes()),
        "served as written"
    );
    stop(child, port);
    // The bar's state is not the tube's: refused before anything is served, naming both.
    let out = Command::new(env!("CARGO_BIN_EXE_supple"))
        .arg("view")
        .arg(repo().join("scenes/tube_drop.toml"))
        .args(["--no-open", "--www"])
        .arg(&www)
        .arg("--state")
        .arg(&state)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("state.json: not a state of") && err.contains("tube_drop.toml"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(www);
}

#[test]
fn view_without_the_built_page_names_the_command_that_builds_it() {
    let www = fake_www("unbuilt", false);
    let out = Command::new(env!("CARGO_BIN_EXE_supple"))
        .arg("view")
        .arg(repo().join("scenes/bar.toml"))
        .args(["--no-open", "--www"])
        .arg(&www)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("web.sh build"), "{err}");
    // A mesh file that does not read is refused before anything is served.
    let bad = www.join("bad.msh");
    std::fs::write(&bad, "$MeshFormat\n9.9 0 8\n$EndMeshFormat\n").unwrap();
    std::fs::write(www.join("pkg/supple_web.wasm"), b"\0asm").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_supple"))
        .args(["view", "--no-open", "--www"])
        .arg(&www)
        .arg(&bad)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("bad.msh"), "{err}");
    // Neither a scene nor a mesh: said so, with the formats that are.
    let out = Command::new(env!("CARGO_BIN_EXE_supple"))
        .args(["view", "--no-open", "--www"])
        .arg(&www)
        .arg(www.join("index.html"))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("not a scene (.toml) or a mesh file"), "{err}");
    let _ = std::fs::remove_dir_all(www);
}
