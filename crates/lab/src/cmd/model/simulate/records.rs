//! The records of `granule model simulate`: one `topology`, then one
//! `model_simulate` per (lock, cores).

use granule_model::Outcome;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

use crate::output::Record;

/// `topology`: the machine simulated and the distributions used.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TopologyRecord<'a> {
    /// Preset name, `uniform:…` or `this-machine`.
    pub name: Cow<'a, str>,
    /// Its cores.
    pub cores: usize,
    /// Clock rate used for per-second figures, GHz (null if unknown).
    pub ghz: Option<f64>,
    /// Mean core-to-core hand-off latency over all its cores, cycles.
    pub mean_latency_cycles: f64,
    /// The user-delay distribution, e.g. `exp(1000)`.
    pub delay_dist: String,
    /// The critical-section distribution.
    pub service_dist: String,
}

impl Record for TopologyRecord<'_> {
    const KIND: &'static str = "topology";
}

/// `model_simulate`: one (lock, cores) simulation beside the analytic
/// model with the same `s` and `a` and no hand-off. Times are cycles;
/// throughput is critical sections per cycle.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
// A blank for the report's hand-made test records (`suite::records::testing`).
#[cfg_attr(test, derive(Default))]
pub struct SimulateRecord<'a> {
    /// Lock kind as given to `--lock`.
    pub lock: Cow<'a, str>,
    /// Cores.
    pub cores: usize,
    /// Simulated throughput.
    pub throughput: f64,
    /// Half-width of its 95 % batch-means interval (null if unknown).
    pub throughput_ci95: Option<f64>,
    /// Throughput per second (null when the clock rate is unknown).
    pub throughput_per_sec: Option<f64>,
    /// Fraction of time the lock is held or handed over.
    pub lock_utilisation: f64,
    /// Mean cores waiting for or in a critical section.
    pub queue_length: f64,
    /// Mean time from asking for the lock to leaving the critical section.
    pub response_cycles: f64,
    /// Mean hold per acquisition, hand-off included (null if never taken).
    pub mean_hold_cycles: Option<f64>,
    /// Mean hand-off per acquisition (null if never taken).
    pub mean_handoff_cycles: Option<f64>,
    /// The analytic model's throughput, no hand-off.
    pub model_throughput: f64,
    /// `throughput / model_throughput`.
    pub ratio_to_model: f64,
    /// RTM only: transactions committed in the window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commits: Option<u64>,
    /// RTM only: transactions aborted in the window.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub aborts: Option<u64>,
    /// RTM only: critical sections that took the fallback lock.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallbacks: Option<u64>,
}

impl Record for SimulateRecord<'_> {
    const KIND: &'static str = "model_simulate";
}

impl<'a> SimulateRecord<'a> {
    /// The record of `o`, a simulation of `lock` (`rtm` says whether it is
    /// the RTM kind), beside the analytic throughput `model`; per-second
    /// figures with `per_sec` cycles per second.
    pub fn new(lock: &'a str, rtm: bool, o: &Outcome, model: f64, per_sec: Option<f64>) -> Self {
        Self {
            lock: Cow::Borrowed(lock),
            cores: o.cores,
            throughput: o.throughput,
            throughput_ci95: o.throughput_ci95,
            throughput_per_sec: per_sec.map(|f| o.throughput * f),
            lock_utilisation: o.lock_utilisation,
            queue_length: o.queue_length,
            response_cycles: o.response_time,
            mean_hold_cycles: o.mean_hold,
            mean_handoff_cycles: o.mean_handoff,
            model_throughput: model,
            ratio_to_model: o.throughput / model,
            commits: rtm.then_some(o.commits),
            aborts: rtm.then_some(o.aborts),
            fallbacks: rtm.then_some(o.fallbacks),
        }
    }
}
