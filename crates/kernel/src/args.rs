//! What an entry point is given: the four words of a system call
//! ([`SyscallArgs`]), the kind of a fault ([`FaultKind`]), what kind of
//! general entry it is for its drive ([`Entry`]), and the argument
//! words of an object invocation copied out of the caller's IPC buffer
//! ([`Args`]). Plain values: every word is validated where it is decoded.

use crate::abi::{Error, Word};

/// The four "register" words of a system call. Anything at all may be passed:
/// the kernel validates every word.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyscallArgs {
    /// [`crate::abi::Sysno`] as a word.
    pub sysno: Word,
    /// Capability pointer of the endpoint, notification or invoked object.
    pub cptr: Word,
    /// [`crate::MessageInfo`] word (label, extra caps, length).
    pub info: Word,
    /// Capability pointer of a reply object (`Recv`, `NBRecv`, `Reply`,
    /// `ReplyRecv`); `0` (the null slot) = none.
    pub reply: Word,
}

impl SyscallArgs {
    /// Arguments from their parts.
    pub const fn new(sysno: Word, cptr: Word, info: Word, reply: Word) -> Self {
        Self { sysno, cptr, info, reply }
    }
}

/// Why a user thread stopped abnormally ([`Kernel::fault`]).
///
/// A thread with a fault handler (`TcbSetFaultHandler`) is blocked in a
/// `Call` the kernel makes on its behalf: the handler receives a message
/// whose label is [`FaultKind::label`] and whose words are
/// [`FaultKind::words`] (the layout is in [`crate::abi::FAULT_MEMORY_ACCESS`]
/// and its siblings); a thread without one stops.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FaultKind {
    /// The user code panicked (hosted: the coroutine unwound).
    UserPanic,
    /// Any other unrecoverable user fault.
    Other,
    /// An access to `addr` that no mapping allows (`write`: a store). The
    /// hosted platform has no MMU: user code raises it where an MMU would
    /// (`UserCtx::memory_fault`). Resumable: once the fault is answered the
    /// thread goes on after the access, which it retries.
    MemoryAccess { addr: Word, write: bool },
}

impl FaultKind {
    /// The label of the fault message a handler receives.
    pub const fn label(self) -> Word {
        match self {
            Self::UserPanic => crate::abi::FAULT_USER_PANIC,
            Self::Other => crate::abi::FAULT_OTHER,
            Self::MemoryAccess { .. } => crate::abi::FAULT_MEMORY_ACCESS,
        }
    }

    /// The fault message's words (at most [`FaultKind::MAX_WORDS`]) and
    /// their count.
    pub const fn words(self) -> ([Word; Self::MAX_WORDS], usize) {
        match self {
            Self::UserPanic | Self::Other => ([0; Self::MAX_WORDS], 0),
            Self::MemoryAccess { addr, write } => ([addr, write as Word], 2),
        }
    }

    /// Most words a fault message has.
    pub const MAX_WORDS: usize = 2;

    /// Whether the thread can go on where it faulted once the fault is
    /// answered; otherwise (its code cannot continue: hosted, the coroutine
    /// unwound or returned) it starts afresh at its entry.
    pub const fn resumable(self) -> bool {
        matches!(self, Self::MemoryAccess { .. })
    }
}

/// Invocation argument words copied out of the caller's IPC buffer.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Args {
    len: usize,
    w: [Word; Args::MAX],
}

impl Args {
    /// A message of `len` words (clamped to [`Args::MAX`]) whose first
    /// words are copied from `msg`.
    pub fn copied(msg: &[Word], len: usize) -> Self {
        let mut args = Args { len, w: [0; Args::MAX] };
        let n = len.min(Args::MAX).min(msg.len());
        args.w[..n].copy_from_slice(&msg[..n]);
        args
    }

    /// Most argument words any invocation reads (`TcbWriteRegisters`).
    pub const MAX: usize = 2 + crate::abi::NUM_REGS;

    /// Argument `i`, or `TruncatedMessage` if the message is shorter.
    #[inline]
    pub fn word(&self, i: usize) -> Result<Word, Error> {
        if i < self.len && i < Self::MAX {
            Ok(self.w[i])
        } else {
            Err(Error::TruncatedMessage)
        }
    }

    /// The message length (clamped to the buffer).
    pub fn len(&self) -> usize {
        self.len
    }
}

/// A kernel entry that is not a system call, as the platform makes it
/// (`Kernel::interrupt`, `timer_tick`, `ipi`, `fault`): what a drive with
/// a path of its own for such entries is given (`Drive::other`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum OtherEntry {
    /// A timer tick.
    Tick,
    /// Serve pending IPIs.
    Ipi,
    /// An interrupt on line `irq`.
    Interrupt(usize),
    /// The current thread faulted: its fault's `Call` to its handler.
    Fault(FaultKind),
}

/// What a general kernel entry is, as far as its drive cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Entry {
    /// A system call (a restarted call may have asked for the whole kernel).
    Syscall,
    /// An interrupt, tick or IPI.
    Other,
    /// Needs the whole kernel (faults).
    Whole,
    /// Needs the whole kernel to read it (introspection, the invariant
    /// checker): ends in no exit plan, so it must not change what any core
    /// runs.
    Look,
}
