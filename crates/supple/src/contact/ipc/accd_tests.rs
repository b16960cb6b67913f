//! Tests of [`super`] (ACCD): tightness head-on, conservativeness against dense sampling on
//! seeded random motions, degenerate motions, and the signed-distance variant.

use super::*;

fn with_xi(xi: f64) -> AccdSettings {
    AccdSettings {
        min_separation: xi,
        ..AccdSettings::default()
    }
}

/// `exact` is the exact time at which the distance reaches ξ: `t` must be below it, and with
/// `s = 0.1` above 0.8 of it.
fn assert_tight(t: f64, exact: f64) {
    assert!(t < exact, "t = {t} is not below the impact time {exact}");
    assert!(t > 0.8 * exact, "t = {t} is not tight: impact at {exact}");
}

/// xorshift64* (Vigna 2016), seeded.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in `[0, 1)`.
    fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
    fn v3(&mut self, r: f64) -> V3 {
        V3::new(self.range(-r, r), self.range(-r, r), self.range(-r, r))
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    PointTriangle,
    EdgeEdge,
    PointEdge,
    PointPoint,
}

impl Kind {
    const ALL: [Kind; 4] = [
        Kind::PointTriangle,
        Kind::EdgeEdge,
        Kind::PointEdge,
        Kind::PointPoint,
    ];
    /// Number of vertices, and how many belong to the first primitive.
    fn sizes(self) -> (usize, usize) {
        match self {
            Kind::PointTriangle => (4, 1),
            Kind::EdgeEdge => (4, 2),
            Kind::PointEdge => (3, 1),
            Kind::PointPoint => (2, 1),
        }
    }
}

/// A moving pair: vertex `i` at `x[i] + τ dx[i]` (the first `kind.sizes().0` are used).
#[derive(Clone, Copy, Debug)]
struct Pair {
    kind: Kind,
    x: [V3; 4],
    dx: [V3; 4],
}

impl Pair {
    fn new(kind: Kind, x: &[V3], dx: &[V3]) -> Self {
        let mut pair = Pair {
            kind,
            x: [V3::zeros(); 4],
            dx: [V3::zeros(); 4],
        };
        pair.x[..x.len()].copy_from_slice(x);
        pair.dx[..dx.len()].copy_from_slice(dx);
        pair
    }

    /// Distance at time τ, from the absolute (not mean-removed) motion.
    fn dist_at(&self, tau: f64) -> f64 {
        let y: [V3; 4] = std::array::from_fn(|i| self.x[i] + tau * self.dx[i]);
        match self.kind {
            Kind::PointTriangle => point_triangle(&y[0], &y[1], &y[2], &y[3]).0,
            Kind::EdgeEdge => segment_segment(&y[0], &y[1], &y[2], &y[3]).0,
            Kind::PointEdge => point_segment(&y[0], &y[1], &y[2]).0,
            Kind::PointPoint => (y[0] - y[1]).norm(),
        }
    }

    fn accd(&self, st: &AccdSettings) -> f64 {
        let (x, d) = (&self.x, &self.dx);
        match self.kind {
            Kind::PointTriangle => {
                point_triangle_accd(&x[0], &x[1], &x[2], &x[3], &d[0], &d[1], &d[2], &d[3], st)
            }
            Kind::EdgeEdge => {
                edge_edge_accd(&x[0], &x[1], &x[2], &x[3], &d[0], &d[1], &d[2], &d[3], st)
            }
            Kind::PointEdge => point_edge_accd(&x[0], &x[1], &x[2], &d[0], &d[1], &d[2], st),
            Kind::PointPoint => point_point_accd(&x[0], &x[1], &d[0], &d[1], st),
        }
    }

    /// A Lipschitz constant of `dist_at` that does not rely on the module: `Σ ‖Δx_i‖`.
    fn lipschitz(&self) -> f64 {
        self.dx[..self.kind.sizes().0]
            .iter()
            .map(|d| d.norm())
            .sum()
    }
}

/// Distances at `n + 1` evenly spaced times of `[a, b]`.
fn samples(pair: &Pair, a: f64, b: f64, n: usize) -> impl Iterator<Item = (f64, f64)> + '_ {
    (0..=n).map(move |k| {
        let tau = a + (b - a) * k as f64 / n as f64;
        (tau, pair.dist_at(tau))
    })
}

