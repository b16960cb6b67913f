//! The polar rotation by Newton's method on the rotation itself, warm-started from a nearby
//! rotation, for one element ([`rotation_near`]) or for every element of a body, several at a
//! time ([`update_rotations_near`]).
//!
//! **Why several at a time.** One call is a chain of dependent steps (`RᵀF`, a 3×3 solve with
//! a division, the Cayley map with another, `R Q`), twice per call on a warm start: about
//! 130 ns per element on the bench bars, mostly waiting on that chain rather than on the
//! ~300 flops, and one element's instructions fill the out-of-order window so that the next
//! element's chain does not start early. [`update_rotations_near`] runs [`LANES`] elements'
//! iterations in lockstep — each iteration computes every lane's step, straight-line, then
//! decides per lane — so the independent chains overlap. Every lane performs exactly the
//! operations of [`rotation_near`] on its own element (a lane that has converged keeps its
//! answer; the steps computed for it afterwards are discarded), so the result is bit for bit
//! that of one call per element, whatever the grouping or thread count (unit-tested).

use super::rotation;
use crate::linalg::par;
use nalgebra::Matrix3;
use rayon::prelude::*;

/// Accept the update whose half-angle vector `h` has `|h|² <` this: convergence is quadratic,
/// so what remains after it is round-off.
const ACCEPT_HH: f64 = 2.5e-15;
/// Newton iterations before the robust path decides.
const MAX_ITERS: usize = 6;
/// Elements per lockstep group in [`update_rotations_near`].
pub const LANES: usize = 4;

/// The polar rotation of `f`, by Newton's method on the rotation itself, started from a nearby
/// rotation `r0` (the element's rotation at the previous step).
///
/// With `G = RᵀF = S + A` (symmetric + skew), the update `R ← R exp(W)` makes `exp(W)ᵀG`
/// symmetric to first order when `(tr S · I − S) w = 2 axial(A)` — the identity behind the
/// corotational tangent (`RᵀdF − dFᵀR = WS + SW`). The update is applied with the Cayley map,
/// which keeps `R` orthogonal. Convergence is quadratic in the distance to the answer, not in
/// the stretch, so a warm start one time step away needs 2–3 cheap iterations where the
/// Higham iteration needs 5–8. The result is accepted only when `RᵀF` ends symmetric positive
/// definite (which defines the polar rotation for `det F > 0`); otherwise [`rotation`] decides.
pub fn rotation_near(f: &Matrix3<f64>, r0: &Matrix3<f64>) -> Matrix3<f64> {
    let mut r = [*r0];
    if newton::<1>(&[*f], &mut r)[0] {
        r[0]
    } else {
        rotation(f)
    }
}

/// Sets every `rotations[e]` to the polar rotation of `deformation(e)`, warm-started from its
/// current value: [`rotation_near`] for each element (the same bits), `LANES` elements at a
/// time (see the module notes); in parallel above [`par::PAR_MIN`] elements.
pub fn update_rotations_near(
    rotations: &mut [Matrix3<f64>],
    deformation: impl Fn(usize) -> Matrix3<f64> + Sync,
) {
    if rotations.len() < par::PAR_MIN {
        for (c, run) in rotations.chunks_mut(RUN).enumerate() {
            rotations_run(c * RUN, run, &deformation);
        }
    } else {
        rotations
            .par_chunks_mut(RUN)
            .enumerate()
            .for_each(|(c, run)| rotations_run(c * RUN, run, &deformation));
    }
}

/// Elements per call of [`rotations_run`] (a multiple of [`LANES`]).
const RUN: usize = 256;

/// Rotations of elements `e0..e0 + run.len()`, [`LANES`] at a time: compiled for the baseline
/// and for AVX2, chosen at run time ([`crate::isa`]; the same bits).
fn rotations_run<D: Fn(usize) -> Matrix3<f64>>(
    e0: usize,
    run: &mut [Matrix3<f64>],
    deformation: &D,
) {
    #[cfg(target_arch = "x86_64")]
    if crate::isa::avx2() {
        #[target_feature(enable = "avx2")]
        unsafe fn avx2<D: Fn(usize) -> Matrix3<f64>>(
            e0: usize,
            run: &mut [Matrix3<f64>],
            deformation: &D,
        ) {
            rotations_loop(e0, run, deformation)
        }
        // SAFETY: the CPU has AVX2 (`isa::avx2`).
        return unsafe { avx2(e0, run, deformation) };
    }
    rotations_loop(e0, run, deformation)
}

#[inline(always)]
fn rotations_loop<D: Fn(usize) -> Matrix3<f64>>(
    e0: usize,
    run: &mut [Matrix3<f64>],
    deformation: &D,
) {
    for (g, chunk) in run.chunks_mut(LANES).enumerate() {
        let e0 = e0 + g * LANES;
        if let Ok(chunk) = <&mut [Matrix3<f64>; LANES]>::try_from(&mut *chunk) {
            let mut f = [Matrix3::zeros(); LANES];
            for (l, fl) in f.iter_mut().enumerate() {
                *fl = deformation(e0 + l);
            }
            let accepted = newton(&f, chunk);
            for ((r, f), ok) in chunk.iter_mut().zip(&f).zip(accepted) {
                if !ok {
                    *r = rotation(f);
                }
            }
        } else {
            // The last, shorter group.
            for (l, r) in chunk.iter_mut().enumerate() {
                *r = rotation_near(&deformation(e0 + l), r);
            }
        }
    }
}

