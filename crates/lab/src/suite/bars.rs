//! Bar charts with error bars (the seeds' IPC-cost figure) as SVG text, in
//! the style of [`crate::plot`]: same palette, tick steps and labels.

use std::fmt::Write as _;

use crate::plot::{colour, escape, nice_step, title, value_label, y_axis};

/// One bar.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// Label under the bar.
    pub label: String,
    /// Height.
    pub value: f64,
    /// Half-height of the error bar (none drawn if 0).
    pub error: f64,
    /// Palette index.
    pub colour: usize,
}

/// A horizontal reference line across the chart (e.g. a physical floor).
#[derive(Clone, Debug, PartialEq)]
pub struct Reference {
    /// Legend text.
    pub label: String,
    /// Height.
    pub value: f64,
}

/// A bar chart.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BarChart {
    /// Title above the plot.
    pub title: String,
    /// Y axis label.
    pub y_label: String,
    /// The bars, left to right.
    pub bars: Vec<Bar>,
    /// Dashed reference lines.
    pub references: Vec<Reference>,
}

const WIDTH: f64 = 860.0;
const HEIGHT: f64 = 400.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 200.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 70.0;

impl BarChart {
    /// The SVG document.
    pub fn svg(&self) -> String {
        let (pw, ph) = (WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM);
        let top = self
            .bars
            .iter()
            .map(|b| b.value + b.error)
            .chain(self.references.iter().map(|r| r.value))
            .filter(|v| v.is_finite())
            .fold(0.0, f64::max)
            .max(f64::MIN_POSITIVE);
        let step = nice_step(top, 6.0);
        let y_top = (top * 1.05 / step).ceil() * step;
        let py = |y: f64| TOP + ph - y.max(0.0) / y_top * ph;
        let mut out = format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif">"#
        );
        out.push('\n');
        let _ = writeln!(out, r#"<rect width="{WIDTH}" height="{HEIGHT}" fill="white"/>"#);
        title(&mut out, LEFT + pw / 2.0, TOP - 14.0, &self.title);
        y_axis(&mut out, (LEFT, LEFT + pw), y_top, step, py, &self.y_label);
        let slot = pw / self.bars.len().max(1) as f64;
        for (i, b) in self.bars.iter().enumerate() {
            let x = LEFT + slot * i as f64 + slot * 0.15;
            let w = slot * 0.7;
            let c = colour(b.colour);
            let _ = writeln!(
                out,
                r#"<rect x="{x:.1}" y="{:.1}" width="{w:.1}" height="{:.1}" fill="{c}" fill-opacity="0.85"><title>{}: {}</title></rect>"#,
                py(b.value),
                py(0.0) - py(b.value),
                escape(&b.label),
                value_label(b.value)
            );
            if b.error > 0.0 {
                let cx = x + w / 2.0;
                let (lo, hi) = (py(b.value - b.error), py(b.value + b.error));
                let _ = writeln!(
                    out,
                    r##"<path d="M{:.1},{hi:.1}H{:.1}M{cx:.1},{hi:.1}V{lo:.1}M{:.1},{lo:.1}H{:.1}" stroke="#222" stroke-width="1.3" fill="none"/>"##,
                    cx - 6.0,
                    cx + 6.0,
                    cx - 6.0,
                    cx + 6.0
                );
            }
            let _ = writeln!(
                out,
                r#"<text x="{:.1}" y="{:.1}" font-size="11" text-anchor="middle">{}</text>"#,
                x + w / 2.0,
                TOP + ph + 16.0,
                escape(&b.label)
            );
            let _ = writeln!(
                out,
                r##"<text x="{:.1}" y="{:.1}" font-size="10" text-anchor="middle" fill="#333">{}</text>"##,
                x + w / 2.0,
                TOP + ph + 30.0,
                value_label(b.value)
            );
        }
        for (i, r) in self.references.iter().enumerate() {
            let y = py(r.value);
            let _ = writeln!(
                out,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#555" stroke-dasharray="6 4"/>"##,
                LEFT + pw
            );
            let (x, ly) = (WIDTH - RIGHT + 16.0, TOP + 10.0 + 18.0 * i as f64);
            let _ = writeln!(
                out,
                r##"<line x1="{x}" y1="{ly}" x2="{}" y2="{ly}" stroke="#555" stroke-dasharray="6 4"/><text x="{}" y="{}" font-size="11">{}</text>"##,
                x + 22.0,
                x + 28.0,
                ly + 4.0,
                escape(&r.label)
            );
        }
        let _ = writeln!(out, r##"<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#444"/>"##);
        out.push_str("</svg>\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bars_error_bars_and_references_are_drawn() {
        let chart = BarChart {
            title: "IPC <cost>".into(),
            y_label: "cycles".into(),
            bars: vec![
                Bar { label: "none".into(), value: 200.0, error: 10.0, colour: 0 },
                Bar { label: "bkl".into(), value: 230.0, error: 0.0, colour: 1 },
            ],
            references: vec![Reference { label: "xchg".into(), value: 15.0 }],
        };
        let svg = chart.svg();
        assert_eq!(svg.matches("<rect x=").count(), 3, "two bars and the frame");
        assert_eq!(svg.matches("<path d=").count(), 1, "one error bar");
        assert!(svg.contains("stroke-dasharray"));
        assert!(svg.contains("IPC &lt;cost&gt;"));
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
    }
}
