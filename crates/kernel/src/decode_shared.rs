//! The shared path's decoders for frame allocation and free
//! (`object/shared_pages.rs` has the algorithm) and for a thread's destroy
//! (`object/shared_destroy.rs`): the one retype and CNode decoders, then
//! what decides whether the call may run shared.

use core::cell::Cell;

use crate::abi::{InvocationLabel, ObjectType, Word};
use crate::args::Args;
use crate::decode::{CallerView, Decoded, Scope};
use crate::object::cnode::CNodeOp;
use crate::object::detached::Entry;
use crate::object::frame_pool::POOLED_BITS;
use crate::object::shared_pages::PageOp;
use crate::object::{CNode, Cap, CapObj, Frame, Ref, SlotAddr, Tcb, Untyped};
use crate::state::{Ctx, Object};
use crate::waits::Waits;

impl<W: Waits> Ctx<'_, W> {
    /// `UntypedRetype` through the untyped capability at `cptr`, in a
    /// shared scope: [`PageOp::Alloc`] for one 4 KiB frame when the
    /// untyped's free list gives one; the decoder's error; or `None` (a
    /// management entry).
    pub(crate) fn decode_shared_alloc(
        &mut self,
        caller: &CallerView,
        untyped: Ref<Untyped>,
        cptr: Word,
        label: InvocationLabel,
        args: &Args,
    ) -> Option<Decoded> {
        let src = SlotAddr { cnode: caller.cspace?, index: u32::try_from(cptr).ok()? };
        let op = match self.decode_retype_args(caller.t, untyped, src, label, args) {
            Ok(op) => op,
            Err(e) => return Some(Decoded::Fail(e)),
        };
        let one_page = op.ty == ObjectType::Frame && op.size_bits == POOLED_BITS && op.count == 1;
        let dest = SlotAddr { cnode: op.dest, index: op.first };
        // A dead slot (`object/shared_destroy.rs`) is empty once management
        // has finished its destroy: management fills it.
        let dead = self.cap_ref(dest).is_some_and(|s| s.cap.is_dead());
        if !one_page || dead || !self.cs(self.core).detached.has_room() {
            return None;
        }
        let pops = Cell::new(0);
        let frame = self.take_pooled_frame(untyped, &|_| pops.set(pops.get() + 1))?;
        Some(Decoded::Page(PageOp::Alloc { frame, untyped, src, dest, pops: pops.get() }))
    }

    /// `CNodeDelete` on CNode `cnode` in a shared scope: a frame's free or
    /// a thread's destroy where they may run shared; the decoder's error;
    /// or `None` (a management entry).
    pub(crate) fn decode_shared_delete<S: Scope>(
        &mut self,
        scope: &S,
        caller: &CallerView,
        cnode: Ref<CNode>,
        label: InvocationLabel,
        args: &Args,
    ) -> Option<Decoded> {
        let slot = match self.decode_cnode(caller.t, cnode, label, args) {
            Ok(CNodeOp::Delete { slot }) => slot,
            Ok(_) => return None,
            Err(e) => return Some(Decoded::Fail(e)),
        };
        let cap = self.cap_at(slot);
        match cap.obj {
            CapObj::Frame(frame) => self.decode_shared_free(slot, frame),
            CapObj::Tcb(t) => self.decode_shared_destroy(scope, caller, slot, cap, t),
            _ => None,
        }
    }

    /// [`PageOp::Free`] of `frame` through its capability in `slot`, if it
    /// is an unmapped 4 KiB frame on this core's detached list.
    fn decode_shared_free(&mut self, slot: SlotAddr, frame: Ref<Frame>) -> Option<Decoded> {
        let Entry { untyped, .. } = self.cs(self.core).detached.find(slot)?;
        let unmapped = self.s.mappings.mapped(frame.index(), &|_| {}).is_none();
        (unmapped && self.live(untyped)).then_some(Decoded::Page(PageOp::Free { frame, untyped, slot }))
    }

    /// [`Decoded::Destroy`] of thread `t` through `cap` in `slot`, if it may
    /// run shared: `t` is live and not the caller, with no stop request
    /// standing and holding no stalled cores, and `cap` is its only
    /// capability, with nothing derived from it; and this core's doomed
    /// list has room. `t` may be of any core, this one included
    /// (`lockfree/destroy.rs`).
    fn decode_shared_destroy<S: Scope>(
        &mut self,
        scope: &S,
        caller: &CallerView,
        slot: SlotAddr,
        cap: Cap,
        t: Ref<Tcb>,
    ) -> Option<Decoded> {
        if t == caller.t || !self.live(t) || !self.cs(self.core).doomed.has_room() {
            return None;
        }
        // The stall owner is management's (written only there, like a slot).
        if scope.stopping(t) || self.stall_owner() == Some(t) {
            return None;
        }
        // SAFETY: a TCB's capability count changes only where the whole
        // kernel is held, never while a shared path runs.
        let only = unsafe { <Tcb as Object>::slab(self.s).caps(t.index()) } == Some(1);
        let s = self.cap_ref(slot)?;
        let (depth, next) = (s.depth, s.next);
        let leaf = next.map_or(true, |n| self.cap_ref(n).is_some_and(|n| n.depth <= depth));
        (only && leaf).then_some(Decoded::Destroy { t, slot, cap })
    }
}
