//! The regimes the platform boots: **the one list**, read by name at run
//! time (`granule verify`: [`run_named`], [`kind`]) and by type at compile
//! time (the kernel's test targets: [`Pick`], one concrete regime type per
//! target, so every suite is monomorphised once per regime from one source).
//!
//! Each line names a regime, the kernel test target that runs the suites
//! under it, how its invariants can be checked, its type, and its maker: a
//! closure from `(boot configuration, fault injection)` to the regime.
//! Adding a regime to the kernel means adding one line here, e.g.
//!
//! ```text
//! "fine", "under_fine" => Fine, StopsWorld, Fine<NoStats>, |cfg, fault| Fine::new(cfg),
//! ```
//!
//! (and a `tests/under_<regime>.rs` target, and its help line in the
//! `granule` command's `crates/lab/src/regimes.rs`, whose test checks that
//! every regime here has one). The `granule` experiments take their regime
//! names and order from this list too, less the regimes only
//! `granule verify` runs. The maker receives
//! `Some(FaultInjection)` when asked for faults (`--fault-injection`; the
//! kernel tests' `faulty_regime`): regimes with fault hooks (forced RTM
//! aborts, delays while object locks are held) build their fault-injecting
//! variant from it, the others ignore it.

use granule_kernel::regime::{BigLock, Fine, FineOptions, LockFree, Transactional};
use granule_kernel::{BootConfig, NoLock};
use granule_sync::lock::{Clh, Mcs, Ticket};
use granule_sync::profile::{AbortCause, NoStats};
use granule_sync::rtm::{AbortStatus, AlwaysAbort, Htm, InjectAborts, RetryPolicy, Rtm};

use crate::driver::{run_under, RunOptions, RunOutcome};
use crate::program::Program;

/// What fault injection asks of a regime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultInjection {
    /// Seed of the regime's own fault choices.
    pub seed: u64,
    /// Transactions forced to abort, per thousand (RTM regimes).
    pub abort_per_mille: u32,
    /// Object-lock acquisitions followed by a random delay, per thousand
    /// (`fine`).
    pub delay_per_mille: u32,
    /// Longest such delay, in cycles.
    pub max_delay_cycles: u64,
}

impl FaultInjection {
    /// The settings `--fault-injection` uses for a program of `seed`.
    pub fn for_program(seed: u64) -> Self {
        Self { seed: seed ^ 0xfa17_fa17_fa17_fa17, abort_per_mille: 250, delay_per_mille: 250, max_delay_cycles: 2000 }
    }

    /// The settings of the kernel tests' faulty regimes (`faulty_regime`).
    pub const TESTS: Self = Self { seed: 7, abort_per_mille: 100, delay_per_mille: 200, max_delay_cycles: 2000 };
}

/// How a regime can be checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Sound only while one OS thread enters the kernel (`none`): verify
    /// runs single-core programs only, and the kernel tests enter from the
    /// test's own thread only ([`Which::concurrent`]).
    SingleCoreOnly,
    /// Its kernel entries exclude each other (a lock), so the invariant
    /// checker can run after every system call.
    StopsWorld,
    /// Cores may be inside the kernel together; invariants are checked at
    /// quiescent points only.
    Quiescent,
}

/// Selects a regime type at compile time: `Pick<{ Which::Fine as u8 }>`
/// implements [`Choose`] with `R = Fine<NoStats>`.
#[derive(Debug)]
pub struct Pick<const W: u8>;

/// A regime of the list, by type.
pub trait Choose {
    /// The regime.
    type R: granule_kernel::Regime;
    /// The regime for a kernel booted with `cfg`, with `fault`'s fault
    /// injection where it has any.
    fn make(cfg: &BootConfig, fault: Option<FaultInjection>) -> Self::R;
}

/// `f(cfg, fault)`: gives the table's closures their parameter types.
fn call<R>(f: impl Fn(&BootConfig, Option<FaultInjection>) -> R, cfg: &BootConfig, fault: Option<FaultInjection>) -> R {
    f(cfg, fault)
}

/// Whether two names are the same (usable in constants; the lab's
/// registry filters use it too).
pub const fn same(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    let mut i = 0;
    while i < a.len() {
        if a[i] != b[i] {
            return false;
        }
        i += 1;
    }
    true
}

