//! The page's first figure and table: the big-lock frontier and the
//! fine-versus-bkl crossover ([`super::frontier`]), measured where this
//! machine has the cores and predicted beyond as a range (the band of
//! [`super::band`]), beside the seeds' points.

use std::fmt::Write as _;

use super::figures::{Fig, Plot};
use super::frontier::{Frontier, FrontierRow, MAX_CORES, SEED_POINTS, THRESHOLDS};
use super::html::esc;
use super::records::{Records, Source};
use super::units::{count, line_list, percent, times};
use crate::plot::{Chart, Figure, Series};
use crate::regimes::colour;

/// Palette entries (not a regime's) of the seeds' points, the 50 % lines
/// and the simulated seeds' machine.
const SEED_COLOUR: usize = 6;
const HALF_COLOUR: usize = 3;
const SIM_COLOUR: usize = 7;

/// The legend of the seeds' points (a reference series: a comparison of
/// machines draws it once).
pub const SEED_SERIES: &str = "measured by Elphinstone et al. (2016) on their two-socket Xeon";

/// Cores as a table cell or label: `14`, `≥ 2`, `≥ 4096`.
pub fn cores_text(n: usize, at_least: bool) -> String {
    if at_least || n >= MAX_CORES {
        format!("≥ {}", count(n as u64))
    } else {
        count(n as u64)
    }
}

/// Cores in a sentence: `1 core`, `12 cores`, `at least 56 cores`.
pub fn cores_phrase(n: usize, at_least: bool) -> String {
    let n_text = count(n as u64);
    let unit = if n == 1 { "core" } else { "cores" };
    if at_least || n >= MAX_CORES {
        format!("at least {n_text} {unit}")
    } else {
        format!("{n_text} {unit}")
    }
}

/// A predicted range of cores as text: `3–8`, `4`, `≥ 4,096`.
pub fn cores_range(r: (usize, usize)) -> String {
    let (lo, hi) = (r.0.min(r.1), r.0.max(r.1));
    if lo == hi {
        cores_text(lo, false)
    } else if hi >= MAX_CORES {
        format!("≥ {}", count(lo as u64))
    } else {
        format!("{}–{}", count(lo as u64), count(hi as u64))
    }
}

/// A predicted range of cores in a sentence: `3 to 8 cores`, `4 cores`,
/// `at least 4,096 cores`.
pub fn cores_range_phrase(r: (usize, usize)) -> String {
    let (lo, hi) = (r.0.min(r.1), r.0.max(r.1));
    if lo == hi {
        cores_phrase(lo, false)
    } else if hi >= MAX_CORES {
        format!("{} or more cores", count(lo as u64))
    } else {
        format!("{} to {} cores", count(lo as u64), count(hi as u64))
    }
}

/// A crossover range (per end of the band: the first core count at which
/// fine-grained locking is ahead, `None` for none up to [`MAX_CORES`]).
pub fn crossover_text(r: (Option<usize>, Option<usize>)) -> String {
    let beyond = format!("> {}", count(MAX_CORES as u64));
    match r {
        (Some(a), Some(b)) => cores_range((a, b)),
        (Some(a), None) | (None, Some(a)) => format!("≥ {} (or never)", count(a as u64)),
        (None, None) => beyond,
    }
}

/// The sources every frontier number rests on, in line order: the band's
/// service times, the throughputs of the `scale` records used, and those
/// of the simulations.
fn sources(rs: &Records, f: &Frontier) -> Vec<Source> {
    let mut lines: Vec<usize> = f.rows.iter().flat_map(|r| r.lines.iter().copied()).collect();
    lines.sort_unstable();
    lines.dedup();
    let used = |line: usize| lines.binary_search(&line).is_ok();
    let mut out = Vec::new();
    for b in rs.service_band.iter().filter(|b| used(b.line)) {
        out.extend([b.source("service_lo", b.service_lo), b.source("service_hi", b.service_hi)]);
    }
    out.extend(
        rs.scale.iter().filter(|r| used(r.line)).map(|r| r.source("round_trips_per_sec", r.round_trips_per_sec)),
    );
    out.extend(rs.model_simulate.iter().filter(|r| used(r.line)).map(|r| r.source("throughput", r.throughput)));
    // Stable: each record's fields stay in order.
    out.sort_by_key(|s| s.line);
    out
}

