//! Closed triangle surfaces for isosurface stuffing (`supple mesh`, `mesh = { kind =
//! "surface" }`): Wavefront OBJ (`v` and `f` lines; polygons are split into fans, texture and
//! normal indices and every other statement ignored) and STL (ASCII or binary, by content).
//! Vertices of STL files are merged when bit-identical, so that a closed STL is closed.
//!
//! OBJ goes through [`crate::obj`], the reader of embedded surfaces, so both uses read the
//! same files the same way.

use crate::error::IoError;
use crate::files::Files;
use nalgebra::Vector3;
use std::collections::HashMap;
use std::path::Path;
use supple::mesh::stuffing::TriangleSurface;

/// Vertices and triangles as read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SurfaceFile {
    pub vertices: Vec<Vector3<f64>>,
    pub triangles: Vec<[u32; 3]>,
}

/// Reads an OBJ (`.obj`) or STL (`.stl`) surface, by extension.
pub fn read_surface(path: &Path) -> Result<SurfaceFile, IoError> {
    read_surface_from(Files::Disk, path)
}

/// [`read_surface`] from the file system or from bytes in memory ([`Files`]).
pub fn read_surface_from(files: Files<'_>, path: &Path) -> Result<SurfaceFile, IoError> {
    let bytes = files.read(path)?;
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("obj") => parse_obj(&String::from_utf8_lossy(&bytes), path),
        Some("stl") => parse_stl(&bytes, path),
        _ => Err(IoError::parse(
            path,
            1,
            "unknown surface format: use .obj or .stl",
        )),
    }
}

/// Reads a surface and builds its signed distance ([`TriangleSurface`]).
pub fn load_surface(path: &Path) -> Result<TriangleSurface, IoError> {
    load_surface_from(Files::Disk, path)
}

/// [`load_surface`] from the file system or from bytes in memory ([`Files`]).
pub fn load_surface_from(files: Files<'_>, path: &Path) -> Result<TriangleSurface, IoError> {
    let f = read_surface_from(files, path)?;
    TriangleSurface::new(&f.vertices, &f.triangles)
        .map_err(|e| IoError::parse(path, 1, e.to_string()))
}

/// Parses OBJ text with the project's one OBJ reader ([`crate::obj::parse_obj`]: polygons
/// fanned, negative indices, line continuations; errors name the file and line).
pub fn parse_obj(text: &str, path: &Path) -> Result<SurfaceFile, IoError> {
    let s = crate::obj::parse_obj(text, path)?;
    Ok(SurfaceFile {
        vertices: s.positions,
        triangles: s.triangles,
    })
}

