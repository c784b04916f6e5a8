//! Bar charts with error bars (the seeds' IPC-cost figure) as SVG text, in
//! the style of [`crate::plot`]: same palettes, fonts, tick steps and labels.
//!
//! Bars stand one per category, or side by side in groups (bars with a
//! `group`: the group names the category under them, a legend the bars'
//! colours). No two labels overlap: category labels that do not fit their
//! slot wrap, or else turn (35° to 90°, the bottom margin growing to the
//! longest); value labels stand above their bars, upright when too wide to
//! lie flat, and are left out (the bar's tooltip keeps the value) when the
//! bars are too narrow even for that.

use std::fmt::Write as _;

use crate::plot::{
    colour, escape, nice_step, plottable, svg_open, text_width, truncate, value_label, wrap, Legend, Mark, Title,
    YAxis, MIN_LEFT, TICK_FONT, VALUE_FONT, WIDTH,
};

/// One bar.
#[derive(Clone, Debug, PartialEq)]
pub struct Bar {
    /// Label under the bar, or in the legend when the bar is in a group.
    pub label: String,
    /// Height.
    pub value: f64,
    /// Half-height of the error bar (none drawn if 0).
    pub error: f64,
    /// Palette index: [`crate::regimes::colour`] when the bar is a regime.
    pub colour: usize,
    /// The group it stands in, side by side with the other bars of the
    /// group, under the group's name (empty: a category of its own).
    pub group: String,
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
    /// Y axis label, with its unit.
    pub y_label: String,
    /// The bars, left to right (a group's bars gathered where it first
    /// appears).
    pub bars: Vec<Bar>,
    /// Dashed reference lines.
    pub references: Vec<Reference>,
}

/// Height of the plot area.
const PLOT_HEIGHT: f64 = 160.0;
/// Clearance between neighbouring labels, as a multiple of the font size.
const CLEARANCE: f64 = 1.35;
/// The widest a turned category label gets (longer ones are cut short,
/// the full text in a `<title>`).
const MAX_TURNED: f64 = 300.0;
/// Lines a category label may wrap to before it is turned instead.
const MAX_WRAPPED_LINES: usize = 3;
const LABEL_LINE: f64 = 15.0;

/// A category: a bar of its own, or a group of bars.
struct Category<'a> {
    label: &'a str,
    bars: Vec<&'a Bar>,
}

/// How the category labels are set.
enum Labels {
    /// Level, each wrapped to its slot.
    Level(Vec<Vec<String>>),
    /// Turned by `angle` degrees (reading upwards), every `every`-th one,
    /// each cut to [`MAX_TURNED`] (whether it was cut).
    Turned { angle: f64, every: usize, texts: Vec<(String, bool)> },
}

/// How the value labels above the bars are set.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Values {
    Level,
    Upright,
    Hidden,
}

/// The chart's geometry for a given left margin.
struct Plan {
    left: f64,
    right: f64,
    top: f64,
    pw: f64,
    slot: f64,
    pitch: f64,
    bar_w: f64,
    y: YAxis,
    labels: Labels,
    values: Values,
    height: f64,
    /// The left margin this plan turned out to need.
    needs_left: f64,
}

impl BarChart {
    fn grouped(&self) -> bool {
        self.bars.iter().any(|b| !b.group.is_empty())
    }

