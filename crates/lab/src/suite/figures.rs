//! The report's figures, each drawn from records and carrying the list of
//! record fields it plotted (so a test, or a sceptical reader, can check
//! every point against `results.jsonl`).

use std::collections::BTreeMap;

use super::bars::{Bar, BarChart, Reference};
use super::kv::{self, Field};
use super::records::{At, Records, Source};
use crate::cmd::model::fit::records::ModelCurve;
use crate::cmd::model::simulate::records::SimulateRecord;
use crate::plot::{Chart, Figure, Series};
use crate::regimes::{colour, rank};

/// A figure of the report.
#[derive(Clone, Debug)]
pub struct Fig {
    /// Id in the page and file name (`<id>.svg`).
    pub id: &'static str,
    /// Heading.
    pub title: String,
    /// What it shows and where its numbers come from.
    pub caption: String,
    /// What it draws (its SVG document is [`Fig::svg`]).
    pub plot: Plot,
    /// Every plotted number's record and field.
    pub sources: Vec<Source>,
}

/// A figure's drawing, kept as data so figures of several machines can be
/// merged (`granule report` comparing machines).
#[derive(Clone, Debug)]
pub enum Plot {
    /// Charts of lines and dots, stacked.
    Lines(Figure),
    /// A bar chart.
    Bars(BarChart),
}

impl Fig {
    /// The SVG document.
    pub fn svg(&self) -> String {
        match &self.plot {
            Plot::Lines(f) => f.svg(),
            Plot::Bars(b) => b.svg(),
        }
    }
}

/// Regimes in the order the seeds list them (others follow, sorted).
/// Single-core IPC cost per regime, mean ± standard deviation over runs.
pub fn ipc_cost(rs: &Records) -> Option<Fig> {
    let mut rows = rs.ipc_runs();
    if rows.is_empty() {
        return None;
    }
    rows.sort_by_key(|r| rank(&r.regime));
    let mut sources = Vec::new();
    let mut bars = Vec::new();
    for r in &rows {
        let regime = &*r.regime;
        let mean = r.source("round_trip_cycles_mean", r.round_trip_cycles_mean);
        let std = r.source("round_trip_cycles_std", r.round_trip_cycles_std);
        bars.push(Bar {
            label: regime.into(),
            value: mean.value,
            error: std.value,
            colour: colour(regime),
            group: String::new(),
        });
        sources.extend([mean, std]);
    }
    let runs = rows.first().map_or(0.0, |r| r.runs as f64);
    let chart = BarChart {
        title: "Single-core IPC round trip (Call + ReplyRecv)".into(),
        y_label: "cycles per round trip".into(),
        bars,
        references: Vec::new(),
    };
    Some(Fig {
        id: "fig-ipc",
        title: "What a lock costs one core".into(),
        caption: format!(
            "Round-trip cycles of a client/server ping-pong on one core under each regime: mean ± standard \
             deviation over {runs:.0} runs, each on a freshly booted machine (records `ipc` of experiment `ipc`; \
             Figure 3 of Elphinstone et al. (2016), Figure 1 of Peters et al. (2015))."
        ),
        plot: Plot::Bars(chart),
        sources,
    })
}

/// The model's fitted throughput of one (regime, delay), if the suite fitted it.
#[derive(Clone, Debug)]
pub struct FitLine<'a> {
    /// Regime the curve was fitted to.
    pub regime: &'a str,
    /// Delay in cycles.
    pub delay: u64,
    /// Predicted points: the curve's throughput per core count.
    pub points: Vec<&'a At<ModelCurve<'static>>>,
}

