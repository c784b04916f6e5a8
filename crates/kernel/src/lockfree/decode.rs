//! What a shared path decodes beyond the one decoder (`crate::decode`):
//! the invocations this regime runs without the whole kernel. The one
//! decoder returns every invocation as `Decoded::Invocation`; here the
//! shared path keeps a suspend or resume of a thread it controls
//! ([`Controls`]), a frame invocation (the one frame decoder,
//! `object/frame.rs`), a 4 KiB frame's allocation or free (`pages.rs` has
//! the algorithm) and a thread's destroy (`finish_destroy.rs`); the
//! retype and CNode decoders are the general ones, then this file decides
//! whether the call may run shared. Anything else is a management entry.

use core::cell::Cell;

use crate::abi::{Error, InvocationLabel, MessageInfo, ObjectType};
use crate::args::Args;
use crate::decode::{CallerView, Scope};
use crate::object::cnode::CNodeOp;
use crate::object::frame::FrameOp;
use crate::object::frame_pool::POOLED_BITS;
use crate::object::{CNode, Cap, CapObj, Frame, Ref, SlotAddr, Tcb, Untyped};
use crate::state::{Ctx, Object};

use super::detached::DetachedFrame;
use super::pages::PageOp;
use super::shared::LfState;

/// An invocation a shared path runs ([`Ctx::decode_shared`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum SharedOp {
    /// `TcbSuspend` (`resume = false`) or `TcbResume` of live thread `t`
    /// (`control.rs`).
    Control { t: Ref<Tcb>, resume: bool },
    /// A frame invocation (map, unmap, get address): it changes only the
    /// lock-free mapping words (`object/frame.rs`).
    Frame(FrameOp),
    /// A 4 KiB frame allocated or freed (`pages.rs`).
    Page(PageOp),
    /// `CNodeDelete` of the only capability `cap`, in `slot`, to thread `t`
    /// (`finish_destroy.rs`, `destroy.rs`).
    Destroy { t: Ref<Tcb>, slot: SlotAddr, cap: Cap },
}

/// Where a shared path runs a thread's suspend and resume.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Controls {
    /// Here: the thread is another core's, whose owner meets the request.
    Remote,
    /// Here if the caller's core owns the thread when the call is decoded
    /// (the thread is of the caller's core): a resume, and a suspend of the
    /// caller itself or of a thread in this core's ready queue, which the
    /// entry meets at once. Any other suspend (of a thread that is stopped,
    /// woken but not yet drained from the inbox, holding stalled cores, or
    /// waiting in an object's queue) runs with the whole kernel held. For
    /// a waiting thread that matters: the whole kernel takes it out of its
    /// queue at once, as seL4 does; left there, a resume before a taker
    /// reached it would keep its place ahead of later waiters, where seL4
    /// queues its restarted call at the back.
    Here,
}

impl LfState {
    /// Synthesis's `STOPME` (`control.rs`): a thread of another core
    /// always; one of the caller's own core where this core owns it
    /// ([`Controls::Here`]). A destroy need not ask (`destroy.rs`).
    #[inline(always)]
    fn controls(&self, t: Ref<Tcb>, core: usize) -> Controls {
        if self.ctl_of(t).home() != core {
            Controls::Remote
        } else {
            Controls::Here
        }
    }
}

