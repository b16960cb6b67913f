//! `--seeds N`: the poke's comparison over several refinement histories. Measure (b) moves by
//! several points with which nodes split in which frame (issue 15, third round), so one run
//! cannot tell a rule's effect from that noise; the levels' jitter seed changes the meshes
//! (all of them, the finest included, each seed against its own finest-only run) and with
//! them the history, and the summary gives the mean, the sample standard deviation and the
//! range over the seeds.

use super::measure::Regions;
use super::Compared;
use std::fmt::Write as _;

/// `(mean, sample standard deviation, min, max)` of `x` (deviation 0 for one value).
pub(super) fn spread(x: &[f64]) -> (f64, f64, f64, f64) {
    let n = x.len().max(1) as f64;
    let mean = x.iter().sum::<f64>() / n;
    let var = if x.len() > 1 {
        x.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
    } else {
        0.0
    };
    let (lo, hi) = x
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), &v| {
            (l.min(v), h.max(v))
        });
    (mean, var.sqrt(), lo, hi)
}

/// The seeds' table (one row per seed) and the mean ± standard deviation [min, max] of each
/// measure, as Markdown.
pub(super) fn summary(all: &[Compared]) -> String {
    let mut s = String::from("| seed | node updates, of finest-only |");
    for name in Regions::NAMES {
        let _ = write!(s, " {name} |");
    }
    s.push_str(" splits | flicker | all at level 0 | max node updates in a frame | undamped max E / E at release |\n|---|---|");
    s.push_str(&"---|".repeat(Regions::NAMES.len() + 5));
    s.push('\n');
    for c in all {
        let _ = write!(s, "| {} | {:.2} % |", c.seed, 100.0 * c.ratio);
        for v in c.regions.values() {
            let _ = write!(s, " {:.1} % |", 100.0 * v);
        }
        let _ = writeln!(
            s,
            " {} | {} | {} | {} | {:.3} |",
            c.splits, c.flicker, c.all_at_level0, c.max_frame_updates, c.energy_ratio
        );
    }
    let _ = writeln!(
        s,
        "\nover {} seeds, mean ± sample standard deviation [min, max]:",
        all.len()
    );
    let ratios: Vec<f64> = all.iter().map(|c| c.ratio).collect();
    spread_line(&mut s, "node updates, of finest-only", &ratios, 2);
    for (k, name) in Regions::NAMES.iter().enumerate() {
        let x: Vec<f64> = all.iter().map(|c| c.regions.values()[k]).collect();
        spread_line(&mut s, name, &x, 1);
    }
    s
}

/// `- name: mean ± sd % [min, max]` of the fractions `x`, in percent with `digits` decimals.
fn spread_line(s: &mut String, name: &str, x: &[f64], digits: usize) {
    let (m, sd, lo, hi) = spread(x);
    let [m, sd, lo, hi] = [m, sd, lo, hi].map(|v| 100.0 * v);
    let _ = writeln!(
        s,
        "- {name}: {m:.digits$} ± {sd:.digits$} % [{lo:.digits$}, {hi:.digits$}]"
    );
}

#[cfg(test)]
mod tests {
    use super::{spread, spread_line};

    #[test]
    fn a_spread_line_is_in_percent_with_the_given_decimals() {
        let mut s = String::new();
        spread_line(&mut s, "disk (b)", &[0.01, 0.03], 1);
        assert_eq!(s, "- disk (b): 2.0 ± 1.4 % [1.0, 3.0]\n");
    }

    #[test]
    fn spread_is_mean_sample_deviation_and_range() {
        let (m, sd, lo, hi) = spread(&[1.0, 2.0, 3.0, 6.0]);
        assert!((m - 3.0).abs() < 1e-12);
        assert!((sd - (14.0_f64 / 3.0).sqrt()).abs() < 1e-12);
        assert_eq!((lo, hi), (1.0, 6.0));
        assert_eq!(spread(&[4.0]), (4.0, 0.0, 4.0, 4.0));
    }
}
