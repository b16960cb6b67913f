//! A closed triangle surface as an [`ImplicitDomain`]: the signed distance to the triangles.
//!
//! - **Distance**: nearest triangle through a bounding-volume hierarchy (median splits of the
//!   triangle centroids along the longest axis, 4 triangles per leaf), pruned at the caller's
//!   `limit` so that points far from the surface cost a few box tests; closest point on a
//!   triangle after Ericson, *Real-Time Collision Detection* §5.1.5.
//! - **Inside/outside**: **ray parity** along +x. The triangles are binned by their projection
//!   on the yz plane; a point is inside when the ray from it crosses an odd number of
//!   triangles. **Tie rule**: a ray through an edge or a vertex of the projection is decided by
//!   simulation of simplicity — the point is perturbed by `(ε, ε²)` in `(y, z)` — and each edge
//!   function is computed from the edge's endpoints in one canonical (lexicographic) order, so
//!   the two triangles sharing an edge always disagree about which side the point is on and a
//!   crossing through an edge or vertex is counted exactly once. For a closed surface (every
//!   edge shared by two triangles) the parity is then exact for every point; orientation and
//!   consistent winding of the triangles do not matter.

use super::ImplicitDomain;
use nalgebra::{Vector2, Vector3};
use thiserror::Error;

/// A problem with a triangle surface.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum SurfaceError {
    #[error("the surface has no triangles")]
    Empty,
    #[error("triangle {tri}: vertex index {index} is out of range ({n_vertices} vertices)")]
    IndexOutOfRange {
        tri: usize,
        index: u32,
        n_vertices: usize,
    },
    #[error("vertex {0} has a non-finite coordinate")]
    NonFinite(usize),
}

#[derive(Debug, Clone)]
struct Node {
    lo: Vector3<f64>,
    hi: Vector3<f64>,
    /// Leaf: first triangle in `order` and count; inner: children `first`, `first + 1`... stored
    /// as (left, right) with `count == 0`.
    first: u32,
    second: u32,
    count: u32,
}

/// A triangle surface with the structures for its signed distance.
#[derive(Debug, Clone)]
pub struct TriangleSurface {
    tri: Vec<[Vector3<f64>; 3]>,
    nodes: Vec<Node>,
    order: Vec<u32>,
    lo: Vector3<f64>,
    hi: Vector3<f64>,
    // The yz bins: `cells[0] × cells[1]` of size `cell`, triangle lists in CSR form.
    cells: [usize; 2],
    cell: Vector2<f64>,
    bin_start: Vec<u32>,
    bin_tris: Vec<u32>,
    open_edges: usize,
}

impl TriangleSurface {
    /// Builds the surface of `triangles` (indices into `vertices`).
    pub fn new(vertices: &[Vector3<f64>], triangles: &[[u32; 3]]) -> Result<Self, SurfaceError> {
        if triangles.is_empty() {
            return Err(SurfaceError::Empty);
        }
        if let Some(i) = vertices
            .iter()
            .position(|v| !v.iter().all(|c| c.is_finite()))
        {
            return Err(SurfaceError::NonFinite(i));
        }
        let mut tri = Vec::with_capacity(triangles.len());
        for (t, idx) in triangles.iter().enumerate() {
            if let Some(&index) = idx.iter().find(|&&i| i as usize >= vertices.len()) {
                return Err(SurfaceError::IndexOutOfRange {
                    tri: t,
                    index,
                    n_vertices: vertices.len(),
                });
            }
            tri.push(idx.map(|i| vertices[i as usize]));
        }
        // Edges used by a number of triangles other than two.
        let mut edges: Vec<(u32, u32)> = triangles
            .iter()
            .flat_map(|t| [(t[0], t[1]), (t[1], t[2]), (t[2], t[0])])
            .map(|(a, b)| (a.min(b), a.max(b)))
            .collect();
        edges.sort_unstable();
        let open_edges = edges
            .chunk_by(|a, b| a == b)
            .filter(|run| run.len() != 2)
            .count();

        let (mut lo, mut hi) = (
            Vector3::repeat(f64::INFINITY),
            Vector3::repeat(f64::NEG_INFINITY),
        );
        for t in &tri {
            for p in t {
                lo = lo.inf(p);
                hi = hi.sup(p);
            }
        }
        let mut order: Vec<u32> = (0..tri.len() as u32).collect();
        let mut nodes = Vec::new();
        build(&tri, &mut order, 0, &mut nodes);

        // yz bins, about one triangle per bin on average.
        let side = ((tri.len() as f64).sqrt().ceil() as usize).clamp(1, 4096);
        let cells = [side, side];
        let ext = Vector2::new(hi.y - lo.y, hi.z - lo.z).map(|e| if e > 0.0 { e } else { 1.0 });
        let cell = Vector2::new(ext.x / side as f64, ext.y / side as f64);
        let mut lists: Vec<Vec<u32>> = vec![Vec::new(); side * side];
        for (i, t) in tri.iter().enumerate() {
            let (mut a, mut b) = ([usize::MAX; 2], [0usize; 2]);
            for p in t {
                let c = bin_of(&lo, &cell, cells, p.y, p.z);
                for k in 0..2 {
                    a[k] = a[k].min(c[k]);
                    b[k] = b[k].max(c[k]);
                }
            }
            for z in a[1]..=b[1] {
                for y in a[0]..=b[0] {
                    lists[z * side + y].push(i as u32);
                }
            }
        }
        let mut bin_start = Vec::with_capacity(lists.len() + 1);
        let mut bin_tris = Vec::new();
        bin_start.push(0);
        for l in &lists {
            bin_tris.extend_from_slice(l);
            bin_start.push(bin_tris.len() as u32);
        }
        Ok(Self {
            tri,
            nodes,
            order,
            lo,
            hi,
            cells,
            cell,
            bin_start,
            bin_tris,
            open_edges,
        })
    }

