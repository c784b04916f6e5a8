//! The user side of a program's thread: what each operation writes into the
//! IPC buffer and traps with (encoded by [`crate::encode`]), what a message
//! says, and how a result is read.
//!
//! Messages identify themselves: `[sender, seq, attempt, endpoint, checksum]`
//! under label [`DATA`] (`Send`, `NBSend`) or [`CALL`]; `seq` counts the
//! sender's send operations, `attempt` its reissues of one operation after a
//! restart (a `Call` restarted after its message was received sends it
//! again, as a new attempt). Replies are `[server, sender, seq, attempt,
//! checksum]` under [`REPLY`], echoing the call the server last received
//! through its own reply object (whose caller the reply answers).
//!
//! Before every trap the driver fills the result fields with [`SENTINEL`]s:
//! a result whose `error` is still the sentinel and whose `restart` is 0 has
//! not been written by the kernel (the call is still blocked).

use granule_kernel::abi::{
    CapRights, InvocationLabel, KlogOp, ObjectType, SysctlKind, SysctlOp, Sysno, CAP_INIT_CNODE, CAP_INIT_VSPACE,
    MSG_MAX_EXTRA_CAPS,
};
use granule_kernel::{IpcBuffer, MessageInfo, SyscallArgs, Word};

use crate::encode::{self, Invocation};
use crate::program::{CapRef, Op, RetypeKind, PAGE_ADDRS};
use crate::setup::Layout;

/// Label of a message sent with `Send`/`NBSend`.
pub const DATA: Word = 0xd1;
/// Label of a message sent with `Call`.
pub const CALL: Word = 0xca;
/// Label of a reply.
pub const REPLY: Word = 0x2e;
/// Label of a memory-access fault message (the kernel's).
pub const FAULT: Word = granule_kernel::abi::FAULT_MEMORY_ACCESS;
/// Words of every message and reply.
pub const WORDS: usize = 5;
/// Message words a trap writes (a message is [`WORDS`] of them; the
/// subsystem calls' requests take up to this many).
pub const IN_WORDS: usize = 8;
/// A trap's message words.
pub type Inputs = [Word; IN_WORDS];

/// `w` followed by zeros.
pub fn pad(w: &[Word]) -> Inputs {
    let mut out = [0; IN_WORDS];
    out[..w.len()].copy_from_slice(w);
    out
}

/// Written into result fields before a trap.
pub const SENTINEL: Word = 0x5e47_1e1e_5e47_1e1e;

/// A message's identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MsgId {
    /// Sending thread.
    pub sender: u64,
    /// The sender's send operation number.
    pub seq: u64,
    /// Reissue of that operation.
    pub attempt: u64,
}

impl std::fmt::Display for MsgId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "t{}#{}.{}", self.sender, self.seq, self.attempt)
    }
}

fn checksum(w: &[Word]) -> Word {
    // splitmix64 over the words: any corruption changes it.
    w.iter().fold(0x9e37_79b9_7f4a_7c15, |h: Word, &x| {
        let mut z = h.wrapping_add(x).wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    })
}

/// The words of message `id` sent through endpoint `ep`.
pub fn message(id: MsgId, ep: u8) -> [Word; WORDS] {
    let mut w = [id.sender, id.seq, id.attempt, ep as Word, 0];
    w[4] = checksum(&w[..4]);
    w
}

/// Decode a message: its identity and endpoint, if the checksum holds.
pub fn decode_message(w: &[Word; WORDS]) -> Option<(MsgId, u8)> {
    (checksum(&w[..4]) == w[4] && w[3] < 256).then(|| (MsgId { sender: w[0], seq: w[1], attempt: w[2] }, w[3] as u8))
}

/// The words of a reply by `server` echoing the call `echo`.
pub fn reply(server: usize, echo: Option<MsgId>) -> [Word; WORDS] {
    let e = echo.unwrap_or(MsgId { sender: Word::MAX, seq: Word::MAX, attempt: Word::MAX });
    let mut w = [server as Word, e.sender, e.seq, e.attempt, 0];
    w[4] = checksum(&w[..4]);
    w
}

/// Decode a reply: the server and the echoed message, if the checksum holds.
pub fn decode_reply(w: &[Word; WORDS]) -> Option<(u64, MsgId)> {
    (checksum(&w[..4]) == w[4]).then_some((w[0], MsgId { sender: w[1], seq: w[2], attempt: w[3] }))
}

/// The fault address that names fault `id` (`Op::Fault`): the fault message
/// has only `[address, write]`, so the identity is packed into the address
/// (sender in bits 60.., attempt in 44..60, sequence below) and `write` is
/// the sequence's low bit, as a check.
pub fn fault_address(id: MsgId) -> (Word, bool) {
    ((id.sender << 60) | ((id.attempt & 0xffff) << 44) | (id.seq & ((1 << 44) - 1)), id.seq & 1 == 1)
}

