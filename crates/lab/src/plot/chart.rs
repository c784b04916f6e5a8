//! One line chart laid out and drawn: its scales and margins, its series
//! as lines (models) and dots (measurements, set side by side where they
//! would cover one another), its axis labels and its legend.

use plotters::style::text_anchor::HPos;

use super::axis::{Title, YAxis};
use super::canvas::Canvas;
use super::frame::Frame;
use super::legend::{legend_entries, Legend};
use super::marks::{line, point, Type};
use super::palette::{dash, rgb};
use super::text::{text_width, wrap, Wrapped};
use super::ticks::{nice_step, tick_label};
use super::{plottable, Chart, Series, AXIS_FONT, LOG_SCALE, TICK_FONT};

/// Below the plot area of a line chart: tick labels, then the axis label.
const BOTTOM: f64 = 44.0;

/// The finite points of a series.
fn finite(s: &Series) -> impl Iterator<Item = (f64, f64)> + '_ {
    s.points.iter().copied().filter(|(x, y)| plottable(*x) && plottable(*y))
}

/// A chart's scales and labels, before its horizontal layout is known.
pub(crate) struct Planned<'a> {
    chart: &'a Chart,
    title: Title,
    pub(crate) y: YAxis,
    x_max: f64,
    whole: bool,
    pub(crate) legend: Legend,
    height: f64,
}

/// Where a chart sits: its cell `x0..x0 + width` of the figure, and its
/// left and right margins in the cell.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Place {
    pub x0: f64,
    pub width: f64,
    pub left: f64,
    pub right: f64,
}

impl Place {
    /// The plot area's left edge and width.
    fn plot(&self) -> (f64, f64) {
        (self.x0 + self.left, self.width - self.left - self.right)
    }
}

impl<'a> Planned<'a> {
    /// `width`: the chart's share of the figure; `height`: its plot area's.
    pub(crate) fn new(chart: &'a Chart, legend_text: f64, width: f64, height: f64) -> Self {
        let all = || chart.series.iter().flat_map(finite);
        let x_max = all().map(|p| p.0).fold(1.0, f64::max);
        let y_max = all().map(|p| p.1).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
        // Whole steps when every x is whole (cores).
        let whole = all().all(|p| p.0.fract() == 0.0);
        let y = if chart.y_label.contains(LOG_SCALE) {
            let lo = all().map(|p| p.1).filter(|y| *y > 0.0).fold(f64::INFINITY, f64::min);
            let lo = if lo.is_finite() { lo } else { 1.0 };
            YAxis::log(lo, y_max.max(lo), &chart.y_label, height)
        } else {
            let ys = nice_step(y_max, 6.0);
            // A margin above, so no mark sits on the frame.
            let y_top = (y_max * 1.02 / ys).ceil() * ys;
            YAxis::new(y_top, ys, &chart.y_label, height)
        };
        let legend = Legend::new(legend_entries(&chart.series), legend_text);
        Planned { chart, title: Title::within(&chart.title, width), y, x_max, whole, legend, height }
    }

    /// The x step and top whose tick labels do not collide over `pw`.
    fn x_scale(&self, pw: f64) -> (f64, f64) {
        let mut target = 8.0;
        loop {
            let xs = nice_step(self.x_max, target).max(if self.whole { 1.0 } else { 0.0 });
            let x_top = (self.x_max * 1.02 / xs).ceil() * xs;
            let widest = (0..=((x_top / xs).round() as usize))
                .map(|i| text_width(&tick_label(i as f64 * xs, xs), TICK_FONT))
                .fold(0.0, f64::max);
            if widest + 10.0 <= xs / x_top * pw || target <= 2.0 {
                return (xs, x_top);
            }
            target -= 1.0;
        }
    }

    /// The x axis label wrapped to the plot's width.
    fn x_label(&self, place: Place) -> Wrapped {
        wrap(&self.chart.x_label, AXIS_FONT, place.plot().1, 2)
    }

    /// The chart's height at `place`, with its legend at its right when
    /// `legend`.
    pub(crate) fn height(&self, place: Place, legend: bool) -> f64 {
        let top = self.title.top();
        let below = BOTTOM + 16.0 * self.x_label(place).lines.len() as f64;
        let h = top + self.height + below;
        if legend {
            h.max(top + 4.0 + self.legend.height() + 16.0)
        } else {
            h
        }
    }

