//! # Supple: real-time simulation of deformable solids with tetrahedral finite elements
//!
//! One time step, top to bottom: [`world::World::step`] → an integrator of [`time`] (e.g.
//! [`time::LinearizedBackwardEuler`], [`time::BackwardEuler`], [`time::Newmark`]), which sees
//! a body only through [`time::System`] (forces, mass, damping, Jacobians) → [`body::Body`]
//! (mass, constraints, state) → a [`fem::ForceModel`] (`fem::material::{linear, warped,
//! corotational, stvk, hybrid, liesenfeld_stolfi}`) and a [`fem::material::Dissipation`] →
//! the element loop in [`fem::elements`] → assembly into [`linalg::BlockCsr`] → a
//! [`linalg::LinearSolver`] (PCG or sparse Cholesky).
//!
//! The library never prints and keeps no global state; errors are values.
//!
//! **Where to start.** `use supple::prelude::*;` brings the types most programs need. A body
//! is described by name ([`body::BodyDesc::of`] then `.youngs(..)`, `.poisson(..)`,
//! `.fix_where(..)`, checked by `.build()`), a world too ([`world::World::builder`]: gravity,
//! `dt`, integrator, obstacles, contact, each with the scene format's default). A mesh file
//! (Gmsh, TetGen, VTU, Medit) is one call in the `supple-io` crate:
//! `supple_io::import::read_mesh(path, None, Orient::Check)?.mesh`. The programs in
//! `crates/supple/examples/` (`drop_on_ground`, `grab_and_drag`, `read_stresses`,
//! `custom_law`) and `crates/supple-io/examples/paraview_frames.rs` run as tests
//! (`cargo test --examples`).
//!
//! A bar of 4 × 1 × 1 cubes clamped at `x = 0` sags under gravity:
//!
//! ```
//! use supple::body::{Body, BodyDesc};
//! use supple::fem::material::{CorotationalTangent, ModelKind};
//! use supple::linalg::PcgSettings;
//! use supple::mesh::{box_grid, BoxGrid, TetSplit};
//! use supple::nalgebra::Vector3;
//! use supple::time::{IntegratorKind, LinearSolverKind, WarmStart};
//! use supple::world::World;
//!
//! let mesh = box_grid(&BoxGrid {
//!     cells: [4, 1, 1],
//!     cell_size: Vector3::repeat(0.1),
//!     origin: Vector3::zeros(),
//!     split: TetSplit::Five,
//! });
//! assert_eq!((mesh.n_vertices(), mesh.n_tets()), (20, 20));
//! let model = ModelKind::corotational(CorotationalTangent::Rotated);
//! // E = 100 kPa, ν = 0.33, ρ = 1000 kg/m³; the vertices on the wall x = 0 are fixed.
//! let desc = BodyDesc::new("bar", mesh, model, 1e5, 0.33, 1000.0).with_fixed_where(|p| p.x < 1e-9);
//! let integrator = IntegratorKind::BackwardEulerLinearized {
//!     solver: LinearSolverKind::Pcg(PcgSettings::default()),
//!     warm_start: WarmStart::Extrapolate,
//! };
//! let gravity = Vector3::new(0.0, -9.81, 0.0);
//! let mut world = World::new(vec![Body::new(desc)?], gravity, 0.01, integrator)?;
//! for _ in 0..10 {
//!     world.step()?;
//! }
//! let bar = &world.bodies[0];
//! // Vertex (i, j, k) of the grid is i + 5 (j + 2 k): vertex 4 starts at (0.4, 0, 0).
//! assert!(bar.x[4].y < -1e-4, "the free end sags: {}", bar.x[4].y);
//! assert_eq!(bar.x[0], Vector3::zeros(), "the clamped corner stays");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod adaptive;
pub mod body;
pub mod clock;
pub mod constraint;
pub mod contact;
pub mod fem;
pub mod haptic;
pub mod hierarchical;
pub mod isa;
pub mod linalg;
pub mod load;
pub mod mesh;
pub mod modes;
pub mod prelude;
pub mod time;
pub mod world;

pub use nalgebra;
