//! `granule suite`: every experiment on this machine, the model fitted to
//! what it measured, and a report.
//!
//! The suite is a list of ordinary `granule` commands ([`plan`]) run as child
//! processes of this binary ([`run`]); their records are tagged with the
//! experiment they came from and written, machine record first, to
//! `results.jsonl` (one CSV per experiment beside it). The model steps come
//! last, since they read the measured curves. The report ([`html`],
//! [`figures`], [`summary`]) is drawn from those records only, each read
//! into the struct that wrote it ([`records`]), and every figure lists the
//! `results.jsonl` line and field of each number it plots.

#[cfg(test)]
mod agreement_tests;
pub mod answer;
pub mod band;
pub mod bars;
pub mod cite;
pub mod compare;
pub mod figures;
pub mod frontier;
pub mod frontier_sim;
pub mod html;
pub mod kv;
pub mod lock_model;
pub mod pivot;
pub mod plan;
pub mod prediction;
pub mod records;
pub mod results_file;
pub mod run;
pub mod subsystems;
pub mod summary;
pub mod synthesis;
pub mod tables;
pub mod units;
pub mod verdict;

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};
use serde_json::{json, Map, Value};

use self::figures::{Fig, FitLine};
use self::html::{esc, table, Column};
use self::plan::{Profile, Step};
use self::records::Records;
use self::run::StepRun;
use crate::cmd::model::fit::band::ServiceBand;
use crate::cmd::model::fit::records::ModelFit;

/// Core counts the model predicts for (the seeds' machines and beyond).
pub const PREDICT_CORES: &str = "1,2,4,8,16,28,56";

/// The model fit and the service-time band, once the measurements are in
/// `dir/scale.jsonl` (with the big lock's hold times) and the core-to-core
/// latencies in `dir/info.jsonl`.
pub fn fit_step(dir: &Path) -> Step {
    let input = dir.join("scale.jsonl").display().to_string();
    let info = dir.join("info.jsonl").display().to_string();
    Step::new(
        "model_fit",
        "fitting the model",
        &[
            "model",
            "fit",
            "--input",
            &input,
            "--latency-input",
            &info,
            "--regime",
            "bkl",
            "--predict-cores",
            PREDICT_CORES,
        ],
        1.0,
    )
}

/// The topologies the suite simulates, in report order, with how the
/// summary names each.
pub const SIMULATED: [(&str, &str); 3] = [
    ("x86-2s", cite::SEEDS_MACHINE),
    ("arm-quad", "the quad-core ARM of Elphinstone et al. (2016)"),
    ("this-machine", "this machine's measured core-to-core latencies"),
];

/// The suite step that simulates `topology` with the band's `end`.
pub fn simulate_step_name(topology: &str, end: frontier_sim::End) -> String {
    format!("simulate_{}_{}", topology.replace('-', "_"), end.name())
}

/// Simulations of the seeds' machines, and of this one (its core-to-core
/// latencies from `granule info`'s records in `dir/info.jsonl`, on 1 to
/// `cores` cores), each with the longest and with the shortest hold time
/// the band measured (the simulator charges the topology's hand-off
/// itself) and the think time of delay 0 (none without a band in `fit`,
/// the model step's records).
pub fn simulate_steps(p: Profile, fit: &Records, dir: &Path, cores: usize) -> Vec<Step> {
    let Some(band) = band::Band::of(fit) else { return Vec::new() };
    let delay = format!("{:.1}", band.think(0.0));
    let completions = frontier_sim::completions(p);
    let info = dir.join("info.jsonl").display().to_string();
    let here = (1..=cores.max(1)).map(|c| c.to_string()).collect::<Vec<_>>().join(",");
    SIMULATED
        .iter()
        .flat_map(|(topology, _)| frontier_sim::End::BOTH.map(|e| (*topology, e)))
        .map(|(topology, end)| {
            let service = format!("{:.1}", end.hold(&band));
            let (cores, extra): (&str, &[&str]) = match topology {
                "x86-2s" => (PREDICT_CORES, &[]),
                "arm-quad" => ("1,2,3,4", &[]),
                _ => (&here, &["--topology-input", &info]),
            };
            let mut args = vec![
                "model",
                "simulate",
                "--topology",
                topology,
                "--lock",
                "clh,ticket",
                "--service",
                &service,
                "--delay",
                &delay,
                "--cores",
                cores,
                "--completions",
                completions,
            ];
            args.extend_from_slice(extra);
            let label = format!("simulating {topology} ({} hold)", end.name());
            Step::new(&simulate_step_name(topology, end), &label, &args, 1.0)
        })
        .collect()
}

