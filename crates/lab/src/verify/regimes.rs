//! The regimes `granule verify` runs programs under: **the one list**.
//!
//! Each line names a regime, says how its invariants can be checked, and
//! gives its maker: a closure from `(cores, fault injection)` to the regime.
//! Adding a regime to the kernel means adding one line here, e.g.
//!
//! ```text
//! "fine" => StopsWorld, |cores, fault| Fine::new(cores),
//! ```
//!
//! The maker receives `Some(FaultInjection)` under `--fault-injection`;
//! regimes with fault hooks (forced RTM aborts, delays while object locks
//! are held) build their fault-injecting variant from it, the others ignore
//! it (the driver injects its own delays either way).

use granule_kernel::regime::{BigLock, Fine, FineOptions, LockFree, Transactional};
use granule_kernel::NoLock;
use granule_sync::lock::{Clh, Mcs, Ticket};
use granule_sync::profile::AbortCause;
use granule_sync::rtm::{AlwaysAbort, InjectAborts, RetryPolicy, Rtm};

use super::setup::boot_config;

use super::driver::{run_under, RunOptions, RunOutcome};
use super::program::Program;

/// What `--fault-injection` asks of a regime.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FaultInjection {
    /// Seed of the regime's own fault choices (differs per program).
    pub seed: u64,
    /// Transactions forced to abort, per thousand (RTM regimes).
    pub abort_per_mille: u32,
    /// Longest random delay, in spin-loop iterations, while a fine-grained
    /// regime holds object locks.
    pub max_delay_spins: u32,
}

impl FaultInjection {
    /// The settings `--fault-injection` uses for a program of `seed`.
    pub fn for_program(seed: u64) -> Self {
        Self { seed: seed ^ 0xfa17_fa17_fa17_fa17, abort_per_mille: 250, max_delay_spins: 2000 }
    }
}

/// How a regime can be checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Sound only on one core (`none`): runs single-core programs only.
    SingleCoreOnly,
    /// Its kernel entries exclude each other (a lock), so the invariant
    /// checker can run after every system call.
    StopsWorld,
    /// Cores may be inside the kernel together; invariants are checked at
    /// quiescent points only.
    Quiescent,
}

/// The `none` regime, for one-core kernels only.
fn none_single_core() -> NoLock {
    // SAFETY: `NoLock`'s promise (no two cores inside the kernel touching the
    // same object) holds trivially: this maker is registered `SingleCoreOnly`,
    // and `run_under` boots such regimes only for one-core programs, whose
    // single core is driven by a single OS thread.
    unsafe { NoLock::new() }
}

macro_rules! regimes {
    ($($name:literal => $kind:ident, $make:expr,)*) => {
        /// Every regime, in table order (`--regimes all`).
        pub const REGIMES: &[&str] = &[$($name),*];

        /// How regime `name` is checked, if it is known.
        pub fn kind(name: &str) -> Option<Kind> {
            match name {
                $($name => Some(Kind::$kind),)*
                _ => None,
            }
        }

        /// Run `prog` under regime `name` (`None`: unknown regime).
        pub fn run_named(name: &str, prog: &Program, opts: &RunOptions) -> Option<RunOutcome> {
            match name {
                $($name => Some(run_under(Kind::$kind, $make, prog, opts)),)*
                _ => None,
            }
        }
    };
}

/// `fine`, with random delays while it holds object locks under fault
/// injection (`max_delay_spins` read as cycles).
fn fine(cores: usize, fault: Option<FaultInjection>) -> Fine {
    let opts = fault.map_or(FineOptions::default(), |f| FineOptions {
        delay_max_cycles: u64::from(f.max_delay_spins),
        delay_permille: 250,
        seed: f.seed,
    });
    Fine::with_options(&boot_config(cores), opts)
}

/// `rtm` over real RTM (only where it works: `run_named` refuses it
/// elsewhere), with forced aborts under fault injection.
fn rtm(cores: usize, fault: Option<FaultInjection>) -> Transactional<InjectAborts<Rtm>> {
    let Ok(htm) = Rtm::new() else { unreachable!("rtm is refused where RTM is unavailable") };
    let permille = fault.map_or(0, |f| f.abort_per_mille);
    let seed = fault.map_or(0, |f| f.seed);
    Transactional::with_htm(cores, InjectAborts::new(htm, permille, seed), RetryPolicy::DEFAULT)
}

/// `rtm`'s fallback path alone: every transaction aborts (runs anywhere;
/// on a machine without RTM this is all of `rtm` that can run).
fn rtm_fallback(cores: usize, _fault: Option<FaultInjection>) -> Transactional<AlwaysAbort> {
    Transactional::with_htm(cores, AlwaysAbort::new(AbortCause::Conflict), RetryPolicy::DEFAULT)
}

regimes! {
    "none" => SingleCoreOnly, |_cores, _fault| none_single_core(),
    "bkl" => StopsWorld, |cores, _fault| BigLock::<Clh>::new(cores),
    "bkl-ticket" => StopsWorld, |cores, _fault| BigLock::<Ticket>::new(cores),
    "bkl-mcs" => StopsWorld, |cores, _fault| BigLock::<Mcs>::new(cores),
    "fine" => StopsWorld, fine,
    "rtm" => StopsWorld, rtm,
    "rtm-fallback" => StopsWorld, rtm_fallback,
    "lockfree" => StopsWorld, |cores, _fault| LockFree::new(cores),
}

/// The regimes `verify` knows besides the registry's, with what they are.
pub const EXTRA: &[(&str, &str)] = &[("rtm-fallback", "rtm's fallback path alone: every transaction aborts")];

/// `--regimes` validated: `all`, or known names without duplicates.
pub fn selected(names: &[String]) -> anyhow::Result<Vec<&'static str>> {
    crate::regimes::select_from(REGIMES, names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_regime_has_a_kind_and_selection_works() {
        for r in REGIMES {
            assert!(kind(r).is_some());
        }
        assert_eq!(selected(&["all".into()]).unwrap(), REGIMES);
        assert_eq!(selected(&["bkl".into(), "bkl".into()]).unwrap(), ["bkl"]);
        let e = selected(&["nope".into()]).unwrap_err().to_string();
        assert!(e.contains("unknown regime `nope`") && e.contains("bkl-mcs"), "{e}");
    }
}