impl Ctx<'_, LfState> {
    /// The invocation of `cap`, in `slot`, that the one decoder returned as
    /// `Decoded::Invocation` for `caller`'s call with message `info`:
    /// `Some(Ok(_))` where a
    /// shared path runs it, `Some(Err(_))` for the general decoders' error,
    /// `None` for a management entry.
    #[cold]
    #[inline(never)]
    pub(crate) fn decode_shared(
        &mut self,
        caller: &CallerView,
        slot: SlotAddr,
        cap: Cap,
        info: MessageInfo,
    ) -> Option<Result<SharedOp, Error>> {
        let label = InvocationLabel::from_word(info.label())?;
        match (cap.obj, label) {
            (CapObj::Tcb(t), InvocationLabel::TcbSuspend | InvocationLabel::TcbResume)
                if self.live(t) && self.controlled(caller, t, label == InvocationLabel::TcbResume) =>
            {
                Some(Ok(SharedOp::Control { t, resume: label == InvocationLabel::TcbResume }))
            }
            (CapObj::Frame(f), _) if self.live(f) => {
                let args = self.invocation_args(caller, info);
                Some(self.decode_frame(caller.t, f, label, &args).map(SharedOp::Frame))
            }
            (CapObj::Untyped(u), _) if self.live(u) => {
                let args = self.invocation_args(caller, info);
                self.decode_shared_alloc(caller, u, slot, label, &args)
            }
            (CapObj::CNode(c), InvocationLabel::CNodeDelete) if self.live(c) => {
                let args = self.invocation_args(caller, info);
                self.decode_shared_delete(caller, c, label, &args)
            }
            _ => None,
        }
    }

    /// Whether a shared path runs a suspend (`resume = false`) or resume of
    /// live thread `t` by `caller` ([`Controls`]). The ready queue is
    /// walked, not `t`'s TCB read: until `t` is found there, another core
    /// may own it (a taker that has just removed it from a queue). A stall
    /// owner is left to management, which releases its holds.
    #[inline(always)]
    fn controlled(&mut self, caller: &CallerView, t: Ref<Tcb>, resume: bool) -> bool {
        match self.lf().controls(t, self.core) {
            Controls::Remote => true,
            Controls::Here => resume || t == caller.t || (self.stall_owner() != Some(t) && self.queued_here(t)),
        }
    }

    /// `UntypedRetype` through the untyped capability in `src`, on a
    /// shared path: [`PageOp::Alloc`] for one 4 KiB frame when the
    /// untyped's free list gives one; the decoder's error; or `None` (a
    /// management entry).
    fn decode_shared_alloc(
        &mut self,
        caller: &CallerView,
        untyped: Ref<Untyped>,
        src: SlotAddr,
        label: InvocationLabel,
        args: &Args,
    ) -> Option<Result<SharedOp, Error>> {
        let op = match self.decode_retype_args(caller.t, untyped, src, label, args) {
            Ok(op) => op,
            Err(e) => return Some(Err(e)),
        };
        let one_page = op.ty == ObjectType::Frame && op.size_bits == POOLED_BITS && op.count == 1;
        let dest = SlotAddr { cnode: op.dest, index: op.first };
        // A dead slot (`finish_destroy.rs`) is empty once management
        // has finished its destroy: management fills it.
        let dead = self.cap_ref(dest).is_some_and(|s| s.cap.is_dead());
        if !one_page || dead || !self.lists(self.core).detached.has_room() {
            return None;
        }
        let pops = Cell::new(0);
        let frame = self.take_pooled_frame(untyped, &|_| pops.set(pops.get() + 1))?;
        Some(Ok(SharedOp::Page(PageOp::Alloc { frame, untyped, src, dest, pops: pops.get() })))
    }

    /// `CNodeDelete` on CNode `cnode` on a shared path: a frame's free or
    /// a thread's destroy where they may run shared; the decoder's error;
    /// or `None` (a management entry).
    fn decode_shared_delete(
        &mut self,
        caller: &CallerView,
        cnode: Ref<CNode>,
        label: InvocationLabel,
        args: &Args,
    ) -> Option<Result<SharedOp, Error>> {
        let slot = match self.decode_cnode(caller.t, cnode, label, args) {
            Ok(CNodeOp::Delete { slot }) => slot,
            Ok(_) => return None,
            Err(e) => return Some(Err(e)),
        };
        let cap = self.cap_at(slot);
        match cap.obj {
            CapObj::Frame(frame) => self.decode_shared_free(slot, frame),
            CapObj::Tcb(t) => self.decode_shared_destroy(caller, slot, cap, t),
            _ => None,
        }
    }

    /// [`PageOp::Free`] of `frame` through its capability in `slot`, if it
    /// is an unmapped 4 KiB frame on this core's detached list.
    fn decode_shared_free(&mut self, slot: SlotAddr, frame: Ref<Frame>) -> Option<Result<SharedOp, Error>> {
        let DetachedFrame { untyped, .. } = self.lists(self.core).detached.find(slot)?;
        let unmapped = self.s.mappings.mapped(frame.index(), &|_| {}).is_none();
        (unmapped && self.live(untyped)).then_some(Ok(SharedOp::Page(PageOp::Free { frame, untyped, slot })))
    }

    /// [`SharedOp::Destroy`] of thread `t` through `cap` in `slot`, if it may
    /// run shared: `t` is live and not the caller, with no stop request
    /// standing and holding no stalled cores, and `cap` is its only
    /// capability, with nothing derived from it; and this core's doomed
    /// list has room. `t` may be of any core, this one included
    /// (`lockfree/destroy.rs`).
    fn decode_shared_destroy(
        &mut self,
        caller: &CallerView,
        slot: SlotAddr,
        cap: Cap,
        t: Ref<Tcb>,
    ) -> Option<Result<SharedOp, Error>> {
        if t == caller.t || !self.live(t) || !self.lists(self.core).doomed.has_room() {
            return None;
        }
        // The stall owner is management's (written only there, like a slot).
        if self.lf().stopping(t) || self.stall_owner() == Some(t) {
            return None;
        }
        // SAFETY: a TCB's capability count changes only where the whole
        // kernel is held, never while a shared path runs.
        let only = unsafe { <Tcb as Object>::slab(self.s).caps(t) } == Some(1);
        let s = self.cap_ref(slot)?;
        let (depth, next) = (s.depth, s.next);
        let leaf = next.map_or(true, |n| self.cap_ref(n).is_some_and(|n| n.depth <= depth));
        (only && leaf).then_some(Ok(SharedOp::Destroy { t, slot, cap }))
    }
}
