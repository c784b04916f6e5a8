//! Per-core scheduling: ready queues, the current thread, wake-ups, stalls.
//!
//! # The scheduler of one core
//!
//! Each core has 256 ready queues (FIFO, intrusive through the TCBs) and a
//! 256-bit bitmap of the non-empty ones, a current thread (`None` = the idle
//! thread) and an *action* decided during the entry and carried out at its
//! end ([`Ctx::finish_entry`], seL4's `schedule()`): keep the current thread,
//! switch directly to a woken thread (IPC hand-off), or choose the highest
//! ready thread. The current thread is never in a ready queue. The round-robin
//! time slice is charged by [`crate::Kernel::timer_tick`] and checked on that
//! entry; a thread whose slice ran out goes to the back of its level.
//!
//! # Cross-core wake-up
//!
//! A thread is only ever queued on its affinity core. Waking a thread of
//! another core enqueues it there and sets that core's pending `RESCHEDULE`
//! bit; the core is put in the plan's IPIs if it is idle or the woken thread
//! outranks its current thread.
//!
//! # Remote stalls
//!
//! Suspending, migrating or rewriting a thread that is running user code on
//! another core, or deleting it or an address space in use there, must wait
//! until that core stops running it. A core that has *trapped* (it is inside
//! the kernel or waiting for the kernel lock: `CoreCell::trapped`) is not
//! running user code, so the operation proceeds at once and takes the thread
//! away from it (the trapped system call is discarded and restarted later).
//! Otherwise the operation does not wait with the lock held (a core waiting
//! for a lock holder that waits for it would deadlock): the requesting thread
//! *holds* the remote core (its `held` count keeps it on the idle thread),
//! sets the remote core's `STALL` bit, puts it in the plan's IPIs and has its
//! own system call *restarted*. The remote core's next kernel entry (the IPI)
//! puts its current thread back at the head of its ready queue and runs the
//! idle thread; the restarted operation then finds the thread not running and
//! completes. A thread's holds are released when one of its system calls
//! completes without needing a stall, or when it stops (suspend, fault,
//! destruction); the released core is sent a `RESCHEDULE` IPI.
//!
//! A thread destroyed as a side effect of destroying a CNode (a cascade, which
//! cannot be restarted half-way) while it runs on another core becomes a
//! *zombie*: unlinked from everything, still that core's current thread, and
//! freed by that core's next kernel entry (a `STALL` IPI is sent).

use core::sync::atomic::Ordering;

use crate::decode::CallerView;
use crate::exit::{CoreMask, ExitPlan, StartInfo};
use crate::hold::Hold;
use crate::ids::{SpaceId, ThreadId};
use crate::introspect::{ThreadInfo, ThreadStatus};
use crate::object::thread::ThreadState;
use crate::object::{Ref, Tcb, NIL};
use crate::state::{bump, Ctx, IPI_RESCHEDULE, IPI_STALL, TRAP_NONE, TRAP_SYSCALL};
use crate::waits::Waits;

pub(crate) mod core_state;

pub(crate) use core_state::{Action, Direct};

/// What an entry's end runs ([`Ctx::exit_to`]).
#[derive(Clone, Copy, Debug)]
enum Next {
    /// The fast path's direct switch, whose thread is known to be live.
    Direct(Direct),
    /// This thread (checked: a stale one runs nothing), of this priority
    /// (none: as its TCB says); no thread: idle.
    Checked(Option<Ref<Tcb>>, Option<u8>),
}

