//! SVG plots of throughput against cores: measured points, model lines.
//!
//! Hand-written SVG text (no font or rendering libraries): a [`Figure`] is a
//! column of [`Chart`]s, each with linear axes starting at zero, tick labels
//! on "nice" 1-2-5 steps with k/M/G suffixes, a legend on the right, and
//! series drawn as lines (models) or dots (measurements).
//!
//! Layout is computed from estimated text widths (about 0.6 × the font size
//! per character), so no two labels overlap: long titles, axis labels and
//! legend entries wrap (and, past a few lines, are cut short with the full
//! text in a `<title>`), margins grow to fit the tick labels, and a chart
//! grows taller when its legend needs the room. Figures are [`WIDTH`] units
//! wide with fonts of at least 11 units, so they stay readable on a page
//! 1000 px wide.
//!
//! Colours: a series' `colour` is an index into one of two palettes. A
//! series (or bar) that *is* a regime takes [`crate::regimes::colour`] —
//! a fixed colour per regime name, the same in every figure; anything else
//! (locks, simulated machines, delays) takes a small index into a separate
//! palette of colours no regime uses.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};

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

pub use crate::regimes::REGIME_COLOURS;

/// Colours for series and bars that are not regimes (locks, machines,
/// delays, policies): none of them is a regime's colour.
const OTHER_PALETTE: [&str; 10] =
    ["#393b79", "#bcbd22", "#7b4173", "#e7ba52", "#637939", "#6b6ecf", "#000000", "#9c9ede", "#a6761d", "#66c2a5"];

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
/// Below the plot area of a line chart: tick labels, then the axis label.
const BOTTOM: f64 = 44.0;
/// The narrowest left margin.
pub(crate) const MIN_LEFT: f64 = 64.0;
/// The right margin of a chart without a legend.
pub(crate) const NO_LEGEND_RIGHT: f64 = 24.0;
/// The widest a legend's text column gets before its labels wrap.
const LEGEND_MAX_TEXT: f64 = 250.0;
const LEGEND_LINE: f64 = 15.0;
const LEGEND_GAP: f64 = 6.0;

/// The colour of palette index `i` (see [`REGIME_COLOURS`]).
pub(crate) fn colour(i: usize) -> &'static str {
    match i.checked_sub(REGIME_COLOURS) {
        Some(k) => crate::regimes::hex(k),
        None => OTHER_PALETTE[i % OTHER_PALETTE.len()],
    }
}

/// The colours of the palette for series that are not regimes.
#[cfg(test)]
pub(crate) fn other_palette() -> &'static [&'static str] {
    &OTHER_PALETTE
}

pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Estimated width of `s` drawn at font size `size` (sans-serif; a little
/// generous, so estimates err towards more room).
pub(crate) fn text_width(s: &str, size: f64) -> f64 {
    s.chars().count() as f64 * 0.6 * size
}

/// `s` cut to at most `max` characters, the last one an ellipsis if cut;
/// and whether it was cut.
pub(crate) fn truncate(s: &str, max: usize) -> (String, bool) {
    if s.chars().count() <= max {
        return (s.to_string(), false);
    }
    let mut out: String = s.chars().take(max.saturating_sub(1)).collect();
    out = out.trim_end().to_string();
    out.push('…');
    (out, true)
}

/// Text broken into lines.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Wrapped {
    /// The lines.
    pub lines: Vec<String>,
    /// Whether text was left out (the last line ends in an ellipsis).
    pub cut: bool,
    /// Whether a word longer than a line had to be broken.
    pub broke: bool,
}

/// `text` broken at spaces into lines at most `max_w` wide at font size
/// `size`, at most `max_lines` of them (the last cut short with an ellipsis
/// when the text needs more). A word wider than a line is broken.
pub(crate) fn wrap(text: &str, size: f64, max_w: f64, max_lines: usize) -> Wrapped {
    let per_line = ((max_w / (0.6 * size)).floor() as usize).max(1);
    let mut lines: Vec<String> = Vec::new();
    let mut cur = String::new();
    let mut broke = false;
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        while word.len() > per_line {
            broke = true;
            if !cur.is_empty() {
                lines.push(std::mem::take(&mut cur));
            }
            lines.push(word[..per_line].iter().collect());
            word.drain(..per_line);
        }
        let word: String = word.into_iter().collect();
        if word.is_empty() {
            continue;
        }
        if cur.is_empty() {
            cur = word;
        } else if cur.chars().count() + 1 + word.chars().count() <= per_line {
            cur.push(' ');
            cur.push_str(&word);
        } else {
            lines.push(std::mem::replace(&mut cur, word));
        }
    }
    if !cur.is_empty() || lines.is_empty() {
        lines.push(cur);
    }
    let max_lines = max_lines.max(1);
    let mut cut = false;
    if lines.len() > max_lines {
        lines.truncate(max_lines);
        let last = lines.pop().unwrap_or_default();
        // Room for the ellipsis even when the last line is full.
        let keep: String =
            if last.chars().count() < per_line { last } else { last.chars().take(per_line - 1).collect() };
        lines.push(format!("{}…", keep.trim_end()));
        cut = true;
    }
    Wrapped { lines, cut, broke }
}