macro_rules! regimes {
    ($($name:literal, $target:literal => $which:ident, $kind:ident, $ty:ty, $make:expr,)*) => {
        /// Every regime, in table order (`--regimes all`).
        pub const REGIMES: &[&str] = &[$($name),*];

        /// A regime of the list.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum Which {
            $(#[doc = $name] $which,)*
        }

        impl Which {
            /// Every regime, in table order.
            pub const ALL: &'static [Which] = &[$(Which::$which),*];

            /// Its name (`--regimes`).
            pub const fn name(self) -> &'static str {
                match self {
                    $(Which::$which => $name,)*
                }
            }

            /// How it is checked.
            pub const fn kind(self) -> Kind {
                match self {
                    $(Which::$which => Kind::$kind,)*
                }
            }

            /// The kernel test target that runs the suites under it.
            pub const fn target(self) -> &'static str {
                match self {
                    $(Which::$which => $target,)*
                }
            }

            /// The regime named `name`.
            pub const fn named(name: &str) -> Option<Which> {
                $(if same(name, $name) {
                    return Some(Which::$which);
                })*
                None
            }

            /// The regime test target `target` runs under (`None`: not a
            /// per-regime target).
            pub const fn of_target(target: &str) -> Option<Which> {
                $(if same(target, $target) {
                    return Some(Which::$which);
                })*
                None
            }
        }

        /// Run `prog` under regime `name` (`None`: unknown regime).
        pub fn run_named(name: &str, prog: &Program, opts: &RunOptions) -> Option<RunOutcome> {
            Some(match Which::named(name)? {
                $(Which::$which => {
                    run_under(Kind::$kind, <Pick<{ Which::$which as u8 }> as Choose>::make, prog, opts)
                })*
            })
        }

        $(impl Choose for Pick<{ Which::$which as u8 }> {
            type R = $ty;
            fn make(cfg: &BootConfig, fault: Option<FaultInjection>) -> $ty {
                call($make, cfg, fault)
            }
        })*
    };
}

/// How regime `name` is checked, if it is known.
pub fn kind(name: &str) -> Option<Kind> {
    Which::named(name).map(Which::kind)
}

impl Which {
    /// Whether several OS threads may enter its kernel at once: not under
    /// `none` (one thread entering for every core in turn, as `Sim` does,
    /// keeps its promise for any number of cores).
    pub const fn concurrent(self) -> bool {
        !matches!(self.kind(), Kind::SingleCoreOnly)
    }

    /// Whether a suspend of a thread running on another core returns at
    /// once, leaving that core to stop it when it takes the interrupt
    /// (`lockfree`: Synthesis's `STOPME`), instead of stalling the core
    /// first (every lock regime).
    pub const fn suspends_asynchronously(self) -> bool {
        matches!(self, Which::LockFree)
    }

    /// Whether deleting the only capability to a thread of another core
    /// completes at once, the thread stopped by its core when it takes the
    /// interrupt and freed by the next management entry (`lockfree`:
    /// `lockfree/finish_destroy.rs`), instead of stalling the core first
    /// (every lock regime).
    pub const fn destroys_asynchronously(self) -> bool {
        matches!(self, Which::LockFree)
    }
}

/// `none`: sound only while one OS thread enters the kernel.
fn none_single_threaded() -> NoLock {
    // SAFETY: `NoLock` needs cores that never touch the same kernel object
    // at the same time. Its line in the table says `SingleCoreOnly`, and
    // every user keeps to that: `run_under` boots such regimes for one-core
    // programs only, driven by one OS thread; the kernel tests' `Sim` enters
    // the kernel from the test's one thread (acting as every core in turn),
    // and their tests with threads of their own check `Which::concurrent`.
    unsafe { NoLock::new() }
}

/// `fine`, checking that every lock set is covered by the entry's holds,
/// with random delays while it holds object locks under fault injection.
fn fine(cfg: &BootConfig, fault: Option<FaultInjection>) -> Fine<NoStats> {
    let opts = fault.map_or(FineOptions { check_holds: true, ..FineOptions::default() }, |f| FineOptions {
        delay_max_cycles: f.max_delay_cycles,
        delay_permille: f.delay_per_mille,
        seed: f.seed,
        check_holds: true,
    });
    Fine::with_options(cfg, opts)
}

