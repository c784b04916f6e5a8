//! `granule kv`: the seeds' Redis/YCSB macrobenchmark on the kernel (seed
//! `002` §4.3 and Figures 3–4, seed `001` §5.2 and Figures 6–7), beside real
//! Redis on Linux (`--linux`).
//!
//! For every (run, workload, cores, regime) a fresh machine runs the KV
//! system of `granule_user::kv`: the driver on core 0, a KV server with its
//! network stack on every other core, two YCSB load clients with their own
//! stacks beside each server. The clients load `--records` records, warm up
//! `--warmup` seconds, and are measured over `--seconds` (or until each ran
//! its share of `--ops`). Per point (record `kv`):
//!
//! * `ops_per_sec` (YCSB operations), `requests_per_sec` (Redis commands);
//! * latency percentiles of the operations (an HDR histogram);
//! * per-core utilisation from the idle loop, and `xput` = throughput /
//!   average utilisation (seed `002` Figure 4);
//! * `entries_per_request`: kernel entries (system calls, interrupts, IPIs)
//!   per Redis command, measured;
//! * `user_cycles_per_entry_core0` / `_servers`: user time between kernel
//!   entries (seed `001` §5.2.2 reports 800 cycles on core 0 and 1,600 on the
//!   server cores);
//! * `kernel_cycles_per_request` (busy minus user cycles, per command)
//!   beside `entry_cost_cycles` (half a `granule ipc` round trip of the same
//!   regime, measured in the same invocation) × entries per request, and their
//!   ratio `kernel_over_entries`.
//!
//! `--lock-stats` runs the lock regimes with the profiler compiled in and adds
//! their lock acquisitions, contention and (rtm) abort rate to each record,
//! and prints the FreeBSD table of each point.

pub(crate) mod cpu_time;
pub(crate) mod linux;
mod measure;
pub(crate) mod record;

use std::borrow::Cow;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args as ClapArgs;
use granule_user::kv::{KvConfig, Mode};
use granule_user::ycsb::Workload;

pub use self::measure::{measure, KvSpec};
use self::record::{KvLinuxRecord, KvRecord, LinuxSkipped};
use super::ipc::PingSpec;
use crate::bounds;
use crate::machine::Machine;
use crate::output::{emit, Format, Record};
use crate::progress;
use crate::regimes::{runnable, selected, RegimeSkipped};

/// Options of `granule kv`.
#[derive(Clone, Debug, ClapArgs)]
pub struct Args {
    #[command(flatten)]
    pub common: super::Common,
    /// Regimes to measure (comma-separated), or all (`none` cannot run this
    /// benchmark: its cores share the driver's notifications).
    #[arg(long, value_delimiter = ',', default_value = "all", value_parser = crate::regimes::parser(crate::regimes::REGIMES, &["none"], true))]
    pub regimes: Vec<String>,
    /// Core counts: a range `1..N` (inclusive) or a list `1,2`; default
    /// 1..(CPUs of this machine).
    #[arg(long, value_parser = bounds::counts(granule_hosted::granule_kernel::abi::MAX_CORES))]
    pub cores: Option<bounds::Counts>,
    /// YCSB workloads (comma-separated): a, b, c, d, e, f.
    #[arg(long, value_delimiter = ',', default_value = "a")]
    pub workload: Vec<String>,
    /// YCSB recordcount: records loaded into every server, 1..=10^6 (and
    /// at most what half this machine's available memory holds, at about
    /// 1.5 KiB a record).
    #[arg(long, default_value_t = 32000, value_parser = bounds::int::<u64>(1, MAX_RECORDS))]
    pub records: u64,
    /// Run-phase operations in total (split over the clients), 1..=10^9;
    /// measured until the last client finishes. Exclusive with --seconds.
    #[arg(long, conflicts_with = "seconds", value_parser = bounds::int::<u64>(1, MAX_OPS))]
    pub ops: Option<u64>,
    /// Length of the measured window, in seconds (0 < s ≤ 3600; default 1).
    #[arg(long, value_parser = bounds::seconds())]
    pub seconds: Option<f64>,
    /// Warm-up after loading, in seconds (0 ≤ s ≤ 3600).
    #[arg(long, default_value_t = 0.5, value_parser = bounds::warmup())]
    pub warmup: f64,
    /// Repetitions of every point, 1..=1000.
    #[arg(long, default_value_t = 1, value_parser = bounds::runs::<usize>())]
    pub runs: usize,
    /// Also measure real redis-server on Linux (one per server core, on
    /// loopback, driven by the same YCSB generator over TCP).
    #[arg(long)]
    pub linux: bool,
    /// Compile the lock profiler into the regimes and report its counts.
    #[arg(long)]
    pub lock_stats: bool,
    /// Cycles an idle core spins before it parks its OS thread (default:
    /// the hosted platform's 200000). A parked core costs whoever wakes it a
    /// futex wake-up; 0..=10^12.
    #[arg(long, value_parser = bounds::int::<u64>(0, 1_000_000_000_000))]
    pub idle_spin_cycles: Option<u64>,
}

/// Most records per server.
const MAX_RECORDS: u64 = 1_000_000;
/// Memory one loaded record takes in a server, generously: a key, ten
/// 100-byte fields and the store's own overhead.
const BYTES_PER_RECORD: u64 = 1536;
/// Most operations of a fixed-operation run.
const MAX_OPS: u64 = 1_000_000_000;

/// Parse the workload list.
pub fn workloads(list: &[String]) -> Result<Vec<Workload>> {
    let mut out = Vec::new();
    for w in list {
        let w: Workload = w.trim().parse().map_err(|e| anyhow::anyhow!("{e}"))?;
        if !out.contains(&w) {
            out.push(w);
        }
    }
    if out.is_empty() {
        bail!("--workload needs at least one of a, b, c, d, e, f");
    }
    Ok(out)
}

