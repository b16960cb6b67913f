//! Legacy VTK files (`.vtk`, ASCII, `DATASET UNSTRUCTURED_GRID`), both cell layouts: the
//! classic `CELLS n size` with a count before each cell, and version 5.1's `OFFSETS` and
//! `CONNECTIVITY` arrays. Tets (cell type 10) are kept, 10-node tets (type 24) keep their 4
//! corners, other cells are counted and skipped; point and cell data are ignored. Binary files: [`super::vtk_legacy_binary`].

use super::{RawMesh, Tokens};
use crate::error::IoError;
use crate::vtu::{VTK_QUADRATIC_TETRA, VTK_TETRA};
use nalgebra::Vector3;
use std::path::Path;

pub(crate) fn parse(bytes: &[u8], path: &Path) -> Result<RawMesh, IoError> {
    let err = |line: usize, m: String| IoError::parse(path, line, m);
    let head: Vec<&[u8]> = bytes.splitn(4, |&b| b == b'\n').collect();
    if head.len() < 4 || !head[0].starts_with(b"# vtk DataFile") {
        return Err(err(
            1,
            "not a legacy VTK file (no `# vtk DataFile` header)".into(),
        ));
    }
    match String::from_utf8_lossy(head[2]).trim() {
        "ASCII" => {}
        "BINARY" => return super::vtk_legacy_binary::parse(bytes, path),
        other => return Err(err(3, format!("`{other}`: expected ASCII or BINARY"))),
    }
    let text = std::str::from_utf8(bytes).map_err(|_| err(1, "the file is not text".into()))?;
    let body_at = text.len() - String::from_utf8_lossy(head[3]).len();
    let mut t = Tokens::new(&text[body_at..], None);
    let line = |t: &Tokens| t.line() + 3;
    fn word<'a>(t: &mut Tokens<'a>, path: &Path, what: &str) -> Result<(usize, &'a str), IoError> {
        let l = t.line() + 3;
        t.next()
            .map(|(l, w)| (l + 3, w))
            .ok_or_else(|| IoError::parse(path, l, format!("file ends inside {what}")))
    }
    let int = |t: &mut Tokens, what: &str| -> Result<i64, IoError> {
        let (l, w) = word(t, path, what)?;
        w.parse()
            .map_err(|_| err(l, format!("{what}: `{w}` is not an integer")))
    };
    let count = |t: &mut Tokens, what: &str| -> Result<usize, IoError> {
        let l = line(t);
        let c = int(t, what)?;
        usize::try_from(c)
            .ok()
            .filter(|&c| c <= text.len())
            .ok_or_else(|| err(l, format!("{what}: count {c} is impossible for this file")))
    };
    let mut raw = RawMesh::default();
    let mut cells: Vec<Vec<i64>> = Vec::new();
    let (mut offsets, mut conn): (Option<Vec<i64>>, Option<Vec<i64>>) = (None, None);
    let mut types: Vec<i64> = Vec::new();
    let mut dataset = false;
    while let Some((l, w)) = t.next() {
        let l = l + 3;
        match w {
            "DATASET" => {
                let (l, kind) = word(&mut t, path, "DATASET")?;
                if kind != "UNSTRUCTURED_GRID" {
                    return Err(err(
                        l,
                        format!("DATASET {kind}: only UNSTRUCTURED_GRID holds tets"),
                    ));
                }
                dataset = true;
            }
            "POINTS" => {
                let n = count(&mut t, "POINTS")?;
                let (l, ty) = word(&mut t, path, "POINTS type")?;
                if !POINT_TYPES.contains(&ty) {
                    return Err(err(
                        l,
                        format!(
                            "POINTS {n} {ty}: unknown data type (float, double or an integer type)"
                        ),
                    ));
                }
                for _ in 0..n {
                    let mut p = [0.0; 3];
                    for c in &mut p {
                        let (l, w) = word(&mut t, path, "POINTS")?;
                        *c = w
                            .parse()
                            .map_err(|_| err(l, format!("POINTS: `{w}` is not a number")))?;
                    }
                    raw.positions.push(Vector3::from(p));
                }
            }
            "CELLS" => {
                let n = count(&mut t, "CELLS")?;
                // Version 5.1: `CELLS n_offsets n_connectivity` then OFFSETS / CONNECTIVITY;
                // before: `CELLS n size` then a count before each cell.
                count(&mut t, "CELLS")?;
                let (l2, next) = word(&mut t, path, "CELLS")?;
                if next == "OFFSETS" {
                    word(&mut t, path, "OFFSETS type")?;
                    offsets = Some(
                        (0..n)
                            .map(|_| int(&mut t, "OFFSETS"))
                            .collect::<Result<_, _>>()?,
                    );
                    let (l3, c) = word(&mut t, path, "CONNECTIVITY")?;
                    if c != "CONNECTIVITY" {
                        return Err(err(l3, format!("expected CONNECTIVITY, found `{c}`")));
                    }
                    word(&mut t, path, "CONNECTIVITY type")?;
                    let total = offsets
                        .as_ref()
                        .and_then(|o| o.last().copied())
                        .unwrap_or(0);
                    let total = usize::try_from(total)
                        .ok()
                        .filter(|&c| c <= text.len())
                        .ok_or_else(|| err(l3, "bad OFFSETS".into()))?;
                    conn = Some(
                        (0..total)
                            .map(|_| int(&mut t, "CONNECTIVITY"))
                            .collect::<Result<_, _>>()?,
                    );
                } else {
                    let mut k: i64 = next
                        .parse()
                        .map_err(|_| err(l2, format!("CELLS: `{next}` is not an integer")))?;
                    for c in 0..n {
                        if c > 0 {
                            k = int(&mut t, "CELLS")?;
                        }
                        let k = usize::try_from(k)
                            .ok()
                            .filter(|&k| k <= 64)
                            .ok_or_else(|| err(line(&t), format!("cell {c}: {k} vertices")))?;
                        cells.push(
                            (0..k)
                                .map(|_| int(&mut t, "CELLS"))
                                .collect::<Result<_, _>>()?,
                        );
                    }
                }
            }
            "CELL_TYPES" => {
                let n = count(&mut t, "CELL_TYPES")?;
                types = (0..n)
                    .map(|_| int(&mut t, "CELL_TYPES"))
                    .collect::<Result<_, _>>()?;
            }
            "POINT_DATA" | "CELL_DATA" => break,
            "METADATA" | "INFORMATION" | "NAME" | "DATA" => {}
            other if !dataset => {
                return Err(err(l, format!("unexpected `{other}` before DATASET")))
            }
            _ => {}
        }
    }
    assemble(raw, cells, offsets.zip(conn), types, path)
}

