//! One picture of a scene: shaded surfaces, an optional ground grid, a colour bar, a legend
//! and a caption.

use crate::camera::{Projector, NEAR};
use crate::colormap::{colormap_lut, tick_label};
use crate::raster::{blend, scale, Canvas, EdgeStyle};
use crate::text::{draw_labels, Align, Label};
use crate::{Camera, ColorBar, Image};
use nalgebra::Vector3;

/// How a surface is coloured.
#[derive(Debug, Clone, Copy)]
pub enum Paint<'a> {
    /// One colour.
    Solid([u8; 3]),
    /// A scalar per vertex, interpolated across triangles and mapped through the colour map.
    VertexField(&'a [f32]),
    /// A scalar per triangle (for example a per-element stress), mapped through the colour map.
    FaceField(&'a [f32]),
}

/// A triangle surface to draw: a body's boundary, or later an obstacle.
#[derive(Debug, Clone, Copy)]
pub struct Surface<'a> {
    /// Vertex positions (world coordinates).
    pub positions: &'a [[f32; 3]],
    /// Triangles as indices into `positions`.
    pub triangles: &'a [[u32; 3]],
    /// Colouring.
    pub paint: Paint<'a>,
}

/// A ground plane drawn as a light floor with grid lines, within `half_extent` of `point`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ground {
    /// A point on the plane (the grid is centred here).
    pub point: Vector3<f64>,
    /// The plane's normal (need not be unit length).
    pub normal: Vector3<f64>,
    /// Distance between grid lines.
    pub spacing: f64,
    /// Half the side of the square drawn.
    pub half_extent: f64,
}

/// Everything about a picture except the surfaces.
#[derive(Debug, Clone)]
pub struct View {
    /// The camera (see [`Camera::framing`] and [`View::scene_aspect`]).
    pub camera: Camera,
    /// Width of the image in pixels.
    pub width: u32,
    /// Height of the image in pixels.
    pub height: u32,
    /// Draw triangle edges.
    pub edges: bool,
    /// Render at this many times the size and average down (anti-aliasing); 1 = off.
    pub supersample: u32,
    /// Optional ground plane.
    pub ground: Option<Ground>,
    /// Range and label of the colour map, drawn as a bar on the right. Field paints use its
    /// range (without it, each surface's own min–max).
    pub color_bar: Option<ColorBar>,
    /// Names and colours listed in the top-left corner, under the caption (one per body).
    pub legend: Vec<(String, [u8; 3])>,
    /// Text in the top-left corner (e.g. the time).
    pub caption: Option<String>,
}

/// Width of the strip on the right that holds the colour bar and its labels.
fn bar_strip(width: u32, height: u32) -> u32 {
    (height / 4 + 40).min(width / 3)
}

impl View {
    /// A view of `width × height` pixels, edges drawn, 2× supersampling, no extras.
    pub fn new(camera: Camera, width: u32, height: u32) -> Self {
        Self {
            camera,
            width,
            height,
            edges: true,
            supersample: 2,
            ground: None,
            color_bar: None,
            legend: Vec::new(),
            caption: None,
        }
    }

    /// Aspect ratio (width / height) of the part of the image the scene is drawn in: the
    /// whole image, less the colour-bar strip when there is a colour bar. Pass it to
    /// [`Camera::framing`].
    pub fn scene_aspect(&self) -> f64 {
        self.scene_width() as f64 / self.height.max(1) as f64
    }

    fn scene_width(&self) -> u32 {
        if self.color_bar.is_some() {
            self.width - bar_strip(self.width, self.height)
        } else {
            self.width
        }
    }
}

const BACKGROUND_TOP: [u8; 3] = [252, 252, 253];
const BACKGROUND_BOTTOM: [u8; 3] = [214, 222, 233];
const EDGE_COLOR: [u8; 3] = [25, 28, 35];
const TEXT_COLOR: [u8; 3] = [30, 30, 30];

