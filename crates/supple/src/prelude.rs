//! The types most programs need, in one `use supple::prelude::*;`: meshes, bodies and their
//! builder ([`BodyDesc::of`]), the world and its builder ([`World::builder`]), obstacles
//! and grabs, the integrators and their
//! solvers, and nalgebra's `Vector3`. The examples in `crates/supple/examples/` start with it.
//!
//! ```
//! use supple::prelude::*;
//! let mesh = box_grid(&BoxGrid { cells: [2, 1, 1], cell_size: Vector3::repeat(0.1),
//!     origin: Vector3::zeros(), split: TetSplit::Five });
//! let body = Body::new(BodyDesc::of(mesh).linear().youngs(1e5).poisson(0.3))?;
//! let integrator = IntegratorKind::BackwardEulerLinearized {
//!     solver: LinearSolverKind::Pcg(PcgSettings::default()),
//!     warm_start: WarmStart::Extrapolate,
//! };
//! let mut world = World::new(vec![body], Vector3::new(0.0, -9.81, 0.0), 0.01, integrator)?;
//! world.step()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub use crate::body::{Body, BodyDesc, BuildError};
pub use crate::contact::{ContactSettings, Obstacle, Shape};
pub use crate::fem::material::{CorotationalTangent, ModelKind};
pub use crate::linalg::PcgSettings;
pub use crate::mesh::{box_grid, BoxGrid, TetMesh, TetSplit};
pub use crate::time::{IntegratorKind, LinearSolverKind, WarmStart};
pub use crate::world::{GrabSettings, World, WorldBuilder};
pub use nalgebra::Vector3;
