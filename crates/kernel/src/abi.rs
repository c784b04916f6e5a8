//! The user/kernel ABI: everything a user program and the kernel must agree on.
//!
//! This module is the only part of the kernel crate that user code
//! (`granule-user`) depends on. Everything here is plain data: numbers,
//! bit layouts and one `#[repr(C)]` structure, the [`IpcBuffer`].
//!
//! # System call convention
//!
//! A system call passes four words "in registers" ([`crate::SyscallArgs`]):
//! the system call number ([`Sysno`]), a capability pointer (`cptr`), a
//! [`MessageInfo`] word and a reply-object capability pointer (`reply`, used
//! by `Recv`, `NBRecv`, `Reply` and `ReplyRecv`). Message words, capabilities
//! to send and the receive slot are in the caller's [`IpcBuffer`]; so are the
//! results: [`IpcBuffer::error`], [`IpcBuffer::tag`] (the received or reply
//! [`MessageInfo`]), [`IpcBuffer::badge`] and the message words.
//!
//! **Restart.** When [`IpcBuffer::restart`] is non-zero after a system call
//! returns, the user stub must issue *the same system call with the same
//! arguments* again (the kernel is event based: a call that could not finish —
//! a cancelled wait, a remote core that must first be stalled — is restarted
//! from the beginning, as seL4 restarts a thread in the `Restart` state).
//!
//! # Capability pointers
//!
//! Each thread has one CSpace root CNode with `2^bits` slots; a capability
//! pointer is simply a slot index in that CNode (single-level CSpace, no
//! guards). Slot 0 is `CAP_NULL` by convention. An index beyond the CNode is
//! a failed lookup.
//!
//! # Invocations
//!
//! `Call` (or `Send`, which discards the reply) on a capability that is not an
//! endpoint or notification *invokes* the object: the label of the
//! [`MessageInfo`] is an [`InvocationLabel`], the arguments are message words
//! (documented on each label), capability arguments are passed as capability
//! pointers in message words (looked up in the caller's CSpace). Results come
//! back as message words, with [`IpcBuffer::tag`]'s length giving their count.

/// A machine word.
pub type Word = u64;

/// Message words in an IPC buffer (seL4 has 120; 64 is ample here).
pub const MSG_MAX_WORDS: usize = 64;
/// Capabilities one message can carry.
pub const MSG_MAX_EXTRA_CAPS: usize = 3;
/// Priorities are `0..NUM_PRIORITIES`; higher runs first.
pub const NUM_PRIORITIES: usize = 256;
/// The highest priority.
pub const MAX_PRIORITY: Word = 255;
/// Number of interrupt lines (virtual timers of the cores plus devices).
pub const NUM_IRQS: usize = 64;
/// Most cores a kernel can run on ([`crate::CoreMask`] is one word).
pub const MAX_CORES: usize = 64;
/// Words of saved user registers in a TCB (`ReadRegisters`/`WriteRegisters`).
pub const NUM_REGS: usize = 8;
/// Register index of the program counter (the hosted platform maps it to a
/// registered Rust entry function).
pub const REG_PC: usize = 0;
/// Register index of the stack pointer (unused on the hosted platform).
pub const REG_SP: usize = 1;
/// Register index of the first argument, passed to the entry function.
pub const REG_ARG0: usize = 2;

/// Smallest frame: 4 KiB (a small page; frames come in this size and
/// [`FRAME_MAX_BITS`] only).
pub const FRAME_MIN_BITS: Word = 12;
/// Largest frame: 2 MiB (a large page).
pub const FRAME_MAX_BITS: Word = 21;
/// Smallest CNode: 2 slots.
pub const CNODE_MIN_BITS: Word = 1;
/// Largest CNode: 65536 slots.
pub const CNODE_MAX_BITS: Word = 16;
/// Smallest untyped: 16 bytes.
pub const UNTYPED_MIN_BITS: Word = 4;
/// Largest untyped: 2^47 bytes.
pub const UNTYPED_MAX_BITS: Word = 47;
/// Most objects one `UntypedRetype` may create.
pub const RETYPE_MAX_OBJECTS: Word = 256;
/// The bytes one VSpace maps: 1 GiB (a root of 512 entries of 2 MiB, each a
/// large page or a table of 512 small pages; `granule_sync::lockfree::Mappings`).
pub const VSPACE_BYTES: Word = 1 << 30;