/// The machine record's CPU, cores, TSC GHz, RTM status, granule version
/// and git revision, as escaped page text (empty without a machine record).
pub fn machine_fields(rs: &Records) -> [String; 6] {
    let Some(m) = &rs.machine else { return Default::default() };
    [
        json!(m.cpu_model),
        json!(m.cores),
        json!(m.tsc_ghz),
        json!(m.rtm),
        json!(m.granule_version),
        json!(m.git_revision),
    ]
    .map(|v| esc(&html::cell(Some(&v))))
}

/// How the suite ran, as its `suite` record (line 2 of `results.jsonl`)
/// says: what the page's header and "Repeat this run" show.
#[derive(Clone, Debug, Default)]
pub struct RunInfo {
    /// `quick`, `full` or `smoke` (empty if unknown).
    pub profile: String,
    /// The suite's command line.
    pub command: String,
    /// The steps in the order they ran.
    pub steps: Vec<StepInfo>,
}

/// One step of a suite run.
#[derive(Clone, Debug, Default)]
pub struct StepInfo {
    /// Its name (the experiment tag, and `<name>.csv`).
    pub name: String,
    /// Its command line.
    pub command: String,
    /// Wall-clock seconds it took.
    pub seconds: f64,
}

impl RunInfo {
    /// From the `suite` record of `rs`.
    pub fn of(rs: &Records) -> Self {
        let Some(r) = &rs.suite else { return Self::default() };
        let steps = r
            .step_names
            .iter()
            .zip(&r.steps)
            .enumerate()
            .map(|(i, (name, command))| StepInfo {
                name: name.clone(),
                command: command.clone(),
                seconds: r.step_seconds.get(i).copied().unwrap_or(0.0),
            })
            .collect();
        Self { profile: r.profile.to_string(), command: r.command.to_string(), steps }
    }
}

/// Write one step's records: `<name>.jsonl` (machine record first) and
/// `<name>.csv`.
pub fn write_step(dir: &Path, machine: &Map<String, Value>, s: &StepRun) -> Result<()> {
    let mut all = vec![machine.clone()];
    all.extend(s.records.iter().cloned());
    let jsonl = crate::output::json_lines(&all);
    std::fs::write(dir.join(format!("{}.jsonl", s.step.name)), jsonl)
        .with_context(|| format!("writing {}", dir.join(format!("{}.jsonl", s.step.name)).display()))?;
    std::fs::write(dir.join(format!("{}.csv", s.step.name)), crate::output::csv(&all))
        .with_context(|| format!("writing {}", dir.join(format!("{}.csv", s.step.name)).display()))?;
    Ok(())
}

/// The report's figures.
pub fn build_figures(rs: &Records, frontier: &frontier::Frontier) -> Vec<Fig> {
    let fits: Vec<FitLine<'_>> = {
        let quoted = lock_model::quoted_fits(rs);
        let curves: Vec<_> = rs
            .model_curve
            .of("model_fit")
            .filter(|r| quoted.contains(&(&*r.key.regime, &*r.key.scope)) && r.key.scope != "all")
            .collect();
        let mut keys: Vec<(&str, u64)> =
            curves.iter().filter_map(|r| Some((&*r.key.regime, r.key.delay?.0 as u64))).collect();
        keys.dedup();
        keys.into_iter()
            .filter_map(|(regime, delay)| {
                let points: Vec<_> = curves
                    .iter()
                    .copied()
                    .filter(|r| r.key.regime == regime && r.key.delay.map(|d| d.0) == Some(delay as f64))
                    .collect();
                (!points.is_empty()).then_some(FitLine { regime, delay, points })
            })
            .collect()
    };
    let mut out = Vec::new();
    out.extend(answer::figure(rs, frontier));
    out.extend(figures::ipc_cost(rs));
    out.extend(figures::scaling(rs, &fits));
    out.extend(side_by_side(prediction::figure(rs), figures::simulated(rs)));
    out.extend(figures::kv_throughput(rs));
    out.extend(figures::kv_xput(rs));
    out.extend(figures::lock_costs(rs));
    out.extend(subsystems::figure(rs));
    out.extend(synthesis::figure(rs));
    out
}

