//! [`Env`]: every system call and object invocation as a safe method.
//!
//! Each method writes its message words into the thread's IPC buffer, traps
//! with the four argument words, reissues the call while the kernel asks for
//! a restart (`IpcBuffer::restart`), and turns the buffer's error code into a
//! `Result`. Results (received message info, badge, message words) are read
//! from the buffer; [`Env::msg`] gives the message words.
//!
//! Capability pointers ([`CPtr`]) are slot indices in the thread's root
//! CNode (single-level CSpaces, see the kernel ABI).

use granule_kernel::abi::{
    CapRights, Error, InvocationLabel, ObjectType, Sysno, MSG_MAX_EXTRA_CAPS, MSG_MAX_WORDS, NUM_REGS, REG_ARG0, REG_PC,
};
use granule_kernel::{IpcBuffer, MessageInfo, SyscallArgs, Word};

use crate::trap::Trap;

/// A capability pointer: a slot index in the caller's root CNode.
pub type CPtr = Word;

/// The null capability pointer: "none" where a capability is optional.
pub const NULL: CPtr = granule_kernel::abi::CAP_NULL;

/// A received message: its info word and the badge it came with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Received {
    /// Label, length, extra capabilities.
    pub info: MessageInfo,
    /// The badge of the capability the sender used (or a notification word).
    pub badge: Word,
}

/// A user thread's system-call interface over its platform's [`Trap`].
#[derive(Debug)]
pub struct Env<T: Trap> {
    trap: T,
}

impl<T: Trap> Env<T> {
    /// The interface of the thread `trap` belongs to.
    pub fn new(trap: T) -> Self {
        Self { trap }
    }

    /// This thread's IPC buffer.
    #[inline(always)]
    pub fn buffer(&mut self) -> &mut IpcBuffer {
        self.trap.ipc_buffer()
    }

    /// The message words of the IPC buffer (to fill before a send, to read
    /// after a receive or an invocation).
    #[inline(always)]
    pub fn msg(&mut self) -> &mut [Word; MSG_MAX_WORDS] {
        &mut self.trap.ipc_buffer().msg
    }

    /// Capabilities to send with the next message (sets `extra_caps` words of
    /// the buffer; the message info must say how many).
    pub fn set_caps(&mut self, caps: &[CPtr]) {
        let b = self.buffer();
        for (dst, &c) in b.caps_or_badges.iter_mut().zip(caps.iter().take(MSG_MAX_EXTRA_CAPS)) {
            *dst = c;
        }
    }

    /// Where a capability received with the next message is stored
    /// (`cnode` = [`NULL`] for the root CNode).
    pub fn set_receive_slot(&mut self, cnode: CPtr, index: Word) {
        let b = self.buffer();
        b.receive_cnode = cnode;
        b.receive_index = index;
        b.receive_depth = 0;
    }

    /// The raw system call: trap with these words until the kernel does not
    /// ask for a restart, then return the error code as a `Result`.
    #[inline(always)]
    pub fn raw(&mut self, sysno: Sysno, cptr: CPtr, info: MessageInfo, reply: CPtr) -> Result<(), Error> {
        let args = SyscallArgs::new(sysno.word(), cptr, info.word(), reply);
        loop {
            self.trap.syscall(args);
            let b = self.trap.ipc_buffer();
            if b.restart == 0 {
                return b.result();
            }
        }
    }

    /// Entirely raw: any words at all (for tests that feed the kernel
    /// garbage). Returns the error word and the restart flag, unretried.
    pub fn raw_words(&mut self, sysno: Word, cptr: Word, info: Word, reply: Word) -> (Word, Word) {
        self.trap.syscall(SyscallArgs::new(sysno, cptr, info, reply));
        let b = self.trap.ipc_buffer();
        (b.error, b.restart)
    }

    #[inline(always)]
    fn received(&mut self) -> Received {
        let b = self.trap.ipc_buffer();
        Received { info: MessageInfo(b.tag), badge: b.badge }
    }

    // ----- IPC ---------------------------------------------------------

    /// Send `info` (words in [`Env::msg`]) on endpoint `ep`, blocking until
    /// a receiver takes it; on a notification, signal it.
    pub fn send(&mut self, ep: CPtr, info: MessageInfo) -> Result<(), Error> {
        self.raw(Sysno::Send, ep, info, NULL)
    }