/// Fault message label: the thread's code panicked ([`crate::FaultKind::UserPanic`]);
/// no words. A reply with label 0 starts the thread afresh at its entry.
pub const FAULT_USER_PANIC: Word = 1;
/// Fault message label: any other unrecoverable fault ([`crate::FaultKind::Other`]);
/// no words. A reply with label 0 starts the thread afresh at its entry.
pub const FAULT_OTHER: Word = 2;
/// Fault message label: a memory access no mapping allows
/// ([`crate::FaultKind::MemoryAccess`]); words `[address, write (0/1)]`,
/// badge = the handler capability's. A reply with label 0 lets the thread
/// go on (it retries the access); any other label leaves it stopped until a
/// `TcbResume`, as for every fault kind.
pub const FAULT_MEMORY_ACCESS: Word = 3;

/// The null capability pointer (slot 0 of every root CNode by convention).
pub const CAP_NULL: Word = 0;
/// The root thread's own TCB.
pub const CAP_INIT_TCB: Word = 1;
/// The root thread's CSpace root CNode.
pub const CAP_INIT_CNODE: Word = 2;
/// The root thread's VSpace.
pub const CAP_INIT_VSPACE: Word = 3;
/// The IRQ control capability (creates IRQ handler capabilities).
pub const CAP_IRQ_CONTROL: Word = 4;
/// First slot of the untyped capabilities (see [`crate::BootInfo`]).
pub const CAP_FIRST_UNTYPED: Word = 5;

/// System call numbers (the `sysno` word).
#[repr(u64)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Sysno {
    /// Send on an endpoint and wait for the reply; or invoke an object.
    Call = 1,
    /// Reply through a reply object, then receive on an endpoint.
    ReplyRecv = 2,
    /// Blocking send on an endpoint; signal on a notification; invoke an
    /// object discarding the reply.
    Send = 3,
    /// Send only if a receiver is waiting (otherwise nothing happens).
    NBSend = 4,
    /// Blocking receive on an endpoint (or wait on a notification).
    Recv = 5,
    /// Answer the caller recorded in a reply object.
    Reply = 6,
    /// Give up the rest of the time slice to threads of equal priority.
    Yield = 7,
    /// Receive only if a sender is waiting (or poll a notification).
    NBRecv = 8,
    /// Signal a notification.
    Signal = 9,
    /// Wait on a notification.
    Wait = 10,
    /// Poll a notification (never blocks).
    Poll = 11,
    /// The sysctl registry: the label is a [`SysctlOp`] (see
    /// `docs/subsystems.md`).
    Sysctl = 12,
    /// The kernel log: the label is a [`KlogOp`].
    Klog = 13,
}

impl Sysno {
    /// All system calls.
    pub const ALL: [Sysno; 13] = [
        Self::Call,
        Self::ReplyRecv,
        Self::Send,
        Self::NBSend,
        Self::Recv,
        Self::Reply,
        Self::Yield,
        Self::NBRecv,
        Self::Signal,
        Self::Wait,
        Self::Poll,
        Self::Sysctl,
        Self::Klog,
    ];

    /// Decode a raw system call number.
    pub const fn from_word(w: Word) -> Option<Sysno> {
        Some(match w {
            1 => Self::Call,
            2 => Self::ReplyRecv,
            3 => Self::Send,
            4 => Self::NBSend,
            5 => Self::Recv,
            6 => Self::Reply,
            7 => Self::Yield,
            8 => Self::NBRecv,
            9 => Self::Signal,
            10 => Self::Wait,
            11 => Self::Poll,
            12 => Self::Sysctl,
            13 => Self::Klog,
            _ => return None,
        })
    }

    /// The raw number.
    pub const fn word(self) -> Word {
        self as Word
    }
}