    /// The categories, left to right.
    fn categories(&self) -> Vec<Category<'_>> {
        let mut out: Vec<Category<'_>> = Vec::new();
        for b in &self.bars {
            if b.group.is_empty() {
                out.push(Category { label: &b.label, bars: vec![b] });
            } else if let Some(c) = out.iter_mut().find(|c| c.label == b.group && c.bars[0].group == b.group) {
                c.bars.push(b);
            } else {
                out.push(Category { label: &b.group, bars: vec![b] });
            }
        }
        out
    }

    fn legend(&self) -> Legend {
        let mut entries: Vec<(Mark, String)> = Vec::new();
        if self.grouped() {
            for b in &self.bars {
                let e = (Mark::Swatch(colour(b.colour)), b.label.clone());
                if !entries.iter().any(|(m, l)| *l == e.1 && matches!(m, Mark::Swatch(c) if *c == colour(b.colour))) {
                    entries.push(e);
                }
            }
        }
        entries.extend(self.references.iter().map(|r| (Mark::Dashed, r.label.clone())));
        let text_w = Legend::text_width_for(entries.iter().map(|(_, l)| l.as_str()));
        Legend::new(entries, text_w)
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
            let max_chars = (MAX_TURNED / (0.6 * TICK_FONT)) as usize;
            Labels::Turned { angle, every, texts: cats.iter().map(|c| truncate(c.label, max_chars)).collect() }
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

    /// The SVG document.
    pub fn svg(&self) -> String {
        let cats = self.categories();
        let title = Title::new(&self.title);
        let legend = self.legend();
        let mut p = self.plan(&cats, &title, &legend, MIN_LEFT);
        for _ in 0..4 {
            if p.needs_left <= p.left + 0.5 {
                break;
            }
            p = self.plan(&cats, &title, &legend, p.needs_left.ceil());
        }
        let Plan { left, right, top, pw, slot, pitch, bar_w, .. } = p;
        let ph = PLOT_HEIGHT;
        let y_top = p.y.top();
        // A value past the drawable range (or not a number) stands at the
        // frame's edge; its label and tooltip keep the value.
        let py = |y: f64| top + ph - if y.is_nan() { 0.0 } else { y.clamp(0.0, y_top) } / y_top * ph;
        let mut out = svg_open(p.height.ceil());
        title.draw(&mut out, (left, left + pw), 0.0);
        p.y.draw(&mut out, (left, left + pw), py);
        // Reference lines first: bars and their value labels (each on a
        // white halo) are drawn over them, so no line runs through a label.
        for r in &self.references {
            let y = py(r.value);
            let _ = writeln!(
                out,
                r##"<line x1="{left:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#555" stroke-dasharray="6 4"/>"##,
                left + pw
            );
        }
        for (ci, cat) in cats.iter().enumerate() {
            let cx = left + slot * (ci as f64 + 0.5);
            let start = cx - pitch * cat.bars.len() as f64 / 2.0;
            for (k, b) in cat.bars.iter().enumerate() {
                let bx = start + pitch * (k as f64 + 0.5);
                let x = bx - bar_w / 2.0;
                let c = colour(b.colour);
                let name = if b.group.is_empty() { b.label.clone() } else { format!("{} — {}", b.group, b.label) };
                let error = if b.error > 0.0 { format!(" ± {}", value_label(b.error)) } else { String::new() };
                let _ = writeln!(
                    out,
                    r#"<rect x="{x:.1}" y="{:.1}" width="{bar_w:.1}" height="{:.1}" fill="{c}" fill-opacity="0.85"><title>{}: {}{}</title></rect>"#,
                    py(b.value),
                    py(0.0) - py(b.value),
                    escape(&name),
                    value_label(b.value),
                    error
                );
                if b.error > 0.0 {
                    let (lo, hi) = (py(b.value - b.error), py(b.value + b.error));
                    let half = (bar_w / 2.0).min(6.0);
                    let _ = writeln!(
                        out,
                        r##"<path d="M{:.1},{hi:.1}H{:.1}M{bx:.1},{hi:.1}V{lo:.1}M{:.1},{lo:.1}H{:.1}" stroke="#222" stroke-width="1.3" fill="none"/>"##,
                        bx - half,
                        bx + half,
                        bx - half,
                        bx + half
                    );
                }
                let above = py(b.value + b.error.max(0.0)) - 4.0;
                match p.values {
                    Values::Level => {
                        let _ = writeln!(
                            out,
                            r##"<text x="{bx:.1}" y="{above:.1}" font-size="{VALUE_FONT}" text-anchor="middle" fill="#333" stroke="white" stroke-width="3" paint-order="stroke">{}</text>"##,
                            value_label(b.value)
                        );
                    }
                    Values::Upright => {
                        let tx = bx + VALUE_FONT * 0.35;
                        let _ = writeln!(
                            out,
                            r##"<text x="{tx:.1}" y="{above:.1}" font-size="{VALUE_FONT}" fill="#333" stroke="white" stroke-width="3" paint-order="stroke" transform="rotate(-90 {tx:.1} {above:.1})">{}</text>"##,
                            value_label(b.value)
                        );
                    }
                    Values::Hidden => {}
                }
            }
            match &p.labels {
                Labels::Level(lines) => {
                    for (j, line) in lines[ci].iter().enumerate() {
                        let _ = writeln!(
                            out,
                            r#"<text x="{cx:.1}" y="{:.1}" font-size="{TICK_FONT}" text-anchor="middle">{}</text>"#,
                            top + ph + 18.0 + LABEL_LINE * j as f64,
                            escape(line)
                        );
                    }
                }
                Labels::Turned { angle, every, texts } => {
                    if ci % every == 0 {
                        let (text, cut) = &texts[ci];
                        let tip = if *cut { format!("<title>{}</title>", escape(cat.label)) } else { String::new() };
                        // The text's middle, not its baseline, on the
                        // category's centre.
                        let tx = cx + angle.to_radians().sin() * TICK_FONT * 0.35;
                        let ty = top + ph + 14.0;
                        let _ = writeln!(
                            out,
                            r#"<text x="{tx:.1}" y="{ty:.1}" font-size="{TICK_FONT}" text-anchor="end" transform="rotate(-{angle} {tx:.1} {ty:.1})">{tip}{}</text>"#,
                            escape(text)
                        );
                    }
                }
            }
        }
        let _ = writeln!(
            out,
            r##"<rect x="{left:.1}" y="{top:.1}" width="{pw:.1}" height="{ph}" fill="none" stroke="#444"/>"##
        );
        legend.draw(&mut out, WIDTH - right + 16.0, top + 4.0);
        out.push_str("</svg>\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plot::tests::{assert_no_text_overlaps, text_boxes};

    fn bar(label: &str, value: f64, colour: usize) -> Bar {
        Bar { label: label.into(), value, error: 0.0, colour, group: String::new() }
    }

    #[test]
    fn bars_error_bars_and_references_are_drawn() {
        let chart = BarChart {
            title: "IPC <cost>".into(),
            y_label: "cycles".into(),
            bars: vec![Bar { error: 10.0, ..bar("none", 200.0, 0) }, bar("bkl", 230.0, 1)],
            references: vec![Reference { label: "xchg".into(), value: 15.0 }],
        };
        let svg = chart.svg();
        assert_eq!(svg.matches("<rect x=").count(), 3, "two bars and the frame");
        assert_eq!(svg.matches("<path d=").count(), 1, "one error bar");
        assert!(svg.contains("stroke-dasharray"));
        assert!(svg.contains("IPC &lt;cost&gt;"));
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
        assert_no_text_overlaps(&svg);
    }

    /// The `(x, y)` of each category label turned by `rotate(-a …)`, with
    /// its angle and estimated width.
    fn turned(svg: &str) -> Vec<(f64, f64, f64, f64)> {
        let mut out = Vec::new();
        for piece in svg.split("<text ").skip(1) {
            let tag = &piece[..piece.find('>').unwrap()];
            let Some(r) = tag.find("rotate(-").filter(|_| tag.contains("text-anchor=\"end\"")) else { continue };
            let nums: Vec<f64> =
                tag[r + 8..].split(')').next().unwrap().split(' ').map(|v| v.parse().unwrap()).collect();
            let body = &piece[piece.find('>').unwrap() + 1..piece.find("</text>").unwrap()];
            let body = body.rsplit("</title>").next().unwrap();
            out.push((nums[1], nums[2], nums[0], text_width(body, TICK_FONT)));
        }
        out
    }

    #[test]
    fn crowded_category_labels_turn_and_keep_clear_of_each_other() {
        // The lock chart's own labels, every lock `granule locks` knows.
        let locks = crate::cmd::locks::ALL_LOCKS;
        let chart = BarChart {
            title: "Uncontended acquire + release".into(),
            y_label: "cycles per acquire + release".into(),
            bars: locks.iter().enumerate().map(|(i, l)| bar(l, 10.0 + 1000.0 * i as f64, i)).collect(),
            references: vec![Reference { label: "lock cmpxchg16b (14.0)".into(), value: 14.0 }],
        };
        let svg = chart.svg();
        assert_no_text_overlaps(&svg);
        let labels = turned(&svg);
        assert_eq!(labels.len(), locks.len(), "every lock's label is turned");
        for w in labels.windows(2) {
            let (a, b) = (w[0], w[1]);
            // Parallel lines: their distance apart across the text.
            let apart = (b.0 - a.0) * a.2.to_radians().sin();
            assert!(apart >= TICK_FONT * 1.2, "turned labels {apart:.1} apart");
        }
        for (x, _, angle, w) in turned(&svg) {
            assert!(x - angle.to_radians().cos() * w >= 0.0, "a turned label leaves the figure on the left");
        }
        // The figure is tall enough for the longest turned label.
        let height: f64 = svg.split("height=\"").nth(1).unwrap().split('"').next().unwrap().parse().unwrap();
        for (_, y, angle, w) in turned(&svg) {
            assert!(y + angle.to_radians().sin() * w <= height, "a turned label leaves the figure at the bottom");
        }
    }

    #[test]
    fn grouped_bars_have_a_legend_and_no_label_overlaps() {
        let regimes = ["none", "bkl", "bkl-ticket", "bkl-mcs", "fine", "rtm", "lockfree"];
        let ops = [
            "create",
            "destroy (requester)",
            "destroy (dispatcher)",
            "suspend (requester)",
            "suspend (dispatcher)",
            "resume, not in the run queue (requester)",
            "resume, not in the run queue (dispatcher)",
            "resume, still in the run queue",
            "signal (requester)",
            "signal (dispatcher)",
        ];
        let mut bars = Vec::new();
        for (i, op) in ops.iter().enumerate() {
            for r in regimes {
                bars.push(Bar { group: op.to_string(), ..bar(r, 5.0 + 97.0 * i as f64, crate::regimes::colour(r)) });
            }
        }
        let chart = BarChart {
            title: "Thread operations (Synthesis Table 3), per regime".into(),
            y_label: "cycles per operation".into(),
            bars,
            references: Vec::new(),
        };
        let svg = chart.svg();
        assert_no_text_overlaps(&svg);
        for r in regimes {
            assert_eq!(svg.matches(&format!(">{r}</text>")).count(), 1, "{r} once, in the legend");
        }
        assert_eq!(turned(&svg).len(), ops.len(), "every group labelled, turned");
        // Few wide bars: level value labels above them, clear of each other.
        let few = BarChart {
            bars: vec![bar("none", 1.0e6, 0), bar("bkl", 2.0e6, 1), bar("fine", 3.0e6, 2)],
            ..chart.clone()
        };
        let svg = few.svg();
        assert_no_text_overlaps(&svg);
        assert!(text_boxes(&svg).iter().any(|t| t.4 == "3.00M"), "value labels shown");
        // Many narrower bars: the values stand upright above them.
        let many = BarChart {
            bars: (0..40).map(|i| bar(&format!("b{i}"), 1.0e6 + 1.0e4 * i as f64, i)).collect(),
            ..chart.clone()
        };
        let svg = many.svg();
        assert_no_text_overlaps(&svg);
        let upright = svg.matches("transform=\"rotate(-90").count();
        assert!((41..=42).contains(&upright), "40 upright values and the y axis label's one or two lines: {upright}");
    }

    #[test]
    fn the_same_regime_has_the_same_colour_in_every_figure() {
        use crate::output::record;
        use crate::regimes::colour as regime_colour;
        use crate::suite::figures::{ipc_cost, kv_throughput, scaling};
        use crate::suite::records::Records;
        use serde_json::{Map, Value};

        let rec = |kind: &str, experiment: &str, fields: &[(&str, Value)]| -> Map<String, Value> {
            let mut m = record(kind);
            m.insert("experiment".into(), experiment.into());
            for (k, v) in fields {
                m.insert((*k).into(), v.clone());
            }
            m
        };
        let mut all = vec![record("machine")];
        for (regime, cycles) in [("none", 200.0), ("bkl", 230.0), ("lockfree", 260.0)] {
            all.push(rec(
                "ipc",
                "ipc",
                &[
                    ("regime", regime.into()),
                    ("round_trip_cycles_mean", cycles.into()),
                    ("round_trip_cycles_std", 3.0.into()),
                    ("runs", 3.into()),
                ],
            ));
            for cores in [1, 2] {
                all.push(rec(
                    "scale",
                    "scale",
                    &[
                        ("regime", regime.into()),
                        ("cores", cores.into()),
                        ("delay_cycles", 1000.into()),
                        ("round_trips_per_sec", (1.0e6 * cores as f64).into()),
                    ],
                ));
            }
            all.push(rec(
                "kv",
                "kv",
                &[
                    ("regime", regime.into()),
                    ("cores", 2.into()),
                    ("workload", "a".into()),
                    ("run", 1.into()),
                    ("ops_per_sec", 5.0e4.into()),
                ],
            ));
        }
        let rs = Records::new(&all);
        let svgs = [ipc_cost(&rs).unwrap().svg(), scaling(&rs, &[]).unwrap().svg(), kv_throughput(&rs).unwrap().svg()];
        // The colour drawn for a regime: the fill of its bar, or of its
        // legend dot.
        let drawn = |svg: &str, regime: &str| -> Option<String> {
            let at = svg
                .find(&format!("<title>{regime}: "))
                .or_else(|| svg.find(&format!(">{regime} (measured)</text>")))?;
            let fill = svg[..at].rfind("fill=\"#")?;
            Some(svg[fill + 6..fill + 13].to_string())
        };
        for regime in ["none", "bkl", "lockfree"] {
            let want = crate::plot::colour(regime_colour(regime));
            for (i, svg) in svgs.iter().enumerate() {
                assert_eq!(drawn(svg, regime).as_deref(), Some(want), "{regime} in figure {i}");
            }
        }
        assert_ne!(drawn(&svgs[0], "none"), drawn(&svgs[0], "bkl"));
    }
}
