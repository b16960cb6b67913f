//! The line search's question to the contact set: how far may a Newton step go before any
//! pair or vertex–obstacle distance reaches zero (additive CCD, Li et al. 2021, over the
//! primitives' swept boxes; IPC §4.2).

use super::{CollisionMesh, ContactSet, Obstacles, PairKind};
use crate::contact::ipc::accd::{
    edge_edge_accd, point_sdf_accd, point_triangle_accd, AccdSettings,
};
use crate::contact::Shape;
use crate::linalg::par;
use nalgebra::Vector3;

/// The gap fraction kept against a plane (ACCD's default `s`: a step stops at 90 % of the way
/// to the plane, the distance not below 10 % of its start).
const DEFAULT_PLANE_S: f64 = 0.1;
/// The swept boxes of the CCD's broad phase are inflated by this fraction of `d̂` (see
/// [`ContactSet::max_step`]).
const SWEPT_INFLATION: f64 = 0.1;
/// Candidates per parallel task of the CCD (fixed: the step must not depend on the thread
/// count, see [`ContactSet::max_step`]).
const CCD_CHUNK: usize = 512;

impl ContactSet {
    /// The largest fraction `t ∈ (0, 1]` of the displacement `dx` from `x` that keeps every
    /// pair apart (additive CCD, Li et al. 2021 Alg. 1; conservative advancement against the
    /// obstacles' exact distance). 1 when nothing is met.
    pub fn max_step(
        &mut self,
        mesh: &CollisionMesh,
        x: &[Vector3<f64>],
        dx: &[Vector3<f64>],
        obstacles: &Obstacles,
    ) -> f64 {
        let settings = AccdSettings::default();
        // The swept boxes are inflated by `d̂ / 10`: a pair left out then stays farther than
        // that apart over the whole step, where its barrier is moderate. Uninflated, two faces
        // that the step brings exactly together (a head-on crash whose closing per step equals
        // the gap) have boxes apart by a rounding error, escape the CCD, and land at
        // 3·10⁻¹⁷ m, from where no Newton step can move. Inflating by `d̂` itself made the
        // CCD 4× dearer in resting contact (every active pair a candidate: 2.5 against
        // 0.97 ms per step on a stack of four cubes) for the same results on the crash grid.
        self.fill_boxes(mesh, x, Some(dx), SWEPT_INFLATION * self.dhat);
        let pairing = self.pairing;
        let candidates = self.swept.update(&self.boxes);
        // The candidates in fixed chunks of `CCD_CHUNK`, in parallel: each chunk keeps its own
        // running bound (from 1), and the step is the smallest over the chunks. The chunks do
        // not depend on the thread count, so neither does the step.
        let excluded = &self.excluded;
        let n_chunks = candidates.len().div_ceil(CCD_CHUNK);
        self.ccd_partials.resize(n_chunks, 1.0);
        let chunk_step = |c: usize| {
            let mut t: f64 = 1.0;
            let end = ((c + 1) * CCD_CHUNK).min(candidates.len());
            for &(i, j) in &candidates[c * CCD_CHUNK..end] {
                if excluded.binary_search(&(i, j)).is_ok() {
                    continue;
                }
                let Some((kind, v)) = Self::stencil(pairing, mesh, i, j) else {
                    continue;
                };
                let (p, d) = (v.map(|k| x[k as usize]), v.map(|k| dx[k as usize]));
                let local = AccdSettings {
                    t_max: t,
                    ..settings
                };
                let tk = match kind {
                    PairKind::PointTriangle => point_triangle_accd(
                        &p[0], &p[1], &p[2], &p[3], &d[0], &d[1], &d[2], &d[3], &local,
                    ),
                    _ => edge_edge_accd(
                        &p[0], &p[1], &p[2], &p[3], &d[0], &d[1], &d[2], &d[3], &local,
                    ),
                };
                t = t.min(tk);
            }
            t
        };
        par::for_each_mut_from(&mut self.ccd_partials, 2, 1, |c, out| *out = chunk_step(c));
        let mut t = self.ccd_partials.iter().fold(1.0f64, |m, &p| m.min(p));
        for obstacle in obstacles.list {
            let bounds = obstacle.aabb(obstacles.time);
            for &v in &mesh.vertices {
                let (p, d) = (x[v as usize], dx[v as usize]);
                if d == Vector3::zeros() || self.held[v as usize] {
                    continue;
                }
                if let Some((lo, hi)) = bounds {
                    let reach = d.abs();
                    let outside = (0..3).any(|k| {
                        p[k] + reach[k] < lo[k] - self.dhat || p[k] - reach[k] > hi[k] + self.dhat
                    });
                    if outside {
                        continue;
                    }
                }
                let sdf = |q: &Vector3<f64>| obstacle.proximity(obstacles.time, q).distance;
                if matches!(obstacle.shape, Shape::HalfSpace) {
                    // A plane's signed distance is affine along a straight path, so the
                    // advancement's answer has a closed form: conservative advancement took
                    // `|dx| / d` iterations on a long grazing path (a 4·10⁹ m/s² push along
                    // the ground spent 38 s in one step), capped at 10,000 per vertex.
                    let (d0, d1) = (sdf(&p), sdf(&(p + d)));
                    let s = DEFAULT_PLANE_S;
                    t = t.min(if d0.is_nan() || d0 <= 0.0 {
                        0.0
                    } else if d1 >= s * d0 {
                        t
                    } else {
                        ((1.0 - s) * d0 / (d0 - d1)).min(t)
                    });
                    continue;
                }
                let local = AccdSettings {
                    t_max: t,
                    ..settings
                };
                t = t.min(point_sdf_accd(&p, &d, sdf, &local));
            }
        }
        self.core_max_step(mesh, x, dx, obstacles, t)
    }
}