/// seL4's error codes (`seL4_Error`), returned in [`IpcBuffer::error`].
///
/// `0` is "no error" and has no variant: results are `Result<_, Error>`.
#[repr(u64)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Error {
    /// An argument word is out of its domain (e.g. an unknown object type).
    InvalidArgument = 1,
    /// The invoked capability, or a capability argument, is null, stale or of
    /// the wrong type or rights.
    InvalidCapability = 2,
    /// The operation is not allowed on this object (unknown label, wrong state).
    IllegalOperation = 3,
    /// A numeric argument is out of range (priority, core, size, slot…).
    RangeError = 4,
    /// A size or address is misaligned.
    AlignmentError = 5,
    /// A capability pointer argument could not be looked up.
    FailedLookup = 6,
    /// The message is shorter than the invocation needs.
    TruncatedMessage = 7,
    /// A destination slot is occupied.
    DeleteFirst = 8,
    /// The capability has derived capabilities that must be revoked first.
    RevokeFirst = 9,
    /// Not enough untyped memory, or the object's slab is full (also: the
    /// sysctl tree is full).
    NotEnoughMemory = 10,
    /// The subsystems' errors (granule's, not seL4's): no sysctl node has
    /// this name or OID.
    NotFound = 11,
    /// A sysctl value or name longer than its kind allows.
    TooLarge = 12,
    /// The caller's buffer is smaller than the value (message word 0 of
    /// the reply is the length needed).
    BufferTooSmall = 13,
    /// The sysctl node has children (remove them first).
    Busy = 14,
    /// The sysctl node is read-only, or not a value.
    ReadOnly = 15,
    /// A sysctl node of this name exists under that parent.
    Exists = 16,
    /// The kernel log is full: the message was dropped (and counted).
    RingFull = 17,
}

impl Error {
    /// All errors.
    pub const ALL: [Error; 17] = [
        Self::InvalidArgument,
        Self::InvalidCapability,
        Self::IllegalOperation,
        Self::RangeError,
        Self::AlignmentError,
        Self::FailedLookup,
        Self::TruncatedMessage,
        Self::DeleteFirst,
        Self::RevokeFirst,
        Self::NotEnoughMemory,
        Self::NotFound,
        Self::TooLarge,
        Self::BufferTooSmall,
        Self::Busy,
        Self::ReadOnly,
        Self::Exists,
        Self::RingFull,
    ];

    /// The raw code.
    pub const fn word(self) -> Word {
        self as Word
    }

    /// Decode [`IpcBuffer::error`]: `Ok(())` for 0, `Err(e)` for a known code.
    /// Unknown codes map to `InvalidArgument` (they are never produced).
    pub const fn result_from_word(w: Word) -> Result<(), Error> {
        Err(match w {
            0 => return Ok(()),
            1 => Self::InvalidArgument,
            2 => Self::InvalidCapability,
            3 => Self::IllegalOperation,
            4 => Self::RangeError,
            5 => Self::AlignmentError,
            6 => Self::FailedLookup,
            7 => Self::TruncatedMessage,
            8 => Self::DeleteFirst,
            9 => Self::RevokeFirst,
            10 => Self::NotEnoughMemory,
            11 => Self::NotFound,
            12 => Self::TooLarge,
            13 => Self::BufferTooSmall,
            14 => Self::Busy,
            15 => Self::ReadOnly,
            16 => Self::Exists,
            17 => Self::RingFull,
            _ => Self::InvalidArgument,
        })
    }

    /// seL4's name for the error.
    pub const fn name(self) -> &'static str {
        match self {
            Self::InvalidArgument => "seL4_InvalidArgument",
            Self::InvalidCapability => "seL4_InvalidCapability",
            Self::IllegalOperation => "seL4_IllegalOperation",
            Self::RangeError => "seL4_RangeError",
            Self::AlignmentError => "seL4_AlignmentError",
            Self::FailedLookup => "seL4_FailedLookup",
            Self::TruncatedMessage => "seL4_TruncatedMessage",
            Self::DeleteFirst => "seL4_DeleteFirst",
            Self::RevokeFirst => "seL4_RevokeFirst",
            Self::NotEnoughMemory => "seL4_NotEnoughMemory",
            Self::NotFound => "NotFound",
            Self::TooLarge => "TooLarge",
            Self::BufferTooSmall => "BufferTooSmall",
            Self::Busy => "Busy",
            Self::ReadOnly => "ReadOnly",
            Self::Exists => "Exists",
            Self::RingFull => "RingFull",
        }
    }
}