/// Throughput against cores, one chart per delay: measured points per regime
/// and, where fitted, the model's line.
pub fn scaling(rs: &Records, fits: &[FitLine<'_>]) -> Option<Fig> {
    let mut by_delay: BTreeMap<u64, Vec<&At<_>>> = BTreeMap::new();
    for r in rs.scale.of("scale") {
        by_delay.entry(r.delay_cycles).or_default().push(r);
    }
    if by_delay.is_empty() {
        return None;
    }
    let mut sources = Vec::new();
    let mut charts = Vec::new();
    for (delay, rows) in &by_delay {
        let mut regimes: Vec<&str> = rows.iter().map(|r| &*r.regime).collect();
        regimes.sort_by_key(|r| rank(r));
        regimes.dedup();
        let mut series = Vec::new();
        for regime in regimes {
            let mut points = Vec::new();
            for r in rows.iter().filter(|r| r.regime == regime) {
                let (c, t) =
                    (r.source("cores", r.cores as f64), r.source("round_trips_per_sec", r.round_trips_per_sec));
                points.push((c.value, t.value));
                sources.extend([c, t]);
            }
            series.push(Series {
                style: 0,
                label: format!("{regime} (measured)"),
                points,
                line: false,
                colour: colour(regime),
            });
        }
        // The fitted line over the measured cores only: larger machines are
        // the prediction figure's.
        let most = rows.iter().map(|r| r.cores as f64).fold(1.0, f64::max);
        for f in fits.iter().filter(|f| f.delay == *delay) {
            let mut points = Vec::new();
            for r in f.points.iter().filter(|r| r.cores as f64 <= most) {
                let (field, y) = r.predicted.field();
                let (c, t) = (r.source("cores", r.cores as f64), r.source(field, y));
                points.push((c.value, t.value));
                sources.extend([c, t]);
            }
            series.push(Series {
                style: 0,
                label: format!("{} (fitted model)", f.regime),
                points,
                line: true,
                colour: colour(f.regime),
            });
        }
        let top = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).fold(0.0, f64::max);
        series.extend(super::prediction::boundaries(rs, most as usize, top));
        charts.push(Chart {
            title: format!("mean delay {delay} cycles"),
            x_label: "cores".into(),
            y_label: "round trips per second".into(),
            series,
        });
    }
    Some(Fig {
        id: "fig-scale",
        title: "Throughput against cores".into(),
        caption: "One independent ping-pong pair per core, exponentially distributed delay between receive and \
                  reply; dots are measured (records `scale`), lines, where a fit is determined enough to quote (at least 4 \
                  core counts, R² ≥ 0.9), the machine-repairman model fitted to the measured big-lock points \
                  (records `model_curve`), drawn over the measured cores; dotted vertical lines mark this machine's \
                  cache and socket boundaries. Figures 4–5 of Elphinstone et al. (2016)."
            .into(),
        plot: Plot::Lines(Figure { charts }),
        sources,
    })
}

/// The clock the page converts cycles to seconds with: this machine's TSC
/// frequency in GHz (record `machine`, field `tsc_ghz`), with its source.
pub fn clock(rs: &Records) -> Option<(f64, Source)> {
    let m = rs.machine.as_ref()?;
    let s = m.source("tsc_ghz", m.tsc_ghz);
    (s.value.is_finite() && s.value > 0.0).then_some((s.value, s))
}

/// A simulated point's lock acquisitions per second: its acquisitions per
/// cycle (field `throughput`) at `ghz`, the one clock the page assumes for
/// every simulated machine (the fitted times are this machine's cycles).
pub fn simulated_per_sec(r: &SimulateRecord<'_>, ghz: f64) -> f64 {
    r.throughput * ghz * 1e9
}

