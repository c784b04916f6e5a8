//! [`Sim`]: one thread acts as every core and every user thread of a kernel,
//! one entry at a time, and checks the kernel's invariants after each.
//!
//! `Sim` keeps, per core, the thread the last exit plan said to run. To act
//! as the user thread running on core `c`, a test writes that thread's IPC
//! buffer and calls [`Sim::sys`] (or [`Sim::invoke`], which encodes an
//! object invocation with [`crate::encode`]); the plan is then followed:
//! IPIs are delivered at once (`ipi` on the target core) unless `auto_ipi`
//! is off, in which case they are collected in `pending`. Threads made with
//! [`Sim::spawn`] can later run on real OS threads, one per core
//! ([`Sim::run_threads`], `crate::cores`).

use std::collections::BTreeSet;

use granule_kernel::abi::{
    CapRights, Error, InvocationLabel, ObjectType, Sysno, CAP_FIRST_UNTYPED, CAP_INIT_CNODE, CAP_INIT_VSPACE,
};
use granule_kernel::{
    BootConfig, BootInfo, CoreHandle, ExitPlan, FaultKind, IpcBuffer, Kernel, MessageInfo, Regime, SpaceId, StartInfo,
    SyscallArgs, ThreadId, ThreadInfo, ThreadStatus, Word,
};

use crate::encode::{self, Invocation};

/// A kernel driven by the test, which acts as every core and user thread.
#[derive(Debug)]
pub struct Sim<R: Regime> {
    /// The kernel.
    pub k: Kernel<R>,
    /// What boot said.
    pub boot: BootInfo,
    /// Every core's handle (empty while [`Sim::run_threads`] runs them).
    pub cores: Vec<CoreHandle>,
    /// What each core runs (per the last plan).
    pub running: Vec<Option<ThreadId>>,
    /// The address space each core runs in (per the last plan).
    pub spaces: Vec<Option<SpaceId>>,
    /// Fresh starts reported by plans, in order.
    pub started: Vec<(ThreadId, StartInfo)>,
    /// IRQs acknowledged by plans.
    pub acked: Vec<usize>,
    /// Deliver IPIs at once.
    pub auto_ipi: bool,
    /// IPIs collected when `auto_ipi` is off.
    pub pending: BTreeSet<usize>,
    /// Every IPI any plan asked for: (from, to).
    pub ipi_log: Vec<(usize, usize)>,
    /// Next free slot in the root CNode.
    pub next_slot: Word,
    /// The root thread (current on core 0 after boot).
    pub root: ThreadId,
}

impl<R: Regime> Sim<R> {
    /// Boot a kernel configured by `cfg` under `regime`; core 0 runs the
    /// root thread.
    pub fn with(cfg: BootConfig, regime: R) -> Self {
        let cores = cfg.cores;
        let (k, boot, handles) = Kernel::boot(cfg, regime).expect("boot");
        let root = boot.root_thread;
        let next_slot = boot.first_free_slot;
        let mut s = Sim {
            k,
            boot,
            cores: handles,
            running: vec![None; cores],
            spaces: vec![None; cores],
            started: Vec::new(),
            acked: Vec::new(),
            auto_ipi: true,
            pending: BTreeSet::new(),
            ipi_log: Vec::new(),
            next_slot,
            root,
        };
        assert!(s.k.pending_ipi(0));
        s.ipi(0);
        assert_eq!(s.running[0], Some(root));
        s
    }

    /// Check every kernel invariant (panics with the violation).
    pub fn check(&mut self) {
        if let Err(e) = self.k.check_invariants(&mut self.cores[0]) {
            panic!("{e}");
        }
    }

    /// Perform `plan` for `core`.
    pub fn follow(&mut self, core: usize, plan: ExitPlan) {
        self.check();
        assert!(!plan.ipis.contains(core), "plan IPIs its own core");
        assert!(plan.run.is_some() || plan.space.is_none(), "an idle core given an address space");
        self.running[core] = plan.run;
        self.spaces[core] = plan.space;
        if let Some(s) = plan.start {
            assert!(s.fresh);
            self.started.push((plan.run.expect("start without run"), s));
        }
        self.acked.extend(plan.irq_acks.iter());
        for c in plan.ipis.iter() {
            self.ipi_log.push((core, c));
            if self.auto_ipi {
                self.ipi(c);
            } else {
                self.pending.insert(c);
            }
        }
    }

    /// Deliver the collected IPIs.
    pub fn deliver_ipis(&mut self) {
        while let Some(c) = self.pending.pop_first() {
            self.ipi(c);
        }
    }

    /// Core `core` takes an IPI.
    pub fn ipi(&mut self, core: usize) {
        let p = self.k.ipi(&mut self.cores[core]);
        self.follow(core, p);
    }

    /// Core `core` takes a timer tick.
    pub fn tick(&mut self, core: usize) {
        let p = self.k.timer_tick(&mut self.cores[core]);
        self.follow(core, p);
    }

    /// Core `core` takes interrupt `irq`.
    pub fn interrupt(&mut self, core: usize, irq: usize) {
        let p = self.k.interrupt(&mut self.cores[core], irq);
        self.follow(core, p);
    }

    /// The thread running on `core` panics.
    pub fn fault(&mut self, core: usize) {
        self.fault_with(core, FaultKind::UserPanic);
    }

    /// The thread running on `core` faults with `kind`.
    pub fn fault_with(&mut self, core: usize, kind: FaultKind) {
        let p = self.k.fault(&mut self.cores[core], kind);
        self.follow(core, p);
    }

    /// The IPC buffer of `t` (the test acts as `t`).
    #[allow(clippy::mut_from_ref)]
    pub fn buf(&self, t: ThreadId) -> &mut IpcBuffer {
        let p = self.k.ipc_buffer(t);
        assert!(!p.is_null());
        // SAFETY: the test is single-threaded and acts as user thread `t`
        // only between kernel entries; no other reference is kept across them.
        unsafe { &mut *p }
    }

