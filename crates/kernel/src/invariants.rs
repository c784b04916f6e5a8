//! Kernel invariants, checked after every kernel entry in tests.
//!
//! 1. **Every TCB is in exactly one place**: a running thread is its core's
//!    current thread or in its core's ready queue (not both; under
//!    `lockfree` it may instead be in its core's inbox); a blocked
//!    thread is in the queue of the object it is blocked on (or recorded in
//!    its reply object); an inactive thread is nowhere; a zombie is the
//!    current thread of exactly one core.
//! 2. **Endpoint state agrees with its queue**: idle ⇔ empty; a send queue
//!    holds only threads blocked sending on this endpoint, a receive queue
//!    only threads receiving on it. Likewise notification queues.
//! 3. **Ready queues hold only runnable threads of that core, at their
//!    priority**, and the bitmap marks exactly the non-empty levels.
//! 4. **No live capability to a freed slot**: every capability names a live
//!    object; every object's capability count is the number of capabilities
//!    naming it; the derivation list is doubly linked without depth gaps.
//! 5. **Memory accounting**: an untyped's free bytes plus the bytes of its
//!    live objects equal its size; its live count is their number.
//! 6. Bindings and mappings are symmetric (TCB ↔ notification, frame ↔
//!    address space, reply object ↔ caller/receiver); stall holds agree with
//!    the cores' held counts.
//! 7. **Frame free lists** (`object/frame_pool.rs`): each list belongs to a
//!    live untyped and holds only live 4 KiB frames carved from it, with no
//!    capability and no mapping, each on one list once.
//! 8. **Slab generations** (`object/slab.rs`): a slot holds an object
//!    exactly when its generation is a live one.

use alloc::collections::BTreeMap;
use alloc::format;
use alloc::vec;
use alloc::vec::Vec;

use crate::abi::NUM_IRQS;
use crate::object::endpoint::{EpState, Queue};
use crate::object::thread::ThreadState;
use crate::object::{
    CNode, CapObj, CapSlot, Endpoint, Frame, Notification, Ref, Reply, SlotAddr, Tcb, Untyped, VSpace, NIL,
};
use crate::state::{Ctx, Object};
use crate::violation::{ensure, fail, InvariantViolation};
use crate::waits::Waits;

fn capacity<T: Object>(ctx: &Ctx<'_, impl Waits>) -> u32 {
    T::slab(ctx.s).capacity() as u32
}

