//! The shared path's decoders for frame allocation and free
//! (`object/shared_pages.rs` has the algorithm): the one retype and CNode
//! decoders, then what decides whether the call may run shared.

use core::cell::Cell;

use crate::abi::{InvocationLabel, ObjectType, Word};
use crate::args::Args;
use crate::decode::{CallerView, Decoded};
use crate::object::cnode::CNodeOp;
use crate::object::detached::Entry;
use crate::object::frame_pool::POOLED_BITS;
use crate::object::shared_pages::PageOp;
use crate::object::{CNode, CapObj, Ref, SlotAddr, Untyped};
use crate::state::Ctx;
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
        if !one_page || !self.cs(self.core).detached.has_room() {
            return None;
        }
        let pops = Cell::new(0);
        let frame = self.take_pooled_frame(untyped, &|_| pops.set(pops.get() + 1))?;
        let dest = SlotAddr { cnode: op.dest, index: op.first };
        Some(Decoded::Page(PageOp::Alloc { frame, untyped, src, dest, pops: pops.get() }))
    }

    /// `CNodeDelete` on CNode `cnode` in a shared scope: [`PageOp::Free`]
    /// for an unmapped 4 KiB frame on this core's detached list; the
    /// decoder's error; or `None` (a management entry).
    pub(crate) fn decode_shared_free(
        &mut self,
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
        let Entry { untyped, .. } = self.cs(self.core).detached.find(slot)?;
        let CapObj::Frame(frame) = self.cap_at(slot).obj else { return None };
        let unmapped = self.s.mappings.mapped(frame.index(), &|_| {}).is_none();
        (unmapped && self.live(untyped)).then_some(Decoded::Page(PageOp::Free { frame, untyped, slot }))
    }
}