    /// The thread running on `core` (panics if idle).
    pub fn cur(&self, core: usize) -> ThreadId {
        self.running[core].unwrap_or_else(|| panic!("core {core} is idle"))
    }

    /// A raw system call by the thread running on `core`; returns that thread.
    pub fn raw(&mut self, core: usize, args: SyscallArgs) -> ThreadId {
        let t = self.cur(core);
        let p = self.k.syscall(&mut self.cores[core], args);
        self.follow(core, p);
        t
    }

    /// System call `sysno` by the thread running on `core` (its message
    /// words already in its buffer); returns that thread.
    pub fn sys(&mut self, core: usize, sysno: Sysno, cptr: Word, info: MessageInfo, reply: Word) -> ThreadId {
        self.raw(core, encode::syscall(sysno, cptr, info, reply))
    }

    /// Invoke object `cptr` as the thread on `core`: `None` if the kernel
    /// asked for a restart, else the result and the reply's words.
    pub fn try_invoke(
        &mut self,
        core: usize,
        cptr: Word,
        label: InvocationLabel,
        args: &[Word],
    ) -> Option<Result<Vec<Word>, Error>> {
        let t = self.cur(core);
        let regs = encode::invoke(self.buf(t), cptr, label, args);
        self.raw(core, regs);
        encode::result(self.buf(t)).map(|r| r.map(<[Word]>::to_vec))
    }

    /// Invoke object `cptr` as the thread on `core`; results as words
    /// (panics if the kernel asks for a restart).
    pub fn invoke(
        &mut self,
        core: usize,
        cptr: Word,
        label: InvocationLabel,
        args: &[Word],
    ) -> Result<Vec<Word>, Error> {
        self.try_invoke(core, cptr, label, args).expect("invocation asked for a restart")
    }

    /// Like [`Sim::invoke`], but `None` when a restart was requested.
    pub fn invoke_maybe_restart(
        &mut self,
        core: usize,
        cptr: Word,
        label: InvocationLabel,
        args: &[Word],
    ) -> Option<Result<(), Error>> {
        self.try_invoke(core, cptr, label, args).map(|r| r.map(drop))
    }

    /// Make invocation `inv` of `cptr` as the root on core 0 (panics if
    /// it fails).
    pub fn root_invoke(&mut self, cptr: Word, inv: Invocation) {
        self.invoke(0, cptr, inv.label, inv.args()).unwrap_or_else(|e| panic!("{inv:?} on slot {cptr}: {e}"));
    }

    /// The next free slot of the root CNode, taken.
    pub fn alloc_slot(&mut self) -> Word {
        let s = self.next_slot;
        self.next_slot += 1;
        s
    }

    /// Retype `n` objects from the first untyped into fresh root slots
    /// (as the thread on `core`, whose CSpace must be the root CNode).
    pub fn retype(&mut self, core: usize, ty: ObjectType, bits: Word, n: Word) -> Word {
        let first = self.next_slot;
        self.next_slot += n;
        let inv = Invocation::retype(ty, bits, first, n);
        self.invoke(core, CAP_FIRST_UNTYPED, inv.label, inv.args()).unwrap_or_else(|e| panic!("retype {ty:?}: {e}"));
        first
    }

    /// One object of type `ty`, made by the root on core 0; its slot.
    pub fn obj(&mut self, ty: ObjectType) -> Word {
        self.retype(0, ty, 0, 1)
    }

    /// A badged copy (all rights) of the capability in `src`, minted by the
    /// root on core 0 into a fresh slot; that slot.
    pub fn mint(&mut self, src: Word, badge: Word) -> Word {
        let slot = self.alloc_slot();
        self.root_invoke(CAP_INIT_CNODE, Invocation::mint(slot, src, CapRights::ALL, badge));
        slot
    }

    /// A thread with the root CSpace, priority `prio`, on `core`, started
    /// at `entry` with `entry` as its argument (the root on core 0 does the
    /// work). Returns its cap.
    pub fn spawn(&mut self, entry: Word, prio: u8, core: usize) -> (Word, ThreadId) {
        self.spawn_with(entry, entry, prio, core)
    }

    /// [`Sim::spawn`] with an argument other than the entry word.
    pub fn spawn_with(&mut self, entry: Word, arg: Word, prio: u8, core: usize) -> (Word, ThreadId) {
        let cap = self.obj(ObjectType::Tcb);
        self.root_invoke(cap, Invocation::configure(CAP_INIT_CNODE, CAP_INIT_VSPACE));
        self.root_invoke(cap, Invocation::set_priority(prio as Word));
        if core != 0 {
            self.root_invoke(cap, Invocation::set_affinity(core as Word));
        }
        self.root_invoke(cap, Invocation::start(entry, arg));
        let t = self.k.thread_of_cap(&mut self.cores[0], self.root, cap).expect("tcb cap");
        (cap, t)
    }

    /// What the kernel says about `t` (`None`: no such thread).
    pub fn info(&mut self, t: ThreadId) -> Option<ThreadInfo> {
        self.k.thread_info(&mut self.cores[0], t)
    }

    /// `t`'s status (panics if `t` does not exist).
    pub fn status(&mut self, t: ThreadId) -> ThreadStatus {
        self.info(t).expect("thread exists").status
    }

    /// Make the root thread step aside: it blocks receiving on a private
    /// endpoint (returned).
    pub fn park_root(&mut self) -> Word {
        let ep = self.obj(ObjectType::Endpoint);
        self.sys(0, Sysno::Recv, ep, MessageInfo::default(), 0);
        ep
    }
}
