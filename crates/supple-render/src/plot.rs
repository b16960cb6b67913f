//! Line charts of run metrics (`plotters` on an RGB buffer, encoded with [`Image::write_png`]).

use crate::text::{register_fonts, FONT};
use crate::{body_color, Image, RenderError};
use plotters::prelude::*;
use std::path::Path;

/// A named line: `(x, y)` points in order; non-finite points are left out.
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

fn finite_range(values: impl Iterator<Item = f64>) -> (f64, f64) {
    let (lo, hi) = values
        .filter(|v| v.is_finite())
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), v| {
            (lo.min(v), hi.max(v))
        });
    if lo > hi {
        return (0.0, 1.0);
    }
    let pad = if hi > lo {
        0.05 * (hi - lo)
    } else {
        0.5 * lo.abs().max(1e-12)
    };
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
            .copied()
            .filter(|(x, y)| x.is_finite() && y.is_finite());
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
