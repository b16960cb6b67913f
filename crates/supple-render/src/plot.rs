//! Line charts of run metrics (`plotters` on an RGB buffer, encoded with [`Image::write_png`]).

use crate::text::{register_fonts, FONT};
use crate::{body_color, Image, RenderError};
use plotters::prelude::*;
use std::path::Path;

/// A named line: `(x, y)` points in order; non-finite points are left out and magnitudes
/// past `1e300` are drawn at `±1e300`.
#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// Legend entry.
    pub name: String,
    /// The points.
    pub points: Vec<(f64, f64)>,
}

/// One set of axes, sharing the chart's x axis.
#[derive(Debug, Clone, PartialEq)]
pub struct Panel {
    /// Caption above the axes (may be empty).
    pub title: String,
    /// Y-axis label with its unit.
    pub y_label: String,
    /// The lines; a legend is drawn when there are several.
    pub series: Vec<Series>,
}

/// A picture of one or more panels stacked vertically.
#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// X-axis label with its unit (every panel).
    pub x_label: String,
    /// The panels, top to bottom.
    pub panels: Vec<Panel>,
    /// Width in pixels.
    pub width: u32,
    /// Height in pixels.
    pub height: u32,
}

/// Draws `chart` into an image.
pub fn draw_chart(chart: &Chart) -> Result<Image, String> {
    register_fonts();
    let mut img = Image::filled(chart.width.max(64), chart.height.max(64), [255, 255, 255]);
    {
        let root =
            BitMapBackend::with_buffer(&mut img.rgb, (img.width, img.height)).into_drawing_area();
        let areas = root.split_evenly((chart.panels.len().max(1), 1));
        for (panel, area) in chart.panels.iter().zip(&areas) {
            draw_panel(panel, &chart.x_label, area).map_err(|e| e.to_string())?;
        }
        root.present().map_err(|e| e.to_string())?;
    }
    Ok(img)
}

/// Draws `chart` and writes it to `path` as PNG.
pub fn write_chart(path: &Path, chart: &Chart) -> Result<(), RenderError> {
    draw_chart(chart)
        .map_err(|e| RenderError::encode(path, e))?
        .write_png(path)
}

/// The largest magnitude drawn: larger finite values are drawn at `±LIMIT` (at the axes'
/// edge). Without it a column spanning `±1e308` made the axis width overflow to infinity and
/// plotters' tick search (`gen_key_points_comp`, which shrinks the tick step until enough
/// ticks fit) loop forever on NaN tick counts; `1e300` leaves the width and the padding
/// finite.
const LIMIT: f64 = 1e300;

/// A value as drawn: `None` when not finite, clamped to `±LIMIT` otherwise.
fn drawn(v: f64) -> Option<f64> {
    v.is_finite().then_some(v.clamp(-LIMIT, LIMIT))
}

/// The axis range of `values` (non-finite ones left out), padded by 5 %, and at least a
/// billionth of the values' magnitude wide so that the ticks stay apart in `f64`.
fn finite_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter_map(drawn)
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if lo > hi {
        return (0.0, 1.0);
    }
    let pad = (0.05 * (hi - lo)).max(1e-9 * lo.abs().max(hi.abs()).max(1e-3));
    (lo - pad, hi + pad)
}

type Area<'a> = DrawingArea<BitMapBackend<'a>, plotters::coord::Shift>;

fn draw_panel(panel: &Panel, x_label: &str, area: &Area) -> Result<(), Box<dyn std::error::Error>> {
    let points = || panel.series.iter().flat_map(|s| s.points.iter());
    let (x0, x1) = finite_range(points().map(|p| p.0));
    let (y0, y1) = finite_range(points().map(|p| p.1));
    let mut chart = ChartBuilder::on(area)
        .caption(&panel.title, (FONT, 18))
        .margin(10)
        .x_label_area_size(38)
        .y_label_area_size(70)
        .build_cartesian_2d(x0..x1, y0..y1)?;
    chart
        .configure_mesh()
        .x_desc(x_label)
        .y_desc(&panel.y_label)
        .label_style((FONT, 13))
        .axis_desc_style((FONT, 15))
        .light_line_style(RGBColor(235, 235, 235))
        .draw()?;
    for (i, s) in panel.series.iter().enumerate() {
        let c = body_color(i);
        let color = RGBColor(c[0], c[1], c[2]);
        let pts = s
            .points
            .iter()
            .filter_map(|&(x, y)| Some((drawn(x)?, drawn(y)?)));
        chart
            .draw_series(LineSeries::new(pts, color.stroke_width(2)))?
            .label(&s.name)
            .legend(move |(x, y)| PathElement::new([(x, y), (x + 18, y)], color.stroke_width(2)));
    }
    if panel.series.len() > 1 {
        chart
            .configure_series_labels()
            .label_font((FONT, 13))
            .background_style(WHITE.mix(0.85))
            .border_style(RGBColor(180, 180, 180))
            .position(SeriesLabelPosition::UpperRight)
            .draw()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    /// Draws `points` as one panel in a thread: `Err` if it takes more than 10 s (a hang).
    fn draw_within(points: Vec<(f64, f64)>) -> Result<Image, String> {
        let chart = Chart {
            x_label: "time (s)".into(),
            panels: vec![Panel {
                title: "energy".into(),
                y_label: "J".into(),
                series: vec![Series {
                    name: "tube.kinetic_energy".into(),
                    points,
                }],
            }],
            width: 320,
            height: 200,
        };
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || tx.send(draw_chart(&chart)));
        rx.recv_timeout(Duration::from_secs(10))
            .map_err(|_| "draw_chart did not return within 10 s".to_string())?
    }

    /// Issue 45 item 6: `1e308` and `-1e308` in one column hung the tick loop.
    #[test]
    fn extreme_finite_and_non_finite_values_draw_promptly() {
        let cases = [
            vec![(0.0, 1e308), (0.1, -1e308), (0.2, 0.0)],
            vec![
                (0.0, f64::MAX),
                (0.1, f64::MIN),
                (0.2, f64::NAN),
                (0.3, f64::INFINITY),
            ],
            vec![(-1e308, 1.0), (1e308, 2.0)],
            vec![(0.0, 1.0), (0.1, 1.0 + f64::EPSILON), (0.2, 1.0)],
            vec![(0.0, 1e300), (0.1, 1e300 * (1.0 + 4.0 * f64::EPSILON))],
            vec![(0.0, 5e-324), (0.1, -5e-324)],
            vec![(f64::NAN, f64::NAN)],
        ];
        for points in cases {
            let what = format!("{points:?}");
            let img = draw_within(points).unwrap_or_else(|e| panic!("{what}: {e}"));
            assert_eq!((img.width, img.height), (320, 200), "{what}");
        }
    }

    #[test]
    fn ranges_are_finite_and_padded() {
        let (lo, hi) = finite_range([1e308, -1e308, f64::NAN].into_iter());
        assert!(lo.is_finite() && hi.is_finite() && lo < -1e300 && hi > 1e300);
        assert!((hi - lo).is_finite());
        let (lo, hi) = finite_range([1.0, 1.0].into_iter());
        assert!(lo < 1.0 && hi > 1.0 && hi - lo >= 2e-9, "{lo} {hi}");
        assert_eq!(finite_range([f64::NAN].into_iter()), (0.0, 1.0));
    }
}