    /// Draw the chart at `place` with its top at `y0`, its legend right of
    /// the plot area when `legend`.
    pub(crate) fn render(&self, canvas: &mut Canvas, place: Place, y0: f64, legend: bool) {
        let chart = self.chart;
        let top = y0 + self.title.top();
        let (left, pw) = place.plot();
        let ph = self.height;
        let (xs, x_top) = self.x_scale(pw);
        let x_ticks: Vec<(f64, String)> = (0..=((x_top / xs).round() as usize))
            .map(|i| i as f64 * xs)
            .filter(|x| *x <= x_top * (1.0 + 1e-9))
            .map(|x| (x, tick_label(x, xs)))
            .collect();
        let frame = Frame::new((left, top), (pw, ph), x_top, x_ticks, &self.y);
        self.title.draw(canvas, (left, left + pw), y0);
        canvas.layer(|a| {
            frame.draw(a)?;
            for s in chart.series.iter().filter(|s| s.line) {
                let path: Vec<(f64, f64)> = finite(s).map(|(x, y)| (frame.px(x), frame.py(y))).collect();
                line(a, &path, rgb(s.colour), 2, dash(s.style))?;
            }
            for (k, x, y) in dodged(chart, &|x| frame.px(x), &|y| frame.py(y)) {
                let s = &chart.series[k];
                point(a, (x, y), rgb(s.colour), s.style)?;
            }
            Ok(())
        });
        let (_, _, t, b) = frame.edges();
        self.y.draw_label(canvas, place.x0, (t, b));
        let x_label = self.x_label(place);
        canvas.layer_with_tip(x_label.cut.then_some(chart.x_label.as_str()), |a| {
            for (i, l) in x_label.lines.iter().enumerate() {
                Type::new(AXIS_FONT).draw(a, l, (left + pw / 2.0, top + ph + 40.0 + 16.0 * i as f64), HPos::Center)?;
            }
            Ok(())
        });
        if legend {
            self.legend.draw(canvas, left + pw + 16.0, top + 4.0);
        }
    }
}

/// The dots of `chart` at their places (`px`, `py` map values to the
/// SVG), as `(series, x, y)`; dots of different series at the same x that
/// would cover one another are spread sideways, a few units apart, in the
/// order of their series (the record keeps the true x).
pub(crate) fn dodged(chart: &Chart, px: &dyn Fn(f64) -> f64, py: &dyn Fn(f64) -> f64) -> Vec<(usize, f64, f64)> {
    const CLOSE: f64 = 7.0;
    let mut dots: Vec<(usize, f64, f64, f64)> = chart
        .series
        .iter()
        .enumerate()
        .filter(|(_, s)| !s.line)
        .flat_map(|(k, s)| finite(s).map(move |(x, y)| (k, x, y)))
        .map(|(k, x, y)| (k, x, px(x), py(y)))
        .collect();
    // The smallest distance between two distinct x positions bounds the
    // spread, so dodged dots never reach the next core count's.
    let mut xs: Vec<f64> = dots.iter().map(|d| d.2).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup_by(|a, b| (*a - *b).abs() < 0.5);
    let gap = xs.windows(2).map(|w| w[1] - w[0]).fold(f64::INFINITY, f64::min);
    dots.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.3.total_cmp(&b.3)).then(a.0.cmp(&b.0)));
    let mut out = Vec::with_capacity(dots.len());
    let mut i = 0;
    while i < dots.len() {
        // A cluster: same x, each dot within CLOSE of the previous one.
        let mut j = i + 1;
        while j < dots.len() && dots[j].1 == dots[i].1 && dots[j].3 - dots[j - 1].3 < CLOSE {
            j += 1;
        }
        let m = j - i;
        let step = if m > 1 { (CLOSE + 1.0).min(gap * 0.8 / m as f64) } else { 0.0 };
        let mut cluster: Vec<_> = dots[i..j].to_vec();
        cluster.sort_by_key(|d| d.0);
        for (n, (k, _, x, y)) in cluster.into_iter().enumerate() {
            out.push((k, x + (n as f64 - (m as f64 - 1.0) / 2.0) * step, y));
        }
        i = j;
    }
    out
}
