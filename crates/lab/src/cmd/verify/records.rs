//! The records of `granule verify`: one `verify` per regime, one
//! `verify_violation` per violation found, one `verify_summary` per run.

use granule_verify::Stats;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

use crate::output::Record;

/// `verify`: what was checked under one regime, summed over the programs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerifyRecord {
    /// The regime.
    pub regime: String,
    /// When the invariant checker ran ("every entry", "quiescent points"…).
    pub invariants_checked_at: Cow<'static, str>,
    /// Programs run under the regime.
    pub programs: u64,
    /// System calls made.
    pub syscalls: u64,
    /// Kernel entries made (system calls, ticks, IPIs, interrupts).
    pub kernel_entries: u64,
    /// Invariant checks run.
    pub invariant_checks: u64,
    /// Messages whose fate was checked.
    pub messages_checked: u64,
    /// Replies checked.
    pub replies_checked: u64,
    /// Notification results checked.
    pub notification_results_checked: u64,
    /// Sysctl and kernel-log calls whose results were checked.
    pub subsystem_calls_checked: u64,
    /// Kernel-log messages whose fate was checked.
    pub log_messages_checked: u64,
    /// Memory faults whose fate was checked (delivered to a handler or not).
    pub faults_checked: u64,
    /// Of those, faults a handler received and answered.
    pub faults_answered: u64,
    /// Frame map, unmap and address queries that completed.
    pub frame_ops_checked: u64,
    /// Of those, maps refused because the frame or the page was taken.
    pub maps_refused: u64,
    /// 4 KiB frames allocated or freed on `lockfree`'s shared path
    /// (frame free lists, `docs/synthesis.md`); 0 under every other regime.
    pub shared_pages: u64,
    /// Threads destroyed on `lockfree`'s shared path
    /// (`docs/synthesis.md`); 0 under every other regime.
    pub shared_destroys: u64,
    /// Bound receivers woken by a signal on `lockfree`'s shared path
    /// (`docs/synthesis.md`); 0 under every other regime.
    pub bound_wakes: u64,
    /// Suspends and resumes made on `lockfree`'s shared path, of a thread
    /// of any core (`docs/synthesis.md`); 0 under every other regime.
    pub shared_controls: u64,
    /// Histories found linearizable.
    pub linearizability_checks: u64,
    /// Linearizability searches that ran out of budget.
    pub linearizability_inconclusive: u64,
    /// Single-core runs compared with the reference regime.
    pub determinism_checks: u64,
    /// Runs stopped by the step or wall-time bound.
    pub bound_stops: u64,
    /// Violations found.
    pub violations: u64,
}

impl Record for VerifyRecord {
    const KIND: &'static str = "verify";
}

impl VerifyRecord {
    /// The record of `regime`, checked at `how`, from its summed `stats`.
    pub fn new(regime: &str, how: &'static str, s: &Stats) -> Self {
        Self {
            regime: regime.to_owned(),
            invariants_checked_at: Cow::Borrowed(how),
            programs: s.programs,
            syscalls: s.syscalls,
            kernel_entries: s.entries,
            invariant_checks: s.invariant_checks,
            messages_checked: s.messages,
            replies_checked: s.replies,
            notification_results_checked: s.notifications,
            subsystem_calls_checked: s.subsystem_calls,
            log_messages_checked: s.log_messages,
            faults_checked: s.faults,
            faults_answered: s.faults_answered,
            frame_ops_checked: s.frame_ops,
            maps_refused: s.maps_refused,
            shared_pages: s.shared_pages,
            shared_destroys: s.shared_destroys,
            bound_wakes: s.bound_wakes,
            shared_controls: s.shared_controls,
            linearizability_checks: s.linearizable,
            linearizability_inconclusive: s.lin_inconclusive,
            determinism_checks: s.determinism_checks,
            bound_stops: s.bound_stops,
            violations: s.violations,
        }
    }
}

/// `verify_summary`: the run as a whole.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerifySummaryRecord {
    /// The first program's seed.
    pub seed: u64,
    /// Cores of the kernels booted.
    pub cores: usize,
    /// Programs generated.
    pub programs: u64,
    /// Of those, small programs (checked for linearizability).
    pub small_programs: u64,
    /// Of those, single-core programs (compared across regimes).
    pub single_core_programs: u64,
    /// Of those, large programs.
    pub large_programs: u64,
    /// Whether the regimes' fault injection was on.
    pub fault_injection: bool,
    /// Programs with at least one violation.
    pub failing_programs: u64,
    /// Violations over every regime.
    pub violations: u64,
    /// Wall time of the run, seconds.
    pub seconds: f64,
}

impl Record for VerifySummaryRecord {
    const KIND: &'static str = "verify_summary";
}

/// `verify_violation`: one violated check of one program, with the command
/// that reproduces it, so that a failure is in the records and not only in
/// the report on stderr.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct VerifyViolationRecord {
    /// The program's seed.
    pub seed: u64,
    /// Cores of the kernel the program ran on.
    pub cores: usize,
    /// The program's shape (`small`, `single-core`, `large`).
    pub shape: Cow<'static, str>,
    /// The regime under which the check failed.
    pub regime: String,
    /// For a determinism violation: the regime it was compared with.
    pub reference: Option<String>,
    /// The check (`invariant`, `conservation`, `linearizability`…).
    pub check: Cow<'static, str>,
    /// What was seen.
    pub detail: String,
    /// The command that runs this program alone.
    pub reproduce: String,
}

impl Record for VerifyViolationRecord {
    const KIND: &'static str = "verify_violation";
}