/// Run `granule kv`.
pub fn run(a: &Args) -> Result<()> {
    let mut wanted = selected(&a.regimes)?;
    let m = Machine::detect();
    let mut records = vec![m.record()];
    if wanted.contains(&"none") {
        wanted.retain(|r| *r != "none");
        let reason = "none is only sound when cores touch disjoint objects; the KV system's cores share the \
                      driver's notifications";
        records.push(RegimeSkipped { regime: Cow::Borrowed("none"), reason: reason.into() }.to_map());
    }
    let regimes = runnable(&wanted, &mut records);
    if regimes.is_empty() && !a.linux {
        bail!("none of the selected regimes can run this benchmark on this machine");
    }
    let cores = match &a.cores {
        Some(c) => c.0.clone(),
        None => (1..=m.cores).collect(),
    };
    if let Some(&n) = cores.iter().find(|&&n| n > m.cores) {
        bail!(
            "{n} cores: this machine has {} CPUs, and the KV system needs a CPU per core (its idle cores spin \
             before they park); use the model and simulator for larger machines",
            m.cores
        );
    }
    let workloads = workloads(&a.workload)?;
    let servers = cores.iter().copied().max().unwrap_or(1) as u64;
    let need = a.records * servers * BYTES_PER_RECORD;
    if let Some(free) = crate::machine::available_memory().filter(|&free| need > free / 2) {
        bail!(
            "--records {} on {servers} server(s) needs about {} MiB, more than half of the {} MiB this machine \
             has available",
            a.records,
            need >> 20,
            free >> 20
        );
    }
    // Both are bounded by their parsers (bounds::seconds, bounds::warmup).
    let window = Duration::from_secs_f64(a.seconds.unwrap_or(1.0));
    let warmup = Duration::from_secs_f64(a.warmup);
    let linux = if a.linux {
        match linux::redis_server() {
            Ok(path) => Some(path),
            Err(why) => {
                eprintln!("granule kv: --linux skipped: {why}");
                records.push(LinuxSkipped { reason: why }.to_map());
                None
            }
        }
    } else {
        None
    };
    let entry_costs = entry_costs(&regimes)?;
    let points = a.runs * workloads.len() * cores.len() * (regimes.len() + linux.is_some() as usize);
    let pb = progress::bar(points as u64, "kv");
    let mut profiles = Vec::new();
    for run in 1..=a.runs {
        for &w in &workloads {
            for &n in &cores {
                let mut config = KvConfig::new(n, Mode::Loopback);
                config.ycsb.workload = w;
                config.ycsb.record_count = a.records;
                config.ycsb.seed = 0x5eed_0000 + run as u64;
                let clients = config.clients() as u64;
                config.ops_per_client = a.ops.map(|ops| ops.div_ceil(clients.max(1)));
                for regime in &regimes {
                    pb.set_message(format!("{regime} {n} cores workload {w}"));
                    let spec = KvSpec {
                        config: config.clone(),
                        warmup,
                        window,
                        deadline: Duration::from_secs(3600),
                        profile: a.lock_stats,
                        idle_spin_cycles: a.idle_spin_cycles,
                    };
                    let r = measure(regime, &spec)
                        .with_context(|| format!("{regime}, {n} cores, workload {w}, run {run}"))?;
                    let cost = entry_costs.iter().find(|(r, _)| r == regime).map(|(_, c)| *c);
                    let rec = KvRecord::new(regime, n, w, run, &r, m.tsc_hz, cost, a.lock_stats);
                    records.push(rec.to_map());
                    if let Some(sites) = &r.profile {
                        profiles.push((format!("{regime} {n} cores workload {w} run {run}"), sites.clone()));
                    }
                    pb.inc(1);
                }
                if let Some(path) = &linux {
                    pb.set_message(format!("linux redis-server {n} cores workload {w}"));
                    let r = linux::measure(path, &config, warmup, window, m.tsc_hz)
                        .with_context(|| format!("linux, {n} cores, workload {w}, run {run}"))?;
                    records.push(KvLinuxRecord { point: r, run }.to_map());
                    pb.inc(1);
                }
            }
        }
    }
    pb.finish_and_clear();
    let mut note = String::new();
    if a.common.format == Format::Table {
        note.push_str(
            "ops: YCSB operations; requests: Redis commands; entries: kernel entries (system calls, interrupts, \
             IPIs); entry_cost_cycles: half a `granule ipc` round trip of the regime, measured in this run.\n",
        );
        for (what, sites) in &profiles {
            note.push_str(&format!("\nlock profile, {what}:\n{}", granule_sync::profile::freebsd_table(sites)));
        }
    }
    emit(a.common.format, &records, &note)?;
    Ok(())
}

/// Half a single-core ping-pong round trip of each regime (the cost of one
/// kernel entry with its context switch), measured now.
fn entry_costs(regimes: &[&'static str]) -> Result<Vec<(&'static str, f64)>> {
    let spec = PingSpec {
        cores: 1,
        delay_mean_cycles: 0.0,
        words: 3,
        warmup: Duration::from_millis(50),
        window: Duration::from_millis(200),
        profile: false,
    };
    let mut out = Vec::new();
    for &r in regimes {
        let res = super::ipc::measure(r, &spec).with_context(|| format!("{r}: the ping-pong entry cost"))?;
        let w = &res.window;
        out.push((r, w.cycles as f64 / w.round_trips.max(1) as f64 / 2.0));
    }
    Ok(out)
}
