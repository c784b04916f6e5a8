//! The root task's part, driven by core 0: it builds every core's pair of
//! threads (and each experiment's extra objects) through the kernel's
//! invocations, as the root thread's system calls.

use alloc::format;
use alloc::string::String;
use core::sync::atomic::Ordering;

use granule_kernel::abi::{
    InvocationLabel, MessageInfo, ObjectType, Sysno, Word, CAP_FIRST_UNTYPED, CAP_INIT_CNODE, CAP_IRQ_CONTROL,
};
use granule_kernel::{CoreHandle, ExitPlan, Kernel, Regime, SpaceId, StartInfo, SyscallArgs, ThreadId};

use super::RootWork;
use crate::{irq, paging, percore, programs};

/// A pair's objects: capabilities in the root's CNode, and its threads.
#[derive(Clone, Copy, Debug)]
pub(super) struct Pair {
    pub(super) ep: Word,
    pub(super) reply: Word,
    pub(super) server_cap: Word,
    pub(super) client_cap: Word,
    pub(super) server: ThreadId,
    pub(super) client: ThreadId,
}

/// Performs an entry's exit plan on this core (its IPIs, the lines it
/// acknowledges), checks the invariants if the run does, and says what the
/// plan runs next. The root's entries and every core's loop end here.
pub(super) fn perform<R: Regime>(
    k: &Kernel<R>,
    h: &mut CoreHandle,
    check: bool,
    plan: ExitPlan,
) -> Result<Next, String> {
    irq::send(plan.ipis);
    irq::acknowledge(plan.irq_acks);
    if check {
        k.check_invariants(h).map_err(|v| format!("invariant broken: {v:?}"))?;
    }
    Ok(Next { run: plan.run, start: plan.start, space: plan.space })
}

/// What an exit plan says about this core's next thread.
#[derive(Clone, Copy, Debug)]
pub(super) struct Next {
    pub(super) run: Option<ThreadId>,
    pub(super) start: Option<StartInfo>,
    pub(super) space: Option<SpaceId>,
}

/// The ring-3 programs of a pair (entry words), the client's calls, and
/// whether the server is the client's fault handler.
#[derive(Clone, Copy, Debug)]
pub(super) struct Programs {
    pub(super) server: Word,
    pub(super) client: Word,
    pub(super) calls: u64,
    pub(super) fault_handler: bool,
}

/// The root task's part, driven by core 0.
pub(super) struct Root<'k, R: Regime> {
    pub(super) k: &'k Kernel<R>,
    pub(super) me: ThreadId,
    pub(super) check: bool,
}

