//! Decoding for the lock-free IPC operations, and the guard that keeps a
//! shared path to what it may do.
//!
//! [`Ctx::lf_decode`] mirrors the general path's dispatch (`syscall.rs`:
//! the same checks in the same order, so the same errors), reading only
//! what a shared path may read. `X` says whether it runs in a management
//! entry (exclusive); when it does not, anything that needs more than the
//! shared path offers returns [`Fallback`] — before any state has changed:
//!
//! * a capability to any object but an endpoint, notification or reply
//!   object (an invocation: and its liveness check would read a TCB or
//!   another core's object);
//! * a message carrying capabilities (`grant` with extra capabilities on a
//!   send; any extra capabilities on a reply): capability transfer writes
//!   CNodes;
//! * an endpoint whose word is *marked*: a sender waiting there transfers
//!   capabilities, which only a management entry may receive;
//! * a receive by a thread with a bound notification, and a signal to a
//!   notification with a bound thread (seL4's bound-notification wake-up
//!   pulls a thread out of an endpoint queue: management).

use crate::abi::{CapRights, Error, MessageInfo, Sysno, Word};
use crate::args::SyscallArgs;
use crate::ipc::Msg;
use crate::object::{CNode, Cap, CapObj, Endpoint, Notification, Ref, Reply, Tcb};
use crate::state::Ctx;

use super::shared::LfState;

/// What decoding needs to know about the caller, read once per entry.
#[derive(Clone, Copy, Debug)]
pub(crate) struct CallerView {
    pub t: Ref<Tcb>,
    pub cspace: Option<Ref<CNode>>,
    pub bound: bool,
}

/// The call needs a management entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fallback;

/// A decoded lock-free operation.
#[derive(Clone, Copy, Debug)]
pub(crate) enum LfOp {
    Yield,
    /// The call fails with this error (decoding found it).
    Fail(Error),
    Send {
        ep: Ref<Endpoint>,
        msg: Msg,
        blocking: bool,
    },
    Signal {
        ntfn: Ref<Notification>,
        badge: Word,
    },
    Recv(RecvPart),
    Reply {
        reply: Ref<Reply>,
        grant_cap: bool,
        info: MessageInfo,
    },
    ReplyRecv {
        reply: Ref<Reply>,
        grant_cap: bool,
        info: MessageInfo,
        recv: RecvPart,
    },
    /// An object invocation (management entries only): the general path.
    Invocation,
}

/// The receive half of `Recv`, `NBRecv`, `Wait`, `Poll`, `ReplyRecv`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum RecvPart {
    Ep { ep: Ref<Endpoint>, reply: Option<Ref<Reply>>, blocking: bool },
    Ntfn { ntfn: Ref<Notification>, blocking: bool },
    Fail(Error),
}

/// What a capability look-up found.
enum Looked {
    /// A live endpoint, notification or reply capability.
    Ipc(Cap),
    /// A capability to some other object (live, when `X`; unknown otherwise).
    Other,
}