/// Renders `surfaces` as seen in `view`. The same input always gives the same pixels.
pub fn render(surfaces: &[Surface], view: &View) -> Image {
    let ss = view.supersample.max(1) as usize;
    let (w, h) = (
        view.width.max(1) as usize * ss,
        view.height.max(1) as usize * ss,
    );
    let mut canvas = Canvas::new(w, h, |y| {
        blend(BACKGROUND_TOP, BACKGROUND_BOTTOM, y as f32 / h as f32)
    });
    let proj = Projector::new(
        &view.camera,
        0.5 * (view.scene_width() as usize * ss) as f64,
        h as f64,
    );
    if let Some(g) = &view.ground {
        draw_ground(&mut canvas, &proj, g);
    }
    let forward = proj.forward();
    let (right, up) = proj.right_up();
    let light = (-forward + 0.8 * up + 0.5 * right).normalize();
    let edges = view.edges.then_some(EdgeStyle {
        width: 0.5 * ss as f32,
        color: EDGE_COLOR,
        opacity: 0.45,
    });
    let lut = colormap_lut();
    for s in surfaces {
        let range = match (&view.color_bar, s.paint) {
            (Some(bar), _) => (bar.min, bar.max),
            (None, Paint::VertexField(v) | Paint::FaceField(v)) => min_max(v),
            (None, Paint::Solid(_)) => (0.0, 1.0),
        };
        let span = range.1 - range.0;
        let to_lut = |v: f32| {
            let t = if span > 0.0 {
                (v - range.0) / span
            } else {
                0.0
            };
            lut[(t.clamp(0.0, 1.0) * 255.0).round() as usize]
        };
        let world: Vec<Vector3<f64>> = s
            .positions
            .iter()
            .map(|p| Vector3::new(p[0].into(), p[1].into(), p[2].into()))
            .collect();
        let cam: Vec<Vector3<f64>> = world.iter().map(|p| proj.camera_coords(p)).collect();
        for (f, tri) in s.triangles.iter().enumerate() {
            if tri.iter().any(|&i| i as usize >= world.len()) {
                continue;
            }
            let idx = tri.map(|i| i as usize);
            if idx.iter().any(|&i| cam[i].z < NEAR) {
                continue;
            }
            let [a, b, c] = idx.map(|i| world[i]);
            let Some(mut n) = (b - a).cross(&(c - a)).try_normalize(0.0) else {
                continue;
            };
            if n.dot(&forward) > 0.0 {
                n = -n; // two-sided: light the side facing the camera
            }
            let intensity = (0.38 + 0.62 * n.dot(&light).max(0.0)) as f32;
            let screen = idx.map(|i| proj.screen_coords(&cam[i]));
            match s.paint {
                Paint::Solid(color) => {
                    let shaded = scale(color, intensity);
                    canvas.triangle(screen, edges, |_| shaded);
                }
                Paint::FaceField(values) => {
                    let shaded = scale(to_lut(values.get(f).copied().unwrap_or(0.0)), intensity);
                    canvas.triangle(screen, edges, |_| shaded);
                }
                Paint::VertexField(values) => {
                    let v = idx.map(|i| values.get(i).copied().unwrap_or(0.0));
                    canvas.triangle(screen, edges, |l| {
                        scale(to_lut(l[0] * v[0] + l[1] * v[1] + l[2] * v[2]), intensity)
                    });
                }
            }
        }
    }
    let mut image = Image {
        width: w as u32,
        height: h as u32,
        rgb: canvas.rgb,
    }
    .downsample(ss as u32);
    overlays(&mut image, view);
    image
}

fn min_max(v: &[f32]) -> (f32, f32) {
    v.iter()
        .filter(|x| x.is_finite())
        .fold((f32::INFINITY, f32::NEG_INFINITY), |(lo, hi), &x| {
            (lo.min(x), hi.max(x))
        })
}

/// A light floor square and grid lines every `spacing`, within `half_extent` of the point.
fn draw_ground(canvas: &mut Canvas, proj: &Projector, g: &Ground) {
    let Some(n) = g.normal.try_normalize(0.0) else {
        return;
    };
    let u = n
        .cross(&Vector3::x())
        .try_normalize(1e-6)
        .unwrap_or_else(|| n.cross(&Vector3::z()).normalize());
    let v = n.cross(&u);
    let e = g.half_extent.abs();
    let corner = |s: f64, t: f64| g.point + s * u + t * v;
    let quad = [corner(-e, -e), corner(e, -e), corner(e, e), corner(-e, e)];
    let cam = quad.map(|p| proj.camera_coords(&p));
    if cam.iter().all(|c| c.z >= NEAR) {
        let s = cam.map(|c| proj.screen_coords(&c));
        for t in [[s[0], s[1], s[2]], [s[0], s[2], s[3]]] {
            canvas.triangle(t, None, |_| [236, 236, 232]);
        }
    }
    let spacing = g.spacing.abs().max(e / 200.0).max(f64::MIN_POSITIVE);
    let k = (e / spacing).floor() as i64;
    for i in -k..=k {
        let o = i as f64 * spacing;
        for (p, q) in [(corner(o, -e), corner(o, e)), (corner(-e, o), corner(e, o))] {
            if let Some((a, b)) = clip_near(proj.camera_coords(&p), proj.camera_coords(&q)) {
                canvas.line(
                    proj.screen_coords(&a),
                    proj.screen_coords(&b),
                    [150, 150, 150],
                    1e-4,
                );
            }
        }
    }
}

