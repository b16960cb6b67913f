//! VTK XML PolyData (`.vtp`): triangle surfaces, here the embedded high-resolution surfaces
//! of bodies (Müller et al. 2002 §4.4) written per frame beside the `.vtu` frames.
//!
//! Arrays are encoded as in [`crate::vtu`] (inline base64, `UInt64` headers, zlib blocks or
//! raw); triangles are `<Polys>` with `Int32` connectivity and offsets. The reader takes what
//! the writer writes (and inline PolyData from other tools: polygons are fanned into
//! triangles); errors name the file and line.

use crate::error::IoError;
use crate::vtk_data::{decode_binary, numbers_from_ascii, numbers_from_bytes, HeaderType};
use crate::vtu::{data_array, f64_bytes, ArrayWriter, VtuEncoding};
use crate::vtu_read::{attr, line_of, unescape};
use nalgebra::Vector3;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// One frame of a triangle surface with optional point fields (one value per point).
#[derive(Debug, Clone, Default)]
pub struct VtpFrame<'a> {
    /// Current vertex positions.
    pub positions: &'a [Vector3<f64>],
    /// Triangles as 0-based vertex indices.
    pub triangles: &'a [[u32; 3]],
    /// Named 3-component point fields.
    pub point_vectors: Vec<(&'a str, &'a [Vector3<f64>])>,
}

/// Writes `frame` as a VTK XML PolyData file.
///
/// Fails with an [`IoError::Io`] of kind `InvalidInput` when a field has the wrong length, a
/// triangle references a missing point or an index does not fit `Int32`; nothing is written
/// then.
pub fn write_vtp(path: &Path, frame: &VtpFrame, encoding: VtuEncoding) -> Result<(), IoError> {
    check(frame).map_err(|msg| {
        IoError::io(
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidInput, msg),
        )
    })?;
    let file = File::create(path).map_err(|e| IoError::io(path, e))?;
    let mut w = BufWriter::new(file);
    write_to(&mut w, frame, encoding)
        .and_then(|()| w.flush())
        .map_err(|e| IoError::io(path, e))
}

fn check(frame: &VtpFrame) -> Result<(), String> {
    let (n, m) = (frame.positions.len(), frame.triangles.len());
    if n > i32::MAX as usize || m.saturating_mul(3) > i32::MAX as usize {
        return Err(format!(
            "{n} points and {m} triangles do not fit Int32 indices"
        ));
    }
    for (name, v) in &frame.point_vectors {
        if v.len() != n {
            return Err(format!(
                "point field `{name}` has {} values, expected {n} (one per point)",
                v.len()
            ));
        }
    }
    for (t, tri) in frame.triangles.iter().enumerate() {
        if let Some(&i) = tri.iter().find(|&&i| i as usize >= n) {
            return Err(format!(
                "triangle {t}: vertex index {i} is out of range (the frame has {n} points)"
            ));
        }
    }
    Ok(())
}

fn write_to(w: &mut impl Write, frame: &VtpFrame, encoding: VtuEncoding) -> std::io::Result<()> {
    let (n, m) = (frame.positions.len(), frame.triangles.len());
    let compressor = match encoding {
        VtuEncoding::Zlib => r#" compressor="vtkZLibDataCompressor""#,
        VtuEncoding::Raw => "",
    };
    let w = &mut ArrayWriter { w, encoding };
    writeln!(w.w, r#"<?xml version="1.0"?>"#)?;
    writeln!(
        w.w,
        r#"<VTKFile type="PolyData" version="1.0" byte_order="LittleEndian" header_type="UInt64"{compressor}>"#
    )?;
    writeln!(w, "  <PolyData>")?;
    writeln!(
        w,
        r#"    <Piece NumberOfPoints="{n}" NumberOfVerts="0" NumberOfLines="0" NumberOfStrips="0" NumberOfPolys="{m}">"#
    )?;
    if !frame.point_vectors.is_empty() {
        writeln!(w, "      <PointData>")?;
        for (name, v) in &frame.point_vectors {
            let data = v.iter().flat_map(|p| [p.x, p.y, p.z]);
            data_array(w, "Float64", Some(name), 3, &f64_bytes(data))?;
        }
        writeln!(w, "      </PointData>")?;
    }
    writeln!(w, "      <Points>")?;
    let points = frame.positions.iter().flat_map(|p| [p.x, p.y, p.z]);
    data_array(w, "Float64", None, 3, &f64_bytes(points))?;
    writeln!(w, "      </Points>")?;
    writeln!(w, "      <Polys>")?;
    let conn: Vec<u8> = (frame.triangles.iter().flatten())
        .flat_map(|&i| (i as i32).to_le_bytes())
        .collect();
    let offsets: Vec<u8> = (1..=m as i32).flat_map(|k| (3 * k).to_le_bytes()).collect();
    data_array(w, "Int32", Some("connectivity"), 1, &conn)?;
    data_array(w, "Int32", Some("offsets"), 1, &offsets)?;
    writeln!(w, "      </Polys>")?;
    writeln!(w, "    </Piece>")?;
    writeln!(w, "  </PolyData>")?;
    writeln!(w, "</VTKFile>")
}

/// A triangle surface read from a `.vtp` file.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VtpData {
    /// Vertex positions.
    pub positions: Vec<Vector3<f64>>,
    /// Triangles (polygons fanned from their first vertex).
    pub triangles: Vec<[u32; 3]>,
    /// 3-component point fields.
    pub point_vectors: Vec<(String, Vec<Vector3<f64>>)>,
}

