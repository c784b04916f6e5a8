//! Synchronous IPC: send, receive, call, reply, and the message transfer.
//!
//! A message is a [`MessageInfo`] (label, length, extra capabilities), up to
//! [`MSG_MAX_WORDS`] words and up to three capabilities, copied from the
//! sender's IPC buffer to the receiver's when both have arrived. A `Call`
//! records the caller in the receiver's reply object and blocks it until a
//! `Reply` through that object.
//!
//! Capability transfer needs the grant right on the sender's endpoint
//! capability. As in seL4, only one capability is *transferred* (into the
//! receiver's receive slot, which must be empty); a capability to the very
//! endpoint the message goes through is *unwrapped* instead (its badge
//! delivered in `caps_or_badges`); transfer stops at the first capability
//! that fails to look up or has nowhere to go.

use crate::abi::{Error, MessageInfo, Word, MSG_MAX_EXTRA_CAPS, MSG_MAX_WORDS};
use crate::hold::{Halt, Hold};
use crate::object::endpoint::EpState;
use crate::object::thread::ThreadState;
use crate::object::{CapObj, Endpoint, Notification, Ref, Reply, Tcb};
use crate::state::Ctx;
use crate::waits::Waits;

/// What a send will touch, as its resolver found it with each object held
/// (the caller is the sender): the source of its lock set. The executor
/// (`rendezvous.rs`) runs the decoded call itself.
#[derive(Clone, Copy, Debug)]
pub(crate) enum SendOp {
    /// A receiver waits: hand the message over.
    Deliver { ep: Ref<Endpoint>, receiver: Ref<Tcb>, reply: Option<Ref<Reply>>, msg: Msg },
    /// Nobody waits: block in the send queue.
    Block { ep: Ref<Endpoint> },
    /// `NBSend` with nobody waiting: the message is dropped.
    Drop,
}

/// What a sender sends with.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Msg {
    pub info: MessageInfo,
    pub badge: Word,
    pub grant: bool,
    pub call: bool,
    /// The kernel's fault message for the sender (a `Call`): its words come
    /// from the sender's [`Tcb::fault`], not its IPC buffer.
    pub fault: bool,
}

/// What a receive will touch, as its resolver found it (the caller is the
/// receiver; see [`SendOp`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum RecvOp {
    /// A sender waits: take its message.
    Take { ep: Ref<Endpoint>, sender: Ref<Tcb>, reply: Option<Ref<Reply>> },
    /// The bound notification is active: return its word instead.
    Signal { ntfn: Ref<Notification>, reply: Option<Ref<Reply>> },
    /// Nobody waits: block in the receive queue.
    Block { ep: Ref<Endpoint>, reply: Option<Ref<Reply>> },
    /// `NBRecv` with nobody waiting: return an empty message, badge 0.
    Nothing { reply: Option<Ref<Reply>> },
}

/// A decoded reply.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ReplyOp {
    Answer {
        reply: Ref<Reply>,
        caller: Ref<Tcb>,
        grant: bool,
    },
    /// The reply object has no caller: nothing to do.
    NoCaller,
}

