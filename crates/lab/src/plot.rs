//! SVG plots of throughput against cores: measured points, model lines.
//!
//! Hand-written SVG text (no font or rendering libraries): a [`Figure`] is a
//! column of [`Chart`]s, each with linear axes starting at zero, tick labels
//! on "nice" 1-2-5 steps with k/M/G suffixes, a legend on the right, and
//! series drawn as lines (models) or dots (measurements). Colours come from
//! one palette by series index, so a measured series and its model line can
//! share a colour.

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
    /// Index into the palette.
    pub colour: usize,
}

/// One chart.
#[derive(Clone, Debug, Default)]
pub struct Chart {
    /// Title above the plot area.
    pub title: String,
    /// X axis label.
    pub x_label: String,
    /// Y axis label.
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

const PALETTE: &[&str] =
    &["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"];
const WIDTH: f64 = 860.0;
const HEIGHT: f64 = 440.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 230.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 56.0;

pub(crate) fn colour(i: usize) -> &'static str {
    PALETTE[i % PALETTE.len()]
}

pub(crate) fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
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

/// A tick label: `1.5M`, `250k`, `12`, `0.004`.
pub(crate) fn label(v: f64) -> String {
    let (x, suffix) = scaled(v);
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    format!("{s}{suffix}")
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

/// A chart's title, centred on `x`.
pub(crate) fn title(out: &mut String, x: f64, y: f64, text: &str) {
    let _ = writeln!(
        out,
        r#"<text x="{x}" y="{y}" font-size="15" text-anchor="middle" font-weight="bold">{}</text>"#,
        escape(text)
    );
}

/// The y axis of a plot spanning `x0..x1`: grid lines with tick labels from
/// 0 to `top` every `step` (`py` maps a value to its SVG y), and `text`
/// rotated beside the axis, halfway up.
pub(crate) fn y_axis(out: &mut String, (x0, x1): (f64, f64), top: f64, step: f64, py: impl Fn(f64) -> f64, text: &str) {
    let mut y = 0.0;
    while y <= top * (1.0 + 1e-9) {
        let _ = writeln!(
            out,
            r##"<line x1="{x0}" y1="{0}" x2="{x1}" y2="{0}" stroke="#ddd"/><text x="{1}" y="{2}" font-size="11" text-anchor="end">{3}</text>"##,
            py(y),
            x0 - 6.0,
            py(y) + 4.0,
            label(y)
        );
        y += step;
    }
    let (lx, ly) = (18.0, (py(0.0) + py(top)) / 2.0);
    let _ = writeln!(
        out,
        r#"<text x="{lx}" y="{ly}" font-size="12" text-anchor="middle" transform="rotate(-90 {lx} {ly})">{}</text>"#,
        escape(text)
    );
}

impl Chart {
    fn render(&self, out: &mut String, y0: f64) {
        let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
        let all = self.series.iter().flat_map(|s| s.points.iter()).filter(|(x, y)| x.is_finite() && y.is_finite());
        let x_max = all.clone().map(|p| p.0).fold(1.0, f64::max);
        let y_max = all.clone().map(|p| p.1).fold(0.0, f64::max).max(f64::MIN_POSITIVE);
        // Whole steps when every x is whole (cores).
        let whole = all.clone().all(|p| p.0.fract() == 0.0);
        let (xs, ys) = (nice_step(x_max, 8.0).max(if whole { 1.0 } else { 0.0 }), nice_step(y_max, 6.0));
        // A margin on both axes, so no mark sits on the frame.
        let (x_top, y_top) = ((x_max * 1.02 / xs).ceil() * xs, (y_max * 1.02 / ys).ceil() * ys);
        let px = |x: f64| LEFT + x / x_top * pw;
        let py = |y: f64| y0 + TOP + ph - y / y_top * ph;
        title(out, LEFT + pw / 2.0, y0 + TOP - 14.0, &self.title);
        let _ = writeln!(
            out,
            r##"<rect x="{LEFT}" y="{}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>"##,
            y0 + TOP
        );
        let mut x = 0.0;
        while x <= x_top * (1.0 + 1e-9) {
            let _ = writeln!(
                out,
                r##"<line x1="{0}" y1="{1}" x2="{0}" y2="{2}" stroke="#ddd"/><text x="{0}" y="{3}" font-size="11" text-anchor="middle">{4}</text>"##,
                px(x),
                y0 + TOP,
                y0 + TOP + ph,
                y0 + TOP + ph + 16.0,
                label(x)
            );
            x += xs;
        }
        y_axis(out, (LEFT, LEFT + pw), y_top, ys, py, &self.y_label);
        let _ = writeln!(
            out,
            r#"<text x="{}" y="{}" font-size="12" text-anchor="middle">{}</text>"#,
            LEFT + pw / 2.0,
            y0 + HEIGHT - 14.0,
            escape(&self.x_label)
        );
        for s in &self.series {
            let pts: Vec<(f64, f64)> =
                s.points.iter().copied().filter(|(x, y)| x.is_finite() && y.is_finite()).collect();
            let c = colour(s.colour);
            if s.line {
                let path: Vec<String> = pts.iter().map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y))).collect();
                let _ = writeln!(
                    out,
                    r#"<polyline fill="none" stroke="{c}" stroke-width="1.8" points="{}"/>"#,
                    path.join(" ")
                );
            } else {
                for &(x, y) in &pts {
                    let _ = writeln!(out, r#"<circle cx="{:.1}" cy="{:.1}" r="3.5" fill="{c}"/>"#, px(x), py(y));
                }
            }
        }
        for (i, s) in self.series.iter().enumerate() {
            let (x, y) = (WIDTH - RIGHT + 16.0, y0 + TOP + 10.0 + 18.0 * i as f64);
            let c = colour(s.colour);
            if s.line {
                let _ = writeln!(
                    out,
                    r#"<line x1="{x}" y1="{y}" x2="{}" y2="{y}" stroke="{c}" stroke-width="1.8"/>"#,
                    x + 22.0
                );
            } else {
                let _ = writeln!(out, r#"<circle cx="{}" cy="{y}" r="3.5" fill="{c}"/>"#, x + 11.0);
            }
            let _ =
                writeln!(out, r#"<text x="{}" y="{}" font-size="11">{}</text>"#, x + 28.0, y + 4.0, escape(&s.label));
        }
    }
}

impl Figure {
    /// The SVG document.
    pub fn svg(&self) -> String {
        let h = HEIGHT * self.charts.len().max(1) as f64;
        let mut out = format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{h}" viewBox="0 0 {WIDTH} {h}" font-family="sans-serif">"#
        );
        out.push('\n');
        let _ = writeln!(out, r#"<rect width="{WIDTH}" height="{h}" fill="white"/>"#);
        for (i, c) in self.charts.iter().enumerate() {
            c.render(&mut out, HEIGHT * i as f64);
        }
        out.push_str("</svg>\n");
        out
    }

    /// Write the SVG to `path`.
    pub fn write(&self, path: &Path) -> Result<()> {
        std::fs::write(path, self.svg()).with_context(|| format!("writing the plot to {}", path.display()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_nice() {
        assert_eq!(nice_step(10.0, 5.0), 2.0);
        assert_eq!(nice_step(64.0, 8.0), 10.0);
        assert_eq!(nice_step(3.0e6, 6.0), 5.0e5);
        assert_eq!(label(1_500_000.0), "1.5M");
        assert_eq!(label(250_000.0), "250k");
        assert_eq!(label(12.0), "12");
        assert_eq!(label(0.004), "0.004");
    }

    #[test]
    fn svg_has_every_series_and_escapes_text() {
        let chart = Chart {
            title: "a < b & c".into(),
            x_label: "cores".into(),
            y_label: "round trips/s".into(),
            series: vec![
                Series { label: "measured".into(), points: vec![(1.0, 10.0), (2.0, 15.0)], line: false, colour: 0 },
                Series {
                    label: "model".into(),
                    points: vec![(1.0, 10.0), (2.0, 16.0), (3.0, f64::NAN)],
                    line: true,
                    colour: 0,
                },
            ],
        };
        let svg = Figure { charts: vec![chart.clone(), chart] }.svg();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<circle").count(), 2 * (2 + 1), "two dots and one legend dot per chart");
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains("a &lt; b &amp; c") && !svg.contains("a < b"));
        assert!(!svg.contains("NaN"));
    }
}