/// A "nice" tick step (1, 2 or 5 × 10^k) giving about `target` ticks over `span`.
pub(crate) fn nice_step(span: f64, target: f64) -> f64 {
    let raw = span / target;
    let mag = 10f64.powf(raw.log10().floor());
    let f = raw / mag;
    let nice = if f <= 1.0 {
        1.0
    } else if f <= 2.0 {
        2.0
    } else if f <= 5.0 {
        5.0
    } else {
        10.0
    };
    nice * mag
}

/// A tick label on an axis with ticks every `step`: as many decimals as
/// the step needs (`0.0005`, `1.5k`, `250k`), no more.
pub(crate) fn tick_label(v: f64, step: f64) -> String {
    let (x, suffix) = scaled(v);
    let unit = if x != 0.0 { v / x } else { 1.0 };
    let s = step / unit;
    let digits = if s >= 1.0 || s <= 0.0 { 0 } else { ((-s.log10() - 1e-9).ceil() as usize).min(9) };
    let mut t = format!("{x:.digits$}");
    if t.contains('.') {
        t = t.trim_end_matches('0').trim_end_matches('.').to_string();
    }
    if t == "-0" {
        t = "0".into();
    }
    format!("{t}{suffix}")
}

/// A measured value printed beside its mark: three significant digits
/// (`207`, `14.4`, `0.937`, `1.23M`); the exact value is in the record.
pub(crate) fn value_label(v: f64) -> String {
    let (x, suffix) = scaled(v);
    let digits = match x.abs() {
        a if a >= 100.0 => 0,
        a if a >= 10.0 => 1,
        a if a >= 1.0 => 2,
        _ => 3,
    };
    format!("{x:.digits$}{suffix}")
}

/// `v` in units of 10^9, 10^6 or 10^3 when that large, with the suffix.
fn scaled(v: f64) -> (f64, &'static str) {
    let a = v.abs();
    if a >= 1e9 {
        (v / 1e9, "G")
    } else if a >= 1e6 {
        (v / 1e6, "M")
    } else if a >= 1e3 {
        (v / 1e3, "k")
    } else {
        (v, "")
    }
}

/// A chart's title: at most two lines across the figure.
#[derive(Clone, Debug)]
pub(crate) struct Title {
    text: String,
    wrapped: Wrapped,
}

impl Title {
    pub(crate) fn new(text: &str) -> Self {
        Self::within(text, WIDTH)
    }

    /// A title for a chart `width` wide.
    pub(crate) fn within(text: &str, width: f64) -> Self {
        // Bold text runs about a tenth wider.
        Title { text: text.to_string(), wrapped: wrap(text, TITLE_FONT * 1.1, width - 24.0, 2) }
    }

    /// The top margin it needs: the plot area starts this far below the
    /// chart's top.
    pub(crate) fn top(&self) -> f64 {
        40.0 + 18.0 * (self.wrapped.lines.len() as f64 - 1.0)
    }

    /// Draw it, centred over the plot area `x0..x1` when it fits there
    /// (else over the whole figure), in the chart starting at `y0`.
    pub(crate) fn draw(&self, out: &mut String, (x0, x1): (f64, f64), y0: f64) {
        for (i, line) in self.wrapped.lines.iter().enumerate() {
            let w = text_width(line, TITLE_FONT * 1.1);
            let x = if w <= x1 - x0 {
                (x0 + x1) / 2.0
            } else {
                ((x0 + x1) / 2.0).clamp(w / 2.0 + 4.0, WIDTH - w / 2.0 - 4.0)
            };
            let y = y0 + 26.0 + 18.0 * i as f64;
            let tip = if self.wrapped.cut { format!("<title>{}</title>", escape(&self.text)) } else { String::new() };
            let _ = writeln!(
                out,
                r#"<text x="{x:.1}" y="{y:.1}" font-size="{TITLE_FONT}" text-anchor="middle" font-weight="bold">{tip}{}</text>"#,
                escape(line)
            );
        }
    }
}

