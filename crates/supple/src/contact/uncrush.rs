//! Contact that does not crush: after the obstacle projection has moved vertices, no tet that
//! touches an obstacle is left flat or inside out by it.
//!
//! The projection (Zhuang & Canny §6) moves each penetrating surface vertex onto the
//! obstacle along its normal, vertex by vertex. A tet whose four vertices all reach a plane
//! in one step (a sliver on a curved surface that lands flat, or a whole tet at a large
//! `dt · v`) then ends with zero volume, and one whose inner vertex passed the others ends
//! inverted: for a barrier model (Liesenfeld–Stolfi, infinite energy at zero volume) that is
//! fatal, and for the others the inverted tet is pinned against the obstacle, its restoring
//! force pushing into it, so it stays inverted (measured on a bunny dropped on its flat base).
//!
//! The fix: every tet with a vertex in contact whose signed volume `V` is below its target
//! `V*` has one vertex lifted along the outward normal `n` of the obstacle nearest to it —
//! the vertex `k` where that raises the volume fastest, `g_k = ∂V/∂x_k · n_k` largest and
//! positive — by `(V* − V)/g_k` (exact: `V` is linear in one vertex). Lifting along the
//! outward normal never moves a vertex into the obstacle. `V* = ε V_rest` with
//! [`MIN_VOLUME_RATIO`] `ε`; for a barrier model `V*` is also at most the tet's volume before
//! the projection (the integrator's result, positive), so the projection never compresses a
//! tet further than `ε` and never one that the integrator left thinner. Lifting changes
//! neighbouring tets, so the sweep is repeated up to [`SWEEPS`] times (bounded work); tets
//! still below target are counted.
//!
//! Velocities are not changed: the lift is a position correction of at most the tet's
//! height, and giving it a velocity would add kinetic energy at every contact step.

use super::obstacle::Obstacle;
use crate::body::Body;
use crate::fem::ElementSet;
use crate::mesh::signed_volume;
use nalgebra::Vector3;

/// Target volume of a tet in contact, relative to its rest volume.
pub const MIN_VOLUME_RATIO: f64 = 0.1;
/// Sweeps over the tets in contact.
pub const SWEEPS: usize = 4;

/// What one call did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LiftStats {
    /// Vertex lifts applied.
    pub lifts: usize,
    /// Tets in contact still below their target volume after the last sweep.
    pub unresolved: usize,
}

/// `∂V/∂x_k` of the signed volume `V = det[x₁−x₀, x₂−x₀, x₃−x₀]/6` for each local vertex.
pub(crate) fn volume_gradients(p: &[Vector3<f64>; 4]) -> [Vector3<f64>; 4] {
    let (e1, e2, e3) = (p[1] - p[0], p[2] - p[0], p[3] - p[0]);
    let g1 = e2.cross(&e3) / 6.0;
    let g2 = e3.cross(&e1) / 6.0;
    let g3 = e1.cross(&e2) / 6.0;
    [-(g1 + g2 + g3), g1, g2, g3]
}

/// Lifts vertices of tets in contact whose volume is below target (see the module notes).
/// `touching[i]`: vertex `i` is in contact (moved by the projection or within reach of an
/// obstacle); `x_before`: positions before the projection (for a barrier model's cap);
/// fixed vertices are never moved. No allocation.
#[allow(clippy::too_many_arguments)]
pub fn lift_crushed_tets(
    obstacles: &[Obstacle],
    t: f64,
    elems: &ElementSet,
    touching: &[bool],
    fixed: &[bool],
    barrier: bool,
    x_before: &[Vector3<f64>],
    x: &mut [Vector3<f64>],
) -> LiftStats {
    let mut stats = LiftStats::default();
    if obstacles.is_empty() {
        return stats;
    }
    let target_of = |e: usize, x_ref: &[Vector3<f64>]| {
        let rest = MIN_VOLUME_RATIO * elems.volume[e];
        if barrier {
            let before = signed_volume(&elems.tets[e].map(|i| x_ref[i as usize]));
            rest.min(before)
        } else {
            rest
        }
    };
    for sweep in 0..SWEEPS {
        let mut lifted = false;
        let mut below = 0;
        for (e, tet) in elems.tets.iter().enumerate() {
            if !tet.iter().any(|&i| touching[i as usize]) {
                continue;
            }
            let p = tet.map(|i| x[i as usize]);
            let v = signed_volume(&p);
            let target = target_of(e, x_before);
            // (A NaN volume or target is skipped.)
            if v.partial_cmp(&target) != Some(std::cmp::Ordering::Less)
                || target.is_nan()
                || target <= 0.0
            {
                continue;
            }
            let grads = volume_gradients(&p);
            let mut best: Option<(usize, Vector3<f64>, f64)> = None;
            for k in 0..4 {
                let i = tet[k] as usize;
                if fixed[i] {
                    continue;
                }
                let Some(n) = nearest_normal(obstacles, t, &x[i]) else {
                    continue;
                };
                let g = grads[k].dot(&n);
                if g > best.map_or(0.0, |b| b.2) {
                    best = Some((i, n, g));
                }
            }
            match best {
                Some((i, n, g)) if sweep + 1 < SWEEPS || g > 0.0 => {
                    x[i] += n * ((target - v) / g);
                    stats.lifts += 1;
                    lifted = true;
                }
                _ => below += 1,
            }
        }
        stats.unresolved = below;
        if !lifted {
            break;
        }
    }
    stats
}