/// The frontier figure: cores against delay (the predicted band per
/// threshold, its two ends as lines; measured dots; the simulated seeds'
/// machine; the seeds' points), and the crossover below it.
pub fn figure(rs: &Records, f: &Frontier) -> Option<Fig> {
    if f.rows.iter().all(|r| r.measured.is_none() && r.predicted.iter().all(Option::is_none)) {
        return None;
    }
    let pts = |g: &dyn Fn(&FrontierRow) -> Option<usize>| -> Vec<(f64, f64)> {
        f.rows.iter().filter_map(|r| Some((r.delay as f64, g(r)? as f64))).collect()
    };
    let mut series = Vec::new();
    for (i, t) in THRESHOLDS.iter().enumerate() {
        let colour = if i == 0 { colour("bkl") } else { HALF_COLOUR };
        for (end, style, what) in [(1, 0, "shortest"), (0, 2, "longest")] {
            let points = pts(&|r| r.predicted[i].map(|p| if end == 0 { p.0 } else { p.1 }));
            if !points.is_empty() {
                series.push(Series {
                    style,
                    label: format!("≥ {} of ideal, model with the {what} hold measured", percent(*t)),
                    points,
                    line: true,
                    colour,
                });
            }
        }
    }
    for (end, what) in [(1, "shortest"), (0, "longest")] {
        let simulated = pts(&|r| r.simulated.map(|s| if end == 0 { s.0 .0 } else { s.1 .0 }));
        if !simulated.is_empty() {
            series.push(Series {
                label: format!("≥ 90 % of ideal, simulated two-socket x86, {what} hold"),
                points: simulated,
                line: true,
                colour: SIM_COLOUR,
                style: if end == 0 { 3 } else { 1 },
            });
        }
    }
    let measured = pts(&|r| r.measured.as_ref().map(|m| m.cores[0]));
    if !measured.is_empty() {
        series.push(Series {
            style: 0,
            label: "≥ 90 % of ideal, measured here".into(),
            points: measured,
            line: false,
            colour: colour("bkl"),
        });
    }
    series.push(Series {
        style: 1,
        label: SEED_SERIES.into(),
        points: SEED_POINTS.iter().map(|(d, c, _)| (*d as f64, *c as f64)).collect(),
        line: false,
        colour: SEED_COLOUR,
    });
    let mut charts = vec![Chart {
        title: "Most cores at which one big lock keeps its share of perfect scaling".into(),
        x_label: "mean delay between system calls (cycles per round trip)".into(),
        y_label: format!("cores ({})", crate::plot::LOG_SCALE),
        series,
    }];
    let mut cross = Vec::new();
    for (end, style, what) in [(1, 0, "shortest"), (0, 2, "longest")] {
        let points = pts(&|r| r.crossover.and_then(|c| if end == 0 { c.0 } else { c.1 }));
        if !points.is_empty() {
            cross.push(Series {
                style,
                label: format!("fine overtakes bkl, model with the {what} hold measured"),
                points,
                line: true,
                colour: colour("fine"),
            });
        }
    }
    if !cross.is_empty() {
        charts.push(Chart {
            title: "Fewest cores at which fine-grained locking overtakes the big lock".into(),
            x_label: "mean delay between system calls (cycles per round trip)".into(),
            y_label: format!("cores ({})", crate::plot::LOG_SCALE),
            series: cross,
        });
    }
    let band = f.band.as_ref();
    Some(Fig {
        id: "fig-frontier",
        title: "How coarse can locking be here? The big-lock frontier".into(),
        caption: format!(
            "Top: for each mean delay between system calls, the most cores at which one big lock still delivers \
             90 % (and 50 %) of perfect scaling of its own one-core throughput. The prediction is a band, drawn \
             as its two ends: the machine-repairman model with the shortest and with the longest service time \
             measured on this machine ({}), as Elphinstone et al. (2016) drew theirs (their Figure 4b), scanned up \
             to {MAX_CORES} cores. Dots marked measured here come from the scale records (medians) where this \
             machine has the cores; a dot at the most cores measured means the machine ran out of cores first. \
             The dotted and dashed grey lines are the discrete-event simulator on {} with the same hold times and its cache-line hand-off latencies; the grey squares \
             are that paper's own measurements on it. Bottom: the first core count at which fine-grained locking, \
             dearer per call but sharing no lock, overtakes the big lock, from the measured one-core costs and the \
             same band.",
            band.map_or("no band: the hold times were not measured".to_string(), |b| format!(
                "{:.0} and {:.0} cycles per lock acquisition, on {} and {}",
                b.lo.0,
                b.hi.0,
                cores_phrase(b.lo.1, false),
                cores_phrase(b.hi.1, false)
            )),
            super::cite::SEEDS_MACHINE,
        ),
        plot: Plot::Lines(Figure { charts }),
        sources: sources(rs, f),
    })
}