impl core::fmt::Display for Error {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.name())
    }
}

/// `ALL`, `from_word` and `word` of a `#[repr(u64)]` enum of ABI words.
macro_rules! word_enum {
    ($t:ident, $what:literal, [$($v:ident),+ $(,)?]) => {
        impl $t {
            #[doc = concat!("Every ", $what, ".")]
            pub const ALL: &'static [$t] = &[$(Self::$v),+];

            /// Decode a word.
            pub fn from_word(w: Word) -> Option<Self> {
                Self::ALL.iter().copied().find(|o| o.word() == w)
            }

            /// The word.
            pub const fn word(self) -> Word {
                self as Word
            }
        }
    };
}

/// A [`Sysno::Sysctl`] operation (the message label). Names travel as a
/// length word then the bytes packed little-endian into words; OIDs as a
/// level count then one word per level; values as a length word then the
/// bytes, or in a frame (see `docs/subsystems.md` for every layout).
#[repr(u64)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SysctlOp {
    /// Read the value named by a dotted name.
    GetName = 1,
    /// Read the value named by a numeric OID.
    GetOid = 2,
    /// Write the value named by a numeric OID.
    Set = 3,
    /// The leaf after an OID in depth-first order (`sysctl -a`).
    Next = 4,
    /// The numeric OID of a dotted name (`sysctl.name2oid`).
    NameToOid = 5,
    /// Add a node under a parent OID.
    Add = 6,
    /// Remove a node without children.
    Remove = 7,
}

word_enum!(SysctlOp, "operation", [GetName, GetOid, Set, Next, NameToOid, Add, Remove]);

/// A [`Sysno::Klog`] operation (the message label).
#[repr(u64)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KlogOp {
    /// Append one message (never blocks; `RingFull` when dropped).
    Append = 1,
    /// Take the oldest messages that fit the reply (at most message word
    /// 0 of them, if sent and not 0); when there are none, the bound
    /// notification is signalled at the next append.
    Read = 2,
    /// Bind the notification capability `cptr` (badge and all) as the
    /// reader's wake-up (`0`: unbind).
    Bind = 3,
}

word_enum!(KlogOp, "operation", [Append, Read, Bind]);

/// The kind of a sysctl node (FreeBSD's `CTLTYPE_*`).
#[repr(u64)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SysctlKind {
    /// An interior node: children, no value.
    Node = 1,
    /// A 64-bit integer (8 bytes, little-endian).
    Int = 2,
    /// A string (UTF-8, no terminator).
    Str = 3,
    /// Opaque bytes.
    Opaque = 4,
}

impl SysctlKind {
    /// Decode a kind word.
    pub fn from_word(w: Word) -> Option<Self> {
        [Self::Node, Self::Int, Self::Str, Self::Opaque].into_iter().find(|k| *k as Word == w)
    }

    /// The largest value of this kind, in bytes.
    pub const fn max_len(self) -> usize {
        match self {
            Self::Node => 0,
            Self::Int => 8,
            Self::Str => SYSCTL_MAX_STR,
            Self::Opaque => SYSCTL_MAX_VALUE,
        }
    }
}

/// The longest dotted sysctl name, in bytes.
pub const SYSCTL_MAX_NAME: usize = 128;
/// The longest name of one level (between dots), in bytes.
pub const SYSCTL_MAX_COMPONENT: usize = 32;
/// The deepest OID, in levels.
pub const SYSCTL_MAX_LEVELS: usize = 12;
/// The longest string value, in bytes.
pub const SYSCTL_MAX_STR: usize = 1024;
/// The largest opaque value, in bytes (four pages).
pub const SYSCTL_MAX_VALUE: usize = 16384;
/// Values up to this many bytes travel in the message; longer ones need a
/// frame.
pub const SYSCTL_INLINE_BYTES: usize = (MSG_MAX_WORDS - 2) * 8;
/// A copy-out longer than this takes the "sysctl mem" lock first (FreeBSD
/// wires the user buffer of a read longer than a page).
pub const SYSCTL_WIRE_BYTES: usize = 4096;
/// The longest kernel log message, in bytes.
pub const KLOG_MAX_MESSAGE: usize = 240;