/// Two figures of line charts as one, their charts side by side under one
/// legend (the larger-machine predictions: the band per delay, and the
/// simulations); either alone as it is.
fn side_by_side(left: Option<Fig>, right: Option<Fig>) -> Option<Fig> {
    match (left, right) {
        (Some(l), Some(r)) => match (l.plot, r.plot) {
            (figures::Plot::Lines(mut a), figures::Plot::Lines(b)) => {
                a.charts.extend(b.charts);
                let mut sources = l.sources;
                sources.extend(r.sources);
                Some(Fig {
                    id: r.id,
                    title: "The big lock on larger machines: the model's band and the simulator".into(),
                    caption: format!("Left: {} Right: {}", l.caption, r.caption),
                    plot: figures::Plot::Lines(a),
                    sources,
                })
            }
            // Not two line figures: keep the left one.
            (lp, _) => Some(Fig { plot: lp, ..l }),
        },
        (l, r) => l.or(r),
    }
}

/// The emulated platform any `ipc` or `scale` record names (`qemu-tcg`,
/// from `granule metal run`), whose timings mean nothing.
pub(crate) fn emulated_platform(rs: &Records) -> Option<&str> {
    let ipc = rs.ipc.iter().filter_map(|r| r.platform.as_deref());
    let scale = rs.scale.iter().filter_map(|r| r.platform.as_deref());
    ipc.chain(scale).find(|p| *p == "qemu-tcg")
}

