//! A bar chart drawn to its [`Plan`](super::plan::Plan) with plotters:
//! the grid and reference lines under the bars, each bar (with its error
//! bar and value label) a layer with its name and value as its tooltip,
//! then the category labels, the frame and the legend.

use plotters::style::text_anchor::HPos;
use plotters::style::{RGBColor, WHITE};

use super::plan::{Labels, Values, LABEL_LINE, PLOT_HEIGHT};
use super::{Bar, BarChart};
use crate::plot::{
    fill, line, rgb, value_label, Area, Canvas, Drawn, Frame, Title, Type, REFERENCE, REFERENCE_DASH, TICK_FONT,
    VALUE_FONT, VALUE_INK, WIDTH,
};

/// Error bars.
const WHISKER: RGBColor = RGBColor(0x22, 0x22, 0x22);

impl BarChart {
    /// The SVG document.
    pub fn svg(&self) -> String {
        let cats = self.categories();
        let title = Title::new(&self.title);
        let legend = self.legend();
        let p = self.settled_plan(&cats, &title, &legend);
        let (left, top, pw, ph) = (p.left, p.top, p.pw, PLOT_HEIGHT);
        let frame = Frame::new((left, top), (pw, ph), pw, Vec::new(), &p.y);
        let y_top = p.y.top();
        // A value past the drawable range (or not a number) stands at the
        // frame's edge; its label and tooltip keep the value.
        let py = |y: f64| frame.py(if y.is_nan() { 0.0 } else { y.clamp(0.0, y_top) });
        let mut canvas = Canvas::new(WIDTH, p.height);
        title.draw(&mut canvas, (left, left + pw), 0.0);
        // Reference lines first: bars and their value labels (each on a
        // white ground) are drawn over them, so no line runs through a
        // label.
        canvas.layer(|a| {
            frame.draw_grid(a)?;
            for r in &self.references {
                line(a, &[(left, py(r.value)), (left + pw, py(r.value))], REFERENCE, 1, REFERENCE_DASH)?;
            }
            Ok(())
        });
        p.y.draw_label(&mut canvas, 0.0, (top, top + ph));
        for (ci, cat) in cats.iter().enumerate() {
            let cx = left + p.slot * (ci as f64 + 0.5);
            let start = cx - p.pitch * cat.bars.len() as f64 / 2.0;
            for (k, b) in cat.bars.iter().enumerate() {
                let bx = start + p.pitch * (k as f64 + 0.5);
                canvas.layer_with_tip(Some(&tooltip(b)), |a| bar(a, b, bx, p.bar_w, p.values, &py));
            }
            match &p.labels {
                Labels::Level(lines) => canvas.layer(|a| {
                    for (j, l) in lines[ci].iter().enumerate() {
                        Type::new(TICK_FONT).draw(a, l, (cx, top + ph + 18.0 + LABEL_LINE * j as f64), HPos::Center)?;
                    }
                    Ok(())
                }),
                Labels::Turned { angle, every, texts } => {
                    if ci % every == 0 {
                        let (text, cut) = &texts[ci];
                        // The text's middle, not its baseline, on the
                        // category's centre.
                        let at = (cx + angle.to_radians().sin() * TICK_FONT * 0.35, top + ph + 14.0);
                        canvas.layer_turned(*angle, at, cut.then_some(cat.label), |a| {
                            Type::new(TICK_FONT).draw(a, text, at, HPos::Right)
                        });
                    }
                }
            }
        }
        canvas.layer(|a| frame.draw_outline(a));
        legend.draw(&mut canvas, WIDTH - p.right + 16.0, top + 4.0);
        canvas.finish()
    }
}

/// A bar's tooltip: its name, value and error.
fn tooltip(b: &Bar) -> String {
    let name = if b.group.is_empty() { b.label.clone() } else { format!("{} — {}", b.group, b.label) };
    let error = if b.error > 0.0 { format!(" ± {}", value_label(b.error)) } else { String::new() };
    format!("{name}: {}{error}", value_label(b.value))
}

/// Bar `b` centred on `bx`, `w` wide, with its error bar and its value
/// label set as `values` (`py` maps a value to its pixel row).
fn bar(a: &Area<'_>, b: &Bar, bx: f64, w: f64, values: Values, py: &dyn Fn(f64) -> f64) -> Drawn {
    fill(a, (bx - w / 2.0, py(b.value)), (bx + w / 2.0, py(0.0)), rgb(b.colour), 0.85)?;
    if b.error > 0.0 {
        let (lo, hi) = (py(b.value - b.error), py(b.value + b.error));
        let half = (w / 2.0).min(6.0);
        line(a, &[(bx - half, hi), (bx + half, hi)], WHISKER, 1, &[])?;
        line(a, &[(bx, hi), (bx, lo)], WHISKER, 1, &[])?;
        line(a, &[(bx - half, lo), (bx + half, lo)], WHISKER, 1, &[])?;
    }
    let above = py(b.value + b.error.max(0.0)) - 4.0;
    let label = value_label(b.value);
    let ty = Type::new(VALUE_FONT).colour(VALUE_INK);
    let tw = ty.width(&label);
    match values {
        Values::Level => {
            let (y0, y1) = (above - 0.8 * VALUE_FONT, above + 0.2 * VALUE_FONT);
            fill(a, (bx - tw / 2.0 - 1.0, y0), (bx + tw / 2.0 + 1.0, y1), WHITE, 1.0)?;
            ty.draw(a, &label, (bx, above), HPos::Center)
        }
        Values::Upright => {
            let tx = bx + VALUE_FONT * 0.35;
            fill(a, (tx - 0.8 * VALUE_FONT, above - tw - 1.0), (tx + 0.2 * VALUE_FONT, above + 1.0), WHITE, 1.0)?;
            ty.draw_up(a, &label, (tx, above), HPos::Left)
        }
        Values::Hidden => Ok(()),
    }
}
