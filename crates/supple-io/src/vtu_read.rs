//! Reading back what [`crate::vtu`] writes: `.vtu` files (binary base64 arrays with a
//! `UInt64` header, tetrahedra only) and `.pvd` collections. Used to re-render finished runs;
//! not a general VTK reader.

use crate::error::IoError;
use crate::pvd::PvdEntry;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use nalgebra::Vector3;
use std::path::Path;

/// A tetrahedral mesh frame read from a `.vtu` file, with its named fields.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VtuData {
    /// Vertex positions.
    pub positions: Vec<Vector3<f64>>,
    /// Tets as 0-based vertex indices.
    pub tets: Vec<[u32; 4]>,
    /// 3-component point fields.
    pub point_vectors: Vec<(String, Vec<Vector3<f64>>)>,
    /// Scalar point fields.
    pub point_scalars: Vec<(String, Vec<f64>)>,
    /// Scalar cell fields.
    pub cell_scalars: Vec<(String, Vec<f64>)>,
}

impl VtuData {
    /// The point vector field called `name`.
    pub fn point_vector(&self, name: &str) -> Option<&[Vector3<f64>]> {
        self.point_vectors
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }

    /// The cell scalar field called `name`.
    pub fn cell_scalar(&self, name: &str) -> Option<&[f64]> {
        self.cell_scalars
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_slice())
    }
}

/// Reads a `.vtu` file written by [`crate::vtu::write_vtu`]. Errors name the file and line.
pub fn read_vtu(path: &Path) -> Result<VtuData, IoError> {
    let xml = std::fs::read_to_string(path).map_err(|e| IoError::io(path, e))?;
    parse_vtu(&xml, path)
}

/// Parses `.vtu` text; `path` names the file in errors.
pub fn parse_vtu(xml: &str, path: &Path) -> Result<VtuData, IoError> {
    let err = |at: usize, msg: String| IoError::parse(path, line_of(xml, at), msg);
    let section = |tag: &str| -> Option<(usize, usize)> {
        let start = xml.find(&format!("<{tag}"))?;
        let end = start + xml[start..].find(&format!("</{tag}>"))?;
        Some((start, end))
    };
    let inside = |s: Option<(usize, usize)>, at: usize| s.is_some_and(|(a, b)| a < at && at < b);
    let (point_data, cell_data) = (section("PointData"), section("CellData"));
    let (points, cells) = (section("Points"), section("Cells"));
    let piece = xml
        .find("<Piece")
        .ok_or_else(|| err(xml.len(), "no <Piece> element".into()))?;
    let count = |name: &str| -> Result<usize, IoError> {
        attr(&xml[piece..], name)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| err(piece, format!("<Piece> has no valid {name}")))
    };
    let (n_points, n_cells) = (count("NumberOfPoints")?, count("NumberOfCells")?);
    let mut out = VtuData::default();
    let mut connectivity: Option<Vec<i64>> = None;
    let mut pos = 0;
    while let Some(rel) = xml[pos..].find("<DataArray") {
        let at = pos + rel;
        let open_end = at
            + xml[at..]
                .find('>')
                .ok_or_else(|| err(at, "unterminated <DataArray".into()))?;
        let tag = &xml[at..open_end];
        let close = open_end
            + xml[open_end..]
                .find("</DataArray>")
                .ok_or_else(|| err(at, "<DataArray> without </DataArray>".into()))?;
        pos = close;
        if attr(tag, "format") != Some("binary") {
            return Err(err(
                at,
                "only format=\"binary\" arrays are supported".into(),
            ));
        }
        let raw = STANDARD
            .decode(xml[open_end + 1..close].trim())
            .map_err(|e| err(at, format!("bad base64: {e}")))?;
        let len = raw
            .get(..8)
            .map(|h| u64::from_le_bytes(h.try_into().unwrap_or([0; 8])) as usize)
            .filter(|&len| len == raw.len() - 8)
            .ok_or_else(|| {
                err(
                    at,
                    "the UInt64 length header does not match the data".into(),
                )
            })?;
        let data = &raw[8..8 + len];
        let name = attr(tag, "Name").map(unescape).unwrap_or_default();
        let components: usize = attr(tag, "NumberOfComponents")
            .map_or(Some(1), |c| c.parse().ok())
            .ok_or_else(|| err(at, "bad NumberOfComponents".into()))?;
        let ty = attr(tag, "type").unwrap_or("");
        let float = |expected: usize| -> Result<Vec<f64>, IoError> {
            if ty != "Float64" || data.len() != 8 * expected {
                return Err(err(
                    at,
                    format!("array `{name}`: expected {expected} Float64 values"),
                ));
            }
            Ok(data
                .chunks_exact(8)
                .map(|c| f64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                .collect())
        };
        let vectors = |v: Vec<f64>| -> Vec<Vector3<f64>> {
            v.chunks_exact(3)
                .map(|c| Vector3::new(c[0], c[1], c[2]))
                .collect()
        };
        if inside(points, at) {
            out.positions = vectors(float(3 * n_points)?);
        } else if inside(point_data, at) {
            if components == 3 {
                let v = vectors(float(3 * n_points)?);
                out.point_vectors.push((name, v));
            } else {
                let v = float(n_points)?;
                out.point_scalars.push((name, v));
            }
        } else if inside(cell_data, at) {
            let v = float(n_cells)?;
            out.cell_scalars.push((name, v));
        } else if inside(cells, at) && name == "connectivity" {
            if ty != "Int64" || data.len() != 32 * n_cells {
                return Err(err(
                    at,
                    format!(
                        "connectivity: expected {} Int64 values (tets only)",
                        4 * n_cells
                    ),
                ));
            }
            connectivity = Some(
                data.chunks_exact(8)
                    .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                    .collect(),
            );
        }
    }
    let conn = connectivity.ok_or_else(|| err(xml.len(), "no connectivity array".into()))?;
    for (t, c) in conn.chunks_exact(4).enumerate() {
        let mut tet = [0u32; 4];
        for (k, &i) in c.iter().enumerate() {
            tet[k] = u32::try_from(i)
                .ok()
                .filter(|&i| (i as usize) < n_points)
                .ok_or_else(|| err(piece, format!("tet {t}: vertex index {i} is out of range")))?;
        }
        out.tets.push(tet);
    }
    if out.positions.len() != n_points {
        return Err(err(xml.len(), "no <Points> array".into()));
    }
    Ok(out)
}

