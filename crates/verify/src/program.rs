//! A generated user program: threads, the operations each performs in order,
//! and the kernel objects they share. Programs are plain data; their
//! `Display` is the readable listing printed as a failure's reproduction.

use std::fmt;

/// Most threads in a program.
pub const MAX_THREADS: usize = 6;
/// Most endpoints.
pub const MAX_ENDPOINTS: usize = 3;
/// Most notifications.
pub const MAX_NOTIFICATIONS: usize = 2;
/// Most device interrupt lines routed to notifications.
pub const MAX_IRQ_LINES: usize = 2;
/// Root-CNode slots the capability operations work in.
pub const SCRATCH_SLOTS: usize = 8;
/// 4 KiB frames every program has (their original capabilities), which
/// its threads map into, and unmap from, the root's address space.
pub const FRAMES: usize = 3;
/// Addresses of the address space programs map at (`Op::Map`'s `page`
/// indexes it): two pages of one region's leaf table, and one page of the
/// next 2 MiB region.
pub const PAGE_ADDRS: [u64; 3] = [0, 0x1000, 0x20_0000];
/// Priorities programs use (the oracle needs the two above them).
pub const MAX_PROGRAM_PRIORITY: u8 = 200;
/// Sysctl leaves a program names: 0 and 1 are writable integers of the boot
/// tree (`kern.maxvnodes`, `kern.securelevel`); 2 and 3 are the program's
/// own (`v2`, `v3` under the root, numbers `0x302`, `0x303`), added and
/// removed by its operations.
pub const SYSCTL_LEAVES: u8 = 4;
/// The first of the program's own sysctl leaves.
pub const SYSCTL_OWN: u8 = 2;

/// A capability a capability operation names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CapRef {
    /// The original capability to endpoint `k`.
    Ep(u8),
    /// The original (unbadged) capability to notification `k`.
    Ntfn(u8),
    /// Thread `t`'s TCB capability.
    Tcb(u8),
    /// Scratch slot `j`.
    Scratch(u8),
    /// The untyped memory programs retype from.
    Untyped,
    /// The original capability to frame `k`.
    Frame(u8),
}

/// What `Retype` creates.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RetypeKind {
    /// An endpoint.
    Endpoint,
    /// A notification.
    Notification,
    /// A reply object.
    Reply,
    /// A thread (never configured or started).
    Tcb,
    /// A 4-slot CNode.
    CNode,
    /// A 4 KiB frame.
    Frame,
}