/// The identity of a received fault message `[address, write]`, if its
/// check bit holds.
pub fn decode_fault(w: &[Word; WORDS]) -> Option<MsgId> {
    let id = MsgId { sender: w[0] >> 60, attempt: (w[0] >> 44) & 0xffff, seq: w[0] & ((1 << 44) - 1) };
    (w[1] == id.seq & 1).then_some(id)
}

/// What a step asks of its core.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trap {
    /// A system call with these registers and message words.
    Syscall(SyscallArgs, Inputs),
    /// Device interrupt line `l`.
    Interrupt(u8),
    /// A timer tick.
    Tick,
}

/// What thread `me` does for `op`: `id` names the message a send sends,
/// `echo` the message a reply answers (and whether it was a fault, which a
/// reply with label 0 lets go on); `core_map` maps a `SetAffinity` target
/// core (the oracle maps every real core to its only one).
pub fn trap_for(
    op: Op,
    me: usize,
    l: &Layout,
    id: MsgId,
    echo: Option<(MsgId, bool)>,
    core_map: impl Fn(u8) -> Word,
) -> Trap {
    let none = [SENTINEL; WORDS];
    let sys = |s: Sysno, cptr: Word, info: MessageInfo, reply: Word, w: [Word; WORDS]| {
        Trap::Syscall(encode::syscall(s, cptr, info, reply), pad(&w))
    };
    // A subsystem call whose request is `w`.
    let sub = |s: Sysno, op: Word, w: &[Word]| {
        Trap::Syscall(encode::syscall(s, 0, MessageInfo::new(op, 0, 0, w.len() as Word), 0), pad(w))
    };
    let msg = |label: Word| encode::msg(label, WORDS as Word);
    let invoke = |cptr: Word, inv: Invocation| Trap::Syscall(inv.registers(cptr), pad(inv.args()));
    let slot = |c: CapRef| match c {
        CapRef::Ep(k) => l.ep(k),
        CapRef::Ntfn(k) => l.ntfn(k),
        CapRef::Tcb(t) => l.tcb(t as usize),
        CapRef::Scratch(j) => l.scratch(j),
        CapRef::Untyped => l.untyped(),
        CapRef::Frame(k) => l.frame(k),
    };
    let reply_cap = |b: bool| if b { l.reply(me) } else { 0 };
    let answer = msg(if echo.is_some_and(|e| e.1) { 0 } else { REPLY });
    let echo = echo.map(|e| e.0);
    match op {
        Op::Send { ep } => sys(Sysno::Send, l.ep(ep), msg(DATA), 0, message(id, ep)),
        Op::NbSend { ep } => sys(Sysno::NBSend, l.ep(ep), msg(DATA), 0, message(id, ep)),
        Op::Call { ep } => sys(Sysno::Call, l.ep(ep), msg(CALL), 0, message(id, ep)),
        Op::Recv { ep, reply } => sys(Sysno::Recv, l.ep(ep), MessageInfo::default(), reply_cap(reply), none),
        Op::NbRecv { ep, reply } => sys(Sysno::NBRecv, l.ep(ep), MessageInfo::default(), reply_cap(reply), none),
        Op::Reply => sys(Sysno::Reply, 0, answer, l.reply(me), self::reply(me, echo)),
        Op::ReplyRecv { ep } => sys(Sysno::ReplyRecv, l.ep(ep), answer, l.reply(me), self::reply(me, echo)),
        Op::Signal { ntfn } => sys(Sysno::Signal, l.signal(me, ntfn), MessageInfo::default(), 0, none),
        Op::Wait { ntfn } => sys(Sysno::Wait, l.ntfn(ntfn), MessageInfo::default(), 0, none),
        Op::Poll { ntfn } => sys(Sysno::Poll, l.ntfn(ntfn), MessageInfo::default(), 0, none),
        Op::Yield => sys(Sysno::Yield, 0, MessageInfo::default(), 0, none),
        Op::Tick => Trap::Tick,
        Op::Irq { line } => Trap::Interrupt(line),
        Op::IrqAck { line } => invoke(l.irq_handler(line), Invocation::irq_ack()),
        Op::Copy { src, dest } => invoke(CAP_INIT_CNODE, Invocation::copy(l.scratch(dest), slot(src), CapRights::ALL)),
        Op::Mint { src, dest, badge } => {
            invoke(CAP_INIT_CNODE, Invocation::mint(l.scratch(dest), slot(src), CapRights::ALL, badge as Word))
        }
        Op::Delete { slot: s } => invoke(CAP_INIT_CNODE, Invocation::delete(slot(s))),
        Op::Revoke { slot: s } => invoke(CAP_INIT_CNODE, Invocation::revoke(slot(s))),
        Op::Retype { kind, dest } => {
            let (ty, bits) = match kind {
                RetypeKind::Endpoint => (ObjectType::Endpoint, 0),
                RetypeKind::Notification => (ObjectType::Notification, 0),
                RetypeKind::Reply => (ObjectType::Reply, 0),
                RetypeKind::Tcb => (ObjectType::Tcb, 0),
                RetypeKind::CNode => (ObjectType::CNode, 2),
                RetypeKind::Frame => (ObjectType::Frame, 12),
            };
            invoke(l.untyped(), Invocation::retype(ty, bits, l.scratch(dest), 1))
        }
        Op::Suspend { t } => invoke(l.tcb(t as usize), Invocation::suspend()),
        Op::Resume { t } => invoke(l.tcb(t as usize), Invocation::resume()),
        Op::SetPriority { t, prio } => invoke(l.tcb(t as usize), Invocation::set_priority(prio as Word)),
        Op::SetAffinity { t, core } => invoke(l.tcb(t as usize), Invocation::set_affinity(core_map(core))),
        Op::Configure { t, vspace } => {
            let vs = if vspace { CAP_INIT_VSPACE } else { 0 };
            invoke(l.tcb(t as usize), Invocation::configure(CAP_INIT_CNODE, vs))
        }
        Op::Kill { t } => invoke(CAP_INIT_CNODE, Invocation::delete(l.tcb(t as usize))),
        Op::SetFaultHandler { t, ep } => {
            invoke(l.tcb(t as usize), Invocation::set_fault_handler(ep.map_or(0, |k| l.ep(k))))
        }
        Op::Fault => {
            let (addr, write) = fault_address(id);
            Trap::Syscall(encode::fault_trap(addr, write), pad(&none))
        }
        Op::Map { frame, page } => invoke(
            slot(frame),
            Invocation::new(InvocationLabel::FrameMap, &[CAP_INIT_VSPACE, PAGE_ADDRS[page as usize]]),
        ),
        Op::Unmap { frame } => invoke(slot(frame), Invocation::new(InvocationLabel::FrameUnmap, &[])),
        Op::FrameAddress { frame } => invoke(slot(frame), Invocation::new(InvocationLabel::FrameGetAddress, &[])),
        Op::SysctlGet { leaf } => sub(Sysno::Sysctl, SysctlOp::GetOid.word(), &leaf_oid(leaf)),
        Op::SysctlSet { leaf, value } => {
            let mut w = leaf_oid(leaf);
            w.extend([8, value as Word]);
            sub(Sysno::Sysctl, SysctlOp::Set.word(), &w)
        }
        Op::SysctlAdd { leaf } => {
            // Under the root: kind, writable, number, name, value 0.
            let name = Word::from_le_bytes([b'v', b'0' + leaf, 0, 0, 0, 0, 0, 0]);
            let w = [0, SysctlKind::Int as Word, 1, 0x300 + leaf as Word, 2, name, 8, 0];
            sub(Sysno::Sysctl, SysctlOp::Add.word(), &w)
        }
        Op::SysctlRemove { leaf } => sub(Sysno::Sysctl, SysctlOp::Remove.word(), &leaf_oid(leaf)),
        Op::SysctlNext { leaf } => sub(Sysno::Sysctl, SysctlOp::Next.word(), &leaf_oid(leaf)),
        Op::KlogAppend => sub(Sysno::Klog, KlogOp::Append.word(), &[16, id.sender, id.seq]),
        Op::KlogRead => sub(Sysno::Klog, KlogOp::Read.word(), &[1]),
    }
}

