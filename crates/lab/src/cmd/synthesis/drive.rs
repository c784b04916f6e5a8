//! One OS thread acting as every core of a booted kernel in turn, issuing
//! the root thread's invocations and the other threads' system calls, and
//! timing single kernel entries with the cycle counter. No two cores are
//! ever inside the kernel at once (this thread is each of them in turn).

use anyhow::{anyhow, bail, Result};
use granule_hosted::granule_kernel::abi::{Error, InvocationLabel, ObjectType, Sysno, Word};
use granule_hosted::granule_kernel::{
    BootInfo, CoreHandle, ExitPlan, Kernel, MessageInfo, Regime, ThreadId, ThreadStatus,
};
use granule_sync::cycles;
use granule_verify::encode::{self, Invocation};

/// A kernel driven from this thread.
pub struct Driver<'k, R: Regime> {
    pub k: &'k Kernel<R>,
    hs: Vec<CoreHandle>,
    pub root: ThreadId,
    next_slot: Word,
    untyped: Word,
}

impl<'k, R: Regime> Driver<'k, R> {
    /// Take over a freshly booted kernel: core 0 runs the root thread.
    pub fn new(k: &'k Kernel<R>, boot: &BootInfo, mut hs: Vec<CoreHandle>) -> Result<Self> {
        let plan = k.ipi(&mut hs[0]);
        if plan.run != Some(boot.root_thread) {
            bail!("core 0 does not run the root thread after boot");
        }
        let untyped = boot.untyped.first().map(|u| u.0).ok_or_else(|| anyhow!("no untyped memory"))?;
        let mut d = Self { k, hs, root: boot.root_thread, next_slot: boot.first_free_slot, untyped };
        for c in 1..d.hs.len() {
            let _ = d.ipi(c);
        }
        Ok(d)
    }

    /// A fresh root CNode slot.
    pub fn slot(&mut self) -> Word {
        self.next_slot += 1;
        self.next_slot - 1
    }

    /// The IPC buffer of the thread `core` runs.
    fn thread_on(&mut self, core: usize) -> Result<ThreadId> {
        let k = self.k;
        k.current_thread(&mut self.hs[core], core).ok_or_else(|| anyhow!("core {core} runs no thread"))
    }

    /// A system call by the thread on `core`; delivers the IPIs it asks for
    /// unless `hold_ipis`.
    pub fn sys(&mut self, core: usize, sysno: Sysno, cptr: Word, info: MessageInfo, hold_ipis: bool) -> ExitPlan {
        self.sys_reply(core, sysno, cptr, info, 0, hold_ipis)
    }

    /// As `sys`, naming reply object `reply` (0: none).
    pub fn sys_reply(
        &mut self,
        core: usize,
        sysno: Sysno,
        cptr: Word,
        info: MessageInfo,
        reply: Word,
        hold_ipis: bool,
    ) -> ExitPlan {
        let plan = self.k.syscall(&mut self.hs[core], encode::syscall(sysno, cptr, info, reply));
        if !hold_ipis {
            self.deliver(&plan);
        }
        plan
    }

    /// Invoke `cptr` as the thread on `core`: the reply's words. IPIs are
    /// delivered unless `hold_ipis`.
    pub fn invoke(&mut self, core: usize, cptr: Word, inv: &Invocation, hold_ipis: bool) -> Result<Vec<Word>> {
        let (plan, out) = self.invoke_raw(core, cptr, inv)?;
        if !hold_ipis {
            self.deliver(&plan);
        }
        out.map_err(|e| anyhow!("{:?} on slot {cptr}: {e}", inv.label))
    }

