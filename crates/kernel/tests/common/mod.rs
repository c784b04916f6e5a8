//! The test platform (`granule-verify`) as the kernel's tests use it, and
//! the regime this test target runs under.
//!
//! `Sim` acts as every core and user thread (invariants checked after every
//! kernel entry); `Sim::run_threads` runs thread programs with one OS thread
//! per core; `encode` writes system calls and invocations. The regime is
//! picked from the target's name: `under_bkl`, `under_ticket`, `under_mcs`,
//! `under_fine`, `under_lockfree`, `under_rtm`, `under_rtm_fallback`,
//! `under_none` (`granule_verify::regimes` lists them); any other target
//! boots the big lock. The choice is a constant, so [`Under`] is one
//! concrete regime type per target and every suite is compiled,
//! monomorphised, once per regime from one source.

#![allow(dead_code, unused_imports)]

use granule_kernel::BootConfig;
use granule_verify::regimes::{Choose, FaultInjection, Pick};

pub use granule_verify::config::for_tests as config;
pub use granule_verify::cores::{assert_conserved, core_loop, Entry, Next, Stress, Threads};
pub use granule_verify::encode::{self, msg, Invocation};
pub use granule_verify::regimes::Which;

/// A kernel the test drives (this target's regime unless named).
pub type Sim<R = Under> = granule_verify::sim::Sim<R>;

/// This target's regime.
pub const WHICH: Which = match Which::of_target(env!("CARGO_CRATE_NAME")) {
    Some(w) => w,
    None => Which::Bkl,
};

/// Whether tests may enter the kernel from several threads at once (not
/// under `none`).
pub const CONCURRENT: bool = WHICH.concurrent();

/// The regime of this target.
pub type Under = <Pick<{ WHICH as u8 }> as Choose>::R;

/// A fresh [`Under`] regime for a kernel booted with `cfg`.
pub fn regime(cfg: &BootConfig) -> Under {
    <Pick<{ WHICH as u8 }> as Choose>::make(cfg, None)
}

/// A fresh [`Under`] regime with its own fault injection where it has any
/// (`fine`: delays while object locks are held; `rtm`: injected aborts).
pub fn faulty_regime(cfg: &BootConfig) -> Under {
    <Pick<{ WHICH as u8 }> as Choose>::make(cfg, Some(FaultInjection::TESTS))
}

/// `Sim::new`: a kernel of `cores` cores under this target's regime.
pub trait SimHere {
    /// Boot it; core 0 runs the root thread.
    fn new(cores: usize) -> Self;
}

impl SimHere for Sim {
    fn new(cores: usize) -> Self {
        let cfg = config(cores);
        let r = regime(&cfg);
        Self::with(cfg, r)
    }
}
