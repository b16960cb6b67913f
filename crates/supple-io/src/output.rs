//! The `[output]` section of a scene: what a run writes and how its pictures look.

use serde::Deserialize;

/// Output settings of a scene (`[output]`).
#[derive(Debug, Clone, Deserialize, PartialEq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct OutputSettings {
    /// Write a frame (VTU + a metrics row) every this many steps.
    pub frame_every: usize,
    /// Write `frames/*.vtu` and `scene.pvd`.
    pub vtu: bool,
    /// zlib-compress the VTU arrays (ParaView, VTK and meshio read both).
    pub compress: bool,
    /// Write `images/frame_NNNNN.png` every this many output frames (0: only `final.png`).
    pub png_every: usize,
    /// Write `animation.gif`; unset: only when the run has fewer than
    /// [`GIF_AUTO_MAX_FRAMES`] output frames.
    pub gif: Option<bool>,
    /// Frames per second of simulated time in the GIF (played back at real time).
    pub gif_fps: f64,
    /// GIF size `[width, height]` in pixels.
    pub gif_size: [u32; 2],
    /// PNG size `[width, height]` in pixels.
    pub image_size: [u32; 2],
    /// Surface colouring of the pictures.
    pub color: ColorBy,
    /// Draw the surface triangles' edges.
    pub edges: bool,
    /// Write `plots/*.png` (volume, energy, probes, solver).
    pub plots: bool,
}

/// The GIF is written by default when a run has fewer output frames than this.
pub const GIF_AUTO_MAX_FRAMES: usize = 500;

impl Default for OutputSettings {
    fn default() -> Self {
        Self {
            frame_every: 1,
            vtu: true,
            compress: true,
            png_every: 0,
            gif: None,
            gif_fps: 25.0,
            gif_size: [320, 240],
            image_size: [640, 480],
            color: ColorBy::Body,
            edges: true,
            plots: true,
        }
    }
}

/// How pictures colour the bodies' surfaces.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ColorBy {
    /// One colour per body.
    #[default]
    Body,
    /// The displacement magnitude `|x − x₀|` per vertex, on a colour map.
    Displacement,
    /// The von Mises stress per element, on a colour map (bodies whose model defines no
    /// stress are drawn in their body colour).
    VonMises,
}

impl std::str::FromStr for ColorBy {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "body" => Ok(Self::Body),
            "displacement" => Ok(Self::Displacement),
            "von_mises" => Ok(Self::VonMises),
            _ => Err(format!(
                "`{s}`: expected `body`, `displacement` or `von_mises`"
            )),
        }
    }
}

impl OutputSettings {
    /// Checks values that parse but make no sense; the message names the key.
    pub fn validate(&self) -> Result<(), String> {
        if self.frame_every == 0 {
            return Err("output.frame_every = 0: must be at least 1".into());
        }
        if !(self.gif_fps > 0.0 && self.gif_fps <= 100.0) {
            return Err(format!(
                "output.gif_fps = {}: must be above 0 and at most 100",
                self.gif_fps
            ));
        }
        for (key, [w, h]) in [("image_size", self.image_size), ("gif_size", self.gif_size)] {
            if !(16..=8192).contains(&w) || !(16..=8192).contains(&h) {
                return Err(format!(
                    "output.{key} = [{w}, {h}]: width and height must be 16 to 8192 pixels"
                ));
            }
        }
        Ok(())
    }
}
