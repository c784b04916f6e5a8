//! Allocating and freeing 4 KiB frames on `lockfree`'s shared path: seed
//! `004` §5.3's page allocation without locks, beside the lock-free
//! mappings.
//!
//! A frame comes from its untyped's free list (`frame_pool.rs`) and its
//! capability goes into a CNode slot. Under the lock regimes and in
//! `lockfree`'s management entries that is `invoke_untyped` and
//! `delete_cap` with the kernel to themselves. On the shared path, where
//! other cores run meanwhile, three things change:
//!
//! * **The slot is claimed by CAS.** Slots hold their capability in a
//!   sequence lock (`slot_cap.rs`): the allocation writes its capability
//!   only if the slot is still empty, by one CAS of the slot's sequence
//!   word; two cores allocating into one slot get one `Done` and one
//!   `DeleteFirst`. The free clears the slot the same way.
//! * **The derivation tree waits.** The frame's slot is left a lone root
//!   and noted on its core's list (`detached.rs`); the next system call
//!   run as a management operation links it below its untyped first.
//!   Only a frame still on the freeing core's list is freed here, so no
//!   copy of its capability exists.
//! * **A grace period before reuse.** Another core may have read the
//!   capability from the slot before the free cleared it, and be using it
//!   in the entry it is in. So the free waits until every other core has
//!   left that entry (`LockFreeOf::wait_out_of_entry`, bounded by one
//!   entry); then nothing refers to the frame. It unmaps the frame if such
//!   an entry mapped it, gives the frame a new generation and pushes it on
//!   its untyped's list. A core that is itself waiting (for a suspend or a
//!   free of its own) holds no reference to a frame it may not own, so the
//!   wait does not wait for it.
//!
//! **What decides.** The allocation's decision is its pop from the free
//! list, the decoder's last step: an empty list sends the call to a
//! management entry, which carves a new frame (so a retype succeeds
//! exactly when it would under every other regime). The free's decision is
//! its CAS of the slot. Everything else (arguments, destination, errors) is
//! the one retype and CNode decoder's (the shared decoders are in
//! `decode.rs`).

use granule_sync::lockfree::Rmw;

use super::detached::DetachedFrame;
use super::shared::LfState;
use crate::abi::Error;
use crate::object::{Cap, CapObj, Frame, Ref, SlotAddr, Untyped};
use crate::outcome::Outcome;
use crate::state::Ctx;

/// A frame allocation or free decoded by a shared scope.
#[derive(Clone, Copy, Debug)]
pub(crate) enum PageOp {
    /// Put `frame`, just popped from `untyped`'s free list (by the decoder,
    /// in `pops` attempts) and now the caller's, into the slot `dest`,
    /// whose derivation parent will be `src`.
    Alloc { frame: Ref<Frame>, untyped: Ref<Untyped>, src: SlotAddr, dest: SlotAddr, pops: u32 },
    /// Delete the only capability to `frame`, in `slot`, allocated on this
    /// core's shared path from `untyped` and on its detached list.
    Free { frame: Ref<Frame>, untyped: Ref<Untyped>, slot: SlotAddr },
}

impl Ctx<'_, LfState> {
    /// Execute a [`PageOp`] (the free's grace period and the frame's reuse
    /// follow in the shared entry: `retire_shared_frame`).
    pub(crate) fn invoke_page(&mut self, op: PageOp, rmw: &impl Fn(Rmw)) -> Outcome {
        match op {
            PageOp::Alloc { frame, untyped, src, dest, pops } => {
                for _ in 0..pops {
                    rmw(Rmw::Cmpxchg16b);
                }
                if let Some(s) = self.slot(frame) {
                    s.hdr.caps = 1;
                }
                let cap = Cap::new(CapObj::Frame(frame));
                let won = self.cap_ref(dest).is_some_and(|s| s.cap.replace_shared(|c| c.obj.is_null(), cap, rmw));
                if !won {
                    // Another core's capability got there first.
                    self.undo_page(op, rmw);
                    return Outcome::Error(Error::DeleteFirst);
                }
                self.lists(self.core).detached.push(DetachedFrame { slot: dest, parent: src, untyped });
                Outcome::Done
            }
            PageOp::Free { frame, slot, .. } => {
                self.lists(self.core).detached.remove(slot);
                let mine = CapObj::Frame(frame);
                if !self.cap_ref(slot).is_some_and(|s| s.cap.replace_shared(|c| c.obj == mine, Cap::NULL, rmw)) {
                    return Outcome::Error(Error::FailedLookup);
                }
                Outcome::Done
            }
        }
    }

    /// A decoded allocation that will not run: its frame goes back.
    pub(crate) fn undo_page(&mut self, op: PageOp, rmw: &impl Fn(Rmw)) {
        if let PageOp::Alloc { frame, untyped, .. } = op {
            if let Some(s) = self.slot(frame) {
                s.hdr.caps = 0;
            }
            self.s.frame_pools.push(untyped.index(), frame.index(), rmw);
        }
    }

    /// After a shared free's grace period: nothing refers to `frame` any
    /// more; unmap it if an entry that had read its capability mapped it,
    /// and put it on `untyped`'s free list.
    pub(crate) fn retire_shared_frame(&mut self, frame: Ref<Frame>, untyped: Ref<Untyped>, rmw: &impl Fn(Rmw)) {
        // `unmap` of an unmapped frame is one load and no change.
        if let Some(m) = self.s.mappings.unmap(frame.index(), rmw) {
            self.translation_changed(m, true);
        }
        self.pool_frame(frame, untyped, rmw);
    }

    /// Link every core's detached frame capabilities into the derivation
    /// tree, below their untyped (management, before anything else).
    pub(crate) fn adopt_detached(&mut self) {
        for e in self.take_core_lists(|l| &mut l.detached) {
            let (cap, _) = self.unlink_cap(e.slot);
            if !cap.obj.is_null() {
                self.insert_cap(Some(e.parent), e.slot, cap);
            }
        }
    }
}
