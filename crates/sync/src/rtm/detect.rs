//! Run-time detection of Intel RTM: does this CPU run hardware transactions?
//!
//! Two questions, asked in this order:
//!
//! 1. **Does the CPU say so?** CPUID leaf 7, sub-leaf 0, EBX bit 11 ("RTM").
//!    When the bit is clear we stop: on such a CPU `xbegin` may raise #UD, so
//!    no RTM instruction is ever executed.
//! 2. **Does it mean it?** Some CPUs report RTM but abort every transaction:
//!    Intel's 2019–2021 microcode updates (TSX Asynchronous Abort, the
//!    `TSX_FORCE_ABORT` MSR) and some hypervisors leave the CPUID bit set and
//!    make `xbegin` abort at once, always with status 0. Only when CPUID reports
//!    RTM do we run [`PROBE_TRANSACTIONS`] empty transactions; RTM counts as
//!    available as soon as one commits. An empty transaction touches no memory
//!    and has nothing to conflict with, so on working hardware a hundred
//!    aborts in a row do not happen (an interrupt can abort one, not all).
//!
//! The answer cannot change while the program runs, so it is computed once
//! and cached in one atomic word (no locks, `no_std`). Two cores may race to
//! compute it; both find the same answer.
//!
//! Under `--cfg loom` detection always answers "unsupported": the model
//! checker explores thread interleavings, not hardware transactions.

use core::fmt;

/// What this CPU offers for lock elision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RtmSupport {
    /// CPUID reports RTM and transactions commit: elision can run.
    Available,
    /// This build or architecture has no RTM at all (not x86-64, or a loom
    /// model-checking build). The string says which.
    Unsupported {
        /// Why there is no RTM, e.g. "not an x86-64 CPU".
        reason: &'static str,
    },
    /// x86-64, but CPUID leaf 7 EBX bit 11 (RTM) is clear.
    NotReported,
    /// CPUID reports RTM, but every one of `probes` empty transactions
    /// aborted: TSX is disabled (typically by microcode or a hypervisor).
    AlwaysAborts {
        /// Empty transactions tried.
        probes: u32,
        /// Raw abort status (EAX) of the last probe.
        last_status: u32,
    },
}

impl RtmSupport {
    /// Whether elision can run on this machine.
    pub const fn is_available(self) -> bool {
        matches!(self, Self::Available)
    }
}

impl fmt::Display for RtmSupport {
    /// `available (…)` or `unavailable: <reason>`; reads on its own
    /// ("rtm: unavailable: …") and after "RTM is".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Available => f.write_str("available (reported by CPUID, transactions commit)"),
            Self::Unsupported { reason } => write!(f, "unavailable: {reason}"),
            Self::NotReported => f.write_str("unavailable: not reported by CPUID (leaf 7, EBX bit 11 clear)"),
            Self::AlwaysAborts { probes, last_status } => write!(
                f,
                "unavailable: reported by CPUID but every transaction aborts (TSX disabled, e.g. by microcode; \
                 {probes} of {probes} empty transactions aborted, last status {last_status:#x})"
            ),
        }
    }
}

/// Empty transactions the probe runs before declaring RTM non-functional.
pub const PROBE_TRANSACTIONS: u32 = 100;

/// What this CPU offers for RTM lock elision (computed once, then cached).
///
/// Never executes an RTM instruction unless CPUID reports RTM.
pub fn detect() -> RtmSupport {
    cache::get_or_init(detect_uncached)
}

#[cfg(all(target_arch = "x86_64", not(loom)))]
fn detect_uncached() -> RtmSupport {
    if !cpuid_reports_rtm() {
        return RtmSupport::NotReported;
    }
    let mut last_status = 0;
    for _ in 0..PROBE_TRANSACTIONS {
        // SAFETY: CPUID reports RTM (checked above), which is `xbegin`'s
        // precondition.
        let status = unsafe { super::htm::xbegin() };
        if status == super::htm::XBEGIN_STARTED {
            // SAFETY: `xbegin` returned "started", so this thread is inside a
            // transaction, `xend`'s precondition; RTM is reported (above).
            unsafe { super::htm::xend() };
            return RtmSupport::Available;
        }
        last_status = status;
    }
    RtmSupport::AlwaysAborts { probes: PROBE_TRANSACTIONS, last_status }
}