/// Reads a `.pvd` collection: `(time, file)` entries in file order, file names as written
/// (relative to the `.pvd` file's folder).
pub fn read_pvd(path: &Path) -> Result<Vec<(f64, String)>, IoError> {
    Ok(read_pvd_entries(path)?
        .into_iter()
        .map(|e| (e.time, e.file))
        .collect())
}

/// Reads a `.pvd` collection with each entry's part index and block name (see
/// [`crate::pvd`]). Checks that the file is a complete collection (closing tags present).
pub fn read_pvd_entries(path: &Path) -> Result<Vec<PvdEntry>, IoError> {
    let xml = std::fs::read_to_string(path).map_err(|e| IoError::io(path, e))?;
    if !xml.contains("</Collection>") || !xml.trim_end().ends_with("</VTKFile>") {
        return Err(IoError::parse(
            path,
            line_of(&xml, xml.len()),
            "the collection is not closed (no </Collection></VTKFile>)",
        ));
    }
    let mut out = Vec::new();
    let mut pos = 0;
    while let Some(rel) = xml[pos..].find("<DataSet") {
        let at = pos + rel;
        let end = at + xml[at..].find('>').unwrap_or(xml.len() - at);
        let tag = &xml[at..end];
        pos = end;
        let bad = |what: &str| IoError::parse(path, line_of(&xml, at), what.to_string());
        let time = attr(tag, "timestep")
            .and_then(|t| t.parse::<f64>().ok())
            .ok_or_else(|| bad("<DataSet> has no valid timestep"))?;
        let part = attr(tag, "part").map_or(Some(0), |p| p.parse().ok());
        let part = part.ok_or_else(|| bad("<DataSet> has an invalid part"))?;
        let file = attr(tag, "file").ok_or_else(|| bad("<DataSet> has no file"))?;
        out.push(PvdEntry {
            time,
            part,
            name: attr(tag, "name").map(unescape),
            file: unescape(file),
        });
    }
    Ok(out)
}

/// Attribute `name="..."` of a tag.
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    Some(&tag[start..start + tag[start..].find('"')?])
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}
