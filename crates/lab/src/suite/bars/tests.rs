//! The bar charts' tests.

use super::*;
use crate::plot::tests::{assert_no_text_overlaps, attr, frames, text_boxes, texts};
use crate::plot::{text_width, TICK_FONT};

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
    assert_eq!(svg.matches("opacity=\"0.85\"").count(), 2, "two bars");
    assert_eq!(frames(&svg).len(), 1, "one frame");
    assert_eq!(svg.matches("stroke=\"#222222\"").count(), 3, "one error bar: its stem and two caps");
    assert!(svg.matches("stroke=\"#555555\"").count() > 20, "the reference line, dashed, and its legend mark");
    assert!(svg.contains("<title>none: 200 ± 10.0</title>") && svg.contains("<title>bkl: 230</title>"));
    assert!(svg.contains("IPC &lt;cost&gt;"));
    assert!(svg.starts_with("<svg") && svg.ends_with("</svg>\n"));
    assert_no_text_overlaps(&svg);
}

/// The `(x, y)` of each category label in a layer turned by
/// `rotate(-a x y)`, with its angle and estimated width.
fn turned(svg: &str) -> Vec<(f64, f64, f64, f64)> {
    let mut out = Vec::new();
    for piece in svg.split("<g transform=\"rotate(-").skip(1) {
        let (head, rest) = piece.split_once(')').unwrap();
        let nums: Vec<f64> = head.split(' ').map(|v| v.parse().unwrap()).collect();
        let group = rest.split("</g>").next().unwrap();
        for (tag, body) in texts(group) {
            assert_eq!(attr(&tag, "text-anchor"), Some("end"), "a turned label ends at its category");
            out.push((nums[1], nums[2], nums[0], text_width(&body, TICK_FONT)));
        }
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
        "suspend, same core",
        "resume, same core",
        "signal, bound receiver (requester)",
        "signal, bound receiver (dispatcher)",
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
        assert_eq!(texts(&svg).iter().filter(|t| t.1 == r).count(), 1, "{r} once, in the legend");
    }
    assert_eq!(turned(&svg).len(), ops.len(), "every group labelled, turned");
    // Few wide bars: level value labels above them, clear of each other.
    let few =
        BarChart { bars: vec![bar("none", 1.0e6, 0), bar("bkl", 2.0e6, 1), bar("fine", 3.0e6, 2)], ..chart.clone() };
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
    let upright = texts(&svg).iter().filter(|t| t.0.contains("rotate(270")).count();
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
    // The colour drawn for a regime: the fill of its bar (after its
    // tooltip), or of its legend dot (before its text).
    let drawn = |svg: &str, regime: &str| -> Option<String> {
        let fill = |tag: &str| attr(tag, "fill").map(str::to_lowercase);
        if let Some(at) = svg.find(&format!("<title>{regime}: ")) {
            let rect = &svg[at + svg[at..].find("<rect ")?..];
            return fill(&rect[..rect.find("/>")?]);
        }
        let label = format!(">\n{regime} (measured)\n</text>");
        let text = svg[..svg.find(&label)?].rfind("<text ")?;
        let dot = svg[..text].rfind("<circle ")?;
        fill(&svg[dot..text])
    };
    for regime in ["none", "bkl", "lockfree"] {
        let want = crate::plot::colour(regime_colour(regime));
        for (i, svg) in svgs.iter().enumerate() {
            assert_eq!(drawn(svg, regime).as_deref(), Some(want), "{regime} in figure {i}");
        }
    }
    assert_ne!(drawn(&svgs[0], "none"), drawn(&svgs[0], "bkl"));
}
