//! Inversion-aware step lengths: how far a search direction can be followed before some
//! element reaches zero volume.
//!
//! For a barrier model (energy → ∞ as `J → 0`, Liesenfeld & Stolfi 1997 §4.1) a Newton step
//! must never cross `J = 0`: the energy is infinite there, and beyond it the element sits in
//! an equally stable mirrored state. Along `x(t) = x + t d` the signed volume of a tet is a
//! cubic in `t` — the determinant of its edge matrix `E + t D` —
//! `p(t) = det E + t c₁ + t² c₂ + t³ det D`, with `c₁ = det[D₀,E₁,E₂] + det[E₀,D₁,E₂] +
//! det[E₀,E₁,D₂]` and `c₂ = det[E₀,D₁,D₂] + det[D₀,E₁,D₂] + det[D₀,D₁,E₂]` (columns `E_k`,
//! `D_k`). The step is capped below the first positive root over all tets: the "filtered" or
//! inversion-aware line search of Smith & Schaefer 2015 (bijective parameterization) and of
//! Li et al. 2020 (IPC), here applied to element volumes.

use super::ElementSet;
use crate::linalg::par;
use nalgebra::{Matrix3, Vector3};

/// `a · (b × c)`.
#[inline]
fn det3(a: &Vector3<f64>, b: &Vector3<f64>, c: &Vector3<f64>) -> f64 {
    a.dot(&b.cross(c))
}

/// The first `t ∈ (0, 1]` at which `p(t) = c[0] + c[1] t + c[2] t² + c[3] t³` reaches zero,
/// given `p(0) = c[0] > 0`; `f64::INFINITY` when `p > 0` on the whole interval. The interval
/// is cut at the roots of `p'` so `p` is monotone on each piece; the first piece that ends at
/// `p ≤ 0` holds the root, found by bisection to round-off (at most 60 halvings).
pub fn first_root_in_unit(c: [f64; 4]) -> f64 {
    let p = |t: f64| c[0] + t * (c[1] + t * (c[2] + t * c[3]));
    // Roots of p'(t) = c1 + 2 c2 t + 3 c3 t² inside (0, 1), sorted.
    let (a, b, cc) = (3.0 * c[3], 2.0 * c[2], c[1]);
    let mut cuts = [f64::NAN; 2];
    if a.abs() > 1e-300 {
        let disc = b * b - 4.0 * a * cc;
        if disc >= 0.0 {
            // Numerically stable quadratic roots.
            let q = -0.5 * (b + b.signum() * disc.sqrt());
            let r1 = q / a;
            let r2 = if q != 0.0 { cc / q } else { r1 };
            cuts = [r1.min(r2), r1.max(r2)];
        }
    } else if b.abs() > 1e-300 {
        cuts[0] = -cc / b;
    }
    let mut lo = 0.0;
    for hi in cuts
        .into_iter()
        .filter(|t| *t > 0.0 && *t < 1.0)
        .chain([1.0])
    {
        if p(hi) <= 0.0 {
            let (mut l, mut h) = (lo, hi);
            for _ in 0..60 {
                let m = 0.5 * (l + h);
                if m <= l || m >= h {
                    break;
                }
                if p(m) > 0.0 {
                    l = m;
                } else {
                    h = m;
                }
            }
            return l;
        }
        lo = hi;
    }
    f64::INFINITY
}

/// The signed-volume cubic of one tet along `x + t d` (see the module notes), scaled by 6.
pub fn volume_cubic(x: &[Vector3<f64>; 4], d: &[Vector3<f64>; 4]) -> [f64; 4] {
    let e = [x[1] - x[0], x[2] - x[0], x[3] - x[0]];
    let g = [d[1] - d[0], d[2] - d[0], d[3] - d[0]];
    let c0 = Matrix3::from_columns(&e).determinant();
    let c3 = Matrix3::from_columns(&g).determinant();
    let c1 = det3(&g[0], &e[1], &e[2]) + det3(&e[0], &g[1], &e[2]) + det3(&e[0], &e[1], &g[2]);
    let c2 = det3(&e[0], &g[1], &g[2]) + det3(&g[0], &e[1], &g[2]) + det3(&g[0], &g[1], &e[2]);
    [c0, c1, c2, c3]
}

