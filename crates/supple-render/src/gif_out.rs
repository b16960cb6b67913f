//! Animated GIF output.

use crate::{Image, RenderError};
use rayon::prelude::*;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

/// Writes an animated GIF (looping forever), one frame at a time.
pub struct GifWriter {
    encoder: gif::Encoder<BufWriter<File>>,
    path: PathBuf,
    width: u16,
    height: u16,
}

/// NeuQuant sampling factor (1 best … 30 fastest). Frames here are flat-shaded with few
/// distinct hues, so the fastest setting loses little; it cut the GIF time of the bundled bar
/// run by 40 % against the crate's usual 10.
const QUANTIZE_SPEED: i32 = 30;

impl GifWriter {
    /// Creates `path` for frames of `width × height` pixels.
    pub fn create(path: &Path, width: u32, height: u32) -> Result<Self, RenderError> {
        let (w, h) = (dim(path, width)?, dim(path, height)?);
        let file = File::create(path).map_err(|e| RenderError::io(path, e))?;
        let mut encoder = gif::Encoder::new(BufWriter::new(file), w, h, &[])
            .map_err(|e| RenderError::encode(path, e))?;
        encoder
            .set_repeat(gif::Repeat::Infinite)
            .map_err(|e| RenderError::encode(path, e))?;
        Ok(Self {
            encoder,
            path: path.to_path_buf(),
            width: w,
            height: h,
        })
    }

    /// Appends frames shown for `delay_cs` hundredths of a second each. Colour quantization
    /// (the costly part) runs in parallel; frames are written in order, so the bytes do not
    /// depend on the number of threads.
    pub fn add_frames(&mut self, frames: &[(Image, u16)]) -> Result<(), RenderError> {
        if let Some((img, _)) = frames
            .iter()
            .find(|(img, _)| (img.width, img.height) != (self.width.into(), self.height.into()))
        {
            return Err(RenderError::encode(
                &self.path,
                format!(
                    "frame of {}×{} pixels in an animation of {}×{}",
                    img.width, img.height, self.width, self.height
                ),
            ));
        }
        let (w, h) = (self.width, self.height);
        let encoded: Vec<gif::Frame<'static>> = frames
            .par_iter()
            .map(|(img, delay)| {
                let mut frame = gif::Frame::from_rgb_speed(w, h, &img.rgb, QUANTIZE_SPEED);
                frame.delay = *delay;
                frame
            })
            .collect();
        for frame in &encoded {
            self.encoder
                .write_frame(frame)
                .map_err(|e| RenderError::encode(&self.path, e))?;
        }
        Ok(())
    }

    /// Finishes the file.
    pub fn finish(self) -> Result<(), RenderError> {
        let path = self.path;
        let writer = self
            .encoder
            .into_inner()
            .map_err(|e| RenderError::encode(&path, e))?;
        writer
            .into_inner()
            .map_err(|e| RenderError::io(&path, e.into_error()))?;
        Ok(())
    }
}

fn dim(path: &Path, v: u32) -> Result<u16, RenderError> {
    u16::try_from(v)
        .ok()
        .filter(|&v| v > 0)
        .ok_or_else(|| RenderError::encode(path, format!("GIF size {v} must be 1 to 65535")))
}

/// Which frames an animation at `fps` frames per second of simulated time shows, and for how
/// long: `(frame index, delay in 1/100 s)`. `times` are the frame times (ascending). Played
/// back, the animation runs at real time; frames closer together than `1/fps` are skipped,
/// and a frame is held longer where frames are sparser.
pub fn gif_schedule(times: &[f64], fps: f64) -> Vec<(usize, u16)> {
    let Some(&t0) = times.first() else {
        return Vec::new();
    };
    let step = 1.0 / fps.max(1e-3);
    let mut picked: Vec<usize> = Vec::new();
    let mut next = t0;
    for (i, &t) in times.iter().enumerate() {
        if t + 1e-9 * step >= next {
            picked.push(i);
            next = t0 + step * (((t - t0) / step + 1e-9).floor() + 1.0);
        }
    }
    // Delays: the time to the next picked frame, in centiseconds (GIF players ignore < 2).
    let mut out = Vec::with_capacity(picked.len());
    let mut clock_cs = 0.0;
    for (k, &i) in picked.iter().enumerate() {
        let t_next = picked.get(k + 1).map_or(times[i] + step, |&j| times[j]);
        let end_cs = (t_next - t0) * 100.0;
        let delay = (end_cs - clock_cs).round().clamp(2.0, 65535.0);
        clock_cs += delay;
        out.push((i, delay as u16));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schedule_samples_at_the_frame_rate() {
        let times: Vec<f64> = (0..=150).map(|k| k as f64 * 0.02).collect();
        let s = gif_schedule(&times, 25.0);
        assert_eq!(s.len(), 76);
        assert!(s.iter().all(|&(_, d)| d == 4));
        assert_eq!(s[1].0, 2);
        // Sparse frames are held longer.
        let s = gif_schedule(&[0.0, 0.5, 1.0], 25.0);
        assert_eq!(s, vec![(0, 50), (1, 50), (2, 4)]);
        assert!(gif_schedule(&[], 10.0).is_empty());
    }
}