/// The OID words of a program's sysctl leaf (see [`crate::program::SYSCTL_LEAVES`]).
pub fn leaf_oid(leaf: u8) -> Vec<Word> {
    match leaf {
        0 => vec![2, 1, 5],
        1 => vec![2, 1, 9],
        k => vec![1, 0x300 + k as Word],
    }
}

/// The message a kernel-log read returned (`[count, dropped, len, sender,
/// seq]`): the appending thread and its operation number.
pub fn decode_log(o: &Outcome) -> Option<MsgId> {
    (o.ok() && o.words[0] == 1 && o.words[2] == 16).then(|| MsgId { sender: o.words[3], seq: o.words[4], attempt: 0 })
}

/// Wait on the notification in `slot` (a thread halting on its private
/// notification, or the root parking).
pub fn wait_trap(slot: Word) -> Trap {
    Trap::Syscall(encode::syscall(Sysno::Wait, slot, MessageInfo::default(), 0), [SENTINEL; IN_WORDS])
}

/// Write a trap's inputs into the buffer and fill its result fields with
/// sentinels.
pub fn write_inputs(b: &mut IpcBuffer, words: &Inputs) {
    b.msg[..IN_WORDS].copy_from_slice(words);
    b.caps_or_badges = [0; MSG_MAX_EXTRA_CAPS];
    b.receive_cnode = 0;
    b.receive_index = 0;
    b.receive_depth = 0;
    b.tag = SENTINEL;
    b.badge = SENTINEL;
    b.error = SENTINEL;
    b.restart = 0;
}

