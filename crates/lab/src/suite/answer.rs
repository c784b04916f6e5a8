//! The page's first figure and table: the big-lock frontier and the
//! fine-versus-bkl crossover ([`super::frontier`]), measured where this
//! machine has the cores and predicted beyond, beside the seeds' points.

use std::fmt::Write as _;

use super::figures::{Fig, Plot};
use super::frontier::{Frontier, FrontierRow, MAX_CORES, SEED_POINTS, THRESHOLDS};
use super::html::esc;
use super::records::{Records, Source};
use super::units::{count, line_list, percent, times};
use crate::plot::{Chart, Figure, Series};
use crate::regimes::colour;

/// Palette entries (not a regime's) of the seeds' points and the 50 % line.
const SEED_COLOUR: usize = 6;
const HALF_COLOUR: usize = 3;

/// The legend of the seeds' points (a reference series: a comparison of
/// machines draws it once).
pub const SEED_SERIES: &str = "seed 001, 28-thread Xeon";

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

/// The sources every frontier number rests on: the fit's `s` and `a`, and
/// the throughputs of the `scale` records used.
fn sources(rs: &Records<'_>, f: &Frontier) -> Vec<Source> {
    let mut lines: Vec<usize> = f.rows.iter().flat_map(|r| r.lines.iter().copied()).collect();
    lines.sort_unstable();
    lines.dedup();
    let mut out = Vec::new();
    for r in rs.iter().filter(|r| lines.binary_search(&r.line).is_ok()) {
        for field in ["s", "a", "round_trips_per_sec", "throughput"] {
            out.extend(Source::of(&r, field));
        }
    }
    out
}

/// The frontier figure: cores against delay (the frontier per threshold,
/// predicted as lines, measured as dots, the seeds' points), and the
/// crossover below it.
pub fn figure(rs: &Records<'_>, f: &Frontier) -> Option<Fig> {
    if f.rows.iter().all(|r| r.measured.is_none() && r.predicted.iter().all(Option::is_none)) {
        return None;
    }
    let pts = |g: &dyn Fn(&FrontierRow) -> Option<usize>| -> Vec<(f64, f64)> {
        f.rows.iter().filter_map(|r| Some((r.delay as f64, g(r)? as f64))).collect()
    };
    let mut series = Vec::new();
    for (i, t) in THRESHOLDS.iter().enumerate() {
        let points = pts(&|r| r.predicted[i]);
        if !points.is_empty() {
            series.push(Series {
                style: 0,
                label: format!("≥ {} of ideal, predicted (model)", percent(*t)),
                points,
                line: true,
                colour: if i == 0 { colour("bkl") } else { HALF_COLOUR },
            });
        }
    }
    let simulated = pts(&|r| r.simulated.map(|s| s[0].0));
    if !simulated.is_empty() {
        series.push(Series {
            label: "≥ 90 % of ideal, simulated two-socket x86 (CLH)".into(),
            points: simulated,
            line: true,
            colour: colour("bkl"),
            style: 1,
        });
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
        style: 0,
        label: SEED_SERIES.into(),
        points: SEED_POINTS.iter().map(|(d, c, _)| (*d as f64, *c as f64)).collect(),
        line: false,
        colour: SEED_COLOUR,
    });
    let mut charts = vec![Chart {
        title: "Most cores at which one big lock keeps its share of perfect scaling".into(),
        x_label: "mean delay between system calls (cycles per round trip)".into(),
        y_label: "cores".into(),
        series,
    }];
    let cross = pts(&|r| r.crossover);
    if !cross.is_empty() {
        charts.push(Chart {
            title: "Fewest cores at which fine-grained locking overtakes the big lock".into(),
            x_label: "mean delay between system calls (cycles per round trip)".into(),
            y_label: "cores".into(),
            series: vec![Series {
                style: 0,
                label: "fine overtakes bkl (model + measured one-core costs)".into(),
                points: cross,
                line: true,
                colour: colour("fine"),
            }],
        });
    }
    Some(Fig {
        id: "fig-frontier",
        title: "How coarse can locking be here? The big-lock frontier".into(),
        caption: format!(
            "Top: for each mean delay between system calls, the most cores at which one big lock still delivers \
             90 % (and 50 %) of the lock-free ideal, i.e. of perfect scaling of its own one-core throughput. Lines \
             are predictions of the machine-repairman model fitted to this machine's big-lock measurements (record \
             `model_fit`, scanned up to {MAX_CORES} cores); dots marked 'measured here' come from the `scale` \
             records (medians), where this machine has the cores — a dot at the most cores measured means the \
             machine ran out of cores first. The dashed line is the discrete-event simulator on the seeds' \
             56-thread two-socket x86 with the same fitted times and its cache-line hand-off latencies (records \
             `model_simulate` of the `frontier_sim_*` steps; 56 means at least 56). The seeds' own points (seed 001 §5.1.2–5.1.3) are on their 28-thread \
             Xeon. Bottom: the first core count at which fine-grained locking, dearer per call but sharing no \
             lock, overtakes the big lock, from the measured one-core costs and the fitted model."
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
         <th>predicted: cores at ≥ 50 %</th><th>simulated x86-2s: cores at ≥ 90 %</th><th>fine overtakes bkl from (cores)</th><th>fine ÷ bkl, one core</th>\
         <th>fine ÷ bkl, measured</th><th>lines</th></tr>\n",
    );
    for r in &f.rows {
        let measured = r.measured.as_ref().map_or("—".to_string(), |m| {
            format!(
                "{} (E = {} at {} cores)",
                cores_text(m.cores[0], m.at_least[0]),
                percent(m.efficiency_at_most),
                m.most_cores
            )
        });
        let predicted = |i: usize| r.predicted[i].map_or("—".to_string(), |n| cores_text(n, false));
        let simulated = r.simulated.map_or("—".to_string(), |s| cores_text(s[0].0, s[0].1));
        let cross = match (r.crossover, r.fine_over_bkl_one_core) {
            (Some(n), _) => count(n as u64),
            (None, Some(_)) if f.model.is_some() => format!("> {}", count(MAX_CORES as u64)),
            _ => "—".to_string(),
        };
        let one = r.fine_over_bkl_one_core.map_or("—".to_string(), times);
        let at = r.fine_over_bkl_measured.map_or("—".to_string(), |(c, x)| format!("{} at {c} cores", times(x)));
        let _ = writeln!(
            b,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td class=\"line\">{}</td></tr>",
            count(r.delay),
            esc(&measured),
            esc(&predicted(0)),
            esc(&predicted(1)),
            esc(&simulated),
            esc(&cross),
            esc(&one),
            esc(&at),
            line_list(&r.lines)
        );
    }
    b.push_str("</table>\n");
    b
}
