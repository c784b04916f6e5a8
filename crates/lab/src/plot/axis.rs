//! A chart's title and y axis: their text wrapped to the room they have,
//! the y axis' ticks (linear from zero, or logarithmic) and the margin its
//! labels need.

use plotters::style::text_anchor::HPos;

use super::canvas::Canvas;
use super::marks::Type;
use super::text::{text_width, wrap, wrap_bold, Wrapped};
use super::ticks::tick_label;
use super::{AXIS_FONT, MIN_LEFT, TICK_FONT, TITLE_FONT, WIDTH};

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
        Title { text: text.to_string(), wrapped: wrap_bold(text, TITLE_FONT, width - 24.0, 2) }
    }

    /// The top margin it needs: the plot area starts this far below the
    /// chart's top.
    pub(crate) fn top(&self) -> f64 {
        40.0 + 18.0 * (self.wrapped.lines.len() as f64 - 1.0)
    }

    /// Draw it, centred over the plot area `x0..x1` when it fits there
    /// (else over the whole figure), in the chart starting at `y0`; cut
    /// short, it has its full text as its tooltip.
    pub(crate) fn draw(&self, canvas: &mut Canvas, (x0, x1): (f64, f64), y0: f64) {
        let ty = Type::new(TITLE_FONT).bold();
        canvas.layer_with_tip(self.wrapped.cut.then_some(self.text.as_str()), |a| {
            for (i, line) in self.wrapped.lines.iter().enumerate() {
                let w = ty.width(line);
                let x = if w <= x1 - x0 {
                    (x0 + x1) / 2.0
                } else {
                    ((x0 + x1) / 2.0).clamp(w / 2.0 + 4.0, WIDTH - w / 2.0 - 4.0)
                };
                ty.draw(a, line, (x, y0 + 26.0 + 18.0 * i as f64), HPos::Center)?;
            }
            Ok(())
        });
    }
}

/// A y axis from 0 to `top` with ticks every `step` (or logarithmic), and
/// its label, reading upwards beside it, wrapped to the plot's height.
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
    #[cfg(test)]
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

    /// The value at the bottom of the axis.
    pub(crate) fn bottom(&self) -> f64 {
        self.bottom
    }

    /// Whether it is logarithmic.
    pub(crate) fn is_log(&self) -> bool {
        self.log
    }

    /// The ticks: values and their labels.
    pub(crate) fn ticks(&self) -> &[(f64, String)] {
        &self.ticks
    }

    /// The left margin it needs: its label, then the tick labels.
    pub(crate) fn left(&self) -> f64 {
        let ticks = self.ticks.iter().map(|(_, t)| text_width(t, TICK_FONT)).fold(0.0, f64::max);
        (10.0 + 16.0 * self.label.lines.len() as f64 + 6.0 + ticks + 8.0).max(MIN_LEFT)
    }

    /// Draw its label at the left of the chart whose left edge is at `cell`,
    /// centred on the plot area running from `y0` down to `y1`; cut short,
    /// it has its full text as its tooltip.
    pub(crate) fn draw_label(&self, canvas: &mut Canvas, cell: f64, (y0, y1): (f64, f64)) {
        let ly = (y0 + y1) / 2.0;
        canvas.layer_with_tip(self.label.cut.then_some(self.text.as_str()), |a| {
            for (i, line) in self.label.lines.iter().enumerate() {
                let lx = cell + 10.0 + AXIS_FONT + 16.0 * i as f64;
                Type::new(AXIS_FONT).draw_up(a, line, (lx, ly), HPos::Center)?;
            }
            Ok(())
        });
    }
}
