//! A test platform: the test acts as every core and every user thread.
//!
//! `Sim` keeps, per core, the thread the last exit plan said to run. To act
//! as the user thread running on core `c`, a test writes that thread's IPC
//! buffer and calls `sys(c, …)`; the plan is then followed: IPIs are
//! delivered at once (`ipi` on the target core) unless `auto_ipi` is off, in
//! which case they are collected in `pending`. Invariants are checked after
//! every kernel entry.

#![allow(dead_code)]

use std::collections::BTreeSet;

use granule_kernel::abi::*;
use granule_kernel::{
    BootConfig, BootInfo, CoreHandle, ExitPlan, Kernel, Regime, StartInfo, SyscallArgs, ThreadId, ThreadInfo,
    ThreadStatus,
};

pub mod pick;

#[allow(unused_imports)]
pub use pick::{faulty_regime, regime, Under, Which, CONCURRENT, WHICH};

pub struct Sim<R: Regime = Under> {
    pub k: Kernel<R>,
    pub boot: BootInfo,
    pub cores: Vec<CoreHandle>,
    /// What each core runs (per the last plan).
    pub running: Vec<Option<ThreadId>>,
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
    pub root: ThreadId,
}

pub fn config(cores: usize) -> BootConfig {
    let mut c = BootConfig::new(cores);
    c.untyped_bytes = 64 << 20;
    c.max_threads = 64;
    c.max_endpoints = 64;
    c.max_notifications = 64;
    c.max_cnodes = 32;
    c.max_replies = 64;
    c.max_frames = 32;
    c.max_vspaces = 8;
    c.max_untypeds = 16;
    c.root_cnode_bits = 8;
    c.root_priority = 100;
    c
}

impl Sim<Under> {
    /// A kernel of `cores` cores under this target's regime.
    pub fn new(cores: usize) -> Self {
        let cfg = config(cores);
        let r = regime(&cfg);
        Self::with(cfg, r)
    }
}