/// The legacy format's numeric data types (VTK file formats, "Simple Legacy Formats"), `bit`
/// aside: what may follow `POINTS n`.
const POINT_TYPES: [&str; 19] = [
    "float",
    "double",
    "char",
    "unsigned_char",
    "short",
    "unsigned_short",
    "int",
    "unsigned_int",
    "long",
    "unsigned_long",
    "vtkIdType",
    "vtktypeint8",
    "vtktypeint16",
    "vtktypeint32",
    "vtktypeint64",
    "vtktypeuint32",
    "vtktypeuint64",
    "vtktypefloat32",
    "vtktypefloat64",
];

/// Cells from either layout (`cells` given one by one, or 5.1's offsets and connectivity),
/// tets kept, others counted.
pub(super) fn assemble(
    mut raw: RawMesh,
    mut cells: Vec<Vec<i64>>,
    offsets_conn: Option<(Vec<i64>, Vec<i64>)>,
    types: Vec<i64>,
    path: &Path,
) -> Result<RawMesh, IoError> {
    let err = |line: usize, m: String| IoError::parse(path, line, m);
    if let Some((offsets, conn)) = offsets_conn {
        if let Some(&first) = offsets.first().filter(|&&o| o != 0) {
            return Err(err(
                1,
                format!("OFFSETS start at {first}: the first offset must be 0"),
            ));
        }
        let mut start = 0usize;
        for (c, &end) in offsets.iter().enumerate().skip(1) {
            let end = usize::try_from(end)
                .ok()
                .filter(|&e| e >= start && e <= conn.len())
                .ok_or_else(|| err(1, format!("cell {}: bad offset {end}", c - 1)))?;
            cells.push(conn[start..end].to_vec());
            start = end;
        }
    }
    if cells.len() != types.len() {
        return Err(err(
            1,
            format!("{} cells but {} CELL_TYPES", cells.len(), types.len()),
        ));
    }
    for (c, (ids, &ty)) in cells.iter().zip(&types).enumerate() {
        let nodes = match u8::try_from(ty) {
            Ok(VTK_TETRA) => 4,
            Ok(VTK_QUADRATIC_TETRA) => 10,
            _ => {
                raw.skipped_cells += 1;
                continue;
            }
        };
        let mut tet = [0u32; 4];
        if ids.len() != nodes {
            return Err(err(
                1,
                format!(
                    "cell {c}: a tetrahedron of type {ty} with {} vertices (expected {nodes})",
                    ids.len()
                ),
            ));
        }
        // A 10-node tet keeps its 4 corners (the first 4); its edge nodes are dropped as
        // unused vertices.
        for (k, &i) in ids[..4].iter().enumerate() {
            tet[k] = u32::try_from(i)
                .map_err(|_| err(1, format!("cell {c}: vertex index {i} is out of range")))?;
        }
        raw.tets.push(tet);
    }
    Ok(raw)
}
