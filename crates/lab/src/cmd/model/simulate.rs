//! `granule model simulate`: the discrete-event simulator for a lock kind on
//! a topology, for a range of cores.
//!
//! Topologies: the seeds' presets (`x86-2s`, `arm-quad`), `uniform:N:L`, and
//! `this-machine`, whose core-to-core latency matrix is either read from
//! `--topology-input` (the `core_latency` records of `granule info --format
//! json`) or, without it, measured afresh with `granule info`'s method at
//! reduced effort (5 samples of 200 round trips per ordered pair).
//!
//! One `topology` record, then one `model_simulate` record per (lock, cores):
//! throughput (critical sections per cycle, with its 95 % batch-means
//! interval, and per second where the clock rate is known), lock utilisation,
//! queue length, response time, mean hold and hand-off, and beside them the
//! analytic model's throughput for the same `s` and `a` with no hand-off
//! (`model_throughput`, exact for the simulated service law) — the gap is
//! what the topology and the lock kind cost.

pub(crate) mod records;

use std::borrow::Cow;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args as ClapArgs;
use granule_model::{simulate, Config, Dist, LockKind, Topology};

use self::records::{SimulateRecord, TopologyRecord};
use super::predict::solve;
use super::Law;
use crate::bounds::Counts;
use crate::bounds::MAX_CYCLES;
use crate::fields::Fields;
use crate::input;
use crate::limits::{self, LatencyConfig};
use crate::machine::Machine;
use crate::output::{emit, Record};
use crate::pin;
use crate::plot::{Chart, Figure, Series};

/// Options of `granule model simulate`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub common: crate::cmd::Common,
    /// Topology: x86-2s (seed 001's 2 × 14 × 2 Xeon), arm-quad (its
    /// Cortex-A9), uniform:CORES:LATENCY, or this-machine.
    #[arg(long, default_value = "x86-2s")]
    pub topology: String,
    /// For this-machine: `granule info --format json` output to take the
    /// latency matrix from (default: measure it now).
    #[arg(long)]
    pub topology_input: Option<PathBuf>,
    /// Lock kinds (comma-separated): clh (or mcs), ticket, fine, rtm.
    #[arg(long, value_delimiter = ',', default_value = "clh")]
    pub lock: Vec<String>,
    /// Mean critical section (lock service) time s, in cycles, without the
    /// hand-off (0 < s ≤ 10^12).
    #[arg(long, value_parser = crate::bounds::positive_cycles())]
    pub service: f64,
    /// Mean user delay a between a core's critical sections, in cycles
    /// (0 ≤ a ≤ 10^12).
    #[arg(long, value_parser = crate::bounds::cycles())]
    pub delay: f64,
    /// Core counts: a range `1..N` or a list (default: every core of the
    /// topology).
    #[arg(long, value_parser = crate::bounds::counts(super::MAX_MODEL_CORES))]
    pub cores: Option<Counts>,
    /// Seed of the simulation's random numbers (any 64-bit unsigned integer).
    #[arg(long, default_value_t = 1, value_parser = crate::bounds::any_u64)]
    pub seed: u64,
    /// Critical sections measured per point (10 % more are discarded
    /// first), 1000..=10^8.
    #[arg(long, default_value_t = 100_000, value_parser = crate::bounds::int::<u64>(1000, super::MAX_COMPLETIONS))]
    pub completions: u64,
    /// Distribution of the user delay: exp, const, or empirical:FILE (one
    /// number per line or comma-separated, in cycles; its mean replaces
    /// --delay).
    #[arg(long, default_value = "exp")]
    pub delay_dist: String,
    /// Distribution of the critical section: const or exp.
    #[arg(long, value_enum, default_value_t = Law::Const)]
    pub service_dist: Law,
    /// RTM: probability that a transaction aborts by itself (0 ≤ p ≤ 1).
    #[arg(long, default_value_t = 0.05, value_parser = crate::bounds::real(crate::bounds::Low::Closed(0.0), 1.0, "a probability"))]
    pub abort: f64,
    /// RTM: aborts tolerated before taking the fallback lock, 0..=1000.
    #[arg(long, default_value_t = 3, value_parser = crate::bounds::int::<u32>(0, 1000))]
    pub retries: u32,
    /// Clock rate in GHz for throughput per second, 0 < f ≤ 100 (default:
    /// the topology's, if known).
    #[arg(long, value_parser = crate::bounds::ghz())]
    pub ghz: Option<f64>,
    /// Write an SVG plot of throughput against cores to this file.
    #[arg(long)]
    pub plot: Option<PathBuf>,
}

