//! The rasterizer: depth-tested triangles and lines into an RGB buffer.
//!
//! The depth buffer stores `1/z` (z: distance along the view direction), which is linear in
//! screen space; larger is nearer, 0 is empty.

/// A colour buffer with a depth buffer.
pub(crate) struct Canvas {
    pub w: usize,
    pub h: usize,
    pub rgb: Vec<u8>,
    pub depth: Vec<f32>,
}

/// A projected vertex: screen x, y (pixels, y down) and depth z (> 0).
pub(crate) type ScreenVertex = [f32; 3];

/// Edge drawing of a triangle: line half-width in pixels and the edge colour.
#[derive(Clone, Copy)]
pub(crate) struct EdgeStyle {
    pub width: f32,
    pub color: [u8; 3],
    pub opacity: f32,
}

impl Canvas {
    /// A canvas of `w × h` whose row `y` is filled with `background(y)`.
    pub fn new(w: usize, h: usize, background: impl Fn(usize) -> [u8; 3]) -> Self {
        let mut rgb = Vec::with_capacity(3 * w * h);
        for y in 0..h {
            let c = background(y);
            for _ in 0..w {
                rgb.extend_from_slice(&c);
            }
        }
        Self {
            w,
            h,
            rgb,
            depth: vec![0.0; w * h],
        }
    }

    /// Fills triangle `v` where it is nearer than what is drawn. `shade` receives the
    /// perspective-correct barycentric coordinates of the pixel centre and returns its
    /// colour; with `edges`, pixels near the triangle's sides are blended towards the edge
    /// colour.
    pub fn triangle(
        &mut self,
        v: [ScreenVertex; 3],
        edges: Option<EdgeStyle>,
        mut shade: impl FnMut([f32; 3]) -> [u8; 3],
    ) {
        let [a, b, c] = v;
        let area = (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]);
        if !area.is_finite() || area.abs() < 1e-12 {
            return;
        }
        let xmin = a[0].min(b[0]).min(c[0]).floor().max(0.0) as usize;
        let ymin = a[1].min(b[1]).min(c[1]).floor().max(0.0) as usize;
        let xmax = (a[0].max(b[0]).max(c[0]).ceil() as isize).min(self.w as isize - 1);
        let ymax = (a[1].max(b[1]).max(c[1]).ceil() as isize).min(self.h as isize - 1);
        if xmax < 0 || ymax < 0 || xmin as isize > xmax || ymin as isize > ymax {
            return;
        }
        let inv_area = 1.0 / area;
        let iz = [1.0 / a[2], 1.0 / b[2], 1.0 / c[2]];
        // Distance (pixels) to the side opposite vertex i is bary_i · |2A| / |side_i|.
        let side = |p: ScreenVertex, q: ScreenVertex| (q[0] - p[0]).hypot(q[1] - p[1]).max(1e-6);
        let dist_scale = [
            area.abs() / side(b, c),
            area.abs() / side(c, a),
            area.abs() / side(a, b),
        ];
        let edge_fn = |p: ScreenVertex, q: ScreenVertex, x: f32, y: f32| {
            (q[0] - p[0]) * (y - p[1]) - (q[1] - p[1]) * (x - p[0])
        };
        for y in ymin..=ymax as usize {
            let py = y as f32 + 0.5;
            for x in xmin..=xmax as usize {
                let px = x as f32 + 0.5;
                let l0 = edge_fn(b, c, px, py) * inv_area;
                let l1 = edge_fn(c, a, px, py) * inv_area;
                let l2 = 1.0 - l0 - l1;
                if l0 < 0.0 || l1 < 0.0 || l2 < 0.0 {
                    continue;
                }
                let depth = l0 * iz[0] + l1 * iz[1] + l2 * iz[2];
                let k = y * self.w + x;
                if depth <= self.depth[k] {
                    continue;
                }
                self.depth[k] = depth;
                let inv = 1.0 / depth;
                let bary = [l0 * iz[0] * inv, l1 * iz[1] * inv, l2 * iz[2] * inv];
                let mut color = shade(bary);
                if let Some(e) = edges {
                    let d = (l0 * dist_scale[0])
                        .min(l1 * dist_scale[1])
                        .min(l2 * dist_scale[2]);
                    let t = e.opacity * (1.0 - (d - e.width).max(0.0)).clamp(0.0, 1.0);
                    if t > 0.0 {
                        color = blend(color, e.color, t);
                    }
                }
                self.rgb[3 * k..3 * k + 3].copy_from_slice(&color);
            }
        }
    }

    /// Draws a depth-tested line from `a` to `b`, one pixel wide; `bias` > 0 lets it win
    /// against a surface at the same depth (a grid on its own plane).
    pub fn line(&mut self, a: ScreenVertex, b: ScreenVertex, color: [u8; 3], bias: f32) {
        let (dx, dy) = (b[0] - a[0], b[1] - a[1]);
        let n = dx.abs().max(dy.abs()).ceil();
        if !n.is_finite() || n > 1e5 {
            return;
        }
        let n = n.max(1.0) as usize;
        let (ia, ib) = (1.0 / a[2], 1.0 / b[2]);
        for i in 0..=n {
            let t = i as f32 / n as f32;
            let (x, y) = (a[0] + t * dx, a[1] + t * dy);
            if x < 0.0 || y < 0.0 || x >= self.w as f32 || y >= self.h as f32 {
                continue;
            }
            let k = y as usize * self.w + x as usize;
            let depth = ia + t * (ib - ia);
            if depth * (1.0 + bias) > self.depth[k] {
                self.rgb[3 * k..3 * k + 3].copy_from_slice(&color);
            }
        }
    }
}

/// `(1 − t)·a + t·b` per channel.
pub(crate) fn blend(a: [u8; 3], b: [u8; 3], t: f32) -> [u8; 3] {
    [0, 1, 2].map(|c| (a[c] as f32 + t * (b[c] as f32 - a[c] as f32)).round() as u8)
}

/// Scales a colour by a light intensity.
pub(crate) fn scale(c: [u8; 3], s: f32) -> [u8; 3] {
    c.map(|v| (v as f32 * s).round().clamp(0.0, 255.0) as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearer_quad_hides_the_farther_one_in_either_drawing_order() {
        // Two overlapping quads (two triangles each): red at depth 2 over [10, 40]², blue at
        // depth 1 over [25, 55]². Where they overlap, blue (nearer) must win.
        let quad = |x0: f32, x1: f32, z: f32| {
            [
                [[x0, x0, z], [x1, x0, z], [x1, x1, z]],
                [[x0, x0, z], [x1, x1, z], [x0, x1, z]],
            ]
        };
        let (red, blue) = ([255, 0, 0], [0, 0, 255]);
        for order in [[0, 1], [1, 0]] {
            let mut c = Canvas::new(64, 64, |_| [255, 255, 255]);
            let quads = [(quad(10.0, 40.0, 2.0), red), (quad(25.0, 55.0, 1.0), blue)];
            for &q in &order {
                let (tris, color) = quads[q];
                for t in tris {
                    c.triangle(t, None, |_| color);
                }
            }
            let px = |x: usize, y: usize| {
                let k = 3 * (y * 64 + x);
                [c.rgb[k], c.rgb[k + 1], c.rgb[k + 2]]
            };
            assert_eq!(px(30, 30), blue, "overlap, order {order:?}");
            assert_eq!(px(15, 15), red, "red only");
            assert_eq!(px(50, 50), blue, "blue only");
            assert_eq!(px(5, 60), [255, 255, 255], "background");
        }
    }
}
