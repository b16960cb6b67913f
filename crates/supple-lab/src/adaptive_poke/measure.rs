//! The comparisons of `supple experiment adaptive-poke` (Debunne et al. 2000 §5's poke against
//! a finest-only run): the sample points, the per-frame and time-averaged differences over
//! the press, and the regions they are read on.

use super::RunResult;
use nalgebra::Vector3;
use std::fmt::Write as _;

/// Frame at whose end the displacement field is sampled (t = 1.0 s: end of the hold).
pub(super) const FIELD_FRAME: usize = 49;
/// The press: frames ending in `(0, PRESS_END]` s, while the tool touches the top face.
pub(super) const PRESS_END: f64 = 1.5;
/// Top-face samples within this distance of the tool's axis (m): twice the tool's radius.
const FOOTPRINT: f64 = 0.3;
/// Radius of the contact disk at full depth, `√(r² − (r − 0.1)²)` ≈ 0.141 m: top-face samples
/// farther than this from the axis are the free rim around the tool.
const CONTACT: f64 = 0.1414;
/// Field samples closer than this to the tool's contact point (0.5, 0.5, 1) are "under the
/// tool"; the others are "away from the tool".
pub(super) const NEAR: f64 = 0.35;

/// The tool's first contact point, the centre of the top face.
pub(super) const TOOL_POINT: Vector3<f64> = Vector3::new(0.5, 0.5, 1.0);

/// Sample points of the displacement field: a 6×6×6 grid inside the cube.
pub(super) fn field_points() -> Vec<Vector3<f64>> {
    let c = |k: usize| 0.05 + 0.18 * k as f64;
    (0..216)
        .map(|k| Vector3::new(c(k % 6), c(k / 6 % 6), c(k / 36)))
        .collect()
}

/// `(‖a − b‖ / ‖b‖ over the samples with near(p) == want, max |a − b| (m))`.
pub(super) fn field_difference(
    a: &[Vector3<f64>],
    b: &[Vector3<f64>],
    want_near: bool,
) -> (f64, f64) {
    let (mut num, mut den, mut max) = (0.0, 0.0, 0.0_f64);
    for ((p, x), y) in field_points().iter().zip(a).zip(b) {
        if ((p - TOOL_POINT).norm() < NEAR) == want_near {
            num += (x - y).norm_squared();
            den += y.norm_squared();
            max = max.max((x - y).norm());
        }
    }
    ((num / den).sqrt(), max)
}

/// Samples of the top face (z = 1) within [`FOOTPRINT`] of the tool's axis: a 0.05 m grid.
pub(super) fn top_points() -> Vec<Vector3<f64>> {
    let mut out = Vec::new();
    for i in 0..=12 {
        for j in 0..=12 {
            let p = Vector3::new(0.2 + 0.05 * i as f64, 0.2 + 0.05 * j as f64, 1.0);
            if (p.xy() - Vector3::new(0.5, 0.5, 0.0).xy()).norm() <= FOOTPRINT + 1e-9 {
                out.push(p);
            }
        }
    }
    out
}

/// Whether top-face sample `p` lies on the free rim (outside the contact disk).
pub(super) fn on_rim(p: &Vector3<f64>) -> bool {
    (p.xy() - Vector3::new(0.5, 0.5, 0.0).xy()).norm() > CONTACT
}

