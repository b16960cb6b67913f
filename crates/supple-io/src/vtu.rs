//! ParaView output: VTK XML unstructured grids (`.vtu`) and time collections (`.pvd`).
//!
//! Arrays are written with `format="binary"`: each `DataArray` holds one base64 block of
//! `[u64 byte count][little-endian data]` (`header_type="UInt64"`, no compression), which
//! ParaView and Python's `meshio` both read.

use crate::error::IoError;
use crate::pvd::{write_pvd_entries, xml_escape, PvdEntry};
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use nalgebra::Vector3;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// VTK cell type of a linear tetrahedron.
pub const VTK_TETRA: u8 = 10;

/// One frame of a tetrahedral mesh with optional point and cell fields.
///
/// Every point field must have one value per position, every cell field one per tet.
#[derive(Debug, Clone, Default)]
pub struct VtuFrame<'a> {
    /// Current vertex positions.
    pub positions: &'a [Vector3<f64>],
    /// Tets as 0-based vertex indices.
    pub tets: &'a [[u32; 4]],
    /// Named 3-component point fields (velocity, displacement, ...).
    pub point_vectors: Vec<(&'a str, &'a [Vector3<f64>])>,
    /// Named scalar point fields.
    pub point_scalars: Vec<(&'a str, &'a [f64])>,
    /// Named scalar cell fields (one value per tet: stress, energy, ...).
    pub cell_scalars: Vec<(&'a str, &'a [f64])>,
}

impl<'a> VtuFrame<'a> {
    /// A frame of the bare mesh, without fields.
    pub fn new(positions: &'a [Vector3<f64>], tets: &'a [[u32; 4]]) -> Self {
        Self {
            positions,
            tets,
            ..Self::default()
        }
    }

    /// Checks field lengths and tet indices.
    fn check(&self) -> Result<(), String> {
        let (n, m) = (self.positions.len(), self.tets.len());
        let point_lens = self
            .point_vectors
            .iter()
            .map(|(name, v)| (*name, v.len()))
            .chain(self.point_scalars.iter().map(|(name, v)| (*name, v.len())));
        for (name, len) in point_lens {
            if len != n {
                return Err(format!(
                    "point field `{name}` has {len} values, expected {n} (one per point)"
                ));
            }
        }
        for (name, v) in &self.cell_scalars {
            if v.len() != m {
                return Err(format!(
                    "cell field `{name}` has {} values, expected {m} (one per tet)",
                    v.len()
                ));
            }
        }
        for (t, tet) in self.tets.iter().enumerate() {
            if let Some(&i) = tet.iter().find(|&&i| i as usize >= n) {
                return Err(format!(
                    "tet {t}: vertex index {i} is out of range (the frame has {n} points)"
                ));
            }
        }
        Ok(())
    }
}

/// Writes `frame` as a VTK XML UnstructuredGrid file (base64 binary, `header_type="UInt64"`).
///
/// Fails with an [`IoError::Io`] of kind `InvalidInput` when a field has the wrong length
/// or a tet references a missing point; nothing is written in that case.
pub fn write_vtu(path: &Path, frame: &VtuFrame) -> Result<(), IoError> {
    frame.check().map_err(|msg| {
        IoError::io(
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidInput, msg),
        )
    })?;
    let file = File::create(path).map_err(|e| IoError::io(path, e))?;
    let mut w = BufWriter::new(file);
    write_vtu_to(&mut w, frame)
        .and_then(|()| w.flush())
        .map_err(|e| IoError::io(path, e))
}

