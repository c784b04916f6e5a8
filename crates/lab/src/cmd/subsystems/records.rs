//! The records of `granule subsystems`: one `subsystems` per (regime,
//! policy, cores), and one `subsystem_lock` per lock acquisition site of
//! each (the seed's Tables 1–3).

use granule_sync::profile::SiteRecord;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

use crate::output::Record;

/// `subsystems`: the build load's throughput under one regime and policy,
/// over `runs` runs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SubsystemsRecord {
    /// The kernel regime.
    pub regime: Cow<'static, str>,
    /// The subsystems' locking policy.
    pub policy: Cow<'static, str>,
    /// Cores with workers.
    pub cores: usize,
    /// Workers per core.
    pub workers: usize,
    /// Runs measured (each on a fresh machine).
    pub runs: usize,
    /// Jobs completed per second (all workers): mean over runs.
    pub jobs_per_sec_mean: f64,
    /// Its standard deviation over runs.
    pub jobs_per_sec_std: f64,
    /// Its median over runs.
    pub jobs_per_sec_median: f64,
    /// Mean jobs per second over `giant`'s under the same regime and cores
    /// (null without a `giant` run).
    pub ratio_to_giant: Option<f64>,
    /// Subsystem calls per second (all workers): mean over runs.
    pub calls_per_sec_mean: f64,
    /// Log messages the reader took, last run.
    pub klog_read: u64,
    /// Log messages dropped because the ring was full, last run.
    pub klog_dropped: u64,
    /// Calls that failed (a full log aside), all runs; 0 when correct.
    pub errors: u64,
}

impl Record for SubsystemsRecord {
    const KIND: &'static str = "subsystems";
}

/// `subsystem_lock`: one lock acquisition site over the last run of a
/// (regime, policy, cores) point, with FreeBSD's averages (times in cycles).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SubsystemLockRecord<'a> {
    /// The kernel regime.
    pub regime: Cow<'a, str>,
    /// The subsystems' locking policy.
    pub policy: Cow<'a, str>,
    /// Cores with workers.
    pub cores: usize,
    /// Total hold time over acquisitions.
    pub avg_held: f64,
    /// Total wait over acquisitions.
    pub avg_wait: f64,
    /// What the profiler recorded at the site.
    #[serde(flatten)]
    pub site: Cow<'a, SiteRecord>,
}

impl Record for SubsystemLockRecord<'_> {
    const KIND: &'static str = "subsystem_lock";
}
