//! Lock planning for regimes that lock objects ([`Protocol::Objects`], the
//! `fine` regime): which objects a kernel entry will touch, found *before*
//! any of them is read unlocked.
//!
//! The kernel first holds the entering core's scheduler. [`Ctx::plan`] then
//! names objects in steps: each step reads only what earlier steps hold (or
//! what changes only under the exclusive side: capability slots, TCB
//! affinity, CSpace and bound notification, IRQ bindings, generations) and
//! hands the objects it found to `lock`, which holds them or fails:
//!
//! 1. the current thread (the caller), and the objects its capabilities name —
//!    the endpoint or notification, the reply object, its bound notification;
//! 2. under those: the partner — the thread at the head of the endpoint's
//!    queue with its reply object, the notification's first waiter, the
//!    thread waiting on the reply object — and the partner's core.
//!
//! Anything else (object invocations, capability transfer, a bound thread to
//! wake, a zombie or a stall owner as current thread, faults, introspection)
//! is [`Planned::Exclusive`]. After the plan the kernel decodes and executes
//! as usual; the decoded operation's own lock set is offered to the regime
//! again before it executes, which re-validates the plan (the regime extends
//! its holdings if it can, else the call restarts).
//!
//! [`Protocol::Objects`]: crate::regime::Protocol::Objects

use crate::abi::{MessageInfo, Sysno, Word, NUM_IRQS};
use crate::kernel::SyscallArgs;
use crate::object::endpoint::EpState;
use crate::object::tcb::ThreadState;
use crate::object::{tcb_id, CapObj, Ref, SlotAddr, Tcb, KIND_IRQ};
use crate::regime::{LockSet, ObjectId};
use crate::state::Ctx;

/// What a kernel entry is, for planning.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Entry {
    Syscall(SyscallArgs),
    Interrupt(usize),
    /// Timer tick or IPI service: the core's scheduler and current thread.
    Local,
    /// Needs the whole kernel (faults, introspection).
    Whole,
}

/// The outcome of planning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Planned {
    /// Everything the entry touches is held.
    Ready,
    /// The entry needs the whole kernel.
    Exclusive,
    /// A lock could not be had: release everything and start again.
    Retry,
}

/// Hold `set` through `lock` (an exclusive set plans the whole kernel).
macro_rules! step {
    ($lock:expr, $set:expr) => {{
        let set: &LockSet = $set;
        if set.exclusive() {
            return Planned::Exclusive;
        }
        if !$lock(set) {
            return Planned::Retry;
        }
    }};
}

