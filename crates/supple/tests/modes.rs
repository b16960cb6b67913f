//! Vibration modes (issue 13): a free body has six rigid modes at ≈ 0 Hz; a clamped beam's
//! first bending frequency approaches Euler–Bernoulli's as the mesh is refined.

use supple::body::{Body, BodyDesc};
use supple::fem::material::ModelKind;
use supple::fem::MassKind;
use supple::mesh::{box_grid, BoxGrid, TetSplit};
use supple::modes::{vibration_modes, ModeSettings};
use supple::nalgebra::Vector3;

fn beam(cells: [usize; 3]) -> BodyDesc {
    let mesh = box_grid(&BoxGrid {
        cells,
        cell_size: Vector3::new(
            1.0 / cells[0] as f64,
            0.1 / cells[1] as f64,
            0.1 / cells[2] as f64,
        ),
        origin: Vector3::zeros(),
        split: TetSplit::Five,
    });
    BodyDesc::new("beam", mesh, ModelKind::Linear, 2e11, 0.3, 7800.0)
}

#[test]
fn a_free_body_has_six_rigid_modes() {
    for model in [ModelKind::Linear, ModelKind::Stvk] {
        let mut desc = beam([10, 2, 2]);
        desc.model = model;
        let mut body = Body::new(desc).unwrap();
        let settings = ModeSettings {
            count: 8,
            ..ModeSettings::default()
        };
        let modes = vibration_modes(&mut body, &settings).unwrap();
        assert!(modes.converged, "{modes:?}");
        let f = modes.frequencies_hz();
        let elastic = f[6];
        assert!(elastic > 10.0, "{f:?}");
        for (j, fj) in f.iter().take(6).enumerate() {
            assert!(
                fj.abs() < 1e-4 * elastic,
                "{model:?}: rigid mode {j} at {fj} Hz ({f:?})"
            );
        }
        assert!(
            modes.residuals.iter().all(|r| *r < 1e-6),
            "{:?}",
            modes.residuals
        );
    }
}

/// Euler–Bernoulli first bending frequency of a clamped-free beam:
/// `f₁ = (β₁L)² / (2π L²) · √(E I / (ρ A))`, `β₁L = 1.875104`, `I = b h³/12`.
fn euler_bernoulli(e: f64, rho: f64, l: f64, b: f64) -> f64 {
    let (i, a) = (b.powi(4) / 12.0, b * b);
    1.875104f64.powi(2) / (2.0 * std::f64::consts::PI * l * l) * (e * i / (rho * a)).sqrt()
}

#[test]
fn a_cantilever_bends_at_euler_bernoulli_frequency() {
    let theory = euler_bernoulli(2e11, 7800.0, 1.0, 0.1);
    let mut errors = Vec::new();
    for cells in [[20, 2, 2], [40, 4, 4], [80, 8, 8]] {
        let desc = beam(cells).with_fixed_where(|p| p.x < 1e-9);
        let mut body = Body::new(desc).unwrap();
        let settings = ModeSettings {
            count: 2,
            mass: MassKind::Consistent,
            ..ModeSettings::default()
        };
        let modes = vibration_modes(&mut body, &settings).unwrap();
        assert!(modes.converged);
        let f = modes.frequencies_hz();
        // A square section bends alike in y and z: a pair of equal frequencies.
        assert!((f[0] - f[1]).abs() < 0.02 * f[0], "{f:?}");
        errors.push(f[0] / theory - 1.0);
    }
    // Linear tets are too stiff in bending; the error falls with refinement and the finer
    // mesh is within a few per cent.
    assert!(
        errors[2].abs() < errors[1].abs() && errors[1].abs() < errors[0].abs(),
        "{errors:?}"
    );
    assert!(errors[2].abs() < 0.03, "{errors:?} (theory {theory:.2} Hz)");
}