/// Predicted big-lock throughput on larger machines: one line per
/// simulated topology and lock, in lock acquisitions per second at this
/// machine's clock; a colour per machine (this one black), a dash per lock.
pub fn simulated(rs: &Records) -> Option<Fig> {
    let (ghz, clock_source) = clock(rs)?;
    let mut sources = vec![clock_source];
    let mut series = Vec::new();
    for ((m, (topology, name)), (e, end)) in super::SIMULATED
        .iter()
        .enumerate()
        .flat_map(|t| super::frontier_sim::End::BOTH.into_iter().enumerate().map(move |e| (t, e)))
    {
        let step = super::simulate_step_name(topology, end);
        let sims: Vec<&At<SimulateRecord<'static>>> = rs.model_simulate.of(&step).collect();
        let mut locks: Vec<&str> = sims.iter().map(|r| &*r.lock).collect();
        locks.dedup();
        for (l, lock) in locks.into_iter().enumerate() {
            let mut points = Vec::new();
            for r in sims.iter().filter(|r| r.lock == lock) {
                let (x, y) = (r.source("cores", r.cores as f64), r.source("throughput", r.throughput));
                points.push((x.value, simulated_per_sec(r, ghz)));
                sources.extend([x, y]);
            }
            let colour = match *topology {
                "this-machine" => 6,
                _ => [0, 2][m % 2],
            };
            let short = name.split(" (").next().unwrap_or(name);
            series.push(Series {
                style: l + 2 * e,
                label: format!("{lock} lock, {short} (simulated, both hold times)"),
                points,
                line: true,
                colour,
            });
        }
    }
    if series.is_empty() {
        return None;
    }
    let chart = Chart {
        title: "Predicted big-lock throughput on larger machines".into(),
        x_label: "cores".into(),
        y_label: "lock acquisitions per second".into(),
        series,
    };
    Some(Fig {
        id: "fig-predict",
        title: "Where a big lock stops scaling".into(),
        caption: format!(
            "Discrete-event simulations of the big lock with the longest and with the shortest hold time the lock \
             profiler measured on this machine (record `service_band`; the simulator adds each machine's own \
             cache-line hand-off) and the think time one core measured with system calls back to back, the big \
             lock's worst case (records `model_simulate` of the simulate steps): {}, the quad-core ARM of \
             Elphinstone et al. (2016), and this machine with the core-to-core latencies `granule info` measured \
             (black). One colour per machine; with the longest hold time CLH is solid and ticket dashed, with the \
             shortest CLH is dotted and ticket dash-dotted. The hold times are this machine's cycles, so every \
             simulated machine is drawn at this machine's clock, {ghz:.2} GHz (record `machine`, line 1): lock \
             acquisitions per second. Predictions, not measurements.",
            super::cite::SEEDS_MACHINE
        ),
        plot: Plot::Lines(Figure { charts: vec![chart] }),
        sources,
    })
}

/// Uncontended lock costs next to the cost of the atomic instructions.
pub fn lock_costs(rs: &Records) -> Option<Fig> {
    let rows: Vec<_> = rs.lock_uncontended.of("locks").filter(|r| r.threads == 1).collect();
    if rows.is_empty() {
        return None;
    }
    let mut sources = Vec::new();
    let mut bars = Vec::new();
    for (i, r) in rows.iter().enumerate() {
        let s = r.source("cycles_per_pair", r.cycles_per_pair);
        bars.push(Bar { label: r.lock.to_string(), value: s.value, error: 0.0, colour: i, group: String::new() });
        sources.push(s);
    }
    let mut references = Vec::new();
    for r in rs.atomic_cost.of("info") {
        let name = &*r.instruction;
        if !matches!(name, "xchg" | "lock cmpxchg16b") {
            continue;
        }
        if let Some(s) = r.cycles.map(|c| r.source("cycles", c)) {
            references.push(Reference { label: format!("{name} ({:.1})", s.value), value: s.value });
            sources.push(s);
        }
    }
    let chart = BarChart {
        title: "Uncontended acquire + release".into(),
        y_label: "cycles per acquire + release pair".into(),
        bars,
        references,
    };
    Some(Fig {
        id: "fig-locks",
        title: "Lock costs next to the machine's limits".into(),
        caption: "Cycles of one uncontended acquire + release pair on one pinned thread (records \
                  `lock_uncontended`, median over runs), with the cost of one uncontended atomic instruction \
                  measured by `granule info` as dashed lines (records `atomic_cost`)."
            .into(),
        plot: Plot::Bars(chart),
        sources,
    })
}

