//! The kernel invariants over the lock-free representation (checked by
//! `invariants.rs`, in a management entry, so the words hold still).
//!
//! * An endpoint's queue holds live threads blocked on *that* endpoint on
//!   the queue's side, without cycles; its mark is set iff one of them is a
//!   sender transferring capabilities. A free endpoint slot's queue is empty.
//! * A notification's waiters are live threads blocked on it; it is never
//!   active with waiters, and has no bits unless active. Free slots are clear.
//! * A reply word `Caller(c)` names a thread blocked on that reply object,
//!   `Receiver(t)` a thread receiving with it — and conversely every thread
//!   receiving with a reply object is its `Receiver`. Free slots are empty.
//! * A thread's stop word (`control.rs`) is in a reachable state, says
//!   inactive iff the thread is, and names the thread's core as its home.
//! * An inbox holds runnable threads of its core, in no ready queue and
//!   current nowhere (a look leaves inboxes as they are), and every core
//!   publishes the priority of its current thread.
//! * The general code's queues and reply fields stay empty.
//! * Every doomed entry is a dead slot holding the only capability to a
//!   live thread being stopped; every detached slot holds the only
//!   capability to a frame of its untyped, as a lone root.
//!
//! Members found are added to `places`, the "every thread in exactly one
//! place" count of `invariants.rs`.

use alloc::format;
use alloc::vec::Vec;
use core::sync::atomic::Ordering::Relaxed;

use crate::object::endpoint::EpState;
use crate::object::thread::ThreadState;
use crate::object::{CapObj, Endpoint, Notification, Ref, Reply, SlotAddr, Tcb};
use crate::state::{Ctx, Object};
use crate::violation::{ensure, fail, InvariantViolation};

use super::doomed::Doom;
use super::shared::{published, LfState, ReplyState, IDLE};
use super::SENDERS;

fn capacity<T: Object>(ctx: &Ctx<'_, LfState>) -> u32 {
    T::slab(ctx.s).capacity() as u32
}