#[cfg(all(target_arch = "x86_64", loom))]
fn detect_uncached() -> RtmSupport {
    RtmSupport::Unsupported { reason: "loom model checking build (hardware transactions are not modelled)" }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect_uncached() -> RtmSupport {
    RtmSupport::Unsupported { reason: "not an x86-64 CPU" }
}

/// CPUID.(EAX=7, ECX=0):EBX bit 11, after checking that leaf 7 exists.
#[cfg(target_arch = "x86_64")]
pub fn cpuid_reports_rtm() -> bool {
    use core::arch::x86_64::__cpuid_count;
    // `__cpuid_count` is an `unsafe fn` before Rust 1.87 and safe after it.
    #[allow(unused_unsafe)]
    // SAFETY: `cpuid` exists on every x86-64 CPU and only reads identification
    // registers; leaf 0 is always valid.
    let max_leaf = unsafe { __cpuid_count(0, 0) }.eax;
    if max_leaf < 7 {
        return false;
    }
    #[allow(unused_unsafe)]
    // SAFETY: as above; leaf 7 is at most the maximum leaf (checked).
    let leaf7 = unsafe { __cpuid_count(7, 0) };
    leaf7.ebx & (1 << 11) != 0
}

/// CPUID.(EAX=7, ECX=0):EBX bit 11: never set off x86-64.
#[cfg(not(target_arch = "x86_64"))]
pub fn cpuid_reports_rtm() -> bool {
    false
}

/// The cached answer: one 64-bit word, tag in the high half, the last probe
/// status in the low half (0 = not yet computed).
#[cfg(not(loom))]
mod cache {
    use super::{RtmSupport, PROBE_TRANSACTIONS};
    use crate::primitive::{AtomicU64, Ordering};

    const UNKNOWN: u64 = 0;
    const AVAILABLE: u64 = 1;
    const NOT_REPORTED: u64 = 2;
    const ALWAYS_ABORTS: u64 = 3;

    static STATE: AtomicU64 = AtomicU64::new(UNKNOWN << 32);

    pub(super) fn get_or_init(compute: fn() -> RtmSupport) -> RtmSupport {
        if let Some(s) = decode(STATE.load(Ordering::Acquire)) {
            return s;
        }
        let s = compute();
        if let Some(w) = encode(s) {
            STATE.store(w, Ordering::Release);
        }
        s
    }

    /// `None` for `Unsupported`, which is not cached: its reason string does
    /// not fit in the word, and computing it again runs no probe.
    fn encode(s: RtmSupport) -> Option<u64> {
        match s {
            RtmSupport::Available => Some(AVAILABLE << 32),
            RtmSupport::Unsupported { .. } => None,
            RtmSupport::NotReported => Some(NOT_REPORTED << 32),
            RtmSupport::AlwaysAborts { last_status, .. } => Some(ALWAYS_ABORTS << 32 | u64::from(last_status)),
        }
    }

    fn decode(w: u64) -> Option<RtmSupport> {
        match w >> 32 {
            AVAILABLE => Some(RtmSupport::Available),
            NOT_REPORTED => Some(RtmSupport::NotReported),
            ALWAYS_ABORTS => Some(RtmSupport::AlwaysAborts { probes: PROBE_TRANSACTIONS, last_status: w as u32 }),
            _ => None,
        }
    }
}

/// Under loom a `static` atomic cannot be created, and the answer is a
/// constant anyway: nothing to cache.
#[cfg(loom)]
mod cache {
    use super::RtmSupport;

    pub(super) fn get_or_init(compute: fn() -> RtmSupport) -> RtmSupport {
        compute()
    }
}
