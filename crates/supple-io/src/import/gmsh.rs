//! Gmsh `.msh` files, ASCII versions 2.2 and 4.1 (binary ones: [`super::gmsh_binary`]) (Gmsh's reference manual, "MSH file
//! format"). Tets (element type 4; type 11, 10-node tets, keep their 4 corners) are kept;
//! other elements are counted and skipped. Physical groups become regions: a group's name
//! from `$PhysicalNames`, or `dim<d>_tag<t>` when it has none. In 4.1 an element belongs
//! to the physical groups of its entity (`$Entities`); in 2.2 to its first tag.

use super::RawMesh;
use crate::error::IoError;
use nalgebra::Vector3;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Dimension of a Gmsh element type (types of the manual's table; unknown types: `None`).
pub(super) fn element_dim(ty: u32) -> Option<u32> {
    match ty {
        15 => Some(0),
        1 | 8 | 26 | 27 | 28 => Some(1),
        2 | 3 | 9 | 10 | 16 | 20 | 21 | 22 | 23 | 24 | 25 => Some(2),
        4 | 5 | 6 | 7 | 11 | 12 | 13 | 14 | 17 | 18 | 19 | 29 | 30 | 31 => Some(3),
        _ => None,
    }
}

pub(super) const TET4: u32 = 4;
pub(super) const TET10: u32 = 11;

struct Lines<'a> {
    lines: Vec<&'a str>,
    at: usize,
    path: &'a Path,
}

impl<'a> Lines<'a> {
    /// The next line (trimmed) and its 1-based number.
    fn next(&mut self, what: &str) -> Result<(usize, &'a str), IoError> {
        let l = self.lines.get(self.at).ok_or_else(|| {
            IoError::parse(self.path, self.at, format!("file ends inside {what}"))
        })?;
        self.at += 1;
        Ok((self.at, l.trim()))
    }

    fn err(&self, line: usize, msg: impl Into<String>) -> IoError {
        IoError::parse(self.path, line, msg)
    }

    /// Numbers of the next line.
    fn numbers<T: std::str::FromStr>(&mut self, what: &str) -> Result<(usize, Vec<T>), IoError> {
        let (n, l) = self.next(what)?;
        let v = l
            .split_ascii_whitespace()
            .map(|w| w.parse::<T>())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| self.err(n, format!("{what}: expected numbers, found `{l}`")))?;
        Ok((n, v))
    }

    /// Skips to the line `end`.
    fn skip_to(&mut self, end: &str) -> Result<(), IoError> {
        loop {
            if self.next(end)?.1 == end {
                return Ok(());
            }
        }
    }
}

fn count(n: u64, line: usize, lines: &Lines) -> Result<usize, IoError> {
    usize::try_from(n)
        .ok()
        .filter(|&c| c <= lines.lines.len().saturating_mul(64))
        .ok_or_else(|| lines.err(line, format!("count {n} is larger than the file can hold")))
}

