//! `plots/*.png` from a run folder's `metrics.csv` and `summary.json`, so that
//! `supple render DIR` can redo them.

use anyhow::{bail, Context, Result};
use std::collections::HashMap;
use std::path::Path;
use supple_render::plot::{write_chart, Chart, Panel, Series};

/// The columns of `metrics.csv`, by header name.
struct Metrics {
    columns: HashMap<String, Vec<f64>>,
}

impl Metrics {
    fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("cannot read {}", path.display()))?;
        let mut lines = text.lines();
        let Some(header) = lines.next() else {
            bail!("{}: the file is empty", path.display());
        };
        let names: Vec<&str> = header.split(',').collect();
        let mut cols: Vec<Vec<f64>> = vec![Vec::new(); names.len()];
        for (n, line) in lines.enumerate() {
            let cells: Vec<&str> = line.split(',').collect();
            if cells.len() != names.len() {
                bail!(
                    "{}:{}: {} fields, the header has {}",
                    path.display(),
                    n + 2,
                    cells.len(),
                    names.len()
                );
            }
            for (col, cell) in cols.iter_mut().zip(cells) {
                col.push(cell.trim().parse().unwrap_or(f64::NAN));
            }
        }
        Ok(Self {
            columns: names.iter().map(|s| s.to_string()).zip(cols).collect(),
        })
    }

    fn col(&self, name: &str) -> Option<&[f64]> {
        self.columns.get(name).map(Vec::as_slice)
    }
}

fn series(name: &str, t: &[f64], y: impl IntoIterator<Item = f64>) -> Series {
    Series {
        name: name.to_string(),
        points: t.iter().copied().zip(y).collect(),
    }
}

/// Writes `plots/volume.png`, `energy.png`, `probes.png` (when there are probes) and
/// `solver.png` for the run in `dir`; returns how many were written.
pub fn write_plots(dir: &Path) -> Result<usize> {
    let m = Metrics::read(&dir.join("metrics.csv"))?;
    let summary_path = dir.join("summary.json");
    let summary: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(&summary_path)
            .with_context(|| format!("cannot read {}", summary_path.display()))?,
    )
    .with_context(|| format!("{}: not valid JSON", summary_path.display()))?;
    let bodies: Vec<(String, f64)> = summary["bodies"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|b| {
                    let name = b["name"].as_str().unwrap_or_default().to_string();
                    (name, b["volume_rest"].as_f64().unwrap_or(f64::NAN))
                })
                .collect()
        })
        .unwrap_or_default();
    let probes: Vec<String> = summary["probes"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let Some(t) = m.col("time") else {
        bail!("{}: no `time` column", dir.join("metrics.csv").display());
    };
    let plots = dir.join("plots");
    std::fs::create_dir_all(&plots)
        .with_context(|| format!("cannot create {}", plots.display()))?;
    let col = |name: String| m.col(&name).unwrap_or(&[]).to_vec();
    let chart = |panels: Vec<Panel>, height: u32| Chart {
        x_label: "time (s)".into(),
        panels,
        width: 800,
        height,
    };
    let mut written = 0;

    let volume = Panel {
        title: "Volume relative to rest".into(),
        y_label: "V / V₀".into(),
        series: (bodies.iter())
            .map(|(b, v0)| series(b, t, col(format!("{b}.volume")).iter().map(|v| v / v0)))
            .collect(),
    };
    write_chart(&plots.join("volume.png"), &chart(vec![volume], 450))?;
    written += 1;

    let energy: Vec<Panel> = (bodies.iter())
        .map(|(b, _)| {
            let kinetic = col(format!("{b}.kinetic_energy"));
            let elastic = col(format!("{b}.elastic_energy"));
            let potential = col(format!("{b}.potential_energy"));
            let total = (0..t.len()).map(|i| {
                let e = elastic.get(i).copied().unwrap_or(f64::NAN);
                kinetic.get(i).copied().unwrap_or(f64::NAN)
                    + if e.is_finite() { e } else { 0.0 }
                    + potential.get(i).copied().unwrap_or(f64::NAN)
            });
            Panel {
                title: format!("Energy of `{b}` (gravity relative to the rest shape)"),
                y_label: "energy (J)".into(),
                series: vec![
                    series("kinetic", t, kinetic.iter().copied()),
                    series("elastic", t, elastic.iter().copied()),
                    series("gravitational", t, potential.iter().copied()),
                    series("total", t, total),
                ],
            }
        })
        .collect();
    let h = 360 * energy.len() as u32;
    write_chart(&plots.join("energy.png"), &chart(energy, h))?;
    written += 1;

    if !probes.is_empty() {
        let panels = ["x", "y", "z"]
            .iter()
            .map(|c| Panel {
                title: if *c == "x" {
                    "Probe trajectories".into()
                } else {
                    String::new()
                },
                y_label: format!("{c} (m)"),
                series: (probes.iter())
                    .map(|p| series(p, t, col(format!("{p}.{c}"))))
                    .collect(),
            })
            .collect();
        write_chart(&plots.join("probes.png"), &chart(panels, 780))?;
        written += 1;
    }

    let iterations = Panel {
        title: "Solver work per step".into(),
        y_label: "CG iterations".into(),
        series: (bodies.iter())
            .map(|(b, _)| series(b, t, col(format!("{b}.solver_iterations"))))
            .collect(),
    };
    let wall = Panel {
        title: String::new(),
        y_label: "wall time per step (ms)".into(),
        series: vec![series("step", t, col("wall_ms_step".into()))],
    };
    write_chart(
        &plots.join("solver.png"),
        &chart(vec![iterations, wall], 600),
    )?;
    written += 1;
    Ok(written)
}
