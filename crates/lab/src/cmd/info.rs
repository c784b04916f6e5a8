//! `granule info`: this machine's physical limits.
//!
//! Prints the machine record (CPU, cores, TSC frequency, what RTM detection
//! found), then what one uncontended atomic instruction costs
//! (`atomic_cost` records) and the one-way core-to-core cache-line latency
//! for each ordered pair of CPUs (`core_latency` records). These are the
//! floors under every lock measurement: see [`crate::limits`].

use std::borrow::Cow;
use std::time::Duration;

use anyhow::ensure;
use serde::{Deserialize, Serialize};

use crate::limits::{self, AtomicCost, CoreLatency, LatencyConfig};
use crate::machine::Machine;
use crate::output::{self, Record};
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

/// `atomic_cost`: what one uncontended atomic instruction costs on one
/// pinned thread (median over `--samples`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AtomicCostRecord {
    /// The instruction, as written in assembly.
    pub instruction: Cow<'static, str>,
    /// Cycle-counter ticks per instruction; null if it could not be measured.
    pub cycles: Option<f64>,
    /// The same in nanoseconds, to 0.01 ns; null with `cycles`.
    pub ns: Option<f64>,
    /// Anything worth knowing about the measurement, or why it failed.
    pub note: String,
}

impl Record for AtomicCostRecord {
    const KIND: &'static str = "atomic_cost";
}

impl AtomicCostRecord {
    /// The record of `c`, with nanoseconds from `ns_per_cycle`.
    fn new(c: &AtomicCost, ns_per_cycle: f64) -> Self {
        let (cycles, note) = match &c.cycles {
            Ok(cy) => (Some(*cy), c.note.clone()),
            Err(why) => (None, why.clone()),
        };
        let ns = cycles.map(|cy| (cy * ns_per_cycle * 100.0).round() / 100.0);
        Self { instruction: Cow::Borrowed(c.instruction), cycles, ns, note }
    }
}

/// `core_latency`: the one-way cache-line latency from one CPU to another.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CoreLatencyRecord {
    /// OS id of the CPU that starts each round trip.
    pub from: usize,
    /// OS id of the CPU that answers.
    pub to: usize,
    /// Median over samples of half a round trip, cycle-counter ticks.
    pub one_way_cycles: f64,
    /// The same in nanoseconds, to 0.1 ns.
    pub one_way_ns: f64,
    /// Smallest sample, cycle-counter ticks.
    pub min_cycles: f64,
    /// Samples taken.
    pub samples: usize,
}

impl Record for CoreLatencyRecord {
    const KIND: &'static str = "core_latency";
}

impl CoreLatencyRecord {
    /// The record of `l`, with nanoseconds from `ns_per_cycle`.
    fn new(l: &CoreLatency, ns_per_cycle: f64) -> Self {
        Self {
            from: l.from,
            to: l.to,
            one_way_cycles: l.one_way_cycles,
            one_way_ns: (l.one_way_cycles * ns_per_cycle * 10.0).round() / 10.0,
            min_cycles: l.min_cycles,
            samples: l.samples,
        }
    }
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
    records.extend(costs.iter().map(|c| AtomicCostRecord::new(c, ns_per_cycle).to_map()));

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
        records.extend(lat.iter().map(|l| CoreLatencyRecord::new(l, ns_per_cycle).to_map()));
    } else if args.latency_cpus != 0 {
        eprintln!("note: fewer than two usable CPUs: no core-to-core latency to measure");
    }

    output::emit(args.common.format, &records, "")?;
    Ok(())
}
