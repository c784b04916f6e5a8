//! Comparing machines: `granule report a/results.jsonl b/results.jsonl
//! --out cmp` draws every figure of the report with one series per machine,
//! so a frontier measured on a 64-core server sits beside ours and beside
//! the seeds'.
//!
//! Each machine's figures are built from its own records, exactly as its
//! own page draws them ([`super::build_figures`]); the comparison then
//! merges figures of the same id: charts of the same title are overlaid,
//! every series renamed `A: series` (`B: …`) and drawn in that machine's
//! *style* (solid / dashed / dotted lines; filled / open / cross marks), so
//! a regime keeps its colour on every machine. A reference series (the
//! seeds' points, the seeds' socket boundary: [`REFERENCES`]) is drawn once. Bars get the machine's
//! letter before their label, or before their group's name. Every plotted number keeps its source, with
//! the file it came from.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};

use super::figures::{Fig, Plot};
use super::frontier::{self, Frontier};
use super::html::{self, esc};
use super::records::Records;
use super::results_file::Results;
use super::units::line_list;
use super::{build_figures, machine_fields, verdict};
use crate::plot::{Chart, Figure, Series};

/// What names a machine in legends: `A`, `B`, … with the machine record's
/// CPU and core count.
#[derive(Clone, Debug, PartialEq)]
pub struct MachineLabel {
    /// The letter used in legends.
    pub letter: char,
    /// `AMD EPYC, 2 cores` (from the machine record), or the file's name.
    pub text: String,
    /// The results file.
    pub file: Option<String>,
}

/// The labels of `many` results files, in order, from their records
/// (`views`, one per file).
pub fn labels(many: &[Results], views: &[Records]) -> Vec<MachineLabel> {
    many.iter()
        .zip(views)
        .enumerate()
        .map(|(i, (r, rs))| {
            let text = match &rs.machine {
                Some(m) => format!("{}, {} cores", m.cpu_model, m.cores),
                None => format!("unknown CPU ({})", r.path.display()),
            };
            MachineLabel { letter: (b'A' + i as u8) as char, text, file: Some(r.path.display().to_string()) }
        })
        .collect()
}

/// Labels of series that are references, not a machine's data: the
/// seeds' published points and the seeds' socket boundary.
pub const REFERENCES: [&str; 2] = [super::answer::SEED_SERIES, super::prediction::BOUNDARY_SERIES];

/// Whether `s` is a reference series (drawn once in a comparison).
fn is_reference(s: &Series) -> bool {
    REFERENCES.contains(&s.label.as_str())
}

/// The figures of several machines merged by id, in the order they first
/// appear.
pub fn merge(per_machine: &[Vec<Fig>], labels: &[MachineLabel]) -> Vec<Fig> {
    let mut ids: Vec<&'static str> = Vec::new();
    for figs in per_machine {
        for f in figs {
            if !ids.contains(&f.id) {
                ids.push(f.id);
            }
        }
    }
    ids.into_iter()
        .filter_map(|id| {
            let of: Vec<(usize, &Fig)> = per_machine
                .iter()
                .enumerate()
                .filter_map(|(k, figs)| Some((k, figs.iter().find(|f| f.id == id)?)))
                .collect();
            merge_one(&of, labels)
        })
        .collect()
}

