//! Free lists of frames, one per untyped: Synthesis's free list of physical
//! pages (seed `004` §5.3) for granule's 4 KiB frames.
//!
//! When the last capability to a 4 KiB frame goes, the frame is not given
//! back to the slab and the host's allocator: it gets a new generation (so
//! every reference made before is stale), keeps its memory and its bytes'
//! charge to its untyped, and goes on that untyped's list
//! (`State::frame_pools`, a [`granule_sync::lockfree::Pools`]). The next
//! retype of a 4 KiB frame from the same untyped pops it and zeroes it —
//! the seed's "allocate a page that needs zeroing".
//!
//! The lists change nothing a program can see: a retype succeeds exactly
//! when it would have without them, because their frames count as free
//! memory and free slab slots, and a retype that needs them for something
//! else gives them back first (`reclaim_frame_pools`). Destroying an
//! untyped frees its list.
//!
//! Every regime runs this one logic: the lock regimes with the kernel held,
//! `lockfree` also on its shared path (`lockfree/pages.rs`), where the pop
//! and the push are its only writes besides the slot's.

use alloc::vec::Vec;

use granule_sync::lockfree::Rmw;

use crate::object::{Frame, Ref, Untyped};
use crate::state::{Ctx, Object};
use crate::waits::Waits;

/// The frame size the lists keep (4 KiB).
pub(crate) const POOLED_BITS: u8 = 12;

impl<W: Waits> Ctx<'_, W> {
    /// Whether frame `f` goes on its untyped's list when its last
    /// capability goes: a 4 KiB frame whose untyped is live.
    pub(crate) fn poolable(&mut self, f: Ref<Frame>) -> Option<Ref<Untyped>> {
        let s = self.slot(f)?;
        let (parent, small) = (s.hdr.parent?, s.obj_ref().size() == 1 << POOLED_BITS);
        (small && self.live(parent)).then_some(parent)
    }

    /// Put frame `f`, whose last capability has gone and which is mapped
    /// nowhere, on untyped `u`'s list. The caller has `f` to itself.
    pub(crate) fn pool_frame(&mut self, f: Ref<Frame>, u: Ref<Untyped>, rmw: &impl Fn(Rmw)) {
        // SAFETY: the caller has `f` to itself (`Ctx::new`'s contract and
        // this function's): nobody else reads or writes its slot.
        if unsafe { <Frame as Object>::slab(self.s).renew(f) }.is_some() {
            self.s.frame_pools.push(u.index(), f.index(), rmw);
        }
    }

    /// A frame from untyped `u`'s list, zeroed, now the caller's: `None` if
    /// the list is empty.
    pub(crate) fn take_pooled_frame(&mut self, u: Ref<Untyped>, rmw: &impl Fn(Rmw)) -> Option<Ref<Frame>> {
        let i = self.s.frame_pools.pop(u.index(), rmw)?;
        let (f, frame) = self.at::<Frame>(i)?;
        frame.zero();
        Some(f)
    }

    /// The frames on untyped `u`'s list (management: nothing pushes or pops).
    pub(crate) fn pooled_frames(&self, u: Ref<Untyped>) -> Vec<u32> {
        self.s.frame_pools.quiescent_nodes(u.index())
    }

    /// Free every frame on untyped `u`'s list (management), giving their
    /// bytes back to `u`.
    pub(crate) fn drain_frame_pool(&mut self, u: Ref<Untyped>) {
        for i in self.s.frame_pools.quiescent_take(u.index()) {
            if let Some(f) = self.ref_at::<Frame>(i) {
                self.free_object(f);
            }
        }
    }

    /// Free the frames on every untyped's list (management): a retype that
    /// needs their memory or their slab slots for something else.
    pub(crate) fn reclaim_frame_pools(&mut self) {
        for u in 0..self.s.frame_pools.lists() as u32 {
            if let Some(u) = self.ref_at::<Untyped>(u) {
                self.drain_frame_pool(u);
            }
        }
    }

    /// Frames on all lists (management).
    pub(crate) fn pooled_frame_count(&self) -> usize {
        (0..self.s.frame_pools.lists() as u32).map(|u| self.s.frame_pools.quiescent_nodes(u).len()).sum()
    }
}
