//! `[contact] push_guard = true`: a surface push must not crush the tets behind it (issue 12, "a vertex projected out of
//! an obstacle must not drive its neighbours through zero volume", here for body–body and
//! self contact).
//!
//! The projection response moves a pair's surface vertices along the contact normal until
//! the gap is the contact thickness. At a high closing speed the pairs start deep (the
//! head-on tubes at 10 m/s each and dt = 5 ms: 3–8 mm), and pushing a vertex that far can
//! carry it through the thin surface tets it belongs to: the step then ends with an element
//! inside out — fatal for a barrier model (Liesenfeld–Stolfi), and every halving of the step
//! meets the same carried-over penetration, so the step control cannot help.
//!
//! The guard scales a pair's push by the largest `α ∈ [0, 1]` that keeps every tet around
//! each pushed vertex at or above [`MIN_VOLUME_RATIO`] of its rest volume, and a tet the solve
//! already left thinner than that at or above half its volume (so a push is scaled, never
//! refused). A tet already inside out bounds nothing.
//!
//! Why it is off by default: where the surfaces press slowly and deeply (the snapping torus,
//! pairs 1.5–3 cm deep round the cylinders) the scaled pushes leave pairs unresolved through
//! all projection passes, the fail-safe sends their vertices back to their start positions
//! and the step is not solved again with holds: the torus gained 16.7 J after its release
//! instead of 0.3 J (13.4 J when pushes into tets below the floor were refused outright). The signed volume is affine in one vertex's position
//! (`V(x + αd) = V + α ∂V/∂x · d`), so each tet gives its bound in closed form; the pair's
//! vertices are moved by the same factor, so the push keeps its direction and its mass
//! weighting. What the guard leaves unresolved, later passes push again and the fail-safe
//! (vertices back at their start positions, where no pair met) ends: the guard never leaves a
//! crossing, only a penetration up to the fail-safe's.

use crate::body::Body;
use crate::contact::uncrush::{volume_gradients, MIN_VOLUME_RATIO};
use crate::mesh::signed_volume;
use nalgebra::Vector3;

/// The tets around each vertex of each body (built once: no allocation per step).
#[derive(Debug, Clone, Default)]
pub(super) struct PushGuard {
    /// Per body: CSR offsets per vertex into `tets`.
    offsets: Vec<Vec<u32>>,
    tets: Vec<Vec<u32>>,
}

impl PushGuard {
    pub(super) fn new(bodies: &[Body]) -> Self {
        let mut guard = Self::default();
        for body in bodies {
            let n = body.n_vertices();
            let mut count = vec![0u32; n + 1];
            for tet in &body.mesh.tets {
                for &v in tet {
                    count[v as usize + 1] += 1;
                }
            }
            for i in 0..n {
                count[i + 1] += count[i];
            }
            let mut fill = count.clone();
            let mut tets = vec![0u32; count[n] as usize];
            for (t, tet) in body.mesh.tets.iter().enumerate() {
                for &v in tet {
                    let slot = &mut fill[v as usize];
                    tets[*slot as usize] = t as u32;
                    *slot += 1;
                }
            }
            guard.offsets.push(count);
            guard.tets.push(tets);
        }
        guard
    }

    /// The largest `α ∈ [0, 1]` for which moving vertex `v` of `body` (body index `b`) by
    /// `α d` keeps every tet around it at or above its volume floor (module notes).
    pub(super) fn admissible(&self, body: &Body, b: usize, v: usize, d: &Vector3<f64>) -> f64 {
        let (lo, hi) = (self.offsets[b][v] as usize, self.offsets[b][v + 1] as usize);
        let mut alpha = 1.0_f64;
        for &t in &self.tets[b][lo..hi] {
            let tet = body.mesh.tets[t as usize];
            let p = tet.map(|i| body.x[i as usize]);
            let k = tet.iter().position(|&i| i as usize == v).unwrap_or(0);
            let rate = volume_gradients(&p)[k].dot(d);
            if rate >= 0.0 {
                continue;
            }
            let volume = signed_volume(&p);
            if volume <= 0.0 {
                // Already inside out: its own restoring forces, not the push, must undo it.
                continue;
            }
            let floor = (MIN_VOLUME_RATIO * body.elems.volume[t as usize]).min(0.5 * volume);
            alpha = alpha.min((volume - floor) / -rate);
        }
        alpha
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::body::BodyDesc;
    use crate::fem::material::ModelKind;
    use crate::mesh::{box_grid, BoxGrid, TetSplit};

    /// A corner vertex pushed through the cube is stopped where its tets reach the floor, and
    /// a push that raises their volume is not limited.
    #[test]
    fn a_push_stops_at_the_volume_floor() {
        let mesh = box_grid(&BoxGrid {
            cells: [1, 1, 1],
            cell_size: Vector3::repeat(0.1),
            origin: Vector3::zeros(),
            split: TetSplit::Five,
        });
        let mut body = Body::new(BodyDesc::new(
            "cube",
            mesh,
            ModelKind::Linear,
            1e5,
            0.3,
            1000.0,
        ))
        .unwrap();
        let guard = PushGuard::new(std::slice::from_ref(&body));
        let corner = (0..body.n_vertices())
            .find(|&i| body.x[i].norm() < 1e-12)
            .unwrap();
        let inward = Vector3::repeat(0.2);
        let alpha = guard.admissible(&body, 0, corner, &inward);
        assert!(alpha > 0.0 && alpha < 1.0, "{alpha}");
        assert_eq!(guard.admissible(&body, 0, corner, &-inward), 1.0);
        let worst = |body: &Body| {
            body.mesh
                .tets
                .iter()
                .enumerate()
                .filter(|(_, t)| t.contains(&(corner as u32)))
                .map(|(e, t)| signed_volume(&t.map(|i| body.x[i as usize])) / body.elems.volume[e])
                .fold(f64::INFINITY, f64::min)
        };
        body.x[corner] += alpha * inward;
        assert!(
            (worst(&body) - MIN_VOLUME_RATIO).abs() < 1e-9,
            "{}",
            worst(&body)
        );
        // At the floor a tet may still lose half of what it has, no more.
        let again = guard.admissible(&body, 0, corner, &inward);
        assert!(again > 0.0 && again < 1.0, "{again}");
        body.x[corner] += again * inward;
        let w = worst(&body);
        assert!(
            (0.5 * MIN_VOLUME_RATIO - 1e-9..MIN_VOLUME_RATIO).contains(&w),
            "{w}"
        );
    }
}
