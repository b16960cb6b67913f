//! Text through `plotters` + `ab_glyph` with DejaVu Sans compiled in (no system fonts).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::sync::Once;

/// The font family every label uses.
pub(crate) const FONT: &str = "sans-serif";

/// Registers the bundled DejaVu Sans as `sans-serif` (once per process).
pub(crate) fn register_fonts() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // The font bytes are compiled in and known to parse; a failure would only lose text.
        let _ = plotters::style::register_font(FONT, FontStyle::Normal, dejavu::sans::regular());
    });
}

/// Horizontal anchor of a label.
#[derive(Clone, Copy)]
pub(crate) enum Align {
    Left,
    Center,
}

/// One label to draw: position of its anchor (pixels), size (pixels), colour, text.
pub(crate) struct Label {
    pub x: i32,
    pub y: i32,
    pub size: f64,
    pub align: Align,
    pub color: [u8; 3],
    pub text: String,
}

/// Draws `labels` into an RGB buffer of `w × h` pixels, vertically centred on their anchor.
pub(crate) fn draw_labels(rgb: &mut [u8], w: u32, h: u32, labels: &[Label]) {
    if labels.is_empty() {
        return;
    }
    register_fonts();
    let root = BitMapBackend::with_buffer(rgb, (w, h)).into_drawing_area();
    for l in labels {
        let h_pos = match l.align {
            Align::Left => HPos::Left,
            Align::Center => HPos::Center,
        };
        let color = RGBColor(l.color[0], l.color[1], l.color[2]);
        let style = TextStyle::from((FONT, l.size).into_font())
            .color(&color)
            .pos(Pos::new(h_pos, VPos::Center));
        // A label that cannot be drawn (no glyphs) is left out rather than failing the frame.
        let _ = root.draw_text(&l.text, &style, (l.x, l.y));
    }
    let _ = root.present();
}
