//! The records of `granule ipc`: one `ipc` per regime, and with `--lock-stats`
//! one `lock_profile` per acquisition site of each profiled regime.

use granule_sync::profile::SiteRecord;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

use crate::output::Record;

/// `ipc`: one regime's single-core ping-pong round trip over `runs` runs,
/// beside `none`'s and the atomic instructions it executes per system call
/// (see the module documentation of `granule ipc`). Cycles are
/// cycle-counter (TSC) ticks; a field that cannot be computed (no `none`
/// in the run, no counting run, an instruction cost not measured) is null.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
// A blank for the report's hand-made test records (`suite::records::testing`).
#[cfg_attr(test, derive(Default))]
pub struct IpcRecord {
    /// The regime.
    pub regime: Cow<'static, str>,
    /// Built with the lock profiler (its cost included in the figures).
    pub profiled: bool,
    /// Runs measured (each on a fresh machine).
    pub runs: usize,
    /// Message words per call.
    pub words: usize,
    /// Round trip (Call + ReplyRecv), cycles: mean over runs.
    pub round_trip_cycles_mean: f64,
    /// Its standard deviation over runs, cycles.
    pub round_trip_cycles_std: f64,
    /// Its median over runs, cycles.
    pub round_trip_cycles_median: f64,
    /// Its smallest run, cycles.
    pub round_trip_cycles_min: f64,
    /// The mean round trip, nanoseconds.
    pub round_trip_ns_mean: f64,
    /// Its standard deviation, nanoseconds.
    pub round_trip_ns_std: f64,
    /// Mean round trip over `none`'s.
    pub ratio_to_none: Option<f64>,
    /// Half the mean round trip's difference to `none`'s: what one kernel
    /// entry pays for the regime, cycles.
    pub extra_cycles_per_call: Option<f64>,
    /// Uncontended cost of one `xchg`, measured in the same run, cycles.
    pub xchg_cycles: Option<f64>,
    /// `extra_cycles_per_call / xchg_cycles`.
    pub extra_per_xchg: Option<f64>,
    /// Atomic read-modify-writes and transactions per system call.
    pub atomics_per_call: Option<f64>,
    /// How they were obtained: `counted` or `derived` (from the lock
    /// profile).
    pub atomics_source: Option<Cow<'static, str>>,
    /// `xchg` per system call.
    pub xchg_per_call: Option<f64>,
    /// `lock xadd` per system call.
    pub xadd_per_call: Option<f64>,
    /// `lock cmpxchg` per system call.
    pub cmpxchg_per_call: Option<f64>,
    /// `lock cmpxchg16b` per system call.
    pub cmpxchg16b_per_call: Option<f64>,
    /// Hardware transactions per system call.
    pub transactions_per_call: Option<f64>,
    /// What those atomics cost per call uncontended, cycles.
    pub atomic_floor_cycles: Option<f64>,
    /// `1.5 × atomic_floor_cycles`, cycles.
    pub target_max_extra_cycles: Option<f64>,
    /// `extra_cycles_per_call ≤ target_max_extra_cycles`.
    pub meets_target: Option<bool>,
    /// Where it ran when not on the hosted platform: `qemu-tcg` (QEMU's
    /// software emulation, whose timings mean nothing), `hypervisor` or
    /// `bare-metal` (`granule metal run`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub platform: Option<Cow<'static, str>>,
}

impl Record for IpcRecord {
    const KIND: &'static str = "ipc";
}

/// `lock_profile`: one acquisition site of a profiled regime's lock over
/// its last run (times in cycles).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LockProfileRecord<'a> {
    /// The regime.
    pub regime: Cow<'a, str>,
    /// What the profiler recorded at the site.
    #[serde(flatten)]
    pub site: Cow<'a, SiteRecord>,
}

impl Record for LockProfileRecord<'_> {
    const KIND: &'static str = "lock_profile";
}
