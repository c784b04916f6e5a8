//! A bar chart's geometry: its scale, where the bars stand, and how its
//! category and value labels are set so that none overlaps another.

use super::{BarChart, Category};
use crate::plot::{
    fit, nice_step, plottable, text_width, value_label, wrap, Legend, Title, YAxis, MIN_LEFT, TICK_FONT, VALUE_FONT,
    WIDTH,
};

/// Height of the plot area.
pub(super) const PLOT_HEIGHT: f64 = 160.0;
/// Clearance between neighbouring labels, as a multiple of the font size.
pub(super) const CLEARANCE: f64 = 1.35;
/// The widest a turned category label gets (longer ones are cut short,
/// the full text as a tooltip).
const MAX_TURNED: f64 = 300.0;
/// Lines a category label may wrap to before it is turned instead.
const MAX_WRAPPED_LINES: usize = 3;
pub(super) const LABEL_LINE: f64 = 15.0;

/// How the category labels are set.
pub(super) enum Labels {
    /// Level, each wrapped to its slot.
    Level(Vec<Vec<String>>),
    /// Turned by `angle` degrees (reading upwards), every `every`-th one,
    /// each cut to [`MAX_TURNED`] (whether it was cut).
    Turned { angle: f64, every: usize, texts: Vec<(String, bool)> },
}

/// How the value labels above the bars are set.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Values {
    Level,
    Upright,
    Hidden,
}

/// The chart's geometry for a given left margin.
pub(super) struct Plan {
    pub left: f64,
    pub right: f64,
    pub top: f64,
    pub pw: f64,
    pub slot: f64,
    pub pitch: f64,
    pub bar_w: f64,
    pub y: YAxis,
    pub labels: Labels,
    pub values: Values,
    pub height: f64,
    /// The left margin this plan turned out to need.
    pub needs_left: f64,
}

impl BarChart {
    /// The plan whose left margin is what it needs.
    pub(super) fn settled_plan(&self, cats: &[Category<'_>], title: &Title, legend: &Legend) -> Plan {
        let mut p = self.plan(cats, title, legend, MIN_LEFT);
        for _ in 0..4 {
            if p.needs_left <= p.left + 0.5 {
                break;
            }
            p = self.plan(cats, title, legend, p.needs_left.ceil());
        }
        p
    }

    fn plan(&self, cats: &[Category<'_>], title: &Title, legend: &Legend, left: f64) -> Plan {
        let grouped = self.grouped();
        let top = title.top();
        let ph = PLOT_HEIGHT;
        let right = legend.right();
        let pw = WIDTH - left - right;
        let n = cats.len().max(1) as f64;
        let slot = pw / n;
        let per = cats.iter().map(|c| c.bars.len()).max().unwrap_or(1).max(1) as f64;
        let (pitch, bar_w) = if grouped { (slot * 0.8 / per, slot * 0.8 / per * 0.88) } else { (slot, slot * 0.7) };
        // The closest two bars' centres come.
        let spacing = if per > 1.0 { pitch } else { slot };

        let widest_value = self.bars.iter().map(|b| text_width(&value_label(b.value), VALUE_FONT)).fold(0.0, f64::max);
        let values = if widest_value + 4.0 <= spacing {
            Values::Level
        } else if spacing >= VALUE_FONT * CLEARANCE {
            Values::Upright
        } else {
            Values::Hidden
        };
        let headroom = match values {
            Values::Level => VALUE_FONT + 6.0,
            Values::Upright => widest_value + 8.0,
            Values::Hidden => 0.0,
        }
        .min(ph / 2.0);
        let highest =
            self.bars.iter().map(|b| b.value + b.error.max(0.0)).filter(|v| plottable(*v)).fold(0.0, f64::max);
        let highest_ref = self.references.iter().map(|r| r.value).filter(|v| plottable(*v)).fold(0.0, f64::max);
        // Room above the highest bar for its value label.
        let need = (highest * ph / (ph - headroom - 4.0)).max(highest * 1.02).max(highest_ref * 1.05);
        let need = need.max(f64::MIN_POSITIVE);
        let step = nice_step(need, 6.0);
        let y = YAxis::new((need / step).ceil() * step, step, &self.y_label, ph);

        let widths: Vec<f64> = cats.iter().map(|c| text_width(c.label, TICK_FONT)).collect();
        let room = slot * 0.94;
        let wrapped: Vec<_> = cats.iter().map(|c| wrap(c.label, TICK_FONT, room, MAX_WRAPPED_LINES)).collect();
        let labels = if widths.iter().all(|w| *w <= room) {
            Labels::Level(cats.iter().map(|c| vec![c.label.to_string()]).collect())
        } else if wrapped.iter().all(|w| !w.cut && !w.broke) {
            Labels::Level(wrapped.into_iter().map(|w| w.lines).collect())
        } else {
            // Neighbouring turned labels stand slot × sin(angle) apart.
            let clear = TICK_FONT * CLEARANCE;
            let angle = [35.0, 45.0, 60.0, 90.0f64].into_iter().find(|a| slot * a.to_radians().sin() >= clear);
            let (angle, every) = match angle {
                Some(a) => (a, 1),
                None => (90.0, (clear / slot).ceil() as usize),
            };
            Labels::Turned { angle, every, texts: cats.iter().map(|c| fit(c.label, TICK_FONT, MAX_TURNED)).collect() }
        };
        let (below, needs_left) = match &labels {
            Labels::Level(lines) => {
                let most = lines.iter().map(Vec::len).max().unwrap_or(1) as f64;
                (18.0 + LABEL_LINE * most, left)
            }
            Labels::Turned { angle, texts, .. } => {
                let (sin, cos) = (angle.to_radians().sin(), angle.to_radians().cos());
                let widest = texts.iter().map(|(t, _)| text_width(t, TICK_FONT)).fold(0.0, f64::max);
                // A turned label ends at its category's centre and runs
                // down to the left: the first ones must not leave the
                // figure.
                let overhang = texts
                    .iter()
                    .enumerate()
                    .map(|(i, (t, _))| cos * text_width(t, TICK_FONT) + 6.0 - slot * (i as f64 + 0.5))
                    .fold(0.0, f64::max);
                (18.0 + sin * widest + cos * TICK_FONT + 8.0, overhang)
            }
        };
        let needs_left = needs_left.max(y.left()).max(MIN_LEFT);
        let height = (top + ph + below).max(top + 4.0 + legend.height() + 16.0);
        Plan { left, right, top, pw, slot, pitch, bar_w, y, labels, values, height, needs_left }
    }
}
