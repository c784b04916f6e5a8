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

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args as ClapArgs;
use granule_model::{simulate, Config, Dist, LockKind, Topology};

use super::fit::read_records;
use super::predict::solve;
use super::{model_cores, non_negative, positive, put, put_scaled, Law};
use crate::limits::{self, LatencyConfig};
use crate::machine::Machine;
use crate::output::{emit, record};
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
    /// hand-off.
    #[arg(long)]
    pub service: f64,
    /// Mean user delay a between a core's critical sections, in cycles.
    #[arg(long)]
    pub delay: f64,
    /// Core counts: a range `1..N` or a list (default: every core of the
    /// topology).
    #[arg(long)]
    pub cores: Option<String>,
    /// Seed of the simulation's random numbers.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Critical sections measured per point (10 % more are discarded first).
    #[arg(long, default_value_t = 100_000)]
    pub completions: u64,
    /// Distribution of the user delay: exp, const, or empirical:FILE (one
    /// number per line or comma-separated, in cycles; its mean replaces
    /// --delay).
    #[arg(long, default_value = "exp")]
    pub delay_dist: String,
    /// Distribution of the critical section: const or exp.
    #[arg(long, value_enum, default_value_t = Law::Const)]
    pub service_dist: Law,
    /// RTM: probability that a transaction aborts by itself.
    #[arg(long, default_value_t = 0.05)]
    pub abort: f64,
    /// RTM: aborts tolerated before taking the fallback lock.
    #[arg(long, default_value_t = 3)]
    pub retries: u32,
    /// Clock rate in GHz for throughput per second (default: the
    /// topology's, if known).
    #[arg(long)]
    pub ghz: Option<f64>,
    /// Write an SVG plot of throughput against cores to this file.
    #[arg(long)]
    pub plot: Option<PathBuf>,
}

/// Samples of an empirical distribution: numbers separated by newlines,
/// commas or spaces; `#` starts a comment.
pub fn parse_samples(text: &str) -> Result<Vec<f64>> {
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or("");
        for tok in line.split(|c: char| c == ',' || c.is_whitespace()).filter(|t| !t.is_empty()) {
            let x: f64 = tok.parse().with_context(|| format!("`{tok}` is not a number"))?;
            out.push(x);
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
                let text = std::fs::read_to_string(path).with_context(|| format!("reading {path}"))?;
                Dist::empirical(parse_samples(&text).with_context(|| format!("parsing {path}"))?)?
            }
            None => bail!("unknown --delay-dist `{spec}`: exp, const or empirical:FILE"),
        },
    })
}

/// This machine's topology: from `granule info` records in `input`, or
/// measured now.
pub fn this_machine(input: Option<&PathBuf>, tsc_ghz: f64) -> Result<Topology> {
    let (pairs, ghz): (Vec<(usize, usize, f64)>, f64) = match input {
        Some(path) => {
            let text = std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
            let recs = read_records(&text)?;
            let field = |r: &serde_json::Map<String, serde_json::Value>, k: &str| r.get(k).and_then(|v| v.as_f64());
            let pairs = recs
                .iter()
                .filter(|r| r.get("record").and_then(|v| v.as_str()) == Some("core_latency"))
                .filter_map(|r| {
                    Some((field(r, "from")? as usize, field(r, "to")? as usize, field(r, "one_way_cycles")?))
                })
                .collect();
            let ghz = recs
                .iter()
                .find(|r| r.get("record").and_then(|v| v.as_str()) == Some("machine"))
                .and_then(|m| field(m, "tsc_ghz"))
                .unwrap_or(tsc_ghz);
            (pairs, ghz)
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
    let s = positive("service", a.service)?;
    let d = non_negative("delay", a.delay)?;
    if a.completions < 1000 {
        bail!("--completions must be at least 1000");
    }
    let machine = Machine::detect();
    let topo = match a.topology.as_str() {
        "this-machine" => this_machine(a.topology_input.as_ref(), machine.tsc_hz / 1e9)?,
        name => Topology::preset(name)?,
    };
    let cores = match &a.cores {
        Some(c) => model_cores(c)?,
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
    let ghz = a.ghz.map(|g| positive("ghz", g)).transpose()?.or(topo.ghz());
    let per_sec = ghz.map(|g| g * 1e9);

    let mut records = vec![machine.record()];
    let mut t = record("topology");
    put(&mut t, "name", topo.name());
    put(&mut t, "cores", topo.cores());
    put(&mut t, "ghz", ghz);
    put(&mut t, "mean_latency_cycles", topo.mean_latency(topo.cores()));
    put(&mut t, "delay_dist", think.describe());
    put(&mut t, "service_dist", service.describe());
    records.push(t);
    let mut chart = Chart {
        title: format!("simulated on {}: s = {s}, a = {}", topo.name(), think.mean()),
        x_label: "cores".into(),
        y_label: if per_sec.is_some() { "critical sections / s" } else { "critical sections / cycle" }.into(),
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
            let mut r = record("model_simulate");
            put(&mut r, "lock", name.as_str());
            put(&mut r, "cores", n);
            put(&mut r, "throughput", o.throughput);
            put(&mut r, "throughput_ci95", o.throughput_ci95);
            put_scaled(&mut r, "throughput_per_sec", Some(o.throughput), per_sec);
            put(&mut r, "lock_utilisation", o.lock_utilisation);
            put(&mut r, "queue_length", o.queue_length);
            put(&mut r, "response_cycles", o.response_time);
            put(&mut r, "mean_hold_cycles", o.mean_hold);
            put(&mut r, "mean_handoff_cycles", o.mean_handoff);
            put(&mut r, "model_throughput", analytic);
            put(&mut r, "ratio_to_model", o.throughput / analytic);
            if matches!(lock, LockKind::Rtm { .. }) {
                put(&mut r, "commits", o.commits);
                put(&mut r, "aborts", o.aborts);
                put(&mut r, "fallbacks", o.fallbacks);
            }
            records.push(r);
            line.push((n as f64, o.throughput * unit));
            if i == 0 {
                model_line.push((n as f64, analytic * unit));
            }
        }
        chart.series.push(Series { label: name.clone(), points: line, line: true, colour: i });
    }
    chart.series.push(Series {
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
        assert_eq!(parse_samples("# delays\n1, 2 3\n\n4.5 # last\n").unwrap(), [1.0, 2.0, 3.0, 4.5]);
        assert!(parse_samples("1 two").is_err());
        assert!(delay_dist("weibull", 1.0).is_err());
        assert_eq!(delay_dist("const", 7.0).unwrap(), Dist::Constant(7.0));
    }
}
