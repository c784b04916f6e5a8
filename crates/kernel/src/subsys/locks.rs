//! The subsystems' own locks, profiled like the kernel's (seed `003`'s
//! tables are the lock profiler's): the sysctl sx lock, the "sysctl mem"
//! lock and the klog mutex.

use alloc::vec::Vec;

use granule_sync::lock::{Lock, Ticket};
use granule_sync::profile::{Profile, SiteRecord};
use granule_sync::rw::ProfiledSx;

use crate::spin::spin_hook;

use super::sysctl::tree::Visit;

/// The locks (held only as the policy says; see `SubsystemLocking`).
#[derive(Debug)]
pub(crate) struct SubsysLocks {
    pub sysctl: ProfiledSx<Profile>,
    pub mem: Lock<Ticket, Profile>,
    pub klog: Lock<Ticket, Profile>,
}

impl SubsysLocks {
    pub fn new(cores: usize) -> Self {
        Self {
            sysctl: ProfiledSx::new("sx:sysctl lock", "ex:sysctl lock", cores),
            mem: Lock::new("ex:sysctl mem", cores),
            klog: Lock::new("klog", cores),
        }
    }

    /// Every acquisition site recorded so far.
    pub fn profile(&self) -> Vec<SiteRecord> {
        let mut v = self.sysctl.shared_stats().snapshot();
        v.extend(self.sysctl.exclusive_stats().snapshot());
        v.extend(self.mem.stats().snapshot());
        v.extend(self.klog.stats().snapshot());
        v
    }
}

/// The `improper` policy's access points: the sysctl lock taken
/// exclusively around each one (attributed to the access point's line).
pub(crate) struct EveryPoint<'a> {
    pub locks: &'a SubsysLocks,
    pub core: usize,
}

impl Visit for EveryPoint<'_> {
    #[track_caller]
    fn visit<T>(&self, f: impl FnOnce() -> T) -> T {
        self.locks.sysctl.xlock(self.core, spin_hook);
        let out = f();
        self.locks.sysctl.xunlock(self.core);
        out
    }
}
