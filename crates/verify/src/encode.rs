//! The user side of a system call, encoded: what a user thread writes into
//! its registers ([`SyscallArgs`]) and IPC buffer to ask the kernel for
//! something, and how it reads the answer. The one encoder the platform's
//! users share: [`crate::sim::Sim`]'s helpers, the stress tests' threads,
//! `granule verify`'s programs ([`crate::user::trap_for`]), its setup and
//! its oracle.
//!
//! An object invocation is a `Call` on the object's capability whose message
//! info carries the [`InvocationLabel`] and whose message words are the
//! arguments; [`Invocation`] names the common ones with their argument
//! layout (see `granule_kernel::abi::InvocationLabel`), and [`invoke`] takes
//! any label and words (tests of malformed arguments).

use granule_kernel::abi::{CapRights, Error, InvocationLabel, ObjectType, Sysno, REG_ARG0, REG_PC, REG_SP};
use granule_kernel::{CoreHandle, ExitPlan, FaultKind, IpcBuffer, Kernel, MessageInfo, Regime, SyscallArgs, Word};

/// The registers of system call `sysno` on capability `cptr`, with message
/// info `info` and reply object `reply` (0: none).
pub fn syscall(sysno: Sysno, cptr: Word, info: MessageInfo, reply: Word) -> SyscallArgs {
    SyscallArgs::new(sysno.word(), cptr, info.word(), reply)
}

/// The "registers" of a memory-access fault at `addr` (`write`: a store):
/// a number no system call has, which [`enter_trap`] turns into the fault
/// entry, so a program's attempts (and the oracle's replays) name faults as
/// they name system calls.
pub fn fault_trap(addr: Word, write: bool) -> SyscallArgs {
    SyscallArgs::new(FAULT_TRAP, addr, write as Word, 0)
}

/// The fault [`fault_trap`] encoded, if `args` is one.
pub fn as_fault(args: SyscallArgs) -> Option<FaultKind> {
    (args.sysno == FAULT_TRAP).then_some(FaultKind::MemoryAccess { addr: args.cptr, write: args.info != 0 })
}

/// The system-call number [`fault_trap`] uses (no system call has it).
const FAULT_TRAP: Word = 0xfa17_fa17_fa17_fa17;

/// Enter `k` on `h`'s core with `args`: a system call, or the fault
/// [`fault_trap`] encodes.
pub fn enter_trap<R: Regime>(k: &Kernel<R>, h: &mut CoreHandle, args: SyscallArgs) -> ExitPlan {
    match as_fault(args) {
        Some(kind) => k.fault(h, kind),
        None => k.syscall(h, args),
    }
}

/// A message of `len` words under `label`, without capabilities.
pub fn msg(label: Word, len: Word) -> MessageInfo {
    MessageInfo::new(label, 0, 0, len)
}

/// The registers of invoking `cptr` with `label` and `len` argument words.
pub fn invocation(cptr: Word, label: InvocationLabel, len: usize) -> SyscallArgs {
    syscall(Sysno::Call, cptr, msg(label.word(), len as Word), 0)
}

/// Write `args` into `b`'s message words; the registers of invoking `cptr`
/// with `label` and them.
pub fn invoke(b: &mut IpcBuffer, cptr: Word, label: InvocationLabel, args: &[Word]) -> SyscallArgs {
    b.msg[..args.len()].copy_from_slice(args);
    invocation(cptr, label, args.len())
}

/// What an invocation's caller finds in its buffer when it runs again:
/// `None` if the kernel asked for the call to be reissued, else its result
/// and the reply's message words.
pub fn result(b: &IpcBuffer) -> Option<Result<&[Word], Error>> {
    if b.restart != 0 {
        return None;
    }
    Some(b.result().map(|()| &b.msg[..(b.info().length() as usize).min(b.msg.len())]))
}

/// Most argument words of an [`Invocation`].
pub const MAX_ARGS: usize = 5;

/// An object invocation: its label and argument words, as the ABI lays
/// them out. Slots are indices in the invoker's root CNode (single-level
/// CSpaces).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Invocation {
    /// What is asked of the object.
    pub label: InvocationLabel,
    len: usize,
    words: [Word; MAX_ARGS],
}

impl Invocation {
    /// `label` with argument words `args` (at most [`MAX_ARGS`]).
    pub fn new(label: InvocationLabel, args: &[Word]) -> Self {
        assert!(args.len() <= MAX_ARGS, "{label:?}: {} argument words, at most {MAX_ARGS}", args.len());
        let mut words = [0; MAX_ARGS];
        words[..args.len()].copy_from_slice(args);
        Self { label, len: args.len(), words }
    }

    /// The argument words.
    pub fn args(&self) -> &[Word] {
        &self.words[..self.len]
    }

    /// Write the arguments into `b`; the registers of invoking `cptr`.
    pub fn write(&self, b: &mut IpcBuffer, cptr: Word) -> SyscallArgs {
        invoke(b, cptr, self.label, self.args())
    }

