//! Binary Gmsh `.msh` files, versions 2.2 and 4.1 (Gmsh's reference manual, "MSH file
//! format"): section headers and `$PhysicalNames` are text; node, element and (4.1) entity
//! data are little-endian binary (`int` 4 bytes, `size_t` 8 bytes, as the `data-size 8` of
//! `$MeshFormat` says, `double` 8 bytes). What is kept is the same as in the ASCII reader.

use super::gmsh::{add_node, assemble, element_dim, TET10, TET4};
use super::RawMesh;
use crate::error::IoError;
use nalgebra::Vector3;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Whether the file declares binary data (`$MeshFormat` with file-type 1).
pub(super) fn is_binary(bytes: &[u8]) -> bool {
    let mut lines = bytes.split(|&b| b == b'\n');
    let first = lines.next().map(|l| l.trim_ascii());
    let second = lines
        .next()
        .map(|l| String::from_utf8_lossy(l).into_owned());
    first == Some(b"$MeshFormat".as_slice())
        && second.is_some_and(|l| l.split_ascii_whitespace().nth(1) == Some("1"))
}

struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
    path: &'a Path,
}

impl<'a> Cursor<'a> {
    fn err(&self, msg: impl Into<String>) -> IoError {
        let line = self.bytes[..self.at.min(self.bytes.len())]
            .iter()
            .filter(|&&b| b == b'\n')
            .count()
            + 1;
        IoError::parse(self.path, line, msg)
    }

    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], IoError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or_else(|| self.err(format!("file ends inside {what}")))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    /// The next text line, trimmed.
    fn line(&mut self, what: &str) -> Result<&'a str, IoError> {
        let rest = &self.bytes[self.at.min(self.bytes.len())..];
        if rest.is_empty() {
            return Err(self.err(format!("file ends inside {what}")));
        }
        let len = rest.iter().position(|&b| b == b'\n').unwrap_or(rest.len());
        let l = std::str::from_utf8(&rest[..len])
            .map_err(|_| self.err(format!("{what}: expected a text line")))?;
        self.at += (len + 1).min(rest.len());
        Ok(l.trim())
    }

    fn int(&mut self, what: &str) -> Result<i32, IoError> {
        let b = self.take(4, what)?;
        Ok(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn size(&mut self, what: &str) -> Result<u64, IoError> {
        let b = self.take(8, what)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }

    fn double(&mut self, what: &str) -> Result<f64, IoError> {
        let b = self.take(8, what)?;
        Ok(f64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }

    /// A count that the rest of the file can hold at `min_bytes` each.
    fn count(&self, n: u64, min_bytes: usize, what: &str) -> Result<usize, IoError> {
        usize::try_from(n)
            .ok()
            .filter(|&c| {
                c.saturating_mul(min_bytes) <= self.bytes.len() - self.at.min(self.bytes.len())
            })
            .ok_or_else(|| {
                self.err(format!(
                    "{what}: count {n} is larger than the file can hold"
                ))
            })
    }

    /// Skips the newline after binary data and expects `end`.
    fn end(&mut self, end: &str) -> Result<(), IoError> {
        loop {
            let l = self.line(end)?;
            if l == end {
                return Ok(());
            }
            if !l.is_empty() {
                return Err(self.err(format!("expected {end}, found `{l}`")));
            }
        }
    }
}

fn nonneg(v: i32, c: &Cursor, what: &str) -> Result<usize, IoError> {
    usize::try_from(v).map_err(|_| c.err(format!("{what}: negative value {v}")))
}

pub(super) fn parse(bytes: &[u8], path: &Path) -> Result<RawMesh, IoError> {
    let mut c = Cursor { bytes, at: 0, path };
    let mut version = String::new();
    let mut names: HashMap<(u32, i64), String> = HashMap::new();
    let mut entity_groups: HashMap<(u32, i64), Vec<i64>> = HashMap::new();
    let mut node_index: HashMap<u64, u32> = HashMap::new();
    let mut raw = RawMesh::default();
    let mut members: BTreeMap<(u32, i64), Vec<u64>> = BTreeMap::new();
    let mut tet_nodes: Vec<[u64; 4]> = Vec::new();
    let mut element = |ty: u32, groups: &[(u32, i64)], nodes: &[u64], c: &Cursor| {
        if ty == TET4 || ty == TET10 {
            if nodes.len() < 4 {
                return Err(c.err(format!("a type-{ty} tet with {} nodes", nodes.len())));
            }
            tet_nodes.push([nodes[0], nodes[1], nodes[2], nodes[3]]);
        } else {
            raw.skipped_cells += 1;
        }
        for g in groups {
            members.entry(*g).or_default().extend_from_slice(nodes);
        }
        Ok(())
    };
    let mut positions: Vec<(u64, Vector3<f64>)> = Vec::new();
    while c.at < bytes.len() {
        let l = c.line("the file")?;
        match l {
            "" => {}
            "$MeshFormat" => {
                let f = c.line("$MeshFormat")?.to_string();
                let w: Vec<&str> = f.split_ascii_whitespace().collect();
                match w.as_slice() {
                    [v, "1", "8"] if *v == "2.2" || *v == "4.1" => version = v.to_string(),
                    _ => return Err(c.err(format!("MSH format `{f}`: binary versions 2.2 and 4.1 with data-size 8 are supported"))),
                }
                if c.int("the endianness check")? != 1 {
                    return Err(c.err("big-endian binary Gmsh files are not supported"));
                }
                c.end("$EndMeshFormat")?;
            }
            "$PhysicalNames" => {
                let n: u64 = c
                    .line("$PhysicalNames")?
                    .parse()
                    .map_err(|_| c.err("bad $PhysicalNames count"))?;
                for _ in 0..c.count(n, 6, "$PhysicalNames")? {
                    let l = c.line("$PhysicalNames")?;
                    let mut w = l.splitn(3, char::is_whitespace);
                    let dim = w.next().and_then(|d| d.parse().ok());
                    let tag = w.next().and_then(|t| t.parse().ok());
                    let name = w.next().map(|s| s.trim().trim_matches('"').to_string());
                    match (dim, tag, name) {
                        (Some(d), Some(t), Some(name)) => {
                            names.insert((d, t), name);
                        }
                        _ => return Err(c.err(format!("expected `dim tag \"name\"`, found `{l}`"))),
                    }
                }
                c.end("$EndPhysicalNames")?;
            }
            "$Entities" if version == "4.1" => {
                let counts = [
                    c.size("$Entities")?,
                    c.size("$Entities")?,
                    c.size("$Entities")?,
                    c.size("$Entities")?,
                ];
                for (dim, &n) in counts.iter().enumerate() {
                    for _ in 0..c.count(n, 36, "$Entities")? {
                        let tag = c.int("entity tag")?;
                        for _ in 0..if dim == 0 { 3 } else { 6 } {
                            c.double("entity box")?;
                        }
                        let np = c.size("physical tag count")?;
                        let mut phys = Vec::new();
                        for _ in 0..c.count(np, 4, "physical tags")? {
                            phys.push(i64::from(c.int("physical tag")?));
                        }
                        if dim > 0 {
                            let nb = c.size("bounding entity count")?;
                            for _ in 0..c.count(nb, 4, "bounding entities")? {
                                c.int("bounding entity")?;
                            }
                        }
                        entity_groups.insert((dim as u32, i64::from(tag)), phys);
                    }
                }
                c.end("$EndEntities")?;
            }
            "$Nodes" if version == "2.2" => {
                let n: u64 = c
                    .line("$Nodes")?
                    .parse()
                    .map_err(|_| c.err("bad $Nodes count"))?;
                for _ in 0..c.count(n, 28, "$Nodes")? {
                    let tag = c.int("node tag")?;
                    let p = Vector3::new(c.double("x")?, c.double("y")?, c.double("z")?);
                    positions.push((nonneg(tag, &c, "node tag")? as u64, p));
                }
                c.end("$EndNodes")?;
            }
            "$Nodes" => {
                let blocks = c.size("$Nodes")?;
                let _total = c.size("$Nodes")?;
                c.size("$Nodes")?;
                c.size("$Nodes")?;
                for _ in 0..c.count(blocks, 20, "$Nodes blocks")? {
                    c.int("entity dim")?;
                    c.int("entity tag")?;
                    let parametric = c.int("parametric")?;
                    let m = c.size("block size")?;
                    let m = c.count(m, 32, "$Nodes block")?;
                    let mut tags = Vec::with_capacity(m);
                    for _ in 0..m {
                        tags.push(c.size("node tag")?);
                    }
                    for tag in tags {
                        let p = Vector3::new(c.double("x")?, c.double("y")?, c.double("z")?);
                        // Parametric coordinates of nodes on curves/surfaces: not needed.
                        for _ in 0..if parametric != 0 { 2 } else { 0 } {
                            c.double("u")?;
                        }
                        positions.push((tag, p));
                    }
                }
                c.end("$EndNodes")?;
            }
            "$Elements" if version == "2.2" => {
                let n: u64 = c
                    .line("$Elements")?
                    .parse()
                    .map_err(|_| c.err("bad $Elements count"))?;
                let mut left = c.count(n, 12, "$Elements")?;
                while left > 0 {
                    let ty = nonneg(c.int("element type")?, &c, "element type")? as u32;
                    let follow = nonneg(c.int("element count")?, &c, "element count")?;
                    let ntags = nonneg(c.int("tag count")?, &c, "tag count")?;
                    let dim = element_dim(ty)
                        .ok_or_else(|| c.err(format!("unknown element type {ty}")))?;
                    let nodes_per = node_count(ty).ok_or_else(|| {
                        c.err(format!(
                            "element type {ty} is not supported in binary files"
                        ))
                    })?;
                    if follow == 0 || follow > left {
                        return Err(
                            c.err(format!("element header: {follow} elements, {left} left"))
                        );
                    }
                    for _ in 0..follow {
                        c.int("element tag")?;
                        let mut tags = Vec::with_capacity(ntags.min(16));
                        for _ in 0..ntags {
                            tags.push(c.int("element tags")?);
                        }
                        let mut nodes = Vec::with_capacity(nodes_per);
                        for _ in 0..nodes_per {
                            nodes.push(nonneg(c.int("node")?, &c, "node")? as u64);
                        }
                        let groups: Vec<(u32, i64)> = tags
                            .first()
                            .filter(|&&p| p != 0)
                            .map(|&p| (dim, i64::from(p)))
                            .into_iter()
                            .collect();
                        element(ty, &groups, &nodes, &c)?;
                    }
                    left -= follow;
                }
                c.end("$EndElements")?;
            }
            "$Elements" => {
                let blocks = c.size("$Elements")?;
                for _ in 0..3 {
                    c.size("$Elements")?;
                }
                for _ in 0..c.count(blocks, 20, "$Elements blocks")? {
                    let dim = nonneg(c.int("entity dim")?, &c, "entity dim")? as u32;
                    let entity = i64::from(c.int("entity tag")?);
                    let ty = nonneg(c.int("element type")?, &c, "element type")? as u32;
                    let m = c.size("block size")?;
                    let nodes_per = node_count(ty).ok_or_else(|| {
                        c.err(format!(
                            "element type {ty} is not supported in binary files"
                        ))
                    })?;
                    let groups: Vec<(u32, i64)> =
                        (entity_groups.get(&(dim, entity)).into_iter().flatten())
                            .map(|&p| (dim, p))
                            .collect();
                    for _ in 0..c.count(m, 8 * (1 + nodes_per), "$Elements block")? {
                        c.size("element tag")?;
                        let mut nodes = Vec::with_capacity(nodes_per);
                        for _ in 0..nodes_per {
                            nodes.push(c.size("node")?);
                        }
                        element(ty, &groups, &nodes, &c)?;
                    }
                }
                c.end("$EndElements")?;
            }
            other if other.starts_with('$') && !other.starts_with("$End") => {
                return Err(c.err(format!("section {other} is not supported in binary files")));
            }
            other => return Err(c.err(format!("unexpected `{other}`"))),
        }
    }
    if version.is_empty() {
        return Err(c.err("no $MeshFormat section: not a Gmsh file"));
    }
    for (tag, p) in positions {
        add_node(&mut raw, &mut node_index, tag, p).map_err(|m| IoError::parse(path, 1, m))?;
    }
    assemble(raw, &node_index, &tet_nodes, members, &names, path)
}

/// Nodes per element of the common Gmsh types (binary files give no per-element count).
fn node_count(ty: u32) -> Option<usize> {
    Some(match ty {
        15 => 1,
        1 => 2,
        2 | 8 => 3,
        3 | 4 => 4,
        7 => 5,
        6 | 9 => 6,
        5 => 8,
        10 | 11 => {
            if ty == 10 {
                9
            } else {
                10
            }
        }
        12 => 27,
        13 => 18,
        14 => 14,
        16 => 8,
        17 => 20,
        18 => 15,
        19 => 13,
        _ => return None,
    })
}
