//! A perspective camera and the default framing of a bounding box.

use nalgebra::Vector3;

/// A pinhole camera: `eye` looks at `target`, `up` fixes the roll, `fov_y_deg` is the
/// vertical field of view.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Camera {
    /// Position of the eye.
    pub eye: Vector3<f64>,
    /// The point at the image centre.
    pub target: Vector3<f64>,
    /// World direction shown pointing up in the image.
    pub up: Vector3<f64>,
    /// Vertical field of view in degrees.
    pub fov_y_deg: f64,
}

impl Camera {
    /// A camera that shows the whole box `[lo, hi]` in an image of aspect ratio `aspect`
    /// (width / height), seen from `azimuth_deg` around the up axis (0: looking along −z,
    /// from the +z side) and `elevation_deg` above the horizontal. `zoom` > 1 moves closer.
    /// The up axis is +y.
    pub fn framing(
        lo: Vector3<f64>,
        hi: Vector3<f64>,
        aspect: f64,
        azimuth_deg: f64,
        elevation_deg: f64,
        zoom: f64,
    ) -> Self {
        let fov_y_deg: f64 = 30.0;
        let center = 0.5 * (lo + hi);
        let radius = (0.5 * (hi - lo).norm()).max(1e-9);
        let (az, el) = (azimuth_deg.to_radians(), elevation_deg.to_radians());
        let dir = Vector3::new(el.cos() * az.sin(), el.sin(), el.cos() * az.cos());
        // The bounding sphere fits the narrower of the two fields of view.
        let half_y = 0.5 * fov_y_deg.to_radians();
        let half_x = (half_y.tan() * aspect.max(1e-3)).atan();
        let half = half_y.min(half_x);
        let distance = radius / half.sin() / zoom.max(1e-3);
        Self {
            eye: center + distance * dir,
            target: center,
            up: Vector3::y(),
            fov_y_deg,
        }
    }

    /// Orthonormal camera frame `(right, up, forward)`.
    pub(crate) fn basis(&self) -> (Vector3<f64>, Vector3<f64>, Vector3<f64>) {
        let forward = (self.target - self.eye)
            .try_normalize(0.0)
            .unwrap_or(-Vector3::z());
        let right = forward
            .cross(&self.up)
            .try_normalize(1e-12)
            .unwrap_or_else(|| forward.cross(&Vector3::x()).normalize());
        let up = right.cross(&forward);
        (right, up, forward)
    }
}

/// World → screen projection for one image.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Projector {
    eye: Vector3<f64>,
    right: Vector3<f64>,
    up: Vector3<f64>,
    forward: Vector3<f64>,
    focal: f64,
    cx: f64,
    cy: f64,
}

/// Points nearer than this (along the view direction) are not drawn.
pub(crate) const NEAR: f64 = 1e-6;

impl Projector {
    /// Projection for an image of `height` pixels whose centre column is `cx`.
    pub fn new(camera: &Camera, cx: f64, height: f64) -> Self {
        let (right, up, forward) = camera.basis();
        let focal = 0.5 * height / (0.5 * camera.fov_y_deg.to_radians()).tan();
        Self {
            eye: camera.eye,
            right,
            up,
            forward,
            focal,
            cx,
            cy: 0.5 * height,
        }
    }

    /// Camera-space coordinates (right, up, depth) of a world point.
    pub fn camera_coords(&self, p: &Vector3<f64>) -> Vector3<f64> {
        let d = p - self.eye;
        Vector3::new(d.dot(&self.right), d.dot(&self.up), d.dot(&self.forward))
    }

    /// Screen position `(x, y)` in pixels (y down) and depth of a camera-space point with
    /// depth ≥ [`NEAR`].
    pub fn screen_coords(&self, c: &Vector3<f64>) -> [f32; 3] {
        let s = self.focal / c.z;
        [
            (self.cx + s * c.x) as f32,
            (self.cy - s * c.y) as f32,
            c.z as f32,
        ]
    }

    /// The view direction.
    pub fn forward(&self) -> Vector3<f64> {
        self.forward
    }

    /// The camera's right and up axes.
    pub fn right_up(&self) -> (Vector3<f64>, Vector3<f64>) {
        (self.right, self.up)
    }
}
