//! Filling one BCC tetrahedron (Labelle & Shewchuk 2007 §3, Figure 3): the part of the tet on
//! the inner side of the surface, after warping, cut into tetrahedra.
//!
//! Each vertex is labelled inside (`−`), on the surface (`0`) or outside (`+`); a cut point
//! sits on every edge joining a `−` and a `+` vertex. Up to symmetry the cases are:
//!
//! | labels | output |
//! |---|---|
//! | no `+` (and a `−`) | the whole tet |
//! | no `−` | nothing, also for four `0` vertices |
//! | one `−` | one tet: the `−` vertex, the `0` vertices and the cut points |
//! | `−−++` | a triangular prism (two lattice vertices, four cut points): three tets |
//! | `−−0+` | a pyramid on the quadrilateral of face `−−+`, apex the `0` vertex: two tets |
//! | `−−−+` | a prism (three lattice vertices, three cut points): three tets |
//!
//! A quadrilateral on a face of the BCC tet is shared with the neighbouring BCC tet, so its
//! diagonal must be chosen from the face alone. A quadrilateral has two lattice vertices `p`,
//! `q` (the ends of a lattice edge) and a cut point on each edge from them to an outside
//! vertex `s`; its diagonal joins one of `p`, `q` (where it *starts*) to the other's cut point.
//! - `pq` long (both ends one colour): the paper's **parity rule** — the diagonal starts at the
//!   end whose coordinate along the edge, in units of `h`, is even. Both quadrilaterals on one
//!   long edge (the `−−++` prism) then start at the same vertex.
//! - `pq` short: the diagonal starts at the end whose edge to `s` is **long**. In a `−−−+`
//!   prism the face `pqr` has one long edge `pq`, so both short-edge quadrilaterals start at
//!   `r`: the three diagonals never form a cycle and the prism always splits into three tets.
//!
//! Four `0` vertices: every vertex of the BCC tet was warped onto the surface, so the tet is a
//! sliver of the boundary layer. We leave it out. Keeping it when the domain is inside at its
//! centroid (tried first) gave the worst tets of all, down to 4° on tori at 3–5 spacings of
//! tube radius; leaving it out keeps the boundary a closed 2-manifold in every test.
//!
//! The `−−++` prism's third quadrilateral lies on the surface (no neighbour shares it): its
//! diagonal is the one giving the larger smallest dihedral angle.

use super::lattice::is_long;
use nalgebra::Vector3;

/// A point of the output: a lattice vertex (key = its id) or a cut point (key = `CUT |
/// edge_key`), with its position.
#[derive(Debug, Clone, Copy)]
pub(super) struct Pt {
    pub key: u64,
    pub pos: Vector3<f64>,
}

/// What the filler needs to know about one BCC tet's vertices.
pub(super) struct TetView {
    /// Doubled lattice coordinates.
    pub coords: [[i64; 3]; 4],
    /// −1 inside, 0 on the surface (warped), +1 outside.
    pub labels: [i8; 4],
    /// The vertices as output points (warped positions).
    pub pts: [Pt; 4],
}

