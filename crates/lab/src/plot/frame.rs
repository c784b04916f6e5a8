//! A chart's plot area, drawn by plotters' chart builder: grid lines at
//! the ticks, tick labels beside the axes, a frame; and the mapping from
//! values to pixels (plotters' own linear and logarithmic coordinates, so
//! marks drawn in pixels sit where its grid says).

use std::ops::Range;

use plotters::chart::ChartBuilder;
use plotters::coord::combinators::{IntoLogRange, LogCoord};
use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::types::RangedCoordf64;
use plotters::style::{Color, TRANSPARENT};

use super::axis::YAxis;
use super::canvas::{Area, Drawn};
use super::marks::outline;
use super::palette::{FRAME, GRID};
use super::text::font;
use super::TICK_FONT;

/// From an axis to its tick labels; tick marks are this long (though not
/// drawn), and labels stand twice this far off.
const TICK: i32 = 4;
/// The room below the plot area given to the x tick labels.
const X_LABEL_ROOM: i32 = 30;

/// How values map onto an axis.
#[derive(Clone)]
enum Scale {
    Linear(RangedCoordf64),
    /// From the bottom to the top (plotters' logarithmic coordinate is
    /// made from this when used).
    Log(Range<f64>),
}

impl Scale {
    fn log(r: &Range<f64>) -> LogCoord<f64> {
        r.clone().log_scale().into()
    }
}

/// An axis for plotters: its scale, with ticks where the layout put them.
#[derive(Clone)]
struct Ticked {
    scale: Scale,
    ticks: Vec<(f64, String)>,
}

impl Ticked {
    /// The label of the tick nearest `v`.
    fn label(&self, v: f64) -> String {
        let nearest = self.ticks.iter().min_by(|a, b| (a.0 - v).abs().total_cmp(&(b.0 - v).abs()));
        nearest.map(|t| t.1.clone()).unwrap_or_default()
    }
}

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    /// Values a logarithmic axis cannot show sit at its bottom.
    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        match &self.scale {
            Scale::Linear(r) => r.map(v, limit),
            Scale::Log(r) => Scale::log(r).map(&v.max(r.start), limit),
        }
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        // Grid lines at the ticks only, none between them.
        if hint.weight().allow_light_points() {
            Vec::new()
        } else {
            self.ticks.iter().map(|t| t.0).collect()
        }
    }

    fn range(&self) -> Range<f64> {
        match &self.scale {
            Scale::Linear(r) => r.range(),
            Scale::Log(r) => Scale::log(r).range(),
        }
    }
}

/// A plot area in pixels and the axes over it.
#[derive(Clone)]
pub(crate) struct Frame {
    left: i32,
    top: i32,
    width: i32,
    height: i32,
    x: Ticked,
    y: Ticked,
}

impl std::fmt::Debug for Frame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Frame({}, {}, {} × {})", self.left, self.top, self.width, self.height)
    }
}

impl Frame {
    /// The plot area with its top left corner at `(left, top)`, `width` ×
    /// `height` pixels; x from 0 to `x_top` with ticks `x_ticks` (values
    /// and labels); y along `y`.
    pub(crate) fn new(
        (left, top): (f64, f64),
        (width, height): (f64, f64),
        x_top: f64,
        x_ticks: Vec<(f64, String)>,
        y: &YAxis,
    ) -> Self {
        let y_scale =
            if y.is_log() { Scale::Log(y.bottom()..y.top()) } else { Scale::Linear((y.bottom()..y.top()).into()) };
        Frame {
            left: left.round() as i32,
            top: top.round() as i32,
            width: width.round() as i32,
            height: height.round() as i32,
            x: Ticked { scale: Scale::Linear((0.0..x_top).into()), ticks: x_ticks },
            y: Ticked { scale: y_scale, ticks: y.ticks().to_vec() },
        }
    }

    /// The pixel column of `x`.
    pub(crate) fn px(&self, x: f64) -> f64 {
        f64::from(self.x.map(&x, (self.left, self.left + self.width - 1)))
    }

    /// The pixel row of `y`.
    pub(crate) fn py(&self, y: f64) -> f64 {
        f64::from(self.y.map(&y, (self.top + self.height - 1, self.top)))
    }

    /// The left, right, top and bottom edges.
    pub(crate) fn edges(&self) -> (f64, f64, f64, f64) {
        let (l, t) = (f64::from(self.left), f64::from(self.top));
        (l, l + f64::from(self.width - 1), t, t + f64::from(self.height - 1))
    }

    /// Draw the grid, the tick labels and the frame.
    pub(crate) fn draw(&self, area: &Area<'_>) -> Drawn {
        self.draw_grid(area)?;
        self.draw_outline(area)
    }

    /// Draw the grid and the tick labels.
    pub(crate) fn draw_grid(&self, area: &Area<'_>) -> Drawn {
        let room = area.clone().shrink((0, self.top), (self.left + self.width, self.height + X_LABEL_ROOM));
        let mut chart = ChartBuilder::on(&room)
            .y_label_area_size(self.left)
            .x_label_area_size(X_LABEL_ROOM)
            .build_cartesian_2d(self.x.clone(), self.y.clone())?;
        let (x_label, y_label) = (|v: &f64| self.x.label(*v), |v: &f64| self.y.label(*v));
        chart
            .configure_mesh()
            .bold_line_style(GRID.stroke_width(1))
            .light_line_style(TRANSPARENT)
            .axis_style(TRANSPARENT)
            .set_all_tick_mark_size(TICK)
            .label_style(font(TICK_FONT, false))
            .x_labels(self.x.ticks.len())
            .y_labels(self.y.ticks.len())
            .x_label_formatter(&x_label)
            .y_label_formatter(&y_label)
            .draw()
    }

    /// Draw the frame around the plot area.
    pub(crate) fn draw_outline(&self, area: &Area<'_>) -> Drawn {
        let (l, r, t, b) = self.edges();
        outline(area, (l, t), (r, b), FRAME)
    }
}
