//! `metal_pingpong`: what one core of the bare-metal image reports after
//! its ping-pong pair finished (`crates/metal/src/experiment.rs` prints it
//! on the serial console, one JSON line per core and regime).
//!
//! This file uses nothing of `granule` but serde, so that the command-line
//! tests can read records back through the very type that read them off the
//! serial line (`crates/lab/tests/metal_cli.rs` includes it by path).

use serde::{Deserialize, Serialize};

/// `metal_pingpong`: one core's ping-pong pair under one regime, as the
/// image printed it. The fields are the image's, in its order, so that the
/// record written again is the serial line itself.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MetalPingpongRecord {
    /// Where the image ran: `qemu-tcg` under QEMU's software emulation (its
    /// timings mean nothing), `hypervisor` under another one, `bare-metal`
    /// on a real machine.
    pub platform: String,
    /// The kernel's regime.
    pub regime: String,
    /// `user`: the pair's threads ran in ring 3 (entered with `sysretq`,
    /// trapping with `syscall`); `kernel`: the core performed their entries
    /// itself (the kernel's path alone).
    pub threads: String,
    /// Cores the run used, one pair on each.
    pub cores: usize,
    /// This pair's core.
    pub core: usize,
    /// Round trips (`Call` + `ReplyRecv`) the pair made, every reply checked.
    pub round_trips: u64,
    /// Time-stamp-counter ticks per round trip, first call to last reply.
    pub cycles_per_round_trip: f64,
    /// IPIs this core took during the regime's run (the root's wake-ups of
    /// the other cores' threads arrive as IPIs).
    pub ipis: u64,
    /// Timer ticks this core took during the regime's run.
    pub ticks: u64,
    /// The rest only from `experiment=ipc` and `experiment=scale`, which
    /// run granule-user's ping-pong (the hosted experiments' programs):
    /// `ipc` or `scale`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experiment: Option<String>,
    /// `granule-user`: the programs' source.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// The repetition, from 1 (a freshly booted kernel each).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<usize>,
    /// The servers' mean exponential delay between calls, cycles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay_cycles: Option<u64>,
    /// This core's window: from the first round trip its client counted to
    /// `round_trips` later, time-stamp-counter cycles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_cycles: Option<u64>,
    /// Cycles the core waited idle in its window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_cycles: Option<u64>,
    /// The time-stamp counter's rate, measured against the PIT, Hz.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tsc_hz: Option<u64>,
}
