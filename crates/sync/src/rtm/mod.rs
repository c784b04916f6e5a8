//! # Lock elision with Intel RTM
//!
//! A big kernel lock serialises every system call, although two system calls
//! on different cores rarely touch the same data: one thread's TCB and
//! endpoint, another thread's. *Lock elision* (Rajwar & Goodman, "Speculative
//! lock elision", MICRO 2001) keeps the lock in the program but skips taking
//! it: the critical section runs as a hardware transaction that only *reads*
//! the lock word. The cache-coherence protocol watches every line the
//! transaction reads or writes; if another core writes a line we read, or
//! touches one we wrote, the hardware aborts the transaction, throws away all
//! its effects and reports why. Two cores in the "same" critical section on
//! disjoint data both commit: the one lock behaves like an extremely
//! fine-grained one, a lock per cache line, without the kernel saying which
//! lines. The seed paper elides seL4's big lock this way and finds it matches
//! or beats fine-grained locking at the cost of the coarse lock's simplicity.
//!
//! Transactions promise no progress, so the lock stays as the *fallback*. The
//! two paths must exclude each other: inside the transaction we read the lock
//! word, which puts it in the transaction's read set. If it is held we abort
//! at once with an explicit code ([`LOCK_BUSY`]); if another core takes it
//! later, its write aborts us. So a transaction never commits while a core
//! holds the lock.
//!
//! What happens after an abort is a policy ([`RetryPolicy`]): retry a few
//! times after a conflict, at once give up after a capacity abort (the
//! footprint will not shrink), wait for the lock to be free before retrying
//! after finding it held (or every waiter piles onto the lock behind the
//! first one that fell back: the "lemming effect"), and bound the attempts in
//! total. Then take the lock. Every outcome — commit, abort by cause,
//! fallback — goes to the lock's statistics type, written only outside the
//! transaction, so profiling adds no conflicts.
//!
//! A transaction must not do anything it cannot undo. Intel's RTM aborts on
//! system calls, I/O, interrupts, page faults and some privileged
//! instructions; granule's kernel is built for this: its system calls decide
//! everything first, then execute without side effects outside kernel memory,
//! and leave context switches, IPIs and interrupt acknowledgements to an exit
//! plan performed after the commit.
//!
//! ## Availability is checked, never assumed
//!
//! Many CPUs lack RTM, and many that have it had it switched off by microcode
//! (TSX Asynchronous Abort), sometimes still reporting it in CPUID while
//! aborting every transaction. [`detect`] asks CPUID and, only if CPUID says
//! yes, runs a few empty transactions to see one commit. [`Elided::new`]
//! refuses to build an RTM-elided lock unless RTM works, returning
//! [`RtmUnavailable`] with the reason: the elision regime then does not run,
//! rather than measuring the plain lock under the name of elision.
//!
//! ## Testing without RTM
//!
//! The hardware is behind a trait, [`Htm`]. Besides the real [`Rtm`] there is
//! [`AlwaysAbort`], whose transactions abort at once with a chosen cause. It
//! never runs code transactionally, so it is sound anywhere, and it drives
//! the whole retry-and-fallback machinery: budgets, the wait for a free
//! lock, statistics, mutual exclusion through the fallback. It is used only
//! when named explicitly ([`Elided::with_htm`]).
//!
//! ## Files
//!
//! | file | contents |
//! |---|---|
//! | `detect.rs` | [`detect`], [`RtmSupport`]: CPUID and the commit probe, cached |
//! | `htm.rs` | [`Htm`], [`Rtm`] (`xbegin`/`xend`/`xabort`/`xtest`), [`AlwaysAbort`], [`AbortStatus`] |
//! | `policy.rs` | [`RetryPolicy`] and its defaults, with the reasons |
//! | `elided.rs` | [`Elided`], [`Mode`]: acquire, release, fallback, statistics |

mod detect;
mod elided;
mod htm;
mod inject;
mod policy;

use core::fmt;

pub use detect::{cpuid_reports_rtm, detect, RtmSupport, PROBE_TRANSACTIONS};
pub use elided::{Elided, Mode};
pub use htm::{AbortStatus, AlwaysAbort, Htm, Rtm, LOCK_BUSY, NO_RETRY, XBEGIN_STARTED};
pub use inject::InjectAborts;
pub use policy::RetryPolicy;

/// Lock elision was asked for on a machine that cannot run RTM transactions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtmUnavailable(pub RtmSupport);

impl RtmUnavailable {
    /// What detection found.
    pub fn support(&self) -> RtmSupport {
        self.0
    }
}

impl fmt::Display for RtmUnavailable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "RTM lock elision needs Intel RTM, which is {} (elision never falls back silently to the plain lock; \
             use a lock-based regime on this machine)",
            self.0
        )
    }
}

impl core::error::Error for RtmUnavailable {}
