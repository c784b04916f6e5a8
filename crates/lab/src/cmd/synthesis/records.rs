//! The records of `granule synthesis`: one `synthesis` per (table row,
//! part, regime), and one `null_call` per invocation.

use serde::{Deserialize, Serialize};
use std::borrow::Cow;

use crate::output::Record;

/// `synthesis`: one row of the seed's Tables 2–4 (one part of it: the
/// requester's or the dispatcher's, or the whole) under one regime. Cycles
/// are cycle-counter ticks over every iteration of every run: the median,
/// the mean without the top tenth, and the smallest and largest run's
/// median.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SynthesisRecord {
    /// The seed's table: 2 (switch), 3 (threads), 4 (memory).
    pub table: u8,
    pub operation: Cow<'static, str>,
    /// `requester`, `dispatcher`, or `whole`.
    pub part: Cow<'static, str>,
    pub regime: Cow<'static, str>,
    pub runs: usize,
    pub iterations: usize,
    pub cycles_median: f64,
    /// The mean without the top tenth: what the table shows.
    pub cycles_trimmed_mean: f64,
    pub cycles_min_run: f64,
    pub cycles_max_run: f64,
    pub ns_trimmed_mean: f64,
    /// `cycles_trimmed_mean` over this machine's null procedure call.
    pub over_null_call: f64,
    /// The seed's Synthesis V.1 figure on the 25 MHz 68030, µs (null:
    /// none given).
    pub seed_us: Option<f64>,
    /// `seed_us` over the seed's null procedure call (1.0 µs, Table 1).
    pub seed_over_null_call: Option<f64>,
    /// What this machine can and cannot show about the row.
    pub note: Cow<'static, str>,
}

impl Record for SynthesisRecord {
    const KIND: &'static str = "synthesis";
}

/// `null_call`: this machine's null procedure call, the unit both
/// machines' rows are normalised to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NullCallRecord {
    pub cycles: f64,
    pub ns: f64,
    /// The seed's (Table 1), µs.
    pub seed_us: f64,
}

impl Record for NullCallRecord {
    const KIND: &'static str = "null_call";
}