/// The largest `t ∈ (0, 1]` such that every element keeps a positive volume on
/// `x + s · scale · d` for all `s < t`: the first root of any element's volume cubic, or
/// `f64::INFINITY` when no element reaches zero volume up to `t = 1`. Returns 0 when an
/// element already has volume ≤ 0 at `x`. `partials` is a workspace of
/// [`par::n_chunks`]`(elems.len())` entries; the result does not depend on the thread count.
pub fn max_feasible_step(
    elems: &ElementSet,
    x: &[Vector3<f64>],
    d: &[Vector3<f64>],
    scale: f64,
    partials: &mut [f64],
) -> f64 {
    capped_step(elems, x, d, scale, partials, 0.0, 0.0, &[])
}

/// The smallest volume ratio `J = V / V_rest` that [`max_step_keeping_positive`] lets a
/// positive element reach. Zero is not enough: a model that tolerates inversion has no
/// energy barrier at `J = 0`, so a Newton iterate pushed into a crushed element keeps going
/// 0.9 of the way to zero volume (the caller's fraction), the element's volume falls
/// geometrically to round-off in a few dozen iterations, and a step of 10⁻¹⁶ of the
/// direction then flips it (the ±10 m/s tube crash at dt 10 ms did: 2–4 tets per step, up to
/// 15 in a frame, every iterate capped). A floor a thousandth of the rest volume is far above
/// round-off and far below any compression the linear-in-frame models describe well.
pub const J_FLOOR: f64 = 1e-3;

/// [`max_feasible_step`] for the elements with a positive volume at `x` only, and with a
/// floor: the largest `t ∈ (0, 1]` such that no element positive at `x` falls below
/// [`J_FLOOR`] of its rest volume (or below half its volume at `x`, when it is already under
/// the floor) on `x + s · scale · d` for `s < t` (`f64::INFINITY` when none does). Elements
/// already inverted at `x`, and those marked in `free` (empty: none), are left free. The
/// coupled contact step uses it for models that tolerate inverted elements (corotational and
/// the other linear-in-frame models, whose energy stays finite at `J = 0`): no Newton iterate
/// may invert a further element, where a crash at a large step otherwise found a path through
/// inverted states along which two tubes passed through each other (each crushed through
/// itself), and ended valid with exit 0. The coupled step marks free the elements that start
/// its iterations crushed below half the floor (see [`crushed_below_half_floor`]).
pub fn max_step_keeping_positive(
    elems: &ElementSet,
    x: &[Vector3<f64>],
    d: &[Vector3<f64>],
    scale: f64,
    partials: &mut [f64],
    free: &[bool],
) -> f64 {
    capped_step(elems, x, d, scale, partials, f64::INFINITY, J_FLOOR, free)
}

/// Marks in `free` the elements whose volume at `x` is below half of [`J_FLOOR`] of their
/// rest volume (inverted ones included): the slivers [`inverts_an_element`] leaves free too.
/// Such an element at the start of a step's iterations was put there by something else than
/// the cap (an obstacle carrying the surface vertices it meets to its end-of-step pose, a
/// projection after the last step), and capping it at half its volume per iteration let it
/// approach zero volume geometrically, every Newton step cut to the same vanishing fraction:
/// in the held 10 % crush of a `fixed_corotated` box, the descending plate crushed the top
/// layer's tets in the carried start, and one tet went from J = 2·10⁻⁷ to 10⁻¹⁴ over 30
/// iterations; the iterations ran out on 24 of 70 steps. Elements the iterations bring under
/// the floor stay capped: freeing every sliver let 61 tets invert in one step of the ±10 m/s
/// head-on crash (at most 4 do).
pub fn crushed_below_half_floor(elems: &ElementSet, x: &[Vector3<f64>], free: &mut [bool]) {
    use crate::mesh::signed_volume;
    for ((f, t), &rest) in free.iter_mut().zip(&elems.tets).zip(&elems.volume) {
        *f = signed_volume(&t.map(|i| x[i as usize])) < 0.5 * J_FLOOR * rest;
    }
}