/// A y axis from 0 to `top` with ticks every `step`, and its label rotated
/// beside it (wrapped to the plot's height).
#[derive(Clone, Debug)]
pub(crate) struct YAxis {
    top: f64,
    /// The value at the bottom: 0 on a linear axis, a power of ten on a
    /// logarithmic one.
    bottom: f64,
    log: bool,
    ticks: Vec<(f64, String)>,
    text: String,
    label: Wrapped,
}

impl YAxis {
    pub(crate) fn new(top: f64, step: f64, text: &str, height: f64) -> Self {
        let mut ticks = Vec::new();
        let mut i = 0.0;
        while i * step <= top * (1.0 + 1e-9) {
            ticks.push((i * step, tick_label(i * step, step)));
            i += 1.0;
        }
        YAxis {
            top,
            bottom: 0.0,
            log: false,
            ticks,
            text: text.to_string(),
            label: wrap(text, AXIS_FONT, height - 8.0, 2),
        }
    }

    /// A logarithmic axis from the power of ten at or below `lo` to the one
    /// at or above `hi` (both positive), ticks at 1, 2 and 5 × each power
    /// when it spans at most three decades, else at the powers alone.
    pub(crate) fn log(lo: f64, hi: f64, text: &str, height: f64) -> Self {
        let (a, b) = (lo.log10().floor() as i32, (hi.log10().ceil() as i32).max(lo.log10().floor() as i32 + 1));
        let steps: &[f64] = if b - a <= 3 { &[1.0, 2.0, 5.0] } else { &[1.0] };
        let mut ticks = Vec::new();
        for e in a..=b {
            for m in steps {
                let v = m * 10f64.powi(e);
                if v <= 10f64.powi(b) * (1.0 + 1e-9) {
                    ticks.push((v, tick_label(v, 10f64.powi(e))));
                }
            }
        }
        YAxis {
            top: 10f64.powi(b),
            bottom: 10f64.powi(a),
            log: true,
            ticks,
            text: text.to_string(),
            label: wrap(text, AXIS_FONT, height - 8.0, 2),
        }
    }

    /// Where `v` sits on the axis: 0 at the bottom, 1 at the top (values a
    /// logarithmic axis cannot show sit at its bottom).
    pub(crate) fn frac(&self, v: f64) -> f64 {
        if self.log {
            if v <= 0.0 {
                return 0.0;
            }
            (v.log10() - self.bottom.log10()) / (self.top.log10() - self.bottom.log10())
        } else {
            (v - self.bottom) / (self.top - self.bottom)
        }
    }

    /// The value at the top of the axis.
    pub(crate) fn top(&self) -> f64 {
        self.top
    }

    /// The left margin it needs: its label, then the tick labels.
    pub(crate) fn left(&self) -> f64 {
        let ticks = self.ticks.iter().map(|(_, t)| text_width(t, TICK_FONT)).fold(0.0, f64::max);
        (10.0 + 16.0 * self.label.lines.len() as f64 + 6.0 + ticks + 8.0).max(MIN_LEFT)
    }

    /// Grid lines across `x0..x1` with tick labels left of `x0` (`py` maps
    /// a value to its SVG y), and the label, halfway up.
    pub(crate) fn draw(&self, out: &mut String, (x0, x1): (f64, f64), py: impl Fn(f64) -> f64) {
        self.draw_at(out, (x0, x1), 0.0, py);
    }

    /// [`YAxis::draw`] in a chart whose left edge is at `cell` (its label
    /// sits that far right).
    pub(crate) fn draw_at(&self, out: &mut String, (x0, x1): (f64, f64), cell: f64, py: impl Fn(f64) -> f64) {
        for (v, t) in &self.ticks {
            let y = py(*v);
            let _ = writeln!(
                out,
                r##"<line x1="{x0:.1}" y1="{y:.1}" x2="{x1:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" font-size="{TICK_FONT}" text-anchor="end">{}</text>"##,
                x0 - 8.0,
                y + 4.0,
                escape(t)
            );
        }
        let ly = (py(self.bottom) + py(self.top)) / 2.0;
        let tip = if self.label.cut { format!("<title>{}</title>", escape(&self.text)) } else { String::new() };
        for (i, line) in self.label.lines.iter().enumerate() {
            let lx = cell + 10.0 + AXIS_FONT + 16.0 * i as f64;
            let _ = writeln!(
                out,
                r#"<text x="{lx:.1}" y="{ly:.1}" font-size="{AXIS_FONT}" text-anchor="middle" transform="rotate(-90 {lx:.1} {ly:.1})">{tip}{}</text>"#,
                escape(line)
            );
        }
    }
}