/// Parses an STL file, binary or ASCII.
pub fn parse_stl(bytes: &[u8], path: &Path) -> Result<SurfaceFile, IoError> {
    let mut tris: Vec<[[f64; 3]; 3]> = Vec::new();
    let binary_len = |n: usize| 84usize.checked_add(n.checked_mul(50)?);
    let count = (bytes.len() >= 84)
        .then(|| u32::from_le_bytes([bytes[80], bytes[81], bytes[82], bytes[83]]) as usize);
    if count.is_some_and(|n| binary_len(n) == Some(bytes.len())) {
        for rec in bytes[84..].chunks_exact(50) {
            let f =
                |o: usize| f32::from_le_bytes([rec[o], rec[o + 1], rec[o + 2], rec[o + 3]]) as f64;
            tris.push(std::array::from_fn(|v| {
                std::array::from_fn(|c| f(12 + 12 * v + 4 * c))
            }));
        }
    } else {
        let text = std::str::from_utf8(bytes).map_err(|_| {
            IoError::parse(
                path,
                1,
                "neither a binary STL (size does not match its count) nor ASCII",
            )
        })?;
        let mut cur: Vec<[f64; 3]> = Vec::new();
        for (n, line) in text.lines().enumerate() {
            let mut words = line.split_whitespace();
            match words.next() {
                Some("vertex") => {
                    let mut c = [0.0; 3];
                    for v in &mut c {
                        *v = words
                            .next()
                            .and_then(|w| w.parse::<f64>().ok())
                            .filter(|v| v.is_finite())
                            .ok_or_else(|| IoError::parse(path, n + 1, "a vertex needs x y z"))?;
                    }
                    cur.push(c);
                }
                Some("endfacet") => {
                    if cur.len() != 3 {
                        return Err(IoError::parse(path, n + 1, "a facet needs 3 vertices"));
                    }
                    tris.push([cur[0], cur[1], cur[2]]);
                    cur.clear();
                }
                _ => {}
            }
        }
    }
    if tris.is_empty() {
        return Err(IoError::parse(path, 1, "no facets"));
    }
    let mut out = SurfaceFile::default();
    let mut index: HashMap<[u64; 3], u32> = HashMap::new();
    for (t, tri) in tris.iter().enumerate() {
        let mut ids = [0u32; 3];
        for (k, p) in tri.iter().enumerate() {
            if !p.iter().all(|c| c.is_finite()) {
                return Err(IoError::parse(
                    path,
                    1,
                    format!("facet {t}: a non-finite coordinate"),
                ));
            }
            ids[k] = *index.entry(p.map(f64::to_bits)).or_insert_with(|| {
                out.vertices.push(Vector3::from(*p));
                (out.vertices.len() - 1) as u32
            });
        }
        out.triangles.push(ids);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TET_OBJ: &str = "# a tetrahedron\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\nf 1 3 2\nf 1 2 4\nf 1 4 3\nf 2/1/1 3 4\n";

    #[test]
    fn obj_and_stl_of_one_tetrahedron_agree() {
        let p = Path::new("t.obj");
        let obj = parse_obj(TET_OBJ, p).unwrap();
        assert_eq!(obj.vertices.len(), 4);
        assert_eq!(obj.triangles.len(), 4);
        let s = TriangleSurface::new(&obj.vertices, &obj.triangles).unwrap();
        assert_eq!(s.open_edges(), 0);
        assert!((s.volume() - 1.0 / 6.0).abs() < 1e-15);

        let mut ascii = String::from("solid t\n");
        let mut binary = vec![0u8; 80];
        binary.extend_from_slice(&4u32.to_le_bytes());
        for t in &obj.triangles {
            ascii.push_str(" facet normal 0 0 0\n  outer loop\n");
            binary.extend_from_slice(&[0u8; 12]);
            for &i in t {
                let v = obj.vertices[i as usize];
                ascii.push_str(&format!("   vertex {} {} {}\n", v.x, v.y, v.z));
                for c in v.iter() {
                    binary.extend_from_slice(&(*c as f32).to_le_bytes());
                }
            }
            ascii.push_str("  endloop\n endfacet\n");
            binary.extend_from_slice(&[0u8; 2]);
        }
        ascii.push_str("endsolid t\n");
        for stl in [
            parse_stl(ascii.as_bytes(), p).unwrap(),
            parse_stl(&binary, p).unwrap(),
        ] {
            // Same triangles, vertices merged (numbered in order of first use).
            let corners = |f: &SurfaceFile| -> Vec<[Vector3<f64>; 3]> {
                f.triangles
                    .iter()
                    .map(|t| t.map(|i| f.vertices[i as usize]))
                    .collect()
            };
            assert_eq!(stl.vertices.len(), 4);
            assert_eq!(corners(&stl), corners(&obj));
        }
    }

    #[test]
    fn bad_files_are_refused_with_their_line() {
        let p = Path::new("bad.obj");
        let e = parse_obj("v 0 0 0\nf 1 2 3\n", p).unwrap_err();
        assert_eq!(
            e.to_string(),
            "bad.obj:2: face vertex 2 is out of range (1 vertices so far)"
        );
        let e = parse_obj("v 0 0 nan\n", p).unwrap_err();
        assert!(e.to_string().starts_with("bad.obj:1:"), "{e}");
        assert!(parse_obj("v 0 0 0\n", p).is_err());
        assert!(parse_stl(b"solid x\nfacet\nvertex 0 0 0\nendfacet\n", p).is_err());
        assert!(parse_stl(&[0xff; 90], p).is_err());
    }
}
