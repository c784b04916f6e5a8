//! Lock planning for regimes that lock objects (the [`Objects`] drive, the
//! `fine` regime): which objects a kernel entry will touch, found *before*
//! any of them is read unlocked.
//!
//! [`Ctx::plan`] first holds the entering core's own lock, then names
//! objects in steps: each step reads only what earlier steps hold (or what
//! changes only under the exclusive side: capability slots, TCB affinity,
//! CSpace and bound notification, IRQ bindings, generations) and hands the
//! objects it found to `lock` one at a time, in lock order within the step,
//! which holds each or fails:
//!
//! 1. the current thread (the caller), and the objects its capabilities name —
//!    the endpoint or notification, the reply object, its bound notification;
//! 2. under those: the partner — the thread at the head of the endpoint's
//!    queue with its reply object, the notification's first waiter, the
//!    thread waiting on the reply object — and the partner's core.
//!
//! Naming locks one at a time (rather than building a set per step) keeps
//! the shared path short: no set is built, copied or searched.
//!
//! (`Call` and `ReplyRecv` try the IPC fast path first, which takes the same
//! locks as it goes; see `fastpath.rs`. The plan runs when it declines.)
//!
//! Anything else (object invocations, capability transfer, a bound thread to
//! wake, a zombie or a stall owner as current thread, faults, introspection)
//! is [`Planned::Exclusive`]. After the plan the kernel decodes and executes
//! as usual; the decoded operation's own lock set is offered to the regime
//! again before it executes, which re-validates the plan (the regime extends
//! its holdings if it can, else the call restarts).
//!
//! [`Objects`]: crate::drive::Objects

use crate::abi::{MessageInfo, Sysno, Word, NUM_IRQS};
use crate::args::SyscallArgs;
use crate::ids::ObjectId;
use crate::object::endpoint::EpState;
use crate::object::thread::ThreadState;
use crate::object::{tcb_id, CapObj, Ref, SlotAddr, Tcb, KIND_IRQ};
use crate::regime::LockTarget;
use crate::state::Ctx;
use crate::waits::Waits;

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

/// Hold `target` through `lock`; a lock that cannot be had retries the entry.
macro_rules! take {
    ($lock:expr, $target:expr) => {{
        if !$lock($target) {
            return Planned::Retry;
        }
    }};
}