/// Samples of an empirical distribution: numbers of cycles in [0, 10^12]
/// separated by newlines, commas or spaces; `#` starts a comment. `source`
/// names the text in errors, with the line.
pub fn parse_samples(source: &str, text: &str) -> Result<Vec<f64>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("");
        for tok in line.split(|c: char| c == ',' || c.is_whitespace()).filter(|t| !t.is_empty()) {
            match tok.parse::<f64>() {
                Ok(x) if x.is_finite() && (0.0..=MAX_CYCLES).contains(&x) => out.push(x),
                _ => bail!("{source}:{}: `{tok}` is not a number of cycles in [0, {MAX_CYCLES}]", i + 1),
            }
        }
    }
    Ok(out)
}

/// The user-delay distribution named by `--delay-dist`.
fn delay_dist(spec: &str, mean: f64) -> Result<Dist> {
    Ok(match spec {
        "exp" => Dist::exponential(mean)?,
        "const" => Dist::constant(mean)?,
        _ => match spec.strip_prefix("empirical:") {
            Some(path) => {
                let samples = input::read_text(std::path::Path::new(path)).and_then(|text| parse_samples(path, &text));
                Dist::empirical(samples.with_context(|| format!("--delay-dist {spec}"))?)
                    .with_context(|| format!("--delay-dist {spec}"))?
            }
            None => bail!("unknown --delay-dist `{spec}`: exp, const or empirical:FILE"),
        },
    })
}

/// Largest CPU id a latency record may name.
const MAX_CPU_ID: usize = 65_535;

/// This machine's topology: from `granule info` records in `input`, or
/// measured now.
pub fn this_machine(input: Option<&PathBuf>, tsc_ghz: f64) -> Result<Topology> {
    let (pairs, ghz): (Vec<(usize, usize, f64)>, f64) = match input {
        Some(path) => {
            let recs = input::read(path)?;
            let cpu = 0..=MAX_CPU_ID;
            let mut pairs = Vec::new();
            for r in recs.iter().filter(|r| r.kind() == "core_latency") {
                let from = r.index("from", cpu.clone())?;
                let to = r.index("to", cpu.clone())?;
                let latency = r.real("one_way_cycles", 0.0..=MAX_CYCLES)?;
                if let (Some(from), Some(to), Some(latency)) = (from, to, latency) {
                    pairs.push((from, to, latency));
                }
            }
            let ghz = match recs.iter().find(|r| r.kind() == "machine") {
                Some(m) => m.real("tsc_ghz", crate::bounds::GHZ)?,
                None => None,
            };
            (pairs, ghz.unwrap_or(tsc_ghz))
        }
        None => {
            let cfg = LatencyConfig { samples: 5, round_trips: 200, pair_budget: Duration::from_secs(1) };
            let lat = limits::core_latency(&pin::cpus(), &cfg, || {});
            (lat.iter().map(|l| (l.from, l.to, l.one_way_cycles)).collect(), tsc_ghz)
        }
    };
    if pairs.is_empty() {
        bail!("this-machine: no core-to-core latency (fewer than two CPUs, or no core_latency records in the input)");
    }
    Ok(Topology::from_pairs("this-machine", &pairs, Some(ghz))?)
}

