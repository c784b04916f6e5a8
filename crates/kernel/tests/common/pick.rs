//! Which regime a test target boots, from the target's name: `under_bkl`,
//! `under_ticket`, `under_mcs`, `under_fine`, `under_lockfree`, `under_rtm`,
//! `under_rtm_fallback`, `under_none`; any other target boots the big lock.
//! The choice is a constant, so [`Under`] is one concrete regime type per
//! target and every suite is compiled, monomorphised, once per regime from
//! one source.

use granule_kernel::{BigLock, BootConfig, Fine, FineOptions, LockFree, NoLock, Regime, Transactional};
use granule_sync::lock::{Mcs, Ticket};
use granule_sync::profile::{AbortCause, NoStats};
use granule_sync::rtm::{AbortStatus, AlwaysAbort, Htm, InjectAborts, RetryPolicy, Rtm};

/// The regimes the suites run under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Which {
    /// The big lock, CLH (`bkl`).
    Bkl,
    /// The big lock, ticket (`bkl-ticket`).
    Ticket,
    /// The big lock, MCS (`bkl-mcs`).
    Mcs,
    /// `fine`.
    Fine,
    /// `lockfree`.
    LockFree,
    /// `rtm` over real RTM where the CPU has it ([`MaybeRtm`]).
    Rtm,
    /// `rtm` whose every transaction aborts: the fallback path.
    RtmFallback,
    /// `none`.
    None,
}

/// This target's regime.
pub const WHICH: Which = which(env!("CARGO_CRATE_NAME").as_bytes());

/// Whether tests may enter the kernel from several threads at once: not
/// under `none`, whose soundness rests on cores never touching the same
/// object at the same time. (One thread entering for every core in turn, as
/// `Sim` does, keeps that promise for any number of cores.)
pub const CONCURRENT: bool = !matches!(WHICH, Which::None);

const fn which(name: &[u8]) -> Which {
    const TABLE: [(&[u8], Which); 8] = [
        (b"under_bkl", Which::Bkl),
        (b"under_ticket", Which::Ticket),
        (b"under_mcs", Which::Mcs),
        (b"under_fine", Which::Fine),
        (b"under_lockfree", Which::LockFree),
        (b"under_rtm", Which::Rtm),
        (b"under_rtm_fallback", Which::RtmFallback),
        (b"under_none", Which::None),
    ];
    let mut i = 0;
    while i < TABLE.len() {
        if eq(name, TABLE[i].0) {
            return TABLE[i].1;
        }
        i += 1;
    }
    Which::Bkl
}

const fn eq(a: &[u8], b: &[u8]) -> bool {
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

/// Selects [`Under`] at compile time.
pub struct Pick<const W: u8>;

/// A regime a suite can boot, plain or with its fault injection.
pub trait Choose {
    type R: Regime;
    /// The regime for a kernel booted with `cfg`.
    fn make(cfg: &BootConfig) -> Self::R;
    /// The same regime with its own fault injection where it has any
    /// (`fine`: delays while object locks are held; `rtm`: injected
    /// aborts); the plain regime otherwise.
    fn make_faulty(cfg: &BootConfig) -> Self::R {
        Self::make(cfg)
    }
}

/// The regime of this target.
pub type Under = <Pick<{ WHICH as u8 }> as Choose>::R;

/// A fresh [`Under`] regime for a kernel booted with `cfg`.
pub fn regime(cfg: &BootConfig) -> Under {
    <Pick<{ WHICH as u8 }> as Choose>::make(cfg)
}

/// A fresh [`Under`] regime with its fault injection (see
/// [`Choose::make_faulty`]).
pub fn faulty_regime(cfg: &BootConfig) -> Under {
    <Pick<{ WHICH as u8 }> as Choose>::make_faulty(cfg)
}

impl Choose for Pick<{ Which::Bkl as u8 }> {
    type R = BigLock;
    fn make(cfg: &BootConfig) -> BigLock {
        BigLock::new(cfg.cores)
    }
}

impl Choose for Pick<{ Which::Ticket as u8 }> {
    type R = BigLock<Ticket>;
    fn make(cfg: &BootConfig) -> Self::R {
        BigLock::new(cfg.cores)
    }
}

impl Choose for Pick<{ Which::Mcs as u8 }> {
    type R = BigLock<Mcs>;
    fn make(cfg: &BootConfig) -> Self::R {
        BigLock::new(cfg.cores)
    }
}

impl Choose for Pick<{ Which::Fine as u8 }> {
    type R = Fine<NoStats>;
    fn make(cfg: &BootConfig) -> Self::R {
        Fine::new(cfg)
    }
    fn make_faulty(cfg: &BootConfig) -> Self::R {
        Fine::with_options(cfg, FineOptions { delay_max_cycles: 2000, delay_permille: 200, seed: 7 })
    }
}

impl Choose for Pick<{ Which::LockFree as u8 }> {
    type R = LockFree;
    fn make(cfg: &BootConfig) -> LockFree {
        LockFree::new(cfg.cores)
    }
}

impl Choose for Pick<{ Which::Rtm as u8 }> {
    type R = Transactional<InjectAborts<MaybeRtm>>;
    fn make(cfg: &BootConfig) -> Self::R {
        Transactional::with_htm(cfg.cores, InjectAborts::new(MaybeRtm::detect(), 0, 1), RetryPolicy::DEFAULT)
    }
    fn make_faulty(cfg: &BootConfig) -> Self::R {
        Transactional::with_htm(cfg.cores, InjectAborts::new(MaybeRtm::detect(), 100, 1), RetryPolicy::DEFAULT)
    }
}

impl Choose for Pick<{ Which::RtmFallback as u8 }> {
    type R = Transactional<AlwaysAbort>;
    fn make(cfg: &BootConfig) -> Self::R {
        Transactional::with_htm(cfg.cores, AlwaysAbort::new(AbortCause::Conflict), RetryPolicy::DEFAULT)
    }
}

impl Choose for Pick<{ Which::None as u8 }> {
    type R = NoLock;
    fn make(_: &BootConfig) -> NoLock {
        // SAFETY: `NoLock` needs cores that never touch the same kernel
        // object at the same time. Under this target the suites enter the
        // kernel from one thread only (`Sim` acts as every core in turn),
        // and the one test with threads of its own checks [`CONCURRENT`].
        unsafe { NoLock::new() }
    }
}

/// Real RTM where the CPU has it; elsewhere an HTM whose every transaction
/// aborts (so `under_rtm` runs everywhere, and is the fallback path where
/// RTM is absent).
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