/// Clips a camera-space segment to depth ≥ [`NEAR`].
fn clip_near(a: Vector3<f64>, b: Vector3<f64>) -> Option<(Vector3<f64>, Vector3<f64>)> {
    match (a.z >= NEAR, b.z >= NEAR) {
        (true, true) => Some((a, b)),
        (false, false) => None,
        (a_in, _) => {
            let t = (NEAR - a.z) / (b.z - a.z);
            let m = a + t * (b - a);
            Some(if a_in { (a, m) } else { (m, b) })
        }
    }
}

/// Colour bar, legend and caption at the final resolution.
fn overlays(image: &mut Image, view: &View) {
    let (w, h) = (image.width as i32, image.height as i32);
    let font = (h as f64 / 28.0).clamp(10.0, 22.0);
    let mut labels = Vec::new();
    if let Some(bar) = &view.color_bar {
        let strip = bar_strip(image.width, image.height) as i32;
        let x0 = w - strip + (strip / 8).max(4);
        let bw = (strip / 8).max(6);
        let (top, bottom) = ((h as f64 * 0.18) as i32, (h as f64 * 0.85) as i32);
        let rows = (bottom - top).max(1);
        for y in top..=bottom {
            let t = (bottom - y) as f32 / rows as f32;
            let c = crate::colormap(t);
            for x in x0..x0 + bw {
                put(image, x, y, c);
            }
        }
        for (x, y) in (x0 - 1..=x0 + bw)
            .flat_map(|x| [(x, top - 1), (x, bottom + 1)])
            .chain((top - 1..=bottom + 1).flat_map(|y| [(x0 - 1, y), (x0 + bw, y)]))
        {
            put(image, x, y, TEXT_COLOR);
        }
        for k in 0..=4 {
            let t = k as f32 / 4.0;
            let y = bottom - (t * rows as f32).round() as i32;
            for x in x0 + bw..x0 + bw + 4 {
                put(image, x, y, TEXT_COLOR);
            }
            labels.push(Label {
                x: x0 + bw + 6,
                y,
                size: font * 0.85,
                align: Align::Left,
                color: TEXT_COLOR,
                text: tick_label(bar.min + t * (bar.max - bar.min)),
            });
        }
        labels.push(Label {
            x: (x0 + bw / 2).min(w - strip / 2),
            y: top - (font * 1.1) as i32,
            size: font,
            align: Align::Center,
            color: TEXT_COLOR,
            text: bar.label.clone(),
        });
    }
    if let Some(caption) = &view.caption {
        labels.push(Label {
            x: (font * 0.6) as i32,
            y: (font * 0.9) as i32,
            size: font,
            align: Align::Left,
            color: TEXT_COLOR,
            text: caption.clone(),
        });
    }
    // The legend goes under the caption, on the left (the colour bar owns the right).
    for (i, (name, color)) in view.legend.iter().enumerate() {
        let y = (font * (0.9 + 1.3 * (i + usize::from(view.caption.is_some())) as f64)) as i32;
        let x = (font * 0.6) as i32;
        let box_size = (font * 0.7) as i32;
        for yy in y - box_size / 2..=y + box_size / 2 {
            for xx in x..=x + box_size {
                put(image, xx, yy, *color);
            }
        }
        labels.push(Label {
            x: x + box_size + (font * 0.4) as i32,
            y,
            size: font,
            align: Align::Left,
            color: TEXT_COLOR,
            text: name.clone(),
        });
    }
    draw_labels(&mut image.rgb, image.width, image.height, &labels);
}

fn put(image: &mut Image, x: i32, y: i32, c: [u8; 3]) {
    if x >= 0 && y >= 0 && (x as u32) < image.width && (y as u32) < image.height {
        let k = 3 * (y as usize * image.width as usize + x as usize);
        image.rgb[k..k + 3].copy_from_slice(&c);
    }
}