/// Reads a `.vtp` file (see [`parse_vtp`]).
pub fn read_vtp(path: &Path) -> Result<VtpData, IoError> {
    let xml = std::fs::read_to_string(path).map_err(|e| IoError::io(path, e))?;
    parse_vtp(&xml, path)
}

/// Parses `.vtp` text with one `<Piece>` and inline arrays; `path` names the file in errors.
pub fn parse_vtp(xml: &str, path: &Path) -> Result<VtpData, IoError> {
    let err = |at: usize, msg: String| IoError::parse(path, line_of(xml, at), msg);
    let section = |tag: &str| -> Option<(usize, usize)> {
        let start = xml.find(&format!("<{tag}>"))?;
        let end = start + xml[start..].find(&format!("</{tag}>"))?;
        Some((start, end))
    };
    let inside = |s: Option<(usize, usize)>, at: usize| s.is_some_and(|(a, b)| a < at && at < b);
    let vtk_file = xml
        .find("<VTKFile")
        .ok_or_else(|| err(0, "no <VTKFile> element".into()))?;
    let vtk_tag = &xml[vtk_file..vtk_file + xml[vtk_file..].find('>').unwrap_or(0)];
    if attr(vtk_tag, "type") != Some("PolyData") {
        return Err(err(vtk_file, "not a PolyData file".into()));
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
    let piece = xml
        .find("<Piece")
        .ok_or_else(|| err(xml.len(), "no <Piece> element".into()))?;
    let n_points: usize = attr(&xml[piece..], "NumberOfPoints")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| err(piece, "<Piece> has no valid NumberOfPoints".into()))?;
    let (points, point_data, polys) = (section("Points"), section("PointData"), section("Polys"));
    let mut out = VtpData::default();
    let (mut conn, mut offsets) = (None, None);
    let mut pos = 0;
    while let Some(rel) = xml[pos..].find("<DataArray") {
        let at = pos + rel;
        let open_end = at
            + xml[at..]
                .find('>')
                .ok_or_else(|| err(at, "unterminated <DataArray".into()))?;
        let close = open_end
            + xml[open_end..]
                .find("</DataArray>")
                .ok_or_else(|| err(at, "<DataArray> without </DataArray>".into()))?;
        pos = close;
        let tag = &xml[at..open_end];
        let name = attr(tag, "Name").map(unescape).unwrap_or_default();
        let ty = attr(tag, "type").unwrap_or("");
        let content = &xml[open_end + 1..close];
        let values = match attr(tag, "format") {
            Some("binary") => decode_binary(content, header, zlib)
                .and_then(|bytes| numbers_from_bytes(ty, &bytes)),
            Some("ascii") => numbers_from_ascii(ty, content),
            other => Err(format!("format={other:?} is not supported")),
        }
        .map_err(|m| err(at, format!("array `{name}`: {m}")))?;
        let vectors = |v: Vec<f64>| -> Result<Vec<Vector3<f64>>, IoError> {
            if v.len() != 3 * n_points {
                return Err(err(
                    at,
                    format!(
                        "array `{name}`: {} values, expected {}",
                        v.len(),
                        3 * n_points
                    ),
                ));
            }
            Ok(v.chunks_exact(3)
                .map(|c| Vector3::new(c[0], c[1], c[2]))
                .collect())
        };
        if inside(points, at) {
            out.positions = vectors(values.into_f64())?;
        } else if inside(point_data, at) && attr(tag, "NumberOfComponents") == Some("3") {
            let v = vectors(values.into_f64())?;
            out.point_vectors.push((name, v));
        } else if inside(polys, at) {
            let ints = values
                .into_i64()
                .ok_or_else(|| err(at, format!("array `{name}`: integers expected")))?;
            match name.as_str() {
                "connectivity" => conn = Some(ints),
                "offsets" => offsets = Some(ints),
                _ => {}
            }
        }
    }
    if out.positions.len() != n_points {
        return Err(err(xml.len(), "no <Points> array".into()));
    }
    let missing = |what: &str| err(xml.len(), format!("no {what} array in <Polys>"));
    let conn = conn.ok_or_else(|| missing("connectivity"))?;
    let offsets = offsets.ok_or_else(|| missing("offsets"))?;
    let mut start = 0usize;
    for (c, &end) in offsets.iter().enumerate() {
        let end = usize::try_from(end)
            .ok()
            .filter(|&e| start + 3 <= e && e <= conn.len())
            .ok_or_else(|| {
                err(
                    piece,
                    format!(
                        "polygon {c}: offset {end} is out of range or leaves fewer than 3 vertices"
                    ),
                )
            })?;
        let mut ids = Vec::with_capacity(end - start);
        for &i in &conn[start..end] {
            ids.push(
                u32::try_from(i)
                    .ok()
                    .filter(|&i| (i as usize) < n_points)
                    .ok_or_else(|| {
                        err(
                            piece,
                            format!("polygon {c}: vertex index {i} is out of range"),
                        )
                    })?,
            );
        }
        for k in 1..ids.len() - 1 {
            out.triangles.push([ids[0], ids[k], ids[k + 1]]);
        }
        start = end;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_read_back_bit_for_bit() {
        let dir = std::env::temp_dir().join(format!("supple_vtp_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let positions = [
            Vector3::new(0.1, 0.2, 0.3),
            Vector3::new(1.0 / 3.0, 0.0, -2.5),
            Vector3::new(0.0, 1e-300, 7.0),
            Vector3::new(4.0, 5.0, 6.0),
        ];
        let triangles = [[0, 1, 2], [0, 2, 3]];
        let d: Vec<_> = positions.iter().map(|p| p * 2.0).collect();
        for encoding in [VtuEncoding::Zlib, VtuEncoding::Raw] {
            let path = dir.join(format!("s_{encoding:?}.vtp"));
            let frame = VtpFrame {
                positions: &positions,
                triangles: &triangles,
                point_vectors: vec![("displacement", &d)],
            };
            write_vtp(&path, &frame, encoding).unwrap();
            let back = read_vtp(&path).unwrap();
            assert_eq!(back.positions, positions);
            assert_eq!(back.triangles, triangles);
            assert_eq!(
                back.point_vectors,
                vec![("displacement".to_string(), d.clone())]
            );
        }
        let bad = VtpFrame {
            positions: &positions,
            triangles: &[[0, 1, 4]],
            point_vectors: Vec::new(),
        };
        let e = write_vtp(&dir.join("bad.vtp"), &bad, VtuEncoding::Raw).unwrap_err();
        assert!(
            e.to_string()
                .contains("triangle 0: vertex index 4 is out of range"),
            "{e}"
        );
        assert!(!dir.join("bad.vtp").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn malformed_files_name_the_line() {
        let e = parse_vtp(
            "<?xml?>\n<VTKFile type=\"UnstructuredGrid\">\n",
            Path::new("a.vtp"),
        )
        .unwrap_err();
        assert_eq!(e.to_string(), "a.vtp:2: not a PolyData file");
        let text = "<VTKFile type=\"PolyData\">\n<PolyData>\n<Piece NumberOfPoints=\"3\" NumberOfPolys=\"1\">\n<Points>\n<DataArray type=\"Float64\" NumberOfComponents=\"3\" format=\"ascii\">0 0 0 1 0 0 0 1</DataArray>\n</Points>\n";
        let e = parse_vtp(text, Path::new("a.vtp")).unwrap_err();
        assert_eq!(e.to_string(), "a.vtp:5: array ``: 8 values, expected 9");
    }
}