/// A random pair; half of them are aimed so that a point of the first primitive passes
/// through a point of the second at a random time in (0.1, 0.9), i.e. they surely collide.
fn random_pair(rng: &mut Rng, kind: Kind, speed: f64) -> Pair {
    let (n, split) = kind.sizes();
    let x: Vec<V3> = (0..n).map(|_| rng.v3(1.0)).collect();
    let mut dx: Vec<V3> = (0..n).map(|_| rng.v3(speed)).collect();
    if rng.unit() < 0.5 {
        let tau = rng.range(0.1, 0.9);
        let at = |i: usize, dx: &[V3]| x[i] + tau * dx[i];
        let combo = |w: &[f64], range: std::ops::Range<usize>, dx: &[V3]| {
            range.zip(w).map(|(i, w)| *w * at(i, dx)).sum::<V3>()
        };
        let weights = |rng: &mut Rng, k: usize| {
            let w: Vec<f64> = (0..k).map(|_| rng.unit() + 1e-3).collect();
            let sum: f64 = w.iter().sum();
            w.into_iter().map(|w| w / sum).collect::<Vec<f64>>()
        };
        let (wa, wb) = (weights(rng, split), weights(rng, n - split));
        let target = combo(&wb, split..n, &dx);
        let shift = (target - combo(&wa, 0..split, &dx)) / tau;
        for d in &mut dx[..split] {
            *d += shift;
        }
    }
    Pair::new(kind, &x, &dx)
}

#[test]
fn default_settings() {
    let st = AccdSettings::default();
    assert_eq!(
        st,
        AccdSettings {
            s: 0.1,
            min_separation: 0.0,
            max_iterations: 10_000,
            t_max: 1.0
        }
    );
}

/// The unit right triangle in z = 0.
fn triangle() -> [V3; 3] {
    [V3::zeros(), V3::x(), V3::y()]
}

#[test]
fn point_triangle_head_on_is_conservative_and_tight() {
    let [a, b, c] = triangle();
    let z = V3::zeros();
    let p = V3::new(0.2, 0.2, 1.0);
    let dp = V3::new(0.0, 0.0, -2.0); // through the plane at τ = 0.5, ends as far as it began
    for xi in [0.0, 0.1] {
        let t = point_triangle_accd(&p, &a, &b, &c, &dp, &z, &z, &z, &with_xi(xi));
        assert_tight(t, (1.0 - xi) / 2.0);
        // the triangle moving up instead
        let up = -dp;
        let t = point_triangle_accd(&p, &a, &b, &c, &z, &up, &up, &up, &with_xi(xi));
        assert_tight(t, (1.0 - xi) / 2.0);
    }
    // a smaller s is tighter
    let st = AccdSettings {
        s: 0.01,
        ..AccdSettings::default()
    };
    let t = point_triangle_accd(&p, &a, &b, &c, &dp, &z, &z, &z, &st);
    assert!(t < 0.5 && t > 0.98 * 0.5, "{t}");
}

#[test]
fn edge_edge_point_edge_point_point_head_on() {
    let z = V3::zeros();
    let down = V3::new(0.0, 0.0, -2.0);
    let (ea0, ea1) = (V3::new(-1.0, 0.0, 0.0), V3::new(1.0, 0.0, 0.0));
    let (eb0, eb1) = (V3::new(0.0, -1.0, 1.0), V3::new(0.0, 1.0, 1.0));
    for xi in [0.0, 0.1] {
        let st = with_xi(xi);
        let t = edge_edge_accd(&ea0, &ea1, &eb0, &eb1, &z, &z, &down, &down, &st);
        assert_tight(t, (1.0 - xi) / 2.0);
        // point (0.3, 1, 0) onto the x-axis edge [0, 1] at speed 3
        let (p, dp) = (V3::new(0.3, 1.0, 0.0), V3::new(0.0, -3.0, 0.0));
        let t = point_edge_accd(&p, &z, &V3::x(), &dp, &z, &z, &st);
        assert_tight(t, (1.0 - xi) / 3.0);
        // two points 1 apart, closing at speed 2
        let t = point_point_accd(&z, &V3::x(), &V3::x(), &-V3::x(), &st);
        assert_tight(t, (1.0 - xi) / 2.0);
    }
}

#[test]
fn t_max_is_respected_and_tested_at_t_max() {
    let [a, b, c] = triangle();
    let z = V3::zeros();
    let (p, dp) = (V3::new(0.2, 0.2, 1.0), V3::new(0.0, 0.0, -2.0));
    let run = |t_max: f64| {
        let st = AccdSettings {
            t_max,
            ..AccdSettings::default()
        };
        point_triangle_accd(&p, &a, &b, &c, &dp, &z, &z, &z, &st)
    };
    // impact at 0.5: an interval that ends before it is clear ...
    assert_eq!(run(0.4), 0.4);
    // ... one that ends just past it is not, though the distance at t_max is positive
    let t = run(0.52);
    assert!(t < 0.5 && t > 0.4, "{t}");
    assert_eq!(run(0.0), 0.0);
    assert_eq!(run(f64::NAN), 0.0);
}