/// The smallest first root over the elements of `6 V(t) − floor`, the floor
/// `6 j_floor V_rest` (at most half of `6 V(0)`); `at_inverted` for an element whose volume
/// at `x` is already ≤ 0 or that `free` marks (empty: none).
#[allow(clippy::too_many_arguments)]
fn capped_step(
    elems: &ElementSet,
    x: &[Vector3<f64>],
    d: &[Vector3<f64>],
    scale: f64,
    partials: &mut [f64],
    at_inverted: f64,
    j_floor: f64,
    free: &[bool],
) -> f64 {
    let n = elems.len();
    par::chunked(n, par::PAR_MIN, partials, |range| {
        range
            .map(|e| {
                let tet = elems.tets[e];
                let xs = tet.map(|i| x[i as usize]);
                let ds = tet.map(|i| scale * d[i as usize]);
                let c = volume_cubic(&xs, &ds);
                if c[0] <= 0.0 || free.get(e) == Some(&true) {
                    at_inverted
                } else {
                    // `volume_cubic` is scaled by 6.
                    let floor = (6.0 * j_floor * elems.volume[e]).min(0.5 * c[0]);
                    first_root_in_unit([c[0] - floor, c[1], c[2], c[3]])
                }
            })
            .fold(f64::INFINITY, f64::min)
    });
    partials[..par::n_chunks(n)]
        .iter()
        .fold(f64::INFINITY, |m, &p| m.min(p))
}

/// Whether some element with a positive volume at `from` has a volume ≤ 0 at `to`: the check
/// a line search makes on the trial positions themselves, after the cubic's cap. The cap alone
/// is not enough: for a direction many orders of magnitude longer than the element (a Newton
/// direction in a stalled crash), the cubic's coefficients cancel, and the root found can lie
/// past the true one (the ±10 m/s tube crash at dt 10 ms inverted tets on steps of 10⁻¹⁶ of
/// its direction).
///
/// Only elements at or above half of [`J_FLOOR`] at `from` count: those the cap keeps above
/// the floor. An element already crushed further (a sliver, or one a projection after the
/// step left there) is as free as before: refusing every trial that flips it by round-off
/// stalled Newton (the snapping torus kept 36 % of its steps unconverged).
pub fn inverts_an_element(elems: &ElementSet, from: &[Vector3<f64>], to: &[Vector3<f64>]) -> bool {
    use crate::mesh::signed_volume;
    (elems.tets.iter().zip(&elems.volume)).any(|(t, &rest)| {
        signed_volume(&t.map(|i| to[i as usize])) <= 0.0
            && signed_volume(&t.map(|i| from[i as usize])) >= 0.5 * J_FLOOR * rest
    })
}

