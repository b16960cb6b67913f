//! `--finest-cache`: the finest-only run of `supple experiment adaptive-poke` as text, read
//! back when the cells, damping and seconds match (the adaptive settings do not change it).

use super::RunResult;
use nalgebra::Vector3;
use std::fmt::Write as _;

/// The finest-only run's numbers the comparison reads, as text (`--finest-cache`).
pub(super) fn write_finest(r: &RunResult, key: &str) -> String {
    let row = |v: &[Vector3<f64>]| {
        v.iter()
            .flat_map(|x| x.iter())
            .map(|c| format!("{c:e}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut s = format!(
        "{key}\n{:e} {:e} {} {}\n{}\n",
        r.updates_per_second,
        r.press_displacement,
        r.wall_mean_ms,
        r.wall_max_ms,
        row(&r.field)
    );
    for (t, g) in r.press_top.iter().zip(&r.press_field) {
        let _ = writeln!(s, "{}\n{}", row(t), row(g));
    }
    s
}

pub(super) fn read_finest(text: &str, key: &str) -> Option<RunResult> {
    let mut lines = text.lines();
    if lines.next()? != key {
        return None;
    }
    let nums =
        |l: &str| -> Option<Vec<f64>> { l.split_whitespace().map(|x| x.parse().ok()).collect() };
    let vecs = |l: &str| -> Option<Vec<Vector3<f64>>> {
        Some(
            nums(l)?
                .chunks(3)
                .map(|c| Vector3::new(c[0], c[1], c[2]))
                .collect(),
        )
    };
    let head = nums(lines.next()?)?;
    let field = vecs(lines.next()?)?;
    let (mut press_top, mut press_field) = (Vec::new(), Vec::new());
    while let (Some(t), Some(g)) = (lines.next(), lines.next()) {
        press_top.push(vecs(t)?);
        press_field.push(vecs(g)?);
    }
    Some(RunResult {
        updates_per_second: head[0],
        press_displacement: head[1],
        splits: 0,
        merges: 0,
        flicker: 0,
        all_at_level0: false,
        wall_mean_ms: head[2],
        wall_max_ms: head[3],
        max_active: Vec::new(),
        disk_levels: Vec::new(),
        energy_ratio: f64::NAN,
        max_frame_updates: 0,
        field,
        press_top,
        press_field,
        csv: String::new(),
    })
}
