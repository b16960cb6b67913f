//! An 8-bit RGB image and its PNG encoding.

use crate::RenderError;
use std::path::Path;

/// An 8-bit RGB image, rows top to bottom, `rgb.len() == 3 · width · height`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
    /// Pixels as `r, g, b` bytes.
    pub rgb: Vec<u8>,
}

impl Image {
    /// An image filled with one colour.
    pub fn filled(width: u32, height: u32, color: [u8; 3]) -> Self {
        let n = width as usize * height as usize;
        Self {
            width,
            height,
            rgb: color.iter().copied().cycle().take(3 * n).collect(),
        }
    }

    /// The colour of pixel `(x, y)`.
    pub fn pixel(&self, x: u32, y: u32) -> [u8; 3] {
        let i = 3 * (y as usize * self.width as usize + x as usize);
        [self.rgb[i], self.rgb[i + 1], self.rgb[i + 2]]
    }

    /// The image as PNG bytes (8-bit RGB, fast deflate; the same image always gives the same
    /// bytes).
    pub fn encode_png(&self) -> Result<Vec<u8>, png::EncodingError> {
        let mut out = Vec::with_capacity(self.rgb.len() / 4);
        {
            let mut enc = png::Encoder::new(&mut out, self.width, self.height);
            enc.set_color(png::ColorType::Rgb);
            enc.set_depth(png::BitDepth::Eight);
            enc.set_compression(png::Compression::Fast);
            let mut w = enc.write_header()?;
            w.write_image_data(&self.rgb)?;
            w.finish()?;
        }
        Ok(out)
    }

    /// Writes the image to `path` as PNG.
    pub fn write_png(&self, path: &Path) -> Result<(), RenderError> {
        let bytes = self
            .encode_png()
            .map_err(|e| RenderError::encode(path, e))?;
        std::fs::write(path, bytes).map_err(|e| RenderError::io(path, e))
    }

    /// Decodes PNG bytes (8-bit RGB or RGBA; alpha is dropped).
    pub fn decode_png(bytes: &[u8]) -> Result<Self, png::DecodingError> {
        let mut reader = png::Decoder::new(std::io::Cursor::new(bytes)).read_info()?;
        let size = reader.output_buffer_size().unwrap_or(0);
        let mut buf = vec![0; size];
        let info = reader.next_frame(&mut buf)?;
        buf.truncate(info.buffer_size());
        let rgb = match info.color_type {
            png::ColorType::Rgba => buf
                .chunks_exact(4)
                .flat_map(|p| [p[0], p[1], p[2]])
                .collect(),
            _ => buf,
        };
        Ok(Self {
            width: info.width,
            height: info.height,
            rgb,
        })
    }

    /// Box-filter downsampling by an integer `factor` (anti-aliasing after supersampling).
    pub fn downsample(&self, factor: u32) -> Self {
        if factor <= 1 {
            return self.clone();
        }
        let (w, h) = (self.width / factor, self.height / factor);
        let f = factor as usize;
        let n = (f * f) as u32;
        let mut rgb = Vec::with_capacity(3 * w as usize * h as usize);
        for y in 0..h as usize {
            for x in 0..w as usize {
                let mut sum = [0u32; 3];
                for dy in 0..f {
                    let row = (y * f + dy) * self.width as usize;
                    for dx in 0..f {
                        let i = 3 * (row + x * f + dx);
                        for (s, v) in sum.iter_mut().zip(&self.rgb[i..i + 3]) {
                            *s += u32::from(*v);
                        }
                    }
                }
                rgb.extend(sum.map(|s| ((s + n / 2) / n) as u8));
            }
        }
        Self {
            width: w,
            height: h,
            rgb,
        }
    }
}