fn write_vtu_to(w: &mut impl Write, frame: &VtuFrame) -> std::io::Result<()> {
    let (n, m) = (frame.positions.len(), frame.tets.len());
    writeln!(w, r#"<?xml version="1.0"?>"#)?;
    writeln!(
        w,
        r#"<VTKFile type="UnstructuredGrid" version="1.0" byte_order="LittleEndian" header_type="UInt64">"#
    )?;
    writeln!(w, "  <UnstructuredGrid>")?;
    writeln!(w, r#"    <Piece NumberOfPoints="{n}" NumberOfCells="{m}">"#)?;

    if !frame.point_vectors.is_empty() || !frame.point_scalars.is_empty() {
        writeln!(w, "      <PointData>")?;
        for (name, v) in &frame.point_vectors {
            let data = v.iter().flat_map(|p| [p.x, p.y, p.z]);
            data_array(w, "Float64", Some(name), 3, &f64_bytes(data))?;
        }
        for (name, v) in &frame.point_scalars {
            data_array(w, "Float64", Some(name), 1, &f64_bytes(v.iter().copied()))?;
        }
        writeln!(w, "      </PointData>")?;
    }
    if !frame.cell_scalars.is_empty() {
        writeln!(w, "      <CellData>")?;
        for (name, v) in &frame.cell_scalars {
            data_array(w, "Float64", Some(name), 1, &f64_bytes(v.iter().copied()))?;
        }
        writeln!(w, "      </CellData>")?;
    }

    writeln!(w, "      <Points>")?;
    let points = frame.positions.iter().flat_map(|p| [p.x, p.y, p.z]);
    data_array(w, "Float64", None, 3, &f64_bytes(points))?;
    writeln!(w, "      </Points>")?;

    writeln!(w, "      <Cells>")?;
    let connectivity: Vec<u8> = frame
        .tets
        .iter()
        .flatten()
        .flat_map(|&i| i64::from(i).to_le_bytes())
        .collect();
    data_array(w, "Int64", Some("connectivity"), 1, &connectivity)?;
    let offsets: Vec<u8> = (1..=m as i64).flat_map(|k| (4 * k).to_le_bytes()).collect();
    data_array(w, "Int64", Some("offsets"), 1, &offsets)?;
    data_array(w, "UInt8", Some("types"), 1, &vec![VTK_TETRA; m])?;
    writeln!(w, "      </Cells>")?;

    writeln!(w, "    </Piece>")?;
    writeln!(w, "  </UnstructuredGrid>")?;
    writeln!(w, "</VTKFile>")
}

fn f64_bytes(values: impl Iterator<Item = f64>) -> Vec<u8> {
    values.flat_map(f64::to_le_bytes).collect()
}

/// Writes one `<DataArray>` whose content is base64 of `[u64 byte count][data]`.
fn data_array(
    w: &mut impl Write,
    ty: &str,
    name: Option<&str>,
    components: usize,
    data: &[u8],
) -> std::io::Result<()> {
    write!(w, r#"        <DataArray type="{ty}""#)?;
    if let Some(name) = name {
        write!(w, r#" Name="{}""#, xml_escape(name))?;
    }
    if components != 1 {
        write!(w, r#" NumberOfComponents="{components}""#)?;
    }
    write!(w, r#" format="binary">"#)?;
    let mut block = Vec::with_capacity(8 + data.len());
    block.extend_from_slice(&(data.len() as u64).to_le_bytes());
    block.extend_from_slice(data);
    w.write_all(STANDARD.encode(&block).as_bytes())?;
    writeln!(w, "</DataArray>")
}

/// Writes a ParaView collection (`.pvd`) listing `(time, file)` entries, all as part 0;
/// file names are written as given (usually relative to the `.pvd` file's folder). See
/// [`crate::pvd`] for named parts and for a collection kept valid while a run goes on.
///
/// Fails with an [`IoError::Io`] of kind `InvalidInput` on a non-finite time.
pub fn write_pvd(path: &Path, entries: &[(f64, String)]) -> Result<(), IoError> {
    let entries: Vec<PvdEntry> = entries
        .iter()
        .map(|(time, file)| PvdEntry {
            time: *time,
            part: 0,
            name: None,
            file: file.clone(),
        })
        .collect();
    write_pvd_entries(path, &entries)
}