/// The press's comparison of two runs' samples `a`, `b` (frames × points), over the points
/// with `keep(point)`: (mean over frames of `‖a − b‖ / ‖b‖`, `‖ā − b̄‖ / ‖b̄‖` of the
/// time-averaged fields, largest `|ā − b̄|` (m), `‖ā − b̄‖²` (m²)).
pub(super) fn press_difference(
    a: &[Vec<Vector3<f64>>],
    b: &[Vec<Vector3<f64>>],
    points: &[Vector3<f64>],
    keep: impl Fn(&Vector3<f64>) -> bool,
) -> (f64, f64, f64, f64) {
    let frames = a.len().min(b.len());
    let mut mean_rel = 0.0;
    let mut abar = vec![Vector3::zeros(); points.len()];
    let mut bbar = abar.clone();
    for f in 0..frames {
        let (mut num, mut den) = (0.0, 0.0);
        for (k, p) in points.iter().enumerate() {
            abar[k] += a[f][k] / frames as f64;
            bbar[k] += b[f][k] / frames as f64;
            if keep(p) {
                num += (a[f][k] - b[f][k]).norm_squared();
                den += b[f][k].norm_squared();
            }
        }
        if den > 0.0 {
            mean_rel += (num / den).sqrt() / frames as f64;
        }
    }
    let (mut num, mut den, mut max) = (0.0, 0.0, 0.0_f64);
    for (k, p) in points.iter().enumerate() {
        if keep(p) {
            num += (abar[k] - bbar[k]).norm_squared();
            den += bbar[k].norm_squared();
            max = max.max((abar[k] - bbar[k]).norm());
        }
    }
    (
        mean_rel,
        (num / den.max(f64::MIN_POSITIVE)).sqrt(),
        max,
        num,
    )
}

/// The time-averaged fields of the press of both runs at every sample (top face and
/// interior grid): `x,y,z,ua_x,ua_y,ua_z,uf_x,uf_y,uf_z`.
pub(super) fn press_mean_csv(a: &RunResult, f: &RunResult) -> String {
    let mean = |s: &[Vec<Vector3<f64>>], k: usize| {
        s.iter().map(|v| v[k]).sum::<Vector3<f64>>() / s.len().max(1) as f64
    };
    let mut csv = String::from("x,y,z,ua_x,ua_y,ua_z,uf_x,uf_y,uf_z\n");
    for (points, sa, sf) in [
        (top_points(), &a.press_top, &f.press_top),
        (field_points(), &a.press_field, &f.press_field),
    ] {
        for (k, p) in points.iter().enumerate() {
            let (ua, uf) = (mean(sa, k), mean(sf, k));
            let _ = writeln!(
                csv,
                "{},{},{},{:e},{:e},{:e},{:e},{:e},{:e}",
                p.x, p.y, p.z, ua.x, ua.y, ua.z, uf.x, uf.y, uf.z
            );
        }
    }
    csv
}

/// Measure (b) — the relative L2 difference of the press's time-averaged fields — on each
/// region, and measure (a) on the top face.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Regions {
    pub top_a: f64,
    pub top: f64,
    pub disk: f64,
    pub rim: f64,
    pub near: f64,
    pub away: f64,
}

impl Regions {
    pub const NAMES: [&'static str; 6] = [
        "top face (a)",
        "top face (b)",
        "disk (b)",
        "rim (b)",
        "interior near (b)",
        "away (b)",
    ];

    pub fn values(&self) -> [f64; 6] {
        [
            self.top_a, self.top, self.disk, self.rim, self.near, self.away,
        ]
    }
}

