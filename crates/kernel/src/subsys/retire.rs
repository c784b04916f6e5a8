//! Retired sysctl memory and its grace period (see `sysctl/tree.rs`).
//!
//! A replaced body or a pruned node goes on its core's list; a whole-kernel
//! entry — no other core is inside the kernel, so none is reading the
//! tree — frees every list. The lists are bounded: past [`RETIRE_LIMIT`]
//! retired items a change of the tree asks for a whole-kernel entry
//! itself, so memory waiting for a grace period stays bounded even under a
//! policy and regime that rarely have one.

use alloc::boxed::Box;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;
use granule_sync::lock::TicketMutex;

use crate::abi::SysctlKind;

use super::sysctl::tree::{Retire, Retired};

/// Retired items past which a change waits for a whole-kernel entry.
pub(crate) const RETIRE_LIMIT: usize = 4096;

/// One core's retired items.
type CoreList = TicketMutex<Vec<Retired<SysctlKind>>>;

/// Every core's retired list.
pub(crate) struct RetireLists {
    lists: Box<[CachePadded<CoreList>]>,
    count: AtomicUsize,
}

impl core::fmt::Debug for RetireLists {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RetireLists").field("count", &self.pending()).finish()
    }
}

impl RetireLists {
    pub fn new(cores: usize) -> Self {
        Self {
            lists: (0..cores).map(|_| CachePadded::new(TicketMutex::new(Vec::new()))).collect(),
            count: AtomicUsize::new(0),
        }
    }

    /// Items waiting for a grace period.
    pub fn pending(&self) -> usize {
        self.count.load(Ordering::Relaxed)
    }

    /// Whether a change must wait for a whole-kernel entry.
    pub fn over_limit(&self) -> bool {
        self.pending() >= RETIRE_LIMIT
    }

    /// Core `core`'s way to retire.
    pub fn of(&self, core: usize) -> CoreRetire<'_> {
        CoreRetire { lists: self, core }
    }

    /// Free everything retired.
    ///
    /// # Safety
    ///
    /// The caller holds the whole kernel (or is booting or dropping it): no
    /// other core is inside the kernel, so none is reading the tree — the
    /// grace period (module documentation).
    pub unsafe fn free_all(&self) {
        if self.pending() == 0 {
            return;
        }
        for l in self.lists.iter() {
            let items = core::mem::take(&mut *l.lock());
            self.count.fetch_sub(items.len(), Ordering::Relaxed);
            for r in items {
                // SAFETY: the caller's contract: no other core is inside
                // the kernel, and every read of the tree happens inside a
                // kernel entry, so nothing retired is being read (the grace
                // period `Retired::free` asks for).
                unsafe { r.free() };
            }
        }
    }
}

impl Drop for RetireLists {
    fn drop(&mut self) {
        // SAFETY: dropping the kernel: nothing reads any more.
        unsafe { self.free_all() };
    }
}

/// One core's retired list.
pub(crate) struct CoreRetire<'a> {
    lists: &'a RetireLists,
    core: usize,
}

impl Retire<SysctlKind> for CoreRetire<'_> {
    fn retire(&self, r: Retired<SysctlKind>) {
        self.lists.lists[self.core].lock().push(r);
        self.lists.count.fetch_add(1, Ordering::Relaxed);
    }
}
