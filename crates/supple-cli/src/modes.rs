//! `supple modes`: the lowest vibration modes of each body of a scene at rest
//! (`K φ = ω² M φ` over the free degrees of freedom; see `supple::modes`).

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use serde::Serialize;
use std::path::PathBuf;
use supple::fem::MassKind;
use supple::modes::{vibration_modes, ModeSettings};
use supple::nalgebra::Vector3;
use supple_io::vtu::{write_vtu, VtuFrame};

#[derive(Clone, Copy, ValueEnum)]
pub enum MassArg {
    Lumped,
    Consistent,
}

#[derive(Args)]
pub struct ModesArgs {
    /// The scene file (TOML); its bodies, materials and constraints are used at rest.
    pub scene: PathBuf,
    /// Replace a scene key, as `supple run --set KEY=VALUE` (repeatable).
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<supple_io::Override>,
    /// How many of the lowest modes.
    #[arg(long, default_value_t = 10)]
    pub count: usize,
    /// The mass matrix.
    #[arg(long, value_enum, default_value_t = MassArg::Lumped)]
    pub mass: MassArg,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Write `modes.json` and `<body>_modes.vtu` (mode shapes as point fields `mode_K`,
    /// scaled to a largest vertex amplitude of 1) into this folder.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

#[derive(Serialize)]
struct ModeRow {
    mode: usize,
    frequency_hz: f64,
    omega2: f64,
    residual: f64,
    /// Effective modal mass per direction over the total mass, `(1ᵀ M φ)_d² / m`: large in y
    /// or z for bending, in x for axial modes, ≈ 0 for torsion.
    effective_mass_fraction: [f64; 3],
}

#[derive(Serialize)]
struct BodyModes {
    body: String,
    mass: &'static str,
    method: &'static str,
    free_dofs: usize,
    shift: f64,
    iterations: usize,
    converged: bool,
    modes: Vec<ModeRow>,
}

pub fn modes(args: ModesArgs) -> Result<i32> {
    let scene = supple_run::load(&args.scene, None, &args.set)?;
    let mut world = scene.build_world()?;
    let settings = ModeSettings {
        count: args.count,
        mass: match args.mass {
            MassArg::Lumped => MassKind::Lumped,
            MassArg::Consistent => MassKind::Consistent,
        },
        ..ModeSettings::default()
    };
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let mut all = Vec::new();
    let mut ok = true;
    for body in &mut world.bodies {
        let m =
            vibration_modes(body, &settings).with_context(|| format!("body `{}`", body.name))?;
        ok &= m.converged;
        let f = m.frequencies_hz();
        let total = body.mass.total();
        // 1ᵀ M φ = Σ m_i φ_i for both mass matrices (the lumped masses are M's row sums).
        let fractions: Vec<[f64; 3]> = m
            .shapes
            .iter()
            .map(|s| {
                let g: Vector3<f64> = s.iter().zip(&body.mass.lumped).map(|(v, m)| *m * v).sum();
                [0, 1, 2].map(|d| g[d] * g[d] / total)
            })
            .collect();
        all.push(BodyModes {
            body: body.name.clone(),
            mass: match args.mass {
                MassArg::Lumped => "lumped",
                MassArg::Consistent => "consistent",
            },
            method: "shift-invert subspace iteration with Rayleigh-Ritz (sparse Cholesky of K - sigma M)",
            free_dofs: m.free_dofs,
            shift: m.shift,
            iterations: m.iterations,
            converged: m.converged,
            modes: (0..f.len())
                .map(|k| ModeRow {
                    mode: k + 1,
                    frequency_hz: f[k],
                    omega2: m.omega2[k],
                    residual: m.residuals[k],
                    effective_mass_fraction: fractions[k],
                })
                .collect(),
        });
        if let Some(dir) = &args.out {
            let scaled: Vec<Vec<Vector3<f64>>> = m
                .shapes
                .iter()
                .map(|s| {
                    let top = s.iter().map(|v| v.norm()).fold(0.0, f64::max);
                    let k = if top > 0.0 { 1.0 / top } else { 1.0 };
                    s.iter().map(|v| v * k).collect()
                })
                .collect();
            let names: Vec<String> = (1..=scaled.len()).map(|k| format!("mode_{k}")).collect();
            let frame = VtuFrame {
                point_vectors: names
                    .iter()
                    .map(String::as_str)
                    .zip(scaled.iter().map(Vec::as_slice))
                    .collect(),
                ..VtuFrame::new(&body.mesh.positions, &body.mesh.tets)
            };
            write_vtu(&dir.join(format!("{}_modes.vtu", body.name)), &frame)?;
        }
    }
    if let Some(dir) = &args.out {
        std::fs::write(
            dir.join("modes.json"),
            serde_json::to_string_pretty(&all)? + "\n",
        )?;
    }
    // `writeln!`: a closed pipe (`supple modes … | head`) is an error, not a panic.
    use std::io::Write as _;
    let mut out = std::io::stdout().lock();
    if args.json {
        writeln!(out, "{}", serde_json::to_string_pretty(&all)?)?;
    } else {
        for b in &all {
            writeln!(
                out,
                "body `{}`: {} free dofs, {} mass, {} iterations{}",
                b.body,
                b.free_dofs,
                b.mass,
                b.iterations,
                if b.converged { "" } else { " (NOT converged)" }
            )?;
            writeln!(
                out,
                "{:>5} {:>16} {:>12} {:>24}",
                "mode", "frequency (Hz)", "residual", "eff. mass x / y / z"
            )?;
            for r in &b.modes {
                let [x, y, z] = r.effective_mass_fraction;
                writeln!(
                    out,
                    "{:>5} {:>16.6} {:>12.2e}   {x:>6.3} / {y:>6.3} / {z:>6.3}",
                    r.mode, r.frequency_hz, r.residual
                )?;
            }
        }
    }
    Ok(if ok { 0 } else { crate::EXIT_DIVERGED })
}