/// `rtm` over real RTM where the CPU has it (elsewhere every transaction
/// aborts: [`MaybeRtm`]), with forced aborts under fault injection.
fn rtm(cfg: &BootConfig, fault: Option<FaultInjection>) -> Transactional<InjectAborts<MaybeRtm>> {
    let (permille, seed) = fault.map_or((0, 0), |f| (f.abort_per_mille, f.seed));
    Transactional::with_htm(cfg.cores, InjectAborts::new(MaybeRtm::detect(), permille, seed), RetryPolicy::DEFAULT)
}

/// `rtm`'s fallback path alone: every transaction aborts (runs anywhere;
/// on a machine without RTM this is all of `rtm` that can run).
fn rtm_fallback(cfg: &BootConfig, _fault: Option<FaultInjection>) -> Transactional<AlwaysAbort> {
    Transactional::with_htm(cfg.cores, AlwaysAbort::new(AbortCause::Conflict), RetryPolicy::DEFAULT)
}

regimes! {
    "none", "under_none" => None, SingleCoreOnly, NoLock, |_cfg, _fault| none_single_threaded(),
    "bkl", "under_bkl" => Bkl, StopsWorld, BigLock<Clh>, |cfg, _fault| BigLock::new(cfg.cores),
    "bkl-ticket", "under_ticket" => Ticket, StopsWorld, BigLock<Ticket>, |cfg, _fault| BigLock::new(cfg.cores),
    "bkl-mcs", "under_mcs" => Mcs, StopsWorld, BigLock<Mcs>, |cfg, _fault| BigLock::new(cfg.cores),
    "fine", "under_fine" => Fine, StopsWorld, Fine<NoStats>, fine,
    "rtm", "under_rtm" => Rtm, StopsWorld, Transactional<InjectAborts<MaybeRtm>>, rtm,
    "rtm-fallback", "under_rtm_fallback" => RtmFallback, StopsWorld, Transactional<AlwaysAbort>, rtm_fallback,
    "lockfree", "under_lockfree" => LockFree, StopsWorld, LockFree, |cfg, _fault| LockFree::new(cfg.cores),
}

/// Real RTM where the CPU has it; elsewhere an HTM whose every transaction
/// aborts (so `rtm` runs everywhere, and is the fallback path where RTM is
/// absent; `granule verify` refuses `rtm` there instead).
#[derive(Debug)]
pub enum MaybeRtm {
    /// The CPU's RTM.
    Real(Rtm),
    /// No RTM here.
    Absent(AlwaysAbort),
}

impl MaybeRtm {
    /// RTM if this CPU has it.
    pub fn detect() -> Self {
        match Rtm::new() {
            Ok(rtm) => Self::Real(rtm),
            Err(_) => Self::Absent(AlwaysAbort::new(AbortCause::Conflict)),
        }
    }
}

// SAFETY: every method forwards to the one implementation chosen when the
// value was built, and never changes which, so a transaction begun through
// this value is ended, aborted and tested by the same implementation, and
// that implementation's own contract holds.
unsafe impl Htm for MaybeRtm {
    fn begin(&self) -> Result<(), AbortStatus> {
        match self {
            Self::Real(h) => h.begin(),
            Self::Absent(h) => h.begin(),
        }
    }

    unsafe fn end(&self) {
        match self {
            // SAFETY: the caller is inside a transaction begun by `begin`,
            // i.e. by this same implementation (see the impl's comment).
            Self::Real(h) => unsafe { h.end() },
            // SAFETY: as above.
            Self::Absent(h) => unsafe { h.end() },
        }
    }

    fn abort(&self, code: u8) {
        match self {
            Self::Real(h) => h.abort(code),
            Self::Absent(h) => h.abort(code),
        }
    }

    fn in_transaction(&self) -> bool {
        match self {
            Self::Real(h) => h.in_transaction(),
            Self::Absent(h) => h.in_transaction(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_regime_is_named_and_targeted_once() {
        assert_eq!(Which::ALL.len(), REGIMES.len());
        for (&w, &name) in Which::ALL.iter().zip(REGIMES) {
            assert_eq!(w.name(), name);
            assert_eq!(Which::named(name), Some(w));
            assert_eq!(Which::of_target(w.target()), Some(w));
            assert!(kind(name).is_some());
        }
        assert_eq!(Which::named("nope"), None);
        assert_eq!(Which::of_target("regimes"), None);
        assert!(!Which::None.concurrent() && Which::LockFree.concurrent());
    }
}