/// One step of a thread. IPC goes through the original endpoint
/// capabilities; `Reply`/`ReplyRecv`/`Recv { reply: true }` use the thread's
/// own reply object; `Signal` uses the thread's own badged capability (badge
/// `1 << thread`); `Tick` and `Irq` are events of the core running the thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    /// Blocking send of a fresh message.
    Send { ep: u8 },
    /// Non-blocking send (dropped if nobody waits).
    NbSend { ep: u8 },
    /// Send a fresh message and wait for the reply.
    Call { ep: u8 },
    /// Blocking receive, with or without the thread's reply object.
    Recv { ep: u8, reply: bool },
    /// Non-blocking receive.
    NbRecv { ep: u8, reply: bool },
    /// Answer the last call through the thread's reply object.
    Reply,
    /// Reply, then receive on `ep`.
    ReplyRecv { ep: u8 },
    /// Signal notification `ntfn` with the thread's badge.
    Signal { ntfn: u8 },
    /// Wait on notification `ntfn`.
    Wait { ntfn: u8 },
    /// Poll notification `ntfn`.
    Poll { ntfn: u8 },
    /// Give up the time slice.
    Yield,
    /// The core running the thread takes a timer tick.
    Tick,
    /// The core running the thread takes device interrupt `line`.
    Irq { line: u8 },
    /// Acknowledge interrupt `line` through its handler.
    IrqAck { line: u8 },
    /// Copy a capability into scratch slot `dest`.
    Copy { src: CapRef, dest: u8 },
    /// Mint a badged copy into scratch slot `dest`.
    Mint { src: CapRef, dest: u8, badge: u8 },
    /// Delete the capability in a slot.
    Delete { slot: CapRef },
    /// Revoke the capabilities derived from a slot.
    Revoke { slot: CapRef },
    /// Retype one object from the program untyped into scratch slot `dest`.
    Retype { kind: RetypeKind, dest: u8 },
    /// Suspend thread `t`.
    Suspend { t: u8 },
    /// Resume thread `t`.
    Resume { t: u8 },
    /// Set thread `t`'s priority.
    SetPriority { t: u8, prio: u8 },
    /// Move thread `t` to `core` (migration).
    SetAffinity { t: u8, core: u8 },
    /// Configure thread `t` again: the root CNode as its CSpace, and the
    /// root VSpace or none.
    Configure { t: u8, vspace: bool },
    /// Delete thread `t`'s TCB capability (it names a victim thread).
    Kill { t: u8 },
    /// Send thread `t`'s faults to endpoint `ep`'s original capability
    /// (`None`: no handler).
    SetFaultHandler { t: u8, ep: Option<u8> },
    /// A memory access no mapping allows: the thread faults, its message
    /// identity in the fault address (`user::fault_address`).
    Fault,
    /// Map the frame in `frame` (an original: a scratch slot may hold an
    /// endpoint, which would take the invocation for a message) into the
    /// root's address space at
    /// [`PAGE_ADDRS`]`[page]`.
    Map { frame: CapRef, page: u8 },
    /// Unmap the frame in `frame`.
    Unmap { frame: CapRef },
    /// Ask where the frame in `frame` is mapped (the reply's address word is
    /// left out of every comparison: it differs between kernels).
    FrameAddress { frame: CapRef },
    /// Read sysctl leaf `leaf` by OID.
    SysctlGet { leaf: u8 },
    /// Write `value` to sysctl leaf `leaf`.
    SysctlSet { leaf: u8, value: u8 },
    /// Add the program's leaf `leaf` (an integer, 0).
    SysctlAdd { leaf: u8 },
    /// Remove the program's leaf `leaf`.
    SysctlRemove { leaf: u8 },
    /// The leaf after `leaf` in `sysctl -a` order.
    SysctlNext { leaf: u8 },
    /// Append a message naming this operation to the kernel log.
    KlogAppend,
    /// Take the oldest kernel log message (one at most).
    KlogRead,
}

impl Op {
    /// The program thread this operation names, if any.
    pub fn thread_ref(&self) -> Option<u8> {
        match *self {
            Op::Suspend { t } | Op::Resume { t } | Op::SetPriority { t, .. } | Op::SetAffinity { t, .. } => Some(t),
            Op::Configure { t, .. } | Op::SetFaultHandler { t, .. } => Some(t),
            Op::Kill { t } => Some(t),
            Op::Copy { src: CapRef::Tcb(t), .. } | Op::Mint { src: CapRef::Tcb(t), .. } => Some(t),
            Op::Delete { slot: CapRef::Tcb(t) } | Op::Revoke { slot: CapRef::Tcb(t) } => Some(t),
            _ => None,
        }
    }

    /// The same operation with its thread reference changed by `f`.
    pub fn map_thread(self, f: impl Fn(u8) -> u8) -> Op {
        let c = |r: CapRef| if let CapRef::Tcb(t) = r { CapRef::Tcb(f(t)) } else { r };
        match self {
            Op::Suspend { t } => Op::Suspend { t: f(t) },
            Op::Resume { t } => Op::Resume { t: f(t) },
            Op::SetPriority { t, prio } => Op::SetPriority { t: f(t), prio },
            Op::SetAffinity { t, core } => Op::SetAffinity { t: f(t), core },
            Op::Configure { t, vspace } => Op::Configure { t: f(t), vspace },
            Op::Kill { t } => Op::Kill { t: f(t) },
            Op::SetFaultHandler { t, ep } => Op::SetFaultHandler { t: f(t), ep },
            Op::Copy { src, dest } => Op::Copy { src: c(src), dest },
            Op::Mint { src, dest, badge } => Op::Mint { src: c(src), dest, badge },
            Op::Delete { slot } => Op::Delete { slot: c(slot) },
            Op::Revoke { slot } => Op::Revoke { slot: c(slot) },
            other => other,
        }
    }

    /// Whether the operation sends a message of its own.
    pub fn sends(&self) -> bool {
        matches!(self, Op::Send { .. } | Op::NbSend { .. } | Op::Call { .. } | Op::Fault)
    }