/// Message-word encodings of the subsystem calls, for user code: a length
/// word then bytes packed little-endian; an OID as a level count then one
/// word per level.
pub mod words {
    use super::Word;
    use alloc::vec::Vec;

    /// Append `b` as a length word then packed bytes.
    pub fn push_bytes(out: &mut Vec<Word>, b: &[u8]) {
        out.push(b.len() as Word);
        push_packed(out, b);
    }

    /// Append `b` packed (no length word).
    pub fn push_packed(out: &mut Vec<Word>, b: &[u8]) {
        for chunk in b.chunks(8) {
            let mut w = [0u8; 8];
            w[..chunk.len()].copy_from_slice(chunk);
            out.push(Word::from_le_bytes(w));
        }
    }

    /// Append an OID.
    pub fn push_oid(out: &mut Vec<Word>, oid: &[u32]) {
        out.push(oid.len() as Word);
        out.extend(oid.iter().map(|&n| Word::from(n)));
    }

    /// `len` bytes packed in `words` (as many as there are).
    pub fn unpack(words: &[Word], len: usize) -> Vec<u8> {
        let mut v: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        v.truncate(len);
        v
    }

    /// An OID at the start of `words`, and the words after it.
    pub fn take_oid(words: &[Word]) -> Option<(Vec<u32>, &[Word])> {
        let (&n, rest) = words.split_first()?;
        let n = usize::try_from(n).ok()?;
        let oid = rest.get(..n)?.iter().map(|&w| u32::try_from(w).ok()).collect::<Option<Vec<u32>>>()?;
        Some((oid, &rest[n..]))
    }
}

/// The message-info word, with seL4's layout:
/// `label (52 bits) | capsUnwrapped (3) | extraCaps (2) | length (7)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct MessageInfo(pub Word);

impl MessageInfo {
    /// Bits of the label.
    pub const LABEL_BITS: u32 = 52;

    /// A message info; fields wider than their bit field are truncated.
    pub const fn new(label: Word, caps_unwrapped: Word, extra_caps: Word, length: Word) -> Self {
        Self(
            ((label & ((1 << Self::LABEL_BITS) - 1)) << 12)
                | ((caps_unwrapped & 0x7) << 9)
                | ((extra_caps & 0x3) << 7)
                | (length & 0x7f),
        )
    }
    /// The label (message type or invocation label).
    pub const fn label(self) -> Word {
        self.0 >> 12
    }
    /// Bit `i` set: extra capability `i` was unwrapped into its badge.
    pub const fn caps_unwrapped(self) -> Word {
        (self.0 >> 9) & 0x7
    }
    /// Number of extra capabilities.
    pub const fn extra_caps(self) -> Word {
        (self.0 >> 7) & 0x3
    }
    /// Number of message words (as sent: the kernel clamps it to
    /// [`MSG_MAX_WORDS`]).
    pub const fn length(self) -> Word {
        self.0 & 0x7f
    }
    /// The raw word.
    pub const fn word(self) -> Word {
        self.0
    }
}

/// Capability rights (seL4's bit order: write, read, grant, grant-reply).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct CapRights(pub Word);

impl CapRights {
    /// Send on an endpoint, signal a notification, map a frame writable.
    pub const WRITE: CapRights = CapRights(1);
    /// Receive on an endpoint, wait/poll a notification, map a frame.
    pub const READ: CapRights = CapRights(2);
    /// Transfer capabilities with a message.
    pub const GRANT: CapRights = CapRights(4);
    /// Kept for seL4 compatibility; every `Call` may be replied to.
    pub const GRANT_REPLY: CapRights = CapRights(8);
    /// No rights.
    pub const NONE: CapRights = CapRights(0);
    /// All rights.
    pub const ALL: CapRights = CapRights(0xf);