impl<W: Waits> Ctx<'_, W> {
    /// Append (`front = false`) or prepend `t` to its core's ready queue.
    pub(crate) fn enqueue(&mut self, t: Ref<Tcb>, front: bool) {
        let Some(x) = self.get(t) else { return };
        if x.in_ready {
            return;
        }
        let (core, p) = (x.core, x.prio);
        x.in_ready = true;
        let q = &mut self.cs(core).ready;
        let (h, tl) = (q.head[p as usize], q.tail[p as usize]);
        if h == NIL {
            q.head[p as usize] = t.index();
            q.tail[p as usize] = t.index();
            q.set_bit(p, true);
            let x = self.tcb_at(t.index());
            x.sched_next = NIL;
            x.sched_prev = NIL;
        } else if front {
            q.head[p as usize] = t.index();
            let x = self.tcb_at(t.index());
            x.sched_next = h;
            x.sched_prev = NIL;
            self.tcb_at(h).sched_prev = t.index();
        } else {
            q.tail[p as usize] = t.index();
            let x = self.tcb_at(t.index());
            x.sched_prev = tl;
            x.sched_next = NIL;
            self.tcb_at(tl).sched_next = t.index();
        }
    }

    /// Remove `t` from its core's ready queue (if it is in it).
    pub(crate) fn dequeue(&mut self, t: Ref<Tcb>) {
        let Some(x) = self.get(t) else { return };
        if !x.in_ready {
            return;
        }
        let (core, p, next, prev) = (x.core, x.prio, x.sched_next, x.sched_prev);
        x.in_ready = false;
        x.sched_next = NIL;
        x.sched_prev = NIL;
        if prev != NIL {
            self.tcb_at(prev).sched_next = next;
        }
        if next != NIL {
            self.tcb_at(next).sched_prev = prev;
        }
        let q = &mut self.cs(core).ready;
        if prev == NIL {
            q.head[p as usize] = next;
        }
        if next == NIL {
            q.tail[p as usize] = prev;
        }
        if q.head[p as usize] == NIL {
            q.set_bit(p, false);
        }
    }

    /// Whether `t` waits in this core's ready queues, found by walking them:
    /// only the queued threads' TCBs are read (this core owns them), never
    /// `t`'s unless it is one of them. A walk of this core's ready threads;
    /// its users are `lockfree`'s shared suspend and destroy of a thread of
    /// the caller's core (`decode.rs`'s `Controls`, `lockfree/control.rs`),
    /// where another core may own `t` itself.
    pub(crate) fn queued_here(&mut self, t: Ref<Tcb>) -> bool {
        let mut levels = self.own().ready.bitmap;
        for w in (0..levels.len()).rev() {
            while levels[w] != 0 {
                let b = 63 - levels[w].leading_zeros() as usize;
                levels[w] &= !(1 << b);
                let mut i = self.own().ready.head[w * 64 + b];
                while i != NIL {
                    if i == t.index() {
                        return self.ref_at::<Tcb>(i) == Some(t);
                    }
                    i = self.tcb_at(i).sched_next;
                }
            }
        }
        false
    }

    /// Pop the highest-priority ready thread of this core.
    fn pick(&mut self) -> Option<Ref<Tcb>> {
        let ready = &self.own().ready;
        let p = ready.highest()?;
        let i = ready.head[p as usize];
        let t = self.ref_at::<Tcb>(i)?;
        self.dequeue(t);
        Some(t)
    }

    /// Set `core`'s pending bits and interrupt it when this entry returns.
    pub(crate) fn send_ipi(&mut self, core: usize, bits: u64) {
        if core == self.core {
            if bits & IPI_RESCHEDULE != 0 {
                self.request_reschedule();
            }
            return;
        }
        self.cell(core).pending.fetch_or(bits, Ordering::Release);
        self.plan_ipi(core);
    }

    /// Interrupt `core` (another core) when this entry returns, setting
    /// none of its pending bits: what it is to do is where its entries
    /// look anyway (`lockfree`: its inbox, its stop-request flag).
    #[inline(always)]
    pub(crate) fn plan_ipi(&mut self, core: usize) {
        self.ipis.insert(core);
    }

    /// Re-choose this core's thread at the end of the entry.
    pub(crate) fn request_reschedule(&mut self) {
        let cs = self.own();
        if !matches!(cs.action, Action::Choose { .. }) {
            cs.action = Action::Choose { yielded: false };
        }
    }

    /// `t` has just become runnable (state `Running`, in no queue): queue it
    /// on its core, or make it this core's candidate for a direct switch.
    pub(crate) fn wake(&mut self, t: Ref<Tcb>) {
        let Some(x) = self.get(t) else { return };
        let (core, prio) = (x.core, x.prio);
        self.wake_on(t, core, prio);
    }

    /// [`Ctx::wake`] of `t`, whose home core and priority the caller read
    /// just now.
    #[inline(always)]
    pub(crate) fn wake_on(&mut self, t: Ref<Tcb>, core: usize, prio: u8) {
        if core == self.core {
            let cs = self.cs(core);
            match cs.action {
                Action::Resume => cs.action = Action::SwitchTo(t),
                Action::SwitchTo(_) | Action::Direct { .. } | Action::Choose { .. } => {
                    // Two candidates: queue both and re-choose.
                    if let Action::SwitchTo(u) | Action::Direct { to: u, .. } = cs.action {
                        cs.action = Action::Choose { yielded: false };
                        self.enqueue(u, false);
                    }
                    self.enqueue(t, false);
                }
            }
            return;
        }
        self.enqueue(t, false);
        let cs = self.cs(core);
        let outranks = cs.current.is_none() || prio > cs.current_prio;
        if outranks {
            self.send_ipi(core, IPI_RESCHEDULE);
        }
    }

    /// The core on which `t` is running user code right now, if it is not
    /// this one: `t` is that core's current thread and the core has not
    /// trapped. (A trapped core's thread is not running; it can be taken.)
    pub(crate) fn running_elsewhere(&mut self, t: Ref<Tcb>) -> Option<usize> {
        let core = self.get(t)?.core;
        if core == self.core || self.cs(core).current != Some(t) {
            return None;
        }
        (self.cell(core).trapped.load(Ordering::Acquire) == TRAP_NONE).then_some(core)
    }

    /// Ask the cores in `cores` to stall on behalf of `holder` (this core's
    /// current thread, whose system call will be restarted).
    ///
    /// Only one thread at a time may hold cores (the *stall owner*): two
    /// threads holding each other's cores idle would deadlock. Another thread
    /// needing a stall meanwhile just restarts until the owner is done.
    pub(crate) fn request_stall(&mut self, holder: Ref<Tcb>, cores: CoreMask) {
        match self.stall_owner() {
            Some(o) if o != holder && self.live(o) => return,
            _ => self.global().stall_owner = Some(holder),
        }
        for c in cores.iter() {
            let Some(h) = self.get(holder) else { return };
            if !h.holds.contains(c) {
                h.holds.insert(c);
                self.cs(c).held += 1;
            }
            self.send_ipi(c, IPI_STALL);
        }
    }

    /// Release every core `t` holds stalled.
    pub(crate) fn release_holds(&mut self, t: Ref<Tcb>) {
        if self.stall_owner() == Some(t) {
            self.global().stall_owner = None;
        }
        let Some(x) = self.get(t) else { return };
        let holds = core::mem::take(&mut x.holds);
        for c in holds.iter() {
            let cs = self.cs(c);
            cs.held = cs.held.saturating_sub(1);
            if cs.held == 0 {
                self.send_ipi(c, IPI_RESCHEDULE);
            }
        }
    }

    /// Take `t` out of every place it is in (ready queue, a remote trapped
    /// core's current slot, an endpoint / notification queue, a reply
    /// object). Its state is left for the caller to set. Returns whether a
    /// system call of `t` was interrupted (it was blocked in one, or trapped
    /// on another core); its IPC buffer then says `restart`. `t` must not be
    /// running user code on another core.
    pub(crate) fn detach(&mut self, t: Ref<Tcb>) -> bool {
        // A stall owner whose pending call is abandoned or moved gives its
        // cores back (its call, if restarted, asks again).
        if self.get(t).is_some_and(|x| !x.holds.is_empty()) {
            self.release_holds(t);
        }
        // The wait representation may hold the blocked cases (`lockfree`).
        if let Some(interrupted) = W::detach(self, t) {
            return interrupted;
        }
        let Some(x) = self.get(t) else { return false };
        let (state, core, ready) = (x.state, x.core, x.in_ready);
        match state {
            ThreadState::Running | ThreadState::Zombie => {
                if ready {
                    self.dequeue(t);
                    false
                } else if core != self.core && self.cs(core).current == Some(t) {
                    self.cs(core).current = None;
                    self.request_remote_choose(core);
                    let in_call = self.cell(core).trapped.load(Ordering::Acquire) == TRAP_SYSCALL;
                    if in_call {
                        self.ipc(t).restart = 1;
                    }
                    in_call
                } else {
                    false
                }
            }
            ThreadState::Inactive => false,
            ThreadState::BlockedOnSend { ep, .. } => {
                self.ep_remove(ep, t);
                self.ipc(t).restart = 1;
                true
            }
            ThreadState::BlockedOnRecv { ep, reply } => {
                self.ep_remove(ep, t);
                if let Some(r) = reply {
                    if let Some(r) = self.get(r) {
                        if r.receiver == Some(t) {
                            r.receiver = None;
                        }
                    }
                }
                self.ipc(t).restart = 1;
                true
            }
            ThreadState::BlockedOnReply { reply, .. } => {
                if let Some(r) = self.get(reply) {
                    if r.caller == Some(t) {
                        r.caller = None;
                    }
                }
                self.ipc(t).restart = 1;
                true
            }
            ThreadState::BlockedOnNotification { ntfn } => {
                self.ntfn_remove(ntfn, t);
                self.ipc(t).restart = 1;
                true
            }
        }
    }

    /// A trapped core lost its current thread: make it re-choose.
    fn request_remote_choose(&mut self, core: usize) {
        let cs = self.cs(core);
        cs.action = Action::Choose { yielded: false };
        self.cell(core).pending.fetch_or(IPI_RESCHEDULE, Ordering::Release);
    }

    /// Count a completed system call (once, after any round that stopped).
    #[inline(always)]
    pub(crate) fn count_syscall(&mut self) {
        bump(&self.own_cell().syscalls);
    }

    /// Count a completed interrupt, tick or IPI entry.
    #[inline(always)]
    pub(crate) fn count_other_entry(&mut self) {
        bump(&self.own_cell().other_entries);
    }

    /// Start of every general kernel entry: with this core's scheduler held
    /// by the drive's entry (and the current thread with it), reap the
    /// current thread if it is a zombie, serve pending requests. A zombie current thread (to be freed)
    /// or a stall owner (whose completed call releases other cores) stops a
    /// shared entry: it needs the whole kernel. Running it again after a
    /// stopped round changes nothing more (the requests are served).
    ///
    /// Returns the decoder's view of the current thread if it is running
    /// and holds no stalled cores — read here, where the entry meets its
    /// TCB anyway, for the IPC fast path (`fastpath.rs`), which then reads
    /// the TCB no more.
    #[inline(always)]
    pub(crate) fn begin_entry<G: Hold>(&mut self, guard: &mut G) -> Result<Option<CallerView>, G::Stop> {
        let mut view = None;
        // The current thread is held with this core's scheduler (`hold.rs`).
        if let Some(cur) = self.own().current {
            match self.get(cur) {
                Some(x) if !matches!(x.state, ThreadState::Zombie) => {
                    if !x.holds.is_empty() {
                        guard.need_whole()?;
                    } else if matches!(x.state, ThreadState::Running) {
                        view = Some(CallerView::of(cur, x));
                    }
                }
                _ => {
                    guard.need_whole()?;
                    self.own().current = None;
                    self.reap_zombie(cur);
                }
            }
        }
        let cell = self.own_cell();
        if cell.pending.load(Ordering::Relaxed) != 0 {
            let p = cell.pending.swap(0, Ordering::Acquire);
            if p & (IPI_RESCHEDULE | IPI_STALL) != 0 {
                self.request_reschedule();
            }
        }
        Ok(view)
    }

    /// Charge a tick to the current thread's slice.
    pub(crate) fn handle_tick(&mut self) {
        let Some(cur) = self.own().current else { return };
        let slice = self.s.config.timeslice_ticks;
        let Some(x) = self.get(cur) else { return };
        x.slice = x.slice.saturating_sub(1);
        if x.slice == 0 {
            x.slice = slice;
            self.own().action = Action::Choose { yielded: true };
        }
    }

    /// Yield: the rest of the slice goes to threads of the same priority.
    pub(crate) fn yield_current(&mut self, t: Ref<Tcb>) {
        let slice = self.s.config.timeslice_ticks;
        if let Some(x) = self.get(t) {
            x.slice = slice;
        }
        self.own().action = Action::Choose { yielded: true };
    }

    /// End of every kernel entry: carry out the action, honour stalls, and
    /// build the plan.
    #[inline(never)]
    pub(crate) fn finish_entry(&mut self) -> ExitPlan {
        let cs = self.own();
        let action = core::mem::replace(&mut cs.action, Action::Resume);
        // A direct switch runs a thread this entry has just taken out of a
        // wait queue or its core's inbox, where a pending suspend was
        // checked already; one that came after stops it at the interrupt it
        // sent.
        if let Action::Direct { to, prio } = action {
            return self.exit_to(Next::Checked(Some(to), Some(prio)));
        }
        self.choose_next(action)
    }

    /// End of an entry whose IPC fast path decided the direct switch
    /// ([`Direct`]): [`Ctx::finish_entry`] with the decision handed over as
    /// a value (the entry's own action is still `Resume`: the fast path
    /// runs only then, and its steps request nothing).
    #[inline(never)]
    pub(crate) fn finish_direct(&mut self, d: Direct) -> ExitPlan {
        debug_assert!(self.own().action == Action::Resume, "a direct switch after a scheduling request");
        self.exit_to(Next::Direct(d))
    }

    /// The end of an entry that did not decide on a direct switch: carry
    /// out `action` (kept out of line, so that the fast path's exit saves
    /// no more registers than it uses).
    #[inline(never)]
    fn choose_next(&mut self, action: Action) -> ExitPlan {
        let core = self.core;
        let cur = self.own().current;
        // The current thread, read once: its priority if it is runnable
        // here. One that is runnable but now belongs to another core (it
        // migrated itself) moves there.
        let mut migrated = false;
        let cur_prio = match cur.and_then(|c| self.get(c)) {
            Some(x) if matches!(x.state, ThreadState::Running) => {
                migrated = x.core != core && !x.in_ready;
                (x.core == core).then_some(x.prio)
            }
            _ => None,
        };
        if let (true, Some(c)) = (migrated, cur) {
            self.own().current = None;
            self.wake(c);
        }
        let cur_ok = cur_prio.is_some();
        let next = match action {
            Action::Resume if cur_ok => cur,
            Action::Resume => self.pick(),
            Action::SwitchTo(t) => {
                // The candidate, read once: its priority if it is runnable
                // here and in no queue.
                let candidate = self
                    .get(t)
                    .filter(|x| matches!(x.state, ThreadState::Running) && x.core == core && !x.in_ready)
                    .map(|x| x.prio);
                match candidate {
                    None => self.choose(cur, cur_prio, false),
                    Some(tp) => {
                        let best = self.own().ready.highest();
                        let beaten = cur_prio.is_some_and(|p| p >= tp) || best.is_some_and(|b| b > tp);
                        if beaten {
                            self.enqueue(t, false);
                            self.choose(cur, cur_prio, false)
                        } else {
                            if cur_ok {
                                if let Some(c) = cur {
                                    self.enqueue(c, true);
                                }
                            }
                            Some(t)
                        }
                    }
                }
            }
            Action::Choose { yielded } => self.choose(cur, cur_prio, yielded),
            // Returned above; named here only to keep the match whole.
            Action::Direct { to, .. } => Some(to),
        };
        let next = if self.own().held > 0 {
            if let Some(n) = next {
                self.enqueue(n, true);
            }
            None
        } else {
            self.dispatchable(next)
        };
        self.exit_to(Next::Checked(next, None))
    }

    /// The end of every entry: the next thread (of the priority given, or
    /// as its TCB says; none: idle) becomes this core's current thread, and
    /// the plan says what the platform runs.
    #[inline(always)]
    fn exit_to(&mut self, to: Next) -> ExitPlan {
        let core = self.core;
        let (next, prio) = match to {
            Next::Direct(d) => (Some(d.to()), Some(d.prio())),
            Next::Checked(next, prio) => (next, prio),
        };
        let mut next_prio = prio.unwrap_or(0);
        self.own_cell().trapped.store(TRAP_NONE, Ordering::Relaxed);

        let mut plan = ExitPlan { run: None, start: None, ipis: self.ipis, irq_acks: self.irq_acks, space: None };
        if let Some(n) = next {
            let tcb = match to {
                // SAFETY: a direct switch's thread is live to the entry's end
                // (`Direct::new`'s contract).
                Next::Direct(_) => Some(unsafe { self.get_live(n) }),
                Next::Checked(..) => self.get(n),
            };
            if let Some(x) = tcb {
                if prio.is_none() {
                    next_prio = x.prio;
                }
                if x.fresh {
                    x.fresh = false;
                    plan.start = Some(StartInfo::from_regs(x.regs, true));
                }
                // Mark the address space as run here (no liveness check: a stale
                // reference only sets a bit of a dead or reused slot, which
                // makes a later shoot-down conservative, never unsound).
                if let Some(v) = x.vspace {
                    plan.space = Some(SpaceId(v.index()));
                    if let Some(bits) = self.vspace_cores(v.index()) {
                        if bits.load(Ordering::Relaxed) & (1 << core) == 0 {
                            bits.fetch_or(1 << core, Ordering::Relaxed);
                        }
                    }
                }
            }
            plan.run = Some(ThreadId { index: n.index(), gen: n.gen() });
        }
        let cs = self.own();
        cs.current = next;
        cs.current_prio = next_prio;
        if self.own().last_run != next {
            self.own().last_run = next;
            bump(&self.own_cell().switches);
        }
        plan
    }

    /// `next`, or the next in line if the wait representation stops it
    /// (a pending suspend, `lockfree`); the check compiles away for the
    /// objects' own queues.
    #[inline(always)]
    fn dispatchable(&mut self, mut next: Option<Ref<Tcb>>) -> Option<Ref<Tcb>> {
        while let Some(n) = next {
            if W::may_dispatch(self, n) {
                break;
            }
            next = self.pick();
        }
        next
    }

    /// Choose the best of the current thread, if it is runnable here (of
    /// priority `cur_prio`), and this core's ready queue.
    fn choose(&mut self, cur: Option<Ref<Tcb>>, cur_prio: Option<u8>, yielded: bool) -> Option<Ref<Tcb>> {
        if let (Some(c), Some(p)) = (cur, cur_prio) {
            let best = self.own().ready.highest();
            if best.map_or(true, |b| b < p || (b == p && !yielded)) {
                return Some(c);
            }
            self.enqueue(c, !yielded);
        }
        self.pick()
    }

    /// Free a zombie TCB (this core has just stopped running it).
    fn reap_zombie(&mut self, t: Ref<Tcb>) {
        if self.get(t).is_some_and(|x| x.state == ThreadState::Zombie) {
            self.free_tcb_slot(t);
        }
    }

    /// The current thread of `core`.
    pub(crate) fn current_of(&mut self, core: usize) -> Option<ThreadId> {
        if core >= self.s.config.cores {
            return None;
        }
        self.cs(core).current.map(|t| ThreadId { index: t.index(), gen: t.gen() })
    }

    pub(crate) fn thread_of_cap(&mut self, holder: ThreadId, cptr: crate::abi::Word) -> Option<ThreadId> {
        let h = self.tcb_of(holder)?;
        match self.lookup(h, cptr).ok()?.1.obj {
            crate::object::CapObj::Tcb(t) => Some(ThreadId { index: t.index(), gen: t.gen() }),
            _ => None,
        }
    }

    pub(crate) fn start_info(&mut self, t: ThreadId) -> Option<StartInfo> {
        let r = self.tcb_of(t)?;
        self.as_deleted(r)?;
        let x = self.get(r)?;
        Some(StartInfo::from_regs(x.regs, x.fresh))
    }

    /// A destroy management has not finished yet (`Waits::destroying`)
    /// reads as the deletion's result: `None` if `r` is gone, `Some(true)`
    /// if it is a zombie still current on a core, `Some(false)` if it is not
    /// being destroyed.
    fn as_deleted(&mut self, r: Ref<Tcb>) -> Option<bool> {
        if !W::destroying(self, r) {
            return Some(false);
        }
        (0..self.s.config.cores).find(|&c| self.cs(c).current == Some(r)).map(|_| true)
    }

    pub(crate) fn thread_info(&mut self, t: ThreadId) -> Option<ThreadInfo> {
        let r = self.tcb_of(t)?;
        let x = self.get(r)?;
        let (mut state, core, prio, ready) = (x.state, x.core, x.prio, x.in_ready);
        let space = x.vspace.map(|v| SpaceId(v.index()));
        if self.as_deleted(r)? {
            state = ThreadState::Zombie;
        }
        let stop = if state == ThreadState::Zombie { None } else { W::stop_requested(self, r) };
        let blocked = !matches!(state, ThreadState::Inactive | ThreadState::Running | ThreadState::Zombie);
        // Runnable and current nowhere: in a ready queue, or (`lockfree`)
        // in its core's inbox, which a look leaves as it is.
        let current = (0..self.s.config.cores).any(|c| self.cs(c).current == Some(r));
        let status = match state {
            _ if stop == Some(false) => ThreadStatus::Inactive,
            ThreadState::Inactive => ThreadStatus::Inactive,
            ThreadState::Running if ready || !current => ThreadStatus::Ready,
            ThreadState::Running => ThreadStatus::Current,
            ThreadState::BlockedOnSend { .. } => ThreadStatus::BlockedOnSend,
            ThreadState::BlockedOnRecv { .. } => ThreadStatus::BlockedOnRecv,
            ThreadState::BlockedOnReply { .. } => ThreadStatus::BlockedOnReply,
            ThreadState::BlockedOnNotification { .. } => ThreadStatus::BlockedOnNotification,
            ThreadState::Zombie => ThreadStatus::Zombie,
        };
        Some(ThreadInfo { status, core, priority: prio, call_abandoned: blocked && stop.is_some(), space })
    }
}