#[test]
fn random_motions_never_get_closer_than_the_minimum_separation() {
    const N_BRUTE: usize = 4000;
    const N_CHECK: usize = 1000;
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for kind in Kind::ALL {
        let (mut hits, mut cases, mut ratio_sum, mut ratio_min) = (0, 0, 0.0, f64::INFINITY);
        for case in 0..400 {
            let speed = [1.0, 4.0, 100.0][case % 3];
            let xi = [0.0, 0.01, 0.05][(case / 3) % 3];
            let s = [0.1, 0.1, 0.3][(case / 9) % 3];
            let t_max = if case % 5 == 4 { 0.6 } else { 1.0 };
            let st = AccdSettings {
                s,
                min_separation: xi,
                max_iterations: u32::MAX, // so that t < t_max always means an approach
                t_max,
            };
            let pair = random_pair(&mut rng, kind, speed);
            let t = pair.accd(&st);
            let d0 = pair.dist_at(0.0);
            let ctx = format!("{kind:?} case {case}: t = {t}, d0 = {d0}, xi = {xi}, {pair:?}");
            assert!((0.0..=t_max).contains(&t), "{ctx}");
            if d0 <= xi {
                assert_eq!(t, 0.0, "{ctx}");
                continue;
            }
            cases += 1;
            assert!(t > 0.0, "{ctx}");
            // safe: dense samples of [0, t] stay above ξ (and above 0)
            for (tau, d) in samples(&pair, 0.0, t, N_CHECK) {
                assert!(d > xi && d > 0.0, "{ctx}: d({tau}) = {d}");
            }
            // conservative: below the first sampled time within ξ
            let brute = samples(&pair, 0.0, t_max, N_BRUTE).find(|&(_, d)| d <= xi);
            if let Some((toi, _)) = brute {
                assert!(t <= toi, "{ctx}: brute-force impact at {toi}");
                hits += 1;
                let ratio = t / toi;
                ratio_sum += ratio;
                ratio_min = ratio_min.min(ratio);
            }
            let gap = s * (d0 - xi);
            let tol = 1e-9 * (1.0 + speed);
            if t < t_max {
                // the gap left at t ...
                assert!(pair.dist_at(t) - xi >= gap - tol, "{ctx}");
                // ... and the pair really comes within ξ + gap after t (the minimum over
                // samples h apart exceeds the true one by at most L h / 2)
                let h = (t_max - t) / N_CHECK as f64;
                let min = samples(&pair, t, t_max, N_CHECK)
                    .map(|(_, d)| d)
                    .fold(f64::INFINITY, f64::min);
                let slack = 0.5 * pair.lipschitz() * h + tol;
                assert!(min - xi < gap + slack, "{ctx}: min distance after t {min}");
            }
        }
        assert!(
            hits * 4 >= cases,
            "{kind:?}: only {hits} of {cases} cases collide"
        );
        eprintln!(
            "{kind:?}: {cases} cases, {hits} collide, t / brute toi: mean {:.3}, min {:.3}",
            ratio_sum / hits as f64,
            ratio_min
        );
    }
}

#[test]
fn parallel_edges_sliding_along_each_other() {
    let (ea0, ea1) = (V3::zeros(), V3::x());
    let (eb0, eb1) = (V3::new(0.0, 0.1, 0.0), V3::new(1.0, 0.1, 0.0));
    let z = V3::zeros();
    for slide in [0.5, -0.5, 3.0] {
        let d = V3::new(slide, 0.0, 0.0);
        for xi in [0.0, 0.05] {
            let st = with_xi(xi);
            assert_eq!(
                edge_edge_accd(&ea0, &ea1, &eb0, &eb1, &z, &z, &d, &d, &st),
                1.0
            );
            // both edges sliding in opposite directions
            let h = 0.5 * d;
            let t = edge_edge_accd(&ea0, &ea1, &eb0, &eb1, &h, &h, &-h, &-h, &st);
            assert_eq!(t, 1.0);
        }
    }
}

#[test]
fn point_moving_parallel_to_the_triangle_plane() {
    let [a, b, c] = triangle();
    let z = V3::zeros();
    let (p, dp) = (V3::new(0.2, 0.2, 0.1), V3::new(0.3, 0.1, 0.0)); // stays over the interior
    for xi in [0.0, 0.05] {
        let t = point_triangle_accd(&p, &a, &b, &c, &dp, &z, &z, &z, &with_xi(xi));
        assert_eq!(t, 1.0);
    }
}