    /// Rights from a raw word (unknown bits dropped).
    pub const fn from_word(w: Word) -> Self {
        Self(w & 0xf)
    }
    /// Whether every right of `other` is present.
    pub const fn contains(self, other: CapRights) -> bool {
        self.0 & other.0 == other.0
    }
    /// The rights both have.
    pub const fn intersect(self, other: CapRights) -> Self {
        Self(self.0 & other.0)
    }
    /// The union.
    pub const fn union(self, other: CapRights) -> Self {
        Self(self.0 | other.0)
    }
}

/// Kernel object types (the `type` argument of `UntypedRetype`).
#[repr(u64)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ObjectType {
    /// Untyped memory of `2^size_bits` bytes.
    Untyped = 0,
    /// A thread control block (includes its IPC buffer).
    Tcb = 1,
    /// A synchronous IPC endpoint.
    Endpoint = 2,
    /// A notification (binary-semaphore word).
    Notification = 3,
    /// A CNode of `2^size_bits` capability slots.
    CNode = 4,
    /// A reply object (one-shot right to answer a `Call`).
    Reply = 5,
    /// A frame of `2^size_bits` bytes.
    Frame = 6,
    /// An address space (set of mapped frames).
    VSpace = 7,
}

impl ObjectType {
    /// All types.
    pub const ALL: [ObjectType; 8] = [
        Self::Untyped,
        Self::Tcb,
        Self::Endpoint,
        Self::Notification,
        Self::CNode,
        Self::Reply,
        Self::Frame,
        Self::VSpace,
    ];

    /// Decode a raw type word.
    pub const fn from_word(w: Word) -> Option<Self> {
        Some(match w {
            0 => Self::Untyped,
            1 => Self::Tcb,
            2 => Self::Endpoint,
            3 => Self::Notification,
            4 => Self::CNode,
            5 => Self::Reply,
            6 => Self::Frame,
            7 => Self::VSpace,
            _ => return None,
        })
    }

    /// Bytes of untyped memory an object of this type and `size_bits` uses
    /// (`size_bits` is ignored by fixed-size types), or `None` when
    /// `size_bits` is out of range for the type.
    pub const fn size_bytes(self, size_bits: Word) -> Option<u64> {
        match self {
            Self::Untyped => {
                if size_bits >= UNTYPED_MIN_BITS && size_bits <= UNTYPED_MAX_BITS {
                    Some(1 << size_bits)
                } else {
                    None
                }
            }
            // A TCB holds its IPC buffer: 1 KiB, rounded up like seL4's 2 KiB TCB.
            Self::Tcb => Some(2048),
            Self::Endpoint => Some(16),
            Self::Notification => Some(32),
            Self::CNode => {
                if size_bits >= CNODE_MIN_BITS && size_bits <= CNODE_MAX_BITS {
                    // seL4's 32-byte capability slots.
                    Some(32 << size_bits)
                } else {
                    None
                }
            }
            Self::Reply => Some(32),
            Self::Frame => {
                // x86-64's page sizes: 4 KiB and 2 MiB.
                if size_bits == FRAME_MIN_BITS || size_bits == FRAME_MAX_BITS {
                    Some(1 << size_bits)
                } else {
                    None
                }
            }
            Self::VSpace => Some(4096),
        }
    }
}