/// The Newton iteration on `N` elements in lockstep: lane `l` starts from `r[l]` and ends
/// there with the accepted rotation (`true`), or `false` where the robust path must decide.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // the lane index ties five arrays together
fn newton<const N: usize>(f: &[Matrix3<f64>; N], r: &mut [Matrix3<f64>; N]) -> [bool; N] {
    // tr S·I − S is positive definite when S is: a small or negative determinant means the
    // element is far from the warm start, degenerate or inverted.
    let mut min_det = [0.0; N];
    for (m, f) in min_det.iter_mut().zip(f) {
        let scale2 = f.norm_squared();
        *m = 1e-6 * scale2 * scale2.sqrt();
    }
    let mut accepted = [false; N];
    let mut active = [true; N];
    let mut steps = [Step::ZERO; N];
    for _ in 0..MAX_ITERS {
        // Every lane's step, with no branch between them: independent chains to overlap.
        for ((s, r), f) in steps.iter_mut().zip(r.iter()).zip(f) {
            *s = step(r, f);
        }
        let mut any = false;
        for l in 0..N {
            if !active[l] {
                continue;
            }
            let s = &steps[l];
            if s.det.is_nan() || s.det <= min_det[l] {
                active[l] = false;
                continue;
            }
            r[l] = s.r;
            if s.hh < ACCEPT_HH {
                // Quadratic convergence: the remaining error is below round-off. Accept if S
                // is positive definite.
                active[l] = false;
                accepted[l] = positive_definite(&s.s);
                continue;
            }
            any = true;
        }
        if !any {
            break;
        }
    }
    accepted
}

/// What one Newton step from `r` gives: the updated rotation, the determinant of `tr S·I − S`
/// the step divided by, `|h|²` of the Cayley update, and `S = sym(RᵀF)` (`s00, s11, s22,
/// s01, s02, s12`). [`step`] is straight-line code (no branch), so that lanes interleave.
#[derive(Clone, Copy)]
struct Step {
    r: Matrix3<f64>,
    det: f64,
    hh: f64,
    s: [f64; 6],
}

impl Step {
    const ZERO: Self = Self {
        r: Matrix3::new(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0),
        det: 0.0,
        hh: 0.0,
        s: [0.0; 6],
    };
}

/// One Newton step from `r` toward the polar rotation of `f` (see [`Step`]).
#[inline(always)]
fn step(r: &Matrix3<f64>, f: &Matrix3<f64>) -> Step {
    let g = r.tr_mul(f);
    let (s00, s11, s22) = (g[(0, 0)], g[(1, 1)], g[(2, 2)]);
    let s01 = 0.5 * (g[(0, 1)] + g[(1, 0)]);
    let s02 = 0.5 * (g[(0, 2)] + g[(2, 0)]);
    let s12 = 0.5 * (g[(1, 2)] + g[(2, 1)]);
    // b = 2 axial(skew G)
    let b = [
        g[(2, 1)] - g[(1, 2)],
        g[(0, 2)] - g[(2, 0)],
        g[(1, 0)] - g[(0, 1)],
    ];
    // m = tr(S) I − S, solved by cofactors (symmetric).
    let (m00, m11, m22) = (s11 + s22, s00 + s22, s00 + s11);
    let (m01, m02, m12) = (-s01, -s02, -s12);
    let c00 = m11 * m22 - m12 * m12;
    let c01 = m02 * m12 - m01 * m22;
    let c02 = m01 * m12 - m02 * m11;
    let c11 = m00 * m22 - m02 * m02;
    let c12 = m01 * m02 - m00 * m12;
    let c22 = m00 * m11 - m01 * m01;
    let det = m00 * c00 + m01 * c01 + m02 * c02;
    let inv = 1.0 / det;
    let w = [
        (c00 * b[0] + c01 * b[1] + c02 * b[2]) * inv,
        (c01 * b[0] + c11 * b[1] + c12 * b[2]) * inv,
        (c02 * b[0] + c12 * b[1] + c22 * b[2]) * inv,
    ];
    // Cayley map with h = w/2: Q = [(1 − |h|²) I + 2 [h]× + 2 h hᵀ] / (1 + |h|²).
    let h = nalgebra::Vector3::new(0.5 * w[0], 0.5 * w[1], 0.5 * w[2]);
    let hh = h.norm_squared();
    let k = 1.0 / (1.0 + hh);
    let q = Matrix3::new(
        1.0 - hh + 2.0 * h.x * h.x,
        2.0 * (h.x * h.y - h.z),
        2.0 * (h.x * h.z + h.y),
        2.0 * (h.x * h.y + h.z),
        1.0 - hh + 2.0 * h.y * h.y,
        2.0 * (h.y * h.z - h.x),
        2.0 * (h.x * h.z - h.y),
        2.0 * (h.y * h.z + h.x),
        1.0 - hh + 2.0 * h.z * h.z,
    ) * k;
    Step {
        r: r * q,
        det,
        hh,
        s: [s00, s11, s22, s01, s02, s12],
    }
}