/// The dash pattern of line style `style` (an SVG attribute, or nothing).
fn dash(style: usize) -> &'static str {
    match style % 4 {
        0 => "",
        1 => r#" stroke-dasharray="7 4""#,
        2 => r#" stroke-dasharray="2 3""#,
        _ => r#" stroke-dasharray="8 3 2 3""#,
    }
}

/// A point mark of style `style`, colour `c`, centred on `(x, y)`.
fn point(out: &mut String, x: f64, y: f64, c: &str, style: usize) {
    let _ = match style % 4 {
        0 => write!(out, r#"<circle cx="{x:.1}" cy="{y:.1}" r="3.5" fill="{c}"/>"#),
        1 => write!(
            out,
            r#"<rect x="{:.1}" y="{:.1}" width="7" height="7" fill="white" stroke="{c}" stroke-width="1.6"/>"#,
            x - 3.5,
            y - 3.5
        ),
        2 => write!(
            out,
            r#"<path d="M{x:.1},{:.1} L{:.1},{:.1} L{:.1},{:.1} Z" fill="{c}"/>"#,
            y - 4.5,
            x + 4.0,
            y + 3.0,
            x - 4.0,
            y + 3.0
        ),
        _ => write!(
            out,
            r#"<path d="M{:.1},{:.1} L{:.1},{:.1} M{:.1},{:.1} L{:.1},{:.1}" stroke="{c}" stroke-width="1.8"/>"#,
            x - 4.0,
            y - 4.0,
            x + 4.0,
            y + 4.0,
            x - 4.0,
            y + 4.0,
            x + 4.0,
            y - 4.0
        ),
    };
}

/// How a legend entry shows its series.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Mark {
    /// A dot of a style (measurements).
    Dot(&'static str, usize),
    /// A line of a style (models).
    Line(&'static str, usize),
    /// A dashed grey line (reference lines).
    Dashed,
    /// A filled square (bars).
    Swatch(&'static str),
}

/// A legend: entries stacked top to bottom, each label wrapped to the
/// legend's text width (at most three lines, then cut short with the full
/// text in a `<title>`).
#[derive(Clone, Debug, Default)]
pub(crate) struct Legend {
    entries: Vec<(Mark, String, Wrapped)>,
    text_w: f64,
}

impl Legend {
    /// The width of the text column for `labels`: the widest, up to a limit.
    pub(crate) fn text_width_for<'a>(labels: impl IntoIterator<Item = &'a str>) -> f64 {
        labels.into_iter().map(|l| text_width(l, LEGEND_FONT)).fold(0.0, f64::max).min(LEGEND_MAX_TEXT)
    }

    pub(crate) fn new(entries: Vec<(Mark, String)>, text_w: f64) -> Self {
        let entries = entries
            .into_iter()
            .map(|(m, label)| {
                let w = wrap(&label, LEGEND_FONT, text_w.max(LEGEND_FONT), 3);
                (m, label, w)
            })
            .collect();
        Legend { entries, text_w }
    }

    /// The right margin it needs (a small one when it has no entries).
    pub(crate) fn right(&self) -> f64 {
        if self.entries.is_empty() {
            NO_LEGEND_RIGHT
        } else {
            16.0 + 30.0 + self.text_w + 12.0
        }
    }

    /// Its height.
    pub(crate) fn height(&self) -> f64 {
        let lines: usize = self.entries.iter().map(|(_, _, w)| w.lines.len()).sum();
        lines as f64 * LEGEND_LINE + self.entries.len().saturating_sub(1) as f64 * LEGEND_GAP
    }

    /// Draw it with its top left corner at `(x, y)`.
    pub(crate) fn draw(&self, out: &mut String, x: f64, y: f64) {
        let mut y = y + 6.0;
        for (mark, label, w) in &self.entries {
            self.draw_wrapped(out, *mark, label, w, x, y);
            y += LEGEND_LINE * w.lines.len() as f64 + LEGEND_GAP;
        }
    }

    /// One entry on one line, its mark's left edge at `x`, its middle at `y`.
    pub(crate) fn draw_entry(&self, out: &mut String, mark: Mark, label: &str, x: f64, y: f64) {
        let w = Wrapped { lines: vec![label.to_string()], cut: false, broke: false };
        self.draw_wrapped(out, mark, label, &w, x, y + 6.0);
    }

    fn draw_wrapped(&self, out: &mut String, mark: Mark, label: &str, w: &Wrapped, x: f64, y: f64) {
        out.push_str("<g>");
        if w.cut {
            let _ = write!(out, "<title>{}</title>", escape(label));
        }
        match mark {
            Mark::Dot(c, style) => point(out, x + 11.0, y, c, style),
            Mark::Line(c, style) => {
                let _ = write!(
                    out,
                    r#"<line x1="{x:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="{c}" stroke-width="1.8"{}/>"#,
                    x + 22.0,
                    dash(style)
                );
            }
            Mark::Dashed => {
                let _ = write!(
                    out,
                    r##"<line x1="{x:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#555" stroke-dasharray="6 4"/>"##,
                    x + 22.0
                );
            }
            Mark::Swatch(c) => {
                let _ = write!(
                    out,
                    r#"<rect x="{:.1}" y="{:.1}" width="12" height="12" fill="{c}" fill-opacity="0.85"/>"#,
                    x + 5.0,
                    y - 6.0
                );
            }
        }
        for (i, line) in w.lines.iter().enumerate() {
            let _ = write!(
                out,
                r#"<text x="{:.1}" y="{:.1}" font-size="{LEGEND_FONT}">{}</text>"#,
                x + 30.0,
                y + 4.0 + LEGEND_LINE * i as f64,
                escape(line)
            );
        }
        out.push_str("</g>\n");
    }
}

/// The opening of an SVG document `height` units tall, with a white
/// background.
pub(crate) fn svg_open(height: f64) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height:.0}\" viewBox=\"0 0 {WIDTH} \
         {height:.0}\" font-family=\"sans-serif\">\n<rect width=\"{WIDTH}\" height=\"{height:.0}\" fill=\"white\"/>\n"
    )
}