/// Fills one BCC tet, calling `cut(i, j)` for the cut point on the edge between vertices `i`
/// and `j` (labels `−`/`+`). Pushes positively oriented tets.
pub(super) fn fill(t: &TetView, cut: &mut dyn FnMut(usize, usize) -> Pt, out: &mut Vec<[Pt; 4]>) {
    let ins: Vec<usize> = (0..4).filter(|&i| t.labels[i] < 0).collect();
    let outs: Vec<usize> = (0..4).filter(|&i| t.labels[i] > 0).collect();
    let zeros: Vec<usize> = (0..4).filter(|&i| t.labels[i] == 0).collect();
    if ins.is_empty() {
        // Including `0000`: a tet whose four vertices were all warped onto the surface is
        // left out (see the module docs).
        return;
    }
    if outs.is_empty() {
        push(out, t.pts);
        return;
    }
    match (ins.len(), outs.len()) {
        (1, _) => {
            // One inside vertex: it, the zero vertices and the cut points on its edges to the
            // outside ones (1 + zeros + outs = 4 points).
            let p = ins[0];
            let mut pts = vec![t.pts[p]];
            pts.extend(zeros.iter().map(|&z| t.pts[z]));
            pts.extend(outs.iter().map(|&s| cut(p, s)));
            push(out, [pts[0], pts[1], pts[2], pts[3]]);
        }
        (2, 2) => {
            let (p, q, r, s) = (ins[0], ins[1], outs[0], outs[1]);
            let a = [t.pts[p], cut(p, r), cut(p, s)];
            let b = [t.pts[q], cut(q, r), cut(q, s)];
            // Sides (0,1) and (0,2) lie on the faces pqr and pqs; side (1,2) on the surface.
            let d01 = starts_at_first(t, p, q, r);
            let d02 = starts_at_first(t, p, q, s);
            let mut best: Option<(f64, Vec<[Pt; 4]>)> = None;
            for d12 in [true, false] {
                if let Some(tets) = prism(a, b, [d01, d12, d02]) {
                    let q = tets.iter().map(min_dihedral).fold(f64::INFINITY, f64::min);
                    if best.as_ref().is_none_or(|(bq, _)| q > *bq) {
                        best = Some((q, tets.to_vec()));
                    }
                }
            }
            let (_, tets) = best.expect("a prism with one free diagonal always splits");
            for tet in tets {
                push(out, tet);
            }
        }
        (2, 1) => {
            // −−0+: pyramid with apex z on the quadrilateral p, q, c_qs, c_ps.
            let (p, q, z, s) = (ins[0], ins[1], zeros[0], outs[0]);
            let (cps, cqs) = (cut(p, s), cut(q, s));
            let (zp, pp, qp) = (t.pts[z], t.pts[p], t.pts[q]);
            if starts_at_first(t, p, q, s) {
                push(out, [zp, pp, qp, cqs]);
                push(out, [zp, pp, cqs, cps]);
            } else {
                push(out, [zp, pp, qp, cps]);
                push(out, [zp, qp, cqs, cps]);
            }
        }
        (3, 1) => {
            let (p, q, r, s) = (ins[0], ins[1], ins[2], outs[0]);
            let a = [t.pts[p], t.pts[q], t.pts[r]];
            let b = [cut(p, s), cut(q, s), cut(r, s)];
            let d = [
                starts_at_first(t, p, q, s),
                starts_at_first(t, q, r, s),
                starts_at_first(t, p, r, s),
            ];
            let tets = prism(a, b, d).expect("the −−−+ diagonals never form a cycle");
            for tet in tets {
                push(out, tet);
            }
        }
        _ => unreachable!("labels {:?}", t.labels),
    }
}

/// Whether the diagonal of the quadrilateral with lattice vertices `p`, `q` and cut points on
/// their edges to `s` starts at `p` (joins `p` to the cut point of `qs`). See the module docs.
fn starts_at_first(t: &TetView, p: usize, q: usize, s: usize) -> bool {
    let (cp, cq, cs) = (t.coords[p], t.coords[q], t.coords[s]);
    if is_long(cp, cq) {
        // Parity rule: the end with an even cube index along the edge's axis.
        let axis = (0..3).find(|&k| cp[k] != cq[k]).expect("distinct vertices");
        cp[axis].div_euclid(2).rem_euclid(2) == 0
    } else {
        is_long(cp, cs)
    }
}

/// Splits the triangular prism with bottom `a`, top `b` (vertical edges `a[i]`–`b[i]`) into
/// three tets, given each side's diagonal: `d[0]` for side (0,1), `d[1]` for (1,2), `d[2]`
/// for (0,2); `true` means `a[i]`–`b[j]` for side `(i, j)`, `i < j`. `None` when the diagonals
/// form a cycle (no split without a new vertex).
fn prism(a: [Pt; 3], b: [Pt; 3], d: [bool; 3]) -> Option<[[Pt; 4]; 3]> {
    let sides = [(0usize, 1usize, d[0]), (1, 2, d[1]), (0, 2, d[2])];
    // The diagonals as (index in a, index in b).
    let diags = sides.map(|(i, j, f)| if f { (i, j) } else { (j, i) });
    for v in 0..3 {
        let others: Vec<usize> = (0..3).filter(|&k| k != v).collect();
        let (j, k) = (others[0], others[1]);
        let far = diags
            .iter()
            .find(|&&(x, y)| (x == j && y == k) || (x == k && y == j))
            .copied()
            .expect("every side has a diagonal");
        if diags.iter().filter(|&&(x, _)| x == v).count() == 2 {
            // a[v] sees the whole top: tet (a[v], b...) and a pyramid on side (j, k).
            let first = [a[v], b[0], b[1], b[2]];
            let [t1, t2] = pyramid(a[v], a, b, j, k, far);
            return Some([first, t1, t2]);
        }
        if diags.iter().filter(|&&(_, y)| y == v).count() == 2 {
            let first = [b[v], a[0], a[1], a[2]];
            let [t1, t2] = pyramid(b[v], a, b, j, k, far);
            return Some([first, t1, t2]);
        }
    }
    None
}

