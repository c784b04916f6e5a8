//! The plots' tests, and helpers the bar charts' tests share: the boxes of
//! an SVG's level texts, and a check that none overlaps another.

use super::chart::dodged;
use super::palette::other_palette;
use super::text::{text_width, text_width_in, wrap};
use super::ticks::{nice_step, tick_label};
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
fn text_is_measured_in_the_figures_font() {
    // DejaVu Sans: "W" is about three times as wide as "i", and width
    // grows with the size.
    let (i, w) = (text_width("iiii", 12.0), text_width("WWWW", 12.0));
    assert!(w > 2.5 * i && i > 0.0, "{i} {w}");
    assert!(text_width("abc", 24.0) > 1.9 * text_width("abc", 12.0));
    assert!(text_width_in("Title", 15.0, true) > text_width("Title", 15.0), "bold is wider");
    assert_eq!(text_width("", 12.0), 0.0);
    // About 0.6 of the size per character of ordinary text.
    let per_char = text_width("throughput per core", 10.0) / 19.0;
    assert!((4.5..7.0).contains(&per_char), "{per_char}");
}

#[test]
fn text_wraps_and_is_cut_with_an_ellipsis() {
    let w = wrap("one two three four", 10.0, 50.0, 3);
    assert_eq!(w.lines, ["one two", "three", "four"]);
    assert!(!w.cut && !w.broke);
    let w = wrap("one two three four five six", 10.0, 50.0, 2);
    assert_eq!(w.lines.len(), 2);
    assert!(w.cut && w.lines[1].ends_with('…'), "{w:?}");
    assert!(w.lines.iter().all(|l| text_width(l, 10.0) <= 50.0), "{w:?}");
    assert!(wrap("abcdefghijklmnop", 10.0, 60.0, 3).broke);
    assert_eq!(fit("abc", 10.0, 100.0), ("abc".into(), false));
    assert_eq!(fit("abcdef", 10.0, text_width("abc…", 10.0)), ("abc…".into(), true));
}

/// `s` with SVG's escapes undone.
fn unescape(s: &str) -> String {
    s.replace("&lt;", "<").replace("&gt;", ">").replace("&quot;", "\"").replace("&apos;", "'").replace("&amp;", "&")
}

/// `svg` without its turned layers (`<g transform="rotate(…)">…</g>`).
fn without_turned(svg: &str) -> String {
    let mut out = String::new();
    let mut rest = svg;
    while let Some(i) = rest.find("<g transform=\"rotate(") {
        out.push_str(&rest[..i]);
        rest = rest[i..].split_once("</g>").map_or("", |(_, after)| after);
    }
    out.push_str(rest);
    out
}

/// The value of attribute `name` in the tag `tag`.
pub(crate) fn attr<'t>(tag: &'t str, name: &str) -> Option<&'t str> {
    let i = tag.find(&format!(" {name}=\""))? + name.len() + 3;
    tag[i..].split('"').next()
}

/// The texts of `svg` as plotters writes them: each `<text …>` tag and its
/// content (unescaped, trimmed).
pub(crate) fn texts(svg: &str) -> Vec<(String, String)> {
    svg.split("<text ")
        .skip(1)
        .filter_map(|piece| {
            let (tag, rest) = piece.split_once('>')?;
            let (body, _) = rest.split_once("</text>")?;
            Some((format!(" {tag}"), unescape(body.trim())))
        })
        .collect()
}

/// `(x, y, width, height)` of every level `<text>` of `svg` (not turned by
/// plotters or in a turned layer), measured like the layout measures it,
/// with its content.
pub(crate) fn text_boxes(svg: &str) -> Vec<(f64, f64, f64, f64, String)> {
    let num = |tag: &str, name: &str| attr(tag, name).and_then(|v| v.parse::<f64>().ok()).unwrap();
    let mut out = Vec::new();
    for (tag, body) in texts(&without_turned(svg)) {
        if tag.contains("rotate(") {
            continue;
        }
        let size = num(&tag, "font-size");
        let (x, y) = (num(&tag, "x"), num(&tag, "y"));
        // Plotters shifts the baseline by `dy`: 0.76em below a top
        // anchor, half an x-height (about 0.27em) below or above a middle
        // or bottom one.
        let baseline = y + size
            * match attr(&tag, "dy") {
                Some("0.76em") => 0.76,
                Some("0.5ex") => 0.27,
                Some("-0.5ex") => -0.27,
                _ => 0.0,
            };
        let w = text_width_in(&body, size, tag.contains("font-weight=\"bold\""));
        let x0 = match attr(&tag, "text-anchor") {
            Some("middle") => x - w / 2.0,
            Some("end") => x - w,
            _ => x,
        };
        out.push((x0, baseline - size * 0.8, w, size, body));
    }
    out
}

/// Panics if two level texts of `svg` overlap or one leaves the figure.
pub(crate) fn assert_no_text_overlaps(svg: &str) {
    let boxes = text_boxes(svg);
    assert!(!boxes.is_empty() || !svg.contains("<text"), "texts found but not read");
    for (i, a) in boxes.iter().enumerate() {
        assert!(a.0 >= -0.5 && a.0 + a.2 <= WIDTH + 0.5, "{:?} leaves the figure", a.4);
        for b in &boxes[i + 1..] {
            let apart = a.0 + a.2 <= b.0 || b.0 + b.2 <= a.0 || a.1 + a.3 <= b.1 || b.1 + b.3 <= a.1;
            assert!(apart, "{:?} overlaps {:?}", a.4, b.4);
        }
    }
}

