//! The record of `granule quaject`: one `quaject` per row of the Synthesis
//! Table 1.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

use super::{Medians, Row};
use crate::output::Record;

/// `quaject`: one operation's median cost per operation without
/// synchronisation, lock-free with 0 retries and with 1 retry (see the
/// module documentation of `granule quaject`). Cycles are cycle-counter
/// ticks; figures are rounded to 0.01. The lock-free columns are null for
/// the null procedure call, which has no lock-free twin.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct QuajectRecord {
    /// The operation.
    pub operation: Cow<'static, str>,
    /// How it is implemented.
    pub variant: Cow<'static, str>,
    /// Sequential twin, cycles.
    pub nosync_cycles: f64,
    /// Lock-free, no interference, cycles.
    pub opt0_cycles: Option<f64>,
    /// Lock-free, one injected conflict (its own cost subtracted), cycles.
    pub opt1_cycles: Option<f64>,
    /// `nosync_cycles` in nanoseconds.
    pub nosync_ns: f64,
    /// `opt0_cycles` in nanoseconds.
    pub opt0_ns: Option<f64>,
    /// `opt1_cycles` in nanoseconds.
    pub opt1_ns: Option<f64>,
    /// `opt0_cycles / nosync_cycles`; null when the denominator is under
    /// half a cycle.
    pub opt0_over_nosync: Option<f64>,
    /// `opt1_cycles / opt0_cycles`; null likewise.
    pub opt1_over_opt0: Option<f64>,
    /// Cost of the injected write alone, cycles.
    pub interfere_cycles: Option<f64>,
    /// Retries counted per operation in the 1-retry batch (must be 1).
    pub retries_per_op: Option<f64>,
}

impl Record for QuajectRecord {
    const KIND: &'static str = "quaject";
}

/// `x` rounded to 2 decimals.
fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// `a / b` rounded, when `b` is large enough to divide by (half a cycle).
fn ratio(a: f64, b: f64) -> Option<f64> {
    (b >= 0.5).then(|| round2(a / b))
}

impl QuajectRecord {
    /// The record of `row` from its medians `m`, with nanoseconds from
    /// `ns_per_cycle`.
    pub(super) fn new(row: &Row, m: &Medians, ns_per_cycle: f64) -> Self {
        let opt = |x: f64| row.lock_free.then(|| round2(x));
        Self {
            operation: Cow::Borrowed(row.operation),
            variant: Cow::Borrowed(row.variant),
            nosync_cycles: round2(m.nosync),
            opt0_cycles: opt(m.opt0),
            opt1_cycles: opt(m.opt1),
            nosync_ns: round2(m.nosync * ns_per_cycle),
            opt0_ns: opt(m.opt0 * ns_per_cycle),
            opt1_ns: opt(m.opt1 * ns_per_cycle),
            opt0_over_nosync: row.lock_free.then(|| ratio(m.opt0, m.nosync)).flatten(),
            opt1_over_opt0: row.lock_free.then(|| ratio(m.opt1, m.opt0)).flatten(),
            interfere_cycles: opt(m.interfere),
            retries_per_op: row.lock_free.then_some(m.retries),
        }
    }
}
