//! TetGen `.node` / `.ele` mesh files.
//!
//! Reading follows the TetGen conventions: `#` starts a comment anywhere on a line, blank
//! lines are skipped, fields are separated by whitespace. The first point index in the
//! `.node` file decides whether indices are 0- or 1-based (any first index is accepted);
//! the `.ele` vertex references are shifted accordingly. Extra attributes and boundary
//! markers are tolerated and ignored; for 10-node (quadratic) tets the 4 corners are kept.
//!
//! Every parse error names the file and the 1-based line; a mesh that parses but is
//! invalid (for instance an inverted tet) is reported against the `.ele` file.

use crate::error::IoError;
use nalgebra::Vector3;
use std::ffi::OsString;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use supple::mesh::TetMesh;

/// The points of a `.node` file.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeFile {
    /// Point coordinates, in file order.
    pub positions: Vec<Vector3<f64>>,
    /// Index of the first point (0 or 1 in practice); `.ele` references are relative to it.
    pub first_index: u64,
}

/// The paths `(base.node, base.ele)` for a base path given with or without either extension.
pub fn tetgen_paths(base: &Path) -> (PathBuf, PathBuf) {
    let stem = match base.extension().and_then(|e| e.to_str()) {
        Some("node" | "ele") => base.with_extension(""),
        _ => base.to_path_buf(),
    };
    let with = |ext: &str| {
        let mut s: OsString = stem.clone().into_os_string();
        s.push(ext);
        PathBuf::from(s)
    };
    (with(".node"), with(".ele"))
}

/// Reads `base.node` and `base.ele` into a validated [`TetMesh`] (0-based indices).
///
/// `base` may carry a `.node` or `.ele` extension, which is stripped. Mesh validation
/// errors (inverted, degenerate or repeated-vertex tets) are reported against the `.ele` file.
pub fn read_tetgen(base: &Path) -> Result<TetMesh, IoError> {
    let (node_path, ele_path) = tetgen_paths(base);
    let node_text = std::fs::read_to_string(&node_path).map_err(|e| IoError::io(&node_path, e))?;
    let nodes = parse_node(&node_text, &node_path)?;
    let ele_text = std::fs::read_to_string(&ele_path).map_err(|e| IoError::io(&ele_path, e))?;
    let tets = parse_ele(
        &ele_text,
        &ele_path,
        nodes.first_index,
        nodes.positions.len(),
    )?;
    TetMesh::new(nodes.positions, tets).map_err(|e| IoError::mesh(&ele_path, e))
}

/// Writes `base.node` and `base.ele` (0-based, a comment on the first line). Coordinates
/// are written in Rust's shortest round-trip form, so reading them back is bit-exact.
/// Any `.node`/`.ele` extension on `base` is stripped.
pub fn write_tetgen(base: &Path, mesh: &TetMesh) -> Result<(), IoError> {
    let (node_path, ele_path) = tetgen_paths(base);
    write_file(&node_path, |w| {
        writeln!(
            w,
            "# Supple TetGen node file: 0-based, {} points",
            mesh.positions.len()
        )?;
        writeln!(w, "{} 3 0 0", mesh.positions.len())?;
        for (i, p) in mesh.positions.iter().enumerate() {
            writeln!(w, "{i} {:?} {:?} {:?}", p.x, p.y, p.z)?;
        }
        Ok(())
    })?;
    write_file(&ele_path, |w| {
        writeln!(
            w,
            "# Supple TetGen ele file: 0-based, {} tets",
            mesh.tets.len()
        )?;
        writeln!(w, "{} 4 0", mesh.tets.len())?;
        for (i, [a, b, c, d]) in mesh.tets.iter().enumerate() {
            writeln!(w, "{i} {a} {b} {c} {d}")?;
        }
        Ok(())
    })
}

fn write_file(
    path: &Path,
    body: impl FnOnce(&mut BufWriter<File>) -> std::io::Result<()>,
) -> Result<(), IoError> {
    let file = File::create(path).map_err(|e| IoError::io(path, e))?;
    let mut w = BufWriter::new(file);
    body(&mut w)
        .and_then(|()| w.flush())
        .map_err(|e| IoError::io(path, e))
}

