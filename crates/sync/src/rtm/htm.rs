//! The hardware-transaction interface ([`Htm`]), Intel RTM behind it
//! ([`Rtm`]), and a test implementation that never runs a transaction
//! ([`AlwaysAbort`]).
//!
//! # The four RTM instructions (Intel SDM vol. 1, ch. 16)
//!
//! * `xbegin rel32` starts a transaction and falls through with EAX
//!   unchanged. If the transaction later aborts, the CPU discards every
//!   register and memory update made since `xbegin`, and resumes at the
//!   `rel32` target with EAX = abort status. We point the target at the
//!   instruction right after `xbegin` and preload EAX with `u32::MAX`
//!   (`_XBEGIN_STARTED`), so one code path sees either "started" or a status.
//! * `xend` commits: the transaction's writes become visible to other cores
//!   at once, ordered like a `lock`-prefixed instruction. Outside a
//!   transaction `xend` raises #GP.
//! * `xabort imm8` aborts the current transaction with `imm8` in EAX bits
//!   31:24; outside a transaction it is a no-op.
//! * `xtest` clears ZF inside a transaction, sets it outside.
//!
//! On a CPU without RTM the first three raise #UD (some hypervisors instead
//! let `xbegin` abort every time), so [`Rtm`] can only be created after
//! [`super::detect`] found RTM working.
//!
//! # Why the asm blocks are sound
//!
//! An abort rolls back *all* architectural state the transaction changed —
//! registers, stack, heap — and resumes inside the `xbegin` asm block as if
//! that block had just executed and produced a status in EAX. To the compiler
//! an aborted transaction is therefore indistinguishable from an `xbegin`
//! that returned the status straight away: no value it keeps in a register or
//! on the stack can be observed half-updated. Code inside a transaction
//! cannot leak effects past an abort either: in user mode the instructions
//! with effects outside memory (system calls, I/O port access) abort the
//! transaction before they execute, and other cores never see a
//! transaction's writes before it commits.
//!
//! None of the blocks is `nomem` except `xtest`: `xbegin`, `xend` and
//! `xabort` are compiler barriers, so no load of the critical section can be
//! hoisted above `xbegin` and no store sunk below `xend`. In the memory model
//! they act like `SeqCst` fences, which is what the hardware gives: a
//! committed transaction is ordered like a locked instruction.

use core::fmt;

use super::detect::{detect, RtmSupport};
use super::RtmUnavailable;
use crate::profile::AbortCause;

/// EAX after `xbegin` when the transaction started (`_XBEGIN_STARTED`).
pub const XBEGIN_STARTED: u32 = u32::MAX;

/// The explicit abort code [`super::Elided`] uses when it finds the fallback
/// lock held inside a transaction (glibc's `_ABORT_LOCK_BUSY`). Explicit
/// aborts with any other code are counted as [`AbortCause::Other`].
pub const LOCK_BUSY: u8 = 0xff;

/// The explicit abort code a critical section uses when it finds it cannot
/// run transactionally at all (it would allocate, or touch too much):
/// [`super::Elided`] then takes the lock at once instead of retrying. Counted
/// as [`AbortCause::Other`].
pub const NO_RETRY: u8 = 0xfe;

/// The status word (EAX) of an aborted transaction.
///
/// | bit | meaning (Intel SDM vol. 1, table 16-1) |
/// |---|---|
/// | 0 | explicit abort by `xabort` |
/// | 1 | the transaction may succeed on a retry (never with bit 0) |
/// | 2 | conflict: another core touched our read or write set |
/// | 3 | capacity: an internal buffer overflowed |
/// | 4 | a debug breakpoint was hit |
/// | 5 | the abort happened in a nested transaction |
/// | 31:24 | the `xabort` argument (valid only with bit 0) |
///
/// Status 0 means none of these: an interrupt, a page fault, an instruction
/// RTM does not support, or RTM disabled.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct AbortStatus(u32);

impl AbortStatus {
    /// Bit 0: aborted by `xabort`.
    pub const EXPLICIT: u32 = 1 << 0;
    /// Bit 1: the hardware thinks a retry may succeed.
    pub const RETRY: u32 = 1 << 1;
    /// Bit 2: memory conflict with another core.
    pub const CONFLICT: u32 = 1 << 2;
    /// Bit 3: the transaction's footprint overflowed.
    pub const CAPACITY: u32 = 1 << 3;
    /// Bit 4: debug breakpoint.
    pub const DEBUG: u32 = 1 << 4;
    /// Bit 5: abort inside a nested transaction.
    pub const NESTED: u32 = 1 << 5;