    /// As `invoke`, returning the cycles of the kernel entries alone: the
    /// requester's, the other cores' in between (the stall protocol) and
    /// those its plan's IPIs cause. The driver's look-up of the thread
    /// `core` runs (an introspection entry, a management entry under
    /// `lockfree`) stays outside.
    pub fn invoke_cycles(&mut self, core: usize, cptr: Word, inv: &Invocation, oh: u64) -> Result<u64> {
        let r = self.invoke_timed(core, cptr, inv, oh)?;
        let mut cycles = r.requester + r.others;
        for c in r.plan.ipis.iter() {
            let (d, _) = timed(oh, || self.ipi(c));
            cycles += d;
        }
        r.out.map_err(|e| anyhow!("{:?} on slot {cptr}: {e}", inv.label))?;
        Ok(cycles)
    }

    /// As `invoke`, returning the final plan and the result (its IPIs not
    /// delivered).
    pub fn invoke_raw(
        &mut self,
        core: usize,
        cptr: Word,
        inv: &Invocation,
    ) -> Result<(ExitPlan, Result<Vec<Word>, Error>)> {
        let t = self.invoke_timed(core, cptr, inv, 0)?;
        Ok((t.plan, t.out))
    }

    /// Invoke `cptr` as the thread on `core`, following the kernel's stall
    /// protocol (an operation on a thread running elsewhere asks that core
    /// to stop it and restarts): the requester's entries and the other
    /// cores' entries in between are timed apart. The final plan's IPIs are
    /// not delivered.
    pub fn invoke_timed(&mut self, core: usize, cptr: Word, inv: &Invocation, oh: u64) -> Result<Invoked> {
        let t = self.thread_on(core)?;
        let (mut requester, mut others) = (0, 0);
        for _ in 0..8 {
            // SAFETY: `t` is the thread `core` runs and this thread acts as
            // that core between kernel entries: nothing else touches its
            // buffer.
            let b = unsafe { &mut *self.k.ipc_buffer(t) };
            let args = inv.write(b, cptr);
            let k = self.k;
            let h = &mut self.hs[core];
            let (c, plan) = timed(oh, || k.syscall(h, args));
            requester += c;
            // SAFETY: as above (invocations do not block).
            let b = unsafe { &*self.k.ipc_buffer(t) };
            match encode::result(b) {
                Some(r) => {
                    let out = r.map(<[Word]>::to_vec);
                    return Ok(Invoked { plan, out, requester, others });
                }
                None => {
                    for c in plan.ipis.iter() {
                        let (d, _) = timed(oh, || self.ipi(c));
                        others += d;
                    }
                }
            }
        }
        bail!("{:?} on slot {cptr} restarted 8 times", inv.label)
    }

    /// One invocation by the root thread on core 0, without asking the
    /// kernel which thread runs there (introspection is a management entry,
    /// which would show in counted atomics): the plan, and the result
    /// (`None`: restarted).
    pub fn root_call(&mut self, cptr: Word, inv: &Invocation) -> (ExitPlan, Option<Result<Vec<Word>, Error>>) {
        // SAFETY: the root runs on core 0 (the caller's promise) and this
        // thread acts as core 0 between kernel entries.
        let args = inv.write(unsafe { &mut *self.k.ipc_buffer(self.root) }, cptr);
        let plan = self.k.syscall(&mut self.hs[0], args);
        // SAFETY: as above, after the entry returned.
        let out = encode::result(unsafe { &*self.k.ipc_buffer(self.root) }).map(|r| r.map(<[Word]>::to_vec));
        (plan, out)
    }

    /// `core` takes its pending IPI.
    pub fn ipi(&mut self, core: usize) -> ExitPlan {
        let plan = self.k.ipi(&mut self.hs[core]);
        self.deliver(&plan);
        plan
    }

    /// The current thread of `core` faults with `kind`.
    pub fn fault(&mut self, core: usize, kind: granule_hosted::granule_kernel::FaultKind) -> ExitPlan {
        let plan = self.k.fault(&mut self.hs[core], kind);
        self.deliver(&plan);
        plan
    }

    /// Deliver `plan`'s IPIs (each core takes its entry).
    pub fn deliver(&mut self, plan: &ExitPlan) {
        for c in plan.ipis.iter() {
            let _ = self.ipi(c);
        }
    }