    /// Edges not shared by exactly two triangles (0 for a closed surface; with holes the
    /// inside is not well defined and ray parity decides as it can).
    pub fn open_edges(&self) -> usize {
        self.open_edges
    }

    pub fn n_triangles(&self) -> usize {
        self.tri.len()
    }

    /// Enclosed volume (divergence theorem, `|Σ a·(b × c)| / 6`); exact for a closed surface
    /// with consistently oriented triangles.
    pub fn volume(&self) -> f64 {
        (self
            .tri
            .iter()
            .map(|[a, b, c]| a.dot(&b.cross(c)))
            .sum::<f64>()
            / 6.0)
            .abs()
    }

    /// Whether `p` is inside (ray parity with the tie rule of the module docs).
    pub fn contains(&self, p: &Vector3<f64>) -> bool {
        if p.y < self.lo.y || p.y > self.hi.y || p.z < self.lo.z || p.z > self.hi.z {
            return false;
        }
        let c = bin_of(&self.lo, &self.cell, self.cells, p.y, p.z);
        let bin = c[1] * self.cells[0] + c[0];
        let range = self.bin_start[bin] as usize..self.bin_start[bin + 1] as usize;
        let q = Vector2::new(p.y, p.z);
        let mut crossings = 0u32;
        for &t in &self.bin_tris[range] {
            let [a, b, c] = &self.tri[t as usize];
            let (a2, b2, c2) = (yz(a), yz(b), yz(c));
            let s = [
                edge_side(&a2, &b2, &q),
                edge_side(&b2, &c2, &q),
                edge_side(&c2, &a2, &q),
            ];
            if s[0] != s[1] || s[1] != s[2] {
                continue;
            }
            // Inside the projection: the crossing's x on the triangle's plane.
            let n = (b - a).cross(&(c - a));
            if n.x == 0.0 {
                continue;
            }
            let x = a.x - (n.y * (p.y - a.y) + n.z * (p.z - a.z)) / n.x;
            if x > p.x {
                crossings += 1;
            }
        }
        crossings % 2 == 1
    }

    /// Distance from `p` to the surface, or `None` when it is at least `limit`.
    pub fn distance(&self, p: &Vector3<f64>, limit: f64) -> Option<f64> {
        let mut best = limit * limit;
        let mut found = false;
        let mut stack = vec![0u32];
        while let Some(n) = stack.pop() {
            let node = &self.nodes[n as usize];
            if box_distance2(&node.lo, &node.hi, p) >= best {
                continue;
            }
            if node.count > 0 {
                let range = node.first as usize..(node.first + node.count) as usize;
                for &t in &self.order[range] {
                    let d2 = (closest_on_triangle(p, &self.tri[t as usize]) - p).norm_squared();
                    if d2 < best {
                        best = d2;
                        found = true;
                    }
                }
            } else {
                let (l, r) = (node.first, node.second);
                let dl = box_distance2(&self.nodes[l as usize].lo, &self.nodes[l as usize].hi, p);
                let dr = box_distance2(&self.nodes[r as usize].lo, &self.nodes[r as usize].hi, p);
                // Nearer child last, so it is visited first.
                if dl < dr {
                    stack.extend([r, l]);
                } else {
                    stack.extend([l, r]);
                }
            }
        }
        found.then(|| best.sqrt())
    }
}