/// Two texts drawn by plotters at one place.
fn two_texts(second_at: (f64, f64)) -> String {
    let mut c = Canvas::new(WIDTH, 100.0);
    c.layer(|a| {
        Type::new(12.0).draw(a, "first label", (100.0, 50.0), plotters::style::text_anchor::HPos::Left)?;
        Type::new(12.0).draw(a, "second label", second_at, plotters::style::text_anchor::HPos::Center)
    });
    c.finish()
}

#[test]
fn the_overlap_check_passes_texts_apart() {
    let svg = two_texts((300.0, 50.0));
    assert_eq!(text_boxes(&svg).len(), 2);
    assert_no_text_overlaps(&svg);
}

#[test]
#[should_panic(expected = "overlaps")]
fn the_overlap_check_catches_texts_that_overlap() {
    assert_no_text_overlaps(&two_texts((150.0, 55.0)));
}

#[test]
#[should_panic(expected = "leaves the figure")]
fn the_overlap_check_catches_texts_leaving_the_figure() {
    assert_no_text_overlaps(&two_texts((WIDTH, 20.0)));
}

/// The plot areas' frames in `svg`: `(x, y, width, height)`.
pub(crate) fn frames(svg: &str) -> Vec<(f64, f64, f64, f64)> {
    svg.split("<rect ")
        .skip(1)
        .map(|piece| format!(" {}", piece.split_once("/>").map_or(piece, |p| p.0)))
        .filter(|tag| attr(tag, "fill") == Some("none") && attr(tag, "stroke") == Some("#444444"))
        .map(|tag| {
            let n = |k: &str| attr(&tag, k).and_then(|v| v.parse().ok()).unwrap_or(f64::NAN);
            (n("x"), n("y"), n("width"), n("height"))
        })
        .collect()
}

fn series(label: &str, points: Vec<(f64, f64)>, line: bool, colour: usize) -> Series {
    Series { style: 0, label: label.into(), points, line, colour }
}

#[test]
fn svg_has_every_series_and_escapes_text() {
    let chart = Chart {
        title: "a < b & c".into(),
        x_label: "cores".into(),
        y_label: "round trips/s".into(),
        series: vec![
            series("measured", vec![(1.0, 10.0), (2.0, 15.0)], false, 0),
            series("model", vec![(1.0, 10.0), (2.0, 16.0), (3.0, f64::NAN)], true, 0),
        ],
    };
    let svg = Figure { charts: vec![chart.clone(), chart] }.svg();
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert_eq!(svg.matches("<circle").count(), 2 * 2 + 1, "two dots per chart, one legend dot under the grid");
    let c = colour(0).to_uppercase();
    let lines = svg.matches("<polyline").count();
    assert_eq!(lines, 2 + 1, "one model line per chart, one legend line under the grid");
    assert_eq!(svg.matches(&format!("stroke=\"{c}\" stroke-width=\"2\" points=")).count(), 3);
    assert_eq!(frames(&svg).len(), 2, "a frame per chart");
    assert!(svg.contains("a &lt; b &amp; c") && !svg.contains("a < b"));
    assert!(!svg.contains("NaN"));
    assert_no_text_overlaps(&svg);
}

#[test]
fn dots_at_one_place_are_set_side_by_side_and_log_axes_keep_small_values_apart() {
    let chart = Chart {
        title: "t".into(),
        x_label: "cores".into(),
        y_label: "y".into(),
        series: vec![
            series("a", vec![(1.0, 100.0), (2.0, 50.0)], false, 0),
            series("b", vec![(1.0, 100.0), (2.0, 50.0)], false, 1),
        ],
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
    let labels: Vec<String> = texts(&svg).into_iter().map(|t| t.1).collect();
    for tick in ["10", "20", "50", "100"] {
        assert!(labels.iter().any(|l| l == tick), "log tick {tick}: {labels:?}");
    }
    // On the log axis 10 and 20 stand as far apart as 50 and 100.
    let frame = Frame::new((0.0, 0.0), (100.0, 301.0), 1.0, Vec::new(), &log);
    let (a, b) = (frame.py(10.0) - frame.py(20.0), frame.py(50.0) - frame.py(100.0));
    assert!((a - b).abs() <= 1.0 && a > 10.0, "{a} {b}");
    assert_eq!(frame.py(0.0), frame.py(1.0), "a value the log axis cannot show sits at its bottom");
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
    let frame = frames(&svg)[0];
    let right_edge = frame.0 + frame.2;
    for (x0, _, _, _, text) in text_boxes(&svg) {
        if text.starts_with("ticket lock") {
            assert!(x0 > right_edge, "legend text {text:?} inside the plot");
        }
    }
    assert!(!svg.contains("font-size=\"10\""), "no font below 11 units");
}

#[test]
fn every_style_has_its_dashes_and_marks() {
    let chart = Chart {
        title: "styles".into(),
        x_label: "cores".into(),
        y_label: "y".into(),
        series: (0..4)
            .flat_map(|style| {
                [
                    Series { style, ..series(&format!("model {style}"), vec![(1.0, 1.0), (8.0, 8.0)], true, 1) },
                    Series { style, ..series(&format!("measured {style}"), vec![(2.0, 4.0)], false, 1) },
                ]
            })
            .collect(),
    };
    let svg = Figure { charts: vec![chart] }.svg();
    // Solid lines are one piece; dashed ones many.
    let c = colour(1).to_uppercase();
    let pieces = svg.matches(&format!("stroke=\"{c}\" stroke-width=\"2\" points=")).count();
    assert!(pieces > 20, "dashed lines are drawn in pieces: {pieces}");
    assert_eq!(svg.matches("<circle").count(), 2, "style 0: a dot in the plot and in the legend");
    assert_eq!(svg.matches("<polygon").count(), 2, "style 2: a triangle in the plot and in the legend");
    assert_no_text_overlaps(&svg);
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
