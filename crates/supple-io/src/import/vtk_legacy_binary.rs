//! Binary legacy VTK files (`BINARY`, `DATASET UNSTRUCTURED_GRID`): keyword lines are text,
//! each followed by its data as big-endian binary (VTK's legacy file format; meshio and
//! pyvista write these by default). Both cell layouts are read, as in the ASCII reader.

use super::vtk_legacy::assemble;
use super::RawMesh;
use crate::error::IoError;
use nalgebra::Vector3;
use std::path::Path;

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    /// Start of the last line or data block read: where errors point.
    mark: usize,
    path: &'a Path,
}

impl<'a> Cursor<'a> {
    fn err(&self, msg: impl Into<String>) -> IoError {
        let upto = &self.bytes[..self.mark.min(self.bytes.len())];
        let line = upto.iter().filter(|&&b| b == b'\n').count() + 1;
        IoError::parse(self.path, line, msg)
    }

    /// The next non-empty text line, trimmed; `None` at the end.
    fn line(&mut self) -> Result<Option<&'a str>, IoError> {
        loop {
            let rest = &self.bytes[self.at.min(self.bytes.len())..];
            if rest.is_empty() {
                return Ok(None);
            }
            self.mark = self.at;
            let len = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
            self.at += (len + 1).min(rest.len());
            let l = std::str::from_utf8(&rest[..len])
                .map_err(|_| self.err("expected a keyword line"))?
                .trim();
            if !l.is_empty() {
                return Ok(Some(l));
            }
        }
    }

    /// `n` big-endian values of VTK type `ty`, widened.
    fn values(&mut self, ty: &str, n: usize, what: &str) -> Result<Vec<f64>, IoError> {
        self.mark = self.at;
        let width = match ty {
            "float" | "int" | "unsigned_int" | "vtktypeint32" => 4,
            "double" | "long" | "unsigned_long" | "vtktypeint64" | "vtkIdType" => 8,
            other => return Err(self.err(format!("{what}: type `{other}` is not supported"))),
        };
        let len = n
            .checked_mul(width)
            .filter(|&l| l <= self.bytes.len() - self.at.min(self.bytes.len()))
            .ok_or_else(|| self.err(format!("{what}: {n} values run past the end of the file")))?;
        let data = &self.bytes[self.at..self.at + len];
        self.at += len;
        Ok(data
            .chunks_exact(width)
            .map(|c| match (ty, width) {
                ("float", _) => f64::from(f32::from_be_bytes([c[0], c[1], c[2], c[3]])),
                ("double", _) => f64::from_be_bytes(c.try_into().unwrap_or([0; 8])),
                (_, 4) if ty.starts_with("unsigned") => {
                    f64::from(u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
                }
                (_, 4) => f64::from(i32::from_be_bytes([c[0], c[1], c[2], c[3]])),
                // Integers above 2^53 are not indices Supple can use; they stay out of range.
                _ => i64::from_be_bytes(c.try_into().unwrap_or([0; 8])) as f64,
            })
            .collect())
    }
}

fn ints(v: Vec<f64>) -> Vec<i64> {
    v.into_iter().map(|x| x as i64).collect()
}

pub(super) fn parse(bytes: &[u8], path: &Path) -> Result<RawMesh, IoError> {
    let mut c = Cursor {
        bytes,
        at: 0,
        mark: 0,
        path,
    };
    for _ in 0..3 {
        c.line()?;
    }
    let mut raw = RawMesh::default();
    let mut cells: Vec<Vec<i64>> = Vec::new();
    let mut offsets_conn = None;
    let mut types = Vec::new();
    let count = |c: &Cursor, w: Option<&str>, what: &str| -> Result<usize, IoError> {
        w.and_then(|w| w.parse::<usize>().ok())
            .filter(|&n| n <= bytes.len())
            .ok_or_else(|| c.err(format!("{what}: bad count")))
    };
    while let Some(l) = c.line()? {
        let w: Vec<&str> = l.split_ascii_whitespace().collect();
        match w[0] {
            "DATASET" if w.get(1) != Some(&"UNSTRUCTURED_GRID") => {
                return Err(c.err(format!("`{l}`: only UNSTRUCTURED_GRID holds tets")))
            }
            "DATASET" => {}
            "POINTS" => {
                let n = count(&c, w.get(1).copied(), "POINTS")?;
                let ty = w.get(2).copied().unwrap_or("");
                let v = c.values(ty, 3 * n, "POINTS")?;
                raw.positions = v
                    .chunks_exact(3)
                    .map(|p| Vector3::new(p[0], p[1], p[2]))
                    .collect();
            }
            "CELLS" => {
                let n = count(&c, w.get(1).copied(), "CELLS")?;
                let size = count(&c, w.get(2).copied(), "CELLS")?;
                if bytes[c.at.min(bytes.len())..].starts_with(b"OFFSETS ") {
                    let next = c.line()?.unwrap_or("");
                    let ty = next.strip_prefix("OFFSETS ").unwrap_or("");
                    let offsets = ints(c.values(ty.trim(), n, "OFFSETS")?);
                    let cl = c.line()?.unwrap_or("");
                    let ty = cl
                        .strip_prefix("CONNECTIVITY ")
                        .ok_or_else(|| c.err(format!("expected CONNECTIVITY, found `{cl}`")))?;
                    let conn = ints(c.values(ty.trim(), size, "CONNECTIVITY")?);
                    offsets_conn = Some((offsets, conn));
                } else {
                    // 4.2: a count before each cell's indices, as int32.
                    let flat = ints(c.values("int", size, "CELLS")?);
                    let mut at = 0usize;
                    for k in 0..n {
                        let m = flat.get(at).and_then(|&m| usize::try_from(m).ok());
                        let m = m
                            .filter(|&m| at + 1 + m <= flat.len())
                            .ok_or_else(|| c.err(format!("CELLS: cell {k} runs past the data")))?;
                        cells.push(flat[at + 1..at + 1 + m].to_vec());
                        at += 1 + m;
                    }
                }
            }
            "CELL_TYPES" => {
                let n = count(&c, w.get(1).copied(), "CELL_TYPES")?;
                types = ints(c.values("int", n, "CELL_TYPES")?);
            }
            "POINT_DATA" | "CELL_DATA" => break,
            "METADATA" | "INFORMATION" | "NAME" | "DATA" => {}
            other => return Err(c.err(format!("unexpected `{other}`"))),
        }
    }
    assemble(raw, cells, offsets_conn, types, path)
}