/// [`lift_crushed_tets`] on `body`'s own tets, fixed vertices, model and positions.
pub fn lift_body(
    obstacles: &[Obstacle],
    t: f64,
    body: &mut Body,
    touching: &[bool],
    x_before: &[Vector3<f64>],
) -> LiftStats {
    let barrier = body.model.needs_positive_volume();
    let Body {
        elems, fixed, x, ..
    } = body;
    lift_crushed_tets(obstacles, t, elems, touching, fixed, barrier, x_before, x)
}

/// The outward normal of the obstacle nearest to `p` (smallest signed distance).
fn nearest_normal(obstacles: &[Obstacle], t: f64, p: &Vector3<f64>) -> Option<Vector3<f64>> {
    obstacles
        .iter()
        .map(|o| o.proximity(t, p))
        .filter(|q| q.distance.is_finite() && q.normal.iter().all(|c| c.is_finite()))
        .min_by(|a, b| a.distance.total_cmp(&b.distance))
        .map(|q| q.normal)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::obstacle::{RigidPath, Shape};
    use crate::mesh::TetMesh;

    fn ground() -> Obstacle {
        Obstacle {
            name: "ground".into(),
            shape: Shape::HalfSpace,
            path: RigidPath::Static(nalgebra::Isometry3::identity()),
            friction: 0.0,
        }
    }

    #[test]
    fn a_tet_flattened_onto_the_ground_gets_its_volume_back_without_entering_it() {
        // The identity half-space is z ≤ 0; its outward normal is read from the obstacle.
        let x0 = vec![
            Vector3::new(0.0, 0.0, 0.0),
            Vector3::new(1.0, 0.0, 0.0),
            Vector3::new(0.0, 1.0, 0.0),
            Vector3::new(0.0, 0.0, 1.0),
        ];
        let mesh = TetMesh::new(x0.clone(), vec![[0, 1, 2, 3]]).unwrap();
        let elems = ElementSet::new(&mesh);
        let o = ground();
        let up = o.proximity(0.0, &Vector3::new(0.0, 0.0, 5.0)).normal;
        // Flatten it onto the plane through the origin normal to `up`, then invert it a bit.
        let flat: Vec<Vector3<f64>> = x0.iter().map(|p| p - up * up.dot(p)).collect();
        for (before, barrier) in [(x0.clone(), false), (x0.clone(), true)] {
            let mut x = flat.clone();
            let touching = vec![true; 4];
            let fixed = vec![false; 4];
            let s = lift_crushed_tets(
                std::slice::from_ref(&o),
                0.0,
                &elems,
                &touching,
                &fixed,
                barrier,
                &before,
                &mut x,
            );
            let v = signed_volume(&[x[0], x[1], x[2], x[3]]);
            assert!(s.lifts >= 1 && s.unresolved == 0, "{s:?}");
            assert!(
                (v - MIN_VOLUME_RATIO * elems.volume[0]).abs() < 1e-12,
                "{v}"
            );
            for p in &x {
                assert!(o.proximity(0.0, p).distance >= -1e-12);
            }
        }
        // Nothing in contact: nothing moves.
        let mut x = flat.clone();
        let s = lift_crushed_tets(
            &[o],
            0.0,
            &elems,
            &[false; 4],
            &[false; 4],
            false,
            &x0,
            &mut x,
        );
        assert_eq!(s, LiftStats::default());
        assert_eq!(x, flat);
    }
}