impl ImplicitDomain for TriangleSurface {
    fn bounds(&self) -> (Vector3<f64>, Vector3<f64>) {
        (self.lo, self.hi)
    }
    fn eval(&self, p: &Vector3<f64>, limit: f64) -> f64 {
        let d = self
            .distance(p, limit)
            .unwrap_or(limit.max(f64::MIN_POSITIVE));
        if self.contains(p) {
            -d
        } else {
            d
        }
    }
}

fn yz(p: &Vector3<f64>) -> Vector2<f64> {
    Vector2::new(p.y, p.z)
}

fn bin_of(lo: &Vector3<f64>, cell: &Vector2<f64>, cells: [usize; 2], y: f64, z: f64) -> [usize; 2] {
    let f = |v: f64, o: f64, s: f64, n: usize| (((v - o) / s).floor().max(0.0) as usize).min(n - 1);
    [f(y, lo.y, cell.x, cells[0]), f(z, lo.z, cell.y, cells[1])]
}

/// Which side of the directed edge `u → v` the point `q` is on (`true`: left), with `q`
/// perturbed by `(ε, ε²)` when it is exactly on the line; computed from the endpoints in
/// lexicographic order so that both triangles of an edge compute the same number.
fn edge_side(u: &Vector2<f64>, v: &Vector2<f64>, q: &Vector2<f64>) -> bool {
    let flip = (u.x, u.y) > (v.x, v.y);
    let (lo, hi) = if flip { (v, u) } else { (u, v) };
    let e = (hi.x - lo.x) * (q.y - lo.y) - (hi.y - lo.y) * (q.x - lo.x);
    // E(q + (ε, ε²)) = E(q) − (hi.y − lo.y) ε + (hi.x − lo.x) ε².
    let left = if e != 0.0 {
        e > 0.0
    } else if hi.y != lo.y {
        hi.y < lo.y
    } else {
        hi.x > lo.x
    };
    left != flip
}

fn build(tri: &[[Vector3<f64>; 3]], order: &mut [u32], offset: u32, nodes: &mut Vec<Node>) -> u32 {
    let (mut lo, mut hi) = (
        Vector3::repeat(f64::INFINITY),
        Vector3::repeat(f64::NEG_INFINITY),
    );
    let (mut clo, mut chi) = (lo, hi);
    for &t in order.iter() {
        for p in &tri[t as usize] {
            lo = lo.inf(p);
            hi = hi.sup(p);
        }
        let c = centroid(&tri[t as usize]);
        clo = clo.inf(&c);
        chi = chi.sup(&c);
    }
    let me = nodes.len() as u32;
    nodes.push(Node {
        lo,
        hi,
        first: offset,
        second: 0,
        count: order.len() as u32,
    });
    if order.len() <= 4 {
        return me;
    }
    let axis = (chi - clo).imax();
    let mid = order.len() / 2;
    order.select_nth_unstable_by(mid, |&a, &b| {
        centroid(&tri[a as usize])[axis].total_cmp(&centroid(&tri[b as usize])[axis])
    });
    let (left, right) = order.split_at_mut(mid);
    let l = build(tri, left, offset, nodes);
    let r = build(tri, right, offset + mid as u32, nodes);
    let node = &mut nodes[me as usize];
    node.first = l;
    node.second = r;
    node.count = 0;
    me
}

fn centroid(t: &[Vector3<f64>; 3]) -> Vector3<f64> {
    (t[0] + t[1] + t[2]) / 3.0
}

fn box_distance2(lo: &Vector3<f64>, hi: &Vector3<f64>, p: &Vector3<f64>) -> f64 {
    (0..3)
        .map(|k| {
            let d = (lo[k] - p[k]).max(p[k] - hi[k]).max(0.0);
            d * d
        })
        .sum()
}