impl Ctx<'_> {
    /// The capability at `cptr` in the caller's CSpace (`cap_ref`'s
    /// look-up: a dead CNode or a slot out of range is `None`).
    #[inline(always)]
    fn lf_slot(&self, c: &CallerView, cptr: Word) -> Option<Cap> {
        let cn = self.read(c.cspace?)?;
        Some(cn.slots.get(usize::try_from(cptr).ok()?)?.cap)
    }

    /// Look up `cptr` in the caller's CSpace as the general path's `lookup`
    /// does, checking liveness only of the objects a shared path may read.
    #[inline(always)]
    fn lf_lookup<const X: bool>(&mut self, c: &CallerView, cptr: Word) -> Result<Looked, Error> {
        let ipc = |cap: Cap| match cap.obj {
            CapObj::Endpoint(_) | CapObj::Notification(_) | CapObj::Reply(_) => Looked::Ipc(cap),
            _ => Looked::Other,
        };
        if X {
            return self.lookup(c.t, cptr).map(|(_, cap)| ipc(cap));
        }
        let cap = self.lf_slot(c, cptr).ok_or(Error::InvalidCapability)?;
        let live = match cap.obj {
            CapObj::Null => false,
            CapObj::Endpoint(r) => self.live(r),
            CapObj::Notification(r) => self.live(r),
            CapObj::Reply(r) => self.live(r),
            _ => return Ok(Looked::Other),
        };
        if live {
            Ok(ipc(cap))
        } else {
            Err(Error::InvalidCapability)
        }
    }

    /// The reply object of `Reply`/`ReplyRecv` (`decode_reply`'s look-up):
    /// any failure is `InvalidCapability`, whatever the object.
    #[inline(always)]
    fn lf_reply_cap<const X: bool>(&mut self, c: &CallerView, cptr: Word) -> Result<(Ref<Reply>, bool), Error> {
        match self.lf_lookup::<X>(c, cptr)? {
            Looked::Ipc(Cap { obj: CapObj::Reply(r), rights, .. }) => Ok((r, rights.contains(CapRights::GRANT))),
            _ => Err(Error::InvalidCapability),
        }
    }

    /// The reply object named for a receive (`reply_arg`): `None` for the
    /// null slot.
    #[inline(always)]
    fn lf_reply_arg(&mut self, c: &CallerView, cptr: Word) -> Result<Option<Ref<Reply>>, Error> {
        match self.lf_slot(c, cptr).ok_or(Error::InvalidCapability)?.obj {
            CapObj::Null => Ok(None),
            CapObj::Reply(r) if self.live(r) => Ok(Some(r)),
            _ => Err(Error::InvalidCapability),
        }
    }

    /// Decode a system call of `caller` (see the module documentation).
    #[inline(always)]
    pub(crate) fn lf_decode<const X: bool>(
        &mut self,
        lf: &LfState,
        caller: &CallerView,
        a: SyscallArgs,
    ) -> Result<LfOp, Fallback> {
        let info = MessageInfo(a.info);
        let Some(s) = Sysno::from_word(a.sysno) else { return Ok(LfOp::Fail(Error::IllegalOperation)) };
        Ok(match s {
            Sysno::Yield => LfOp::Yield,
            Sysno::Reply | Sysno::ReplyRecv => {
                let (reply, grant_cap) = match self.lf_reply_cap::<X>(caller, a.reply) {
                    Ok(r) => r,
                    Err(e) => return Ok(LfOp::Fail(e)),
                };
                if !X && info.extra_caps() > 0 {
                    return Err(Fallback);
                }
                if s == Sysno::Reply {
                    LfOp::Reply { reply, grant_cap, info }
                } else {
                    // The receive names the same reply object (`reply_arg` of
                    // a live reply capability).
                    let recv = self.lf_decode_recv::<X>(lf, caller, a, s, Some(Some(reply)))?;
                    LfOp::ReplyRecv { reply, grant_cap, info, recv }
                }
            }
            Sysno::Recv | Sysno::Wait | Sysno::NBRecv | Sysno::Poll => {
                LfOp::Recv(self.lf_decode_recv::<X>(lf, caller, a, s, None)?)
            }
            Sysno::Send | Sysno::NBSend | Sysno::Call | Sysno::Signal => {
                let cap = match self.lf_lookup::<X>(caller, a.cptr) {
                    Ok(Looked::Ipc(cap)) => cap,
                    Ok(Looked::Other) if s == Sysno::Signal => return Ok(LfOp::Fail(Error::InvalidCapability)),
                    Ok(Looked::Other) if X => return Ok(LfOp::Invocation),
                    Ok(Looked::Other) => return Err(Fallback),
                    Err(e) => return Ok(LfOp::Fail(e)),
                };
                match (s, cap.obj) {
                    (_, CapObj::Notification(ntfn)) if s != Sysno::Call => {
                        if !cap.rights.contains(CapRights::WRITE) {
                            return Ok(LfOp::Fail(Error::InvalidCapability));
                        }
                        if !X && self.read(ntfn).is_some_and(|n| n.bound.is_some()) {
                            return Err(Fallback);
                        }
                        LfOp::Signal { ntfn, badge: cap.badge }
                    }
                    (Sysno::Signal, _) => LfOp::Fail(Error::InvalidCapability),
                    (_, CapObj::Endpoint(ep)) => {
                        if !cap.rights.contains(CapRights::WRITE) {
                            return Ok(LfOp::Fail(Error::InvalidCapability));
                        }
                        let grant = cap.rights.contains(CapRights::GRANT);
                        if !X && ((grant && info.extra_caps() > 0) || lf.eps[ep.index() as usize].snapshot().marked) {
                            return Err(Fallback);
                        }
                        let msg = Msg { info, badge: cap.badge, grant, call: s == Sysno::Call };
                        LfOp::Send { ep, msg, blocking: s != Sysno::NBSend }
                    }
                    // `Call` on a notification; any invocation of a reply
                    // object (`decode_invocation` refuses both).
                    _ => LfOp::Fail(Error::IllegalOperation),
                }
            }
        })
    }

    /// Decode the receive half (`decode_receive`); `reply` is the reply
    /// argument if the caller already looked it up.
    #[inline(always)]
    fn lf_decode_recv<const X: bool>(
        &mut self,
        lf: &LfState,
        caller: &CallerView,
        a: SyscallArgs,
        s: Sysno,
        reply: Option<Option<Ref<Reply>>>,
    ) -> Result<RecvPart, Fallback> {
        let blocking = !matches!(s, Sysno::NBRecv | Sysno::Poll);
        let cap = match self.lf_lookup::<X>(caller, a.cptr) {
            Ok(Looked::Ipc(cap)) => cap,
            Ok(Looked::Other) | Err(_) => return Ok(RecvPart::Fail(Error::InvalidCapability)),
        };
        Ok(match cap.obj {
            CapObj::Endpoint(ep) if matches!(s, Sysno::Recv | Sysno::NBRecv | Sysno::ReplyRecv) => {
                if !cap.rights.contains(CapRights::READ) {
                    return Ok(RecvPart::Fail(Error::InvalidCapability));
                }
                let reply = match reply.map_or_else(|| self.lf_reply_arg(caller, a.reply), Ok) {
                    Ok(r) => r,
                    Err(e) => return Ok(RecvPart::Fail(e)),
                };
                if !X && (caller.bound || lf.eps[ep.index() as usize].snapshot().marked) {
                    return Err(Fallback);
                }
                RecvPart::Ep { ep, reply, blocking }
            }
            CapObj::Notification(ntfn) => {
                if !cap.rights.contains(CapRights::READ) {
                    return Ok(RecvPart::Fail(Error::InvalidCapability));
                }
                if self.read(ntfn).is_some_and(|n| n.bound.is_some_and(|b| b != caller.t)) {
                    return Ok(RecvPart::Fail(Error::IllegalOperation));
                }
                RecvPart::Ntfn { ntfn, blocking }
            }
            _ => RecvPart::Fail(Error::InvalidCapability),
        })
    }
}
