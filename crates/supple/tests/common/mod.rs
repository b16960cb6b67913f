//! Shared set-ups of the integration tests: the clamped bar and a one-body world.
#![allow(dead_code)] // each test binary uses a part of it

pub mod ccd;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use supple::body::{Body, BodyDesc};
use supple::fem::material::{CorotationalTangent, ModelKind};
use supple::linalg::ordering::OrderingKind;
use supple::linalg::PcgSettings;
use supple::mesh::{box_grid, BoxGrid, TetMesh, TetSplit};
use supple::nalgebra::Vector3;
use supple::time::{IntegratorKind, LinearSolverKind, NewtonSettings, WarmStart};
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

/// Newton's backward Euler to `tolerance`, its linear solves by Cholesky (AMD ordering).
pub fn newton_cholesky(tolerance: f64) -> IntegratorKind {
    let newton = NewtonSettings {
        tolerance,
        solver: LinearSolverKind::Cholesky {
            ordering: OrderingKind::Amd,
        },
        ..NewtonSettings::default()
    };
    IntegratorKind::BackwardEuler { newton }
}

/// PCG settings with a tolerance and the default preconditioner.
pub fn pcg(tolerance: f64) -> PcgSettings {
    PcgSettings {
        tolerance,
        max_iterations: 10_000,
        ..Default::default()
    }
}

/// A global allocator that counts the allocations of each thread; a test binary that checks
/// "no allocation per step" installs it with
/// `#[global_allocator] static GLOBAL: common::Counting = common::Counting;`.
pub struct Counting;

thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

/// Allocations made by this thread so far (counted only under [`Counting`]).
pub fn allocations() -> usize {
    ALLOCATIONS.with(Cell::get)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
}

/// A small deterministic generator in [−1, 1) (tests must not depend on a random crate).
pub struct Lcg(pub u64);

impl Lcg {
    pub fn uniform(&mut self) -> f64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((self.0 >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
    }
    pub fn vec3(&mut self) -> Vector3<f64> {
        Vector3::new(self.uniform(), self.uniform(), self.uniform())
    }
}

/// A cube of `cells`³ cells of size `h` (five tets per cell) with its lowest corner at `origin`.
pub fn cube_mesh(cells: usize, h: f64, origin: Vector3<f64>) -> TetMesh {
    box_grid(&BoxGrid {
        cells: [cells; 3],
        cell_size: Vector3::repeat(h),
        origin,
        split: TetSplit::Five,
    })
}

/// Linearized backward Euler, PCG to 1e-8, extrapolated first guess (the contact tests' step).
pub fn implicit() -> IntegratorKind {
    IntegratorKind::BackwardEulerLinearized {
        solver: LinearSolverKind::Pcg(pcg(1e-8)),
        warm_start: WarmStart::Extrapolate,
    }
}