/// Parses the text of a `.node` file; `path` is only used in error messages.
pub fn parse_node(text: &str, path: &Path) -> Result<NodeFile, IoError> {
    let mut lines = Records::new(text, path);
    let (hline, header) = lines.header("<#points> <dimension> <#attributes> <boundary marker>")?;
    check_field_count(path, hline, &header, 1, 4, "header")?;
    let n_points = parse_count(path, hline, header[0])?;
    if n_points == 0 {
        return Err(IoError::parse(
            path,
            hline,
            "the header declares 0 points (points in a separate .poly file are not supported)",
        ));
    }
    if let Some(dim) = header.get(1) {
        let dim = parse_count(path, hline, dim)?;
        if dim != 3 {
            return Err(IoError::parse(
                path,
                hline,
                format!("dimension must be 3, found {dim}"),
            ));
        }
    }
    for field in header.iter().skip(2) {
        parse_count(path, hline, field)?;
    }

    let mut positions = Vec::with_capacity(n_points.min(lines.remaining_hint()));
    let mut first_index = 0;
    while positions.len() < n_points {
        let Some((line, fields)) = lines.next() else {
            return Err(lines.missing(n_points, positions.len(), "points"));
        };
        check_field_count(
            path,
            line,
            &fields,
            4,
            usize::MAX,
            "point line (index x y z)",
        )?;
        let index = parse_index(path, line, fields[0])?;
        if positions.is_empty() {
            first_index = index;
        } else {
            let expected = first_index.saturating_add(positions.len() as u64);
            check_sequence(path, line, "point", index, expected)?;
        }
        let mut p = Vector3::zeros();
        for (k, field) in fields[1..4].iter().enumerate() {
            let v = parse_f64(path, line, field)?;
            if !v.is_finite() {
                return Err(IoError::parse(
                    path,
                    line,
                    format!("coordinate `{field}` is not a finite number"),
                ));
            }
            p[k] = v;
        }
        positions.push(p);
    }
    lines.expect_end(n_points, "points")?;
    Ok(NodeFile {
        positions,
        first_index,
    })
}

/// Parses the text of an `.ele` file into 0-based tets. `first_index` is the first point
/// index of the matching `.node` file and `n_points` its number of points; `path` is only
/// used in error messages. Orientation is not checked here (see [`TetMesh::new`]).
pub fn parse_ele(
    text: &str,
    path: &Path,
    first_index: u64,
    n_points: usize,
) -> Result<Vec<[u32; 4]>, IoError> {
    let mut lines = Records::new(text, path);
    let (hline, header) = lines.header("<#tets> <nodes per tet> <region attribute>")?;
    check_field_count(path, hline, &header, 1, 3, "header")?;
    let n_tets = parse_count(path, hline, header[0])?;
    let nodes_per_tet = match header.get(1) {
        Some(f) => parse_count(path, hline, f)?,
        None => 4,
    };
    if nodes_per_tet != 4 && nodes_per_tet != 10 {
        return Err(IoError::parse(
            path,
            hline,
            format!("nodes per tet must be 4 or 10, found {nodes_per_tet}"),
        ));
    }
    if let Some(f) = header.get(2) {
        parse_count(path, hline, f)?;
    }

    let mut tets = Vec::with_capacity(n_tets.min(lines.remaining_hint()));
    let mut first_tet = 0;
    while tets.len() < n_tets {
        let Some((line, fields)) = lines.next() else {
            return Err(lines.missing(n_tets, tets.len(), "tets"));
        };
        let what = format!("tet line (index and {nodes_per_tet} vertices)");
        check_field_count(path, line, &fields, 1 + nodes_per_tet, usize::MAX, &what)?;
        let index = parse_index(path, line, fields[0])?;
        if tets.is_empty() {
            first_tet = index;
        } else {
            let expected = first_tet.saturating_add(tets.len() as u64);
            check_sequence(path, line, "tet", index, expected)?;
        }
        let mut tet = [0u32; 4];
        for (k, field) in fields[1..5].iter().enumerate() {
            let r = parse_index(path, line, field)?;
            let local = r
                .checked_sub(first_index)
                .filter(|&i| i < n_points as u64)
                .and_then(|i| u32::try_from(i).ok());
            let Some(local) = local else {
                let last = first_index.saturating_add((n_points as u64).saturating_sub(1));
                return Err(IoError::parse(
                    path,
                    line,
                    format!(
                        "vertex {r} is out of range: the .node file has points {first_index}..={last}"
                    ),
                ));
            };
            tet[k] = local;
        }
        tets.push(tet);
    }
    lines.expect_end(n_tets, "tets")?;
    Ok(tets)
}

