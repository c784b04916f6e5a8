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
use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering};

use crossbeam_utils::CachePadded;
use granule_sync::lock::TicketMutex;

use super::sysctl::tree::{Body, Node};

/// Retired items past which a change waits for a whole-kernel entry.
pub(crate) const RETIRE_LIMIT: usize = 4096;

/// Memory no longer reachable from the tree, still readable by entries
/// that reached it before.
pub(crate) enum Retired {
    Body(NonNull<Body>),
    Node(NonNull<Node>),
}

// SAFETY: a retired pointer is owned by the retire list alone (it was
// unpublished by the CAS that retired it, and the retiring core gave it up);
// the pointee is `Send` (plain data, and nodes are `Send`).
unsafe impl Send for Retired {}

impl Retired {
    /// A body taken out by a CAS (non-null: only non-null bodies are
    /// replaced).
    pub fn body(p: *mut Body) -> Self {
        Self::Body(NonNull::new(p).expect("a replaced body is non-null"))
    }

    /// A node pruned from its parent.
    pub fn node(p: NonNull<Node>) -> Self {
        Self::Node(p)
    }

    /// Free it. Only after its grace period.
    fn free(self) {
        match self {
            // SAFETY: retired once (by the CAS that unpublished it), and the
            // grace period has passed: nothing can read it any more.
            Self::Body(p) => drop(unsafe { Box::from_raw(p.as_ptr()) }),
            // SAFETY: as above; a pruned node's body is null (removal marked
            // it and retired its last body), so dropping it frees only it.
            Self::Node(p) => drop(unsafe { Box::from_raw(p.as_ptr()) }),
        }
    }
}

/// Where a change puts what it retires.
pub(crate) trait Retire {
    fn retire(&self, r: Retired);
}

/// Every core's retired list.
pub(crate) struct RetireLists {
    lists: Box<[CachePadded<TicketMutex<Vec<Retired>>>]>,
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

    /// Free everything retired. The caller holds the whole kernel (the
    /// grace period; see the module documentation).
    pub fn free_all(&self) {
        if self.pending() == 0 {
            return;
        }
        for l in self.lists.iter() {
            let items = core::mem::take(&mut *l.lock());
            self.count.fetch_sub(items.len(), Ordering::Relaxed);
            items.into_iter().for_each(Retired::free);
        }
    }
}

impl Drop for RetireLists {
    fn drop(&mut self) {
        // Dropping the kernel: nothing reads any more.
        self.free_all();
    }
}

/// One core's retired list.
pub(crate) struct CoreRetire<'a> {
    lists: &'a RetireLists,
    core: usize,
}

impl Retire for CoreRetire<'_> {
    fn retire(&self, r: Retired) {
        self.lists.lists[self.core].lock().push(r);
        self.lists.count.fetch_add(1, Ordering::Relaxed);
    }
}
