//! The records of `granule locks`: per lock one `lock_uncontended` and one
//! `lock_contended` per thread count, or one `lock_skipped`.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

use crate::output::Record;

/// `lock_uncontended`: one lock's `acquire + release` pair on one pinned
/// thread, median over `--runs`, beside the uncontended `xchg` (cycles are
/// cycle-counter ticks).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LockUncontended {
    /// The lock.
    pub lock: Cow<'static, str>,
    /// Threads: always 1.
    pub threads: usize,
    /// Cycles per pair, an empty loop subtracted.
    pub cycles_per_pair: f64,
    /// The same in nanoseconds.
    pub ns_per_pair: f64,
    /// Uncontended cost of one `xchg`, measured in the same run, cycles
    /// (null if it could not be measured).
    pub xchg_cycles: f64,
    /// `cycles_per_pair / xchg_cycles`.
    pub ratio_to_xchg: f64,
    /// `cycles_per_pair` over parking_lot's, measured in the same run;
    /// absent when parking-lot was not measured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ratio_to_parking_lot: Option<f64>,
}

impl Record for LockUncontended {
    const KIND: &'static str = "lock_uncontended";
}

/// `lock_contended`: `threads` pinned threads taking one lock in a loop for
/// `--seconds`, medians over `--runs`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LockContended {
    /// The lock.
    pub lock: Cow<'static, str>,
    /// Threads taking it.
    pub threads: usize,
    /// Busy-wait inside each critical section, cycles.
    pub critical_cycles: u64,
    /// More threads than CPUs.
    pub oversubscribed: bool,
    /// Acquisitions of all threads per second.
    pub acquisitions_per_sec: f64,
    /// Fewest acquisitions of any thread over the most.
    pub fairness: f64,
}

impl Record for LockContended {
    const KIND: &'static str = "lock_contended";
}

/// `lock_skipped`: a lock this machine cannot run (an elided lock without
/// usable RTM).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LockSkipped {
    /// The lock.
    pub lock: Cow<'static, str>,
    /// Why.
    pub reason: String,
}

impl Record for LockSkipped {
    const KIND: &'static str = "lock_skipped";
}