    /// Send only if a receiver is waiting (otherwise nothing happens).
    pub fn nb_send(&mut self, ep: CPtr, info: MessageInfo) -> Result<(), Error> {
        self.raw(Sysno::NBSend, ep, info, NULL)
    }

    /// Send on `ep` and wait for the reply; returns the reply's info (its
    /// words are in [`Env::msg`]).
    #[inline]
    pub fn call(&mut self, ep: CPtr, info: MessageInfo) -> Result<MessageInfo, Error> {
        self.raw(Sysno::Call, ep, info, NULL)?;
        Ok(self.received().info)
    }

    /// Receive on `ep` (blocking); a `Call` received is recorded in the
    /// reply object `reply` ([`NULL`]: none, the caller cannot be answered).
    /// On a notification, wait for it.
    pub fn recv(&mut self, ep: CPtr, reply: CPtr) -> Result<Received, Error> {
        self.raw(Sysno::Recv, ep, MessageInfo::default(), reply)?;
        Ok(self.received())
    }

    /// Receive only if a sender is waiting; with none, returns an empty
    /// message with badge 0 (seL4's convention).
    pub fn nb_recv(&mut self, ep: CPtr, reply: CPtr) -> Result<Received, Error> {
        self.raw(Sysno::NBRecv, ep, MessageInfo::default(), reply)?;
        Ok(self.received())
    }

    /// Answer the caller recorded in `reply` with `info` (words in
    /// [`Env::msg`]).
    pub fn reply(&mut self, reply: CPtr, info: MessageInfo) -> Result<(), Error> {
        self.raw(Sysno::Reply, NULL, info, reply)
    }

    /// Answer the caller recorded in `reply`, then receive on `ep` into the
    /// same reply object: the server's loop.
    #[inline]
    pub fn reply_recv(&mut self, ep: CPtr, info: MessageInfo, reply: CPtr) -> Result<Received, Error> {
        self.raw(Sysno::ReplyRecv, ep, info, reply)?;
        Ok(self.received())
    }

    /// Signal notification `ntfn`.
    pub fn signal(&mut self, ntfn: CPtr) -> Result<(), Error> {
        self.raw(Sysno::Signal, ntfn, MessageInfo::default(), NULL)
    }

    /// Wait on notification `ntfn`; returns the notification word.
    pub fn wait(&mut self, ntfn: CPtr) -> Result<Word, Error> {
        self.raw(Sysno::Wait, ntfn, MessageInfo::default(), NULL)?;
        Ok(self.received().badge)
    }

    /// Poll notification `ntfn` (never blocks); returns the word (0: none).
    pub fn poll(&mut self, ntfn: CPtr) -> Result<Word, Error> {
        self.raw(Sysno::Poll, ntfn, MessageInfo::default(), NULL)?;
        Ok(self.received().badge)
    }

    /// Give the rest of the time slice to threads of equal priority.
    pub fn yield_now(&mut self) -> Result<(), Error> {
        self.raw(Sysno::Yield, NULL, MessageInfo::default(), NULL)
    }

    // ----- invocations -------------------------------------------------

    /// Invoke object `cap` with `label` and argument words `args`; returns
    /// the reply info (result words are in [`Env::msg`]).
    pub fn invoke(&mut self, cap: CPtr, label: InvocationLabel, args: &[Word]) -> Result<MessageInfo, Error> {
        let n = args.len().min(MSG_MAX_WORDS);
        self.msg()[..n].copy_from_slice(&args[..n]);
        self.call(cap, MessageInfo::new(label.word(), 0, 0, n as Word))
    }

    /// Create `count` objects of type `ty` (and `size_bits` for sized types)
    /// from untyped `untyped`, into consecutive empty slots `dest_index..` of
    /// CNode `dest_cnode` ([`NULL`]: the root CNode).
    pub fn untyped_retype(
        &mut self,
        untyped: CPtr,
        ty: ObjectType,
        size_bits: Word,
        dest_cnode: CPtr,
        dest_index: Word,
        count: Word,
    ) -> Result<(), Error> {
        self.invoke(untyped, InvocationLabel::UntypedRetype, &[ty as Word, size_bits, dest_cnode, dest_index, count])
            .map(drop)
    }

