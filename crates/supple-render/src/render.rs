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
    /// One colour, no triangle edges even when [`View::edges`] is set, smooth (Gouraud)
    /// shading from vertex normals: each vertex's normal is the sum of its triangles'
    /// (area-weighted) normals, so the triangles must be wound consistently (see
    /// [`crate::shapes`]); give a face its own vertices for a hard edge. Triangles that reach
    /// nearer than 1 % of the camera's distance to its target are clipped there rather than
    /// dropped, so large planes and obstacles near the eye still show. For rigid obstacles.
    Plain([u8; 3]),
}

/// A triangle surface to draw: a body's boundary, or an obstacle.
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
    // Clipping depth of plain surfaces and the ground.
    let near = (0.01 * (view.camera.target - view.camera.eye).norm()).max(NEAR);
    if let Some(g) = &view.ground {
        draw_ground(&mut canvas, &proj, g, near);
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
        if let Paint::Plain(color) = s.paint {
            draw_plain(&mut canvas, &proj, s, color, &light, near);
            continue;
        }
        let range = match (&view.color_bar, s.paint) {
            (Some(bar), _) => (bar.min, bar.max),
            (None, Paint::VertexField(v) | Paint::FaceField(v)) => min_max(v),
            (None, Paint::Solid(_) | Paint::Plain(_)) => (0.0, 1.0),
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
                Paint::Solid(color) | Paint::Plain(color) => {
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

/// Light intensity of a surface whose normal makes `cos` with the light.
fn lit(cos: f64) -> f32 {
    (0.38 + 0.62 * cos.max(0.0)) as f32
}

/// Draws a [`Paint::Plain`] surface: vertex intensities from summed triangle normals
/// (turned, per triangle, to the side facing the camera), interpolated across each triangle;
/// triangles are clipped at depth `near`.
fn draw_plain(
    canvas: &mut Canvas,
    proj: &Projector,
    s: &Surface,
    color: [u8; 3],
    light: &Vector3<f64>,
    near: f64,
) {
    let world: Vec<Vector3<f64>> = s
        .positions
        .iter()
        .map(|p| Vector3::new(p[0].into(), p[1].into(), p[2].into()))
        .collect();
    let valid = |t: &[u32; 3]| t.iter().all(|&i| (i as usize) < world.len());
    let mut normals = vec![Vector3::zeros(); world.len()];
    for t in s.triangles.iter().filter(|t| valid(t)) {
        let [a, b, c] = t.map(|i| world[i as usize]);
        let n = (b - a).cross(&(c - a));
        for &i in t {
            normals[i as usize] += n;
        }
    }
    let cam: Vec<Vector3<f64>> = world.iter().map(|p| proj.camera_coords(p)).collect();
    let forward = proj.forward();
    for t in s.triangles.iter().filter(|t| valid(t)) {
        let idx = t.map(|i| i as usize);
        let [a, b, c] = idx.map(|i| world[i]);
        let Some(face) = (b - a).cross(&(c - a)).try_normalize(0.0) else {
            continue;
        };
        let side = if face.dot(&forward) > 0.0 { -1.0 } else { 1.0 };
        let corners = idx.map(|i| {
            let n = normals[i].try_normalize(0.0).unwrap_or(face);
            (cam[i], lit(side * n.dot(light)))
        });
        fill_polygon(canvas, proj, &corners, near, |i| scale(color, i));
    }
}

/// Fills the convex polygon of camera-space `corners` (each with an intensity), clipped at
/// depth `near`, colouring each pixel with `color(intensity)`.
fn fill_polygon(
    canvas: &mut Canvas,
    proj: &Projector,
    corners: &[(Vector3<f64>, f32)],
    near: f64,
    color: impl Fn(f32) -> [u8; 3],
) {
    // Sutherland–Hodgman against the one plane depth = near.
    let mut poly: Vec<(Vector3<f64>, f32)> = Vec::with_capacity(corners.len() + 1);
    for (k, &(p, ip)) in corners.iter().enumerate() {
        let (q, iq) = corners[(k + 1) % corners.len()];
        if p.z >= near {
            poly.push((p, ip));
        }
        if (p.z >= near) != (q.z >= near) {
            let t = (near - p.z) / (q.z - p.z);
            poly.push((p + t * (q - p), ip + t as f32 * (iq - ip)));
        }
    }
    for k in 1..poly.len().saturating_sub(1) {
        let tri = [poly[0], poly[k], poly[k + 1]];
        let screen = tri.map(|(c, _)| proj.screen_coords(&c));
        let shade = tri.map(|(_, i)| i);
        if shade[0] == shade[1] && shade[1] == shade[2] {
            let c = color(shade[0]); // a flat triangle: exactly one colour
            canvas.triangle(screen, None, |_| c);
        } else {
            canvas.triangle(screen, None, |l| {
                color(l[0] * shade[0] + l[1] * shade[1] + l[2] * shade[2])
            });
        }
    }
}

/// A light floor square and grid lines every `spacing`, within `half_extent` of the point;
/// both are clipped at depth `near`.
fn draw_ground(canvas: &mut Canvas, proj: &Projector, g: &Ground, near: f64) {
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
    let cam = quad.map(|p| (proj.camera_coords(&p), 1.0));
    fill_polygon(canvas, proj, &cam, near, |_| [236, 236, 232]);
    let spacing = g.spacing.abs().max(e / 200.0).max(f64::MIN_POSITIVE);
    let k = (e / spacing).floor() as i64;
    for i in -k..=k {
        let o = i as f64 * spacing;
        for (p, q) in [(corner(o, -e), corner(o, e)), (corner(-e, o), corner(e, o))] {
            if let Some((a, b)) = clip_near(proj.camera_coords(&p), proj.camera_coords(&q), near) {
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

/// Clips a camera-space segment to depth ≥ `near`.
fn clip_near(a: Vector3<f64>, b: Vector3<f64>, near: f64) -> Option<(Vector3<f64>, Vector3<f64>)> {
    match (a.z >= near, b.z >= near) {
        (true, true) => Some((a, b)),
        (false, false) => None,
        (a_in, _) => {
            let t = (near - a.z) / (b.z - a.z);
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A floor square of side 20 about the origin, two triangles, wound towards +y.
    const FLOOR: [[f32; 3]; 4] = [
        [-10.0, 0.0, -10.0],
        [-10.0, 0.0, 10.0],
        [10.0, 0.0, 10.0],
        [10.0, 0.0, -10.0],
    ];
    const TRIANGLES: [[u32; 3]; 2] = [[0, 1, 2], [0, 2, 3]];

    fn view() -> View {
        let camera = Camera {
            eye: Vector3::new(0.0, 1.0, 3.0),
            target: Vector3::zeros(),
            up: Vector3::y(),
            fov_y_deg: 30.0,
        };
        View::new(camera, 80, 60)
    }

    fn floor(paint: Paint) -> Image {
        let s = Surface {
            positions: &FLOOR,
            triangles: &TRIANGLES,
            paint,
        };
        render(&[s], &view())
    }

    #[test]
    fn plain_surfaces_reaching_behind_the_eye_are_clipped_not_dropped() {
        let grey = [200, 200, 200];
        let empty = render(&[], &view());
        // Both triangles have a corner behind the eye: a solid paint drops them whole.
        assert_eq!(floor(Paint::Solid(grey)), empty);
        let plain = floor(Paint::Plain(grey));
        for (x, y) in [(40, 58), (2, 58), (77, 40)] {
            let p = plain.pixel(x, y);
            assert!(
                p[0] == p[1] && p[1] == p[2] && p[0] < 200,
                "({x}, {y}): {p:?}"
            );
        }
        // Above the horizon there is no floor.
        assert_eq!(plain.pixel(40, 1), empty.pixel(40, 1));
    }

    #[test]
    fn plain_paint_draws_no_edges_and_shades_a_flat_face_evenly() {
        let mut positions = FLOOR;
        for p in &mut positions {
            p[0] *= 0.1;
            p[2] *= 0.1; // a 2 × 2 square in front of the eye
        }
        let draw = |paint| {
            let s = Surface {
                positions: &positions,
                triangles: &TRIANGLES,
                paint,
            };
            render(&[s], &view())
        };
        let empty = render(&[], &view());
        let shades = |img: &Image| {
            // Inside the square's image, across its diagonal (through the centre).
            let mut c: Vec<[u8; 3]> = (27..34)
                .flat_map(|y| (32..48).map(move |x| (x, y)))
                .filter(|&(x, y)| img.pixel(x, y) != empty.pixel(x, y))
                .map(|(x, y)| img.pixel(x, y))
                .collect();
            c.sort_unstable();
            c.dedup();
            c
        };
        assert_eq!(shades(&draw(Paint::Plain([90, 160, 90]))).len(), 1);
        // With a solid paint the shared diagonal is drawn as an edge.
        assert!(shades(&draw(Paint::Solid([90, 160, 90]))).len() > 1);
    }
}
