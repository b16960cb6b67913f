//! `runs.csv` and `table.md` of `supple experiment stress`, and the targets computed
//! from the runs.

use super::{Case, Row};
use std::cmp::Ordering;
use std::fmt::Write;
use supple::fem::material::ModelKind;

/// The columns of `runs.csv`.
pub(crate) const CSV_HEADER: &str = "case,model,dt_ms,steps_planned,steps_completed,failed,\
diverged,diverged_step,diverged_time_s,retried_steps,retries,dt_min_ms,unconverged_steps,\
min_volume_ratio_run,min_volume_ratio_end,inverted_end,energy_gain_max,released_energy_j,\
wall_ms_step_median,end_lowest_m,end_extent_m,reason";

/// Models the no-divergence target is about.
const MUST_SURVIVE: [&str; 3] = [
    "corotational",
    "corotational_invertible",
    "liesenfeld_stolfi",
];

/// Energy may grow by at most this share of the released energy.
const ENERGY_LIMIT: f64 = 0.05;

pub(crate) fn csv(rows: &[Row]) -> String {
    let mut s = String::from(CSV_HEADER);
    s.push('\n');
    for r in rows {
        let _ = writeln!(
            s,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{:.6e},{:.6e},{},{},{:.6e},{:.3},{:.6e},{:.6e},\"{}\"",
            r.case,
            r.model,
            r.dt_ms,
            r.steps_planned,
            r.steps,
            r.failed,
            r.diverged,
            r.diverged_step.map_or(String::new(), |k| k.to_string()),
            r.diverged_time.map_or(String::new(), |t| format!("{t:.6}")),
            r.retried_steps,
            r.retries,
            r.dt_min_ms,
            r.unconverged_steps,
            r.min_ratio_run,
            r.min_ratio_end,
            r.inverted_end,
            r.energy_gain.map_or(String::new(), |g| format!("{g:.6e}")),
            r.released,
            r.wall_ms,
            r.end_lowest,
            r.end_extent,
            r.reason.replace('"', "'").replace(['\n', '\r'], " ")
        );
    }
    s
}

/// `s` cut to `n` characters (with an ellipsis when cut).
fn shorten(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n).collect();
        t.push('…');
        t
    }
}