impl<W: Waits> Ctx<'_, W> {
    /// Plan entry `e` of this core. Nothing is held yet: the first lock is
    /// this core's own (its scheduler, and for `fine` its read side).
    pub(crate) fn plan<L: FnMut(LockTarget) -> bool>(&mut self, e: &Entry, lock: &mut L) -> Planned {
        if matches!(e, Entry::Whole) {
            return Planned::Exclusive;
        }
        let core = self.core;
        take!(lock, LockTarget::Core(core));
        let cur = self.cs(core).current;
        if let Some(c) = cur {
            // The current thread: a zombie or a stall owner needs the whole
            // kernel. Its TCB is the lowest object any entry names, so
            // taking it now keeps the lock order.
            match self.get(c) {
                Some(x) if x.state != ThreadState::Zombie && x.holds.is_empty() => {}
                _ => return Planned::Exclusive,
            }
            take!(lock, LockTarget::Object(tcb_id(c.index())));
        }
        match *e {
            Entry::Whole | Entry::Local => Planned::Ready,
            Entry::Interrupt(irq) => self.plan_interrupt(irq, lock),
            Entry::Syscall(a) => match cur {
                Some(c) => self.plan_syscall(c, a, lock),
                None => Planned::Ready,
            },
        }
    }

    fn plan_interrupt<L: FnMut(LockTarget) -> bool>(&mut self, irq: usize, lock: &mut L) -> Planned {
        if irq >= NUM_IRQS {
            return Planned::Ready;
        }
        take!(lock, LockTarget::Object(ObjectId { kind: KIND_IRQ, index: irq as u32 }));
        let slot = self.irq_ref(irq);
        let Some((n, _)) = slot.ntfn.filter(|_| slot.issued && !slot.pending) else { return Planned::Ready };
        if !self.live(n) {
            return Planned::Ready;
        }
        take!(lock, LockTarget::Object(oid(CapObj::Notification(n))));
        self.plan_signal_partner(n, lock)
    }

    fn plan_syscall<L: FnMut(LockTarget) -> bool>(
        &mut self,
        caller: Ref<Tcb>,
        a: SyscallArgs,
        lock: &mut L,
    ) -> Planned {
        let Some(sysno) = Sysno::from_word(a.sysno) else { return Planned::Ready };
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
        // Step 1, in lock order: the endpoint or notification and the bound
        // notification (by kind, then index), then the reply object.
        let mut first = match obj {
            CapObj::Null => None,
            CapObj::Endpoint(_) | CapObj::Notification(_) => Some(oid(obj)),
            // An object invocation needs the whole kernel.
            _ if sends => return Planned::Exclusive,
            _ => None,
        };
        if sends && info.extra_caps() > 0 && matches!(obj, CapObj::Endpoint(_)) {
            return Planned::Exclusive;
        }
        let mut second = bound.filter(|_| receives).map(|n| oid(CapObj::Notification(n)));
        if let (Some(x), Some(y)) = (first, second) {
            if y < x {
                (first, second) = (second, first);
            }
        }
        for id in [first, second, reply.map(|r| oid(CapObj::Reply(r)))].into_iter().flatten() {
            take!(lock, LockTarget::Object(id));
        }

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
                let own = self.core;
                let Some((p, x)) = self.at::<Tcb>(head) else { return Planned::Ready };
                let reply = match x.state {
                    ThreadState::BlockedOnRecv { reply: Some(r), .. } => Some(oid(CapObj::Reply(r))),
                    ThreadState::BlockedOnSend { grant: true, info, .. } if info.extra_caps() > 0 => {
                        return Planned::Exclusive
                    }
                    _ => None,
                };
                lock_partner(lock, own, p, x.core, reply)
            }
            CapObj::Notification(n) if sends && self.live(n) => self.plan_signal_partner(n, lock),
            _ => Planned::Ready,
        }
    }

    /// The first waiter of notification `n` (held) and its core; a bound
    /// thread to wake needs the whole kernel.
    fn plan_signal_partner<L: FnMut(LockTarget) -> bool>(
        &mut self,
        n: Ref<crate::object::Notification>,
        lock: &mut L,
    ) -> Planned {
        let Some(x) = self.get(n) else { return Planned::Ready };
        let (head, bound) = (x.queue.head, x.bound);
        let own = self.core;
        if let Some((w, t)) = self.at::<Tcb>(head) {
            return lock_partner(lock, own, w, t.core, None);
        }
        if bound.is_some() {
            return Planned::Exclusive;
        }
        Planned::Ready
    }

    /// The thread waiting on reply object `r` (held) and its core.
    fn plan_reply_partner<L: FnMut(LockTarget) -> bool>(
        &mut self,
        r: Ref<crate::object::Reply>,
        lock: &mut L,
    ) -> Planned {
        let Some(c) = self.get(r).and_then(|x| x.caller) else { return Planned::Ready };
        let Some(core) = self.get(c).map(|x| x.core) else { return Planned::Ready };
        lock_partner(lock, self.core, c, core, None)
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

/// Hold a partner thread `t`, its core `core` and its reply object (if
/// any), in lock order.
#[inline(always)]
fn lock_partner<L: FnMut(LockTarget) -> bool>(
    lock: &mut L,
    own: usize,
    t: Ref<Tcb>,
    core: usize,
    reply: Option<ObjectId>,
) -> Planned {
    // This core's own lock is the first every plan takes.
    if core != own {
        take!(lock, LockTarget::Core(core));
    }
    take!(lock, LockTarget::Object(tcb_id(t.index())));
    if let Some(r) = reply {
        take!(lock, LockTarget::Object(r));
    }
    Planned::Ready
}

#[inline(always)]
fn oid(obj: CapObj) -> ObjectId {
    obj.id().unwrap_or_default()
}