/// The two tets of the pyramid with apex `x` on the side quadrilateral `a[j] a[k] b[k] b[j]`
/// whose diagonal is `(a index, b index)`.
fn pyramid(
    x: Pt,
    a: [Pt; 3],
    b: [Pt; 3],
    j: usize,
    k: usize,
    diag: (usize, usize),
) -> [[Pt; 4]; 2] {
    let (ai, bi) = diag;
    let (ao, bo) = (if ai == j { k } else { j }, if bi == j { k } else { j });
    // Diagonal a[ai]–b[bi] splits the quadrilateral into (a[ai], b[bi], a[ao]) and
    // (a[ai], b[bi], b[bo]).
    [[x, a[ai], b[bi], a[ao]], [x, a[ai], b[bi], b[bo]]]
}

/// Pushes a tet with positive orientation (two vertices swapped when needed).
fn push(out: &mut Vec<[Pt; 4]>, mut t: [Pt; 4]) {
    if signed_volume6(&t) < 0.0 {
        t.swap(1, 2);
    }
    out.push(t);
}

fn signed_volume6(t: &[Pt; 4]) -> f64 {
    let (a, b, c, d) = (t[0].pos, t[1].pos, t[2].pos, t[3].pos);
    (b - a).cross(&(c - a)).dot(&(d - a))
}

fn min_dihedral(t: &[Pt; 4]) -> f64 {
    crate::mesh::octasection::dihedral_angles_deg(&t.map(|p| p.pos))
        .into_iter()
        .fold(f64::INFINITY, f64::min)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pt(key: u64, x: f64, y: f64, z: f64) -> Pt {
        Pt {
            key,
            pos: Vector3::new(x, y, z),
        }
    }

    fn volume(tets: &[[Pt; 4]]) -> f64 {
        tets.iter().map(|t| signed_volume6(t).abs() / 6.0).sum()
    }

    #[test]
    fn every_acyclic_prism_split_fills_the_prism() {
        // A right prism over the unit right triangle, height 1: volume 1/2.
        let a = [pt(0, 0., 0., 0.), pt(1, 1., 0., 0.), pt(2, 0., 1., 0.)];
        let b = [pt(3, 0., 0., 1.), pt(4, 1., 0., 1.), pt(5, 0., 1., 1.)];
        let mut split = 0;
        for bits in 0..8u32 {
            let d = [bits & 1 != 0, bits & 2 != 0, bits & 4 != 0];
            match prism(a, b, d) {
                Some(tets) => {
                    split += 1;
                    assert!((volume(&tets) - 0.5).abs() < 1e-14, "{d:?}");
                    for t in &tets {
                        assert!(signed_volume6(t).abs() > 1e-12, "{d:?}: flat tet");
                    }
                }
                None => {
                    // The two cyclic choices: a0–b1, a1–b2, a2–b0 and the reverse.
                    assert!(
                        d == [true, true, false] || d == [false, false, true],
                        "{d:?}"
                    );
                }
            }
        }
        assert_eq!(split, 6);
    }

    #[test]
    fn pyramid_tets_use_the_diagonal() {
        let a = [pt(0, 0., 0., 0.), pt(1, 1., 0., 0.), pt(2, 0., 1., 0.)];
        let b = [pt(3, 0., 0., 1.), pt(4, 1., 0., 1.), pt(5, 0., 1., 1.)];
        let apex = pt(9, -1.0, -1.0, 0.5);
        for diag in [(1, 2), (2, 1)] {
            let tets = pyramid(apex, a, b, 1, 2, diag);
            for t in &tets {
                let keys: Vec<u64> = t.iter().map(|p| p.key).collect();
                assert!(keys.contains(&a[diag.0].key) && keys.contains(&b[diag.1].key));
            }
        }
    }
}
