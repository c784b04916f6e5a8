//! Two kernel subsystems for seed `003`'s study — a sysctl registry and a
//! kernel log — and the four ways to lock them ([`SubsystemLocking`]).
//!
//! Both are reached by their own system calls ([`crate::abi::Sysno::Sysctl`],
//! [`crate::abi::Sysno::Klog`]) through the one decoder and the regimes'
//! ordinary entries (`call.rs`): under `giant` the call asks for the whole
//! kernel (`fine` stops and reruns it on the write side; `lockfree` sends
//! it to a management entry); under the other policies it runs where IPC
//! runs (`fine`'s read side, `lockfree`'s shared path) and takes only the
//! subsystem's own locks. The data structures are the same under every
//! policy and correct with no lock at all (`sysctl/tree.rs`, `klog.rs`):
//! the policies differ only in the locks taken around them, which is what
//! the study measures.

pub(crate) mod call;
pub(crate) mod klog;
mod locks;
pub(crate) mod policy;
pub(crate) mod request;
pub(crate) mod retire;
pub(crate) mod sysctl;
mod words;

pub use policy::SubsystemLocking;

pub(crate) use locks::SubsysLocks;

use core::num::NonZeroU64;
use core::sync::atomic::{AtomicU64, Ordering};

use crate::abi::Word;
use crate::config::BootConfig;
use crate::object::{Notification, Ref};

/// The subsystems' state, beside the kernel's objects.
#[derive(Debug)]
pub(crate) struct Subsystems {
    pub policy: SubsystemLocking,
    pub tree: sysctl::tree::Tree,
    pub klog: klog::Klog,
    pub retired: retire::RetireLists,
    pub locks: SubsysLocks,
    /// The reader's notification: slot index and generation (`u64::MAX`:
    /// none), and the badge. Written only in whole-kernel entries.
    notify: AtomicU64,
    notify_badge: AtomicU64,
}

impl Subsystems {
    /// The subsystems of a kernel booted with `config`, the sysctl tree
    /// populated as FreeBSD's is.
    pub fn boot(config: &BootConfig) -> Self {
        let s = Self {
            policy: config.subsystem_locking,
            tree: sysctl::tree::Tree::new(config.sysctl_max_nodes, crate::abi::SYSCTL_MAX_LEVELS),
            klog: klog::Klog::new(config.klog_capacity),
            retired: retire::RetireLists::new(config.cores),
            locks: SubsysLocks::new(config.cores),
            notify: AtomicU64::new(u64::MAX),
            notify_badge: AtomicU64::new(0),
        };
        sysctl::freebsd::populate(&s.tree, &s.retired.of(0), config);
        // SAFETY: booting: no core is in the kernel yet.
        unsafe { s.retired.free_all() };
        s
    }

    /// The notification the log's reader sleeps on, if bound.
    pub fn notify(&self) -> Option<(Ref<Notification>, Word)> {
        let w = self.notify.load(Ordering::Relaxed);
        let r = NonZeroU64::new(w).filter(|_| w != u64::MAX)?;
        // SAFETY: the word is `u64::MAX` or, written by `bind`, the word of
        // a `Ref<Notification>` of this kernel.
        Some((unsafe { Ref::from_raw(r) }, self.notify_badge.load(Ordering::Relaxed)))
    }

    /// The subsystems' invariants (whole-kernel entries only: nothing
    /// changes them meanwhile): the tree's structure and count, and the
    /// log's positions.
    pub fn check(&self) -> Result<(), (&'static str, alloc::string::String)> {
        self.tree
            .check(|kind, value| sysctl::tree::check_value(kind, value).is_ok())
            .map_err(|d| ("sysctl-tree", d))?;
        self.klog.check().map_err(|d| ("klog-ring", d))
    }

    /// Bind (or unbind) the reader's notification (whole-kernel entries
    /// only).
    pub fn bind(&self, n: Option<(Ref<Notification>, Word)>) {
        let w = n.map_or(u64::MAX, |(r, _)| r.raw().get());
        self.notify_badge.store(n.map_or(0, |(_, b)| b), Ordering::Relaxed);
        self.notify.store(w, Ordering::Relaxed);
    }
}