/// The result fields of a buffer after a system call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Outcome {
    /// `IpcBuffer::error` (the sentinel while the call has not completed).
    pub error: Word,
    /// `IpcBuffer::restart != 0`.
    pub restart: bool,
    /// `IpcBuffer::tag`.
    pub tag: Word,
    /// `IpcBuffer::badge`.
    pub badge: Word,
    /// The first message words.
    pub words: [Word; WORDS],
}

impl Outcome {
    /// Read the result fields.
    pub fn read(b: &IpcBuffer) -> Self {
        let mut words = [0; WORDS];
        words.copy_from_slice(&b.msg[..WORDS]);
        Self { error: b.error, restart: b.restart != 0, tag: b.tag, badge: b.badge, words }
    }

    /// Whether the kernel has finished the call (done, failed or restarted).
    pub fn completed(&self) -> bool {
        self.restart || self.error != SENTINEL
    }

    /// Success.
    pub fn ok(&self) -> bool {
        !self.restart && self.error == 0
    }

    /// The result as a caller can interpret it: message words past the
    /// length the message info gives (inputs the kernel left alone) are
    /// zeroed, and all of them when there is no message info.
    pub fn meaningful(&self) -> Self {
        let mut o = *self;
        let len = if o.tag == SENTINEL || o.restart || o.error != 0 { 0 } else { MessageInfo(o.tag).length() };
        for (i, w) in o.words.iter_mut().enumerate() {
            if i as Word >= len {
                *w = 0;
            }
        }
        o
    }

    /// The result as every kernel gives it for `op`: a frame's address
    /// (word 0 of a successful map or address query) is where that kernel
    /// allocated the frame, so it is left out.
    pub fn comparable(&self, op: Option<Op>) -> Self {
        let mut o = *self;
        if matches!(op, Some(Op::Map { .. } | Op::FrameAddress { .. })) {
            o.words[0] = 0;
        }
        o
    }

    /// The label of the received message or reply.
    pub fn label(&self) -> Word {
        MessageInfo(self.tag).label()
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.restart {
            return write!(f, "restart");
        }
        if self.error == SENTINEL {
            return write!(f, "still blocked");
        }
        if self.error != 0 {
            return match granule_kernel::Error::result_from_word(self.error) {
                Err(e) if e.word() == self.error => write!(f, "{e}"),
                _ => write!(f, "error word {:#x}", self.error),
            };
        }
        let info = MessageInfo(self.tag);
        let label = match info.label() {
            DATA => "data".to_string(),
            CALL => "call".to_string(),
            REPLY => "reply".to_string(),
            FAULT => "memory fault".to_string(),
            other => format!("label {other:#x}"),
        };
        write!(f, "ok: {label}, {} words, badge {:#x}", info.length(), self.badge)?;
        match info.label() {
            DATA | CALL => match decode_message(&self.words) {
                Some((id, ep)) => write!(f, ", message {id} via ep{ep}"),
                None => write!(f, ", corrupt message {:x?}", self.words),
            },
            REPLY => match decode_reply(&self.words) {
                Some((server, echo)) => write!(f, ", from t{server} echoing {echo}"),
                None => write!(f, ", corrupt reply {:x?}", self.words),
            },
            FAULT => match decode_fault(&self.words) {
                Some(id) => write!(f, ", fault {id}"),
                None => write!(f, ", corrupt fault message {:x?}", self.words),
            },
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_round_trip_and_detect_corruption() {
        let id = MsgId { sender: 3, seq: 17, attempt: 1 };
        let mut w = message(id, 2);
        assert_eq!(decode_message(&w), Some((id, 2)));
        w[1] ^= 4;
        assert_eq!(decode_message(&w), None);
        let r = reply(1, Some(id));
        assert_eq!(decode_reply(&r), Some((1, id)));
        assert_eq!(decode_message(&[SENTINEL; WORDS]), None);
        let (addr, write) = fault_address(id);
        assert_eq!(decode_fault(&[addr, write as Word, 0, 0, 0]), Some(id));
        assert_eq!(decode_fault(&[addr, !write as Word, 0, 0, 0]), None);
    }
}