/// One figure from its versions on several machines (`(machine, figure)`).
fn merge_one(of: &[(usize, &Fig)], labels: &[MachineLabel]) -> Option<Fig> {
    let sources = of
        .iter()
        .flat_map(|(k, f)| {
            f.sources.iter().cloned().map(|mut s| {
                s.file = labels[*k].file.clone();
                s
            })
        })
        .collect();
    let (_, first) = of.first()?;
    let plot = match &first.plot {
        Plot::Lines(_) => {
            // Every version of each chart (by title), in first-seen order.
            let mut by_title: Vec<(String, Vec<(usize, &Chart)>)> = Vec::new();
            for (k, f) in of {
                let Plot::Lines(fig) = &f.plot else { continue };
                for c in &fig.charts {
                    match by_title.iter_mut().find(|(t, _)| *t == c.title) {
                        Some((_, v)) => v.push((*k, c)),
                        None => by_title.push((c.title.clone(), vec![(*k, c)])),
                    }
                }
            }
            let charts = by_title
                .into_iter()
                .map(|(_, versions)| {
                    let mut merged = Chart { series: Vec::new(), ..versions[0].1.clone() };
                    for (k, c) in &versions {
                        for s in &c.series {
                            if is_reference(s) {
                                // Not a machine's data: drawn once, under its own name.
                                if !merged.series.iter().any(|x| x.label == s.label) {
                                    merged.series.push(s.clone());
                                }
                                continue;
                            }
                            let mut s = s.clone();
                            s.label = format!("{}: {}", labels[*k].letter, s.label);
                            // Machine k's styles follow its series' own (solid and
                            // dashed on A, dotted and dash-dot on B, …).
                            s.style += 2 * *k;
                            merged.series.push(s);
                        }
                    }
                    merged
                })
                .collect();
            Plot::Lines(Figure { charts })
        }
        Plot::Bars(chart) => {
            let mut chart = chart.clone();
            chart.bars.clear();
            chart.references.clear();
            for (k, f) in of {
                let Plot::Bars(c) = &f.plot else { continue };
                for b in &c.bars {
                    // A grouped bar keeps its legend entry (its regime's
                    // colour); the machine goes into its group's name.
                    let mut b = b.clone();
                    let named = if b.group.is_empty() { &mut b.label } else { &mut b.group };
                    *named = format!("{}: {named}", labels[*k].letter);
                    chart.bars.push(b);
                }
                for r in &c.references {
                    let mut r = r.clone();
                    r.label = format!("{}: {}", labels[*k].letter, r.label);
                    chart.references.push(r);
                }
            }
            Plot::Bars(chart)
        }
    };
    let legend: Vec<String> = of.iter().map(|(k, _)| format!("{} = {}", labels[*k].letter, labels[*k].text)).collect();
    Some(Fig {
        id: first.id,
        title: first.title.clone(),
        caption: format!(
            "Machines: {}. Each machine draws in its own line and mark styles, so read every series' style from \
             the legend (a caption below that names a line style speaks of one machine's figure). {}",
            legend.join("; "),
            first.caption
        ),
        plot,
        sources,
    })
}

/// Write the comparison page and its SVG files to `dir`; returns the number
/// of figures.
pub fn write(dir: &Path, many: &[Results]) -> Result<usize> {
    let views = many.iter().map(Results::view).collect::<Result<Vec<Records>>>()?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let labels = labels(many, &views);
    // Each machine's frontier once, for its figures and its verdict.
    let frontiers: Vec<Frontier> = views.iter().map(frontier::compute).collect();
    let per: Vec<Vec<Fig>> = views.iter().zip(&frontiers).map(|(rs, f)| build_figures(rs, f)).collect();
    let figs = merge(&per, &labels);
    for f in &figs {
        let p = dir.join(format!("{}.svg", f.id));
        std::fs::write(&p, f.svg()).with_context(|| format!("writing {}", p.display()))?;
    }
    let index = dir.join("index.html");
    std::fs::write(&index, page(many, &views, &labels, &frontiers, &figs))
        .with_context(|| format!("writing {}", index.display()))?;
    Ok(figs.len())
}