/// The KV macrobenchmark's `field` against cores, one chart per workload:
/// one series of median runs per regime, and real Redis on Linux.
fn kv_against_cores(rs: &Records, field: Field, y_label: &str) -> Option<(Figure, Vec<Source>)> {
    let workloads = kv::workloads(rs);
    if workloads.is_empty() {
        return None;
    }
    let mut sources = Vec::new();
    let mut charts = Vec::new();
    for w in &workloads {
        let mut series = Vec::new();
        for s in &w.series {
            let mut points = Vec::new();
            for r in s.medians(field) {
                let (c, y) = (r.cores_source(), r.source(field));
                points.push((c.value, y.value));
                sources.extend([c, y]);
            }
            series.push(Series { style: 0, label: s.label(), points, line: false, colour: s.colour() });
        }
        charts.push(Chart { title: w.title(), x_label: "cores".into(), y_label: y_label.into(), series });
    }
    Some((Figure { charts }, sources))
}

/// What the KV captions say of real redis-server on Linux: its dots when
/// the run measured it (records `kv_linux`), else that it was not measured
/// and why (record `linux_skipped`).
fn linux_words(rs: &Records) -> String {
    if rs.kv_linux.of(kv::STEP).next().is_some() {
        return ", and real redis-server on Linux in the same layout over loopback TCP (records `kv_linux`)".into();
    }
    match rs.linux_skipped.of(kv::STEP).next() {
        Some(r) => format!(
            "; real redis-server on Linux was not measured in this run: {} (results.jsonl line {})",
            r.reason.trim_end_matches('.'),
            r.line
        ),
        None => "; real redis-server on Linux was not measured in this run".into(),
    }
}

/// KV throughput against cores (Peters et al. 2015, Figure 3; Elphinstone
/// et al. 2016, Figure 7).
pub fn kv_throughput(rs: &Records) -> Option<Fig> {
    let (figure, sources) = kv_against_cores(rs, Field::OpsPerSec, "YCSB operations per second")?;
    let linux = linux_words(rs);
    Some(Fig {
        id: "fig-kv",
        title: "KV throughput against cores".into(),
        caption: format!(
            "The papers' Redis/YCSB macrobenchmark measured on this machine, one chart per YCSB workload: \
                  core 0 runs the virtual network card's driver, every other core a KV server and two load \
                  clients, each with its own network stack (`granule kv`). Dots are YCSB operations per second \
                  (records `kv` of experiment `kv`, field `ops_per_sec`), one series per regime{linux}; each \
                  dot is the median run, and dots that would cover one another are set side by side. Figure 3 of \
                  Peters et al. (2015) and Figure 7 of Elphinstone et al. (2016)."
        ),
        plot: Plot::Lines(figure),
        sources,
    })
}

/// KV throughput per unit of utilisation against cores (seed `002` Figure 4).
pub fn kv_xput(rs: &Records) -> Option<Fig> {
    let (figure, sources) = kv_against_cores(rs, Field::Xput, "operations per second ÷ utilisation")?;
    let has_linux = rs.kv_linux.of(kv::STEP).next().is_some();
    let linux = linux_words(rs);
    Some(Fig {
        id: "fig-kv-xput",
        title: "KV Xput against cores".into(),
        caption: format!(
            "Xput: YCSB operations per second divided by the mean utilisation of the cores (the kernel's idle-loop \
             accounting{proc}), the throughput for a fixed processing cost, measured on this machine (field `xput` \
             of records `kv`{linux_records} of experiment `kv`, the median run of each point){linux}. Figure 4 of \
             Peters et al. (2015).",
            proc = if has_linux { "; /proc/stat on Linux" } else { "" },
            linux_records = if has_linux { " and `kv_linux`" } else { "" },
            linux = if has_linux { String::new() } else { linux }
        ),
        plot: Plot::Lines(figure),
        sources,
    })
}