impl<W: Waits> Ctx<'_, W> {
    /// Walk an intrusive endpoint/notification queue, checking links.
    fn walk_queue(&mut self, q: Queue, what: &str) -> Result<Vec<u32>, InvariantViolation> {
        let mut v = Vec::new();
        let mut prev = NIL;
        let mut cur = q.head;
        let limit = capacity::<Tcb>(self) as usize + 1;
        while cur != NIL {
            ensure!(v.len() < limit, "queue-links", "{what}: cycle");
            let Some((_, t)) = self.at::<Tcb>(cur) else {
                return fail("queue-links", format!("{what}: dead TCB {cur}"));
            };
            ensure!(t.ep_prev == prev, "queue-links", "{what}: TCB {cur} prev {} != {prev}", t.ep_prev);
            v.push(cur);
            prev = cur;
            cur = t.ep_next;
        }
        ensure!(q.tail == prev, "queue-links", "{what}: tail {} != last {prev}", q.tail);
        Ok(v)
    }

    pub(crate) fn check_invariants(&mut self) -> Result<(), InvariantViolation> {
        if let Err((inv, detail)) = self.s.subsys.check() {
            return fail(inv, detail);
        }
        self.check_generations()?;
        let ntcb = capacity::<Tcb>(self) as usize;
        let mut places = vec![0u32; ntcb];
        let cores = self.s.config.cores;

        // Current threads and ready queues.
        for c in 0..cores {
            if let Some(t) = self.cs(c).current {
                let Some(x) = self.get(t) else {
                    return fail("one-place", format!("core {c}: current {t:?} is dead"));
                };
                let ok = matches!(x.state, ThreadState::Running | ThreadState::Zombie | ThreadState::Inactive);
                ensure!(ok, "one-place", "core {c}: current {t:?} is {:?}", x.state);
                ensure!(!x.in_ready, "one-place", "core {c}: current {t:?} also in ready queue");
                if x.state == ThreadState::Running {
                    ensure!(x.core == c, "ready-core", "core {c}: current {t:?} has affinity {}", x.core);
                }
                places[t.index() as usize] += 1;
            }
            let (summary, words) = self.cs(c).ready.summary();
            ensure!(
                summary == words,
                "ready-bitmap",
                "core {c}: word summary {summary:#x}, non-empty words {words:#x}"
            );
            for p in 0..=255u8 {
                let head = self.cs(c).ready.head(p);
                let bit = self.cs(c).ready.bit(p);
                ensure!(bit == (head != NIL), "ready-bitmap", "core {c} level {p}: bit {bit} head {head}");
                let mut prev = NIL;
                let mut cur = head;
                let mut n = 0;
                while cur != NIL {
                    n += 1;
                    ensure!(n <= ntcb, "ready-queue", "core {c} level {p}: cycle");
                    let Some((_, x)) = self.at::<Tcb>(cur) else {
                        return fail("ready-queue", format!("core {c} level {p}: dead TCB {cur}"));
                    };
                    ensure!(x.state == ThreadState::Running, "ready-queue", "core {c}: TCB {cur} is {:?}", x.state);
                    ensure!(x.in_ready, "ready-queue", "core {c}: TCB {cur} not marked ready");
                    ensure!(x.core == c, "ready-queue", "core {c}: TCB {cur} has affinity {}", x.core);
                    ensure!(x.prio == p, "ready-queue", "core {c}: TCB {cur} prio {} in level {p}", x.prio);
                    ensure!(x.sched_prev == prev, "ready-queue", "core {c}: TCB {cur} bad prev link");
                    prev = cur;
                    cur = x.sched_next;
                    places[prev as usize] += 1;
                }
            }
        }

        // Endpoint queues.
        for i in 0..capacity::<Endpoint>(self) {
            let Some((ep, e)) = self.at::<Endpoint>(i) else { continue };
            let (state, q) = (e.state, e.queue);
            let members = self.walk_queue(q, "endpoint")?;
            ensure!(
                (state == EpState::Idle) == members.is_empty(),
                "endpoint-state",
                "ep {i}: {state:?} with {} queued",
                members.len()
            );
            for m in members {
                let st = self.tcb_at(m).state;
                let ok = match (state, st) {
                    (EpState::Send, ThreadState::BlockedOnSend { ep: e, .. }) => e == ep,
                    (EpState::Recv, ThreadState::BlockedOnRecv { ep: e, .. }) => e == ep,
                    _ => false,
                };
                ensure!(ok, "endpoint-state", "ep {i} ({state:?}) queues TCB {m} in {st:?}");
                places[m as usize] += 1;
            }
        }

        // Notification queues and bindings.
        for i in 0..capacity::<Notification>(self) {
            let Some((n, x)) = self.at::<Notification>(i) else { continue };
            let (q, active, bound) = (x.queue, x.active, x.bound);
            let members = self.walk_queue(q, "notification")?;
            ensure!(!active || members.is_empty(), "notification-state", "ntfn {i} active with waiters");
            for m in members {
                let st = self.tcb_at(m).state;
                ensure!(
                    st == ThreadState::BlockedOnNotification { ntfn: n },
                    "notification-state",
                    "ntfn {i} queues TCB {m} in {st:?}"
                );
                places[m as usize] += 1;
            }
            if let Some(t) = bound {
                let back = self.get(t).and_then(|t| t.bound);
                ensure!(back == Some(n), "binding", "ntfn {i} bound to {t:?} which is bound to {back:?}");
            }
        }

        // Reply objects.
        for i in 0..capacity::<Reply>(self) {
            let Some((r, x)) = self.at::<Reply>(i) else { continue };
            let (caller, receiver) = (x.caller, x.receiver);
            if let Some(c) = caller {
                let st = self.get(c).map(|t| t.state);
                ensure!(
                    matches!(st, Some(ThreadState::BlockedOnReply { reply, .. }) if reply == r),
                    "reply",
                    "reply {i} caller {c:?} is {st:?}"
                );
                places[c.index() as usize] += 1;
            }
            if let Some(t) = receiver {
                let st = self.get(t).map(|t| t.state);
                let ok = matches!(st, Some(ThreadState::BlockedOnRecv { reply: Some(rr), .. }) if rr == r);
                ensure!(ok, "reply", "reply {i} receiver {t:?} is {st:?}");
            }
        }

        // The threads waiting in the wait representation (`lockfree`).
        W::check(self, &mut places)?;

        // Every TCB in exactly one place.
        let mut holds = vec![0u32; cores];
        for i in 0..ntcb as u32 {
            let Some((_, x)) = self.at::<Tcb>(i) else {
                ensure!(places[i as usize] == 0, "one-place", "free TCB slot {i} is in {} places", places[i as usize]);
                continue;
            };
            let (state, bound, h) = (x.state, x.bound, x.holds);
            // A fault's call has a fault to send or answer, and is a call.
            let fault_call = match state {
                ThreadState::BlockedOnSend { fault, call, .. } => fault.then_some(call),
                ThreadState::BlockedOnReply { fault, .. } => fault.then_some(true),
                _ => None,
            };
            if let Some(call) = fault_call {
                ensure!(call && x.fault.is_some(), "fault", "TCB {i} ({state:?}) sends no fault ({:?})", x.fault);
            }
            // A receiver's reply object is live: destroying one takes its
            // receiver off it (the IPC fast path reaches it unchecked).
            if let ThreadState::BlockedOnRecv { reply: Some(r), .. } = state {
                ensure!(self.live(r), "reply", "TCB {i} receives with dead reply {r:?}");
            }
            let expect = u32::from(state != ThreadState::Inactive);
            let found = places[i as usize];
            // An inactive thread may still be current on its core until the end
            // of the entry that stopped it (never observed between entries).
            ensure!(found == expect, "one-place", "TCB {i} ({state:?}) is in {found} places");
            if let Some(n) = bound {
                let back = self.get(n).and_then(|n| n.bound).map(|t| t.index());
                ensure!(back == Some(i), "binding", "TCB {i} bound to {n:?} which is bound to {back:?}");
            }
            for c in h.iter() {
                ensure!(c < cores, "holds", "TCB {i} holds core {c}");
                holds[c] += 1;
            }
        }
        for (c, &n) in holds.iter().enumerate() {
            let held = self.cs(c).held;
            ensure!(held == n, "holds", "core {c} held {held} but {n} holders");
        }

        self.check_caps()?;
        self.check_memory()?;
        self.check_frame_pools()?;
        Ok(())
    }

    fn check_generations(&mut self) -> Result<(), InvariantViolation> {
        let bad = [
            ("untyped", self.inconsistent_slot::<Untyped>()),
            ("tcb", self.inconsistent_slot::<Tcb>()),
            ("endpoint", self.inconsistent_slot::<Endpoint>()),
            ("notification", self.inconsistent_slot::<Notification>()),
            ("cnode", self.inconsistent_slot::<CNode>()),
            ("reply", self.inconsistent_slot::<Reply>()),
            ("frame", self.inconsistent_slot::<Frame>()),
            ("vspace", self.inconsistent_slot::<VSpace>()),
        ];
        match bad.into_iter().find_map(|(what, i)| Some((what, i?))) {
            Some((what, i)) => fail("slab-generations", format!("{what} slot {i}: generation and object disagree")),
            None => Ok(()),
        }
    }

    fn check_frame_pools(&mut self) -> Result<(), InvariantViolation> {
        let mut seen = vec![false; capacity::<Frame>(self) as usize];
        for u in 0..self.s.frame_pools.lists() as u32 {
            let nodes = self.s.frame_pools.quiescent_nodes(u);
            if nodes.is_empty() {
                continue;
            }
            let Some(owner) = self.ref_at::<Untyped>(u) else {
                return fail("frame-pool", format!("free list of dead untyped {u} holds {nodes:?}"));
            };
            for i in nodes {
                let first = seen.get_mut(i as usize).map(|s| !core::mem::replace(s, true));
                ensure!(first == Some(true), "frame-pool", "frame {i} is on a free list twice (or out of range)");
                let Some((f, x)) = self.at::<Frame>(i) else {
                    return fail("frame-pool", format!("free frame slot {i} on untyped {u}'s list"));
                };
                let size = x.size();
                let hdr = self.slot(f).map(|s| s.hdr);
                ensure!(size == 1 << 12, "frame-pool", "frame {i} of {size} bytes on a free list");
                ensure!(
                    hdr.is_some_and(|h| h.caps == 0 && h.parent == Some(owner)),
                    "frame-pool",
                    "frame {i} on untyped {u}'s list has header {hdr:?}"
                );
                ensure!(self.s.mappings.mapped(i, &|_| {}).is_none(), "frame-pool", "pooled frame {i} is mapped");
            }
        }
        Ok(())
    }

    /// The capability in slot `a` as the checker counts it: a dead slot
    /// (`slot_cap.rs`) holds the capability its wait representation keeps
    /// for it ([`Waits::dead_cap`]).
    fn checked_cap(&mut self, a: SlotAddr) -> crate::object::Cap {
        let Some(s) = self.cap_ref(a) else { return crate::object::Cap::NULL };
        if !s.cap.is_dead() {
            return s.cap.get();
        }
        W::dead_cap(self, a)
    }

    fn check_caps(&mut self) -> Result<(), InvariantViolation> {
        // Capabilities found per object, keyed by the object's id (a live
        // capability's slab index names one object: `no-stale-cap` below
        // checks its generation first). A map, not a list searched per
        // capability: the check runs after every system call in tests.
        let mut counts: BTreeMap<u64, (CapObj, u32)> = BTreeMap::new();
        let key = |o: CapObj| o.id().map_or(u64::MAX, |id| id.key());
        let mut bump = |o: CapObj| counts.entry(key(o)).or_insert((o, 0)).1 += 1;
        for ci in 0..capacity::<CNode>(self) {
            let Some((cn, x)) = self.at::<CNode>(ci) else { continue };
            // Most slots are empty (not dead, not being written) and
            // unlinked: nothing to check there, and the full look-up below
            // per slot would dominate every test's run time.
            let unused = |s: &CapSlot| s.prev.is_none() && s.next.is_none() && s.cap.is_empty();
            let used: Vec<u32> = (0..x.slots.len() as u32).filter(|&i| !unused(&x.slots[i as usize])).collect();
            for i in used {
                let a = SlotAddr { cnode: cn, index: i };
                let Some(s) = self.cap_slot(a).cloned() else { continue };
                let cap = self.checked_cap(a);
                if cap.obj.is_null() {
                    ensure!(s.prev.is_none() && s.next.is_none(), "cap-links", "empty slot {ci}/{i} has links");
                    continue;
                }
                ensure!(self.cap_live(cap.obj), "no-stale-cap", "slot {ci}/{i} names dead {:?}", cap.obj);
                bump(cap.obj);
                match s.prev {
                    None => ensure!(s.depth == 0, "cap-links", "slot {ci}/{i}: head at depth {}", s.depth),
                    Some(p) => {
                        let ps = self.cap_slot(p).cloned();
                        let held = !self.checked_cap(p).obj.is_null();
                        let ok = ps.is_some_and(|ps| ps.next == Some(a) && held && s.depth <= ps.depth + 1);
                        ensure!(ok, "cap-links", "slot {ci}/{i}: bad prev {p:?}");
                    }
                }
                if let Some(nx) = s.next {
                    let ns = self.cap_slot(nx).cloned();
                    let held = !self.checked_cap(nx).obj.is_null();
                    let ok = ns.is_some_and(|ns| ns.prev == Some(a) && held);
                    ensure!(ok, "cap-links", "slot {ci}/{i}: bad next {nx:?}");
                }
            }
        }
        fn hdr<T: Object, W: Waits>(ctx: &mut Ctx<'_, W>, r: Ref<T>) -> u32 {
            ctx.slot(r).map_or(0, |s| s.hdr.caps)
        }
        for &(o, n) in counts.values() {
            let h = match o {
                CapObj::Null | CapObj::IrqControl => n,
                CapObj::Untyped(r) => hdr(self, r),
                CapObj::Tcb(r) => hdr(self, r),
                CapObj::Endpoint(r) => hdr(self, r),
                CapObj::Notification(r) => hdr(self, r),
                CapObj::CNode(r) => hdr(self, r),
                CapObj::Reply(r) => hdr(self, r),
                CapObj::Frame(r) => hdr(self, r),
                CapObj::VSpace(r) => hdr(self, r),
                CapObj::IrqHandler(i) => self.irq(i.irq as usize).caps,
            };
            ensure!(h == n, "cap-count", "{o:?} counts {h} capabilities, found {n}");
        }
        // Objects no capability names must not exist (they would leak), except
        // zombies (freed by their core) and boot objects referenced by TCBs.
        macro_rules! unnamed {
            ($t:ty, $v:ident) => {
                for i in 0..capacity::<$t>(self) {
                    let Some(r) = self.ref_at::<$t>(i) else { continue };
                    let named = counts.contains_key(&key(CapObj::$v(r)));
                    let caps = hdr(self, r);
                    ensure!(
                        named || caps == 0,
                        "cap-count",
                        "{} {i} counts {caps} capabilities, found 0",
                        stringify!($t)
                    );
                    ensure!(
                        caps > 0 || self.zombie_ok(CapObj::$v(r)),
                        "leak",
                        "{} {i} has no capability",
                        stringify!($t)
                    );
                }
            };
        }
        unnamed!(Untyped, Untyped);
        unnamed!(Tcb, Tcb);
        unnamed!(Endpoint, Endpoint);
        unnamed!(Notification, Notification);
        unnamed!(CNode, CNode);
        unnamed!(Reply, Reply);
        unnamed!(Frame, Frame);
        unnamed!(VSpace, VSpace);
        for irq in 0..NUM_IRQS {
            let s = self.irq(irq);
            let (issued, caps) = (s.issued, s.caps);
            ensure!(!issued || caps > 0, "leak", "IRQ {irq} issued with no handler capability");
        }
        Ok(())
    }

    /// Objects allowed to exist without capabilities: zombie TCBs, and
    /// frames on their untyped's free list.
    fn zombie_ok(&mut self, o: CapObj) -> bool {
        match o {
            CapObj::Tcb(t) => self.get(t).is_some_and(|t| t.state == ThreadState::Zombie),
            CapObj::Frame(f) => {
                self.slot(f).and_then(|s| s.hdr.parent).is_some_and(|u| self.pooled_frames(u).contains(&f.index()))
            }
            _ => false,
        }
    }

    fn check_memory(&mut self) -> Result<(), InvariantViolation> {
        let nu = capacity::<Untyped>(self) as usize;
        let mut used = vec![(0u64, 0u32); nu];
        macro_rules! charge {
            ($t:ty) => {
                for i in 0..capacity::<$t>(self) {
                    let Some(r) = self.ref_at::<$t>(i) else { continue };
                    let Some(s) = self.slot(r) else { continue };
                    let hdr = s.hdr;
                    if let Some(u) = hdr.parent {
                        if self.live(u) {
                            used[u.index() as usize].0 += hdr.bytes;
                            used[u.index() as usize].1 += 1;
                        }
                    }
                }
            };
        }
        charge!(Untyped);
        charge!(Tcb);
        charge!(Endpoint);
        charge!(Notification);
        charge!(CNode);
        charge!(Reply);
        charge!(Frame);
        charge!(VSpace);
        for (i, &(bytes, n)) in used.iter().enumerate() {
            let Some((_, u)) = self.at::<Untyped>(i as u32) else { continue };
            ensure!(
                u.free + bytes == u.size,
                "memory",
                "untyped {i}: free {} + used {bytes} != size {}",
                u.free,
                u.size
            );
            ensure!(u.live == n, "memory", "untyped {i}: live {} != {n} objects", u.live);
        }
        // Frame ↔ address space: the page tables are consistent, and a
        // mapped frame is live, the right size for its entry, and mapped in
        // a live address space.
        if let Err(why) = self.s.mappings.check_quiescent() {
            return fail("mapping", why.into());
        }
        for i in 0..capacity::<Frame>(self) {
            let live = self.at::<Frame>(i).map(|(f, x)| (f, x.large()));
            let Some(m) = self.s.mappings.mapped(i, &|_| {}) else { continue };
            let Some((f, large)) = live else {
                return fail("mapping", format!("frame slot {i} is free but mapped at {m:?}"));
            };
            ensure!(large == m.large, "mapping", "frame {i} ({large}) mapped as large = {}", m.large);
            ensure!(self.mapped_in(f, &|_| {}).is_some(), "mapping", "frame {i} mapped in a dead space {}", m.space);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use crate::args::Entry;
    use crate::object::CNode;
    use crate::regime::BigLockClh;
    use crate::state::TRAP_NONE;
    use crate::{BootConfig, Kernel};

    /// The capability count check still sees a header that disagrees with
    /// the slots naming its object, above or below (the checker walks only
    /// the slots in use, and counts them in a map).
    #[test]
    fn the_checker_catches_a_wrong_capability_count() {
        for above in [true, false] {
            let (k, _, mut cores) = Kernel::<BigLockClh>::boot(BootConfig::new(1), BigLockClh::new(1)).expect("boots");
            let core = &mut cores[0];
            assert_eq!(k.check_invariants(core), Ok(()));
            let found = k.enter(core, TRAP_NONE, Entry::Look, |ctx, _, _| {
                let root =
                    (0..super::capacity::<CNode>(ctx)).find_map(|i| ctx.ref_at::<CNode>(i)).expect("a root CNode");
                let hdr = &mut ctx.slot(root).expect("live").hdr;
                // One more than the slots say, or none.
                hdr.caps = if above { hdr.caps + 1 } else { 0 };
                Ok(ctx.check_invariants())
            });
            let v = found.expect_err("a corrupted count is a violation");
            assert_eq!(v.invariant, "cap-count", "{v:?}");
        }
    }
}