/// Closest point to `p` on triangle `t` ([`crate::mesh::closest_on_triangle`]).
fn closest_on_triangle(p: &Vector3<f64>, t: &[Vector3<f64>; 3]) -> Vector3<f64> {
    crate::mesh::closest_on_triangle(p, &t[0], &t[1], &t[2]).0
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// The unit cube [0, 1]³ as 12 triangles, outward.
    pub(crate) fn cube() -> (Vec<Vector3<f64>>, Vec<[u32; 3]>) {
        let v = (0..8)
            .map(|i| Vector3::new((i & 1) as f64, ((i >> 1) & 1) as f64, ((i >> 2) & 1) as f64))
            .collect();
        let quads = [
            [0, 2, 3, 1],
            [4, 5, 7, 6],
            [0, 1, 5, 4],
            [2, 6, 7, 3],
            [0, 4, 6, 2],
            [1, 3, 7, 5],
        ];
        let t = quads
            .iter()
            .flat_map(|q| [[q[0], q[1], q[2]], [q[0], q[2], q[3]]])
            .collect();
        (v, t)
    }

    #[test]
    fn cube_inside_outside_on_edges_and_vertices() {
        let (v, t) = cube();
        let s = TriangleSurface::new(&v, &t).unwrap();
        assert_eq!(s.open_edges(), 0);
        assert!((s.volume() - 1.0).abs() < 1e-15);
        // Rays through the cube's edges, face diagonals and vertices (ties everywhere).
        for &(y, z) in &[(0.5, 0.5), (0.25, 0.25), (0.75, 0.1)] {
            for &x in &[-1.0, 0.5, 2.0] {
                let p = Vector3::new(x, y, z);
                assert_eq!(s.contains(&p), x == 0.5, "{p:?}");
            }
        }
        let p = Vector3::new(0.5, 0.5, 0.5);
        assert!((s.eval(&p, 10.0) + 0.5).abs() < 1e-15);
        assert!((s.eval(&Vector3::new(3.0, 0.5, 0.5), 10.0) - 2.0).abs() < 1e-15);
        // Pruned: far points report the limit with their sign.
        assert_eq!(s.eval(&Vector3::new(3.0, 0.5, 0.5), 0.5), 0.5);
    }

    #[test]
    fn parity_from_outside_rays_through_vertices_is_even() {
        // Points left of the cube on rays through its vertices and edges (y, z ∈ {0, 1}) and
        // through the shared diagonals of its face triangles: never inside.
        let (v, t) = cube();
        let s = TriangleSurface::new(&v, &t).unwrap();
        for y in [0.0, 0.5, 1.0] {
            for z in [0.0, 0.5, 1.0] {
                assert!(!s.contains(&Vector3::new(-1.0, y, z)), "({y}, {z})");
            }
        }
        // Diagonal of the x = 0 face's triangles (y = z) from inside.
        assert!(s.contains(&Vector3::new(0.5, 0.3, 0.3)));
        assert!(s.contains(&Vector3::new(0.5, 0.7, 0.7)));
    }

    #[test]
    fn distance_matches_brute_force() {
        let (v, t) = cube();
        let s = TriangleSurface::new(&v, &t).unwrap();
        let mut seed = 7u64;
        let mut rnd = || {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64 * 3.0 - 1.0
        };
        for _ in 0..500 {
            let p = Vector3::new(rnd(), rnd(), rnd());
            let brute = s
                .tri
                .iter()
                .map(|t| (closest_on_triangle(&p, t) - p).norm())
                .fold(f64::INFINITY, f64::min);
            assert!((s.distance(&p, 10.0).unwrap() - brute).abs() < 1e-14);
            // Box distance: the exact distance to the unit cube from outside.
            let outside = (0..3)
                .map(|k| (-p[k]).max(p[k] - 1.0).max(0.0).powi(2))
                .sum::<f64>()
                .sqrt();
            if outside > 0.0 {
                assert!((brute - outside).abs() < 1e-14);
                assert!(!s.contains(&p));
            } else {
                assert!(s.contains(&p) || brute == 0.0);
            }
        }
    }

    #[test]
    fn errors_name_the_triangle() {
        let (v, _) = cube();
        let e = TriangleSurface::new(&v, &[[0, 1, 9]]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "triangle 0: vertex index 9 is out of range (8 vertices)"
        );
        assert_eq!(
            TriangleSurface::new(&v, &[]).unwrap_err(),
            SurfaceError::Empty
        );
    }
}