    /// Whether the operation gets a message identity from its thread's
    /// sequence (sends, and log appends, whose message names it).
    pub fn numbered(&self) -> bool {
        self.sends() || *self == Op::KlogAppend
    }

    /// Whether the operation receives on an endpoint (and the endpoint).
    pub fn receive_ep(&self) -> Option<u8> {
        match *self {
            Op::Recv { ep, .. } | Op::NbRecv { ep, .. } | Op::ReplyRecv { ep } => Some(ep),
            _ => None,
        }
    }

    /// Whether only the scheduler can observe the operation (it leaves no
    /// trace in any object): such steps are left out of histories.
    pub fn scheduling_only(&self) -> bool {
        matches!(self, Op::Yield | Op::Tick)
    }
}

impl fmt::Display for CapRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CapRef::Ep(k) => write!(f, "ep{k}"),
            CapRef::Ntfn(k) => write!(f, "ntfn{k}"),
            CapRef::Tcb(t) => write!(f, "tcb{t}"),
            CapRef::Scratch(j) => write!(f, "s{j}"),
            CapRef::Untyped => write!(f, "untyped"),
            CapRef::Frame(k) => write!(f, "frame{k}"),
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = |b: bool| if b { " +reply" } else { "" };
        match *self {
            Op::Send { ep } => write!(f, "send ep{ep}"),
            Op::NbSend { ep } => write!(f, "nbsend ep{ep}"),
            Op::Call { ep } => write!(f, "call ep{ep}"),
            Op::Recv { ep, reply } => write!(f, "recv ep{ep}{}", r(reply)),
            Op::NbRecv { ep, reply } => write!(f, "nbrecv ep{ep}{}", r(reply)),
            Op::Reply => write!(f, "reply"),
            Op::ReplyRecv { ep } => write!(f, "replyrecv ep{ep}"),
            Op::Signal { ntfn } => write!(f, "signal ntfn{ntfn}"),
            Op::Wait { ntfn } => write!(f, "wait ntfn{ntfn}"),
            Op::Poll { ntfn } => write!(f, "poll ntfn{ntfn}"),
            Op::Yield => write!(f, "yield"),
            Op::Tick => write!(f, "(timer tick)"),
            Op::Irq { line } => write!(f, "(interrupt line {line})"),
            Op::IrqAck { line } => write!(f, "irq-ack line {line}"),
            Op::Copy { src, dest } => write!(f, "copy {src} -> s{dest}"),
            Op::Mint { src, dest, badge } => write!(f, "mint {src} -> s{dest} badge {badge}"),
            Op::Delete { slot } => write!(f, "delete {slot}"),
            Op::Revoke { slot } => write!(f, "revoke {slot}"),
            Op::Retype { kind, dest } => write!(f, "retype {kind:?} -> s{dest}"),
            Op::Suspend { t } => write!(f, "suspend t{t}"),
            Op::Resume { t } => write!(f, "resume t{t}"),
            Op::SetPriority { t, prio } => write!(f, "set-priority t{t} {prio}"),
            Op::SetAffinity { t, core } => write!(f, "set-affinity t{t} core {core}"),
            Op::Configure { t, vspace } => {
                write!(f, "configure t{t} cspace root, vspace {}", if vspace { "root" } else { "none" })
            }
            Op::Kill { t } => write!(f, "kill t{t}"),
            Op::SetFaultHandler { t, ep: Some(ep) } => write!(f, "set-fault-handler t{t} ep{ep}"),
            Op::SetFaultHandler { t, ep: None } => write!(f, "set-fault-handler t{t} none"),
            Op::Fault => write!(f, "(memory fault)"),
            Op::Map { frame, page } => write!(f, "map {frame} at page {page}"),
            Op::Unmap { frame } => write!(f, "unmap {frame}"),
            Op::FrameAddress { frame } => write!(f, "frame-address {frame}"),
            Op::SysctlGet { leaf } => write!(f, "sysctl-get leaf{leaf}"),
            Op::SysctlSet { leaf, value } => write!(f, "sysctl-set leaf{leaf} = {value}"),
            Op::SysctlAdd { leaf } => write!(f, "sysctl-add leaf{leaf}"),
            Op::SysctlRemove { leaf } => write!(f, "sysctl-remove leaf{leaf}"),
            Op::SysctlNext { leaf } => write!(f, "sysctl-next after leaf{leaf}"),
            Op::KlogAppend => write!(f, "klog-append"),
            Op::KlogRead => write!(f, "klog-read"),
        }
    }
}