impl<R: Regime> Sim<R> {
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
            started: Vec::new(),
            acked: Vec::new(),
            auto_ipi: true,
            pending: BTreeSet::new(),
            ipi_log: Vec::new(),
            next_slot,
            root,
        };
        assert!(s.k.pending_ipi(0));
        let p = s.k.ipi(&mut s.cores[0]);
        s.follow(0, p);
        assert_eq!(s.running[0], Some(root));
        s
    }

    pub fn check(&mut self) {
        if let Err(e) = self.k.check_invariants(&mut self.cores[0]) {
            panic!("{e}");
        }
    }

    /// Perform `plan` for `core`.
    pub fn follow(&mut self, core: usize, plan: ExitPlan) {
        self.check();
        assert!(!plan.ipis.contains(core), "plan IPIs its own core");
        self.running[core] = plan.run;
        if let Some(s) = plan.start {
            assert!(s.fresh);
            self.started.push((plan.run.expect("start without run"), s));
        }
        self.acked.extend(plan.irq_acks.iter());
        for c in plan.ipis.iter() {
            self.ipi_log.push((core, c));
            if self.auto_ipi {
                let p = self.k.ipi(&mut self.cores[c]);
                self.follow(c, p);
            } else {
                self.pending.insert(c);
            }
        }
    }

    /// Deliver the collected IPIs.
    pub fn deliver_ipis(&mut self) {
        while let Some(c) = self.pending.pop_first() {
            let p = self.k.ipi(&mut self.cores[c]);
            self.follow(c, p);
        }
    }

    pub fn ipi(&mut self, core: usize) {
        let p = self.k.ipi(&mut self.cores[core]);
        self.follow(core, p);
    }

    pub fn tick(&mut self, core: usize) {
        let p = self.k.timer_tick(&mut self.cores[core]);
        self.follow(core, p);
    }

    pub fn interrupt(&mut self, core: usize, irq: usize) {
        let p = self.k.interrupt(&mut self.cores[core], irq);
        self.follow(core, p);
    }

    pub fn fault(&mut self, core: usize) {
        let p = self.k.fault(&mut self.cores[core], granule_kernel::FaultKind::UserPanic);
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

    pub fn sys(&mut self, core: usize, sysno: Sysno, cptr: Word, info: MessageInfo, reply: Word) -> ThreadId {
        self.raw(core, SyscallArgs::new(sysno.word(), cptr, info.word(), reply))
    }

    /// Invoke object `cptr` as the thread on `core`; results as words.
    pub fn invoke(
        &mut self,
        core: usize,
        cptr: Word,
        label: InvocationLabel,
        args: &[Word],
    ) -> Result<Vec<Word>, Error> {
        let t = self.cur(core);
        self.buf(t).msg[..args.len()].copy_from_slice(args);
        let info = MessageInfo::new(label.word(), 0, 0, args.len() as Word);
        self.sys(core, Sysno::Call, cptr, info, 0);
        let b = self.buf(t);
        assert_eq!(b.restart, 0, "invocation asked for a restart");
        b.result()?;
        let n = MessageInfo(b.tag).length() as usize;
        Ok(b.msg[..n].to_vec())
    }

    /// Like `invoke`, but returns whether a restart was requested.
    pub fn invoke_maybe_restart(
        &mut self,
        core: usize,
        cptr: Word,
        label: InvocationLabel,
        args: &[Word],
    ) -> Option<Result<(), Error>> {
        let t = self.cur(core);
        self.buf(t).msg[..args.len()].copy_from_slice(args);
        let info = MessageInfo::new(label.word(), 0, 0, args.len() as Word);
        self.sys(core, Sysno::Call, cptr, info, 0);
        let b = self.buf(t);
        if b.restart != 0 {
            None
        } else {
            Some(b.result())
        }
    }

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
        self.invoke(core, CAP_FIRST_UNTYPED, InvocationLabel::UntypedRetype, &[ty as Word, bits, 0, first, n])
            .unwrap_or_else(|e| panic!("retype {ty:?}: {e}"));
        first
    }

    pub fn obj(&mut self, ty: ObjectType) -> Word {
        self.retype(0, ty, 0, 1)
    }

    /// A thread with the root CSpace, priority `prio`, on `core`, started
    /// with entry `entry` (the root on core 0 does the work). Returns its cap.
    pub fn spawn(&mut self, entry: Word, prio: u8, core: usize) -> (Word, ThreadId) {
        let cap = self.obj(ObjectType::Tcb);
        self.invoke(0, cap, InvocationLabel::TcbConfigure, &[CAP_INIT_CNODE, CAP_INIT_VSPACE]).unwrap();
        self.invoke(0, cap, InvocationLabel::TcbSetPriority, &[prio as Word]).unwrap();
        if core != 0 {
            self.invoke(0, cap, InvocationLabel::TcbSetAffinity, &[core as Word]).unwrap();
        }
        // [resume, count, pc, sp, arg0]
        let regs = [1, 3, entry, 0, entry];
        self.invoke(0, cap, InvocationLabel::TcbWriteRegisters, &regs).unwrap();
        let t = self.k.thread_of_cap(&mut self.cores[0], self.root, cap).expect("tcb cap");
        (cap, t)
    }

    pub fn info(&mut self, t: ThreadId) -> Option<ThreadInfo> {
        self.k.thread_info(&mut self.cores[0], t)
    }

    pub fn status(&mut self, t: ThreadId) -> ThreadStatus {
        self.info(t).expect("thread exists").status
    }

    /// Make the root thread step aside: it blocks receiving on a private
    /// endpoint (`wake_root` brings it back).
    pub fn park_root(&mut self) -> Word {
        let ep = self.obj(ObjectType::Endpoint);
        self.sys(0, Sysno::Recv, ep, MessageInfo::default(), 0);
        ep
    }
}

pub fn msg(label: Word, len: Word) -> MessageInfo {
    MessageInfo::new(label, 0, 0, len)
}

/// Message conservation for two senders (ids 0 and 1) of `messages`
/// numbered messages each, given each receiver's log of `(sender, seq)` in
/// order of reception: every message received exactly once, and each
/// receiver saw each sender's messages in increasing order.
pub fn assert_conserved(logs: &[std::sync::Mutex<Vec<(u64, u64)>>], messages: u64) {
    let mut seen = vec![vec![0u32; messages as usize]; 2];
    for log in logs {
        let log = log.lock().unwrap();
        let mut last = [None::<u64>; 2];
        for &(s, q) in log.iter() {
            seen[s as usize][q as usize] += 1;
            assert!(last[s as usize].map_or(true, |l| l < q), "out of order: sender {s} seq {q} after {last:?}");
            last[s as usize] = Some(q);
        }
    }
    for (s, v) in seen.iter().enumerate() {
        for (q, &n) in v.iter().enumerate() {
            assert_eq!(n, 1, "sender {s} message {q} received {n} times");
        }
    }
}
