//! Wavefront OBJ surfaces (the high-resolution surfaces embedded in bodies, Müller et al.
//! 2002 §4.4).
//!
//! Read: `v x y z [w | r g b]` (the first three numbers kept), `f` with `i`, `i/t`, `i//n`
//! or `i/t/n` references (1-based, or negative: relative to the vertices read so far),
//! triangles kept, quads and larger polygons fan-triangulated from their first vertex;
//! `#` comments and `\` line continuations. `vt`, `vn`, groups, objects, materials,
//! smoothing groups, lines and points are skipped. Every error names the file and the
//! 1-based line: `skin.obj:12: face vertex 9 is out of range (8 vertices so far)`.

use crate::error::IoError;
use nalgebra::Vector3;
use std::path::Path;

/// A triangle surface: positions and 0-based triangles.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TriSurface {
    /// Vertex positions, in file order.
    pub positions: Vec<Vector3<f64>>,
    /// Triangles as 0-based vertex indices, in file order (polygons fanned).
    pub triangles: Vec<[u32; 3]>,
}

impl TriSurface {
    /// Applies `p ↦ rotation · (scale · p) + translation` to every vertex (the body's scene
    /// transform, so the surface stays where its mesh goes).
    pub fn transform(
        &mut self,
        scale: f64,
        rotation: &nalgebra::Matrix3<f64>,
        translation: &Vector3<f64>,
    ) {
        for p in &mut self.positions {
            *p = rotation * (*p * scale) + translation;
        }
    }
}

/// Reads an OBJ file into a [`TriSurface`] (see the module documentation for what is read).
/// A file without any face is refused.
pub fn read_obj(path: &Path) -> Result<TriSurface, IoError> {
    let text = std::fs::read_to_string(path).map_err(|e| IoError::io(path, e))?;
    parse_obj(&text, path)
}

/// Parses OBJ text; `path` names the file in errors.
pub fn parse_obj(text: &str, path: &Path) -> Result<TriSurface, IoError> {
    let mut out = TriSurface::default();
    let mut face: Vec<u32> = Vec::new();
    let mut logical = String::new();
    let mut first_line = 0;
    let mut last_line = 0;
    for (k, raw) in text.lines().enumerate() {
        let content = raw.split('#').next().unwrap_or("");
        if logical.is_empty() {
            first_line = k + 1;
        }
        last_line = k + 1;
        // A trailing backslash joins the next line to this one.
        if let Some(stripped) = content.trim_end().strip_suffix('\\') {
            logical.push_str(stripped);
            logical.push(' ');
            continue;
        }
        logical.push_str(content);
        let line = std::mem::take(&mut logical);
        parse_line(&line, first_line, path, &mut out, &mut face)?;
    }
    if !logical.is_empty() {
        parse_line(&logical, first_line, path, &mut out, &mut face)?;
    }
    if out.triangles.is_empty() {
        return Err(IoError::parse(
            path,
            last_line.max(1),
            format!(
                "no faces: a surface needs `f` lines ({} vertices read)",
                out.positions.len()
            ),
        ));
    }
    Ok(out)
}

