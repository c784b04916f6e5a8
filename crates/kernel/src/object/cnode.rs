//! CNodes: arrays of capability slots; capability lookup; the derivation
//! tree; copy, mint, move, delete and revoke; object destruction.
//!
//! # The derivation tree (seL4's mapping database)
//!
//! Every non-null slot is in a doubly-linked list in *preorder* of the
//! derivation tree, with its depth: a capability's descendants are the
//! consecutive slots after it with a greater depth. A copy or mint is inserted
//! right after its source with depth + 1; retyped objects right after their
//! untyped. The list never has a depth gap (a slot's depth is at most its
//! predecessor's + 1): deleting a slot lifts its descendants by one level,
//! so they become descendants of its parent. A move keeps the position.
//!
//! # Destruction
//!
//! Each object counts the capabilities naming it (`Header::caps`); deleting
//! the last one destroys the object (cancelling the IPC of threads blocked on
//! it, unmapping frames…) and gives its bytes back to its untyped. Destroying
//! a CNode deletes every capability in it, which may destroy further objects:
//! an explicit work list, never recursion, so depth is bounded by memory, not
//! by the kernel stack.

use alloc::boxed::Box;
use alloc::vec;
use alloc::vec::Vec;

use crate::abi::{CapRights, Error, InvocationLabel, Word};
use crate::args::Args;
use crate::exit::CoreMask;
use crate::object::slot_cap::SlotCap;
use crate::object::thread::ThreadState;
use crate::object::{Cap, CapObj, Ref, Tcb};
use crate::outcome::Outcome;
use crate::state::{Ctx, Object, IPI_STALL};
use crate::waits::Queues;
use crate::waits::Waits;

/// The address of a capability slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SlotAddr {
    pub cnode: Ref<CNode>,
    pub index: u32,
}

/// A capability slot with its derivation-list links.
#[derive(Clone, Debug, Default)]
pub(crate) struct CapSlot {
    pub cap: SlotCap,
    pub prev: Option<SlotAddr>,
    pub next: Option<SlotAddr>,
    pub depth: u32,
}

impl CapSlot {
    /// A derivation root holding `cap` (boot capabilities).
    pub fn root(cap: Cap) -> Self {
        Self { cap: SlotCap::new(cap), prev: None, next: None, depth: 0 }
    }
}

/// A CNode: `2^bits` capability slots.
#[derive(Debug)]
pub(crate) struct CNode {
    pub slots: Box<[CapSlot]>,
}

impl CNode {
    /// A CNode of `2^bits` slots. `bits` is at most
    /// [`crate::abi::CNODE_MAX_BITS`] (retype and boot check it), so every
    /// slot index fits a `u32` (`lookup_in` relies on it).
    pub fn new(bits: u8) -> Self {
        debug_assert!(Word::from(bits) <= crate::abi::CNODE_MAX_BITS, "a CNode of 2^{bits} slots");
        Self { slots: vec![CapSlot::default(); 1 << bits].into_boxed_slice() }
    }
}

/// A decoded CNode invocation.
#[derive(Clone, Copy, Debug)]
pub(crate) enum CNodeOp {
    /// Copy (or mint: new rights/badge) `src` into the empty `dest`.
    Derive {
        src: SlotAddr,
        dest: SlotAddr,
        cap: Cap,
    },
    Move {
        src: SlotAddr,
        dest: SlotAddr,
    },
    Delete {
        slot: SlotAddr,
    },
    Revoke {
        slot: SlotAddr,
    },
}

/// Deferred steps of a deletion.
enum Work {
    Slot(SlotAddr),
    FreeCNode(Ref<CNode>),
}