    /// The status `raw`, or `None` for [`XBEGIN_STARTED`] (not an abort).
    pub const fn from_raw(raw: u32) -> Option<Self> {
        if raw == XBEGIN_STARTED {
            None
        } else {
            Some(Self(raw))
        }
    }

    /// The status word the hardware reports for an abort of `cause` (used by
    /// test implementations of [`Htm`]).
    pub const fn synthetic(cause: AbortCause) -> Self {
        Self(match cause {
            AbortCause::Conflict => Self::CONFLICT | Self::RETRY,
            AbortCause::Capacity => Self::CAPACITY,
            AbortCause::LockBusy => Self::EXPLICIT | (LOCK_BUSY as u32) << 24,
            AbortCause::Other => 0,
        })
    }

    /// The raw EAX value.
    pub const fn raw(self) -> u32 {
        self.0
    }

    /// Whether `xabort` caused the abort.
    pub const fn is_explicit(self) -> bool {
        self.0 & Self::EXPLICIT != 0
    }

    /// The `xabort` code, for an explicit abort.
    pub const fn code(self) -> Option<u8> {
        if self.is_explicit() {
            Some((self.0 >> 24) as u8)
        } else {
            None
        }
    }

    /// Whether the hardware suggests a retry may succeed.
    pub const fn may_retry(self) -> bool {
        self.0 & Self::RETRY != 0
    }

    /// The cause the retry policy and the statistics use: an explicit abort
    /// with [`LOCK_BUSY`] is [`AbortCause::LockBusy`], any other explicit
    /// abort is `Other`; then conflict, then capacity; everything else
    /// (status 0, debug, nested) is `Other`.
    pub const fn cause(self) -> AbortCause {
        if self.is_explicit() {
            match self.code() {
                Some(LOCK_BUSY) => AbortCause::LockBusy,
                _ => AbortCause::Other,
            }
        } else if self.0 & Self::CONFLICT != 0 {
            AbortCause::Conflict
        } else if self.0 & Self::CAPACITY != 0 {
            AbortCause::Capacity
        } else {
            AbortCause::Other
        }
    }
}

impl From<AbortStatus> for AbortCause {
    fn from(s: AbortStatus) -> Self {
        s.cause()
    }
}

impl fmt::Debug for AbortStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "AbortStatus({self})")
    }
}

impl fmt::Display for AbortStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:#x}", self.0)?;
        let bits = [
            (Self::EXPLICIT, "explicit"),
            (Self::RETRY, "retry"),
            (Self::CONFLICT, "conflict"),
            (Self::CAPACITY, "capacity"),
            (Self::DEBUG, "debug"),
            (Self::NESTED, "nested"),
        ];
        let mut sep = " (";
        for (bit, name) in bits {
            if self.0 & bit != 0 {
                write!(f, "{sep}{name}")?;
                sep = ", ";
            }
        }
        if let Some(code) = self.code() {
            write!(f, "{sep}code {code:#04x}")?;
            sep = ", ";
        }
        if sep == " (" {
            f.write_str(" (no cause given)")
        } else {
            f.write_str(")")
        }
    }
}

/// A hardware transactional memory, as lock elision uses it.
///
/// # Safety
///
/// [`super::Elided`] runs a critical section *without the lock* whenever
/// [`Htm::begin`] returns `Ok`, so mutual exclusion rests on this contract.
/// An implementation must guarantee, for each thread:
///
/// 1. If `begin` returns `Ok(())`, everything the thread does from then until
///    a matching [`Htm::end`] returns is atomic with respect to all other
///    threads: either all its memory effects become visible together when
///    `end` returns, or none ever do, the thread's registers and memory are
///    restored to their state at the `begin` call, and `begin` returns again,
///    this time `Err`. Another thread's write to a location the transaction
///    read, or its access to one the transaction wrote, before `end`, aborts
///    the transaction.
/// 2. [`Htm::abort`] inside such a transaction does not return: the
///    transaction aborts as in 1 and `begin` returns an explicit status whose
///    [`AbortStatus::code`] is the given code. Outside a transaction it does
///    nothing.
/// 3. [`Htm::in_transaction`] is true exactly while the thread is inside such
///    a transaction.
///
/// An implementation whose `begin` never returns `Ok` ([`AlwaysAbort`])
/// meets all three trivially.
pub unsafe trait Htm: Send + Sync {
    /// Start a transaction: `Ok(())` inside it, or `Err` with the status of
    /// the abort (possibly of an attempt that already ran partway; see the
    /// contract).
    fn begin(&self) -> Result<(), AbortStatus>;