impl<R: Regime> Root<'_, R> {
    /// Checks the invariants after an entry if this run does.
    pub(super) fn entered(&self, h: &mut CoreHandle, plan: ExitPlan) -> Result<Next, String> {
        perform(self.k, h, self.check, plan)
    }

    /// A system call of the root's (its words already in its buffer), and
    /// what its plan says core 0 runs next.
    pub(super) fn syscall(&self, h: &mut CoreHandle, args: SyscallArgs) -> Result<Next, String> {
        let plan = self.k.syscall(h, args);
        self.entered(h, plan)
    }

    /// The root's invocation of `cptr`; the thread core 0 runs next, and
    /// how it starts if it never ran.
    ///
    /// The root is core 0's current thread between entries, and core 0
    /// alone acts for it (so its IPC buffer is core 0's to use).
    pub(super) fn invoke_to(
        &self,
        h: &mut CoreHandle,
        cptr: Word,
        label: InvocationLabel,
        args: &[Word],
    ) -> Result<Next, String> {
        match self.try_invoke_to(h, cptr, label, args)? {
            (next, false) => Ok(next),
            (_, true) => Err(format!("the root's {label:?} asked for a restart")),
        }
    }

    /// As [`Self::invoke_to`], but a restart (the kernel must stall
    /// another core first) is not an error: `(next, restarted)`.
    pub(super) fn try_invoke_to(
        &self,
        h: &mut CoreHandle,
        cptr: Word,
        label: InvocationLabel,
        args: &[Word],
    ) -> Result<(Next, bool), String> {
        // SAFETY: as in `invoke_to`.
        let b = unsafe { &mut *self.k.ipc_buffer(self.me) };
        b.msg[..args.len()].copy_from_slice(args);
        let info = MessageInfo::new(label.word(), 0, 0, args.len() as Word);
        let next = self.syscall(h, SyscallArgs::new(Sysno::Call.word(), cptr, info.word(), 0))?;
        // SAFETY: as above.
        let b = unsafe { &*self.k.ipc_buffer(self.me) };
        if b.restart != 0 {
            return Ok((next, true));
        }
        b.result().map_err(|e| format!("the root's {label:?} failed: {e:?}"))?;
        Ok((next, false))
    }

    /// Makes thread `tcb` start at program `entry` with argument `arg`.
    pub(super) fn start_at(&self, h: &mut CoreHandle, tcb: Word, entry: Word, arg: Word) -> Result<(), String> {
        // [resume 0, three registers: REG_PC, REG_SP (the platform gives
        // the stack), REG_ARG0]
        self.invoke(h, tcb, InvocationLabel::TcbWriteRegisters, &[0, 3, entry, 0, arg])
    }

    /// Makes core `core`'s new pair's client the shootdown experiment's
    /// reader: a VSpace of its own, a 4 KiB frame mapped there at
    /// [`programs::READER_PAGE`] (checked in the space's real page table)
    /// holding [`programs::MAGIC`], and a notification it waits on while
    /// the root unmaps the frame.
    pub(super) fn build_reader(
        &self,
        h: &mut CoreHandle,
        free: &mut Word,
        core: usize,
        p: Pair,
    ) -> Result<RootWork, String> {
        let (space, frame, note) = (*free, *free + 1, *free + 2);
        *free += 3;
        let ut = CAP_FIRST_UNTYPED;
        self.invoke(h, ut, InvocationLabel::UntypedRetype, &[ObjectType::VSpace as Word, 0, 0, space, 1])?;
        self.invoke(h, ut, InvocationLabel::UntypedRetype, &[ObjectType::Frame as Word, 12, 0, frame, 1])?;
        self.invoke(h, ut, InvocationLabel::UntypedRetype, &[ObjectType::Notification as Word, 0, 0, note, 1])?;
        self.invoke(h, p.client_cap, InvocationLabel::TcbConfigure, &[CAP_INIT_CNODE, space])?;
        self.invoke(h, p.client_cap, InvocationLabel::TcbSetFaultHandler, &[p.ep])?;
        self.start_at(h, p.client_cap, programs::READER, note | (core as Word) << 16)?;
        programs::READER_SAW[core].store(0, Ordering::Relaxed);
        self.invoke(h, frame, InvocationLabel::FrameMap, &[space, programs::READER_PAGE])?;
        // SAFETY: the root's buffer, between its calls: the map's reply.
        let addr = unsafe { (*self.k.ipc_buffer(self.me)).msg[0] };
        let id = self.k.thread_info(h, p.client).and_then(|i| i.space).ok_or("the reader has no address space")?;
        match paging::walk(id, programs::READER_PAGE) {
            Some(a) if a == addr => {}
            other => return Err(format!("the mapped frame ({addr:#x}) is not in the space's page table: {other:x?}")),
        }
        // SAFETY: the frame's memory (the heap is identity mapped), 4 KiB
        // the frame owns; the kernel never touches a frame's contents and
        // the reader only reads it.
        unsafe { core::ptr::write_volatile(addr as *mut Word, programs::MAGIC) };
        Ok(RootWork::Unmap { frame, note, target: core, space: id })
    }

    /// As [`Self::invoke_to`], where the root keeps running.
    pub(super) fn invoke(
        &self,
        h: &mut CoreHandle,
        cptr: Word,
        label: InvocationLabel,
        args: &[Word],
    ) -> Result<(), String> {
        match self.invoke_to(h, cptr, label, args)?.run {
            Some(t) if t == self.me => Ok(()),
            other => Err(format!("after {label:?} core 0 runs {other:?}, not the root")),
        }
    }

    /// Makes core 0's new pair's client the serial line's user thread: a
    /// notification, an IRQ handler for the line (from the IRQ control
    /// capability) that signals it, and the line routed to core 0 and
    /// enabled at the UART.
    pub(super) fn build_serial(&self, h: &mut CoreHandle, free: &mut Word, p: Pair) -> Result<Pair, String> {
        let (note, handler) = (*free, *free + 1);
        *free += 2;
        let ut = CAP_FIRST_UNTYPED;
        self.invoke(h, ut, InvocationLabel::UntypedRetype, &[ObjectType::Notification as Word, 0, 0, note, 1])?;
        let line = Word::from(crate::serial::IRQ);
        self.invoke(h, CAP_IRQ_CONTROL, InvocationLabel::IrqIssueIrqHandler, &[line, 0, handler])?;
        self.invoke(h, handler, InvocationLabel::IrqSetIrqHandler, &[note])?;
        for (t, entry, arg) in [
            (p.server_cap, programs::SERVER, programs::arg(p.ep, p.reply, 0)),
            (p.client_cap, programs::IRQ_WAITER, note | handler << 16),
        ] {
            self.invoke(h, t, InvocationLabel::TcbWriteRegisters, &[0, 3, entry, 0, arg])?;
        }
        crate::ioapic::route(crate::serial::IRQ, irq::SERIAL_VECTOR, percore::apic_id(0));
        crate::serial::enable_receive_interrupt();
        crate::ioapic::set_masked(crate::serial::IRQ, false);
        Ok(p)
    }

    /// Turns core `core`'s new pair into a fuzzer (the client's place) and
    /// its rescuer (the server's): a notification and a CNode of
    /// [`programs::FUZZ_SLOTS`] slots for the fuzzer holding its own TCB,
    /// the endpoint, the notification, the reply object and the CNode
    /// itself (slots 1 to 5), which is its whole CSpace; the rescuer keeps
    /// the root's CSpace and runs below the fuzzer (150 against 200).
    pub(super) fn build_fuzz(&self, h: &mut CoreHandle, free: &mut Word, core: usize, p: Pair) -> Result<Pair, String> {
        let (note, cnode) = (*free, *free + 1);
        let ut = CAP_FIRST_UNTYPED;
        self.invoke(h, ut, InvocationLabel::UntypedRetype, &[ObjectType::Notification as Word, 0, 0, note, 1])?;
        self.invoke(h, ut, InvocationLabel::UntypedRetype, &[ObjectType::CNode as Word, 5, 0, cnode, 1])?;
        *free += 2;
        for (dest, src) in [(1, p.client_cap), (2, p.ep), (3, note), (5, cnode)] {
            // [dest_index, src_root (0: the root's CSpace), src_index, rights (all)]
            self.invoke(h, cnode, InvocationLabel::CNodeCopy, &[dest, 0, src, Word::MAX])?;
        }
        // A reply capability is not duplicated: it moves.
        self.invoke(h, cnode, InvocationLabel::CNodeMove, &[4, 0, p.reply])?;
        self.invoke(h, p.client_cap, InvocationLabel::TcbConfigure, &[cnode, 0])?;
        self.invoke(h, p.server_cap, InvocationLabel::TcbSetPriority, &[150])?;
        let fuzz = programs::fuzz_arg(core, false, core as u64 + 1);
        self.invoke(h, p.client_cap, InvocationLabel::TcbWriteRegisters, &[0, 3, programs::FUZZER, 0, fuzz])?;
        let rescue = p.client_cap | fuzz << 16;
        self.invoke(h, p.server_cap, InvocationLabel::TcbWriteRegisters, &[0, 3, programs::RESCUER, 0, rescue])?;
        Ok(p)
    }

    /// Creates core `core`'s pair in the slots from `*free` on; with
    /// `calls`, its threads start as the ring-3 programs (`programs.rs`).
    pub(super) fn build_pair(
        &self,
        h: &mut CoreHandle,
        free: &mut Word,
        core: usize,
        user: Option<Programs>,
    ) -> Result<Pair, String> {
        let at = *free;
        for (i, ty) in [ObjectType::Endpoint, ObjectType::Reply, ObjectType::Tcb, ObjectType::Tcb].iter().enumerate() {
            self.invoke(h, CAP_FIRST_UNTYPED, InvocationLabel::UntypedRetype, &[*ty as Word, 0, 0, at + i as Word, 1])?;
        }
        *free += 4;
        let (server_cap, client_cap) = (at + 2, at + 3);
        for t in [server_cap, client_cap] {
            self.invoke(h, t, InvocationLabel::TcbConfigure, &[CAP_INIT_CNODE, 0])?;
            self.invoke(h, t, InvocationLabel::TcbSetPriority, &[200])?;
            self.invoke(h, t, InvocationLabel::TcbSetAffinity, &[core as Word])?;
        }
        if let Some(Programs { server, client, calls, fault_handler }) = user {
            let arg = programs::arg(at, at + 1, calls);
            for (t, entry) in [(server_cap, server), (client_cap, client)] {
                self.start_at(h, t, entry, arg)?;
            }
            if fault_handler {
                // The client's faults go to the pair's endpoint (its slot
                // in the root's CNode, the client's CSpace).
                self.invoke(h, client_cap, InvocationLabel::TcbSetFaultHandler, &[at])?;
            }
        }
        let mut id = |cap| self.k.thread_of_cap(h, self.me, cap).ok_or_else(|| format!("no thread behind slot {cap}"));
        Ok(Pair { ep: at, reply: at + 1, server_cap, client_cap, server: id(server_cap)?, client: id(client_cap)? })
    }
}