/// Writes the press's comparison of the adaptive run `a` with the finest-only run `f` to
/// `table` and returns it per region.
pub(super) fn press_report(a: &RunResult, f: &RunResult, table: &mut String) -> Regions {
    let top = top_points();
    let (all_mean, all_bar, all_max, all_sq) =
        press_difference(&a.press_top, &f.press_top, &top, |_| true);
    let (disk_mean, disk_bar, disk_max, disk_sq) =
        press_difference(&a.press_top, &f.press_top, &top, |p| !on_rim(p));
    let (rim_mean, rim_bar, rim_max, _) =
        press_difference(&a.press_top, &f.press_top, &top, on_rim);
    let grid = field_points();
    let near = |p: &Vector3<f64>| (p - TOOL_POINT).norm() < NEAR;
    let (near_mean, near_bar, near_max, _) =
        press_difference(&a.press_field, &f.press_field, &grid, near);
    let (away_mean, away_bar, away_max, _) =
        press_difference(&a.press_field, &f.press_field, &grid, |p| !near(p));
    let _ = writeln!(
        table,
        "\nover the press (t in (0, {PRESS_END}] s, {} frames) against finest-only — mean over \
         frames of the relative L2 difference | relative L2 difference of the time-averaged \
         fields | max difference of the time-averaged fields:",
        a.press_top.len().min(f.press_top.len())
    );
    for (name, count, (m, b, x)) in [
        (
            format!("top face under the tool (≤ {FOOTPRINT} m from its axis)"),
            top.len(),
            (all_mean, all_bar, all_max),
        ),
        (
            format!("top-face contact disk (≤ {CONTACT} m from the axis)"),
            top.iter().filter(|p| !on_rim(p)).count(),
            (disk_mean, disk_bar, disk_max),
        ),
        (
            format!("top-face rim ({CONTACT} to {FOOTPRINT} m from the axis)"),
            top.iter().filter(|p| on_rim(p)).count(),
            (rim_mean, rim_bar, rim_max),
        ),
        (
            format!("interior grid near the tool (< {NEAR} m)"),
            grid.iter().filter(|p| near(p)).count(),
            (near_mean, near_bar, near_max),
        ),
        (
            "interior grid away from the tool".to_string(),
            grid.iter().filter(|p| !near(p)).count(),
            (away_mean, away_bar, away_max),
        ),
    ] {
        let _ = writeln!(
            table,
            "- {name}, {count} points: {:.1} % | {:.1} % | {:.2} mm",
            100.0 * m,
            100.0 * b,
            1e3 * x
        );
    }
    let _ = writeln!(
        table,
        "share of the top face's squared difference of the time-averaged fields in the contact \
         disk: {:.1} %; over the hold, share of the disk's samples read from each level: {}",
        100.0 * disk_sq / all_sq.max(f64::MIN_POSITIVE),
        a.disk_levels
            .iter()
            .map(|x| format!("{:.1} %", 100.0 * x))
            .collect::<Vec<_>>()
            .join(" / ")
    );
    Regions {
        top_a: all_mean,
        top: all_bar,
        disk: disk_bar,
        rim: rim_bar,
        near: near_bar,
        away: away_bar,
    }
}

/// Per frame of the press, the relative L2 difference to finest-only on each region and the
/// mean vertical displacement of the disk and of the away samples in both runs (mm):
/// where and when the two runs part.
pub(super) fn press_frames_csv(a: &RunResult, f: &RunResult) -> String {
    let (top, grid) = (top_points(), field_points());
    let near = |p: &Vector3<f64>| (p - TOOL_POINT).norm() < NEAR;
    let rel = |x: &[Vector3<f64>],
               y: &[Vector3<f64>],
               pts: &[Vector3<f64>],
               keep: &dyn Fn(&Vector3<f64>) -> bool| {
        let (mut num, mut den) = (0.0, 0.0);
        for ((p, u), v) in pts.iter().zip(x).zip(y) {
            if keep(p) {
                num += (u - v).norm_squared();
                den += v.norm_squared();
            }
        }
        (num / den.max(f64::MIN_POSITIVE)).sqrt()
    };
    let mean_z =
        |x: &[Vector3<f64>], pts: &[Vector3<f64>], keep: &dyn Fn(&Vector3<f64>) -> bool| {
            let (mut s, mut n) = (0.0, 0);
            for (p, u) in pts.iter().zip(x) {
                if keep(p) {
                    s += u.z;
                    n += 1;
                }
            }
            1e3 * s / n.max(1) as f64
        };
    let mut csv =
        String::from("time,top,disk,rim,near,away,disk_uz_a,disk_uz_f,away_uz_a,away_uz_f\n");
    let frames = a.press_top.len().min(f.press_top.len());
    for k in 0..frames {
        let (ta, tf, ga, gf) = (
            &a.press_top[k],
            &f.press_top[k],
            &a.press_field[k],
            &f.press_field[k],
        );
        let disk = |p: &Vector3<f64>| !on_rim(p);
        let away = |p: &Vector3<f64>| !near(p);
        let _ = writeln!(
            csv,
            "{:.2},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4},{:.4}",
            (k + 1) as f64 * super::DT_FRAME,
            rel(ta, tf, &top, &|_| true),
            rel(ta, tf, &top, &disk),
            rel(ta, tf, &top, &on_rim),
            rel(ga, gf, &grid, &near),
            rel(ga, gf, &grid, &away),
            mean_z(ta, &top, &disk),
            mean_z(tf, &top, &disk),
            mean_z(ga, &grid, &away),
            mean_z(gf, &grid, &away),
        );
    }
    csv
}
