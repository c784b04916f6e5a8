//! `ipc_instructions`: one regime's instructions per kernel-only IPC round
//! trip, from two callgrind runs of the `roundtrip` example, and the
//! arithmetic that makes it.
//!
//! This file uses nothing of `granule` but serde, so that the command-line
//! tests can read records back through the very type that wrote them
//! (`crates/lab/tests/ipc_instructions_cli.rs` includes it by path).

use serde::{Deserialize, Serialize};

/// What callgrind counted for one run of the example: the instructions
/// (`Ir`) of the whole process, `round_trips` round trips included.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Count {
    /// Round trips the example ran (its `iterations` argument).
    pub round_trips: u64,
    /// Instructions executed by the whole process.
    pub ir: u64,
}

/// Instructions per round trip from a short and a long run: the difference
/// of their totals over the difference of their round trips, so that
/// everything but the loop (loading, boot, set-up, printing) cancels.
/// `None` unless the long run has more round trips and no fewer
/// instructions.
pub fn per_round_trip(short: Count, long: Count) -> Option<f64> {
    let trips = long.round_trips.checked_sub(short.round_trips).filter(|&t| t > 0)?;
    let ir = long.ir.checked_sub(short.ir)?;
    Some(ir as f64 / trips as f64)
}

/// `ipc_instructions`: one regime's instructions per kernel-only round trip
/// (`Call` + `ReplyRecv`), counted by callgrind, beside `none`'s measured
/// in the same invocation. A field that cannot be computed (no `none` in
/// the run) is null.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct IpcInstructionsRecord {
    /// The regime.
    pub regime: String,
    /// `(ir_long − ir_short) / (iterations_long − iterations_short)`.
    pub instructions_per_round_trip: f64,
    /// `instructions_per_round_trip` less `none`'s.
    pub extra_instructions_over_none: Option<f64>,
    /// Half of that: what one kernel entry executes for the regime (a round
    /// trip is two system calls).
    pub extra_instructions_per_call: Option<f64>,
    /// Round trips of the short run.
    pub iterations_short: u64,
    /// Round trips of the long run.
    pub iterations_long: u64,
    /// Instructions callgrind counted in the short run (whole process).
    pub ir_short: u64,
    /// Instructions callgrind counted in the long run (whole process).
    pub ir_long: u64,
}

impl IpcInstructionsRecord {
    /// The record of `regime` from its two runs (`None` as
    /// [`per_round_trip`]); the comparison with `none` is left to
    /// [`compare_to_none`].
    pub fn new(regime: &str, short: Count, long: Count) -> Option<Self> {
        Some(Self {
            regime: regime.to_string(),
            instructions_per_round_trip: per_round_trip(short, long)?,
            extra_instructions_over_none: None,
            extra_instructions_per_call: None,
            iterations_short: short.round_trips,
            iterations_long: long.round_trips,
            ir_short: short.ir,
            ir_long: long.ir,
        })
    }
}

/// Fill in every record's difference to the `none` record among them (left
/// null if there is none).
pub fn compare_to_none(records: &mut [IpcInstructionsRecord]) {
    let Some(none) = records.iter().find(|r| r.regime == "none").map(|r| r.instructions_per_round_trip) else {
        return;
    };
    for r in records {
        let extra = r.instructions_per_round_trip - none;
        r.extra_instructions_over_none = Some(extra);
        r.extra_instructions_per_call = Some(extra / 2.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count(round_trips: u64, ir: u64) -> Count {
        Count { round_trips, ir }
    }

    #[test]
    fn per_round_trip_is_the_difference_over_the_extra_round_trips() {
        assert_eq!(per_round_trip(count(1000, 5_863_868), count(3000, 7_969_868)), Some(1053.0));
        assert_eq!(per_round_trip(count(1000, 100), count(3000, 101)), Some(0.0005));
        // Equal or fewer round trips, or fewer instructions: no figure.
        assert_eq!(per_round_trip(count(3000, 10), count(3000, 20)), None);
        assert_eq!(per_round_trip(count(3000, 10), count(1000, 20)), None);
        assert_eq!(per_round_trip(count(1000, 20), count(3000, 10)), None);
    }

    #[test]
    fn records_compare_to_none_in_the_same_run() {
        let rec = |regime, long_ir| IpcInstructionsRecord::new(regime, count(1000, 1_000_000), count(3000, long_ir));
        let mut rs: Vec<IpcInstructionsRecord> =
            [rec("none", 3_000_000), rec("bkl", 3_100_000), rec("fine", 2_900_000)].into_iter().flatten().collect();
        compare_to_none(&mut rs);
        let extras: Vec<_> =
            rs.iter().map(|r| (r.extra_instructions_over_none, r.extra_instructions_per_call)).collect();
        assert_eq!(extras, [(Some(0.0), Some(0.0)), (Some(50.0), Some(25.0)), (Some(-50.0), Some(-25.0))]);
        assert_eq!(
            (rs[1].ir_short, rs[1].ir_long, rs[1].iterations_short, rs[1].iterations_long),
            (1_000_000, 3_100_000, 1000, 3000)
        );
        // Without `none`, the comparisons stay null.
        let mut alone: Vec<IpcInstructionsRecord> = rec("bkl", 3_100_000).into_iter().collect();
        compare_to_none(&mut alone);
        assert_eq!(alone[0].extra_instructions_over_none, None);
        assert_eq!(alone[0].instructions_per_round_trip, 1050.0);
    }
}