    /// A new object of type `ty` (`bits` for sized ones) in a fresh slot.
    pub fn create(&mut self, ty: ObjectType, bits: Word) -> Result<Word> {
        let s = self.slot();
        self.retype_into(ty, bits, s)?;
        Ok(s)
    }

    /// The root's untyped capability.
    pub fn untyped(&self) -> Word {
        self.untyped
    }

    /// Retype one object into slot `s` (by the root, on core 0).
    pub fn retype_into(&mut self, ty: ObjectType, bits: Word, s: Word) -> Result<()> {
        let ut = self.untyped;
        self.invoke(0, ut, &Invocation::retype(ty, bits, s, 1), false).map(|_| ())
    }

    /// A thread at `prio` on `core`, configured in the root's CSpace and
    /// `vspace`, started (its core takes the IPI).
    pub fn thread(&mut self, core: usize, prio: Word, vspace: Word) -> Result<(Word, ThreadId)> {
        let s = self.create(ObjectType::Tcb, 0)?;
        self.start_in(s, core, prio, vspace)?;
        let t = self.k.thread_of_cap(&mut self.hs[0], self.root, s).ok_or_else(|| anyhow!("no thread in slot {s}"))?;
        Ok((s, t))
    }

    /// Configure, place and start the TCB in slot `s`.
    pub fn start_in(&mut self, s: Word, core: usize, prio: Word, vspace: Word) -> Result<()> {
        use granule_hosted::granule_kernel::abi::CAP_INIT_CNODE;
        self.invoke(0, s, &Invocation::configure(CAP_INIT_CNODE, vspace), false)?;
        self.invoke(0, s, &Invocation::set_priority(prio), false)?;
        self.invoke(0, s, &Invocation::set_affinity(core as Word), false)?;
        self.invoke(0, s, &Invocation::start(0x1000, 0), false)?;
        Ok(())
    }

    /// Delete the capability in slot `s` (the root, on core 0).
    pub fn delete(&mut self, s: Word, hold_ipis: bool) -> Result<ExitPlan> {
        use granule_hosted::granule_kernel::abi::CAP_INIT_CNODE;
        let (plan, out) = self.invoke_raw(0, CAP_INIT_CNODE, &Invocation::delete(s))?;
        out.map_err(|e| anyhow!("delete slot {s}: {e}"))?;
        if !hold_ipis {
            self.deliver(&plan);
        }
        Ok(plan)
    }

    /// The thread `core` runs, if any.
    pub fn current(&mut self, core: usize) -> Option<ThreadId> {
        self.thread_on(core).ok()
    }

    /// Whether thread `t` is stopped (inactive), `None` if it is gone.
    pub fn stopped(&mut self, t: ThreadId) -> Option<bool> {
        self.k.thread_info(&mut self.hs[0], t).map(|i| i.status == ThreadStatus::Inactive)
    }

    /// Invocation `label` with `args` (a convenience for the rows).
    pub fn inv(label: InvocationLabel, args: &[Word]) -> Invocation {
        Invocation::new(label, args)
    }
}

/// An invocation's outcome and its cost.
pub struct Invoked {
    /// The last entry's plan (its IPIs not delivered).
    pub plan: ExitPlan,
    pub out: Result<Vec<Word>, Error>,
    /// Cycles of the requester's entries.
    pub requester: u64,
    /// Cycles of other cores' entries in between (the stall protocol).
    pub others: u64,
}

/// Cycles taken by `f`, less `overhead` (the cost of timing nothing).
#[inline]
pub fn timed<T>(overhead: u64, f: impl FnOnce() -> T) -> (u64, T) {
    let t0 = cycles::now();
    let out = f();
    let t1 = cycles::now();
    (t1.saturating_sub(t0).saturating_sub(overhead), out)
}

/// The median cost of timing nothing.
pub fn timing_overhead() -> u64 {
    let v: Vec<u64> = (0..2001)
        .map(|_| {
            let t0 = cycles::now();
            let t1 = cycles::now();
            t1.saturating_sub(t0)
        })
        .collect();
    crate::stats::median_u64(&v) as u64
}