/// The finite points of a series.
fn finite(s: &Series) -> impl Iterator<Item = (f64, f64)> + '_ {
    s.points.iter().copied().filter(|(x, y)| plottable(*x) && plottable(*y))
}

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

/// Height of the plot area of each chart in a grid of charts.
const GRID_PLOT_HEIGHT: f64 = 160.0;

/// A chart's scales and labels, before its horizontal layout is known.
struct Planned<'a> {
    chart: &'a Chart,
    title: Title,
    y: YAxis,
    x_max: f64,
    whole: bool,
    legend: Legend,
    height: f64,
}

/// The legend entry of a series.
fn mark_of(s: &Series) -> Mark {
    let c = colour(s.colour);
    if s.line {
        Mark::Line(c, s.style)
    } else {
        Mark::Dot(c, s.style)
    }
}

impl<'a> Planned<'a> {
    /// `width`: the chart's share of the figure; `height`: its plot area's.
    fn new(chart: &'a Chart, legend_text: f64, width: f64, height: f64) -> Self {
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

    /// Draw the chart in the cell `x0..x0 + width` with its top at `y0`,
    /// the plot area from `x0 + left` to `x0 + width - right`, the legend
    /// right of it when `legend`; returns the chart's height.
    fn render(
        &self,
        out: &mut String,
        (x0, width): (f64, f64),
        y0: f64,
        (left, right): (f64, f64),
        legend: bool,
    ) -> f64 {
        let chart = self.chart;
        let top = self.title.top();
        let left = x0 + left;
        let pw = width - (left - x0) - right;
        let ph = self.height;
        let (xs, x_top) = self.x_scale(pw);
        let px = |x: f64| left + x / x_top * pw;
        let py = |y: f64| y0 + top + ph - self.y.frac(y) * ph;
        self.title.draw(out, (left, left + pw), y0);
        let _ = writeln!(
            out,
            r##"<rect x="{left:.1}" y="{:.1}" width="{pw:.1}" height="{ph}" fill="none" stroke="#444"/>"##,
            y0 + top
        );
        let mut i = 0.0;
        while i * xs <= x_top * (1.0 + 1e-9) {
            let x = i * xs;
            let _ = writeln!(
                out,
                r##"<line x1="{0:.1}" y1="{1:.1}" x2="{0:.1}" y2="{2:.1}" stroke="#ddd"/><text x="{0:.1}" y="{3:.1}" font-size="{TICK_FONT}" text-anchor="middle">{4}</text>"##,
                px(x),
                y0 + top,
                y0 + top + ph,
                y0 + top + ph + 18.0,
                escape(&tick_label(x, xs))
            );
            i += 1.0;
        }
        self.y.draw_at(out, (left, left + pw), x0, py);
        let x_label = wrap(&chart.x_label, AXIS_FONT, pw, 2);
        for (i, line) in x_label.lines.iter().enumerate() {
            let tip = if x_label.cut { format!("<title>{}</title>", escape(&chart.x_label)) } else { String::new() };
            let _ = writeln!(
                out,
                r#"<text x="{:.1}" y="{:.1}" font-size="{AXIS_FONT}" text-anchor="middle">{tip}{}</text>"#,
                left + pw / 2.0,
                y0 + top + ph + 40.0 + 16.0 * i as f64,
                escape(line)
            );
        }
        for s in chart.series.iter().filter(|s| s.line) {
            let path: Vec<String> = finite(s).map(|(x, y)| format!("{:.1},{:.1}", px(x), py(y))).collect();
            let _ = writeln!(
                out,
                r#"<polyline fill="none" stroke="{}" stroke-width="1.8"{} points="{}"/>"#,
                colour(s.colour),
                dash(s.style),
                path.join(" ")
            );
        }
        for (k, x, y) in dodged(chart, &px, &py) {
            let s = &chart.series[k];
            point(out, x, y, colour(s.colour), s.style);
            out.push('\n');
        }
        let below = BOTTOM + 16.0 * x_label.lines.len() as f64;
        if legend {
            self.legend.draw(out, x0 + width - right + 16.0, y0 + top + 4.0);
            (top + ph + below).max(top + 4.0 + self.legend.height() + 16.0)
        } else {
            top + ph + below
        }
    }
}

/// The dots of `chart` at their places (`px`, `py` map values to the
/// SVG), as `(series, x, y)`; dots of different series at the same x that
/// would cover one another are spread sideways, a few units apart, in the
/// order of their series (the record keeps the true x).
fn dodged(chart: &Chart, px: &dyn Fn(f64) -> f64, py: &dyn Fn(f64) -> f64) -> Vec<(usize, f64, f64)> {
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

/// A legend drawn in rows under a grid of charts: every distinct entry of
/// the charts once, left to right.
fn flow_legend(charts: &[Chart]) -> Vec<(Mark, String)> {
    legend_entries(charts.iter().flat_map(|c| &c.series))
}

/// One legend entry per distinct label, in order: series sharing a label
/// (one machine's series in several charts, a band's two ends) share it.
fn legend_entries<'a>(series: impl IntoIterator<Item = &'a Series>) -> Vec<(Mark, String)> {
    let mut entries: Vec<(Mark, String)> = Vec::new();
    for s in series {
        if !entries.iter().any(|(_, l)| *l == s.label) {
            entries.push((mark_of(s), s.label.clone()));
        }
    }
    entries
}

/// Place `entries` in rows across the figure: `(x, y, mark, label)` with
/// `y` from 0, and the total height.
fn flow(entries: &[(Mark, String)]) -> (Vec<(f64, f64, Mark, String)>, f64) {
    let mut placed = Vec::new();
    let (mut x, mut y) = (16.0, 0.0);
    let max_text = WIDTH - 16.0 - 30.0 - 16.0;
    for (m, label) in entries {
        let (label, _) = truncate(label, (max_text / (0.6 * LEGEND_FONT)) as usize);
        let w = 30.0 + text_width(&label, LEGEND_FONT) + 18.0;
        if x > 16.0 && x + w > WIDTH - 8.0 {
            x = 16.0;
            y += LEGEND_LINE + LEGEND_GAP;
        }
        placed.push((x, y, *m, label));
        x += w;
    }
    let h = if entries.is_empty() { 0.0 } else { y + LEGEND_LINE + LEGEND_GAP };
    (placed, h)
}

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
        let mut body = String::new();
        let mut y0 = 0.0;
        for p in &planned {
            y0 += p.render(&mut body, (0.0, WIDTH), y0, (left, right), true);
        }
        let mut out = svg_open(y0.max(1.0).ceil());
        out.push_str(&body);
        out.push_str("</svg>\n");
        out
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
        let mut body = String::new();
        let mut y0 = 0.0;
        for row in planned.chunks(per_row) {
            let mut h: f64 = 0.0;
            for (i, p) in row.iter().enumerate() {
                h = h.max(p.render(&mut body, (i as f64 * cell, cell), y0, (left, NO_LEGEND_RIGHT), false));
            }
            y0 += h;
        }
        let (placed, lh) = flow(&flow_legend(&self.charts));
        let legend = Legend::new(Vec::new(), 0.0);
        for (x, y, m, label) in &placed {
            legend.draw_entry(&mut body, *m, label, *x, y0 + 4.0 + y);
        }
        y0 += lh + 8.0;
        let mut out = svg_open(y0.max(1.0).ceil());
        out.push_str(&body);
        out.push_str("</svg>\n");
        out
    }

    /// Write the SVG to `path`.
    pub fn write(&self, path: &Path) -> Result<()> {
        std::fs::write(path, self.svg()).with_context(|| format!("writing the plot to {}", path.display()))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    #[test]
    fn ticks_are_nice() {
        assert_eq!(nice_step(10.0, 5.0), 2.0);
        assert_eq!(nice_step(64.0, 8.0), 10.0);
        assert_eq!(nice_step(3.0e6, 6.0), 5.0e5);
        assert_eq!(tick_label(1_500_000.0, 500_000.0), "1.5M");
        assert_eq!(tick_label(250_000.0, 50_000.0), "250k");
        assert_eq!(tick_label(12.0, 2.0), "12");
        assert_eq!(tick_label(0.004, 0.001), "0.004");
        assert_eq!(tick_label(0.0005, 0.0001), "0.0005");
        assert_eq!(tick_label(1500.0, 500.0), "1.5k");
        assert_eq!(tick_label(1000.0, 500.0), "1k");
        assert_eq!(tick_label(100.0, 50.0), "100");
        assert_eq!(tick_label(0.0, 0.2), "0");
        assert_eq!(tick_label(0.30000000000000004, 0.1), "0.3");
    }

    #[test]
    fn text_wraps_and_is_cut_with_an_ellipsis() {
        let w = wrap("one two three four", 10.0, 50.0, 3);
        assert_eq!(w.lines, ["one two", "three", "four"]);
        assert!(!w.cut && !w.broke);
        let w = wrap("one two three four five six", 10.0, 50.0, 2);
        assert_eq!(w.lines.len(), 2);
        assert!(w.cut && w.lines[1].ends_with('…'), "{w:?}");
        assert!(wrap("abcdefghijklmnop", 10.0, 60.0, 3).broke);
        assert_eq!(truncate("abc", 3), ("abc".into(), false));
        assert_eq!(truncate("abcdef", 4), ("abc…".into(), true));
    }

    /// `(x, y, width, height)` of every `<text>` of `svg` as drawn
    /// unrotated, estimated like the layout does, with its content.
    pub(crate) fn text_boxes(svg: &str) -> Vec<(f64, f64, f64, f64, String)> {
        let attr = |tag: &str, name: &str| -> Option<f64> {
            let i = tag.find(&format!(" {name}=\""))? + name.len() + 3;
            tag[i..].split('"').next()?.parse().ok()
        };
        let mut out = Vec::new();
        for piece in svg.split("<text ").skip(1) {
            let tag = &format!(" {}", &piece[..piece.find('>').unwrap()]);
            if tag.contains("rotate(") {
                continue;
            }
            let body = &piece[piece.find('>').unwrap() + 1..piece.find("</text>").unwrap()];
            let body = match body.find("</title>") {
                Some(i) => &body[i + 8..],
                None => body,
            };
            let size = attr(tag, "font-size").unwrap();
            let (x, y) = (attr(tag, "x").unwrap(), attr(tag, "y").unwrap());
            let w = text_width(body, size);
            let x0 = if tag.contains("text-anchor=\"middle\"") {
                x - w / 2.0
            } else if tag.contains("text-anchor=\"end\"") {
                x - w
            } else {
                x
            };
            out.push((x0, y - size * 0.8, w, size, body.to_string()));
        }
        out
    }

    /// Panics if two unrotated texts of `svg` overlap or one leaves the
    /// figure.
    pub(crate) fn assert_no_text_overlaps(svg: &str) {
        let boxes = text_boxes(svg);
        for (i, a) in boxes.iter().enumerate() {
            assert!(a.0 >= -0.5 && a.0 + a.2 <= WIDTH + 0.5, "{:?} leaves the figure", a.4);
            for b in &boxes[i + 1..] {
                let apart = a.0 + a.2 <= b.0 || b.0 + b.2 <= a.0 || a.1 + a.3 <= b.1 || b.1 + b.3 <= a.1;
                assert!(apart, "{:?} overlaps {:?}", a.4, b.4);
            }
        }
    }

    #[test]
    fn svg_has_every_series_and_escapes_text() {
        let chart = Chart {
            title: "a < b & c".into(),
            x_label: "cores".into(),
            y_label: "round trips/s".into(),
            series: vec![
                Series {
                    style: 0,
                    label: "measured".into(),
                    points: vec![(1.0, 10.0), (2.0, 15.0)],
                    line: false,
                    colour: 0,
                },
                Series {
                    style: 0,
                    label: "model".into(),
                    points: vec![(1.0, 10.0), (2.0, 16.0), (3.0, f64::NAN)],
                    line: true,
                    colour: 0,
                },
            ],
        };
        let svg = Figure { charts: vec![chart.clone(), chart] }.svg();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<circle").count(), 2 * 2 + 1, "two dots per chart, one legend dot under the grid");
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("a &lt; b &amp; c") && !svg.contains("a < b"));
        assert!(!svg.contains("NaN"));
        assert_no_text_overlaps(&svg);
    }

    #[test]
    fn dots_at_one_place_are_set_side_by_side_and_log_axes_keep_small_values_apart() {
        let dots = |label: &str, colour: usize| Series {
            style: 0,
            label: label.into(),
            points: vec![(1.0, 100.0), (2.0, 50.0)],
            line: false,
            colour,
        };
        let chart = Chart {
            title: "t".into(),
            x_label: "cores".into(),
            y_label: "y".into(),
            series: vec![dots("a", 0), dots("b", 1)],
        };
        let px = |x: f64| x * 100.0;
        let py = |y: f64| 300.0 - y;
        let placed = dodged(&chart, &px, &py);
        assert_eq!(placed.len(), 4);
        let at_one: Vec<f64> = placed.iter().filter(|p| (p.2 - 200.0).abs() < 1e-9).map(|p| p.1).collect();
        assert_eq!(at_one.len(), 2);
        assert!((at_one[0] - at_one[1]).abs() >= 7.0, "two dots at one place stand apart: {at_one:?}");
        let log = YAxis::log(1.0, 120.0, "cores (log scale)", 200.0);
        assert!(log.frac(2.0) > 0.1 && log.frac(1.0) == 0.0 && (log.frac(1000.0) - 1.0).abs() < 1e-9);
        let svg = Figure { charts: vec![Chart { y_label: format!("cores ({LOG_SCALE})"), ..chart.clone() }] }.svg();
        assert!(svg.contains(">10<") && svg.contains(">20<") && svg.contains(">50<"), "log ticks: {svg}");
    }

    #[test]
    fn long_legends_wrap_or_are_cut_and_never_overlap() {
        let series = (0..12)
            .map(|i| Series {
                style: 0,
                label: if i == 3 {
                    "a very long legend label that goes on and on about what this series is, well past any \
                     reasonable width for a legend entry"
                        .into()
                } else {
                    format!("ticket lock, this-machine (simulated) {i}")
                },
                points: vec![(1.0, i as f64), (56.0, 2.0 * i as f64)],
                line: i % 2 == 0,
                colour: i,
            })
            .collect();
        let chart = Chart {
            title: "A title long enough to need two lines when drawn at fifteen units a character, which is long \
                    indeed, really quite long"
                .into(),
            x_label: "cores".into(),
            y_label: "lock acquisitions per cycle".into(),
            series,
        };
        let svg = Figure { charts: vec![chart] }.svg();
        assert_no_text_overlaps(&svg);
        assert!(svg.contains("<title>a very long legend label"), "the cut label's full text is in a title");
        // The legend is right of the plot area.
        let frame = svg.split("<rect x=\"").nth(1).unwrap();
        let (x, rest) = frame.split_once('"').unwrap();
        let w: f64 = rest.split("width=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        let right_edge = x.parse::<f64>().unwrap() + w;
        for (x0, _, _, _, text) in text_boxes(&svg) {
            if text.starts_with("ticket lock") {
                assert!(x0 > right_edge, "legend text {text:?} inside the plot");
            }
        }
        assert!(!svg.contains("font-size=\"10\""), "no font below 11 units");
    }

    #[test]
    fn regimes_and_other_series_have_separate_colours() {
        for r in crate::regimes::COLOURS.iter().map(|(n, _)| n).chain(&["some-new-regime"]) {
            let c = colour(crate::regimes::colour(r));
            assert!(!other_palette().contains(&c), "{r}'s colour {c} is also a non-regime colour");
        }
        for i in 0..50 {
            assert!(other_palette().contains(&colour(i)));
        }
    }
}