    /// Commit the current transaction.
    ///
    /// # Safety
    /// The calling thread must be inside a transaction started by `begin` on
    /// this implementation (for RTM, `xend` outside a transaction raises
    /// #GP and kills the process).
    unsafe fn end(&self);

    /// Abort the current transaction with `code` (see the contract); a no-op
    /// outside a transaction. Critical sections can use it to force an abort,
    /// e.g. on finding something they cannot do transactionally. Codes other
    /// than [`LOCK_BUSY`] count as [`AbortCause::Other`].
    fn abort(&self, code: u8);

    /// Whether the calling thread is inside a transaction.
    fn in_transaction(&self) -> bool;
}

/// Intel Restricted Transactional Memory.
///
/// A value of this type is proof that [`super::detect`] found RTM available:
/// the only constructor is [`Rtm::new`], which refuses otherwise. So RTM
/// instructions are never executed where they could raise #UD, and an
/// [`super::Elided`] over RTM cannot exist on a machine without it.
#[derive(Clone, Copy, Debug)]
pub struct Rtm {
    _proof: Proof,
}

/// Uninhabited where RTM can never be available, so there `Rtm` has no
/// values and its methods are statically unreachable.
#[cfg(target_arch = "x86_64")]
type Proof = ();
#[cfg(not(target_arch = "x86_64"))]
type Proof = core::convert::Infallible;

impl Rtm {
    /// RTM, if [`super::detect`] says it is available; otherwise the
    /// detection result as the error.
    pub fn new() -> Result<Self, RtmUnavailable> {
        match detect() {
            #[cfg(target_arch = "x86_64")]
            RtmSupport::Available => Ok(Self { _proof: () }),
            other => Err(RtmUnavailable(other)),
        }
    }
}

#[cfg(target_arch = "x86_64")]
// SAFETY: a value of `Rtm` exists only when RTM is available (see `Rtm::new`),
// and then these are the hardware instructions whose semantics are exactly
// the trait's contract: `xbegin`/`xend` give atomicity with full rollback
// (contract 1), `xabort` aborts with its code or is a no-op outside a
// transaction (2), `xtest` reports transactional execution (3).
unsafe impl Htm for Rtm {
    #[inline(always)]
    fn begin(&self) -> Result<(), AbortStatus> {
        // SAFETY: `self` proves RTM is available (`xbegin`'s precondition).
        match AbortStatus::from_raw(unsafe { xbegin() }) {
            None => Ok(()),
            Some(status) => Err(status),
        }
    }

    #[inline(always)]
    unsafe fn end(&self) {
        // SAFETY: the caller is inside a transaction (this method's contract)
        // and `self` proves RTM is available.
        unsafe { xend() }
    }

    #[inline(always)]
    fn abort(&self, code: u8) {
        // SAFETY: `self` proves RTM is available.
        unsafe { xabort(code) }
    }

    #[inline(always)]
    fn in_transaction(&self) -> bool {
        // SAFETY: `self` proves RTM is available, which implies `xtest`.
        unsafe { xtest() }
    }
}

#[cfg(not(target_arch = "x86_64"))]
// SAFETY: `Rtm` is uninhabited here, so no method can ever be called.
unsafe impl Htm for Rtm {
    fn begin(&self) -> Result<(), AbortStatus> {
        match self._proof {}
    }
    unsafe fn end(&self) {
        match self._proof {}
    }
    fn abort(&self, _code: u8) {
        match self._proof {}
    }
    fn in_transaction(&self) -> bool {
        match self._proof {}
    }
}

/// A test "HTM" whose every transaction aborts at once with a fixed status.
///
/// It never runs code transactionally, so it is trivially sound, and it runs
/// on any machine: with it the retry policy, the wait for a free lock, the
/// fallback, the statistics and mutual exclusion of [`super::Elided`] can be
/// tested where RTM is missing. It is only ever used when chosen explicitly
/// ([`super::Elided::with_htm`]); nothing falls back to it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AlwaysAbort {
    status: AbortStatus,
}

impl AlwaysAbort {
    /// Abort every transaction with the status hardware reports for `cause`
    /// ([`AbortStatus::synthetic`]).
    pub const fn new(cause: AbortCause) -> Self {
        Self { status: AbortStatus::synthetic(cause) }
    }