impl Ctx<'_> {
    /// Plan entry `e` of this core, whose scheduler is already held.
    pub(crate) fn plan<L: FnMut(&LockSet) -> bool>(&mut self, e: &Entry, lock: &mut L) -> Planned {
        let core = self.core;
        let mut first = LockSet::core(core);
        let cur = self.cs(core).current;
        if let Some(c) = cur {
            // The current thread's TCB is this core's (held with it).
            match self.get(c) {
                Some(x) if x.state != ThreadState::Zombie && x.holds.is_empty() => first.add(tcb_id(c.index())),
                _ => return Planned::Exclusive,
            }
        }
        match *e {
            Entry::Whole => Planned::Exclusive,
            Entry::Local => {
                step!(lock, &first);
                Planned::Ready
            }
            Entry::Interrupt(irq) => self.plan_interrupt(irq, first, lock),
            Entry::Syscall(a) => match cur {
                Some(c) => self.plan_syscall(c, a, first, lock),
                None => {
                    step!(lock, &first);
                    Planned::Ready
                }
            },
        }
    }

    fn plan_interrupt<L: FnMut(&LockSet) -> bool>(&mut self, irq: usize, mut s: LockSet, lock: &mut L) -> Planned {
        if irq >= NUM_IRQS {
            step!(lock, &s);
            return Planned::Ready;
        }
        s.add(ObjectId { kind: KIND_IRQ, index: irq as u32 });
        step!(lock, &s);
        let slot = self.irq_ref(irq);
        let Some((n, _)) = slot.ntfn.filter(|_| slot.issued && !slot.pending) else { return Planned::Ready };
        if !self.live(n) {
            return Planned::Ready;
        }
        let mut s = LockSet::default();
        s.add(oid(CapObj::Notification(n)));
        step!(lock, &s);
        self.plan_signal_partner(n, lock)
    }

    fn plan_syscall<L: FnMut(&LockSet) -> bool>(
        &mut self,
        caller: Ref<Tcb>,
        a: SyscallArgs,
        mut s: LockSet,
        lock: &mut L,
    ) -> Planned {
        let Some(sysno) = Sysno::from_word(a.sysno) else {
            step!(lock, &s);
            return Planned::Ready;
        };
        let info = MessageInfo(a.info);
        let bound = self.get(caller).and_then(|x| x.bound);
        let obj = match sysno {
            Sysno::Yield | Sysno::Reply => CapObj::Null,
            _ => self.cap_obj(caller, a.cptr),
        };
        let reply = match sysno {
            Sysno::Reply | Sysno::ReplyRecv | Sysno::Recv | Sysno::NBRecv => match self.cap_obj(caller, a.reply) {
                CapObj::Reply(r) => Some(r),
                _ => None,
            },
            _ => None,
        };
        let sends = matches!(sysno, Sysno::Send | Sysno::NBSend | Sysno::Call | Sysno::Signal);
        let receives = matches!(sysno, Sysno::Recv | Sysno::NBRecv | Sysno::ReplyRecv | Sysno::Wait | Sysno::Poll);
        match obj {
            CapObj::Null => {}
            CapObj::Endpoint(_) | CapObj::Notification(_) => s.add(oid(obj)),
            // An object invocation needs the whole kernel.
            _ if sends => return Planned::Exclusive,
            _ => {}
        }
        if sends && info.extra_caps() > 0 && matches!(obj, CapObj::Endpoint(_)) {
            return Planned::Exclusive;
        }
        if let Some(r) = reply {
            s.add(oid(CapObj::Reply(r)));
        }
        if receives {
            if let Some(n) = bound {
                s.add(oid(CapObj::Notification(n)));
            }
        }
        step!(lock, &s);

        // Step 2: the partners, read under the locks of step 1.
        if matches!(sysno, Sysno::Reply | Sysno::ReplyRecv) {
            if let Some(r) = reply {
                match self.plan_reply_partner(r, lock) {
                    Planned::Ready => {}
                    other => return other,
                }
            }
        }
        match obj {
            CapObj::Endpoint(ep) if self.live(ep) => {
                let Some(e) = self.get(ep) else { return Planned::Ready };
                let (state, head) = (e.state, e.queue.head);
                let wanted = if sends { EpState::Recv } else { EpState::Send };
                if state != wanted {
                    return Planned::Ready;
                }
                let Some((p, x)) = self.at::<Tcb>(head) else { return Planned::Ready };
                let reply = match x.state {
                    ThreadState::BlockedOnRecv { reply: Some(r), .. } => Some(oid(CapObj::Reply(r))),
                    ThreadState::BlockedOnSend { grant: true, info, .. } if info.extra_caps() > 0 => {
                        return Planned::Exclusive
                    }
                    _ => None,
                };
                step!(lock, &partner(p, x.core, reply));
                Planned::Ready
            }
            CapObj::Notification(n) if sends && self.live(n) => self.plan_signal_partner(n, lock),
            _ => Planned::Ready,
        }
    }

    /// The first waiter of notification `n` (held) and its core; a bound
    /// thread to wake needs the whole kernel.
    fn plan_signal_partner<L: FnMut(&LockSet) -> bool>(
        &mut self,
        n: Ref<crate::object::Notification>,
        lock: &mut L,
    ) -> Planned {
        let Some(x) = self.get(n) else { return Planned::Ready };
        let (head, bound) = (x.queue.head, x.bound);
        if let Some((w, t)) = self.at::<Tcb>(head) {
            step!(lock, &partner(w, t.core, None));
            return Planned::Ready;
        }
        if bound.is_some() {
            return Planned::Exclusive;
        }
        Planned::Ready
    }

    /// The thread waiting on reply object `r` (held) and its core.
    fn plan_reply_partner<L: FnMut(&LockSet) -> bool>(
        &mut self,
        r: Ref<crate::object::Reply>,
        lock: &mut L,
    ) -> Planned {
        let Some(c) = self.get(r).and_then(|x| x.caller) else { return Planned::Ready };
        let Some(core) = self.get(c).map(|x| x.core) else { return Planned::Ready };
        step!(lock, &partner(c, core, None));
        Planned::Ready
    }

    /// What capability pointer `cptr` of `t` names (null if nothing live).
    /// Reads only the CSpace (changed only under the exclusive side) and
    /// generations; other objects are not followed.
    #[inline]
    fn cap_obj(&mut self, t: Ref<Tcb>, cptr: Word) -> CapObj {
        let Some(cnode) = self.cspace_of(t) else { return CapObj::Null };
        let Ok(index) = u32::try_from(cptr) else { return CapObj::Null };
        let obj = self.cap_at(SlotAddr { cnode, index }).obj;
        let live = match obj {
            CapObj::Endpoint(r) => self.live(r),
            CapObj::Notification(r) => self.live(r),
            CapObj::Reply(r) => self.live(r),
            // Not followed: invocations are planned exclusive anyway.
            other => !other.is_null(),
        };
        if live {
            obj
        } else {
            CapObj::Null
        }
    }
}

/// A partner thread `t` of core `core` (and its reply object, if any).
#[inline(always)]
fn partner(t: Ref<Tcb>, core: usize, reply: Option<ObjectId>) -> LockSet {
    let mut s = LockSet::default();
    s.add(tcb_id(t.index()));
    s.cores.insert(core);
    if let Some(r) = reply {
        s.add(r);
    }
    s
}

#[inline(always)]
fn oid(obj: CapObj) -> ObjectId {
    obj.id().unwrap_or_default()
}