/// Invocation labels (the label of the [`MessageInfo`] of a `Call` on an
/// object capability). Arguments are message words `msg[i]`; "cptr" words are
/// looked up in the caller's CSpace.
#[repr(u64)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum InvocationLabel {
    /// Untyped: `msg = [type, size_bits, dest_cnode cptr (0 = caller's root),
    /// dest_index, num_objects]`. Creates `num_objects` objects in
    /// consecutive empty slots `dest_index..`.
    UntypedRetype = 1,
    /// TCB: `msg = [count]`; returns `count` (≤ [`NUM_REGS`]) register words.
    TcbReadRegisters = 2,
    /// TCB: `msg = [resume (0/1), count, regs...]`. Writing registers resets
    /// the thread to start afresh at `REG_PC` with argument `REG_ARG0`.
    /// Not allowed on the calling thread itself.
    TcbWriteRegisters = 3,
    /// TCB: `msg = [cspace_root cptr, vspace cptr (0 = none)]`.
    TcbConfigure = 4,
    /// TCB: `msg = [priority]` (0..=255).
    TcbSetPriority = 5,
    /// TCB: `msg = [core]`. The only way a thread changes core.
    TcbSetAffinity = 6,
    /// TCB: no arguments. The thread stops (its pending call is restarted
    /// when it is resumed).
    TcbSuspend = 7,
    /// TCB: no arguments. A suspended (or never started) thread runs.
    TcbResume = 8,
    /// TCB: `msg = [notification cptr]`.
    TcbBindNotification = 9,
    /// TCB: no arguments.
    TcbUnbindNotification = 10,
    /// CNode: `msg = [index]`: delete every capability derived from the one
    /// in slot `index`.
    CNodeRevoke = 11,
    /// CNode: `msg = [index]`.
    CNodeDelete = 12,
    /// CNode: `msg = [dest_index, src_root cptr (0 = caller's root), src_index, rights]`.
    CNodeCopy = 13,
    /// CNode: `msg = [dest_index, src_root cptr, src_index, rights, badge]`.
    CNodeMint = 14,
    /// CNode: `msg = [dest_index, src_root cptr, src_index]`.
    CNodeMove = 15,
    /// IRQ control: `msg = [irq, dest_cnode cptr (0 = caller's root), dest_index]`.
    IrqIssueIrqHandler = 16,
    /// IRQ handler: no arguments; re-enables the interrupt.
    IrqAckIrq = 17,
    /// IRQ handler: `msg = [notification cptr]`.
    IrqSetIrqHandler = 18,
    /// IRQ handler: no arguments.
    IrqClearIrqHandler = 19,
    /// Frame: `msg = [vspace cptr, vaddr]`; maps the frame at `vaddr` (below
    /// [`VSPACE_BYTES`], aligned to the frame's size) and returns
    /// `[address, size_bytes]`. The hosted platform has no MMU: the address
    /// is a real pointer to the frame, valid until it is unmapped or
    /// destroyed, and `vaddr` is where a hardware page table would put it
    /// (the kernel keeps that table and refuses overlapping mappings).
    FrameMap = 20,
    /// Frame: no arguments.
    FrameUnmap = 21,
    /// Frame: no arguments; returns `[address, size_bytes]` if mapped.
    FrameGetAddress = 22,
    /// TCB: `msg = [endpoint cptr (0 = none)]`. Where the thread's faults go:
    /// as in seL4, the pointer is kept and looked up in the *thread's own*
    /// CSpace when it faults; an endpoint capability with the write right
    /// there receives a fault message (`FAULT_*`) as a `Call` from the
    /// thread, anything else stops the thread as if it had no handler.
    TcbSetFaultHandler = 23,
}

impl InvocationLabel {
    /// Decode a raw label.
    pub const fn from_word(w: Word) -> Option<Self> {
        Some(match w {
            1 => Self::UntypedRetype,
            2 => Self::TcbReadRegisters,
            3 => Self::TcbWriteRegisters,
            4 => Self::TcbConfigure,
            5 => Self::TcbSetPriority,
            6 => Self::TcbSetAffinity,
            7 => Self::TcbSuspend,
            8 => Self::TcbResume,
            9 => Self::TcbBindNotification,
            10 => Self::TcbUnbindNotification,
            11 => Self::CNodeRevoke,
            12 => Self::CNodeDelete,
            13 => Self::CNodeCopy,
            14 => Self::CNodeMint,
            15 => Self::CNodeMove,
            16 => Self::IrqIssueIrqHandler,
            17 => Self::IrqAckIrq,
            18 => Self::IrqSetIrqHandler,
            19 => Self::IrqClearIrqHandler,
            20 => Self::FrameMap,
            21 => Self::FrameUnmap,
            22 => Self::FrameGetAddress,
            23 => Self::TcbSetFaultHandler,
            _ => return None,
        })
    }

    /// The raw label.
    pub const fn word(self) -> Word {
        self as Word
    }
}

