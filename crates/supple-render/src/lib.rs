//! Headless pictures of Supple runs, with no GPU, no display and no system fonts.
//!
//! - [`render`]: a small software rasterizer (z-buffer, flat Lambert shading, optional
//!   triangle edges, solid or colour-mapped surfaces with a colour bar, an optional ground
//!   grid, plain smooth-shaded obstacles) producing an [`Image`];
//! - [`shapes`]: triangulated spheres, capsules and boxes for drawing rigid obstacles;
//! - [`Image::write_png`] / [`GifWriter`]: PNG frames (`png`) and animated GIFs (`gif`);
//! - [`plot`]: line charts of run metrics (`plotters` with the bundled DejaVu font).
//!
//! Why an in-project rasterizer: a GPU renderer (`wgpu`) needs Vulkan drivers and minutes of
//! compile time, and the CPU 2-D crates draw no depth-tested 3-D triangles. What a run needs —
//! a few thousand flat-shaded triangles per frame, bit-identical output for the same input —
//! fits in a few hundred lines here. Text (labels, colour-bar ticks) goes through `plotters`
//! and `ab_glyph` with the DejaVu Sans font compiled into the binary.
//!
//! A red triangle facing the camera, drawn into a 64 × 48 image:
//!
//! ```
//! use nalgebra::Vector3;
//! use supple_render::{render, Camera, Paint, Surface, View};
//!
//! let camera = Camera {
//!     eye: Vector3::new(0.0, 0.0, 3.0),
//!     target: Vector3::zeros(),
//!     up: Vector3::y(),
//!     fov_y_deg: 40.0,
//! };
//! let view = View::new(camera, 64, 48);
//! let triangle = Surface {
//!     positions: &[[-1.0, -0.8, 0.0], [1.0, -0.8, 0.0], [0.0, 0.9, 0.0]],
//!     triangles: &[[0, 1, 2]],
//!     paint: Paint::Solid([220, 30, 30]),
//! };
//! let image = render(&[triangle], &view);
//! let empty = render(&[], &view);
//! assert_eq!((image.width, image.height), (64, 48));
//! let [r, g, b] = image.pixel(32, 24);
//! assert!(r > 2 * g && r > 2 * b, "the centre is red: {:?}", [r, g, b]);
//! assert_eq!(image.pixel(1, 1), empty.pixel(1, 1), "a corner is background");
//! let png = image.encode_png()?;
//! assert!(png.starts_with(b"\x89PNG"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod camera;
mod colormap;
mod gif_out;
mod image;
pub mod plot;
mod raster;
mod render;
pub mod shapes;
mod text;

pub use camera::Camera;
pub use colormap::{body_color, colormap, ColorBar};
pub use gif_out::{gif_schedule, GifWriter};
pub use image::Image;
pub use render::{render, Ground, Paint, Surface, View};

use std::path::PathBuf;

/// A picture that could not be written or a chart that could not be drawn.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    /// The operating system refused an operation on `path`.
    #[error("{path}: {source}")]
    Io {
        /// The file concerned.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// An encoder (PNG, GIF) or the chart library failed while writing `path`.
    #[error("{path}: {message}")]
    Encode {
        /// The file concerned.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
}

impl RenderError {
    pub(crate) fn encode(path: &std::path::Path, message: impl std::fmt::Display) -> Self {
        Self::Encode {
            path: path.to_path_buf(),
            message: message.to_string(),
        }
    }

    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        Self::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}