impl Ctx<'_, LfState> {
    /// Check the lock-free representation (see the module documentation).
    pub(crate) fn lf_check(&mut self, places: &mut [u32]) -> Result<(), InvariantViolation> {
        let lf = self.lf();
        let limit = capacity::<Tcb>(self) as usize + 1;
        let links = lf.links::<true>(self.core);

        for i in 0..capacity::<Endpoint>(self) {
            let queue = &lf.eps[i as usize];
            let top = queue.snapshot();
            let Some((ep, e)) = self.at::<Endpoint>(i) else {
                ensure!(top.waiting.is_none(), "lf-endpoint", "free endpoint slot {i} has waiters");
                continue;
            };
            ensure!(
                e.state == EpState::Idle && e.queue.is_empty(),
                "lf-endpoint",
                "ep {i}: the general queue is in use"
            );
            let mut n = 0;
            let mut caps = false;
            for m in queue.iter(links, limit) {
                n += 1;
                ensure!(n < limit, "lf-endpoint", "ep {i}: cycle");
                let Some((_, x)) = self.at::<Tcb>(m) else {
                    return fail("lf-endpoint", format!("ep {i}: dead TCB {m} waits"));
                };
                // A node a signal left behind (`bound.rs`): the thread is
                // not there any more.
                if lf.ctl(m).is_ghost() && lf.ghost_ep(m).load(Relaxed) == i {
                    ensure!(x.bound.is_some(), "lf-bound", "ep {i}: ghost TCB {m} has no bound notification");
                    continue;
                }
                let ok = match (top.waiting == Some(SENDERS), x.state) {
                    (true, ThreadState::BlockedOnSend { ep: e, grant, info, .. }) => {
                        caps |= grant && info.extra_caps() > 0;
                        e == ep
                    }
                    (false, ThreadState::BlockedOnRecv { ep: e, .. }) => e == ep,
                    _ => false,
                };
                ensure!(ok, "lf-endpoint", "ep {i} ({:?}) holds TCB {m} in {:?}", top.waiting, x.state);
                places[m as usize] += 1;
            }
            ensure!(top.marked == caps, "lf-endpoint", "ep {i}: mark {} but capability senders {caps}", top.marked);
        }

        for i in 0..capacity::<Notification>(self) {
            let word = &lf.ntfns[i as usize];
            let st = word.state();
            let Some((n, x)) = self.at::<Notification>(i) else {
                ensure!(
                    st.waiter.is_none() && !st.active && st.bits == 0,
                    "lf-notification",
                    "free notification slot {i}: {st:?}"
                );
                continue;
            };
            ensure!(
                x.queue.is_empty() && !x.active && x.word == 0,
                "lf-notification",
                "ntfn {i}: the general word is in use"
            );
            ensure!(!(st.active && st.waiter.is_some()), "lf-notification", "ntfn {i} active with waiters");
            ensure!(st.active || st.bits == 0, "lf-notification", "ntfn {i}: bits {:#x} while inactive", st.bits);
            let mut k = 0;
            for m in word.iter(links, limit) {
                k += 1;
                ensure!(k < limit, "lf-notification", "ntfn {i}: cycle");
                let s = self.at::<Tcb>(m).map(|(_, x)| x.state);
                ensure!(
                    s == Some(ThreadState::BlockedOnNotification { ntfn: n }),
                    "lf-notification",
                    "ntfn {i} holds TCB {m} in {s:?}"
                );
                places[m as usize] += 1;
            }
        }

        for i in 0..capacity::<Reply>(self) {
            let st = lf.replies[i as usize].load().1;
            let Some((r, x)) = self.at::<Reply>(i) else {
                ensure!(st == ReplyState::Empty, "lf-reply", "free reply slot {i}: {st:?}");
                continue;
            };
            ensure!(x.caller.is_none() && x.receiver.is_none(), "lf-reply", "reply {i}: the general fields are in use");
            match st {
                ReplyState::Empty => {}
                ReplyState::Caller(c, _) => {
                    let s = self.get(c).map(|x| x.state);
                    ensure!(
                        matches!(s, Some(ThreadState::BlockedOnReply { reply, .. }) if reply == r),
                        "lf-reply",
                        "reply {i} caller {c:?} is {s:?}"
                    );
                    places[c.index() as usize] += 1;
                }
                ReplyState::Receiver(t) => {
                    let s = self.get(t).map(|x| x.state);
                    let ok = matches!(s, Some(ThreadState::BlockedOnRecv { reply: Some(rr), .. }) if rr == r);
                    ensure!(ok, "lf-reply", "reply {i} receiver {t:?} is {s:?}");
                }
            }
        }

        for i in 0..capacity::<Tcb>(self) {
            let Some((t, x)) = self.at::<Tcb>(i) else { continue };
            if let ThreadState::BlockedOnRecv { reply: Some(r), .. } = x.state {
                let st = lf.reply(r).load().1;
                ensure!(st == ReplyState::Receiver(t), "lf-reply", "TCB {i} receives with {r:?}, which is {st:?}");
            }
            let w = lf.ctl(i);
            if let Err(c) = w.check() {
                return fail("lf-control", format!("TCB {i}: stop word {c:#x}"));
            }
            ensure!(w.home() == x.core, "lf-control", "TCB {i} on core {} has home {}", x.core, w.home());
            if x.state != ThreadState::Zombie {
                ensure!(
                    w.is_inactive() == (x.state == ThreadState::Inactive),
                    "lf-control",
                    "TCB {i} is {:?}, its stop word says inactive: {}",
                    x.state,
                    w.is_inactive()
                );
            }
            // A claimable bound receiver is one waiting in an endpoint
            // receive with a bound notification, and every such thread is
            // claimable (`bound.rs`).
            let receiving = matches!(x.state, ThreadState::BlockedOnRecv { .. }) && x.bound.is_some();
            ensure!(
                w.is_waiting() == receiving,
                "lf-bound",
                "TCB {i} is {:?} (bound: {}), its stop word says waiting: {}",
                x.state,
                x.bound.is_some(),
                w.is_waiting()
            );
            // Killed while a shared destroy waits for management, and
            // after it as a zombie (deleted while current on its core).
            let (killed, zombie, doomed) = (w.is_killed(), x.state == ThreadState::Zombie, self.doomed(t));
            ensure!(
                killed == doomed || (killed && zombie),
                "lf-control",
                "TCB {i}: killed {killed}, doomed {doomed}, zombie {zombie}"
            );
        }

        for c in 0..self.s.config.cores {
            let cell = &lf.cores[c];
            // A look leaves inboxes as the shared paths left them.
            for (n, m) in cell.inbox.members(lf.wake_links::<false>(c)).enumerate() {
                ensure!(n < limit, "lf-inbox", "core {c}: inbox has a cycle");
                let t = self.ref_at::<Tcb>(m);
                let x = t.and_then(|t| self.get(t));
                let ok = x.is_some_and(|x| x.state == ThreadState::Running && x.core == c && !x.in_ready);
                ensure!(ok, "lf-inbox", "core {c}: inbox holds TCB {m}, not a runnable thread of it in no queue");
                ensure!(
                    (0..self.s.config.cores).all(|d| self.cs(d).current != t),
                    "lf-inbox",
                    "core {c}: inbox holds TCB {m}, which is current"
                );
                places[m as usize] += 1;
            }
            let cur: Option<Ref<Tcb>> = self.cs(c).current;
            let p = cur.and_then(|t| self.get(t)).map_or(IDLE, |x| published(x.prio));
            let have = cell.prio.load(core::sync::atomic::Ordering::Relaxed);
            ensure!(have == p, "lf-priority", "core {c} publishes {have}, runs {p}");
        }
        self.check_detached()?;
        self.check_doomed()
    }

    /// Every doomed entry (`finish_destroy.rs`) is a dead slot and
    /// the only capability to a live thread that no other entry names,
    /// whose stop is requested or met.
    fn check_doomed(&mut self) -> Result<(), InvariantViolation> {
        let mut seen: Vec<SlotAddr> = Vec::new();
        for c in 0..self.s.config.cores {
            let entries: Vec<_> = self.lists(c).doomed.iter().collect();
            for Doom { slot, cap, .. } in entries {
                ensure!(!seen.contains(&slot), "doomed", "core {c}: slot {slot:?} doomed twice");
                seen.push(slot);
                let dead = self.cap_ref(slot).is_some_and(|s| s.cap.is_dead());
                ensure!(dead, "doomed", "core {c}: doomed slot {slot:?} is not dead");
                let CapObj::Tcb(t) = cap.obj else {
                    return fail("doomed", format!("core {c}: doomed slot {slot:?} held {:?}", cap.obj));
                };
                let caps = self.slot(t).map(|s| s.hdr.caps);
                ensure!(caps == Some(1), "doomed", "core {c}: doomed thread {t:?} has {caps:?} capabilities");
                let stopped = self.get(t).is_some_and(|x| x.state == ThreadState::Inactive);
                let stopping = stopped || self.lf().ctl_of(t).requested() == Some(false);
                ensure!(stopping, "doomed", "core {c}: doomed thread {t:?} is not being stopped");
            }
        }
        Ok(())
    }

    /// Every detached slot (`detached.rs`) holds the only
    /// capability to a frame of its untyped, as a lone root, and its
    /// parent slot holds a capability to that untyped.
    fn check_detached(&mut self) -> Result<(), InvariantViolation> {
        for c in 0..self.s.config.cores {
            let entries: Vec<_> = self.lists(c).detached.iter().collect();
            for e in entries {
                let s = self.cap_slot(e.slot).cloned();
                let lone = s.as_ref().is_some_and(|s| s.prev.is_none() && s.next.is_none() && s.depth == 0);
                ensure!(lone, "detached", "core {c}: detached slot {:?} is linked", e.slot);
                let CapObj::Frame(f) = self.cap_at(e.slot).obj else {
                    return fail("detached", format!("core {c}: detached slot {:?} holds no frame", e.slot));
                };
                let hdr = self.slot(f).map(|s| s.hdr);
                ensure!(
                    hdr.is_some_and(|h| h.caps == 1 && h.parent == Some(e.untyped)),
                    "detached",
                    "core {c}: detached frame {f:?} has header {hdr:?}"
                );
                let parent = self.cap_at(e.parent).obj;
                ensure!(
                    parent == CapObj::Untyped(e.untyped),
                    "detached",
                    "core {c}: detached frame {f:?}'s parent slot holds {parent:?}"
                );
            }
        }
        Ok(())
    }
}