/// The first element (lowest index) whose signed volume at `x` is ≤ 0, with its
/// current/rest volume ratio.
pub fn first_nonpositive(elems: &ElementSet, x: &[Vector3<f64>]) -> Option<(usize, f64)> {
    (0..elems.len()).find_map(|e| {
        let v = crate::mesh::signed_volume(&elems.tets[e].map(|i| x[i as usize]));
        (v <= 0.0 || v.is_nan()).then(|| (e, v / elems.volume[e]))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fem::material::test_support::Lcg;
    use crate::mesh::{signed_volume, TetMesh};

    #[test]
    fn first_root_of_known_cubics() {
        // (1 − 2t): root ½.
        assert!((first_root_in_unit([1.0, -2.0, 0.0, 0.0]) - 0.5).abs() < 1e-15);
        // (1 − t)(1 − 3t)(1 + t) = 1 − 3t − t² + 3t³: first root ⅓.
        let r = first_root_in_unit([1.0, -3.0, -1.0, 3.0]);
        assert!((r - 1.0 / 3.0).abs() < 1e-14, "{r}");
        // A dip that stays positive: (t − ½)² + 0.01 has no root.
        assert_eq!(first_root_in_unit([0.26, -1.0, 1.0, 0.0]), f64::INFINITY);
        // A dip through zero and back: (t − 0.4)(t − 0.6) = 0.24 − t + t²: first root 0.4.
        assert!((first_root_in_unit([0.24, -1.0, 1.0, 0.0]) - 0.4).abs() < 1e-14);
        // Positive throughout, root beyond 1.
        assert_eq!(first_root_in_unit([1.0, -0.5, 0.0, 0.0]), f64::INFINITY);
    }

    #[test]
    fn the_cap_matches_sampled_volumes() {
        // Random tets and motions: the volume is positive before the reported root and
        // reaches zero at it (sampled), and no root is missed by sampling.
        let mut rng = Lcg(42);
        let v = |rng: &mut Lcg| Vector3::new(rng.uniform(), rng.uniform(), rng.uniform());
        for _ in 0..2000 {
            let mut x = [Vector3::zeros(), Vector3::x(), Vector3::y(), Vector3::z()];
            for p in &mut x {
                *p += 0.2 * v(&mut rng);
            }
            let d = [v(&mut rng), v(&mut rng), v(&mut rng), v(&mut rng)].map(|p| 2.5 * p);
            let at = |t: f64| signed_volume(&[0, 1, 2, 3].map(|k| x[k] + t * d[k]));
            let root = first_root_in_unit(volume_cubic(&x, &d));
            let samples = 400;
            let first_sampled = (1..=samples)
                .map(|k| k as f64 / samples as f64)
                .find(|&t| at(t) <= 0.0);
            if root.is_finite() {
                assert!(at(root * (1.0 - 1e-9)) > 0.0 || root < 1e-12);
                assert!(at(root + 1e-9) <= 1e-12);
                if let Some(t) = first_sampled {
                    assert!(root <= t + 1e-12, "root {root} after sampled {t}");
                }
            } else {
                assert!(
                    first_sampled.is_none(),
                    "missed a root at {first_sampled:?}"
                );
            }
        }
    }

    #[test]
    fn a_trial_inverting_a_healthy_tet_is_caught_and_a_crushed_slivers_flip_is_not() {
        let rest = vec![Vector3::zeros(), Vector3::x(), Vector3::y(), Vector3::z()];
        let mesh = TetMesh::new(rest.clone(), vec![[0, 1, 2, 3]]).unwrap();
        let elems = ElementSet::new(&mesh);
        let at = |z: f64| {
            let mut x = rest.clone();
            x[3].z = z;
            x
        };
        // J = z: from 1 (healthy) through the base.
        assert!(inverts_an_element(&elems, &at(1.0), &at(-0.1)));
        assert!(inverts_an_element(&elems, &at(0.6 * J_FLOOR), &at(0.0)));
        // Not inverted at the trial, or already under half the floor (left free), or already
        // inverted: not counted.
        assert!(!inverts_an_element(&elems, &at(1.0), &at(1e-9)));
        assert!(!inverts_an_element(&elems, &at(0.4 * J_FLOOR), &at(-1e-9)));
        assert!(!inverts_an_element(&elems, &at(-0.1), &at(-0.2)));
    }

    #[test]
    fn the_body_cap_is_the_smallest_tet_root() {
        let positions = vec![
            Vector3::zeros(),
            Vector3::x(),
            Vector3::y(),
            Vector3::z(),
            Vector3::new(1.0, 1.0, 1.0),
        ];
        let mesh = TetMesh::new(positions, vec![[0, 1, 2, 3], [1, 2, 3, 4]]).unwrap();
        let elems = ElementSet::new(&mesh);
        let x = mesh.positions.clone();
        // Vertex 3 moves down through the base of tet 0 at 2 · 2t = 1, i.e. t = ¼; tet 1
        // (vertex 3 moving away from its opposite face) does not invert.
        let mut d = vec![Vector3::zeros(); 5];
        d[3] = Vector3::new(0.0, 0.0, -2.0);
        let mut partials = vec![0.0; par::n_chunks(elems.len())];
        let t = max_feasible_step(&elems, &x, &d, 2.0, &mut partials);
        assert!((t - 0.25).abs() < 1e-12, "{t}");
        assert!(first_nonpositive(&elems, &x).is_none());
        let moved: Vec<_> = x.iter().zip(&d).map(|(p, q)| p + 0.6 * q).collect();
        assert_eq!(first_nonpositive(&elems, &moved).map(|(e, _)| e), Some(0));
        // Already inverted: no step at all.
        assert_eq!(
            max_feasible_step(&elems, &moved, &d, 1.0, &mut partials),
            0.0
        );
        // Keeping the positive ones above the floor: tet 0's volume falls linearly to zero
        // at t = ¼, so to J_FLOOR of its rest volume at ¼ (1 − J_FLOOR); from the inverted
        // state, tet 0 is free and only tet 1 limits the step.
        let t = max_step_keeping_positive(&elems, &x, &d, 2.0, &mut partials, &[]);
        assert!((t - 0.25 * (1.0 - J_FLOOR)).abs() < 1e-12, "{t}");
        let rest1 = elems.volume[1];
        let ratio1 = |x: &[Vector3<f64>], d: &[Vector3<f64>], t: f64| {
            signed_volume(&[1, 2, 3, 4].map(|k| x[k] + t * d[k])) / rest1
        };
        // (Vertex 3, at z = −0.2, reaches tet 1's face plane x + y − z = 1 at z = −1, i.e. at
        // t = 0.4; the floor comes just before.)
        let t = max_step_keeping_positive(&elems, &moved, &d, 1.0, &mut partials, &[]);
        assert!(t < 0.4 && t > 0.39, "{t}");
        assert!((ratio1(&moved, &d, t) - J_FLOOR).abs() < 1e-12);
        let mut squash = vec![Vector3::zeros(); 5];
        squash[4] = Vector3::new(-2.0, -2.0, -2.0); // through the face at t = ⅔
        let t = max_step_keeping_positive(&elems, &moved, &squash, 1.0, &mut partials, &[]);
        assert!(t < 2.0 / 3.0 && t > 0.66, "{t}");
        assert!((ratio1(&moved, &squash, t) - J_FLOOR).abs() < 1e-12);
        let tet1 = |t: f64| ratio1(&moved, &squash, t) - J_FLOOR;
        assert!(tet1(0.0) > 0.0 && tet1(t * (1.0 - 1e-9)) > 0.0 && tet1(t + 1e-9) <= 1e-12);
        // An element already under the floor may lose at most half its volume in one step;
        // tet 0's ratio along d from x is 1 − 2s.
        let j = |from: &[Vector3<f64>], t: f64| {
            signed_volume(&[0, 1, 2, 3].map(|k| from[k] + t * d[k])) / elems.volume[0]
        };
        let at_ratio = |r: f64| -> Vec<Vector3<f64>> {
            x.iter()
                .zip(&d)
                .map(|(p, q)| p + 0.5 * (1.0 - r) * q)
                .collect()
        };
        let sliver = at_ratio(0.4 * J_FLOOR);
        let t = max_step_keeping_positive(&elems, &sliver, &d, 1.0, &mut partials, &[]);
        assert!(
            (j(&sliver, 0.0) - 0.4 * J_FLOOR).abs() < 1e-12
                && (j(&sliver, t) - 0.2 * J_FLOOR).abs() < 1e-12,
            "{} {}",
            j(&sliver, 0.0),
            j(&sliver, t)
        );
        // Marked free (it is under half the floor, tet 1 is not), it passes through zero
        // volume, and only tet 1, whose volume reaches zero at s = 1 from x, limits the step.
        let mut free = vec![false; 2];
        crushed_below_half_floor(&elems, &sliver, &mut free);
        assert_eq!(free, [true, false]);
        let t = max_step_keeping_positive(&elems, &sliver, &d, 1.0, &mut partials, &free);
        assert!(
            t > 0.49 && t < 0.5 && j(&sliver, t) < 0.0,
            "{t} {}",
            j(&sliver, t)
        );
        crushed_below_half_floor(&elems, &at_ratio(0.6 * J_FLOOR), &mut free);
        assert_eq!(free, [false, false]);
    }
}
