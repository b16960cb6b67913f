//! Reading `.vtu` files (what [`crate::vtu`] writes, bit-exactly, and tetrahedral
//! unstructured grids from other tools) and `.pvd` collections. Used to re-render finished
//! runs and to import meshes.

use crate::error::IoError;
use crate::pvd::PvdEntry;
use crate::vtk_data::{decode_binary, numbers_from_ascii, numbers_from_bytes, HeaderType, Numbers};
use crate::vtu::{VTK_QUADRATIC_TETRA, VTK_TETRA};
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
    /// Scalar cell fields (values of the tets only).
    pub cell_scalars: Vec<(String, Vec<f64>)>,
    /// Cells that are not tetrahedra (points, lines, triangles, ...), left out.
    pub skipped_cells: usize,
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

/// Reads a `.vtu` file: what [`crate::vtu::write_vtu`] writes (compressed or not), and
/// unstructured grids from other tools with inline arrays (`binary`, raw or zlib, `UInt32` or
/// `UInt64` headers, or `ascii`). Only tetrahedra are kept; other cells are counted in
/// [`VtuData::skipped_cells`] and their cell fields dropped. Errors name the file and line.
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
    let vtk_file = xml
        .find("<VTKFile")
        .ok_or_else(|| err(0, "no <VTKFile> element".into()))?;
    let vtk_tag = &xml[vtk_file..vtk_file + xml[vtk_file..].find('>').unwrap_or(0)];
    if attr(vtk_tag, "type") != Some("UnstructuredGrid") {
        return Err(err(vtk_file, "not an UnstructuredGrid file".into()));
    }
    let header =
        HeaderType::from_attr(attr(vtk_tag, "header_type")).map_err(|m| err(vtk_file, m))?;
    let zlib = match attr(vtk_tag, "compressor") {
        None => false,
        Some("vtkZLibDataCompressor") => true,
        Some(other) => {
            return Err(err(
                vtk_file,
                format!("compressor {other} is not supported"),
            ))
        }
    };
    if attr(vtk_tag, "byte_order").is_some_and(|o| o != "LittleEndian") {
        return Err(err(
            vtk_file,
            "only LittleEndian files are supported".into(),
        ));
    }
    let (point_data, cell_data) = (section("PointData"), section("CellData"));
    let (points, cells) = (section("Points"), section("Cells"));
    let piece = xml
        .find("<Piece")
        .ok_or_else(|| err(xml.len(), "no <Piece> element".into()))?;
    if xml[piece + 1..].contains("<Piece") {
        return Err(err(
            piece,
            "files with several <Piece>s are not supported".into(),
        ));
    }
    let count = |name: &str| -> Result<usize, IoError> {
        attr(&xml[piece..], name)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| err(piece, format!("<Piece> has no valid {name}")))
    };
    let (n_points, n_cells) = (count("NumberOfPoints")?, count("NumberOfCells")?);
    let mut out = VtuData::default();
    let (mut connectivity, mut offsets, mut types) = (None, None, None);
    let mut cell_fields = Vec::new();
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
        let name = attr(tag, "Name").map(unescape).unwrap_or_default();
        let ty = attr(tag, "type").unwrap_or("");
        let content = &xml[open_end + 1..close];
        let values = match attr(tag, "format") {
            Some("binary") => decode_binary(content, header, zlib)
                .and_then(|bytes| numbers_from_bytes(ty, &bytes)),
            Some("ascii") => numbers_from_ascii(ty, content),
            other => Err(format!(
                "format={other:?} is not supported (binary or ascii inline arrays only)"
            )),
        }
        .map_err(|m| err(at, format!("array `{name}`: {m}")))?;
        let components: usize = attr(tag, "NumberOfComponents")
            .map_or(Some(1), |c| c.parse().ok())
            .ok_or_else(|| err(at, "bad NumberOfComponents".into()))?;
        let sized = |v: Numbers, expected: usize| -> Result<Vec<f64>, IoError> {
            if v.len() == expected {
                Ok(v.into_f64())
            } else {
                Err(err(
                    at,
                    format!("array `{name}`: {} values, expected {expected}", v.len()),
                ))
            }
        };
        let vectors = |v: Vec<f64>| -> Vec<Vector3<f64>> {
            v.chunks_exact(3)
                .map(|c| Vector3::new(c[0], c[1], c[2]))
                .collect()
        };
        let ints = |v: Numbers| {
            v.into_i64()
                .ok_or_else(|| err(at, format!("array `{name}`: integers expected")))
        };
        if inside(points, at) {
            // Absent means 1 in VTK; our files and ParaView's always say 3.
            if attr(tag, "NumberOfComponents").is_some() && components != 3 {
                return Err(err(
                    at,
                    format!(
                        "<Points> array `{name}`: NumberOfComponents = {components}, must be 3"
                    ),
                ));
            }
            out.positions = vectors(sized(values, 3 * n_points)?);
        } else if inside(point_data, at) {
            if components == 3 {
                let v = vectors(sized(values, 3 * n_points)?);
                out.point_vectors.push((name, v));
            } else if components == 1 {
                let v = sized(values, n_points)?;
                out.point_scalars.push((name, v));
            }
        } else if inside(cell_data, at) {
            if components == 1 {
                let v = sized(values, n_cells)?;
                cell_fields.push((name, v));
            }
        } else if inside(cells, at) {
            match name.as_str() {
                "connectivity" => connectivity = Some(ints(values)?),
                "offsets" => offsets = Some(ints(values)?),
                "types" => types = Some(ints(values)?),
                _ => {}
            }
        }
    }
    if out.positions.len() != n_points {
        return Err(err(xml.len(), "no <Points> array".into()));
    }
    let missing = |what: &str| err(xml.len(), format!("no {what} array in <Cells>"));
    let conn = connectivity.ok_or_else(|| missing("connectivity"))?;
    let offsets = offsets.ok_or_else(|| missing("offsets"))?;
    let types = types.ok_or_else(|| missing("types"))?;
    if offsets.len() != n_cells || types.len() != n_cells {
        return Err(err(
            piece,
            format!(
                "{n_cells} cells but {} offsets and {} types",
                offsets.len(),
                types.len()
            ),
        ));
    }
    let mut kept = Vec::with_capacity(n_cells);
    let mut start = 0i64;
    for (c, (&end, &ty)) in offsets.iter().zip(&types).enumerate() {
        let range = usize::try_from(start)
            .ok()
            .zip(usize::try_from(end).ok())
            .filter(|(a, b)| a <= b && *b <= conn.len())
            .ok_or_else(|| err(piece, format!("cell {c}: offset {end} is out of range")))?;
        start = end;
        let corners = match u8::try_from(ty) {
            Ok(VTK_TETRA) => 4,
            Ok(VTK_QUADRATIC_TETRA) => 10,
            _ => {
                out.skipped_cells += 1;
                continue;
            }
        };
        let ids = &conn[range.0..range.1];
        if ids.len() != corners {
            return Err(err(
                piece,
                format!(
                    "cell {c}: a tetrahedron of type {ty} with {} vertices (expected {corners})",
                    ids.len()
                ),
            ));
        }
        // A 10-node tet keeps its 4 corners (the first 4); its edge nodes, used by no other
        // cell, are dropped as unused vertices.
        let ids = &ids[..4];
        let mut tet = [0u32; 4];
        for (k, &i) in ids.iter().enumerate() {
            tet[k] = u32::try_from(i)
                .ok()
                .filter(|&i| (i as usize) < n_points)
                .ok_or_else(|| err(piece, format!("cell {c}: vertex index {i} is out of range")))?;
        }
        out.tets.push(tet);
        kept.push(c);
    }
    out.cell_scalars = cell_fields
        .into_iter()
        .map(|(name, v)| (name, kept.iter().map(|&c| v[c]).collect()))
        .collect();
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
pub(crate) fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let start = tag.find(&key)? + key.len();
    Some(&tag[start..start + tag[start..].find('"')?])
}

pub(crate) fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&apos;", "'")
        .replace("&amp;", "&")
}

pub(crate) fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}
