//! The records of `granule kv`: `kv`, one measured point of the KV
//! macrobenchmark on the kernel; `kv_linux`, one of real Redis on Linux;
//! `linux_skipped` when `--linux` cannot run (and `regime_skipped`, see
//! [`crate::regimes::RegimeSkipped`]).

use granule_user::ycsb::Workload;
use hdrhistogram::Histogram;
use serde::{Deserialize, Serialize};

use super::linux::LinuxPoint;
use super::measure::KvResult;
use crate::output::Record;

/// What every load point reports, on the kernel (`kv`) and on Linux
/// (`kv_linux`), under the same names and units.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
// A blank for the report's hand-made test records (`suite::records::testing`).
#[cfg_attr(test, derive(Default))]
pub struct LoadFigures {
    /// Length of the window, seconds.
    pub window_s: f64,
    /// YCSB operations in the window.
    pub ops: u64,
    /// Operations per second.
    pub ops_per_sec: f64,
    /// Redis commands per second.
    pub requests_per_sec: f64,
    /// Latency percentiles of the operations, microseconds.
    pub latency_p50_us: f64,
    /// See `latency_p50_us`.
    pub latency_p95_us: f64,
    /// See `latency_p50_us`.
    pub latency_p99_us: f64,
    /// See `latency_p50_us`.
    pub latency_p999_us: f64,
    /// Mean busy fraction of the cores.
    pub utilisation: f64,
    /// Busy fraction of each core, space-separated.
    pub utilisation_per_core: String,
    /// Operations per second divided by mean utilisation (seed `002` Fig. 4).
    pub xput: f64,
}

impl LoadFigures {
    /// The figures of `ops` operations and `requests` commands, over a
    /// window of `window_s` seconds (throughput over `ops_window_s`), with
    /// operation latencies `latency` in cycles of `tsc_hz` and per-core busy
    /// fractions `util`.
    pub fn new(
        window_s: f64,
        ops_window_s: f64,
        ops: u64,
        requests: u64,
        latency: &Histogram<u64>,
        tsc_hz: f64,
        util: &[f64],
    ) -> Self {
        let us = |q: f64| latency.value_at_quantile(q) as f64 / tsc_hz * 1e6;
        let utilisation = util.iter().sum::<f64>() / util.len().max(1) as f64;
        let ops_per_sec = ops as f64 / ops_window_s;
        Self {
            window_s,
            ops,
            ops_per_sec,
            requests_per_sec: requests as f64 / ops_window_s,
            latency_p50_us: us(0.5),
            latency_p95_us: us(0.95),
            latency_p99_us: us(0.99),
            latency_p999_us: us(0.999),
            utilisation,
            utilisation_per_core: util.iter().map(|u| format!("{u:.3}")).collect::<Vec<_>>().join(" "),
            xput: if utilisation > 0.0 { ops_per_sec / utilisation } else { 0.0 },
        }
    }
}

/// `kv`: one (regime, cores, workload, run) point on the kernel. Cycles are
/// cycle-counter ticks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
// A blank for the report's hand-made test records (`suite::records::testing`).
#[cfg_attr(test, derive(Default))]
pub struct KvRecord {
    /// The regime.
    pub regime: String,
    /// Cores of the machine.
    pub cores: usize,
    /// YCSB workload.
    pub workload: String,
    /// Repetition.
    pub run: usize,
    /// Throughput, latency, utilisation.
    #[serde(flatten)]
    pub load: LoadFigures,
    /// Kernel entries per Redis command.
    pub entries_per_request: f64,
    /// Kernel entries per YCSB operation.
    pub entries_per_op: f64,
    /// User cycles between kernel entries on core 0 (driver).
    pub user_cycles_per_entry_core0: Option<f64>,
    /// The same on the server cores (mean over cores 1..).
    pub user_cycles_per_entry_servers: Option<f64>,
    /// Busy cycles outside user code (kernel and platform) per command.
    pub kernel_cycles_per_request: f64,
    /// Half a ping-pong round trip of this regime, measured in this run.
    pub entry_cost_cycles: Option<f64>,
    /// `entries_per_request × entry_cost_cycles`.
    pub entries_cost_per_request: Option<f64>,
    /// `kernel_cycles_per_request / entries_cost_per_request`.
    pub kernel_over_entries: Option<f64>,
    /// Idle-loop parks of all cores per Redis command (each one a futex
    /// wake-up for the core that rings it: the hosted platform's cost).
    pub parks_per_request: f64,
    /// Failed operations over the whole run (must be 0).
    pub failed: u64,
    /// Packets dropped over the whole run (must be 0).
    pub dropped: u64,
    /// The regime was built with the lock profiler.
    pub profiled: bool,
    /// Lock acquisitions over the run (profiled).
    pub lock_acquisitions: Option<u64>,
    /// Of which contended (profiled).
    pub contended: Option<u64>,
    /// RTM aborts per transaction (profiled rtm).
    pub abort_rate: Option<f64>,
}