/// The report page.
pub fn build_page(rs: &Records, frontier: &frontier::Frontier, figs: &[Fig]) -> String {
    let run = RunInfo::of(rs);
    let mut b = String::new();
    let [cpu, cores, tsc, rtm, version, revision] = machine_fields(rs);
    let _ = writeln!(b, "<h1>granule suite: how coarse can kernel locking be on this machine?</h1>");
    let _ = writeln!(
        b,
        "<p>{cpu} · {cores} cores · TSC {tsc} GHz · RTM: {rtm} · granule {version} ({revision}) · profile <b>{}</b></p>",
        esc(&run.profile)
    );
    if run.profile == Profile::Smoke.name() {
        let _ =
            writeln!(b, "<p class=\"note\">Smoke profile: tiny durations for testing; the numbers mean nothing.</p>");
    }
    if let Some(p) = emulated_platform(rs) {
        let _ = writeln!(
            b,
            "<p class=\"note\">Some ipc or scale records ran on <b>{}</b> (QEMU's software emulation, \
             `granule metal run`): their timings are functional only and mean nothing.</p>",
            esc(p)
        );
    }
    let on = match rs.machine.as_ref().map(|m| m.cores as f64).filter(|c| c.is_finite() && *c >= 1.0) {
        Some(c) => format!("Measured on {c:.0} cores."),
        None => "Measured on a machine this file does not describe (no machine record).".into(),
    };
    let _ = writeln!(
        b,
        "<p class=\"note\">{on} Every number for more cores comes from the queueing model or the simulator, \
         fitted to these measurements, and is marked as a prediction.</p>"
    );
    let _ = writeln!(b, "<h2>The answer for this machine</h2>");
    let mut said = verdict::verdict(rs, frontier).into_iter();
    if let Some(h) = said.next() {
        let _ = writeln!(
            b,
            "<p class=\"headline\"><b>{}</b> <span class=\"none\">(results.jsonl lines {})</span></p>",
            esc(&h.text),
            units::line_list(&h.lines)
        );
    }
    let _ = writeln!(b, "<ul class=\"verdict\">");
    findings(&mut b, &said.collect::<Vec<_>>());
    let _ = writeln!(b, "</ul>");
    // The frontier first, then its table; the other figures after the findings.
    let (first, rest) = figs.split_at(usize::from(figs.first().is_some_and(|f| f.id == "fig-frontier")));
    for f in first {
        b.push_str(&html::figure(f));
    }
    let _ = writeln!(
        b,
        "<h3>The frontier and the crossover, per delay</h3>\n<p class=\"note\">Measured: on this machine's cores. \
         Predicted: the fitted model, for cores this machine does not have.</p>"
    );
    b.push_str(&answer::table(frontier));
    let _ = writeln!(b, "<h2>What the numbers say</h2>\n<ul class=\"summary\">");
    findings(&mut b, &summary::all(rs));
    let _ = writeln!(b, "</ul>\n<h2>Figures</h2>");
    for f in rest {
        b.push_str(&html::figure(f));
    }
    let _ = writeln!(b, "<h2>Tables</h2>\n<div class=\"tables\">");
    section(&mut b, true, |b| tables::ipc(b, rs));
    let sims: Vec<String> = run
        .steps
        .iter()
        .map(|s| s.name.clone())
        .filter(|n| n.starts_with("simulate_") || n.starts_with("frontier_sim_"))
        .collect();
    section(&mut b, true, |b| tables::drawn(b, rs, &sims));
    let _ = writeln!(b, "<section class=\"wide\">");
    let _ = writeln!(
        b,
        "<h3>The model's inputs</h3>\n<p>The prediction's service-time band (cycles per lock acquisition: the lock \
         profiler's hold time plus one cache-line hand-off, per core count), and the least-squares fits, quoted \
         only where determined:</p>"
    );
    let band: [Column<'_, ServiceBand>; 7] = [
        ("regime", |r| json!(r.regime)),
        ("cores", |r| json!(r.cores)),
        ("hold", |r| json!(r.hold_cycles)),
        ("hand-off", |r| json!(r.handoff_cycles)),
        ("shortest", |r| json!(r.service_lo)),
        ("longest", |r| json!(r.service_hi)),
        ("think, per delay", |r| json!(r.think_cycles)),
    ];
    b.push_str(&table(&rs.service_band.of("model_fit").collect::<Vec<_>>(), &band));
    let fits: [Column<'_, ModelFit<'_>>; 10] = [
        ("regime", |r| json!(r.key.regime)),
        ("delay", |r| json!(r.key.delay)),
        ("s", |r| json!(r.s)),
        ("± s", |r| json!(r.s_err)),
        ("a", |r| json!(r.a)),
        ("± a", |r| json!(r.a_err)),
        ("R²", |r| json!(r.r2)),
        ("core counts", |r| json!(r.distinct_cores)),
        ("quoted", |r| json!(r.quoted)),
        ("why not", |r| json!(r.not_quoted_because)),
    ];
    b.push_str(&table(&rs.model_fit.of("model_fit").collect::<Vec<_>>(), &fits));
    let _ = writeln!(b, "</section>");
    section(&mut b, true, |b| tables::kv(b, rs));
    section(&mut b, true, |b| subsystems::tables(b, rs));
    section(&mut b, false, |b| tables::limits(b, rs));
    section(&mut b, false, |b| tables::locks(b, rs));
    section(&mut b, false, |b| tables::quaject(b, rs));
    section(&mut b, false, |b| tables::profiler(b, rs));
    section(&mut b, true, |b| synthesis::tables(b, rs));
    let _ = writeln!(b, "</div>");
    tables::repeat(&mut b, &run);
    html::page("granule suite report", &b)
}

/// One block of the tables' grid: half the page wide, or the whole width
/// (`wide`) for tables of many columns.
fn section(b: &mut String, wide: bool, f: impl FnOnce(&mut String)) {
    let _ = writeln!(b, "<section{}>", if wide { " class=\"wide\"" } else { "" });
    f(b);
    let _ = writeln!(b, "</section>");
}

/// Findings as list items, each naming its `results.jsonl` lines.
fn findings(b: &mut String, fs: &[summary::Finding]) {
    for f in fs {
        let _ = writeln!(
            b,
            "<li>{} <span class=\"none\">(results.jsonl line{} {})</span></li>",
            cite::html(&f.text),
            if f.lines.len() == 1 { "" } else { "s" },
            units::line_list(&f.lines)
        );
    }
}
