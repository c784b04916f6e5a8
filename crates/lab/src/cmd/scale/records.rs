//! The records of `granule scale`: one `scale` per measured point, and with
//! `--fit` one `lock_hold` per profiled run (the fit's own records are
//! `granule model fit`'s).

use granule_sync::profile::SiteRecord;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

use super::PingSpec;
use crate::output::Record;

/// `scale`: one (regime, cores, delay, run) point: the round trips of all
/// pairs over the window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
// A blank for the report's hand-made test records (`suite::records::testing`).
#[cfg_attr(test, derive(Default))]
pub struct ScaleRecord {
    /// The regime.
    pub regime: Cow<'static, str>,
    /// Cores, one ping-pong pair each.
    pub cores: usize,
    /// Mean of the servers' exponential delay, cycles.
    pub delay_cycles: u64,
    /// Repetition, from 1.
    pub run: usize,
    /// Round trips of all pairs per second.
    pub round_trips_per_sec: f64,
    /// The same per core.
    pub per_core_per_sec: f64,
    /// Mean busy fraction of the cores over the window.
    pub utilisation: f64,
    /// Busy fraction of each core, space-separated.
    pub utilisation_per_core: String,
    /// `round_trips_per_sec / utilisation` (0 when idle).
    pub xput: f64,
    /// Length of the window, seconds.
    pub window_s: f64,
    /// With `--lock-stats` only: the regime was built with the lock profiler.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub profiled: Option<bool>,
    /// With `--lock-stats` only: what the profile saw over the whole run.
    #[serde(flatten)]
    pub profile: Option<WindowProfile>,
    /// Where it ran when not on the hosted platform (`granule metal run`;
    /// see `IpcRecord::platform`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<Cow<'static, str>>,
}

impl Record for ScaleRecord {
    const KIND: &'static str = "scale";
}

/// What a profiled point's lock profile saw over the whole run (warm-up
/// included), summed over its sites.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WindowProfile {
    /// Lock acquisitions.
    pub lock_acquisitions: u64,
    /// Of which found the lock held.
    pub contended: u64,
    /// Hardware transactions started (rtm).
    pub transactions: u64,
    /// Of which aborted.
    pub aborts: u64,
    /// Aborts per transaction; null without transactions.
    pub abort_rate: Option<f64>,
    /// Critical sections that took the fallback lock (rtm).
    pub fallbacks: u64,
}

impl WindowProfile {
    /// The sums over `sites`.
    pub fn of(sites: &[SiteRecord]) -> Self {
        let sum = |f: fn(&SiteRecord) -> u64| sites.iter().map(f).sum::<u64>();
        let (commits, aborts) = (sum(|s| s.commits), sum(SiteRecord::aborts));
        let transactions = commits + aborts;
        Self {
            lock_acquisitions: sum(|s| s.acquisitions),
            contended: sum(|s| s.contended),
            transactions,
            aborts,
            abort_rate: (transactions > 0).then(|| aborts as f64 / transactions as f64),
            fallbacks: sum(|s| s.fallbacks),
        }
    }
}

/// `lock_hold`: a big-lock regime's average hold time per acquisition, over
/// every site of the lock, from a separate short profiled run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LockHold<'a> {
    /// The regime.
    pub regime: Cow<'a, str>,
    /// Cores of the run.
    pub cores: usize,
    /// Mean server delay, cycles.
    pub delay_cycles: f64,
    /// Cycles held per completed hold; null if none completed.
    pub hold_cycles: Option<f64>,
    /// Acquisitions.
    pub acquisitions: u64,
    /// Of which contended.
    pub contended: u64,
    /// Length of the run's window, seconds.
    pub window_s: f64,
}

impl Record for LockHold<'_> {
    const KIND: &'static str = "lock_hold";
}

impl<'a> LockHold<'a> {
    /// The record of a profiled run of `regime` on `spec` whose lock
    /// profile is `sites`.
    pub fn new(regime: &'a str, spec: &PingSpec, sites: &[SiteRecord]) -> Self {
        let holds: u64 = sites.iter().map(|s| s.holds).sum();
        let held: u64 = sites.iter().map(|s| s.hold_total).sum();
        Self {
            regime: Cow::Borrowed(regime),
            cores: spec.cores,
            delay_cycles: spec.delay_mean_cycles,
            hold_cycles: (holds > 0).then(|| held as f64 / holds as f64),
            acquisitions: sites.iter().map(|s| s.acquisitions).sum(),
            contended: sites.iter().map(|s| s.contended).sum(),
            window_s: spec.window.as_secs_f64(),
        }
    }
}