    /// Copy the capability in `src_root[src_index]` to `cnode[dest_index]`
    /// with `rights` (intersected with the source's).
    pub fn cnode_copy(
        &mut self,
        cnode: CPtr,
        dest_index: Word,
        src_root: CPtr,
        src_index: Word,
        rights: CapRights,
    ) -> Result<(), Error> {
        self.invoke(cnode, InvocationLabel::CNodeCopy, &[dest_index, src_root, src_index, rights.0]).map(drop)
    }

    /// Like [`Env::cnode_copy`], and give the new capability `badge`.
    pub fn cnode_mint(
        &mut self,
        cnode: CPtr,
        dest_index: Word,
        src_root: CPtr,
        src_index: Word,
        rights: CapRights,
        badge: Word,
    ) -> Result<(), Error> {
        self.invoke(cnode, InvocationLabel::CNodeMint, &[dest_index, src_root, src_index, rights.0, badge]).map(drop)
    }

    /// Move the capability in `src_root[src_index]` to `cnode[dest_index]`.
    pub fn cnode_move(&mut self, cnode: CPtr, dest_index: Word, src_root: CPtr, src_index: Word) -> Result<(), Error> {
        self.invoke(cnode, InvocationLabel::CNodeMove, &[dest_index, src_root, src_index]).map(drop)
    }

    /// Delete the capability in `cnode[index]`.
    pub fn cnode_delete(&mut self, cnode: CPtr, index: Word) -> Result<(), Error> {
        self.invoke(cnode, InvocationLabel::CNodeDelete, &[index]).map(drop)
    }

    /// Delete every capability derived from the one in `cnode[index]`.
    pub fn cnode_revoke(&mut self, cnode: CPtr, index: Word) -> Result<(), Error> {
        self.invoke(cnode, InvocationLabel::CNodeRevoke, &[index]).map(drop)
    }

    /// Give thread `tcb` a CSpace root and a VSpace ([`NULL`]: none).
    pub fn tcb_configure(&mut self, tcb: CPtr, cspace_root: CPtr, vspace: CPtr) -> Result<(), Error> {
        self.invoke(tcb, InvocationLabel::TcbConfigure, &[cspace_root, vspace]).map(drop)
    }

    /// Send thread `tcb`'s faults to the endpoint capability `handler` in
    /// *its* CSpace ([`NULL`]: none), looked up when it faults.
    pub fn tcb_set_fault_handler(&mut self, tcb: CPtr, handler: CPtr) -> Result<(), Error> {
        self.invoke(tcb, InvocationLabel::TcbSetFaultHandler, &[handler]).map(drop)
    }

    /// A memory access to `addr` (`write`: a store) that no mapping allows:
    /// the fault an MMU would raise. Returns once the thread's fault handler
    /// answered it (label 0); the caller retries the access.
    pub fn memory_fault(&mut self, addr: Word, write: bool) {
        self.trap.fault(granule_kernel::FaultKind::MemoryAccess { addr, write });
    }

    /// Set thread `tcb`'s priority (0..=255).
    pub fn tcb_set_priority(&mut self, tcb: CPtr, priority: Word) -> Result<(), Error> {
        self.invoke(tcb, InvocationLabel::TcbSetPriority, &[priority]).map(drop)
    }

    /// Move thread `tcb` to `core` (the only way a thread changes core).
    pub fn tcb_set_affinity(&mut self, tcb: CPtr, core: Word) -> Result<(), Error> {
        self.invoke(tcb, InvocationLabel::TcbSetAffinity, &[core]).map(drop)
    }

    /// Stop thread `tcb`.
    pub fn tcb_suspend(&mut self, tcb: CPtr) -> Result<(), Error> {
        self.invoke(tcb, InvocationLabel::TcbSuspend, &[]).map(drop)
    }

    /// Make a suspended or never-started thread `tcb` runnable.
    pub fn tcb_resume(&mut self, tcb: CPtr) -> Result<(), Error> {
        self.invoke(tcb, InvocationLabel::TcbResume, &[]).map(drop)
    }

    /// Read thread `tcb`'s saved registers.
    pub fn tcb_read_registers(&mut self, tcb: CPtr) -> Result<[Word; NUM_REGS], Error> {
        self.invoke(tcb, InvocationLabel::TcbReadRegisters, &[NUM_REGS as Word])?;
        let mut regs = [0; NUM_REGS];
        regs.copy_from_slice(&self.msg()[..NUM_REGS]);
        Ok(regs)
    }

