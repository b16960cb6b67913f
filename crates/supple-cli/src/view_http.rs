//! The HTTP server of `supple view`: GET and HEAD on 127.0.0.1, one request per connection
//! (`Connection: close`), a thread per connection. Built on `std::net::TcpListener` rather
//! than a server crate: it serves a handful of static files to one local browser, which needs
//! no keep-alive, TLS, routing or async runtime, and the CLI's build stays as it is.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// What the server answers: files under `root`, and the routes in `memory` (exact paths,
/// such as `/view/manifest.json`) from bytes held in memory.
pub struct Site {
    pub root: PathBuf,
    pub memory: BTreeMap<String, (Vec<u8>, &'static str)>,
}

/// Serves `site` on `listener` until the process ends.
pub fn serve(listener: TcpListener, site: Site) {
    let site = Arc::new(site);
    for stream in listener.incoming() {
        let Ok(stream) = stream else { continue };
        let site = Arc::clone(&site);
        std::thread::spawn(move || {
            // A browser that goes away mid-answer is not an error of the server's.
            let _ = answer(stream, &site);
        });
    }
}

fn answer(mut stream: TcpStream, site: &Site) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    // The headers: read and ignored (bounded, so a client cannot make the thread hold a
    // request of any size).
    let mut header = String::new();
    let mut total = 0;
    loop {
        header.clear();
        let n = reader.read_line(&mut header)?;
        total += n;
        if n == 0 || header == "\r\n" || header == "\n" || total > 64 * 1024 {
            break;
        }
    }
    let mut parts = request.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let head = method == "HEAD";
    if method != "GET" && !head {
        return respond(&mut stream, 405, "text/plain", b"only GET and HEAD\n", head);
    }
    let path = target.split(['?', '#']).next().unwrap_or("/");
    let Some(path) = percent_decode(path) else {
        return respond(&mut stream, 400, "text/plain", b"bad path\n", head);
    };
    if let Some((bytes, kind)) = site.memory.get(&path) {
        return respond(&mut stream, 200, kind, bytes, head);
    }
    match file_under(&site.root, &path) {
        Some(file) => match std::fs::read(&file) {
            Ok(bytes) => respond(&mut stream, 200, content_type(&file), &bytes, head),
            Err(_) => respond(&mut stream, 404, "text/plain", b"not found\n", head),
        },
        None => respond(&mut stream, 404, "text/plain", b"not found\n", head),
    }
}

fn respond(
    stream: &mut TcpStream,
    status: u16,
    kind: &str,
    body: &[u8],
    head: bool,
) -> std::io::Result<()> {
    let reason = match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        _ => "Method Not Allowed",
    };
    // no-store: an edited scene or a rebuilt page is what the next reload gets.
    write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if !head {
        stream.write_all(body)?;
    }
    stream.flush()
}

/// The file `url_path` names under `root` (`/` is `index.html`), or `None` for a path that
/// leaves `root` or is not a file.
fn file_under(root: &Path, url_path: &str) -> Option<PathBuf> {
    let rel = url_path.trim_start_matches('/');
    let rel = if rel.is_empty() { "index.html" } else { rel };
    let rel = Path::new(rel);
    if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
        return None;
    }
    let full = root.join(rel);
    full.is_file().then_some(full)
}

/// `%XX` escapes decoded (`None` for a bad escape or a result that is not UTF-8).
fn percent_decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' {
            let hex = std::str::from_utf8(b.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The Content-Type of a file by extension (`.wasm` must be `application/wasm` for
/// `WebAssembly.instantiateStreaming`; module scripts must be JavaScript).
pub fn content_type(path: &Path) -> &'static str {
    match path.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "wasm" => "application/wasm",
        "json" => "application/json",
        "css" => "text/css",
        "png" => "image/png",
        "svg" => "image/svg+xml",
        "toml" | "md" | "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_under_the_root_and_escapes_decode() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        assert_eq!(
            file_under(root, "/Cargo.toml"),
            Some(root.join("Cargo.toml"))
        );
        assert_eq!(file_under(root, "/../Cargo.toml"), None);
        assert_eq!(file_under(root, "/src"), None, "a folder is not served");
        assert_eq!(percent_decode("/a%20b").as_deref(), Some("/a b"));
        assert_eq!(percent_decode("/a%2"), None);
        assert_eq!(content_type(Path::new("x.wasm")), "application/wasm");
    }
}