impl KvRecord {
    /// The record of `r`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        regime: &str,
        cores: usize,
        workload: Workload,
        run: usize,
        r: &KvResult,
        tsc_hz: f64,
        entry_cost: Option<f64>,
        profiled: bool,
    ) -> Self {
        let (s0, s1) = (&r.start, &r.end);
        let window = s1.cycles.wrapping_sub(s0.cycles).max(1);
        let ops_window = r.ops_end_cycles.wrapping_sub(s0.cycles).max(1);
        let ops = s1.ops - s0.ops;
        let d = |a: &[u64], b: &[u64]| -> Vec<u64> { a.iter().zip(b).map(|(x, y)| y.saturating_sub(*x)).collect() };
        let idle = d(&s0.idle, &s1.idle);
        let user = d(&s0.user, &s1.user);
        let entries: Vec<u64> =
            d(&s0.syscalls, &s1.syscalls).iter().zip(d(&s0.interrupts, &s1.interrupts)).map(|(a, b)| a + b).collect();
        let util: Vec<f64> = idle.iter().map(|&i| (1.0 - i as f64 / window as f64).clamp(0.0, 1.0)).collect();
        let busy: u64 = idle.iter().map(|&i| window.saturating_sub(i)).sum();
        let kernel = busy.saturating_sub(user.iter().sum());
        let total_entries: u64 = entries.iter().sum();
        let reqs = r.requests.max(1) as f64;
        let per_entry = |c: usize| (entries[c] > 0).then(|| user[c] as f64 / entries[c] as f64);
        let servers: Vec<f64> = (1..entries.len()).filter_map(per_entry).collect();
        let entries_per_request = total_entries as f64 / reqs;
        let kernel_cycles_per_request = kernel as f64 / reqs;
        let entries_cost = entry_cost.map(|c| c * entries_per_request);
        let sum =
            |f: fn(&granule_sync::profile::SiteRecord) -> u64| r.profile.as_ref().map(|s| s.iter().map(f).sum::<u64>());
        let (commits, aborts) = (sum(|s| s.commits), sum(granule_sync::profile::SiteRecord::aborts));
        let transactions = commits.zip(aborts).map(|(c, a)| c + a);
        Self {
            regime: regime.to_string(),
            cores,
            workload: workload.to_string(),
            run,
            load: LoadFigures::new(
                window as f64 / tsc_hz,
                ops_window as f64 / tsc_hz,
                ops,
                r.requests,
                &r.latency,
                tsc_hz,
                &util,
            ),
            entries_per_request,
            entries_per_op: total_entries as f64 / ops.max(1) as f64,
            user_cycles_per_entry_core0: per_entry(0),
            user_cycles_per_entry_servers: (!servers.is_empty())
                .then(|| servers.iter().sum::<f64>() / servers.len() as f64),
            kernel_cycles_per_request,
            entry_cost_cycles: entry_cost,
            entries_cost_per_request: entries_cost,
            kernel_over_entries: entries_cost.filter(|c| *c > 0.0).map(|c| kernel_cycles_per_request / c),
            parks_per_request: d(&s0.parks, &s1.parks).iter().sum::<u64>() as f64 / reqs,
            failed: r.failed,
            dropped: r.dropped,
            profiled: profiled && regime != "none",
            lock_acquisitions: sum(|s| s.acquisitions),
            contended: sum(|s| s.contended),
            abort_rate: transactions.zip(aborts).and_then(|(t, a)| (t > 0).then(|| a as f64 / t as f64)),
        }
    }
}

impl Record for KvRecord {
    const KIND: &'static str = "kv";
}

/// `kv_linux`: one (cores, workload, run) point of real Redis on Linux.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
// A blank for the report's hand-made test records (`suite::records::testing`).
#[cfg_attr(test, derive(Default))]
pub struct KvLinuxRecord {
    /// What it measured.
    #[serde(flatten)]
    pub point: LinuxPoint,
    /// Repetition, from 1.
    pub run: usize,
}

impl Record for KvLinuxRecord {
    const KIND: &'static str = "kv_linux";
}

/// `linux_skipped`: `--linux` was asked for but cannot run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LinuxSkipped {
    /// Why (what is missing).
    pub reason: String,
}

impl Record for LinuxSkipped {
    const KIND: &'static str = "linux_skipped";
}