/// Non-empty, comment-stripped lines of a file, with their 1-based line numbers.
struct Records<'a> {
    path: &'a Path,
    inner: std::iter::Enumerate<std::str::Lines<'a>>,
    n_lines: usize,
}

impl<'a> Records<'a> {
    fn new(text: &'a str, path: &'a Path) -> Self {
        Self {
            path,
            inner: text.lines().enumerate(),
            n_lines: text.lines().count(),
        }
    }

    /// Upper bound on the records left (to cap pre-allocation from untrusted headers).
    fn remaining_hint(&self) -> usize {
        self.inner.size_hint().1.unwrap_or(0).min(self.n_lines)
    }

    fn header(&mut self, layout: &str) -> Result<(usize, Vec<&'a str>), IoError> {
        self.next().ok_or_else(|| {
            IoError::parse(
                self.path,
                self.n_lines.max(1),
                format!("the file is empty: expected a header `{layout}`"),
            )
        })
    }

    fn missing(&self, expected: usize, found: usize, what: &str) -> IoError {
        IoError::parse(
            self.path,
            self.n_lines.max(1),
            format!("unexpected end of file: the header declares {expected} {what}, found {found}"),
        )
    }

    fn expect_end(&mut self, expected: usize, what: &str) -> Result<(), IoError> {
        match self.next() {
            None => Ok(()),
            Some((line, _)) => Err(IoError::parse(
                self.path,
                line,
                format!("unexpected extra line: the header declares {expected} {what}"),
            )),
        }
    }
}

impl<'a> Iterator for Records<'a> {
    type Item = (usize, Vec<&'a str>);

    fn next(&mut self) -> Option<Self::Item> {
        for (i, raw) in self.inner.by_ref() {
            let content = raw.split('#').next().unwrap_or("");
            let fields: Vec<&str> = content.split_whitespace().collect();
            if !fields.is_empty() {
                return Some((i + 1, fields));
            }
        }
        None
    }
}

fn check_field_count(
    path: &Path,
    line: usize,
    fields: &[&str],
    min: usize,
    max: usize,
    what: &str,
) -> Result<(), IoError> {
    let n = fields.len();
    if n < min || n > max {
        let expected = if max == usize::MAX {
            format!("at least {min}")
        } else if min == max {
            format!("{min}")
        } else {
            format!("{min} to {max}")
        };
        return Err(IoError::parse(
            path,
            line,
            format!("expected {expected} fields in the {what}, found {n}"),
        ));
    }
    Ok(())
}

fn check_sequence(
    path: &Path,
    line: usize,
    what: &str,
    index: u64,
    expected: u64,
) -> Result<(), IoError> {
    if index != expected {
        return Err(IoError::parse(
            path,
            line,
            format!("{what} index {index} is out of sequence: expected {expected}"),
        ));
    }
    Ok(())
}

fn parse_f64(path: &Path, line: usize, field: &str) -> Result<f64, IoError> {
    field
        .parse()
        .map_err(|_| IoError::parse(path, line, format!("expected a number, found `{field}`")))
}

fn parse_index(path: &Path, line: usize, field: &str) -> Result<u64, IoError> {
    field.parse().map_err(|_| {
        IoError::parse(
            path,
            line,
            format!("expected a non-negative integer index, found `{field}`"),
        )
    })
}

fn parse_count(path: &Path, line: usize, field: &str) -> Result<usize, IoError> {
    field.parse().map_err(|_| {
        IoError::parse(
            path,
            line,
            format!("expected a non-negative integer, found `{field}`"),
        )
    })
}