#[test]
fn zero_motion_and_rigid_translation_give_t_max() {
    let [a, b, c] = triangle();
    let p = V3::new(0.2, 0.2, 0.01);
    let st = AccdSettings {
        t_max: 0.7,
        ..AccdSettings::default()
    };
    let z = V3::zeros();
    assert_eq!(
        point_triangle_accd(&p, &a, &b, &c, &z, &z, &z, &z, &st),
        0.7
    );
    let q = V3::new(0.5, 0.01, 0.0);
    assert_eq!(edge_edge_accd(&a, &b, &c, &q, &z, &z, &z, &z, &st), 0.7);
    assert_eq!(point_edge_accd(&p, &a, &b, &z, &z, &z, &st), 0.7);
    assert_eq!(point_point_accd(&p, &a, &z, &z, &st), 0.7);
    // all vertices translated together by 10⁴ times their distance: the mean removal
    // leaves (almost) no relative motion
    let v = V3::new(100.0, -70.0, 30.0);
    let t = point_triangle_accd(&p, &a, &b, &c, &v, &v, &v, &v, &st);
    assert_eq!(t, 0.7);
    assert_eq!(edge_edge_accd(&a, &b, &c, &q, &v, &v, &v, &v, &st), 0.7);
    assert_eq!(point_edge_accd(&p, &a, &b, &v, &v, &v, &st), 0.7);
    assert_eq!(point_point_accd(&p, &a, &v, &v, &st), 0.7);
}

#[test]
fn pairs_starting_within_the_separation_give_zero() {
    let [a, b, c] = triangle();
    let up = V3::new(0.0, 0.0, 1.0);
    let z = V3::zeros();
    let on = V3::new(0.25, 0.25, 0.0);
    let st = AccdSettings::default();
    // touching, even when moving apart
    assert_eq!(point_triangle(&on, &a, &b, &c).0, 0.0);
    assert_eq!(
        point_triangle_accd(&on, &a, &b, &c, &up, &z, &z, &z, &st),
        0.0
    );
    // (0.2, 0.2, 0) is ~10⁻¹⁷ away after rounding: within the rounding floor, so in contact
    // (else, moving through the triangle, the gap test could not see the crossing)
    let on = V3::new(0.2, 0.2, 0.0);
    assert!(point_triangle(&on, &a, &b, &c).0 > 0.0);
    assert_eq!(
        point_triangle_accd(&on, &a, &b, &c, &-up, &z, &z, &z, &st),
        0.0
    );
    let above = on + 1e-9 * up; // well above the floor: the ordinary head-on answer
    assert_tight(
        point_triangle_accd(&above, &a, &b, &c, &-up, &z, &z, &z, &st),
        1e-9,
    );
    let e = V3::new(0.5, 0.0, 0.0);
    assert_eq!(
        edge_edge_accd(&a, &b, &e, &(e + up), &z, &z, &up, &up, &st),
        0.0
    );
    assert_eq!(
        point_edge_accd(&V3::new(0.5, 0.0, 0.0), &a, &b, &up, &z, &z, &st),
        0.0
    );
    assert_eq!(point_point_accd(&a, &a, &up, &z, &st), 0.0);
    // at 0.05 < ξ = 0.1
    let near = V3::new(0.2, 0.2, 0.05);
    let t = point_triangle_accd(&near, &a, &b, &c, &up, &z, &z, &z, &with_xi(0.1));
    assert_eq!(t, 0.0);
    // non-finite input
    let nan = V3::new(f64::NAN, 0.0, 0.0);
    assert_eq!(
        point_triangle_accd(&near, &a, &b, &c, &nan, &z, &z, &z, &st),
        0.0
    );
}

#[test]
fn very_fast_motion_stays_conservative() {
    let [a, b, c] = triangle();
    let z = V3::zeros();
    // 100× the size of the triangle in one step: impact at 0.01
    let (p, dp) = (V3::new(0.2, 0.2, 1.0), V3::new(0.0, 0.0, -100.0));
    let t = point_triangle_accd(&p, &a, &b, &c, &dp, &z, &z, &z, &AccdSettings::default());
    assert_tight(t, 0.01);
    // an edge sweeping across another at 100× its length
    let (eb0, eb1) = (V3::new(0.5, -1.0, 1.0), V3::new(0.5, 1.0, 1.0));
    let d = V3::new(30.0, 0.0, -100.0); // the plane z = 0 at τ = 0.01, x = 0.8 ∈ [0, 1]
    let t = edge_edge_accd(&a, &b, &eb0, &eb1, &z, &z, &d, &d, &AccdSettings::default());
    assert!(t < 0.01 && t > 0.7 * 0.01, "{t}");
}

