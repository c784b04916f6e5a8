//! SVG plots of throughput against cores: measured points, model lines.
//!
//! Drawn with plotters' SVG backend ([`canvas`]): a [`Figure`] is a column
//! of [`Chart`]s, each with axes starting at zero (or a logarithmic y axis,
//! see [`LOG_SCALE`]), tick labels on "nice" 1-2-5 steps with k/M/G
//! suffixes, a legend on the right, and series drawn as lines (models) or
//! dots (measurements); or, of two charts or more, a grid of them with one
//! legend underneath.
//!
//! The layout is ours, computed from text measured in the figures' font
//! ([`text`]), so no two labels overlap: long titles, axis labels and
//! legend entries wrap (and, past a few lines, are cut short with the full
//! text as a tooltip), margins grow to fit the tick labels, and a chart
//! grows taller when its legend needs the room. Figures are [`WIDTH`]
//! pixels wide with fonts of at least 11, so they stay readable on a page
//! 1000 px wide. Colours and line styles: [`palette`].

mod axis;
mod canvas;
mod chart;
mod frame;
mod legend;
mod marks;
mod palette;
mod text;
mod ticks;

#[cfg(test)]
pub(crate) mod tests;

use std::path::Path;

use anyhow::{Context, Result};

pub(crate) use axis::{Title, YAxis};
pub(crate) use canvas::{Area, Canvas, Drawn};
pub(crate) use frame::Frame;
pub(crate) use legend::{Legend, Mark};
pub(crate) use marks::{fill, line, Type};
pub(crate) use palette::{colour, rgb, REFERENCE, REFERENCE_DASH, VALUE_INK};
pub(crate) use text::{fit, text_width, wrap};
pub(crate) use ticks::{nice_step, value_label};

use chart::{Place, Planned};
use legend::{legend_entries, Flow};

/// One series of a chart.
#[derive(Clone, Debug)]
pub struct Series {
    /// Legend text.
    pub label: String,
    /// `(x, y)` points, drawn in order.
    pub points: Vec<(f64, f64)>,
    /// A line through the points (a model) or dots (measurements).
    pub line: bool,
    /// Palette index: [`crate::regimes::colour`] for a regime, else a small
    /// number into the palette of colours no regime uses.
    pub colour: usize,
    /// How its line and marks are drawn: 0 a solid line and filled dots,
    /// then dashed and open squares, dotted and triangles, dash-dot and
    /// crosses (cycling). A comparison of machines gives each machine one
    /// style, so a regime keeps its colour on every machine.
    pub style: usize,
}

/// One chart.
#[derive(Clone, Debug, Default)]
pub struct Chart {
    /// Title above the plot area.
    pub title: String,
    /// X axis label, with its unit.
    pub x_label: String,
    /// Y axis label, with its unit.
    pub y_label: String,
    /// The series.
    pub series: Vec<Series>,
}

/// Charts stacked vertically in one SVG.
#[derive(Clone, Debug, Default)]
pub struct Figure {
    /// The charts, top to bottom.
    pub charts: Vec<Chart>,
}

/// Width of every figure, in SVG units (pixels when the page has room).
pub const WIDTH: f64 = 1160.0;
/// Font sizes, in SVG units.
pub(crate) const TITLE_FONT: f64 = 15.0;
pub(crate) const AXIS_FONT: f64 = 13.0;
pub(crate) const TICK_FONT: f64 = 12.0;
pub(crate) const LEGEND_FONT: f64 = 12.0;
pub(crate) const VALUE_FONT: f64 = 11.0;
/// Height of the plot area of a line chart.
const PLOT_HEIGHT: f64 = 165.0;
/// Height of the plot area of each chart in a grid of charts.
const GRID_PLOT_HEIGHT: f64 = 160.0;
/// The narrowest left margin.
pub(crate) const MIN_LEFT: f64 = 64.0;
/// The right margin of a chart without a legend.
pub(crate) const NO_LEGEND_RIGHT: f64 = 24.0;

/// The largest magnitude drawn: beyond it a point is left out (its record
/// keeps it), so the axes' arithmetic stays finite.
pub(crate) const PLOTTABLE: f64 = 1e300;

/// Whether `v` can be drawn: finite, and within [`PLOTTABLE`].
pub(crate) fn plottable(v: f64) -> bool {
    v.is_finite() && v.abs() <= PLOTTABLE
}

/// The words in a chart's y label that ask for a logarithmic y axis: a
/// chart whose `y_label` contains them (for example `"cores (log scale)"`)
/// is drawn on a log axis, so points near the bottom of a wide range stay
/// apart; non-positive values then sit on the axis' bottom.
pub const LOG_SCALE: &str = "log scale";

impl Figure {
    /// The SVG document: one chart with its legend at its right, or
    /// several in a grid with one legend under them.
    pub fn svg(&self) -> String {
        if self.charts.len() >= 2 {
            return self.grid_svg();
        }
        let text_w = Legend::text_width_for(self.charts.iter().flat_map(|c| c.series.iter().map(|s| s.label.as_str())));
        let planned: Vec<Planned<'_>> =
            self.charts.iter().map(|c| Planned::new(c, text_w, WIDTH, PLOT_HEIGHT)).collect();
        let left = planned.iter().map(|p| p.y.left()).fold(MIN_LEFT, f64::max);
        let right = planned.iter().map(|p| p.legend.right()).fold(NO_LEGEND_RIGHT, f64::max);
        let place = Place { x0: 0.0, width: WIDTH, left, right };
        let heights: Vec<f64> = planned.iter().map(|p| p.height(place, true)).collect();
        let mut canvas = Canvas::new(WIDTH, heights.iter().sum());
        let mut y0 = 0.0;
        for (p, h) in planned.iter().zip(&heights) {
            p.render(&mut canvas, place, y0, true);
            y0 += h;
        }
        canvas.finish()
    }

    /// Up to four charts to a row (two when there are two, three when
    /// there are more than four), one legend for all of them underneath.
    fn grid_svg(&self) -> String {
        let per_row = match self.charts.len() {
            n @ 2..=4 => n,
            _ => 3,
        };
        let cell = WIDTH / per_row as f64;
        let planned: Vec<Planned<'_>> =
            self.charts.iter().map(|c| Planned::new(c, 0.0, cell, GRID_PLOT_HEIGHT)).collect();
        let left = planned.iter().map(|p| p.y.left()).fold(MIN_LEFT, f64::max);
        let place = |i: usize| Place { x0: i as f64 * cell, width: cell, left, right: NO_LEGEND_RIGHT };
        let rows: Vec<f64> = planned
            .chunks(per_row)
            .map(|row| row.iter().enumerate().map(|(i, p)| p.height(place(i), false)).fold(0.0, f64::max))
            .collect();
        let flow = Flow::new(&legend_entries(self.charts.iter().flat_map(|c| &c.series)));
        let mut canvas = Canvas::new(WIDTH, rows.iter().sum::<f64>() + flow.height() + 8.0);
        let mut y0 = 0.0;
        for (row, h) in planned.chunks(per_row).zip(&rows) {
            for (i, p) in row.iter().enumerate() {
                p.render(&mut canvas, place(i), y0, false);
            }
            y0 += h;
        }
        flow.draw(&mut canvas, y0 + 4.0);
        canvas.finish()
    }

    /// Write the SVG to `path`.
    pub fn write(&self, path: &Path) -> Result<()> {
        std::fs::write(path, self.svg()).with_context(|| format!("writing the plot to {}", path.display()))
    }
}