fn parse_line(
    line: &str,
    number: usize,
    path: &Path,
    out: &mut TriSurface,
    face: &mut Vec<u32>,
) -> Result<(), IoError> {
    let err = |message: String| IoError::parse(path, number, message);
    let mut fields = line.split_whitespace();
    match fields.next() {
        Some("v") => {
            let mut xyz = [0.0; 3];
            for (a, c) in xyz.iter_mut().enumerate() {
                let field = fields.next().ok_or_else(|| {
                    err(format!(
                        "vertex with {a} coordinate(s), expected at least 3"
                    ))
                })?;
                *c = field
                    .parse::<f64>()
                    .map_err(|_| err(format!("vertex coordinate `{field}` is not a number")))?;
                if !c.is_finite() {
                    return Err(err(format!("vertex coordinate `{field}` is not finite")));
                }
            }
            if out.positions.len() >= u32::MAX as usize {
                return Err(err("more than 2³² − 1 vertices".into()));
            }
            out.positions.push(Vector3::from(xyz));
        }
        Some("f") => {
            face.clear();
            let n = out.positions.len();
            for field in fields {
                let first = field.split('/').next().unwrap_or("");
                let i: i64 = first.parse().map_err(|_| {
                    err(format!(
                        "face vertex `{field}`: `{first}` is not an integer"
                    ))
                })?;
                let index = match i {
                    0 => {
                        return Err(err(format!(
                            "face vertex `{field}`: index 0 (OBJ indices start at 1)"
                        )))
                    }
                    i if i > 0 => i - 1,
                    i => n as i64 + i,
                };
                if index < 0 || index >= n as i64 {
                    return Err(err(format!(
                        "face vertex {i} is out of range ({n} vertices so far)"
                    )));
                }
                face.push(index as u32);
            }
            if face.len() < 3 {
                return Err(err(format!(
                    "a face with {} vertex(es), expected at least 3",
                    face.len()
                )));
            }
            for k in 1..face.len() - 1 {
                out.triangles.push([face[0], face[k], face[k + 1]]);
            }
        }
        // Texture coordinates, normals, free-form geometry and grouping: not needed here.
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<TriSurface, IoError> {
        parse_obj(text, Path::new("skin.obj"))
    }

    #[test]
    fn triangles_quads_and_polygons() {
        let s = parse(
            "# a comment\nmtllib x.mtl\no thing\nv 0 0 0\nv 1 0 0\nv 1 1 0 1.0\nv 0 1 0 0.5 0.5 0.5\n\
             vt 0 0\nvn 0 0 1\ng side\ns off\nusemtl red\n\
             f 1 2 3\nf 1/1 2/1 3/1 4/1\nf 1//1 2//1 3//1\nf 4/1/1 3/1/1 2/1/1 1/1/1 2\n",
        )
        .unwrap();
        assert_eq!(s.positions.len(), 4);
        assert_eq!(s.positions[3], Vector3::new(0.0, 1.0, 0.0));
        assert_eq!(
            s.triangles,
            vec![
                [0, 1, 2],
                [0, 1, 2],
                [0, 2, 3],
                [0, 1, 2],
                [3, 2, 1],
                [3, 1, 0],
                [3, 0, 1]
            ]
        );
    }

    #[test]
    fn negative_indices_count_back_from_the_last_vertex() {
        let s = parse("v 0 0 0\nv 1 0 0\nv 0 1 0\nf -3 -2 -1\nv 0 0 1\nf -4/1/1 -1 -2\n").unwrap();
        assert_eq!(s.triangles, vec![[0, 1, 2], [0, 3, 2]]);
    }

    #[test]
    fn continuation_lines_join() {
        let s = parse("v 0 0 0\nv 1 0 \\\n 0\nv 0 1 0\nf 1 2 \\\n3\n").unwrap();
        assert_eq!(s.positions[1], Vector3::x());
        assert_eq!(s.triangles, vec![[0, 1, 2]]);
    }

    #[test]
    fn malformed_files_name_the_file_and_line() {
        let cases = [
            (
                "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 4\n",
                "skin.obj:4: face vertex 4 is out of range (3 vertices so far)",
            ),
            (
                "v 0 0 0\nv 1 0\n",
                "skin.obj:2: vertex with 2 coordinate(s), expected at least 3",
            ),
            (
                "v 0 0 0\nv 1 x 0\n",
                "skin.obj:2: vertex coordinate `x` is not a number",
            ),
            (
                "v 0 0 inf\n",
                "skin.obj:1: vertex coordinate `inf` is not finite",
            ),
            (
                "v 0 0 0\nv 1 0 0\n\nf 1 2\n",
                "skin.obj:4: a face with 2 vertex(es), expected at least 3",
            ),
            (
                "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 0 1 2\n",
                "skin.obj:4: face vertex `0`: index 0 (OBJ indices start at 1)",
            ),
            (
                "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 -4\n",
                "skin.obj:4: face vertex -4 is out of range (3 vertices so far)",
            ),
            (
                "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 a/2 3\n",
                "skin.obj:4: face vertex `a/2`: `a` is not an integer",
            ),
            (
                "# only vertices\nv 0 0 0\nv 1 0 0\n",
                "skin.obj:3: no faces: a surface needs `f` lines (2 vertices read)",
            ),
            (
                "",
                "skin.obj:1: no faces: a surface needs `f` lines (0 vertices read)",
            ),
        ];
        for (text, message) in cases {
            let e = parse(text).unwrap_err();
            assert_eq!(e.to_string(), message, "{text:?}");
        }
    }

    #[test]
    fn missing_files_name_the_path() {
        let e = read_obj(Path::new("/nonexistent/skin.obj")).unwrap_err();
        assert!(e.to_string().starts_with("/nonexistent/skin.obj: "), "{e}");
    }
}
