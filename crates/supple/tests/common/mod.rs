//! Shared set-ups of the integration tests: the clamped bar and a one-body world.
#![allow(dead_code)] // each test binary uses a part of it

use supple::body::{Body, BodyDesc};
use supple::fem::material::{CorotationalTangent, ModelKind};
use supple::linalg::PcgSettings;
use supple::mesh::{box_grid, BoxGrid, TetSplit};
use supple::nalgebra::Vector3;
use supple::time::{IntegratorKind, LinearSolverKind, WarmStart};
use supple::world::World;

pub const COROTATIONAL: ModelKind = ModelKind::corotational(CorotationalTangent::Rotated);

/// A box bar of `cells` cubes of size `h` along +x from the origin (E = 1e5 Pa, ν = 0.33,
/// ρ = 1000 kg/m³), clamped at x = 0 when `clamp`.
pub fn bar(cells: [usize; 3], h: f64, split: TetSplit, model: ModelKind, clamp: bool) -> BodyDesc {
    let mesh = box_grid(&BoxGrid {
        cells,
        cell_size: Vector3::repeat(h),
        origin: Vector3::zeros(),
        split,
    });
    let desc = BodyDesc::new("bar", mesh, model, 1e5, 0.33, 1000.0);
    if clamp {
        desc.with_fixed_where(|p| p.x <= 1e-9 * h)
    } else {
        desc
    }
}

/// A world of one body under gravity `(0, −g, 0)`, stepped by linearized backward Euler.
pub fn world(desc: BodyDesc, g: f64, dt: f64, pcg: PcgSettings) -> World {
    world_with(desc, g, dt, LinearSolverKind::Pcg(pcg))
}

/// [`world`] with any linear solver.
pub fn world_with(desc: BodyDesc, g: f64, dt: f64, solver: LinearSolverKind) -> World {
    let body = Body::new(desc).expect("valid body");
    let integrator = IntegratorKind::BackwardEulerLinearized {
        solver,
        warm_start: WarmStart::Extrapolate,
    };
    World::new(vec![body], Vector3::new(0.0, -g, 0.0), dt, integrator).expect("valid world")
}

/// PCG settings with a tolerance and the default preconditioner.
pub fn pcg(tolerance: f64) -> PcgSettings {
    PcgSettings {
        tolerance,
        max_iterations: 10_000,
        ..Default::default()
    }
}