/// A thread's IPC buffer: message words, capabilities to send, the receive
/// slot, and the results of the last system call.
///
/// # Where it lives and who may touch it
///
/// Each TCB object contains its IPC buffer (there is no separate buffer
/// frame). The platform obtains a raw pointer with
/// [`crate::Kernel::ipc_buffer`]; the pointer stays valid (points into the
/// kernel's TCB slab) for the kernel's lifetime, but the *thread* it belongs
/// to changes when the TCB is destroyed and its slot reused (compare
/// [`crate::ThreadId`]s). The contract:
///
/// * user code (through the platform) may read and write the buffer of
///   thread `t` only while `t` is the thread the platform is running on a core
///   (the last [`crate::ExitPlan::run`] of that core) and no kernel entry of
///   that core is in progress;
/// * the kernel touches `t`'s buffer only inside a kernel entry, and only when
///   `t` is that core's current thread or is not running anywhere.
///
/// Inputs (written by the caller before the system call): `msg`,
/// `caps_or_badges` (capability pointers to send), `receive_cnode`,
/// `receive_index`. Outputs (written by the kernel): `error`, `restart`,
/// `tag`, `badge`, `msg` (received words or invocation results) and
/// `caps_or_badges` (badges of unwrapped capabilities).
#[repr(C)]
#[derive(Clone, Debug)]
pub struct IpcBuffer {
    /// Output: the [`MessageInfo`] word of the message received, or of an
    /// invocation's reply.
    pub tag: Word,
    /// Message words (input for sends, output for receives and invocations).
    pub msg: [Word; MSG_MAX_WORDS],
    /// Free for user code; the kernel never touches it.
    pub user_data: Word,
    /// Input: capability pointers to send. Output: badges of capabilities the
    /// kernel unwrapped (see [`MessageInfo::caps_unwrapped`]).
    pub caps_or_badges: [Word; MSG_MAX_EXTRA_CAPS],
    /// Input: CNode (capability pointer; 0 = the receiver's root CNode) in
    /// which a received capability is stored.
    pub receive_cnode: Word,
    /// Input: slot index in `receive_cnode` for a received capability.
    pub receive_index: Word,
    /// Input: kept for seL4 layout compatibility; ignored (single-level CSpaces).
    pub receive_depth: Word,
    /// Output: badge of the capability the message came through, or the
    /// notification word received.
    pub badge: Word,
    /// Output: [`Error`] code of the system call; 0 for success.
    pub error: Word,
    /// Output: non-zero means "issue the same system call again".
    pub restart: Word,
}

impl IpcBuffer {
    /// An all-zero buffer.
    pub const fn new() -> Self {
        Self {
            tag: 0,
            msg: [0; MSG_MAX_WORDS],
            user_data: 0,
            caps_or_badges: [0; MSG_MAX_EXTRA_CAPS],
            receive_cnode: 0,
            receive_index: 0,
            receive_depth: 0,
            badge: 0,
            error: 0,
            restart: 0,
        }
    }

    /// The result of the last system call.
    pub fn result(&self) -> Result<(), Error> {
        Error::result_from_word(self.error)
    }

    /// The received / reply message info.
    pub fn info(&self) -> MessageInfo {
        MessageInfo(self.tag)
    }
}

impl Default for IpcBuffer {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_info_layout() {
        let i = MessageInfo::new(0xabc, 5, 2, 64);
        assert_eq!(i.label(), 0xabc);
        assert_eq!(i.caps_unwrapped(), 5);
        assert_eq!(i.extra_caps(), 2);
        assert_eq!(i.length(), 64);
        assert_eq!(i.word(), (0xabc << 12) | (5 << 9) | (2 << 7) | 64);
    }

    #[test]
    fn numbers_round_trip() {
        for s in Sysno::ALL {
            assert_eq!(Sysno::from_word(s.word()), Some(s));
        }
        for e in Error::ALL {
            assert_eq!(Error::result_from_word(e.word()), Err(e));
        }
        assert_eq!(Error::result_from_word(0), Ok(()));
        for t in ObjectType::ALL {
            assert_eq!(ObjectType::from_word(t as Word), Some(t));
        }
        for l in 1..=23 {
            assert_eq!(InvocationLabel::from_word(l).map(|x| x.word()), Some(l));
        }
        assert_eq!(InvocationLabel::from_word(0), None);
        assert_eq!(InvocationLabel::from_word(24), None);
    }
}
