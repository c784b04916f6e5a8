//! Legends: a column of entries right of a chart (labels wrapped to the
//! column, at most three lines, then cut short with the full text in a
//! tooltip), or rows of entries across a figure under a grid of charts.

use plotters::style::text_anchor::HPos;

use super::canvas::{Area, Canvas, Drawn};
use super::marks::{fill, line, point, Type};
use super::palette::{dash, rgb, REFERENCE, REFERENCE_DASH};
use super::text::{fit, text_width, wrap, Wrapped};
use super::{Series, LEGEND_FONT, NO_LEGEND_RIGHT, WIDTH};

/// The widest a legend's text column gets before its labels wrap.
const LEGEND_MAX_TEXT: f64 = 250.0;
const LEGEND_LINE: f64 = 15.0;
const LEGEND_GAP: f64 = 6.0;
/// From an entry's left edge to its text.
const MARK_WIDTH: f64 = 30.0;

/// How a legend entry shows its series.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Mark {
    /// A dot of a style (measurements): palette index and style.
    Dot(usize, usize),
    /// A line of a style (models): palette index and style.
    Line(usize, usize),
    /// A dashed grey line (reference lines).
    Dashed,
    /// A filled square (bars): palette index.
    Swatch(usize),
}

impl Mark {
    /// The entry of a series.
    pub(crate) fn of(s: &Series) -> Self {
        if s.line {
            Mark::Line(s.colour, s.style)
        } else {
            Mark::Dot(s.colour, s.style)
        }
    }

    /// Draw it with its left edge at `x`, its middle at `y`.
    fn draw(&self, area: &Area<'_>, (x, y): (f64, f64)) -> Drawn {
        match *self {
            Mark::Dot(c, style) => point(area, (x + 11.0, y), rgb(c), style),
            Mark::Line(c, style) => line(area, &[(x, y), (x + 22.0, y)], rgb(c), 2, dash(style)),
            Mark::Dashed => line(area, &[(x, y), (x + 22.0, y)], REFERENCE, 1, REFERENCE_DASH),
            Mark::Swatch(c) => fill(area, (x + 5.0, y - 6.0), (x + 17.0, y + 6.0), rgb(c), 0.85),
        }
    }
}

/// One legend entry per distinct label, in order: series sharing a label
/// (one machine's series in several charts, a band's two ends) share it.
pub(crate) fn legend_entries<'a>(series: impl IntoIterator<Item = &'a Series>) -> Vec<(Mark, String)> {
    let mut entries: Vec<(Mark, String)> = Vec::new();
    for s in series {
        if !entries.iter().any(|(_, l)| *l == s.label) {
            entries.push((Mark::of(s), s.label.clone()));
        }
    }
    entries
}

/// A legend: entries stacked top to bottom, each label wrapped to the
/// legend's text width.
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
            16.0 + MARK_WIDTH + self.text_w + 12.0
        }
    }

    /// Its height.
    pub(crate) fn height(&self) -> f64 {
        let lines: usize = self.entries.iter().map(|(_, _, w)| w.lines.len()).sum();
        lines as f64 * LEGEND_LINE + self.entries.len().saturating_sub(1) as f64 * LEGEND_GAP
    }

    /// Draw it with its top left corner at `(x, y)`; an entry cut short
    /// has its full label as its tooltip.
    pub(crate) fn draw(&self, canvas: &mut Canvas, x: f64, y: f64) {
        let mut y = y + 6.0;
        for (mark, label, w) in &self.entries {
            canvas.layer_with_tip(w.cut.then_some(label.as_str()), |a| entry(a, *mark, &w.lines, (x, y)));
            y += LEGEND_LINE * w.lines.len() as f64 + LEGEND_GAP;
        }
    }
}

/// An entry: its mark's left edge at `x`, the middle of its first line at
/// `y`, its lines below one another.
fn entry(area: &Area<'_>, mark: Mark, lines: &[String], (x, y): (f64, f64)) -> Drawn {
    mark.draw(area, (x, y))?;
    for (i, line) in lines.iter().enumerate() {
        Type::new(LEGEND_FONT).draw(area, line, (x + MARK_WIDTH, y + 4.0 + LEGEND_LINE * i as f64), HPos::Left)?;
    }
    Ok(())
}

/// Entries in rows across a figure, every label on one line (cut short,
/// with its full text as the tooltip, when wider than the figure).
#[derive(Clone, Debug)]
pub(crate) struct Flow {
    /// `(x, y, mark, label shown, full label if cut)`, `y` from 0.
    placed: Vec<(f64, f64, Mark, String, Option<String>)>,
    height: f64,
}

impl Flow {
    pub(crate) fn new(entries: &[(Mark, String)]) -> Self {
        let mut placed = Vec::new();
        let (mut x, mut y) = (16.0, 0.0);
        let max_text = WIDTH - 16.0 - MARK_WIDTH - 16.0;
        for (m, label) in entries {
            let (shown, cut) = fit(label, LEGEND_FONT, max_text);
            let w = MARK_WIDTH + text_width(&shown, LEGEND_FONT) + 18.0;
            if x > 16.0 && x + w > WIDTH - 8.0 {
                x = 16.0;
                y += LEGEND_LINE + LEGEND_GAP;
            }
            placed.push((x, y, *m, shown, cut.then(|| label.clone())));
            x += w;
        }
        let height = if entries.is_empty() { 0.0 } else { y + LEGEND_LINE + LEGEND_GAP };
        Flow { placed, height }
    }

    /// Its height.
    pub(crate) fn height(&self) -> f64 {
        self.height
    }

    /// Draw it with its top at `y`.
    pub(crate) fn draw(&self, canvas: &mut Canvas, y: f64) {
        let whole: Vec<_> = self.placed.iter().filter(|p| p.4.is_none()).collect();
        canvas.layer(|a| {
            for (x, dy, m, label, _) in whole {
                entry(a, *m, std::slice::from_ref(label), (*x, y + 6.0 + dy))?;
            }
            Ok(())
        });
        for (x, dy, m, label, full) in self.placed.iter().filter(|p| p.4.is_some()) {
            canvas.layer_with_tip(full.as_deref(), |a| entry(a, *m, std::slice::from_ref(label), (*x, y + 6.0 + dy)));
        }
    }
}