    /// The registers of invoking `cptr` (the arguments go into the message
    /// words separately, e.g. [`Invocation::args`]).
    pub fn registers(&self, cptr: Word) -> SyscallArgs {
        invocation(cptr, self.label, self.len)
    }

    /// Untyped: `count` objects of type `ty` (`size_bits` for sized types)
    /// into root-CNode slots `dest..`.
    pub fn retype(ty: ObjectType, size_bits: Word, dest: Word, count: Word) -> Self {
        Self::new(InvocationLabel::UntypedRetype, &[ty as Word, size_bits, 0, dest, count])
    }

    /// CNode: copy the capability in slot `src` to slot `dest` with `rights`.
    pub fn copy(dest: Word, src: Word, rights: CapRights) -> Self {
        Self::new(InvocationLabel::CNodeCopy, &[dest, 0, src, rights.0])
    }

    /// CNode: like [`Invocation::copy`], and give the copy `badge`.
    pub fn mint(dest: Word, src: Word, rights: CapRights, badge: Word) -> Self {
        Self::new(InvocationLabel::CNodeMint, &[dest, 0, src, rights.0, badge])
    }

    /// CNode: delete the capability in `slot`.
    pub fn delete(slot: Word) -> Self {
        Self::new(InvocationLabel::CNodeDelete, &[slot])
    }

    /// CNode: delete every capability derived from the one in `slot`.
    pub fn revoke(slot: Word) -> Self {
        Self::new(InvocationLabel::CNodeRevoke, &[slot])
    }

    /// TCB: CSpace root `cspace`, VSpace `vspace` (0: none).
    pub fn configure(cspace: Word, vspace: Word) -> Self {
        Self::new(InvocationLabel::TcbConfigure, &[cspace, vspace])
    }

    /// TCB: priority `prio`.
    pub fn set_priority(prio: Word) -> Self {
        Self::new(InvocationLabel::TcbSetPriority, &[prio])
    }

    /// TCB: move the thread to `core`.
    pub fn set_affinity(core: Word) -> Self {
        Self::new(InvocationLabel::TcbSetAffinity, &[core])
    }

    /// TCB: send the thread's faults to the endpoint capability `cptr` in
    /// its own CSpace (0: none).
    pub fn set_fault_handler(cptr: Word) -> Self {
        Self::new(InvocationLabel::TcbSetFaultHandler, &[cptr])
    }

    /// TCB: bind notification `cptr` to the thread.
    pub fn bind_notification(cptr: Word) -> Self {
        Self::new(InvocationLabel::TcbBindNotification, &[cptr])
    }

    /// TCB: stop the thread.
    pub fn suspend() -> Self {
        Self::new(InvocationLabel::TcbSuspend, &[])
    }

    /// TCB: let the thread run.
    pub fn resume() -> Self {
        Self::new(InvocationLabel::TcbResume, &[])
    }

    /// TCB: start the thread afresh at `pc` with argument `arg` (stack
    /// pointer 0), and resume it.
    pub fn start(pc: Word, arg: Word) -> Self {
        const { assert!(REG_PC == 0 && REG_SP == 1 && REG_ARG0 == 2) };
        // [resume, count, pc, sp, arg0]
        Self::new(InvocationLabel::TcbWriteRegisters, &[1, 3, pc, 0, arg])
    }

    /// IRQ control: a handler for interrupt `irq` into root-CNode slot
    /// `dest`.
    pub fn issue_irq_handler(irq: Word, dest: Word) -> Self {
        Self::new(InvocationLabel::IrqIssueIrqHandler, &[irq, 0, dest])
    }

    /// IRQ handler: deliver to the notification capability in `ntfn`.
    pub fn set_irq_handler(ntfn: Word) -> Self {
        Self::new(InvocationLabel::IrqSetIrqHandler, &[ntfn])
    }

    /// IRQ handler: acknowledge the interrupt.
    pub fn irq_ack() -> Self {
        Self::new(InvocationLabel::IrqAckIrq, &[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use granule_kernel::abi::CAP_INIT_CNODE;

    #[test]
    fn invocations_put_label_and_length_in_the_info_word() {
        let mut b = IpcBuffer::new();
        let a = Invocation::mint(9, 4, CapRights::ALL, 7).write(&mut b, CAP_INIT_CNODE);
        assert_eq!(a.sysno, Sysno::Call.word());
        assert_eq!(a.cptr, CAP_INIT_CNODE);
        assert_eq!(MessageInfo(a.info).label(), InvocationLabel::CNodeMint.word());
        assert_eq!(MessageInfo(a.info).length(), 5);
        assert_eq!(b.msg[..5], [9, 0, 4, CapRights::ALL.0, 7]);
        b.restart = 1;
        assert_eq!(result(&b), None);
        b.restart = 0;
        b.tag = msg(0, 2).word();
        b.msg[..2].copy_from_slice(&[3, 4]);
        assert_eq!(result(&b), Some(Ok(&[3, 4][..])));
    }
}
