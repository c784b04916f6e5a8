//! Capabilities a `lockfree` shared path put in a slot without linking them
//! into the derivation tree: one short list per core.
//!
//! The derivation tree is a doubly-linked list (`cnode.rs`) that two cores
//! cannot change at once without a lock. So a frame allocated on a shared
//! path (`pages.rs`) goes into its slot as a lone root, and its core
//! notes `(slot, untyped's slot)` here. The next system call that runs as
//! a management operation, alone, links every noted slot below its untyped
//! before it does anything else (`Ctx::adopt_detached`): system calls are
//! what changes the tree (invocations, capability transfer), and until then
//! nothing else reaches it. Other management entries (introspection, the
//! invariant checker, ticks) leave the lists as they are. A shared free of
//! a frame that is still on its core's list just takes it off.
//!
//! Under the lock regimes the list stays empty.

use super::core_list::{CoreList, Slotted};
use crate::object::{Ref, SlotAddr, Untyped};

/// Most capabilities one core may leave unlinked; a shared allocation that
/// finds its list full runs as a management operation, which empties it.
pub(crate) const MAX_DETACHED: usize = 16;

/// A frame capability in `slot`, allocated from `untyped`, whose capability
/// is in `parent`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct DetachedFrame {
    pub slot: SlotAddr,
    pub parent: SlotAddr,
    pub untyped: Ref<Untyped>,
}

impl Slotted for DetachedFrame {
    fn slot(&self) -> SlotAddr {
        self.slot
    }
}

/// One core's list.
pub(crate) type Detached = CoreList<DetachedFrame, MAX_DETACHED>;
