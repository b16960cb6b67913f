//! Interior-vertex smoothing: each interior vertex, in index order, moved to raise the
//! smallest dihedral angle of its star (the tets around it), never lowering it.
//!
//! Two kinds of trial move, both accepted only when the star's smallest angle rises (so no
//! tet of the star can invert or flatten, [`super::measure::INVALID`]):
//! - **smart Laplacian** (Field 1988, "Laplacian smoothing and Delaunay triangulations",
//!   Comm. Appl. Numer. Methods 4; Freitag & Ollivier-Gooch 1997 §4): towards the mean of
//!   the vertex's neighbours, the whole way, half or a quarter of it;
//! - **ascent of the worst angle** (the non-smooth optimization of Freitag & Ollivier-Gooch
//!   1997, "Tetrahedral mesh improvement using swapping and smoothing", IJNME 40, reduced to
//!   its first step): along the gradient of the smallest angle of the star's worst tet
//!   (central differences), with a step halved until the star's minimum rises.
//!
//! This is Debunne et al. 2000 §4.1's relaxation "only applied to the internal nodes of each
//! mesh, thus preserving the surface appearance", with the dihedral angles as its criterion.

use super::measure::min_dihedral;
use super::topology::Work;
use nalgebra::Vector3;

/// Gradient-ascent iterations per vertex and sweep.
const ASCENT_STEPS: usize = 8;
/// Halvings of a trial step before a vertex is left where it is.
const HALVINGS: usize = 10;
/// A rise in the star's smallest angle (radians) below which the ascent stops.
const MIN_GAIN: f64 = 1e-7;

impl Work {
    /// The smallest dihedral angle of the tets of `v`'s star with `v` at `x`, and the slot of
    /// the tet that has it.
    fn star_quality(&self, v: u32, x: &Vector3<f64>) -> (f64, u32) {
        let mut worst = (f64::INFINITY, u32::MAX);
        for &t in &self.star[v as usize] {
            let Some(tet) = self.tets[t as usize] else {
                continue;
            };
            let q = min_dihedral(&self.moved(tet, v, x));
            if q < worst.0 {
                worst = (q, t);
            }
        }
        worst
    }

    fn moved(&self, tet: [u32; 4], v: u32, x: &Vector3<f64>) -> [Vector3<f64>; 4] {
        tet.map(|i| {
            if i == v {
                *x
            } else {
                self.positions[i as usize]
            }
        })
    }

    /// Smooths vertex `v` (interior: its star is closed); true if it moved.
    pub fn smooth_vertex(&mut self, v: u32) -> bool {
        let p0 = self.positions[v as usize];
        let (q0, _) = self.star_quality(v, &p0);
        if !q0.is_finite() {
            return false; // no tets
        }
        let mut neighbours: Vec<u32> = self.star[v as usize]
            .iter()
            .filter_map(|&t| self.tets[t as usize])
            .flatten()
            .filter(|&i| i != v)
            .collect();
        neighbours.sort_unstable();
        neighbours.dedup();
        let mut shortest = f64::INFINITY;
        let mut mean = Vector3::zeros();
        for &i in &neighbours {
            let p = self.positions[i as usize];
            shortest = shortest.min((p - p0).norm());
            mean += p;
        }
        mean /= neighbours.len() as f64;

        let (mut x, mut q) = (p0, q0);
        for lambda in [1.0, 0.5, 0.25] {
            let y = p0 + (mean - p0) * lambda;
            let (qy, _) = self.star_quality(v, &y);
            if qy > q {
                (x, q) = (y, qy);
                break;
            }
        }
        for _ in 0..ASCENT_STEPS {
            let (_, worst) = self.star_quality(v, &x);
            let Some(tet) = self.tets[worst as usize] else {
                break;
            };
            let h = 1e-7 * shortest;
            let g = Vector3::from_fn(|a, _| {
                let (mut up, mut down) = (x, x);
                up[a] += h;
                down[a] -= h;
                min_dihedral(&self.moved(tet, v, &up)) - min_dihedral(&self.moved(tet, v, &down))
            }) / (2.0 * h);
            let norm = g.norm();
            if !(norm > 0.0 && norm.is_finite()) {
                break;
            }
            // A first step of a quarter of the shortest edge from v.
            let mut step = 0.25 * shortest / norm;
            let mut moved = false;
            for _ in 0..HALVINGS {
                let y = x + g * step;
                let (qy, _) = self.star_quality(v, &y);
                if qy > q {
                    let gain = qy - q;
                    (x, q) = (y, qy);
                    moved = gain > MIN_GAIN;
                    break;
                }
                step *= 0.5;
            }
            if !moved {
                break;
            }
        }
        if q > q0 {
            self.positions[v as usize] = x;
            true
        } else {
            false
        }
    }
}