/// Run `granule model simulate`.
pub fn run(a: &Args) -> Result<()> {
    // --service, --delay, --completions, --abort, --retries and --ghz are
    // bounded by their parsers.
    let (s, d) = (a.service, a.delay);
    let machine = Machine::detect();
    let topo = match a.topology.as_str() {
        "this-machine" => this_machine(a.topology_input.as_ref(), machine.tsc_hz / 1e9)?,
        name => Topology::preset(name)?,
    };
    let cores = match &a.cores {
        Some(c) => c.0.clone(),
        None => (1..=topo.cores()).collect(),
    };
    if let Some(&n) = cores.iter().find(|&&n| n > topo.cores()) {
        bail!("{n} cores: topology {} has {}", topo.name(), topo.cores());
    }
    let locks: Vec<(String, LockKind)> = a
        .lock
        .iter()
        .map(|l| Ok((l.trim().to_string(), LockKind::parse(l.trim(), a.abort, a.retries)?)))
        .collect::<Result<_>>()?;
    let think = delay_dist(&a.delay_dist, d)?;
    let service = Dist::of_law(a.service_dist.into(), s)?;
    let ghz = a.ghz.or(topo.ghz());
    let per_sec = ghz.map(|g| g * 1e9);

    let mut records = vec![machine.record()];
    let t = TopologyRecord {
        name: Cow::Borrowed(topo.name()),
        cores: topo.cores(),
        ghz,
        mean_latency_cycles: topo.mean_latency(topo.cores()),
        delay_dist: think.describe(),
        service_dist: service.describe(),
    };
    records.push(t.to_map());
    let mut chart = Chart {
        title: format!("simulated on {}: s = {s}, a = {}", topo.name(), think.mean()),
        x_label: "cores".into(),
        y_label: if per_sec.is_some() { "critical sections per second" } else { "critical sections per cycle" }.into(),
        series: Vec::new(),
    };
    let unit = per_sec.unwrap_or(1.0);
    let mut model_line = Vec::new();
    for (i, (name, lock)) in locks.iter().enumerate() {
        let mut line = Vec::new();
        for &n in &cores {
            let mut cfg = Config::new(n, think.clone(), service.clone(), *lock);
            cfg.completions = a.completions;
            cfg.warmup = a.completions / 10;
            cfg.seed = a.seed;
            let o = simulate(&cfg, &topo).with_context(|| format!("{name}, {n} cores"))?;
            let analytic = solve(n, s, think.mean(), a.service_dist.into())?.throughput;
            let rtm = matches!(lock, LockKind::Rtm { .. });
            records.push(SimulateRecord::new(name, rtm, &o, analytic, per_sec).to_map());
            line.push((n as f64, o.throughput * unit));
            if i == 0 {
                model_line.push((n as f64, analytic * unit));
            }
        }
        chart.series.push(Series { style: 0, label: name.clone(), points: line, line: true, colour: i });
    }
    chart.series.push(Series {
        style: 0,
        label: "model, no hand-off".into(),
        points: model_line,
        line: true,
        colour: locks.len(),
    });
    if let Some(path) = &a.plot {
        Figure { charts: vec![chart] }.write(path)?;
    }
    emit(a.common.format, &records, "")?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_parse_from_lines_commas_and_comments() {
        assert_eq!(parse_samples("f", "# delays\n1, 2 3\n\n4.5 # last\n").unwrap(), [1.0, 2.0, 3.0, 4.5]);
        assert_eq!(
            parse_samples("f", "1\n\n1 two").unwrap_err().to_string(),
            "f:3: `two` is not a number of cycles in [0, 1000000000000]"
        );
        assert!(parse_samples("f", "NaN").is_err());
        assert!(parse_samples("f", "-1").is_err());
        assert!(delay_dist("weibull", 1.0).is_err());
        assert_eq!(delay_dist("const", 7.0).unwrap(), Dist::Constant(7.0));
    }
}