/// The comparison page: the machines, each one's verdict, the merged figures.
fn page(many: &[Results], views: &[Records], labels: &[MachineLabel], frontiers: &[Frontier], figs: &[Fig]) -> String {
    let mut b = String::new();
    let _ = writeln!(b, "<h1>granule report: how coarse can kernel locking be, on {} machines</h1>", many.len());
    let _ = writeln!(
        b,
        "<table>\n<tr><th>machine</th><th>CPU</th><th>cores</th><th>TSC GHz</th><th>RTM</th><th>granule</th>\
         <th>profile</th><th>results file</th></tr>"
    );
    for ((r, rs), l) in many.iter().zip(views).zip(labels) {
        let [cpu, cores, tsc, rtm, version, revision] = machine_fields(rs);
        let profile = rs.suite.as_ref().map_or("", |s| &s.profile);
        let _ = writeln!(
            b,
            "<tr><td>{}</td><td>{cpu}</td><td>{cores}</td><td>{tsc}</td><td>{rtm}</td><td>{version} ({revision})</td>\
             <td>{}</td><td>{}</td></tr>",
            l.letter,
            esc(profile),
            esc(&r.path.display().to_string())
        );
    }
    let _ = writeln!(b, "</table>");
    if views.iter().any(|rs| rs.suite.as_ref().is_some_and(|s| s.profile == "smoke")) {
        let _ = writeln!(b, "<p class=\"note\">A smoke-profile run is among these: its numbers mean nothing.</p>");
    }
    let _ = writeln!(b, "<h2>The answer on each machine</h2>");
    for (((r, rs), l), fr) in many.iter().zip(views).zip(labels).zip(frontiers) {
        let _ = writeln!(b, "<h3>{} — {}</h3>\n<ul class=\"verdict\">", l.letter, esc(&l.text));
        for f in verdict::verdict(rs, fr) {
            let _ = writeln!(
                b,
                "<li>{} <span class=\"none\">({} lines {})</span></li>",
                esc(&f.text),
                esc(&r.path.display().to_string()),
                line_list(&f.lines)
            );
        }
        let _ = writeln!(b, "</ul>");
    }
    let _ = writeln!(b, "<h2>Figures</h2>");
    for f in figs {
        b.push_str(&html::figure(f));
    }
    html::page("granule report: machines compared", &b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::output::record;
    use serde_json::{Map, Value};

    /// How many series (or bars) of `f` came from machine `letter`.
    pub fn series_of(f: &Fig, letter: char) -> usize {
        let prefix = format!("{letter}: ");
        match &f.plot {
            Plot::Lines(fig) => {
                fig.charts.iter().flat_map(|c| &c.series).filter(|s| s.label.starts_with(&prefix)).count()
            }
            Plot::Bars(c) => {
                c.bars.iter().filter(|b| b.label.starts_with(&prefix) || b.group.starts_with(&prefix)).count()
            }
        }
    }

    fn machine(cpu: &str, scale: &[(&str, u64, f64)]) -> Results {
        let mut m = record("machine");
        m.insert("cpu_model".into(), cpu.into());
        m.insert("cores".into(), 2.into());
        let mut records: Vec<Map<String, Value>> = vec![m];
        for (g, c, t) in scale {
            let mut r = record("scale");
            r.insert("experiment".into(), "scale".into());
            r.insert("regime".into(), (*g).into());
            r.insert("cores".into(), (*c).into());
            r.insert("delay_cycles".into(), 0.into());
            r.insert("round_trips_per_sec".into(), (*t).into());
            records.push(r);
        }
        let mut ipc = record("ipc");
        ipc.insert("experiment".into(), "ipc".into());
        ipc.insert("regime".into(), "bkl".into());
        ipc.insert("round_trip_cycles_mean".into(), 250.0.into());
        ipc.insert("round_trip_cycles_std".into(), 5.0.into());
        records.push(ipc);
        Results { path: format!("{cpu}/results.jsonl").into(), records, skipped: Vec::new() }
    }

    #[test]
    fn every_figure_gets_one_series_per_machine_and_common_series_once() {
        let many = [
            machine("Alpha", &[("bkl", 1, 10.0), ("bkl", 2, 12.0)]),
            machine("Beta", &[("bkl", 1, 20.0), ("bkl", 2, 30.0)]),
        ];
        let views: Vec<Records> = many.iter().map(|r| Records::new(&r.records)).collect();
        let l = labels(&many, &views);
        assert_eq!(l[0].text, "Alpha, 2 cores");
        assert_eq!((l[0].letter, l[1].letter), ('A', 'B'));
        let per: Vec<Vec<Fig>> = views.iter().map(|rs| build_figures(rs, &frontier::compute(rs))).collect();
        let merged = merge(&per, &l);
        assert!(!merged.is_empty());
        for f in &merged {
            for letter in ['A', 'B'] {
                assert!(series_of(f, letter) > 0, "{}: no series of machine {letter}", f.id);
            }
            // Every plotted number names the file it came from.
            assert!(f.sources.iter().all(|s| s.file.is_some()), "{}", f.id);
        }
        // The seeds' points of the frontier figure are a reference: drawn
        // once, unprefixed.
        if let Some(f) = merged.iter().find(|f| f.id == "fig-frontier") {
            let Plot::Lines(fig) = &f.plot else { panic!("lines") };
            let seeds = fig.charts[0].series.iter().filter(|s| s.label == super::super::answer::SEED_SERIES).count();
            assert_eq!(seeds, 1);
        }
        let scale = merged.iter().find(|f| f.id == "fig-scale").unwrap();
        let Plot::Lines(fig) = &scale.plot else { panic!("lines") };
        let styles: Vec<usize> = fig.charts[0].series.iter().map(|s| s.style).collect();
        assert_eq!(styles, [0, 2], "each machine in its own style");
    }
}