impl<W: Waits> Ctx<'_, W> {
    /// A send decoded by `decode_call`, against the endpoint's queue: a
    /// waiting receiver takes the message, else the sender blocks (or, not
    /// blocking, the message is dropped).
    /// Holds the endpoint (and with it the receiver waiting there), then the
    /// receiver's reply object and core; a transfer of capabilities needs
    /// the whole kernel.
    #[inline]
    pub(crate) fn resolve_send<G: Hold>(
        &mut self,
        ep: Ref<Endpoint>,
        msg: Msg,
        blocking: bool,
        guard: &mut G,
    ) -> Result<SendOp, Halt<G::Stop>> {
        guard.object(ep)?;
        let e = self.get(ep).ok_or(Error::InvalidCapability)?;
        if e.state == EpState::Recv {
            let head = e.queue.head;
            let receiver = self.ref_at::<Tcb>(head).ok_or(Error::InvalidCapability)?;
            let (state, core) = self.waiting_thread(receiver)?;
            let reply = match state {
                ThreadState::BlockedOnRecv { reply, .. } => reply,
                _ => None,
            };
            let reply = reply.filter(|&r| self.live(r));
            if let Some(r) = reply {
                guard.object(r)?;
            }
            guard.core(core)?;
            if msg.grant && msg.info.extra_caps() > 0 {
                guard.need_whole()?;
            }
            return Ok(SendOp::Deliver { ep, receiver, reply, msg });
        }
        Ok(if blocking { SendOp::Block { ep } } else { SendOp::Drop })
    }

    /// The state and core of thread `t`, a partner taken from a queue this
    /// entry holds (which holds `t` with it, `hold.rs`).
    #[inline(always)]
    pub(crate) fn waiting_thread(&mut self, t: Ref<Tcb>) -> Result<(ThreadState, usize), Error> {
        let x = self.get(t).ok_or(Error::InvalidCapability)?;
        Ok((x.state, x.core))
    }

    /// A receive on `ep` decoded by `decode_recv_part`, against the reply
    /// object, the bound notification and the endpoint's queue. Holds the
    /// endpoint, the bound notification and the reply object (in lock
    /// order), then a waiting sender and its core; taking a message that
    /// carries capabilities needs the whole kernel.
    #[inline]
    pub(crate) fn resolve_recv<G: Hold>(
        &mut self,
        caller: Ref<Tcb>,
        ep: Ref<Endpoint>,
        reply: Option<Ref<Reply>>,
        blocking: bool,
        guard: &mut G,
    ) -> Result<RecvOp, Halt<G::Stop>> {
        // A bound notification changes only under the whole kernel.
        let bound = self.get(caller).and_then(|t| t.bound);
        guard.object(ep)?;
        if let Some(n) = bound {
            guard.object(n)?;
        }
        if let Some(r) = reply {
            guard.object(r)?;
        }
        if let Some(r) = reply.and_then(|r| self.get(r)) {
            if r.caller.is_some() || r.receiver.is_some_and(|t| t != caller) {
                return Err(Error::IllegalOperation.into());
            }
        }
        if let Some(n) = bound {
            if self.get(n).is_some_and(|n| n.active) {
                return Ok(RecvOp::Signal { ntfn: n, reply });
            }
        }
        let e = self.get(ep).ok_or(Error::InvalidCapability)?;
        if e.state == EpState::Send {
            let head = e.queue.head;
            let sender = self.ref_at::<Tcb>(head).ok_or(Error::InvalidCapability)?;
            let (state, core) = self.waiting_thread(sender)?;
            guard.core(core)?;
            if let ThreadState::BlockedOnSend { grant: true, info, .. } = state {
                if info.extra_caps() > 0 {
                    guard.need_whole()?;
                }
            }
            return Ok(RecvOp::Take { ep, sender, reply });
        }
        Ok(if blocking { RecvOp::Block { ep, reply } } else { RecvOp::Nothing { reply } })
    }

    /// A reply through `reply` decoded by `decode_call`: the caller waiting
    /// on it, if any (`grant_cap`: the reply capability has the grant right).
    /// Holds the reply object (and with it the caller waiting on it), then
    /// that caller's core.
    #[inline]
    pub(crate) fn resolve_reply<G: Hold>(
        &mut self,
        reply: Ref<Reply>,
        grant_cap: bool,
        guard: &mut G,
    ) -> Result<ReplyOp, G::Stop> {
        guard.object(reply)?;
        let Some(r) = self.get(reply) else { return Ok(ReplyOp::NoCaller) };
        let (c, grant) = (r.caller, r.grant);
        let Some(c) = c else { return Ok(ReplyOp::NoCaller) };
        // The executor answers whatever caller the object names (a caller
        // that leaves `BlockedOnReply` is taken out of it, `detach`): that
        // one is held with the reply object; hold its core.
        let Some(x) = self.get(c) else { return Ok(ReplyOp::NoCaller) };
        guard.core(x.core)?;
        Ok(ReplyOp::Answer { reply, caller: c, grant: grant && grant_cap })
    }

    /// Copy a message from `src`'s IPC buffer to `dst`'s, with capabilities.
    #[inline]
    pub(crate) fn transfer(&mut self, src: Ref<Tcb>, dst: Ref<Tcb>, msg: Msg, ep: Option<Ref<Endpoint>>) {
        if !(msg.grant && msg.info.extra_caps() > 0) {
            return self.copy_words(src, dst, msg);
        }
        let len = (msg.info.length() as usize).min(MSG_MAX_WORDS);
        let (extra, unwrapped, badges) = self.transfer_caps(src, dst, msg.info.extra_caps() as usize, ep);
        let Some((s, d)) = self.ipc_pair(src, dst) else { return };
        d.msg[..len].copy_from_slice(&s.msg[..len]);
        for (i, b) in badges.iter().enumerate() {
            if unwrapped & (1 << i) != 0 {
                d.caps_or_badges[i] = *b;
            }
        }
        d.tag = MessageInfo::new(msg.info.label(), unwrapped, extra, len as Word).word();
        d.badge = msg.badge;
        d.error = 0;
        d.restart = 0;
    }

    /// Copy a message that carries no capabilities: the sender's words, or
    /// the fault message the kernel sends for it.
    #[inline(always)]
    pub(crate) fn copy_words(&mut self, src: Ref<Tcb>, dst: Ref<Tcb>, msg: Msg) {
        if msg.fault {
            return self.copy_fault(src, dst, msg.badge);
        }
        self.copy_message(src, dst, msg.info, msg.badge)
    }

    /// Write `src`'s fault message into `dst`'s IPC buffer (label, words,
    /// the handler capability's badge); `src`'s buffer is left alone.
    #[cold]
    fn copy_fault(&mut self, src: Ref<Tcb>, dst: Ref<Tcb>, badge: Word) {
        let Some(kind) = self.get(src).and_then(|x| x.fault) else { return };
        let (words, len) = kind.words();
        let d = self.ipc(dst);
        d.msg[..len].copy_from_slice(&words[..len]);
        d.tag = MessageInfo::new(kind.label(), 0, 0, len as Word).word();
        d.badge = badge;
        d.error = 0;
        d.restart = 0;
    }

    /// Copy the words of a message that carries no capabilities from
    /// `src`'s IPC buffer to `dst`'s, and `dst`'s results (label, length,
    /// badge, success). Every path that hands a message over uses it.
    #[inline(always)]
    pub(crate) fn copy_message(&mut self, src: Ref<Tcb>, dst: Ref<Tcb>, info: MessageInfo, badge: Word) {
        let len = (info.length() as usize).min(MSG_MAX_WORDS);
        let Some((s, d)) = self.ipc_pair(src, dst) else { return };
        copy_words(&mut d.msg, &s.msg, len);
        d.tag = MessageInfo::new(info.label(), 0, 0, len as Word).word();
        d.badge = badge;
        d.error = 0;
        d.restart = 0;
    }

    /// Transfer up to `n` capabilities; returns (count, unwrapped bits, badges).
    fn transfer_caps(
        &mut self,
        src: Ref<Tcb>,
        dst: Ref<Tcb>,
        n: usize,
        ep: Option<Ref<Endpoint>>,
    ) -> (Word, Word, [Word; MSG_MAX_EXTRA_CAPS]) {
        let cptrs = self.ipc(src).caps_or_badges;
        let (rcn, ridx) = {
            let b = self.ipc(dst);
            (b.receive_cnode, b.receive_index)
        };
        let (mut count, mut unwrapped, mut badges) = (0, 0, [0; MSG_MAX_EXTRA_CAPS]);
        let mut transferred = false;
        for (i, &cptr) in cptrs.iter().enumerate().take(n.min(MSG_MAX_EXTRA_CAPS)) {
            let Ok((slot, cap)) = self.lookup(src, cptr) else { break };
            if let (CapObj::Endpoint(e), Some(ep)) = (cap.obj, ep) {
                if e == ep {
                    unwrapped |= 1 << i;
                    badges[i] = cap.badge;
                    count += 1;
                    continue;
                }
            }
            if transferred || matches!(cap.obj, CapObj::Reply(_)) {
                break;
            }
            let Ok(root) = self.lookup_cnode_arg(dst, rcn) else { break };
            let Ok(dest) = self.slot_in(root, ridx) else { break };
            if !self.cap_at(dest).obj.is_null() {
                break;
            }
            self.insert_cap(Some(slot), dest, cap);
            transferred = true;
            count += 1;
        }
        (count, unwrapped, badges)
    }
}

/// Copy the first `len` message words (`len <= MSG_MAX_WORDS`). Short
/// messages, the common case, are copied word by word: a call to `memcpy`
/// costs more than the copy itself.
#[inline(always)]
fn copy_words(d: &mut [Word; MSG_MAX_WORDS], s: &[Word; MSG_MAX_WORDS], len: usize) {
    if len > 4 {
        d[..len].copy_from_slice(&s[..len]);
        return;
    }
    if len > 0 {
        d[0] = s[0];
    }
    if len > 1 {
        d[1] = s[1];
    }
    if len > 2 {
        d[2] = s[2];
    }
    if len > 3 {
        d[3] = s[3];
    }
}