/// The compact summary of one run (a table cell, a progress line).
pub(crate) fn cell(r: &Row) -> String {
    let mut s = if r.diverged {
        format!(
            "DIVERGED step {} of {} (t = {} s): {}",
            r.diverged_step.unwrap_or(r.steps + 1),
            r.steps_planned,
            format_g(r.diverged_time.unwrap_or(f64::NAN)),
            shorten(&r.reason, 160)
        )
    } else if r.failed {
        format!("FAILED verdict: {}", shorten(&r.reason, 160))
    } else {
        "ok".to_string()
    };
    // The reason of a failure ends with its own punctuation: the numbers follow a ';'.
    s.push_str(if r.failed { "; " } else { ", " });
    if r.retries > 0 {
        let _ = write!(
            s,
            "{} in {} (dt ≥ {} ms), ",
            plural(r.retries, "retry", "retries"),
            plural(r.retried_steps, "step", "steps"),
            format_g(r.dt_min_ms)
        );
    }
    if r.unconverged_steps > 0 {
        let _ = write!(s, "{} unconverged, ", r.unconverged_steps);
    }
    let _ = write!(
        s,
        "min J {} / end {}",
        ratio(r.min_ratio_run),
        ratio(r.min_ratio_end)
    );
    if r.inverted_end > 0 {
        let _ = write!(s, " ({} inverted)", r.inverted_end);
    }
    if r.driven && !r.diverged {
        // Crushed, or squeezed out: where the body ends between the ground and the plate.
        let _ = write!(
            s,
            ", ends at height {:.3} to {:.3} m",
            r.end_lowest,
            r.end_lowest + r.end_extent
        );
    }
    if let Some(g) = r.energy_gain {
        let pct = 100.0 * g;
        let _ = if pct.abs() < 1e4 {
            write!(s, ", ΔE {pct:+.0} %")
        } else {
            write!(s, ", ΔE {pct:+.1e} %")
        };
    }
    let _ = write!(s, ", {} ms", format_g(r.wall_ms));
    s
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A volume ratio: two decimals, scientific where they would hide it.
fn ratio(v: f64) -> String {
    if v == 0.0 || (0.01..1000.0).contains(&v.abs()) {
        format!("{v:.2}")
    } else {
        format!("{v:.1e}")
    }
}

/// A short decimal: 3 significant digits, no trailing zeros.
fn format_g(v: f64) -> String {
    let digits = if v.abs() >= 100.0 {
        0
    } else if v.abs() >= 10.0 {
        1
    } else if v.abs() >= 1.0 {
        2
    } else {
        3
    };
    let s = format!("{v:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

fn escape(s: &str) -> String {
    s.replace('|', "\\|")
}

/// "case @ dt" labels of `rows`.
fn labels<'a>(rows: impl Iterator<Item = &'a Row>) -> String {
    let v: Vec<String> = rows
        .map(|r| format!("{} {} @ {} ms", r.model, r.case, r.dt_ms))
        .collect();
    v.join(", ")
}

/// One target: PASS when no run of `pool` fails `bad`; the line lists the failing runs.
fn target<'a>(
    out: &mut String,
    title: &str,
    pool: impl Iterator<Item = &'a Row> + Clone,
    bad: impl Fn(&Row) -> bool,
) {
    let n = pool.clone().count();
    let failing: Vec<&Row> = pool.filter(|r| bad(r)).collect();
    let verdict = if n == 0 {
        "N/A"
    } else if failing.is_empty() {
        "PASS"
    } else {
        "FAIL"
    };
    let _ = write!(out, "- **{verdict}** {title}: ");
    if failing.is_empty() {
        let _ = writeln!(out, "{n} of {n} runs meet it.");
    } else {
        let _ = writeln!(
            out,
            "{} of {n} runs miss it: {}.",
            failing.len(),
            labels(failing.into_iter())
        );
    }
}

pub(crate) fn table(
    cases: &[Case],
    models: &[(&'static str, ModelKind)],
    dts_ms: &[f64],
    rows: &[Row],
    flags: &str,
    response: &str,
    wall_s: f64,
) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# supple experiment stress{flags} --response {response} (issue 12: survive impacts and crushing)\n",
    );
    let _ = writeln!(
        s,
        "{} runs, {:.0} s wall time on {} worker threads. Every run: the scene's integrator \
(linearized backward Euler, PCG 1e-6 / 1000 iterations / block Jacobi) and the world's \
default step control (failed steps retried as half steps).\n",
        rows.len(),
        wall_s,
        rayon::current_num_threads()
    );
    s.push_str(
        "Cells: `ok`, `DIVERGED step k of n: reason` (the world gave up on step k) or \
`FAILED verdict: reason` (too many steps kept unconverged solves); then \
`r retries in s steps (dt ≥ h ms)`: failed tries retried as two half steps and the \
shortest step taken; `u unconverged`: steps kept with unconverged solves; \
`min J a / end b`: the smallest tet current/rest volume ratio after any accepted step \
(and at the start) / in the final state (the failed state when the run diverged), with \
the number of tets at volume ≤ 0 in the final state; `ΔE`: max over accepted steps of \
E(t) − E(0) with E = kinetic + elastic + gravitational energy (Σ mᵢ (−g)·(xᵢ − Xᵢ)), as a \
share of the released energy R = E_kin(0) + max over steps of |E_grav(t) − E_grav(0)| \
(absent for warped, which has no elastic energy); in the crush, where the body ends \
(lowest and highest vertex; the plate's bottom ends at 0.02 m); last: median wall time per \
world step (retries included).\n",
    );
    for (i, case) in cases.iter().enumerate() {
        let _ = writeln!(s, "\n## {}. `{}`: {}\n", i + 1, case.name, case.title);
        s.push_str("| model |");
        for dt in dts_ms {
            let _ = write!(s, " dt = {dt} ms |");
        }
        s.push_str("\n|---|");
        s.push_str(&"---|".repeat(dts_ms.len()));
        s.push('\n');
        for (name, _) in models {
            let _ = write!(s, "| {name} |");
            for dt in dts_ms {
                let cell = rows
                    .iter()
                    .find(|r| r.case == case.name && r.model == *name && r.dt_ms == *dt)
                    .map_or_else(|| "–".to_string(), |r| escape(&cell(r)));
                let _ = write!(s, " {cell} |");
            }
            s.push('\n');
        }
    }
    s.push_str("\n## Targets (computed from the runs above)\n\n");
    target(
        &mut s,
        "no divergence (nor failed verdict) for corotational, corotational_invertible and \
liesenfeld_stolfi",
        rows.iter().filter(|r| MUST_SURVIVE.contains(&r.model)),
        |r| r.failed,
    );
    target(
        &mut s,
        "liesenfeld_stolfi never has a tet with volume ≤ 0 at the end of an accepted step",
        rows.iter().filter(|r| r.model == "liesenfeld_stolfi"),
        |r| super::not_positive(r.min_ratio_run),
    );
    target(
        &mut s,
        "corotational_invertible ends every run with no inverted tet (a failed run counts \
as a miss)",
        rows.iter().filter(|r| r.model == "corotational_invertible"),
        |r| r.failed || r.inverted_end > 0,
    );
    // Not a target of the issue: the same two checks for the corotated law with the
    // determinant volume term, which the list predates.
    target(
        &mut s,
        "(beside the issue's targets) fixed_corotated: no divergence, and every run ends with \
no inverted tet",
        rows.iter().filter(|r| r.model == "fixed_corotated"),
        |r| r.failed || r.inverted_end > 0,
    );
    let driven: Vec<&str> = cases.iter().filter(|c| c.driven).map(|c| c.name).collect();
    let energy_title = format!(
        "energy never grows by more than {:.0} % of the released energy (models with an \
energy, i.e. all but warped; {})",
        100.0 * ENERGY_LIMIT,
        if driven.is_empty() {
            "every case".to_string()
        } else {
            format!(
                "not `{}`, where the obstacle does work on the body",
                driven.join("`, `")
            )
        }
    );
    target(
        &mut s,
        &energy_title,
        rows.iter()
            .filter(|r| r.energy_gain.is_some() && !driven.contains(&r.case)),
        |r| {
            !matches!(
                r.energy_gain.unwrap_or(0.0).partial_cmp(&ENERGY_LIMIT),
                Some(Ordering::Less | Ordering::Equal)
            )
        },
    );
    s
}