    /// Write thread `tcb`'s registers (it starts afresh at `regs[REG_PC]`
    /// with argument `regs[REG_ARG0]`), resuming it if `resume`.
    pub fn tcb_write_registers(&mut self, tcb: CPtr, resume: bool, regs: &[Word]) -> Result<(), Error> {
        let n = regs.len().min(NUM_REGS);
        let mut args = [0; 2 + NUM_REGS];
        args[0] = resume as Word;
        args[1] = n as Word;
        args[2..2 + n].copy_from_slice(&regs[..n]);
        self.invoke(tcb, InvocationLabel::TcbWriteRegisters, &args[..2 + n]).map(drop)
    }

    /// Bind notification `ntfn` to thread `tcb`.
    pub fn tcb_bind_notification(&mut self, tcb: CPtr, ntfn: CPtr) -> Result<(), Error> {
        self.invoke(tcb, InvocationLabel::TcbBindNotification, &[ntfn]).map(drop)
    }

    /// Unbind thread `tcb`'s notification.
    pub fn tcb_unbind_notification(&mut self, tcb: CPtr) -> Result<(), Error> {
        self.invoke(tcb, InvocationLabel::TcbUnbindNotification, &[]).map(drop)
    }

    /// Create a handler capability for `irq` in `dest_cnode[dest_index]`.
    pub fn irq_issue_handler(
        &mut self,
        irq_control: CPtr,
        irq: Word,
        dest_cnode: CPtr,
        dest_index: Word,
    ) -> Result<(), Error> {
        self.invoke(irq_control, InvocationLabel::IrqIssueIrqHandler, &[irq, dest_cnode, dest_index]).map(drop)
    }

    /// Deliver `handler`'s interrupt to notification `ntfn`.
    pub fn irq_set_handler(&mut self, handler: CPtr, ntfn: CPtr) -> Result<(), Error> {
        self.invoke(handler, InvocationLabel::IrqSetIrqHandler, &[ntfn]).map(drop)
    }

    /// Stop delivering `handler`'s interrupt.
    pub fn irq_clear_handler(&mut self, handler: CPtr) -> Result<(), Error> {
        self.invoke(handler, InvocationLabel::IrqClearIrqHandler, &[]).map(drop)
    }

    /// Acknowledge (re-enable) `handler`'s interrupt.
    pub fn irq_ack(&mut self, handler: CPtr) -> Result<(), Error> {
        self.invoke(handler, InvocationLabel::IrqAckIrq, &[]).map(drop)
    }

    /// Map `frame` into `vspace` at `vaddr` (aligned to the frame's size);
    /// returns `(address, size_bytes)`, the address the hosted platform's
    /// threads use (it has no MMU; `vaddr` places the frame in the page table).
    pub fn frame_map(&mut self, frame: CPtr, vspace: CPtr, vaddr: Word) -> Result<(Word, Word), Error> {
        self.invoke(frame, InvocationLabel::FrameMap, &[vspace, vaddr])?;
        let m = self.msg();
        Ok((m[0], m[1]))
    }

    /// Unmap `frame`.
    pub fn frame_unmap(&mut self, frame: CPtr) -> Result<(), Error> {
        self.invoke(frame, InvocationLabel::FrameUnmap, &[]).map(drop)
    }

    /// Where `frame` is mapped: `(address, size_bytes)`.
    pub fn frame_get_address(&mut self, frame: CPtr) -> Result<(Word, Word), Error> {
        self.invoke(frame, InvocationLabel::FrameGetAddress, &[])?;
        let m = self.msg();
        Ok((m[0], m[1]))
    }

    // ----- conveniences ------------------------------------------------

    /// Start a thread: write its registers (`entry`, `arg`) and resume it.
    /// The TCB must be configured already.
    pub fn start_thread(&mut self, tcb: CPtr, entry: Word, arg: Word) -> Result<(), Error> {
        let mut regs = [0; NUM_REGS];
        regs[REG_PC] = entry;
        regs[REG_ARG0] = arg;
        self.tcb_write_registers(tcb, true, &regs)
    }
}
