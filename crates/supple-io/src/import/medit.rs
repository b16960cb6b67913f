//! Medit `.mesh` files (ASCII; the INRIA/ISC "MeshVersionFormatted" format written by
//! MMG, TetGen `-g`, CGAL and meshio): `Vertices` (x y z ref) and `Tetrahedra` (4 1-based
//! indices and a ref) are read; `Triangles`, `Edges`, `Quadrilaterals`, `Hexahedra` and
//! `Prisms` are counted and skipped; the other keywords listed in [`SKIP`] are skipped.

use super::{RawMesh, Tokens};
use crate::error::IoError;
use nalgebra::Vector3;
use std::path::Path;

/// Keywords whose rows are skipped, with the numbers per row and whether they are cells.
const SKIP: [(&str, usize, bool); 13] = [
    ("Triangles", 4, true),
    ("Edges", 3, true),
    ("Quadrilaterals", 5, true),
    ("Hexahedra", 9, true),
    ("Prisms", 7, true),
    ("Corners", 1, false),
    ("Ridges", 1, false),
    ("RequiredVertices", 1, false),
    ("RequiredEdges", 1, false),
    ("RequiredTriangles", 1, false),
    ("Normals", 3, false),
    ("NormalAtVertices", 2, false),
    ("Tangents", 3, false),
];

pub(crate) fn parse(text: &str, path: &Path) -> Result<RawMesh, IoError> {
    let mut t = Tokens::new(text, Some('#'));
    let err = |line: usize, m: String| IoError::parse(path, line, m);
    let mut raw = RawMesh::default();
    let mut seen_version = false;
    let number = |t: &mut Tokens, what: &str| -> Result<f64, IoError> {
        let (line, w) = t
            .next()
            .ok_or_else(|| err(t.line(), format!("file ends inside {what}")))?;
        w.parse::<f64>()
            .map_err(|_| err(line, format!("{what}: `{w}` is not a number")))
    };
    let count = |t: &mut Tokens, what: &str, per_row: usize| -> Result<usize, IoError> {
        let line = t.line();
        let c = number(t, what)?;
        // Each row needs at least `per_row` tokens of at least 2 bytes.
        if !(c >= 0.0 && c.fract() == 0.0 && c * (per_row as f64) * 2.0 <= text.len() as f64) {
            return Err(err(
                line,
                format!("{what}: count {c} is impossible for this file"),
            ));
        }
        Ok(c as usize)
    };
    while let Some((line, word)) = t.next() {
        match word {
            "MeshVersionFormatted" => {
                number(&mut t, word)?;
                seen_version = true;
            }
            "Dimension" => {
                let d = number(&mut t, word)?;
                if d != 3.0 {
                    return Err(err(
                        line,
                        format!("Dimension {d}: only 3D meshes have tetrahedra"),
                    ));
                }
            }
            "Vertices" => {
                let n = count(&mut t, word, 4)?;
                raw.positions.reserve(n);
                for _ in 0..n {
                    let p = [
                        number(&mut t, word)?,
                        number(&mut t, word)?,
                        number(&mut t, word)?,
                    ];
                    number(&mut t, word)?;
                    raw.positions.push(Vector3::from(p));
                }
            }
            "Tetrahedra" => {
                let n = count(&mut t, word, 5)?;
                for _ in 0..n {
                    let mut tet = [0u32; 4];
                    for v in &mut tet {
                        let line = t.line();
                        let i = number(&mut t, word)?;
                        if !(i >= 1.0 && i.fract() == 0.0 && i <= u32::MAX as f64) {
                            return Err(err(
                                line,
                                format!("Tetrahedra: vertex {i} is not a 1-based index"),
                            ));
                        }
                        *v = i as u32 - 1;
                    }
                    number(&mut t, word)?;
                    raw.tets.push(tet);
                }
            }
            "End" => break,
            other => match SKIP.iter().find(|(k, _, _)| *k == other) {
                Some(&(k, per_row, cell)) => {
                    let n = count(&mut t, k, per_row)?;
                    for _ in 0..n * per_row {
                        number(&mut t, k)?;
                    }
                    if cell {
                        raw.skipped_cells += n;
                    }
                }
                None => return Err(err(line, format!("unknown keyword `{other}`"))),
            },
        }
    }
    if !seen_version {
        return Err(err(
            1,
            "no MeshVersionFormatted: not a Medit .mesh file".into(),
        ));
    }
    Ok(raw)
}