impl<W: Waits> Ctx<'_, W> {
    /// The caller's CSpace root.
    #[inline(always)]
    pub(crate) fn cspace_of(&self, t: Ref<Tcb>) -> Option<Ref<CNode>> {
        let cs = self.read(t)?.cspace?;
        self.live(cs).then_some(cs)
    }

    /// Look up `cptr` in `t`'s CSpace: the slot and its (non-null, live)
    /// capability. A failure is `InvalidCapability` (the convention for the
    /// capability a system call is made on).
    #[inline(always)]
    pub(crate) fn lookup(&mut self, t: Ref<Tcb>, cptr: Word) -> Result<(SlotAddr, Cap), Error> {
        let cnode = self.cspace_of(t).ok_or(Error::InvalidCapability)?;
        self.lookup_in(cnode, cptr)
    }

    /// [`Ctx::lookup`] in CSpace root `cnode`, for a caller whose CSpace is
    /// known already (the decoder's view of it).
    #[inline(always)]
    pub(crate) fn lookup_in(&self, cnode: Ref<CNode>, cptr: Word) -> Result<(SlotAddr, Cap), Error> {
        // The whole word is checked against the CNode's size, which is below
        // 2^32 (`CNode::new`): an index in range fits a `u32`. (Narrowing it
        // first, as a `u32::try_from`, is one more test on the fast path.)
        let cn = self.read(cnode).ok_or(Error::InvalidCapability)?;
        let index = usize::try_from(cptr).map_err(|_| Error::InvalidCapability)?;
        let cell = &cn.slots.get(index).ok_or(Error::InvalidCapability)?.cap;
        let slot = SlotAddr { cnode, index: index as u32 };
        let cap = if W::SHARED_CAP_WRITES { cell.get() } else { cell.get_settled() };
        if cap.obj.is_null() || !self.cap_live(cap.obj) {
            return Err(Error::InvalidCapability);
        }
        Ok((slot, cap))
    }

    /// Look up a capability argument: failures are `FailedLookup`.
    pub(crate) fn lookup_arg(&mut self, t: Ref<Tcb>, cptr: Word) -> Result<Cap, Error> {
        self.lookup(t, cptr).map(|(_, c)| c).map_err(|_| Error::FailedLookup)
    }

    /// A CNode named by a capability argument; `0` means `t`'s root.
    pub(crate) fn lookup_cnode_arg(&mut self, t: Ref<Tcb>, cptr: Word) -> Result<Ref<CNode>, Error> {
        if cptr == 0 {
            return self.cspace_of(t).ok_or(Error::FailedLookup);
        }
        match self.lookup_arg(t, cptr)?.obj {
            CapObj::CNode(c) => Ok(c),
            _ => Err(Error::InvalidCapability),
        }
    }

    /// Slot `index` of `cnode`, if in range.
    pub(crate) fn slot_in(&mut self, cnode: Ref<CNode>, index: Word) -> Result<SlotAddr, Error> {
        let n = self.read(cnode).ok_or(Error::FailedLookup)?.slots.len();
        if index >= n as Word {
            return Err(Error::RangeError);
        }
        Ok(SlotAddr { cnode, index: index as u32 })
    }

    /// Whether the object a capability names is live (generation check).
    #[inline(always)]
    pub(crate) fn cap_live(&self, obj: CapObj) -> bool {
        match obj {
            CapObj::Null => false,
            CapObj::IrqControl => true,
            CapObj::Untyped(r) => self.live(r),
            CapObj::Tcb(r) => self.read(r).is_some_and(|t| t.state != ThreadState::Zombie),
            CapObj::Endpoint(r) => self.live(r),
            CapObj::Notification(r) => self.live(r),
            CapObj::CNode(r) => self.live(r),
            CapObj::Reply(r) => self.live(r),
            CapObj::Frame(r) => self.live(r),
            CapObj::VSpace(r) => self.live(r),
            CapObj::IrqHandler(i) => self.irq_live(i),
        }
    }

    /// The capability count of the object `obj` names (`None`: uncounted).
    fn cap_count(&mut self, obj: CapObj) -> Option<&mut u32> {
        fn h<'a, T: Object, W: Waits>(ctx: &'a mut Ctx<'_, W>, r: Ref<T>) -> Option<&'a mut u32> {
            ctx.slot(r).map(|s| &mut s.hdr.caps)
        }
        match obj {
            CapObj::Null | CapObj::IrqControl => None,
            CapObj::Untyped(r) => h(self, r),
            CapObj::Tcb(r) => h(self, r),
            CapObj::Endpoint(r) => h(self, r),
            CapObj::Notification(r) => h(self, r),
            CapObj::CNode(r) => h(self, r),
            CapObj::Reply(r) => h(self, r),
            CapObj::Frame(r) => h(self, r),
            CapObj::VSpace(r) => h(self, r),
            CapObj::IrqHandler(i) => self.irq_caps(i),
        }
    }

    /// Whether `cap` is the last capability to its object.
    pub(crate) fn is_final(&mut self, obj: CapObj) -> bool {
        self.cap_count(obj).is_some_and(|c| *c <= 1)
    }

    /// Put `cap` in the empty slot `dest` as a child of `parent` (or as a
    /// derivation root when `parent` is `None`), counting it.
    pub(crate) fn insert_cap(&mut self, parent: Option<SlotAddr>, dest: SlotAddr, cap: Cap) {
        let (depth, next) = match parent.and_then(|p| self.cap_slot(p).map(|s| (s.depth, s.next))) {
            Some((d, n)) => (d + 1, n),
            None => (0, None),
        };
        let parent = parent.filter(|_| depth > 0);
        if let Some(c) = self.cap_count(cap.obj) {
            *c += 1;
        }
        if let Some(s) = self.cap_slot(dest) {
            *s = CapSlot { cap: SlotCap::new(cap), prev: parent, next, depth };
        }
        if let Some(p) = parent {
            if let Some(s) = self.cap_slot(p) {
                s.next = Some(dest);
            }
        }
        if let Some(n) = next.filter(|_| parent.is_some()) {
            if let Some(s) = self.cap_slot(n) {
                s.prev = Some(dest);
            }
        }
    }

    /// Take the capability out of slot `a`: unlink it from the derivation
    /// list (lifting its descendants one level) and uncount it. Returns the
    /// capability and whether it was the last one to its object.
    pub(crate) fn unlink_cap(&mut self, a: SlotAddr) -> (Cap, bool) {
        let Some(s) = self.cap_slot(a) else { return (Cap::NULL, false) };
        let old = core::mem::take(s);
        let cap = old.cap.get();
        if cap.obj.is_null() {
            return (Cap::NULL, false);
        }
        // Lift the descendants.
        let mut cur = old.next;
        while let Some(c) = cur {
            let Some(s) = self.cap_slot(c) else { break };
            if s.depth <= old.depth {
                break;
            }
            s.depth -= 1;
            cur = s.next;
        }
        if let Some(p) = old.prev {
            if let Some(s) = self.cap_slot(p) {
                s.next = old.next;
            }
        }
        if let Some(n) = old.next {
            if let Some(s) = self.cap_slot(n) {
                s.prev = old.prev;
            }
        }
        let last = match self.cap_count(cap.obj) {
            Some(c) => {
                *c = c.saturating_sub(1);
                *c == 0
            }
            None => false,
        };
        (cap, last)
    }

    /// The first descendant of slot `a`, if any.
    pub(crate) fn first_descendant(&mut self, a: SlotAddr) -> Option<SlotAddr> {
        let s = self.cap_slot(a)?;
        let (depth, next) = (s.depth, s.next?);
        let n = self.cap_slot(next)?;
        (n.depth > depth).then_some(next)
    }

    /// All descendants of `a`, in list order.
    fn descendants(&mut self, a: SlotAddr) -> Vec<SlotAddr> {
        let mut v = Vec::new();
        let Some(s) = self.cap_slot(a) else { return v };
        let (depth, mut cur) = (s.depth, s.next);
        while let Some(c) = cur {
            let Some(s) = self.cap_slot(c) else { break };
            if s.depth <= depth {
                break;
            }
            v.push(c);
            cur = s.next;
        }
        v
    }

    pub(crate) fn decode_cnode(
        &mut self,
        caller: Ref<Tcb>,
        cnode: Ref<CNode>,
        label: InvocationLabel,
        args: &Args,
    ) -> Result<CNodeOp, Error> {
        if !self.live(cnode) {
            return Err(Error::InvalidCapability);
        }
        match label {
            InvocationLabel::CNodeCopy | InvocationLabel::CNodeMint | InvocationLabel::CNodeMove => {
                let dest = self.slot_in(cnode, args.word(0)?)?;
                let src_root = self.lookup_cnode_arg(caller, args.word(1)?)?;
                let src = self.slot_in(src_root, args.word(2)?)?;
                let (rights, badge) = match label {
                    InvocationLabel::CNodeCopy => (CapRights::from_word(args.word(3)?), None),
                    InvocationLabel::CNodeMint => (CapRights::from_word(args.word(3)?), Some(args.word(4)?)),
                    _ => (CapRights::ALL, None),
                };
                let cap = self.cap_at(src);
                if cap.obj.is_null() || !self.cap_live(cap.obj) {
                    return Err(Error::FailedLookup);
                }
                if !self.cap_at(dest).obj.is_null() {
                    return Err(Error::DeleteFirst);
                }
                if label == InvocationLabel::CNodeMove {
                    return Ok(CNodeOp::Move { src, dest });
                }
                let mut new = cap;
                new.rights = cap.rights.intersect(rights);
                if let Some(b) = badge {
                    if cap.obj.badgeable() && b != 0 {
                        if cap.badge != 0 {
                            return Err(Error::IllegalOperation);
                        }
                        new.badge = b;
                    }
                }
                if matches!(cap.obj, CapObj::Reply(_)) {
                    // One-shot: a reply capability is not duplicated.
                    return Err(Error::IllegalOperation);
                }
                Ok(CNodeOp::Derive { src, dest, cap: new })
            }
            InvocationLabel::CNodeDelete => {
                let slot = self.slot_in(cnode, args.word(0)?)?;
                Ok(CNodeOp::Delete { slot })
            }
            InvocationLabel::CNodeRevoke => {
                let slot = self.slot_in(cnode, args.word(0)?)?;
                Ok(CNodeOp::Revoke { slot })
            }
            _ => Err(Error::IllegalOperation),
        }
    }

    /// Cores that must be stalled before `op` may run.
    pub(crate) fn cnode_op_blockers(&mut self, op: &CNodeOp) -> CoreMask {
        let mut m = CoreMask::EMPTY;
        match *op {
            CNodeOp::Delete { slot } => {
                let cap = self.cap_at(slot);
                if self.is_final(cap.obj) {
                    m.0 |= self.destroy_blockers(cap.obj).0;
                }
            }
            CNodeOp::Revoke { slot } => {
                for d in self.descendants(slot) {
                    let cap = self.cap_at(d);
                    if self.is_final(cap.obj) {
                        m.0 |= self.destroy_blockers(cap.obj).0;
                    }
                }
            }
            CNodeOp::Derive { .. } | CNodeOp::Move { .. } => {}
        }
        m
    }

    /// Cores running user code that depends on `obj` (a thread running
    /// there, or an address space in use there).
    pub(crate) fn destroy_blockers(&mut self, obj: CapObj) -> CoreMask {
        let mut m = CoreMask::EMPTY;
        match obj {
            CapObj::Tcb(t) => {
                if let Some(c) = self.running_elsewhere(t) {
                    m.insert(c);
                }
            }
            CapObj::VSpace(v) => m = self.vspace_users_elsewhere(v),
            CapObj::Frame(f) => {
                if let Some((v, _)) = self.mapped_in(f, &|_| {}) {
                    m = self.vspace_users_elsewhere(v);
                }
            }
            _ => {}
        }
        m
    }

    pub(crate) fn invoke_cnode(&mut self, op: CNodeOp) -> Outcome {
        match op {
            CNodeOp::Derive { src, dest, cap } => self.insert_cap(Some(src), dest, cap),
            CNodeOp::Move { src, dest } => self.move_cap(src, dest),
            CNodeOp::Delete { slot } => self.delete_cap(slot),
            CNodeOp::Revoke { slot } => {
                while let Some(d) = self.first_descendant(slot) {
                    self.delete_cap(d);
                }
            }
        }
        Outcome::Done
    }

    /// Move the capability in `src` to the empty `dest`, keeping its place in
    /// the derivation list.
    fn move_cap(&mut self, src: SlotAddr, dest: SlotAddr) {
        let Some(s) = self.cap_slot(src) else { return };
        let moved = core::mem::take(s);
        let (prev, next) = (moved.prev, moved.next);
        if let Some(d) = self.cap_slot(dest) {
            *d = moved;
        }
        if let Some(p) = prev {
            if let Some(s) = self.cap_slot(p) {
                s.next = Some(dest);
            }
        }
        if let Some(n) = next {
            if let Some(s) = self.cap_slot(n) {
                s.prev = Some(dest);
            }
        }
    }

    /// Delete the capability in slot `a`, destroying its object if it was the
    /// last capability (and, for a CNode, everything that cascades from it).
    pub(crate) fn delete_cap(&mut self, a: SlotAddr) {
        let mut work: Vec<Work> = Vec::new();
        self.delete_one(a, &mut work);
        while let Some(w) = work.pop() {
            match w {
                Work::Slot(a) => self.delete_one(a, &mut work),
                Work::FreeCNode(c) => self.free_object(c),
            }
        }
    }

    fn delete_one(&mut self, a: SlotAddr, work: &mut Vec<Work>) {
        let (cap, last) = self.unlink_cap(a);
        if last {
            self.destroy(cap.obj, work);
        }
    }

    /// Destroy the object `obj` (its last capability is gone).
    fn destroy(&mut self, obj: CapObj, work: &mut Vec<Work>) {
        match obj {
            CapObj::Null | CapObj::IrqControl => {}
            CapObj::Untyped(u) => {
                self.drain_frame_pool(u);
                self.free_object(u);
            }
            CapObj::Tcb(t) => self.destroy_tcb(t),
            CapObj::Endpoint(e) => {
                self.cancel_all_ipc(e);
                self.free_object(e);
            }
            CapObj::Notification(n) => {
                self.cancel_all_waits(n);
                self.free_object(n);
            }
            CapObj::CNode(c) => {
                work.push(Work::FreeCNode(c));
                let n = self.get(c).map_or(0, |c| c.slots.len());
                for i in 0..n as u32 {
                    let a = SlotAddr { cnode: c, index: i };
                    if !self.cap_at(a).obj.is_null() {
                        work.push(Work::Slot(a));
                    }
                }
            }
            CapObj::Reply(r) => {
                self.cancel_reply(r);
                self.free_object(r);
            }
            CapObj::Frame(f) => {
                self.unmap_frame(f);
                match self.poolable(f) {
                    Some(u) => self.pool_frame(f, u, &|_| {}),
                    None => self.free_object(f),
                }
            }
            CapObj::VSpace(v) => {
                self.destroy_vspace(v);
                self.free_object(v);
            }
            CapObj::IrqHandler(i) => self.destroy_irq_handler(i),
        }
    }

    /// Free an object's slot and give its bytes back to its untyped.
    pub(crate) fn free_object<T: Object>(&mut self, r: Ref<T>) {
        let Some(s) = self.slot(r) else { return };
        let hdr = s.hdr;
        self.free(r);
        if let Some(u) = hdr.parent.and_then(|u| self.get(u)) {
            u.free += hdr.bytes;
            u.live = u.live.saturating_sub(1);
        }
    }

    /// Destroy a thread: take it out of everything and free it, or make it a
    /// zombie if it is running user code on another core.
    fn destroy_tcb(&mut self, t: Ref<Tcb>) {
        self.release_holds(t);
        self.unbind_tcb(t);
        if let Some(core) = self.running_elsewhere(t) {
            if let Some(x) = self.get(t) {
                x.state = ThreadState::Zombie;
            }
            self.send_ipi(core, IPI_STALL);
            return;
        }
        self.detach(t);
        let core = self.core;
        if self.cs(core).current == Some(t) {
            // Destroying itself: this core picks another thread at exit.
            self.cs(core).current = None;
        }
        self.free_tcb_slot(t);
    }

    /// Free a TCB slot (the thread is in no place any more).
    pub(crate) fn free_tcb_slot(&mut self, t: Ref<Tcb>) {
        self.unbind_tcb(t);
        self.free_object(t);
    }

    /// Undo `t`'s notification binding.
    fn unbind_tcb(&mut self, t: Ref<Tcb>) {
        let Some(x) = self.get(t) else { return };
        if let Some(n) = x.bound.take() {
            if let Some(n) = self.get(n) {
                n.bound = None;
            }
        }
        W::binding_changed(self, t);
    }

    /// Every thread queued on endpoint `e` restarts its system call (which
    /// will then fail: the capability is gone).
    fn cancel_all_ipc(&mut self, e: Ref<crate::object::Endpoint>) {
        while let Some(t) = self.ep_head(e) {
            self.detach(t);
            self.restart_thread(t);
        }
    }

    fn cancel_all_waits(&mut self, n: Ref<crate::object::Notification>) {
        // Waiters in the wait representation (`lockfree`) first.
        W::cancel_waits(self, n);
        loop {
            let Some(head) = self.get(n).map(|x| x.queue.head) else { return };
            let Some(t) = self.ref_at::<Tcb>(head) else { break };
            self.detach(t);
            self.restart_thread(t);
        }
        let bound = self.get(n).and_then(|x| x.bound.take());
        if let Some(t) = bound {
            if let Some(x) = self.get(t) {
                x.bound = None;
            }
            W::binding_changed(self, t);
        }
    }

    /// A reply object is destroyed: its waiting caller's `Call` fails (a
    /// fault's call is cancelled instead: the fault is raised again).
    fn cancel_reply(&mut self, r: Ref<crate::object::Reply>) {
        // The wait representation may hold the reply's state (`lockfree`).
        let lf = W::take_reply(self, r);
        let Some(rep) = self.get(r) else { return };
        let (caller, receiver) = lf.unwrap_or_else(|| (rep.caller.take(), rep.receiver.take()));
        if let Some(c) = caller {
            let waits = self.get(c).and_then(|x| match x.state {
                ThreadState::BlockedOnReply { reply, fault } if reply == r => Some(fault),
                _ => None,
            });
            if let Some(fault) = waits {
                match W::stop_requested(self, c) {
                    // A suspend nobody has met (`lockfree`): the caller stops
                    // now, its `Call` to restart on resume, as if the suspend
                    // had taken it out of the reply object at once.
                    Some(false) => self.suspend(c),
                    // ... and cancelled by a resume: the `Call` restarts now.
                    Some(true) => self.restart_thread(c),
                    None if fault => self.restart_thread(c),
                    None => self.fail_thread(c, Error::FailedLookup),
                }
            }
        }
        if let Some(t) = receiver {
            if let Some(x) = self.get(t) {
                if let ThreadState::BlockedOnRecv { ep, reply: Some(rr) } = x.state {
                    if rr == r {
                        x.state = ThreadState::BlockedOnRecv { ep, reply: None };
                    }
                }
            }
        }
    }

    /// A blocked thread (already detached) is runnable again and will
    /// reissue its system call.
    pub(crate) fn restart_thread(&mut self, t: Ref<Tcb>) {
        self.ipc(t).restart = 1;
        if let Some(x) = self.get(t) {
            x.state = ThreadState::Running;
        }
        self.wake(t);
    }

    /// A blocked thread's system call completes with `e` (the executor's
    /// completion, on the objects' own queues: a management entry).
    pub(crate) fn fail_thread(&mut self, t: Ref<Tcb>, e: Error) {
        self.finish_blocked(&Queues, t, e.word());
    }
}