    /// Abort every transaction with exactly `status`.
    pub const fn with_status(status: AbortStatus) -> Self {
        Self { status }
    }

    /// The status every `begin` returns.
    pub const fn status(&self) -> AbortStatus {
        self.status
    }
}

// SAFETY: `begin` never returns `Ok`, so no code ever runs "inside a
// transaction" and contract 1 holds vacuously; `abort` is only ever called
// outside a transaction and does nothing (2); `in_transaction` is always
// false, which is exact (3).
unsafe impl Htm for AlwaysAbort {
    #[inline]
    fn begin(&self) -> Result<(), AbortStatus> {
        Err(self.status)
    }

    unsafe fn end(&self) {
        // The precondition (inside a transaction) can never hold.
        panic!("AlwaysAbort::end called outside a transaction");
    }

    #[inline]
    fn abort(&self, _code: u8) {}

    #[inline]
    fn in_transaction(&self) -> bool {
        false
    }
}

/// `xbegin` with the abort target right after it; returns EAX:
/// [`XBEGIN_STARTED`] inside the new transaction, else the abort status.
///
/// # Safety
/// CPUID must report RTM (otherwise `xbegin` may raise #UD).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn xbegin() -> u32 {
    let mut status = XBEGIN_STARTED;
    // SAFETY: RTM is reported (caller's contract). On start, EAX keeps our
    // `u32::MAX`; on abort the CPU restores all other registers and memory
    // and jumps to `2:` with the status in EAX, which the compiler sees as
    // this block's output (see the module documentation). Not `nomem`: the
    // block is a compiler barrier, so the critical section stays after it.
    unsafe {
        core::arch::asm!("xbegin 2f", "2:", inout("eax") status, options(nostack));
    }
    status
}

/// `xend`: commit the current transaction.
///
/// # Safety
/// RTM must be available and the caller inside a transaction (else #GP).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn xend() {
    // SAFETY: inside a transaction on an RTM CPU (caller's contract). Not
    // `nomem`: every store of the critical section is emitted before it.
    unsafe { core::arch::asm!("xend", options(nostack)) }
}

/// `xtest`: whether this thread is inside a transaction.
///
/// # Safety
/// CPUID must report RTM or HLE (otherwise `xtest` raises #UD).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn xtest() -> bool {
    let inside: u8;
    // SAFETY: RTM is reported (caller's contract); `xtest` only sets ZF.
    unsafe {
        core::arch::asm!("xtest", "setnz {inside}", inside = out(reg_byte) inside, options(nomem, nostack));
    }
    inside != 0
}

/// `xabort code`. The instruction takes only an immediate, so a run-time
/// code goes through a 16 × 16 match of `xabort` instructions, which folds to
/// one instruction when `code` is a constant after inlining (as
/// [`LOCK_BUSY`] is). Written this way rather than with an asm `const`
/// operand so the crate keeps its minimum Rust version.
///
/// # Safety
/// CPUID must report RTM (otherwise `xabort` may raise #UD).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) unsafe fn xabort(code: u8) {
    macro_rules! xabort_hi {
        ($code:ident; $($hi:literal $hs:literal),*; $lo:tt) => {
            match $code >> 4 {
                $($hi => xabort_lo!($code; $hs; $lo),)*
                _ => {}
            }
        };
    }
    macro_rules! xabort_lo {
        ($code:ident; $hs:literal; [$($lo:literal $ls:literal),*]) => {
            match $code & 0xf {
                $($lo => {
                    // SAFETY: RTM is reported (caller's contract). Inside a
                    // transaction this aborts it (the CPU resumes at the
                    // `xbegin` target); outside it is a no-op. Not `nomem`:
                    // a compiler barrier like `xbegin`/`xend`.
                    unsafe { core::arch::asm!(concat!("xabort 0x", $hs, $ls), options(nostack)) }
                })*
                _ => {}
            }
        };
    }
    xabort_hi!(code;
        0 "0", 1 "1", 2 "2", 3 "3", 4 "4", 5 "5", 6 "6", 7 "7",
        8 "8", 9 "9", 10 "a", 11 "b", 12 "c", 13 "d", 14 "e", 15 "f";
        [0 "0", 1 "1", 2 "2", 3 "3", 4 "4", 5 "5", 6 "6", 7 "7",
         8 "8", 9 "9", 10 "a", 11 "b", 12 "c", 13 "d", 14 "e", 15 "f"]);
}