/// `S` positive definite, by its leading minors.
#[inline(always)]
fn positive_definite(s: &[f64; 6]) -> bool {
    let [s00, s11, s22, s01, s02, s12] = *s;
    s00 > 0.0 && s00 * s11 - s01 * s01 > 0.0 && {
        let sm = Matrix3::new(s00, s01, s02, s01, s11, s12, s02, s12, s22);
        sm.determinant() > 0.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fem::material::test_support::Lcg;
    use nalgebra::Rotation3;

    /// Deformations `F = Q S` and warm starts one step's turn away from `Q` (with a few far
    /// ones and inverted or degenerate `F`, which take the robust path).
    fn cases(n: usize, strain: f64, turn: f64, seed: u64) -> Vec<(Matrix3<f64>, Matrix3<f64>)> {
        let mut lcg = Lcg(seed);
        let mut rnd = || lcg.uniform();
        (0..n)
            .map(|k| {
                let q = Rotation3::from_euler_angles(3.0 * rnd(), 3.0 * rnd(), 3.0 * rnd())
                    .into_inner();
                let s = Matrix3::identity() + strain * Matrix3::from_fn(|_, _| rnd());
                let mut f = q * (s + s.transpose()) * 0.5;
                let spread = if k % 97 == 5 { 2.5 } else { turn };
                if k % 89 == 7 {
                    f = q * Matrix3::from_diagonal(&nalgebra::Vector3::new(1.0, 1.0, -0.3));
                }
                if k % 83 == 3 {
                    f = Matrix3::zeros();
                }
                let r0 = q * Rotation3::from_euler_angles(
                    spread * rnd(),
                    spread * rnd(),
                    spread * rnd(),
                )
                .into_inner();
                (f, r0)
            })
            .collect()
    }

    /// The lockstep groups give every element the bits of one `rotation_near` call, on one
    /// thread (chunks of [`LANES`] and a shorter last group) and in parallel.
    #[test]
    fn lanes_give_the_bits_of_single_calls() {
        for (n, strain, turn) in [(1003, 1e-2, 1e-2), (9000, 0.3, 0.3), (5, 1e-3, 1e-3)] {
            let cs = cases(n, strain, turn, 7 + n as u64);
            let single: Vec<_> = cs.iter().map(|(f, r0)| rotation_near(f, r0)).collect();
            let mut grouped: Vec<_> = cs.iter().map(|c| c.1).collect();
            update_rotations_near(&mut grouped, |e| cs[e].0);
            for (e, (a, b)) in single.iter().zip(&grouped).enumerate() {
                assert_eq!(a.as_slice(), b.as_slice(), "element {e} of {n}");
            }
            // And the answer is the polar rotation.
            for (e, ((f, _), r)) in cs.iter().zip(&grouped).enumerate() {
                assert!((r - rotation(f)).norm() < 1e-12, "element {e} of {n}");
            }
        }
    }

    /// Times one call per element (the loop `update_frames` ran before) against the lockstep
    /// groups, on 4000 elements (below `par::PAR_MIN`: both on the calling thread) with warm
    /// starts one step away, interleaved. Run with `cargo test --release -p supple --lib
    /// polar::near::tests::time_lanes -- --ignored --nocapture`.
    #[test]
    #[ignore]
    fn time_lanes() {
        for (strain, turn) in [(1e-3, 1e-3), (1e-2, 1e-2)] {
            let cs = cases(4000, strain, turn, 3);
            let r0: Vec<_> = cs.iter().map(|c| c.1).collect();
            let (mut single, mut grouped) = (vec![], vec![]);
            let mut rs = r0.clone();
            for _ in 0..101 {
                rs.copy_from_slice(&r0);
                let t = std::time::Instant::now();
                par::for_each_mut(&mut rs, |e, r| *r = rotation_near(&cs[e].0, r));
                single.push(t.elapsed().as_secs_f64() * 1e9 / cs.len() as f64);
                std::hint::black_box(&rs);
                rs.copy_from_slice(&r0);
                let t = std::time::Instant::now();
                update_rotations_near(&mut rs, |e| cs[e].0);
                grouped.push(t.elapsed().as_secs_f64() * 1e9 / cs.len() as f64);
                std::hint::black_box(&rs);
            }
            single.sort_by(f64::total_cmp);
            grouped.sort_by(f64::total_cmp);
            println!(
                "strain {strain:e}, turn {turn:e}: one call per element {:.1} ns (min {:.1}), {LANES} lanes {:.1} ns (min {:.1}) per element, medians of 101",
                single[50], single[0], grouped[50], grouped[0]
            );
        }
    }
}
