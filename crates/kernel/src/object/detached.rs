//! Capabilities a `lockfree` shared path put in a slot without linking them
//! into the derivation tree: one short list per core.
//!
//! The derivation tree is a doubly-linked list (`cnode.rs`) that two cores
//! cannot change at once without a lock. So a frame allocated on a shared
//! path (`shared_pages.rs`) goes into its slot as a lone root, and its core
//! notes `(slot, untyped's slot)` here. The next system call that runs as
//! a management operation, alone, links every noted slot below its untyped
//! before it does anything else (`Ctx::adopt_detached`): system calls are
//! what changes the tree (invocations, capability transfer), and until then
//! nothing else reaches it. Other management entries (introspection, the
//! invariant checker, ticks) leave the lists as they are. A shared free of
//! a frame that is still on its core's list just takes it off.
//!
//! The list is its core's: written by that core's shared paths and by
//! management, never by two cores at once. Under the lock regimes it stays
//! empty.

use crate::object::{Ref, SlotAddr, Untyped};

/// Most capabilities one core may leave unlinked; a shared allocation that
/// finds its list full runs as a management operation, which empties it.
pub(crate) const MAX_DETACHED: usize = 16;

/// A frame capability in `slot`, allocated from `untyped`, whose capability
/// is in `parent`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub slot: SlotAddr,
    pub parent: SlotAddr,
    pub untyped: Ref<Untyped>,
}

/// One core's list.
#[derive(Clone, Debug, Default)]
pub(crate) struct Detached {
    entries: [Option<Entry>; MAX_DETACHED],
}

impl Detached {
    /// Note `entry`; `false` if the list is full.
    pub fn push(&mut self, entry: Entry) -> bool {
        match self.entries.iter_mut().find(|e| e.is_none()) {
            Some(e) => {
                *e = Some(entry);
                true
            }
            None => false,
        }
    }

    /// Whether there is room for one more.
    pub fn has_room(&self) -> bool {
        self.entries.iter().any(Option::is_none)
    }

    /// The entry of `slot`, if it is on the list.
    pub fn find(&self, slot: SlotAddr) -> Option<Entry> {
        self.entries.iter().flatten().find(|e| e.slot == slot).copied()
    }

    /// Take `slot` off the list; `false` if it was not there.
    pub fn remove(&mut self, slot: SlotAddr) -> bool {
        match self.entries.iter_mut().find(|e| e.is_some_and(|e| e.slot == slot)) {
            Some(e) => {
                *e = None;
                true
            }
            None => false,
        }
    }

    /// Empty the list, returning what was on it.
    pub fn take_all(&mut self) -> impl Iterator<Item = Entry> {
        core::mem::take(&mut self.entries).into_iter().flatten()
    }

    /// What is on the list.
    pub fn iter(&self) -> impl Iterator<Item = Entry> + '_ {
        self.entries.iter().flatten().copied()
    }
}