/// Parses a Gmsh file.
pub(crate) fn parse(bytes: &[u8], path: &Path) -> Result<RawMesh, IoError> {
    if super::gmsh_binary::is_binary(bytes) {
        return super::gmsh_binary::parse(bytes, path);
    }
    let text = std::str::from_utf8(bytes)
        .map_err(|_| IoError::parse(path, 1, "not a Gmsh file (not text, no binary header)"))?;
    let mut lines = Lines {
        lines: text.lines().collect(),
        at: 0,
        path,
    };
    let mut version = None;
    let mut names: HashMap<(u32, i64), String> = HashMap::new();
    // 4.1: physical tags of each entity (dim, tag).
    let mut entity_groups: HashMap<(u32, i64), Vec<i64>> = HashMap::new();
    let mut node_index: HashMap<u64, u32> = HashMap::new();
    let mut raw = RawMesh::default();
    // Region members: (dim, physical tag) -> node tags.
    let mut members: BTreeMap<(u32, i64), Vec<u64>> = BTreeMap::new();
    let mut tet_nodes: Vec<[u64; 4]> = Vec::new();
    while lines.at < lines.lines.len() {
        let (n, l) = lines.next("the file")?;
        match l {
            "" => {}
            "$MeshFormat" => {
                let (n, l) = lines.next("$MeshFormat")?;
                let w: Vec<&str> = l.split_ascii_whitespace().collect();
                match w.as_slice() {
                    [v, "0", _] if *v == "2.2" || *v == "4.1" => version = Some(v.to_string()),
                    _ => {
                        return Err(lines.err(
                            n,
                            format!(
                                "MSH version `{l}`: versions 2.2 and 4.1 (ASCII) are supported"
                            ),
                        ))
                    }
                }
                lines.skip_to("$EndMeshFormat")?;
            }
            "$PhysicalNames" => {
                let (n, c) = lines.numbers::<u64>("$PhysicalNames")?;
                let c = count(
                    *c.first().ok_or_else(|| lines.err(n, "missing count"))?,
                    n,
                    &lines,
                )?;
                for _ in 0..c {
                    let (n, l) = lines.next("$PhysicalNames")?;
                    let mut w = l.splitn(3, char::is_whitespace);
                    let dim = w.next().and_then(|d| d.parse().ok());
                    let tag = w.next().and_then(|t| t.parse().ok());
                    let name = w.next().map(|s| s.trim().trim_matches('"').to_string());
                    match (dim, tag, name) {
                        (Some(d), Some(t), Some(name)) => {
                            names.insert((d, t), name);
                        }
                        _ => {
                            return Err(
                                lines.err(n, format!("expected `dim tag \"name\"`, found `{l}`"))
                            )
                        }
                    }
                }
                lines.skip_to("$EndPhysicalNames")?;
            }
            "$Entities" => {
                let (n, c) = lines.numbers::<u64>("$Entities")?;
                if c.len() != 4 {
                    return Err(lines.err(n, "expected 4 entity counts"));
                }
                for dim in 0..4u32 {
                    for _ in 0..count(c[dim as usize], n, &lines)? {
                        let (n, w) = lines.numbers::<f64>("$Entities")?;
                        // point: tag x y z nphys tags...; others: tag box(6) nphys tags... nb bounding...
                        let at = if dim == 0 { 4 } else { 7 };
                        let np = w.get(at).copied().unwrap_or(-1.0);
                        if np < 0.0 || w.len() < at + 1 + np as usize {
                            return Err(lines.err(n, "malformed entity line"));
                        }
                        let tags = w[at + 1..at + 1 + np as usize]
                            .iter()
                            .map(|&t| t as i64)
                            .collect();
                        entity_groups.insert((dim, w[0] as i64), tags);
                    }
                }
                lines.skip_to("$EndEntities")?;
            }
            "$Nodes" => {
                let v = version
                    .as_deref()
                    .ok_or_else(|| lines.err(n, "$Nodes before $MeshFormat"))?;
                if v == "2.2" {
                    let (n, c) = lines.numbers::<u64>("$Nodes")?;
                    let c = count(
                        *c.first().ok_or_else(|| lines.err(n, "missing count"))?,
                        n,
                        &lines,
                    )?;
                    for _ in 0..c {
                        let (n, l) = lines.next("$Nodes")?;
                        let w: Vec<&str> = l.split_ascii_whitespace().collect();
                        let tag = w.first().and_then(|t| t.parse::<u64>().ok());
                        let xyz: Option<Vec<f64>> = w
                            .get(1..4)
                            .map(|c| c.iter().filter_map(|x| x.parse().ok()).collect());
                        match (tag, xyz) {
                            (Some(tag), Some(p)) if p.len() == 3 => {
                                add_node(
                                    &mut raw,
                                    &mut node_index,
                                    tag,
                                    Vector3::new(p[0], p[1], p[2]),
                                )
                                .map_err(|m| lines.err(n, m))?;
                            }
                            _ => {
                                return Err(
                                    lines.err(n, format!("expected `tag x y z`, found `{l}`"))
                                )
                            }
                        }
                    }
                } else {
                    let (n, h) = lines.numbers::<u64>("$Nodes")?;
                    let blocks = count(
                        *h.first().ok_or_else(|| lines.err(n, "missing count"))?,
                        n,
                        &lines,
                    )?;
                    for _ in 0..blocks {
                        let (n, b) = lines.numbers::<u64>("$Nodes block")?;
                        if b.len() != 4 {
                            return Err(lines.err(n, "expected `dim entity parametric count`"));
                        }
                        let m = count(b[3], n, &lines)?;
                        let mut tags = Vec::with_capacity(m);
                        for _ in 0..m {
                            let (n, t) = lines.numbers::<u64>("$Nodes tags")?;
                            tags.push(*t.first().ok_or_else(|| lines.err(n, "missing node tag"))?);
                        }
                        for tag in tags {
                            let (n, p) = lines.numbers::<f64>("$Nodes coordinates")?;
                            if p.len() < 3 {
                                return Err(lines.err(n, "expected `x y z`"));
                            }
                            add_node(
                                &mut raw,
                                &mut node_index,
                                tag,
                                Vector3::new(p[0], p[1], p[2]),
                            )
                            .map_err(|m| lines.err(n, m))?;
                        }
                    }
                }
                lines.skip_to("$EndNodes")?;
            }
            "$Elements" => {
                let v = version
                    .as_deref()
                    .ok_or_else(|| lines.err(n, "$Elements before $MeshFormat"))?;
                let mut element =
                    |ty: u32, groups: &[(u32, i64)], nodes: &[u64], n: usize, lines: &Lines| {
                        if ty == TET4 || ty == TET10 {
                            let need = if ty == TET4 { 4 } else { 10 };
                            if nodes.len() != need {
                                return Err(lines.err(
                                    n,
                                    format!(
                                        "a type-{ty} tet needs {need} nodes, found {}",
                                        nodes.len()
                                    ),
                                ));
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
                if v == "2.2" {
                    let (n, c) = lines.numbers::<u64>("$Elements")?;
                    let c = count(
                        *c.first().ok_or_else(|| lines.err(n, "missing count"))?,
                        n,
                        &lines,
                    )?;
                    for _ in 0..c {
                        let (n, w) = lines.numbers::<i64>("$Elements")?;
                        let (ty, ntags) = (
                            w.get(1).copied().unwrap_or(-1),
                            w.get(2).copied().unwrap_or(-1),
                        );
                        if ty < 0 || ntags < 0 || w.len() < 3 + ntags as usize {
                            return Err(lines.err(n, "expected `tag type ntags tags... nodes...`"));
                        }
                        let ty = ty as u32;
                        let dim = element_dim(ty)
                            .ok_or_else(|| lines.err(n, format!("unknown element type {ty}")))?;
                        let groups: Vec<(u32, i64)> = w
                            .get(3)
                            .filter(|_| ntags > 0 && w[3] != 0)
                            .map(|&p| (dim, p))
                            .into_iter()
                            .collect();
                        let nodes: Vec<u64> =
                            w[3 + ntags as usize..].iter().map(|&x| x as u64).collect();
                        element(ty, &groups, &nodes, n, &lines)?;
                    }
                } else {
                    let (n, h) = lines.numbers::<u64>("$Elements")?;
                    let blocks = count(
                        *h.first().ok_or_else(|| lines.err(n, "missing count"))?,
                        n,
                        &lines,
                    )?;
                    for _ in 0..blocks {
                        let (n, b) = lines.numbers::<i64>("$Elements block")?;
                        if b.len() != 4 || b[0] < 0 || b[2] < 0 || b[3] < 0 {
                            return Err(lines.err(n, "expected `dim entity type count`"));
                        }
                        let (dim, ty) = (b[0] as u32, b[2] as u32);
                        let groups: Vec<(u32, i64)> =
                            (entity_groups.get(&(dim, b[1])).into_iter().flatten())
                                .map(|&p| (dim, p))
                                .collect();
                        for _ in 0..count(b[3] as u64, n, &lines)? {
                            let (n, w) = lines.numbers::<u64>("$Elements")?;
                            element(ty, &groups, w.get(1..).unwrap_or(&[]), n, &lines)?;
                        }
                    }
                }
                lines.skip_to("$EndElements")?;
            }
            other if other.starts_with("$End") => {
                return Err(lines.err(n, format!("unexpected `{other}`")))
            }
            other if other.starts_with('$') => {
                // Sections Supple does not use ($NodeData, $Periodic, ...).
                let end = format!("$End{}", &other[1..]);
                lines.skip_to(&end)?;
            }
            other => return Err(lines.err(n, format!("unexpected `{other}` outside a section"))),
        }
    }
    if version.is_none() {
        return Err(IoError::parse(
            path,
            1,
            "no $MeshFormat section: not a Gmsh file",
        ));
    }
    assemble(raw, &node_index, &tet_nodes, members, &names, path)
}

/// Maps node tags to vertex indices for the tets and the regions (named from `names`, or
/// `dim<d>_tag<t>`).
pub(super) fn assemble(
    mut raw: RawMesh,
    node_index: &HashMap<u64, u32>,
    tet_nodes: &[[u64; 4]],
    members: BTreeMap<(u32, i64), Vec<u64>>,
    names: &HashMap<(u32, i64), String>,
    path: &Path,
) -> Result<RawMesh, IoError> {
    let index = |tag: &u64| -> Result<u32, IoError> {
        node_index.get(tag).copied().ok_or_else(|| {
            IoError::parse(
                path,
                1,
                format!("element refers to node {tag}, which $Nodes does not define"),
            )
        })
    };
    for t in tet_nodes {
        raw.tets
            .push([index(&t[0])?, index(&t[1])?, index(&t[2])?, index(&t[3])?]);
    }
    for ((dim, tag), nodes) in members {
        let name = names
            .get(&(dim, tag))
            .cloned()
            .unwrap_or_else(|| format!("dim{dim}_tag{tag}"));
        let vertices = nodes.iter().map(index).collect::<Result<Vec<_>, _>>()?;
        match raw.regions.iter_mut().find(|(n, _)| *n == name) {
            Some((_, v)) => v.extend(vertices),
            None => raw.regions.push((name, vertices)),
        }
    }
    Ok(raw)
}

pub(super) fn add_node(
    raw: &mut RawMesh,
    index: &mut HashMap<u64, u32>,
    tag: u64,
    p: Vector3<f64>,
) -> Result<(), String> {
    let i = u32::try_from(raw.positions.len()).map_err(|_| "too many nodes".to_string())?;
    if index.insert(tag, i).is_some() {
        return Err(format!("node {tag} is defined twice"));
    }
    raw.positions.push(p);
    Ok(())
}
