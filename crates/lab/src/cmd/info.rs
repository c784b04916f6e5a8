//! `granule info`: this machine's physical limits.
//!
//! Prints the machine record (CPU, cores, TSC frequency, what RTM detection
//! found), then what one uncontended atomic instruction costs
//! (`atomic_cost` records) and the one-way core-to-core cache-line latency
//! for each ordered pair of CPUs (`core_latency` records). These are the
//! floors under every lock measurement: see [`crate::limits`].

use std::time::Duration;

use anyhow::ensure;
use serde_json::{Map, Value};

use crate::limits::{self, AtomicCost, CoreLatency, LatencyConfig};
use crate::machine::Machine;
use crate::output::{self, record};
use crate::{pin, progress};

/// Options of `granule info`.
#[derive(Clone, Debug, clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,

    /// Timed runs per measurement (1..=10000); the median is reported.
    #[arg(long, default_value_t = 15, value_parser = crate::bounds::int::<usize>(1, 10_000))]
    pub samples: usize,

    /// Round trips per core-to-core latency sample (1..=10^8).
    #[arg(long, default_value_t = 1000, value_parser = crate::bounds::int::<u64>(1, 100_000_000))]
    pub round_trips: u64,

    /// Measure latency between at most this many CPUs (n CPUs give n(n-1)
    /// ordered pairs); 0 skips the latency matrix; at most 256.
    #[arg(long, default_value_t = 8, value_parser = crate::bounds::int::<usize>(0, 256))]
    pub latency_cpus: usize,

    /// Give up on one CPU pair after this many seconds (0 < s ≤ 3600).
    #[arg(long, default_value_t = 2.0, value_parser = crate::bounds::seconds())]
    pub pair_budget: f64,
}

fn cost_record(c: &AtomicCost, ns_per_cycle: f64) -> Map<String, Value> {
    let mut r = record("atomic_cost");
    r.insert("instruction".into(), c.instruction.into());
    match &c.cycles {
        Ok(cy) => {
            r.insert("cycles".into(), (*cy).into());
            r.insert("ns".into(), ((cy * ns_per_cycle * 100.0).round() / 100.0).into());
            r.insert("note".into(), c.note.clone().into());
        }
        Err(why) => {
            r.insert("cycles".into(), Value::Null);
            r.insert("ns".into(), Value::Null);
            r.insert("note".into(), why.clone().into());
        }
    }
    r
}

fn latency_record(l: &CoreLatency, ns_per_cycle: f64) -> Map<String, Value> {
    let mut r = record("core_latency");
    r.insert("from".into(), l.from.into());
    r.insert("to".into(), l.to.into());
    r.insert("one_way_cycles".into(), l.one_way_cycles.into());
    r.insert("one_way_ns".into(), ((l.one_way_cycles * ns_per_cycle * 10.0).round() / 10.0).into());
    r.insert("min_cycles".into(), l.min_cycles.into());
    r.insert("samples".into(), l.samples.into());
    r
}

/// Run `granule info`.
pub fn run(args: &Args) -> anyhow::Result<()> {
    ensure!(args.samples >= 1, "--samples must be at least 1");
    ensure!(args.round_trips >= 1, "--round-trips must be at least 1");
    ensure!(
        args.pair_budget.is_finite() && args.pair_budget > 0.0,
        "--pair-budget must be a positive number of seconds"
    );

    let machine = Machine::detect();
    let ns_per_cycle = machine.ns_per_cycle();
    let mut records = vec![machine.record()];

    // Atomic costs on one pinned thread (the first CPU).
    let costs = pin::run_pinned(1, |_| limits::atomic_costs(args.samples)).pop().unwrap_or_default();
    records.extend(costs.iter().map(|c| cost_record(c, ns_per_cycle)));

    let cpus = pin::cpus();
    let cpus = &cpus[..cpus.len().min(args.latency_cpus)];
    if cpus.len() >= 2 {
        let cfg = LatencyConfig {
            samples: args.samples,
            round_trips: args.round_trips,
            pair_budget: Duration::from_secs_f64(args.pair_budget),
        };
        let pairs = cpus.len() * (cpus.len() - 1);
        let bar = progress::bar(pairs as u64, "latency");
        let lat = limits::core_latency(cpus, &cfg, || bar.inc(1));
        bar.finish_and_clear();
        if lat.len() < pairs {
            eprintln!("note: {} of {pairs} CPU pairs ran out of time and are not reported", pairs - lat.len());
        }
        records.extend(lat.iter().map(|l| latency_record(l, ns_per_cycle)));
    } else if args.latency_cpus != 0 {
        eprintln!("note: fewer than two usable CPUs: no core-to-core latency to measure");
    }

    output::emit(args.common.format, &records, "")?;
    Ok(())
}
