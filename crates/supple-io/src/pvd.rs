//! ParaView collections (`.pvd`) written while a run goes on.
//!
//! A [`PvdWriter`] keeps the file a complete, valid collection after every
//! [`PvdWriter::push`]: the closing tags are written with each entry and overwritten by the
//! next one, so a run that stops at any point (Ctrl-C, a crash, a full disk after the last
//! push) leaves a `.pvd` that ParaView reads, listing the frames written so far. Each push
//! costs one short write, whatever the number of entries before it.
//!
//! Several bodies share a time step as parts of one multi-block data set: each entry carries
//! its part index and a `name` attribute, which ParaView shows as the block's name.

use crate::error::IoError;
use std::fs::File;
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// One data set of a collection.
#[derive(Debug, Clone, PartialEq)]
pub struct PvdEntry {
    /// Simulated time (s); must be finite.
    pub time: f64,
    /// Part (block) index within the time step: the body's index.
    pub part: usize,
    /// Block name shown by ParaView (the body's name), or none.
    pub name: Option<String>,
    /// File name as written, usually relative to the `.pvd` file's folder.
    pub file: String,
}

const HEAD: &str = "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\" byte_order=\"LittleEndian\">\n  <Collection>\n";
const TAIL: &str = "  </Collection>\n</VTKFile>\n";

/// A `.pvd` file kept valid after every entry: create it before the loop, push each frame's
/// file after writing it.
///
/// ```
/// use supple_io::pvd::{PvdEntry, PvdWriter};
/// let path = std::env::temp_dir().join(format!("supple-doc-{}.pvd", std::process::id()));
/// let mut pvd = PvdWriter::create(&path)?;
/// for (k, time) in [0.0, 0.1].into_iter().enumerate() {
///     // ... write frames/bar_{k}.vtu here (supple_io::vtu::write_vtu) ...
///     pvd.push(&PvdEntry { time, part: 0, name: None, file: format!("frames/bar_{k}.vtu") })?;
///     // Valid at every point: ParaView (or read_pvd) can open it while the loop goes on.
///     assert_eq!(supple_io::vtu_read::read_pvd(&path)?.len(), k + 1);
/// }
/// std::fs::remove_file(&path)?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug)]
pub struct PvdWriter {
    path: PathBuf,
    file: File,
    /// Byte offset of the closing tags, where the next entry goes.
    tail_at: u64,
    entries: usize,
}

impl PvdWriter {
    /// Creates (or truncates) `path` and writes an empty, valid collection.
    pub fn create(path: &Path) -> Result<Self, IoError> {
        let io = |e| IoError::io(path, e);
        let mut file = File::create(path).map_err(io)?;
        file.write_all(HEAD.as_bytes()).map_err(io)?;
        file.write_all(TAIL.as_bytes()).map_err(io)?;
        file.flush().map_err(io)?;
        Ok(Self {
            path: path.to_path_buf(),
            file,
            tail_at: HEAD.len() as u64,
            entries: 0,
        })
    }

    /// Number of entries written.
    pub fn len(&self) -> usize {
        self.entries
    }

    /// Whether no entry has been written.
    pub fn is_empty(&self) -> bool {
        self.entries == 0
    }

    /// Appends an entry and rewrites the closing tags after it.
    ///
    /// Fails with an [`IoError::Io`] of kind `InvalidInput` on a non-finite time (nothing is
    /// written then).
    pub fn push(&mut self, entry: &PvdEntry) -> Result<(), IoError> {
        let line = entry_line(entry).map_err(|msg| invalid(&self.path, msg))?;
        let io = |e| IoError::io(&self.path, e);
        self.file.seek(SeekFrom::Start(self.tail_at)).map_err(io)?;
        self.file.write_all(line.as_bytes()).map_err(io)?;
        self.file.write_all(TAIL.as_bytes()).map_err(io)?;
        self.file.flush().map_err(io)?;
        self.tail_at += line.len() as u64;
        self.entries += 1;
        Ok(())
    }
}

/// Writes a whole collection at once.
pub fn write_pvd_entries(path: &Path, entries: &[PvdEntry]) -> Result<(), IoError> {
    let mut text = String::from(HEAD);
    for e in entries {
        text.push_str(&entry_line(e).map_err(|msg| invalid(path, msg))?);
    }
    text.push_str(TAIL);
    std::fs::write(path, text).map_err(|e| IoError::io(path, e))
}

fn invalid(path: &Path, msg: String) -> IoError {
    IoError::io(
        path,
        std::io::Error::new(std::io::ErrorKind::InvalidInput, msg),
    )
}

fn entry_line(e: &PvdEntry) -> Result<String, String> {
    if !e.time.is_finite() {
        return Err(format!(
            "time {} of `{}` is not a finite number",
            e.time, e.file
        ));
    }
    let name = e
        .name
        .as_ref()
        .map_or_else(String::new, |n| format!(" name=\"{}\"", xml_escape(n)));
    // `{:?}`: the shortest form that reads back to the same f64.
    Ok(format!(
        "    <DataSet timestep=\"{:?}\" group=\"\" part=\"{}\"{name} file=\"{}\"/>\n",
        e.time,
        e.part,
        xml_escape(&e.file)
    ))
}

/// Escapes the five XML special characters for use in an attribute value.
pub(crate) fn xml_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            _ => out.push(c),
        }
    }
    out
}