#[test]
fn iteration_cap_returns_a_safe_step() {
    // parallel edges 0.01 apart, one sliding 50 lengths: ~2·10⁻⁴ per advancement
    let (ea0, ea1) = (V3::zeros(), V3::x());
    let (eb0, eb1) = (V3::new(0.0, 0.01, 0.0), V3::new(1.0, 0.01, 0.0));
    let (z, d) = (V3::zeros(), V3::new(50.0, 0.0, 0.0));
    let full = edge_edge_accd(&ea0, &ea1, &eb0, &eb1, &z, &z, &d, &d, &Default::default());
    assert_eq!(full, 1.0);
    let st = AccdSettings {
        max_iterations: 3,
        ..AccdSettings::default()
    };
    let t = edge_edge_accd(&ea0, &ea1, &eb0, &eb1, &z, &z, &d, &d, &st);
    let step = 0.9 * 0.01 / 50.0;
    assert!((t - 3.0 * step).abs() < 1e-12, "{t}");
}

#[test]
fn sdf_plane() {
    let plane = |x: &V3| x.z;
    let (p, dp) = (V3::new(0.3, 0.1, 1.0), V3::new(0.5, 0.0, -4.0));
    for xi in [0.0, 0.2] {
        let t = point_sdf_accd(&p, &dp, plane, &with_xi(xi));
        let exact = (1.0 - xi) / 4.0;
        assert_tight(t, exact);
        for k in 0..=1000 {
            assert!(plane(&(p + t * k as f64 / 1000.0 * dp)) > xi);
        }
    }
    // moving away, or parallel
    let st = AccdSettings::default();
    assert_eq!(point_sdf_accd(&p, &V3::new(1.0, 0.0, 2.0), plane, &st), 1.0);
    assert_eq!(point_sdf_accd(&p, &V3::new(5.0, 3.0, 0.0), plane, &st), 1.0);
    // starting below
    assert_eq!(point_sdf_accd(&-p, &dp, plane, &st), 0.0);
}

#[test]
fn sdf_sphere() {
    let (r, center) = (0.5, V3::new(0.1, -0.2, 0.3));
    let sphere = |x: &V3| (x - center).norm() - r;
    // first τ with ‖p + τ dp − center‖ = r + ξ
    let exact = |p: &V3, dp: &V3, xi: f64| {
        let (q, rr) = (p - center, r + xi);
        let (a, b, c) = (dp.norm_squared(), q.dot(dp), q.norm_squared() - rr * rr);
        (-b - (b * b - a * c).sqrt()) / a
    };
    for (offset, xi) in [(0.0, 0.0), (0.0, 0.1), (0.2, 0.0), (0.2, 0.05)] {
        let p = center + V3::new(2.0, offset, 0.0);
        let dp = V3::new(-3.0, 0.0, 0.0);
        let t = point_sdf_accd(&p, &dp, sphere, &with_xi(xi));
        assert_tight(t, exact(&p, &dp, xi));
        for k in 0..=1000 {
            assert!(sphere(&(p + t * k as f64 / 1000.0 * dp)) > xi);
        }
    }
    // passing by at distance 0.5 from the surface: the gap 0.1 · 1.74 is never reached
    let p = center + V3::new(2.0, 1.0, 0.0);
    let t = point_sdf_accd(&p, &V3::new(-4.0, 0.0, 0.0), sphere, &with_xi(0.0));
    assert_eq!(t, 1.0);
    // inside
    let t = point_sdf_accd(&center, &V3::x(), sphere, &AccdSettings::default());
    assert_eq!(t, 0.0);
    // random motions against the sphere: conservative against dense sampling
    let mut rng = Rng(12345);
    for case in 0..300 {
        let (p, dp) = (center + rng.v3(2.0), rng.v3(4.0));
        let xi = [0.0, 0.05][case % 2];
        let t = point_sdf_accd(&p, &dp, sphere, &with_xi(xi));
        let at = |k: usize, n: usize, end: f64| sphere(&(p + end * k as f64 / n as f64 * dp));
        if at(0, 1, 0.0) <= xi {
            assert_eq!(t, 0.0);
            continue;
        }
        assert!((0..=1000).all(|k| at(k, 1000, t) > xi), "case {case}");
        if let Some(k) = (0..=4000).find(|&k| at(k, 4000, 1.0) <= xi) {
            assert!(t <= k as f64 / 4000.0, "case {case}");
        }
    }
}