/// The kind of program, which decides how it is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// A few operations on several cores: histories small enough for the
    /// linearizability check.
    Small,
    /// Everything on one core: deterministic, compared across regimes.
    SingleCore,
    /// Many operations on several cores: conservation and invariants.
    Large,
}

/// One thread of a program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ThreadSpec {
    /// Its initial affinity.
    pub core: usize,
    /// Its initial priority (at most [`MAX_PROGRAM_PRIORITY`]).
    pub prio: u8,
    /// A victim may be killed; it never receives on an endpoint (so a
    /// message is never lost with a receiver that was destroyed).
    pub victim: bool,
    /// The endpoint its faults go to from the start (its original
    /// capability), until a `SetFaultHandler` changes it.
    pub fault_ep: Option<u8>,
    /// The notification bound to it from the start (at most one thread per
    /// notification): a signal to it ends the thread's endpoint receive,
    /// and only it may wait there.
    pub bound: Option<u8>,
    /// Its operations, in order; after the last one it halts.
    pub ops: Vec<Op>,
}

/// A program: shared objects and threads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Program {
    /// The seed it was generated from (`granule verify --seed`).
    pub seed: u64,
    /// Cores of the machine it runs on.
    pub cores: usize,
    /// Its kind.
    pub shape: Shape,
    /// Endpoints (`1..=MAX_ENDPOINTS`).
    pub endpoints: usize,
    /// Notifications (`1..=MAX_NOTIFICATIONS`).
    pub notifications: usize,
    /// Device interrupt lines; line `l` signals notification
    /// `l % notifications` with badge `1 << (32 + l)`.
    pub irq_lines: usize,
    /// The threads (`1..=MAX_THREADS`).
    pub threads: Vec<ThreadSpec>,
    /// How the kernel's subsystems are locked in its runs (every regime
    /// runs it with this policy; `granule verify` cycles through them).
    pub policy: granule_kernel::SubsystemLocking,
}

impl Program {
    /// Operations over all threads.
    pub fn total_ops(&self) -> usize {
        self.threads.iter().map(|t| t.ops.len()).sum()
    }

    /// The program without thread `i` (and every operation naming it);
    /// `None` if `i` is the only thread.
    pub fn without_thread(&self, i: usize) -> Option<Program> {
        if self.threads.len() <= 1 || i >= self.threads.len() {
            return None;
        }
        let i = i as u8;
        let mut p = self.clone();
        p.threads.remove(i as usize);
        for t in &mut p.threads {
            t.ops.retain(|op| op.thread_ref() != Some(i));
            for op in &mut t.ops {
                *op = op.map_thread(|x| if x > i { x - 1 } else { x });
            }
        }
        Some(p)
    }

    /// The program without operations `range` of thread `t`.
    pub fn without_ops(&self, t: usize, range: std::ops::Range<usize>) -> Program {
        let mut p = self.clone();
        p.threads[t].ops.drain(range);
        p
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "program (seed {}, {:?}, {} core{}): {} endpoint(s), {} notification(s), {} interrupt line(s), subsystems {}",
            self.seed,
            self.shape,
            self.cores,
            if self.cores == 1 { "" } else { "s" },
            self.endpoints,
            self.notifications,
            self.irq_lines,
            self.policy
        )?;
        for (i, t) in self.threads.iter().enumerate() {
            let victim = if t.victim { ", victim" } else { "" };
            let handler = t.fault_ep.map_or(String::new(), |k| format!(", faults to ep{k}"));
            let bound = t.bound.map_or(String::new(), |k| format!(", bound to ntfn{k}"));
            writeln!(f, "  thread t{i} (core {}, priority {}{victim}{handler}{bound}):", t.core, t.prio)?;
            for (k, op) in t.ops.iter().enumerate() {
                writeln!(f, "    {k:>3}  {op}")?;
            }
            writeln!(f, "         (halt)")?;
        }
        Ok(())
    }
}
