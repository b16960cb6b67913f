//! ParaView output: VTK XML unstructured grids (`.vtu`) and time collections (`.pvd`).
//!
//! Arrays are written inline with `format="binary"` and `header_type="UInt64"`, by default
//! zlib-compressed in blocks (`compressor="vtkZLibDataCompressor"`, see
//! [`crate::vtk_data`]), or as one uncompressed base64 block of `[u64 byte count][data]`.
//! Connectivity and offsets are `Int32` when the mesh's indices fit (always, for meshes
//! Supple can hold below 2³¹ vertices), `Int64` otherwise.

use crate::error::IoError;
use crate::pvd::{write_pvd_entries, xml_escape, PvdEntry};
use crate::vtk_data::{encode_raw, encode_zlib};
use nalgebra::Vector3;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

/// VTK cell type of a linear tetrahedron.
pub const VTK_TETRA: u8 = 10;
/// VTK's 10-node (second-order) tetrahedron: the 4 corners first, then the 6 edge nodes
/// (VTK file formats, "Cell types"). The readers keep its corners, as Gmsh's type 11.
pub const VTK_QUADRATIC_TETRA: u8 = 24;

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

/// How array contents are stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum VtuEncoding {
    /// zlib-compressed base64 blocks (`vtkZLibDataCompressor`).
    #[default]
    Zlib,
    /// Uncompressed base64.
    Raw,
}

/// Writes `frame` as a zlib-compressed VTK XML UnstructuredGrid file (see
/// [`write_vtu_with`]): a body's positions and tets, and any fields of its state.
/// [`crate::vtu_read::read_vtu`] reads it back, as ParaView does; a loop that writes one
/// per frame lists them in a [`crate::pvd::PvdWriter`] (`crates/supple-io/examples/
/// paraview_frames.rs`).
///
/// ```
/// use supple::prelude::*;
/// use supple_io::vtu::{write_vtu, VtuFrame};
/// let mesh = box_grid(&BoxGrid { cells: [2, 1, 1], cell_size: Vector3::repeat(0.1),
///     origin: Vector3::zeros(), split: TetSplit::Five });
/// let mut body = BodyDesc::of(mesh).velocity(Vector3::new(0.0, 1.0, 0.0)).build()?;
/// let stress = body.von_mises_stress().unwrap_or_default();
/// let mut frame = VtuFrame::new(&body.x, &body.mesh.tets);
/// frame.point_vectors.push(("velocity", &body.v));
/// frame.cell_scalars.push(("von_mises", &stress));
/// let path = std::env::temp_dir().join(format!("supple-doc-{}.vtu", std::process::id()));
/// write_vtu(&path, &frame)?;
/// let back = supple_io::vtu_read::read_vtu(&path)?;
/// std::fs::remove_file(&path)?;
/// assert_eq!((&back.positions, &back.tets), (&body.x, &body.mesh.tets));
/// assert_eq!(back.point_vector("velocity"), Some(body.v.as_slice()));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn write_vtu(path: &Path, frame: &VtuFrame) -> Result<(), IoError> {
    write_vtu_with(path, frame, VtuEncoding::Zlib)
}

/// Writes `frame` as a VTK XML UnstructuredGrid file (base64 binary, `header_type="UInt64"`,
/// arrays stored as `encoding` says).
///
/// Fails with an [`IoError::Io`] of kind `InvalidInput` when a field has the wrong length
/// or a tet references a missing point; nothing is written in that case.
pub fn write_vtu_with(path: &Path, frame: &VtuFrame, encoding: VtuEncoding) -> Result<(), IoError> {
    frame.check().map_err(|msg| {
        IoError::io(
            path,
            std::io::Error::new(std::io::ErrorKind::InvalidInput, msg),
        )
    })?;
    let file = File::create(path).map_err(|e| IoError::io(path, e))?;
    let mut w = BufWriter::new(file);
    write_vtu_to(&mut w, frame, encoding)
        .and_then(|()| w.flush())
        .map_err(|e| IoError::io(path, e))
}

fn write_vtu_to(
    w: &mut impl Write,
    frame: &VtuFrame,
    encoding: VtuEncoding,
) -> std::io::Result<()> {
    let (n, m) = (frame.positions.len(), frame.tets.len());
    let compressor = match encoding {
        VtuEncoding::Zlib => r#" compressor="vtkZLibDataCompressor""#,
        VtuEncoding::Raw => "",
    };
    let w = &mut ArrayWriter { w, encoding };
    writeln!(w.w, r#"<?xml version="1.0"?>"#)?;
    writeln!(
        w.w,
        r#"<VTKFile type="UnstructuredGrid" version="1.0" byte_order="LittleEndian" header_type="UInt64"{compressor}>"#
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
    // Int32 when every index and offset fits: half the bytes of Int64.
    let narrow = n <= i32::MAX as usize && (m as u64).saturating_mul(4) <= i32::MAX as u64;
    let (ty, connectivity, offsets): (_, Vec<u8>, Vec<u8>) = if narrow {
        let conn = (frame.tets.iter().flatten())
            .flat_map(|&i| (i as i32).to_le_bytes())
            .collect();
        let offsets = (1..=m as i32).flat_map(|k| (4 * k).to_le_bytes()).collect();
        ("Int32", conn, offsets)
    } else {
        let conn = (frame.tets.iter().flatten())
            .flat_map(|&i| i64::from(i).to_le_bytes())
            .collect();
        let offsets = (1..=m as i64).flat_map(|k| (4 * k).to_le_bytes()).collect();
        ("Int64", conn, offsets)
    };
    data_array(w, ty, Some("connectivity"), 1, &connectivity)?;
    data_array(w, ty, Some("offsets"), 1, &offsets)?;
    data_array(w, "UInt8", Some("types"), 1, &vec![VTK_TETRA; m])?;
    writeln!(w, "      </Cells>")?;

    writeln!(w, "    </Piece>")?;
    writeln!(w, "  </UnstructuredGrid>")?;
    writeln!(w, "</VTKFile>")
}

pub(crate) fn f64_bytes(values: impl Iterator<Item = f64>) -> Vec<u8> {
    values.flat_map(f64::to_le_bytes).collect()
}

/// The output and how its arrays are encoded.
pub(crate) struct ArrayWriter<'w, W: Write> {
    pub(crate) w: &'w mut W,
    pub(crate) encoding: VtuEncoding,
}

impl<W: Write> Write for ArrayWriter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.w.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.w.flush()
    }
}

/// Writes one `<DataArray>` holding `data` in the writer's encoding.
pub(crate) fn data_array<W: Write>(
    w: &mut ArrayWriter<'_, W>,
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
    let text = match w.encoding {
        VtuEncoding::Zlib => encode_zlib(data)?,
        VtuEncoding::Raw => encode_raw(data),
    };
    w.write_all(text.as_bytes())?;
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