/// The frontier table.
pub fn table(f: &Frontier) -> String {
    if f.rows.is_empty() {
        return "<p class=\"none\">No records.</p>\n".into();
    }
    let mut b = String::from(
        "<table>\n<tr><th>delay (cycles)</th><th>measured: cores at ≥ 90 %</th><th>predicted: cores at ≥ 90 %</th>\
         <th>simulated two-socket Xeon: cores at ≥ 90 %</th><th>predicted: fine overtakes bkl from (cores)</th>\
         <th>fine ÷ bkl, measured</th><th>model against this machine's measurements</th><th>lines</th></tr>\n",
    );
    // The delays measured here, and the two the seeds quote; every other
    // delay of the sweep is in the figure.
    for r in f.rows.iter().filter(|r| r.measured.is_some() || [4000, 16000].contains(&r.delay)) {
        let measured = r.measured.as_ref().map_or("—".to_string(), |m| {
            format!(
                "{} (E = {} at {} cores)",
                cores_text(m.cores[0], m.at_least[0]),
                percent(m.efficiency_at_most),
                m.most_cores
            )
        });
        let predicted = |i: usize| r.predicted[i].map_or("—".to_string(), cores_range);
        let simulated = r.simulated.map_or("—".to_string(), |((lo, _), (hi, at_least))| {
            if at_least {
                format!("≥ {}", count(lo.min(hi) as u64))
            } else {
                cores_range((lo, hi))
            }
        });
        let cross = r.crossover.map_or("—".to_string(), crossover_text);
        let at = r.fine_over_bkl_measured.map_or("—".to_string(), |(c, x)| format!("{} at {c} cores", times(x)));
        let against = if r.checks.is_empty() {
            "—".to_string()
        } else if r.checks.iter().all(|c| c.agrees) {
            format!(
                "agrees on {}",
                r.checks.iter().map(|c| c.cores).max().map_or(String::new(), |n| cores_phrase(n, false))
            )
        } else {
            r.checks
                .iter()
                .filter(|c| !c.agrees)
                .map(|c| super::verdict::disagreement_text(r.delay, c))
                .collect::<Vec<_>>()
                .join("; ")
        };
        let _ = writeln!(
            b,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td class=\"line\">{}</td></tr>",
            count(r.delay),
            esc(&measured),
            esc(&predicted(0)),
            esc(&simulated),
            esc(&cross),
            esc(&at),
            esc(&against),
            line_list(&r.lines)
        );
    }
    b.push_str("</table>\n");
    b
}
